"""The SQL engines at warehouse scale, against the query a user would write by hand, in one run.

1. DuckDB: ``failgate check cases.parquet`` (a whole CLI run: start-up, ceilings, output)
   against two floors, each a fresh Python that imports duckdb and reads the same file:
   the counting query (the rag rules written by hand as one ``CASE`` ... ``GROUP BY``),
   and the honest floor, that query followed by the cheapest exact duplicate-id check
   (the 64-bit hashes of the id column sorted, each compared with the one before; the
   ids behind a repeated hash compared as text). All in fresh interpreters, in
   interleaved rounds after a warm-up; printed: CPU time (user + system of the child, by
   GNU time: what a shared machine inflates least), peak resident memory, their ratios,
   and whether the counts are equal. Targets: at most 1.2x the honest floor's CPU and 3x
   the counting query's peak memory, each printed with its floor and met / NOT met.
2. ``--python``: the Python reader (``failgate check cases.jsonl``) on the same cases as
   JSON Lines, for the counts (slow: about 100 s at 10M cases).
3. ``--spark``: in one warm ``local[*]`` session, the gate (``load_spark``) and the
   hand-written query followed by the same exact duplicate check (64-bit hashes grouped,
   the ids behind a repeated one compared) over M cases (default 1M), interleaved; CPU
   time is the JVM's own (``/proc``), counts compared, and the gate's physical plan,
   which must read the file once. Target: at most 1.5x, printed met / NOT met.

The cases look like real reports: unique ids (with a random suffix), accuracy and
alignment values, document ids and latencies per case; optional fields null in some
cases only (``answerable``, ``abstained``, ``attempt_latency``,
``claim_citation_alignment``); Korean answer text no rule reads. Nothing is committed:
the data is generated in a temporary folder.

    python bench/warehouse_speed.py                      # 10M cases, DuckDB, 3 rounds
    python bench/warehouse_speed.py --size 1000000 --spark --spark-cases 1000000
    python bench/warehouse_speed.py --size 200000 --rounds 3 --python --spark
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CATEGORIES = ("verifier_false_negative", "verifier_false_positive", "retrieval_miss",
              "planner_under_decomposition", "generator_hallucination", "unknown")
CEILINGS = "version: 1\ntaxonomy: rag\nceilings:\n" + "".join(
    f"  {name}: {{n}}\n" for name in CATEGORIES)

# Typed columns built in SQL; the nulls stand for keys a case lacks.
CASES = """
SELECT
  'bidmate-' || i || '-' || substr(md5(i::VARCHAR), 1, 6) AS id,
  ['comparison', 'multi_hop', 'single_doc', 'follow_up'][1 + (i * 31 % 4)] AS query_type,
  CASE WHEN r1 < 0.7 THEN r2 < 0.85 END AS answerable,
  CASE WHEN r3 >= 0.1 THEN r3 < 0.25 END AS abstained,
  CASE WHEN r4 < 0.55 THEN 1.0 WHEN r4 < 0.6 THEN NULL ELSE round(r4 * 0.9, 4) END
    AS accuracy,
  r5 < 0.5 AS term_match,
  ['rfp-' || (i * 7 % 100003), 'rfp-' || (i * 13 % 100019)] AS expected_doc_ids,
  CASE WHEN r6 < 0.3 THEN []::VARCHAR[] WHEN r6 < 0.6 THEN ['rfp-' || (i * 7 % 100003)]
       ELSE ['rfp-' || (i * 11 % 99991), 'rfp-' || (i * 17 % 99989)] END AS evidence_doc_ids,
  CASE WHEN r7 < 0.3 THEN [round(r7 * 3, 3), round(r8 * 2, 3)] WHEN r7 < 0.6
       THEN [round(r7 * 3, 3)] END AS attempt_latency,
  CASE WHEN r8 < 0.8 THEN round(r9, 4) END AS claim_citation_alignment,
  '입찰 공고 ' || i || '번의 요구 사항은 문서 ' || (i % 977) || '에 있습니다' AS answer
FROM (SELECT i, random() AS r1, random() AS r2, random() AS r3, random() AS r4,
             random() AS r5, random() AS r6, random() AS r7, random() AS r8, random() AS r9
      FROM range({n}) t(i))
"""

# The rag taxonomy's rules written by hand, first match wins (a null is an absent key).
HAND_CASE = """CASE
  WHEN NOT (CASE WHEN coalesce(answerable, true) THEN accuracy IS DISTINCT FROM 1.0
                 ELSE NOT (coalesce(abstained, false) AND coalesce({len}(evidence_doc_ids), 0) = 0)
            END) THEN 'passed'
  WHEN NOT coalesce(answerable, true) AND NOT coalesce(abstained, false)
    THEN 'verifier_false_negative'
  WHEN coalesce(answerable, true) AND coalesce(abstained, false) AND coalesce(term_match, false)
    THEN 'verifier_false_positive'
  WHEN coalesce(answerable, true) AND coalesce({len}(expected_doc_ids), 0) > 0
       AND NOT {overlap} THEN 'retrieval_miss'
  WHEN query_type IN ('comparison', 'multi_hop') AND coalesce({len}(attempt_latency), 0) <= 1
    THEN 'planner_under_decomposition'
  WHEN claim_citation_alignment < 0.5 THEN 'generator_hallucination'
  ELSE 'unknown' END"""
DUCK_OVERLAP = "coalesce(len(list_intersect(expected_doc_ids, evidence_doc_ids)), 0) > 0"
SPARK_OVERLAP = "coalesce(size(array_intersect(expected_doc_ids, evidence_doc_ids)), 0) > 0"
HAND_DUCKDB = """import sys
import duckdb
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
rows = con.execute('''SELECT category, count(*) FROM (SELECT {case} AS category
  FROM read_parquet(?)) GROUP BY category''', [sys.argv[1]]).fetchall()
print("\\n".join(f"{{name}} {{n}}" for name, n in sorted(rows)))
""".format(case=HAND_CASE.format(overlap=DUCK_OVERLAP, len="len")
           .replace("{", "{{").replace("}", "}}"))
# The cheapest exact duplicate check found: the id hashes sorted, each compared with the
# one before; only the ids behind a repeated hash compared as text.
HAND_DUPLICATES = """
hashes = con.execute('''SELECT DISTINCT h FROM (SELECT h, lag(h) OVER (ORDER BY h) AS p
  FROM (SELECT hash(id) AS h FROM read_parquet(?) WHERE id IS NOT NULL)) WHERE h = p''',
  [sys.argv[1]]).fetchall()
if hashes:
    twice = con.execute('''SELECT id, count(*) FROM read_parquet(?) WHERE hash(id) IN
      (SELECT unnest(?)) GROUP BY id HAVING count(*) > 1 ORDER BY id LIMIT 1''',
      [sys.argv[1], [h for (h,) in hashes]]).fetchall()
    print("duplicate", twice)
"""
HONEST_FLOOR = "hand query + duplicate check"
COUNTING_FLOOR = "hand-written DuckDB query"


def generate(folder: Path, n_cases: int, jsonl: bool) -> Path:
    import duckdb

    parquet = folder / "cases.parquet"
    con = duckdb.connect()
    con.execute(f"COPY ({CASES.format(n=n_cases)}) TO '{parquet}' (FORMAT parquet)")
    if jsonl:  # absent keys left out of the line, as a report writes them
        con.execute(f"""COPY (SELECT to_json(t) FROM '{parquet}' t)
                        TO '{folder / 'cases.jsonl'}' (FORMAT csv, HEADER false, QUOTE '',
                        ESCAPE '', DELIMITER '\x01')""")
        text = (folder / "cases.jsonl").read_text(encoding="utf-8")
        text = re.sub(r',?"[a-z_]+":null', "", text).replace("{,", "{")
        (folder / "cases.jsonl").write_text(text, encoding="utf-8")
    con.close()
    return parquet


def run_waited(command: list[str], cwd: Path) -> tuple[float, float, str]:
    """(CPU seconds, peak resident MB, stdout) of one fresh process, as GNU time reports
    them for the command itself (user + system, maximum resident set size)."""
    with tempfile.NamedTemporaryFile("w+", suffix=".time") as figures:
        done = subprocess.run(["/usr/bin/time", "-o", figures.name, "-f", "%U %S %M", *command],
                              cwd=cwd, capture_output=True, text=True, check=False,
                              env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
        if done.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout[-2000:]}\n"
                             f"{done.stderr[-2000:]}")
        user, system, peak = figures.read().split()[-3:]
    return float(user) + float(system), int(peak) / 1024, done.stdout


def counts(output: str) -> dict[str, int]:
    """The count of each category, from failgate's table or the hand query's lines."""
    found = {}
    for name in CATEGORIES:
        match = re.search(rf"\b{name}:?\s+(\d+)", output)  # (after a progress bar too)
        found[name] = int(match.group(1)) if match else -1
    return found


def failgate(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest_failgate.cli", *args]


def table(rows: list[tuple[str, list[float], list[float]]], floor: str) -> None:
    """Medians of CPU and peak memory, each with its ratio to the floor's."""
    reference = {name: (statistics.median(c), statistics.median(m)) for name, c, m in rows}
    cpu0, mem0 = reference[floor]
    print(f"  {'command':34} {'cpu s':>7} {'ratio':>6} {'peak MB':>8} {'ratio':>6}")
    for name, cpu, _ in rows:
        c, m = reference[name]
        print(f"  {name:34} {c:7.2f} {c / cpu0:5.2f}x {m:8.0f} {m / mem0:5.2f}x"
              f"   cpu runs {[round(x, 2) for x in cpu]}")


def duckdb_floor(folder: Path, rounds: int, python: bool) -> None:
    parquet = str(folder / "cases.parquet")
    commands: dict[str, list[str]] = {
        COUNTING_FLOOR: [sys.executable, "-c", HAND_DUCKDB, parquet],
        HONEST_FLOOR: [sys.executable, "-c", HAND_DUCKDB + HAND_DUPLICATES, parquet],
        "failgate check cases.parquet": failgate("check", "cases.parquet"),
    }
    if python:
        commands["failgate check cases.jsonl (Python)"] = failgate("check", "cases.jsonl")
    outputs = {name: run_waited(command, folder)[2] for name, command in commands.items()}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    mem: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(rounds):  # interleaved, so a busy spell hits every command alike
        for name, command in commands.items():
            c, m, outputs[name] = run_waited(command, folder)
            cpu[name].append(c)
            mem[name].append(m)
    table([(name, cpu[name], mem[name]) for name in commands], COUNTING_FLOOR)
    found = {name: counts(text) for name, text in outputs.items()}
    same = all(each == found[COUNTING_FLOOR] for each in found.values())
    print(f"  counts equal across the commands: {same}  "
          f"{found['failgate check cases.parquet']}")
    if not same:
        for name, each in found.items():
            print(f"    {name}: {each}")
    gate_cpu = statistics.median(cpu["failgate check cases.parquet"])
    gate_mem = statistics.median(mem["failgate check cases.parquet"])
    floor_cpu = statistics.median(cpu[HONEST_FLOOR])
    floor_mem = statistics.median(mem[COUNTING_FLOOR])
    print("targets (medians of this run):")
    for what, got, floor, unit, target, label in (
            ("CPU", gate_cpu, floor_cpu, "s", 1.2, HONEST_FLOOR),
            ("peak memory", gate_mem, floor_mem, "MB", 3.0, COUNTING_FLOOR)):
        ratio = got / floor
        print(f"  failgate check {what} {ratio:5.2f}x  target <= {target:.1f}x of the "
              f"{label} {floor:.2f} {unit}  {'met' if ratio <= target else 'NOT met'}")


def jvm_cpu() -> float:
    """CPU seconds used so far by this process's descendants (the JVM), from /proc."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    mine = {os.getpid()}
    changed = True
    while changed:
        changed = False
        for pid, parent in parents.items():
            if parent in mine and pid not in mine:
                mine.add(pid)
                changed = True
    return sum(times[pid] for pid in mine if pid != os.getpid())


def spark_run(folder: Path, n_cases: int, rounds: int) -> None:
    import duckdb

    sys.path.insert(0, str(ROOT))
    from pytest_failgate.core.engines import optional
    from pytest_failgate.core.engines.spark_engine import load_spark, session
    from pytest_failgate.core.reports.model import ReportFile
    from pytest_failgate.core.reports.read import ReadSpec
    from pytest_failgate.core.taxonomy import builtin_taxonomies

    parquet = folder / "spark.parquet"
    duckdb.connect().execute(f"COPY (SELECT * FROM '{folder / 'cases.parquet'}' LIMIT "
                             f"{n_cases}) TO '{parquet}' (FORMAT parquet)")
    # through the engine's optional import: mypy checks bench/ where pyspark is not installed
    SparkSession = optional("pyspark.sql", "the Spark bench", "spark").SparkSession

    # failgate's own local session, without the console progress bar in the table
    (SparkSession.builder.master("local[*]").appName("failgate-bench")
     .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
     .config("spark.sql.shuffle.partitions", "4").getOrCreate())
    spark = session()
    spark.sparkContext.setLogLevel("ERROR")
    rag = builtin_taxonomies()["rag"]
    report = ReportFile(name="spark", path=parquet)
    rules = HAND_CASE.format(overlap=SPARK_OVERLAP, len="size")
    hand = (f"SELECT category, count(*) FROM (SELECT {rules} "
            f"AS category FROM parquet.`{parquet}`) GROUP BY category")
    found: dict[str, Any] = {}

    def gate() -> None:
        found["gate"] = load_spark(report, rag, ReadSpec()).counts

    hashes = (f"SELECT h FROM (SELECT xxhash64(id) AS h FROM parquet.`{parquet}` WHERE id IS "
              "NOT NULL) GROUP BY h HAVING count(*) > 1 LIMIT 1001")

    def by_hand() -> None:  # the counts, then the same exact duplicate check as the gate's
        found["hand"] = {k: v for k, v in spark.sql(hand).collect() if k != "passed"}
        repeated = [row[0] for row in spark.sql(hashes).collect()]
        if repeated:
            listed = ", ".join(str(h) for h in repeated)
            spark.sql(f"SELECT id, count(*) FROM parquet.`{parquet}` WHERE xxhash64(id) IN "
                      f"({listed}) GROUP BY id HAVING count(*) > 1 LIMIT 1").collect()

    floor_name = "hand query + duplicate check (floor)"
    work = {floor_name: by_hand, "failgate's gate (load_spark)": gate}
    for step in work.values():  # warm: the JVM's JIT, the file's footer
        step()
    cpu: dict[str, list[float]] = {name: [] for name in work}
    wall: dict[str, list[float]] = {name: [] for name in work}
    for _ in range(rounds):
        for name, step in work.items():
            before, start = jvm_cpu() + time.process_time(), time.perf_counter()
            step()
            cpu[name].append(jvm_cpu() + time.process_time() - before)
            wall[name].append(time.perf_counter() - start)
    print(f"Spark local[*], {n_cases:,} cases, warm session, {rounds} rounds "
          "(CPU: the JVM's and this process's)")
    floor = statistics.median(cpu[floor_name])
    for name in work:
        c = statistics.median(cpu[name])
        print(f"  {name:37} cpu {c:7.2f} s {c / floor:5.2f}x   wall "
              f"{statistics.median(wall[name]):6.2f} s")
    ratio = statistics.median(cpu["failgate's gate (load_spark)"]) / floor
    print(f"  target: the gate {ratio:5.2f}x  <= 1.5x of the {floor_name} {floor:.2f} s  "
          f"{'met' if ratio <= 1.5 else 'NOT met'}")
    hand_counts = {name: found["hand"].get(name, 0) for name in CATEGORIES}
    print(f"  counts equal: {hand_counts == {k: found['gate'].get(k, 0) for k in CATEGORIES}}"
          f"  {hand_counts}")
    from pytest_failgate.core.engines.dialects import SPARK
    from pytest_failgate.core.engines.spark_engine import _source
    from pytest_failgate.core.engines.sqlquery import compile_gate
    from pytest_failgate.core.engines.sqltypes import spark_type

    table_sql, schema = _source(spark, report)
    query = compile_gate(rag, {f.name: spark_type(f.dataType) for f in schema.fields},
                         table_sql, ReadSpec(), SPARK)
    plan = spark.sql(query.sql)._jdf.queryExecution().executedPlan().toString()
    print(f"  the gate query's physical plan: {plan.count('FileScan')} FileScan(s)")
    spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--size", "--cases", type=int, default=10_000_000, dest="size")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--python", action="store_true",
                        help="also the Python reader on the same cases as JSON Lines")
    parser.add_argument("--spark", action="store_true", help="also Spark local[*]")
    parser.add_argument("--spark-cases", type=int, default=1_000_000)
    parser.add_argument("--no-duckdb", action="store_true", help="Spark alone")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="failgate-bench-") as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        parquet = generate(folder, args.size, args.python)
        load = os.getloadavg()
        print(f"{args.size:,} cases generated in {time.perf_counter() - start:.0f} s: Parquet "
              f"{parquet.stat().st_size / 1e6:.0f} MB; {os.cpu_count()} CPUs, load average "
              f"{load[0]:.1f}; medians of {args.rounds} interleaved rounds")
        (folder / "ceilings.yaml").write_text(CEILINGS.format(n=args.size), encoding="utf-8")
        if not args.no_duckdb:
            duckdb_floor(folder, args.rounds, args.python)
        if args.spark:
            spark_run(folder, min(args.spark_cases, args.size), args.rounds)


if __name__ == "__main__":
    main()
