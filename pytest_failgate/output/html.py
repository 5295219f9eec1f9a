"""The gate as one self-contained HTML page, to open locally or keep as a CI artifact.

``render_html`` turns a :class:`GateResult` into a single HTML5 document: inline CSS,
no script, no font, image or stylesheet to fetch. A ``Content-Security-Policy`` meta
tag forbids every fetch and every script, so even a value that slipped through
escaping could not load or run anything; and every value taken from the result is
escaped. Folding uses ``<details>``. The output is deterministic: the same inputs
give the same bytes (no times, no random ids).

What the page shows, top down:

1. the run's headline as the core decided it (``GateResult.headline``: passed, how many
   checks failed, reports not read or not judged, the guard); with the taxonomy, ceilings
   file, reports, cases and mode;
2. one summary table per report (category, count, ceiling, headroom, verdict, and
   ``vs baseline`` when any row was compared with a baseline run), failing rows
   marked, a report that could not be loaded shown with its error;
3. the history chart, when given (an SVG from :func:`render_history_svg`, inline);
4. a section per failing check: its message, its rule, a table of its first cases
   with the fields its rules read, and the cases that entered or left it against
   the baseline; passing categories that have cases, folded;
5. with gold labels, how far to trust the judge: each class's precision, recall and trust
   word, and the confusion matrix;
6. warnings, skipped files and how many ceilings a ratchet would lower.
"""

from __future__ import annotations

import functools
import html
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.base.formatting import CONTROL, case_counts, inert_lines, one_line, plural
from ..core.base.result import ceilings_lowered
from .text import agreement_head, catches_text, headroom_text, share_text, shown_classes

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ..core.base.result import BaselineResult, CaseExample, GateResult, ReportResult, Row

__all__ = ["render_html"]

# Characters an HTML document cannot carry (controls, lone surrogates, noncharacters);
# a hostile value must not make the page unreadable or unencodable.
_NOT_HTML = re.compile(
    "[^\t\n\r\x20-\x7e\xa0-\ud7ff\ue000-\ufdcf\ufdf0-\ufffd\U00010000-\U0010ffff]"
)
_WRAP_AFTER = re.compile(r"([_/.])(?=[^\s_/.])")  # not in entities, so safe after escaping
_XML_PROLOGUE = re.compile(r"\A\s*(<\?xml[^>]*\?>\s*)?(<!DOCTYPE[^>]*>\s*)?", re.IGNORECASE)

_NOWRAP = 40  # characters of JSON kept on one line in a case table (on screen)
_SHORT = 8  # and on paper

_VERDICT_LABEL = {"pass": "pass", "fail": "FAIL", "error": "error", "record": "new",
                  "inconclusive": "INCONCLUSIVE", "skip": "not judged"}
_VERDICT_TITLE = {
    "pass": "the count is within its ceiling",
    "fail": "the count is over its ceiling",
    "error": "the check could not be made",
    "record": "recorded as a new ceiling",
    "inconclusive": "the run cannot be judged: not a pass, not a regression",
    "skip": "not judged: the run is inconclusive",
}
# the run's verdict, as the headline marks it
_RUN_MARK = {"pass": "✓", "fail": "✗", "error": "✗", "inconclusive": "?"}
_RUN_CLASS = {"pass": "is-pass", "fail": "is-fail", "error": "is-fail",
              "inconclusive": "is-inconclusive"}
_STRICT_TITLE = ("within its ceiling, but the ceiling has slack and strict mode wants gains "
                 "committed: run a ratchet")

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; " \
       "form-action 'none'"

# The page's style sheet, shipped as package data and inlined into every page.
CSS_FILE = Path(__file__).with_name("report.css")


@functools.lru_cache(maxsize=1)
def _css() -> str:
    return CSS_FILE.read_text(encoding="utf-8").strip()


def render_html(result: GateResult, history_svg: str | None = None,
                title: str = "failgate report") -> str:
    """The gate run as a self-contained HTML5 document (a string, ending in a newline).

    ``history_svg`` is inserted as it is (after dropping an XML prologue), so it must
    be trusted markup such as :func:`render_history_svg` produces; a string that is not
    an ``<svg>`` element raises ``ValueError``. Every value from ``result`` and
    ``title`` is escaped.
    """
    svg = _svg(history_svg) if history_svg is not None else None
    # Each check's anchor is its position in the run, so equal rows still get their own.
    checks = [(f"check-{n}", row) for n, row in enumerate(result.rows, start=1)]
    failing_checks = [(anchor, row) for anchor, row in checks if row.failing or row.undecided]
    headline = result.headline.text[:1].upper() + result.headline.text[1:]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="generator" content="pytest-failgate">',
        f"<title>{_esc(title)}: {_esc(headline)}</title>",
        f"<style>\n{_css()}\n</style>",
        "</head>",
        "<body>",
        "<main>",
        *_headline(result, failing_checks, headline, title),
        *_summary(result),
    ]
    if svg is not None:
        parts += ['<section id="history">', "<h2>History</h2>",
                  f'<div class="chart">\n{svg}\n</div>', "</section>"]
    parts += _failures(result, failing_checks)
    parts += _guard(result)
    parts += _judge(result)
    parts += _passing_examples(checks)
    parts += _notes(result)
    parts += _footer(result)
    parts += ["</main>", "</body>", "</html>"]
    return "\n".join(parts) + "\n"


# --- text helpers ---------------------------------------------------------------------


def _clean(text: str) -> str:
    """Text a page can carry and show as it reads: each line inert (a control or a bidi
    override as its visible escape: an entity would still reorder the text), then what
    HTML cannot hold at all replaced."""
    return _NOT_HTML.sub("\ufffd", inert_lines(text))


def _inline(text: str) -> str:
    """Inline text with its `code` spans as ``<code>`` (an action's advice)."""
    parts = _esc(text).split("`")
    return "".join(f"<code>{part}</code>" if i % 2 else part for i, part in enumerate(parts))


def _esc(text: object) -> str:
    """Text escaped for element content and quoted attributes alike."""
    return html.escape(_clean(str(text)), quote=True)


def _wrappable(text: str) -> str:
    """One line of report content (a check's label, a case id, a field's name) escaped,
    with a line-break opportunity after each ``_``, ``/`` and ``.``.

    Identifiers like ``abstention_missing_blockchain`` then wrap at their words in a
    narrow column (or on paper) instead of overflowing or breaking mid-word; ``<wbr>``
    adds no text, so copying the value gives it back unchanged.
    """
    return _WRAP_AFTER.sub(r"\1<wbr>", _esc(one_line(text)))


def _json(value: Any) -> str:
    """A field value as one line of JSON (non-JSON values as their string); a control or
    bidi character inside a string as JSON's own escape (``\\u202e``), visible."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:  # a structure that refers to itself
        text = json.dumps(repr(value), ensure_ascii=False)
    return CONTROL.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def _value(value: Any) -> str:
    """A field value as compact JSON, escaped; short items never break inside.

    Browsers break lines after hyphens, which splits ids like ``rfp-common-submission``;
    a short scalar, or each short item of a list of scalars, is kept on one line, so a
    list wraps between its items.
    """
    text = _json(value)
    if len(text) <= _SHORT:
        return f'<span class="nw short">{_esc(text)}</span>'
    if len(text) <= _NOWRAP:
        return f'<span class="nw">{_esc(text)}</span>'
    if isinstance(value, (list, tuple)) and value and all(
            v is None or isinstance(v, (str, int, float, bool)) for v in value):
        items = [_json(v) for v in value]
        if "[" + ", ".join(items) + "]" == text and all(len(item) < _NOWRAP for item in items):
            last = len(items) - 1
            return "[" + " ".join(
                f'<span class="nw">{_esc(item)}{"" if i == last else ","}</span>'
                for i, item in enumerate(items)) + "]"
    return _esc(text)


def _svg(text: str) -> str:
    body = _XML_PROLOGUE.sub("", text, count=1).strip()
    if not (body[:4].lower() == "<svg" and body[-6:].lower() == "</svg>"):
        raise ValueError("render_html: history_svg is not an SVG document "
                         "(expected '<svg ...>...</svg>', as render_history_svg returns)")
    return _clean(body)


def _badge(row: Row) -> str:
    if row.slack:
        return f'<span class="badge b-strict" title="{_esc(_STRICT_TITLE)}">FAIL · strict</span>'
    return (f'<span class="badge b-{row.verdict}" title="{_VERDICT_TITLE[row.verdict]}">'
            f"{_VERDICT_LABEL[row.verdict]}</span>")


def _baseline_badge(verdict: str, text: str) -> str:
    if verdict == "pass":
        return _esc(text)
    return f'<span class="badge b-base-{verdict}">{_esc(text)}</span>'


def _ids(case_ids: Iterable[str]) -> str:
    return '<ul class="ids">' + "".join(f"<li><code>{_esc(one_line(i))}</code></li>"
                                        for i in case_ids) + "</ul>"


# --- sections -------------------------------------------------------------------------


def _headline(result: GateResult, failing: Sequence[tuple[str, Row]], headline: str,
              title: str) -> list[str]:
    run = result.headline.verdict
    cases = sum(r.n_cases or 0 for r in result.reports)
    facts = [
        ("taxonomy", f"<code>{_esc(result.taxonomy)}</code>"),
        ("ceilings", f"<code>{_esc(result.ceilings_path)}</code>"),
        ("reports", str(len(result.reports))),
        ("cases", str(cases)),
        ("mode", _esc(result.mode)),
    ]
    if result.guard is not None:
        said = {"pass": "passed", "fail": "failed", "error": "could not compare"}
        facts.append(("guard", f'<a href="#guard">{said[result.guard.verdict]}</a> '
                               f'<span class="muted">vs <code>{_esc(result.guard.ref)}</code>'
                               "</span>"))
    out = [
        f'<header class="headline {_RUN_CLASS[run]}" id="top">',
        f'<p class="eyebrow">{_esc(title)}</p>',
        f'<h1><span class="mark" aria-hidden="true">{_RUN_MARK[run]}</span>'
        f"<span>{_esc(headline)}</span></h1>",
        '<dl class="facts">',
        *(f"<div><dt>{name}</dt><dd>{value}</dd></div>" for name, value in facts),
        "</dl>",
    ]
    if result.load_errors:
        out.append('<ul class="load-errors">')
        for report in result.reports:
            if report.error is not None:
                out.append(f"<li><strong>{_esc(report.name)}</strong> could not be read: "
                           f"<code>{_esc(report.error)}</code></li>")
        out.append("</ul>")
    if failing:
        out.append('<ul class="jump">')
        for anchor, row in failing:
            out.append(f'<li><a href="#{anchor}"><span class="muted">{_esc(row.report)} ·'
                       f'</span> <span class="mono">{_wrappable(row.label)}</span></a> '
                       f"{_badge(row)} {_count_text(row)}</li>")
        out.append("</ul>")
    out.append("</header>")
    return out


def _count_text(row: Row) -> str:
    """``4 cases, 3 over the ceiling of 1``: the count against what its ceiling allows."""
    if row.count is None or row.limit is None:
        return ""
    text = plural(row.count, "case")
    if row.count > row.limit:
        text += f", {row.count - row.limit} over the ceiling of {row.limit}"
    elif row.slack:
        text += f", under a ceiling of {row.limit} that a ratchet would lower"
    else:
        text += f", ceiling {row.limit}"
    return f'<span class="vs">{text}</span>'


def _report_meta(report: ReportResult) -> str:
    if report.error is not None:
        return "not loaded"
    return case_counts(report.n_cases, report.failed, report.kind == "aggregate")


def _summary(result: GateResult) -> list[str]:
    with_baseline = any(row.baseline is not None or row.metric_baseline is not None
                        for row in result.rows)
    out = ['<section id="summary">', "<h2>Summary</h2>"]
    if result.significance is not None:
        out.append(f'<p class="note">{_esc(result.significance)}.</p>')
    noisy = result.noise is not None
    if result.noise is not None:
        out.append(f'<p class="note">{_esc(result.noise.text)}; <em>catches</em> is the '
                   "smallest regression (in cases) an item catches with 80% probability.</p>")
    if not result.reports:
        out.append('<p class="muted">No reports were found.</p>')
    n_before = 0  # checks in earlier reports: anchors number the checks of the whole run
    for report in result.reports:
        failing = any(row.failing for row in report.rows)
        cls = "card report" + (" has-fail" if failing or report.error is not None else "")
        out += [
            f'<div class="{cls}">',
            '<div class="card-head">',
            f"<h3>{_esc(report.name)}</h3>",
            f'<span class="muted">{_esc(_report_meta(report))} · '
            f'<span class="mono">{_esc(report.path)}</span></span>',
            "</div>",
        ]
        if report.error is not None:
            out.append(f'<ul class="load-errors"><li>could not be read: '
                       f"<code>{_esc(report.error)}</code></li></ul>")
        if report.instrument_changes:
            out.append('<p class="note">measured differently from the baseline: ' + ", ".join(
                f"<code>{_esc(text)}</code>" for text in report.instrument_changes) + "</p>")
        if report.config_changes:
            out.append('<p class="note">what changed vs the baseline: ' + ", ".join(
                f"<code>{_esc(change.text)}</code>" for change in report.config_changes)
                + "</p>")
        if report.rows:
            out += _summary_table(report.rows, n_before, with_baseline, noisy)
        elif report.error is None:
            out.append('<p class="muted">No checks.</p>')
        n_before += len(report.rows)
        if any(row.slack for row in report.rows):
            out.append('<p class="note"><span class="badge b-strict">FAIL · strict</span> '
                       "the count is within its ceiling, but the ceiling has slack and strict "
                       f"mode wants the gain committed: run {_inline(result.ratchet_advice)} "
                       "and commit the ceilings file.</p>")
        out.append("</div>")
    out.append("</section>")
    return out


def _summary_table(rows: Sequence[Row], n_before: int, with_baseline: bool,
                   noisy: bool = False) -> list[str]:
    head = ['<th scope="col" class="c-name">category</th>',
            '<th scope="col" class="num c-num">count</th>',
            '<th scope="col" class="c-ceiling">ceiling</th>',
            '<th scope="col" class="num c-num">headroom</th>',
            '<th scope="col" class="c-verdict">verdict</th>']
    tail = ['<th scope="col" class="src">set at</th>']
    if noisy:
        head.append('<th scope="col" class="num c-num">catches</th>')
    if with_baseline:
        head.append('<th scope="col" class="c-baseline">vs baseline</th>')
    out = ['<div class="scroll">', '<table class="summary">',
           "<thead><tr>" + "".join(head + tail) + "</tr></thead>", "<tbody>"]
    for n, row in enumerate(rows, start=n_before + 1):
        bad = row.failing or row.undecided  # an undecided count's section says why
        classes = [c for c, on in (("is-fail", bad), ("is-total", row.kind == "total")) if on]
        tr = f'<tr class="{" ".join(classes)}">' if classes else "<tr>"
        name = _wrappable(row.label)
        if bad:
            name = f'<a href="#check-{n}">{name}</a>'
        headroom = headroom_text(row.headroom)
        headroom_cell = (f'<span class="neg">{headroom}</span>'
                         if row.headroom is not None and row.headroom < 0 else headroom)
        cells = [
            f'<td class="name">{name}</td>',
            f'<td class="num">{_esc(row.count_text)}</td>',
            f'<td class="ceiling">{_esc(row.ceiling)}</td>',
            f'<td class="num">{headroom_cell}</td>',
            f"<td>{_badge(row)}</td>",
        ]
        if noisy:
            cells.append(f'<td class="num">{_esc(catches_text(row))}</td>')
        if with_baseline:
            compared = row.baseline or row.metric_baseline
            text = (_baseline_badge(compared.verdict, row.baseline_text)
                    if compared is not None else "")
            cells.append(f"<td>{text}</td>")
        cells.append(f'<td class="src">{_esc(row.source or "")}</td>')
        out.append(tr + "".join(cells) + "</tr>")
    out += ["</tbody>", "</table>", "</div>"]
    return out


def _failures(result: GateResult, failing: Sequence[tuple[str, Row]]) -> list[str]:
    if not failing:
        return []
    out = ['<section id="failures">', f"<h2>Failing checks ({len(failing)})</h2>"]
    kinds = {report.name: report.kind for report in result.reports}
    for anchor, row in failing:
        classes = "card failure" + (" is-error" if row.verdict == "error" else "") + (
            " is-strict" if row.slack else "")
        out += [
            f'<article class="{classes}" id="{anchor}">',
            '<div class="card-head">',
            f'<h3><span class="muted">{_esc(row.report)} ·</span> '
            f'<span class="title-name">{_wrappable(row.label)}</span></h3>',
            _badge(row),
            "</div>",
            *_stats(row),
        ]
        if row.rule:
            out.append(f'<p class="rule"><span class="muted">rule</span> '
                       f"<code>{_esc(row.rule)}</code></p>")
        if row.message:
            out.append(f'<pre class="message">{_esc(row.message)}</pre>')
        out += _cases(row, kinds.get(row.report))
        if row.baseline is not None:
            out += _baseline(row.baseline)
        out.append("</article>")
    out.append("</section>")
    return out


def _guard(result: GateResult) -> list[str]:
    guard = result.guard
    if guard is None:
        return []
    badge = (f'<span class="badge b-{guard.verdict}">'
             f"{_VERDICT_LABEL[guard.verdict]}</span>")
    classes = "card guard" + ("" if guard.passed else " failure")
    out = [
        '<section id="guard">', "<h2>Ceilings guard</h2>",
        f'<div class="{classes}">',
        '<div class="card-head">',
        f'<h3>no ceiling loosened without a reason since <code>{_esc(guard.ref)}</code></h3>',
        badge, "</div>",
    ]
    if guard.lines:
        out.append(f'<pre class="message">{_esc(chr(10).join(guard.lines))}</pre>')
    return [*out, "</div>", "</section>"]


def _stats(row: Row) -> list[str]:
    items: list[tuple[str, str]] = []
    if row.count is not None:
        items.append(("count", str(row.count)))
    if row.ceiling:
        items.append(("ceiling", _esc(row.ceiling)))
    if row.limit is not None:
        items.append(("limit", str(row.limit)))
    if row.headroom is not None:
        text = headroom_text(row.headroom)
        items.append(("headroom", f'<span class="neg">{text}</span>' if row.headroom < 0
                      else text))
    if row.source:
        items.append(("set at", f"<code>{_esc(row.source)}</code>"))
    if row.moving is not None and row.detectable is not None:
        items.append(("catches (80%)", _esc(catches_text(row))))
    return ['<dl class="stats">',
            *(f"<div><dt>{k}</dt><dd>{v}</dd></div>" for k, v in items), "</dl>"]


def _cases(row: Row, kind: str | None) -> list[str]:
    if row.examples:
        what = "first case" if len(row.examples) == 1 else f"first {len(row.examples)} cases"
        return [f"<h4>{what}</h4>", *_examples_table(row.examples)]
    if row.first_cases:
        return [f"<h4>first {plural(len(row.first_cases), 'case')}</h4>", _ids(row.first_cases)]
    if kind == "aggregate" and row.kind != "consistency":
        return ['<p class="note">No cases listed: an aggregate report records counts, '
                "not cases.</p>"]
    return []


def _examples_table(examples: Sequence[CaseExample]) -> list[str]:
    fields = list(dict.fromkeys(name for example in examples for name in example.fields))
    head = '<th scope="col">case</th>' + "".join(
        f'<th scope="col">{_wrappable(name)}</th>' for name in fields)
    out = ['<div class="scroll">', '<table class="cases">',
           f"<thead><tr>{head}</tr></thead>", "<tbody>"]
    for example in examples:
        cells = [f'<td class="id"><div class="v">{_wrappable(example.id)}</div></td>']
        for name in fields:
            if name not in example.fields:
                cells.append('<td><div class="v missing">absent</div></td>')
                continue
            value = example.fields[name]
            null = " null" if value is None else ""
            cells.append(f'<td><div class="v{null}">{_value(value)}</div></td>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    out += ["</tbody>", "</table>", "</div>"]
    return out


def _baseline(baseline: BaselineResult) -> list[str]:
    text = f"+{baseline.n_new} / -{baseline.n_fixed} {baseline.verdict.upper()}"
    out = [
        "<h4>against the baseline</h4>",
        f'<p class="rule"><span class="badge b-base-{baseline.verdict}">{_esc(text)}</span> '
        f'<span class="muted">baseline count {baseline.base_count}, noise band '
        f"{plural(baseline.band, 'case')}, one-sided McNemar p = "
        f"{baseline.p_value:.3g}</span></p>",
    ]
    if baseline.hint:
        out.append(f'<p class="note">{_esc(baseline.hint)}</p>')
    if not (baseline.n_new or baseline.n_fixed):
        out.append('<p class="muted">No paired case entered or left this category.</p>')
    for label, shown, total in (("new", baseline.new, baseline.n_new),
                                ("fixed", baseline.fixed, baseline.n_fixed)):
        if not total:
            continue
        more = f" (first {len(shown)} of {total})" if total > len(shown) else f" ({total})"
        out.append(f"<h4>{label}{more}</h4>")
        out.append(_ids(shown))
    return out


def _passing_examples(checks: Sequence[tuple[str, Row]]) -> list[str]:
    shown = [(anchor, row) for anchor, row in checks
             if not row.failing and row.examples]
    if not shown:
        return []
    out = ['<section id="passing">', "<h2>Cases in passing categories</h2>"]
    for anchor, row in shown:
        count = "" if row.count is None else f" · {plural(row.count, 'case')}"
        out += [
            f'<details id="{anchor}">',
            f'<summary><span class="muted">{_esc(row.report)} ·</span> '
            f'<span class="mono">{_wrappable(row.label)}</span>'
            f'<span class="muted">{count}</span> {_badge(row)}</summary>',
            '<div class="fold">',
        ]
        if row.rule:
            out.append(f'<p class="rule"><span class="muted">rule</span> '
                       f"<code>{_esc(row.rule)}</code></p>")
        out += _examples_table(row.examples)
        out += ["</div>", "</details>"]
    out.append("</section>")
    return out


def _judge(result: GateResult) -> list[str]:
    """How far to trust the judge, per labelled report: each class's precision, recall and
    trust word, then the confusion matrix (classes no labelled case is in left out)."""
    judged = [report for report in result.reports if report.agreement is not None]
    if not judged:
        return []
    out = ['<section id="judge">', "<h2>How far to trust the judge</h2>"]
    for report in judged:
        agreement = report.agreement
        assert agreement is not None
        shown = shown_classes(agreement)
        out += ['<div class="card">', '<div class="card-head">',
                f"<h3>{_esc(report.name)}</h3>", "</div>",
                f'<p class="note">{_esc(agreement_head(agreement))}</p>',
                '<div class="scroll">', '<table class="summary">',
                '<thead><tr><th scope="col" class="c-name">class</th>'
                '<th scope="col">precision</th><th scope="col">recall</th>'
                '<th scope="col">trust</th></tr></thead>', "<tbody>"]
        for i in shown:
            one = agreement.categories[i]
            bad = ' class="is-fail"' if one.trust == "untrusted" else ""
            out.append(f'<tr{bad}><td class="name">{_wrappable(one.name)}</td>'
                       f"<td>{_esc(share_text(one.precision))}</td>"
                       f"<td>{_esc(share_text(one.recall))}</td><td>{_esc(one.trust)}</td></tr>")
        out += ["</tbody>", "</table>", "</div>", '<div class="scroll">',
                '<table class="summary"><caption>judge (rows) against the gold labels '
                "(columns)</caption>", "<thead><tr><th scope=\"col\">judge \\ label</th>"
                + "".join(f'<th scope="col" class="num">{n + 1}</th>'
                          for n in range(len(shown))) + "</tr></thead>", "<tbody>"]
        out += [f'<tr><th scope="row" class="name">{n + 1} {_wrappable(agreement.classes[i])}'
                "</th>" + "".join(f'<td class="num">{agreement.matrix[i][j]}</td>'
                                  for j in shown) + "</tr>"
                for n, i in enumerate(shown)]
        out += ["</tbody>", "</table>", "</div>", "</div>"]
    out.append("</section>")
    return out


def _notes(result: GateResult) -> list[str]:
    warnings: list[tuple[str | None, str]] = [
        (report.name, w) for report in result.reports for w in report.warnings]
    warnings += [(None, w) for w in result.warnings]
    lowerings = result.lowerings if result.mode in ("gate", "strict") else []
    if not (warnings or result.skipped or lowerings or result.init_text):
        return []
    out = ['<section id="notes" class="notes">', "<h2>Notes</h2>"]
    if warnings:
        out += [f"<h4>{plural(len(warnings), 'warning')}</h4>", "<ul>"]
        for who, warning in warnings:
            prefix = f'<span class="who">{_esc(who)}</span>: ' if who is not None else ""
            out.append(f"<li>{prefix}{_esc(warning)}</li>")
        out.append("</ul>")
    if result.skipped:
        out += [f"<h4>skipped {plural(len(result.skipped), 'file')}</h4>", "<ul>"]
        out += [f"<li><code>{_esc(item)}</code></li>" for item in result.skipped]
        out.append("</ul>")
    if lowerings:
        out += [f"<h4>a ratchet would lower {plural(ceilings_lowered(lowerings), 'ceiling')}</h4>",
                f'<p class="muted">Run {_inline(result.ratchet_advice)}, then commit '
                f"<code>{_esc(result.ceilings_path)}</code>.</p>", "<ul>"]
        out += [f"<li><code>{_esc(low.description)}</code></li>" for low in lowerings]
        out.append("</ul>")
    if result.init_text:
        out += ["<details>", f"<summary>proposed <code>{_esc(result.ceilings_path)}</code>"
                "</summary>", '<div class="fold">',
                f'<pre class="message">{_esc(result.init_text)}</pre>', "</div>", "</details>"]
    out.append("</section>")
    return out


def _footer(result: GateResult) -> list[str]:
    digest = (f" · sha256 <code>{_esc(result.ceilings_sha256[:12])}</code>"
              if result.ceilings_sha256 else "")
    return [f"<footer>pytest-failgate · schema {result.schema_version} · ceilings "
            f"<code>{_esc(result.ceilings_path)}</code>{digest}</footer>"]
