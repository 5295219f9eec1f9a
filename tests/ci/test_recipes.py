"""docs/ci.md's workflow per tool, run as written (issue 47: promptfoo's exit 100 stopped the
job before the gate step, and the docs said only "produce reports/").

Each recipe is parsed from the page and its steps run in order with GitHub's rules (a step's
``if``, ``success()`` by default; ``continue-on-error``; ``${{ }}`` expressions): ``run:``
steps in bash, for real, with the tools replaced by stand-ins that write the tool's real
output from ``tests/data/`` where the command says and exit as the tool does (promptfoo 100
on a failed test unless ``PROMPTFOO_FAILED_TEST_EXIT_CODE=0``, ``deepeval test run`` 1); the
failgate Action as ``action.yml`` runs it (``python -I -m pytest_failgate.ci --github`` with
its ``INPUT_*``); the cache steps by a folder that stands for main's saved run. Each recipe
must reach its gate step and fail a regressed run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_failgate.ci.__main__ import main as ci_main
from pytest_failgate.core.taxonomy import builtin_taxonomies

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
DOCS = ROOT / "docs" / "ci.md"
BIN = Path(sys.executable).parent

_RECIPE = re.compile(r"```yaml\n# \.github/workflows/([\w-]+)-gate\.yml\n(.*?)```", re.S)


def recipes() -> dict[str, dict[str, Any]]:
    """The page's workflows per tool, parsed (the YAML as a user copies it)."""
    page = DOCS.read_text(encoding="utf-8")
    section = page[page.index("## A workflow per tool"):]
    section = section[:section.index("\n## ", 1)]
    return {name: yaml.safe_load(text) for name, text in _RECIPE.findall(section)}


# -- the tools, standing in with their real output ---------------------------------------

FAKE = '''#!{python}
"""{tool}, offline: its real output from FAKE_OUTPUT, written where its arguments say."""
import os, shutil, sys
from pathlib import Path

args, source = sys.argv[1:], Path(os.environ["FAKE_OUTPUT"])
def after(flag):
    return args[args.index(flag) + 1]
def copy_into(folder):
    Path(folder).mkdir(parents=True, exist_ok=True)
    for item in source.iterdir():
        (shutil.copytree if item.is_dir() else shutil.copy)(item, Path(folder) / item.name)
tool = "{tool}"
if tool == "pip":
    sys.exit(0)  # the test's environment has what the step installs
if tool == "npx":
    assert args[0].startswith("promptfoo") and args[1] == "eval", args
    Path(after("-o")).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source / "results.json", after("-o"))
    sys.exit(0 if os.environ.get("PROMPTFOO_FAILED_TEST_EXIT_CODE") == "0" else 100)
if tool == "deepeval":
    assert args[:2] == ["test", "run"], args
    copy_into(".deepeval")
    sys.exit(1)  # pytest's status: a test failed
if tool == "inspect":
    assert args[0] == "eval", args
    copy_into(after("--log-dir"))
    sys.exit(0)  # inspect eval succeeds when samples are scored incorrect
if tool == "lm_eval":
    folder = Path(after("--output_path")) / "hf"
    folder.mkdir(parents=True, exist_ok=True)
    for item in source.iterdir():  # per-case samples only with --log_samples
        if item.name.startswith("results_") or "--log_samples" in args:
            shutil.copy(item, folder / item.name)
    sys.exit(0)
'''
TOOLS = ("npx", "deepeval", "inspect", "lm_eval", "pip")


@dataclass
class Tool:
    """One tool's real output (``output``), a second run of the base branch when there is
    one (``base``), and where the recipe's gate reads (``reports``)."""

    output: Path
    reports: str
    base: Path | None = None


TOOL_DATA = {
    "promptfoo": Tool(DATA / "promptfoo" / "generated" / "run2", "evals",
                      DATA / "promptfoo" / "generated" / "run1"),
    "deepeval": Tool(DATA / "deepeval" / "folder" / ".deepeval", ".deepeval"),
    "inspect": Tool(DATA / "inspect_ai" / "log_folder", "logs"),
    "lm-eval": Tool(DATA / "lm_eval", "results"),
}


# -- GitHub's rules, as far as the recipes use them --------------------------------------

@dataclass
class Job:
    root: Path
    context: dict[str, Any]
    status: str = "success"
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    ran: dict[str, int] = field(default_factory=dict)  # step name -> exit status

    def expression(self, text: str) -> Any:
        """A ``${{ }}`` expression: contexts, literals, ==, !=, &&, ||, !, status calls."""
        python = (text.replace("&&", " and ").replace("||", " or ")
                  .replace("!=", " __ne__ ").replace("!", " not ").replace(" __ne__ ", " != "))
        python = re.sub(r"\b(success|always|failure)\(\)", r"\1_()", python)
        python = re.sub(r"([a-z][\w]*(?:\.[\w-]+)+)",
                        lambda m: repr(self.lookup(m.group(1))), python)
        env = {"success_": lambda: self.status == "success", "always_": lambda: True,
               "failure_": lambda: self.status == "failure"}
        return eval(python, {"__builtins__": {}}, env)

    def lookup(self, path: str) -> Any:
        head, *rest = path.split(".")
        if head == "steps":
            return self.outputs.get(rest[0], {}).get(rest[2], "")
        if head == "secrets":
            return ""  # no token in the test: no comment is written
        value: Any = self.context[head]
        for part in rest:
            value = value.get(part, "") if isinstance(value, dict) else ""
        return value

    def substitute(self, text: str) -> str:
        return re.sub(r"\$\{\{(.*?)\}\}", lambda m: str(self.expression(m.group(1))), text)

    def should_run(self, step: dict[str, Any]) -> bool:
        condition = str(step.get("if", "success()"))
        if not re.search(r"\b(success|always|failure)\(\)", condition):
            condition = f"success() && ({condition})"
        return bool(self.expression(condition.replace("${{", "").replace("}}", "")))


def run_job(workflow: dict[str, Any], tool: Tool, root: Path, fakes: Path,
            event: str = "pull_request") -> Job:
    """Every step of the workflow's one job, in order, with GitHub's rules."""
    context = {"github": {"event_name": event, "sha": "c0ffee",
                          "ref": "refs/pull/1/merge" if event == "pull_request"
                          else "refs/heads/main"}}
    job = Job(root, context)
    (steps,) = [j["steps"] for j in workflow["jobs"].values()]
    for number, step in enumerate(steps):
        name = step.get("name", step.get("id", step.get("uses", f"step {number}")))
        if not job.should_run(step):
            continue
        code = _step(job, step, tool, fakes)
        job.ran[name] = code
        if code != 0 and not step.get("continue-on-error"):
            job.status = "failure"
    return job


def _step(job: Job, step: dict[str, Any], tool: Tool, fakes: Path) -> int:
    uses = str(step.get("uses", ""))
    inputs = {key: job.substitute(str(value)) for key, value in (step.get("with") or {}).items()}
    if uses.startswith(("actions/checkout@", "actions/setup-")):
        return 0
    if uses.startswith("actions/cache/restore@"):
        if tool.base is not None:  # main's run, saved by an earlier push
            shutil.copytree(tool.base, job.root / inputs["path"])
            job.outputs[step["id"]] = {"cache-matched-key": inputs["restore-keys"] + "main"}
        return 0
    if uses.startswith("actions/cache/save@"):
        return 0 if (job.root / inputs["path"]).exists() else 1
    if uses.startswith("pytest-failgate/pytest-failgate@"):
        env = {f"INPUT_{key.upper().replace('-', '_')}": value for key, value in inputs.items()}
        env |= {"GITHUB_OUTPUT": str(job.root / "github_output"),
                "GITHUB_STEP_SUMMARY": str(job.root / "summary.md")}
        cwd = Path.cwd()
        os.chdir(job.root)
        try:
            return ci_main(["--github"], env=env)
        finally:
            os.chdir(cwd)
    assert not uses, f"a step the test does not know: {uses}"
    env = {**os.environ, "PATH": f"{fakes}{os.pathsep}{BIN}{os.pathsep}{os.environ['PATH']}",
           "FAKE_OUTPUT": str(tool.output), "CI": "true",
           **{key: job.substitute(str(value)) for key, value in (step.get("env") or {}).items()}}
    done = subprocess.run(["bash", "-e", "-c", job.substitute(str(step["run"]))],
                          cwd=job.root, env=env, capture_output=True, text=True, timeout=300)
    with (job.root / "steps.log").open("a", encoding="utf-8") as log:
        log.write(done.stdout + done.stderr)
    return done.returncode


@pytest.fixture
def fakes(tmp_path: Path) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in TOOLS:
        script = folder / tool
        script.write_text(FAKE.format(python=sys.executable, tool=tool), encoding="utf-8")
        script.chmod(0o755)
    return folder


def _regressed_ceilings(root: Path, tool: Tool, fakes: Path,
                        capsys: pytest.CaptureFixture[str]) -> None:
    """``ceilings.yaml`` from a first run (the base's, else this output with one failure
    fewer allowed: a run that regressed by one case)."""
    first = root.parent / "first"
    shutil.copytree(tool.base or tool.output, first / tool.reports)
    os.chdir(first)
    from pytest_failgate.cli import main as cli_main

    assert cli_main(["init", tool.reports]) == 0
    capsys.readouterr()
    text = (first / "ceilings.yaml").read_text(encoding="utf-8")
    if tool.base is None:  # a category of the system's (not one outside it, an outage's)
        outside = {n for taxonomy in builtin_taxonomies().values() for n in taxonomy.outside}
        name, count = next((m.group(1), int(m.group(2))) for m in
                           re.finditer(r"^  (\w+): (\d+)$", text, re.M)
                           if int(m.group(2)) > 0 and m.group(1) not in {"total", *outside})
        text = text.replace(f"\n  {name}: {count}\n", f"\n  {name}: {count - 1}\n", 1)
    (root / "ceilings.yaml").write_text(text, encoding="utf-8")


@pytest.mark.parametrize("name", sorted(TOOL_DATA))
def test_each_tools_workflow_reaches_its_gate_and_fails_a_regressed_run(
    name: str, tmp_path: Path, fakes: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch
) -> None:
    workflow = recipes()[name]
    tool = TOOL_DATA[name]
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.chdir(tmp_path)
    _regressed_ceilings(root, tool, fakes, capsys)
    job = run_job(workflow, tool, root, fakes)
    capsys.readouterr()
    assert job.ran.get("evaluate") is not None, job.ran
    assert job.ran.get("gate") == 1, (job.ran, (root / "steps.log").read_text()
                                       if (root / "steps.log").exists() else "")
    assert job.status == "failure"
    assert "keep main's run as the base" not in job.ran  # a pull request saves nothing
    if tool.base is not None:  # compared with main's run: each failing case new or not
        summary = (root / "failgate-report" / "failgate.md").read_text(encoding="utf-8")
        assert "**new**" in summary
        assert "already failing" in summary


@pytest.mark.heavy
@pytest.mark.parametrize("name", sorted(TOOL_DATA))
def test_on_main_the_run_is_kept_as_the_base(
    name: str, tmp_path: Path, fakes: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = TOOL_DATA[name]
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.chdir(tmp_path)
    _regressed_ceilings(root, tool, fakes, capsys)
    job = run_job(recipes()[name], Tool(tool.output, tool.reports), root, fakes, event="push")
    capsys.readouterr()
    assert job.ran.get("keep main's run as the base") == 0, job.ran
    assert (root / "failgate-base").is_dir()


def test_without_promptfoos_exit_code_setting_the_gate_never_runs(
    tmp_path: Path, fakes: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wall itself: the recipe's setting is what lets the job reach the gate."""
    workflow = recipes()["promptfoo"]
    (steps,) = [j["steps"] for j in workflow["jobs"].values()]
    evaluate = next(step for step in steps if step.get("name") == "evaluate")
    assert evaluate["env"] == {"PROMPTFOO_FAILED_TEST_EXIT_CODE": "0"}
    del evaluate["env"]
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.chdir(tmp_path)
    _regressed_ceilings(root, TOOL_DATA["promptfoo"], fakes, capsys)
    job = run_job(workflow, TOOL_DATA["promptfoo"], root, fakes)
    assert job.ran["evaluate"] == 100
    assert "gate" not in job.ran


def test_every_recipe_is_there() -> None:
    assert set(recipes()) == set(TOOL_DATA)
