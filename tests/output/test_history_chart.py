"""The history chart: a self-contained, deterministic SVG of counts per category over runs."""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET

import pytest

from pytest_failgate.output.chart import (
    MARKERS,
    PALETTE,
    TICK_SIZE,
    HistoryPoint,
    nice_axis,
    render_history_svg,
    text_width,
    thin_labels,
)

NS = "{http://www.w3.org/2000/svg}"
CATS = ["verifier_false_negative", "retrieval_miss", "unknown"]
VERTEX = re.compile(r"([ML])(-?\d+\.\d),(-?\d+\.\d)")


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def by_class(root: ET.Element, cls: str) -> list[ET.Element]:
    return [el for el in root.iter() if el.get("class") == cls]


def lines_by_category(root: ET.Element) -> dict[str, list[list[tuple[float, float]]]]:
    """Each charted category's line as its runs of vertices (a gap starts a new run)."""
    found: dict[str, list[list[tuple[float, float]]]] = {}
    for group in by_class(root, "fg-series"):
        (path,) = by_class(group, "fg-line")
        runs: list[list[tuple[float, float]]] = []
        for command, x, y in VERTEX.findall(path.get("d", "")):
            if command == "M":
                runs.append([])
            runs[-1].append((float(x), float(y)))
        found[group.get("data-category", "")] = runs
    return found


def grid_y(root: ET.Element) -> dict[int, float]:
    return {int(el.get("data-value", "")): float(el.get("y1", "")) for el in
            by_class(root, "fg-grid")}


def x_labels(root: ET.Element) -> list[tuple[float, str]]:
    """The x labels shown, as (x, text), leaving out any tooltip with the full label."""
    out = []
    for el in by_class(root, "fg-x-label"):
        tooltip = el.find(f"{NS}title")
        text = "".join(el.itertext()) if tooltip is None else tooltip.tail or ""
        out.append((float(el.get("x", "")), text))
    return out


def legend_rows(root: ET.Element) -> set[str]:
    rows = set()
    for item in by_class(root, "fg-legend-item"):
        text = item.find(f"{NS}text")
        assert text is not None
        rows.add(text.get("y", ""))
    return rows


def legend_texts(root: ET.Element) -> dict[str, str]:
    out = {}
    for item in by_class(root, "fg-legend-item"):
        text = item.find(f"{NS}text")
        assert text is not None
        out[item.get("data-category", "")] = "".join(text.itertext())
    return out


def daily(n: int, **counts: list[int | None]) -> list[HistoryPoint]:
    points = []
    for i in range(n):
        recorded: dict[str, int] = {}
        for name, values in counts.items():
            value = values[i]
            if value is not None:
                recorded[name] = value
        points.append(HistoryPoint(f"2026-05-{i + 1:02d}", recorded))
    return points


SIMPLE = daily(3, verifier_false_negative=[4, 8, 6], retrieval_miss=[5, 2, 3], unknown=[0, 1, 1])


# --- the document -----------------------------------------------------------------------


def test_output_parses_as_svg_with_title_desc_and_viewbox() -> None:
    svg = render_history_svg(SIMPLE, CATS, title="Nightly RAG eval")
    root = parse(svg)
    assert root.tag == f"{NS}svg"
    assert root.get("viewBox") == "0 0 720 360"
    assert (root.get("width"), root.get("height")) == ("720", "360")
    title, desc = root[0], root[1]
    assert (title.tag, title.text) == (f"{NS}title", "Nightly RAG eval")
    assert desc.tag == f"{NS}desc"
    assert desc.text is not None
    assert "3 runs, from 2026-05-01 to 2026-05-03" in desc.text
    assert "retrieval_miss: latest 3, highest 5." in desc.text
    assert root.get("role") == "img"
    assert root.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    assert svg.endswith("</svg>\n")


def test_document_is_self_contained() -> None:
    svg = render_history_svg(SIMPLE, CATS, {"retrieval_miss": 4})
    root = parse(svg)
    tags = {el.tag.removeprefix(NS) for el in root.iter()}
    assert tags <= {"svg", "title", "desc", "rect", "g", "line", "path", "text"}
    assert not [name for el in root.iter() for name in el.attrib if "href" in name]
    assert "url(" not in svg
    assert "@import" not in svg
    assert svg.count("http") == 1  # the xmlns, nothing else
    assert not svg.startswith("<?xml")  # inline-able in HTML as is


def test_background_is_opaque_white_for_dark_themes() -> None:
    root = parse(render_history_svg(SIMPLE, CATS))
    rect = root.find(f"{NS}rect")
    assert rect is not None
    assert (rect.get("width"), rect.get("height"), rect.get("fill")) == ("720", "360", "#FFFFFF")


# --- the lines --------------------------------------------------------------------------


def test_one_line_per_category_with_a_vertex_per_point() -> None:
    lines = lines_by_category(parse(render_history_svg(SIMPLE, CATS)))
    assert list(lines) == CATS
    for runs in lines.values():
        assert len(runs) == 1
        assert len(runs[0]) == 3
        xs = [x for x, _ in runs[0]]
        assert xs == sorted(xs)
    # same points, same x, whichever the category
    assert {tuple(x for x, _ in runs[0]) for runs in lines.values()} == {
        tuple(x for x, _ in lines["unknown"][0])
    }


def test_missing_points_break_the_line_instead_of_drawing_zero() -> None:
    values: list[int | None] = [1, 2, None, 3, None, 4, 5]
    points = daily(7, retrieval_miss=values, unknown=[1] * 7)
    root = parse(render_history_svg(points, ["retrieval_miss", "unknown"]))
    lines = lines_by_category(root)
    runs = lines["retrieval_miss"]
    assert [len(run) for run in runs] == [2, 1, 2]
    xs = [x for x, _ in lines["unknown"][0]]
    assert [x for run in runs for x, _ in run] == [xs[0], xs[1], xs[3], xs[5], xs[6]]
    zero = grid_y(root)[0]
    assert all(y != zero for run in runs for _, y in run)
    # the lone point between two gaps still gets a marker, or it would be invisible
    (series,) = (g for g in by_class(root, "fg-series")
                 if g.get("data-category") == "retrieval_miss")
    (markers,) = by_class(series, "fg-markers")
    assert markers.get("d", "").count("M") == 5


def test_category_never_recorded_has_no_line_and_says_no_data() -> None:
    root = parse(render_history_svg(SIMPLE, [*CATS, "planner_under_decomposition"]))
    assert "planner_under_decomposition" not in lines_by_category(root)
    assert legend_texts(root)["planner_under_decomposition"] == (
        "planner_under_decomposition: no data"
    )


def test_vertices_sit_at_their_counts() -> None:
    root = parse(render_history_svg(SIMPLE, CATS))
    grid = grid_y(root)
    assert sorted(grid) == [0, 2, 4, 6, 8]
    ys = [y for _, y in lines_by_category(root)["verifier_false_negative"][0]]
    assert ys == [grid[4], grid[8], grid[6]]


def test_dense_series_keep_markers_only_for_the_latest_and_lone_points() -> None:
    values: list[int | None] = [i % 7 for i in range(200)]
    values[100] = values[102] = None  # point 101 stands alone
    root = parse(render_history_svg(daily_many(200, values), ["retrieval_miss"]))
    (markers,) = by_class(root, "fg-markers")
    assert markers.get("d", "").count("M") == 2
    (runs,) = lines_by_category(root).values()
    assert sum(len(run) for run in runs) == 198


def daily_many(n: int, values: list[int | None]) -> list[HistoryPoint]:
    return [HistoryPoint(f"run-{i:03d}", {} if v is None else {"retrieval_miss": v})
            for i, v in enumerate(values)]


# --- ceilings and the y axis ------------------------------------------------------------


def test_ceiling_lines_sit_at_their_value() -> None:
    # Counts up to 8 and a ceiling of 10: ticks 0, 2, ..., 10. With the default layout
    # the plot runs from y=53 (12 margin + 15 title + 26) down to y=302 (360 less the
    # x labels' 30, one 20-high legend row and the 12 margin, overlapping by 4), so
    # 10 is at y=53 and 5 half way, at y=177.5.
    points = daily(3, low=[4, 8, 6], high=[5, 2, 3])
    root = parse(render_history_svg(points, ["high", "low"],
                                    {"high": 10, "low": 5, "elsewhere": 99}))
    assert len(legend_rows(root)) == 1
    ceilings = {el.get("data-category"): el for el in by_class(root, "fg-ceiling")}
    assert list(ceilings) == ["high", "low"]
    grid = grid_y(root)
    assert sorted(grid) == [0, 2, 4, 6, 8, 10]
    assert (grid[0], grid[10]) == (302.0, 53.0)
    top, half = ceilings["high"], ceilings["low"]
    assert (top.get("y1"), top.get("y2")) == ("53.0", "53.0")
    assert (half.get("y1"), half.get("y2")) == ("177.5", "177.5")
    assert top.get("stroke-dasharray")
    assert top.get("stroke") == PALETTE[0]
    assert half.get("stroke") == PALETTE[1]
    # the same height as a vertex with that count
    points = daily(2, retrieval_miss=[5, 1])
    root = parse(render_history_svg(points, ["retrieval_miss"], {"retrieval_miss": 5}))
    (line,) = by_class(root, "fg-ceiling")
    assert lines_by_category(root)["retrieval_miss"][0][0][1] == float(line.get("y1", ""))


def test_y_axis_covers_ceilings_above_every_count() -> None:
    root = parse(render_history_svg(SIMPLE, CATS, {"unknown": 37}))
    assert sorted(grid_y(root)) == [0, 10, 20, 30, 40]


@pytest.mark.parametrize(("top", "ticks"), [
    (0, [0, 1, 2, 3]),
    (1, [0, 1, 2, 3]),
    (5, [0, 1, 2, 3, 4, 5]),
    (6, [0, 2, 4, 6]),
    (7, [0, 2, 4, 6, 8]),
    (11, [0, 5, 10, 15]),
    (101, [0, 50, 100, 150]),
    (12345, [0, 5000, 10000, 15000]),
])
def test_nice_axis(top: int, ticks: list[int]) -> None:
    step, intervals = nice_axis(top)
    assert [step * k for k in range(intervals + 1)] == ticks


def test_nice_axis_always_has_four_to_six_ticks_covering_the_value() -> None:
    for top in [*range(3000), 10**9 + 7]:
        step, intervals = nice_axis(top)
        assert 3 <= intervals <= 5
        assert step * intervals >= top
        assert str(step).strip("0") in ("1", "2", "5")


# --- x labels ---------------------------------------------------------------------------


def test_many_points_thin_labels_keeping_first_and_last_without_overlap() -> None:
    points = [HistoryPoint(f"2026-{i // 28 + 1:02d}-{i % 28 + 1:02d}", {"unknown": i % 5})
              for i in range(200)]
    root = parse(render_history_svg(points, ["unknown"]))
    labels = x_labels(root)
    assert 3 <= len(labels) < 20
    assert labels[0][1] == "2026-01-01"
    assert labels[-1][1] == points[-1].label
    for (x0, a), (x1, b) in itertools.pairwise(labels):
        assert x1 - x0 >= (text_width(a, TICK_SIZE) + text_width(b, TICK_SIZE)) / 2
    for x, text in labels:
        assert x - text_width(text, TICK_SIZE) / 2 >= 0
        assert x + text_width(text, TICK_SIZE) / 2 <= 720


def test_few_points_label_every_point() -> None:
    assert [text for _, text in x_labels(parse(render_history_svg(SIMPLE, CATS)))] == [
        "2026-05-01", "2026-05-02", "2026-05-03"]


@pytest.mark.parametrize("n", [2, 3, 7, 13, 50, 101, 199, 200, 1000])
def test_thin_labels_keeps_first_and_last_and_never_overlaps(n: int) -> None:
    positions = [100 + 500 * i / (n - 1) for i in range(n)]
    widths = [66.0] * n
    kept = thin_labels(positions, widths)
    assert (kept[0], kept[-1]) == (0, n - 1)
    assert kept == sorted(set(kept))
    gaps = [positions[b] - positions[a] for a, b in itertools.pairwise(kept)]
    assert min(gaps) >= 66.0


def test_thin_labels_edge_cases() -> None:
    assert thin_labels([10.0], [500.0]) == [0]
    assert thin_labels([10.0, 20.0], [500.0, 500.0]) == [0, 1]  # both kept, come what may
    assert thin_labels([0.0, 50.0, 100.0, 150.0, 200.0], [60.0] * 5) == [0, 2, 4]


def test_text_width_estimate_is_generous() -> None:
    assert text_width("2026-05-19", 10) == pytest.approx(60)
    assert text_width("\u691c\u7d22", 10) == pytest.approx(20)


def test_long_labels_are_shortened_with_the_full_text_as_a_tooltip() -> None:
    long = "nightly-build-2026-05-19-gpt-4o-rag-pipeline-v2"
    points = [HistoryPoint("2026-05-18", {"unknown": 1}), HistoryPoint(long, {"unknown": 2})]
    root = parse(render_history_svg(points, ["unknown"]))
    last = by_class(root, "fg-x-label")[-1]
    tooltip = last.find(f"{NS}title")
    assert tooltip is not None
    assert tooltip.text == long
    assert tooltip.tail is not None
    assert tooltip.tail.endswith("\u2026")
    assert len(tooltip.tail) <= 18
    assert long.startswith(tooltip.tail[:-1])


# --- legend -----------------------------------------------------------------------------


def test_legend_lists_each_category_in_order_with_its_latest_count() -> None:
    points = daily(3, verifier_false_negative=[4, 8, 6], retrieval_miss=[5, 2, None],
                   unknown=[0, 1, 1])
    root = parse(render_history_svg(points, CATS, {"verifier_false_negative": 5,
                                                   "unknown": 1}))
    assert legend_texts(root) == {
        "verifier_false_negative": "verifier_false_negative: 6 (over ceiling 5)",
        "retrieval_miss": "retrieval_miss: 2 at 2026-05-02",
        "unknown": "unknown: 1 (ceiling 1)",
    }


def test_legend_wraps_and_the_height_grows_only_when_it_must() -> None:
    many = [f"category_number_{i:02d}" for i in range(30)]
    points = [HistoryPoint("a", dict.fromkeys(many, 1)), HistoryPoint("b", {})]
    root = parse(render_history_svg(points, many, height=200))
    height = int(root.get("height", ""))
    assert height > 200
    assert root.get("viewBox") == f"0 0 720 {height}"
    grid = grid_y(root)
    assert grid[0] - grid[max(grid)] >= 90
    rows = legend_rows(root)
    assert len(rows) > 3
    assert max(float(y) for y in rows) < height
    # a chart that fits keeps its size
    assert parse(render_history_svg(SIMPLE, CATS, height=240)).get("height") == "240"


# --- escaping, determinism, palette -----------------------------------------------------


def test_hostile_names_labels_and_titles_are_escaped() -> None:
    name = '<script>alert("x")</script> & \'c\']]>'
    label = 'v<1> & "beta" \x00\x1b\ud800'
    points = [HistoryPoint(label, {name: 3}), HistoryPoint("</svg>", {name: 1})]
    svg = render_history_svg(points, [name], {name: 2}, title='<b>"&amp;"</b>')
    assert "<script" not in svg
    root = parse(svg)
    assert not [el for el in root.iter() if el.tag.endswith("script")]
    assert root[0].text == '<b>"&amp;"</b>'
    assert list(lines_by_category(root)) == [name]
    (ceiling,) = by_class(root, "fg-ceiling")
    assert ceiling.get("data-category") == name
    assert legend_texts(root)[name].startswith(name)
    texts = [text for _, text in x_labels(root)]
    assert texts[0].startswith('v<1> & "beta"')  # control characters replaced, not emitted
    assert "\x00" not in svg
    assert "\x1b" not in svg
    svg.encode("utf-8")  # a lone surrogate would make this raise
    assert texts[1] == "</svg>"


def test_same_inputs_give_identical_bytes() -> None:
    ceilings = {"verifier_false_negative": 9, "unknown": 2}
    first = render_history_svg(SIMPLE, CATS, ceilings)
    assert render_history_svg(SIMPLE, CATS, ceilings) == first
    reordered = [HistoryPoint(p.label, dict(reversed(list(p.counts.items())))) for p in SIMPLE]
    assert render_history_svg(reordered, CATS, dict(reversed(list(ceilings.items())))) == first
    assert render_history_svg(SIMPLE, list(reversed(CATS)), ceilings) != first


def test_numbers_have_fixed_precision() -> None:
    points = [HistoryPoint(str(i), {"unknown": i * 7 % 3}) for i in range(7)]
    svg = render_history_svg(points, ["unknown"], width=701, height=333)
    numbers = re.findall(r"-?\d+\.\d+", svg)
    assert numbers
    assert all(re.fullmatch(r"-?\d+\.\d", n) for n in numbers)
    assert "-0.0" not in numbers
    # absolute coordinates are never negative; only relative marker steps are
    assert not re.search(r'(?:x|y|x1|y1|x2|y2)="-', svg)


def _contrast_on_white(colour: str) -> float:
    """WCAG 2 contrast ratio of ``#RRGGBB`` against white (the test's own formula)."""

    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    luminance = 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
    return 1.05 / (luminance + 0.05)


def test_palette_is_distinct_and_readable_on_white() -> None:
    assert len(set(PALETTE)) == len(PALETTE) == 8
    assert all(_contrast_on_white(colour) >= 3.0 for colour in PALETTE)
    pairs = {(PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)]) for i in range(40)}
    assert len(pairs) == 40


def test_colours_follow_category_order() -> None:
    root = parse(render_history_svg(SIMPLE, CATS))
    strokes = [by_class(g, "fg-line")[0].get("stroke") for g in by_class(root, "fg-series")]
    assert strokes == list(PALETTE[:3])


# --- edge cases -------------------------------------------------------------------------


def test_one_point_all_zeros() -> None:
    points = [HistoryPoint("2026-05-19", dict.fromkeys(CATS, 0))]
    root = parse(render_history_svg(points, CATS, {"unknown": 0}))
    grid = grid_y(root)
    assert sorted(grid) == [0, 1, 2, 3]
    lines = lines_by_category(root)
    assert all(runs == [[runs[0][0]]] and runs[0][0][1] == grid[0] for runs in lines.values())
    assert all(m.get("d", "").count("M") == 1 for m in by_class(root, "fg-markers"))
    assert [text for _, text in x_labels(root)] == ["2026-05-19"]
    assert "1 run (2026-05-19)" in (root[1].text or "")


def test_200_points_with_long_labels_stay_inside_the_view() -> None:
    points = [HistoryPoint(f"nightly-{i:03d}-with-a-rather-long-name", {"unknown": i % 9,
                                                                      "retrieval_miss": 3})
              for i in range(200)]
    svg = render_history_svg(points, ["unknown", "retrieval_miss"], {"unknown": 12})
    root = parse(svg)
    for runs in lines_by_category(root).values():
        for run in runs:
            assert all(0 <= x <= 720 and 0 <= y <= 360 for x, y in run)
    labels = x_labels(root)
    assert labels[0][1].startswith("nightly-000")
    assert labels[-1][1].startswith("nightly-199")


def test_small_chart_still_renders() -> None:
    root = parse(render_history_svg(SIMPLE, CATS, {"unknown": 3}, width=240, height=160))
    assert len(lines_by_category(root)) == 3


@pytest.mark.parametrize(("points", "categories", "message"), [
    ([], CATS, "no points"),
    (SIMPLE, [], "no categories"),
    (SIMPLE, ["unknown", "unknown"], "listed twice"),
    ([HistoryPoint("a", {"unknown": -1})], CATS, "below zero"),
    ([HistoryPoint("a", {"unknown": 1.5})], CATS, "not an integer"),  # type: ignore[dict-item]
    ([HistoryPoint("a", {"unknown": True})], CATS, "not an integer"),
])
def test_invalid_input_is_a_value_error(points: list[HistoryPoint], categories: list[str],
                                        message: str) -> None:
    with pytest.raises(ValueError, match=message):
        render_history_svg(points, categories)


def test_negative_ceiling_and_tiny_size_are_value_errors() -> None:
    with pytest.raises(ValueError, match="ceiling of 'unknown' is -2, below zero"):
        render_history_svg(SIMPLE, CATS, {"unknown": -2})
    with pytest.raises(ValueError, match="too small"):
        render_history_svg(SIMPLE, CATS, width=100)
