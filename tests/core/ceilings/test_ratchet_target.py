"""The ratchet writes the repository's own ceilings file, once, or says why not.

Through a symbolic link, outside the repository (a linked folder, an ini path), over a
read-only file or into a folder it cannot write: one line naming the file, exit 2, the
file untouched. Two ratchets at once (separate processes, started together): one lowers,
the other finds the file changed; never two "lowered" with one lowering lost.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLES, cases_for, write_ceilings, write_summary
from helpers import run_cli as run

from pytest_failgate.core.base.errors import FailgateError
from pytest_failgate.core.ceilings import writeback
from pytest_failgate.core.gate.runner import GateConfig, run_gate
from pytest_failgate.core.taxonomy import builtin_taxonomies


def _slack(path: Path) -> str:
    """Give the example's eval_summary total some slack, so a ratchet has work to do."""
    path.write_text(path.read_text().replace("    total: 7\n", "    total: 9\n"))
    return path.read_text()


def test_a_symlinked_ceilings_file_is_not_written_through(
        workdir: Path, capsys: pytest.CaptureFixture[str], tmp_path_factory: Any) -> None:
    outside = tmp_path_factory.mktemp("elsewhere") / "looser.yaml"
    outside.write_text(_slack(workdir / "ceilings.yaml"))
    (workdir / "ceilings.yaml").unlink()
    (workdir / "ceilings.yaml").symlink_to(outside)
    before = outside.read_text()
    code, out, err = run(capsys, "ratchet", "examples/reports")
    assert code == 2
    assert err.count("\n") == 1
    assert "ceilings.yaml: is a symbolic link" in err
    assert outside.read_text() == before
    assert "lowered" not in out


def test_a_ceilings_file_in_a_linked_folder_outside_the_repository_is_not_written(
        workdir: Path, capsys: pytest.CaptureFixture[str], tmp_path_factory: Any) -> None:
    subprocess.run(["git", "init", "-q", str(workdir)], check=True)
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "ceilings.yaml").write_text(_slack(workdir / "ceilings.yaml"))
    (workdir / "conf").symlink_to(elsewhere, target_is_directory=True)
    before = (elsewhere / "ceilings.yaml").read_text()
    code, _, err = run(capsys, "ratchet", "examples/reports", "--ceilings", "conf/ceilings.yaml")
    assert code == 2
    assert "is outside the repository" in err
    assert (elsewhere / "ceilings.yaml").read_text() == before


def test_an_ini_ceilings_path_outside_the_repository_is_not_written(
        workdir: Path, capsys: pytest.CaptureFixture[str], tmp_path_factory: Any) -> None:
    subprocess.run(["git", "init", "-q", str(workdir)], check=True)
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "ceilings.yaml").write_text(_slack(workdir / "ceilings.yaml"))
    (workdir / "pytest.ini").write_text(
        f"[pytest]\nfailgate_ceilings = {os.path.relpath(elsewhere, workdir)}/ceilings.yaml\n")
    before = (elsewhere / "ceilings.yaml").read_text()
    code, _, err = run(capsys, "ratchet", "examples/reports")
    assert code == 2
    assert "is outside the repository" in err
    assert (elsewhere / "ceilings.yaml").read_text() == before


def test_the_repositorys_own_ceilings_file_is_lowered(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The control: the same project, the file where it belongs, is ratcheted."""
    subprocess.run(["git", "init", "-q", str(workdir)], check=True)
    (workdir / "conf").mkdir()
    (workdir / "conf" / "ceilings.yaml").write_text(_slack(workdir / "ceilings.yaml"))
    code, out, _ = run(capsys, "ratchet", "examples/reports", "--ceilings", "conf/ceilings.yaml")
    assert code == 0
    assert "lowered 1 ceiling" in out
    assert "    total: 7\n" in (workdir / "conf" / "ceilings.yaml").read_text()


def test_a_read_only_ceilings_file_is_not_replaced(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ceilings = workdir / "ceilings.yaml"
    before = _slack(ceilings)
    ceilings.chmod(0o444)
    code, _, err = run(capsys, "ratchet", "examples/reports")
    assert code == 2
    assert "ceilings.yaml: is read-only; not written" in err
    assert ceilings.read_text() == before
    assert stat.S_IMODE(ceilings.stat().st_mode) == 0o444


def test_a_ratchet_that_cannot_write_its_folder_is_one_line_and_exit_2(
        workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only folder (simulated: the tests may run as root, whom no mode stops)."""
    before = _slack(workdir / "ceilings.yaml")
    if os.geteuid() != 0:
        workdir.chmod(0o555)
    else:
        def refuse(*args: Any, **kwargs: Any) -> None:
            raise PermissionError(13, "Permission denied")

        monkeypatch.setattr(os, "replace", refuse)  # the rename into the folder
    try:
        code, _, err = run(capsys, "ratchet", "examples/reports")
    finally:
        workdir.chmod(0o755)
    assert code == 2
    assert err.startswith("failgate: error: ceilings.yaml: cannot write: Permission denied")
    assert err.count("\n") == 1
    assert (workdir / "ceilings.yaml").read_text() == before


def test_init_into_a_missing_folder_is_one_line_and_exit_2(
        workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "init", "examples/reports", "--ceilings", "nowhere/c.yaml")
    assert code == 2
    assert "init: not written: nowhere/c.yaml: cannot write: No such file or directory" in out


def test_pytest_ratchet_through_a_symlink_fails_the_session(
        pytester: pytest.Pytester, tmp_path_factory: Any) -> None:
    cases = cases_for({"retrieval_miss": 1}, passed=3)
    write_summary(pytester.path / "reports" / "eval_summary.json", cases)
    outside = write_ceilings(tmp_path_factory.mktemp("elsewhere") / "ceilings.yaml",
                             {"retrieval_miss": 5})
    before = outside.read_text()
    (pytester.path / "ceilings.yaml").symlink_to(outside)
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest("--failgate=reports", "--failgate-ratchet", "-p", "no:xdist")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*ratchet: *ceilings.yaml: is a symbolic link*"])
    assert outside.read_text() == before


# --------------------------------------------------------------------------- two at once


def _ratchet_when_released(barrier: Any, path: str, result: Any, queue: Any) -> None:
    barrier.wait()
    try:
        lines = writeback.ratchet(Path(path), result,
                                  writeback.outcomes_from_verdicts(result)).lines
    except FailgateError as exc:
        lines = [f"error: {exc}"]
    queue.put(lines[0])


@pytest.mark.heavy
def test_two_ratchets_at_once_never_both_claim_a_lowering(tmp_path: Path) -> None:
    """Each process gated its own report against the same file and lowers another
    category; started together, exactly one lowers and the other finds the file changed.
    (Without the lock, both said "lowered" in about a third of rounds and one lowering was
    lost.)"""
    rag = builtin_taxonomies()
    ceilings = tmp_path / "ceilings.yaml"
    original = (
        "version: 1\ntaxonomy: rag\nceilings:\n  retrieval_miss: 9\n  unknown: 9\n"
        "  verifier_false_negative: 9\n  verifier_false_positive: 9\n"
        "  planner_under_decomposition: 9\n  generator_hallucination: 9\n")
    ceilings.write_text(original)
    results = []
    for name, counts in (("a", {"retrieval_miss": 2, "unknown": 9}),
                         ("b", {"retrieval_miss": 9, "unknown": 3})):
        write_summary(tmp_path / name / "eval_summary.json", cases_for(counts, passed=2))
        gate = run_gate(GateConfig((tmp_path / name,), ceilings, mode="ratchet"), rag)
        results.append(gate.result())
    context: Any = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    for _ in range(12):
        ceilings.write_text(original)
        barrier, queue = context.Barrier(2), context.Queue()
        workers = [context.Process(target=_ratchet_when_released,
                                   args=(barrier, str(ceilings), result, queue))
                   for result in results]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(60)
        said = sorted(queue.get(timeout=5) for _ in workers)
        lowered = [line for line in said if line.startswith("ratchet: lowered")]
        assert len(lowered) == 1, said
        lost = said[1 - said.index(lowered[0])]
        assert lost.startswith("error: "), lost
        assert "changed during the run" in lost
        assert "ceilings was not written; run the ratchet again" in lost
        text = ceilings.read_text()
        assert ("retrieval_miss: 2\n" in text) != ("unknown: 3\n" in text), text


def test_the_ratchet_that_finds_the_file_changed_exits_2_and_says_the_lowering_was_lost(
        workdir: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Another ratchet (or an edit) wrote the file between this run's reading and writing
    it: nothing is written, and the exit says so (it was 0, so CI could not tell)."""
    ceilings = workdir / "ceilings.yaml"
    _slack(ceilings)
    real = writeback.ratchet

    def edited_meanwhile(path: Path, *args: Any, **kwargs: Any) -> writeback.Rewrite:
        path.write_text(path.read_text() + "# another ratchet was here\n")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(writeback, "ratchet", edited_meanwhile)
    code, out, err = run(capsys, "ratchet", "examples/reports")
    assert code == 2
    assert err.strip() == (
        "failgate: error: ceilings.yaml: changed during the run (another ratchet, or an "
        "edit): the lowering of 1 ceiling was not written; run the ratchet again")
    assert "total: 9\n" in ceilings.read_text()  # not lowered
    monkeypatch.setattr(writeback, "ratchet", real)  # the control: run again, it lowers
    code, out, _ = run(capsys, "ratchet", "examples/reports")
    assert code == 0
    assert "ratchet: lowered 1 ceiling in ceilings.yaml:" in out


@pytest.mark.slow
def test_the_pytest_ratchet_that_finds_the_file_changed_fails_the_session(
        pytester: pytest.Pytester) -> None:
    """Under ``--failgate-ratchet`` a conftest edits the ceilings file while the gate items
    run (as a second ratchet would): the session fails and says the lowering was lost."""
    shutil.copytree(EXAMPLES / "reports", pytester.path / "reports")
    ceilings = pytester.path / "ceilings.yaml"
    shutil.copy(EXAMPLES.parent / "ceilings.yaml", ceilings)
    _slack(ceilings)
    pytester.makeconftest(
        "from pathlib import Path\n\n\n"
        "def pytest_runtest_call(item):\n"
        "    path = Path('ceilings.yaml')\n"
        "    if 'another ratchet' not in path.read_text():\n"
        "        path.write_text(path.read_text() + '# another ratchet was here\\n')\n")
    result = pytester.runpytest("--failgate=reports", "--failgate-ratchet", "-p", "no:xdist")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*ratchet: ceilings.yaml: changed during the run (another "
                                 "ratchet, or an edit): the lowering of 1 ceiling was not "
                                 "written; run the ratchet again*"])
    assert "total: 9\n" in ceilings.read_text()
    (pytester.path / "conftest.py").unlink()  # the control: nothing edits it, it lowers
    result = pytester.runpytest("--failgate=reports", "--failgate-ratchet", "-p", "no:xdist")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["ratchet: lowered 1 ceiling in ceilings.yaml:"])
