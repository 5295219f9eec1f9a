"""OpenAI Evals: the output items of an eval run, as JSONL (one item per line).

Each line (``/evals/{eval}/runs/{run}/output_items``, as exported) has ``run_id``,
``data_source_idx``, ``item`` (the data row), ``sample`` (the model's output, with
``error`` when sampling failed), ``grades`` and ``passes`` (grader name -> passed).
Each line becomes one case:

``id``
    ``<run_id>/<data_source_idx>``: stable for a run, and a file may hold several runs.
``passes``, ``grades``
    As written (objects keyed by grader name).
``failed_grader``
    The first grader (in the file's order) whose ``passes`` value is not true; null
    when every grader passed.
``error``, ``error_type``
    ``sample.error.message`` (or the error as text) and its ``type``; null without one.
``run_id``, ``data_source_idx``, ``status``
    As written (``status`` only when the item records one).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..base.errors import FailgateError
from .jsonfile import describe, json_lines, top_level
from .readers import Reader, ReaderOutput

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


class OpenAIEvalsReader(Reader):
    """OpenAI Evals output items (module docstring)."""

    name: str = "openai-evals"
    suffixes: tuple[str, ...] = (".jsonl",)
    taxonomy: str = "openai-evals"
    # a file's head holds one of these whenever ``claims`` says yes (None: no such list)
    probe: tuple[bytes, ...] | None = (b"data_source_idx",)

    def claims(self, head: bytes) -> bool:
        """The first line's top level holds ``data_source_idx`` and ``passes`` (not merely
        those bytes somewhere in it)."""
        found = top_level(head.split(b"\n", 1)[0])
        return found is not None and {b"data_source_idx", b"passes"} <= found[0].keys()

    def read(self, path: Path) -> ReaderOutput | None:
        return ReaderOutput(cases=_cases(path))


def _cases(path: Path) -> Iterator[dict[str, Any]]:
    for number, row in json_lines(path, "an output item"):
        yield _case(row, path, number)


def _case(row: Mapping[str, Any], path: Path, line: int) -> dict[str, Any]:
    run, index, passes = row.get("run_id"), row.get("data_source_idx"), row.get("passes")
    if not isinstance(run, str) or type(index) is not int:
        raise FailgateError("an output item needs run_id (text) and data_source_idx (a whole "
                            "number)", path, line)
    if not isinstance(passes, Mapping):
        raise FailgateError(f"passes is {describe(passes)}; expected an object of grader "
                            "verdicts", path, line)
    sample = row.get("sample")
    error = sample.get("error") if isinstance(sample, Mapping) else None
    message = error_type = None
    if isinstance(error, Mapping):
        message = str(error.get("message") or error.get("code") or "error")
        error_type = error.get("type") if isinstance(error.get("type"), str) else None
    elif error:
        message = str(error)
    case = {
        "id": f"{run}/{index}", "run_id": run, "data_source_idx": index,
        "passes": dict(passes), "grades": row.get("grades"),
        "failed_grader": next((name for name, ok in passes.items() if ok is not True), None),
        "error": message, "error_type": error_type,
    }
    if isinstance(row.get("status"), str):
        case["status"] = row["status"]
    return case
