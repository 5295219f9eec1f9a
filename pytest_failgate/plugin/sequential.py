"""``pytest --failgate-sequential=SEED``: an eval suite whose tests are its cases, run in a
random order fixed before the run and stopped as soon as the verdict is settled.

Each collected test (after ``-k``/``-m`` deselection) is one case of the run. The tests
are put in a uniformly random order drawn from the seed (the plan, fixed at collection,
before any case runs), and each finished test is fed to the sequential gate
(``commands.sequential.CaseGate``, ``core.gate.sequential``): a test that passed is a
passed case; one that failed (in setup, call or teardown) or was skipped (a case that did
not run is not a pass) is a failed case, in the category its ``failgate_category(name)``
marker names, else its ``failgate_category`` user property (``record_property``), else
the one the ceilings file's taxonomy gives the case made of its id, ``outcome`` and user
properties (its fallback when no rule matches). Once the verdict is settled the session
stops (``session.shouldstop``); the summary, the reports and the exit status are the
sequential run's one outcome (``core.gate.settled``): "settled after n of N planned
cases", the full run's verdict with probability at least 95%.

``--failgate-futility`` and ``--failgate-margin`` add the futility stop,
``--failgate-strata`` (``module``, or a marker's name) permutes the tests within each
stratum and gates each stratum's count, and ``--failgate-baseline`` (one JSON Lines report
of the baseline run's cases, by test id) compares each test with the same test in it
(paired mode), as ``watch`` does.
"""

from __future__ import annotations

import secrets
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pytest

from ..core.base.errors import FailgateError

if TYPE_CHECKING:
    from ..commands.config import Config
    from ..commands.sequential import CaseGate
    from ..core.base.result import GateResult
    from ..core.gate.plan import Plan

REPORT = "pytest"  # the run's name in the ceilings file (``reports: pytest:``)


def _seed(text: str) -> int:
    if text == "new":
        return secrets.randbits(32)
    try:
        return int(text)
    except ValueError:
        raise pytest.UsageError(
            f"--failgate-sequential takes a seed (an integer, or `new`), not {text!r}"
        ) from None


def _stratum(item: pytest.Item, strata: str) -> str:
    """A test's stratum: its file (``module``), else its ``strata`` marker's first argument."""
    if strata == "module":
        return item.nodeid.split("::", 1)[0]
    marker = item.get_closest_marker(strata)
    if marker is None or not marker.args or not isinstance(marker.args[0], (str, int)):
        raise FailgateError(
            f"{item.nodeid}: --failgate-strata={strata} needs each test's stratum: a "
            f"@pytest.mark.{strata}(NAME) marker (or --failgate-strata=module)")
    return str(marker.args[0])


class SequentialSession:
    """The plugin of one sequential run: the order, the gate, the stop, the outcome."""

    NAME = "failgate-sequential"

    def __init__(self, pytest_config: pytest.Config, config: Config, seed: str) -> None:
        from .advice import pytest_advice

        if getattr(pytest_config.option, "numprocesses", None):
            raise pytest.UsageError(
                "--failgate-sequential gates the tests in one planned order; run it without "
                "-n (xdist)")
        self.pytest_config = pytest_config
        self.settings = replace(config, advice=pytest_advice(config))
        self.seed = _seed(seed)
        self.feed: CaseGate | None = None
        self.plan: Plan | None = None
        self.result: GateResult | None = None
        self._categories: dict[str, str | None] = {}  # a test's marker category
        self._failed: dict[str, bool] = {}
        self.paid = 0  # planned tests run to their teardown (the sequential record's paid)
        self._notes: list[str] = []
        self._session: pytest.Session | None = None

    @pytest.hookimpl(trylast=True)  # after -k / -m deselection: the planned cases are these
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        from ..commands.app import Failgate
        from ..commands.sequential import CaseGate, futility_of, one_baseline

        if hasattr(config, "workerinput"):
            return
        if not items:
            raise pytest.UsageError("--failgate-sequential: no tests to gate")
        self._session = session
        try:
            plan = self._plan(items)
            app = Failgate(self.settings)
            self.feed = CaseGate(app, len(plan.ids), name=REPORT, plan=plan,
                                 futility=futility_of(self.settings, "--failgate-futility",
                                                      "--failgate-margin"),
                                 baseline=one_baseline(app))
        except FailgateError as exc:
            raise pytest.UsageError(f"failgate: {exc}") from None
        names = self.feed.sink.taxonomy.category_names
        for item in items:
            marker = item.get_closest_marker("failgate_category")
            named = None if marker is None or not marker.args else str(marker.args[0])
            if named is not None and named not in names:
                raise pytest.UsageError(
                    f"{item.nodeid}: failgate_category({named!r}) is not a category of the "
                    f"taxonomy {self.feed.sink.taxonomy.name} ({', '.join(names)})")
            self._categories[item.nodeid] = named

    def _plan(self, items: list[pytest.Item]) -> Plan:
        """The tests in the random order the seed draws over their ids (``items`` reordered
        to it, ``core.gate.plan``): one shuffle, or with ``--failgate-strata`` a shuffle
        within each stratum, interleaved."""
        from ..core.gate.plan import draw

        strata = self.settings.strata
        of = None if strata is None else {item.nodeid: _stratum(item, strata) for item in items}
        plan = draw([item.nodeid for item in items], self.seed, "pytest", of, strata)
        by_id = {item.nodeid: item for item in items}
        items[:] = [by_id[nodeid] for nodeid in plan.ids]
        self.plan = plan
        return plan

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """The plan is evidence: the tests must run in the order its seed draws. Another
        plugin that reorders them after the plan was drawn (a random-order plugin, a hook
        wrapper) would run an order the seed does not vouch for: refused, naming the first
        test out of place."""
        from ..core.gate.plan import verify

        if self.plan is None or hasattr(session.config, "workerinput"):
            return
        try:
            verify(self.plan)
        except FailgateError as exc:  # pragma: no cover - a plan drawn here is the seed's
            raise pytest.UsageError(f"failgate: {exc}") from None
        ran = [item.nodeid for item in session.items]
        if ran != list(self.plan.ids):
            place = next((i for i, (one, other) in enumerate(zip(ran, self.plan.ids, strict=False))
                          if one != other), min(len(ran), len(self.plan.ids)))
            shown = ran[place] if place < len(ran) else "no test"
            wanted = self.plan.ids[place] if place < len(self.plan.ids) else "no test"
            raise pytest.UsageError(
                f"failgate: --failgate-sequential: the tests do not run in the order seed "
                f"{self.seed} draws: test {place + 1} is {shown!r} where the seed draws "
                f"{wanted!r} (another plugin reordered or deselected them after the plan was "
                "drawn; run without it, e.g. -p no:randomly)")

    def pytest_report_header(self, config: pytest.Config) -> str:
        within = ("" if self.settings.strata is None
                  else f" within each stratum of {self.settings.strata}")
        return (f"failgate: sequential, the tests in a random order{within} drawn from seed "
                f"{self.seed} (--failgate-sequential={self.seed} repeats it)")

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.feed is None or report.nodeid not in self._categories:
            return
        if report.when == "teardown":
            self.paid += 1  # a planned test run, settled on or not: what the run paid for
        if self.feed.settled is not None:
            return
        nodeid = report.nodeid
        if report.outcome != "passed":
            self._failed[nodeid] = True
        if report.when != "teardown":
            return
        category = self._category(report) if self._failed.get(nodeid) else None
        try:
            settled = self.feed.finish(nodeid, category)
        except FailgateError as exc:
            raise pytest.UsageError(f"failgate: {exc}") from None
        if settled is not None and self._session is not None:
            self._session.shouldstop = f"failgate: {settled.line()}"  # after this test

    def _category(self, report: pytest.TestReport) -> str:
        """A failed test's category: its marker, its property, else the taxonomy's."""
        assert self.feed is not None
        named = self._categories.get(report.nodeid)
        properties = dict(report.user_properties)
        if named is None and isinstance(properties.get("failgate_category"), str):
            named = str(properties["failgate_category"])
        taxonomy = self.feed.sink.taxonomy
        if named is not None:
            return named
        from ..core.taxonomy.tally import classify

        case: dict[str, Any] = {"id": report.nodeid, **properties, "outcome": "failed"}
        found = classify(taxonomy, case)
        return found if found is not None else taxonomy.fallback

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.feed is None:
            return
        from ..commands.app import Failgate
        from ..commands.gating import write_reports

        self.result = self.feed.result(self.paid)
        written = write_reports(Failgate(self.settings), self.result)
        self._notes = [line for line in written.lines if not line.startswith("wrote ")]
        verdict = self.result.verdict
        session.exitstatus = (pytest.ExitCode.OK if verdict == "pass" and not written.failed
                              else pytest.ExitCode.TESTS_FAILED)

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.result is None:
            return
        from ..core.ceilings.writeback import outcomes_from_verdicts
        from ..output.github import inert
        from ..output.text import summary_lines

        terminalreporter.section("failgate sequential")
        outcomes = outcomes_from_verdicts(self.result)
        for line in [*summary_lines(self.result, outcomes), *self._notes]:
            terminalreporter.write_line(inert(line))

