"""``failgate noise`` records when each run it measured ran, and says when they all ran at
once: day-level drift is seen only between runs made on different days."""

from __future__ import annotations

import json
import os
import random
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from noisy_runs import System, write_run

from pytest_failgate.cli import main
from pytest_failgate.core.compare.noise import read_noise_band
from pytest_failgate.core.guard.evidence import Noise, noise_changes

DATA = Path(__file__).resolve().parents[2] / "data"


def _noise(capsys: pytest.CaptureFixture[str], *runs: str) -> tuple[list[dict[str, str]], str]:
    capsys.readouterr()
    assert main(["noise", *runs, "--out", "band.json", "--ceilings", "none.yaml"]) == 0
    out = capsys.readouterr().out
    band = json.loads(Path("band.json").read_text(encoding="utf-8"))
    return band["measured_from"], out


def test_the_regression_gate_s_runs_are_timed_by_their_headers_and_days_apart_warn_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    names = ["baseline", "r2", "r3"]
    for name in names:
        source = DATA / "rag-gate" / ("baseline" if name == "baseline" else f"repeats/{name}")
        shutil.copytree(source, tmp_path / name, ignore=shutil.ignore_patterns("noise_band*"))
    found, out = _noise(capsys, *names)
    headers = [json.loads((tmp_path / name / "run.jsonl").read_text(encoding="utf-8")
                          .splitlines()[0])["timestamp"] for name in names]
    want = [datetime.fromisoformat(text).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            for text in headers]
    assert [entry["ran"] for entry in found] == want
    assert {entry["time_from"] for entry in found} == {"run.jsonl timestamp"}
    assert [entry["run"] for entry in found] == names
    assert "warning" not in out
    assert main(["noise", "--check", "band.json", "--ceilings", "none.yaml"]) == 0


def test_inspect_logs_are_timed_by_eval_created_and_runs_minutes_apart_warn(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    logs = sorted((DATA / "inspect_ai" / "log_folder").glob("*_arithmetic_*.eval"))
    for index, log in enumerate(logs):
        (tmp_path / f"run{index}").mkdir()
        shutil.copy(log, tmp_path / f"run{index}" / log.name)
    found, out = _noise(capsys, *(f"run{index}" for index in range(len(logs))))
    # the log's own name carries the time it was created: 2026-12-01T11-05-02-00-00_...
    want = [datetime.strptime(log.name[:19], "%Y-%m-%dT%H-%M-%S").strftime("%Y-%m-%dT%H:%M:%SZ")
            for log in logs]
    assert [entry["ran"] for entry in found] == want
    assert {entry["time_from"] for entry in found} == {"eval.created"}
    assert "warning: all 2 runs ran within one hour" in out
    assert "correlated drift is not sampled" in out


def test_promptfoo_outputs_are_timed_by_their_timestamp(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    judges = ["judge_gpt-4o", "judge_gpt-4.1"]
    for judge in judges:
        shutil.copytree(DATA / "promptfoo" / "noise" / judge, tmp_path / judge)
    found, _ = _noise(capsys, *judges)
    stamps = [json.loads((tmp_path / judge / "results.json").read_text(encoding="utf-8"))
              ["results"]["timestamp"] for judge in judges]
    assert [entry["ran"] for entry in found] == [stamp[:19] + "Z" for stamp in stamps]
    assert {entry["time_from"] for entry in found} == {"timestamp"}


def _simulated(tmp_path: Path, hours_apart: float) -> list[str]:
    """Three runs of the regression gate's format without a header time, their files'
    modification times ``hours_apart``."""
    rng = random.Random(5)
    system = System.draw(60, 0.1, rng)
    start = datetime(2026, 11, 2, 8, 0, tzinfo=timezone.utc).timestamp()
    names = []
    for index in range(3):
        folder = write_run(tmp_path / f"day{index}", system, system.run(rng), rng, f"r{index}")
        when = start + index * hours_apart * 3600
        for path in folder.iterdir():
            os.utime(path, (when, when))
        names.append(folder.name)
    return names


@pytest.mark.parametrize(("hours", "said"), [
    (0.2, "ran within one hour"), (5, "ran within one day"), (30, None)])
def test_without_a_time_of_its_own_a_run_is_timed_by_its_file_and_said_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        hours: float, said: str | None) -> None:
    monkeypatch.chdir(tmp_path)
    found, out = _noise(capsys, *_simulated(tmp_path, hours))
    assert {entry["time_from"] for entry in found} == {"file mtime"}
    first = datetime.fromisoformat(found[0]["ran"].replace("Z", "+00:00"))
    last = datetime.fromisoformat(found[-1]["ran"].replace("Z", "+00:00"))
    assert last - first == timedelta(hours=2 * hours)
    if said is None:
        assert "warning" not in out
    else:
        assert f"warning: all 3 runs {said}" in out


def test_the_run_times_are_no_loosening_and_a_band_without_them_still_checks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    _noise(capsys, *_simulated(tmp_path, 30))
    timed = json.loads(Path("band.json").read_text(encoding="utf-8"))
    untimed = {**timed, "measured_from": [entry["run"] for entry in timed["measured_from"]]}
    old, new = read_noise_band(untimed), read_noise_band(timed)
    assert noise_changes(Noise("band.json", old), Noise("band.json", new), None, None) == []
    Path("band.json").write_text(json.dumps(untimed), encoding="utf-8")
    assert main(["noise", "--check", "band.json", "--ceilings", "none.yaml"]) == 0


@pytest.mark.parametrize(("folder", "label"), [
    ("lm_eval", "file name (lm-eval)"), ("deepeval/test_run/results", "file name (DeepEval)")])
def test_lm_eval_and_deepeval_runs_are_timed_by_their_file_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        folder: str, label: str) -> None:
    monkeypatch.chdir(tmp_path)
    for run in ("r1", "r2"):
        shutil.copytree(DATA / folder, tmp_path / run)
    found, out = _noise(capsys, "r1", "r2")
    # the names: results_2026-01-21T03-44-18.458309.json, test_run_20261130_111552.json
    want = {"lm_eval": "2026-01-21T03:44:18Z", "deepeval/test_run/results":
            "2026-11-30T11:15:52Z"}[folder]
    assert [(entry["ran"], entry["time_from"]) for entry in found] == [(want, label)] * 2
    assert "warning: all 2 runs ran within one hour" in out
