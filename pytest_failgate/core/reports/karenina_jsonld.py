"""karenina benchmark checkpoints (``.jsonld``): the verification results they carry.

A checkpoint is a schema.org ``DataFeed``; each ``dataFeedElement`` holds a question
(``item``) whose ``additionalProperty`` list may carry ``custom_verification_results``:
``{template_result: {passed, parsed_value}, rubric_results: {trait: {passed, score}}}``.
Each question with results becomes one case in the JSON export's nested shape, so the
built-in ``karenina`` taxonomy reads it:

- ``id`` and ``metadata.question_id``: the element's ``@id``;
- ``metadata.failure``: null when the template passed, else ``{category: content, group:
  content, stage: verify_template}`` (karenina's rule 2: verification ran and failed);
- ``template``: ``template_verification_performed: true`` and ``verify_result``;
- ``rubric``: the trait results as written (informational; rubric traits are scores,
  not karenina failure categories).

Questions without results are not cases; a checkpoint with none is a report with zero
cases (an error item, never a pass).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .jsonfile import Misshapen, describe, load_json, read_bytes
from .readers import Reader, ReaderOutput

if TYPE_CHECKING:
    from pathlib import Path

RESULTS = "custom_verification_results"


class KareninaJsonLdReader(Reader):
    """karenina ``.jsonld`` benchmark checkpoints (module docstring)."""

    name: str = "karenina-jsonld"
    suffixes: tuple[str, ...] = (".jsonld",)
    taxonomy: str = "karenina"
    # a file's head holds one of these whenever ``claims`` says yes (None: no such list)
    probe: tuple[bytes, ...] | None = (b'"dataFeedElement"', b"karenina")

    def claims(self, head: bytes) -> bool:
        return b'"dataFeedElement"' in head or b"karenina" in head

    def read(self, path: Path) -> ReaderOutput | None:
        data = load_json(path)
        if not isinstance(data, Mapping) or "dataFeedElement" not in data:
            return None
        elements = data["dataFeedElement"]
        try:
            if not isinstance(elements, list):
                raise Misshapen(f"dataFeedElement is {describe(elements)}; expected a list",
                                ("dataFeedElement",))
            cases = [case for index, element in enumerate(elements)
                     if (case := _case(element, index)) is not None]
        except Misshapen as exc:
            raise exc.located(path, read_bytes(path)) from None
        return ReaderOutput(cases=cases, recorded={"num_predictions": len(cases)})


def _case(element: Any, index: int) -> dict[str, Any] | None:
    loc = ("dataFeedElement", index)
    if not isinstance(element, Mapping):
        raise Misshapen(f"question #{index + 1} is {describe(element)}, not an object", loc)
    item = element.get("item")
    properties = item.get("additionalProperty") if isinstance(item, Mapping) else None
    results = next((p.get("value") for p in properties or ()
                    if isinstance(p, Mapping) and p.get("name") == RESULTS), None)
    if results is None:
        return None
    template = results.get("template_result") if isinstance(results, Mapping) else None
    passed = template.get("passed") if isinstance(template, Mapping) else None
    if not isinstance(passed, bool):
        raise Misshapen(f"question #{index + 1}: {RESULTS}.template_result.passed is "
                        f"{describe(passed)}; expected true or false", loc)
    question = str(element.get("@id") or f"#{index + 1}")
    failure = None if passed else {"category": "content", "group": "content",
                                   "stage": "verify_template",
                                   "reason": "the template's verify() returned false"}
    return {
        "id": question,
        "metadata": {"question_id": question, "failure": failure, "caveats": []},
        "template": {"template_verification_performed": True, "verify_result": passed},
        "rubric": results.get("rubric_results"),
    }
