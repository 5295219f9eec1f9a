"""The gate as one self-contained HTML page, to open locally or keep as a CI artifact.

``render_html`` turns a :class:`GateResult` into a single HTML5 document: inline CSS,
no script, no font, image or stylesheet to fetch. A ``Content-Security-Policy`` meta
tag forbids every fetch and every script, so even a value that slipped through
escaping could not load or run anything; and every value taken from the result is
escaped. Folding uses ``<details>``. The output is deterministic: the same inputs
give the same bytes (no times, no random ids).

What the page shows, top down:

1. a headline: passed, how many checks failed, or how many reports could not be
   read; with the taxonomy, ceilings file, reports, cases and mode;
2. one summary table per report (category, count, ceiling, headroom, verdict, and
   ``vs baseline`` when any row was compared with a baseline run), failing rows
   marked, a report that could not be loaded shown with its error;
3. the history chart, when given (an SVG from :func:`render_history_svg`, inline);
4. a section per failing check: its message, its rule, a table of its first cases
   with the fields its rules read, and the cases that entered or left it against
   the baseline; passing categories that have cases, folded;
5. warnings, skipped files and how many ceilings a ratchet would lower.
"""

from __future__ import annotations

import html
import json
import re
from typing import TYPE_CHECKING, Any

from ..core.formatting import case_counts, plural
from .text import headroom_text

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ..core.result import BaselineResult, CaseExample, GateResult, ReportResult, Row

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

_VERDICT_LABEL = {"pass": "pass", "fail": "FAIL", "error": "error", "record": "new"}
_VERDICT_TITLE = {
    "pass": "the count is within its ceiling",
    "fail": "the count is over its ceiling",
    "error": "the check could not be made",
    "record": "recorded as a new ceiling",
}
_STRICT_TITLE = ("within its ceiling, but the ceiling has slack and --failgate-strict "
                 "wants gains committed: run a ratchet")

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; " \
       "form-action 'none'"

_CSS = """
:root {
  color-scheme: light;
  --text: #1f2328; --muted: #59636e; --line: #d8dee4; --soft: #eef1f4; --page: #f6f8fa;
  --fail: #b42318; --fail-bg: #fef3f2; --fail-line: #f2b8b5; --fail-bar: #d92d20;
  --pass: #067647; --pass-bg: #ecfdf3; --pass-line: #abefc6;
  --warn: #93370d; --warn-bg: #fffaeb; --warn-line: #fedf89;
  --new: #175cd3; --new-bg: #eff8ff; --new-line: #b2ddff;
  --mono: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "DejaVu Sans Mono",
    "Liberation Mono", monospace;
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body {
  margin: 0; background: var(--page); color: var(--text);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
    sans-serif;
}
main { max-width: 1180px; margin: 0 auto; padding: 28px 24px 48px; }
h1, h2, h3 { line-height: 1.25; margin: 0; }
h2 { font-size: 19px; margin: 36px 0 12px; }
h3 { font-size: 16px; }
code, pre, .mono { font-family: var(--mono); font-size: 13px; }
a { color: inherit; text-decoration-color: #8c959f; text-underline-offset: 2px; }
a:hover { text-decoration-color: currentColor; }
ul { margin: 6px 0; padding-left: 22px; }
li { margin: 2px 0; }
.muted { color: var(--muted); }
.card {
  background: #fff; border: 1px solid var(--line); border-radius: 8px;
  padding: 16px 18px; margin: 0 0 16px;
}
.card-head {
  display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 12px; margin-bottom: 10px;
}
.card-head h3 { overflow-wrap: anywhere; }
.card-head .muted { font-size: 13.5px; overflow-wrap: anywhere; min-width: 0; }

/* headline */
.headline {
  background: #fff; border: 1px solid var(--line); border-left: 6px solid var(--pass);
  border-radius: 8px; padding: 18px 22px;
}
.headline.is-fail { border-left-color: var(--fail-bar); }
.eyebrow {
  margin: 0 0 4px; color: var(--muted); font-size: 13px; letter-spacing: .04em;
  text-transform: uppercase; overflow-wrap: anywhere;
}
.headline h1 { font-size: 26px; display: flex; align-items: center; gap: 10px; }
.headline h1 .mark {
  display: inline-flex; align-items: center; justify-content: center; flex: none;
  width: 30px; height: 30px; border-radius: 50%; font-size: 17px; color: #fff;
  background: var(--pass);
}
.headline.is-fail h1 .mark { background: var(--fail-bar); }
.facts { display: flex; flex-wrap: wrap; gap: 6px 28px; margin: 14px 0 0; }
.facts div { min-width: 0; }
.facts dt { color: var(--muted); font-size: 12px; text-transform: uppercase;
  letter-spacing: .04em; }
.facts dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
.load-errors { margin: 14px 0 0; padding: 0; list-style: none; }
.load-errors li {
  background: var(--fail-bg); border: 1px solid var(--fail-line); border-radius: 6px;
  padding: 8px 12px; margin: 6px 0; color: var(--fail);
}
.load-errors code { color: var(--text); overflow-wrap: anywhere; }

.jump { margin: 16px 0 0; padding: 12px 0 0; list-style: none;
  border-top: 1px solid var(--soft); display: flex; flex-direction: column; gap: 4px; }
.jump li { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 10px; margin: 0; }
.jump a { text-decoration: none; overflow-wrap: anywhere; }
.jump a:hover .mono { text-decoration: underline; }
.jump .mono { font-size: 14px; font-weight: 600; }
.vs { font-variant-numeric: tabular-nums; color: var(--muted); font-size: 13.5px; }

/* tables */
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
th, td { padding: 6px 10px; text-align: left; vertical-align: top; }
thead th {
  font-size: 12px; font-weight: 600; color: var(--muted); text-transform: uppercase;
  letter-spacing: .04em; border-bottom: 1px solid var(--line); white-space: nowrap;
}
tbody td { border-bottom: 1px solid var(--soft); }
tbody tr:last-child td { border-bottom: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.name { font-family: var(--mono); font-size: 13px; overflow-wrap: break-word; }
td.src { color: var(--muted); font-size: 12.5px; white-space: nowrap; font-weight: 400; }
.summary td { vertical-align: baseline; }
th.src, td.src { text-align: right; }
tr.is-fail td { background: var(--fail-bg); }
tr.is-fail td:first-child { box-shadow: inset 4px 0 0 var(--fail-bar); }
tr.is-total td { font-weight: 600; }
tr.is-total td { border-top: 1px solid var(--line); }
.neg { color: var(--fail); font-weight: 600; }
.summary { min-width: 560px; }
.summary .c-name { width: 34%; }
.summary .c-num { width: 9%; }
.summary .c-ceiling { width: 14%; }
.summary .c-verdict { width: 13%; }
.summary .c-baseline { width: 12%; }
.cases { min-width: 480px; }
.cases td { font-family: var(--mono); font-size: 12.5px; }
.cases td code { font-size: inherit; }
.cases td.id { font-weight: 600; }
.cases td.id { overflow-wrap: break-word; }
.cases .v { max-width: 48ch; overflow-wrap: break-word; }
.cases .null { color: var(--muted); }
.cases .nw { white-space: nowrap; }
.cases .missing { color: #8c959f; }

/* badges */
.badge {
  display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px;
  font-weight: 600; line-height: 18px; white-space: nowrap; border: 1px solid transparent;
}
.b-pass { color: var(--pass); background: var(--pass-bg); border-color: var(--pass-line); }
.b-fail { color: #fff; background: var(--fail-bar); }
.b-strict { color: var(--fail); background: #fff; border: 1px dashed var(--fail-bar); }
.b-error { color: var(--warn); background: var(--warn-bg); border-color: var(--warn-line); }
.b-record { color: var(--new); background: var(--new-bg); border-color: var(--new-line); }
.b-PASS { color: var(--pass); background: var(--pass-bg); border-color: var(--pass-line); }
.b-WARN { color: var(--warn); background: var(--warn-bg); border-color: var(--warn-line); }
.b-FAIL { color: var(--fail); background: var(--fail-bg); border-color: var(--fail-line); }
.note { font-size: 13px; color: var(--muted); margin: 10px 0 0; }

/* failing checks */
.failure { border-left: 4px solid var(--fail-bar); }
.failure.is-error { border-left-color: #dc6803; }
.failure.is-strict { border-left-style: dashed; }
.failure .title-name { font-family: var(--mono); font-size: 15px; }
.stats { display: flex; flex-wrap: wrap; gap: 4px 22px; margin: 0 0 10px; font-size: 14px; }
.stats div { display: flex; gap: 6px; }
.stats dt { color: var(--muted); }
.stats dd { margin: 0; font-weight: 600; font-variant-numeric: tabular-nums; }
.rule { margin: 0 0 10px; }
.rule > .muted:first-child { font-size: 13.5px; margin-right: 4px; }
.rule code { overflow-wrap: anywhere; }
pre.message {
  margin: 0 0 14px; padding: 10px 12px; background: var(--page); border: 1px solid var(--line);
  border-radius: 6px; white-space: pre-wrap; overflow-wrap: anywhere; line-height: 1.45;
}
h4 { font-size: 13px; margin: 14px 0 6px; color: var(--muted); text-transform: uppercase;
  letter-spacing: .04em; }
.ids { display: flex; flex-wrap: wrap; gap: 4px 6px; margin: 0; padding: 0; list-style: none; }
.ids li { margin: 0; }
.ids code {
  background: var(--soft); border-radius: 4px; padding: 1px 6px; font-size: 12.5px;
  overflow-wrap: anywhere;
}

/* folded sections */
details { background: #fff; border: 1px solid var(--line); border-radius: 8px; margin: 0 0 8px; }
details > summary {
  cursor: pointer; padding: 10px 16px; font-weight: 600; overflow-wrap: anywhere;
}
details > summary .muted { font-weight: 400; }
details[open] > summary { border-bottom: 1px solid var(--soft); }
details > .fold { padding: 10px 16px 14px; }
details pre.message { margin-top: 4px; }

/* chart, notes, footer */
.chart { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 8px;
  overflow-x: auto; }
.chart svg { display: block; max-width: 100%; height: auto; margin: 0 auto; }
.notes li { overflow-wrap: anywhere; }
.notes .who { font-weight: 600; }
footer { margin-top: 40px; color: var(--muted); font-size: 12.5px; overflow-wrap: anywhere; }

@media (max-width: 640px) {
  main { padding: 16px 12px 32px; }
  .headline { padding: 14px 16px; }
  .headline h1 { font-size: 21px; }
  .card { padding: 12px; }
  th, td { padding: 5px 8px; }
}

@media print {
  @page { margin: 14mm; }
  body { background: #fff; font-size: 11pt; }
  main { max-width: none; padding: 0; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  .card, .headline, details, .chart { border-color: #bbb; break-inside: avoid-page; }
  .failure, .report { break-inside: auto; }
  h2, h3, h4, summary { break-after: avoid-page; }
  tr, pre.message { break-inside: avoid-page; }
  thead { display: table-header-group; }
  .scroll, .chart { overflow: visible; }
  table, .summary, .cases { min-width: 0; }
  th, td { padding: 4px 6px; }
  .cases th, .cases td { padding: 3px 4px; }
  .card { padding: 10px 12px; }
  td.src { white-space: normal; }
  .cases .v { overflow-wrap: anywhere; }  /* nothing may run off the paper, */
  .cases th, .cases td.id .v { overflow-wrap: break-word; }  /* names break at "_" */
  .cases .v { max-width: none; }
  .cases .nw:not(.short) { white-space: normal; }
  .cases { font-size: 8pt; }
  thead th { white-space: normal; text-transform: none; letter-spacing: 0; font-size: 8.5pt; }
  details::details-content { content-visibility: visible; display: block; }
  a { text-decoration: none; }
}
""".strip()


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
    failing_checks = [(anchor, row) for anchor, row in checks if row.verdict in ("fail", "error")]
    headline = _headline_text(result, len(failing_checks))
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
        f"<style>\n{_CSS}\n</style>",
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
    parts += _passing_examples(checks)
    parts += _notes(result)
    parts += _footer(result)
    parts += ["</main>", "</body>", "</html>"]
    return "\n".join(parts) + "\n"


# --- text helpers ---------------------------------------------------------------------


def _clean(text: str) -> str:
    return _NOT_HTML.sub("\ufffd", text)


def _esc(text: object) -> str:
    """Text escaped for element content and quoted attributes alike."""
    return html.escape(_clean(str(text)), quote=True)


def _wrappable(text: str) -> str:
    """Escaped, with a line-break opportunity after each ``_``, ``/`` and ``.``.

    Identifiers like ``abstention_missing_blockchain`` then wrap at their words in a
    narrow column (or on paper) instead of overflowing or breaking mid-word; ``<wbr>``
    adds no text, so copying the value gives it back unchanged.
    """
    return _WRAP_AFTER.sub(r"\1<wbr>", _esc(text))


def _json(value: Any) -> str:
    """A field value as one line of JSON (non-JSON values as their string)."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:  # a structure that refers to itself
        return json.dumps(repr(value), ensure_ascii=False)


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


def _baseline_badge(baseline: BaselineResult, text: str) -> str:
    if baseline.verdict == "PASS":
        return _esc(text)
    return f'<span class="badge b-{baseline.verdict}">{_esc(text)}</span>'


def _ids(case_ids: Iterable[str]) -> str:
    return '<ul class="ids">' + "".join(f"<li><code>{_esc(i)}</code></li>"
                                        for i in case_ids) + "</ul>"


# --- sections -------------------------------------------------------------------------


def _headline_text(result: GateResult, n_failing: int) -> str:
    parts = []
    n_errors = len(result.load_errors)
    n = len(result.rows)
    if n_errors:
        parts.append(f"{plural(n_errors, 'report')} could not be read")
    if n_failing:
        parts.append(f"{n_failing} of {plural(n, 'check')} failed")
    if result.guard is not None and not result.guard.passed:
        parts.append(f"the ceilings guard against {result.guard.ref} failed")
    if parts:
        text = "; ".join(parts)
        return text[0].upper() + text[1:]
    if n == 0:
        return "No checks to run"
    if all(row.verdict == "record" for row in result.rows):
        return f"{plural(n, 'count')} recorded as new ceilings"
    return "The check passed" if n == 1 else f"All {n} checks passed"


def _headline(result: GateResult, failing: Sequence[tuple[str, Row]], headline: str,
              title: str) -> list[str]:
    bad = bool(failing or result.load_errors or (result.guard and not result.guard.passed))
    cases = sum(r.n_cases or 0 for r in result.reports)
    facts = [
        ("taxonomy", f"<code>{_esc(result.taxonomy)}</code>"),
        ("ceilings", f"<code>{_esc(result.ceilings_path)}</code>"),
        ("reports", str(len(result.reports))),
        ("cases", str(cases)),
        ("mode", _esc(result.mode)),
    ]
    if result.guard is not None:
        verdict = "passed" if result.guard.passed else "failed"
        facts.append(("guard", f'<a href="#guard">{verdict}</a> <span class="muted">vs '
                               f"<code>{_esc(result.guard.ref)}</code></span>"))
    out = [
        f'<header class="headline {"is-fail" if bad else "is-pass"}" id="top">',
        f'<p class="eyebrow">{_esc(title)}</p>',
        f'<h1><span class="mark" aria-hidden="true">{"✗" if bad else "✓"}</span>'
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
    if row.count is None or row.allowed is None:
        return ""
    text = plural(row.count, "case")
    if row.count > row.allowed:
        text += f", {row.count - row.allowed} over the ceiling of {row.allowed}"
    elif row.slack:
        text += f", under a ceiling of {row.allowed} that a ratchet would lower"
    else:
        text += f", ceiling {row.allowed}"
    return f'<span class="vs">{text}</span>'


def _report_meta(report: ReportResult) -> str:
    if report.error is not None:
        return "not loaded"
    return case_counts(report.n_cases, report.failed, report.kind == "aggregate")


def _summary(result: GateResult) -> list[str]:
    with_baseline = any(row.baseline is not None for row in result.rows)
    out = ['<section id="summary">', "<h2>Summary</h2>"]
    if not result.reports:
        out.append('<p class="muted">No reports were found.</p>')
    n_before = 0  # checks in earlier reports: anchors number the checks of the whole run
    for report in result.reports:
        failing = any(row.verdict in ("fail", "error") for row in report.rows)
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
        if report.rows:
            out += _summary_table(report.rows, n_before, with_baseline)
        elif report.error is None:
            out.append('<p class="muted">No checks.</p>')
        n_before += len(report.rows)
        if any(row.slack for row in report.rows):
            out.append('<p class="note"><span class="badge b-strict">FAIL · strict</span> '
                       "the count is within its ceiling, but the ceiling has slack and "
                       "<code>--failgate-strict</code> wants the gain committed: run a ratchet "
                       "and commit the ceilings file.</p>")
        out.append("</div>")
    out.append("</section>")
    return out


def _summary_table(rows: Sequence[Row], n_before: int, with_baseline: bool) -> list[str]:
    head = ['<th scope="col" class="c-name">category</th>',
            '<th scope="col" class="num c-num">count</th>',
            '<th scope="col" class="c-ceiling">ceiling</th>',
            '<th scope="col" class="num c-num">headroom</th>',
            '<th scope="col" class="c-verdict">verdict</th>']
    tail = ['<th scope="col" class="src">set at</th>']
    if with_baseline:
        head.append('<th scope="col" class="c-baseline">vs baseline</th>')
    out = ['<div class="scroll">', '<table class="summary">',
           "<thead><tr>" + "".join(head + tail) + "</tr></thead>", "<tbody>"]
    for n, row in enumerate(rows, start=n_before + 1):
        bad = row.verdict in ("fail", "error")
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
            f'<td class="num">{"" if row.count is None else row.count}</td>',
            f'<td class="ceiling">{_esc(row.ceiling)}</td>',
            f'<td class="num">{headroom_cell}</td>',
            f"<td>{_badge(row)}</td>",
        ]
        if with_baseline:
            text = (_baseline_badge(row.baseline, row.baseline_text)
                    if row.baseline is not None else "")
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
    badge = ('<span class="badge b-pass">pass</span>' if guard.passed
             else '<span class="badge b-fail">FAIL</span>')
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
    if row.allowed is not None:
        items.append(("allowed", str(row.allowed)))
    if row.headroom is not None:
        text = headroom_text(row.headroom)
        items.append(("headroom", f'<span class="neg">{text}</span>' if row.headroom < 0
                      else text))
    if row.source:
        items.append(("set at", f"<code>{_esc(row.source)}</code>"))
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
    text = f"+{baseline.n_new} / -{baseline.n_fixed} {baseline.verdict}"
    out = [
        "<h4>against the baseline</h4>",
        f'<p class="rule"><span class="badge b-{baseline.verdict}">{_esc(text)}</span> '
        f'<span class="muted">baseline count {baseline.base_count}, noise band '
        f"{plural(baseline.band, 'case')}, one-sided McNemar p = "
        f"{baseline.p_value:.3g}</span></p>",
    ]
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
             if row.verdict not in ("fail", "error") and row.examples]
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
        out += [f"<h4>a ratchet would lower {plural(len(lowerings), 'ceiling')}</h4>",
                f'<p class="muted">Run with <code>--failgate-ratchet</code>, then commit '
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
