"""The hooks of an active gate: collection, outcomes, summary, and the session-end rewrite.

The gate runs once per session. A plain run runs it when it collects. Under
pytest-xdist the controller runs it as it sets up its workers and hands each one the
serialised result (or the error) in its ``workerinput``, as pytest-mypy hands over
its results; the workers only build items from it. Only the process that prints the
summary writes the ceilings file: the plain run, or the controller, which has the
result and receives the items' outcomes from their reports, so a ratchet never
depends on which worker ran what.
"""

from __future__ import annotations

import pickle
import re
import time
from typing import TYPE_CHECKING, Any, cast

import pytest

from ..core.base.errors import FailgateError, display_path
from ..core.base.items import ROW_KEYS
from .exitstatus import demand, hold
from .items import MARKER, GateFile, is_gate_item
from .outcomes import OutcomeCheck
from .selection import DRY_RUNS, Selection
from .selection import SELECTION_KEY as _SELECTION_KEY

if TYPE_CHECKING:
    from collections.abc import Generator, Iterator
    from pathlib import Path

    from ..commands.config import Config
    from ..core.base.result import GateResult
    from ..core.gate.runner import Mode

# The item property that marks a report as an earlier run's (``tools``): never written from.
_EARLIER_KEY = "failgate_earlier_run"
# The keys of the controller's result (or error) in a worker's ``workerinput``.
_RESULT_KEY, _ERROR_KEY = "failgate_result", "failgate_error"


class GateSession:
    """The gate of one pytest session."""

    NAME = "failgate-session"

    def __init__(self, config: pytest.Config, settings: Config, mode: Mode) -> None:
        from ..commands.app import Failgate
        from ..commands.plugins import pytest_hook_plugins

        self.settings = settings
        self.gate_config = settings.gate(mode)
        self.pytest_config = config
        # failgate's plugins: those of every front end, then the conftest.py files and
        # pytest plugins that define a failgate hook (read when the gate runs)
        self.app = Failgate(settings, lambda: pytest_hook_plugins(
            config.pluginmanager.list_name_plugin()))
        self._error: FailgateError | None = None
        self.result: GateResult | None = None
        self.file_collected = False  # pytest collected the ceilings file itself
        self._selection = Selection()
        self._ran_lines: list[str] = []  # whether the gate ran, when it is worth saying
        self._outcomes: dict[tuple[str, str, str], str] = {}
        self._reported = OutcomeCheck()  # the gate items' outcomes as reported
        self._rewritten: list[str] = []  # gate outcomes another hook rewrote
        self._notes: list[str] = []
        self._commands: list[str] = []  # failgate's own annotations (--failgate-github)
        self._payload: dict[str, str | bytes] | None = None  # what the xdist controller hands on
        self._started = time.time()  # to date the reports read against (``tools``)
        self._earlier: dict[str, str] = {}  # an earlier run's report -> its first item
        self.session: pytest.Session | None = None  # the session held (``exitstatus``)

    # -- the gate itself -------------------------------------------------------

    def run(self) -> GateResult:
        """The gate's result, computed once per session; its error is raised each time.

        An xdist worker takes the controller's; any other process runs the gate.
        """
        if self._error is not None:
            raise self._error
        if self.result is None:
            workerinput = getattr(self.pytest_config, "workerinput", {})
            if _ERROR_KEY in workerinput:  # the controller's own error, whole (its place too)
                self._error = pickle.loads(workerinput[_ERROR_KEY])
                raise self._error
            if _RESULT_KEY in workerinput:
                self.result = from_controller(workerinput[_RESULT_KEY])
                return self.result
            try:  # here: an xdist worker never runs the gate
                self.result = self.app.gate(self.gate_config.mode).result()
            except FailgateError as exc:
                self._error = exc
                raise
        return self.result

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist controller: run the gate once, before any worker collects, and give
        every worker the serialised result, or the error every worker then reports."""
        if self._payload is None:
            try:
                self._payload = {_RESULT_KEY: for_workers(self.run())}
            except FailgateError as exc:
                self._payload = {_ERROR_KEY: pickle.dumps(exc)}
        node.workerinput.update(self._payload)

    # -- collection ---------------------------------------------------------------

    @pytest.hookimpl
    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> GateFile | None:
        """The ceilings file where pytest walks past it or is pointed at it.

        pytest also builds nodes for files it then drops (a rootdir walk under
        ``testpaths``), so being asked here proves nothing: the file records that it
        was kept when pytest collects it (``GateFile.collect``).
        """
        if file_path != self.gate_config.ceilings_path:
            return None
        return GateFile.from_parent(parent, path=file_path)

    @pytest.hookimpl(tryfirst=True)
    def pytest_make_collect_report(
        self, collector: pytest.Collector
    ) -> pytest.CollectReport | None:
        """Collect the ceilings file whatever other plugins would skip: ``--lf`` skips every
        file without a last failure (before its items can be counted, or said to be left
        out), which would drop the gate unseen. Its items are then selected like any others."""
        if not isinstance(collector, GateFile):
            return None
        gate_file = collector

        def children() -> list[pytest.Item | pytest.Collector]:
            return list(gate_file.collect())

        call = pytest.CallInfo.from_call(children, "collect",
                                         reraise=(KeyboardInterrupt, SystemExit))
        if call.excinfo is None:
            return pytest.CollectReport(collector.nodeid, "passed", None, call.result)
        return pytest.CollectReport(collector.nodeid, "failed",
                                    collector.repr_failure(call.excinfo), [])

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        """Add the gate when pytest did not collect the ceilings file (``testpaths``, test
        paths given), and put its items first, so ``-x`` or ``--maxfail`` cannot stop a
        run before the gate ran.

        Running first means ``-k``, ``-m``, ``--deselect`` and ``--lf`` then filter
        the gate items like any others; ``pytest_collection_finish`` sees what they left.
        """
        if not self.file_collected:
            self.file_collected = True
            gate_file = GateFile.from_parent(session, path=self.gate_config.ceilings_path)
            items.extend(session.genitems(gate_file))
        gate = [item for item in items if is_gate_item(item)]
        items[:] = [*gate, *(item for item in items if not is_gate_item(item))]
        self._selection.collected = len(gate)

    @pytest.hookimpl
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._selection.selected = sum(1 for item in session.items if is_gate_item(item))
        workeroutput = getattr(self.pytest_config, "workeroutput", None)
        if workeroutput is not None:  # the controller learns it when the worker is done
            workeroutput[_SELECTION_KEY] = self._selection.as_pair()

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """xdist controller: what a worker collected and kept of the gate (all alike)."""
        pair = getattr(node, "workeroutput", {}).get(_SELECTION_KEY)
        if pair is not None:
            self._selection.collected, self._selection.selected = pair

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> None:
        """A gate item of a report that this session's own tests would write only after it
        (DeepEval's) fails with the step to take, instead of gating an earlier run."""
        if not is_gate_item(item):
            return
        from .tools import deepeval_tests, earlier_run, report_of

        report = report_of(item)
        problem = (earlier_run(report, deepeval_tests(item.session), self._started,
                               display_path(self.gate_config.ceilings_path))
                   if report is not None else None)
        if report is None or problem is None:
            return
        item.user_properties.append((_EARLIER_KEY, report.path))  # no init, no ratchet
        first = self._earlier.setdefault(report.path, item.nodeid)
        if first != item.nodeid:
            problem = f"{report.path}: not gated, an earlier run's (see {first})"
        raise FailgateError(problem)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """A gate item skipped (not judged, or recorded by init) is reported where its
        ceiling is, as pytest reports a test skipped by a mark, not at the line of
        failgate's source that skipped it."""
        report = yield
        if report.skipped and is_gate_item(item) and isinstance(report.longrepr, tuple):
            path, line, _ = item.reportinfo()
            # a row without a place in the file (init's) has no line: pytest's summary
            # then prints the file alone (its longrepr type says int, its terminal reads None)
            place = (str(path), None if line is None else line + 1, report.longrepr[2])
            report.longrepr = cast("tuple[str, int, str]", place)
        return report

    # -- outcomes (recorded wherever reports arrive: a plain run or the controller) --

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session
        hold(session)  # the gate's exit status, once decided, no later hook can lower

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Record each gate item's outcome as it arrived, then give a failed gate item
        its failure back before the terminal counts it (``OutcomeCheck.restore``): the
        tallies, the exit status and the gate's verdict agree."""
        self._reported.record(report)
        if self.result is not None and not hasattr(self.pytest_config, "workerinput"):
            self._reported.restore(report, self.result)  # where the terminal counts
        self._outcome(report)

    @pytest.hookimpl(trylast=True, specname="pytest_runtest_logreport")
    def pytest_runtest_logreport_last(self, report: pytest.TestReport) -> None:
        """The same report once every other hook has seen it: an edit made after
        ``restore`` is a rewrite too (the terminal's tallies are mended at the end)."""
        self._reported.record(report)

    def _outcome(self, report: pytest.TestReport) -> None:
        if MARKER in report.keywords and (report.when == "call" or report.outcome != "passed"):
            self._selection.ran.add(report.nodeid)
        for name, value in report.user_properties:
            if name == _EARLIER_KEY:
                self._earlier.setdefault(str(value), report.nodeid)
        key = _gate_key(report.user_properties)
        if key is None:
            return
        if report.when == "call" or report.outcome != "passed":
            previous = self._outcomes.get(key)
            if previous != "failed":
                self._outcomes[key] = report.outcome

    # -- the end: rewrite, then summary ---------------------------------------------

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(self.pytest_config, "workerinput"):
            return
        # a gate that could not run is one gate item (``items.NotRunItem``), selected alike
        option = self.pytest_config.option
        dry = next((names for dest, names in DRY_RUNS.items()
                    if getattr(option, dest, False)), ())
        problem, note = self._selection.verdict(
            self.pytest_config.invocation_params.args, dry)
        self._ran_lines = [line for line in (note, problem) if line]
        if problem:
            _fail(session, also=pytest.ExitCode.NO_TESTS_COLLECTED)
        if self._error is not None and (self._selection.ran or problem):
            # The gate could not run (its one item ran, or no gate item ran): exit 2, as
            # every front end exits for a gate it could not run (an input error), with
            # xdist and without; from the gate's own record, whatever a hook assigned.
            demand(session, pytest.ExitCode.INTERRUPTED)
        if self.result is None:
            return
        if self._reported.ran_failed(self.result):
            demand(session, pytest.ExitCode.TESTS_FAILED)  # the gate's own verdict
        self._rewritten = self._reported.problems(self.result, self.pytest_config)
        if self._rewritten:
            _fail(session)
            self._reported.recount(self.result, self.pytest_config)
        from ..commands.gating import lower, next_steps, record_split

        try:
            if self._rewritten and self.gate_config.mode in ("ratchet", "init"):
                self._notes.append(f"{self.gate_config.mode}: {self.result.ceilings_path} not "
                                   "written: the gate's outcomes were rewritten (above)")
            elif self._earlier and self.gate_config.mode in ("ratchet", "init"):
                self._notes.append(
                    f"{self.gate_config.mode}: {self.result.ceilings_path} not written: "
                    f"{', '.join(self._earlier)} is an earlier run's (see the failing items)")
                _fail(session)
            elif self.gate_config.mode == "ratchet":
                self._notes.extend(lower(self.app, self.result, self._outcomes).lines)
            elif self.gate_config.mode == "init":
                # each of the project's own metrics a category, as ``failgate init``
                # writes them (the gate this session ran, classified again)
                recorded = record_split(self.app, self.app.gate("init"))
                self._notes.extend(recorded.lines)
                self._notes.extend(next_steps(self.app, self.result) if recorded.written
                                   else [])
                if not _required(self.pytest_config.getini("required_plugins")):
                    self._notes.append(
                        "init: so that `-p no:failgate` or PYTEST_DISABLE_PLUGIN_AUTOLOAD "
                        "cannot switch the gate off unseen, add `required_plugins = "
                        "pytest-failgate` to the pytest configuration")
        except OSError as exc:
            self._notes.append(f"{self.gate_config.mode}: could not write "
                               f"{self.result.ceilings_path}: {exc.strerror}")
            _fail(session)
        except FailgateError as exc:
            self._notes.append(f"{self.gate_config.mode}: {exc}")
            _fail(session)
        if self._write_outputs(self.result):
            _fail(session)

    def _write_outputs(self, result: GateResult) -> bool:
        """Write the requested reports; True when one could not be written."""
        from ..commands.gating import write_reports

        try:
            written = write_reports(self.app, result)
        except FailgateError as exc:  # the history folder
            self._notes.append(f"history: {exc}")
            return False
        self._notes.extend(written.lines)
        self._commands.extend(written.commands)
        return written.failed

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        from ..output.github import inert

        if self.result is None:  # the gate never ran: only whether it should have
            if self._ran_lines:
                terminalreporter.section("failgate")
                for line in self._ran_lines:
                    terminalreporter.write_line(inert(line))
            return
        from ..output.text import summary_lines

        terminalreporter.section("failgate")
        for line in [*summary_lines(self.result, self._outcomes),
                     *self._closing_lines(self.result)]:
            terminalreporter.write_line(inert(line))  # report content is never a command
        for command in self._commands:
            terminalreporter.write_line(command)

    def _closing_lines(self, result: GateResult) -> Iterator[str]:
        from ..output.text import ratchet_status

        yield ""
        yield from self._rewritten
        yield from self._status_lines()
        yield from self._ran_lines
        if self._notes:
            yield from self._notes
            return
        status = ratchet_status(result)
        if status is not None:
            yield status


    def _status_lines(self) -> Iterator[str]:
        """A line when a hook set a passing exit status after the gate failed: the gate's
        status stands (``exitstatus``), and the hooks that can set one are named."""
        from .exitstatus import floor_of, overridden
        from .outcomes import EXIT_HOOKS, rewriters

        if not overridden(self.session):
            return
        hooks = rewriters(self.pytest_config, EXIT_HOOKS)
        by = f" by {', '.join(hooks)}" if hooks else ""
        yield (f"failgate: the gate failed, but the exit status was set to 0{by}; the gate's "
               f"exit status ({floor_of(self.session)}) stands")


def for_workers(result: GateResult) -> bytes:
    """The result as the xdist controller hands it to its workers: what the items need
    (without the report texts, explanations and example cases only the summary shows),
    pickled. A worker runs the controller's own install, started by it through execnet
    (which runs the controller's code in it), so it reads the classes back as they are:
    no JSON schema is built, and pydantic is imported by neither process."""
    slim = result.model_copy(update={"init_text": None, "reports": [
        report.model_copy(update={"explain": [], "warnings": [], "rows": [
            row.model_copy(update={"examples": [], "first_cases": []})
            for row in report.rows]})
        for report in result.reports]})
    return pickle.dumps(slim)


def from_controller(payload: bytes) -> GateResult:
    """A worker's copy of the controller's result (``for_workers``)."""
    result: GateResult = pickle.loads(payload)  # the controller's own data: see for_workers
    return result


def _fail(session: pytest.Session, also: pytest.ExitCode = pytest.ExitCode.OK) -> None:
    """The run must not pass (a file failgate had to write was not written, the gate
    did not run): a passing exit status (or ``also``) becomes "tests failed", and stays
    so whatever a later hook assigns (``exitstatus.demand``)."""
    demand(session, pytest.ExitCode.TESTS_FAILED)
    if session.exitstatus in (pytest.ExitCode.OK, also):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _required(specs: list[str]) -> bool:
    """Whether ``required_plugins`` names failgate (``pytest-failgate>=0.2`` too)."""
    return any(re.split(r"[<>=!~\s]", spec, maxsplit=1)[0] == "pytest-failgate"
               for spec in specs)


def _gate_key(properties: list[tuple[str, object]]) -> tuple[str, str, str] | None:
    found = dict(properties)
    key = tuple(found.get(name) for name in ROW_KEYS)
    if all(isinstance(part, str) for part in key):
        return key  # type: ignore[return-value]
    return None

