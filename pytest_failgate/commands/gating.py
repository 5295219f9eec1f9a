"""The commands that run the gate: ``check``, ``init``, ``ratchet``, ``show``; and the reports.

Each takes the run's ``Config`` and returns a result model; none prints. The CLI and the
MCP server call them; the pytest plugin runs the same gate through ``Failgate.gate`` and
writes the same reports with :func:`write_reports`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .app import Failgate

if TYPE_CHECKING:
    from ..core.base.result import GateResult, Row
    from ..core.ceilings.writeback import Outcomes
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
    return record(app, app.gate("init", replace_existing=force).result(), force, reason)


def record(app: Failgate, result: GateResult, replace: bool = False,
           reason: str | None = None) -> InitResult:
    """Write the ceilings file from a gate run in init mode: ``init``'s, or pytest's
    ``--failgate-init`` session's, when it ends."""
    from ..core.ceilings import writeback
    from .results import InitResult

    done = writeback.init(app.config.ceilings, result, replace, reason)
    return InitResult(result=result, lines=done.lines, written=done.written)


def ini_key_note(config: Config) -> str | None:
    """After an init given its reports on the command line: the configuration that gates
    every pytest run from then on, as the ini key ``failgate`` (a setting: a run can leave
    the gate out on its command line with ``-m "not failgate"``, and pytest without
    failgate loaded only warns of an unknown key, where ``--failgate=`` in ``addopts``
    would stop it with "unrecognized arguments"). None when the ini key gave them."""
    from ..options import PREFIX

    if PREFIX not in config.given:
        return None
    words = next((words for option, words in config.given_words("init", quote=False)
                  if option.name == PREFIX), [])
    if not words:
        return None
    listed = ", ".join(f'"{word}"' for word in words)
    return (f"init: to gate every pytest run, set the ini key `{PREFIX} = {' '.join(words)}` "
            f"under [pytest] (pyproject.toml: `{PREFIX} = [{listed}]` under "
            "[tool.pytest.ini_options]) rather than --failgate in addopts; "
            '`pytest -m "not failgate"` then runs the tests without the gate')


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

