"""Failure-category counts over a series of runs, as one self-contained SVG line chart.

``failgate history DIR`` embeds the chart in a Markdown PR comment (as an ``<img>``)
and in the HTML report (inline), so the document uses nothing a sandboxed image
cannot: no script, no foreignObject, no external font, image or stylesheet, no
``url(#id)`` references. Text uses the viewer's system sans-serif fonts; a white
background keeps it readable on GitHub's dark theme.

What it draws, for each category in the order given:

* a line through the points where the category was recorded; a point that lacks the
  category breaks the line (nothing is drawn there, and certainly not a zero);
* point markers in the series colour, each series with its own marker shape so
  colour is never the only cue; when points are packed closer than
  ``DENSE_SPACING`` pixels only the latest point and points that stand alone
  between two gaps keep a marker (a run of one point has no line to show it);
* a dashed horizontal line at the category's current ceiling, if it has one;
* a legend entry with its name and latest count (``no data`` if never recorded).

The y axis runs from 0 to a "nice" maximum covering every count and ceiling, with
4 to 6 integer ticks; x labels are thinned so they never overlap, always keeping
the first and the last. The output is deterministic: the same inputs give the same
bytes, whatever the order of keys in the mappings. The height grows past ``height``
only when the legend needs more rows than fit above a minimum plot height.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from typing import TYPE_CHECKING

from ..core.base.classes import dataclass

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["PALETTE", "HistoryPoint", "render_history_svg"]

DEFAULT_TITLE = "Failure categories over time"

# Okabe-Ito hues, in an order that keeps the first few furthest apart. Orange, sky
# blue and yellow are darkened so every colour has at least 3:1 contrast on white
# (WCAG's minimum for graphics); black is Okabe-Ito's own. Past eight categories the
# colours repeat, but each colour then comes with a different marker shape.
PALETTE: tuple[str, ...] = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#000000",  # black
    "#B87700",  # orange, darkened
    "#3C8FC4",  # sky blue, darkened
    "#948700",  # yellow, darkened
)
MARKERS: tuple[str, ...] = ("circle", "square", "triangle", "diamond", "triangle-down")

FONT_FAMILY = "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif"
TEXT_COLOUR = "#222222"
MUTED_COLOUR = "#555555"
GRID_COLOUR = "#E3E3E3"
AXIS_COLOUR = "#8C8C8C"

TITLE_SIZE = 15
TICK_SIZE = 11
LEGEND_SIZE = 12
MARGIN = 12  # around everything
INNER_PAD = 12  # between the plot's edge and the first and last point
LABEL_GAP = 10  # the least space between two x labels
MIN_PLOT_HEIGHT = 90
MIN_WIDTH, MIN_HEIGHT = 240, 160
DENSE_SPACING = 7.0  # closer than this, most point markers are left out
MAX_LABEL_CHARS = 18  # x labels are cut to this many characters, ending in an ellipsis
MAX_NAME_CHARS = 36  # legend names likewise
LEGEND_ROW = 20
LEGEND_SWATCH = 22  # the width of the line sample in front of a legend name
LEGEND_ITEM_GAP = 18
DASH = "6 4"

_SVG_NS = "http://www.w3.org/2000/svg"
# Characters XML 1.0 cannot hold at all, even escaped; a hostile name must not make
# the document unreadable.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class HistoryPoint:
    """One run: its label on the x axis and its failed-case count per category.

    A category missing from ``counts`` was not recorded in that run; the chart
    breaks that category's line there instead of drawing a zero.
    """

    label: str
    counts: Mapping[str, int]


def render_history_svg(
    points: Sequence[HistoryPoint],
    categories: Sequence[str],
    ceilings: Mapping[str, int] | None = None,
    title: str = DEFAULT_TITLE,
    width: int = 720,
    height: int = 360,
) -> str:
    """The chart as an SVG document (a string, ending in a newline).

    ``categories`` chooses the series and their legend order; colours and marker
    shapes are given by position in it. ``ceilings`` maps a category to its current
    ceiling, drawn as a dashed line in the series colour; ceilings of categories not
    charted are ignored. Raises ``ValueError`` for no points, no categories, a
    category named twice, a negative or non-integer count or ceiling, or a size
    below 240x160.
    """
    series, ceiling_of = _validate(points, categories, ceilings, width, height)
    return _Chart(points, categories, series, ceiling_of, title, width, height).render()


# --- validation -------------------------------------------------------------------------


def _validate(
    points: Sequence[HistoryPoint],
    categories: Sequence[str],
    ceilings: Mapping[str, int] | None,
    width: int,
    height: int,
) -> tuple[list[list[int | None]], dict[str, int]]:
    if len(points) == 0:
        raise ValueError(
            "render_history_svg: no points to chart; a history chart needs at least one run"
        )
    if len(categories) == 0:
        raise ValueError(
            "render_history_svg: no categories to chart; name at least one failure category"
        )
    seen: set[str] = set()
    for name in categories:
        if name in seen:
            raise ValueError(f"render_history_svg: category {name!r} is listed twice")
        seen.add(name)
    if width < MIN_WIDTH or height < MIN_HEIGHT:
        raise ValueError(
            f"render_history_svg: a {width}x{height} chart is too small to read; "
            f"use at least {MIN_WIDTH}x{MIN_HEIGHT}"
        )
    series: list[list[int | None]] = []
    for name in categories:
        values: list[int | None] = []
        for point in points:
            value = point.counts.get(name)
            if value is not None:
                _check_count(value, f"the count of {name!r} at {point.label!r}")
            values.append(value)
        series.append(values)
    ceiling_of: dict[str, int] = {}
    for name in categories:
        if ceilings is not None and name in ceilings:
            value = ceilings[name]
            _check_count(value, f"the ceiling of {name!r}")
            ceiling_of[name] = value
    return series, ceiling_of


def _check_count(value: object, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"render_history_svg: {what} is {value!r}, not an integer")
    if value < 0:
        raise ValueError(f"render_history_svg: {what} is {value}, below zero")


# --- numbers, text and layout helpers ---------------------------------------------------


def nice_axis(top_value: int) -> tuple[int, int]:
    """``(step, intervals)`` of a y axis from 0 covering ``top_value``: 4 to 6 ticks.

    The step is 1, 2 or 5 times a power of ten, the smallest that covers the value
    in at most 5 intervals; a small maximum still gets 3 intervals (4 ticks).
    """
    step = 1
    while True:
        for factor in (1, 2, 5):
            candidate = step * factor
            intervals = max(3, -(-top_value // candidate))
            if intervals <= 5:
                return candidate, intervals
        step *= 10


def _num(value: float) -> str:
    """A coordinate with one decimal, never ``-0.0``."""
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


def _clean(text: str) -> str:
    """Text as shown: characters XML cannot hold replaced, runs of whitespace as one space."""
    return _SPACE.sub(" ", _NOT_XML.sub("\ufffd", text)).strip()


def _esc(text: str) -> str:
    """Text escaped for element content and double-quoted attributes alike."""
    return (
        _clean(text)
        .replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#39;")
    )


def text_width(text: str, size: float) -> float:
    """A generous estimate of the rendered width of ``text`` at font ``size``.

    There are no font metrics to be had, so: 0.6 em per character (above the average
    of common sans-serif fonts), 1 em for wide East Asian characters.
    """
    ems = 0.0
    for char in text:
        if unicodedata.east_asian_width(char) in ("W", "F"):
            ems += 1.0
        elif unicodedata.combining(char):
            continue
        else:
            ems += 0.6
    return ems * size


def _shorten(text: str, limit: int) -> str:
    text = _clean(text)
    return text if len(text) <= limit else text[: max(1, limit - 1)].rstrip() + "\u2026"


def _marker_path(shape: str, x: float, y: float, r: float) -> str:
    if shape == "circle":
        return (
            f"M{_num(x - r)},{_num(y)}a{_num(r)},{_num(r)} 0 1,0 {_num(2 * r)},0"
            f"a{_num(r)},{_num(r)} 0 1,0 {_num(-2 * r)},0Z"
        )
    if shape == "square":
        s = r * 0.9
        return f"M{_num(x - s)},{_num(y - s)}h{_num(2 * s)}v{_num(2 * s)}h{_num(-2 * s)}Z"
    if shape == "diamond":
        s = r * 1.3
        return (
            f"M{_num(x)},{_num(y - s)}L{_num(x + s)},{_num(y)}"
            f"L{_num(x)},{_num(y + s)}L{_num(x - s)},{_num(y)}Z"
        )
    s = r * 1.25
    sign = 1.0 if shape == "triangle" else -1.0  # triangle points up, triangle-down down
    return (
        f"M{_num(x)},{_num(y - sign * s)}L{_num(x + s)},{_num(y + sign * s * 0.75)}"
        f"L{_num(x - s)},{_num(y + sign * s * 0.75)}Z"
    )


def thin_labels(positions: Sequence[float], widths: Sequence[float]) -> list[int]:
    """Indices of the x labels to show: evenly spaced, never overlapping, first and last kept.

    Labels are centred on their positions, which are evenly spaced. The step is the
    smallest that clears the widest label, nudged up (by at most half) to one that
    lands exactly on the last point when there is one; otherwise the labels are
    spread evenly between first and last, every gap at least that step. Only when
    first and last alone collide (a plot narrower than two labels) do they overlap.
    """
    n = len(positions)
    if n <= 1:
        return list(range(n))
    spacing = (positions[-1] - positions[0]) / (n - 1)
    widest = max(widths)
    if spacing <= 0:
        return [0, n - 1]
    least = max(1, math.ceil((widest + LABEL_GAP) / spacing))
    if least >= n - 1:
        return [0, n - 1]
    for step in range(least, least + least // 2 + 1):
        if (n - 1) % step == 0:
            return list(range(0, n, step))
    # No step lands on the last point: spread the labels evenly instead. With
    # ``intervals`` at most (n - 1) / least, neighbours stay at least ``least`` apart.
    intervals = (n - 1) // least
    return [round(j * (n - 1) / intervals) for j in range(intervals + 1)]


# --- the chart --------------------------------------------------------------------------


@dataclass
class _LegendItem:
    index: int
    text: str
    x: float
    row: int


class _Chart:
    def __init__(
        self,
        points: Sequence[HistoryPoint],
        categories: Sequence[str],
        series: list[list[int | None]],
        ceiling_of: dict[str, int],
        title: str,
        width: int,
        height: int,
    ) -> None:
        self.points = points
        self.categories = categories
        self.series = series
        self.ceiling_of = ceiling_of
        self.title = _clean(title) or DEFAULT_TITLE
        self.width = width
        self.n = len(points)
        top_value = max(
            [v for values in series for v in values if v is not None]
            + list(ceiling_of.values())
            + [0]
        )
        self.step, self.intervals = nice_axis(top_value)
        self.y_max = self.step * self.intervals
        self.labels = [_shorten(p.label, MAX_LABEL_CHARS) for p in points]
        self.label_widths = [text_width(label, TICK_SIZE) for label in self.labels]

        # Horizontal layout: room for the y tick labels, and for half of the first and
        # last x labels, which are centred on the first and last points.
        y_label_width = text_width(str(self.y_max), TICK_SIZE)
        self.left = max(
            MARGIN + y_label_width + 8.0,
            MARGIN + self.label_widths[0] / 2 - INNER_PAD,
        )
        self.right = width - max(
            MARGIN, MARGIN + self.label_widths[-1] / 2 - INNER_PAD
        )
        if self.n == 1:
            self.xs = [(self.left + self.right) / 2]
        else:
            span = self.right - self.left - 2 * INNER_PAD
            self.xs = [self.left + INNER_PAD + span * i / (self.n - 1) for i in range(self.n)]
        self.spacing = (self.xs[-1] - self.xs[0]) / (self.n - 1) if self.n > 1 else math.inf

        # Vertical layout, bottom up: legend rows, x labels, plot, caption, title.
        self.legend = self._layout_legend()
        rows = max(item.row for item in self.legend) + 1
        self.plot_top = MARGIN + TITLE_SIZE + 26.0
        legend_height = rows * LEGEND_ROW
        below_plot = 30.0 + legend_height + MARGIN - 4
        self.height = max(height, math.ceil(self.plot_top + MIN_PLOT_HEIGHT + below_plot))
        self.plot_bottom = self.height - below_plot
        self.legend_top = self.plot_bottom + 30.0

    # layout ------------------------------------------------------------------------

    def _legend_text(self, index: int, name: str) -> str:
        values = self.series[index]
        recorded = [i for i, v in enumerate(values) if v is not None]
        ceiling = self.ceiling_of.get(name)
        if not recorded:
            text = "no data"
        else:
            latest = recorded[-1]
            count = values[latest]
            text = str(count)
            if latest != self.n - 1:
                text += f" at {self.labels[latest]}"
        if ceiling is not None:
            latest_count = values[recorded[-1]] if recorded else None
            over = latest_count is not None and latest_count > ceiling
            text += f" (over ceiling {ceiling})" if over else f" (ceiling {ceiling})"
        return text

    def _layout_legend(self) -> list[_LegendItem]:
        start = self.left
        limit = self.width - MARGIN
        items: list[_LegendItem] = []
        x, row = start, 0
        for index, name in enumerate(self.categories):
            tail = ": " + self._legend_text(index, name)
            shown = _shorten(name, MAX_NAME_CHARS)
            room = limit - start - LEGEND_SWATCH - 6
            while len(shown) > 4 and text_width(shown + tail, LEGEND_SIZE) > room:
                shown = _shorten(name, len(shown) - 2)
            text = shown + tail
            item_width = LEGEND_SWATCH + 6 + text_width(text, LEGEND_SIZE)
            if x > start and x + item_width > limit:
                x, row = start, row + 1
            items.append(_LegendItem(index, text, x, row))
            x += item_width + LEGEND_ITEM_GAP
        return items

    def y_of(self, value: float) -> float:
        return self.plot_bottom - (self.plot_bottom - self.plot_top) * value / self.y_max

    # rendering ---------------------------------------------------------------------

    def render(self) -> str:
        body: list[str] = []
        body += self._grid()
        body += self._ceilings()
        body += self._series()
        body += self._x_axis()
        body += self._legend()
        desc = self._description()
        digest = hashlib.sha256(
            "\n".join([self.title, desc, *body]).encode("utf-8", "surrogatepass")
        ).hexdigest()[:10]
        title_id, desc_id = f"fg-history-{digest}-title", f"fg-history-{digest}-desc"
        w, h = self.width, self.height
        head = [
            f'<svg xmlns="{_SVG_NS}" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
            f'role="img" aria-labelledby="{title_id} {desc_id}">',
            f'<title id="{title_id}">{_esc(self.title)}</title>',
            f'<desc id="{desc_id}">{_esc(desc)}</desc>',
            f'<rect width="{w}" height="{h}" fill="#FFFFFF"/>',
            f'<g font-family="{FONT_FAMILY}" fill="{TEXT_COLOUR}">',
            self._title_text(),
            f'<text x="{_num(self.left)}" y="{_num(self.plot_top - 12)}" '
            f'font-size="{TICK_SIZE}" fill="{MUTED_COLOUR}">failed cases</text>',
        ]
        return "\n".join([*head, *body, "</g>", "</svg>"]) + "\n"

    def _title_text(self) -> str:
        room = self.width - 2 * MARGIN
        shown = self.title
        while len(shown) > 4 and text_width(shown, TITLE_SIZE) > room:
            shown = _shorten(self.title, len(shown) - 2)
        return (
            f'<text x="{MARGIN}" y="{MARGIN + TITLE_SIZE}" font-size="{TITLE_SIZE}" '
            f'font-weight="bold">{_esc(shown)}</text>'
        )

    def _description(self) -> str:
        first, last = _clean(self.points[0].label), _clean(self.points[-1].label)
        runs = "1 run" if self.n == 1 else f"{self.n} runs"
        span = f" ({first})" if self.n == 1 else f", from {first} to {last}"
        parts = [
            f"Line chart of failed evaluation cases per failure category over {runs}{span}."
        ]
        if self.ceiling_of:
            parts.append("Dashed lines mark each category's current ceiling.")
        for index, name in enumerate(self.categories):
            values = self.series[index]
            recorded = [v for v in values if v is not None]
            text = f"{_clean(name)}: "
            if recorded:
                text += f"latest {recorded[-1]}, highest {max(recorded)}"
                missing = self.n - len(recorded)
                if missing:
                    text += f", not recorded in {missing} of {self.n}"
            else:
                text += "no data"
            if name in self.ceiling_of:
                text += f", ceiling {self.ceiling_of[name]}"
            parts.append(text + ".")
        return " ".join(parts)

    def _grid(self) -> list[str]:
        out = [f'<g class="fg-y-axis" font-size="{TICK_SIZE}" text-anchor="end">']
        for k in range(self.intervals + 1):
            value = self.step * k
            y = _num(self.y_of(value))
            colour = AXIS_COLOUR if value == 0 else GRID_COLOUR
            out.append(
                f'<line class="fg-grid" data-value="{value}" x1="{_num(self.left)}" y1="{y}" '
                f'x2="{_num(self.right)}" y2="{y}" stroke="{colour}" stroke-width="1"/>'
            )
            out.append(
                f'<text x="{_num(self.left - 6)}" y="{_num(self.y_of(value) + TICK_SIZE * 0.35)}"'
                f' fill="{MUTED_COLOUR}">{value}</text>'
            )
        out.append("</g>")
        return out

    def _ceilings(self) -> list[str]:
        out: list[str] = []
        for index, name in enumerate(self.categories):
            if name not in self.ceiling_of:
                continue
            value = self.ceiling_of[name]
            y = _num(self.y_of(value))
            out.append(
                f'<line class="fg-ceiling" data-category="{_esc(name)}" data-value="{value}" '
                f'x1="{_num(self.left)}" y1="{y}" x2="{_num(self.right)}" y2="{y}" '
                f'stroke="{PALETTE[index % len(PALETTE)]}" stroke-width="1.5" '
                f'stroke-dasharray="{DASH}"/>'
            )
        return out

    def _series(self) -> list[str]:
        dense = self.spacing < DENSE_SPACING
        radius = 3.5 if self.spacing >= 14 else 2.75
        out: list[str] = []
        for index, name in enumerate(self.categories):
            values = self.series[index]
            if all(v is None for v in values):
                continue
            colour = PALETTE[index % len(PALETTE)]
            shape = MARKERS[index % len(MARKERS)]
            commands: list[str] = []
            markers: list[str] = []
            last_recorded = max(i for i, v in enumerate(values) if v is not None)
            for i, value in enumerate(values):
                if value is None:
                    continue
                x, y = self.xs[i], self.y_of(value)
                joined = i > 0 and values[i - 1] is not None
                commands.append(f"{'L' if joined else 'M'}{_num(x)},{_num(y)}")
                alone = not joined and (i + 1 >= self.n or values[i + 1] is None)
                if not dense or alone or i == last_recorded:
                    markers.append(_marker_path(shape, x, y, radius))
            out.append(f'<g class="fg-series" data-category="{_esc(name)}">')
            out.append(
                f'<path class="fg-line" d="{"".join(commands)}" fill="none" stroke="{colour}" '
                f'stroke-width="2" stroke-linejoin="round" stroke-linecap="round"/>'
            )
            out.append(
                f'<path class="fg-markers" d="{"".join(markers)}" fill="{colour}" '
                f'stroke="#FFFFFF" stroke-width="1"/>'
            )
            out.append("</g>")
        return out

    def _x_axis(self) -> list[str]:
        kept = thin_labels(self.xs, self.label_widths)
        base = self.plot_bottom
        out = [f'<g class="fg-x-axis" font-size="{TICK_SIZE}" text-anchor="middle">']
        for i in kept:
            x = _num(self.xs[i])
            out.append(
                f'<line x1="{x}" y1="{_num(base)}" x2="{x}" y2="{_num(base + 4)}" '
                f'stroke="{AXIS_COLOUR}" stroke-width="1"/>'
            )
            full = _clean(self.points[i].label)
            tooltip = f"<title>{_esc(full)}</title>" if full != self.labels[i] else ""
            out.append(
                f'<text class="fg-x-label" x="{x}" y="{_num(base + 17)}" '
                f'fill="{MUTED_COLOUR}">{tooltip}{_esc(self.labels[i])}</text>'
            )
        out.append("</g>")
        return out

    def _legend(self) -> list[str]:
        out = [f'<g class="fg-legend" font-size="{LEGEND_SIZE}">']
        radius = 3.5
        for item in self.legend:
            colour = PALETTE[item.index % len(PALETTE)]
            shape = MARKERS[item.index % len(MARKERS)]
            top = self.legend_top + item.row * LEGEND_ROW
            mid = top + 8
            x0, x1 = item.x, item.x + LEGEND_SWATCH
            name = self.categories[item.index]
            has_data = any(v is not None for v in self.series[item.index])
            out.append(f'<g class="fg-legend-item" data-category="{_esc(name)}">')
            out.append(f"<title>{_esc(name)}</title>")
            out.append(
                f'<line x1="{_num(x0)}" y1="{_num(mid)}" x2="{_num(x1)}" y2="{_num(mid)}" '
                f'stroke="{colour}" stroke-width="2"'
                + (' stroke-opacity="0.45"' if not has_data else "")
                + "/>"
            )
            out.append(
                f'<path d="{_marker_path(shape, (x0 + x1) / 2, mid, radius)}" fill="{colour}" '
                f'stroke="#FFFFFF" stroke-width="1"/>'
            )
            out.append(
                f'<text x="{_num(x1 + 6)}" y="{_num(mid + LEGEND_SIZE * 0.35)}">'
                f"{_esc(item.text)}</text>"
            )
            out.append("</g>")
        out.append("</g>")
        return out
