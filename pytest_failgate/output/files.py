"""The gate's reports for people: Markdown (a PR comment), JSON, HTML, history, GitHub.

Written by the process that prints the summary (a plain pytest run, the xdist
controller, or the CLI), from the same result, so every adapter writes the same files.
"""

from __future__ import annotations

from dataclasses import field
from importlib import import_module
from typing import TYPE_CHECKING

from ..core.base.classes import dataclass
from ..core.base.errors import display_path
from . import github

if TYPE_CHECKING:
    from pathlib import Path

    from ..core.base.result import GateResult
    from ..core.taxonomy import Taxonomy
    from .chart import HistoryPoint


@dataclass
class Written:
    """What writing the reports did: a line per file (or why not), and whether one failed."""

    lines: list[str]
    failed: bool = False
    # failgate's own workflow commands (``--github``), printed as they are; every other
    # line goes through ``github.inert``
    commands: list[str] = field(default_factory=list)


# The reports rendered from the result alone, each the file of the option of its name
# (``options.py``): the module under ``output`` and its function from a ``GateResult`` to
# the file's text. A new such report is its option's row, its renderer and a row here.
RENDERED: dict[str, tuple[str, str]] = {
    "junit": ("junit", "render_junit"),  # JUnit XML of the gate's items (``check --junit``)
}


@dataclass(frozen=True)
class Outputs:
    """Which reports to write at the end of a run."""

    markdown: Path | None = None
    json: Path | None = None
    html: Path | None = None
    history: Path | None = None  # a folder of past runs to chart
    github: bool = False
    rendered: tuple[tuple[str, Path], ...] = ()  # (a ``RENDERED`` name, its file), each asked


def write_outputs(outputs: Outputs, result: GateResult, taxonomy: Taxonomy | None,
                  ceilings: dict[str, int]) -> Written:
    """Write what ``outputs`` asks for; a file that cannot be written fails the run. Each
    renderer is imported only when its output is asked for."""
    notes = Written([])
    points: list[HistoryPoint] | None = None
    svg = None
    if outputs.history is not None and taxonomy is not None:
        from .history import history_svg, load_history

        points = load_history(outputs.history, taxonomy)
        svg = history_svg(points, taxonomy.category_names, ceilings)
    table = None
    chart = None
    if points is not None and taxonomy is not None:
        from .history import history_table

        table = history_table(points, taxonomy.category_names, ceilings)
        if outputs.markdown is not None and svg is not None:
            chart_path = outputs.markdown.with_suffix(".history.svg")
            _write(notes, chart_path, svg)
            chart = chart_path.name
    markdown = None
    if outputs.markdown is not None or outputs.github:
        from .markdown import render_markdown

        markdown = render_markdown(result, table, chart)
    if outputs.markdown is not None and markdown is not None:
        _write(notes, outputs.markdown, markdown)
    if outputs.json is not None:
        _write(notes, outputs.json, result.model_dump_json(indent=2) + "\n")
    if outputs.html is not None:
        from .html import render_html

        _write(notes, outputs.html, render_html(result, svg))
    for name, path in outputs.rendered:
        module, function = RENDERED[name]
        render = getattr(import_module(f"{__package__}.{module}"), function)
        _write(notes, path, render(result))
    if outputs.github and markdown is not None:
        notes.commands += github.error_annotations(result)
        if github.append_step_summary(markdown) is None:
            notes.lines.append("github: $GITHUB_STEP_SUMMARY is not set; annotations only")
    return notes


def _write(notes: Written, path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        notes.lines.append(f"could not write {display_path(path)}: {exc.strerror}")
        notes.failed = True
    else:
        notes.lines.append(f"wrote {display_path(path)}")
