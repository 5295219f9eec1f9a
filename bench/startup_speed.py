"""The gate's fixed cost: a small report gated, against Python and pytest doing nothing.

Four commands, each in a fresh interpreter, in interleaved rounds (after one warm-up
of each, so bytecode caches are written):

- ``python -c pass``;
- ``failgate check`` on one small report (the 26 real cases of
  examples/reports/eval_summary.json, or ``--cases N`` real-shaped ones) with its
  ceilings file;
- ``pytest --co -q`` in an empty folder (pytest starting and collecting nothing);
- ``pytest --failgate=<report> ceilings.yaml`` on the same report.

pytest loads no plugin but failgate's (``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``, failgate
named with ``-p`` where it runs), so the test extra's plugins do not count. Printed:
each command's CPU time (user + system of the child: what a busy machine inflates
least), median and minimum over the rounds, and the gate's cost above its reference
(``failgate check`` above ``python -c pass``, ``pytest --failgate`` above the bare
pytest), as the difference of medians. The issue's target is 0.15 s for each.

    python bench/startup_speed.py                  # 26 cases, 7 rounds
    python bench/startup_speed.py --cases 1000 --rounds 11
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gate_speed import SOURCE, real_case  # noqa: E402 - the bench folder is not a package

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
ENV["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"


def cpu_of(command: list[str], cwd: Path) -> float:
    """CPU seconds (user + system) of one run of ``command``; exits on a failed run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False,
                          env=ENV)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1, 5):  # 5: pytest collected nothing (the bare run)
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stdout[-2000:]}"
                 f"\n{done.stderr[-2000:]}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def write_report(folder: Path, n_cases: int | None) -> Path:
    """The real 26-case report, or ``n_cases`` real-shaped cases built from it."""
    report = folder / "eval_summary.json"
    if n_cases is None:
        shutil.copy(SOURCE, report)
        return report
    document = json.loads(SOURCE.read_text(encoding="utf-8"))
    rng = random.Random(20)
    source = document["case_results"]
    document["case_results"] = [real_case(rng.choice(source), i, rng) for i in range(n_cases)]
    document["num_predictions"] = n_cases
    report.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--cases", "--size", type=int, default=None, dest="cases",
                        help="real-shaped cases instead of the 26 real ones")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="failgate-bench-") as tmp:
        work, empty = Path(tmp) / "project", Path(tmp) / "empty"
        work.mkdir()
        empty.mkdir()
        for folder in (work, empty):
            (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        report = write_report(work, args.cases)
        failgate = str(Path(sys.executable).with_name("failgate"))
        subprocess.run([failgate, "init", str(report)], cwd=work, check=True,
                       capture_output=True, env=ENV)
        pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        commands = {
            "python -c pass": ([sys.executable, "-c", "pass"], work),
            "failgate check": ([failgate, "check", str(report)], work),
            "pytest --co (empty)": ([*pytest, "--co"], empty),
            "pytest --failgate": ([*pytest, "-p", "pytest_failgate.plugin",
                                   f"--failgate={report}", "ceilings.yaml"], work),
        }
        for command, cwd in commands.values():
            cpu_of(command, cwd)
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, (command, cwd) in commands.items():
                samples[name].append(cpu_of(command, cwd))
        load = os.getloadavg()
        cases = "26 real cases" if args.cases is None else f"{args.cases:,} real-shaped cases"
        print(f"{cases}, {args.rounds} rounds; load average {load[0]:.1f}, "
              f"{load[1]:.1f}, {load[2]:.1f} on {os.cpu_count()} CPUs")
        median = {name: statistics.median(values) for name, values in samples.items()}
        for name, values in samples.items():
            print(f"  {name:22} cpu median {median[name]:.3f} s  min {min(values):.3f} s")
        for gate, reference in (("failgate check", "python -c pass"),
                                ("pytest --failgate", "pytest --co (empty)")):
            above = median[gate] - median[reference]
            print(f"  {gate} above {reference} (the floor): {above:+.3f} s  target <= 0.150 s"
                  f"  {'met' if above <= 0.15 else 'NOT met'}")


if __name__ == "__main__":
    main()
