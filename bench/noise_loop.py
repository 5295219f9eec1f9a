"""The CI loop on a noisy system: false alarms of unchanged pull requests, and power.

The loop is the one docs/ci.md recommends: ``failgate init`` once, then for every merge
``failgate check`` on the pull request's run and ``failgate ratchet`` on main's run. The
system is a RAG pipeline evaluated on ``--cases`` cases (the RAG regression gate's run
folders: ``attribution.jsonl`` and a ``run.jsonl`` header). Nothing about it changes from
run to run except chance: each case independently re-draws its outcome with probability
``--flip`` per run (the same case, answerable or not, drawn again from its kind's
outcomes). The noise band is measured from ``--repeats`` runs of it (``failgate noise``).

``--drift SIGMA`` makes the noise correlated: every run falls on its own day (the band's
repeats too: spread over days, as docs/noise.md recommends), and the day shifts every
case's log-odds of failing by the same amount, drawn from a normal distribution of
standard deviation SIGMA (a judge or provider harsher on some days). 0.25 and 0.5 are the
figures docs/noise.md gives.

Two questions, each over ``--trials`` independent systems (seeded):

- **false alarms**: how many of the ``--merges`` unchanged pull requests fail the gate;
- **power**: a pull request with a real regression (``--bands`` noise band widths of one
  category, at least ``--least`` of the cases, moved from passing into it) after the
  loop: is it caught (the gate fails)? Tried on each category in turn.

``--mode exact`` is the loop without any noise source (every run's counts taken as the
truth: init records them, the ratchet lowers to them); ``--mode noise`` gives the noise
band to init, check and ratchet (``--noise``). Everything runs the real ``failgate``
command, every decision in exact arithmetic; only the simulated system is random, from
``--seed``:

    python bench/noise_loop.py --mode exact --trials 1     # the loop as it was: 20 of 20 fail
    python bench/noise_loop.py --trials 50                 # noise-aware: false alarms, power
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from noisy_runs import CATEGORIES, Loop, trial  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=("noise", "exact"), default="noise")
    parser.add_argument("--cases", type=int, default=400)
    parser.add_argument("--flip", type=float, default=0.06,
                        help="chance a case re-draws its outcome in a run (default 0.06)")
    parser.add_argument("--repeats", type=int, default=3, help="runs the noise band is from")
    parser.add_argument("--merges", type=int, default=20, help="unchanged pull requests a trial")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--bands", type=int, default=3, help="regression size in band widths")
    parser.add_argument("--least", type=float, default=0.04,
                        help="regression size at least this share of the cases")
    parser.add_argument("--drift", type=float, default=0.0,
                        help="day-level shift of the log-odds, its standard deviation")
    parser.add_argument("--seed", type=int, default=18)
    args = parser.parse_args()
    loop = Loop(args.mode, args.cases, args.flip, args.repeats, args.merges, args.bands,
                args.least, args.drift)
    started = time.perf_counter()
    trials = []
    with tempfile.TemporaryDirectory(prefix="failgate-noise-loop-") as tmp:
        for index in range(args.trials):
            trials.append(trial(args.seed + index, loop, Path(tmp)))
    prs = sum(t.prs for t in trials)
    alarms = sum(t.false_alarms for t in trials)
    print(f"mode {args.mode}: {args.cases} cases, flip {args.flip}, drift {args.drift}, "
          f"noise band from "
          f"{args.repeats} repeats, {args.trials} trials of {args.merges} merges "
          f"(seed {args.seed}; {time.perf_counter() - started:.0f} s)")
    print(f"  unchanged pull requests that failed: {alarms} of {prs} ({alarms / prs:.1%}); "
          f"trials with any: {sum(t.false_alarms > 0 for t in trials)} of {len(trials)}")
    print(f"  ratchets that lowered the file: {sum(t.lowered for t in trials)} of "
          f"{args.merges * len(trials)}")
    for category in CATEGORIES:
        caught = sum(t.caught[category] for t in trials)
        sizes = sorted(t.sizes[category] for t in trials)
        print(f"  regression in {category:<15} ({sizes[0]}-{sizes[-1]} cases): caught "
              f"{caught} of {len(trials)} ({caught / len(trials):.0%})")


if __name__ == "__main__":
    main()
