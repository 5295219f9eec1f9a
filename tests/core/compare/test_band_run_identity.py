"""A run of the noise band is recognised at init wherever it lies: by its run id, else by its
cases (a run folder whose header records no run id is not named by its folder's name)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from pytest_failgate.cli import main


def _run(folder: Path, missed: int, cases: int = 60) -> Path:
    """A run folder without a run id: the first ``missed`` cases are retrieval misses."""
    folder.mkdir(parents=True)
    lines = [json.dumps({"id": f"c{i:02d}",
                         "primary_failure": "retrieval_miss" if i < missed else "correct"})
             for i in range(cases)]
    (folder / "attribution.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    header = {"type": "header", "judge_model": "gpt-4o-2024-08-06", "config": {"top_k": 5}}
    (folder / "run.jsonl").write_text(json.dumps(header) + "\n", encoding="utf-8")
    return folder


def _observed(ceilings: Path) -> int:
    entry = yaml.safe_load(ceilings.read_text(encoding="utf-8"))["ceilings"]["retrieval_miss"]
    return int(entry["observed"])


@pytest.fixture
def band(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Three runs of one system, missing 10, 14 and 18 (the band's mean 14)."""
    monkeypatch.chdir(tmp_path)
    runs = [_run(tmp_path / "runs" / name, missed)
            for name, missed in (("r1", 10), ("r2", 14), ("r3", 18))]
    out = tmp_path / "noise_band.json"
    assert main(["noise", *map(str, runs), "--out", str(out), "--ceilings",
                 str(tmp_path / "ceilings.yaml")]) == 0
    run_ids = json.loads(out.read_text(encoding="utf-8"))["run_ids"]
    assert len(set(run_ids)) == 3
    assert not {"r1", "r2", "r3"} & set(run_ids)  # not the folders' names
    return out


def test_init_on_one_of_the_bands_runs_counts_it_once_wherever_it_was_copied(
        tmp_path: Path, band: Path) -> None:
    copied = tmp_path / "main" / "r2"  # another folder of the same name ...
    shutil.copytree(tmp_path / "runs" / "r1", tmp_path / "main" / "latest")  # ... and r1's copy
    _run(copied, 10)
    ceilings = tmp_path / "ceilings.yaml"
    assert main(["init", str(tmp_path / "main" / "latest"), "--ceilings", str(ceilings),
                 "--noise", str(band)]) == 0
    assert _observed(ceilings) == 14  # (10 + 14 + 18) / 3: r1 is in the band's mean once
    ceilings.unlink()
    other = _run(tmp_path / "other", 10)
    (other / "attribution.jsonl").write_text(  # the same count, but not the same cases
        (other / "attribution.jsonl").read_text(encoding="utf-8").replace('"c00"', '"x00"'),
        encoding="utf-8")
    assert main(["init", str(other), "--ceilings", str(ceilings), "--noise", str(band)]) == 0
    assert _observed(ceilings) == 13  # (10 + 14 + 18 + 10) / 4: a fourth run, added
