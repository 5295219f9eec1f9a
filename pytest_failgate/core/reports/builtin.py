"""The report readers shipped with failgate (tried after any a plugin contributes).

Apart from ``readers`` (the interface), so that a reader may import the interface
without the interface importing the readers back.

A run reads a few formats of the ten, so a built-in reader is known by a row of
``BUILTIN`` (its name, suffixes and taxonomy, and a probe: byte strings of which a file's
head holds at least one whenever the reader claims it) and its module is imported only
when a file's head passes the probe; then the reader's own ``claims`` decides, as it
always did. Each row agrees with its reader's class and each probe with its ``claims``
(``tests/core/reports/test_builtin_readers.py``).
"""

from __future__ import annotations

import sys
from importlib import import_module
from typing import TYPE_CHECKING, Any

from ..base.classes import dataclass
from .readers import Reader, ToolRun

if TYPE_CHECKING:
    from pathlib import Path

    from .readers import ReaderOutput, ReportReader

# (module, class, name, suffixes, taxonomy, probe: None where the reader claims every file
# of its suffixes), in the order they are tried
BUILTIN: tuple[tuple[str, str, str, tuple[str, ...], str, tuple[bytes, ...] | None], ...] = (
    ("karenina", "KareninaJsonReader", "karenina-json", (".json",), "karenina",
     (b'"format_version"',)),
    ("karenina", "KareninaCsvReader", "karenina-csv", (".csv",), "karenina", None),
    ("promptfoo", "PromptfooReader", "promptfoo", (".json", ".jsonl"), "promptfoo",
     (b'"gradingResult"', b'"promptIdx"', b'"failureReason"', b'"evalId"')),
    ("inspect_ai", "InspectReader", "inspect_ai", (".json", ".eval"), "inspect_ai",
     (b"PK", b'"eval"')),
    ("deepeval", "DeepEvalReader", "deepeval", (".json",), "deepeval",
     (b'"testCases"', b'"conversationalTestCases"', b'"testRunData"')),
    ("lm_eval", "LmEvalSamplesReader", "lm-eval", (".jsonl", ".json"), "lm-eval",
     (b"doc_id", b'"lm_eval_version"', b'"higher_is_better"')),
    ("helm", "HelmReader", "helm", (".json",), "helm",
     (b'"instance_id"', b'"adapter_spec"', b'"sum_squared"')),
    ("openai_evals", "OpenAIEvalsReader", "openai-evals", (".jsonl",), "openai-evals",
     (b"data_source_idx",)),
    ("karenina_jsonld", "KareninaJsonLdReader", "karenina-jsonld", (".jsonld",), "karenina",
     (b'"dataFeedElement"', b"karenina")),
    ("ragrun", "RagRunReader", "rag-gate", (".jsonl", ".json"), "rag-gate",
     (b'"primary_failure"', b'"header"', b'"failure_distribution"', b'"source_run"',
      b'"metric_band"')),
)


class BuiltinReader(Reader):
    """A built-in reader by its row: its module imported the first time a file's head
    passes the probe, or it is asked to read."""

    def __init__(self, module: str, cls: str, name: str, suffixes: tuple[str, ...],
                 taxonomy: str, probe: tuple[bytes, ...] | None) -> None:
        self.module, self.cls, self.name = module, cls, name
        self.suffixes, self.taxonomy, self.probe = suffixes, taxonomy, probe
        self._loaded: Reader | None = None

    def loaded(self) -> Reader:
        """The reader itself (its module imported on first use)."""
        if self._loaded is None:
            found: type[Reader] = getattr(import_module(f"{__package__}.{self.module}"),
                                          self.cls)
            self._loaded = found()
        return self._loaded

    def claims(self, head: bytes) -> bool:
        if self.probe is not None and not any(marker in head for marker in self.probe):
            return False  # the reader's claims would say no: its module stays unloaded
        return self.loaded().claims(head)

    def read(self, path: Path) -> ReaderOutput | None:
        return self.loaded().read(path)

    def __repr__(self) -> str:
        return f"<built-in reader {self.name}>"


def builtin_readers() -> tuple[ReportReader, ...]:
    """The readers shipped with failgate, after any a plugin contributes."""
    return tuple(BuiltinReader(*row) for row in BUILTIN)


def tool_run(reader: Any) -> ToolRun | None:
    """How a reader's tool writes its files (``Reader.run``), a built-in reader's from its
    class (its module imported: the advice is asked only of a format a run has read)."""
    inner = getattr(reader, "_reader", reader)
    if isinstance(inner, BuiltinReader):
        inner = inner.loaded()
    run = getattr(inner, "run", None)
    return run if isinstance(run, ToolRun) else None


@dataclass(frozen=True)
class ReaderIdentity:
    """Who a reader is, for the guard and every front end: a built-in format (the same
    thing whether its module was imported eagerly or behind the byte probe), or a plugin's
    reader with the file of its code."""

    name: str
    builtin: bool
    source: str | None = None  # a plugin reader's code file (None: built-in, or unknown)


def reader_identity(reader: Any) -> ReaderIdentity:
    """The one answer to "which reader is this": built-in when it is a row of ``BUILTIN``
    (lazy) or an instance of a row's own class (imported eagerly); anything else, a
    subclass of a built-in reader included, is a plugin's reader, named with its source."""
    inner = getattr(reader, "_reader", reader)  # a plugin reader adapted to the interface
    name = str(getattr(reader, "name", ""))
    if isinstance(inner, BuiltinReader):
        row = (inner.module, inner.cls, inner.name, inner.suffixes, inner.taxonomy,
               inner.probe)
        if row in BUILTIN:
            return ReaderIdentity(name, True)
    for module, cls, *_ in BUILTIN:  # the class itself, never a name it could copy
        loaded = sys.modules.get(f"{__package__}.{module}")
        if loaded is not None and type(inner) is getattr(loaded, cls, None):
            return ReaderIdentity(name, True)
    return ReaderIdentity(name, False, code_file(inner))


def code_file(plugin: object) -> str | None:
    """The file of a plugin's code: a module's, else its class's module's (a reader
    object, a plugin instance)."""
    found = getattr(plugin, "__file__", None)
    if not isinstance(found, str):
        module = sys.modules.get(getattr(type(plugin), "__module__", ""))
        found = getattr(module, "__file__", None)
    if not isinstance(found, str):  # a module loaded outside sys.modules: its code's file
        code = [v.__code__ for v in vars(type(plugin)).values() if hasattr(v, "__code__")]
        found = code[0].co_filename if code else None
    return found if isinstance(found, str) else None
