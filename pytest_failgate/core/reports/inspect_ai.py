"""Inspect AI evaluation logs, read natively: ``.json`` and the default binary ``.eval``.

A ``.json`` log is one object: ``{"version", "status", "eval": {"task", "model", ...},
"results", "samples": [...]}``. An ``.eval`` log is a zip archive of
``header.json`` (the same object without samples; ``_journal/start.json`` while a
run is unfinished, or after it was killed: such a log's status is ``started``, as
Inspect reads it) and ``samples/<id>_epoch_<n>.json``, each member zstd-compressed
(see ``zipzstd``: reading them needs the ``inspect`` extra).

Each sample of each epoch is one case with the fields the built-in ``inspect_ai``
taxonomy (``taxonomy/builtin/inspect_ai.yaml``) reads:

``id``
    ``<sample id>#<epoch>`` (``france#2``): stable across runs, while the log's
    ``uuid``, ``eval_id``, ``run_id`` and ``task_id`` change every run.
``error``
    The sample's error message (null when it ran to the end).
``limit``
    The type of the limit it hit (``message``, ``token``, ``time``, ``working``,
    ``context``, ``turn``, ``cost``, ``operator``, ``custom``), or null.
``credit``, ``failed_scorer``, ``failed_value``
    How much credit the sample's scores give, read as Inspect's own ``accuracy()``
    reads them (``value_to_float``): ``C``, true, ``"yes"`` and ``"true"`` are 1;
    ``P`` is 0.5; ``I``, ``N``, false, ``"no"`` and ``"false"`` are 0; a number (or a
    numeric string) is itself; a list or map value is read element by element.
    ``credit`` is the lowest credit among all scorers (and elements);
    ``failed_scorer`` names where it came from (``scorer`` or ``scorer.key``) and
    ``failed_value`` is the value there, whenever ``credit < 1``. A value that is
    none of these (another string, null) gives credit 0. A sample with no scores has
    ``credit`` null.
``passed``
    The pass rule: no error, no limit, and every scorer gives full credit
    (``credit >= 1``). A partial score (``P``, 0.65) is a failure: the sample did not
    earn full credit.
``sample_id``, ``epoch``, ``scores`` (scorer -> value)
    For slices and listings.

The report is named after ``eval.task`` and ``eval.model`` (``arc_easy@ollama/qwen2.5``),
not after the timestamped file name. Inspect's log folder keeps every run: of the logs of
one task and model in a folder, the latest (``eval.created``) is gated and the others are
listed as skipped. ``recorded`` keeps ``num_predictions``, the log's ``status``
(``success``, ``error``, ``cancelled``, ``started``) and its ``results`` block.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..base.errors import FailgateError
from .jsonfile import Loc, Misshapen, describe, loads, parse_json_file
from .readers import Reader, ReaderOutput, ToolRun, repeat_of
from .zipzstd import ZipArchive

if TYPE_CHECKING:
    from pathlib import Path

_SAMPLE_MEMBER = re.compile(r"samples/(.+)_epoch_([0-9]+)\.json")


class InspectReader(Reader):
    """Inspect AI logs, ``.json`` and ``.eval`` (see the module docstring)."""

    name: str = "inspect_ai"
    suffixes: tuple[str, ...] = (".json", ".eval")
    taxonomy: str = "inspect_ai"
    run: ToolRun | None = ToolRun("inspect eval task.py --log-dir logs")
    # a file's head holds one of these whenever ``claims`` says yes (None: no such list)
    probe: tuple[bytes, ...] | None = (b"PK", b'"eval"')

    def claims(self, head: bytes) -> bool:
        """Whether the file's first bytes may be an Inspect log (a cheap filter)."""
        return head.startswith(b"PK") or b'"eval"' in head

    def read(self, path: Path) -> ReaderOutput | None:
        if path.suffix == ".eval":
            header, samples = _read_eval(path)
            try:
                return read_inspect(header, samples)
            except Misshapen as exc:  # a member's line means little: name the sample
                raise FailgateError(exc.message, path) from None
        return parse_json_file(path, read_json_log)


def created(header: Mapping[str, Any]) -> float:
    """When the run started (``eval.created``), in seconds since the epoch; ``-inf`` when
    the header does not say (its file name then orders it among its task's logs)."""
    text = header["eval"].get("created")
    if not isinstance(text, str):
        return -math.inf
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return -math.inf
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


# The eval block's keys that describe the configuration (not ids, times or packages):
# what a comparison with a baseline log diffs.
CONFIG_KEYS = ("model", "model_args", "model_generate_config", "task_args", "task_version",
               "solver", "solver_args", "config")


def looks_like_log(data: Any) -> bool:
    """An Inspect log: an ``eval`` block naming its task, and a status or version."""
    if not isinstance(data, Mapping):
        return False
    spec = data.get("eval")
    return (isinstance(spec, Mapping) and isinstance(spec.get("task"), str)
            and ("status" in data or "version" in data))


def report_name(header: Mapping[str, Any]) -> str:
    """``task@model``, the task's last path part: the same run after run."""
    spec = header["eval"]
    task = str(spec["task"]).rsplit("/", 1)[-1]
    model = spec.get("model")
    return f"{task}@{model}" if isinstance(model, str) and model else task


def read_json_log(data: Any) -> ReaderOutput | None:
    """The cases of a decoded ``.json`` log, or ``None`` when it is not an Inspect log."""
    return read_inspect(data, data.get("samples")) if looks_like_log(data) else None


def read_inspect(header: Mapping[str, Any], samples: Any) -> ReaderOutput:
    """The cases of one log's samples; ``Misshapen`` for a malformed sample."""
    if samples is None:
        samples = []
    if not isinstance(samples, list):
        raise Misshapen(f"the log's samples are {describe(samples)}; expected a list",
                        ("samples",))
    cases = [sample_case(sample, ("samples", index))
             for index, sample in enumerate(samples)]
    if not cases:
        return _header_only(header)
    recorded: dict[str, Any] = {"num_predictions": len(cases)}
    if isinstance(header.get("results"), Mapping):
        recorded["results"] = header["results"]
    if isinstance(header.get("status"), str):
        recorded["status"] = header["status"]
    spec = header["eval"]
    if isinstance(spec.get("created"), str):
        recorded["ran"] = (spec["created"], "eval.created")  # when it ran
    config = {key: spec[key] for key in CONFIG_KEYS if key in spec}
    return ReaderOutput(cases=cases, recorded=recorded, name=report_name(header), config=config,
                        run_order=(created(header),), repeat_unit=repeat_of,
                        interrupted=interrupted(header), instrument=instrument(spec))


def instrument(spec: Mapping[str, Any]) -> dict[str, str]:
    """What measured the samples, from the eval spec: the scorers (with their options),
    each model role (the ``grader``'s model), the dataset and the task's version."""
    found: dict[str, str] = {}
    scorers = spec.get("scorers")
    if isinstance(scorers, list):
        names = []
        for scorer in scorers:
            if isinstance(scorer, Mapping) and isinstance(scorer.get("name"), str):
                options = scorer.get("options")
                names.append(scorer["name"] + (f" {json.dumps(options, sort_keys=True)}"
                                               if options else ""))
        found["scorers"] = ", ".join(names)
    roles = spec.get("model_roles")
    if isinstance(roles, Mapping):
        for role, model in sorted(roles.items()):
            name = model.get("model") if isinstance(model, Mapping) else model
            if isinstance(name, str):
                found[f"{role}_model"] = name
    dataset = spec.get("dataset")
    if isinstance(dataset, Mapping):
        name = dataset.get("name") or dataset.get("location") or "inline"
        size = dataset.get("samples")
        found["dataset"] = f"{name}" + (f" ({size} samples)" if type(size) is int else "")
    if "task_version" in spec:
        found["task_version"] = str(spec["task_version"])
    return found


def interrupted(header: Mapping[str, Any]) -> str | None:
    """Why the log's run did not finish, from its ``status`` (``error``: it crashed;
    ``cancelled``; ``started``: still running, or killed); None when it finished."""
    status = header.get("status")
    if status in ("error", "cancelled", "started"):
        what = {"error": "it stopped on an error", "cancelled": "it was cancelled",
                "started": "it never finished (still running, or killed)"}[status]
        error = header.get("error")
        message = error.get("message") if isinstance(error, Mapping) else None
        detail = f": {str(message).splitlines()[0][:200]}" if message else ""
        return f"the log's status is {status}: {what}{detail}"
    return None


def _header_only(header: Mapping[str, Any]) -> ReaderOutput:
    """A log without samples (``log_samples=False``, trimmed, or not yet written): an
    aggregate of what its ``results`` record, which counts no category.

    ``recorded`` holds ``num_predictions`` (``results.total_samples``) and each scorer's
    metrics as ``<scorer>.<metric>`` (and as ``<metric>`` alone when one scorer has it),
    with ``ci.<name>.n`` = the scorer's ``scored_samples``, so metric floors can read them.
    """
    results = header.get("results")
    results = results if isinstance(results, Mapping) else {}
    recorded: dict[str, Any] = {}
    total = results.get("total_samples")
    if type(total) is int:
        recorded["num_predictions"] = total
    values: dict[str, list[tuple[Any, Any]]] = {}
    for score in results.get("scores") or ():
        if not isinstance(score, Mapping) or not isinstance(score.get("metrics"), Mapping):
            continue
        for metric_name, metric in score["metrics"].items():
            value = metric.get("value") if isinstance(metric, Mapping) else None
            if isinstance(value, int | float) and not isinstance(value, bool):
                pair = (value, score.get("scored_samples"))
                values.setdefault(f"{score.get('name')}.{metric_name}", []).append(pair)
                values.setdefault(str(metric_name), []).append(pair)
    ci: dict[str, dict[str, Any]] = {}
    for name, found in values.items():
        if len(found) == 1:  # a metric two scorers share is only kept under each's name
            recorded[name] = found[0][0]
            if type(found[0][1]) is int:
                ci[name] = {"n": found[0][1]}
    if ci:
        recorded["ci"] = ci
    status = header.get("status")
    if isinstance(status, str):
        recorded["status"] = status
    why = "the log holds no samples"
    if status in ("started", "error", "cancelled"):
        why += f" (its status is {status})"
    elif total:
        why += f" (written with log_samples=False, or trimmed; it records {total} samples)"
    return ReaderOutput(recorded=recorded, name=report_name(header), uncounted=why,
                        run_order=(created(header),), interrupted=interrupted(header))


def sample_case(sample: Any, loc: Loc) -> dict[str, Any]:
    """One sample of one epoch as a case (the fields the module docstring lists)."""
    position = int(loc[-1]) + 1
    if not isinstance(sample, Mapping):
        raise Misshapen(f"sample #{position} is {describe(sample)}, not an object", loc)
    sample_id, epoch = sample.get("id"), sample.get("epoch", 1)
    if not isinstance(sample_id, str | int) or isinstance(sample_id, bool):
        raise Misshapen(f"sample #{position}: its id is {describe(sample_id)}; expected a "
                        "string or a number", (*loc, "id"))
    if type(epoch) is not int:
        raise Misshapen(f"sample {sample_id}: its epoch is {describe(epoch)}; expected a "
                        "whole number", (*loc, "epoch"))
    error = sample.get("error")
    if isinstance(error, Mapping):
        error = error.get("message") or "error"
    limit = sample.get("limit")
    if isinstance(limit, Mapping):
        limit = limit.get("type") or "custom"
    scores = sample.get("scores") or {}
    if not isinstance(scores, Mapping):
        raise Misshapen(f"sample {sample_id}: its scores are {describe(scores)}; expected an "
                        "object", (*loc, "scores"))
    values = {name: score.get("value") if isinstance(score, Mapping) else score
              for name, score in scores.items()}
    credit, failed_scorer, failed_value = _lowest_credit(values)
    return {
        "id": f"{sample_id}#{epoch}",
        "sample_id": sample_id,
        "epoch": epoch,
        "error": str(error) if error else None,
        "limit": str(limit) if limit else None,
        "scores": values,
        "credit": credit,
        "failed_scorer": failed_scorer if credit is not None and credit < 1 else None,
        "failed_value": failed_value if credit is not None and credit < 1 else None,
        "passed": not error and not limit and credit is not None and credit >= 1,
    }


def credit_of(value: Any) -> float:
    """The credit Inspect's ``value_to_float`` gives a scalar score value."""
    if value == "C":
        return 1.0
    if value == "P":
        return 0.5
    if value in ("I", "N"):
        return 0.0
    if isinstance(value, bool | int | float):
        number = float(value)
        return number if math.isfinite(number) else 0.0
    if isinstance(value, str):
        word = value.strip().lower()
        if word in ("yes", "true"):
            return 1.0
        if word in ("no", "false"):
            return 0.0
        try:
            number = float(word)
        except ValueError:
            return 0.0
        return number if math.isfinite(number) else 0.0
    return 0.0


def _lowest_credit(values: Mapping[str, Any]) -> tuple[float | None, str | None, Any]:
    """The lowest credit among the scores, where it came from and its value (first wins)."""
    lowest: tuple[float | None, str | None, Any] = (None, None, None)
    for where, value in _leaves(values.items()):
        credit = credit_of(value)
        if lowest[0] is None or credit < lowest[0]:
            lowest = (credit, where, value)
    return lowest


def _leaves(items: Iterable[tuple[str, Any]]) -> Iterator[tuple[str, Any]]:
    for name, value in items:
        if isinstance(value, Mapping):
            yield from _leaves((f"{name}.{key}", inner) for key, inner in value.items())
        elif isinstance(value, list):
            yield from _leaves((f"{name}[{i}]", inner) for i, inner in enumerate(value))
        else:
            yield name, value


# ----------------------------------------------------------------------- .eval archives


def _read_eval(path: Path) -> tuple[Mapping[str, Any], list[Any]]:
    """The header and the samples of an ``.eval`` archive.

    ``summaries.json`` (what Inspect's own ``read_eval_log_sample_summaries`` reads: id,
    epoch, scores, error text and limit type per sample) is one member where the samples
    are one each, with their whole transcripts; it is read when present. An unfinished
    log has none, and its ``samples/`` members are read instead.
    """
    with ZipArchive(path) as archive:
        names = archive.names()
        header_name = next((n for n in ("header.json", "_journal/start.json") if n in names),
                           None)
        if header_name is None:
            raise FailgateError("an .eval archive without header.json or _journal/start.json "
                                "is not an Inspect log", path)
        header = _member_json(archive, header_name)
        if not looks_like_log(header):
            raise FailgateError(f"{header_name} in this .eval archive is not an Inspect log "
                                "header (no eval.task)", path)
        if header_name != "header.json":
            # Inspect writes header.json when the run ends; until then (and for ever, when
            # it was killed) the journal's start.json stands in, and has no status of its
            # own. Inspect's read_eval_log reads such a log as ``started``, and so does
            # this reader, whatever the journal holds: the run is not a finished one.
            header = {**header, "status": "started"}
        if "summaries.json" in names:
            summaries = _member_json(archive, "summaries.json")
            if not isinstance(summaries, list):
                raise FailgateError(f"summaries.json in this .eval archive is "
                                    f"{describe(summaries)}; expected a list", path)
            return header, summaries
        members = []
        for name in names:
            match = _SAMPLE_MEMBER.fullmatch(name)
            if match is not None:
                members.append((_natural(match.group(2)), _natural(match.group(1)), name))
        samples = [_member_json(archive, name) for _, _, name in sorted(members)]
    return header, samples


def _member_json(archive: ZipArchive, name: str) -> Any:
    try:
        return loads(archive.read(name), archive.path)
    except FailgateError as exc:
        if exc.message.startswith("member "):
            raise
        where = f" (line {exc.line}, column {exc.col})" if exc.line is not None else ""
        raise FailgateError(f"member {name}: {exc.message}{where}", archive.path) from None


def _natural(sample_id: str) -> tuple[int, int, str]:
    """Sort numeric ids by number, before the others (as Inspect's ``.json`` logs are).

    By their digits (fewer digits first), not by ``int``: a member name of 5,000 digits
    is a name, where ``int`` would raise Python's digit-limit error."""
    if sample_id.isascii() and sample_id.isdigit():
        digits = sample_id.lstrip("0")
        return (0, len(digits), digits)
    return (1, 0, sample_id)
