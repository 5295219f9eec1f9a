"""The docs' examples are real: their ceilings file and taxonomy load, their conftest works."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import BUILTIN, EXAMPLES

from pytest_failgate.core.ceilings.load import load_ceilings
from pytest_failgate.core.taxonomy.files import load_taxonomy_file

DOCS = EXAMPLES.parent / "docs"


def _block(page: str, section: str, language: str) -> str:
    """The first fenced block of `language` after the heading `section` of a docs page."""
    text = "\n" + (DOCS / page).read_text(encoding="utf-8")
    start = text.index(f"\n{section}\n")
    match = re.compile(rf"^```{language}\n(.*?)^```", re.S | re.M).search(text, start)
    assert match, f"no {language} block under {section} in docs/{page}"
    return match.group(1)


def test_the_ceilings_example_loads_with_its_names_checked(tmp_path: Path) -> None:
    path = tmp_path / "ceilings.yaml"
    path.write_text(_block("ceilings.md", "# `ceilings.yaml`", "yaml"), encoding="utf-8")
    ceilings = load_ceilings(path, BUILTIN)
    assert ceilings.taxonomy.name == "rag"
    assert {k: t.name for k, t in ceilings.overrides.items()} == {
        "karenina-json": "karenina", "exports/old_run": "karenina"}
    assert list(ceilings.contracts) == ["finding_1"]
    assert list(ceilings.metrics) == ["accuracy"]


def test_the_taxonomy_example_loads(tmp_path: Path) -> None:
    path = tmp_path / "taxonomy.yaml"
    path.write_text(_block("taxonomies.md", "## Writing a taxonomy", "yaml"), encoding="utf-8")
    taxonomy = load_taxonomy_file(path)
    assert [rule.name for rule in taxonomy.categories] == [
        "wrong_language", "no_docs", "stale_kb", "provider_down"]
    assert taxonomy.outside == ("provider_down",)
    assert taxonomy.fallback == "other"
    assert [rule.name for rule in taxonomy.caveats] == ["slow"]
    assert [metric.name for metric in taxonomy.metrics] == ["resolved"]


def _status_plugin_project(pytester: pytest.Pytester) -> None:
    """The plugin example of docs/taxonomies.md as the conftest, and a report its reader
    reads (one case of each status)."""
    pytester.makeconftest(
        _block("taxonomies.md", "## Plugins: taxonomies and readers in Python", "python"))
    (pytester.path / "reports").mkdir()
    (pytester.path / "reports" / "run.txt").write_text("a,ok\nb,timeout\nc,crash\n")


def test_the_conftest_example_contributes_a_taxonomy_and_a_reader(
    pytester: pytest.Pytester,
) -> None:
    _status_plugin_project(pytester)
    (pytester.path / "ceilings.yaml").write_text(
        "version: 1\ntaxonomy: status\nceilings:\n  timeout: 1\n  other: 0\n")
    result = pytester.runpytest("--failgate=reports", "ceilings.yaml")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["FAILED ceilings.yaml::run::other - other: 1 case*"])


@pytest.mark.slow
def test_the_conftest_example_starts_a_project_with_its_taxonomy_by_name(
    pytester: pytest.Pytester,
) -> None:
    """No ceilings file yet: the plugin's taxonomy, by name, starts one from pytest."""
    _status_plugin_project(pytester)
    result = pytester.runpytest("--failgate=reports", "--failgate-taxonomy=status",
                                "--failgate-init")
    assert result.ret == 0, result.stdout.str()
    written = (pytester.path / "ceilings.yaml").read_text()
    assert "\ntaxonomy: status\n" in written
    assert "  timeout: 1\n  other: 1\n" in written
    pytester.runpytest("--failgate=reports").assert_outcomes(passed=3)
