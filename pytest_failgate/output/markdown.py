"""The gate as a pull-request comment: a compact Markdown table, failures first.

Deterministic by construction (no times, no paths beyond those the user gave), so
the same inputs give byte-identical comments and a bot can update one in place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.base.formatting import plural
from .text import catches_text, headroom_text

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..core.base.result import GateResult, GuardResultModel, Row
    from ..core.base.verdict import RunVerdict

_VERDICT = {"pass": "✅ pass", "fail": "❌ FAIL", "error": "⚠️ error", "record": "📝 new",
            "inconclusive": "⚠️ INCONCLUSIVE", "skip": "⏸️ not judged"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _row_line(row: Row, with_baseline: bool, noisy: bool = False) -> str:
    verdict = _VERDICT[row.verdict] + (" (slack)" if row.slack else "")
    cells = [row.report, f"`{row.name}`", "" if row.count is None else str(row.count),
             row.ceiling, headroom_text(row.headroom), verdict]
    if noisy:
        cells.append(catches_text(row))
    if with_baseline:
        cells.append(row.baseline_text)
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


# the run's verdict, as the comment's headline and the CI step's heading mark it
RUN_MARK: dict[RunVerdict, str] = {"pass": "✅", "fail": "❌", "error": "⚠️", "inconclusive": "❔"}


def render_markdown(result: GateResult,
                    history: Sequence[str] | None = None, chart: str | None = None) -> str:
    """The comment: headline, failing checks, the rest folded, cases, what to run next."""
    headline = result.headline
    lines = [f"### failgate: {RUN_MARK[headline.verdict]} {headline.text}", ""]
    lines += _context(result)
    lines += _tables(result)
    if result.guard is not None:
        lines += guard_markdown(result.guard)
    lines += _first_cases(result)
    if history is not None:
        lines += ["<details><summary>history</summary>", "", *history, ""]
        if chart is not None:
            lines += [f"![failure categories over time]({chart})", ""]
        lines += ["</details>", ""]
    if result.lowerings and result.mode in ("gate", "strict"):
        lines.append(f"{plural(len(result.lowerings), 'ceiling')} can be lowered: "
                     f"{result.ratchet_advice}, then commit `{result.ceilings_path}`.")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _context(result: GateResult) -> list[str]:
    """What was gated against what, the noise, what changed, the hints and load errors."""
    cases = sum(r.n_cases or 0 for r in result.reports)
    source = (f"ceilings `{result.ceilings_path}`" if result.ceilings_sha256 is not None
              else "compared with the baseline (no ceilings file)")
    lines = [f"Taxonomy `{result.taxonomy}`, {plural(len(result.reports), 'report')} "
             f"({plural(cases, 'case')}), {source}.", ""]
    if result.significance is not None:
        lines += [f"{_cell(result.significance)}.", ""]
    if result.noise is not None:
        lines += [f"{_cell(result.noise.text)}; *catches* is the smallest regression (in "
                  "cases) an item catches with 80% probability.", ""]
    for report in result.reports:
        if report.instrument_changes:
            shown = ", ".join(f"`{_cell(text)}`" for text in report.instrument_changes)
            lines += [f"**Measured differently** from the baseline ({_cell(report.name)}): "
                      f"{shown}", ""]
        if report.config_changes:
            shown = ", ".join(f"`{_cell(change.text)}`" for change in report.config_changes)
            lines += [f"**What changed** vs the baseline ({_cell(report.name)}): {shown}", ""]
    hints = [hint for row in result.rows if row.failing for hint in (
        row.baseline.hint if row.baseline is not None else None,
        row.metric_baseline.hint if row.metric_baseline is not None else None) if hint]
    if hints:
        lines += [*(f"- 💡 {_cell(hint)}" for hint in dict.fromkeys(hints)), ""]
    errors = [f"- ⚠️ `{_cell(error)}`" for error in result.load_errors]
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
    failing = [row for row in rows if row.failing]
    passing = [row for row in rows if not row.failing]
    lines = []
    if failing:
        lines += [*head, *(_row_line(row, with_baseline, noisy) for row in failing), ""]
    if passing:
        lines += [f"<details><summary>{plural(len(passing), 'passing check')}</summary>", "",
                  *head, *(_row_line(row, with_baseline, noisy) for row in passing),
                  "", "</details>", ""]
    return lines


def _first_cases(result: GateResult) -> list[str]:
    """Each failing check's first cases (its new ones against a baseline), folded."""
    lines = []
    for row in result.rows:
        ids = row.baseline.new if row.baseline is not None else row.first_cases
        if not row.failing or not ids:
            continue
        what = "new cases" if row.baseline is not None else "first cases"
        lines += [f"<details><summary>{_cell(row.report)} · <code>{row.name}</code>: "
                  f"{what} ({len(ids)})</summary>", "",
                  ", ".join(f"`{_cell(i)}`" for i in ids), "", "</details>", ""]
    return lines


def guard_markdown(guard: GuardResultModel) -> list[str]:
    """The guard's verdict and its loosenings, one bullet each (the pytest item, the CLI's
    CI runner and the Action show the same lines)."""
    mark = "✅" if guard.passed else "❌"
    lines = [f"{mark} " + guard.lines[0], ""]
    lines += [f"- `{_cell(line.strip())}`" for line in guard.lines[1:]
              if line.startswith("  ") and not line.startswith("  to accept")]
    if len(guard.lines) > 1:
        lines.append("")
    return lines
