"""HELM: ``per_instance_stats.json`` of a run folder (``benchmark_output/runs/<suite>/<spec>/``).

The file is a list of instances, each with ``instance_id``, ``train_trial_index``, an
optional ``perturbation`` and ``stats``: a list of ``{name: {name, split, ...}, count,
sum, mean, ...}``. Each instance (per trial and perturbation) becomes one case:

``id``
    ``<instance_id>#<train_trial_index>``, plus ``@<perturbation name>`` (and its other
    fields, as compact JSON) for a perturbed instance: perturbations stay apart.
``stats``
    The stats flattened by ``name.name`` to their ``mean`` (``sum / count`` when no
    mean is written; null when ``count`` is 0). A stat whose name carries its own
    ``perturbation`` is kept as ``<name>@<perturbation name>``.
``metric``, ``score``
    The run's main metric and its value: ``MAIN_METRICS`` by the scenario (the run-spec
    folder's name before ``:``), else the first of ``exact_match``, ``quasi_exact_match``,
    ``f1_score``, ... the instance has.
``instance_id``, ``train_trial_index``, ``perturbation``
    As written (``perturbation`` as its name).

The report is named by its run-spec folder (``mmlu:subject=philosophy,...``). The run
folder's other files (``stats.json``, ``instances.json``, ``display_predictions.json``,
``scenario_state.json``, ...) are recognised and skipped: ``stats.json`` holds the run's
aggregates, not cases.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .jsonfile import Misshapen, describe, load_json, read_bytes
from .readers import Reader, ReaderOutput

if TYPE_CHECKING:
    from pathlib import Path

# HELM's main metric per scenario (its schema's run groups), where exact_match is not it.
MAIN_METRICS: dict[str, str] = {
    "narrative_qa": "f1_score", "natural_qa": "f1_score", "quac": "f1_score",
    "boolq": "quasi_exact_match", "imdb": "quasi_exact_match", "raft": "quasi_exact_match",
    "civil_comments": "quasi_exact_match", "truthful_qa": "exact_match",
    "summarization_cnndm": "rouge_2", "summarization_xsum": "rouge_2",
    "math": "math_equiv_chain_of_thought", "gsm": "exact_match_indicator",
    "ifeval": "ifeval_strict_accuracy", "wmt_14": "bleu_4",
}
PREFERRED = ("exact_match", "quasi_exact_match", "f1_score", "exact_match_indicator",
             "math_equiv_chain_of_thought", "rouge_l", "bleu_4")


def _elements(data: Any) -> list[Mapping[str, Any]] | None:
    if not isinstance(data, list) or not data or not isinstance(data[0], Mapping):
        return None
    return data


class HelmReader(Reader):
    """HELM run-folder files; ``per_instance_stats.json`` is gated (module docstring)."""

    name: str = "helm"
    suffixes: tuple[str, ...] = (".json",)
    taxonomy: str = "helm"
    # a file's head holds one of these whenever ``claims`` says yes (None: no such list)
    probe: tuple[bytes, ...] | None = (b'"instance_id"', b'"adapter_spec"', b'"sum_squared"')

    def claims(self, head: bytes) -> bool:
        return (b'"instance_id"' in head or b'"adapter_spec"' in head
                or (b'"name"' in head and b'"split"' in head and b'"sum_squared"' in head))

    def read(self, path: Path) -> ReaderOutput | None:
        data = load_json(path)
        if isinstance(data, Mapping) and ("adapter_spec" in data or "request_states" in data):
            return ReaderOutput(skipped="a HELM run's spec or state, not per-instance stats")
        elements = _elements(data)
        if elements is None:
            return None
        first = elements[0]
        if "stats" in first and "instance_id" in first:
            try:
                cases = [_case(e, i) for i, e in enumerate(elements)]
            except Misshapen as exc:
                raise exc.located(path, read_bytes(path)) from None
            scenario = path.parent.name.split(":", 1)[0]
            main = MAIN_METRICS.get(scenario)
            for case in cases:
                _score(case, main)
            return ReaderOutput(cases=cases, recorded={"num_predictions": len(cases)},
                                name="")
        if isinstance(first.get("name"), Mapping) and "sum_squared" in first:
            return ReaderOutput(skipped="HELM run statistics (aggregates); the run's "
                                "per_instance_stats.json is gated")
        if "instance_id" in first or ("references" in first and "input" in first):
            return ReaderOutput(skipped="HELM instances or predictions; the run's "
                                "per_instance_stats.json is gated")
        return None


def _case(element: Any, index: int) -> dict[str, Any]:
    if not isinstance(element, Mapping):
        raise Misshapen(f"instance #{index + 1} is {describe(element)}, not an object",
                        (index,))
    instance, trial = element.get("instance_id"), element.get("train_trial_index", 0)
    if not isinstance(instance, str) or type(trial) is not int:
        raise Misshapen(f"instance #{index + 1}: instance_id must be text and "
                        "train_trial_index a whole number", (index,))
    stats = element.get("stats")
    if not isinstance(stats, list):
        raise Misshapen(f"instance #{index + 1}: stats is {describe(stats)}; expected a list",
                        (index, "stats"))
    perturbation = element.get("perturbation")
    key = f"{instance}#{trial}"
    name = None
    if isinstance(perturbation, Mapping):
        name = str(perturbation.get("name"))
        rest = {k: v for k, v in perturbation.items() if k != "name"}
        key += f"@{name}" + (json.dumps(rest, sort_keys=True, separators=(",", ":"))
                             if rest else "")
    return {"id": key, "instance_id": instance, "train_trial_index": trial,
            "perturbation": name, "stats": _flatten(stats, index)}


def _flatten(stats: list[Any], index: int) -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for position, stat in enumerate(stats):
        named = stat.get("name") if isinstance(stat, Mapping) else None
        if not isinstance(named, Mapping) or not isinstance(named.get("name"), str):
            raise Misshapen(f"instance #{index + 1}: stat #{position + 1} has no name.name",
                            (index, "stats", position))
        key = named["name"]
        if isinstance(named.get("perturbation"), Mapping):
            key += f"@{named['perturbation'].get('name')}"
        flat[key] = _mean(stat)
    return flat


def _mean(stat: Mapping[str, Any]) -> float | None:
    mean, count, total = stat.get("mean"), stat.get("count"), stat.get("sum")
    if isinstance(mean, int | float) and not isinstance(mean, bool):
        return mean
    if isinstance(count, int) and count > 0 and isinstance(total, int | float):
        return total / count
    return None


def _score(case: dict[str, Any], main: str | None) -> None:
    stats = case["stats"]
    metric = main if main is not None else next((m for m in PREFERRED if m in stats),
                                                PREFERRED[0])
    case["metric"], case["score"] = metric, stats.get(metric)
