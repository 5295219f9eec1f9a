"""A project whose judge's counts gold labels correct: 400 rag cases (retrieval_miss 60,
generator_hallucination 20, 320 passing), its sample drawn by ``failgate sample`` and gold
labels that agree with the judge or say it missed retrieval misses."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from helpers import cases_for, run_cli, write_ceilings, write_jsonl

from pytest_failgate.cli import main

COUNTS = {"retrieval_miss": 60, "generator_hallucination": 20}


def make_project(root: Path, ceilings: dict[str, int]) -> Path:
    """The report and ceilings file under ``root``; returns ``root``."""
    write_jsonl(root / "reports" / "run.jsonl", cases_for(COUNTS, passed=320, seed=4))
    write_ceilings(root / "ceilings.yaml", ceilings)
    return root


def draw(root: Path, n: int = 200, seed: int = 7) -> dict[str, Any]:
    """``failgate sample`` run in ``root``, its document."""
    code = main(["sample", str(root / "reports"), "--ceilings", str(root / "ceilings.yaml"),
                 "--n", str(n), "--seed", str(seed), "--out", str(root / "sample.json")])
    assert code == 0
    document: dict[str, Any] = json.loads((root / "sample.json").read_text(encoding="utf-8"))
    return document


def judge_of(case_id: str) -> str | None:
    """The judge's category of a case of ``make_project`` (the rag rules, by its id)."""
    return None if case_id.startswith("ok-") else case_id.rsplit("-", 1)[0]


def write_gold(root: Path, sample: dict[str, Any], missed_share: float = 0.0,
               header: bool = True, name: str = "gold.jsonl") -> Path:
    """Gold labels for the sample, with what it drew from (its seed, size, run and each
    case's content, as `failgate sample` recorded them): the judge's, except that
    ``missed_share`` of the passing cases truly are retrieval misses."""
    rng = random.Random(1)
    recorded = {key: sample[key] for key in ("seed", "n", "run") if key in sample}
    lines = [json.dumps(recorded)] if header else []
    for case in sample["cases"]:
        truth = judge_of(case["id"])
        if truth is None and rng.random() < missed_share:
            truth = "retrieval_miss"
        lines.append(json.dumps({**case, "category": truth}))
    path = root / name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def check_json(capsys: Any, *args: str) -> tuple[int, str, dict[str, Any]]:
    """``failgate check reports --json gate.json`` in the working directory (a project of
    ``make_project``): its exit code, its output, and the JSON result (empty if none)."""
    code, out, err = run_cli(capsys, "check", "reports", "--json", "gate.json", *args)
    assert "Traceback" not in err
    document = json.loads(Path("gate.json").read_text()) if Path("gate.json").exists() else {}
    return code, out + err, document
