"""The commands that run the gate: ``check``, ``init``, ``ratchet``, ``show``; and the reports.

Each takes the run's ``Config`` and returns a result model; none prints. The CLI and the
MCP server call them; the pytest plugin runs the same gate through ``Failgate.gate`` and
writes the same reports with :func:`write_reports`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..core.base.errors import display_path
from .app import Failgate

if TYPE_CHECKING:
    from ..core.base.result import GateResult, Row
    from ..core.ceilings.writeback import Outcomes
    from ..core.gate.runner import Gate
    from ..output.files import Written
    from .config import Config
    from .results import InitResult, RatchetResult, ShowResult

SHOWN_IDS = 3  # case ids listed per category by ``show``, in every front end


def check(config: Config | Failgate) -> GateResult:
    """Every count against its ceiling (strict when the config says so), with its verdict."""
    app = Failgate.of(config)
    return app.gate("strict" if app.config.strict else "gate").result()


def init(config: Config | Failgate, force: bool = False,
         reason: str | None = None) -> InitResult:
    """Write a new ceilings file from the current counts; over an existing one only with
    ``force`` (an exact file moving onto a noise band), classified by that file's
    taxonomy (a name, a file or inline: the gate keeps it) unless a taxonomy is given."""
    app = Failgate.of(config)
    return record_split(app, app.gate("init", replace_existing=force), force, reason)


def record_split(app: Failgate, gate: Gate, force: bool = False,
                 reason: str | None = None) -> InitResult:
    """Write the ceilings file from an init run, each of the project's own metrics a
    category (:func:`own_metrics`) unless a taxonomy was chosen (the setting, or the file's
    own under ``force``): ``failgate init``'s and pytest's ``--failgate-init``'s, alike."""
    keeps = force and app.config.ceilings.exists()  # the file's own taxonomy, as it is
    own = own_metrics(gate) if app.config.taxonomy is None and not keeps else None
    if own is None:
        return record(app, gate.result(), force, reason)
    mapping, said = own  # classified again, each of the project's own metrics a category
    app = Failgate(app.config, app.pytest_plugins)
    done = record(app, app.gate("init", force, mapping).result(), force, reason)
    return replace(done, lines=[*done.lines, said]) if done.written else done


def own_metrics(gate: Gate) -> tuple[dict[str, Any], str] | None:
    """The run's taxonomy extended with a category per name of the project's own metrics
    (the values of a ``split_by`` field among the cases of that category: DeepEval's
    ``failed_metric`` in ``other_metric``), and init's words for it; None when there are
    none. Users read ``Keyword: 2, Length: 1``, not ``other_metric: 3``; a metric added
    later falls in the category it was split from, whose ceiling is then 0: the gate."""
    import json
    import re

    taxonomy = gate.taxonomy
    names: dict[str, tuple[str, str | None]] = {}  # metric name -> (field, group)
    for report_gate in gate.reports:
        report = report_gate.report
        if report is None or report.taxonomy is not taxonomy or report.tally is None:
            continue
        for rule in taxonomy.categories:
            if rule.split_by is None or not report.counts.get(rule.name):
                continue
            for _, case in report.tally.examples.get(rule.name, []):
                value = case.get(rule.split_by)
                if isinstance(value, str) and value:
                    names.setdefault(value, (rule.split_by, rule.group))
    if not names:
        return None
    taken = set(taxonomy.category_names)
    categories = []
    for metric, (field, group) in names.items():
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", metric).strip("_") or "metric"
        slug = slug if slug[0].isalpha() or slug[0] == "_" else f"m_{slug}"
        while slug in taken:
            slug += "_metric"
        taken.add(slug)
        categories.append({"name": slug, "when": f"{field} == {json.dumps(metric)}",
                           "description": f"{metric} failed", **({"group": group} if group
                                                                  else {})})
    mapping = {"name": f"{taxonomy.name}-own", "extends": taxonomy.name,
               "categories": categories}
    listed = ", ".join(c["name"] for c in categories)
    said = (f"init: a category per metric of your own, by its name ({listed}), written inline "
            f"as taxonomy {mapping['name']} (extends: {taxonomy.name}); a metric added later "
            "counts where they were, at ceiling 0, until you give it its own")
    return mapping, said


def record(app: Failgate, result: GateResult, replace: bool = False,
           reason: str | None = None) -> InitResult:
    """Write the ceilings file from a gate run in init mode: ``init``'s, or pytest's
    ``--failgate-init`` session's, when it ends."""
    from ..core.ceilings import writeback
    from .results import InitResult

    done = writeback.init(app.config.ceilings, result, replace, reason)
    return InitResult(result=result, lines=done.lines, written=done.written)


def next_steps(app: Failgate, result: GateResult) -> list[str]:
    """After an init given its reports on the command line: how to gate from then on, in
    the words of what the readers know of their tools (``Reader.run``) and of the project.

    A tool that writes its files after a pytest session of its own (``deepeval test run``)
    gets a gate step of its own after it: the ini key would gate every pytest run, the
    tool's own and the project's tests, against an earlier run's files. A project with no
    pytest configuration (a node project) gets the command line's step. Else the ini key
    ``failgate`` (a setting: ``-m "not failgate"`` leaves the gate out, and pytest without
    failgate loaded only warns of an unknown key, where ``--failgate=`` in ``addopts``
    stops it with "unrecognized arguments"). Each tool's note (an exit status that stops a
    CI job before the gate step) follows. Nothing when the ini key gave the reports."""
    from ..core.reports.builtin import builtin_readers, tool_run
    from ..options import PREFIX

    config = app.config
    if PREFIX not in config.given:
        return []
    words = next((words for option, words in config.given_words("init", quote=False)
                  if option.name == PREFIX), [])
    if not words:
        return []
    readers = {reader.name: reader for reader in (*builtin_readers(), *app.plugins.readers)}
    formats = dict.fromkeys(report.format for report in result.reports if report.format)
    runs = [run for name in formats if name in readers
            if (run := tool_run(readers[name])) is not None]
    paths = " ".join(words)
    check = f"`failgate check {paths}`"
    apart = next((run for run in runs if not run.same_session), None)
    if apart is not None:
        ceilings = display_path(config.ceilings)
        lines = [f"init: `{apart.command}` writes {paths} after its own pytest session ends, "
                 f"so the gate is a step of its own after it: {check} (or `pytest "
                 f"--failgate={paths} {ceilings}`, which runs the gate alone); not the ini "
                 f"key {PREFIX} or --failgate in addopts, which would gate every pytest run, "
                 "the tool's own included, against an earlier run's files"]
    elif config.inipath is None:
        lines = [f"init: this project has no pytest configuration: gate it with {check} as "
                 "a CI step after the evaluation (the GitHub Action runs it: docs/ci.md)"]
    else:
        listed = ", ".join(f'"{word}"' for word in words)
        lines = [f"init: to gate every pytest run, set the ini key `{PREFIX} = {paths}` "
                 f"under [pytest] (pyproject.toml: `{PREFIX} = [{listed}]` under "
                 "[tool.pytest.ini_options]) rather than --failgate in addopts; "
                 '`pytest -m "not failgate"` then runs the tests without the gate']
    return lines + [f"init: {run.note}" for run in runs if run.note]


def ratchet(config: Config | Failgate) -> RatchetResult:
    """Lower every ceiling whose count fell (every check ran); never raise one."""
    from ..core.ceilings import writeback

    app = Failgate.of(config)
    result = app.gate("ratchet").result()
    return lower(app, result, writeback.outcomes_from_verdicts(result))


def lower(app: Failgate, result: GateResult, outcomes: Outcomes) -> RatchetResult:
    """Lower the ceilings a gate run in ratchet mode plans to, of the items that passed
    (``outcomes``: every item for ``ratchet``; how each ended in pytest's session)."""
    from ..core.ceilings import writeback
    from .results import RatchetResult

    done = writeback.ratchet(app.config.ceilings, result, outcomes, app.config.rootdir)
    return RatchetResult(result=result, lines=done.lines, written=done.written)


def show(config: Config | Failgate, top: int = SHOWN_IDS) -> ShowResult:
    """Each report's count per category, with ceilings and headroom when the ceilings file
    exists (its gate runs, as ``check`` would run it) and the first ``top`` case ids."""
    from .results import ShownCategory, ShownReport, ShowResult

    app = Failgate.of(config)
    rows: dict[str, dict[str, Row]] = {}
    if app.uses_ceilings:
        gate = app.gate("gate")
        gated, skipped = gate.reports, gate.skipped
        rows = {r.name: {row.name: row for row in r.rows if row.slice is None}
                for r in gate.result().reports}
    else:
        gated, skipped = app.load(app.config.paths)
    reports = []
    for loaded in gated:
        if loaded.report is None:
            reports.append(ShownReport(name=loaded.file.name, error=str(loaded.error)))
            continue
        report = loaded.report
        categories = []
        for name in report.taxonomy.category_names:
            row = rows.get(report.name, {}).get(name)
            categories.append(ShownCategory(
                name=name, count=report.counts[name], first_cases=report.case_ids(name)[:top],
                ceiling=row.ceiling if row is not None else None,
                headroom=row.headroom if row is not None else None))
        reports.append(ShownReport(name=report.name, kind=report.kind, n_cases=report.n_cases,
                                   failed=report.failed, taxonomy=report.taxonomy.name,
                                   categories=categories))
    from ..core.base.errors import display_path

    return ShowResult(reports=reports, skipped=[display_path(s.path) for s in skipped],
                      gated=bool(rows))


def write_reports(app: Failgate, result: GateResult) -> Written:
    """The reports the config asks for (Markdown, JSON, HTML, history, GitHub), written from
    the result of the gate ``app`` ran. The history chart lists that gate's taxonomy's
    categories."""
    from ..output.files import write_outputs

    taxonomy = None
    if app.config.history is not None:
        assert app.built is not None, "the reports of a gate this Failgate ran"
        taxonomy = app.built.taxonomy
    return write_outputs(app.config.outputs, result, taxonomy, result.default_ceilings)

