"""The gate as a pull-request comment: a compact Markdown table, failures first.

Deterministic by construction (no times, no paths beyond those the user gave), so
the same inputs give byte-identical comments and a bot can update one in place.

Report content (case ids, report and category names, errors a report recorded) is
data: it is shown in code spans that nothing inside can close (``code_span``), or as
text with no markup, mention or link left (``_cell``), never as Markdown or HTML.
"""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

from ..core.base.formatting import one_line, plural
from ..core.base.result import ceilings_lowered
from .text import agreement_head, catches_text, headroom_text, share_text, shown_classes

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..core.base.result import GateResult, GuardResultModel, ReportResult, Row
    from ..core.base.verdict import RunVerdict

_VERDICT = {"pass": "✅ pass", "fail": "❌ FAIL", "error": "⚠️ error", "record": "📝 new",
            "inconclusive": "⚠️ INCONCLUSIVE", "skip": "⏸️ not judged"}


_BACKTICKS = re.compile(r"`+")
# What would turn text into markup: an HTML tag or entity, a link or image, a mention
# (@user, @org/team), a bare URL GitHub links by itself.
_MARKUP = re.compile(r"[<&\[\]!]|@(?=[\w-])|(?<=\w):(?=//)|\bwww(?=\.)", re.IGNORECASE)


def code_span(text: str, cell: bool = False) -> str:
    """``text`` as a code span that nothing in it can close: fenced with one backtick more
    than its longest run of backticks (CommonMark), on one line. Inside a code span there
    is no markup, link or mention. ``cell``: inside a table row (``|`` escaped, as GFM
    reads it in a code span too)."""
    shown = one_line(text)
    if cell:
        shown = shown.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(shown)), default=0) + 1)
    pad = " " if shown.startswith(("`", " ")) or shown.endswith(("`", " ")) else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def plain_text(text: str) -> str:
    """Plain text on one line of a table or list: markup, mentions and links broken by
    an escape or a zero-width joiner, which shows nothing."""
    shown = _MARKUP.sub(lambda found: {"<": "&lt;", "&": "&amp;"}.get(
        found.group(), "\\" + found.group() if found.group() in "[]!" else
        found.group() + "\u200d"), one_line(text))
    return shown.replace("|", "\\|")


_cell = plain_text  # the name this module's rows use


def _html_code(text: str) -> str:
    """A name inside an HTML line (``<summary>``): escaped, in ``<code>``."""
    return f"<code>{html.escape(one_line(text), quote=True)}</code>"


def _row_line(row: Row, with_baseline: bool, noisy: bool = False) -> str:
    verdict = _VERDICT[row.verdict] + (" (slack)" if row.slack else "")
    cells = [row.count_text, row.ceiling,
             headroom_text(row.headroom), verdict]
    if noisy:
        cells.append(catches_text(row))
    if with_baseline:
        cells.append(row.baseline_text)
    # the label: a slice's row names its slice (``slice=x::no_docs``), as every output does
    names = [code_span(row.report, cell=True), code_span(row.label, cell=True)]
    return "| " + " | ".join([*names, *(_cell(c) for c in cells)]) + " |"


# the run's verdict, as the comment's headline and the CI step's heading mark it
RUN_MARK: dict[RunVerdict, str] = {"pass": "✅", "fail": "❌", "error": "⚠️", "inconclusive": "❔"}


def render_markdown(result: GateResult,
                    history: Sequence[str] | None = None, chart: str | None = None) -> str:
    """The comment: headline, failing checks, the rest folded, cases, what to run next."""
    headline = result.headline
    lines = [f"### failgate: {RUN_MARK[headline.verdict]} {_cell(headline.text)}", ""]
    lines += _context(result)
    lines += _tables(result)
    if result.guard is not None:
        lines += guard_markdown(result.guard)
    lines += _first_cases(result)
    for report in result.reports:
        lines += agreement_markdown(report)
    if history is not None:
        lines += ["<details><summary>history</summary>", "", *history, ""]
        if chart is not None:
            lines += [f"![failure categories over time]({chart})", ""]
        lines += ["</details>", ""]
    if result.lowerings and result.mode in ("gate", "strict"):
        lines.append(f"{plural(ceilings_lowered(result.lowerings), 'ceiling')} can be lowered: "
                     f"{result.ratchet_advice}, then commit {code_span(result.ceilings_path)}.")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _context(result: GateResult) -> list[str]:
    """What was gated against what, the noise, what changed, the hints and load errors."""
    cases = sum(r.n_cases or 0 for r in result.reports)
    source = (f"ceilings {code_span(result.ceilings_path)}"
              if result.ceilings_sha256 is not None
              else "compared with the baseline (no ceilings file)")
    lines = [f"Taxonomy {code_span(result.taxonomy)}, {plural(len(result.reports), 'report')} "
             f"({plural(cases, 'case')}), {source}.", ""]
    if result.significance is not None:
        lines += [f"{_cell(result.significance)}.", ""]
    if result.noise is not None:
        lines += [f"{_cell(result.noise.text)}; *catches* is the smallest regression (in "
                  "cases) an item catches with 80% probability.", ""]
    for report in result.reports:
        if report.instrument_changes:
            shown = ", ".join(code_span(text) for text in report.instrument_changes)
            lines += [f"**Measured differently** from the baseline ({code_span(report.name)}): "
                      f"{shown}", ""]
        if report.config_changes:
            shown = ", ".join(code_span(change.text) for change in report.config_changes)
            lines += [f"**What changed** vs the baseline ({code_span(report.name)}): {shown}",
                      ""]
    hints = [hint for row in result.rows if row.failing for hint in (
        row.baseline.hint if row.baseline is not None else None,
        row.metric_baseline.hint if row.metric_baseline is not None else None) if hint]
    if hints:
        lines += [*(f"- 💡 {_cell(hint)}" for hint in dict.fromkeys(hints)), ""]
    errors = [f"- ⚠️ {code_span(error)}" for error in result.load_errors]
    return [*lines, *errors, *([""] if errors else [])]


def _tables(result: GateResult) -> list[str]:
    """The failing checks' table, then the passing ones' folded."""
    rows = result.rows
    with_baseline = any(row.baseline is not None or row.metric_baseline is not None
                        for row in rows)
    noisy = result.noise is not None
    header = ["report", "category", "count", "ceiling", "headroom", "verdict"]
    header += ["catches"] * noisy + ["vs baseline"] * with_baseline
    head = ["| " + " | ".join(header) + " |",
            "|" + "|".join("---:" if h in ("count", "headroom", "catches") else "---"
                           for h in header) + "|"]
    failing = [row for row in rows if row.failing or row.undecided]
    passing = [row for row in rows if not (row.failing or row.undecided)]
    lines = []
    if failing:
        lines += [*head, *(_row_line(row, with_baseline, noisy) for row in failing), ""]
    if passing:
        lines += [f"<details><summary>{plural(len(passing), 'passing check')}</summary>", "",
                  *head, *(_row_line(row, with_baseline, noisy) for row in passing),
                  "", "</details>", ""]
    return lines


def _first_cases(result: GateResult) -> list[str]:
    """Each failing check's first cases, folded: against a baseline (the base branch's run)
    each marked new or already failing, the new ones first, and with the report's own
    reason where it gives one. Ids and reasons are data: code spans, one line each."""
    lines = []
    for row in result.rows:
        if not row.failing or not row.cases:
            continue
        cases = sorted(row.cases, key=lambda case: case.new is False)  # new ones first
        compared = any(case.new is not None for case in cases)
        fresh = sum(case.new is True for case in cases)
        what = (f"{fresh} new, {len(cases) - fresh} already failing" if compared
                else "first cases")
        what += (f" (the first {len(cases)} of {row.count})" if (row.count or 0) > len(cases)
                 else f" ({len(cases)})" if not compared else "")
        lines += [f"<details><summary>{_html_code(row.report)} · {_html_code(row.label)}: "
                  f"{what}</summary>", ""]
        if not compared and not any(case.reason for case in cases):  # ids alone: one line
            lines.append(", ".join(code_span(case.id) for case in cases))
        for case in cases if compared or any(case.reason for case in cases) else ():
            mark = {True: " **new**", False: " already failing", None: ""}[case.new]
            reason = f": {code_span(case.reason)}" if case.reason else ""
            lines.append(f"- {code_span(case.id)}{mark}{reason}")
        lines += ["", "</details>", ""]
    return lines


def agreement_markdown(report: ReportResult) -> list[str]:
    """How far to trust the judge on one report, folded: per class precision, recall and
    trust, then the confusion matrix (classes no labelled case is in left out)."""
    agreement = report.agreement
    if agreement is None:
        return []
    shown = shown_classes(agreement)
    untrusted = [code_span(one.name) for one in agreement.categories
                 if one.trust == "untrusted"]
    warn = f" · ⚠️ untrusted: {', '.join(untrusted)}" if untrusted else ""
    lines = [f"<details><summary>Judge vs gold labels, {_html_code(report.name)}: "
             f"{agreement.agreed} of {agreement.labelled} agree, kappa "
             f"{'n/a' if agreement.kappa is None else f'{agreement.kappa:.3f}'}</summary>", "",
             f"{_cell(agreement_head(agreement))}{warn}", "",
             "| class | precision | recall | trust |", "|---|---|---|---|"]
    for i in shown:
        one = agreement.categories[i]
        lines.append(f"| {code_span(one.name, cell=True)} | {_cell(share_text(one.precision))} "
                     f"| {_cell(share_text(one.recall))} | {one.trust} |")
    lines += ["", "| judge \\ label | " + " | ".join(str(n + 1) for n in range(len(shown)))
              + " |", "|---|" + "---:|" * len(shown)]
    lines += [f"| {n + 1} {code_span(agreement.classes[i], cell=True)} | "
              + " | ".join(str(agreement.matrix[i][j]) for j in shown) + " |"
              for n, i in enumerate(shown)]
    return [*lines, "", "</details>", ""]


def guard_markdown(guard: GuardResultModel) -> list[str]:
    """The guard's verdict and its loosenings, one bullet each (the pytest item, the CLI's
    CI runner and the Action show the same lines)."""
    mark = "✅" if guard.passed else "❌"
    lines = [f"{mark} " + guard.lines[0], ""]
    lines += [f"- {code_span(line.strip())}" for line in guard.lines[1:]
              if line.startswith("  ") and not line.startswith("  to accept")]
    if len(guard.lines) > 1:
        lines.append("")
    return lines
