"""Classify with the shipped rag taxonomy (rules compiled from rag.yaml) against plain Python.

Both classifiers run ``failed`` and then the five enabled rag categories, first
match wins, over the same cases in the same run (interleaved rounds, median):

- compiled: the predicates of ``builtin_taxonomies()["rag"]``, compiled from the
  expression language, given only the fields present in each case (how a reader
  hands them over);
- plain Python: the RAG failure classifier's reference code (``tests/rag_reference.py``), over
  the same cases.

Cases are drawn with ``random.Random(0)`` from examples/reports/eval_summary.json,
keeping only the fields the rag taxonomy reads, top-level arrays as tuples. Target:
at least 1,000,000 cases/s for the compiled rules. Run from the repository root:

    python bench/expr_speed.py                  # 100k cases, 7 rounds
    python bench/expr_speed.py --cases 20000 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import rag_reference  # noqa: E402

from pytest_failgate.core.taxonomy import builtin_taxonomies  # noqa: E402

SOURCE = ROOT / "examples" / "reports" / "eval_summary.json"
Predicate = Callable[[Mapping[str, Any]], Any]


def make_cases(n_cases: int, fields: Sequence[str]) -> list[dict[str, Any]]:
    source = json.loads(SOURCE.read_text(encoding="utf-8"))["case_results"]
    rng = random.Random(0)
    cases = []
    for _ in range(n_cases):
        case = rng.choice(source)
        cases.append({name: tuple(value) if isinstance(value, list) else value
                      for name, value in case.items() if name in fields})
    return cases


def classify_all(failed: Predicate, rules: Sequence[Predicate],
                 cases: list[dict[str, Any]]) -> list[int]:
    decided = []
    for case in cases:
        position = 0
        if failed(case):
            position = len(rules) + 1
            for index, rule in enumerate(rules, start=1):
                if rule(case):
                    position = index
                    break
        decided.append(position)
    return decided


def timed(failed: Predicate, rules: Sequence[Predicate], cases: list[dict[str, Any]]) -> float:
    start = time.perf_counter()
    classify_all(failed, rules, cases)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()

    rag = builtin_taxonomies()["rag"]
    enabled = [rule for rule in rag.categories if rule.enabled]
    assert [rule.name for rule in enabled] == list(rag_reference.RULES), "rag's rules changed"
    compiled = (rag.failed.predicate, [rule.predicate for rule in enabled])
    plain = (rag_reference.failed, list(rag_reference.RULES.values()))

    cases = make_cases(args.cases, [f.name for f in rag.fields])
    ours = classify_all(*compiled, cases)
    if ours != classify_all(*plain, cases):
        sys.exit("the compiled rag taxonomy and the reference disagree on some case")

    samples: dict[str, list[float]] = {"compiled": [], "plain": []}
    for _ in range(args.rounds):
        samples["compiled"].append(timed(*compiled, cases))
        samples["plain"].append(timed(*plain, cases))
    rates = {name: args.cases / statistics.median(values) for name, values in samples.items()}
    n_failed = sum(1 for decided in ours if decided)
    print(f"{args.cases} cases ({n_failed} failed), median of {args.rounds} rounds, one core")
    print(f"  compiled rag.yaml rules       {rates['compiled']:12,.0f} cases/s"
          "   (target >= 1,000,000)")
    print(f"  plain-Python reference        {rates['plain']:12,.0f} cases/s")
    print(f"  ratio compiled / plain        {rates['compiled'] / rates['plain']:12.2f}")


if __name__ == "__main__":
    main()
