"""The gate under pytest-xdist against the same gate without it, on 200 generated reports.

With ``-n 2`` the controller runs the gate once and hands the serialised result to
the workers, which only build items from it; without xdist one process does both.
The reference is the run without xdist, measured in the same rounds (interleaved,
fresh interpreters, median wall time; the CPU time of all processes is shown too).
Target: ``-n 2`` no slower than without xdist (ratio <= 1.0 would be "free"; xdist's
own start-up, two more interpreters, is the floor of what it costs).

The reports are shaped like real ones: unique case ids, the rag fields present in
some cases only (and at random across the rules' branches), non-ASCII answers, three
layouts (``eval_summary`` JSON, JSONL, aggregate) and sizes from 20 to 5,000 cases,
plus one report of 50,000 cases (the adversarial one: most of the reading is in it).
Run from the repository root, in an environment with failgate and pytest-xdist:

    python bench/xdist_gate.py                 # 200 reports, 5 rounds
    python bench/xdist_gate.py --reports 50 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests")]

from helpers import random_rag_case  # noqa: E402

ANSWERS = ["입찰 공고의 제출 마감일은 5월 19일입니다.", "Die Antwort steht im Abschnitt 3.2.",
           "the tender requires ISO 27001 certification", "回答は資料の第4章にあります。",
           "réponse: le délai est de 30 jours"]
CATEGORIES = ("verifier_false_negative", "verifier_false_positive", "retrieval_miss",
              "planner_under_decomposition", "generator_hallucination", "context_dilution",
              "unknown")
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _case(rng: random.Random, report: int, index: int) -> dict[str, Any]:
    case: dict[str, Any] = {"id": f"r{report:03d}-case-{index:05d}", **random_rag_case(rng)}
    if rng.random() < 0.7:
        case["answer"] = rng.choice(ANSWERS) + f" ({index})"
    if rng.random() < 0.3:
        case["latency_ms"] = rng.randint(40, 9000)
    return case


def make_reports(folder: Path, n_reports: int) -> int:
    """Write the reports; the number of cases in all of them."""
    rng = random.Random(200)
    total = 0
    for report in range(n_reports):
        n = 50_000 if report == 0 else rng.choice([20, 100, 300, 1000, 5000])
        layout = ("summary", "jsonl", "aggregate")[report % 3]
        if layout == "aggregate":
            counts = {c: rng.randint(0, n // 10) if rng.random() < 0.4 else 0 for c in CATEGORIES}
            counts["unknown"] += 1  # an aggregate with no failure at all is refused
            document = {"failure_category_counts": counts, "num_predictions": n}
            (folder / f"run{report:03d}.aggregate.json").write_text(json.dumps(document))
        elif layout == "jsonl":
            lines = (json.dumps(_case(rng, report, i), ensure_ascii=False) for i in range(n))
            (folder / f"run{report:03d}.jsonl").write_text("\n".join(lines) + "\n",
                                                          encoding="utf-8")
        else:
            document = {"mode": "rag", "num_predictions": n,
                        "case_results": [_case(rng, report, i) for i in range(n)]}
            (folder / f"run{report:03d}.json").write_text(json.dumps(document, indent=1))
        total += n
    return total


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """Wall time and the CPU time of the command and every process it started."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False,
                          env=ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        (project / "reports").mkdir()
        (project / "pytest.ini").write_text("[pytest]\n")
        cases = make_reports(project / "reports", args.reports)
        failgate = str(Path(sys.executable).parent / "failgate")
        subprocess.run([failgate, "init", "reports"], cwd=project, check=True,
                       capture_output=True)
        base = [sys.executable, "-m", "pytest", "--failgate=reports", "-q",
                "-p", "no:cacheprovider"]
        commands = {"no xdist": [*base, "-p", "no:xdist"], "-n 2": [*base, "-n", "2"]}
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        timed(commands["no xdist"], project)  # warm the page cache and bytecode
        for _ in range(args.rounds):
            for name, command in commands.items():
                wall, cpu = timed(command, project)
                walls[name].append(wall)
                cpus[name].append(cpu)
    print(f"{args.reports} reports, {cases:,} cases; median of {args.rounds} rounds")
    for name in commands:
        print(f"  {name:<9} wall {statistics.median(walls[name]):6.2f} s   "
              f"cpu {statistics.median(cpus[name]):6.2f} s")
    ratio = statistics.median(walls["-n 2"]) / statistics.median(walls["no xdist"])
    print(f"  -n 2 / no xdist (wall): {ratio:.2f}")


if __name__ == "__main__":
    main()
