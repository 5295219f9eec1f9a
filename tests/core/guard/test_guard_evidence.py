"""The evidence that excuses failures, and the configuration CI runs with: the guard sees each.

Every test starts from a real git repository committed as ``main``: the regression gate's
baseline run and two repeats of it (``tests/data/rag-gate``), the noise band ``failgate
noise`` measures over them, the ceilings ``failgate init`` writes from it (``noise:``
naming the band) and a pytest configuration that gates the baseline and leaves the band's
unstable cases out of the paired tests. Then one change, as a pull request that makes the
system worse and wants a green check would make it, and ``failgate guard --base main`` as
CI runs it. Each route has its control: the same kind of change that does not loosen (or
loosens with a reason written in this change) passes.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import run_cli

from pytest_failgate.cli import main

DATA = Path(__file__).resolve().parents[2] / "data"
RAG_GATE = DATA / "rag-gate"
INI = "[pytest]\nfailgate = baseline\nfailgate_exclude_unstable = true\n"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def commit(repo: Path, message: str = "change") -> None:
    git(repo, "add", "-A")
    git(repo, "-c", "user.email=ci@example.com", "-c", "user.name=ci", "commit", "-q", "-m",
        message)


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project at main, measured once: the band and the ceilings set from it."""
    project = tmp_path_factory.mktemp("measured") / "project"
    shutil.copytree(RAG_GATE / "baseline", project / "baseline")
    (project / "baseline" / "noise_band.json").unlink()  # the band is measured here
    shutil.copytree(RAG_GATE / "repeats" / "r2", project / "repeats" / "r2")
    shutil.copytree(RAG_GATE / "repeats" / "r3", project / "repeats" / "r3")
    (project / "pytest.ini").write_text(INI)
    # the commands in-process (the measurement, not how it is started, is what matters)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(project)
        for argv in (["noise", "baseline", "repeats/r2", "repeats/r3", "--out",
                      "noise_band.json"], ["init", "baseline", "--noise", "noise_band.json"]):
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                code = main(argv)
            assert code == 0, out.getvalue()
    return project


@pytest.fixture
def repo(measured: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = tmp_path / "project"
    shutil.copytree(measured, project)
    git(project, "init", "-q", "-b", "main")
    commit(project, "base")
    monkeypatch.chdir(project)
    return project


def _guard(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code, out, err = run_cli(capsys, "guard", "--base", "main", *args)
    assert "Traceback" not in err
    return code, out + err


def _band(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _edit_band(path: Path, **bands: dict[str, Any]) -> None:
    """Update ``mode:``/metric entries of a band file (``mode_retrieval_miss`` for
    ``mode:retrieval_miss``)."""
    document = _band(path)
    for key, values in bands.items():
        document["metric_band"][key.replace("mode_", "mode:", 1)].update(values)
    path.write_text(json.dumps(document, indent=2))


def _reason(repo: Path, reason: str) -> None:
    path = repo / "ceilings.yaml"
    path.write_text(path.read_text().replace("version: 1\n", f"version: 1\nreason: {reason}\n"))


def test_the_measured_repository_passes(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "noise: noise_band.json" in (repo / "ceilings.yaml").read_text()
    code, out = _guard(capsys)
    assert code == 0, out
    assert "nothing in ceilings.yaml is looser than at main" in out


# --------------------------------------------------------------------------- the band


def test_a_widened_band_is_caught_by_the_allowances_and_bands_it_yields(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Route 1: ``mode:retrieval_miss`` and a metric band widened in the band ``noise:``
    names; check and pytest passed a regression within the wider bands."""
    _edit_band(repo / "noise_band.json",
               mode_retrieval_miss={"min": 55, "max": 75, "moved": 20, "discordant": 40},
               answerable_accuracy={"min": 0.1, "max": 0.3})
    code, out = _guard(capsys)
    assert code == 1, out
    assert "noise noise_band.json mode:retrieval_miss allowance: 5 -> " in out
    assert "noise noise_band.json mode:retrieval_miss band: 2 cases -> 20 cases" in out
    assert "noise noise_band.json answerable_accuracy band: " in out
    assert "`failgate noise --check BAND` measures it again from the runs it names" in out


def test_a_narrowed_band_passes(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The control: a band measured tighter (fewer cases moved, a smaller range)."""
    _edit_band(repo / "noise_band.json",
               mode_retrieval_miss={"min": 65, "max": 65, "moved": 1, "discordant": 2},
               answerable_accuracy={"min": 0.2, "max": 0.2})
    code, out = _guard(capsys)
    assert code == 0, out


def test_a_widened_band_with_a_reason_written_in_this_change_passes(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit_band(repo / "noise_band.json", mode_retrieval_miss={"min": 55, "max": 75})
    _reason(repo, '"re-measured over 5 runs of the new index (#61)"')
    code, out = _guard(capsys)
    assert code == 0, out
    assert 'reason: "re-measured over 5 runs of the new index (#61)"' in out


def test_discordant_alone_raised_is_caught_as_the_allowance_it_yields(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Route 4: only ``discordant``/``moved`` (x40): the range is unchanged, but the
    allowance grows so far that the ratchet never lowers the ceiling again."""
    band = _band(repo / "noise_band.json")["metric_band"]["mode:retrieval_miss"]
    _edit_band(repo / "noise_band.json",
               mode_retrieval_miss={"moved": band["moved"] * 40,
                                    "discordant": band["discordant"] * 40})
    code, out = _guard(capsys)
    assert code == 1, out
    assert "mode:retrieval_miss allowance: 5 -> " in out
    assert "band:" not in out


def test_discordant_lowered_passes(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit_band(repo / "noise_band.json", mode_retrieval_miss={"moved": 1, "discordant": 1})
    code, out = _guard(capsys)
    assert code == 0, out


def test_a_removed_count_band_is_caught(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without its band a count is no longer measured: the ratchet leaves its ceiling."""
    document = _band(repo / "noise_band.json")
    del document["metric_band"]["mode:retrieval_miss"]
    (repo / "noise_band.json").write_text(json.dumps(document))
    code, out = _guard(capsys)
    assert code == 1, out
    assert "mode:retrieval_miss: measured (allowance 5) -> removed" in out


def test_the_noise_source_removed_passes(repo: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The control: counts exact again (no allowance, no band) is stricter."""
    path = repo / "ceilings.yaml"
    path.write_text(path.read_text().replace("noise: noise_band.json\n", ""))
    code, out = _guard(capsys)
    assert code == 0, out


# --------------------------------------------------------------------------- noise: repointed


def test_noise_repointed_at_a_wider_band_is_compared_with_the_band_before(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Route 2: a new file, so nothing at its place at main to compare with."""
    shutil.copy(repo / "noise_band.json", repo / "wider.json")
    _edit_band(repo / "wider.json", mode_hallucination={"min": 0, "max": 9, "moved": 9,
                                                        "discordant": 18})
    path = repo / "ceilings.yaml"
    path.write_text(path.read_text().replace("noise: noise_band.json", "noise: wider.json"))
    code, out = _guard(capsys)
    assert code == 1, out
    assert "noise noise_band.json -> wider.json mode:hallucination allowance: 2 -> " in out


def test_noise_repointed_at_the_same_band_passes(repo: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The control: the band moved to another file, its content unchanged."""
    (repo / "noise").mkdir()
    shutil.move(repo / "noise_band.json", repo / "noise" / "band.json")
    path = repo / "ceilings.yaml"
    path.write_text(path.read_text().replace("noise: noise_band.json", "noise: noise/band.json"))
    code, out = _guard(capsys)
    assert code == 0, out


def test_the_noise_setting_repointed_is_compared_by_content(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``failgate_noise`` wins over ``noise:``: its file is the band the gate reads."""
    shutil.copy(repo / "noise_band.json", repo / "wider.json")
    _edit_band(repo / "wider.json", mode_retrieval_miss={"min": 40, "max": 90})
    (repo / "pytest.ini").write_text(INI + "failgate_noise = wider.json\n")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "pytest.ini failgate_noise: not set -> wider.json" in out
    assert "noise noise_band.json -> wider.json mode:retrieval_miss band: 2 cases -> 50 cases" \
        in out


# --------------------------------------------------------------------------- unstable cases


def test_regressed_cases_added_to_the_unstable_list_are_caught(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Route 3: with ``failgate_exclude_unstable`` on, an unstable case is left out of every
    paired test: listing the regressed ones hides the regression."""
    document = _band(repo / "noise_band.json")
    document["unstable_cases"] += ["rq001", "rq002", "rq003"]
    (repo / "noise_band.json").write_text(json.dumps(document))
    code, out = _guard(capsys)
    assert code == 1, out
    assert "unstable_cases: 2 cases -> 3 more left out of the paired tests (rq001, rq002, " \
        "rq003)" in out


@pytest.mark.slow
def test_unstable_cases_removed_or_not_excluded_pass(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The controls: a case no longer excused; and more unstable cases where the gate
    does not leave them out (the setting off; turning it on is a setting change)."""
    document = _band(repo / "noise_band.json")
    document["unstable_cases"] = document["unstable_cases"][:1]
    (repo / "noise_band.json").write_text(json.dumps(document))
    assert _guard(capsys)[0] == 0
    (repo / "pytest.ini").write_text("[pytest]\nfailgate = baseline\n")
    commit(repo, "the gate keeps unstable cases")
    document["unstable_cases"] += ["rq001", "rq002"]
    (repo / "noise_band.json").write_text(json.dumps(document))
    code, out = _guard(capsys)
    assert code == 0, out


# --------------------------------------------------------------------------- -o, PYTEST_ADDOPTS


def _loose(repo: Path) -> str:
    """A copy of the ceilings with retrieval_miss raised: the change the guard must name."""
    text = (repo / "ceilings.yaml").read_text()
    loose = text.replace("max: 70", "max: 90").replace(
        "allowance: 5\n  hallucination", "allowance: 25\n  hallucination", 1)
    (repo / "loose.yaml").write_text(loose)
    line = loose.splitlines().index("  retrieval_miss:") + 1
    return f"loose.yaml:{line} ceilings.retrieval_miss: 70 -> 90"


def test_an_override_ini_in_addopts_naming_looser_ceilings_is_caught(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Route 7: pytest reads ``-o failgate_ceilings=loose.yaml`` in addopts; so does the
    command, and the guard compares loose.yaml with what applied at main."""
    raised = _loose(repo)
    (repo / "pytest.ini").write_text(INI + "addopts = -o failgate_ceilings=loose.yaml\n")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "compared with ceilings.yaml at main" in out
    assert raised in out


@pytest.mark.slow
def test_failgate_options_in_addopts_are_read_as_the_settings_they_beat(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--failgate-ceilings`` and ``--failgate-noise`` in addopts beat the ini keys under
    pytest: a reason for the addopts change does not excuse what the files they name
    loosen; with that reason, the same options naming the files as they were pass (the
    control)."""
    raised = _loose(repo)
    shutil.copy(repo / "noise_band.json", repo / "wider.json")
    _edit_band(repo / "wider.json", mode_retrieval_miss={"min": 40, "max": 90})
    (repo / "pytest.ini").write_text(
        INI + "addopts = --failgate-ceilings=loose.yaml --failgate-noise wider.json\n")
    _reason(repo, '"the nightly job gates with its own files (#70)"')
    code, out = _guard(capsys)
    assert code == 1, out
    assert f"{raised}  (no reason written)" in out
    assert "noise noise_band.json -> wider.json mode:retrieval_miss band: 2 cases -> 50 cases" \
        in out
    (repo / "pytest.ini").write_text(
        INI + "addopts = --failgate-ceilings=ceilings.yaml --failgate-noise noise_band.json\n")
    code, out = _guard(capsys)
    assert code == 0, out


def test_an_override_ini_of_the_reports_is_caught(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "pytest.ini").write_text(INI + "addopts = --override-ini=failgate=repeats/r2\n")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "pytest.ini failgate: baseline -> repeats/r2" in out


def test_override_ini_naming_the_same_gate_passes(repo: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The controls: an identical copy of the ceilings, and an override of a key that is
    not the gate's."""
    shutil.copy(repo / "ceilings.yaml", repo / "copy.yaml")
    (repo / "pytest.ini").write_text(
        INI + "addopts = -o failgate_ceilings=copy.yaml -o console_output_style=classic\n")
    code, out = _guard(capsys)
    assert code == 0, out


def test_pytest_addopts_set_by_a_workflow_is_read_as_pytest_reads_it(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``PYTEST_ADDOPTS`` in a workflow's ``env`` comes after the ini file's addopts."""
    raised = _loose(repo)
    workflows = repo / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "gate.yml").write_text(
        "on: pull_request\njobs:\n  gate:\n    runs-on: ubuntu-latest\n"
        "    env:\n      PYTEST_ADDOPTS: \"-o failgate_ceilings=loose.yaml -p no:randomly\"\n"
        "    steps:\n      - run: pytest --failgate-guard=origin/main\n")
    code, out = _guard(capsys)
    assert code == 1, out
    assert raised in out
    assert ".github/workflows/gate.yml:6 (PYTEST_ADDOPTS: \"-o failgate_ceilings=loose.yaml -p " \
        "no:randomly\") addopts: none -> -p no:randomly" in out


def test_pytest_addopts_naming_another_configuration_file_is_caught(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """pytest reads ``PYTEST_ADDOPTS`` before it picks its ini file: ``-c`` swaps it."""
    _loose(repo)
    (repo / "ci.ini").write_text(INI + "failgate_ceilings = loose.yaml\n")
    workflows = repo / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "gate.yml").write_text(
        "on: push\nenv:\n  PYTEST_ADDOPTS: -c ci.ini\njobs:\n  gate:\n"
        "    runs-on: ubuntu-latest\n    steps:\n      - run: pytest\n")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "gate.yml:3 (PYTEST_ADDOPTS: -c ci.ini) addopts: none -> -c ci.ini" in out


@pytest.mark.slow
def test_pytest_addopts_in_a_run_line_and_a_stricter_one_pass_or_fail_as_they_should(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A ``PYTEST_ADDOPTS=...`` prefix in a step's ``run:`` is read too; the control, one
    that turns strict on, passes."""
    workflows = repo / ".github" / "workflows"
    workflows.mkdir(parents=True)
    gate = workflows / "gate.yml"
    gate.write_text("on: push\njobs:\n  gate:\n    runs-on: ubuntu-latest\n    steps:\n"
                    "      - run: PYTEST_ADDOPTS='-o failgate_strict=true' pytest\n")
    code, out = _guard(capsys)
    assert code == 0, out
    gate.write_text(gate.read_text().replace("failgate_strict=true", "failgate=repeats/r2"))
    code, out = _guard(capsys)
    assert code == 1, out
    assert ("gate.yml:6 (- run: PYTEST_ADDOPTS='-o failgate=repeats/r2' pytest) failgate: "
            "baseline -> repeats/r2") in out


# Each CI system's way of setting PYTEST_ADDOPTS, naming the looser ceilings ({opts}).
OTHER_CI: dict[str, str] = {
    ".gitlab-ci.yml": "variables:\n  PYTEST_ADDOPTS: \"{opts}\"\ngate:\n  script: [pytest]\n",
    ".gitlab/ci/gate.yml": "gate:\n  variables:\n    PYTEST_ADDOPTS:\n      value: \"{opts}\"\n"
                           "      description: gate options\n  script: [pytest]\n",
    ".circleci/config.yml": "jobs:\n  gate:\n    steps:\n      - run:\n          command: |\n"
                            "            export PYTEST_ADDOPTS='{opts}'\n            pytest\n",
    "azure-pipelines.yml": "variables:\n  - name: PYTEST_ADDOPTS\n    value: \"{opts}\"\n"
                           "steps:\n  - script: pytest\n",
    ".travis.yml": "env:\n  - PYTEST_ADDOPTS=\"{opts}\"\nscript: pytest\n",
    "bitbucket-pipelines.yml": "pipelines:\n  default:\n    - step:\n        script:\n"
                               "          - PYTEST_ADDOPTS=\"{opts}\" pytest\n",
    "Jenkinsfile": "pipeline {{\n  agent any\n  environment {{\n"
                   "    PYTEST_ADDOPTS = '{opts}'\n  }}\n  stages {{ stage('gate') {{ steps {{\n"
                   "    sh 'pytest'\n  }} }} }}\n}}\n",
}
JENKINS_WITH_ENV = "node {{\n  withEnv(['PYTEST_ADDOPTS={opts}']) {{\n    sh 'pytest'\n  }}\n}}\n"


@pytest.mark.slow
@pytest.mark.parametrize("where", list(OTHER_CI))
def test_pytest_addopts_set_by_another_ci_system_is_read_as_pytest_reads_it(
        repo: Path, capsys: pytest.CaptureFixture[str], where: str) -> None:
    """GitLab, CircleCI, Azure, Travis, Bitbucket and Jenkins set ``PYTEST_ADDOPTS`` their
    own ways; each is read after the ini file's addopts, as for a GitHub workflow. The
    control: the same file setting an option that loosens nothing passes."""
    raised = _loose(repo)
    path = repo / where
    path.parent.mkdir(parents=True, exist_ok=True)
    text = OTHER_CI[where]
    path.write_text(text.format(opts="-o failgate_strict=true"))
    code, out = _guard(capsys)
    assert code == 0, out
    path.write_text(text.format(opts="-o failgate_ceilings=loose.yaml"))
    code, out = _guard(capsys)
    assert code == 1, out
    assert raised in out
    # named by the line that sets it, where one line does
    assert f"({where}" in out, out
    assert "names loose.yaml)" in out, out
    if where not in (".gitlab/ci/gate.yml", "azure-pipelines.yml"):
        assert f"({where}:" in out, out


def test_a_jenkins_with_env_step_is_read(repo: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    raised = _loose(repo)
    (repo / "Jenkinsfile").write_text(JENKINS_WITH_ENV.format(
        opts="-o failgate_ceilings=loose.yaml"))
    code, out = _guard(capsys)
    assert code == 1, out
    assert raised in out


# Routes a held-out attack found past the guard: each points the gate at loose.yaml.
ROUTES: dict[str, dict[str, str]] = {
    "an arguments file in addopts": {
        "pytest.ini": INI + "addopts = @gate.args\n",
        "gate.args": "--failgate-ceilings=loose.yaml\n"},
    "a conftest setting the option": {
        "conftest.py": "def pytest_configure(config):\n"
                       "    config.option.failgate_ceilings = 'loose.yaml'\n"},
    "a composite action's env": {
        ".github/actions/gate/action.yml": "runs:\n  using: composite\n  steps:\n"
        "    - run: pytest\n      shell: bash\n"
        "      env:\n        PYTEST_ADDOPTS: --failgate-ceilings=loose.yaml\n"},
    "a workflow's command line": {
        ".github/workflows/gate.yml": "on: push\njobs:\n  gate:\n    steps:\n"
        "      - run: python -m pytest -q --failgate-ceilings=loose.yaml tests\n"},
    "failgate check's own option in a workflow": {
        ".github/workflows/gate.yml": "on: push\njobs:\n  gate:\n    steps:\n"
        "      - run: failgate check baseline --ceilings loose.yaml\n"},
    "a GitLab include": {
        ".gitlab-ci.yml": "include:\n  - local: ci/test.yml\n",
        "ci/test.yml": "gate:\n  variables:\n    PYTEST_ADDOPTS: -o failgate_ceilings=loose.yaml\n"
                       "  script: [pytest]\n"},
    "a GitLab script line": {
        ".gitlab-ci.yml": "gate:\n  script:\n    - pytest --failgate-ceilings=loose.yaml\n"},
    "a GitLab merge key": {
        ".gitlab-ci.yml": ".vars: &vars\n  PYTEST_ADDOPTS: -o failgate_ceilings=loose.yaml\n"
                          "gate:\n  variables:\n    <<: *vars\n  script: [pytest]\n"},
    "an Azure template": {
        "azure-pipelines.yml": "variables:\n  - template: vars.yml\nsteps:\n  - script: pytest\n",
        "vars.yml": "variables:\n  PYTEST_ADDOPTS: -o failgate_ceilings=loose.yaml\n"},
    "an Azure logging command": {
        "azure-pipelines.yml": "steps:\n  - script: echo \"##vso[task.setvariable "
        "variable=PYTEST_ADDOPTS]-o failgate_ceilings=loose.yaml\"\n  - script: pytest\n"},
    "a Jenkins variable": {
        "Jenkinsfile": "def opts = '-o failgate_ceilings=loose.yaml'\nnode {\n"
                       "  withEnv([\"PYTEST_ADDOPTS=${opts}\"]) { sh 'pytest' }\n}\n"},
    "a nox session": {
        "noxfile.py": "import nox\n@nox.session\ndef gate(session):\n    session.run("
                      "'pytest', env={'PYTEST_ADDOPTS': '-o failgate_ceilings=loose.yaml'})\n"},
    "a tox setenv": {
        "tox.ini": "[testenv]\nsetenv =\n    PYTEST_ADDOPTS = -o failgate_ceilings=loose.yaml\n"
                   "commands = pytest\n"},
    "a Makefile export": {
        "Makefile": "export PYTEST_ADDOPTS := -o failgate_ceilings=loose.yaml\ngate:\n\tpytest\n"},
}


@pytest.mark.slow
@pytest.mark.parametrize("route", list(ROUTES))
def test_every_way_ci_files_point_the_gate_at_looser_ceilings_is_caught(
        repo: Path, capsys: pytest.CaptureFixture[str], route: str) -> None:
    raised = _loose(repo)
    for name, text in ROUTES[route].items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    code, out = _guard(capsys)
    assert code == 1, out
    assert raised in out or "conftest.py" in out or "gate.args" in out, out


def test_ci_files_that_run_the_gate_as_configured_pass(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The controls: a command line selecting tests (the gate's items always run), a
    GitLab merge key that sets nothing of pytest's, and ``failgate check`` with the
    configured ceilings are no loosening, and no error."""
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "gate.yml").write_text(
        "on: push\njobs:\n  gate:\n    steps:\n      - run: python -m pytest -m 'not slow' "
        "-x tests\n      - run: failgate check baseline --ceilings ceilings.yaml\n")
    (repo / ".gitlab-ci.yml").write_text(
        ".base: &base\n  image: python:3.12\ngate:\n  <<: *base\n  script: [pytest -q]\n")
    code, out = _guard(capsys)
    assert code == 0, out


def test_removing_the_pytest_guard_setting_is_caught(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "pytest.ini").write_text(INI + "failgate_guard = main\n")
    commit(repo, "guarded")
    (repo / "pytest.ini").write_text(INI)
    code, out = _guard(capsys)
    assert code == 1, out
    assert "failgate_guard: main -> not set" in out


def test_the_command_reads_override_ini_in_addopts_as_pytest_does(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One configuration: ``failgate check`` gates with the ceilings pytest would use."""
    _loose(repo)
    (repo / "pytest.ini").write_text(INI + "addopts = -o failgate_ceilings=loose.yaml\n")
    code, out, _ = run_cli(capsys, "check")
    assert code == 0, out
    assert "ceilings loose.yaml" in out


# --------------------------------------------------------------------------- reports


def test_a_renamed_report_is_caught_when_the_guard_is_given_the_reports(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Route 9: the reports not in the ini; the guard given them as the gate is."""
    (repo / "pytest.ini").write_text("[pytest]\n")
    path = repo / "ceilings.yaml"
    path.write_text(path.read_text() + "reports:\n  attribution:\n    retrieval_miss: 66\n")
    shutil.copytree(repo / "baseline", repo / "run")
    commit(repo, "an override for the run's report")
    shutil.move(repo / "run" / "attribution.jsonl", repo / "run" / "attribution_v2.jsonl")
    code, out = _guard(capsys, "run")
    assert code == 1, out
    assert "reports.attribution: applies to a report of the run -> applies to no report" in out
    assert "was not told the run's reports" not in out


@pytest.mark.slow
def test_a_renamed_report_is_caught_from_the_repository_when_not_told_the_reports(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``failgate guard --base main`` as the README says, reports not named in the ini."""
    (repo / "pytest.ini").write_text("[pytest]\n")
    path = repo / "ceilings.yaml"
    path.write_text(path.read_text() + "reports:\n  attribution:\n    retrieval_miss: 66\n")
    commit(repo, "an override for the run's report")
    code, out = _guard(capsys)
    assert code == 0, out  # the control: the report is still there
    assert "the guard was not told the run's reports" in out
    shutil.move(repo / "baseline" / "attribution.jsonl",
                repo / "baseline" / "attribution_v2.jsonl")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "reports.attribution: applies to a report of the run -> applies to no report" in out
    assert "the guard was not told the run's reports" in out


# --------------------------------------------------------------------------- re-measured


def test_a_band_measures_again_to_itself_from_the_runs_it_names(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert [entry["run"] for entry in _band(repo / "noise_band.json")["measured_from"]] == [
        "baseline", "repeats/r2", "repeats/r3"]
    code, out, _ = run_cli(capsys, "noise", "--check", "noise_band.json")
    assert code == 0, out
    assert "noise: noise_band.json is what baseline repeats/r2 repeats/r3 measure" in out


def test_a_band_edited_by_hand_does_not_measure_again_to_itself(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    band = _band(repo / "noise_band.json")["metric_band"]["mode:retrieval_miss"]
    _edit_band(repo / "noise_band.json", mode_retrieval_miss={"discordant": 160, "max": 75})
    code, out, _ = run_cli(capsys, "noise", "--check", "noise_band.json")
    assert code == 1, out
    assert "(1 difference):" in out
    assert (f"metric_band[mode:retrieval_miss]: file -> runs: discordant 160 -> "
            f"{band['discordant']}, max 75 -> {band['max']}") in out
    # measured from other runs than it names: the runs given say so too
    code, out, _ = run_cli(capsys, "noise", "--check", "noise_band.json", "baseline",
                           "repeats/r2")
    assert code == 1, out
    assert "n_runs: the file says 3, the runs give 2" in out


def test_a_band_that_names_no_runs_is_a_clear_error(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = _band(repo / "noise_band.json")
    del document["measured_from"]
    (repo / "noise_band.json").write_text(json.dumps(document))
    code, out, err = run_cli(capsys, "noise", "--check", "noise_band.json")
    assert code == 2, out + err
    assert "noise_band.json: the band does not say which runs it was measured from" in err
    assert "Traceback" not in err


@pytest.mark.heavy
def test_pytest_gates_with_the_overridden_ceilings_and_its_guard_item_names_them(
        measured: Path, pytester: pytest.Pytester) -> None:
    """Under pytest ``-o failgate_ceilings=loose.yaml`` in addopts is the file the gate
    reads (a regression within its raised ceiling passes); the guard item fails naming
    what loose.yaml loosened against the ceilings main enforced."""
    project = pytester.path
    for name in ("baseline", "repeats"):
        shutil.copytree(measured / name, project / name)
    for name in ("noise_band.json", "ceilings.yaml"):
        shutil.copy(measured / name, project / name)
    pytester.makeini(INI)
    git(project, "init", "-q", "-b", "main")
    commit(project, "base")
    raised = _loose(project)
    pytester.makeini(INI + "addopts = -o failgate_ceilings=loose.yaml\n")
    result = pytester.runpytest_subprocess("--failgate-guard=main", "-p", "no:xdist")
    result.stdout.fnmatch_lines([f"*{raised}  (no reason written)*"])
    assert result.parseoutcomes().get("failed") == 1  # the guard item alone


# --------------------------------------------------------------------------- outside flags

TAXONOMY = """\
name: answers
failed: not correct
categories:
  - name: wrong_answer
    when: status == "answered"
  - name: provider_down
    when: status == "api_error"
    outside: true
  - name: other
"""


def test_a_category_newly_flagged_outside_the_system_is_caught(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """An ``outside: true`` added to a category of the repository's taxonomy file turns its
    failures from a fail into an inconclusive run: the taxonomy's rules changed, which the
    guard names, and a comment added to the same file (the control) passes."""
    project = tmp_path / "project"
    (project / "reports").mkdir(parents=True)
    cases = [{"id": f"q{i}", "correct": i % 3 == 0,
              "status": "api_error" if i % 7 == 0 else "answered"} for i in range(30)]
    (project / "reports" / "run.jsonl").write_text(
        "".join(json.dumps(case) + "\n" for case in cases))
    (project / "taxonomy.yaml").write_text(TAXONOMY)
    monkeypatch.chdir(project)
    code, out, err = run_cli(capsys, "init", "reports", "--taxonomy", "taxonomy.yaml")
    assert code == 0, out + err
    git(project, "init", "-q", "-b", "main")
    commit(project, "base")

    (project / "taxonomy.yaml").write_text(TAXONOMY.replace(
        "    when: status == \"answered\"\n", "    when: status == \"answered\"\n    # reviewed\n"))
    code, out = _guard(capsys)
    assert code == 0, out  # the control: the same rules, written with a comment

    answered = '    when: status == "answered"\n'
    (project / "taxonomy.yaml").write_text(
        TAXONOMY.replace(answered, answered + "    outside: true\n"))
    code, out = _guard(capsys)
    assert code == 1, out
    assert "taxonomy" in out
    assert "taxonomy.yaml (rules " in out


# ------------------------------------------------- the error rate outside the system


def _with_provider_errors(repo: Path, mean: float | None, runs: int = 3) -> None:
    """The band with a count of failures outside the system (promptfoo's
    ``provider_error``): its errors per run over its runs feed the tolerated error rate."""
    document = _band(repo / "noise_band.json")
    document["metric_band"]["mode:provider_error"] = {"mean": mean, "std": 0.0, "min": 1,
                                                      "max": 1, "n": max(runs, 2)}
    if mean is None:  # removed, not null (a null mean is refused)
        del document["metric_band"]["mode:provider_error"]["mean"]
    named = [*document["run_ids"], "r4", "r5", "r6"]
    document["run_ids"] = named[:runs]
    (repo / "noise_band.json").write_text(json.dumps(document, indent=2))


@pytest.mark.slow
@pytest.mark.parametrize(("mean", "runs", "shown"), [
    (4.0, 3, "1 per run over 3 runs -> 4 per run over 3 runs"),  # more errors per run
    (1.0, 2, "1 per run over 3 runs -> 1 per run over 2 runs"),  # fewer runs: a wider bound
    (None, 3, "1 per run over 3 runs -> no band (the run's own errors)"),  # mean removed
    (1.0, 0, "1 per run over 3 runs -> no band (the run's own errors)"),  # no runs named
])
def test_a_band_that_tolerates_a_higher_error_rate_outside_the_system_is_caught(
        repo: Path, capsys: pytest.CaptureFixture[str], mean: float | None, runs: int,
        shown: str) -> None:
    """Only the band's mean (or its runs) of an outside category changes: no allowance
    from movement and no band width grows, but the count's tolerance from its observed
    error rate does (``count_allowance``), so the guard names it."""
    _with_provider_errors(repo, 1.0)
    commit(repo, "errors measured")
    _with_provider_errors(repo, mean, runs)
    code, out = _guard(capsys)
    assert code == 1, out
    assert f"noise noise_band.json mode:provider_error error rate: {shown}" in out


def test_a_band_that_tolerates_fewer_errors_or_moves_an_inside_mean_passes(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The controls: fewer errors per run over more runs tightens the tolerance, and the
    mean of a category inside the system feeds no tolerance at all."""
    _with_provider_errors(repo, 1.0)
    commit(repo, "errors measured")
    _with_provider_errors(repo, 0.5, 6)
    _edit_band(repo / "noise_band.json", mode_retrieval_miss={"mean": 70.0})
    code, out = _guard(capsys)
    assert code == 0, out


def test_the_outside_categories_are_the_built_ins_and_the_repositorys_own_taxonomy(
        tmp_path: Path) -> None:
    """A category the team's own taxonomy file flags ``outside: true`` is compared as a
    tolerance too; a taxonomy the guard cannot read leaves every category compared."""
    from pytest_failgate.core.guard.evidence import outside_names
    from pytest_failgate.core.guard.gitref import Tree
    from pytest_failgate.core.guard.loosening import parse_version

    (tmp_path / "taxonomy.yaml").write_text(TAXONOMY)
    (tmp_path / "ceilings.yaml").write_text(
        "version: 1\ntaxonomy: taxonomy.yaml\nceilings:\n  total: 3\n")
    names = outside_names(Tree(tmp_path), parse_version(tmp_path / "ceilings.yaml"),
                          "ceilings.yaml")
    assert names is not None
    assert {"provider_down", "provider_error", "metric_error"} <= names
    assert "wrong_answer" not in names
    (tmp_path / "taxonomy.yaml").write_text("name: broken\ncategories: 3\n")
    assert outside_names(Tree(tmp_path), parse_version(tmp_path / "ceilings.yaml"),
                         "ceilings.yaml") is None
