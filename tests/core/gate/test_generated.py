"""Generated reports up to 100k cases: exactly the categories over their ceiling fail."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET

import pytest
from helpers import CATEGORY_CASES, RAG, cases_for, write_ceilings, write_jsonl, write_summary


def _plan(n_cases: int, seed: int) -> tuple[dict[str, int], dict[str, int]]:
    """Random counts that fill ``n_cases``, and ceilings below, at or above each count."""
    rng = random.Random(seed)
    categories = sorted(CATEGORY_CASES)
    failed = rng.randint(n_cases // 4, n_cases // 2)
    cuts = sorted(rng.randint(0, failed) for _ in range(len(categories) - 1))
    counts = {c: b - a for c, a, b in zip(categories, [0, *cuts], [*cuts, failed], strict=True)}
    ceilings = {c: max(0, n + rng.choice([-2, -1, 0, 0, 1, 5])) for c, n in counts.items()}
    return counts, ceilings


def _failed_items(pytester: pytest.Pytester) -> set[str]:
    tree = ET.parse(pytester.path / "out.xml")
    return {tc.get("name", "") for tc in tree.iter("testcase") if tc.find("failure") is not None}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("n_cases", "shape", "workers"),
    [
        (1_000, "summary", None),
        (1_000, "jsonl", None),
        pytest.param(20_000, "jsonl", "2", marks=pytest.mark.slow),  # a load and xdist run
        pytest.param(100_000, "summary", None, marks=pytest.mark.slow),
        pytest.param(100_000, "jsonl", "2", marks=pytest.mark.slow),
    ],
)
def test_exactly_the_categories_over_their_ceiling_fail(
    pytester: pytest.Pytester, n_cases: int, shape: str, workers: str | None
) -> None:
    counts, ceilings = _plan(n_cases, seed=n_cases)
    records = cases_for(counts, passed=n_cases - sum(counts.values()), seed=n_cases)
    if shape == "summary":
        write_summary(pytester.path / "reports" / "run.json", records, indent=None)
    else:
        write_jsonl(pytester.path / "reports" / "run.jsonl", records)
    write_ceilings(pytester.path / "ceilings.yaml", ceilings)
    args = ["--failgate=reports", "--junitxml=out.xml", "-p", "no:cacheprovider"]
    result = pytester.runpytest(*args, *(["-n", workers] if workers else []))
    expected = {c for c in RAG.category_names if counts.get(c, 0) > ceilings.get(c, 0)}
    assert _failed_items(pytester) == expected
    result.assert_outcomes(failed=len(expected), passed=len(RAG.category_names) - len(expected))
