"""One plugin manager: every source of plugins, in one order, with one conflict rule, in
pytest and in the ``failgate`` command alike."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from helpers import cases_for, write_summary
from helpers import run_cli as run

from pytest_failgate.commands import plugins

READER = '''
class Logger:
    suffixes = (".json",)
    name = NAME

    def read(self, path):
        with open("order.log", "a", encoding="utf-8") as log:
            log.write(f"{NAME} {type(config_seen[0]).__name__}\\n")
        return None

config_seen = []

def pytest_failgate_readers(config):
    config_seen[:] = [config]
    return [Logger()]
'''

STATUS = '''
from pathlib import Path

from pytest_failgate.core.taxonomy.files import load_taxonomy_file

def pytest_failgate_taxonomies(config):
    return {"status": load_taxonomy_file(Path(__file__).with_name("status.yaml"))}
'''


def _module(root: Path, name: str, text: str) -> None:
    (root / f"{name}.py").write_text(text, encoding="utf-8")


@pytest.fixture
def sources(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One reader plugin from each source: an entry point, the ini key, one given for the
    run, and a conftest.py; each logs when it is tried."""
    root = pytester.path
    for name in ("from_entry_point", "from_ini", "given"):
        _module(root, name, f"NAME = {name!r}\n" + READER)
    pytester.makeconftest("NAME = 'conftest'\n" + READER)
    pytester.makeini("[pytest]\nfailgate_plugins = from_ini.py\n")
    monkeypatch.syspath_prepend(str(root))
    point = EntryPoint("tickets", "from_entry_point", plugins.ENTRY_POINT_GROUP)
    monkeypatch.setattr(plugins, "entry_points", lambda group: [point])
    write_summary(root / "reports" / "run.json", cases_for({"retrieval_miss": 2}, passed=3))
    return root


def test_plugins_are_tried_in_the_documented_order_in_pytest_and_the_cli(
    pytester: pytest.Pytester, sources: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = pytester.runpytest("--failgate=reports", "--failgate-plugins=given.py",
                                "--failgate-init")
    assert result.ret == 0, result.stdout.str()
    assert (sources / "order.log").read_text().splitlines() == [
        "from_entry_point Config", "from_ini Config", "given Config", "conftest Config"]
    (sources / "order.log").unlink()
    code, _, err = run(capsys, "show", "reports", "--plugins", "given.py")
    assert code == 0, err
    # the same order; a conftest.py is pytest's alone
    assert (sources / "order.log").read_text().splitlines() == [
        "from_entry_point Config", "from_ini Config", "given Config"]


def test_a_module_named_twice_is_loaded_once(
    sources: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "show", "reports", "--plugins", "from_ini.py")
    assert code == 0, err
    assert (sources / "order.log").read_text().splitlines() == [
        "from_entry_point Config", "from_ini Config"]


@pytest.mark.slow
def test_two_plugins_defining_one_taxonomy_is_an_error_naming_both_in_every_front_end(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    root = pytester.path
    _module(root, "status_a", STATUS)
    _module(root, "status_b", STATUS)
    (root / "status.yaml").write_text("name: status\nfailed: status != 'ok'\n"
                                      "categories:\n  - {name: other}\n")
    pytester.makeini("[pytest]\nfailgate_plugins = status_a.py\n")
    write_summary(root / "reports" / "run.json", cases_for({"retrieval_miss": 2}, passed=3))
    message = ("two plugins define the taxonomy 'status': failgate_plugins status_a.py and "
               "failgate_plugins status_b.py; rename one or drop one of the plugins")
    code, _, err = run(capsys, "init", "reports", "--plugins", "status_b.py")
    assert (code, err) == (2, f"failgate: error: {message}\n")
    result = pytester.runpytest("--failgate=reports", "--failgate-plugins=status_b.py",
                                "--failgate-init")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines([message])
    pytester.makeconftest(STATUS)
    result = pytester.runpytest("--failgate=reports", "--failgate-init")
    result.stdout.fnmatch_lines(["two plugins define the taxonomy 'status': failgate_plugins "
                                 "status_a.py and conftest conftest.py; *"])


def test_a_plugin_whose_hook_raises_is_one_error_naming_it(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    _module(pytester.path, "broken", "def pytest_failgate_readers(config):\n"
                                     "    raise RuntimeError('no network here')\n")
    write_summary(pytester.path / "reports" / "run.json", cases_for({}, passed=3))
    code, _, err = run(capsys, "show", "reports", "--plugins", "broken.py")
    assert (code, err) == (2, "failgate: error: plugin failgate_plugins broken.py: "
                              "pytest_failgate_readers raised RuntimeError: no network here\n")
