"""Every setting that moves a verdict is guarded, by its row of the option table, wherever it
is set; the plan of a sequential run is evidence; a reason of invisible characters is none.

Each test starts from a git repository at ``main`` (the example reports, the repository's
ceilings file, a ``pyproject.toml`` that turns the gate on), makes one change as a pull
request would, and runs ``failgate guard --base main`` as CI would. Each loosening has its
control: the same kind of change that does not loosen passes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import EXAMPLES, commit, example_repo, git, guard_cli, run_cli

from pytest_failgate import options
from pytest_failgate.core.base.reasons import DEFAULT_IGNORABLE, reason_words

ROOT = EXAMPLES.parent
PYPROJECT = '[tool.pytest.ini_options]\nfailgate = "reports"\n'
HANGUL_FILLERS = "\u3164\u115f\u1160\uffa0"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = example_repo(tmp_path / "project", {"pyproject.toml": PYPROJECT})
    monkeypatch.chdir(project)
    return project


_guard = guard_cli


def _workflow(repo: Path, run: str, name: str = "gate.yml") -> None:
    folder = repo / ".github" / "workflows"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("on: pull_request\njobs:\n  gate:\n    runs-on: ubuntu-latest\n"
                               f"    steps:\n      - run: {run}\n")


# --------------------------------------------------------------------------- ini keys


def test_futility_and_margin_added_to_the_pyproject_ini_options_are_named(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "pyproject.toml").write_text(PYPROJECT + 'failgate_futility = "0.05"\n'
                                         'failgate_margin = "1000"\n')
    code, out = _guard(capsys)
    assert code == 1, out
    assert "failgate_futility: not set -> 0.05" in out
    assert "failgate_margin: not set -> 1000" in out


def test_a_neutral_setting_added_to_the_ini_file_is_not_a_loosening(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "pyproject.toml").write_text(PYPROJECT + 'failgate_md = "gate.md"\n'
                                         'failgate_strict = "true"\n')
    code, out = _guard(capsys)
    assert code == 0, out


@pytest.mark.parametrize(("margin", "loosens"), [("1000", True), ("5", False), ("10", False)])
def test_the_margin_raised_where_futility_was_on_is_named_and_lowered_is_not(
        repo: Path, capsys: pytest.CaptureFixture[str], margin: str, loosens: bool) -> None:
    base = PYPROJECT + 'failgate_futility = "0.05"\n'
    (repo / "pyproject.toml").write_text(base + 'failgate_margin = "10"\n')
    commit(repo)
    (repo / "pyproject.toml").write_text(base + f'failgate_margin = "{margin}"\n')
    code, out = _guard(capsys)
    assert code == (1 if loosens else 0), out
    assert ("failgate_margin: 10 -> 1000" in out) is loosens


@pytest.mark.parametrize(("keys", "loosens"), [
    ("failgate_futility = 0.05\nfailgate_margin = 100000\n", True),
    ("", False),  # the same settings, now in a pytest.ini: nothing looser
])
def test_keys_in_a_new_pytest_ini_are_compared_with_what_applied_before(
        repo: Path, capsys: pytest.CaptureFixture[str], keys: str, loosens: bool) -> None:
    (repo / "pytest.ini").write_text(f"[pytest]\nfailgate = reports\n{keys}")
    code, out = _guard(capsys)
    assert code == (1 if loosens else 0), out
    assert ("failgate_margin: not set -> 100000" in out) is loosens


def test_strict_turned_off_loosens_and_turned_on_tightens(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "pyproject.toml").write_text(PYPROJECT + 'failgate_strict = "true"\n')
    commit(repo)
    (repo / "pyproject.toml").write_text(PYPROJECT)
    code, out = _guard(capsys)
    assert code == 1, out
    assert "failgate_strict: true -> not set" in out


# --------------------------------------------------------------------------- CI files


def test_watch_flags_in_a_workflow_are_named(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = "failgate watch results.jsonl --planned 300 -- python run_eval.py"
    _workflow(repo, plain)
    commit(repo)
    _workflow(repo, "failgate watch results.jsonl --planned 300 --futility 0.05 "
              "--margin 100000 --delta 0.5 -- python run_eval.py")
    code, out = _guard(capsys)
    assert code == 1, out
    for named in ("failgate_futility: not set -> 0.05", "failgate_margin: not set -> 100000",
                  "failgate_delta: not set -> 0.5"):
        assert named in out


@pytest.mark.parametrize(("before", "after", "named"), [
    # the executable as a path (a .venv inside the project), and python -m
    ("failgate check reports", ".venv/bin/failgate check reports --ceilings gate.yaml",
     "names gate.yaml"),
    ("failgate check reports", "$VIRTUAL_ENV/bin/failgate check reports --ceilings gate.yaml",
     "names gate.yaml"),
    ("pytest --failgate=reports", "./.venv/bin/pytest --failgate=reports -o "
     "failgate_margin=100000", "failgate_margin: not set -> 100000"),
    ("failgate watch r.jsonl --planned 300", "python -m pytest_failgate watch r.jsonl "
     "--planned 300 --margin 100000 --futility 0.9", "failgate_margin: not set -> 100000"),
    # the CI step's own arguments
    ("python -I -m pytest_failgate.ci reports --guard-base origin/main",
     "python -I -m pytest_failgate.ci reports --guard-base none",
     "failgate_guard: origin/main -> none"),
    ("python -I -m pytest_failgate.ci reports --strict",
     "python -I -m pytest_failgate.ci reports --ceilings gate.yaml --check-arg=--strict",
     "names gate.yaml"),
])
def test_a_gate_run_by_path_or_as_a_module_in_a_workflow_is_read_too(
        repo: Path, capsys: pytest.CaptureFixture[str], before: str, after: str,
        named: str) -> None:
    """Tried as an attacker would: the guard read only ``failgate`` and ``pytest`` preceded
    by a blank, so a loose ceilings file given to ``.venv/bin/failgate`` slipped past it."""
    _workflow(repo, before)
    commit(repo)
    _workflow(repo, before)  # the control: unchanged
    assert _guard(capsys)[0] == 0
    (repo / "gate.yaml").write_text("version: 1\ntaxonomy: rag\nceilings:\n  total: 100000\n")
    _workflow(repo, after)
    code, out = _guard(capsys)
    assert code == 1, out
    assert named in out, out


def test_failgate_takes_no_abbreviated_option(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--ceil`` for ``--ceilings`` would set a setting under a name no reader sees."""
    with pytest.raises(SystemExit) as exited:  # argparse's usage error
        run_cli(capsys, "check", "reports", "--ceil", "gate.yaml")
    assert exited.value.code == 2
    assert "unrecognized arguments: --ceil gate.yaml" in capsys.readouterr().err


def test_tighter_watch_flags_and_the_harness_own_options_are_not_loosenings(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _workflow(repo, "failgate watch results.jsonl --planned 300 -- python run_eval.py")
    commit(repo)
    # a smaller delta is tighter; what follows -- belongs to the harness
    _workflow(repo, "failgate watch results.jsonl --planned 300 --delta 0.01 --md gate.md "
              "-- python run_eval.py --margin 100000")
    code, out = _guard(capsys)
    assert code == 0, out


@pytest.mark.parametrize("run", [
    "pytest --failgate-margin=5000 --failgate-futility 0.2",
    "PYTEST_ADDOPTS='-o failgate_margin=5000 -o failgate_futility=0.2' pytest",
])
def test_a_pytest_command_line_or_override_in_a_workflow_is_compared(
        repo: Path, capsys: pytest.CaptureFixture[str], run: str) -> None:
    _workflow(repo, "pytest")
    commit(repo)
    _workflow(repo, run)
    code, out = _guard(capsys)
    assert code == 1, out
    assert "failgate_margin: not set -> 5000" in out


def test_the_actions_inputs_are_compared(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    step = ("    steps:\n      - uses: owner/pytest-failgate@v1\n        with:\n"
            "          reports: reports\n{more}")
    folder = repo / ".github" / "workflows"
    folder.mkdir(parents=True)
    head = "on: pull_request\njobs:\n  gate:\n    runs-on: ubuntu-latest\n"
    (folder / "gate.yml").write_text(head + step.format(more="          strict: true\n"))
    commit(repo)
    (folder / "gate.yml").write_text(head + step.format(
        more="          strict: false\n          args: --exclude-unstable\n"))
    code, out = _guard(capsys)
    assert code == 1, out
    assert "failgate_strict: true -> not set" in out
    assert "failgate_exclude_unstable: not set -> true" in out
    (folder / "gate.yml").write_text(head + step.format(  # the control: only an output
        more="          strict: true\n          args: --md gate.md\n"))
    code, out = _guard(capsys)
    assert code == 0, out


# --------------------------------------------------------------------------- by the row


def test_a_new_row_of_the_option_table_is_guarded_on_every_source(
        repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fake verdict-moving option, added to the table only: the guard compares it in the
    ini file, in addopts, in a workflow's PYTEST_ADDOPTS and on a failgate command line."""
    fake = options.Option("leniency", "text", "a fake setting", "N", default="1",
                          commands=("check",), effect="raised")
    monkeypatch.setattr(options, "OPTIONS", (*options.OPTIONS, fake))
    sources: dict[str, Callable[[str], object]] = {
        "ini": lambda value: (repo / "pyproject.toml").write_text(
            PYPROJECT + f'failgate_leniency = "{value}"\n'),
        "addopts": lambda value: (repo / "pyproject.toml").write_text(
            PYPROJECT + f'addopts = "--failgate-leniency={value}"\n'),
        "PYTEST_ADDOPTS": lambda value: _workflow(
            repo, f"PYTEST_ADDOPTS='--failgate-leniency {value}' pytest"),
        "command line": lambda value: _workflow(repo, f"failgate check --leniency {value}"),
    }
    for name, write in sources.items():
        write("3")
        code, out = _guard(capsys)
        assert code == 1, (name, out)
        assert "failgate_leniency: not set -> 3" in out, (name, out)
        write("0")  # below the default: tighter
        code, out = _guard(capsys)
        assert code == 0, (name, out)
        git(repo, "checkout", "-q", "--", ".")
        git(repo, "clean", "-qfd")
    neutral = replace(fake, effect="neutral")
    monkeypatch.setattr(options, "OPTIONS", (*options.OPTIONS[:-1], neutral))
    sources["ini"]("3")
    code, out = _guard(capsys)
    assert code == 0, out


# --------------------------------------------------------------------------- plans

PLAN = {"format": "failgate-plan/1", "seed": 7, "source": "cases.jsonl",
        "cases": [f"q{i}" for i in range(10)]}


def _plan(repo: Path, **changed: object) -> None:
    (repo / "plan.json").write_text(json.dumps({**PLAN, **changed}))


def test_a_plan_reordered_with_its_seed_kept_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _plan(repo)
    commit(repo)
    cases = list(PLAN["cases"])  # type: ignore[call-overload]
    _plan(repo, cases=[cases[3], *cases[:3], *cases[4:]])
    code, out = _guard(capsys)
    assert code == 1, out
    assert "plan plan.json order: the order seed 7 drew -> reordered with seed 7 kept" in out
    _plan(repo, source="other words")  # the control: the same order and seed
    code, out = _guard(capsys)
    assert code == 0, out


def test_a_plan_redrawn_with_another_seed_is_named_unless_a_reason_is_written(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _plan(repo)
    commit(repo)
    _plan(repo, seed=1234, cases=list(reversed(PLAN["cases"])))  # type: ignore[call-overload]
    code, out = _guard(capsys)
    assert code == 1, out
    assert "plan plan.json seed: 7 -> 1234" in out
    path = repo / "ceilings.yaml"
    path.write_text(path.read_text().replace(
        "version: 1\n", 'version: 1\nreason: "the case set grew; seed from the base commit"\n'))
    code, out = _guard(capsys)
    assert code == 0, out


def test_a_plan_given_to_watch_in_a_workflow_and_added_in_this_change_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _workflow(repo, "failgate watch results.jsonl --plan evals/order.json -- python run.py")
    commit(repo)
    (repo / "evals").mkdir()
    (repo / "evals" / "order.json").write_text(json.dumps(PLAN))
    code, out = _guard(capsys)
    assert code == 1, out
    assert "plan evals/order.json: none -> 10 cases, seed 7, written in this change" in out


def test_a_sequential_seed_changed_to_new_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "pyproject.toml").write_text(PYPROJECT + 'addopts = "--failgate-sequential=7"\n')
    commit(repo)
    (repo / "pyproject.toml").write_text(PYPROJECT + 'addopts = "--failgate-sequential=new"\n')
    code, out = _guard(capsys)
    assert code == 1, out
    assert "failgate_sequential: 7 -> new" in out


# --------------------------------------------------------------------------- reasons


def test_a_reason_of_hangul_fillers_is_no_reason(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = repo / "ceilings.yaml"
    text = path.read_text()
    escaped = HANGUL_FILLERS.encode("ascii", "backslashreplace").decode()
    path.write_text(text.replace("  total: 180\n", "").replace(
        "version: 1\n", f'version: 1\nreason: "{escaped}"\n'))
    code, out = _guard(capsys)
    assert code == 1, out
    assert "ceilings.total: 180 -> not limited  (no reason written)" in out
    path.write_text(text.replace("  total: 180\n", "").replace(  # the control: words
        "version: 1\n", 'version: 1\nreason: "totals are gated per report now"\n'))
    code, out = _guard(capsys)
    assert code == 0, out


def test_an_instruments_reason_of_hangul_fillers_is_refused_by_the_gate(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = repo / "ceilings.yaml"
    text = path.read_text()
    escaped = HANGUL_FILLERS.encode("ascii", "backslashreplace").decode()
    path.write_text(text + "instruments:\n  judge_model: "
                    f'{{from: a, to: b, reason: "{escaped}"}}\n')
    code, out, err = run_cli(capsys, "check", "reports")
    assert code == 2, out + err
    assert "no letter or digit" in out + err
    path.write_text(text + 'instruments:\n  judge_model: {from: a, to: b, reason: "new judge"}\n')
    code, out, err = run_cli(capsys, "check", "reports")
    assert "no letter or digit" not in out + err


def test_every_character_that_renders_as_nothing_is_no_word() -> None:
    """Every format, control, separator, space and mark character, every private-use and
    unassigned one, and every default-ignorable code point (the Hangul fillers among them,
    which unicodedata calls letters) leaves a reason without words."""
    import sys
    import unicodedata

    blank = [chr(point) for point in range(sys.maxunicode + 1)
             if unicodedata.category(chr(point)) in ("Cf", "Cc", "Zs", "Zl", "Zp", "Mn", "Me",
                                                       "Co", "Cn")]
    ignorable = [chr(point) for low, high in DEFAULT_IGNORABLE for point in range(low, high + 1)]
    assert reason_words("".join(blank)) == ""
    assert reason_words("".join(ignorable)) == ""
    letters = {c for c in ignorable if unicodedata.category(c).startswith("L")}
    assert letters == set(HANGUL_FILLERS)  # what the category test alone would keep
    assert reason_words(f"a{HANGUL_FILLERS}b") == "ab"


@pytest.mark.parametrize(("after", "loosens"), [
    ("failgate plan cases.jsonl --seed 1234", True),
    ("failgate plan cases.jsonl", True),  # a fresh seed at each run: not fixed
    ("failgate plan cases.jsonl --seed 7 --out plan.json", False),
])
def test_a_workflow_drawing_its_plan_with_another_seed_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str], after: str, loosens: bool) -> None:
    _workflow(repo, "failgate plan cases.jsonl --seed 7")
    commit(repo)
    _workflow(repo, after)
    code, out = _guard(capsys)
    assert code == (1 if loosens else 0), out
    assert ("failgate plan --seed: 7 ->" in out) is loosens


def test_the_gates_own_guard_setting_compares_the_table_too(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The guard run by the gate (``failgate_guard``, as pytest's guard item runs it) is
    given the option table as ``failgate guard`` is."""
    guarded = PYPROJECT + 'failgate_guard = "main"\n'
    (repo / "pyproject.toml").write_text(guarded)
    commit(repo)
    (repo / "pyproject.toml").write_text(guarded + 'failgate_margin = "1000"\n')
    code, out, err = run_cli(capsys, "check", "reports")
    assert code == 1, out + err
    assert "failgate_margin: not set -> 1000" in out + err
    (repo / "pyproject.toml").write_text(guarded + 'failgate_margin = "3"\n')  # tighter
    code, out, err = run_cli(capsys, "check", "reports")
    assert "failgate_margin" not in out + err


@pytest.mark.parametrize(("name", "text"), [
    ("tox.ini", "[pytest]\nfailgate = reports\nfailgate_futility = 0.1\n"),
    ("setup.cfg", "[tool:pytest]\nfailgate = reports\nfailgate_futility = 0.1\n"),
    (".gitlab-ci.yml", "gate:\n  script:\n    - failgate watch r.jsonl --futility 0.1 -- ./run\n"),
    ("Makefile", "gate:\n\tPYTEST_ADDOPTS='--failgate-futility=0.1' pytest\n"),
])
def test_futility_from_other_files_of_other_kinds_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str], name: str, text: str) -> None:
    (repo / "pyproject.toml").unlink()  # the other file is the configuration now
    (repo / "pytest.ini").write_text("[pytest]\nfailgate = reports\n")
    commit(repo)
    if name in ("tox.ini", "setup.cfg"):
        (repo / "pytest.ini").unlink()
    (repo / name).write_text(text)
    code, out = _guard(capsys)
    assert code == 1, out
    assert "failgate_futility: not set -> 0.1" in out
