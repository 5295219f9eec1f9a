"""The front-end matrix's projects and front ends (``test_frontend_matrix.py``).

A project is a git repository whose ``main`` holds one real report of a built-in format
(from ``tests/data``, the format's smallest file with failures) and the ceilings
``failgate init`` wrote for it, one ceiling lowered below its count, so the gate fails on
a known item. Each front end runs on it as a user runs it and answers the same question:
the run's verdict and the failing items, named as pytest names them.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from pytest_failgate import cli
from pytest_failgate.ci.__main__ import main as ci_main
from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.base.result import GateResult
from pytest_failgate.core.base.verdict import EXIT
from pytest_failgate.core.reports.builtin import builtin_readers
from pytest_failgate.core.reports.choice import TaxonomyChoice
from pytest_failgate.core.reports.model import Report, ReportFile
from pytest_failgate.core.reports.read import ReadSpec, load_report
from pytest_failgate.output.text import item_id

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
VERDICT_OF_CODE = {code: verdict for verdict, code in EXIT.items()}


@dataclass(frozen=True)
class Answer:
    """What a front end said: the run's verdict and its failing items."""

    verdict: str
    failed: frozenset[str]


def formats() -> dict[str, list[Path]]:
    """Each built-in reader's real test data: for every reader of the registry, its files
    in ``tests/data``, those with some cases failing and some not first, smallest first
    (``make_project`` takes the first a ceilings file can be made from)."""
    readers = builtin_readers()
    suffixes = {suffix for reader in readers for suffix in reader.suffixes}
    files = sorted((p for p in DATA.rglob("*") if p.is_file() and p.suffix in suffixes),
                   key=lambda p: (p.stat().st_size, p))
    found: dict[str, list[tuple[int, int, Path]]] = {}
    for order, path in enumerate(files):
        try:
            report = load_report(ReportFile(path, path.stem), TaxonomyChoice(),
                                 ReadSpec(readers=readers))
        except FailgateError:
            continue
        if not isinstance(report, Report) or not report.n_cases:
            continue
        rank = 0 if 0 < (report.failed or 0) < report.n_cases else 1 if report.failed else 2
        found.setdefault(report.format, []).append((rank, order, path))
    return {name: [path for *_, path in sorted(paths)] for name, paths in sorted(found.items())}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def commit(cwd: Path, message: str) -> None:
    git(cwd, "add", "-A")
    git(cwd, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", message)


def in_dir(cwd: Path, function: Any, *args: Any) -> Any:
    before = Path.cwd()
    os.chdir(cwd)
    try:
        return function(*args)
    finally:
        os.chdir(before)


def make_project(where: Path, name: str, reports: list[Path]) -> Path:
    """The project on ``main``: a report of format ``name`` (the first of ``reports`` that
    ``failgate init`` makes ceilings for: a run that can be judged), its ceilings with one
    lowered. A format with no such run (every file has failures outside the system) gets
    ceilings of ``total: 0`` in its reader's taxonomy: a run every front end must call
    inconclusive."""
    where.mkdir(parents=True, exist_ok=True)
    git(where, "init", "-q", "-b", "main")
    (where / ".gitignore").write_text(".venv/\nout/\n__pycache__/\n", encoding="utf-8")
    for report in reports:
        shutil.rmtree(where / "reports", ignore_errors=True)
        (where / "reports").mkdir()
        (where / "reports" / report.name).write_bytes(report.read_bytes())
        if in_dir(where, cli.main, ["init", "reports"]) == 0:
            lower(where / "ceilings.yaml")
            break
    else:
        [taxonomy] = [r.taxonomy for r in builtin_readers() if r.name == name]
        (where / "ceilings.yaml").write_text(
            f"version: 1\ntaxonomy: {taxonomy}\nceilings:\n  total: 0\n", encoding="utf-8")
    commit(where, "main")
    return where


def lower(ceilings: Path) -> None:
    """One ceiling of the top-level ``ceilings:`` lowered below its count (the first
    above zero), so the gate fails on a known item."""
    lines = ceilings.read_text(encoding="utf-8").splitlines(keepends=True)
    inside = False
    for index, line in enumerate(lines):
        if line.startswith("ceilings:"):
            inside = True
            continue
        if inside and not line.startswith("  "):
            break
        found = re.fullmatch(r"(  [\w.-]+: )(\d+)(\n?)", line) if inside else None
        if found and int(found.group(2)) > 0:
            lines[index] = f"{found.group(1)}{int(found.group(2)) - 1}{found.group(3)}"
            break
    ceilings.write_text("".join(lines), encoding="utf-8")


def loosen(ceilings: Path) -> None:
    """Every ceiling of the top-level ``ceilings:`` raised by 5, with no reason."""
    text = ceilings.read_text(encoding="utf-8")
    head, sep, rest = text.partition("\nceilings:\n")
    block, end, tail = rest.partition("\nreports:") if "\nreports:" in rest else (rest, "", "")
    block = re.sub(r"(?m)^(  [\w.-]+: )(\d+)$", lambda m: f"{m[1]}{int(m[2]) + 5}", block)
    ceilings.write_text(head + sep + block + end + tail, encoding="utf-8")


def rewrite_report(report: Path) -> None:
    """The same cases in other bytes (a pull request that only changes reports)."""
    before = report.read_bytes()
    text = before.decode("utf-8", "replace")  # .eval: a zip archive, rewritten as bytes
    if report.suffix in (".json", ".jsonld"):
        report.write_text(json.dumps(json.loads(text), indent=3) + "\n", encoding="utf-8")
    elif report.suffix == ".jsonl":
        report.write_text("".join(json.dumps(json.loads(line), indent=None,
                                             separators=(" , ", " : ")) + "\n"
                                  for line in text.splitlines() if line.strip()),
                          encoding="utf-8")
    elif report.suffix == ".csv":
        rows = list(csv.reader(io.StringIO(text)))
        out = io.StringIO()
        csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
        report.write_text(out.getvalue(), encoding="utf-8")
    elif report.suffix == ".eval":  # a zip archive (zstd members): a comment added
        import zipfile

        with zipfile.ZipFile(report, "a") as archive:
            archive.comment = b"the same run, copied again"
    assert report.read_bytes() != before, report


def failed_items(result: GateResult) -> frozenset[str]:
    """The failing items of a gate result, as pytest names them."""
    items = set()
    for report in result.reports:
        if report.error is not None:
            items.add(f"{result.ceilings_path}::{report.name}::load")
        items |= {item_id(result.ceilings_path, row) for row in report.rows if row.failing}
    return frozenset(items)


def result_of(path: Path) -> GateResult:
    return GateResult.model_validate_json(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- front ends


def check(project: Path, out: Path) -> Answer:
    """``failgate check reports --json``, in this process."""
    out.parent.mkdir(parents=True, exist_ok=True)
    code = in_dir(project, cli.main, ["check", "reports", "--json", str(out)])
    result = result_of(out)
    assert result.verdict == VERDICT_OF_CODE[code]
    return Answer(result.verdict, failed_items(result))


def ci_step(project: Path, out: Path, guard: str | None = "main") -> Answer:
    """``python -I -m pytest_failgate.ci reports --guard-base main``, in this process."""
    argv = ["reports", "--out-dir", str(out), *(["--guard-base", guard] if guard else [])]
    code = in_dir(project, ci_main, argv, {})
    verdict = json.loads((out / "verdict.json").read_text(encoding="utf-8"))
    assert verdict["exit_code"] == code
    return Answer(verdict["verdict"], frozenset(verdict["failed"]))


def action_gate_step(project: Path, out: Path, guard: str = "main") -> Answer:
    """The Action's gate step (``python -I -m pytest_failgate.ci --github`` with the
    inputs as the runner passes them), in this process: its step outputs."""
    output = out / "github_output"
    out.mkdir(parents=True, exist_ok=True)
    output.touch()
    env = {"INPUT_REPORTS": "reports", "INPUT_GUARD_BASE": guard, "GITHUB_OUTPUT": str(output),
           "INPUT_REPORT_DIR": str(out / "report"), "GITHUB_WORKSPACE": str(project),
           "GITHUB_EVENT_NAME": "pull_request", "GITHUB_BASE_REF": "main"}
    code = in_dir(project, ci_main, ["--github"], env)
    from action_runner import read_outputs

    outputs = read_outputs(output.read_text(encoding="utf-8"))
    assert outputs["exit-code"] == str(code)
    return Answer(outputs["verdict"], frozenset(json.loads(outputs["failed"])))


def mcp_check(project: Path) -> Answer:
    """MCP's ``check`` tool as the server calls it (confined to the project), here."""
    from pytest_failgate import mcpserver

    outcome, value = in_dir(project, mcpserver._call, "check", {"paths": ["reports"]},
                            [str(project)], mcpserver.Limits())
    assert outcome == "ok", value
    result = GateResult.model_validate(value)
    return Answer(result.verdict, failed_items(result))


def precommit_check(project: Path, out: Path) -> Answer:
    """The ``failgate-check`` pre-commit hook: its entry and args, in this process."""
    out.parent.mkdir(parents=True, exist_ok=True)
    [hook] = [h for h in HOOKS if h["id"] == "failgate-check"]
    argv = [*shlex.split(hook["entry"])[1:], *hook.get("args", []), "--json", str(out)]
    code = in_dir(project, cli.main, argv)
    result = result_of(out)
    assert result.verdict == VERDICT_OF_CODE[code]
    return Answer(result.verdict, failed_items(result))


def precommit_guard(project: Path) -> int:
    """The ``failgate-guard`` pre-commit hook's exit code (its entry, in this process)."""
    [hook] = [h for h in HOOKS if h["id"] == "failgate-guard"]
    return int(in_dir(project, cli.main, [*shlex.split(hook["entry"])[1:],
                                          *hook.get("args", [])]))


def pytest_answer(ret: int, json_path: Path, stdout: str) -> Answer:
    """pytest's answer: the gate's JSON and the node ids it reported FAILED, which must
    agree with each other and with its exit code."""
    result = result_of(json_path)
    shown = frozenset(line.split(" ", 1)[1].split(" - ", 1)[0]
                      for line in stdout.splitlines() if line.startswith("FAILED "))
    ids = failed_items(result)
    assert shown == ids, (shown, ids)
    assert (int(ret) == 0) == (result.verdict == "pass"), (ret, result.verdict)  # no code 3
    return Answer(result.verdict, ids)


# --------------------------------------------------------------------------- a .venv inside


def venv_inside(project: Path) -> Path:
    """A real virtual environment at ``project/.venv`` with failgate installed in its
    site-packages (a copy of this failgate's package; its dependencies from the running
    environment through a ``.pth``), as uv or ``python -m venv .venv`` leave it. Returns
    its python."""
    import sysconfig

    venv = project / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig."
                                "get_paths()['purelib'])"], capture_output=True, text=True,
                               check=True).stdout.strip())
    deps = sysconfig.get_paths()["purelib"]
    (site / "zz_failgate_deps.pth").write_text(f"import site; site.addsitedir({deps!r})\n",
                                               encoding="utf-8")
    shutil.copytree(ROOT / "pytest_failgate", site / "pytest_failgate",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return python


def clean_env(**more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GITHUB_", "INPUT_", "PYTHON", "PYTEST_"))}
    env.update(more)
    return env
