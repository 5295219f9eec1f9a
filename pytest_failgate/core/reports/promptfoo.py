"""promptfoo's JSON output (``promptfoo eval -o results.json``), read natively.

Shapes read:

- the output file, results version 2 and 3: ``{"evalId", "results": {"version",
  "prompts", "results": [row, ...], "stats"}, "config", ...}``;
- the summary object alone (``promptfoo.evaluate()`` written as JSON):
  ``{"version", "results": [row, ...], "stats"}``;
- older exports: a bare list of rows (no ``failureReason``, no ``testIdx``).

Each row becomes one case with the fields the built-in ``promptfoo`` taxonomy
(``taxonomy/builtin/promptfoo.yaml``) reads:

``id``
    Stable across runs, so ``--failgate-baseline`` pairs the rows of two runs: the
    provider (its label, else its id), the provider's prompt (the n-th prompt it
    was run with: a prompt edit keeps the number), the test index, and a hash of the
    test's ``vars`` (``echo/0/t3#9f2c01ab``). The row's own ``id`` is a fresh UUID
    every run and is never used. With ``--repeat N`` promptfoo folds the repeats
    into ``testIdx``, so they stay distinct. Rows without ``testIdx`` (older
    exports) are numbered in file order among the rows of their provider and prompt.
``success``
    promptfoo's verdict; a case failed when it is false.
``failure_reason``
    ``failureReason``: 0 none, 1 an assertion failed, 2 an error (null in older
    exports).
``error``, ``graded``
    The row's error text, and whether it has a ``gradingResult``. promptfoo also sets
    ``error`` on assertion failures (the failing assertion's reason), so a provider
    error is ``failure_reason == 2``, or an ``error`` with no grading at all.
``failed_assertion``, ``failed_assertions``
    The type of the first failed assertion (in ``gradingResult.componentResults``
    order, nested sets searched depth-first), and the types of all of them.
``provider``, ``prompt``, ``test``, ``description``, ``score``, ``latency_ms``, ``cost``
    For slices and case listings.

``recorded`` keeps ``stats`` (``successes``, ``failures``, ``errors``) and
``num_predictions``; a row count that disagrees with them is a contradiction (the
report's ``consistency`` item fails).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

from .jsonfile import Loc, Misshapen, describe, parse_json_file
from .readers import ReaderOutput

if TYPE_CHECKING:
    from pathlib import Path

PROVIDER_ERROR = 2  # promptfoo's ResultFailureReason.ERROR
_MARKERS = (b'"gradingResult"', b'"promptIdx"', b'"failureReason"', b'"evalId"')


class PromptfooReader:
    """``promptfoo eval -o *.json`` output (see the module docstring)."""

    name: str = "promptfoo"
    suffixes: tuple[str, ...] = (".json",)
    taxonomy: str = "promptfoo"

    def claims(self, head: bytes) -> bool:
        """Whether the file's first bytes may be promptfoo's (a cheap filter)."""
        return any(marker in head for marker in _MARKERS)

    def read(self, path: Path) -> ReaderOutput | None:
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
    contradictions: list[str] | None = None
    if stats is not None:
        recorded["stats"] = stats
        contradictions = _cross_check(cases, stats)
    config = data.get("config") if isinstance(data, Mapping) else None
    shown = ({key: value for key, value in config.items() if key in CONFIG_KEYS}
             if isinstance(config, Mapping) else None)
    return ReaderOutput(cases, recorded, contradictions, config=shown)


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
    prompt_numbers: dict[str, dict[Any, int]] = {}  # provider -> its prompts, numbered
    positions: dict[tuple[str, int], int] = {}  # rows without testIdx, per provider prompt
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
        description = test_case.get("description") if isinstance(test_case, Mapping) else None
        yield {
            "id": f"{provider}/{prompt_number}/t{test}#{_vars_hash(row.get('vars'))}",
            "success": row["success"],
            "failure_reason": row.get("failureReason"),
            "error": row.get("error") or None,
            "graded": row.get("gradingResult") is not None,
            "failed_assertion": failed[0] if failed else None,
            "failed_assertions": failed,
            "provider": provider,
            "prompt": prompt_number,
            "test": test,
            "description": description,
            "score": row.get("score"),
            "latency_ms": row.get("latencyMs"),
            "cost": row.get("cost"),
        }


def _provider(row: Mapping[str, Any]) -> str:
    provider = row.get("provider")
    if isinstance(provider, Mapping):
        return _text(provider.get("label") or provider.get("id"))
    return _text(provider)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _vars_hash(variables: Any) -> str:
    """Eight hex digits of the test's vars, in a canonical JSON form."""
    canonical = json.dumps(variables, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
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


def _assertion_type(result: Mapping[str, Any]) -> str:
    assertion = result.get("assertion")
    kind = assertion.get("type") if isinstance(assertion, Mapping) else None
    return kind if isinstance(kind, str) else "unknown"


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
