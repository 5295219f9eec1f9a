"""Inputs that were tracebacks with exit 1 (the "gate failed" code), or ran user text
through a backtracking engine or into a query: each is now one line naming the file and
the place, and exit 2.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from helpers import run_cli

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.reports.choice import TaxonomyChoice
from pytest_failgate.core.reports.model import Report, ReportFile
from pytest_failgate.core.reports.read import ReadSpec, load_report
from pytest_failgate.core.taxonomy.expr.regex import UnsupportedPattern, compile_group_match
from pytest_failgate.core.taxonomy.files import load_taxonomy_file


def _one_line(err: str) -> None:
    assert err.startswith("failgate: error: ")
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_a_nul_character_in_a_ceilings_file_is_one_line_with_its_place(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (workdir / "ceilings.yaml").write_bytes(b"version: 1\ntaxonomy: rag\x00\n")
    code, _, err = run_cli(capsys, "check", "examples/reports")
    assert code == 2
    _one_line(err)
    assert "ceilings.yaml:2:14: invalid YAML: the character U+0000 is not allowed" in err


def test_a_nul_character_in_a_taxonomy_file_names_its_place(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_bytes(b"name: t\nfailed: 'true'\n\x01categories: []\n")
    with pytest.raises(FailgateError, match="U\\+0001 is not allowed") as raised:
        load_taxonomy_file(path)
    assert (raised.value.line, raised.value.col) == (3, 1)


@pytest.mark.parametrize("where", ["ceilings", "report"])
def test_a_path_of_5000_characters_is_one_line_and_exit_2(
        workdir: Path, capsys: pytest.CaptureFixture[str], where: str) -> None:
    long = "a" * 5000
    args = (["check", "examples/reports", "--ceilings", f"{long}.yaml"] if where == "ceilings"
            else ["check", f"examples/{long}"])
    code, _, err = run_cli(capsys, *args)
    assert code == 2
    _one_line(err)
    assert "is too long (5,0" in err
    assert len(err) < 300  # the path is not printed whole


def _git_repo(folder: Path) -> None:
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.email=ci@example.com", "-c",
                                                 "user.name=ci", "commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)


@pytest.mark.parametrize("key", ["failgate_ceilings = c\0.yaml",
                                 "failgate_plugins = tools/p\0.py", "failgate = rep\0orts"])
def test_a_nul_in_an_ini_path_names_the_ini_key(
        workdir: Path, capsys: pytest.CaptureFixture[str], key: str) -> None:
    """It was a ``ValueError: embedded null byte`` traceback with exit 1."""
    _git_repo(workdir)
    (workdir / "pytest.ini").write_text(f"[pytest]\n{key}\n")
    paths = [] if key.startswith("failgate =") else ["examples/reports"]
    for command in (["check", *paths], ["guard", "--base", "HEAD"]):
        code, _, err = run_cli(capsys, *command)
        assert code == 2, err
        _one_line(err)
        assert f"pytest.ini: {key.split()[0]}: the path " in err
        assert "holds a NUL byte" in err


def test_a_ceilings_link_to_itself_is_one_line_in_every_command(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A loop of links was a ``RuntimeError: Symlink loop`` traceback in the guard."""
    _git_repo(workdir)
    (workdir / "ceilings.yaml").unlink()
    (workdir / "ceilings.yaml").symlink_to("ceilings.yaml")
    for command in (["check", "examples/reports"], ["guard", "--base", "HEAD"],
                    ["diff", "ceilings.yaml", "examples/reports"]):
        code, _, err = run_cli(capsys, *command)
        assert code == 2, (command, err)
        _one_line(err)
        assert "ceilings.yaml" in err


def test_a_bad_slice_is_one_line_and_exit_2(workdir: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "analyze", "examples/reports", "--slice", "x y")
    assert code == 2
    _one_line(err)
    assert "slice 'x y' is not a field or an expression: syntax error" in err


def test_a_good_slice_still_analyzes(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "analyze", "examples/reports", "--slice", "query_type")
    assert code == 0, err


# --------------------------------------------------------------------------- report_name


def _taxonomy(tmp: Path, pattern: str) -> Path:
    path = tmp / "fmt.yaml"
    path.write_text(f"name: fmt\nreport_name: '{pattern}'\nfailed: 'not ok'\n"
                    "categories: [{name: other}]\n", encoding="utf-8")
    return path


def test_report_name_patterns_never_backtrack(tmp_path: Path) -> None:
    """``(?P<name>(a+)+)$`` on a long name of a's and one other character hung ``re``."""
    taxonomy = load_taxonomy_file(_taxonomy(tmp_path, "(?P<name>(a+)+)b"))
    stem = "a" * 3000 + "!"
    report = tmp_path / f"{stem[:200]}.json"
    report.write_text('[{"id": "x", "ok": false}]')
    start = time.perf_counter()
    loaded = load_report(ReportFile(report, stem), TaxonomyChoice(taxonomy), ReadSpec())
    assert time.perf_counter() - start < 5
    assert isinstance(loaded, Report)
    assert loaded.name == stem  # no match: the file's own name


def test_report_name_takes_the_group_re_would_take(tmp_path: Path) -> None:
    taxonomy = load_taxonomy_file(_taxonomy(tmp_path, r"(?P<name>.+)_\d{8}T\d{6}"))
    report = tmp_path / "runs_a_20260101T101010.json"
    report.write_text('[{"id": "x", "ok": false}]')
    loaded = load_report(ReportFile(report, "runs_a_20260101T101010"), TaxonomyChoice(taxonomy),
                         ReadSpec())
    assert isinstance(loaded, Report)
    assert loaded.name == "runs_a"


@pytest.mark.parametrize(("pattern", "word"), [(r"(?P<name>\w+)(?=_x)", "lookahead"),
                                               (r"(?P<name>a)\1", "backreference")])
def test_report_name_patterns_that_need_backtracking_are_refused_at_load(
        tmp_path: Path, pattern: str, word: str) -> None:
    with pytest.raises(FailgateError, match=f"report_name: a {word}"):
        load_taxonomy_file(_taxonomy(tmp_path, pattern))


def test_a_group_match_agrees_with_re_on_greedy_and_lazy_groups() -> None:
    import re

    for pattern in [r"(.+)_(.*)", r"(.+?)_(.*)", r"(?P<name>a*?)a*", r"x(?P<name>.*)y$",
                    r"(a|ab)(c|bcd)?(d*)", r"^(?P<name>\w+?)(_\d+)?$"]:
        match = compile_group_match(pattern)
        compiled = re.compile(pattern)
        for text in ["a_b_c", "aaa", "xaybyy", "abcd", "run_12", "x_y", "", "_"]:
            found = compiled.fullmatch(text)
            group = "name" if "name" in compiled.groupindex else 1
            assert match(text) == (found.group(group) if found else None), (pattern, text)
    with pytest.raises(UnsupportedPattern):
        compile_group_match("no group")


# --------------------------------------------------------------------------- sql --table


def test_sql_table_is_quoted_not_pasted(workdir: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    sample = workdir / "s.jsonl"
    sample.write_text('{"id": "a", "answerable": true, "abstained": false, "accuracy": 1.0, '
                      '"term_match": true, "expected_doc_ids": ["d"], "evidence_doc_ids": '
                      '["d"], "query_type": "x", "attempt_latency": [1.0], '
                      '"claim_citation_alignment": 0.5}\n')
    code, out, _ = run_cli(capsys, "sql", "--sample", str(sample), "--table",
                           "cases; DROP TABLE x; --")
    assert code == 0
    assert 'FROM "cases; DROP TABLE x; --"' in out
    code, out, _ = run_cli(capsys, "sql", "--sample", str(sample), "--dialect", "spark",
                           "--table", "eval.my-cases")
    assert "FROM eval.`my-cases`" in out
    code, out, _ = run_cli(capsys, "sql", "--sample", str(sample), "--table",
                           f"read_json('{sample}', format='newline_delimited')")
    assert f"FROM read_json('{sample}', format='newline_delimited')" in out
    code, out, _ = run_cli(capsys, "sql", "--sample", str(sample), "--table",
                           "read_parquet('x'); DROP TABLE y; --')")
    assert "FROM \"read_parquet('x'); DROP TABLE y; --')\"" in out
    code, _, err = run_cli(capsys, "sql", "--sample", str(sample), "--table", "a..b")
    assert code == 2
    assert "is not a table, schema.table or catalog.schema.table name" in err
