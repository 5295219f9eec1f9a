"""The SQL engines at warehouse scale, as ratios against the Python reader in the same run.

1. DuckDB: ``failgate check cases.parquet`` on N generated cases (default 10M) against
   ``failgate check cases.jsonl`` (the Python reader) on the same cases as JSON Lines.
   Target: ratio well under 0.1. Both are whole CLI runs (start-up, ceilings, output).
2. Spark (``--spark``): ``failgate check cases.parquet --engine spark`` on M cases
   (default 1M) in local mode, start-up included; then, in one session, the gate
   query's own time and its physical plan, which must read the table once.

The cases look like real reports: unique ids, accuracy and alignment values, document
ids and latencies per case; optional keys present in some cases only (``answerable``,
``attempt_latency``, ``claim_citation_alignment``); two key orders; Korean answer
text no rule reads. The JSON Lines are written by DuckDB from SQL (absent keys are
left out of the line, not written as null), and the Parquet file from those lines.
Nothing is committed: the data is generated in a temporary folder. The machine may be
shared: each timing is the median of ``--rounds`` interleaved rounds.

    python bench/warehouse_speed.py                        # 10M cases, DuckDB
    python bench/warehouse_speed.py --cases 1000000 --rounds 3 --spark --spark-cases 1000000
    python bench/warehouse_speed.py --no-python        # DuckDB alone on 10M cases
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CEILINGS = """version: 1
taxonomy: rag
ceilings:
  verifier_false_negative: {n}
  verifier_false_positive: {n}
  retrieval_miss: {n}
  planner_under_decomposition: {n}
  generator_hallucination: {n}
  unknown: {n}
"""

# One JSON line per case, built in SQL: optional keys appear only in some cases.
LINE = """
'{' || CASE WHEN i % 2 = 0
  THEN '"id": "case-' || i || '", "query_type": "' || qt || '"'
  ELSE '"query_type": "' || qt || '", "id": "case-' || i || '"' END
|| CASE WHEN r1 < 0.7 THEN ', "answerable": ' || CASE WHEN r2 < 0.85 THEN 'true' ELSE 'false' END
   ELSE '' END
|| ', "abstained": ' || CASE WHEN r3 < 0.1 THEN 'null' WHEN r3 < 0.25 THEN 'true' ELSE 'false' END
|| ', "accuracy": ' || CASE WHEN r4 < 0.55 THEN '1.0' WHEN r4 < 0.6 THEN 'null'
                            ELSE CAST(round(r4 * 0.9, 4) AS VARCHAR) END
|| ', "term_match": ' || CASE WHEN r5 < 0.5 THEN 'true' ELSE 'false' END
|| ', "expected_doc_ids": ["doc-' || (i * 7 % 100003) || '", "doc-' || (i * 13 % 100019) || '"]'
|| ', "evidence_doc_ids": [' || CASE WHEN r6 < 0.3 THEN '' WHEN r6 < 0.6
     THEN '"doc-' || (i * 7 % 100003) || '"' ELSE '"doc-' || (i * 11 % 99991) || '", "doc-'
     || (i * 17 % 99989) || '"' END || ']'
|| CASE WHEN r7 < 0.6 THEN ', "attempt_latency": [' || CAST(round(r7 * 3, 3) AS VARCHAR)
     || CASE WHEN r7 < 0.3 THEN ', ' || CAST(round(r8 * 2, 3) AS VARCHAR) ELSE '' END || ']'
   ELSE '' END
|| CASE WHEN r8 < 0.8 THEN ', "claim_citation_alignment": ' || CAST(round(r9, 4) AS VARCHAR)
   ELSE '' END
|| ', "answer": "입찰 공고 ' || i || '번의 요구 사항은 문서 ' || (i % 977) || '에 있습니다"}'
"""


def generate(folder: Path, n_cases: int) -> tuple[Path, Path]:
    import duckdb

    jsonl, parquet = folder / "cases.jsonl", folder / "cases.parquet"
    con = duckdb.connect()
    con.execute(f"""
        COPY (SELECT {LINE} AS line FROM (
            SELECT i, random() AS r1, random() AS r2, random() AS r3, random() AS r4,
                   random() AS r5, random() AS r6, random() AS r7, random() AS r8,
                   random() AS r9,
                   ['comparison', 'multi_hop', 'factoid', 'procedural'][1 + (i * 31 % 4)] AS qt
            FROM range({n_cases}) t(i)))
        TO '{jsonl}' (FORMAT csv, HEADER false, QUOTE '', ESCAPE '', DELIMITER '\x01')""")
    con.execute(f"""COPY (SELECT * FROM read_json('{jsonl}', format='newline_delimited',
                    sample_size=-1)) TO '{parquet}' (FORMAT parquet)""")
    return jsonl, parquet


def timed(command: list[str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")
    return elapsed, done.stdout


def counts(output: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"(\w+): (\d+) cases?", output)}


def failgate(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest_failgate.cli", *args]


def duckdb_ratio(folder: Path, rounds: int) -> None:
    python_times, duck_times = [], []
    outputs: dict[str, str] = {}
    for _ in range(rounds):  # interleaved, so a busy spell hits both alike
        t, outputs["python"] = timed(failgate("check", "cases.jsonl"), folder)
        python_times.append(t)
        t, outputs["duckdb"] = timed(failgate("check", "cases.parquet"), folder)
        duck_times.append(t)
    py, duck = statistics.median(python_times), statistics.median(duck_times)
    same = counts(outputs["python"]) == counts(outputs["duckdb"])
    print(f"python reader, JSON Lines: median {py:.1f} s  {[round(t, 1) for t in python_times]}")
    print(f"duckdb, Parquet:          median {duck:.1f} s  {[round(t, 1) for t in duck_times]}")
    print(f"ratio duckdb / python: {duck / py:.4f}   same counts: {same}")
    if not same:
        print(outputs["python"][-2000:], outputs["duckdb"][-2000:], sep="\n---\n")


def spark_run(folder: Path, n_cases: int, rounds: int) -> None:
    import duckdb

    parquet = folder / "spark.parquet"
    duckdb.connect().execute(f"COPY (SELECT * FROM '{folder / 'cases.parquet'}' LIMIT "
                             f"{n_cases}) TO '{parquet}' (FORMAT parquet)")
    times = [timed(failgate("check", "spark.parquet", "--engine", "spark"), folder)[0]
             for _ in range(rounds)]
    print(f"spark local[*], {n_cases:,} cases, whole CLI run (JVM start-up included): "
          f"median {statistics.median(times):.1f} s  {[round(t, 1) for t in times]}")
    from pytest_failgate.core.engines.spark_engine import session
    from pytest_failgate.core.engines.sqlquery import compile_gate
    from pytest_failgate.core.engines.sqltypes import spark_type
    from pytest_failgate.core.taxonomy import builtin_taxonomies

    spark = session()
    frame = spark.read.parquet(str(parquet))
    frame.createOrReplaceTempView("cases")
    schema = {f.name: spark_type(f.dataType) for f in frame.schema.fields}
    from pytest_failgate.core.engines.dialects import SPARK

    query = compile_gate(builtin_taxonomies()["rag"], schema, "cases", dialect=SPARK)
    query_times = []
    for _ in range(rounds):
        start = time.perf_counter()
        spark.sql(query.sql).collect()
        query_times.append(time.perf_counter() - start)
    plan = spark.sql(query.sql)._jdf.queryExecution().executedPlan().toString()
    scans = len(re.findall(r"FileScan parquet", plan))
    print(f"spark gate query in a warm session: median {statistics.median(query_times):.1f} s"
          f"  {[round(t, 1) for t in query_times]}")
    print(f"physical plan: {scans} Parquet scan(s)")
    print("\n".join(line for line in plan.splitlines() if "Scan" in line)[:600])
    spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--spark", action="store_true", help="also measure Spark local[*]")
    parser.add_argument("--spark-cases", type=int, default=1_000_000)
    parser.add_argument("--no-python", action="store_true",
                        help="time DuckDB alone (when the Python reader would take too long)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        jsonl, parquet = generate(folder, args.cases)
        print(f"{args.cases:,} cases generated in {time.perf_counter() - start:.0f} s: "
              f"JSON Lines {jsonl.stat().st_size / 1e9:.2f} GB, "
              f"Parquet {parquet.stat().st_size / 1e9:.2f} GB; cpus: {os.cpu_count()}")
        (folder / "ceilings.yaml").write_text(CEILINGS.format(n=args.cases), encoding="utf-8")
        if args.no_python:
            times = [timed(failgate("check", "cases.parquet"), folder)[0]
                     for _ in range(args.rounds)]
            print(f"duckdb, Parquet: median {statistics.median(times):.1f} s  "
                  f"{[round(t, 1) for t in times]}")
        else:
            duckdb_ratio(folder, args.rounds)
        if args.spark:
            spark_run(folder, args.spark_cases, args.rounds)


if __name__ == "__main__":
    main()
