"""The documentation is checked: the site builds strictly, links resolve, marked commands run.

A fenced ``bash`` block in ``README.md`` or ``docs/`` preceded by ``<!-- runnable -->`` (or
``<!-- runnable: exit N -->``) runs as one script under ``set -euo pipefail`` from the root
of a fresh clone of the repository (every file, configuration included, committed on
``main``: as a reader runs it), with the installed ``failgate`` and ``pytest`` first on
``PATH`` and no network; the script must exit with N (default 0); they are marked slow (CI
runs them). docs/development.md describes the
marker for writers.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import default_install
import pytest

if TYPE_CHECKING:
    from collections.abc import Callable

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]

MARKER = re.compile(r"^<!-- runnable(?P<rest>[^\n]*?)-->\n(?P<after>[^\n]*)\n", re.M)
# after the colon, comma-separated: `exit N` (the status expected), `extra NAME` (the extra
# the page installs, `pip install 'pytest-failgate[NAME]'`, added to the default install)
ITEM = re.compile(r"^\s*(?:exit (?P<code>\d+)|extra (?P<extra>[a-z][a-z0-9-]*))\s*$")
FENCE_END = re.compile(r"^```[ \t]*$", re.M)
LINK = re.compile(r"!?\[(?:[^\]\n]|\][^(\n])*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCED = re.compile(r"^(`{3,}).*?^\1", re.S | re.M)
CODE = re.compile(rf"{FENCED.pattern}|`[^`\n]*`", re.S | re.M)


class Block(NamedTuple):
    page: str
    line: int
    exit: int
    script: str
    extras: tuple[str, ...] = ()


def _options(rest: str) -> tuple[int, tuple[str, ...]] | None:
    """A marker's exit status and extras (``<!-- runnable: exit 1, extra duckdb -->``);
    None when it is malformed."""
    if not rest.strip():
        return 0, ()
    if not rest.startswith(":"):
        return None
    code, extras = 0, []
    for item in rest[1:].split(","):
        found = ITEM.match(item)
        if found is None:
            return None
        if found["code"] is not None:
            code = int(found["code"])
        else:
            extras.append(found["extra"])
    return code, tuple(extras)


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def runnable_blocks() -> list[Block]:
    """Every marked block; a marker that is malformed or not before a bash fence is an error."""
    blocks = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for marker in MARKER.finditer(text):
            line = text.count("\n", 0, marker.start()) + 1
            where = f"{_relative(page)}:{line}"
            options = _options(marker["rest"])
            assert options, (f"{where}: write <!-- runnable -->, <!-- runnable: exit N -->, "
                             "or <!-- runnable: extra NAME --> (or both, comma-separated)")
            assert marker["after"] == "```bash", f"{where}: a runnable marker precedes ```bash"
            end = FENCE_END.search(text, marker.end())
            assert end, f"{where}: the runnable block is not closed"
            script = text[marker.end():end.start()]
            blocks.append(Block(_relative(page), line, options[0], script, options[1]))
    return blocks


BLOCKS = runnable_blocks()


def _mkdocs(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
         "--site-dir", str(site)],
        capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.heavy  # a whole mkdocs build: CI runs it (CI=true), as does --run-heavy
def test_the_docs_site_builds_strictly(tmp_path: Path) -> None:
    """mkdocs is in the test extra, so CI builds the site: a warning is an error."""
    result = _mkdocs(ROOT / "mkdocs.yml", tmp_path / "site")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "site" / "noise" / "index.html").is_file()


@pytest.mark.heavy  # a whole mkdocs build: CI runs it (CI=true), as does --run-heavy
def test_broken_links_in_the_docs_fail_the_build(tmp_path: Path) -> None:
    """The strict build above can fail: mkdocs.yml makes broken links and anchors warnings."""
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    broken = {"no-such-page.md": "a page", "ceilings.md#no-such-heading": "a heading",
              "../pytest_failgate/options.py": "a file out of the docs"}
    with (tmp_path / "docs" / "index.md").open("a", encoding="utf-8") as page:
        page.writelines(f"\nSee [{what}]({link}).\n" for link, what in broken.items())
    result = _mkdocs(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert result.returncode != 0
    for complaint in ("no-such-page.md", "no-such-heading", "options.py"):
        assert complaint in result.stderr, result.stderr


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    text = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = FENCED.sub("", page.read_text(encoding="utf-8"))
    return {github_slug(m[1]) for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}


def _broken_links(page: Path, root: Path = ROOT) -> list[str]:
    text = CODE.sub("", page.read_text(encoding="utf-8"))
    broken = []
    for match in LINK.finditer(text):
        target = match["target"]
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # a URL: not checked offline
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists() or root not in file.parents:
            broken.append(f"{target}: no such file in the repository")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            where = file.relative_to(root).as_posix()
            broken.append(f"{target}: no heading {anchor!r} in {where}")
    return broken


def test_the_readme_links_resolve() -> None:
    """The README is read on the forge, where a relative link points into the repository."""
    links = LINK.findall(CODE.sub("", (ROOT / "README.md").read_text(encoding="utf-8")))
    assert any(target.startswith("docs/") for target in links)
    assert _broken_links(ROOT / "README.md") == []


def test_the_readme_is_a_front_door_to_every_page() -> None:
    """The README introduces and links; the reference is in docs/, so the README stays short
    and every page of the site is one link away from it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = readme.count("\n")
    assert lines <= 250, f"README.md has {lines} lines: move reference text into docs/"
    linked = {(ROOT / target.partition("#")[0]).resolve()
              for target in LINK.findall(CODE.sub("", readme))}
    unlinked = sorted(_relative(page) for page in DOCS.glob("*.md") if page.resolve() not in linked)
    assert unlinked == [], f"the README links no page {unlinked}"


# A path into the repository's own folders, in prose, code spans or command blocks alike.
REPO_PATH = re.compile(
    r"(?<![\w/.$-])((?:bench|docs|examples|pytest_failgate|scripts|tests|\.ci)/[\w./@-]*[\w/])")


def _absent_paths(page: Path, root: Path = ROOT) -> list[str]:
    return [path for path in REPO_PATH.findall(page.read_text(encoding="utf-8"))
            if not (root / path).exists()]


def test_the_docs_name_only_files_that_are_in_the_repository() -> None:
    """A script, module or page the docs name exists: no reference to a document that is
    not in the repository, even outside a link."""
    absent = {_relative(page): _absent_paths(page) for page in PAGES}
    assert {page: paths for page, paths in absent.items() if paths} == {}


def test_the_path_check_finds_a_missing_script(tmp_path: Path) -> None:
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "speed.py").write_text("")
    page = tmp_path / "page.md"
    page.write_text("Run `bench/speed.py`, then python bench/gone.py; see runs/r1/ and "
                    "tests/data/.\n")
    assert _absent_paths(page, tmp_path) == ["bench/gone.py", "tests/data/"]


def test_the_link_check_finds_a_missing_file_and_heading(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A page\n\n## `ceilings.yaml` keys\n")
    page = tmp_path / "README.md"
    page.write_text("[x](docs/a.md#ceilingsyaml-keys) [y](docs/a.md#nope) [z](docs/b.md)\n"
                    "`[not](a-link.md)` [web](https://example.org/x.md)\n")
    assert _broken_links(page, tmp_path) == [
        "docs/a.md#nope: no heading 'nope' in docs/a.md",
        "docs/b.md: no such file in the repository"]


def test_the_docs_mark_commands_runnable() -> None:
    """A marker the parser missed would leave a command unchecked: every marker is a block."""
    markers = sum(len(re.findall("^<!-- runnable", page.read_text(encoding="utf-8"), re.M))
                  for page in PAGES)
    assert len(BLOCKS) == markers
    assert {block.page for block in BLOCKS} >= {
        "README.md", "docs/index.md", "docs/noise.md", "docs/ci.md"}


def _repository_files() -> list[str]:
    """The repository's files as a clone has them: tracked, and new ones not ignored (a
    change being written), without the build's and the tools' leftovers."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
            capture_output=True, text=True, check=True, timeout=60).stdout.split("\0")
    except (OSError, subprocess.SubprocessError):  # an unpacked sdist: every file but caches
        listed = [path.relative_to(ROOT).as_posix() for path in ROOT.rglob("*")
                  if path.is_file() and not {"__pycache__", ".git"} & set(path.parts)]
    return [name for name in listed if name and (ROOT / name).is_file()]


@pytest.fixture(scope="session")
def installs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[tuple[str, ...]], Path]:
    """The ``bin`` folder of a default install of failgate (with these extras), made once
    per session (``default_install``): no package of the test extra in it."""
    made: dict[tuple[str, ...], Path] = {}

    def bin_of(extras: tuple[str, ...]) -> Path:
        if extras not in made:
            made[extras] = default_install.create(tmp_path_factory.mktemp("install"), extras)
        return made[extras]

    return bin_of


def _sandbox(tmp_path: Path, bin_dir: Path) -> tuple[Path, dict[str, str]]:
    """A clone of the repository (configuration included: pyproject.toml, ceilings.yaml),
    committed, as a reader has it; and an environment with ``bin_dir``'s tools first (a
    default install's)."""
    work = tmp_path / "repo"
    for name in _repository_files():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, work / name)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "FAILGATE", "GIT_", "GITHUB_"))
           and k not in ("CI", "COV_CORE_SOURCE")}
    home = tmp_path / "home"
    home.mkdir()
    env.update(
        PATH=os.pathsep.join([str(bin_dir), env.get("PATH", "")]),
        HOME=str(home), COLUMNS="100", NO_COLOR="1", PYTHONDONTWRITEBYTECODE="1",
        GIT_AUTHOR_NAME="docs", GIT_AUTHOR_EMAIL="docs@example.org",
        GIT_COMMITTER_NAME="docs", GIT_COMMITTER_EMAIL="docs@example.org",
        GIT_CONFIG_NOSYSTEM="1")
    for command in (["init", "-q", "-b", "main"], ["add", "-A"],
                    ["commit", "-q", "-m", "clone", "--no-verify"]):
        subprocess.run(["git", *command], cwd=work, env=env, check=True, timeout=120,
                       capture_output=True)
    return work, env


@pytest.mark.slow  # about 35 s of CPU in all: CI runs them (CI=true), as does --run-slow
@pytest.mark.parametrize("block", BLOCKS, ids=[f"{b.page}:{b.line}" for b in BLOCKS])
def test_a_runnable_command_in_the_docs_runs(
    tmp_path: Path, block: Block, installs: Callable[[tuple[str, ...]], Path]
) -> None:
    work, env = _sandbox(tmp_path, installs(block.extras))
    env.pop("VIRTUAL_ENV", None)
    result = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + block.script], cwd=work, env=env,
        capture_output=True, text=True, timeout=300, check=False, stdin=subprocess.DEVNULL)
    assert result.returncode == block.exit, (
        f"{block.page}:{block.line} exited {result.returncode}, not {block.exit}\n"
        f"{block.script}\n--- stdout\n{result.stdout[-4000:]}\n--- stderr\n"
        f"{result.stderr[-4000:]}")


PIN = re.compile(r"[0-9a-f]{40}")
# what installs or runs failgate in a recipe: pip from git, the Action, a pre-commit rev
FAILGATE_GIT = re.compile(r"pytest-failgate(?:\[[\w,]+\])? @ git\+https://\S+?@(?P<ref>[\w.-]+)")
ACTION = re.compile(r"uses: pytest-failgate/pytest-failgate@(?P<ref>[\w.-]+)")
PRE_COMMIT = re.compile(r"repo: https://github.com/pytest-failgate/pytest-failgate\s+rev: "
                        r"(?P<ref>[\w.-]+)")
BARE_INDEX = re.compile(
    r"pip install (?:(?P<q>['\"])pytest-failgate(?:\[[\w,]+\])?(?P=q)"
    r"|pytest-failgate(?:\[[\w,]+\])?)(?:\s|$)", re.M)


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          check=False)


def _recipe_refs() -> list[tuple[str, str]]:
    """Every (page, ref) a recipe installs failgate at."""
    return [(_relative(page), match["ref"]) for page in PAGES
            for pattern in (FAILGATE_GIT, ACTION, PRE_COMMIT)
            for match in pattern.finditer(page.read_text(encoding="utf-8"))]


def test_install_recipes_pin_a_commit_or_a_tag_that_exists() -> None:
    """Until the package is published, a recipe installs from the repository at a pinned
    commit (or a tag that exists): a moving branch, a tag nobody made or a name on an
    index someone else could register would run code nobody reviewed."""
    refs = _recipe_refs()
    assert {page for page, _ in refs} >= {"README.md", "docs/ci.md", "docs/index.md"}
    tags = set(_git("tag").stdout.split())
    assert [(page, ref) for page, ref in refs if not PIN.fullmatch(ref) and ref not in tags] \
        == []
    if _git("rev-parse", "--is-shallow-repository").stdout.strip() == "false":
        missing = {ref for _, ref in refs if PIN.fullmatch(ref)
                   and _git("cat-file", "-e", f"{ref}^{{commit}}").returncode != 0}
        assert missing == set(), "pinned commits not in the repository's history"


def test_no_recipe_installs_the_unpublished_name_from_the_index() -> None:
    found = [f"{_relative(page)}: {match.group(0).strip()}" for page in PAGES
             for block in FENCED.finditer(page.read_text(encoding="utf-8"))
             for match in BARE_INDEX.finditer(block.group(0))]
    assert found == []


def test_the_recipe_checks_find_a_bare_name_and_a_missing_tag() -> None:
    assert BARE_INDEX.search("    - pip install pytest-failgate\n")
    assert BARE_INDEX.search("pip install 'pytest-failgate[duckdb]'")
    assert not BARE_INDEX.search('pip install "pytest-failgate @ git+https://x/y@abc"')
    refs = [m["ref"] for m in ACTION.finditer("- uses: pytest-failgate/pytest-failgate@v0\n")]
    assert refs == ["v0"]
    assert PRE_COMMIT.search("  - repo: https://github.com/pytest-failgate/pytest-failgate\n"
                             "    rev: v0.1.0\n")["ref"] == "v0.1.0"  # type: ignore[index]


def test_the_release_workflow_builds_checks_and_publishes_a_tag() -> None:
    """Publishing is one step: a tag runs the build, ``twine check`` and trusted publishing."""
    import yaml

    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(
        encoding="utf-8"))
    assert workflow[True] == {"push": {"tags": ["v*"]}}  # YAML 1.1 reads the key `on` as true
    build = [step.get("run", "") for step in workflow["jobs"]["build"]["steps"]]
    assert "python -m build" in build
    assert any("twine check --strict" in run for run in build)
    publish = workflow["jobs"]["publish"]
    assert publish["needs"] == "build"
    assert publish["permissions"] == {"id-token": "write"}
    assert any(step.get("uses", "").startswith("pypa/gh-action-pypi-publish@")
               for step in publish["steps"])
    assert not any("password" in step.get("with", {}) for step in publish["steps"])


def test_the_quick_start_says_how_long_its_commands_take() -> None:
    """A reader who starts the test suite knows whether to wait or to come back."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = readme[readme.index("## Quick start"):readme.index("\n## ", readme.index(
        "## Quick start") + 1)]
    assert "pytest -n 2" in quick
    assert re.search(r"takes about a minute", quick)
    assert re.search(r"takes well under a minute", quick)
