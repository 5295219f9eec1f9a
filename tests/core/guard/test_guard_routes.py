"""Routes to a looser gate that leave ``ceilings.yaml``'s numbers alone: the guard sees each.

Every test starts from a real git repository (the example reports, the repository's
ceilings file, a pytest configuration that turns the gate on), committed as ``main``,
then makes one change and runs ``failgate guard main`` as CI would. Each route has its
control: the same kind of change that does not loosen (or one with a reason written in
this change) passes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import partial
from pathlib import Path

import pytest
from helpers import EXAMPLES, guard_cli

from pytest_failgate.core.guard import loosening
from pytest_failgate.options import OPTIONS

# the guard as the front ends call it: with the option table
guard = partial(loosening.guard, options=OPTIONS)
ROOT = EXAMPLES.parent
DATA = Path(__file__).resolve().parents[2] / "data"
PLUGIN_NEVER_FAILS = '''\
from pathlib import Path

from pytest_failgate.core.taxonomy.files import load_taxonomy_file


def pytest_failgate_taxonomies(config):  # a rag whose failed never holds
    return {"rag": load_taxonomy_file(Path(__file__).with_name("never.yaml"))}
'''
PLUGIN_FIXTURE_ONLY = "import pytest\n\n\n@pytest.fixture\ndef answer():\n    return 42\n"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def commit(repo: Path, message: str = "change") -> None:
    git(repo, "add", "-A")
    git(repo, "-c", "user.email=ci@example.com", "-c", "user.name=ci", "commit", "-q", "-m",
        message)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project at main: reports, ceilings, a pytest.ini that gates ``reports``."""
    project = tmp_path / "project"
    shutil.copytree(EXAMPLES / "reports", project / "reports")
    shutil.copy(ROOT / "ceilings.yaml", project / "ceilings.yaml")
    (project / "pytest.ini").write_text("[pytest]\nfailgate = reports\naddopts = -ra\n")
    git(project, "init", "-q", "-b", "main")
    commit(project, "base")
    monkeypatch.chdir(project)
    return project


_guard = guard_cli


def _ini(repo: Path, text: str) -> None:
    (repo / "pytest.ini").write_text("[pytest]\nfailgate = reports\n" + text)


def _reason(repo: Path, reason: str) -> None:
    path = repo / "ceilings.yaml"
    path.write_text(path.read_text().replace("version: 1\n", f"version: 1\nreason: {reason}\n"))


def test_the_unchanged_repository_passes(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _guard(capsys)
    assert code == 0, out
    assert "nothing in ceilings.yaml is looser than at main" in out


# --------------------------------------------------------------------------- plugins


def test_a_conftest_plugin_replacing_a_taxonomy_is_named_with_its_source(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A ``conftest.py`` whose ``rag`` never fails: check and pytest still said "taxonomy
    rag" and passed; the guard passed too."""
    (repo / "conftest.py").write_text(PLUGIN_NEVER_FAILS)
    code, out = _guard(capsys)
    assert code == 1, out
    assert "plugin conftest.py: none -> source " in out
    assert "(no reason written)" in out


def test_a_conftest_without_failgate_hooks_is_no_plugin(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "conftest.py").write_text(PLUGIN_FIXTURE_ONLY)
    code, out = _guard(capsys)
    assert code == 0, out


def test_a_plugin_with_a_reason_written_in_this_change_passes(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "conftest.py").write_text(PLUGIN_NEVER_FAILS)
    _reason(repo, '"our own rag: decided in #12"')
    code, out = _guard(capsys)
    assert code == 0, out
    assert 'reason: "our own rag: decided in #12"' in out


def test_an_ini_plugin_file_added_or_edited_is_caught(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A reader plugin (one that drops cases, say) through ``failgate_plugins``."""
    (repo / "tools").mkdir()
    plugin = repo / "tools" / "readers.py"
    plugin.write_text("def pytest_failgate_taxonomies(config):\n    return {}\n")
    _ini(repo, "failgate_plugins = tools/readers.py\n")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "plugin tools/readers.py: none -> source" in out
    commit(repo, "the plugin, reviewed")
    code, out = _guard(capsys)
    assert code == 0, out  # the same plugin at main: nothing changed
    plugin.write_text("def pytest_failgate_taxonomies(config):\n    return {}  # edited\n")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "plugin tools/readers.py: source " in out


def test_an_installed_plugin_replacing_a_builtin_taxonomy_is_named(
        repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """An entry point's plugin lives outside the repository: no ref has it, so replacing a
    built-in taxonomy the ceilings use is named (module, source digest) every time."""
    module = tmp_path_factory.mktemp("site") / "evil_plugin.py"
    module.write_text(PLUGIN_NEVER_FAILS)
    found = guard(repo / "ceilings.yaml", "main", repo,
                  origins={"rag": ("entry point evil (evil_plugin)", str(module))})
    assert not found.passed
    [change] = found.routes
    assert change.label == "taxonomy rag"
    assert "replaced by plugin entry point evil (evil_plugin)" in str(change.new)
    assert str(module) in str(change.new)
    # its own name, not a built-in's: nothing replaced
    assert guard(repo / "ceilings.yaml", "main", repo,
                 origins={"ours": ("entry point ours", str(module))}).passed


# --------------------------------------------------------------------------- configuration


@pytest.mark.slow
@pytest.mark.parametrize("addopts", ['-m "not failgate"',
                                     "--deselect ceilings.yaml::eval_summary::unknown",
                                     "-p no:failgate", "-k 'not unknown'",
                                     "--ignore=ceilings.yaml"])
def test_addopts_that_deselect_gate_items_are_caught(
        repo: Path, capsys: pytest.CaptureFixture[str], addopts: str) -> None:
    _ini(repo, f"addopts = -ra {addopts}\n")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "pytest.ini addopts: none -> " in out


@pytest.mark.slow
@pytest.mark.parametrize("addopts", ["", "-ra -v --failgate-strict", "-ra -n 2"])
def test_addopts_that_select_nothing_away_pass(
        repo: Path, capsys: pytest.CaptureFixture[str], addopts: str) -> None:
    _ini(repo, f"addopts = {addopts}\n" if addopts else "")
    code, out = _guard(capsys)
    assert code == 0, out


def test_a_deselection_with_a_reason_passes(repo: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    _ini(repo, 'addopts = -m "not failgate"\n')
    _reason(repo, '"the gate runs in its own CI job (#31)"')
    code, out = _guard(capsys)
    assert code == 0, out


def test_strict_off_is_a_loosening_and_on_is_not(repo: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    _ini(repo, "failgate_strict = true\n")
    assert _guard(capsys)[0] == 0
    commit(repo, "strict")
    _ini(repo, "failgate_strict = false\n")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "pytest.ini failgate_strict: true -> false" in out


def test_the_gated_reports_changed_in_the_ini_are_caught(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "pytest.ini").write_text("[pytest]\nfailgate = reports/real100\n")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "pytest.ini failgate: reports -> reports/real100" in out


# --------------------------------------------------------------------------- location


def test_a_ceilings_file_linked_outside_the_repository_is_caught(
        repo: Path, capsys: pytest.CaptureFixture[str],
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """It was "no ceilings file existed at main": the file outside is seen by no review."""
    looser = tmp_path_factory.mktemp("elsewhere") / "looser.yaml"
    looser.write_text((repo / "ceilings.yaml").read_text().replace("unknown: 35",
                                                                   "unknown: 900"))
    (repo / "ceilings.yaml").unlink()
    os.symlink(looser, repo / "ceilings.yaml")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "location: ceilings.yaml in the repository -> " in out
    assert "outside the repository" in out
    assert "cannot be excused: no review sees it; put the file itself back" in out
    assert "no ceilings file existed" not in out


def test_an_ini_ceilings_path_outside_the_repository_is_caught(
        repo: Path, capsys: pytest.CaptureFixture[str],
        tmp_path_factory: pytest.TempPathFactory) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    shutil.copy(repo / "ceilings.yaml", elsewhere / "ceilings.yaml")
    _ini(repo, f"failgate_ceilings = {os.path.relpath(elsewhere, repo)}/ceilings.yaml\n")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "outside the repository" in out


def test_a_ceilings_file_linked_inside_the_repository_is_compared_through_the_link(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The control: a link to a file of the repository is no loosening by itself."""
    (repo / "gate").mkdir()
    shutil.move(repo / "ceilings.yaml", repo / "gate" / "ceilings.yaml")
    os.symlink("gate/ceilings.yaml", repo / "ceilings.yaml")
    code, out = _guard(capsys)
    assert code == 0, out


# --------------------------------------------------------------------------- reports


def test_a_report_renamed_away_from_its_override_is_caught(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``eval_summary``'s override is stricter than the defaults; renamed, the report
    was gated by the defaults with a warning and exit 0."""
    shutil.move(repo / "reports" / "eval_summary.json", repo / "reports" / "eval_v2.json")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "reports.eval_summary: applies to a report of the run -> applies to no report" in out


def test_a_renamed_report_with_a_reason_on_its_override_passes(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.move(repo / "reports" / "eval_summary.json", repo / "reports" / "eval_v2.json")
    path = repo / "ceilings.yaml"
    path.write_text(path.read_text().replace(
        "    total: 7\n", '    total: {max: 7, reason: "eval_v2 replaces it; #40 moves the '
        'override"}\n', 1))
    code, out = _guard(capsys)
    assert code == 0, out


# --------------------------------------------------------------------------- reasons


def test_an_old_reason_respaced_does_not_excuse_a_new_loosening(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A top-level reason re-used with a trailing space excused a taxonomy swap; here a
    removed limit (what only the top-level reason can excuse)."""
    _reason(repo, '"the verifier was retrained"')
    commit(repo, "a reason")
    path = repo / "ceilings.yaml"
    path.write_text(path.read_text().replace("  total: 180\n", "").replace(
        'reason: "the verifier was retrained"', 'reason: "the verifier was  retrained "'))
    code, out = _guard(capsys)
    assert code == 1, out
    assert "ceilings.total: 180 -> not limited  (no reason written)" in out
    path.write_text(path.read_text().replace('"the verifier was  retrained "',
                                             '"totals are gated per report now (#44)"'))
    code, out = _guard(capsys)
    assert code == 0, out


@pytest.mark.slow
@pytest.mark.parametrize("disguised", [
    "the verifier was\u200b retrained",  # a zero-width space (Unicode format, Cf)
    "the verifier was re\u00adtrained",  # a soft hyphen (Cf)
    "\ufeffthe verifier was retrained\u2060",  # a byte-order mark, a word joiner
    "the\u00a0verifier was\u2003retrained",  # a no-break space, an em space
    "the verifier was retrained.",  # punctuation added
    "The Verifier was RETRAINED",  # re-cased
    "\uff54\uff48\uff45 veri\ufb01er was retrained",  # full-width, a ligature (NFKC)
    "the v\u0435rifi\u0435r w\u0430s retrained",  # Cyrillic ie and a for the Latin letters
    "the verifier was retrained\u200e\u202e",  # bidi marks and an override
])
def test_an_old_reason_with_invisible_or_lookalike_changes_is_not_a_new_reason(
        repo: Path, capsys: pytest.CaptureFixture[str], disguised: str) -> None:
    """What a reviewer reads as the old reason does not excuse a new loosening: reasons are
    compared by their letters and digits after NFKC, casefolding and lookalike folding."""
    _reason(repo, '"the verifier was retrained"')
    commit(repo, "a reason")
    path = repo / "ceilings.yaml"
    escaped = disguised.encode("ascii", "backslashreplace").decode()  # YAML's \x and \u
    path.write_text(path.read_text().replace("  total: 180\n", "").replace(
        '"the verifier was retrained"', f'"{escaped}"'))
    code, out = _guard(capsys)
    assert code == 1, out
    assert "ceilings.total: 180 -> not limited  (no reason written)" in out


def test_a_reason_of_only_invisible_characters_is_no_reason(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = repo / "ceilings.yaml"
    _reason(repo, '"\\u200b\\u00ad\\u2060 ."')
    path.write_text(path.read_text().replace("  total: 180\n", ""))
    code, out = _guard(capsys)
    assert code == 1, out
    assert "ceilings.total: 180 -> not limited  (no reason written)" in out
    path.write_text(path.read_text().replace(  # the control: words of its own
        '"\\u200b\\u00ad\\u2060 ."', '"totals are gated per report now (#44)"'))
    code, out = _guard(capsys)
    assert code == 0, out


def test_pytest_guard_names_a_conftest_plugin_the_session_loaded(
        pytester: pytest.Pytester) -> None:
    """Under pytest the conftest plugin really replaces rag (the gate passes on nothing
    failed); the guard item fails naming it."""
    import pytest_failgate

    project = pytester.path
    shutil.copytree(EXAMPLES / "reports", project / "reports")
    shutil.copy(ROOT / "ceilings.yaml", project / "ceilings.yaml")
    pytester.makeini("[pytest]\nfailgate = reports\n")
    git(project, "init", "-q", "-b", "main")
    commit(project, "base")
    rag = (Path(pytest_failgate.__file__).parent / "core" / "taxonomy" / "builtin" /
           "rag.yaml").read_text()
    (project / "never.yaml").write_text(rag.replace(
        rag[rag.index("\nfailed:"):rag.index("\n", rag.index("\nfailed:") + 1)],
        '\nfailed: "false"'))
    (project / "conftest.py").write_text(PLUGIN_NEVER_FAILS)
    result = pytester.runpytest("--failgate-guard=main", "-p", "no:xdist")
    result.stdout.fnmatch_lines(["*plugin conftest.py: none -> source *(no reason written)*"])
    assert result.ret == 1
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed") == 1  # the guard; every count passes under the new rag


# --------------------------------------------------------------------------- hidden plugins


PLUGIN_HIDDEN_HOOK = PLUGIN_NEVER_FAILS.replace(
    "def pytest_failgate_taxonomies(config):", "def _never(config):") + (
    '\n\nglobals()["pytest_failgate_" + "taxonomies"] = _never  # no hook name in the text\n')


@pytest.mark.slow
@pytest.mark.parametrize("xdist", [  # as CI runs it; a whole xdist run: CI runs it (CI=true)
    [], pytest.param(["-n", "2"], marks=pytest.mark.slow)], ids=["no xdist", "xdist"])
def test_pytest_guard_names_a_conftest_whose_hook_its_text_does_not_name(
        pytester: pytest.Pytester, xdist: list[str]) -> None:
    """The text scan cannot see ``globals()[...] = ...``; the session that loaded it can."""
    import pytest_failgate

    project = pytester.path
    shutil.copytree(EXAMPLES / "reports", project / "reports")
    shutil.copy(ROOT / "ceilings.yaml", project / "ceilings.yaml")
    pytester.makeini("[pytest]\nfailgate = reports\n")
    (project / "conftest.py").write_text("# no failgate hook yet\n")
    git(project, "init", "-q", "-b", "main")
    commit(project, "base")
    rag = (Path(pytest_failgate.__file__).parent / "core" / "taxonomy" / "builtin" /
           "rag.yaml").read_text()
    start = rag.index("\nfailed:")
    (project / "never.yaml").write_text(
        rag.replace(rag[start:rag.index("\n", start + 1)], '\nfailed: "false"'))
    (project / "conftest.py").write_text(PLUGIN_HIDDEN_HOOK)
    result = pytester.runpytest("--failgate-guard=main", *xdist)
    result.stdout.fnmatch_lines(["*plugin conftest.py: source * -> source *(no reason written)*"])
    assert result.ret == 1


def test_a_plugin_outside_the_repository_named_in_the_ini_is_caught(
        repo: Path, capsys: pytest.CaptureFixture[str],
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """No review sees the plugin's file; adding it to ``failgate_plugins`` is the change."""
    plugin = tmp_path_factory.mktemp("elsewhere") / "plugin.py"
    plugin.write_text("def pytest_failgate_taxonomies(config):\n    return {}\n")
    _ini(repo, f"failgate_plugins = {plugin}\n")
    code, out = _guard(capsys)
    assert code == 1, out
    assert "pytest.ini failgate_plugins: not set -> " in out


QUIET_READER = '''\
from pytest_failgate import api


class Quiet(api.Reader):  # reads a promptfoo export and keeps no failure
    name = "quiet"
    suffixes = (".json", ".txt")

    def read(self, path):
        return api.ReaderOutput(cases=[{"id": "1", "status": "ok"}])
'''


def test_an_installed_reader_taking_a_builtin_formats_reports_is_named(
        repo: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """An entry point's reader that reads promptfoo's files before the built-in reader
    (dropping their failures) is named with its module and source digest; one reading a
    format of its own is not (the control)."""
    import importlib.util

    from pytest_failgate.core.guard.routes import readers_in_use

    site = tmp_path_factory.mktemp("site")
    (site / "quiet_reader.py").write_text(QUIET_READER)
    spec = importlib.util.spec_from_file_location("quiet_reader", site / "quiet_reader.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    promptfoo = DATA / "promptfoo" / "generated" / "run1" / "results.json"
    own = site / "cases.txt"
    own.write_text("1,ok\n")

    taken = readers_in_use([module.Quiet()], {"quiet": promptfoo})
    assert taken == {"quiet": (str(site / "quiet_reader.py"), True)}
    found = guard(repo / "ceilings.yaml", "main", repo, readers=taken)
    assert not found.passed
    [change] = found.routes
    assert change.label == "reader quiet"
    assert f"read by plugin quiet ({site / 'quiet_reader.py'}, source " in str(change.new)

    its_own = readers_in_use([module.Quiet()], {"quiet": own})
    assert its_own == {"quiet": (str(site / "quiet_reader.py"), False)}
    assert guard(repo / "ceilings.yaml", "main", repo, readers=its_own).passed
