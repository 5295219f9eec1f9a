"""The three places issue 48 measured off their floors, each beside its floor in the same run.

- ``failgate watch``, a case: CPU a case of ``watch --replay`` against ``check`` on the same
  real-shaped JSON Lines cases (each the difference of two sizes' medians, so the start-up
  cancels), and a harness writing short cases at 10,000 a second: how far behind the
  settled verdict came (its case's time against the writer's).
- ``failgate guard --base main reports`` with one large report: CPU and peak memory against
  the guard's own git reads (the same guard told of no report), and the git commands it ran
  (``GIT_TRACE``), all and distinct.
- peak memory of ``failgate check`` on a ``.json`` report (default install and ``[fast]``),
  real-shaped and object-dense (short cases, many small objects a byte), against the file's
  size and pydantic-core's full decode of it (``from_json``: the default install's
  decoder building its whole tree).

CPU is user + system of each child (``resource.getrusage``), medians of interleaved rounds
after a warm-up; the machine may be loaded, so every figure is a ratio to a floor taken in
the same run. Each command runs in a fresh interpreter.

    python bench/floor_speed.py                   # every row: a few minutes
    python bench/floor_speed.py --rows watch --rounds 5
    python bench/floor_speed.py --rows memory --size 50000   # the .json rows' cases
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gate_speed import BLOCK_FAST, ENV, real_report, write_report

CLI = "import sys; from pytest_failgate.cli import main; sys.exit(main(sys.argv[1:]))"
FULL_DECODE = ("import sys; from pydantic_core import from_json; "
               "from_json(open(sys.argv[1], 'rb').read())")
WRITER = """\
import sys, time
lines, rate, out = open(sys.argv[1], "rb").readlines(), float(sys.argv[2]), sys.argv[3]
start = time.monotonic()
with open(out, "ab", buffering=0) as handle:
    for at in range(0, len(lines), 100):  # 100 cases at a time, each batch at its time
        wait = start + at / rate - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        handle.write(b"".join(lines[at:at + 100]))
open(out + ".started", "w").write(repr(start))
"""


def cpu(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    """CPU seconds (user + system) of one run of ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, cwd=cwd, capture_output=True, check=False, env=env or ENV)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stderr[-2000:]!r}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def peak_mb(command: list[str], cwd: Path) -> float:
    """Peak resident memory of a command, by GNU time."""
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *command], cwd=cwd,
                          capture_output=True, text=True, check=False, env=ENV)
    if done.returncode not in (0, 1):
        sys.exit(f"failed: {' '.join(command)}\n{done.stderr[-2000:]}")
    return int(done.stderr.strip().splitlines()[-1]) / 1024


def medians(commands: dict[str, list[str]], cwd: Path, rounds: int) -> dict[str, float]:
    for command in commands.values():  # the warm-up
        cpu(command, cwd)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, command in commands.items():
            samples[name].append(cpu(command, cwd))
    return {name: statistics.median(values) for name, values in samples.items()}


def init(work: Path, report: Path) -> None:
    (work / "ceilings.yaml").unlink(missing_ok=True)
    subprocess.run([sys.executable, "-c", CLI, "init", str(report)], cwd=work,
                   capture_output=True, check=True, env=ENV)


def watch_rows(work: Path, rounds: int, size: int) -> None:
    small, large = work / "small.jsonl", work / "large.jsonl"
    write_report(small, real_report(1_000), {})
    write_report(large, real_report(size), {})
    init(work, large)
    commands = {}
    for report in (small, large):
        commands[f"check {report.stem}"] = [sys.executable, "-c", CLI, "check", str(report)]
        commands[f"watch {report.stem}"] = [sys.executable, "-c", CLI, "watch", str(report),
                                            "--replay", "--name", "large"]
    got = medians(commands, work, rounds)
    extra = size - 1_000
    check = (got["check large"] - got["check small"]) / extra
    watch = (got["watch large"] - got["watch small"]) / extra
    print(f"failgate watch, a case ({size:,} real-shaped JSON Lines cases against 1,000; CPU "
          f"medians of {rounds} rounds)")
    print(f"  watch --replay {watch * 1e6:6.1f} us a case; floor: check on the same cases "
          f"{check * 1e6:.1f} us a case; ratio {watch / check:.2f}x (target <= 2x: "
          f"{'met' if watch <= 2 * check else 'NOT met'})")
    print(f"  whole runs: watch {got['watch large']:.2f} s, check {got['check large']:.2f} s "
          f"({got['watch large'] / got['check large']:.2f}x)", flush=True)
    harness(work)


def harness(work: Path, rate: float = 10_000.0, n: int = 50_000) -> None:
    """A harness writing ``n`` short cases at ``rate`` a second, watched as it writes: the
    settled verdict's case, when watch printed it, against when the writer wrote it."""
    source = work / "cases.jsonl"
    write_report(source, real_report(n, ascii_text=True, short=True), {})
    init(work, source)
    out = work / "written.jsonl"
    out.unlink(missing_ok=True)
    command = [sys.executable, "-c", CLI, "watch", str(out), "--planned", str(n),
               "--name", "cases", "--idle-seconds", "30", "--",
               sys.executable, "-c", WRITER, str(source), str(rate), str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run(command, cwd=work, capture_output=True, text=True, check=False,
                          env=ENV)
    took = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    replay = cpu([sys.executable, "-c", CLI, "watch", str(source), "--replay", "--name",
                  "cases"], work)
    floor = cpu([sys.executable, "-c", CLI, "check", str(source)], work)
    found = re.search(r"settled after (\d+) of", done.stdout)
    if found is None:
        sys.exit(f"watch did not settle:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    settled = int(found.group(1))
    written_at = settled / rate  # when the writer wrote the settling case, after its start
    print(f"  a harness writing {rate:,.0f} cases/s ({n:,} short cases, {n / rate:.0f} s of "
          f"writing): watch --replay of the same cases takes {replay:.2f} s of CPU (check "
          f"{floor:.2f} s), {n / replay:,.0f} cases a CPU second: "
          f"{'keeps up' if replay < n / rate else 'does NOT keep up'} on a core of its own")
    print(f"  watched as written: settled after {settled:,} cases, {took:.2f} s after watch "
          f"started ({used:.2f} s of CPU, the writer's included); the writer wrote that case "
          f"{written_at:.2f} s after its start: {took - written_at:.2f} s behind in wall "
          "time at this load (the start-up and the 0.2 s poll included)", flush=True)


def guard_rows(work: Path, rounds: int, size: int) -> None:
    repo = work / "repo"
    (repo / "reports").mkdir(parents=True)
    write_report(repo / "reports" / "big.json", real_report(size), {"indent": 2})
    (repo / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (repo / ".gitignore").write_text("reports/big.json\n", encoding="utf-8")
    init(repo, repo / "reports")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "user.email=b@e", "-c", "user.name=bench", "commit", "-qm", "main"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    megabytes = (repo / "reports" / "big.json").stat().st_size / 1e6
    told = [sys.executable, "-c", CLI, "guard", "--base", "main", "reports"]
    alone = [sys.executable, "-c", CLI, "guard", "--base", "main"]
    got = medians({"told": told, "alone": alone}, repo, rounds)
    peaks = {name: peak_mb(command, repo) for name, command in (("told", told),
                                                                  ("alone", alone))}
    trace = work / "git.trace"
    trace.unlink(missing_ok=True)
    subprocess.run(told, cwd=repo, capture_output=True, check=False,
                   env={**ENV, "GIT_TRACE": str(trace)})
    commands = [line.split("trace: built-in: ", 1)[1] for line in
                trace.read_text(encoding="utf-8").splitlines() if "trace: built-in: " in line]
    print(f"failgate guard --base main reports, one {megabytes:.0f} MB report ({size:,} cases); "
          f"CPU medians of {rounds} rounds")
    print(f"  told of the report: {got['told']:.2f} s, {peaks['told']:.0f} MB; floor: the "
          f"guard's own git reads (told of none) {got['alone']:.2f} s, {peaks['alone']:.0f} MB;"
          f" ratio {got['told'] / got['alone']:.2f}x CPU, {peaks['told'] / peaks['alone']:.2f}x"
          " memory")
    print(f"  git commands: {len(commands)}, {len(set(commands))} distinct "
          f"({'each once' if len(commands) == len(set(commands)) else 'NOT each once'})",
          flush=True)


def memory_rows(work: Path, size: int) -> None:
    shapes: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
        ("real-shaped", real_report(size), {"indent": 2}),
        ("object-dense (short cases, compact)",
         real_report(size * 8, ascii_text=True, short=True), {})]
    print("peak memory of failgate check on a .json report, against the file and "
          "pydantic-core's full decode (from_json) of it")
    for label, document, options in shapes:
        report = work / "report.json"
        write_report(report, document, options)
        init(work, report)
        megabytes = report.stat().st_size / 1e6
        n_cases = len(document["case_results"])
        full = peak_mb([sys.executable, "-c", FULL_DECODE, str(report)], work)
        default = peak_mb([sys.executable, "-c", BLOCK_FAST + CLI, "check", str(report)], work)
        fast = peak_mb([sys.executable, "-c", CLI, "check", str(report)], work)
        print(f"  {label}: {n_cases:,} cases, {megabytes:.0f} MB; full decode {full:.0f} MB "
              f"({full / megabytes:.2f}x the file)")
        for name, peak in (("default install", default), ("[fast]", fast)):
            print(f"    {name:16} {peak:6.0f} MB: {peak / megabytes:.2f}x the file, "
                  f"{peak / full:.2f}x the full decode")
        print(f"    target (default install): at most 1.5x the file ({1.5 * megabytes:.0f} MB) "
              f"{'met' if default <= 1.5 * megabytes else 'NOT met'}; at most the full "
              f"decode {'met' if default <= full else 'NOT met'}", flush=True)
        report.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rows", default="watch,guard,memory",
                        help="comma-separated: watch, guard, memory")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--size", type=int, default=20_000,
                        help="cases of the large watch report, the guard's report and the "
                             "real-shaped .json (8x as many object-dense cases)")
    args = parser.parse_args()
    rows = args.rows.split(",")
    with tempfile.TemporaryDirectory(prefix="failgate-floor-") as tmp:
        work = Path(tmp)
        (work / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        load = os.getloadavg()
        print(f"load average {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f} on {os.cpu_count()} "
              "CPUs", flush=True)
        if "watch" in rows:
            watch_rows(work, args.rounds, args.size)
        if "guard" in rows:
            guard_rows(work, args.rounds, args.size)
        if "memory" in rows:
            memory_rows(work, args.size)
        load = os.getloadavg()
        print(f"load average at the end {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f}")


if __name__ == "__main__":
    main()
