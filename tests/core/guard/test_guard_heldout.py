"""Routes a held-out attacker found around the merged guard: code in a ``conftest.py``
that defines no hook yet leaves the process with 0 or replaces failgate's code without
naming it, and a CI file that switches plugin autoloading off (the gate is then not
loaded, as with ``-p no:failgate``). Each starts from a git repository at ``main`` and makes
one change as a pull request would; each has its control.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import EXAMPLES, cases_for, commit, git, guard_cli, run_cli, write_jsonl

ROOT = EXAMPLES.parent
PYPROJECT = '[tool.pytest.ini_options]\nfailgate = "reports"\n'
WORKFLOW = ("on: pull_request\njobs:\n  gate:\n    runs-on: ubuntu-latest\n{env}"
            "    steps:\n      - run: {run}pytest\n")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = tmp_path / "project"
    shutil.copytree(EXAMPLES / "reports", project / "reports")
    shutil.copy(ROOT / "ceilings.yaml", project / "ceilings.yaml")
    (project / "pyproject.toml").write_text(PYPROJECT)
    (project / "conftest.py").write_text("import pytest\n\n\n@pytest.fixture\ndef answer():\n"
                                         "    return 42\n")
    (project / ".github" / "workflows").mkdir(parents=True)
    (project / ".github" / "workflows" / "gate.yml").write_text(
        WORKFLOW.format(env="", run=""))
    git(project, "init", "-q", "-b", "main")
    commit(project)
    monkeypatch.chdir(project)
    return project


_guard = guard_cli


@pytest.mark.parametrize(("source", "uses"), [
    # pytest returns 1, then the interpreter's exit handlers run: the process exits 0
    ("import atexit, os\natexit.register(lambda: os._exit(0))\n", "uses atexit, _exit"),
    ("from os import _exit as leave\nimport atexit\natexit.register(leave, 0)\n",
     "uses _exit, atexit"),
    # failgate's code replaced without its name written anywhere
    ('held = __import__("pytest_fa" + "ilgate.plugin.exitstatus", fromlist=["x"])\n'
     "held.held_status = lambda stored, floor: 0\n", "uses __import__"),
    ("import sys\nfor name, module in list(sys.modules.items()):\n"
     '    if name.endswith("exitstatus"):\n        module.passing = lambda status: True\n',
     "uses modules, exitstatus"),
    ('import os\nleave = getattr(os, "_ex" + "it")\n', "uses getattr"),
])
def test_conftest_code_that_reaches_past_its_hooks_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str], source: str, uses: str) -> None:
    (repo / "conftest.py").write_text(source)
    code, out = _guard(capsys)
    assert code == 1, out
    assert "hook conftest.py: source" in out
    assert f"{uses}: can change outcomes or the exit status" in out


def test_a_conftest_hook_and_what_it_reaches_for_are_both_said(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "tests").mkdir()
    (repo / "tests" / "conftest.py").write_text(
        "def pytest_sessionfinish(session):\n    session.exitstatus = 0\n")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "defines pytest_sessionfinish; uses exitstatus: can change" in out


def test_a_conftest_edit_that_reaches_for_nothing_passes_and_a_reason_excuses(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "conftest.py").write_text("import os\nimport pytest\n\n\n@pytest.fixture\n"
                                      "def answer():\n    return int(os.environ.get('A', 41))"
                                      " + 1\n")
    code, out = _guard(capsys)
    assert code == 0, out
    (repo / "conftest.py").write_text("import atexit\natexit.register(print, 'bye')\n")
    ceilings = repo / "ceilings.yaml"
    ceilings.write_text('reason: "the conftest prints a farewell"\n' + ceilings.read_text())
    code, out = _guard(capsys)
    assert code == 0, out
    assert "hook conftest.py" in out
    assert 'reason: "the conftest prints a farewell"' in out


@pytest.mark.parametrize(("env", "run", "line"), [
    ('    env:\n      PYTEST_DISABLE_PLUGIN_AUTOLOAD: "1"\n', "", 6),
    ("    env:\n      PYTEST_DISABLE_PLUGIN_AUTOLOAD: true\n", "", 6),
    ("", "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 ", 6),
    ("", "export PYTEST_DISABLE_PLUGIN_AUTOLOAD=yes && ", 6),
])
def test_plugin_autoloading_switched_off_in_a_workflow_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str], env: str, run: str,
        line: int) -> None:
    """With autoloading off pytest loads no installed plugin: the ini file's ``failgate``
    key is an unknown key, no gate item runs and the other tests pass with 0."""
    (repo / ".github" / "workflows" / "gate.yml").write_text(
        WORKFLOW.format(env=env, run=run))
    code, out = _guard(capsys)
    assert code == 1, out
    assert f".github/workflows/gate.yml:{line} (" in out
    assert "addopts: none -> PYTEST_DISABLE_PLUGIN_AUTOLOAD=1" in out


def test_plugin_autoloading_in_tox_setenv_is_named_and_an_empty_value_is_not(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / ".github" / "workflows" / "gate.yml").write_text(
        WORKFLOW.format(env='    env:\n      PYTEST_DISABLE_PLUGIN_AUTOLOAD: ""\n', run=""))
    code, out = _guard(capsys)
    assert code == 0, out  # pytest reads an empty value as off
    (repo / "tox.ini").write_text("[testenv]\nsetenv =\n    PYTEST_DISABLE_PLUGIN_AUTOLOAD=1\n"
                                  "commands = pytest\n")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "tox.ini:3 (PYTEST_DISABLE_PLUGIN_AUTOLOAD=1)" in out


MATRIX = ("on: pull_request\njobs:\n  gate:\n    runs-on: ubuntu-latest\n    strategy:\n"
          "      matrix:\n        python: [\"3.11\", \"3.12\"]\n        experimental: [false]\n"
          "    continue-on-error: ${{ matrix.experimental }}\n"
          "    steps:\n      - run: failgate check reports\n")
ENV_IF = ("on: pull_request\nenv:\n  GATE: \"on\"\njobs:\n  gate:\n    runs-on: ubuntu-latest\n"
          "    steps:\n      - run: failgate check reports\n        if: env.GATE == 'on'\n")


NARROWED = ('python: ["3.11", "3.12"]', 'python: ["3.11"]')
UNRELATED = ("jobs:\n", "jobs:\n  lint:\n    runs-on: ubuntu-latest\n    env:\n"
             "      GATE: \"off\"\n    steps:\n      - run: ruff check\n")


@pytest.mark.parametrize(("base", "control", "change", "shown"), [
    # GitHub's own idiom: the condition stays as written, the matrix turns it on
    (MATRIX, NARROWED, ("experimental: [false]", "experimental: [true]"),
     'matrix.experimental {"experimental": [false]}) -> ${{ matrix.experimental }} '
     '(matrix.experimental {"experimental": [true]})'),
    (MATRIX, NARROWED, ("experimental: [false]\n",
                        "experimental: [false]\n        include:\n"
                        "          - experimental: true\n"),
     '"include": [{"experimental": true}]'),
    (ENV_IF, UNRELATED, ('GATE: "on"', 'GATE: "off"'),
     "step if: env.GATE == 'on' (env.GATE on) -> env.GATE == 'on' (env.GATE off)"),
])
def test_a_gate_condition_kept_while_what_it_reads_changes_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str], base: str,
        control: tuple[str, str], change: tuple[str, str], shown: str) -> None:
    workflow = repo / ".github" / "workflows" / "gate.yml"
    workflow.write_text(base)
    commit(repo)
    workflow.write_text(base.replace(*control))
    code, out = _guard(capsys)
    assert code == 0, out  # another matrix name, or another job's env, changed
    workflow.write_text(base.replace(*change))
    code, out = _guard(capsys)
    assert code == 1, out
    assert "gate step .github/workflows/gate.yml:" in out
    assert shown in out


def _initialised(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A run's report committed with the ceilings ``failgate init`` set from it (which
    records its case count under ``instrument:``)."""
    project = tmp_path / "recorded"
    cases = cases_for({"retrieval_miss": 30, "generator_hallucination": 10}, passed=100, seed=4)
    write_jsonl(project / "reports" / "run.jsonl", cases)
    git(project, "init", "-q", "-b", "main")
    code, out, _ = run_cli(capsys, "init", str(project / "reports"), "--ceilings",
                           str(project / "ceilings.yaml"))
    assert code == 0, out
    assert 'run: {cases: "140"}' in (project / "ceilings.yaml").read_text()
    commit(project)
    return project


@pytest.mark.parametrize("told", [True, False])
def test_a_report_renamed_away_from_its_recorded_case_set_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        told: bool) -> None:
    """A run cut to 101 of its 140 cases is inconclusive as ``run``; written as ``run2``
    no recorded case set holds it, and the gate judges it (and passes)."""
    project = _initialised(tmp_path, capsys)
    monkeypatch.chdir(project)
    lines = (project / "reports" / "run.jsonl").read_text().splitlines(keepends=True)
    (project / "reports" / "run.jsonl").write_text("".join(lines[:101]))
    assert run_cli(capsys, "check", "reports")[0] == 3  # inconclusive: it stopped
    (project / "reports" / "run.jsonl").rename(project / "reports" / "run2.jsonl")
    assert run_cli(capsys, "check", "reports")[0] == 0  # the route: judged, and passes
    code, out, err = run_cli(capsys, "guard", *(["reports"] if told else []), "--base", "main")
    assert "Traceback" not in err
    assert code == 1, out
    assert "instrument.run: applies to a report of the run -> applies to no report" in out
    assert "is judged now, not inconclusive" in out


def test_a_recorded_report_left_in_place_passes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    project = _initialised(tmp_path, capsys)
    monkeypatch.chdir(project)
    (project / "notes.txt").write_text("an unrelated file\n")
    for args in (["reports"], []):
        code, out, _ = run_cli(capsys, "guard", *args, "--base", "main")
        assert code == 0, out


@pytest.mark.parametrize(("name", "source"), [
    # with ``PYTHONPATH: .`` in the workflow this ends pytest's process with 0
    ("sitecustomize.py", "import atexit, os\natexit.register(lambda: os._exit(0))\n"),
    ("tools/usercustomize.py", "print('hello')\n"),
    ("src/gate.pth", "import gatefix\n"),
])
def test_a_file_python_runs_at_its_start_is_named_whatever_it_holds(
        repo: Path, capsys: pytest.CaptureFixture[str], name: str, source: str) -> None:
    (repo / name).parent.mkdir(parents=True, exist_ok=True)
    (repo / name).write_text(source)
    code, out = _guard(capsys)
    assert code == 1, out
    assert f"hook {name}: none -> source" in out
    assert "runs at every start of Python whose path holds its folder" in out
    commit(repo)
    code, out = _guard(capsys)
    assert code == 0, out  # unchanged since the ref


ACTION = ("on: pull_request\njobs:\n  gate:\n    runs-on: ubuntu-latest\n    steps:\n"
          "      - uses: octo-org/pytest-failgate@v1\n        with:\n          reports: reports\n")


@pytest.mark.parametrize(("status", "shown"), [
    ('""', "step with.status: the Action's default -> none: no commit status"),
    ("failgate-old", "step with.status: the Action's default -> failgate-old"),
])
def test_the_actions_status_emptied_or_renamed_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str], status: str, shown: str) -> None:
    workflow = repo / ".github" / "workflows" / "gate.yml"
    workflow.write_text(ACTION)
    commit(repo)
    workflow.write_text(ACTION + "          comment: true\n")
    code, out = _guard(capsys)
    assert code == 0, out  # another input changed
    workflow.write_text(ACTION + f"          status: {status}\n")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "gate step .github/workflows/gate.yml:6 job gate (the failgate Action)" in out
    assert shown in out


@pytest.mark.parametrize("step", [
    "      - run: gh api repos/$GITHUB_REPOSITORY/statuses/$SHA -f state=success"
    " -f context=failgate\n",
    "      - run: >-\n          curl -X POST https://api.github.com/repos/o/r/statuses/x"
    " -d '{\"state\":\"success\",\"context\":\"failgate\"}'\n",
    "      - uses: actions/github-script@v7\n        with:\n          script: |\n"
    "            github.rest.repos.createCommitStatus({state: 'success', context: 'failgate'})\n",
])
def test_a_step_added_that_sets_a_commit_status_itself_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str], step: str) -> None:
    """A required status is met by its name: a step of the pull request's workflow can
    report ``failgate: success`` however the gate ended."""
    workflow = repo / ".github" / "workflows" / "gate.yml"
    workflow.write_text(ACTION)
    commit(repo)
    workflow.write_text(ACTION + "      - run: echo statuses are set by the Action\n")
    code, out = _guard(capsys)
    assert code == 0, out  # a step that only names statuses
    workflow.write_text(ACTION + step)
    code, out = _guard(capsys)
    assert code == 1, out
    assert "status step .github/workflows/gate.yml:9 job gate" in out
    assert "sets a commit status or check run itself" in out
    commit(repo)
    code, out = _guard(capsys)
    assert code == 0, out  # there at the ref: this change did not add it


CHECK = ("on: pull_request\njobs:\n  gate:\n    runs-on: ubuntu-latest\n    steps:\n"
         "      - run: {run}\n{more}")


@pytest.mark.parametrize(("run", "more", "shown"), [
    ("failgate check reports || true", "", "failgate ... ||"),
    ("failgate check reports | tee gate.log", "", "failgate ... |"),
    ("pytest --failgate reports &", "", "pytest ... &"),
    ("set +e; failgate check reports; echo done", "", "set +e"),
    ("trap 'exit 0' EXIT; failgate check reports", "", "trap 'exit 0' EXIT"),
    ("failgate check reports", "        shell: bash {0}\n", "shell bash {0} (no -e)"),
])
def test_a_gate_commands_failure_discarded_in_its_shell_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str], run: str, more: str,
        shown: str) -> None:
    """GitHub runs a step's script with ``bash -e``: a failing gate ends the step red,
    unless the script reads its status (``||``), loses it in a pipe, or stops stopping."""
    workflow = repo / ".github" / "workflows" / "gate.yml"
    command = "pytest --failgate reports" if run.startswith("pytest") else (
        "failgate check reports")
    workflow.write_text(CHECK.format(run=command, more=""))
    commit(repo)
    for kept in (f"{command} && echo passed", f'{command} --color "a|b"',
                 f"{command}  # no || here"):
        workflow.write_text(CHECK.format(run=kept, more="        shell: bash\n"))
        code, out = _guard(capsys)
        assert code == 0, out
    workflow.write_text(CHECK.format(run=run, more=more))
    code, out = _guard(capsys)
    assert code == 1, out
    assert f"step exit status: not set -> {shown}" in out


def test_a_gitlab_gate_line_whose_failure_is_discarded_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gitlab = repo / ".gitlab-ci.yml"
    gitlab.write_text("gate:\n  script:\n    - failgate check reports\n")
    commit(repo)
    gitlab.write_text("gate:\n  script:\n    - failgate check reports || echo failed\n")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "gate step .gitlab-ci.yml:1 job gate (failgate check) step exit status" in out


@pytest.mark.parametrize(("job", "step", "shown"), [
    ("", "        working-directory: sub\n", "step working-directory: not set -> sub"),
    ("    defaults:\n      run:\n        working-directory: sub\n", "",
     "step working-directory: not set -> sub"),
    ("    defaults:\n      run:\n        shell: bash {0}\n", "",
     "step exit status: not set -> shell bash {0} (no -e)"),
])
def test_a_gate_step_moved_to_another_folder_or_shell_by_defaults_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str], job: str, step: str,
        shown: str) -> None:
    """In ``sub/`` the gate reads ``sub/ceilings.yaml`` (written loose by the same change)
    and ``sub/reports``; the guard, run from the top, compares the top's file."""
    workflow = repo / ".github" / "workflows" / "gate.yml"
    workflow.write_text(CHECK.format(run="failgate check reports", more=""))
    commit(repo)
    (repo / "sub").mkdir()
    shutil.copytree(repo / "reports", repo / "sub" / "reports")
    (repo / "sub" / "ceilings.yaml").write_text("version: 1\ntaxonomy: rag\nceilings:\n"
                                                "  unknown: 1000\n")
    workflow.write_text(CHECK.format(run="failgate check reports", more=step).replace(
        "    steps:\n", job + "    steps:\n"))
    code, out = _guard(capsys)
    assert code == 1, out
    assert shown in out


def test_a_job_calling_a_reusable_workflow_that_runs_the_gate_skipped_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The called file's name says nothing: it runs the gate because a step of it does."""
    folder = repo / ".github" / "workflows"
    (folder / "gate.yml").unlink()
    (folder / "checks.yml").write_text(
        "on: workflow_call\njobs:\n  run:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: failgate check reports\n")
    caller = ("on: pull_request\njobs:\n  lint:\n    uses: ./.github/workflows/lint.yml\n"
              "  checks:\n    uses: ./.github/workflows/checks.yml\n")
    (folder / "ci.yml").write_text(caller)
    commit(repo)
    (folder / "ci.yml").write_text(caller.replace("lint.yml\n", "lint.yml\n    if: false\n"))
    code, out = _guard(capsys)
    assert code == 0, out  # the lint job runs no gate
    (folder / "ci.yml").write_text(caller + "    if: false\n")
    code, out = _guard(capsys)
    assert code == 1, out
    assert ("gate step .github/workflows/ci.yml:5 job checks (reusable workflow "
            "./.github/workflows/checks.yml) job if: not set -> false") in out


@pytest.mark.parametrize(("source", "uses"), [
    ("import atexit, os\n\n\ndef test_fine():\n    atexit.register(os._exit, 0)\n",
     "uses atexit, _exit"),
    ("import pytest_failgate.plugin.exitstatus as held\n\nheld.passing = bool\n",
     "uses exitstatus, pytest_failgate"),
])
def test_a_test_module_whose_code_ends_the_process_or_reaches_failgate_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str], source: str, uses: str) -> None:
    """pytest imports a test module and runs its tests before it exits: the same exit
    handler as a conftest's, in a file no plugin list names."""
    (repo / "tests").mkdir()
    (repo / "tests" / "test_everyday.py").write_text(
        "import sys\n\n\ndef test_patch(monkeypatch):\n"
        "    monkeypatch.setitem(sys.modules, 'x', None)\n    assert getattr(sys, 'path')\n")
    code, out = _guard(capsys)
    assert code == 0, out  # what tests do every day
    (repo / "tests" / "test_gate.py").write_text(source)
    code, out = _guard(capsys)
    assert code == 1, out
    assert "hook tests/test_gate.py: none -> source" in out
    assert f"{uses}: can change outcomes or the exit status" in out
    commit(repo)
    (repo / "tests" / "test_gate.py").write_text(source + "\n\ndef test_more():\n    pass\n")
    code, out = _guard(capsys)
    assert code == 1, out  # edited since the ref
    assert "hook tests/test_gate.py: source" in out
