"""The hooks of an active gate: collection, outcomes, summary, and the session-end rewrite.

Every process that collects (a plain run, or each xdist worker) runs the core
gate once and builds items from its result. Only the process that prints the
summary writes the ceilings file: the plain run, or the xdist controller, which
receives the gate's result from a worker (``workeroutput``) and the items'
outcomes from their reports, so a ratchet never depends on which worker ran what.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from ..core.ceilings import writeback
from ..core.ceilings.load import load_ceilings
from ..core.errors import FailgateError
from ..core.gate import Gate, GateConfig, run_gate
from ..core.messages import ratchet_command
from ..core.result import GateResult
from ..output.files import Outputs, write_outputs
from ..output.text import ratchet_status, summary_lines
from .items import GateFile

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from ..core.reports.readers import ReportReader
    from ..core.taxonomy import Taxonomy

_WORKER_KEY = "failgate"


class GateSession:
    """The gate of one pytest session."""

    NAME = "failgate-session"

    def __init__(self, config: pytest.Config, gate_config: GateConfig,
                 outputs: Outputs | None = None) -> None:
        self.config = gate_config
        self.outputs = outputs or Outputs()
        self.pytest_config = config
        self._gate: Gate | None = None
        self._error: FailgateError | None = None
        self.result: GateResult | None = None
        self._file_collected = False
        self._outcomes: dict[tuple[str, str, str], str] = {}
        self._notes: list[str] = []

    # -- the gate itself -------------------------------------------------------

    def gate(self) -> Gate:
        """Run the core gate once per process; its error, if any, is raised each time."""
        if self._error is not None:
            raise self._error
        if self._gate is None:
            try:
                self._gate = run_gate(self.config, *self._contributions())
            except FailgateError as exc:
                self._error = exc
                self._send_to_controller(error=str(exc))
                raise
            self.result = self._gate.result()
            self._send_to_controller(result=self.result)
        return self._gate

    def _contributions(self) -> tuple[dict[str, Taxonomy], list[ReportReader]]:
        """Built-in taxonomies plus those plugins contribute; plugins' readers.

        The ``failgate`` entry points and ``failgate_plugins`` modules join the
        pytest plugins (once each), so the CLI, which loads the same modules, sees
        the same readers.
        """
        from ..plugins import INI_KEY, collect, plugin_modules

        config = self.pytest_config
        base = config.inipath.parent if config.inipath else config.rootpath
        manager = config.pluginmanager
        given = [str((config.invocation_params.dir / spec).resolve())
                 if spec.endswith(".py") else spec for spec in config.getoption(INI_KEY) or []]
        for module in plugin_modules([*config.getini(INI_KEY), *given], base):
            if not manager.is_registered(module):
                manager.register(module)
        found = collect(config.hook.pytest_failgate_taxonomies(config=config),
                        config.hook.pytest_failgate_readers(config=config))
        return found.taxonomies, found.readers

    def _send_to_controller(self, **payload: Any) -> None:
        workeroutput = getattr(self.pytest_config, "workeroutput", None)
        if workeroutput is not None:
            if "result" in payload:
                workeroutput[_WORKER_KEY] = payload["result"].model_dump_json()
            else:
                workeroutput[_WORKER_KEY + "_error"] = payload["error"]

    # -- collection ---------------------------------------------------------------

    @pytest.hookimpl
    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> GateFile | None:
        """Collect the ceilings file where pytest walks past it or is pointed at it."""
        if file_path != self.config.ceilings_path:
            return None
        self._file_collected = True
        return GateFile.from_parent(parent, path=file_path)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        """Add the gate when collection did not pass the ceilings file (the usual case).

        Running first means ``-k``, ``-m``, ``--deselect`` and ``--lf`` then filter
        the gate items like any others.
        """
        if self._file_collected:
            return
        self._file_collected = True
        gate_file = GateFile.from_parent(session, path=self.config.ceilings_path)
        items.extend(session.genitems(gate_file))

    # -- outcomes (recorded wherever reports arrive: a plain run or the controller) --

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        key = _gate_key(report.user_properties)
        if key is None:
            return
        if report.when == "call" or report.outcome != "passed":
            previous = self._outcomes.get(key)
            if previous != "failed":
                self._outcomes[key] = report.outcome

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """xdist controller: take the gate's result from the first worker that has one."""
        output = getattr(node, "workeroutput", {}) or {}
        if self.result is None and _WORKER_KEY in output:
            self.result = GateResult.model_validate_json(output[_WORKER_KEY])
        if self._error is None and _WORKER_KEY + "_error" in output:
            self._error = FailgateError(output[_WORKER_KEY + "_error"])

    # -- the end: rewrite, then summary ---------------------------------------------

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(self.pytest_config, "workerinput") or self.result is None:
            return
        try:
            if self.config.mode == "ratchet":
                self._notes.extend(
                    writeback.ratchet(self.config.ceilings_path, self.result, self._outcomes))
            elif self.config.mode == "init":
                self._notes.extend(writeback.init(self.config.ceilings_path, self.result))
        except OSError as exc:
            self._notes.append(f"{self.config.mode}: could not write "
                               f"{self.result.ceilings_path}: {exc.strerror}")
            _fail(session)
        except FailgateError as exc:
            self._notes.append(f"{self.config.mode}: {exc}")
            _fail(session)
        if self._write_outputs(self.result):
            _fail(session)

    def _write_outputs(self, result: GateResult) -> bool:
        """Write the requested reports; True when one could not be written."""
        try:
            taxonomy = self._taxonomy() if self.outputs.history is not None else None
            written = write_outputs(self.outputs, result, ratchet_command(self.config),
                                    taxonomy, result.default_ceilings)
        except FailgateError as exc:  # the history folder
            self._notes.append(f"history: {exc}")
            return False
        self._notes.extend(written.lines)
        return written.failed

    def _taxonomy(self) -> Taxonomy:
        """The gate's taxonomy, in the process that writes reports (an xdist controller too)."""
        if self._gate is not None:
            return self._gate.taxonomy
        taxonomies, _ = self._contributions()
        if self.config.mode == "init":
            name = self.result.taxonomy if self.result is not None else "rag"
            return taxonomies.get(name, taxonomies["rag"])
        return load_ceilings(self.config.ceilings_path, taxonomies).taxonomy

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.result is None:
            return
        terminalreporter.section("failgate")
        for line in summary_lines(self.result, self._outcomes):
            terminalreporter.write_line(line)
        for line in self._closing_lines(self.result):
            terminalreporter.write_line(line)

    def _closing_lines(self, result: GateResult) -> Iterator[str]:
        yield ""
        if self._notes:
            yield from self._notes
            return
        status = ratchet_status(result, ratchet_command(self.config))
        if status is not None:
            yield status


def _fail(session: pytest.Session) -> None:
    """A file failgate had to write was not written: the run must not pass."""
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _gate_key(properties: list[tuple[str, object]]) -> tuple[str, str, str] | None:
    found = dict(properties)
    key = found.get("failgate_report"), found.get("failgate_slice"), found.get("failgate_item")
    if all(isinstance(part, str) for part in key):
        return key  # type: ignore[return-value]
    return None

