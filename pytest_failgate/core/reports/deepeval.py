"""DeepEval test runs, read natively.

The files a run leaves all hold one test run, ``{"testCases": [...],
"conversationalTestCases": [...], "testPassed", "testFailed", ...}``:

- ``.deepeval/.latest_test_run.json`` wraps it as ``{"testRunData": {...}}``;
- ``.deepeval/.latest_run_full.json`` and ``$DEEPEVAL_RESULTS_FOLDER/test_run_<timestamp>
  .json`` hold it bare;
- ``.deepeval/.temp_test_run_data.json`` holds it while a run is in progress (DeepEval
  deletes it at the end, yet it is what many repositories have committed); it has no
  ``testPassed``/``testFailed`` and its cases may lack ``order``.

Other files in ``.deepeval/`` (``.deepeval-cache.json``, a link-only
``.latest_test_run.json``) are not test runs and are skipped.

All of them are the report ``test_run`` of their folder, so one ``deepeval test run`` is
gated once: the newer finished file (``run_order``), the other and the in-progress copy
of the same run listed as skipped. The in-progress file is read when no finished run is
beside it. One that holds another run than the newest finished file means DeepEval is
running there (or a run crashed): it is an error, and the finished files are skipped as
an earlier run's, never gated silently. So is reading ``./.deepeval`` inside ``deepeval
test run`` itself (its ``DEEPEVAL`` flag), which writes the run only after its pytest
session ends. Of the ``test_run_<timestamp>.json`` files of a results folder, the latest
is gated.

Every test case, single-turn and conversational, is one case with the fields the
built-in ``deepeval`` taxonomy (``taxonomy/builtin/deepeval.yaml``) reads:

``id``
    The case's ``name``; without one, ``test_case_<order>`` (conversational:
    ``conversational_test_case_<order>``), else its position in the file.
``success``
    DeepEval's verdict for the case.
``failed_metric``
    The name of the first metric (in ``metricsData`` order) that was scored and did
    not succeed: a quality failure.
``errored_metric``
    The name of the first metric that errored or has no score: the judge failed, and
    that says nothing about the answer's quality. A case is classified by its
    ``failed_metric`` when it has one; only a case whose failures are all errors
    counts as a metric error.
``kind``, ``metrics`` (name -> ``{success, score, threshold, error}``)
    For slices and listings.
``reason``
    The failed metric's own ``reason`` (else the errored metric's ``error``): shown beside
    the case in the pull-request comment.

``recorded`` keeps ``testPassed`` and ``testFailed`` (when the file has them) and
``num_predictions``; cases that disagree with them are contradictions (the report's
``consistency`` item fails).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..base.errors import FailgateError
from .jsonfile import Loc, Misshapen, describe, open_file, parse_json_file
from .readers import Reader, ReaderOutput, ToolRun

WRAPPER_KEY = "testRunData"  # .latest_test_run.json
_LISTS = (("testCases", "llm", "test_case"),
          ("conversationalTestCases", "conversational", "conversational_test_case"))
_MARKERS = (b'"testCases"', b'"conversationalTestCases"', b'"testRunData"')


class DeepEvalReader(Reader):
    """DeepEval's test-run files (see the module docstring)."""

    name: str = "deepeval"
    suffixes: tuple[str, ...] = (".json",)
    taxonomy: str = "deepeval"
    run: ToolRun | None = ToolRun(
        "deepeval test run tests/", same_session=False,
        note="deepeval test run exits 1 when a test fails: the gate step runs after it "
        "all the same (if: always())")
    # a file's head holds one of these whenever ``claims`` says yes (None: no such list)
    probe: tuple[bytes, ...] | None = _MARKERS

    def claims(self, head: bytes) -> bool:
        """Whether the file's first bytes may be a DeepEval test run (a cheap filter)."""
        return any(marker in head for marker in _MARKERS)

    def read(self, path: Path) -> ReaderOutput | None:
        if path.name in RUN_FILES and _holds_run(path):  # a link-only file is no run
            return _read_run_file(path)
        output = parse_json_file(path, read_deepeval)
        stamped = _TIMESTAMPED.fullmatch(path.name)
        if output is not None and stamped is not None:  # DEEPEVAL_RESULTS_FOLDER keeps each
            moment = datetime.strptime(stamped.group(1), "%Y%m%d_%H%M%S")  # run: the latest
            output.name = REPORT_NAME
            output.run_order = (moment.replace(tzinfo=timezone.utc).timestamp(),)
        return output


REPORT_NAME = "test_run"  # every file of one run, in one folder: one report
LATEST, FULL = ".latest_test_run.json", ".latest_run_full.json"  # the finished run, twice
TEMP_FILE = ".temp_test_run_data.json"  # written while a run is in progress
RUN_FILES = (LATEST, FULL, TEMP_FILE)
_TIMESTAMPED = re.compile(r"test_run_(\d{8}_\d{6})\.json")
_IN_RUN = "DEEPEVAL"  # set by `deepeval test run` in the process that runs pytest


def _holds_run(path: Path) -> bool:
    """Whether a file may hold a test run (a link-only ``.latest_test_run.json`` does not),
    from its first bytes."""
    with open_file(path) as handle:
        head = handle.read(1 << 16)
    return any(marker in head for marker in _MARKERS[:2])


def _newest_finished(folder: Path) -> Path | None:
    """The newer of a folder's finished-run files that hold a run (``.latest_test_run.json``
    when both were written in the same second), if any."""
    finished = [folder / name for name in (LATEST, FULL)
                if (folder / name).is_file() and _holds_run(folder / name)]
    if not finished:
        return None
    return max(finished, key=lambda p: (int(p.stat().st_mtime), p.name == LATEST))


def _read_run_file(path: Path) -> ReaderOutput:
    """One of the files of a ``.deepeval/`` folder, named ``test_run`` and ordered (a finished
    run after the in-progress file, then the newer, then ``.latest_test_run.json``) so the
    folder's run is gated once.

    The in-progress file must hold the run the newest finished file holds. If it holds
    another, DeepEval is running there, or a run crashed: the in-progress file is an error
    saying so, and the finished files that differ from it are skipped as an earlier run's.
    """
    folder = path.parent
    temp = folder / TEMP_FILE
    if _inside_deepeval(folder):
        first = next(p for p in (temp, folder / LATEST, folder / FULL) if p.is_file())
        if path != first:
            return ReaderOutput(skipped=f"inside `deepeval test run`: see {first.name}")
        raise FailgateError(
            "this process runs under `deepeval test run`, which writes .deepeval/ only after "
            "its pytest session ends: the files here are an earlier run's (or the one in "
            "progress). Gate this run in a step after it: `deepeval test run ...` then "
            "`failgate check .deepeval/` (or `pytest --failgate=.deepeval/`)", path)
    try:
        output = parse_json_file(path, read_deepeval)
    except FailgateError as exc:
        if path != temp:
            raise
        return ReaderOutput(skipped="DeepEval's in-progress file, unreadable while it "
                            f"is being written ({exc.message})")
    assert output is not None  # _holds_run: it has testCases or conversationalTestCases
    cases = list(output.cases)
    output.cases, output.name = cases, REPORT_NAME
    seconds = float(int(path.stat().st_mtime))
    if path == temp:
        if not cases:
            raise FailgateError("DeepEval's in-progress file holds no test case yet: a run is "
                                "starting here; gate it once `deepeval test run` has returned, "
                                "in a step of its own", path)
        finished = _newest_finished(folder)
        other = _cases_of(finished) if finished is not None else None
        if finished is not None and other is not None and _verdicts(other) != _verdicts(cases):
            raise FailgateError(
                f"a DeepEval run here has not finished (it is running, or it crashed): this "
                f"file holds {len(cases)} test cases that are not the run in {finished.name}, "
                "which an earlier run wrote. Gate once `deepeval test run` has returned, in a "
                "step of its own (or delete this file, if a crashed run left it)", path)
        output.run_order = (0.0, seconds, 0.0)
        return output
    if temp.is_file() and _holds_run(temp):
        current = _cases_of(temp)
        if current and _verdicts(current) != _verdicts(cases):
            return ReaderOutput(skipped=(
                f"an earlier run's: {TEMP_FILE} beside it holds a DeepEval run that has not "
                "finished"))
    output.run_order = (1.0, seconds, 2.0 if path.name == LATEST else 1.0)
    return output


def _cases_of(path: Path) -> list[dict[str, Any]] | None:
    """The cases of another file of the folder; ``None`` when it cannot be read (it is
    being written, or it is broken: its own reading says so)."""
    try:
        output = parse_json_file(path, read_deepeval)
    except FailgateError:
        return None
    return list(output.cases) if output is not None else None


def _inside_deepeval(folder: Path) -> bool:
    """Whether this process runs under ``deepeval test run`` (which runs pytest in its own
    process and writes the run to ``./.deepeval`` only after pytest returns) and ``folder``
    is that ``./.deepeval``."""
    flag = os.environ.get(_IN_RUN, "").strip().lower()
    return (flag in ("1", "true", "yes", "on", "y")
            and folder.resolve() == (Path.cwd() / ".deepeval").resolve())


def _verdicts(cases: list[dict[str, Any]]) -> list[tuple[str, bool]]:
    """What two files of one run agree on: each case's id and verdict."""
    return sorted((case["id"], case["success"]) for case in cases)


def test_run_of(data: Any) -> tuple[Mapping[str, Any] | None, Loc]:
    """The test run a decoded file holds (unwrapped) and where, or ``None``."""
    loc: Loc = ()
    if isinstance(data, Mapping) and isinstance(data.get(WRAPPER_KEY), Mapping):
        data, loc = data[WRAPPER_KEY], (WRAPPER_KEY,)
    if isinstance(data, Mapping) and any(isinstance(data.get(key), list)
                                         for key, _, _ in _LISTS):
        return data, loc
    return None, loc


def read_deepeval(data: Any) -> ReaderOutput | None:
    """The cases of a decoded DeepEval file, or ``None`` when it holds no test run;
    ``Misshapen`` for a test run with a malformed case."""
    run, loc = test_run_of(data)
    if run is None:
        return None
    cases = list(_cases(run, loc))
    recorded: dict[str, Any] = {"num_predictions": len(cases)}
    contradictions: list[str] | None = None
    counts = {key: run.get(key) for key in ("testPassed", "testFailed") if key in run}
    if counts:
        recorded.update(counts)
        contradictions = _cross_check(cases, counts)
    return ReaderOutput(cases=cases, recorded=recorded, contradictions=contradictions,
                        instrument=_metrics_used(run))


def _metrics_used(run: Mapping[str, Any]) -> dict[str, str] | None:
    """The metrics that scored the cases, each with its threshold and its evaluation model
    (the judge): ``Faithfulness >= 0.7 by gpt-4o``."""
    found = set()
    for key, _, _ in _LISTS:
        for entry in run.get(key) or ():
            for metric in (entry.get("metricsData") or ()) if isinstance(entry, Mapping) else ():
                if not isinstance(metric, Mapping) or not isinstance(metric.get("name"), str):
                    continue
                model = metric.get("evaluationModel")
                found.add(f"{metric['name']} >= {metric.get('threshold')}"
                          + (f" by {model}" if model else ""))
    return {"metrics": "; ".join(sorted(found))} if found else None


def _cases(run: Mapping[str, Any], loc: Loc) -> Iterator[dict[str, Any]]:
    position = 0
    for key, kind, unnamed in _LISTS:
        entries = run.get(key)
        if entries is None:
            continue
        if not isinstance(entries, list):
            raise Misshapen(f"{key} is {describe(entries)}; expected a list of test cases",
                            (*loc, key))
        for index, entry in enumerate(entries):
            position += 1
            if not isinstance(entry, Mapping):
                raise Misshapen(f"{key}[{index}] is {describe(entry)}, not an object",
                                (*loc, key, index))
            yield _case(entry, kind, unnamed, (*loc, key, index), position)


def _case(entry: Mapping[str, Any], kind: str, unnamed: str, loc: Loc, position: int
          ) -> dict[str, Any]:
    where = f"{loc[-2]}[{loc[-1]}]"
    success = entry.get("success")
    if not isinstance(success, bool):
        raise Misshapen(f"{where}: success is {describe(success)}; expected true or false",
                        loc)
    metrics_data = entry.get("metricsData") or []
    if not isinstance(metrics_data, list):
        raise Misshapen(f"{where}: metricsData is {describe(metrics_data)}; expected a list",
                        (*loc, "metricsData"))
    metrics: dict[str, dict[str, Any]] = {}
    failed_metric = errored_metric = reason = None
    for number, metric in enumerate(metrics_data):
        if not isinstance(metric, Mapping) or not isinstance(metric.get("name"), str):
            raise Misshapen(f"{where}: metricsData[{number}] is not an object with a name",
                            (*loc, "metricsData", number))
        name, score, error = metric["name"], metric.get("score"), metric.get("error")
        metrics[name] = {"success": metric.get("success"), "score": score,
                         "threshold": metric.get("threshold"), "error": error}
        if error or score is None:
            errored_metric = errored_metric or name
        elif metric.get("success") is False and failed_metric is None:
            failed_metric = name
            said = metric.get("reason")
            reason = said if isinstance(said, str) and said else None
    name = entry.get("name")
    order = entry.get("order")
    if not isinstance(name, str) or not name:
        name = f"{unnamed}_{order}" if type(order) is int else f"#{position}"
    return {"id": name, "kind": kind, "success": success, "failed_metric": failed_metric,
            "errored_metric": errored_metric, "metrics": metrics,
            "reason": reason or (metrics[errored_metric]["error"] if errored_metric and
                                 isinstance(metrics[errored_metric]["error"], str) else None)}


def _cross_check(cases: list[dict[str, Any]], counts: Mapping[str, Any]) -> list[str]:
    passed = sum(1 for case in cases if case["success"])
    counted = {"testPassed": passed, "testFailed": len(cases) - passed}
    return [f"{key} is {counts[key]!r}, yet {counted[key]} test cases say so"
            for key in counts if counts[key] != counted[key]]
