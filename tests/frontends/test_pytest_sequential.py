"""``pytest --failgate-sequential=SEED``: an eval suite whose tests are its cases, run in a
seeded random order and stopped once the verdict is settled."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import pytest
from helpers import CONFIDENCE

from pytest_failgate.core.base.defaults import DEFAULT_DELTA

if TYPE_CHECKING:
    from collections.abc import Mapping

CATEGORIES = ("verifier_false_negative", "verifier_false_positive", "retrieval_miss",
              "planner_under_decomposition", "generator_hallucination", "context_dilution",
              "unknown")
SETTLED = re.compile(r"verdict (pass|fail|inconclusive): .*settled after (\d+) of (\d+) planned "
                     r"cases(?: \(\d+ started and paid for\))?: the verdict is the full run's"
                     rf"( with probability at least {re.escape(CONFIDENCE)})?$")


def _suite(pytester: pytest.Pytester, failing: Mapping[str, int], planned: int,
           ceiling: int = 10) -> None:
    """``planned`` tests, ``failing[category]`` of them failing with that marker's
    category (each category allowed ``ceiling`` of the planned cases)."""
    pytester.makefile(".yaml", ceilings="version: 1\ntaxonomy: rag\nceilings:\n" + "".join(
        f"  {name}: {ceiling}\n" for name in CATEGORIES))
    failed = sum(failing.values())
    tests = [f"def test_ok_{i}():\n    pass\n" for i in range(planned - failed)]
    for category, count in failing.items():
        tests += [f"@pytest.mark.failgate_category({category!r})\ndef test_{category}_{i}():\n"
                  f"    assert False, 'the answer was wrong'\n" for i in range(count)]
    pytester.makepyfile(test_evals="import pytest\n\n" + "\n".join(tests))


def _settled(result: pytest.RunResult) -> tuple[str, int, int]:
    lines = [line for line in result.outlines if line.startswith("verdict ")]
    assert lines, result.stdout.str()
    found = SETTLED.match(lines[-1])
    assert found is not None, lines[-1]
    return found.group(1), int(found.group(2)), int(found.group(3))


def _ran(result: pytest.RunResult) -> int:
    outcomes = result.parseoutcomes()
    return outcomes.get("passed", 0) + outcomes.get("failed", 0)


def test_a_broken_suite_stops_early_as_a_fail(pytester: pytest.Pytester) -> None:
    _suite(pytester, {"retrieval_miss": 60}, planned=200)
    result = pytester.runpytest("--failgate-sequential=1")
    verdict, n, planned = _settled(result)
    assert (verdict, planned) == ("fail", 200)
    assert n < 60  # far fewer tests than the suite: it stopped
    assert _ran(result) == n
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*Interrupted: failgate: verdict fail: settled after*"])


@pytest.mark.slow
def test_an_unchanged_suite_runs_further_and_passes_with_failing_tests_allowed(
        pytester: pytest.Pytester) -> None:
    _suite(pytester, {"retrieval_miss": 4, "unknown": 2}, planned=200)
    result = pytester.runpytest("--failgate-sequential=1")
    verdict, n, planned = _settled(result)
    assert (verdict, planned) == ("pass", 200)
    assert n > 60  # a pass needs many more cases than a broken run's fail
    assert _ran(result) == n
    # failing tests the ceilings allow do not fail the run: the gate's verdict is its exit
    assert result.ret == pytest.ExitCode.OK


@pytest.mark.slow  # three runs
def test_the_seed_fixes_the_order_and_the_header_says_it(pytester: pytest.Pytester) -> None:
    _suite(pytester, {"retrieval_miss": 60}, planned=200)
    first = pytester.runpytest("--failgate-sequential=5", "-v")
    again = pytester.runpytest("--failgate-sequential=5", "-v")
    other = pytester.runpytest("--failgate-sequential=6", "-v")

    def order(result: pytest.RunResult) -> list[str]:
        return [line.split()[0] for line in result.outlines if "::test_" in line
                and (" PASSED" in line or " FAILED" in line)]
    assert order(first) == order(again) != order(other)
    first.stdout.fnmatch_lines(["failgate: sequential, * seed 5 (--failgate-sequential=5 *"])


@pytest.mark.slow
@pytest.mark.parametrize("over", [False, True], ids=["at-ceiling", "one-over"])
@pytest.mark.parametrize("seed", [0, *(pytest.param(s, marks=pytest.mark.slow)
                                       for s in (1, 2, 3))])
def test_the_verdict_is_the_full_runs_on_the_settled_side(pytester: pytest.Pytester,
                                                         over: bool, seed: int) -> None:
    """A population at its ceiling (the full run passes) or one over (it fails), in
    seeded orders: each settles on the full run's verdict (the orders are fixed, so this
    is deterministic; the guarantee is 95% an order)."""
    _suite(pytester, {"retrieval_miss": 3 + over}, planned=40, ceiling=3)
    result = pytester.runpytest(f"--failgate-sequential={seed}")
    verdict, n, planned = _settled(result)
    assert (verdict, planned) == ("fail" if over else "pass", 40)
    assert _ran(result) == n
    assert result.ret == (pytest.ExitCode.TESTS_FAILED if over else pytest.ExitCode.OK)


@pytest.mark.slow
def test_a_failed_test_without_a_marker_is_classified_by_the_taxonomy_over_its_properties(
        pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", ceilings="version: 1\ntaxonomy: rag\nceilings:\n"
                      "  verifier_false_negative: 1\n  retrieval_miss: 1\n")
    pytester.makepyfile(test_evals="""
        def test_abstains_wrongly(record_property):
            record_property("answerable", False)
            record_property("abstained", False)
            record_property("accuracy", None)
            assert False

        def test_named(record_property):
            record_property("failgate_category", "retrieval_miss")
            assert False
    """)
    result = pytester.runpytest("--failgate-sequential=0", "--failgate-json=gate.json")
    document = json.loads((pytester.path / "gate.json").read_text(encoding="utf-8"))
    rows = {row["name"]: row for row in document["reports"][0]["rows"]}
    assert rows["verifier_false_negative"]["count"] == 1
    assert rows["retrieval_miss"]["count"] == 1
    assert rows["unknown"]["count"] == 0  # not the fallback: the rules placed it
    assert document["sequential"] == {"n": 2, "planned": 2, "delta": float(DEFAULT_DELTA),
                                      "confidence": CONFIDENCE, "settled": True, "beta": None,
                                      "margin": None, "paid": 2}
    assert document["verdict"] == "pass"  # each category within its ceiling of 1
    assert result.ret == pytest.ExitCode.OK


def test_a_marker_naming_no_category_of_the_taxonomy_is_a_usage_error(
        pytester: pytest.Pytester) -> None:
    _suite(pytester, {}, planned=3)
    pytester.makepyfile(test_more="""
        import pytest

        @pytest.mark.failgate_category("retreival_miss")
        def test_typo():
            assert False
    """)
    result = pytester.runpytest("--failgate-sequential=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*failgate_category('retreival_miss') is not a category of "
                                 "the taxonomy rag*"])


def test_a_seed_that_is_not_a_number_is_a_usage_error(pytester: pytest.Pytester) -> None:
    _suite(pytester, {}, planned=3)
    result = pytester.runpytest("--failgate-sequential=seven")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--failgate-sequential takes a seed (an integer, or `new`)*"])
