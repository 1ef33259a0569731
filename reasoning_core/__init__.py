"""reasoning-core: find the reasoning spans in LLM output at the token-id level.

The engine is compiled (Cython) unless it is missing or
``REASONING_CORE_NO_EXTENSIONS=1`` is set; ``BACKEND`` says which is live.
"""
from __future__ import annotations

from ._dispatch import BACKEND
from .batch import BatchStepResult, ReasoningBatch, ReasoningEndIds, thinking_end_ids
from .errors import ReasoningCoreWarning
from .families import FAMILIES, Family, parser_for_model
from .parser import (
    FamilyParser,
    LabelStripper,
    ReasoningParser,
    available_parsers,
    create,
    get_parser,
    get_parser_cls,
)
from .types import ParsedReasoningDelta, ReasoningSpan, TokenSplit

__version__ = "0.1.0"

__all__ = [
    "BACKEND",
    "BatchStepResult",
    "ReasoningBatch",
    "ReasoningCoreWarning",
    "ReasoningEndIds",
    "thinking_end_ids",
    "FAMILIES",
    "Family",
    "FamilyParser",
    "LabelStripper",
    "ParsedReasoningDelta",
    "ReasoningParser",
    "ReasoningSpan",
    "TokenSplit",
    "available_parsers",
    "create",
    "get_parser",
    "get_parser_cls",
    "parser_for_model",
]


def __getattr__(name: str):
    # Heavier pieces load on first use, so importing the package stays cheap.
    if name in ("text_parser", "TextReasoningParser"):
        from . import text

        return getattr(text, name)
    if name in ("ReasoningStreamDecoder", "StreamDelta"):
        from . import decode

        return getattr(decode, name)
    raise AttributeError(f"module 'reasoning_core' has no attribute {name!r}")
