"""The gate's reading speed and memory, as ratios against ``json.load`` in the same run.

Reports are built the way evaluation runs write them, never by copying a few cases:
every case starts from one of the real BidMate cases in
examples/reports/eval_summary.json and gets its own id, latency, accuracy, doc ids,
query type and answer length; ``attempt_latency`` and ``claim_citation_alignment``
(metrics added later) are present in half the cases; Korean text is escaped as
``json.dump`` writes it by default. The shapes:

- ``real100k`` / ``real20k``: 100,000 / 20,000 such cases.
- ``ascii100k``: the same with every string English text of the same length.
- ``trailing``: 50,000 cases of 20 unique string fields with an optional trailing key on
  half of them (the shape that made the old layout-learning scanner backtrack).
- ``layouts``: 50,000 cases in 1,000 distinct layouts (key sets and key orders).

Each command runs in a fresh interpreter; rounds are interleaved (json.load, the gate
with the default install, the gate with the ``fast`` extra). Two ratios are printed per
command: of CPU time (user + system, the child's own: what a busy machine cannot
inflate) and of wall time, each as median over median, with min over min beside it.
"default" runs the gate with msgspec made unimportable, which is what an install
without the ``fast`` extra does. The gate's time includes starting pytest and loading
the plugin and its taxonomies; json.load's includes starting Python. pytest loads only
failgate (``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 -p pytest_failgate.plugin``): the bench's
environment has the test extra installed, whose plugins (hypothesis's above all) would
otherwise add about a second of start-up that is not failgate's.

    python bench/gate_speed.py                        # every shape, 3 rounds
    python bench/gate_speed.py --shapes real20k --rounds 5
    python bench/gate_speed.py --memory               # peak memory: 1 GB .json, 1M-line JSONL
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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "examples" / "reports" / "eval_summary.json"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # failgate's cost, not the test extra's plugins
WORDS = ["the", "answer", "cites", "tender", "documents", "for", "agency", "requirements",
         "security", "controls", "schedule", "deliverables"]
RULE_FREE = ("query_type", "expected_doc_ids", "evidence_doc_ids")


def english(value: Any, rng: random.Random) -> Any:
    """ASCII text of the same length (and shape) as ``value``."""
    if isinstance(value, str):
        text = " ".join(rng.choice(WORDS) for _ in range(len(value) // 5 + 1))
        return text[: len(value)]
    if isinstance(value, list):
        return [english(v, rng) for v in value]
    if isinstance(value, dict):
        return {k: english(v, rng) for k, v in value.items()}
    return value


def real_case(source: dict[str, Any], i: int, rng: random.Random) -> dict[str, Any]:
    """A real case with every field a rule reads varied, and the optional metrics in half."""
    case = dict(source)
    case["id"] = f"bidmate-{i:07d}-{rng.randrange(16**6):06x}"
    case["latency_ms"] = round(rng.uniform(1, 5000), 3)
    case["accuracy"] = rng.choice([1.0, 1.0, 0.0, round(rng.random(), 4)])
    case["answerable"] = rng.random() < 0.85
    case["abstained"] = rng.random() < 0.15
    case["term_match"] = rng.choice([True, False, None])
    case["expected_doc_ids"] = [f"rfp-{rng.randrange(10**5)}" for _ in range(rng.randrange(3))]
    case["evidence_doc_ids"] = [f"rfp-{rng.randrange(10**5)}" for _ in range(rng.randrange(4))]
    case["query_type"] = rng.choice(["single_doc", "comparison", "multi_hop", "follow_up"])
    answer = source["answer"]
    case["answer"] = answer[: rng.randrange(len(answer) // 2, len(answer) + 1)] + f" ({i})"
    if rng.random() < 0.5:
        attempts = rng.randrange(1, 4)
        case["attempt_latency"] = [round(rng.uniform(1, 900), 2) for _ in range(attempts)]
    if rng.random() < 0.5:
        case["claim_citation_alignment"] = round(rng.random(), 4)
    return case


def real_report(n: int, ascii_text: bool = False, seed: int = 2026) -> dict[str, Any]:
    source = json.loads(SOURCE.read_text(encoding="utf-8"))
    rng = random.Random(seed)
    cases = source["case_results"]
    if ascii_text:
        cases = [{k: v if k in RULE_FREE else english(v, rng) for k, v in c.items()}
                 for c in cases]
    out = [real_case(rng.choice(cases), i, rng) for i in range(n)]
    document = {k: v for k, v in source.items() if k != "case_results"}
    document["num_predictions"] = n
    document["case_results"] = out
    return document


def trailing_report(n: int, seed: int = 7) -> dict[str, Any]:
    """20 unique string fields per case, then an optional key on half the cases."""
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        case: dict[str, Any] = {"id": f"t{i}", "accuracy": rng.choice([1.0, 0.0])}
        for k in range(20):  # short labels to paragraph-long text, unique per case
            words = (rng.choice(WORDS) for _ in range(rng.randrange(2, 60)))
            case[f"s{k}"] = f"{i}-{k}: " + " ".join(words)
        if rng.random() < 0.5:
            case["claim_citation_alignment"] = round(rng.random(), 4)
        cases.append(case)
    return {"case_results": cases}


def layouts_report(n: int, seed: int = 11) -> dict[str, Any]:
    """1,000 distinct layouts: each its own extra keys and its own key order."""
    rng = random.Random(seed)
    layouts = []
    for k in range(1000):
        keys = ["id", "accuracy", "answerable", "abstained", "evidence_doc_ids",
                *(f"extra_{k}_{j}" for j in range(rng.randrange(1, 6)))]
        rng.shuffle(keys)
        layouts.append(keys)
    cases = []
    for i in range(n):
        values: dict[str, Any] = {
            "id": f"l{i}", "accuracy": rng.choice([1.0, 0.0, 0.5]),
            "answerable": rng.random() < 0.9, "abstained": rng.random() < 0.1,
            "evidence_doc_ids": [f"d{rng.randrange(999)}" for _ in range(rng.randrange(3))]}
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(50, 400)))
        cases.append({key: values.get(key, f"{i} {key}: {text}") for key in layouts[i % 1000]})
    return {"case_results": cases}


SHAPES: dict[str, tuple[Callable[[], dict[str, Any]], str]] = {
    "real100k": (lambda: real_report(100_000), "100,000 real-shaped cases, Korean escaped"),
    "real20k": (lambda: real_report(20_000), "20,000 real-shaped cases, Korean escaped"),
    "ascii100k": (lambda: real_report(100_000, ascii_text=True),
                  "100,000 real-shaped cases, English text"),
    "trailing": (lambda: trailing_report(50_000),
                 "50,000 cases, 20 unique string fields, optional trailing key"),
    "layouts": (lambda: layouts_report(50_000), "50,000 cases in 1,000 layouts"),
}
BLOCK_FAST = "import sys; sys.modules['msgspec'] = None; "


def pytest_command(report: Path, default: bool) -> list[str]:
    run = "import sys, pytest; sys.exit(pytest.main(sys.argv[1:]))"
    return [sys.executable, "-c", (BLOCK_FAST if default else "") + run, "-q", "-p",
            "pytest_failgate.plugin", "-p", "no:cacheprovider", f"--failgate={report}",
            "ceilings.yaml"]


def timed(command: list[str], cwd: Path) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run of ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False, env=ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stdout[-2000:]}"
                 f"\n{done.stderr[-2000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu, wall


def measure(report: Path, work: Path, rounds: int) -> dict[str, list[tuple[float, float]]]:
    """Interleaved rounds after one warm-up of each command (fresh interpreters)."""
    commands = {
        "json.load": [sys.executable, "-c", "import json, sys; json.load(open(sys.argv[1]))",
                      str(report)],
        "default": pytest_command(report, default=True),
        "fast": pytest_command(report, default=False),
    }
    for command in commands.values():
        timed(command, work)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, command in commands.items():
            samples[name].append(timed(command, work))
    return samples


def init_ceilings(report: Path, work: Path) -> None:
    (work / "ceilings.yaml").unlink(missing_ok=True)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "pytest_failgate.plugin", "-p",
                    "no:cacheprovider", f"--failgate={report}", "--failgate-init"], cwd=work,
                   capture_output=True, check=False, env=ENV)
    if not (work / "ceilings.yaml").exists():
        sys.exit("could not write the benchmark's ceilings file")


def speed(shapes: list[str], rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="failgate-bench-") as tmp:
        work = Path(tmp)
        (work / "pytest.ini").write_text("[pytest]\n")
        for shape in shapes:
            build, label = SHAPES[shape]
            report = work / f"{shape}.json"
            report.write_text(json.dumps(build(), indent=2), encoding="utf-8")
            init_ceilings(report, work)
            samples = measure(report, work, rounds)
            print(f"{shape}: {label}, {report.stat().st_size / 1e6:.0f} MB, {rounds} rounds")
            for name, runs in samples.items():
                line = f"  {name:10}"
                for what, index in (("cpu", 0), ("wall", 1)):
                    values = [run[index] for run in runs]
                    reference = [run[index] for run in samples["json.load"]]
                    ratio = statistics.median(values) / statistics.median(reference)
                    low = min(values) / min(reference)
                    line += (f"  {what} {statistics.median(values):6.2f} s ratio {ratio:4.2f} "
                             f"(min/min {low:4.2f})")
                print(line, flush=True)
            report.unlink()


def peak_rss_mb(command: list[str], cwd: Path) -> float:
    """Peak resident memory of a command, by GNU time (maximum resident set size)."""
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *command], cwd=cwd, capture_output=True,
                          text=True, check=False, env=ENV)
    if done.returncode not in (0, 1):
        sys.exit(f"failed: {' '.join(command)}\n{done.stderr[-2000:]}")
    return int(done.stderr.strip().splitlines()[-1]) / 1024


def memory() -> None:
    with tempfile.TemporaryDirectory(prefix="failgate-bench-") as tmp:
        work = Path(tmp)
        (work / "pytest.ini").write_text("[pytest]\n")
        big = work / "big.json"
        with big.open("w", encoding="utf-8") as out:  # about 1 GB, written case by case
            document = real_report(0)
            head = json.dumps({k: v for k, v in document.items() if k != "case_results"})
            out.write(head[:-1] + ', "case_results": [\n')
            source = json.loads(SOURCE.read_text(encoding="utf-8"))["case_results"]
            rng, n_cases = random.Random(5), 0
            while out.tell() < 1_000_000_000:
                case = real_case(rng.choice(source), n_cases, rng)
                out.write(("" if n_cases == 0 else ",\n") + json.dumps(case))
                n_cases += 1
            out.write("\n]}\n")
        lines = work / "big.jsonl"
        with lines.open("w", encoding="utf-8") as out:  # 1,000,000 lines, short answers
            rng = random.Random(6)
            for i in range(1_000_000):
                case = real_case(rng.choice(source), i, rng)
                case["answer"] = case["answer"][:60]
                case["resolved_query"] = case["query"] = case["query"][:40]
                out.write(json.dumps(case) + "\n")
        for report, label in ((big, f"{n_cases:,} cases"), (lines, "1,000,000 lines")):
            init_ceilings(report, work)
            size = report.stat().st_size / 1e6
            print(f"{report.name}: {label}, {size:.0f} MB")
            load = [sys.executable, "-c", "import json, sys; json.load(open(sys.argv[1]))",
                    str(report)]
            if report.suffix == ".json":
                print(f"  json.load       peak {peak_rss_mb(load, work):7.0f} MB")
            for name, default in (("default", True), ("fast", False)):
                peak = peak_rss_mb(pytest_command(report, default), work)
                print(f"  {name:15} peak {peak:7.0f} MB")
            report.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--shapes", default=",".join(SHAPES),
                        help="comma-separated: " + ", ".join(SHAPES))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--memory", action="store_true",
                        help="measure peak memory on a 1 GB .json and a 1M-line JSONL instead")
    args = parser.parse_args()
    if args.memory:
        memory()
    else:
        speed([s for s in args.shapes.split(",") if s], args.rounds)


if __name__ == "__main__":
    main()
