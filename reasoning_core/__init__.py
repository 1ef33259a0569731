"""reasoning_core: find the reasoning spans in LLM output at the token-id level.

Installed from PyPI as ``reasoning-spans``.  The engine is compiled (Cython)
unless it is missing or ``REASONING_CORE_NO_EXTENSIONS=1`` is set; ``BACKEND``
says which is live.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._dispatch import BACKEND
from .batch import BatchStepResult, ReasoningBatch, ReasoningEndIds, thinking_end_ids
from .errors import CompiledEngineMissingWarning, ReasoningCoreWarning
from .families import FAMILIES, Family, family_for_tokenizer, make_family, parser_for_model
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

if TYPE_CHECKING:  # loaded on first use at run time (see __getattr__)
    from .budget import BudgetBatch, GrammarRegion, ReasoningBudget
    from .decode import ReasoningStreamDecoder, StreamDelta
    from .text import TextReasoningParser, text_parser

# The one place for the version: pyproject.toml reads it from here.
__version__ = "0.1.0"

__all__ = [
    "BACKEND",
    "BatchStepResult",
    "BudgetBatch",
    "CompiledEngineMissingWarning",
    "GrammarRegion",
    "ReasoningBatch",
    "ReasoningBudget",
    "ReasoningCoreWarning",
    "ReasoningEndIds",
    "thinking_end_ids",
    "FAMILIES",
    "Family",
    "family_for_tokenizer",
    "make_family",
    "FamilyParser",
    "LabelStripper",
    "ParsedReasoningDelta",
    "ReasoningParser",
    "ReasoningSpan",
    "TokenSplit",
    "TextReasoningParser",
    "ReasoningStreamDecoder",
    "StreamDelta",
    "available_parsers",
    "create",
    "get_parser",
    "get_parser_cls",
    "parser_for_model",
    "text_parser",
]

# Heavier pieces load on first use, so importing the package stays cheap.
_LAZY = {
    "ReasoningBudget": "budget",
    "BudgetBatch": "budget",
    "GrammarRegion": "budget",
    "text_parser": "text",
    "TextReasoningParser": "text",
    "ReasoningStreamDecoder": "decode",
    "StreamDelta": "decode",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'reasoning_core' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
