"""The outcome of a gate run as plain, serialisable data.

Both adapters work from this one model: the pytest plugin builds items from it,
prints its summary from it (on the xdist controller, from the copy a worker
sends back) and rewrites the ceilings file from its plan; the CLI prints it.
That is how the two give identical numbers.
"""

from __future__ import annotations

import math
from dataclasses import field, fields
from typing import Any, Literal

from .analysis import ReportAnalysis  # noqa: TC001 (pydantic reads GateResult's annotations)
from .classes import dataclass
from .formatting import one_line, plural
from .records import Record, described
from .verdict import FAILING, BaselineVerdict, GuardVerdict, RowVerdict, RunVerdict, run_verdict

RowKind = Literal["category", "total", "group", "contract", "metric", "consistency",
                  "inconclusive"]
# the gate's item tree (``ceilings.yaml::report::slice::name``): what an item is, how it ends,
# and the names of the guard's item and of a report's item when it did not load
ItemKind = Literal["guard", "load", "row"]
Outcome = Literal["passed", "failed", "skipped"]
GUARD = "guard"
LOAD = "load"


@dataclass(frozen=True, slots=True, kw_only=True)
class BaselineResult(Record):
    """A category compared with the baseline run, case by case (the baseline setting)."""

    base_count: int
    new: list[str] = described(text="ids of paired cases that entered the category (first 50)")
    fixed: list[str] = described(text="ids of paired cases that left the category (first 50)")
    n_new: int
    n_fixed: int
    p_value: float = described(text="one-sided exact McNemar p-value, for display")
    significant: bool = described(text="decided exactly: p <= alpha and cases increased")
    band: int = described(text="the noise band in whole cases (at least 1)")
    beyond_band: bool = described(text="new - fixed exceeds the band")
    verdict: BaselineVerdict
    paired: int = described(text="cases present in both runs")
    hint: str | None = described(default=None, text=(
        "a changed setting the taxonomy's catalogue says usually moves this category"))


@dataclass(frozen=True, slots=True, kw_only=True)
class MetricBaselineResult(Record):
    """A taxonomy metric compared with the baseline, paired by case."""

    better: Literal["higher", "lower"]
    base_value: float | None = described(text="mean over the baseline's applicable cases")
    value: float | None = described(text="mean over this run's applicable cases")
    n_base: int
    n: int
    paired: int = described(text="cases where the metric applies in both runs")
    worse: list[str] = described(text="ids of paired cases that got worse (first 50)")
    improved: list[str] = described(text="ids of paired cases that got better (first 50)")
    n_worse: int
    n_improved: int
    p_value: float = described(text="one-sided exact sign test (McNemar for true/false)")
    band: float = described(text="the noise band in cases (at least 1)")
    verdict: BaselineVerdict
    hint: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigChangeResult(Record):
    """A configuration setting that differs from the baseline run's (``top_k: 5 -> 1``)."""

    key: str
    before: Any
    after: Any
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseExample(Record):
    """One case of a category, with the values of the fields its rules read."""

    id: str
    fields: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class FailingCase(Record):
    """One of a failing item's first cases: why the report says it failed, and whether it
    is new against the baseline run (the base branch's)."""

    id: str
    reason: str | None = described(default=None, text=(
        "the report's own reason (the failed assertion's or metric's): the case's `reason`"
        " field, where its taxonomy declares one"))
    new: bool | None = described(default=None, text=(
        "against a baseline: true when the case was not in this category in the baseline "
        "run (or not in it at all), false when it already was; null without a baseline"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Row(Record):
    """One gate item: a category, the total, or a report's consistency check."""

    report: str = described(text="report name: its path under the reports' folder")
    slice: str | None = described(default=None, text="the slice, e.g. query_type=comparison")
    name: str = described(text="category, 'total', 'group:<g>', 'contract:<c>' or 'consistency'")
    kind: RowKind
    count: int | None = described(text="cases in the category (None for consistency)")
    limit: int | None = described(text=(
        "the most cases the ceiling allows in this report: what the count is checked against"))
    ceiling: str = described(text="the ceiling as written, for display")
    source: str | None = described(text="ceilings file and line of the governing entry")
    line: int | None = described(text=(
        "line of the governing entry (or of 'ceilings:' when none is set)"))
    verdict: RowVerdict
    slack: bool = described(default=False, text="failed only because of strict mode")
    rule: str = described(default="", text="the rule behind the category, in words")
    first_cases: list[str] = described(default_factory=list, text=(
        "the first case ids in the category"))
    examples: list[CaseExample] = described(default_factory=list, text=(
        "the first cases with the fields the deciding rules read"))
    cases: list[FailingCase] = described(default_factory=list, text=(
        "the first cases with the report's reason and, against a baseline, new or not"))
    message: str = described(default="", text="the failure text (empty when passing)")
    baseline: BaselineResult | None = None
    metric_baseline: MetricBaselineResult | None = None
    warnings: list[str] = described(default_factory=list, text=(
        "passed, but worth a look (a WARN verdict); pytest warnings"))
    observed: int | None = described(default=None, text=(
        "a noisy ceiling's observed count: the count it was set from (max = observed + "
        "allowance)"))
    allowance: int | None = described(default=None, text=(
        "a noisy ceiling's allowance: the rise an unchanged system stays within"))
    noise_allowance: int | None = described(default=None, text=(
        "the allowance this run's noise asks for, at this count's share of the false-alarm "
        "budget (None: no noise source measures this count)"))
    moving: int | None = described(default=None, text=(
        "cases of this count that may move between two runs of an unchanged system (the "
        "noise model; None without a noise source)"))
    noise: str | None = described(default=None, text="where the count's noise was measured")
    detectable: int | None = described(default=None, text=(
        "the smallest regression, in cases, this item catches with 80% probability at this "
        "run's noise (without noise: the headroom plus one)"))
    blind: bool = described(default=False, text=(
        "the smallest regression it catches is more than a fifth of the cases: the item "
        "cannot detect anything useful"))
    estimate: float | None = described(default=None, text=(
        "with gold labels: the estimate of the true count (the judge's count corrected by "
        "the labelled sample's disagreements; count stays the judge's)"))
    lower: int | None = described(default=None, text=(
        "with gold labels: the true count's lower bound (fails when above the limit)"))
    upper: int | None = described(default=None, text=(
        "with gold labels: the true count's upper bound (passes when at most the limit)"))
    value: float | None = described(default=None, text="a metric's mean, for display")
    effective_n: int | None = described(default=None, text="cases a metric's mean is over")
    interval: list[float] | None = described(default=None, text=(
        "95% Wilson interval of a metric's mean"))

    @property
    def key(self) -> tuple[str, str, str]:
        """(report, slice or "", name): what identifies the item in a run."""
        return self.report, self.slice or "", self.name

    @property
    def parts(self) -> tuple[str, ...]:
        """The row's place in the gate's item tree (``core.base.items``): its report, its
        slice (if any), its name; one line each."""
        return (one_line(self.report), *((one_line(self.slice),) if self.slice else ()),
                one_line(self.name))

    @property
    def label(self) -> str:
        """The item's name under its report (``slice=x::category``), as the item tree names
        it: the Markdown, the HTML and the terminal use it."""
        return "::".join(self.parts[1:])

    @property
    def count_text(self) -> str:
        """The count as shown: ``312``, or with gold labels ``judge 312, corrected 297
        [271, 324]``."""
        if self.count is None:
            return ""
        if self.estimate is None or self.lower is None or self.upper is None:
            return str(self.count)
        return (f"judge {self.count}, corrected {round(self.estimate)} "
                f"[{self.lower}, {self.upper}]")

    @property
    def baseline_text(self) -> str:
        if self.metric_baseline is not None:
            moved = self.metric_baseline
            text = f"{moved.n_worse} worse / {moved.n_improved} better"
            return text if moved.verdict == "pass" else f"{text} {moved.verdict.upper()}"
        if self.baseline is None:
            return ""
        text = f"+{self.baseline.n_new} / -{self.baseline.n_fixed}"
        verdict = self.baseline.verdict
        return text if verdict == "pass" else f"{text} {verdict.upper()}"

    @property
    def undecided(self) -> bool:
        """A corrected count (gold labels) whose interval holds its ceiling: shown as
        inconclusive, but not a failing item; its report's one ``inconclusive`` row fails
        for it (``core.gate.rows.undecided_row``), so every front end fails the same items."""
        return self.verdict == "inconclusive" and self.estimate is not None

    @property
    def failing(self) -> bool:
        """The item fails the run (over its ceiling, not checkable, or the one item saying
        why its report is inconclusive)."""
        return self.verdict in FAILING and not self.undecided

    @property
    def outcome(self) -> tuple[Outcome, str]:
        """How the row's item ends in every front end, and why (the skip reason or the
        failure; "" when it passed)."""
        if self.verdict == "record":
            return "skipped", f"init records {self.count} as the ceiling"
        if self.verdict == "skip":  # its report is inconclusive: its own item says why
            return "skipped", self.message
        if self.undecided:  # the labels cannot decide it: its report's inconclusive item fails
            return "skipped", self.message.splitlines()[0]
        if self.failing:
            return "failed", self.message
        return "passed", ""

    @property
    def headroom(self) -> int | None:
        """The cases left under the limit: from the count, or with gold labels from the true
        count's estimate rounded up (a failing corrected row's estimate is over its limit,
        so it never shows room left; the upper bound would show a passing row of judge 0
        and ceiling 0 as 12 over)."""
        if self.count is None or self.limit is None:
            return None
        if self.estimate is None:
            return self.limit - self.count
        return self.limit - math.ceil(self.estimate)


@dataclass(frozen=True, slots=True, kw_only=True)
class ShareResult(Record):
    """A share of labelled cases, ``hits`` of ``of``, with its exact interval."""

    hits: int
    of: int = described(text="the labelled cases it is a share of (at least 1)")
    value: float = described(text="hits / of (exactly the fraction of the two integers)")
    interval: list[float] = described(text=(
        "Clopper-Pearson interval at the agreement's confidence, two-sided"))


@dataclass(frozen=True, slots=True, kw_only=True)
class ClassAgreementResult(Record):
    """The judge in one class of the matrix (a category, or ``pass``), against the labels."""

    name: str = described(text="a category of the report's taxonomy, or 'pass'")
    judged: int = described(text="labelled cases the judge put in it (its matrix row's total)")
    gold: int = described(text="labelled cases truly in it (its matrix column's total)")
    agreed: int = described(text="labelled cases in it by both")
    precision: ShareResult | None = described(text=(
        "agreed of judged: of the labelled cases the judge put in it, the share truly in "
        "it (None: not applicable, the judge put no labelled case in it)"))
    recall: ShareResult | None = described(text=(
        "agreed of gold: of the labelled cases truly in it, the share the judge put in it "
        "(None: not applicable, no labelled case is truly in it)"))
    trust: Literal["trusted", "untrusted", "inconclusive", "not applicable"] = described(text=(
        "trusted: both lower bounds at least the trust level; untrusted: an upper bound "
        "below it; inconclusive: the labels cannot tell; not applicable: no labelled case "
        "in it either way"))


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeAgreement(Record):
    """How far to trust the judge: its categories against a report's gold labels."""

    labelled: int = described(text="the report's labelled cases the figures are over")
    agreed: int = described(text="labelled cases where the judge and the label agree")
    classes: list[str] = described(text=(
        "the matrix's rows and columns: the taxonomy's categories in order, then 'pass'"))
    matrix: list[list[int]] = described(text=(
        "matrix[j][g]: labelled cases the judge put in classes[j] whose label is classes[g]"))
    kappa: float | None = described(text=(
        "Cohen's kappa over every class (None: not applicable, chance agreement is certain)"))
    kappa_exact: str | None = described(text="kappa as the exact fraction 'p/q'")
    confidence: float = described(text="each interval's coverage (two-sided)")
    trust_level: float = described(text=(
        "the precision and recall a trusted class is shown to reach"))
    categories: list[ClassAgreementResult] = described(text=(
        "each class's precision, recall and trust word, in the matrix's order"))


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportResult(Record):
    name: str
    path: str
    kind: Literal["cases", "aggregate"] | None
    n_cases: int | None
    failed: int | None
    error: str | None = None
    rows: list[Row] = described(default_factory=list)
    warnings: list[str] = described(default_factory=list)
    caveats: dict[str, int] = described(default_factory=dict, text=(
        "informational flags: cases each"))
    explain: list[str] = described(default_factory=list, text=(
        "rule diagnostics (the explain setting)"))
    taxonomy: str | None = described(default=None, text="the taxonomy that classified it")
    format: str | None = described(default=None, text="the reader that recognised it")
    config_changes: list[ConfigChangeResult] = described(default_factory=list, text=(
        "settings that differ from the baseline run's configuration"))
    instrument_changes: list[str] = described(default_factory=list, text=(
        "what measured this run differently from the baseline (judge_model a -> b), each "
        "with the ceilings file's reason when it accepts the change"))
    inconclusive: str | None = described(default=None, text=(
        "why the report cannot be judged (failures outside the system under test, a run that "
        "did not finish, a changed measuring instrument); its items are not judged"))
    agreement: JudgeAgreement | None = described(default=None, text=(
        "with gold labels: how far to trust the judge (confusion matrix, precision, recall, "
        "kappa) over this report's labelled cases (None: none labelled)"))

    @property
    def item_rows(self) -> list[Row]:
        """The rows in the item tree's order: the unsliced ones, then each slice's in the
        order the slices first appear (none when the report did not load: its ``load``
        item stands for it)."""
        if self.error is not None:
            return []
        slices: dict[str, list[Row]] = {}
        for row in self.rows:
            if row.slice is not None:
                slices.setdefault(row.slice, []).append(row)
        return [*(row for row in self.rows if row.slice is None),
                *(row for rows in slices.values() for row in rows)]


@dataclass(frozen=True, slots=True, kw_only=True)
class LoweringResult(Record):
    label: str
    start: int
    end: int
    new_text: str
    description: str
    governs: list[tuple[str, str, str]]  # the (report, slice, name) items whose counts set it


@dataclass(frozen=True, slots=True, kw_only=True)
class Loosened(Record):
    """One loosening without a reason, where it is written (an annotation's place)."""

    file: str = described(text="the ceilings file, as displayed")
    line: int | None = described(text="where the loosened entry is set now")
    text: str = described(text="the loosening in words: place, entry, old -> new")


@dataclass(frozen=True, slots=True, kw_only=True)
class GuardResultModel(Record):
    """The loosening guard's verdict (the guard command, or the guard setting)."""

    ref: str
    passed: bool
    lines: list[str]
    loosened: list[Loosened] = described(default_factory=list, text=(
        "the ceilings file's loosenings that have no reason, each at its line"))
    error: str | None = described(default=None, text=(
        "why the guard could not compare with the ref (then it did not pass)"))

    @property
    def verdict(self) -> GuardVerdict:
        return "error" if self.error is not None else "pass" if self.passed else "fail"


@dataclass(frozen=True, slots=True, kw_only=True)
class NoiseResult(Record):
    """Where the run's noise was measured, and the false-alarm budget its counts share."""

    source: str = described(text="a noise band file, or 'repeats' (each report's own)")
    budget: float = described(text=(
        "family-wise: an unchanged system fails any of the counts by chance in at most this "
        "share of runs"))
    items: int = described(text="the counts that share the budget (Bonferroni)")
    text: str = described(text="the budget in words, as the summary says it")


@dataclass(frozen=True, slots=True, kw_only=True)
class RunTimeResult(Record):
    """When one run was measured, and where that was read from."""

    ran: str | None = described(text=(
        "UTC, ISO 8601, to the second (None: none of the run's reports records a time)"))
    time_from: str = described(text=(
        "where the time is read from: the report's own field (run.jsonl timestamp, "
        "eval.created, createdAt...), a file name, or 'file mtime' (a last resort: a copy or "
        "a checkout changes it), or 'no time recorded'"))


@dataclass(frozen=True, slots=True, kw_only=True)
class RunTimes(Record):
    """When this run and the runs paired with it case by case were measured, and the window
    a pairing is believed within (``compare.window``)."""

    window: str = described(text="how close two paired runs must be, in words")
    run: RunTimeResult
    baseline: RunTimeResult | None = described(default=None, text="the baseline run's")
    confirm_baseline: RunTimeResult | None = described(default=None, text=(
        "the ratchet's same-day run of the system before the change"))
    gaps: list[str] = described(default_factory=list, text=(
        "each pairing outside the window (or without a time), in words with both times"))
    accepted: str | None = described(default=None, text=(
        "the reason given to accept a baseline outside the window (accept-baseline-gap)"))


def ceilings_lowered(lowerings: list[LoweringResult]) -> int:
    """How many ceilings a plan lowers: its entries, each once (an entry's ``max`` and the
    ``observed`` written beside it are one ceiling)."""
    return len({lowering.label for lowering in lowerings})


@dataclass(frozen=True, slots=True, kw_only=True)
class Sequential(Record):
    """A run gated as its cases arrived (``failgate watch``, ``--failgate-sequential``):
    how many of the planned cases it took, and what its verdict is worth.

    Decided in ``core.gate.sequential``; ``decide`` words it into the headline, so every
    output says "settled after n of N planned cases" and how sure the verdict is."""

    n: int = described(text="cases gated, in the planned order, when the run stopped")
    planned: int = described(text="cases the run planned (N)")
    delta: float = described(text=(
        "the error probability: the early verdict is the full run's with probability at "
        "least 1 - delta"))
    confidence: str = described(text="1 - delta as a percentage, as the headline says it")
    settled: bool = described(text=(
        "the verdict was settled (else the run ended first, and is inconclusive)"))
    beta: float | None = described(default=None, text=(
        "a pass settled by the futility stop: a regression of margin cases past a ceiling "
        "passes early with probability at most beta (None: not a futility pass)"))
    margin: int | None = described(default=None, text=(
        "the regression, in cases past a ceiling, the futility stop ruled out"))
    paid: int | None = described(default=None, text=(
        "cases the run started (paid for) when it stopped: at least n, more when cases ran "
        "beside the ones settled on (concurrency, a batch, cases finished out of the planned "
        "order); None where the front end cannot tell"))

    @property
    def spent(self) -> str:
        """`` (m cases paid)``: what the run paid for beside what it settled on, or nothing
        when the front end cannot tell."""
        return "" if self.paid is None else f" ({self.paid} started and paid for)"

    @property
    def text(self) -> str:
        """The sentence every output says about the sequential run."""
        if not self.settled:
            return (f"stopped after {self.n} of {self.planned} planned cases{self.spent} "
                    "before the verdict was settled")
        worth = (f"the verdict is the full run's with probability at least {self.confidence}"
                 if self.n < self.planned else "the verdict is the full run's")
        if self.beta is not None and self.n < self.planned:
            worth = (f"a pass by futility: a regression of {self.margin} cases past a ceiling "
                     f"would pass this early with probability at most "
                     f"{self.beta * 100:.4g}%, a smaller one might")
        return f"settled after {self.n} of {self.planned} planned cases{self.spent}: {worth}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Headline(Record):
    """The run's outcome: its verdict and the counts its words are made of.

    Decided once, by ``decide`` from the rows, the reports and the guard; the terminal,
    Markdown, HTML, JSON, annotations, MCP and the CI step render it and decide nothing.
    """

    verdict: RunVerdict
    gate: RunVerdict = described(text="the verdict of the checks alone (without the guard)")
    guard: GuardVerdict | None = described(text="the guard's, when it ran")
    checks: int = described(text="the run's items (rows)")
    failed: int = described(text=(
        "items over their ceiling or not checkable (not counting the inconclusive ones)"))
    inconclusive: int = described(text=(
        "reports that cannot be judged, and corrected counts (gold labels) the labels cannot "
        "judge (drawn cases without a usable label decide them)"))
    not_loaded: int = described(text="reports that did not load")
    recorded: int = described(text="counts recorded as new ceilings (init)")
    text: str = described(text="the headline in words, as every output says it")


def decide(result: GateResult) -> Headline:
    """The run's verdict and headline (``RUN_CASES`` decides; this counts and words)."""
    rows = result.rows
    guard = result.guard.verdict if result.guard is not None else None
    # corrected counts (gold labels) the labels cannot judge: undecided
    undecided = sum(1 for row in rows if row.undecided)
    facts = {"not_loaded": len(result.load_errors),
             "failed": sum(1 for row in rows if row.failing and row.verdict != "inconclusive"),
             "inconclusive": len(result.inconclusive) + undecided}
    gate = run_verdict(facts)
    verdict = run_verdict({**facts, "guard_error": guard == "error", "guard_failed":
                           guard == "fail"})
    recorded = sum(1 for row in rows if row.verdict == "record")
    parts = []
    if facts["not_loaded"]:
        parts.append(f"{plural(facts['not_loaded'], 'report')} could not be read")
    if result.guard is not None and guard == "error":
        parts.append(f"the ceilings guard against {result.guard.ref} could not compare")
    if facts["failed"]:
        parts.append(f"{facts['failed']} of {plural(len(rows), 'check')} failed")
    if result.guard is not None and guard == "fail":
        parts.append(f"the ceilings guard against {result.guard.ref} found a loosening "
                     "without a reason")
    if result.inconclusive:
        parts.append(f"{plural(len(result.inconclusive), 'report')} cannot be judged" + (
            " (not a pass, not a regression)" if verdict == "inconclusive" else ""))
    if undecided:
        parts.append(f"{plural(undecided, 'corrected count')} inconclusive: the labels "
                     "cannot judge them (drawn cases without a usable label, or too few "
                     "usable labels)")
    if parts:
        text = "; ".join(parts)
    elif not rows:
        text = "no checks to run"
    elif recorded == len(rows):
        text = f"{plural(recorded, 'count')} recorded as new ceilings"
    else:
        text = "the check passed" if len(rows) == 1 else f"all {len(rows)} checks passed"
    if result.sequential is not None:  # how many of the planned cases, and what it is worth
        text = f"{text}; {result.sequential.text}"
    return Headline(verdict=verdict, gate=gate, guard=guard, checks=len(rows),
                    failed=facts["failed"], inconclusive=facts["inconclusive"],
                    not_loaded=facts["not_loaded"], recorded=recorded, text=text)


@dataclass(frozen=True, slots=True, kw_only=True)
class TreeItem(Record):
    """One item of the gate's tree as ``--json`` writes it: the node id pytest, JUnit and the
    FAILED lines give it (``core.base.items`` builds those from the same ``GateResult.tree``),
    so a CI tool can join the JSON to them."""

    node_id: str = described(text=(
        "the item's pytest node id: ceilings.yaml::guard, ceilings.yaml::report::load, or "
        "ceilings.yaml::report[::slice]::name"))
    kind: ItemKind
    outcome: Outcome


# one place of the tree: (what the item is, its parts after the ceilings file, its report
# and row when it has them)
Place = tuple[ItemKind, tuple[str, ...], "ReportResult | None", "Row | None"]


@dataclass(frozen=True, slots=True, kw_only=True)
class GateResult(Record):
    """A whole gate run; the json setting writes exactly this (see ``failgate schema``)."""

    schema_version: Literal[1] = 1
    ceilings_path: str
    ceilings_sha256: str | None
    taxonomy: str
    mode: Literal["gate", "strict", "ratchet", "init"]
    reports: list[ReportResult]
    skipped: list[str]
    warnings: list[str]
    lowerings: list[LoweringResult]
    init_text: str | None = None
    guard: GuardResultModel | None = None
    analysis: list[ReportAnalysis] | None = described(default=None, text=(
        "the single-run diagnosis (the analyze setting)"))
    noise: NoiseResult | None = described(default=None, text=(
        "the run's noise source and false-alarm budget (None: exact counts, no noise)"))
    significance: str | None = described(default=None, text=(
        "how the run's significance tests (rates, baseline comparisons) shared its false-alarm "
        "budget (Holm), in words (None: no test could be significant)"))
    default_ceilings: dict[str, int] = described(default_factory=dict, text=(
        "the counts under `ceilings:` (drawn on history charts)"))
    sequential: Sequential | None = described(default=None, text=(
        "a run gated as its cases arrived: n of N planned cases and 1 - delta (None: a "
        "finished run, gated whole)"))
    ratchet_advice: str = described(default="a ratchet", text=(
        "how to ratchet these ceilings, in the words of the front end that ran the gate"))
    times: RunTimes | None = described(default=None, text=(
        "when this run and the runs paired with it were measured (None: nothing was timed)"))

    @classmethod
    def without_derived(cls, data: dict[str, Any]) -> dict[str, Any]:
        """``verdict`` and ``headline`` are derived from the rest: a document read back
        recomputes them."""
        return {key: value for key, value in data.items() if key not in DERIVED}

    @classmethod
    def json_type(cls) -> type:
        return _document_type()

    def json_value(self) -> Any:
        """The run as ``--json`` writes it: its fields, then its headline and verdict."""
        values = {f.name: getattr(self, f.name) for f in fields(GateResult)}
        return _document_type()(**values, items=self.items, headline=self.headline,
                                verdict=self.verdict)

    @property
    def headline(self) -> Headline:
        """The run's outcome, decided once (core.base.verdict.RUN_CASES): its verdict, the
        counts behind it and its headline in words; every output renders it."""
        return decide(self)

    @property
    def verdict(self) -> RunVerdict:
        """The run's verdict (headline.verdict)."""
        return self.headline.verdict

    @property
    def rows(self) -> list[Row]:
        return [row for report in self.reports for row in report.rows]

    @property
    def tree(self) -> list[Place]:
        """Every item of the run in pytest's collection order: the guard, then each report's
        items (its ``load`` item when it did not load, else its rows in ``item_rows``)."""
        places: list[Place] = [("guard", (GUARD,), None, None)] if self.guard is not None else []
        for report in self.reports:
            if report.error is not None:
                places.append(("load", (one_line(report.name), LOAD), report, None))
            places += [("row", row.parts, report, row) for row in report.item_rows]
        return places

    def outcome(self, place: Place) -> tuple[Outcome, str]:
        """How one item of the tree ends, and why ("" when it passed)."""
        kind, _, report, row = place
        if row is not None:
            return row.outcome
        if kind == "load" and report is not None:
            return "failed", report.error or ""
        if self.guard is not None and not self.guard.passed:
            return "failed", "\n".join(self.guard.lines)
        return "passed", ""

    @property
    def items(self) -> list[TreeItem]:
        """The item tree as ``--json`` names it (``TreeItem``)."""
        return [TreeItem(node_id="::".join((self.ceilings_path, *place[1])), kind=place[0],
                         outcome=self.outcome(place)[0]) for place in self.tree]

    @property
    def regressions(self) -> list[str]:
        """``report::item`` for each item above its ceiling (not a strict run's slack, which
        a ratchet fixes): while any is, no count of the run is evidence of a gain (a case
        that left ``other`` may only have moved into the regressed category)."""
        return list(dict.fromkeys(
            f"{row.report}::{row.label}" for row in self.rows
            if row.failing and not row.slack and row.verdict != "inconclusive"))

    @property
    def load_errors(self) -> list[str]:
        return [report.error for report in self.reports if report.error is not None]

    @property
    def inconclusive(self) -> list[str]:
        """``report: why`` for each report that cannot be judged."""
        return [f"{report.name}: {report.inconclusive}" for report in self.reports
                if report.inconclusive is not None]


# The fields a GateResult document derives from the rest, with their schema descriptions.
DERIVED = {
    "items": (
        "every gate item in pytest's collection order, with its pytest node id (as pytest, "
        "failgate check --junit and the FAILED lines name it), its kind and its outcome"),
    "headline": (
        "the run's outcome, decided once (core.base.verdict.RUN_CASES): its verdict, the "
        "counts behind it and its headline in words; every output renders it"),
    "verdict": (
        "the run's verdict (headline.verdict): error when a report did not load or the "
        "guard could not compare, fail when a check failed or the guard found a loosening, "
        "inconclusive when a report cannot be judged and nothing else failed, else pass"),
}
_DOCUMENT: list[type] = []


def _document_type() -> type:
    """``GateResult`` with its derived fields as fields: the class its JSON is written
    from and its schema generated from (defined when first asked for)."""
    if not _DOCUMENT:
        read_only = {"readOnly": True}

        @dataclass(frozen=True, slots=True, kw_only=True)
        class GateResultDocument(GateResult):
            __doc__ = GateResult.__doc__
            __pydantic_config__ = {"extra": "forbid", "title": "GateResult"}  # noqa: RUF012
            items: list[TreeItem] = field(metadata={"description": DERIVED["items"],
                                                    "json_schema_extra": read_only})
            headline: Headline = field(metadata={"description": DERIVED["headline"],
                                                 "json_schema_extra": read_only})
            verdict: RunVerdict = field(metadata={"description": DERIVED["verdict"],
                                                  "json_schema_extra": read_only})

        _DOCUMENT.append(GateResultDocument)
    return _DOCUMENT[0]
