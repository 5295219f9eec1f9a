"""Routes around the gate that leave every number in place: the evidence a setting names
swapped, the reports narrowed on a command line, a hook that rewrites outcomes, the gate step
dropped or skipped. Each test starts from a git repository at ``main`` and makes one change as
a pull request would, then runs ``failgate guard --base main`` as CI would; each route has its
control (the same kind of change that does not loosen, or says why, passes).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import EXAMPLES, commit, example_repo, git, guard_cli, run_cli

ROOT = EXAMPLES.parent
RAG_GATE = Path(__file__).resolve().parents[2] / "data" / "rag-gate"
PYPROJECT = '[tool.pytest.ini_options]\nfailgate = "reports"\n'
REASON = 'reason: "the baseline is the new release, measured on 2026-12-01"\n'


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = example_repo(tmp_path / "project", {"pyproject.toml": PYPROJECT})
    monkeypatch.chdir(project)
    return project


_guard = guard_cli


def _workflow(repo: Path, steps: str, name: str = "gate.yml") -> Path:
    folder = repo / ".github" / "workflows"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("on: pull_request\njobs:\n  gate:\n    runs-on: ubuntu-latest\n"
                    f"    steps:\n{steps}")
    return path


def _with_baseline(repo: Path) -> None:
    shutil.copytree(RAG_GATE / "baseline", repo / "baseline")
    (repo / "baseline" / "noise_band.json").unlink()


def _swap_baseline(repo: Path) -> None:
    """The committed baseline overwritten with the regressed run (the issue's route)."""
    for name in ("run.jsonl", "attribution.jsonl"):
        shutil.copy(RAG_GATE / "topk1" / name, repo / "baseline" / name)


# --------------------------------------------------------------------------- baseline


def test_a_baseline_overwritten_in_the_ini_setting_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _with_baseline(repo)
    (repo / "pyproject.toml").write_text(PYPROJECT + 'failgate_baseline = ["baseline"]\n')
    commit(repo)
    _swap_baseline(repo)
    code, out = _guard(capsys)
    assert code == 1, out
    assert "failgate_baseline content: baseline (content" in out
    assert "2 files differ: baseline/attribution.jsonl, baseline/run.jsonl" in out


def test_a_baseline_file_overwritten_on_a_workflow_command_line_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _with_baseline(repo)
    _workflow(repo, "      - run: failgate check reports/ --baseline baseline/run.jsonl\n")
    commit(repo)
    _swap_baseline(repo)
    code, out = _guard(capsys)
    assert code == 1, out
    assert "failgate_baseline content" in out
    assert "1 file differ: baseline/run.jsonl" in out


def test_a_baseline_left_alone_or_swapped_with_a_reason_passes(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _with_baseline(repo)
    (repo / "pyproject.toml").write_text(PYPROJECT + 'failgate_baseline = ["baseline"]\n')
    commit(repo)
    (repo / "notes.txt").write_text("an unrelated file\n")
    code, out = _guard(capsys)
    assert code == 0, out
    _swap_baseline(repo)
    ceilings = repo / "ceilings.yaml"
    ceilings.write_text(REASON + ceilings.read_text())
    code, out = _guard(capsys)
    assert code == 0, out
    assert "failgate_baseline content" in out
    assert "reason:" in out


# --------------------------------------------------------------------------- hooks

EXIT_ZERO = ("import pytest\n\n\n@pytest.hookimpl(trylast=True)\n"
             "def pytest_sessionfinish(session):\n    session.exitstatus = 0\n")


def test_a_conftest_that_resets_the_exit_status_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "conftest.py").write_text(EXIT_ZERO)
    code, out = _guard(capsys)
    assert code == 1, out
    assert "hook conftest.py: none -> source" in out
    assert ("defines pytest_sessionfinish; uses exitstatus: can change outcomes or the exit "
            "status") in out


def test_a_hook_wrapper_of_any_name_in_a_nested_conftest_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "tests").mkdir()
    (repo / "tests" / "conftest.py").write_text(
        "import pytest\n\n\nclass Quiet:\n    @pytest.hookimpl(wrapper=True)\n"
        "    def pytest_runtest_makereport(self, item, call):\n        return (yield)\n\n\n"
        "@pytest.hookimpl(hookwrapper=True)\ndef anything(item):\n    yield\n")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "hook tests/conftest.py" in out
    assert "defines pytest_runtest_makereport, anything" in out


@pytest.mark.parametrize("route", ["pytest_plugins", "-p", "pytest11"])
def test_a_plugin_module_loaded_by_name_is_read_for_hooks(
        repo: Path, capsys: pytest.CaptureFixture[str], route: str) -> None:
    """A module the conftest's ``pytest_plugins``, ``-p`` in addopts or the project's
    ``pytest11`` entry point loads: the hook is in the module, not in a conftest."""
    (repo / "gatefix.py").write_text("def pytest_terminal_summary(terminalreporter):\n"
                                     "    pass\n")
    commit(repo)
    if route == "pytest_plugins":
        (repo / "conftest.py").write_text('pytest_plugins = ["gatefix"]\n')
        commit(repo)
    elif route == "-p":
        (repo / "pyproject.toml").write_text(PYPROJECT + 'addopts = "-p gatefix"\n')
        commit(repo)
    else:
        (repo / "pyproject.toml").write_text(
            '[project]\nname = "x"\n[project.entry-points.pytest11]\nfix = "gatefix"\n'
            + PYPROJECT)
        commit(repo)
    code, out = _guard(capsys)
    assert code == 0, out  # unchanged since main
    (repo / "gatefix.py").write_text(EXIT_ZERO)
    code, out = _guard(capsys)
    assert code == 1, out
    assert "hook gatefix.py: source" in out
    assert "defines pytest_sessionfinish" in out


def test_a_conftest_without_outcome_hooks_or_with_a_reason_passes(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "conftest.py").write_text("import pytest\n\n\n@pytest.fixture\ndef answer():\n"
                                      "    return 42\n")
    code, out = _guard(capsys)
    assert code == 0, out
    (repo / "conftest.py").write_text(EXIT_ZERO)
    ceilings = repo / "ceilings.yaml"
    ceilings.write_text('reason: "the exit status is set by the release job"\n'
                        + ceilings.read_text())
    code, out = _guard(capsys)
    assert code == 0, out
    assert "hook conftest.py" in out


def test_a_conftest_that_does_not_parse_is_named_never_imported(
        repo: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    marker = tmp_path / "imported"
    (repo / "conftest.py").write_text(f"open({str(marker)!r}, 'w').close()\ndef (:\n")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "defines (does not parse)" in out
    assert not marker.exists()


# --------------------------------------------------------------------------- the gate step

STEPS = ("      - uses: actions/checkout@v4\n"
         "      - run: failgate check reports\n"
         "      - uses: octo-org/pytest-failgate@v1\n        with:\n          reports: reports\n"
         "      - run: python -I -m pytest_failgate.ci reports --guard-base origin/main\n"
         "      - run: pytest --failgate reports\n")


@pytest.mark.parametrize(("step", "kind"), [
    ("      - run: failgate check reports\n", "failgate check"),
    ("      - uses: octo-org/pytest-failgate@v1\n        with:\n          reports: reports\n",
     "the failgate Action"),
    ("      - run: python -I -m pytest_failgate.ci reports --guard-base origin/main\n",
     "the CI step python -m pytest_failgate.ci"),
    ("      - run: pytest --failgate reports\n", "pytest --failgate"),
])
def test_a_gate_step_removed_from_its_workflow_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str], step: str, kind: str) -> None:
    gate = _workflow(repo, STEPS)
    commit(repo)
    gate.write_text(gate.read_text().replace(step, ""))
    code, out = _guard(capsys)
    assert code == 1, out
    assert "gate step .github/workflows/gate.yml:" in out
    assert f"job gate ({kind}): runs the gate -> removed" in out


def test_the_gate_job_or_workflow_removed_is_named_and_a_renamed_one_is_not(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gate = _workflow(repo, "      - run: failgate check reports\n")
    commit(repo)
    text = gate.read_text()
    gate.unlink()
    _workflow(repo, "      - run: failgate check reports\n", name="renamed.yml")
    code, out = _guard(capsys)
    assert code == 0, out  # the same step, in another file
    (repo / ".github" / "workflows" / "renamed.yml").write_text(
        text.replace("failgate check reports", "echo skipped"))
    code, out = _guard(capsys)
    assert code == 1, out
    assert "(failgate check): runs the gate -> removed" in out


@pytest.mark.parametrize(("edit", "named"), [
    ("      - if: false\n        run: failgate check reports\n", "step if: not set -> false"),
    ("      - run: failgate check reports\n        continue-on-error: true\n",
     "step continue-on-error: not set -> true"),
])
def test_a_gate_step_skipped_or_allowed_to_fail_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str], edit: str, named: str) -> None:
    gate = _workflow(repo, "      - run: failgate check reports\n")
    commit(repo)
    gate.write_text(gate.read_text().replace("      - run: failgate check reports\n", edit))
    code, out = _guard(capsys)
    assert code == 1, out
    assert named in out


def test_a_gate_job_skipped_or_a_trigger_dropped_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gate = _workflow(repo, "      - run: pytest\n")  # the ini file turns the gate on
    commit(repo)
    gate.write_text(gate.read_text().replace("    runs-on:", "    continue-on-error: true\n"
                                             "    runs-on:"))
    code, out = _guard(capsys)
    assert code == 1, out
    assert "(pytest (the ini file turns the gate on)) job continue-on-error: not set -> true" \
        in out
    gate.write_text(gate.read_text().replace("on: pull_request", "on: workflow_dispatch"))
    code, out = _guard(capsys)
    assert "on: pull_request -> workflow_dispatch" in out


def test_a_gitlab_gate_job_allowed_to_fail_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ci = repo / ".gitlab-ci.yml"
    ci.write_text("gate:\n  script:\n    - pip install pytest-failgate\n"
                  "    - failgate check reports\n")
    commit(repo)
    ci.write_text(ci.read_text() + "  allow_failure: true\n")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "gate step .gitlab-ci.yml:1 job gate (failgate check) job allow_failure: " \
        "not set -> true" in out


def test_other_steps_edited_and_a_gate_step_dropped_with_a_reason_pass(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gate = _workflow(repo, STEPS)
    commit(repo)
    gate.write_text(gate.read_text().replace("actions/checkout@v4", "actions/checkout@v5"))
    code, out = _guard(capsys)
    assert code == 0, out
    gate.write_text(gate.read_text().replace("      - run: failgate check reports\n", ""))
    ceilings = repo / "ceilings.yaml"
    ceilings.write_text('reason: "the Action step runs the same check"\n'
                        + ceilings.read_text())
    code, out = _guard(capsys)
    assert code == 0, out
    assert "(failgate check): runs the gate -> removed" in out


# --------------------------------------------------------------------------- command lines


@pytest.mark.parametrize(("before", "after"), [
    ("failgate check reports/", "failgate check reports/real100"),
    ("failgate check --ceilings ceilings.yaml reports/",
     "failgate check --ceilings ceilings.yaml reports/real100"),
    ("python -I -m pytest_failgate.ci reports/ --out-dir out",
     "python -I -m pytest_failgate.ci reports/real100 --out-dir out"),
    (".venv/bin/failgate guard --base origin/main reports/",
     ".venv/bin/failgate guard --base origin/main reports/real100"),
])
def test_report_paths_narrowed_on_a_command_line_are_named(
        repo: Path, capsys: pytest.CaptureFixture[str], before: str, after: str) -> None:
    gate = _workflow(repo, f"      - run: {before}\n")
    commit(repo)
    code, out = _guard(capsys)
    assert code == 0, out
    gate.write_text(gate.read_text().replace(before, after))
    code, out = _guard(capsys)
    assert code == 1, out
    # named by the command line that sets it, not as PYTEST_ADDOPTS
    assert (f".github/workflows/gate.yml:6 (- run: {after}) failgate: reports/ -> "
            "reports/real100") in out
    assert "PYTEST_ADDOPTS" not in out


def test_an_option_value_is_not_read_as_a_report_path(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gate = _workflow(repo, "      - run: failgate init reports --reason first\n")
    commit(repo)
    gate.write_text(gate.read_text().replace("--reason first", "--reason second --force"))
    code, out = _guard(capsys)
    assert code == 0, out


def test_a_baseline_given_in_the_actions_args_is_compared_by_content(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _with_baseline(repo)
    _workflow(repo, "      - uses: octo-org/pytest-failgate@v1\n        with:\n"
              "          reports: reports\n          args: --baseline baseline --strict\n")
    commit(repo)
    code, out = _guard(capsys)
    assert code == 0, out
    _swap_baseline(repo)
    code, out = _guard(capsys)
    assert code == 1, out
    assert (".github/workflows/gate.yml:9 (args: --baseline baseline --strict) "
            "failgate_baseline content") in out


def test_a_global_option_before_the_command_is_not_the_command(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gate = _workflow(repo, "      - run: failgate --color never check reports/\n")
    commit(repo)
    gate.write_text(gate.read_text().replace("reports/", "reports/real100"))
    code, out = _guard(capsys)
    assert code == 1, out
    assert "failgate: reports/ -> reports/real100" in out


def test_a_step_that_only_names_pytest_is_not_a_gate_step(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    steps = ("      - run: pip install pytest pytest-failgate\n"
             "      - run: echo \"then failgate check runs\"\n"
             "      - run: uv run python -m pytest\n")
    gate = _workflow(repo, steps)
    commit(repo)
    text = gate.read_text().replace("      - run: pip install pytest pytest-failgate\n", "")
    gate.write_text(text.replace("      - run: echo", "      - run: printf"))
    code, out = _guard(capsys)
    assert code == 0, out
    gate.write_text(gate.read_text().replace("      - run: uv run python -m pytest\n", ""))
    code, out = _guard(capsys)
    assert code == 1, out
    assert "(pytest (the ini file turns the gate on)): runs the gate -> removed" in out


def test_a_paths_filter_added_to_the_gate_workflows_trigger_is_named(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gate = _workflow(repo, "      - run: failgate check reports\n")
    commit(repo)
    gate.write_text(gate.read_text().replace(
        "on: pull_request", "on:\n  pull_request:\n    paths: [docs/**]"))
    code, out = _guard(capsys)
    assert code == 1, out
    assert "on: pull_request -> pull_request {'paths': ['docs/**']}" in out


def test_a_baseline_ci_downloads_is_not_compared_by_content(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Not committed at the ref (an artifact of main's run, fetched by the job): there is no
    reviewed content to compare, so the files CI put there are not a change."""
    (repo / "pyproject.toml").write_text(PYPROJECT + 'failgate_baseline = ["baseline"]\n')
    commit(repo)
    _with_baseline(repo)  # downloaded, untracked
    code, out = _guard(capsys)
    assert code == 0, out


def test_an_actions_reports_input_narrowed_is_named_by_its_line(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gate = _workflow(repo, "      - name: gate\n        uses: octo-org/pytest-failgate@v1\n"
                     "        with:\n          reports: reports/\n"
                     "      - run: 'echo reports: elsewhere'\n")
    commit(repo)
    gate.write_text(gate.read_text().replace("reports: reports/", "reports: reports/real100"))
    code, out = _guard(capsys)
    assert code == 1, out
    assert (".github/workflows/gate.yml:9 (reports: reports/real100) failgate: reports/ -> "
            "reports/real100") in out


@pytest.mark.parametrize("importing", ["import gatefix\n", "from gatefix import register\n",
                                       "from . import gatefix\n"])
def test_a_module_a_conftest_imports_is_read_for_hooks(
        repo: Path, capsys: pytest.CaptureFixture[str], importing: str) -> None:
    """The conftest registers a module's hooks (``pluginmanager.register``): the module
    holds them, the conftest does not change."""
    (repo / "conftest.py").write_text(importing + "\n\ndef pytest_configure(config):\n"
                                      "    config.pluginmanager.register(gatefix)\n")
    (repo / "gatefix.py").write_text("def register():\n    pass\n")
    commit(repo)
    (repo / "gatefix.py").write_text(EXIT_ZERO)
    code, out = _guard(capsys)
    assert code == 1, out
    assert "hook gatefix.py: source" in out
    assert "hook conftest.py" not in out


def test_the_issues_route_a_baseline_swapped_turns_a_fail_into_a_pass_and_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The regressed run (top_k 5 -> 1) fails against the committed baseline; the baseline
    overwritten with the regressed run makes the same command pass; the guard names it."""
    project = tmp_path / "rag"
    shutil.copytree(RAG_GATE / "topk1", project / "reports")
    _with_baseline(project)
    (project / "pyproject.toml").write_text(
        PYPROJECT + 'failgate_baseline = ["baseline"]\nfailgate_baseline_window = "200"\n')
    monkeypatch.chdir(project)
    run_cli(capsys, "init", "reports")  # the ceilings at this run's counts
    assert (project / "ceilings.yaml").is_file()
    git(project, "init", "-q", "-b", "main")
    commit(project)
    assert run_cli(capsys, "check", "reports")[0] == 1
    _swap_baseline(project)
    assert run_cli(capsys, "check", "reports")[0] == 0
    code, out = _guard(capsys)
    assert code == 1, out
    assert "pyproject.toml failgate_baseline content: baseline (content" in out
