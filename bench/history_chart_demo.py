"""Render demo history charts to look at by eye.

    python bench/history_chart_demo.py chart.svg                 # 14 daily runs, 4 categories
    python bench/history_chart_demo.py chart.svg --scenario many # 200 runs, long labels
    python bench/history_chart_demo.py chart.svg --scenario edge # one run, all zeros, no data

To see it as a PNG: ``rsvg-convert chart.svg -o chart.png``, or open it in a browser.
"""

from __future__ import annotations

import argparse
import datetime
import random
from pathlib import Path

from pytest_failgate.output.chart import HistoryPoint, render_history_svg

CATEGORIES = ["verifier_false_negative", "retrieval_miss", "generator_hallucination", "unknown"]


def daily() -> str:
    rng = random.Random(7)
    start = datetime.date(2026, 5, 6)
    points = []
    for day in range(14):
        counts = {
            "verifier_false_negative": max(0, 9 - day // 2 + rng.randint(-1, 1)),
            "retrieval_miss": 3 + rng.randint(0, 3) + (4 if day == 9 else 0),
            "unknown": rng.randint(0, 2),
        }
        if day in (4, 5, 11):  # the hallucination check did not run those days
            counts["generator_hallucination"] = rng.randint(1, 4)
        elif day not in (2, 3, 10):
            counts["generator_hallucination"] = 2 + rng.randint(0, 2)
        label = (start + datetime.timedelta(days=day)).isoformat()
        points.append(HistoryPoint(label, counts))
    ceilings = {"verifier_false_negative": 8, "retrieval_miss": 6, "generator_hallucination": 4}
    return render_history_svg(points, CATEGORIES, ceilings)


def many() -> str:
    rng = random.Random(3)
    names = [*CATEGORIES, "planner_under_decomposition", "verifier_false_positive",
             "a <hostile> & \"quoted\" category name that goes on", "\u691c\u7d22\u30df\u30b9"]
    points = []
    level = [float(10 + 6 * k) for k in range(len(names))]
    for i in range(200):
        level = [max(0.0, v + rng.uniform(-2.5, 2.5)) for v in level]
        counts = {name: round(level[k]) for k, name in enumerate(names)
                  if not (k == 2 and 80 <= i < 120) and k != 3}  # "unknown": never recorded
        points.append(HistoryPoint(f"nightly-build-{i:03d}-with-a-long-name", counts))
    return render_history_svg(points, names, {"retrieval_miss": 45, "unknown": 60},
                              title="Nightly evaluation <main> & friends")


def edge() -> str:
    points = [HistoryPoint("2026-05-19", {"verifier_false_negative": 0, "retrieval_miss": 0})]
    return render_history_svg(points, [*CATEGORIES[:2], "unknown"], {"retrieval_miss": 0},
                              width=360, height=240)


SCENARIOS = {"daily": daily, "many": many, "edge": edge}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path, help="where to write the SVG")
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), default="daily")
    args = parser.parse_args()
    args.output.write_text(SCENARIOS[args.scenario](), encoding="utf-8")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
