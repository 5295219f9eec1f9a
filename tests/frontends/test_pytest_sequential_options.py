"""``pytest --failgate-sequential`` with the futility stop (``--failgate-futility``,
``--failgate-margin``), strata (``--failgate-strata``) and paired mode against a baseline
run (``--failgate-baseline``)."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import pytest
from helpers import CATEGORY_CASES, case

if TYPE_CHECKING:
    from collections.abc import Mapping

CATEGORIES = ("verifier_false_negative", "verifier_false_positive", "retrieval_miss",
              "planner_under_decomposition", "generator_hallucination", "context_dilution",
              "unknown")
SETTLED = re.compile(r"verdict (pass|fail|inconclusive): .*settled after (\d+) of (\d+) planned "
                     r"cases(?: \(\d+ started and paid for\))?: (.*)$")


def _ceilings(pytester: pytest.Pytester, ceiling: int) -> None:
    pytester.makefile(".yaml", ceilings="version: 1\ntaxonomy: rag\nceilings:\n" + "".join(
        f"  {name}: {ceiling}\n" for name in CATEGORIES))


def _tests(failing: Mapping[str, int], passing: int, prefix: str = "") -> str:
    tests = [f"def test_{prefix}ok_{i}():\n    pass\n" for i in range(passing)]
    for category, count in failing.items():
        tests += [f"@pytest.mark.failgate_category({category!r})\n"
                  f"def test_{prefix}{category}_{i}():\n    assert False\n"
                  for i in range(count)]
    return "import pytest\n\n" + "\n".join(tests)


def _settled(result: pytest.RunResult) -> tuple[str, int, int, str]:
    lines = [line for line in result.outlines if line.startswith("verdict ")]
    assert lines, result.stdout.str()
    found = SETTLED.match(lines[-1])
    assert found is not None, lines[-1]
    return found.group(1), int(found.group(2)), int(found.group(3)), found.group(4)


def _order(result: pytest.RunResult) -> list[str]:
    return [line.split()[0] for line in result.outlines
            if "::test_" in line and (" PASSED" in line or " FAILED" in line)]


def test_the_futility_stop_passes_a_clean_suite_sooner_and_says_so(
        pytester: pytest.Pytester) -> None:
    _ceilings(pytester, 12)
    pytester.makepyfile(test_evals=_tests({"retrieval_miss": 2}, passing=198))
    plain = pytester.runpytest("--failgate-sequential=3")
    futile = pytester.runpytest("--failgate-sequential=3", "--failgate-futility=0.05",
                                "--failgate-margin=10", "--failgate-json=gate.json")
    verdict, n, planned, said = _settled(futile)
    assert (verdict, planned) == ("pass", 200)
    assert n < _settled(plain)[1]
    assert said.startswith("a pass by futility: a regression of 10 cases past a ceiling")
    record = json.loads((pytester.path / "gate.json").read_text())["sequential"]
    assert (record["n"], record["beta"], record["margin"]) == (n, 0.05, 10)
    assert futile.ret == pytest.ExitCode.OK


def test_the_futility_stop_from_the_ini_file_and_a_bad_beta_is_a_usage_error(
        pytester: pytest.Pytester) -> None:
    _ceilings(pytester, 12)
    pytester.makepyfile(test_evals=_tests({}, passing=200))
    pytester.makeini("[pytest]\nfailgate_futility = 0.05\nfailgate_margin = 20\n")
    result = pytester.runpytest("--failgate-sequential=3")
    assert _settled(result)[3].startswith("a pass by futility: a regression of 20 cases")
    result = pytester.runpytest("--failgate-sequential=3", "--failgate-futility=lots")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*failgate: --failgate-futility must be a number between 0 "
                                 "and 1, not lots"])


def test_strata_by_module_interleave_the_files_in_proportion(
        pytester: pytest.Pytester) -> None:
    """Two files, a third of the tests in the second: every third test run is one of its,
    each file in a random order of its own, and the verdict is the full run's."""
    _ceilings(pytester, 3)
    pytester.makepyfile(test_legal=_tests({"retrieval_miss": 3}, passing=17, prefix="legal_"),
                        test_medical=_tests({}, passing=40, prefix="medical_"))
    result = pytester.runpytest("--failgate-sequential=2", "--failgate-strata=module", "-v",
                                "--failgate-json=gate.json")
    order = _order(result)
    assert len(order) == 60  # at its ceilings: a pass settles at the last test
    assert [i for i, nodeid in enumerate(order) if nodeid.startswith("test_legal")] == list(
        range(1, 60, 3))
    legal = [nodeid for nodeid in order if nodeid.startswith("test_legal")]
    collected = ([f"test_legal.py::test_legal_ok_{i}" for i in range(17)]
                 + [f"test_legal.py::test_legal_retrieval_miss_{i}" for i in range(3)])
    assert sorted(legal) == sorted(collected)
    assert legal != collected  # permuted within the file
    assert _settled(result)[:3] == ("pass", 60, 60)
    result.stdout.fnmatch_lines(["failgate: sequential, the tests in a random order within "
                                 "each stratum of module drawn from seed 2 *"])
    again = pytester.runpytest("--failgate-sequential=2", "--failgate-strata=module", "-v")
    assert _order(again) == order


def test_strata_by_a_marker_and_a_test_without_it_is_a_usage_error(
        pytester: pytest.Pytester) -> None:
    _ceilings(pytester, 3)
    tests = [f"@pytest.mark.domain({'legal' if i % 4 == 0 else 'medical'!r})\n"
             f"def test_{i}():\n    pass\n" for i in range(40)]
    pytester.makeini("[pytest]\nmarkers =\n    domain(name): the case's domain\n")
    pytester.makepyfile(test_evals="import pytest\n\n" + "\n".join(tests))
    result = pytester.runpytest("--failgate-sequential=4", "--failgate-strata=domain", "-v")
    order = _order(result)
    assert len(order) > 20
    assert [i for i, nodeid in enumerate(order)
            if int(nodeid.rsplit("_", 1)[1]) % 4 == 0] == list(range(1, len(order), 4))
    pytester.makepyfile(test_more="def test_plain():\n    pass\n")
    result = pytester.runpytest("--failgate-sequential=4", "--failgate-strata=domain")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*failgate: test_more.py::test_plain: --failgate-strata=domain "
                                 "needs each test's stratum: a @pytest.mark.domain(NAME) marker*"])


def test_against_a_baseline_a_suite_whose_new_failures_outnumber_its_fixed_fails_early(
        pytester: pytest.Pytester) -> None:
    """Paired mode: the ceilings allow 60 retrieval misses; the baseline run (a JSON Lines
    report of its cases by test id) had none, this one has 45 of 300: the comparison fails
    it early, where its ceilings alone would pass it."""
    _ceilings(pytester, 60)
    pytester.makepyfile(test_evals=_tests({"retrieval_miss": 45}, passing=255))
    ids = ([f"test_evals.py::test_ok_{i}" for i in range(255)]
           + [f"test_evals.py::test_retrieval_miss_{i}" for i in range(45)])
    (pytester.path / "baseline.jsonl").write_text("".join(
        json.dumps(case(nodeid)) + "\n" for nodeid in ids))
    result = pytester.runpytest("--failgate-sequential=8", "--failgate-baseline=baseline.jsonl",
                                "--failgate-json=gate.json")
    verdict, n, planned, _ = _settled(result)
    assert (verdict, planned) == ("fail", 300)
    assert n < 200
    rows = {row["name"]: row for row in
            json.loads((pytester.path / "gate.json").read_text())["reports"][0]["rows"]}
    assert rows["retrieval_miss vs baseline"]["verdict"] == "fail"
    # its own count (45 of the 300 at most) was never over its ceiling of 60
    assert rows["retrieval_miss"]["verdict"] != "fail"
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_against_a_baseline_with_the_same_failures_a_suite_passes_at_its_last_test(
        pytester: pytest.Pytester) -> None:
    _ceilings(pytester, 60)
    pytester.makepyfile(test_evals=_tests({"retrieval_miss": 5}, passing=55))
    lines = [case(f"test_evals.py::test_ok_{i}") for i in range(55)]
    lines += [case(f"test_evals.py::test_retrieval_miss_{i}", **CATEGORY_CASES["retrieval_miss"])
              for i in range(5)]
    (pytester.path / "baseline.jsonl").write_text("".join(json.dumps(c) + "\n" for c in lines))
    result = pytester.runpytest("--failgate-sequential=8", "--failgate-baseline=baseline.jsonl")
    assert _settled(result)[:3] == ("pass", 60, 60)
    assert result.ret == pytest.ExitCode.OK


def test_a_baseline_keyed_by_other_ids_is_a_usage_error_before_any_test_runs(
        pytester: pytest.Pytester) -> None:
    """Ids that are not the tests' node ids (here, without the file) pair no test: an error,
    not a comparison of none."""
    _ceilings(pytester, 60)
    pytester.makepyfile(test_evals=_tests({"retrieval_miss": 5}, passing=55))
    (pytester.path / "baseline.jsonl").write_text("".join(
        json.dumps(case(f"test_ok_{i}")) + "\n" for i in range(60)))
    result = pytester.runpytest("--failgate-sequential=8", "--failgate-baseline=baseline.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*failgate: baseline.jsonl: 60 of the 60 planned cases are not "
                                 "in the baseline; a comparison needs the same cases*"])
    result.assert_outcomes()


def test_futility_or_strata_without_a_sequential_run_is_a_usage_error(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_evals="def test_ok():\n    pass\n")
    result = pytester.runpytest("--failgate-strata=module")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--failgate-strata orders or stops a sequential run: give "
                                 "--failgate-sequential=SEED too"])
    pytester.makeini("[pytest]\nfailgate_futility = 0.05\nfailgate_strata = module\n")
    pytester.runpytest().assert_outcomes(passed=1)  # set for the sequential runs only
