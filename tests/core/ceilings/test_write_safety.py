"""No ceilings file is ever corrupted, and YAML cannot say what a reader does not see."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import EXAMPLES, cases_for, write_summary
from helpers import run_cli as run

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.base.yamlsource import MAX_VALUES, load_yaml
from pytest_failgate.core.ceilings.load import load_ceilings
from pytest_failgate.core.ceilings.rewrite import rewrite, write_atomic
from pytest_failgate.core.taxonomy import builtin_taxonomies
from pytest_failgate.core.taxonomy.files import load_taxonomy_file

ROOT = EXAMPLES.parent


def _slack(path: Path) -> str:
    """Give the example's eval_summary total some slack, so a ratchet has work to do."""
    before = path.read_text()
    path.write_text(before.replace("    total: 7\n", "    total: 9\n"))
    return path.read_text()


def test_aliases_in_a_ceilings_file_are_refused_at_the_alias(tmp_path: Path) -> None:
    path = tmp_path / "ceilings.yaml"
    path.write_text("version: 1\nceilings:\n  unknown: &v 90\n  retrieval_miss: *v\n")
    with pytest.raises(FailgateError) as info:
        load_ceilings(path, builtin_taxonomies())
    assert str(info.value).startswith(f"{path}:4:19: YAML aliases (*name) are not allowed here")
    assert "write every value out" in str(info.value)


def test_a_ratchet_never_writes_an_aliased_file(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ceilings = workdir / "ceilings.yaml"
    text = _slack(ceilings).replace("  verifier_false_negative: 76", "  verifier_false_negative: "
                                    "&v 76").replace("  unknown: 35", "  unknown: *v")
    ceilings.write_text(text)
    code, _, err = run(capsys, "ratchet", "examples/reports")
    assert code == 2
    assert "YAML aliases (*name) are not allowed here" in err
    assert ceilings.read_text() == text


class _Edit:
    def __init__(self, start: int, end: int, new_text: str) -> None:
        self.start, self.end, self.new_text = start, end, new_text


def test_a_rewrite_that_would_not_read_back_as_intended_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ceilings.yaml"
    text = "version: 1\nceilings:\n  unknown: 35\n  total: 180\n"
    path.write_text(text)
    at = text.index("35")
    assert rewrite(path, text, [_Edit(at, at + 2, "30")]) == text.replace("35", "30")
    # YAML 1.1 would read "010" as 8: the new text does not say what was meant
    with pytest.raises(FailgateError, match="would not read back"):
        rewrite(path, text, [_Edit(at, at + 2, "010")])
    # a span that is not one number of the file (the file moved under us)
    with pytest.raises(FailgateError, match="not a number of this file"):
        rewrite(path, text, [_Edit(at - 1, at + 2, "30")])
    assert path.read_text() == text


def test_the_ratchet_keeps_comments_and_lowers_exactly_the_planned_numbers(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ceilings = workdir / "ceilings.yaml"
    before = _slack(ceilings)
    code, out, _ = run(capsys, "ratchet", "examples/reports")
    assert code == 0
    assert "reports.eval_summary.total 9 -> 7" in out
    assert ceilings.read_text() == before.replace("    total: 9\n", "    total: 7\n")


def test_a_killed_ratchets_temporary_files_are_removed_by_the_next(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stray = [workdir / ".ceilings.yaml.failgate.tmp", workdir / ".ceilings.yaml.k3x9_a.tmp"]
    for path in stray:
        path.write_text("half a file")
    code, out, _ = run(capsys, "ratchet", "examples/reports")
    assert code == 0
    assert "nothing to lower" in out  # removed even when nothing is written
    assert not any(path.exists() for path in stray)
    stray[0].write_text("half a file")
    write_atomic(workdir / "ceilings.yaml", (workdir / "ceilings.yaml").read_text())
    assert sorted(p.name for p in workdir.iterdir()) == ["ceilings.yaml", "examples"]


@pytest.mark.parametrize("unnamed", [True, False])
def test_atomic_writes_with_and_without_an_unnamed_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unnamed: bool
) -> None:
    from pytest_failgate.core.ceilings import rewrite as module

    if not unnamed:  # as on systems without O_TMPFILE
        monkeypatch.setattr(module, "_open_unnamed", lambda directory: None)
    path = tmp_path / "c.yaml"
    path.write_text("old")
    path.chmod(0o640)
    write_atomic(path, "new ✓")
    assert path.read_text(encoding="utf-8") == "new ✓"
    assert path.stat().st_mode & 0o777 == 0o640
    write_atomic(tmp_path / "d.yaml", "fresh", exclusive=True)
    with pytest.raises(FailgateError, match="never overwrites"):
        write_atomic(path, "theirs", exclusive=True)
    assert path.read_text(encoding="utf-8") == "new ✓"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml", "d.yaml"]


@pytest.mark.parametrize(
    ("written", "read_as"),
    [("010", "8"), ("1:00", "60"), ("7_0", "70"), ("0x1F", "31"), ("0b11", "3"),
     ("1_0.5", "10.5"), ("1:30.5", "90.5"), (".inf", "inf")],
)
def test_numbers_yaml_reads_unlike_a_person_are_errors(
    tmp_path: Path, written: str, read_as: str
) -> None:
    path = tmp_path / "ceilings.yaml"
    path.write_text(f"version: 1\nceilings:\n  unknown: {written}\n")
    with pytest.raises(FailgateError) as info:
        load_ceilings(path, builtin_taxonomies())
    assert str(info.value) == (
        f"{path}:3:12: '{written}' is not a plain decimal number (YAML 1.1 reads it as "
        f"{read_as}); write numbers as plain decimals such as 10 or 0.05, and quote text")


@pytest.mark.parametrize(
    ("written", "value"), [("10", 10), ("0", 0), ("+3", 3), ("0.05", "1/20"), (".5", "1/2"),
                           ("1.", "1"), ("2.5e-1", "1/4")])
def test_plain_decimals_read_as_written(tmp_path: Path, written: str, value: object) -> None:
    from fractions import Fraction

    doc = load_yaml(tmp_path / "x.yaml", f"a: {written}\n")
    expected = value if isinstance(value, int) else Fraction(str(value))
    assert doc.data["a"] == expected
    assert type(doc.data["a"]) is type(expected)


def test_a_billion_laughs_fails_fast_with_a_clear_error(tmp_path: Path) -> None:
    levels = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 10)]
    bomb = "\n".join(levels) + "\n"
    assert len(bomb) < 1200  # 10**10 values once expanded
    taxonomy = tmp_path / "taxonomy.yaml"
    taxonomy.write_text(bomb)
    with pytest.raises(FailgateError) as info:
        load_taxonomy_file(taxonomy)
    assert str(info.value) == (f"{taxonomy}: more than {MAX_VALUES:,} values once aliases are "
                               "expanded; refusing to read further (an alias bomb?)")
    ceilings = tmp_path / "ceilings.yaml"
    ceilings.write_text("version: 1\nceilings: {}\n" + bomb)
    with pytest.raises(FailgateError, match=r":4:\d+: YAML aliases \(\*name\) are not allowed"):
        load_ceilings(ceilings, builtin_taxonomies())


@pytest.mark.parametrize(("text", "place", "why"), [
    ("a: &a [*a]\n", "1:4", "once aliases are expanded (an alias inside its own anchor?)"),
    ("a: &a [b, [c, *a]]\n", "1:8", "once aliases are expanded"),
    ("[" * 3000 + "]" * 3000 + "\n", "1:201", "(the reader's limit)"),
    ("x:\n" + "  - " * 199 + "1\n", "2:797", "(the reader's limit)"),
])
def test_self_referencing_and_deeply_nested_yaml_are_errors_at_their_place(
    tmp_path: Path, text: str, place: str, why: str
) -> None:
    path = tmp_path / "t.yaml"
    with pytest.raises(FailgateError) as info:
        load_yaml(path, text)
    assert str(info.value).startswith(f"{path}:{place}: the YAML is nested deeper than 200 levels")
    assert why in str(info.value)


def test_yaml_nested_up_to_the_limit_is_read(tmp_path: Path) -> None:
    doc = load_yaml(tmp_path / "t.yaml", "x:\n" + "  - " * 198 + "1\n")
    value = doc.data["x"]
    for _ in range(197):
        value = value[0]
    assert value == [1]


@pytest.mark.parametrize("option", ["--md", "--json", "--html"])
def test_a_report_that_cannot_be_written_exits_2_and_says_so(
    workdir: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    code, out, err = run(capsys, "check", "examples/reports", option, "missing/dir/gate.out")
    assert code == 2
    assert "could not write missing/dir/gate.out: No such file or directory" in out
    assert err == "failgate: error: a report file could not be written (above)\n"


def test_a_report_that_cannot_be_written_fails_the_pytest_run(
    pytester: pytest.Pytester, project: Path
) -> None:
    result = pytester.runpytest("--failgate=reports", "--failgate-json=missing/gate.json")
    result.stdout.fnmatch_lines(["could not write missing/gate.json: No such file or directory"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_the_same_path_given_twice_gates_each_report_once(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    once = run(capsys, "check", "examples/reports", "--json", "once.json")
    twice = run(capsys, "check", "examples/reports", "examples/reports",
                "examples/reports/eval_summary.json", "--json", "twice.json")
    assert once[0] == twice[0] == 0
    first, second = (json.loads((workdir / f"{n}.json").read_text()) for n in ("once", "twice"))
    assert [r["name"] for r in second["reports"]] == [r["name"] for r in first["reports"]]
    assert [r["n_cases"] for r in second["reports"]] == [r["n_cases"] for r in first["reports"]]
    assert "ceilings ceilings.yaml, taxonomy rag, 3 reports (468 cases)" in twice[1]


def test_an_aggregate_of_zeros_without_a_case_count_does_not_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write_summary(tmp_path / "reports" / "run.json", cases_for({"unknown": 1}, passed=3))
    zeros = {name: 0 for name in builtin_taxonomies()["rag"].category_names}
    (tmp_path / "reports" / "empty.aggregate.json").write_text(
        json.dumps({"failure_category_counts": zeros}))
    (tmp_path / "ceilings.yaml").write_text("version: 1\nceilings:\n  unknown: 5\n")
    code, out, _ = run(capsys, "check", "reports")
    assert code == 2
    assert ("every recorded count is 0 and no num_predictions says how many cases there were"
            in out)
    (tmp_path / "reports" / "empty.aggregate.json").write_text(
        json.dumps({"failure_category_counts": zeros, "num_predictions": 40}))
    assert run(capsys, "check", "reports")[0] == 0
