"""The pre-commit hooks, run by the real ``pre-commit try-repo`` on a user's repository.

``try-repo`` clones this repository and reads its ``.pre-commit-hooks.yaml`` as a user's
``repos:`` entry would. The hooks are ``language: system`` (see that file for why),
so nothing is installed: the run needs no network, which the test makes sure of by
turning pip's index off and finding no hook environment built afterwards.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers import EXAMPLES

ROOT = EXAMPLES.parent
HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))

pytestmark = pytest.mark.skipif(not (ROOT / ".git").exists(),
                                reason="try-repo clones the repository: needs its git checkout")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def user_repo(tmp_path: Path) -> Path:
    """A project gated by failgate: its reports and ceilings committed."""
    repo = tmp_path / "project"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    shutil.copytree(EXAMPLES / "reports", repo / "reports")
    shutil.copy(ROOT / "ceilings.yaml", repo / "ceilings.yaml")
    (repo / "README.md").write_text("a project\n")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "start")
    return repo


def try_repo(repo: Path, hook: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRE_COMMIT", "PIP_"))}
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        PRE_COMMIT_HOME=str(home), PIP_NO_INDEX="1", PIP_FIND_LINKS="",
        GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
        GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org",
    )
    pre_commit = shutil.which("pre-commit", path=env["PATH"]) or "pre-commit"
    done = subprocess.run([pre_commit, "try-repo", str(ROOT), hook], cwd=repo, env=env,
                          capture_output=True, text=True, check=False,
                          stdin=subprocess.DEVNULL)
    environments = [p.name for p in home.rglob("py_env-*")] if home.exists() else []
    assert environments == [], "a hook built an environment: it would need the index"
    return done


def test_the_hooks_are_declared_for_the_project_failgate() -> None:
    assert {hook["id"]: hook["language"] for hook in HOOKS} == {
        "failgate-guard": "system", "failgate-check": "system"}
    assert all(hook["entry"].split()[0] == "failgate" for hook in HOOKS)
    assert all(hook["pass_filenames"] is False for hook in HOOKS)


@pytest.mark.heavy  # whole pytest-xdist or pre-commit runs: CI runs it (CI=true)
def test_the_guard_hook_refuses_a_loosened_ceiling_until_a_reason_is_written(
        user_repo: Path, tmp_path: Path) -> None:
    ceilings = user_repo / "ceilings.yaml"
    text = ceilings.read_text()
    ceilings.write_text(text.replace("  unknown: 35\n", "  unknown: 40\n"))
    _git(user_repo, "add", "ceilings.yaml")
    refused = try_repo(user_repo, "failgate-guard", tmp_path / "home")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "guard: 1 of 1 loosening in ceilings.yaml since HEAD has no reason" in refused.stdout
    assert "ceilings.unknown: 35 -> 40" in refused.stdout
    assert "Failed" in refused.stdout

    ceilings.write_text(text.replace("  unknown: 35\n",
                                     '  unknown: {max: 40, reason: "new judge, #12"}\n'))
    _git(user_repo, "add", "ceilings.yaml")
    accepted = try_repo(user_repo, "failgate-guard", tmp_path / "home")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "Passed" in accepted.stdout


@pytest.mark.slow
def test_the_check_hook_gates_committed_reports_when_they_change(
        user_repo: Path, tmp_path: Path) -> None:
    (user_repo / "README.md").write_text("a project, edited\n")
    _git(user_repo, "add", "README.md")
    unrelated = try_repo(user_repo, "failgate-check", tmp_path / "home")
    assert unrelated.returncode == 0, unrelated.stdout + unrelated.stderr
    assert "(no files to check)Skipped" in unrelated.stdout

    shutil.copy(EXAMPLES / "regression" / "eval_summary.json",
                user_repo / "reports" / "eval_summary.json")
    _git(user_repo, "add", "reports")
    regressed = try_repo(user_repo, "failgate-check", tmp_path / "home")
    assert regressed.returncode == 1, regressed.stdout + regressed.stderr
    assert "retrieval_miss: 4 cases, 3 over the ceiling of 1" in regressed.stdout

    _git(user_repo, "checkout", "HEAD", "--", "reports")
    shutil.copy(EXAMPLES / "reports" / "eval_summary.json",
                user_repo / "reports" / "eval_summary.json")
    ceilings = user_repo / "ceilings.yaml"  # a change to the ceilings alone runs it too
    ceilings.write_text(ceilings.read_text() + "# reviewed\n")
    _git(user_repo, "add", "ceilings.yaml")
    rechecked = try_repo(user_repo, "failgate-check", tmp_path / "home")
    assert rechecked.returncode == 0, rechecked.stdout + rechecked.stderr
    assert "Passed" in rechecked.stdout
