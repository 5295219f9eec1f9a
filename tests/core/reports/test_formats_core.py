"""The generalised reader core: formats by content, their taxonomies, plugins in the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import case, cases_for, write_summary
from helpers import run_cli as run

PLUGIN = '''
import json
import re
from pathlib import Path

from pytest_failgate.core.reports.readers import ReaderOutput
from pytest_failgate.core.taxonomy.files import load_taxonomy_file


class TicketReader:
    name = "tickets"
    suffixes = (".json",)
    taxonomy = "tickets"

    def claims(self, head):
        return b'"tickets"' in head

    def read(self, path):
        data = json.loads(path.read_text())
        return ReaderOutput(cases=data["tickets"], name=data["run"])


def pytest_failgate_readers(config):
    return [TicketReader()]


def pytest_failgate_taxonomies(config):
    return {"tickets": load_taxonomy_file(Path(__file__).with_name("tickets.yaml"))}
'''

TICKETS = """\
name: tickets
required: [status]
failed: status != "ok"
categories:
  - {name: timeout, when: status == "timeout"}
  - {name: other}
"""


def tickets(path: Path, statuses: list[str | None], run: str = "nightly") -> Path:
    """A ticket run; it also carries a ``case_results`` key failgate's own shape would read."""
    rows: list[dict[str, Any]] = [{"id": f"t{i}"} | ({} if s is None else {"status": s})
                                  for i, s in enumerate(statuses)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"run": run, "tickets": rows, "case_results": [case("x")]}),
                    encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose pyproject names its own reader module in ``failgate_plugins``."""
    (tmp_path / "failgate_tickets.py").write_text(PLUGIN, encoding="utf-8")
    (tmp_path / "tickets.yaml").write_text(TICKETS, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\nfailgate_plugins = ["failgate_tickets.py"]\n',
        encoding="utf-8")
    tickets(tmp_path / "reports" / "tickets_2026-01-21T03-44-18.json",
            ["ok", "timeout", "bad", "ok"])
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_init_writes_the_taxonomy_the_format_names_with_no_flag(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "init", "reports")
    assert code == 0, out
    text = (project / "ceilings.yaml").read_text()
    assert "taxonomy: tickets\n" in text
    assert "taxonomies:" not in text
    # the reader's name replaces the timestamped file name; its reader ran before the
    # built-in shapes (the file's case_results were not read)
    assert "nightly  4 cases, 2 failed" in out
    code, out, _ = run(capsys, "check", "reports")
    assert code == 0, out
    assert "nightly  4 cases, 2 failed" in out


def test_a_folder_mixing_formats_gets_a_taxonomy_per_format(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_summary(project / "reports" / "eval_summary.json",
                  cases_for({"retrieval_miss": 2}, passed=3))
    tickets(project / "reports" / "more.json", ["bad"], run="weekly")
    code, out, _ = run(capsys, "init", "reports")
    assert code == 0, out
    text = (project / "ceilings.yaml").read_text()
    assert "taxonomy: tickets\n" in text  # two of the three reports are tickets
    assert "taxonomies:\n  failgate: rag\n" in text
    code, out, _ = run(capsys, "check", "reports")
    assert code == 0, out
    assert "eval_summary  5 cases, 2 failed" in out
    assert "nightly  4 cases, 2 failed" in out
    assert "weekly  1 case, 1 failed" in out


def test_a_report_name_in_taxonomies_wins_over_its_format(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "ceilings.yaml").write_text(
        "version: 1\ntaxonomy: tickets\ntaxonomies:\n  nightly: rag\n", encoding="utf-8")
    code, out, _ = run(capsys, "check", "reports")
    assert code == 2
    assert "none of the 4 cases has any field taxonomy rag reads" in out
    assert "this is a tickets report" in out
    assert "taxonomies: {tickets: tickets}" in out


def test_an_unknown_key_in_taxonomies_names_the_file_and_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each built-in taxonomy's name misspelt (a letter doubled) is named back, from the
    registry rather than a name the test knows."""
    from pytest_failgate.core.taxonomy import builtin_taxonomies

    for name in builtin_taxonomies():
        typo = name + name[-1]
        (project / "ceilings.yaml").write_text(
            f"version: 1\ntaxonomy: tickets\ntaxonomies:\n  nightly: {typo}\n",
            encoding="utf-8")
        code, _, err = run(capsys, "check", "reports")
        assert code == 2
        assert "ceilings.yaml:4" in err
        assert f"unknown taxonomy '{typo}'; did you mean '{name}'?" in err, err


def test_the_default_rag_on_another_tools_file_is_an_error_naming_the_format(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "ceilings.yaml").write_text("version: 1\ntaxonomy: rag\n", encoding="utf-8")
    code, out, _ = run(capsys, "check", "reports")
    assert code == 2
    assert "none of the 4 cases has any field taxonomy rag reads (accuracy" in out
    assert "this is a tickets report: use its taxonomy" in out


def test_a_case_without_a_required_field_is_an_error_not_a_failure(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tickets(project / "reports" / "tickets_2026-01-21T03-44-18.json", ["ok", None, "bad"])
    code, out, _ = run(capsys, "init", "reports")
    assert code == 2
    assert "case #2: no 'status', which taxonomy tickets requires" in out


@pytest.mark.parametrize("given", ["tickets.yaml", "tickets"])
def test_init_taxonomy_takes_a_file_or_a_plugins_name(
    project: Path, capsys: pytest.CaptureFixture[str], given: str
) -> None:
    code, out, _ = run(capsys, "init", "reports", "--taxonomy", given)
    assert code == 0, out
    assert f"taxonomy: {given}\n" in (project / "ceilings.yaml").read_text()
    assert run(capsys, "check", "reports")[0] == 0


def test_init_with_an_unknown_taxonomy_is_one_message(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "init", "reports", "--taxonomy", "tickts")
    assert code == 2
    assert err.startswith("failgate: error: unknown taxonomy 'tickts'; did you mean 'tickets'?")
    assert "Traceback" not in out + err
    code, _, err = run(capsys, "init", "reports", "--taxonomy", "missing/tax.yaml")
    assert code == 2
    assert err.startswith("failgate: error: taxonomy file 'missing/tax.yaml' not found (a path "
                          "given on the command line is relative to the working directory")


def test_an_unknown_taxonomy_lists_the_known_names_once(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "init", "reports", "--taxonomy", "zzz")
    assert code == 2
    assert err.count("karenina") == 1, err
    assert "tickets" in err
    assert "or a path to a taxonomy file" in err


def test_cli_and_pytest_load_the_same_plugins_and_give_the_same_numbers(
    project: Path, pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("failgate_tickets.py", "tickets.yaml", "pyproject.toml"):
        (pytester.path / name).write_text((project / name).read_text(), encoding="utf-8")
    reports = str(project / "reports")
    write_summary(project / "reports" / "eval_summary.json",
                  cases_for({"retrieval_miss": 2}, passed=3))
    code, out, err = run(capsys, "init", reports)  # pytester made its folder the cwd
    assert code == 0, out + err
    assert run(capsys, "check", reports, "--json", "cli.json")[0] == 0
    result = pytester.runpytest(f"--failgate={reports}", "--failgate-json=py.json")
    result.assert_outcomes(passed=11)  # tickets: 2 categories + total; rag: 7 + total
    cli = json.loads((pytester.path / "cli.json").read_text())
    plugin = json.loads((pytester.path / "py.json").read_text())

    def numbers(result: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [(r["name"], r["taxonomy"], r["format"], r["n_cases"], r["failed"],
                 [(row["name"], row["count"]) for row in r["rows"]]) for r in result["reports"]]

    assert numbers(cli) == numbers(plugin)
    assert [r["taxonomy"] for r in cli["reports"]] == ["rag", "tickets"]


def test_pytest_init_writes_the_formats_taxonomy(
    project: Path, pytester: pytest.Pytester
) -> None:
    for name in ("failgate_tickets.py", "tickets.yaml", "pyproject.toml"):
        (pytester.path / name).write_text((project / name).read_text(), encoding="utf-8")
    result = pytester.runpytest(f"--failgate={project / 'reports'}", "--failgate-init")
    assert result.ret == 0
    assert "taxonomy: tickets\n" in (pytester.path / "ceilings.yaml").read_text()


def test_a_zero_case_report_is_an_error_item_and_the_rest_are_still_gated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    pytester: pytest.Pytester,
) -> None:
    monkeypatch.chdir(tmp_path)
    write_summary(tmp_path / "reports" / "empty.json", [])
    write_summary(tmp_path / "reports" / "full.json", cases_for({"unknown": 1}, passed=1))
    code, out, _ = run(capsys, "init", "reports")
    assert code == 2
    assert "init: wrote ceilings.yaml from the current counts of 1 report" in out
    assert "not gated, as 1 report failed to load" in out
    assert "empty" in out
    code, out, _ = run(capsys, "check", "reports")
    assert code == 2
    assert "ERROR" in out
    assert "the report has no cases" in out
    assert "full  2 cases, 1 failed" in out
    (pytester.path / "ceilings.yaml").write_text((tmp_path / "ceilings.yaml").read_text())
    result = pytester.runpytest(f"--failgate={tmp_path / 'reports'}")
    result.assert_outcomes(passed=8, failed=1)
    result.stdout.fnmatch_lines(["*empty.json: the report has no cases*"])
    assert "Traceback" not in result.stdout.str()


def test_no_report_at_all_lists_the_skipped_files_in_the_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "notes.md").write_text("hi")
    code, out, err = run(capsys, "init", "reports")
    assert code == 2
    assert "see the summary" not in out + err
    assert "skipped: reports/notes.md (no reader for this kind of file)" in err


PROMPTFOO_IN_YAML = r"""
name: my-promptfoo
records: results.results             # promptfoo -o out.json, results v3
id_fields: [[provider.id, testIdx]]  # the row id is a fresh UUID every run
report_name: '(?P<name>.+?)_\d{8}T\d{6}'
required: [success]
failed: not success
categories:
  - name: provider_error
    when: error and not gradingResult
  - name: text_match
    when: >-
      any(c.assertion.type in {"contains", "contains-any", "icontains"} and not c["pass"]
          for c in gradingResult.componentResults)
  - name: other
"""


def test_a_format_described_in_yaml_alone_reads_nested_records_with_composite_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = Path(__file__).resolve().parents[2] / "data" / "promptfoo" / "shared"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "nightly_20261130T101500.json").write_bytes(
        (data / "tds_project1.promptfoo_results.json").read_bytes())
    (tmp_path / "my.yaml").write_text(PROMPTFOO_IN_YAML, encoding="utf-8")
    code, out, _ = run(capsys, "init", "runs", "--taxonomy", "my.yaml")
    assert code == 0, out
    assert "taxonomy: my.yaml\n" in (tmp_path / "ceilings.yaml").read_text()
    code, out, _ = run(capsys, "show", "runs")
    assert code == 0, out
    # 10 rows, 3 failed (promptfoo's own stats); the report named without its timestamp
    assert "nightly  10 cases, 3 failed" in out
    line = next(line for line in out.splitlines() if line.strip().startswith("text_match"))
    assert line.split()[1] == "3"
    assert line.endswith("https://tds-project-1-ruby-one.vercel.app/query/1, https://tds-project"
                         "-1-ruby-one.vercel.app/query/2, openai:chat:gpt-4o-mini/1")


def test_a_yaml_format_whose_records_path_is_absent_is_an_error_not_zero_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write_summary(tmp_path / "runs" / "eval_summary.json", cases_for({"unknown": 1}))
    (tmp_path / "my.yaml").write_text(PROMPTFOO_IN_YAML, encoding="utf-8")
    code, out, _ = run(capsys, "init", "runs", "--taxonomy", "my.yaml")
    assert code == 2
    assert ("no 'results' in the file: taxonomy my-promptfoo reads its cases from "
            "results.results, so this is another format") in out


@pytest.mark.parametrize(("snippet", "message"), [
    ("id_fields: [[provider.id]]", "a composite id lists two or more field paths"),
    ("report_name: '.+_\\d+'", "report_name needs a group that is the name"),
    ("report_name: '(unclosed'", "invalid regular expression"),
    ("records: 'results..results'", "records is a path of keys"),
    ("required: ['a b']", "a required field is a field path"),
])
def test_mistakes_in_a_yaml_format_name_the_line(tmp_path: Path, snippet: str,
                                                 message: str) -> None:
    from pytest_failgate.core.base.errors import FailgateError
    from pytest_failgate.core.taxonomy.files import load_taxonomy_file

    path = tmp_path / "t.yaml"
    path.write_text(f"name: t\n{snippet}\nfailed: not ok\ncategories:\n  - name: other\n")
    with pytest.raises(FailgateError, match=re.escape(message)) as caught:
        load_taxonomy_file(path)
    assert caught.value.line == 2


def test_a_nested_field_path_a_rule_reads_is_reported_when_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.yaml").write_text(
        "name: t\nfailed: not ok\ncategories:\n"
        "  - {name: slow, when: 'meta.timing.total > 5'}\n  - name: other\n")
    rows = [{"id": "a", "ok": False, "meta": {"timing": {"total": 9}}},
            {"id": "b", "ok": False, "meta": {"timing": {}}},        # total absent
            {"id": "c", "ok": False, "meta": {}},                    # timing absent
            {"id": "d", "ok": False},                                # meta absent: said once
            {"id": "e", "ok": True, "meta": {}}]                     # passed: not examined
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, _ = run(capsys, "init", "runs", "--taxonomy", "t.yaml")
    assert code == 0, out
    assert ("warning: rule slow: 'meta' absent in 1 of the 4 cases it examined (read as null)"
            in out)
    assert ("warning: rule slow: 'meta.timing.total' absent in 2 of the 4 cases it examined "
            "(read as null)") in out
