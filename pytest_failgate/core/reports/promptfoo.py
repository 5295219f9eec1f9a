"""promptfoo's output (``promptfoo eval -o results.json`` or ``-o results.jsonl``), read
natively.

Shapes read:

- the output file, results version 2 and 3: ``{"evalId", "results": {"version",
  "prompts", "results": [row, ...], "stats"}, "config", ...}``;
- JSON Lines (``-o results.jsonl``): one row a line, without the stats;
- the summary object alone (``promptfoo.evaluate()`` written as JSON):
  ``{"version", "results": [row, ...], "stats"}``;
- older exports: a bare list of rows (no ``failureReason``, no ``testIdx``).

Each row becomes one case with the fields the built-in ``promptfoo`` taxonomy
(``taxonomy/builtin/promptfoo.yaml``) reads:

``id``
    Stable across runs, so ``--failgate-baseline`` pairs the rows of two runs, and
    readable: the provider (its label, else its id), the provider's prompt (the n-th
    prompt it was run with: a prompt edit keeps the number) and the test's
    ``description`` (``echo/0/refund window stated``). A description two tests share
    gets a hash of the test's ``vars`` (``echo/0/greeting#9f2c01ab``); a test without
    one is ``t<test number>#<hash of vars>``. The n-th ``--repeat`` of a test ends in
    ``/r<n>`` from the second on, so a run's first repeat pairs with a run without
    repeats. The row's own ``id`` is a fresh UUID every run and is never used. Rows
    without ``testIdx`` (older exports) are numbered in file order among the rows of
    their provider and prompt.
``success``
    promptfoo's verdict; a case failed when it is false.
``failure_reason``
    ``failureReason``: 0 none, 1 an assertion failed, 2 an error (null in older
    exports).
``error``, ``graded``
    The row's error text, and whether it has a ``gradingResult``. promptfoo also sets
    ``error`` on assertion failures (the failing assertion's reason), so a provider
    error is ``failure_reason == 2``, or an ``error`` with no grading at all.
``reason``
    Why promptfoo says the row failed: its ``error``, else its grading's ``reason``
    (shown beside the case in the pull-request comment).
``failed_assertion``, ``failed_assertions``
    The type of the first failed assertion (in ``gradingResult.componentResults``
    order, nested sets searched depth-first), and the types of all of them.
``assertion_error``
    The row failed only because its failed assertions could not run: a python assertion
    without an interpreter ("Python 3 not found") or whose script raised, a javascript
    assertion that threw, a grader that could not be called (``INFRA_PREFIXES``, the
    words promptfoo writes in the assertion's reason).
``description``
    The test's description (null without one): the case's label.
``test``, ``repeat``
    The test's number (its ``testIdx`` in a run without repeats) and the repeat (1, 2,
    ... with ``--repeat``; always 1 without).
``provider``, ``prompt``, ``score``, ``latency_ms``, ``cost``
    For slices and case listings.

``recorded`` keeps ``stats`` (``successes``, ``failures``, ``errors``; the JSON output
only) and ``num_predictions``; a row count that disagrees with them is a contradiction (the
report's ``consistency`` item fails).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

from ..base.errors import FailgateError
from .jsonfile import Loc, Misshapen, describe, json_lines, parse_json_file
from .readers import Reader, ReaderOutput, ToolRun

if TYPE_CHECKING:
    from pathlib import Path

PROVIDER_ERROR = 2  # promptfoo's ResultFailureReason.ERROR
_MARKERS = (b'"gradingResult"', b'"promptIdx"', b'"failureReason"', b'"evalId"')


class PromptfooReader(Reader):
    """``promptfoo eval -o *.json`` output (see the module docstring)."""

    name: str = "promptfoo"
    suffixes: tuple[str, ...] = (".json", ".jsonl")
    taxonomy: str = "promptfoo"
    run: ToolRun | None = ToolRun(
        "npx promptfoo eval -o results.json",
        note="promptfoo exits 100 when a test fails: run it with "
        "PROMPTFOO_FAILED_TEST_EXIT_CODE=0 so the job reaches the gate step")
    # a file's head holds one of these whenever ``claims`` says yes (None: no such list)
    probe: tuple[bytes, ...] | None = _MARKERS

    def claims(self, head: bytes) -> bool:
        """Whether the file's first bytes may be promptfoo's (a cheap filter)."""
        return any(marker in head for marker in _MARKERS)

    def read(self, path: Path) -> ReaderOutput | None:
        if path.suffix == ".jsonl":
            return read_promptfoo_lines(path)
        return parse_json_file(path, read_promptfoo)


# The configuration keys a comparison diffs (not the test cases, paths or sharing).
CONFIG_KEYS = ("prompts", "providers", "defaultTest", "evaluateOptions", "extensions")


def read_promptfoo(data: Any) -> ReaderOutput | None:
    """The cases of decoded promptfoo output, or ``None`` when it is not promptfoo's;
    ``Misshapen`` for promptfoo output with a malformed row."""
    rows, stats, loc = _rows_and_stats(data)
    if rows is None:
        return None
    cases = list(_cases(rows, loc))
    recorded: dict[str, Any] = {"num_predictions": len(cases)}
    summary = data.get("results") if isinstance(data, Mapping) else None
    for where, key in ((summary, "timestamp"), (data, "createdAt"), (data, "timestamp")):
        if isinstance(where, Mapping) and isinstance(where.get(key), str | int | float):
            recorded["ran"] = (where[key], key)  # when it ran (the first the output names)
            break
    contradictions: list[str] | None = None
    if stats is not None:
        recorded["stats"] = stats
        contradictions = _cross_check(cases, stats)
    config = data.get("config") if isinstance(data, Mapping) else None
    shown = ({key: _without_grader(key, value) for key, value in config.items()
              if key in CONFIG_KEYS} if isinstance(config, Mapping) else None)
    return ReaderOutput(cases=cases, recorded=recorded, contradictions=contradictions,
                        config=shown, repeat_unit=repeat_unit, instrument=grader(config))


def _without_grader(key: str, value: Any) -> Any:
    """A configuration entry with the grader left out: it is the instrument, not the system."""
    if key != "defaultTest" or not isinstance(value, Mapping):
        return value
    options = value.get("options")
    if not isinstance(options, Mapping) or "provider" not in options:
        return value
    return {**value, "options": {k: v for k, v in options.items() if k != "provider"}}


def grader(config: Any) -> dict[str, str] | None:
    """The model that grades model-graded assertions (``defaultTest.options.provider``: its
    label, else its id), when the run's configuration names one."""
    default = config.get("defaultTest") if isinstance(config, Mapping) else None
    options = default.get("options") if isinstance(default, Mapping) else None
    provider = options.get("provider") if isinstance(options, Mapping) else None
    if isinstance(provider, Mapping):
        provider = provider.get("label") or provider.get("id")
    return {"grader": provider} if isinstance(provider, str) and provider else None


def read_promptfoo_lines(path: Path) -> ReaderOutput | None:
    """``promptfoo eval -o results.jsonl``: one row a line, no stats (so nothing to
    cross-check); ``None`` when the first line is not a promptfoo row."""
    lines: list[int] = []
    rows: list[Any] = []
    for number, row in json_lines(path, "a promptfoo result"):
        if not rows and not looks_like_row(row):
            return None
        lines.append(number)
        rows.append(row)
    try:
        cases = list(_cases(rows, ()))
    except Misshapen as exc:
        raise FailgateError(exc.message, path, lines[int(exc.loc[0])]) from None
    return ReaderOutput(cases=cases, recorded={"num_predictions": len(cases)},
                        repeat_unit=repeat_unit)


def looks_like_row(value: Any) -> bool:
    """A promptfoo result row: a verdict, and what was graded or asked."""
    return (isinstance(value, Mapping) and isinstance(value.get("success"), bool)
            and ("gradingResult" in value or "provider" in value)
            and ("vars" in value or "prompt" in value or "testCase" in value))


def _rows_and_stats(data: Any) -> tuple[list[Any] | None, Any, Loc]:
    """The rows, the stats and where the rows are (keys from the top)."""
    summary, loc = data, cast("Loc", ())
    if isinstance(data, Mapping) and isinstance(data.get("results"), Mapping):
        summary, loc = data["results"], ("results",)  # the output file wraps the summary
    if isinstance(summary, Mapping):
        rows = summary.get("results")
        if isinstance(rows, list) and (any(looks_like_row(row) for row in rows[:1])
                                       or ("stats" in summary and "prompts" in summary)):
            return rows, summary.get("stats"), (*loc, "results")
        return None, None, ()
    if isinstance(summary, list) and summary and looks_like_row(summary[0]):
        return summary, None, ()
    return None, None, ()


def _cases(rows: list[Any], loc: Loc) -> Iterator[dict[str, Any]]:
    """One case per row, with ids that name the test (see ``_Ids``)."""
    prompt_numbers: dict[str, dict[Any, int]] = {}  # provider -> its prompts, numbered
    positions: dict[tuple[str, int], int] = {}  # rows without testIdx, per provider prompt
    ids = _Ids()
    cases: list[dict[str, Any]] = []
    for position, row in enumerate(rows, start=1):
        if not looks_like_row(row):
            what = describe(row) if not isinstance(row, Mapping) else "an object without " \
                "'success' (true/false) and 'gradingResult' or 'provider'"
            raise Misshapen(f"promptfoo result #{position} is {what}", (*loc, position - 1))
        provider = _provider(row)
        prompt_key = row.get("promptIdx")
        if prompt_key is None:
            prompt = row.get("prompt")
            prompt_key = _text(prompt.get("label") or prompt.get("raw")) \
                if isinstance(prompt, Mapping) else _text(prompt)
        numbers = prompt_numbers.setdefault(provider, {})
        prompt_number = numbers.setdefault(prompt_key, len(numbers))
        test = row.get("testIdx")
        if test is None:
            key = (provider, prompt_number)
            test = positions.get(key, 0)
            positions[key] = test + 1
        elif type(test) is not int:
            raise Misshapen(f"promptfoo result #{position}: testIdx is {describe(test)}; "
                            "expected a whole number", (*loc, position - 1, "testIdx"))
        failed = _failed_assertions(row.get("gradingResult"))
        test_case = row.get("testCase")
        test_case = test_case if isinstance(test_case, Mapping) else {}
        description = test_case.get("description")
        description = description if isinstance(description, str) and description else None
        variables = row.get("vars", test_case.get("vars"))
        ids.add(test, (description, _canonical(variables), _canonical(test_case.get("assert"))))
        cases.append({
            "id": (provider, prompt_number, test),
            "success": row["success"],
            "failure_reason": row.get("failureReason"),
            "error": row.get("error") or None,
            "reason": _reason(row),
            "graded": row.get("gradingResult") is not None,
            "failed_assertion": failed[0] if failed else None,
            "failed_assertions": failed,
            "assertion_error": not row["success"] and could_not_run(row.get("gradingResult")),
            "provider": provider,
            "prompt": prompt_number,
            "test": test,
            "description": description,
            "score": row.get("score"),
            "latency_ms": row.get("latencyMs"),
            "cost": row.get("cost"),
        })
    names = ids.names()
    for case in cases:
        provider, prompt_number, test = case["id"]
        name, number, repeat = names[test]
        case["id"] = f"{provider}/{prompt_number}/{name}" + (f"/r{repeat}" if repeat > 1 else "")
        case["test"], case["repeat"] = number, repeat
        yield case


_REPEAT = re.compile(r"/r[0-9]+$")


def repeat_unit(case_id: str) -> str:
    """The test a row repeats: its id without the ``/r<n>`` of a second or later repeat."""
    return _REPEAT.sub("", case_id)


class _Ids:
    """The names of a file's tests, for case ids that pair across runs.

    promptfoo numbers the rows of one test case, its var combinations and its
    ``--repeat`` runs with consecutive ``testIdx``; a repeat has the same description,
    vars and assertions as the run before it. So a test is its (description, vars,
    assertions), numbered in order of appearance (``t<n>``, the test index of a run
    without repeats), and each of its ``testIdx`` is one repeat (1, 2, ...). Its name
    is its description when no other test has that description, else the description
    and a hash of its vars, else ``t<n>#<hash of vars>`` (no description, or two tests
    alike but for their assertions).
    """

    def __init__(self) -> None:
        self._tests: dict[tuple[str | None, str, str], list[int]] = {}  # test -> its testIdx
        self._seen: dict[int, tuple[str | None, str, str]] = {}

    def add(self, test_index: int, test: tuple[str | None, str, str]) -> None:
        if test_index not in self._seen:  # the same test for every provider and prompt
            self._seen[test_index] = test
            self._tests.setdefault(test, []).append(test_index)

    def names(self) -> dict[int, tuple[str, int, int]]:
        """testIdx -> (the test's name, its number, the repeat)."""
        tests = sorted(self._tests.items(), key=lambda item: min(item[1]))
        described: dict[str, int] = {}
        hashed: dict[tuple[str, str], int] = {}
        for (description, variables, _), _ in tests:
            if description is not None:
                described[description] = described.get(description, 0) + 1
                pair = (description, variables)
                hashed[pair] = hashed.get(pair, 0) + 1
        found: dict[int, tuple[str, int, int]] = {}
        for number, ((description, variables, _), indexes) in enumerate(tests):
            digest = _digest(variables)
            if description is not None and described[description] == 1:
                name = description
            elif description is not None and hashed[(description, variables)] == 1:
                name = f"{description}#{digest}"
            else:
                name = f"t{number}#{digest}"
            for repeat, index in enumerate(sorted(indexes), start=1):
                found[index] = (name, number, repeat)
        return found


def _provider(row: Mapping[str, Any]) -> str:
    provider = row.get("provider")
    if isinstance(provider, Mapping):
        return _text(provider.get("label") or provider.get("id"))
    return _text(provider)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _canonical(value: Any) -> str:
    """A canonical JSON form (keys sorted), to compare and hash values by."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _digest(canonical: str) -> str:
    """Eight hex digits of a canonical JSON form."""
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:8]


def _failed_assertions(grading: Any) -> list[str]:
    """The types of the failed assertions, depth-first in promptfoo's order."""
    if not isinstance(grading, Mapping):
        return []
    found: list[str] = []
    for component in grading.get("componentResults") or ():
        if isinstance(component, Mapping) and component.get("pass") is False:
            nested = _failed_assertions(component)
            found += nested or [_assertion_type(component)]
    if not found and grading.get("pass") is False and "assertion" in grading:
        found.append(_assertion_type(grading))
    return found


# How promptfoo words an assertion that could not run (promptfoo 0.121, seen in
# tests/data/promptfoo/infra, made by scripts/fixtures/promptfoo_infra.sh): a python assertion
# without an interpreter or whose script raised, a javascript assertion that threw, a check
# whose grader or endpoint could not be called (promptfoo's providers' errors).
INFRA_PREFIXES = ("Python code execution failed: ", "Custom function threw error: ",
                  "API call error: ", "API error: ")


def _failed_leaves(grading: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The failed assertions' results, depth-first in promptfoo's order."""
    found: list[Mapping[str, Any]] = []
    for component in grading.get("componentResults") or ():
        if isinstance(component, Mapping) and component.get("pass") is False:
            found += _failed_leaves(component) or [component]
    return found


def could_not_run(grading: Any) -> bool:
    """Every failed assertion of the row failed because it could not run (see
    ``INFRA_PREFIXES``): the output was never judged. One assertion that ran and failed
    makes it the system's failure."""
    if not isinstance(grading, Mapping):
        return False
    leaves = _failed_leaves(grading) or ([grading] if grading.get("pass") is False else [])
    return bool(leaves) and all(
        isinstance(leaf.get("reason"), str) and leaf["reason"].startswith(INFRA_PREFIXES)
        for leaf in leaves)


def _assertion_type(result: Mapping[str, Any]) -> str:
    assertion = result.get("assertion")
    kind = assertion.get("type") if isinstance(assertion, Mapping) else None
    return kind if isinstance(kind, str) else "unknown"


def _reason(row: Mapping[str, Any]) -> str | None:
    """Why promptfoo says the row failed, in its own words: the row's error (the failed
    assertion's reason, or the provider's error), else its grading's reason."""
    error = row.get("error")
    if isinstance(error, str) and error:
        return error
    grading = row.get("gradingResult")
    said = grading.get("reason") if isinstance(grading, Mapping) else None
    return said if isinstance(said, str) and said and not row.get("success") else None


def _cross_check(cases: list[dict[str, Any]], stats: Any) -> list[str]:
    """What the rows contradict in ``results.stats`` (one line each)."""
    if not isinstance(stats, Mapping):
        return [f"results.stats is {describe(stats)}, not an object"]
    passed = sum(1 for case in cases if case["success"])
    errors = sum(1 for case in cases if not case["success"]
                 and case["failure_reason"] == PROVIDER_ERROR)
    counted = {"successes": passed, "failures": len(cases) - passed, "errors": 0}
    if "errors" in stats:  # results v3 counts errors apart from failures
        counted.update(failures=len(cases) - passed - errors, errors=errors)
    found = []
    for key, count in counted.items():
        recorded = stats.get(key)
        if key in stats and recorded != count:
            found.append(f"results.stats.{key} is {recorded!r}, yet {count} rows say so")
    return found
