"""Held-out noise models: the CI loop on noise the tests and ``noise_loop.py`` never use.

The noise-aware gate was built and tested on one simulated pipeline (``tests/noisy_runs.py``:
every case re-draws its outcome with one probability, days shift the log-odds by a normal
amount). This bench asks whether its promises hold on noise it was not fitted to. Each
model keeps the pipeline's cases (400, 90% answerable, each with its usual outcome) and
changes how a run departs from them:

- ``betabinomial``: each case has its own chance of re-drawing its outcome, drawn once
  from Beta(0.5, 7.83) (mean 0.06, as the tests' one chance, but most cases nearly stable
  and a few very flaky); no day effect.
- ``probit``: a day-level shift of sigma 0.5 on the **probit** scale (a case failing with
  chance ``p`` fails with ``Phi(Phi^-1(p) + z)`` that day, ``z ~ N(0, 0.5)``): on this link
  0.5 is about 1.6 times the tests' logit shift of 0.5.
- ``t3``: a heavy-tailed day-level shift of the log-odds, ``0.3 t_3`` (Student's t with 3
  degrees of freedom: standard deviation 0.52, and now and then a day far off).
- ``mood``: a judge's mood per category: each day shifts the log-odds of each failure
  category separately (``N(0, 0.4)`` each, independent), so one category rises while
  another falls and ``total`` moves less than its parts.

Each run (the band's repeats too) falls on its own day. Per trial (a system): the noise
band from ``--repeats`` runs (``failgate noise``), ``init`` from main's run, ``--merges``
merges (check an unchanged pull request, ratchet main's run confirmed by main's previous
run), then the measures:

- **false alarms**: unchanged pull requests the gate failed (first and second half of the
  merges apart: a ratchet that creeps down shows as more false alarms later);
- **ratchet**: how many merges lowered the file, and ``total``'s ``max`` and ``observed`` at
  init and after the last merge, against the system's true mean ``total`` (over days);
- **5% regressions**: per category, a pull request moving 5% of the cases (20 passing
  cases) into it for good: caught when the gate fails it;
- **a real fix**: after the measures above, 20 cases (5%) that usually fall in
  ``retrieval_miss`` now pass; main's next run is ratcheted, confirmed by the run before it
  (both of the fixed system): does the file lower (a ratchet that never lowers cannot creep,
  but is no ratchet)?
- **"catches +N" honest**: per category, the regression the unchanged pull request's
  check says it catches (``detectable``, with 80% probability): a pull request moving
  exactly that many passing cases into it: caught in at least 80% if honest.

``--same-day-baseline`` is the remedy for day drift: compare with main run on the same day.
Each pull request's check also gets ``--baseline`` of main re-run on the pull request's day
(both runs share the day's shift, which the pairing cancels; a regressed pull request too),
and each merge's ratchet gets ``--confirm-baseline`` of the system before the merge re-run
on main's run's day, with ``--confirm`` main's previous run as before (either confirms;
``--paired-only`` leaves ``--confirm`` out). The real fix is then ratcheted on the fix's
merge (main's previous run and the same-day run are the system before it) and on the
next merge (both of the fixed system).

Everything runs the real ``failgate`` command; only the system is random (``--seed``)::

    python bench/noise_heldout.py --model probit --trials 10 --merges 30
    python bench/noise_heldout.py --model probit --trials 10 --merges 30 --same-day-baseline
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from noisy_runs import (  # noqa: E402
    ANSWERABLE,
    CATEGORIES,
    CATEGORY,
    NO_ANSWER,
    Gate,
    System,
    write_run,
)

MODELS = ("betabinomial", "probit", "t3", "mood")
NORMAL = statistics.NormalDist()


@dataclass
class HeldOut:
    """A system whose runs depart from each case's usual outcome by a held-out model."""

    base: System
    model: str
    flips: list[float]  # each case's own chance of re-drawing (betabinomial), else flip

    @classmethod
    def draw(cls, n: int, model: str, rng: random.Random) -> HeldOut:
        base = System.draw(n, 0.06, rng)
        flips = ([rng.betavariate(0.5, 0.5 / 0.06 - 0.5) for _ in range(n)]
                 if model == "betabinomial" else [0.06] * n)
        return cls(base, model, flips)

    def regressed(self, category: str, size: int, rng: random.Random) -> HeldOut:
        return HeldOut(self.base.regressed(category, size, rng), self.model, self.flips)

    def fixed(self, category: str, size: int, rng: random.Random) -> HeldOut:
        """The same system with ``size`` cases usually in ``category`` now usually passing."""
        modes = {mode for mode in (*ANSWERABLE, *NO_ANSWER)
                 if CATEGORY.get(mode, mode) == category}
        cases = [i for i, o in enumerate(self.base.outcome) if o in modes]
        moved = set(rng.sample(cases, min(size, len(cases))))
        outcome = ["correct" if i in moved else o for i, o in enumerate(self.base.outcome)]
        return HeldOut(System(self.base.answerable, outcome, self.base.slices, self.base.flip),
                       self.model, self.flips)

    def chances(self, index: int) -> dict[str, float]:
        """The case's outcome distribution on an ordinary day (no day effect)."""
        table = ANSWERABLE if self.base.answerable[index] else NO_ANSWER
        weight = sum(table.values())
        flip = self.flips[index]
        found = {mode: flip * w / weight for mode, w in table.items()}
        found[self.base.outcome[index]] += 1 - flip
        return found

    def day(self, rng: random.Random) -> dict[str, float]:
        """The day's shifts: one for every case (``z``), or one per category (mood)."""
        if self.model == "probit":
            return {"z": rng.gauss(0.0, 0.5)}
        if self.model == "t3":
            chi = sum(rng.gauss(0.0, 1.0) ** 2 for _ in range(3))
            return {"z": 0.3 * rng.gauss(0.0, 1.0) / math.sqrt(chi / 3)}
        if self.model == "mood":
            return {category: rng.gauss(0.0, 0.4) for category in CATEGORIES}
        return {}

    def shifted(self, index: int, day: dict[str, float]) -> dict[str, float]:
        """The case's outcome distribution on ``day``."""
        found = self.chances(index)
        failing = 1 - found["correct"]
        if not day or failing <= 0:
            return found
        if self.model == "mood":
            moved = {mode: (_logistic(_logit(p) + day[CATEGORY.get(mode, mode)])
                            if mode != "correct" and 0 < p < 1 else p)
                     for mode, p in found.items()}
            now = sum(p for mode, p in moved.items() if mode != "correct")
            if now >= 1:  # keep it a distribution: the failures at most certain
                moved = {mode: p / now for mode, p in moved.items() if mode != "correct"}
                moved["correct"] = 0.0
                return moved
            moved["correct"] = 1 - now
            return moved
        if failing >= 1:
            return found
        if self.model == "probit":
            after = NORMAL.cdf(NORMAL.inv_cdf(failing) + day["z"])
        else:
            after = _logistic(_logit(failing) + day["z"])
        scale = after / failing
        moved = {mode: p * scale for mode, p in found.items() if mode != "correct"}
        moved["correct"] = 1 - after
        return moved

    def run(self, rng: random.Random, day: dict[str, float] | None = None) -> list[str]:
        """One run on ``day`` (None: a day of its own)."""
        day = self.day(rng) if day is None else day
        outcomes = []
        for index in range(len(self.base.outcome)):
            table = self.shifted(index, day)
            outcomes.append(rng.choices(list(table), list(table.values()))[0])
        return outcomes

    def mean_total(self, rng: random.Random, days: int = 400) -> float:
        """The true mean of ``total`` over days (Monte Carlo over the day effect)."""
        sums = 0.0
        for _ in range(days):
            day = self.day(rng)
            sums += sum(1 - self.shifted(i, day)["correct"]
                        for i in range(len(self.base.outcome)))
        return sums / days


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def _logistic(x: float) -> float:
    return 1 / (1 + math.exp(-x))


@dataclass
class Trial:
    alarms_first: int = 0
    alarms_second: int = 0
    lowered: int = 0
    total: tuple[tuple[int, int], tuple[int, int]] = ((0, 0), (0, 0))  # (max, observed):
    # at init, after the last merge
    true_total: float = 0.0
    caught: dict[str, bool] = field(default_factory=dict)
    promised: dict[str, int] = field(default_factory=dict)
    honest: dict[str, bool] = field(default_factory=dict)
    fix_lowered: bool = False  # a real fix of 5% of the cases: did the ratchet lower?
    inconclusive: int = 0  # unchanged pull requests judged inconclusive (exit 3)


@dataclass
class Day:
    """One day: its shift of every case (or of each category), its date as a number of
    days after ``START``, and how many runs were made on it (each an hour after the last)."""

    shift: dict[str, float]
    number: int
    runs: int = 0


START = datetime(2026, 1, 1, 8, 0, tzinfo=timezone.utc)


def _total(ceilings: Path) -> tuple[int, int]:
    """``total``'s ``max`` and ``observed`` in the ceilings file."""
    entry = yaml.safe_load(ceilings.read_text(encoding="utf-8"))["ceilings"]["total"]
    return int(entry["max"]), int(entry.get("observed", entry["max"]))


def trial(seed: int, model: str, repeats: int, merges: int, work: Path,
          same_day: bool = False, paired_only: bool = False, stale: bool = False,
          accept_gap: bool = False, stale_confirm: bool = False,
          window: str | None = None) -> Trial:
    rng = random.Random(seed)
    system = HeldOut.draw(400, model, rng)
    folder = work / f"{model}{seed}"
    numbers = iter(range(10**6))
    wide = ["--baseline-window", window] if window is not None else []

    calendar = iter(range(10**6))

    def new_day(of: HeldOut) -> Day:
        """A day of its own: its shift, and its date (runs of one day an hour apart)."""
        return Day(of.day(rng), next(calendar))

    def run(of: HeldOut, day: Day | None = None) -> Path:
        number = next(numbers)
        day = new_day(of) if day is None else day
        ran = START + timedelta(days=day.number, hours=day.runs)
        day.runs += 1
        return write_run(folder / f"run{number:03d}", of.base, of.run(rng, day.shift), rng,
                         f"run-{seed}-{number}", ran.isoformat().replace("+00:00", "Z"))

    ceilings = folder / "ceilings.yaml"
    band = folder / "noise_band.json"
    Gate(ceilings, None).measure_noise([run(system) for _ in range(repeats)], band)
    gate = Gate(ceilings, band)

    def check(of: HeldOut, *more: str) -> int:
        """A pull request's check: with ``same_day``, against main re-run on its day; with
        ``stale``, against main's latest run (another day: the baseline a team re-uses)."""
        if stale:
            gap = ["--accept-baseline-gap", "re-used main's run"] if accept_gap else []
            return gate.command("check", str(run(of)), "--ceilings", str(ceilings), "--noise",
                                str(band), "--baseline", str(latest[0]), *gap, *more)
        if not same_day:
            return gate._run("check", run(of)) if not more else gate.command(
                "check", str(run(of)), "--ceilings", str(ceilings), "--noise", str(band), *more)
        day = new_day(of)
        pull = run(of, day)
        return gate.command("check", str(pull), "--ceilings", str(ceilings), "--noise",
                            str(band), "--baseline", str(run(system, day)), *more)

    def ratchet(of: HeldOut, before: HeldOut, previous: Path) -> Path:
        """Main's run after a merge, confirmed by the system before the merge re-run on the
        same day (paired: ``--confirm-baseline``) and, unless ``paired_only``, by main's
        previous run too (``--confirm``: either confirms); main's run, for the next merge."""
        day = new_day(of)
        now = run(of, day)
        second = [] if paired_only else ["--confirm", str(previous)]
        # stale_confirm: the system before the merge re-run on a day of its own
        paired = run(before) if stale_confirm else run(before, day)
        gate.command("ratchet", str(now), "--ceilings", str(ceilings), "--noise", str(band),
                     "--confirm-baseline", str(paired), *second, *wide)
        return now

    main = run(system)
    latest = [main]  # main's latest run, for a stale baseline
    gate.init(main)
    outcome = Trial(true_total=system.mean_total(random.Random(seed + 10**6)))
    start = _total(ceilings)
    for merge in range(merges):
        code = check(system)
        failed = code == 1
        outcome.inconclusive += code == 3
        if merge < merges // 2:
            outcome.alarms_first += failed
        else:
            outcome.alarms_second += failed
        before = ceilings.read_text(encoding="utf-8")
        if same_day:
            main = ratchet(system, system, main)
        else:
            previous, main = main, run(system)
            gate.ratchet(main, previous)
        latest[0] = main
        outcome.lowered += ceilings.read_text(encoding="utf-8") != before
    outcome.total = (start, _total(ceilings))
    report = folder / "unchanged.json"
    check(system, "--json", str(report))
    rows = {row["name"]: row for r in json.loads(report.read_text(encoding="utf-8"))["reports"]
            for row in r["rows"]}
    for category in CATEGORIES:
        outcome.caught[category] = check(system.regressed(category, 20, rng)) == 1
        promised = rows.get(category, {}).get("detectable")
        if isinstance(promised, int):
            outcome.promised[category] = promised
            outcome.honest[category] = check(system.regressed(category, promised, rng)) == 1
    # last, a real fix, merged: main's next two runs (the second confirmed by the first) lower;
    # same day: the fixed system's run confirmed by the system before it, re-run that day
    fixed = system.fixed("retrieval_miss", 20, rng)
    before = ceilings.read_text(encoding="utf-8")
    if same_day:  # the fix's merge (paired with the system before it), then the next merge
        # (confirmed by the fix's run, paired with the fixed system; not with paired_only)
        after = ratchet(fixed, system, main)
        if not paired_only:
            ratchet(fixed, fixed, after)
    else:
        gate.ratchet(run(fixed), run(fixed))
    outcome.fix_lowered = ceilings.read_text(encoding="utf-8") != before
    return outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=MODELS, required=True)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--merges", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--same-day-baseline", action="store_true",
                        help="each pull request's check also gets --baseline of main re-run on "
                             "its day; the ratchet is confirmed by --confirm-baseline, the "
                             "system before the merge re-run on main's run's day, and "
                             "--confirm by main's previous run (either confirms)")
    parser.add_argument("--paired-only", action="store_true",
                        help="with --same-day-baseline: the ratchet without --confirm")
    parser.add_argument("--stale-baseline", action="store_true",
                        help="each pull request's check gets --baseline of main's latest run "
                             "(another day): inconclusive unless --accept-gap")
    parser.add_argument("--stale-confirm", action="store_true",
                        help="with --same-day-baseline: the ratchet's --confirm-baseline run "
                             "is made on a day of its own (refused unless --window covers it)")
    parser.add_argument("--window", metavar="HOURS",
                        help="--baseline-window for the ratchet (e.g. 100000: the pairing "
                             "believed whatever the days, as before the window existed)")
    parser.add_argument("--accept-gap", action="store_true",
                        help="with --stale-baseline: --accept-baseline-gap (judged anyway)")
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="failgate-heldout-") as tmp:
        trials = [trial(args.seed + i, args.model, args.repeats, args.merges, Path(tmp),
                        args.same_day_baseline, args.paired_only, args.stale_baseline,
                        args.accept_gap, args.stale_confirm, args.window)
                  for i in range(args.trials)]
    prs = args.trials * args.merges
    first = sum(t.alarms_first for t in trials)
    second = sum(t.alarms_second for t in trials)
    half = args.merges // 2
    paired = ((", same-day baseline" + (" (ratchet: paired only)" if args.paired_only else ""))
              if args.same_day_baseline else "") + (
        (", stale baseline" + (" (gap accepted)" if args.accept_gap else ""))
        if args.stale_baseline else "") + (
        f", confirm-baseline from another day (window {args.window or 'default'})"
        if args.stale_confirm else "")
    print(f"model {args.model}{paired}: 400 cases, band from {args.repeats} repeats, {args.trials} "
          f"trials of {args.merges} merges (seed {args.seed}; "
          f"{time.perf_counter() - started:.0f} s)")
    print(f"  unchanged pull requests that failed: {first + second} of {prs} "
          f"({(first + second) / prs:.1%}); first {half} merges {first} of "
          f"{half * args.trials}, last {args.merges - half} {second} of "
          f"{(args.merges - half) * args.trials}; trials with any: "
          f"{sum(t.alarms_first + t.alarms_second > 0 for t in trials)} of {args.trials}")
    print(f"  unchanged pull requests inconclusive (exit 3): "
          f"{sum(t.inconclusive for t in trials)} of {prs}")
    print(f"  ratchets that lowered the file: {sum(t.lowered for t in trials)} of {prs}")
    drops = [t.total[0][0] - t.total[1][0] for t in trials]
    centre = [t.total[1][1] - t.true_total for t in trials]
    start = [t.total[0][1] - t.true_total for t in trials]
    print(f"  total's max lowered by {min(drops)}-{max(drops)} cases over the merges (mean "
          f"{statistics.fmean(drops):.1f}); its observed minus the true mean total: at init "
          f"{statistics.fmean(start):+.1f} (mean; {min(start):+.1f} to {max(start):+.1f}), after "
          f"the last merge {statistics.fmean(centre):+.1f} ({min(centre):+.1f} to "
          f"{max(centre):+.1f})")
    print(f"  a fix of 20 retrieval_miss cases (5%), ratcheted on main's next run confirmed "
          f"by the one before: lowered the file in {sum(t.fix_lowered for t in trials)} of "
          f"{args.trials}")
    for category in CATEGORIES:
        caught = sum(t.caught[category] for t in trials)
        promised = sorted(t.promised[category] for t in trials if category in t.promised)
        honest = sum(t.honest[category] for t in trials if category in t.honest)
        span = f"{promised[0]}-{promised[-1]}" if promised else "none"
        print(f"  {category:<15} 5% regression (20 cases) caught {caught} of {args.trials}; "
              f"'catches +N' (N {span}) caught {honest} of {len(promised)}")


if __name__ == "__main__":
    main()
