"""Every front end gives one verdict: each built-in reader's real reports x each front end
x the layouts projects have (issue 35's table, as tests).

In this process where it can be (``failgate check``, the CI step, the Action's gate step,
MCP's ``check``, the pre-commit hooks' entries, pytest through pytester), one real
subprocess per front end and layout: a ``.venv`` inside the project (the CI step, pytest,
the Action's own steps), ``src/`` with ``testpaths`` and ``addopts``, and xdist. The guard
is quiet on the unchanged repository and on a pull request that only changes reports, and
catches a loosening on every front end that guards.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from frontends_matrix import (
    Answer,
    action_gate_step,
    check,
    ci_step,
    clean_env,
    commit,
    formats,
    git,
    loosen,
    make_project,
    mcp_check,
    precommit_check,
    precommit_guard,
    pytest_answer,
    result_of,
    rewrite_report,
    venv_inside,
)

from pytest_failgate.core.reports.builtin import builtin_readers

FORMATS = formats()
# a few readers for the layouts run in subprocesses (each front end meets every reader in
# this process): failgate's own sibling format, and two other tools'
LAYOUT_FORMATS = ["promptfoo", "lm-eval"]


def test_every_built_in_reader_has_real_reports_in_the_matrix() -> None:
    assert set(FORMATS) == {reader.name for reader in builtin_readers()}
    assert set(LAYOUT_FORMATS) <= set(FORMATS)


@pytest.fixture
def project(request: pytest.FixtureRequest, pytester: pytest.Pytester) -> Path:
    return make_project(pytester.path / "project", request.param, FORMATS[request.param])


@pytest.mark.parametrize("project", sorted(FORMATS), indirect=True)
def test_every_front_end_gives_the_same_verdict_and_failing_items(
        project: Path, pytester: pytest.Pytester, tmp_path: Path) -> None:
    out = tmp_path / "out"
    expected = check(project, out / "check.json")
    assert expected.verdict in ("pass", "fail", "inconclusive"), expected
    answers = {
        "CI step": ci_step(project, out / "ci"),
        "the Action's gate step": action_gate_step(project, out / "action"),
        "MCP check": mcp_check(project),
        "pre-commit failgate-check": precommit_check(project, out / "hook.json"),
    }
    pytester.chdir()
    ran = pytester.runpytest_inprocess(f"--failgate={project / 'reports'}",
                                       f"--failgate-ceilings={project / 'ceilings.yaml'}",
                                       f"--failgate-json={out / 'pytest.json'}",
                                       "-p", "no:cacheprovider", "-rf", str(project))
    answers["pytest"] = pytest_answer(ran.ret, out / "pytest.json", ran.stdout.str())
    relative = {front: Answer(a.verdict, frozenset(i.rsplit("ceilings.yaml::", 1)[-1]
                                                   for i in a.failed))
                for front, a in answers.items()}
    mine = Answer(expected.verdict, frozenset(i.rsplit("ceilings.yaml::", 1)[-1]
                                              for i in expected.failed))
    assert relative == dict.fromkeys(answers, mine)
    assert precommit_guard(project) == 0  # unchanged: the guard hook is quiet


# every reader in CI (slow); two in the default run
PR_FORMATS = [name if name in LAYOUT_FORMATS else pytest.param(name, marks=pytest.mark.slow)
              for name in sorted(FORMATS)]


@pytest.mark.parametrize("project", PR_FORMATS, indirect=True)
def test_the_guard_is_quiet_on_a_report_only_pull_request_and_catches_a_loosening(
        project: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    git(project, "checkout", "-qb", "change")
    for report in (project / "reports").iterdir():
        rewrite_report(report)
    commit(project, "the reports of a new run")
    gate = check(project, out / "check.json")
    assert ci_step(project, out / "ci") == gate  # the guard quiet: the gate's verdict
    assert action_gate_step(project, out / "action") == gate
    guard = json.loads((out / "ci" / "verdict.json").read_text())["guard"]
    assert guard == "pass"
    loosen(project / "ceilings.yaml")
    loosened = ci_step(project, out / "ci2")
    assert loosened.verdict == "fail"
    assert "ceilings.yaml::guard" in {i.rsplit("/", 1)[-1] for i in loosened.failed}
    assert action_gate_step(project, out / "action2").verdict == "fail"
    assert precommit_guard(project) == 1  # the hook compares with HEAD: the edit is new


@pytest.mark.parametrize("project", ["promptfoo"], indirect=True)
def test_guard_base_none_means_no_guard_on_the_command_line_as_in_the_action(
        project: Path, tmp_path: Path) -> None:
    loosen(project / "ceilings.yaml")  # a guard would fail this; no guard: the gate's verdict
    gate = check(project, tmp_path / "check.json")
    assert ci_step(project, tmp_path / "ci", guard="none") == gate
    assert json.loads((tmp_path / "ci" / "verdict.json").read_text())["guard"] is None
    assert action_gate_step(project, tmp_path / "action", guard="none") == gate


# -------------------------------------------------------------- layouts, in real processes


@pytest.mark.parametrize("project", [LAYOUT_FORMATS[0], *(
    pytest.param(name, marks=pytest.mark.slow) for name in LAYOUT_FORMATS[1:])], indirect=True)
def test_a_venv_inside_the_project_is_the_installed_failgate(
        project: Path, tmp_path: Path) -> None:
    """uv's default: ``.venv`` inside the project. The CI step (as the Action runs it) and
    pytest run from it and agree with ``check``."""
    expected = check(project, tmp_path / "check.json")
    python = venv_inside(project)
    env = clean_env()
    step = subprocess.run([str(python), "-I", "-m", "pytest_failgate.ci", "reports",
                           "--guard-base", "main", "--out-dir", "out/ci"], cwd=project,
                          env=env, capture_output=True, text=True, check=False)
    assert "of the checkout it would judge" not in step.stderr, step.stderr
    verdict = json.loads((project / "out" / "ci" / "verdict.json").read_text())
    assert (verdict["verdict"], frozenset(verdict["failed"])) == (expected.verdict,
                                                                  expected.failed)
    assert verdict["guard"] == "pass"
    assert step.returncode == {"pass": 0, "fail": 1, "inconclusive": 3}[expected.verdict]
    ran = subprocess.run([str(python), "-m", "pytest", "--failgate=reports", "-p",
                          "no:cacheprovider", "-rf", "--failgate-json=out/pytest.json"],
                         cwd=project, env=env, capture_output=True, text=True, check=False)
    assert "of the checkout it would judge" not in ran.stdout + ran.stderr
    answer = pytest_answer(ran.returncode, project / "out" / "pytest.json", ran.stdout)
    assert answer == expected, ran.stdout + ran.stderr


@pytest.mark.parametrize("project", ["promptfoo"], indirect=True)
def test_a_failgate_folder_of_the_checkout_is_refused_on_both_paths_and_named_by_the_guard(
        project: Path, tmp_path: Path) -> None:
    """A pull request adding ``pytest_failgate/`` (a copy of failgate, so its own check
    runs): ``python -m`` would run it in place of the installed one. The CI step and pytest
    refuse it, saying what to run instead; the guard names it; a ``.venv`` beside it is
    still installed."""
    git(project, "checkout", "-qb", "change")
    shutil.copytree(Path(__file__).resolve().parents[2] / "pytest_failgate",
                    project / "pytest_failgate", ignore=shutil.ignore_patterns("__pycache__"))
    commit(project, "a copy of failgate")
    env = clean_env()
    step = subprocess.run([sys.executable, "-m", "pytest_failgate.ci", "reports",
                           "--out-dir", "out"], cwd=project, env=env, capture_output=True,
                          text=True, check=False)
    assert step.returncode == 2, step.stdout + step.stderr
    assert "pytest_failgate of the checkout it would judge (git tracks it)" in step.stderr
    assert "run `python -I -m pytest_failgate.ci`" in step.stderr
    ran = subprocess.run([sys.executable, "-m", "pytest", "--failgate=reports", "-p",
                          "no:cacheprovider"], cwd=project, env=env, capture_output=True,
                         text=True, check=False)
    assert ran.returncode == 4, ran.stdout + ran.stderr  # a usage error: the gate refused
    assert "of the checkout it would judge (git tracks it)" in ran.stderr
    assert "run `pytest` rather than `python -m pytest`" in ran.stderr
    guarded = ci_step(project, tmp_path / "ci")  # the installed failgate (this process)
    assert guarded.verdict == "fail"
    assert "ceilings.yaml::guard" in guarded.failed
    said = (tmp_path / "ci" / "failgate.md").read_text(encoding="utf-8")
    assert "pytest_failgate/ (a copy of failgate in the repository" in said


def test_under_github_a_refusal_is_an_error_annotation_and_sets_the_outputs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Action's gate step refusing a checkout's failgate: an ``::error`` line and the
    step outputs, as every other error (it was a plain line, no outputs)."""
    from action_runner import read_outputs

    import pytest_failgate.ci.__main__ as step

    workspace = tmp_path / "work"
    (workspace / "pytest_failgate").mkdir(parents=True)  # the package said to be here
    output = tmp_path / "output"
    output.touch()
    env = {"INPUT_REPORTS": "reports", "GITHUB_OUTPUT": str(output),
           "GITHUB_WORKSPACE": str(workspace)}
    real = step.checkout_copy
    monkeypatch.setattr(step, "checkout_copy",
                        lambda ws, package=None: real(ws, workspace / "pytest_failgate"))
    code, stdout = _run_captured(step.main, env)
    assert code == 2
    assert any(line.startswith("::error title=failgate::failgate: this failgate is the folder")
               for line in stdout.splitlines()), stdout
    outputs = read_outputs(output.read_text(encoding="utf-8"))
    assert (outputs["verdict"], outputs["exit-code"]) == ("error", "2")


def test_under_github_a_missing_guard_base_is_an_error_verdict(tmp_path: Path) -> None:
    from pytest_failgate.ci.__main__ import main

    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "reports",
                    tmp_path / "reports")
    shutil.copy(Path(__file__).resolve().parents[2] / "ceilings.yaml", tmp_path)
    git(tmp_path, "init", "-q", "-b", "main")
    commit(tmp_path, "main")
    output = tmp_path / "output"
    output.touch()
    env = {"INPUT_REPORTS": "reports", "INPUT_GUARD_BASE": "no-such-ref",
           "GITHUB_OUTPUT": str(output), "GITHUB_WORKSPACE": str(tmp_path),
           "INPUT_REPORT_DIR": str(tmp_path / "out")}
    from frontends_matrix import in_dir

    code, stdout = in_dir(tmp_path, _run_captured, main, env)
    from action_runner import read_outputs

    outputs = read_outputs(output.read_text(encoding="utf-8"))
    assert code == 2, stdout
    assert (outputs["verdict"], outputs["exit-code"]) == ("error", "2")
    assert any(line.startswith("::error") and "no-such-ref" in line
               for line in stdout.splitlines()), stdout


def _run_captured(main: object, env: dict[str, str]) -> tuple[int, str]:
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
        code = main(["--github"], env)  # type: ignore[operator]
    return code, buffer.getvalue()


@pytest.mark.parametrize("project", ["promptfoo"], indirect=True)
def test_src_layout_with_testpaths_and_addopts_gates_beside_the_unit_tests(
        project: Path, tmp_path: Path) -> None:
    """A ``src/`` project whose ``addopts`` turn the gate on and ``testpaths`` name its
    unit tests: ``pytest`` runs both, and the gate's items are ``check``'s."""
    expected = check(project, tmp_path / "check.json")
    _src_layout(project)
    ran = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rf",
                          f"--failgate-json={tmp_path / 'pytest.json'}"], cwd=project,
                         env=clean_env(), capture_output=True, text=True, check=False)
    assert "test_unit.py ." in ran.stdout or "1 passed" in ran.stdout, ran.stdout
    assert pytest_answer(ran.returncode, tmp_path / "pytest.json", ran.stdout) == expected


@pytest.mark.slow
@pytest.mark.parametrize("project", LAYOUT_FORMATS, indirect=True)
def test_src_layout_under_xdist_gives_the_same_items(project: Path, tmp_path: Path) -> None:
    expected = check(project, tmp_path / "check.json")
    _src_layout(project)
    ran = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "-p", "no:cacheprovider",
                          "-rf", f"--failgate-json={tmp_path / 'pytest.json'}"], cwd=project,
                         env=clean_env(), capture_output=True, text=True, check=False)
    assert pytest_answer(ran.returncode, tmp_path / "pytest.json", ran.stdout) == expected
    assert result_of(tmp_path / "pytest.json").verdict == expected.verdict


def _src_layout(project: Path) -> None:
    (project / "src" / "shop").mkdir(parents=True)
    (project / "src" / "shop" / "__init__.py").write_text("def price():\n    return 3\n")
    (project / "tests").mkdir()
    (project / "tests" / "test_unit.py").write_text(
        "from shop import price\n\n\ndef test_price():\n    assert price() == 3\n")
    (project / "pyproject.toml").write_text(
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["src"]\n'
        'addopts = "--failgate=reports"\n', encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("project", ["lm-eval"], indirect=True)
def test_the_action_runs_with_the_projects_venv(project: Path, tmp_path: Path) -> None:
    """The Action's own steps (``install: auto``) on a job whose python is the project's
    ``.venv`` (first on PATH): it is found, runs and agrees with ``check``."""
    from action_runner import run_action

    expected = check(project, tmp_path / "check.json")
    python = venv_inside(project)
    done = run_action(project, {"reports": "reports", "guard-base": "main"},
                      extra_env={"PATH": f"{python.parent}:/usr/bin:/bin"},
                      temp=tmp_path / "runner")
    assert done.steps[0].outputs["python"] == str(python)
    assert (done.outputs["verdict"], frozenset(json.loads(done.outputs["failed"]))) == (
        expected.verdict, expected.failed), done.stdout + "".join(s.stderr for s in done.steps)


def test_a_changed_judge_is_inconclusive_on_every_front_end(
        pytester: pytest.Pytester, tmp_path: Path) -> None:
    """promptfoo's real runs graded by two judges: the run against its baseline measured
    by another instrument is inconclusive on ``check``, the CI step and the Action's gate
    step (with the guard, quiet), MCP and pytest alike (the Action said fail before: its
    guard took the built-in reader for a plugin)."""
    import os

    from frontends_matrix import DATA, VERDICT_OF_CODE, in_dir, result_of

    from pytest_failgate import cli, mcpserver
    from pytest_failgate.ci.__main__ import main as ci_main

    noise = DATA / "promptfoo" / "noise"
    project = make_project(pytester.path / "project", "promptfoo",
                           [noise / "judge_gpt-4.1" / "results.json"])
    shutil.copytree(noise / "judge_gpt-4o", project / "base")
    commit(project, "the baseline")
    code = in_dir(project, cli.main, ["check", "reports", "--baseline", "base"])
    assert VERDICT_OF_CODE[code] == "inconclusive"
    out = tmp_path / "ci"
    in_dir(project, ci_main, ["reports", "--guard-base", "main", "--check-arg=--baseline",
                              "--check-arg=base", "--out-dir", str(out)], {})
    verdict = json.loads((out / "verdict.json").read_text())
    assert (verdict["verdict"], verdict["guard"]) == ("inconclusive", "pass")
    output = tmp_path / "github_output"
    output.touch()
    in_dir(project, ci_main, ["--github"], {
        "INPUT_REPORTS": "reports", "INPUT_ARGS": "--baseline base", "INPUT_GUARD_BASE": "main",
        "GITHUB_OUTPUT": str(output), "GITHUB_WORKSPACE": str(project),
        "INPUT_REPORT_DIR": str(tmp_path / "action")})
    from action_runner import read_outputs

    assert read_outputs(output.read_text())["verdict"] == "inconclusive"
    outcome, value = in_dir(project, mcpserver._call, "check",
                            {"paths": ["reports"], "baseline": ["base"]}, [str(project)],
                            mcpserver.Limits())
    assert (outcome, value["verdict"]) == ("ok", "inconclusive")
    os.chdir(project)
    ran = pytester.runpytest_inprocess("--failgate=reports", "--failgate-baseline=base",
                                       f"--failgate-json={tmp_path / 'pytest.json'}",
                                       "-p", "no:cacheprovider")
    assert result_of(tmp_path / "pytest.json").verdict == "inconclusive"
    assert ran.ret == 1  # pytest has no code 3: the inconclusive item fails
