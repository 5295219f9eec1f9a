"""The smallest regression the baseline comparison detects, on generated paired runs.

For a run of ``n`` cases: a baseline labels each case passed or one of four
failure categories; a repeat of the same configuration re-labels each case with
probability ``--flip`` (the run-to-run noise of an LLM pipeline). Five repeats give
each category's noise band (``failgate noise`` would measure the same); a
candidate is one more repeat whose other categories moved within their bands (the
issue's "others perturbed by noise within the band") and whose retrieval_miss count
did not move (its cases still churn in and out), plus ``k`` passing cases that newly
miss retrieval. So ``k`` is the regression itself, net of noise.
The script reports, per ``n``, the smallest ``k`` for which ``retrieval_miss`` is
FAIL (significant at ``--alpha`` and beyond its band), and checks that no other
category fails there. Everything is exact and seeded:

    python bench/detection_power.py                 # n = 221 and 10,000
    python bench/detection_power.py --flip 0.02 --seeds 10
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_failgate.core.compare.noise import NoiseBand, measure_noise
from pytest_failgate.core.compare.verdicts import band_cases, regression_verdict

LABELS = ["passed", "verifier_false_negative", "retrieval_miss", "unknown", "hallucination"]
WEIGHTS = [60, 15, 15, 7, 3]
TARGET = "retrieval_miss"


def _noisy(base: list[str], flip: float, rng: random.Random) -> list[str]:
    return [rng.choice([x for x in LABELS if x != label]) if rng.random() < flip else label
            for label in base]


def _moves(base: list[str], candidate: list[str], category: str) -> tuple[int, int]:
    new = sum(1 for b, c in zip(base, candidate, strict=True) if c == category != b)
    fixed = sum(1 for b, c in zip(base, candidate, strict=True) if b == category != c)
    return new, fixed


def _within_bands(base: list[str], candidate: list[str], bands: dict[str, NoiseBand],
                  rng: random.Random) -> list[str]:
    """Undo random flips of a repeat until every category moved within its band, and the
    target not at all (its cases still churn in and out: the discordant pairs)."""
    candidate = list(candidate)

    def limit(label: str) -> int:
        return 0 if label == TARGET else band_cases(bands.get(label))

    while True:
        outside = [(label, excess) for label in LABELS[1:]
                   if abs(excess := candidate.count(label) - base.count(label)) > limit(label)]
        if not outside:
            return candidate
        label, excess = outside[0]
        # undo one flip into the label (too many) or out of it (too few)
        culprits = [i for i, (b, c) in enumerate(zip(base, candidate, strict=True))
                    if b != c and (c == label if excess > 0 else b == label)]
        undo = rng.choice(culprits)
        candidate[undo] = base[undo]


def smallest_k(n: int, flip: float, alpha: Fraction, seed: int) -> tuple[int, int, bool]:
    """(smallest detected k, the target's band in cases, whether nothing else failed)."""
    rng = random.Random(seed)
    base = rng.choices(LABELS, WEIGHTS, k=n)
    repeats = [_noisy(base, flip, rng) for _ in range(5)]
    bands: dict[str, NoiseBand] = measure_noise(
        [{label: run.count(label) for label in LABELS[1:]} for run in repeats])
    candidate = _within_bands(base, _noisy(base, flip, rng), bands, rng)
    passing = [i for i, (b, c) in enumerate(zip(base, candidate, strict=True))
               if b == c == "passed"]
    rng.shuffle(passing)
    for k in range(len(passing)):
        injected = list(candidate)
        for i in passing[:k]:
            injected[i] = TARGET
        new, fixed = _moves(base, injected, TARGET)
        if regression_verdict(new, fixed, bands.get(TARGET), alpha) == "fail":
            others = all(regression_verdict(*_moves(base, injected, label), bands.get(label),
                                            alpha) != "fail" for label in LABELS[1:]
                         if label != TARGET)
            return k, band_cases(bands.get(TARGET)), others
    raise SystemExit(f"no k up to {len(passing)} was detected for n = {n}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[221, 10_000])
    parser.add_argument("--flip", type=float, default=0.01,
                        help="chance a repeat re-labels a case (default 0.01)")
    parser.add_argument("--alpha", default="0.05")
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    alpha = Fraction(args.alpha)
    print(f"flip {args.flip}, alpha {args.alpha}, {args.seeds} seeds per size")
    for n in args.sizes:
        found = [smallest_k(n, args.flip, alpha, seed) for seed in range(args.seeds)]
        ks = [k for k, _, _ in found]
        bands = [band for _, band, _ in found]
        clean = all(others for _, _, others in found)
        print(f"  n = {n:>6}: smallest detected k: median {statistics.median(ks):g} "
              f"(range {min(ks)}-{max(ks)}), band {min(bands)}-{max(bands)} cases; "
              f"no other category failed: {clean}")


if __name__ == "__main__":
    main()
