"""The built-in rag taxonomy and first-match counting, without pytest plumbing."""

from __future__ import annotations

import json
import random

import pytest
from helpers import CATEGORY_CASES, EXAMPLES, RAG, case, category_case, random_rag_case
from rag_reference import reference_classify

from pytest_failgate.core.taxonomy import Field, Rule, Tallier, Taxonomy, classify


@pytest.mark.parametrize("category", sorted(CATEGORY_CASES))
def test_each_rule_catches_its_own_case(category: str) -> None:
    assert classify(RAG, category_case(category, "x")) == category


def test_a_passing_case_has_no_category() -> None:
    assert classify(RAG, case("x")) is None


def test_unanswerable_case_that_abstained_without_evidence_passes() -> None:
    assert classify(RAG, case(answerable=False, abstained=True, evidence_doc_ids=[])) is None


def test_unanswerable_case_that_abstained_but_cited_evidence_fails_as_unknown() -> None:
    assert classify(RAG, case(answerable=False, abstained=True, accuracy=None)) == "unknown"


def test_first_match_wins_over_later_rules() -> None:
    # Also a retrieval miss and a hallucination, but the verifier rule comes first.
    record = case(answerable=False, abstained=False, evidence_doc_ids=["doc-z"],
                  claim_citation_alignment=0.1)
    assert classify(RAG, record) == "verifier_false_negative"


def test_missing_answerable_means_answerable() -> None:
    record = case(accuracy=0.0, evidence_doc_ids=[])
    del record["answerable"]
    assert classify(RAG, record) == "retrieval_miss"


def test_missing_attempt_latency_reads_as_one_attempt_or_fewer() -> None:
    record = case(accuracy=0.0, query_type="multi_hop")
    assert "attempt_latency" not in record
    assert classify(RAG, record) == "planner_under_decomposition"


def test_context_dilution_is_disabled_but_still_a_category() -> None:
    assert "context_dilution" in RAG.category_names
    rule = next(r for r in RAG.categories if r.name == "context_dilution")
    assert not rule.enabled


def test_integer_accuracy_one_counts_as_correct() -> None:
    assert classify(RAG, case(accuracy=1)) is None


@pytest.mark.slow
def test_rag_matches_the_reference_classifier_on_random_cases() -> None:
    rng = random.Random(59)
    for _ in range(20_000):
        record = random_rag_case(rng)
        assert classify(RAG, record) == reference_classify(record), record


def test_bidmate_eval_summary_counts_match_the_reference() -> None:
    document = json.loads((EXAMPLES / "reports" / "eval_summary.json").read_text("utf-8"))
    tallier = Tallier(RAG)
    expected = dict.fromkeys(RAG.category_names, 0)
    for record in document["case_results"]:
        tallier.add(record["id"], record)
        label = reference_classify(record)
        if label is not None:
            expected[label] += 1
    tally = tallier.result()
    assert tally.counts == expected
    assert tally.counts["verifier_false_negative"] == 6
    assert tally.counts["retrieval_miss"] == 1
    assert tally.failed == 7
    assert tally.ids["retrieval_miss"] == ["follow_up_state_a_security"]


def test_tally_lists_every_category_with_zeros() -> None:
    tallier = Tallier(RAG)
    tallier.add("a", case())
    assert tallier.result().counts == dict.fromkeys(RAG.category_names, 0)


def test_missing_fields_are_counted_only_for_cases_a_rule_examined() -> None:
    tallier = Tallier(RAG)
    # Reaches planner_under_decomposition without attempt_latency: counted.
    tallier.add("a", case(accuracy=0.0, query_type="comparison"))
    # Decided by verifier_false_negative first: planner never examines it.
    tallier.add("b", case(answerable=False, abstained=False))
    # Passed: only the failed predicate examined it.
    tallier.add("c", case())
    tally = tallier.result()
    found = {(m.rule, m.field): (m.missing, m.examined) for m in tally.missing_fields()}
    assert found[("planner_under_decomposition", "attempt_latency")] == (1, 1)
    # Case "a" was decided by the planner rule, so the hallucination rule never saw it.
    assert ("generator_hallucination", "claim_citation_alignment") not in found
    assert tally.examined["failed"] == 3
    assert tally.examined["verifier_false_negative"] == 2
    assert tally.examined["planner_under_decomposition"] == 1


def test_field_problem_names_the_expected_kind() -> None:
    answerable = RAG.field_index["answerable"]
    assert answerable.problem(True) is None
    assert answerable.problem("yes") == 'is "yes" (a string); expected true or false'
    docs = RAG.field_index["evidence_doc_ids"]
    assert docs.problem(["a", 1]) is None
    assert docs.problem(["a", {"id": 1}]) is not None


def _never(case: object) -> bool:
    return False


def test_a_field_a_rule_reads_without_a_declaration_accepts_any_value() -> None:
    taxonomy = Taxonomy("t", "", (), Rule("failed", _never, (), ""),
                        (Rule("a", _never, ("x",), ""),), "other")
    assert taxonomy.field_index["x"].problem({"any": "thing"}) is None


def test_taxonomy_rejects_reserved_and_duplicate_names() -> None:
    failed = Rule("failed", _never, (), "")
    with pytest.raises(ValueError, match="reserved"):
        Taxonomy("t", "", (), failed, (Rule("total", _never, (), ""),), "other")
    with pytest.raises(ValueError, match="used twice"):
        Taxonomy("t", "", (), failed, (Rule("a", _never, (), ""),), "a")
    with pytest.raises(ValueError, match="declared twice"):
        Taxonomy("t", "", (Field("x", frozenset({"bool"})),) * 2, failed, (), "other")
