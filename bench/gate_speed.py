"""Measure the gate's speed as ratios against references taken in the same run.

Two measurements, each a median over interleaved rounds of fresh interpreters
(this keeps a noisy machine's drift out of the ratio):

1. gate vs json.load: ``pytest --failgate=big.json`` on a generated 100k-case
   ``eval_summary`` report, against ``python -c "json.load(open(big.json))"``.
   Target: ratio <= 1.0.
2. start-up: pytest on a one-test project with failgate installed but not
   enabled, against the same run with ``-p no:failgate``. Target: ratio <= 1.05.

The report is built from the real cases in examples/reports/eval_summary.json
(26 cases, Korean answers escaped as ``json.dump`` writes them by default), each
copied with a new id, so its text looks like what the pipeline writes; ``--ascii``
swaps every string for English text of the same length, where ``json`` decodes
faster. Run from the repository root, in an environment with failgate installed:

    python bench/gate_speed.py            # 100k cases, 5 rounds
    python bench/gate_speed.py --cases 20000 --rounds 3 --ascii
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "examples" / "reports" / "eval_summary.json"


def _english(value: Any) -> Any:
    if isinstance(value, str):
        words = ["the", "answer", "cites", "the", "tender", "documents", "for",
                 "agency", "requirements"]
        text = " ".join(words[i % len(words)] for i in range(len(value) // 6 + 1))
        return text[: len(value)]
    if isinstance(value, list):
        return [_english(v) for v in value]
    if isinstance(value, dict):
        return {k: _english(v) for k, v in value.items()}
    return value


def make_report(path: Path, n_cases: int, ascii_text: bool) -> None:
    source = json.loads(SOURCE.read_text(encoding="utf-8"))
    cases = source["case_results"]
    if ascii_text:
        cases = [{k: (v if k in ("query_type", "expected_doc_ids", "evidence_doc_ids")
                      else _english(v)) for k, v in c.items()} for c in cases]
    rng = random.Random(2026)
    out = []
    for i in range(n_cases):
        case = dict(rng.choice(cases))
        case["id"] = f"case-{i:06d}"
        out.append(case)
    document = {k: v for k, v in source.items() if k != "case_results"}
    document["num_predictions"] = n_cases
    document["case_results"] = out
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")


# Like a user's machine: Python caches bytecode (some CI images turn that off, which
# makes every start-up recompile pytest and its plugins, and says nothing about failgate).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    completed = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False,
                               env=ENV)
    elapsed = time.perf_counter() - start
    if completed.returncode not in (0, 1):
        sys.exit(f"command failed ({completed.returncode}): {' '.join(command)}\n"
                 f"{completed.stdout[-2000:]}\n{completed.stderr[-2000:]}")
    return elapsed


def interleaved(commands: dict[str, list[str]], cwd: Path, rounds: int) -> dict[str, float]:
    """Median seconds per command, running them in alternation after one warm-up each."""
    for command in commands.values():
        timed(command, cwd)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, command in commands.items():
            samples[name].append(timed(command, cwd))
    return {name: statistics.median(values) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--startup-rounds", type=int, default=15)
    parser.add_argument("--ascii", action="store_true", help="English text instead of Korean")
    args = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="failgate-bench-") as tmp:
        work = Path(tmp)
        report = work / "big.json"
        make_report(report, args.cases, args.ascii)
        (work / "pytest.ini").write_text("[pytest]\n")
        init = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--failgate={report}",
                "--failgate-init"]
        subprocess.run(init, cwd=work, capture_output=True, check=False, env=ENV)
        if not (work / "ceilings.yaml").exists():
            sys.exit("could not write the benchmark's ceilings file")
        size_mb = report.stat().st_size / 1e6
        gate = interleaved(
            {
                "json.load": [python, "-c", "import json, sys; json.load(open(sys.argv[1]))",
                              str(report)],
                "failgate": [python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             f"--failgate={report}", "ceilings.yaml"],
            },
            work, args.rounds,
        )
        (work / "test_one.py").write_text("def test_one():\n    pass\n")
        startup = interleaved(
            {
                "-p no:failgate": [python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                   "-p", "no:failgate", "test_one.py"],
                "installed, off": [python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                   "test_one.py"],
            },
            work, args.startup_rounds,
        )
    gate_ratio = gate["failgate"] / gate["json.load"]
    startup_ratio = startup["installed, off"] / startup["-p no:failgate"]
    text = "English" if args.ascii else "Korean, escaped"
    print(f"report: {args.cases} cases, {size_mb:.0f} MB ({text}), {args.rounds} rounds")
    print(f"  json.load               {gate['json.load']:7.3f} s")
    print(f"  pytest --failgate       {gate['failgate']:7.3f} s")
    print(f"  ratio                   {gate_ratio:7.3f}   (target <= 1.0)")
    print(f"start-up: {args.startup_rounds} rounds")
    print(f"  -p no:failgate          {startup['-p no:failgate']:7.3f} s")
    print(f"  installed, not enabled  {startup['installed, off']:7.3f} s")
    print(f"  ratio                   {startup_ratio:7.3f}   (target <= 1.05)")


if __name__ == "__main__":
    main()
