"""What one gate run checks: its configuration, and each report's checks before wording.

The lowest layer of a gate run's data: the run itself (``run.GateRun``), the wording of
its messages (``messages``) and the steps that settle its checks (``family``,
``noisy``) read these types, and ``runner`` builds them, so none of them imports another.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal

from ..base.advice import Advice
from ..base.classes import dataclass

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from ..base.errors import FailgateError
    from ..base.result import JudgeAgreement
    from ..ceilings.check import Check
    from ..ceilings.load import ContractCheck
    from ..ceilings.metrics import MetricCheck
    from ..compare.instrument import InstrumentChange
    from ..reports.model import Report, ReportFile
    from .inconclusive import Inconclusive

Mode = Literal["gate", "strict", "ratchet", "init"]


@dataclass(frozen=True)
class GateConfig:
    """What to gate: report paths, the ceilings file, and how strictly."""

    paths: tuple[Path, ...]
    ceilings_path: Path
    mode: Mode = "gate"
    # a taxonomy name or file: init writes it for every report; the gate of an existing
    # ceilings file checks it is the file's; None: each format's own default
    init_taxonomy: str | None = None
    guard_ref: str | None = None  # compare the ceilings file with this git ref
    explain: bool = False  # try every rule on every failed case (--failgate-explain)
    baseline: tuple[Path, ...] = ()  # compare, case by case, with this run's reports
    noise: Path | None = None  # a noise_band.json measured from repeated runs
    noise_repeats: bool = False  # the noise of each report's own repeated cases (epochs)
    exclude_unstable: bool = False  # leave the noise band's unstable cases out of the tests
    analyze: bool = False  # add the single-run diagnosis (stages, slices, priorities)
    max_report_bytes: str | None = None  # refuse larger report files ("200MB"; untrusted input)
    engine: str = "python"  # where cases are classified: python, duckdb or spark
    # a second, independent run of the same system: what confirms a noisy ratchet's drop
    confirm: tuple[Path, ...] = ()
    # the system before the change re-run on this run's day: a paired confirmation
    confirm_baseline: tuple[Path, ...] = ()
    labels: Path | None = None  # gold labels of a random sample: gate the corrected counts
    # how close a paired run must be (hours, or "day"; None: compare.window's default), and
    # the reason a baseline outside it is accepted (None: such a report is inconclusive)
    baseline_window: str | None = None
    accept_baseline_gap: str | None = None
    advice: Advice = field(default_factory=Advice)  # the front end's words for init, ratchet
    # the option table (``options.OPTIONS``): what the guard compares of every setting
    guard_options: tuple[Any, ...] = ()
    # init writes over an existing ceilings file (``failgate init --force``: an exact file
    # moving onto a noise band); what it raises, the guard names as loosenings
    replace_existing: bool = False
    # init writes this taxonomy inline (a mapping of the taxonomy file format), classifying
    # by it: the categories of a project's own metrics (``commands.gating.init``)
    inline_taxonomy: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class ContractResult:
    """A contract evaluated on one report: holds, fails, or cannot be checked (None)."""

    report: Report
    contract: ContractCheck
    holds: bool | None
    problem: str = ""
    values: dict[str, Any] = field(default_factory=dict)


@dataclass
class ReportGate:
    """One report's outcome: loaded with its checks, or the error that stopped it."""

    file: ReportFile
    report: Report | None = None
    error: FailgateError | None = None
    checks: list[Check] = field(default_factory=list)
    differences: list[str] | None = None  # consistency; None when nothing to cross-check
    contracts: list[ContractResult] = field(default_factory=list)
    metrics: list[MetricCheck] = field(default_factory=list)
    inconclusive: Inconclusive | None = None  # why it cannot be judged (None: it can)
    instrument: list[InstrumentChange] = field(default_factory=list)  # vs the baseline's
    agreement: JudgeAgreement | None = None  # the judge against its gold labels, if any

