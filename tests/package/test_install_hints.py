"""Every message that names an extra gives a command that works for this copy's source.

pip records how a copy was installed (PEP 610 ``direct_url.json``); the hint repeats
that source with the extra added. That a printed hint really installs the extra is
checked in ``test_distribution.py`` (a built wheel in a fresh venv runs its own hint).
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import sys
from importlib import metadata
from pathlib import Path

import pytest

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.base.install import command_for, install_command, needs_extra
from pytest_failgate.core.engines import optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pytest_failgate"
EXTRAS = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
             ["project"]["optional-dependencies"])


def record(**fields: object) -> str:
    return json.dumps(fields)


def test_without_a_record_the_hint_names_the_index() -> None:
    assert command_for("duckdb", None) == 'pip install "pytest-failgate[duckdb]"'


def test_an_editable_checkout_is_named_with_its_path(tmp_path: Path) -> None:
    text = record(url=tmp_path.as_uri(), dir_info={"editable": True})
    assert command_for("mcp", text) == f'pip install -e "{tmp_path}[mcp]"'


def test_a_checkout_installed_without_e_is_named_with_its_path(tmp_path: Path) -> None:
    text = record(url=tmp_path.as_uri(), dir_info={})
    assert command_for("spark", text) == f'pip install "{tmp_path}[spark]"'
    sub = tmp_path / "python"
    sub.mkdir()
    text = record(url=tmp_path.as_uri(), dir_info={}, subdirectory="python")
    assert command_for("spark", text) == f'pip install "{sub}[spark]"'


def test_a_checkout_since_removed_falls_back_to_the_index(tmp_path: Path) -> None:
    text = record(url=(tmp_path / "gone").as_uri(), dir_info={"editable": True})
    assert command_for("mcp", text) == 'pip install "pytest-failgate[mcp]"'


def test_a_wheel_file_is_named_as_a_direct_reference(tmp_path: Path) -> None:
    wheel = tmp_path / "pytest_failgate-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    text = record(url=wheel.as_uri(), archive_info={"hashes": {"sha256": "0" * 64}})
    assert command_for("inspect", text) == (
        f'pip install "pytest-failgate[inspect] @ {wheel.as_uri()}"')
    wheel.unlink()
    assert command_for("inspect", text) == 'pip install "pytest-failgate[inspect]"'
    url = "https://example.org/pytest_failgate-0.1.0.tar.gz"
    assert command_for("inspect", record(url=url, archive_info={})) == (
        f'pip install "pytest-failgate[inspect] @ {url}"')


def test_a_git_install_is_named_at_the_commit_it_installed() -> None:
    url = "https://github.com/pytest-failgate/pytest-failgate"
    commit = "0123456789abcdef0123456789abcdef01234567"
    text = record(url=url, vcs_info={"vcs": "git", "commit_id": commit,
                                     "requested_revision": "main"})
    assert command_for("duckdb", text) == (
        f'pip install "pytest-failgate[duckdb] @ git+{url}@{commit}"')
    text = record(url=url, vcs_info={"vcs": "git", "commit_id": commit}, subdirectory="py")
    assert command_for("duckdb", text).endswith(f'@ git+{url}@{commit}#subdirectory=py"')


@pytest.mark.parametrize("text", ["", "not json", "[]", '{"url": 3}', '{"dir_info": {}}'])
def test_a_record_that_cannot_be_read_falls_back_to_the_index(text: str) -> None:
    assert command_for("fast", text) == 'pip install "pytest-failgate[fast]"'


def test_a_path_a_shell_would_expand_is_quoted_so_it_is_not(tmp_path: Path) -> None:
    odd = tmp_path / "a $HOME `x` dir"
    odd.mkdir()
    command = command_for("mcp", record(url=odd.as_uri(), dir_info={"editable": True}))
    assert shlex.split(command) == ["pip", "install", "-e", f"{odd}[mcp]"]


def test_the_running_copy_is_named_as_it_was_installed() -> None:
    """The test extra installs this checkout (editable or not): the hint names it."""
    installed = [d for d in metadata.distributions(name="pytest-failgate")
                 if d.read_text("INSTALLER") is not None]
    if not installed or installed[0].read_text("direct_url.json") is None:
        pytest.skip("this copy was installed from an index or without a record")
    assert f'"{ROOT}[duckdb]"' in install_command("duckdb")


def test_a_missing_engine_says_which_extra_to_install() -> None:
    with pytest.raises(FailgateError) as raised:
        optional("no_such_module_for_failgate", "the Spark engine", "spark")
    assert raised.value.message == (
        f"the Spark engine needs the spark extra (no_such_module_for_failgate): "
        f"{install_command('spark')}")


def _string_constants(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


@pytest.mark.slow
def test_only_the_helper_words_an_install_command() -> None:
    """A hint written by hand would name the index whatever the source; grep the package."""
    written = [f"{path.relative_to(ROOT)}:{line}" for path in sorted(PACKAGE.rglob("*.py"))
               if path.name != "install.py"
               for line, text in _string_constants(path) if re.search(r"pip3? install", text)]
    assert written == []


@pytest.mark.slow
def test_every_extra_a_message_names_exists() -> None:
    named = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("needs_extra", "optional", "install_command")):
                index = 0 if node.func.id == "install_command" else (
                    2 if node.func.id == "optional" else 1)
                argument = node.args[index] if len(node.args) > index else None
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    named.add(argument.value)
    assert named >= {"duckdb", "spark", "mcp", "inspect"}
    assert named <= EXTRAS


def test_the_message_names_what_needs_the_extra() -> None:
    assert needs_extra("failgate mcp", "mcp", "the MCP SDK") == (
        f"failgate mcp needs the mcp extra (the MCP SDK): {install_command('mcp')}")
