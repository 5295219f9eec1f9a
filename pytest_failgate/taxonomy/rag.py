"""The built-in ``rag`` taxonomy: ADR 0059 v1, rule for rule.

Defaults follow the reference classifier: a case without ``answerable`` is
answerable; absent lists are empty; absent flags are false. Values are checked
against the kinds below before any rule runs, so a string where a flag belongs
is an error naming the case, never a silent truthiness accident.
"""

from __future__ import annotations

from .model import Case, Field, Rule, Taxonomy

_DECOMPOSITION_TYPES = frozenset({"comparison", "multi_hop"})
_HALLUCINATION_THRESHOLD = 0.5

FIELDS = (
    Field("answerable", frozenset({"bool"}), default=True, note="absent means answerable"),
    Field("abstained", frozenset({"bool", "null"}), default=False),
    Field("accuracy", frozenset({"number", "null"}), default=None),
    Field("term_match", frozenset({"bool", "null"}), default=False),
    Field(
        "expected_doc_ids", frozenset({"array", "null"}), default=(),
        item_kinds=frozenset({"string", "number"}),
    ),
    Field(
        "evidence_doc_ids", frozenset({"array", "null"}), default=(),
        item_kinds=frozenset({"string", "number"}),
    ),
    Field("query_type", frozenset({"string", "null"}), default=None),
    Field("attempt_latency", frozenset({"array", "null"}), default=()),
    Field("claim_citation_alignment", frozenset({"number", "null"}), default=None),
)


def _failed(case: Case) -> bool:
    if case["answerable"]:
        return bool(case["accuracy"] != 1.0)
    return not (bool(case["abstained"]) and not case["evidence_doc_ids"])


def _verifier_false_negative(case: Case) -> bool:
    return not case["answerable"] and not case["abstained"]


def _verifier_false_positive(case: Case) -> bool:
    return bool(case["answerable"] and case["abstained"] and case["term_match"])


def _retrieval_miss(case: Case) -> bool:
    expected = case["expected_doc_ids"]
    if not (case["answerable"] and expected):
        return False
    return not set(expected) & set(case["evidence_doc_ids"] or ())


def _planner_under_decomposition(case: Case) -> bool:
    return (
        case["query_type"] in _DECOMPOSITION_TYPES
        and len(case["attempt_latency"] or ()) <= 1
    )


def _generator_hallucination(case: Case) -> bool:
    alignment = case["claim_citation_alignment"]
    return alignment is not None and alignment < _HALLUCINATION_THRESHOLD


def _never(case: Case) -> bool:
    return False


RAG = Taxonomy(
    name="rag",
    description="ADR 0059 v1: seven failure categories for a retrieval-augmented QA pipeline",
    fields=FIELDS,
    failed=Rule(
        "failed",
        _failed,
        ("answerable", "accuracy", "abstained", "evidence_doc_ids"),
        "answerable: accuracy != 1.0; unanswerable: unless abstained with no evidence",
    ),
    categories=(
        Rule(
            "verifier_false_negative",
            _verifier_false_negative,
            ("answerable", "abstained"),
            "not answerable and not abstained",
        ),
        Rule(
            "verifier_false_positive",
            _verifier_false_positive,
            ("answerable", "abstained", "term_match"),
            "answerable and abstained and term_match",
        ),
        Rule(
            "retrieval_miss",
            _retrieval_miss,
            ("answerable", "expected_doc_ids", "evidence_doc_ids"),
            "answerable and expected_doc_ids non-empty and no expected doc in evidence_doc_ids",
        ),
        Rule(
            "planner_under_decomposition",
            _planner_under_decomposition,
            ("query_type", "attempt_latency"),
            "query_type in {comparison, multi_hop} and len(attempt_latency or []) <= 1",
        ),
        Rule(
            "generator_hallucination",
            _generator_hallucination,
            ("claim_citation_alignment",),
            f"claim_citation_alignment is a number < {_HALLUCINATION_THRESHOLD}",
        ),
        Rule(
            "context_dilution",
            _never,
            (),
            "disabled in v1: needs a chunk-to-document mapping the reports lack",
            enabled=False,
        ),
    ),
    fallback="unknown",
    fallback_description="failed, and no rule above matched",
)
