"""The HTML report in a real browser: Debian's headless chromium renders it cleanly.

Needs ``chromium`` on the PATH (``apt-get install -y chromium``). Where it is missing
these tests skip, saying so in the run's header and summary, unless CI (``CI=true``,
whose ``.ci/run`` installs it) or ``--run-browser`` asks for them: then a missing
browser fails them. Each launch gets a fresh profile directory and a timeout.

How console errors are detected: chromium runs with ``--enable-logging=stderr
--v=0``, which writes every console message of the page (``console.*`` calls,
Content-Security-Policy violations, blocked loads, parse errors) to stderr as a line
containing ``:CONSOLE``. That log line carries no level, so any console line at all
counts as an error: the report has no script, so whatever appears there comes from
the browser complaining about the page. The report's CSP meta tag (``default-src
'none'``) makes every attempt to fetch anything a logged violation, so the same check
also proves the page loads nothing from outside. A control test injects one external
image into the report and asserts the log does catch it, so a chromium whose log
format changed cannot make the check pass vacuously.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

import pytest
from conftest import BROWSER_SKIP, CHROMIUM, browser_tests_required
from helpers import EXAMPLES

from pytest_failgate.core.gate.runner import GateConfig, run_gate
from pytest_failgate.output.chart import HistoryPoint, render_history_svg
from pytest_failgate.output.html import render_html

# A headless Chromium per test: CI runs them (CI=true, or --run-heavy).
pytestmark = pytest.mark.heavy

ROOT = EXAMPLES.parent
# Seconds per browser launch: a bound on a hang, not a measure (nothing asserts speed).
# A launch is 1-2 CPU seconds, but 7-9 s of wall clock on a loaded 2-core machine (load 18),
# so a bound near that fails on load, not on a hang.
TIMEOUT = 120
WIDTH, HEIGHT = 1280, 900
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--disable-default-apps", "--hide-scrollbars",
         "--enable-logging=stderr", "--v=0"]


@pytest.fixture
def chromium(request: pytest.FixtureRequest) -> str:
    found = shutil.which(CHROMIUM)
    if found is not None:
        return found
    if browser_tests_required(request.config):
        pytest.fail(f"{CHROMIUM} is not installed, and the HTML report's browser tests need it "
                    f"(required here: {browser_tests_required(request.config)}): install "
                    "Debian's package with `apt-get install -y chromium`", pytrace=False)
    pytest.skip(BROWSER_SKIP)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The failing example's report, with a history chart, as a file."""
    config = GateConfig(paths=(EXAMPLES / "regression",), ceilings_path=ROOT / "ceilings.yaml")
    result = run_gate(config).result()
    points = [HistoryPoint(f"run-{i}", {"retrieval_miss": n, "total": n + 6})
              for i, n in enumerate([1, 1, 2, 1, 4], start=1)]
    svg = render_history_svg(points, ["retrieval_miss", "total"], {"retrieval_miss": 1})
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(render_html(result, svg), encoding="utf-8")
    return path


def run_chromium(chromium: str, tmp_path: Path, page: Path, *args: str
                 ) -> subprocess.CompletedProcess[str]:
    profile = tempfile.mkdtemp(prefix="profile-", dir=tmp_path)
    command = [chromium, *FLAGS, f"--user-data-dir={profile}",
               f"--window-size={WIDTH},{HEIGHT}", *args, page.as_uri()]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT,
                              check=False, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"chromium took more than {TIMEOUT} s: {' '.join(command)}")
    assert done.returncode == 0, f"chromium exited {done.returncode}:\n{done.stderr[-3000:]}"
    return done


def console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def test_the_browser_renders_the_report_without_console_errors(
        report: Path, tmp_path: Path, chromium: str) -> None:
    done = run_chromium(chromium, tmp_path, report, "--dump-dom")
    dom = done.stdout
    assert "2 of 24 checks failed" in dom
    assert 'id="failures"' in dom
    assert "single_doc_chatbot_latency" in dom  # a case of the failing category
    assert "fg-series" in dom  # the inline history chart
    assert dom.count("<table") == 6  # three summaries, two failures, one folded category
    assert console_lines(done.stderr) == []


def test_a_blocked_external_load_is_caught_by_the_console_check(
        report: Path, tmp_path: Path, chromium: str) -> None:
    """The control: the same page with one external image must log a CSP violation."""
    page = tmp_path / "with-external-image.html"
    page.write_text(report.read_text(encoding="utf-8").replace(
        "</main>", '<img src="http://failgate.invalid/pixel.png" alt=""></main>'),
        encoding="utf-8")
    done = run_chromium(chromium, tmp_path, page, "--dump-dom")
    assert "failgate.invalid" in done.stdout
    logged = console_lines(done.stderr)
    assert any("failgate.invalid" in line and "Content Security Policy" in line
               for line in logged), done.stderr[-3000:]


def test_the_screenshot_is_not_blank(report: Path, tmp_path: Path, chromium: str) -> None:
    png = tmp_path / "report.png"
    done = run_chromium(chromium, tmp_path, report, f"--screenshot={png}")
    assert png.is_file(), done.stderr[-3000:]
    width, height, pixels = read_png(png.read_bytes())
    assert (width, height) == (WIDTH, HEIGHT)
    colours: dict[bytes, int] = {}
    for pixel in pixels:
        colours[pixel] = colours.get(pixel, 0) + 1
    assert len(colours) >= 100, f"only {len(colours)} colours: a blank or flat page"
    background = max(colours.values())
    assert background < 0.9 * width * height, "nine tenths of the page is one colour"
    red = sum(n for c, n in colours.items() if c[0] > 180 and c[1] < 80 and c[2] < 80)
    assert red > 500, "the failing checks' red marks are not visible"
    assert console_lines(done.stderr) == []


# --- PNG decoding with the standard library -------------------------------------------


def read_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and the pixels (RGB or RGBA bytes) of an 8-bit, non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, bytearray()
    width = height = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8, f"{depth}-bit PNG"
            assert interlace == 0, "interlaced PNG"
            channels = {0: 1, 2: 3, 4: 2, 6: 4}[colour]
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(bytes(idat))
    stride = width * channels
    assert len(raw) == height * (stride + 1)
    pixels: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        line = unfilter(raw[start], bytearray(raw[start + 1:start + 1 + stride]), previous,
                        channels)
        pixels += [bytes(line[x:x + channels]) for x in range(0, stride, channels)]
        previous = line
    return width, height, pixels


def unfilter(kind: int, line: bytearray, previous: bytearray, bpp: int) -> bytearray:
    if kind == 0:
        return line
    if kind == 2:
        return bytearray((a + b) & 0xFF for a, b in zip(line, previous, strict=True))
    for x in range(len(line)):
        left = line[x - bpp] if x >= bpp else 0
        up = previous[x]
        if kind == 1:
            line[x] = (line[x] + left) & 0xFF
        elif kind == 3:
            line[x] = (line[x] + ((left + up) >> 1)) & 0xFF
        elif kind == 4:
            corner = previous[x - bpp] if x >= bpp else 0
            p = left + up - corner
            pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
            line[x] = (line[x] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)
                       ) & 0xFF
        else:
            raise AssertionError(f"unknown PNG filter {kind}")
    return line
