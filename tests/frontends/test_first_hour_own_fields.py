"""A new project's first hour, round 2: its own fields (``qid``, ``verdict``,
``grader_note``), a noisy judge, a developer's machine without the reports, a guard ref
that cannot be fetched. Each test drives the commands the docs give, as written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_cli

TAXONOMY = """\
name: helpdesk
failed: verdict == "fail"
categories:
  - name: wrong_doc
    when: grader_note == "wrong doc"
  - name: other
"""


def own_fields(root: Path, folder: str = "reports", failing: int = 10) -> Path:
    """reports/run.jsonl of 30 cases with the project's own fields, and taxonomy.yaml
    (without ``id_field``)."""
    rows = []
    for i in range(30):
        verdict = "fail" if i < failing else "pass"
        note = "wrong doc" if verdict == "fail" and i % 2 == 0 else ""
        rows.append({"qid": f"HD-{i:04d}", "verdict": verdict, "grader_note": note})
    (root / folder).mkdir(parents=True, exist_ok=True)
    (root / folder / "run.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    (root / "taxonomy.yaml").write_text(TAXONOMY, encoding="utf-8")
    return root


# -- the gate on a developer's machine, where the reports are not made -------------------

@pytest.mark.parametrize("ini", ["[pytest]\ntestpaths = tests\naddopts = --failgate=reports\n",
                                 "[pytest]\ntestpaths = tests\nfailgate = reports\n"],
                         ids=["addopts", "ini key"])
def test_without_the_reports_the_unit_tests_run_and_the_gate_fails_as_one_item(
    pytester: pytest.Pytester, ini: str
) -> None:
    pytester.makeini(ini)
    pytester.mkdir("tests")
    (pytester.path / "tests" / "test_unit.py").write_text(
        "def test_unit():\n    pass\n", encoding="utf-8")
    (pytester.path / "ceilings.yaml").write_text(
        "version: 1\nceilings:\n  total: 0\n", encoding="utf-8")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    assert "error during collection" not in result.stdout.str()
    result.stdout.fnmatch_lines(["FAILED ceilings.yaml::gate - reports: no such file or "
                                 "directory*"])
    result.stdout.fnmatch_lines(['*deselect it on the command line: pytest -m "not failgate"'])
    assert result.ret == pytest.ExitCode.INTERRUPTED  # a gate that could not run: exit 2
    # the documented way to run the tests without the gate, with this configuration
    result = pytester.runpytest("-m", "not failgate")
    result.assert_outcomes(passed=1, deselected=1)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["failgate: 1 of 1 gate items deselected by -m on the "
                                 "command line; the gate did not run"])


def test_a_configuration_cannot_deselect_a_gate_that_could_not_run(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini('[pytest]\ntestpaths = tests\nfailgate = reports\n'
                     'addopts = -m "not failgate"\n')
    pytester.mkdir("tests")
    (pytester.path / "tests" / "test_unit.py").write_text(
        "def test_unit():\n    pass\n", encoding="utf-8")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, deselected=1)
    assert result.ret == pytest.ExitCode.INTERRUPTED  # never a pass
    result.stdout.fnmatch_lines(["failgate: 1 of 1 gate items were deselected by the pytest "
                                 "configuration*"])


def test_init_recommends_the_ini_key_when_the_reports_were_given_on_the_command_line(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    own_fields(pytester.path)
    pytester.makeini("[pytest]\ntestpaths = tests\n")  # a pytest project (else: the CLI step)
    code, out, _ = run_cli(capsys, "init", "reports", "--taxonomy", "taxonomy.yaml")
    assert code == 0, out
    assert "set the ini key `failgate = reports` under [pytest]" in out
    (pytester.path / "ceilings.yaml").unlink()
    pytester.makeini("[pytest]\nfailgate = reports\n")
    code, out, _ = run_cli(capsys, "init", "--taxonomy", "taxonomy.yaml")
    assert code == 0, out
    assert "set the ini key" not in out  # the ini key gave them


# -- cases with their own id field ---------------------------------------------------------

def test_cases_with_their_own_id_field_get_a_note_naming_it_at_init_and_check(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    own_fields(pytester.path)
    note = ("no case has an id field taxonomy helpdesk reads (id, case_id, question_id, "
            "sample_id), so cases are named by position (#1): failures list positions, and a "
            "baseline pairs cases by line number; the cases have 'qid': write `id_field: qid` "
            "in taxonomy.yaml")
    code, out, _ = run_cli(capsys, "init", "reports", "--taxonomy", "taxonomy.yaml")
    assert code == 0, out
    assert f"warning: {note}" in out
    own_fields(pytester.path, failing=16)  # a regression: the failures are listed
    code, out, _ = run_cli(capsys, "check", "reports")
    assert code == 1
    assert f"warning: {note}" in out
    assert "cases    #1, #3, #5," in out
    # once the taxonomy says which field, the failures list the cases' own ids
    taxonomy = pytester.path / "taxonomy.yaml"
    taxonomy.write_text(TAXONOMY.replace("failed:", "id_field: qid\nfailed:"), encoding="utf-8")
    code, out, _ = run_cli(capsys, "check", "reports")
    assert code == 1
    assert "no case has an id field" not in out
    assert "cases    HD-0000, HD-0002, HD-0004," in out
    # and the same note under pytest, before the taxonomy named it
    taxonomy.write_text(TAXONOMY, encoding="utf-8")
    result = pytester.runpytest("--failgate=reports")
    result.stdout.fnmatch_lines([f"  warning: {note}"])


def test_no_note_when_the_cases_carry_an_id_the_taxonomy_reads(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    own_fields(pytester.path)
    run = pytester.path / "reports" / "run.jsonl"
    run.write_text(run.read_text(encoding="utf-8").replace('"qid"', '"case_id"'),
                   encoding="utf-8")
    code, out, _ = run_cli(capsys, "init", "reports", "--taxonomy", "taxonomy.yaml")
    assert code == 0, out
    assert "no case has an id field" not in out


def test_without_a_likely_id_field_the_note_names_id_field(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    own_fields(pytester.path)
    run = pytester.path / "reports" / "run.jsonl"
    run.write_text(run.read_text(encoding="utf-8").replace('"qid"', '"question"'),
                   encoding="utf-8")
    code, out, _ = run_cli(capsys, "init", "reports", "--taxonomy", "taxonomy.yaml")
    assert code == 0, out
    assert ("; name the field that identifies a case with `id_field:` in taxonomy.yaml"
            in out)


# -- a noisy judge: the noise band of one's own fields -------------------------------------

def _runs(root: Path) -> list[str]:
    for index in range(1, 4):
        own_fields(root, f"runs/r{index}", failing=10 + index)
    return [f"runs/r{index}/" for index in range(1, 4)]


def test_noise_on_own_field_runs_names_the_taxonomy_option(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = _runs(pytester.path)
    code, _, err = run_cli(capsys, "noise", *runs)
    assert code == 2
    assert err.endswith("give a taxonomy for its fields with `failgate noise runs/r1/ "
                        "runs/r2/ runs/r3/ --taxonomy path/to/taxonomy.yaml`\n")
    # as the docs give it: the band, then init with it, for one's own fields
    code, out, err = run_cli(capsys, "noise", *runs, "--taxonomy", "taxonomy.yaml")
    assert code == 0, err
    assert "noise over 3 runs -> noise_band.json" in out
    own_fields(pytester.path)
    code, out, _ = run_cli(capsys, "init", "reports", "--taxonomy", "taxonomy.yaml",
                           "--noise", "noise_band.json")
    assert code == 0, out
    assert "\nnoise: noise_band.json\n" in (pytester.path / "ceilings.yaml").read_text()


def test_init_with_a_band_and_without_a_taxonomy_names_the_taxonomy_not_the_band(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = _runs(pytester.path)
    assert run_cli(capsys, "noise", *runs, "--taxonomy", "taxonomy.yaml")[0] == 0
    own_fields(pytester.path)
    code, out, _ = run_cli(capsys, "init", "reports", "--noise", "noise_band.json")
    assert code == 2
    assert ("give a taxonomy for its fields with `failgate init reports --noise "
            "noise_band.json --taxonomy path/to/taxonomy.yaml`") in out
    assert "measures none of this run's counts" not in out


# -- an exact ceilings file moving onto a noise band ------------------------------------------

def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                   cwd=cwd, check=True, capture_output=True)


def test_an_exact_file_moves_onto_a_noise_band_with_one_command_the_guard_reviews(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    root = pytester.path
    runs = _runs(root)
    own_fields(root)
    assert run_cli(capsys, "init", "reports", "--taxonomy", "taxonomy.yaml")[0] == 0
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "exact ceilings")
    assert run_cli(capsys, "noise", *runs)[0] == 0  # the ceilings file's taxonomy
    ceilings = root / "ceilings.yaml"
    exact = ceilings.read_text()
    code, _, err = run_cli(capsys, "init", "reports", "--noise", "noise_band.json")
    assert code == 2
    assert "already exists; init only creates a new ceilings file" in err
    assert ("write it again from this run's counts with `failgate init reports --noise "
            "noise_band.json --force`") in err
    assert ceilings.read_text() == exact
    code, out, _ = run_cli(capsys, "init", "reports", "--noise", "noise_band.json", "--force")
    assert code == 0, out
    assert "init: replaced ceilings.yaml from the current counts of 1 report" in out
    written = ceilings.read_text()
    assert "\ntaxonomy: taxonomy.yaml\nnoise: noise_band.json\n" in written  # the file's own
    assert "  wrong_doc:\n    max: " in written
    # a larger allowance is a loosening: the guard names each raise and the band
    code, out, _ = run_cli(capsys, "guard", "--base", "HEAD")
    assert code == 1
    line = written.splitlines().index("  wrong_doc:") + 1
    assert f"ceilings.yaml:{line} ceilings.wrong_doc: 5 -> " in out
    assert "ceilings.wrong_doc.allowance: 0 -> " in out
    assert "noise: none (exact counts) -> noise_band.json" in out
    # the same command with the reason passes review, and the gate reads the file
    code, out, _ = run_cli(capsys, "init", "reports", "--noise", "noise_band.json", "--force",
                           "--reason", "the judge is noisy: noise_band.json")
    assert code == 0, out
    code, out, _ = run_cli(capsys, "guard", "--base", "HEAD")
    assert code == 0, out
    assert 'reason: "the judge is noisy: noise_band.json"' in out
    assert run_cli(capsys, "check", "reports")[0] == 0


def test_init_force_reason_on_exact_entries_and_report_overrides(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    own_fields(pytester.path)
    own_fields(pytester.path, "reports/more", failing=4)
    assert run_cli(capsys, "init", "reports", "--taxonomy", "taxonomy.yaml")[0] == 0
    code, out, _ = run_cli(capsys, "init", "reports", "--force", "--reason", 'a "new" set')
    assert code == 0, out
    written = (pytester.path / "ceilings.yaml").read_text()
    assert '\nreason: "a \\"new\\" set"\n' in written
    assert '\n  wrong_doc: {max: 5, reason: "a \\"new\\" set"}\n' in written
    assert ('\nreports:\n  more/run:\n    wrong_doc: {max: 2, reason: "a \\"new\\" set"}\n'
            in written)
    assert run_cli(capsys, "check", "reports")[0] == 0
    code, _, err = run_cli(capsys, "init", "reports", "--reason", "why")
    assert code == 2
    assert "--reason is written by init --force" in err


# -- a guard ref the CI step cannot fetch ----------------------------------------------------

def test_a_guard_ref_that_cannot_be_fetched_shows_the_fetch_error(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    root = pytester.path
    own_fields(root)
    assert run_cli(capsys, "init", "reports", "--taxonomy", "taxonomy.yaml")[0] == 0
    _git(root, "init", "-q", "-b", "change")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "the change")
    _git(root, "remote", "add", "origin", str(root / "no-such-origin.git"))
    done = subprocess.run([sys.executable, "-m", "pytest_failgate.ci", "reports",
                           "--guard-base", "origin/main"],
                          cwd=root, capture_output=True, text=True, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    expected = ("guard: could not compare with origin/main: could not fetch origin/main: "
                "`git fetch --no-tags --depth=1 origin main` failed: fatal: ")
    assert expected in done.stdout
    assert "fetch it first" not in done.stdout
    report = (root / "failgate-report" / "failgate.md").read_text(encoding="utf-8")
    assert expected in report
    assert "fetch it first" not in report
