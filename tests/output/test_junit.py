"""``failgate check --junit FILE``: the file pytest's ``--junitxml`` writes for the gate's
items, from the one item tree (``core.base.items``)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_failgate.cli import main


def _cases(path: Path) -> list[tuple[str, str, str, list[tuple[str, str]]]]:
    """Each testcase's classname, name, outcome and properties, in the file's order."""
    found = []
    for case in ET.parse(path).getroot().iter("testcase"):
        outcome = next((child.tag for child in case if child.tag in ("failure", "skipped",
                                                                     "error")), "passed")
        properties = [(p.get("name", ""), p.get("value", "")) for p in case.iter("property")]
        found.append((case.get("classname", ""), case.get("name", ""), outcome, properties))
    return found


@pytest.mark.parametrize("changed", [False, True])
def test_the_junit_file_is_pytests_for_the_same_run(
        regression: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], changed: bool) -> None:
    """The same testcase names, outcomes and properties as ``pytest --junitxml``, on a
    passing run and on one whose retrieval misses failed its ceiling."""
    if not changed:
        (regression / "reports" / "eval_summary.json").write_bytes(
            (Path(__file__).resolve().parents[2] / "examples" / "reports" /
             "eval_summary.json").read_bytes())
    monkeypatch.chdir(regression)
    code = main(["check", "reports", "--junit", "cli.xml"])
    capsys.readouterr()
    pytester.runpytest("--failgate=reports", "--junitxml=pytest.xml")
    cli, run = _cases(regression / "cli.xml"), _cases(regression / "pytest.xml")
    assert cli == run
    assert (code == 1) is changed
    assert any(outcome == "failure" for _, _, outcome, _ in cli) is changed
    assert len(cli) > 1


def test_report_content_stays_text_in_the_junit_file(tmp_path: Path) -> None:
    from pytest_failgate.core.base.result import GateResult, ReportResult
    from pytest_failgate.output.junit import render_junit

    result = GateResult(
        mode="gate", ceilings_path="ceilings.yaml", ceilings_sha256=None, taxonomy="rag",
        skipped=[], warnings=[], lowerings=[], reports=[ReportResult(
            name='run<"&>\x1b', path="r", kind=None, n_cases=None, failed=None,
            error="bad <b>file</b>\x00")])
    text = render_junit(result)
    [case] = ET.fromstring(text).iter("testcase")
    assert case.get("classname") == 'ceilings.yaml.run<"&>\\x1b'  # one line, as pytest's
    assert "\x1b" not in text
    failure = case.find("failure")
    assert failure is not None
    assert failure.text == "bad <b>file</b>#x00"
    assert "<b>" not in text


def test_a_sliced_runs_junit_file_is_pytests_too(
        project: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Slice items sit under their slice's collector: ``classname`` names the slice."""
    monkeypatch.chdir(project)
    assert main(["init", "reports", "--ceilings", "sliced.yaml"]) == 0
    ceilings = project / "sliced.yaml"
    ceilings.write_text("slices: [query_type]\n" + ceilings.read_text(encoding="utf-8"),
                        encoding="utf-8")
    assert main(["check", "reports", "--ceilings", "sliced.yaml", "--junit", "cli.xml"]) == 0
    capsys.readouterr()
    pytester.runpytest("--failgate=reports", "--failgate-ceilings=sliced.yaml",
                       "--junitxml=pytest.xml")
    cli = _cases(project / "cli.xml")
    assert cli == _cases(project / "pytest.xml")
    assert any(classname.count(".") > 2 and "query_type=" in classname
               for classname, _, _, _ in cli)


def test_the_json_names_each_item_as_pytest_and_junit_do(
        regression: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``check --json``'s ``items``: every item's pytest node id, kind and outcome, in
    pytest's collection order, from the tree JUnit and pytest's items are built from."""
    monkeypatch.chdir(regression)
    assert main(["check", "reports", "--json", "gate.json", "--junit", "cli.xml"]) == 1
    out = capsys.readouterr().out
    failed_lines = [line.removeprefix("FAILED ") for line in out.splitlines()
                    if line.startswith("FAILED ")]
    items = json.loads((regression / "gate.json").read_text(encoding="utf-8"))["items"]
    recorded = pytester.inline_run("--failgate=reports", "-p", "no:cacheprovider")
    passed, skipped, failed = recorded.listoutcomes()
    pytest_outcomes = {report.nodeid: outcome for outcome, reports in
                       (("passed", passed), ("skipped", skipped), ("failed", failed))
                       for report in reports}
    assert {item["node_id"]: item["outcome"] for item in items} == pytest_outcomes
    assert len(items) == len(pytest_outcomes) > 1
    assert [item["node_id"] for item in items if item["outcome"] == "failed"] == failed_lines
    assert "ceilings.yaml::eval_summary::retrieval_miss" in failed_lines
    junit = [(classname, name, outcome) for classname, name, outcome, _ in
             _cases(regression / "cli.xml")]
    assert junit == [(".".join(item["node_id"].split("::")[:-1]),
                      item["node_id"].split("::")[-1],
                      {"passed": "passed", "failed": "failure", "skipped": "skipped"}[
                          item["outcome"]]) for item in items]
    assert {item["kind"] for item in items} == {"row"}


def test_a_report_rendered_from_the_result_is_a_row_of_rendered(
        regression: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``--junit`` is a row of ``output.files.RENDERED`` (its option's name, its renderer),
    as a new report such as ``--sarif FILE`` would be: the row decides what is written."""
    from pytest_failgate import options
    from pytest_failgate.output import files

    for name in files.RENDERED:
        [option] = [option for option in options.OPTIONS if option.attribute == name]
        assert option.kind == "path", name
        assert "check" in option.commands, name
    monkeypatch.chdir(regression)
    monkeypatch.setitem(files.RENDERED, "junit", ("markdown", "render_markdown"))
    assert main(["check", "reports", "--junit", "out.txt"]) == 1
    assert (regression / "out.txt").read_text(encoding="utf-8").startswith("### failgate:")
