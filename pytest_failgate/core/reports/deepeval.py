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

``recorded`` keeps ``testPassed`` and ``testFailed`` (when the file has them) and
``num_predictions``; cases that disagree with them are contradictions (the report's
``consistency`` item fails).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .jsonfile import Loc, Misshapen, describe, parse_json_file
from .readers import ReaderOutput

if TYPE_CHECKING:
    from pathlib import Path

WRAPPER_KEY = "testRunData"  # .latest_test_run.json
_LISTS = (("testCases", "llm", "test_case"),
          ("conversationalTestCases", "conversational", "conversational_test_case"))
_MARKERS = (b'"testCases"', b'"conversationalTestCases"', b'"testRunData"')


class DeepEvalReader:
    """DeepEval's test-run files (see the module docstring)."""

    name: str = "deepeval"
    suffixes: tuple[str, ...] = (".json",)
    taxonomy: str = "deepeval"

    def claims(self, head: bytes) -> bool:
        """Whether the file's first bytes may be a DeepEval test run (a cheap filter)."""
        return any(marker in head for marker in _MARKERS)

    def read(self, path: Path) -> ReaderOutput | None:
        return parse_json_file(path, read_deepeval)


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
    return ReaderOutput(cases, recorded, contradictions)


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
    failed_metric = errored_metric = None
    for number, metric in enumerate(metrics_data):
        if not isinstance(metric, Mapping) or not isinstance(metric.get("name"), str):
            raise Misshapen(f"{where}: metricsData[{number}] is not an object with a name",
                            (*loc, "metricsData", number))
        name, score, error = metric["name"], metric.get("score"), metric.get("error")
        metrics[name] = {"success": metric.get("success"), "score": score,
                         "threshold": metric.get("threshold"), "error": error}
        if error or score is None:
            errored_metric = errored_metric or name
        elif metric.get("success") is False:
            failed_metric = failed_metric or name
    name = entry.get("name")
    order = entry.get("order")
    if not isinstance(name, str) or not name:
        name = f"{unnamed}_{order}" if type(order) is int else f"#{position}"
    return {"id": name, "kind": kind, "success": success, "failed_metric": failed_metric,
            "errored_metric": errored_metric, "metrics": metrics}


def _cross_check(cases: list[dict[str, Any]], counts: Mapping[str, Any]) -> list[str]:
    passed = sum(1 for case in cases if case["success"])
    counted = {"testPassed": passed, "testFailed": len(cases) - passed}
    return [f"{key} is {counts[key]!r}, yet {counted[key]} test cases say so"
            for key in counts if counts[key] != counted[key]]
