"""Write a demo HTML report, and optionally a screenshot of it, to look at by eye.

    python bench/html_report_demo.py report.html                       # examples/regression
    python bench/html_report_demo.py report.html --reports examples/reports   # all passing
    python bench/html_report_demo.py report.html --screenshot docs/html-report.png

The report gates the example reports against the repository's ``ceilings.yaml`` and
adds a history chart of made-up earlier runs that end at today's counts. The
screenshot (the README's ``docs/html-report.png``) needs Debian's ``chromium``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_failgate.core.gate.runner import GateConfig, run_gate
from pytest_failgate.output.chart import HistoryPoint, render_history_svg
from pytest_failgate.output.html import render_html

if TYPE_CHECKING:
    from pytest_failgate.core.base.result import GateResult

ROOT = Path(__file__).resolve().parent.parent
# Earlier runs, oldest first, as offsets from today's counts (None: not recorded).
EARLIER = [(3, 2), (2, 2), (2, 1), (1, 0), (0, 0), (0, -3), (0, -3)]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]


def history(result: GateResult) -> str | None:
    """A chart of the first report's two busiest categories over eight runs."""
    if not result.reports or not result.reports[0].rows:
        return None
    rows = [row for row in result.reports[0].rows
            if row.kind == "category" and row.count is not None]
    busiest = sorted(rows, key=lambda row: -(row.count or 0))[:2]
    if not busiest:
        return None
    names = [row.name for row in busiest]
    points = []
    for day, offsets in enumerate([*EARLIER, (0, 0)]):
        counts = {row.name: max(0, (row.count or 0) + offset)
                  for row, offset in zip(busiest, offsets, strict=False)}
        points.append(HistoryPoint(f"2026-05-{12 + day:02d}", counts))
    ceilings = {row.name: row.limit for row in busiest if row.limit is not None}
    return render_history_svg(points, names, ceilings)


def screenshot(page: Path, png: Path, width: int, height: int) -> None:
    chromium = shutil.which("chromium")
    if chromium is None:
        sys.exit("chromium is not installed: apt-get install -y chromium")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}",
                        f"--window-size={width},{height}", f"--screenshot={png.resolve()}",
                        page.resolve().as_uri()],
                       check=True, timeout=30, capture_output=True, stdin=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the HTML file to write")
    parser.add_argument("--reports", type=Path, default=ROOT / "examples" / "regression")
    parser.add_argument("--ceilings", type=Path, default=ROOT / "ceilings.yaml")
    parser.add_argument("--no-history", action="store_true", help="leave the chart out")
    parser.add_argument("--screenshot", type=Path, help="also write a PNG of the page")
    parser.add_argument("--size", default="1280x1000", help="screenshot window, WxH")
    args = parser.parse_args()
    config = GateConfig(paths=(args.reports.resolve(),), ceilings_path=args.ceilings.resolve())
    result = run_gate(config).result()
    args.out.write_text(render_html(result, None if args.no_history else history(result)),
                        encoding="utf-8")
    print(f"wrote {args.out}")
    if args.screenshot is not None:
        width, height = (int(n) for n in args.size.lower().split("x"))
        args.screenshot.parent.mkdir(parents=True, exist_ok=True)
        screenshot(args.out, args.screenshot, width, height)
        print(f"wrote {args.screenshot}")


if __name__ == "__main__":
    main()
