"""The package as it is published: metadata, contents, and a fresh install that works.

The quick checks read the metadata's sources (pyproject, CHANGELOG, the version).
The slow ones (CI runs them) build the sdist and the wheel with ``python -m build``
as a release would, check them with ``twine check --strict``, compare their files with
the package's tracked files, and install the wheel (not this tree) in a fresh virtual
environment, where the README's quick start must pass and an install hint the copy
prints must work as printed.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from trove_classifiers import classifiers as KNOWN_CLASSIFIERS

import pytest_failgate
from pytest_failgate.cli import main

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = PYPROJECT["project"]
VERSION = pytest_failgate.__version__
EVAL_LOG = next((ROOT / "tests" / "data" / "inspect_ai" / "generated" / "eval").glob("*.eval"))


def _version_key(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def test_the_version_is_written_once_and_failgate_version_prints_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert "version" not in PROJECT
    assert PROJECT["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "pytest_failgate.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION)
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"failgate {VERSION}\n"


CHANGELOG = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
RELEASE = re.compile(r"## \[(?P<name>Unreleased|\d+\.\d+\.\d+)\](?: - (?P<date>\d{4}-\d\d-\d\d))?$")


def test_the_changelog_keeps_a_changelog_and_agrees_with_the_version() -> None:
    headings = [line for line in CHANGELOG.splitlines() if line.startswith("## [")]
    matches = [RELEASE.fullmatch(line) for line in headings]
    assert all(matches), [h for h, m in zip(headings, matches, strict=True) if m is None]
    names = [m["name"] for m in matches if m is not None]
    assert names[0] == "Unreleased", "unreleased changes go on top"
    released = names[1:]
    assert all(m["date"] for m in matches[1:] if m is not None), "a release has its date"
    assert released == sorted(released, key=_version_key, reverse=True)
    if released:  # the version in the package is the newest release or the next one
        assert _version_key(VERSION) >= _version_key(released[0])
    assert "## Version policy" in CHANGELOG
    for name in names:  # every heading links somewhere
        assert re.search(rf"^\[{re.escape(name)}\]: https://", CHANGELOG, re.MULTILINE), name
    for section in re.findall(r"^### (.+)$", CHANGELOG, re.MULTILINE):
        assert section in ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")


def test_classifiers_are_known_and_name_the_pythons_ci_tests() -> None:
    classifiers = PROJECT["classifiers"]
    assert [c for c in classifiers if c not in KNOWN_CLASSIFIERS] == []
    assert "Framework :: Pytest" in classifiers
    lowest = re.fullmatch(r">=(\d+\.\d+)", PROJECT["requires-python"])
    assert lowest is not None
    pythons = [c.rpartition(" :: ")[2] for c in classifiers
               if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]
    assert lowest[1] in pythons  # .ci/run tests the lowest declared Python
    assert f"{sys.version_info.major}.{sys.version_info.minor}" in pythons or \
        _version_key(f"{sys.version_info.major}.{sys.version_info.minor}") > _version_key(
            max(pythons, key=_version_key)), "this Python is tested but not declared"
    assert all(_version_key(p) >= _version_key(lowest[1]) for p in pythons)


def test_project_urls_point_at_one_repository() -> None:
    urls = PROJECT["urls"]
    assert {"Homepage", "Source", "Issues", "Changelog"} <= set(urls)
    source = urls["Source"]
    assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", source)
    assert all(url.startswith(source) for url in urls.values())
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    repository = source.removeprefix("https://github.com/")
    uses = re.findall(r"uses: ([\w.-]+/[\w.-]+)@", readme)
    ours = [u for u in uses if u.endswith("/pytest-failgate")]
    assert ours, "the README shows the Action's `uses:`"
    assert set(ours) == {repository}, "the README's `uses:` names the repository"


def test_build_and_release_tools_are_in_the_test_extra() -> None:
    test_extra = " ".join(PROJECT["optional-dependencies"]["test"])
    for tool in ("build", "twine", "pre-commit", "trove-classifiers"):
        assert re.search(rf"(^|\s|\"){re.escape(tool)}\b", test_extra), tool


# -- the built distribution (slow: CI runs it) ------------------------------------------

def _source_files() -> list[str]:
    """The tree as a clean checkout holds it: tracked and new files, not ignored ones."""
    done = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    if done.returncode == 0 and done.stdout.strip():
        return [f for f in done.stdout.splitlines() if (ROOT / f).is_file()]
    return [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if p.is_file()
            and not {"__pycache__", ".git", ".hypothesis", ".pytest_cache"} & set(p.parts)]


def _package_files() -> set[str]:
    return {f for f in _source_files() if f.startswith("pytest_failgate/")}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``python -m build`` on a copy of the tree (the build writes into its source)."""
    source = tmp_path_factory.mktemp("source")
    for name in _source_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(source)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    sdists = list(out.glob("*.tar.gz"))
    wheels = list(out.glob("*.whl"))
    assert len(sdists) == len(wheels) == 1
    assert sdists[0].name == f"pytest_failgate-{VERSION}.tar.gz"
    assert wheels[0].name == f"pytest_failgate-{VERSION}-py3-none-any.whl"
    return {"sdist": sdists[0], "wheel": wheels[0]}


@pytest.mark.slow
def test_twine_check_passes_on_the_sdist_and_the_wheel(built: dict[str, Path]) -> None:
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict",
                           str(built["sdist"]), str(built["wheel"])],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2


@pytest.mark.slow
def test_the_wheel_holds_the_package_and_its_data_and_nothing_else(
        built: dict[str, Path]) -> None:
    with zipfile.ZipFile(built["wheel"]) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read(f"pytest_failgate-{VERSION}.dist-info/METADATA").decode()
    info = {n for n in names if n.startswith(f"pytest_failgate-{VERSION}.dist-info/")}
    assert names - info == _package_files()
    for data in ("core/taxonomy/builtin/rag.yaml", "output/report.css",
                 "schema/gate-result.schema.json", "py.typed"):
        assert f"pytest_failgate/{data}" in names
    assert f"Version: {VERSION}" in metadata
    assert "License-Expression: MIT" in metadata
    for label in PROJECT["urls"]:
        assert f"Project-URL: {label}, " in metadata
    assert "Requires-Dist: pytest>=" in metadata


@pytest.mark.slow
def test_the_sdist_holds_what_builds_the_wheel_and_nothing_else(built: dict[str, Path]) -> None:
    top = f"pytest_failgate-{VERSION}/"
    with tarfile.open(built["sdist"]) as sdist:
        names = {m.name.removeprefix(top) for m in sdist.getmembers() if m.isfile()}
    egg_info = {n for n in names if n.startswith("pytest_failgate.egg-info/")}
    assert names - egg_info == _package_files() | {
        "PKG-INFO", "setup.cfg", "pyproject.toml", "MANIFEST.in", "README.md", "LICENSE",
        "CHANGELOG.md"}


def _venv_with(wheel: Path, where: Path) -> Path:
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                           "--disable-pip-version-check", str(wheel)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return venv


def _in_venv(venv: Path, command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               VIRTUAL_ENV=str(venv), PIP_DISABLE_PIP_VERSION_CHECK="1")
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                          text=True, check=False)


def _quick_start_gate_command() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^## Quick start\n.*?^```bash\n(.*?)^```", readme, re.S | re.M)
    assert block is not None
    first = block[1].splitlines()[0]
    install, _, gate = first.partition(" && ")
    assert install == "pip install .", first  # the wheel stands in for the tree here
    return gate


@pytest.mark.slow
@pytest.mark.skipif(sys.version_info >= (3, 14), reason="Python 3.14 reads zstd itself")
def test_a_fresh_venv_with_the_wheel_runs_the_quick_start_and_its_install_hint(
        built: dict[str, Path], tmp_path: Path) -> None:
    venv = _venv_with(built["wheel"], tmp_path)
    project = tmp_path / "project"  # the examples and ceilings, but not the package source
    project.mkdir()
    subprocess.run(["cp", "-r", str(ROOT / "examples"), str(ROOT / "ceilings.yaml"),
                    str(project)], check=True)
    where = _in_venv(venv, "python -c 'import pytest_failgate; print(pytest_failgate.__file__)'",
                     project)
    assert where.stdout.startswith(str(venv)), where.stdout + where.stderr
    version = _in_venv(venv, "failgate --version", project)
    assert version.stdout == f"failgate {VERSION}\n"
    done = _in_venv(venv, _quick_start_gate_command() + " -p no:cacheprovider", project)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"^=+ 24 passed in ", done.stdout, re.M), done.stdout[-2000:]
    failing = _in_venv(venv, "failgate check examples/regression", project)
    assert failing.returncode == 1, failing.stdout + failing.stderr

    # An Inspect AI .eval log needs the inspect extra; the hint names this very wheel.
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / EVAL_LOG.name).write_bytes(EVAL_LOG.read_bytes())
    show = f"failgate show {shlex.quote(EVAL_LOG.name)}"
    before = _in_venv(venv, show, logs)
    assert before.returncode == 2, before.stdout + before.stderr
    hint = re.search(r"needs the inspect extra \([^)]*\): (pip install .*)$",
                     before.stdout + before.stderr, re.M)
    assert hint is not None, before.stdout + before.stderr
    assert hint[1] == f'pip install "pytest-failgate[inspect] @ {built["wheel"].as_uri()}"'
    installed = _in_venv(venv, hint[1] + " -q", logs)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    after = _in_venv(venv, show, logs)
    assert after.returncode == 0, after.stdout + after.stderr
