"""The gate's fixed cost: a small report gated, against Python and pytest doing nothing.

Four commands, each in a fresh interpreter, in interleaved rounds (after one warm-up
of each, so bytecode caches are written):

- ``python -c pass``;
- ``failgate check`` on one small report (``--cases N`` real-shaped cases, 1,000 by
  default; ``--cases 0``: the 26 real cases of examples/reports/eval_summary.json) with
  its ceilings file;
- ``pytest --co -q`` in an empty folder (pytest starting and collecting nothing),
  without failgate and with failgate loaded but not asked for (``-p`` without
  ``--failgate``: what every test run of a project that installs it pays);
- ``pytest --failgate=<report> ceilings.yaml`` on the small report;
- ``json.load`` of a large report (``--large N`` real-shaped cases, 20,000 by default),
  and ``failgate check`` of it: the whole process of each.

pytest loads no plugin but failgate's (``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``, failgate
named with ``-p`` where it runs), so the test extra's plugins do not count. pytest looks a
``-p`` name up among every installed distribution's entry points first (10-25 ms in an
environment of 135 distributions, 3-5% of the bare run), a scan an installed plugin does
not add (pytest makes it once for all of them); so the idle plugin is also compared with
``-p pytest_failgate`` (the same look-up, failgate's package without its hooks: what the
plugin's own import and hooks cost), and its target is judged against that. Printed:
each command's CPU time (user + system of the child: what a busy machine inflates
least), median and minimum over the rounds, then each target with its floor from the
same run and "met" or "NOT met": ``failgate check`` at most 0.2 s above ``python -c
pass`` and ``pytest --failgate`` at most 0.2 s above the bare pytest (differences of
medians), the idle plugin within 1% of pytest without it and the large report's check
at most 1.2x its ``json.load`` (ratios of medians).

    python bench/startup_speed.py                  # 1,000 and 20,000 cases, 7 rounds
    python bench/startup_speed.py --cases 0 --rounds 11
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


def prepare(root: Path, name: str, n_cases: int | None) -> tuple[Path, Path]:
    """A project folder with a report of ``n_cases`` and the ceilings ``init`` wrote."""
    work = root / name
    work.mkdir()
    (work / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    report = write_report(work, n_cases)
    subprocess.run([FAILGATE, "init", str(report)], cwd=work, check=True,
                   capture_output=True, env=ENV)
    return work, report


FAILGATE = str(Path(sys.executable).with_name("failgate"))
LOAD = "import json, sys; json.load(open(sys.argv[1], encoding='utf-8'))"  # the floor


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--cases", "--size", type=int, default=1000, dest="cases",
                        help="real-shaped cases in the small report (0: the 26 real ones)")
    parser.add_argument("--large", type=int, default=20000,
                        help="real-shaped cases in the report gated against json.load")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="failgate-bench-") as tmp:
        root = Path(tmp)
        work, report = prepare(root, "project", args.cases or None)
        large, big = prepare(root, "large", args.large)
        empty = root / "empty"
        empty.mkdir()
        (empty / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        commands = {
            "python -c pass": ([sys.executable, "-c", "pass"], work),
            "failgate check": ([FAILGATE, "check", str(report)], work),
            "pytest --co (empty)": ([*pytest, "--co"], empty),
            "pytest --co, failgate pkg": ([*pytest, "-p", "pytest_failgate", "--co"],
                                               empty),
            "pytest --co, failgate idle": ([*pytest, "-p", "pytest_failgate.plugin", "--co"],
                                           empty),
            "pytest --failgate": ([*pytest, "-p", "pytest_failgate.plugin",
                                   f"--failgate={report}", "ceilings.yaml"], work),
            "json.load (large)": ([sys.executable, "-c", LOAD, str(big)], large),
            "failgate check (large)": ([FAILGATE, "check", str(big)], large),
        }
        for command, cwd in commands.values():
            cpu_of(command, cwd)
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, (command, cwd) in commands.items():
                samples[name].append(cpu_of(command, cwd))
        load = os.getloadavg()
        cases = "26 real cases" if not args.cases else f"{args.cases:,} real-shaped cases"
        print(f"{cases} (large: {args.large:,}), {args.rounds} rounds; load average "
              f"{load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f} on {os.cpu_count()} CPUs")
        median = {name: statistics.median(values) for name, values in samples.items()}
        for name, values in samples.items():
            print(f"  {name:28} cpu median {median[name]:.3f} s  min {min(values):.3f} s")
        print("targets (each against its floor, measured in this run):")
        for gate, floor, limit in (("failgate check", "python -c pass", 0.2),
                                   ("pytest --failgate", "pytest --co (empty)", 0.2)):
            above = median[gate] - median[floor]
            print(f"  {gate}: {above:+.3f} s above {floor} ({median[floor]:.3f} s); "
                  f"target <= +{limit:.3f} s  {'met' if above <= limit else 'NOT met'}")
        idle = median["pytest --co, failgate idle"] / median["pytest --co (empty)"]
        print(f"  (pytest --co, failgate idle: {idle:.3f}x pytest --co (empty), its -p look-up "
              "included)")
        for gate, floor, limit in (("pytest --co, failgate idle", "pytest --co, failgate pkg",
                                    1.01),
                                   ("failgate check (large)", "json.load (large)", 1.2)):
            ratio = median[gate] / median[floor]
            print(f"  {gate}: {ratio:.3f}x {floor} ({median[floor]:.3f} s); "
                  f"target <= {limit:.2f}x  {'met' if ratio <= limit else 'NOT met'}")


if __name__ == "__main__":
    main()
