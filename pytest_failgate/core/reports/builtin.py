"""The report readers shipped with failgate (tried after any a plugin contributes).

Apart from ``readers`` (the interface), so that a reader may import the interface
without the interface importing the readers back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .deepeval import DeepEvalReader
from .helm import HelmReader
from .inspect_ai import InspectReader
from .karenina import KareninaCsvReader, KareninaJsonReader
from .karenina_jsonld import KareninaJsonLdReader
from .lm_eval import LmEvalSamplesReader
from .openai_evals import OpenAIEvalsReader
from .promptfoo import PromptfooReader
from .ragrun import RagRunReader

if TYPE_CHECKING:
    from .readers import ReportReader


def builtin_readers() -> tuple[ReportReader, ...]:
    """The readers shipped with failgate, after any a plugin contributes."""
    return (KareninaJsonReader(), KareninaCsvReader(), PromptfooReader(), InspectReader(),
            DeepEvalReader(), LmEvalSamplesReader(), HelmReader(), OpenAIEvalsReader(),
            KareninaJsonLdReader(), RagRunReader())
