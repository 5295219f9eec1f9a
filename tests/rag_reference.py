"""The RAG failure classifier v1 (docs/design.md) as its reference code is: the rag oracle.

Plain Python over a case's present fields (``dict.get`` with the reference's own
defaults); the built-in ``rag.yaml`` must agree with it on every case, and
``bench/expr_speed.py`` races the compiled taxonomy against it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Case = Mapping[str, Any]


def failed(case: Case) -> bool:
    if case.get("answerable", True):
        return case.get("accuracy") != 1.0
    return not (bool(case.get("abstained")) and not bool(case.get("evidence_doc_ids")))


def verifier_false_negative(case: Case) -> bool:
    return not bool(case.get("answerable", True)) and not bool(case.get("abstained"))


def verifier_false_positive(case: Case) -> bool:
    return (bool(case.get("answerable", True)) and bool(case.get("abstained"))
            and bool(case.get("term_match")))


def retrieval_miss(case: Case) -> bool:
    expected = set(case.get("expected_doc_ids") or [])
    evidence = set(case.get("evidence_doc_ids") or [])
    return bool(case.get("answerable", True)) and bool(expected) and not expected & evidence


def planner_under_decomposition(case: Case) -> bool:
    return (case.get("query_type") in {"comparison", "multi_hop"}
            and len(case.get("attempt_latency") or []) <= 1)


def generator_hallucination(case: Case) -> bool:
    alignment = case.get("claim_citation_alignment")
    return (isinstance(alignment, int | float) and not isinstance(alignment, bool)
            and alignment < 0.5)


RULES: dict[str, Callable[[Case], bool]] = {
    "verifier_false_negative": verifier_false_negative,
    "verifier_false_positive": verifier_false_positive,
    "retrieval_miss": retrieval_miss,
    "planner_under_decomposition": planner_under_decomposition,
    "generator_hallucination": generator_hallucination,
}


def reference_classify(case: Case) -> str | None:
    """The category the RAG failure classifier gives a case, or ``None`` when it passed."""
    if not failed(case):
        return None
    for name, rule in RULES.items():
        if rule(case):
            return name
    return "unknown"
