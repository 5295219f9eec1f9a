"""A new project's first hour: its own report and taxonomy file, started from the CLI or
pytest; no ratchet from a failing run; a rule on a field no case has is an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import run_cli

TAXONOMY = """\
name: support
failed: "score < 0.5"
types:
  {field}: list[string]
categories:
  - name: no_docs
    when: empty({field})
  - name: other
"""


def _project(root: Path, field: str = "retrieved", no_docs: int = 2, other: int = 13) -> Path:
    """A project of its own: reports/run.jsonl (cases with `retrieved`) and taxonomy.yaml."""
    (root / "reports").mkdir(exist_ok=True)
    cases = [{"id": f"d{i}", "score": 0.1, "retrieved": []} for i in range(no_docs)]
    cases += [{"id": f"o{i}", "score": 0.2, "retrieved": ["faq.md"]} for i in range(other)]
    cases += [{"id": f"p{i}", "score": 0.9, "retrieved": ["faq.md"]} for i in range(5)]
    (root / "reports" / "run.jsonl").write_text(
        "".join(json.dumps(case) + "\n" for case in cases), encoding="utf-8")
    (root / "taxonomy.yaml").write_text(TAXONOMY.format(field=field), encoding="utf-8")
    return root


def test_init_from_the_cli_with_an_own_taxonomy_file_writes_it_into_the_ceilings_file(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(pytester.path)
    code, out, _ = run_cli(capsys, "init", "reports", "--taxonomy", "taxonomy.yaml")
    assert code == 0, out
    written = (pytester.path / "ceilings.yaml").read_text()
    assert "\ntaxonomy: taxonomy.yaml\n" in written
    assert "  no_docs: 2\n  other: 13\n" in written
    # the header names the reports as given, not a placeholder
    assert "`pytest --failgate=reports`" in written
    assert "`failgate ratchet reports`" in written
    assert run_cli(capsys, "check", "reports")[0] == 0
    assert run_cli(capsys, "check", "reports", "--taxonomy", "taxonomy.yaml")[0] == 0


def test_init_from_pytest_with_failgate_taxonomy_writes_it_into_the_ceilings_file(
    pytester: pytest.Pytester,
) -> None:
    _project(pytester.path)
    result = pytester.runpytest("--failgate=reports", "--failgate-init",
                                "--failgate-taxonomy=taxonomy.yaml")
    assert result.ret == 0, result.stdout.str()
    assert "\ntaxonomy: taxonomy.yaml\n" in (pytester.path / "ceilings.yaml").read_text()
    pytester.runpytest("--failgate=reports").assert_outcomes(passed=3)


def test_the_ini_key_failgate_taxonomy_is_relative_to_the_ini_file(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _project(pytester.path)
    pytester.makeini("[pytest]\nfailgate = reports\nfailgate_taxonomy = taxonomy.yaml\n")
    (pytester.path / "tests").mkdir()
    monkeypatch.chdir(pytester.path / "tests")  # a subfolder: the ini key still finds it
    code, out, _ = run_cli(capsys, "init")
    assert code == 0, out
    assert "\ntaxonomy: taxonomy.yaml\n" in (pytester.path / "ceilings.yaml").read_text()
    assert run_cli(capsys, "check")[0] == 0
    assert pytester.runpytest().ret == 0


def test_without_a_fitting_taxonomy_the_hint_names_the_option_of_the_front_end_in_use(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(pytester.path)
    code, out, _ = run_cli(capsys, "init", "reports")
    assert code == 2
    assert ("give a taxonomy for its fields with "
            "`failgate init reports --taxonomy path/to/taxonomy.yaml`") in out
    result = pytester.runpytest("--failgate=reports", "--failgate-init")
    result.stdout.fnmatch_lines([
        "*give a taxonomy for its fields with `pytest --failgate=reports "
        "--failgate-taxonomy=path/to/taxonomy.yaml --failgate-init`*"])
    assert not (pytester.path / "ceilings.yaml").exists()


def test_once_the_ceilings_file_exists_a_different_taxonomy_setting_is_an_error(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(pytester.path)
    assert run_cli(capsys, "init", "reports", "--taxonomy", "taxonomy.yaml")[0] == 0
    code, _, err = run_cli(capsys, "check", "reports", "--taxonomy", "rag")
    assert code == 2
    assert "names taxonomy rag, but this file's taxonomy: is support" in err


def _regress(root: Path) -> None:
    """One case moves from `other` into `no_docs`: no_docs 2 -> 3 (over), other 13 -> 12."""
    path = root / "reports" / "run.jsonl"
    path.write_text(path.read_text().replace(
        '{"id": "o0", "score": 0.2, "retrieved": ["faq.md"]}',
        '{"id": "o0", "score": 0.2, "retrieved": []}'), encoding="utf-8")


def test_a_failing_run_advises_no_ratchet_and_the_ratchet_writes_nothing(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(pytester.path)
    assert run_cli(capsys, "init", "reports", "--taxonomy", "taxonomy.yaml")[0] == 0
    before = (pytester.path / "ceilings.yaml").read_text()
    _regress(pytester.path)
    code, out, _ = run_cli(capsys, "check", "reports", "--md", "gate.md")
    assert code == 1
    assert "no_docs" in out
    assert "ratchet" not in out
    assert "ratchet" not in (pytester.path / "gate.md").read_text()
    code, out, _ = run_cli(capsys, "ratchet", "reports")
    assert code == 1
    assert "13 -> 12" not in out
    assert ("ratchet: ceilings.yaml not written: the run fails (run::no_docs above its "
            "ceiling)") in out
    assert (pytester.path / "ceilings.yaml").read_text() == before
    result = pytester.runpytest("--failgate=reports", "--failgate-ratchet")
    result.stdout.fnmatch_lines(["*ratchet: ceilings.yaml not written: the run fails*"])
    assert (pytester.path / "ceilings.yaml").read_text() == before


def test_an_inconclusive_or_broken_run_offers_no_lowering(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(pytester.path, no_docs=3)
    assert run_cli(capsys, "init", "reports", "--taxonomy", "taxonomy.yaml")[0] == 0
    _project(pytester.path, no_docs=1)  # a gain ...
    (pytester.path / "reports" / "broken.jsonl").write_text("{not json\n")  # ... beside a break
    code, out, _ = run_cli(capsys, "check", "reports", "--json", "gate.json")
    assert code == 2
    assert json.loads((pytester.path / "gate.json").read_text())["lowerings"] == []
    assert "can be lowered" not in out


@pytest.mark.parametrize("front", ["init", "check"])
def test_a_rule_on_a_field_no_case_has_is_an_error_naming_the_nearest_field(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], front: str
) -> None:
    _project(pytester.path)
    if front == "check":
        assert run_cli(capsys, "init", "reports", "--taxonomy", "taxonomy.yaml")[0] == 0
    (pytester.path / "taxonomy.yaml").write_text(TAXONOMY.format(field="retrieved_docs"))
    code, out, _ = run_cli(capsys, front, "reports", "--taxonomy", "taxonomy.yaml")
    assert code == 2
    assert ("rule no_docs of taxonomy support reads 'retrieved_docs', declared in types: as "
            "a list, which none of the 20 cases has, so it would match every case or none; "
            "did you mean 'retrieved'?") in out
    if front == "init":
        assert not (pytester.path / "ceilings.yaml").exists()


def test_a_field_declared_optional_may_be_absent_from_every_case(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(pytester.path)
    (pytester.path / "taxonomy.yaml").write_text(
        TAXONOMY.format(field="retrieved").replace(
            "  retrieved: list[string]\n", "  retrieved: list[string]\n  notes: string | null\n"
        ).replace("  - name: other", "  - {name: noted, when: notes}\n  - name: other"))
    code, out, _ = run_cli(capsys, "init", "reports", "--taxonomy", "taxonomy.yaml")
    assert code == 0, out
