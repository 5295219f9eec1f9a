"""The ratchet never lowers on drift, and each mode's notes are its own.

- a ``confirm-baseline`` run from another day confirms nothing (its pairing carries two
  days' shifts); ``confirm``, an independent run, may come from any day;
- given both kinds of evidence, both must confirm a lowering;
- the ratchet's message counts the ceilings it lowered (an entry's ``max`` and ``observed``
  are one ceiling);
- an accepted baseline gap is a loosening the guard names;
- ``check`` never speaks of setting a ceiling.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from helpers import EXAMPLES, run_cli, same_day_run
from helpers import SAME_DAY_CEILINGS as CEILINGS
from helpers import same_day_outcomes as outcomes

from pytest_failgate.core.ceilings import writeback
from pytest_failgate.core.gate.runner import GateConfig, run_gate

T0 = datetime(2026, 11, 10, 9, 0, tzinfo=timezone.utc)


def dated_run(folder: Path, missed: list[str], ran: datetime) -> Path:
    """A same-day run folder (``helpers.same_day_run``) whose header says when it ran."""
    same_day_run(folder, missed)
    header = folder / "run.jsonl"
    record = json.loads(header.read_text(encoding="utf-8"))
    header.write_text(json.dumps({**record, "timestamp": ran.isoformat()}) + "\n",
                      encoding="utf-8")
    return folder


def ratchet(tmp_path: Path, run: Path, **given: tuple[Path, ...] | str) -> tuple[str, list[str]]:
    """The ceilings file after a ratchet of ``run``, and the run's warnings."""
    ceilings = tmp_path / "ceilings.yaml"
    ceilings.write_text(CEILINGS, encoding="utf-8")
    result = run_gate(GateConfig((run,), ceilings, "ratchet", **given)).result()  # type: ignore[arg-type]
    writeback.ratchet(ceilings, result, writeback.outcomes_from_verdicts(result))
    return ceilings.read_text(encoding="utf-8"), result.warnings


LOWERED = CEILINGS.replace("    max: 20\n    observed: 12\n", "    max: 10\n    observed: 2\n")


def test_a_confirm_baseline_run_from_another_day_confirms_nothing(tmp_path: Path) -> None:
    """Ten misses fixed, paired with the system before (p = 1/1024): lowered when the two
    runs were made an hour apart, refused when a day and a half apart."""
    after = dated_run(tmp_path / "after", outcomes(16, fixed=10), T0 + timedelta(hours=30))
    same_day = dated_run(tmp_path / "today", outcomes(16), T0 + timedelta(hours=29))
    assert ratchet(tmp_path, after, confirm_baseline=(same_day,))[0] == LOWERED
    yesterday = dated_run(tmp_path / "yesterday", outcomes(16), T0)
    text, warnings = ratchet(tmp_path, after, confirm_baseline=(yesterday,))
    assert text == CEILINGS
    assert ("ratchet: the confirm-baseline run was measured 30.0 hours apart from this run, "
            "outside the window of 12 hours of each other: the confirm-baseline run "
            "2026-11-10T09:00:00Z (run.jsonl timestamp), this run 2026-11-11T15:00:00Z "
            "(run.jsonl timestamp); it confirms no drop (a same-day pairing only cancels a "
            "shift the two runs share): re-run the system before the change in this job"
            ) in warnings
    # a wider window, stated, takes it (a setting the guard compares)
    assert ratchet(tmp_path, after, confirm_baseline=(yesterday,),
                   baseline_window="48")[0] == LOWERED


def test_an_independent_confirming_run_may_come_from_another_day(tmp_path: Path) -> None:
    """``confirm`` is main's previous run: another day is its point. Both runs fell past the
    allowance of 8 from 12 (3 and 2 misses): observed their mean, 3."""
    after = dated_run(tmp_path / "after", outcomes(14, fixed=11), T0 + timedelta(days=2))
    previous = dated_run(tmp_path / "previous", outcomes(14, fixed=12), T0)
    text, _ = ratchet(tmp_path, after, confirm=(previous,))
    assert "    max: 11\n    observed: 3\n" in text


def test_given_both_kinds_of_evidence_both_must_confirm(tmp_path: Path) -> None:
    """A second run confirms (2 and 1 misses, past the allowance), the same-day pairing does
    not (8 left, none entered: p = 1/256 > 0.0025): nothing is lowered. Before, either one
    lowered: under day drift each alone lowered an unchanged system now and then."""
    before = dated_run(tmp_path / "before", outcomes(10), T0)
    after = dated_run(tmp_path / "after", outcomes(10, fixed=8), T0 + timedelta(hours=1))
    second = dated_run(tmp_path / "second", outcomes(10, fixed=9), T0 - timedelta(days=1))
    alone, _ = ratchet(tmp_path, after, confirm=(second,))
    assert alone != CEILINGS  # the second run alone confirms
    assert ratchet(tmp_path, after, confirm=(second,), confirm_baseline=(before,))[0] == CEILINGS


def test_the_ratchet_counts_the_ceilings_it_lowered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ceilings.yaml").write_text(CEILINGS, encoding="utf-8")
    before = dated_run(tmp_path / "before", outcomes(16), T0)
    after = dated_run(tmp_path / "after", outcomes(16, fixed=10), T0 + timedelta(hours=1))
    code, out, err = run_cli(capsys, "ratchet", str(after), "--confirm-baseline", str(before))
    assert code == 0, out + err
    assert "ratchet: lowered 1 ceiling in ceilings.yaml:" in out + err  # max and observed
    assert "retrieval_miss.max 20 -> 10" in out + err
    assert "retrieval_miss.observed 12 -> 2" in out + err


def test_check_of_a_regressed_run_never_speaks_of_setting_a_ceiling(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    data = Path(__file__).resolve().parents[2] / "data" / "rag-gate"
    monkeypatch.chdir(tmp_path)
    for name in ("baseline", "topk1"):
        shutil.copytree(data / name, tmp_path / name)
    band = str(data / "baseline" / "noise_band.json")
    assert run_cli(capsys, "init", "baseline", "--noise", band)[0] == 0
    code, out, err = run_cli(capsys, "check", "topk1", "--noise", band)
    assert code == 1, out + err
    assert "new ceiling" not in out + err
    assert "this run's retrieval_miss" in out + err  # the note is there, in check's words
    assert "either the system changed since the band was measured" in out + err


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_an_accepted_baseline_gap_is_a_loosening_the_guard_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "project"
    shutil.copytree(EXAMPLES / "reports", project / "reports")
    shutil.copy(EXAMPLES.parent / "ceilings.yaml", project / "ceilings.yaml")
    ini = project / "pytest.ini"
    ini.write_text("[pytest]\nfailgate = reports\n")
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", "-A")
    _git(project, "-c", "user.email=ci@example.com", "-c", "user.name=ci", "commit", "-q",
         "-m", "base")
    monkeypatch.chdir(project)
    for setting in ("failgate_accept_baseline_gap = nightly main",
                    "addopts = --failgate-accept-baseline-gap=nightly",
                    "failgate_baseline_window = 72"):
        ini.write_text(f"[pytest]\nfailgate = reports\n{setting}\n")
        code, out, err = run_cli(capsys, "guard", "--base", "main")
        assert code == 1, out + err
        key = ("failgate_baseline_window" if "window" in setting
               else "failgate_accept_baseline_gap")
        assert f"pytest.ini {key}: not set -> " in out + err
    workflow = project / ".github" / "workflows" / "gate.yml"
    workflow.parent.mkdir(parents=True)
    ini.write_text("[pytest]\nfailgate = reports\n")
    workflow.write_text("jobs:\n  gate:\n    steps:\n      - run: failgate check reports "
                        "--baseline main-run --accept-baseline-gap 'nightly main'\n")
    code, out, err = run_cli(capsys, "guard", "--base", "main")
    assert code == 1, out + err
    assert "failgate_accept_baseline_gap" in out + err


def test_a_crafted_confirm_baseline_never_lowers_a_ceiling_below_this_runs_count(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The run has 16 retrieval misses (ceiling 20: it passes). A "run before the change"
    crafted with the same cases, 40 passing ones of them made misses, pairs as 40 cases
    fixed and none new: a drop of 40, which set the ceiling to 0 + 8 = 8, below this run's
    16, so the same run then failed its own gate. It disagrees with the run and confirms
    nothing, named; the same run still passes."""
    monkeypatch.chdir(tmp_path)
    run = same_day_outcomes_of(16)
    after = dated_run(tmp_path / "after", run, T0 + timedelta(hours=1))
    crafted = ["retrieval_miss" if mode == "correct" else mode for mode in run]
    before = dated_run(tmp_path / "crafted", crafted, T0)
    text, warnings = ratchet(tmp_path, after, confirm_baseline=(before,))
    assert text == CEILINGS
    assert ("ratchet: attribution::retrieval_miss not lowered: the run before the change "
            "(--confirm-baseline) would set it to 8 (observed 0 + allowance 8), below this "
            "run's count 16, so this run would fail its own gate; evidence that disagrees "
            "with the run confirms nothing") in warnings
    code, out, err = run_cli(capsys, "ratchet", str(after), "--confirm-baseline", str(before))
    assert code == 0, out + err
    assert (tmp_path / "ceilings.yaml").read_text(encoding="utf-8") == CEILINGS
    assert "not lowered: the run before the change" in out + err
    assert run_cli(capsys, "check", str(after))[0] == 0


def same_day_outcomes_of(missed: int, fixed: int = 0) -> list[str]:
    return outcomes(missed, fixed=fixed)
