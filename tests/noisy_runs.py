"""A simulated noisy RAG pipeline, evaluated run after run (the regression gate's run folders).

Shared by the noise tests and ``bench/noise_loop.py``: a system of cases, each with its
usual outcome; a run re-draws each case's outcome with probability ``flip`` (from the
outcomes of its kind: answerable or not); a regression moves passing cases into a
category for good.

Cases of one run are independent unless the system ``drift``s: then each run falls on
its own day, and the day shifts every case's log-odds of failing by the same ``z``, drawn
from a normal distribution of standard deviation ``drift`` (a judge or provider harsher
on some days: every flaky case moves together). The shift is applied after the re-draw,
coupled so that a case's chance of failing is exactly ``logistic(logit(p) + z)`` with
``p`` its chance without drift: on a harsher day a passing case fails with probability
``(p' - p) / (1 - p)`` (into a failure of its kind, drawn by weight), on a milder one a
failing case passes with probability ``(p - p') / p``.

Runs are written as the RAG regression gate writes them (``attribution.jsonl`` and a
``run.jsonl`` header), with unique ids, an optional key in some cases only and non-ASCII
notes.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_failgate.cli import main as failgate

if TYPE_CHECKING:
    from pathlib import Path

# Outcomes of an answerable case and of a case without an answer, with their weights:
# about 60% of the answerable cases pass; retrieval misses lead (as in the regression
# gate's meta-evaluation); "truncated_answer" is a mode rag-gate files under `other`.
ANSWERABLE = {"correct": 60, "retrieval_miss": 18, "hallucination": 11, "false_refusal": 7,
              "truncated_answer": 4}
NO_ANSWER = {"correct": 75, "over_answer": 25}
CATEGORY = {"truncated_answer": "other"}  # primary_failure -> rag-gate category
CATEGORIES = ("retrieval_miss", "hallucination", "false_refusal", "over_answer", "other")
SLICES = ("table_value", "narrative", "multi_hop")
NOTES = ("검색 근거와 다른 값을 답함", "근거 문단이 검색되지 않음", "답변을 거부함",
         "Antwort ohne Beleg", "réponse tronquée")
HEADER = {"type": "header", "generation_model": "gpt-4o-mini-2024-07-18",
          "judge_model": "gpt-4o-2024-08-06", "embedding_model": "BAAI/bge-m3",
          "config": {"chunk_size": 800, "chunk_overlap": 150, "top_k": 5,
                     "reranker_enabled": False, "temperature": 0.7, "prompt_version": "qa-v3"}}


@dataclass
class System:
    """A pipeline under evaluation: each case's kind and its usual outcome."""

    answerable: list[bool]
    outcome: list[str]
    slices: list[str]
    flip: float
    drift: float = 0.0  # the day-level shift's standard deviation, in log-odds

    @classmethod
    def draw(cls, n: int, flip: float, rng: random.Random, drift: float = 0.0) -> System:
        answerable = [rng.random() < 0.9 for _ in range(n)]
        return cls(answerable, [_draw(a, rng) for a in answerable],
                   [rng.choice(SLICES) if a else "no_answer" for a in answerable], flip, drift)

    def run(self, rng: random.Random, shift: float | None = None) -> list[str]:
        """One evaluation run: each case re-draws its outcome with probability ``flip``;
        with ``drift``, then the run's day shifts every case's log-odds of failing (by
        ``shift``: a day shared with another run; None: a day of its own)."""
        outcomes = [_draw(a, rng) if rng.random() < self.flip else usual
                    for a, usual in zip(self.answerable, self.outcome, strict=True)]
        if self.drift > 0:
            day = rng.gauss(0.0, self.drift) if shift is None else shift
            outcomes = self._shifted(outcomes, day, rng)
        return outcomes

    def failing(self, index: int) -> float:
        """The case's chance of failing a run without drift."""
        table = ANSWERABLE if self.answerable[index] else NO_ANSWER
        drawn = 1 - table["correct"] / sum(table.values())
        usual = self.outcome[index] != "correct"
        return (1 - self.flip) * usual + self.flip * drawn

    def _shifted(self, outcomes: list[str], shift: float, rng: random.Random) -> list[str]:
        shifted = []
        for index, mode in enumerate(outcomes):
            p = self.failing(index)
            moved = 1 / (1 + math.exp(-(math.log(p / (1 - p)) + shift)))
            if mode == "correct" and moved > p and rng.random() < (moved - p) / (1 - p):
                mode = _failure(self.answerable[index], rng)
            elif mode != "correct" and moved < p and rng.random() < (p - moved) / p:
                mode = "correct"
            shifted.append(mode)
        return shifted

    def regressed(self, category: str, size: int, rng: random.Random) -> System:
        """The same system with ``size`` passing cases now usually in ``category``."""
        mode = next(m for m, c in [*CATEGORY.items(), (category, category)] if c == category)
        fits = [i for i, (a, o) in enumerate(zip(self.answerable, self.outcome, strict=True))
                if o == "correct" and a == (mode != "over_answer")]
        moved = set(rng.sample(fits, min(size, len(fits))))
        outcome = [mode if i in moved else o for i, o in enumerate(self.outcome)]
        return System(self.answerable, outcome, self.slices, self.flip, self.drift)


def _draw(answerable: bool, rng: random.Random) -> str:
    table = ANSWERABLE if answerable else NO_ANSWER
    return rng.choices(list(table), list(table.values()))[0]


def _failure(answerable: bool, rng: random.Random) -> str:
    """A failing outcome of the kind, drawn by weight."""
    table = {mode: weight for mode, weight in (ANSWERABLE if answerable else NO_ANSWER).items()
             if mode != "correct"}
    return rng.choices(list(table), list(table.values()))[0]


def write_run(folder: Path, system: System, outcomes: list[str], rng: random.Random,
              run_id: str, ran: str | None = None) -> Path:
    """A run folder as the regression gate writes it (attribution.jsonl, run.jsonl header;
    ``ran``: the header's ``timestamp``, when the run was made)."""
    folder.mkdir(parents=True)
    lines = []
    for index, (answerable, mode) in enumerate(zip(system.answerable, outcomes, strict=True)):
        correct = mode == "correct"
        case: dict[str, Any] = {
            "id": f"rq{index + 1:04d}", "slice": system.slices[index], "answerable": answerable,
            "correct": correct, "value_present": correct or mode == "hallucination",
            "retrieval_strict_ok": mode != "retrieval_miss", "over_answer": mode == "over_answer",
            "primary_failure": mode}
        if not correct and rng.random() < 0.3:  # an optional key, in some cases only
            case["attribution_detail"] = {"note": rng.choice(NOTES), "run": run_id}
        lines.append(json.dumps(case, ensure_ascii=False))
    (folder / "attribution.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    header = {**HEADER, "run_id": run_id, "n_cases": len(outcomes)}
    if ran is not None:
        header["timestamp"] = ran
    (folder / "run.jsonl").write_text(json.dumps(header) + "\n", encoding="utf-8")
    return folder


def counts(outcomes: list[str]) -> dict[str, int]:
    found = dict.fromkeys(CATEGORIES, 0)
    for mode in outcomes:
        if mode != "correct":
            found[CATEGORY.get(mode, mode)] += 1
    return found


class Gate:
    """The failgate commands of the loop, on one ceilings file (quietly)."""

    def __init__(self, ceilings: Path, noise: Path | None) -> None:
        self.ceilings = ceilings
        self.noise = noise

    def command(self, *argv: str) -> int:
        """In the ceilings file's folder: the project a ratchet may write in."""
        here = os.getcwd()
        os.chdir(self.ceilings.parent)
        try:
            with contextlib.redirect_stdout(io.StringIO()), \
                    contextlib.redirect_stderr(io.StringIO()):
                return failgate(list(argv))
        finally:
            os.chdir(here)

    def _run(self, command: str, run: Path) -> int:
        noise = ["--noise", str(self.noise)] if self.noise is not None else []
        return self.command(command, str(run), "--ceilings", str(self.ceilings), *noise)

    def measure_noise(self, runs: list[Path], out: Path) -> None:
        code = self.command("noise", *map(str, runs), "--out", str(out), "--ceilings",
                            str(self.ceilings))
        assert code == 0, f"failgate noise exited {code}"

    def init(self, run: Path) -> None:
        code = self._run("init", run)
        assert code == 0, f"init exited {code}"

    def check(self, run: Path) -> int:
        """The exit code: 0 passed, 1 failed, 3 inconclusive."""
        return self._run("check", run)

    def ratchet(self, run: Path, confirm: Path | None = None) -> None:
        """Main's run, confirmed by main's previous run (a noisy drop needs both)."""
        noise = ["--noise", str(self.noise)] if self.noise is not None else []
        more = ["--confirm", str(confirm)] if confirm is not None else []
        self.command("ratchet", str(run), "--ceilings", str(self.ceilings), *noise, *more)


@dataclass
class Trial:
    false_alarms: int = 0
    prs: int = 0
    caught: dict[str, bool] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    lowered: int = 0


@dataclass(frozen=True)
class Loop:
    """The simulated CI loop's settings (``bench/noise_loop.py`` documents each)."""

    mode: str = "noise"  # "noise": the noise band given to init, check, ratchet; "exact": none
    cases: int = 400
    flip: float = 0.06
    repeats: int = 3
    merges: int = 20
    bands: int = 3
    least: float = 0.04
    drift: float = 0.0  # the day-level shift of the log-odds (its standard deviation)


def trial(seed: int, args: Loop, work: Path) -> Trial:
    """One system through the CI loop of docs/ci.md: init once, then per merge check the pull
    request's run and ratchet main's; then one regressed pull request per category."""
    rng = random.Random(seed)
    system = System.draw(args.cases, args.flip, rng, args.drift)
    folder = work / f"trial{seed}"
    runs = iter(range(10**6))

    def run(of: System) -> Path:
        number = next(runs)
        return write_run(folder / f"run{number:03d}", of, of.run(rng), rng, f"run-{seed}-{number}")

    ceilings = folder / "ceilings.yaml"
    repeats = [run(system) for _ in range(args.repeats)]
    noise_path = folder / "noise_band.json"
    Gate(ceilings, None).measure_noise(repeats, noise_path)
    gate = Gate(ceilings, noise_path if args.mode == "noise" else None)
    main = run(system)
    gate.init(main)
    outcome = Trial()
    for _ in range(args.merges):
        verdict = gate.check(run(system))
        outcome.prs += 1
        outcome.false_alarms += verdict != 0
        before = ceilings.read_text(encoding="utf-8")
        previous, main = main, run(system)
        gate.ratchet(main, previous)
        outcome.lowered += ceilings.read_text(encoding="utf-8") != before
    band = json.loads(noise_path.read_text(encoding="utf-8"))["metric_band"]
    for category in CATEGORIES:
        entry = band.get(f"mode:{category}", {"min": 0, "max": 0})
        width = max(1, entry["max"] - entry["min"])
        size = max(args.bands * width, math.ceil(args.least * args.cases))
        outcome.sizes[category] = size
        outcome.caught[category] = gate.check(run(system.regressed(category, size, rng))) == 1
    return outcome
