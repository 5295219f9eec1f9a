"""Classify cases with the rag rules written in the expression language, against rag.py.

Both classifiers run ``failed`` and then the five enabled rag categories, first
match wins, over the same cases in the same run (interleaved rounds, median):

- expressions: the rules compiled by ``taxonomy.expr.compile_expr``, given only the
  fields present in each case (how a reader hands them over);
- rag.py: the plain-Python predicates of the built-in taxonomy, given every field
  with its default filled in beforehand (what ``Tallier.add_complete`` gets), so
  their rate leaves out the cost of filling defaults.

Cases are drawn with ``random.Random(0)`` from examples/reports/eval_summary.json,
keeping only the fields the rag taxonomy declares, top-level arrays as tuples.
Target: at least 1,000,000 cases/s for the expressions. Run from the repository root:

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
sys.path.insert(0, str(ROOT))

from pytest_failgate.taxonomy.expr import compile_expr  # noqa: E402
from pytest_failgate.taxonomy.rag import RAG  # noqa: E402

SOURCE = ROOT / "examples" / "reports" / "eval_summary.json"

DEFAULTS: dict[str, Any] = {"answerable": True}
FAILED = "(accuracy != 1.0) if answerable else not (abstained and not evidence_doc_ids)"
CATEGORIES: dict[str, str] = {
    "verifier_false_negative": "not answerable and not abstained",
    "verifier_false_positive": "answerable and abstained and term_match",
    "retrieval_miss": (
        "answerable and expected_doc_ids"
        " and not (set(expected_doc_ids) & set(evidence_doc_ids))"
    ),
    "planner_under_decomposition": (
        'query_type in {"comparison", "multi_hop"} and len(attempt_latency) <= 1'
    ),
    "generator_hallucination": (
        "claim_citation_alignment is not None and claim_citation_alignment < 0.5"
    ),
}

Predicate = Callable[[Mapping[str, Any]], Any]


def make_cases(n_cases: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(present-only cases, the same cases with every field at its default if absent)."""
    source = json.loads(SOURCE.read_text(encoding="utf-8"))["case_results"]
    fields = RAG.fields
    rng = random.Random(0)
    present: list[dict[str, Any]] = []
    complete: list[dict[str, Any]] = []
    for _ in range(n_cases):
        raw = rng.choice(source)
        case = {
            f.name: tuple(raw[f.name]) if isinstance(raw[f.name], list) else raw[f.name]
            for f in fields if f.name in raw
        }
        present.append(case)
        complete.append({f.name: case.get(f.name, f.default) for f in fields})
    return present, complete


def classify_all(failed: Predicate, rules: Sequence[Predicate],
                 cases: list[dict[str, Any]]) -> list[int]:
    """Per case: 0 passed, else the 1-based deciding rule (len(rules) + 1: fallback)."""
    out = []
    fallback = len(rules) + 1
    for case in cases:
        if not failed(case):
            out.append(0)
            continue
        decided = fallback
        for position, rule in enumerate(rules, start=1):
            if rule(case):
                decided = position
                break
        out.append(decided)
    return out


def timed(failed: Predicate, rules: Sequence[Predicate], cases: list[dict[str, Any]]) -> float:
    start = time.perf_counter()
    classify_all(failed, rules, cases)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()

    enabled = [rule for rule in RAG.categories if rule.enabled]
    assert [rule.name for rule in enabled] == list(CATEGORIES), "rag's rules changed"
    compiled_failed = compile_expr(FAILED, DEFAULTS).function
    compiled_rules = [compile_expr(text, DEFAULTS).function for text in CATEGORIES.values()]
    rag_failed = RAG.failed.predicate
    rag_rules = [rule.predicate for rule in enabled]

    present, complete = make_cases(args.cases)
    ours = classify_all(compiled_failed, compiled_rules, present)
    theirs = classify_all(rag_failed, rag_rules, complete)
    if ours != theirs:
        sys.exit("the expressions and rag.py disagree on some case")

    samples: dict[str, list[float]] = {"expressions": [], "rag.py": []}
    for _ in range(args.rounds):
        samples["expressions"].append(timed(compiled_failed, compiled_rules, present))
        samples["rag.py"].append(timed(rag_failed, rag_rules, complete))
    rates = {name: args.cases / statistics.median(values) for name, values in samples.items()}
    n_failed = sum(1 for decided in ours if decided)
    print(f"{args.cases} cases ({n_failed} failed), median of {args.rounds} rounds, one core")
    print(f"  expressions (present fields)  {rates['expressions']:12,.0f} cases/s"
          "   (target >= 1,000,000)")
    print(f"  rag.py (complete cases)       {rates['rag.py']:12,.0f} cases/s")
    print(f"  ratio expressions / rag.py    {rates['expressions'] / rates['rag.py']:12.2f}")


if __name__ == "__main__":
    main()
