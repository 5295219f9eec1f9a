"""The public plugin API, ``pytest_failgate.api``: what a plugin builds taxonomies and
readers with, used as a plugin author would, in pytest and in the ``failgate`` command."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import run_cli as run

from pytest_failgate import api
from pytest_failgate.core.taxonomy import classify

STATUS_YAML = """\
name: status
failed: status != "ok"
categories:
  - {name: timeout, when: status == "timeout", hint: raise the timeout}
  - {name: other}
"""

PLUGIN = '''
from pytest_failgate import api

def pytest_failgate_taxonomies(config):
    return {"status": api.taxonomy(
        "status", failed="status != 'ok'",
        categories=[{"name": "timeout", "when": "status == 'timeout'"}, "other"])}

class Lines(api.Reader):
    name = "lines"
    suffixes = (".txt",)

    def read(self, path):
        rows = [line.split(",") for line in path.read_text().splitlines() if line]
        return api.ReaderOutput(cases=[{"id": i, "status": s} for i, s in rows])

def pytest_failgate_readers(config):
    return [Lines()]
'''


def test_the_public_api_is_this_small_documented_set() -> None:
    assert sorted(api.__all__) == [
        "FailgateError", "Loc", "Misshapen", "PluginConfig", "Reader", "ReaderOutput",
        "Taxonomy", "ToolRun", "ZipArchive", "describe", "did_you_mean", "hookimpl", "json_lines",
        "load_json", "loads", "open_file", "parse_json_file", "read_bytes", "repeat_of",
        "sequential_gate", "shown", "taxonomy", "taxonomy_from_yaml", "top_level"]
    assert all(getattr(api, name).__doc__ for name in api.__all__)


def test_a_taxonomy_from_keywords_classifies_as_the_same_one_in_yaml() -> None:
    from_yaml = api.taxonomy_from_yaml(STATUS_YAML)
    from_keywords = api.taxonomy(
        "status", failed='status != "ok"',
        categories=[{"name": "timeout", "when": 'status == "timeout"',
                     "hint": "raise the timeout"}, "other"])
    cases = [{"status": s} for s in ("ok", "timeout", "crash", "timeout")]
    assert [classify(from_yaml, c) for c in cases] == [None, "timeout", "other", "timeout"]
    assert [classify(from_keywords, c) for c in cases] == [classify(from_yaml, c)
                                                          for c in cases]
    assert from_keywords.category_names == from_yaml.category_names


def test_a_bad_taxonomy_is_one_error_naming_where() -> None:
    with pytest.raises(api.FailgateError, match=r"^<taxonomy mine>:2:18: syntax error") as info:
        api.taxonomy("mine", failed="status !=", categories=["other"])
    assert "status !=" in str(info.value)
    with pytest.raises(api.FailgateError, match=r"^rules.yaml:2:1: unknown key 'faild'"):
        api.taxonomy_from_yaml("name: x\nfaild: 'true'\ncategories: [{name: o}]\n",
                               "rules.yaml")


def test_a_reader_needs_only_a_name_suffixes_and_read() -> None:
    class Minimal(api.Reader):
        name = "minimal"

        def read(self, path: Path) -> api.ReaderOutput | None:
            return None

    reader = Minimal()
    assert (reader.suffixes, reader.taxonomy, reader.claims(b"anything")) == (
        (".json",), None, True)


def test_a_plugin_written_with_the_api_gives_the_same_numbers_in_pytest_and_the_cli(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    (pytester.path / "status_plugin.py").write_text(PLUGIN)
    pytester.makeini("[pytest]\nfailgate_plugins = status_plugin.py\n")
    (pytester.path / "reports").mkdir()
    (pytester.path / "reports" / "run.txt").write_text("a,ok\nb,timeout\nc,timeout\nd,crash\n")
    (pytester.path / "ceilings.yaml").write_text(
        "version: 1\ntaxonomy: status\nceilings:\n  timeout: 1\n  other: 1\n")
    result = pytester.runpytest("--failgate=reports")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["timeout: 2 cases, 1 over the ceiling of 1", "  cases    b, c"])
    code, out, _ = run(capsys, "check", "reports")
    assert code == 1
    assert "timeout: 2 cases, 1 over the ceiling of 1" in out


def test_a_reader_without_the_base_class_still_loads_with_the_defaults(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    (pytester.path / "duck.py").write_text(PLUGIN.replace("(api.Reader)", ""))
    (pytester.path / "broken.py").write_text(
        "class NoRead:\n    name = 'x'\n    suffixes = ('.txt',)\n\n"
        "def pytest_failgate_readers(config):\n    return [NoRead()]\n")
    (pytester.path / "reports").mkdir()
    (pytester.path / "reports" / "run.txt").write_text("a,ok\nb,timeout\n")
    code, out, err = run(capsys, "show", "reports", "--plugins", "duck.py", "--taxonomy",
                         "status")
    assert code == 0, err
    assert "run  2 cases, 1 failed" in out
    code, _, err = run(capsys, "show", "reports", "--plugins", "broken.py")
    assert code == 2
    assert err.startswith("failgate: error: plugin failgate_plugins broken.py: <")
    assert "NoRead object" in err
    assert "is not a reader: it needs a name, suffixes and read()" in err
