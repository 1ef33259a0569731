"""Tool-call parsers (MAX ``ToolParser`` protocol) for every output format the
serving engines parse, under our names and under Modular MAX 26.7's registry
names (vLLM's and SGLang's names are the integrations': ``engine_names``).

``create(name)`` returns a fresh per-request parser; ``available()`` lists every
name that resolves, aliases included.  ``format_for_family(family)`` is the
format name a reasoning family's models write, ``for_family(family)`` a fresh
parser for it.
"""

from __future__ import annotations

from .._shared import brief
from ._base import BaseToolParser
from ._json_formats import HermesToolParser, Llama3JsonToolParser, MistralToolParser
from ._max_formats import (
    DeepSeekV4ToolParser,
    Gemma4ToolParser,
    InklingToolParser,
    LagunaToolParser,
    MuseGlimmerToolParser,
)
from ._marker_formats import DeepSeekV31ToolParser, DeepSeekV3ToolParser, KimiK2ToolParser
from ._types import ParsedToolCall, ParsedToolCallDelta, ParsedToolResponse, ToolParser
from ._xml_formats import Glm45ToolParser, MiniMaxM2ToolParser, Qwen3CoderToolParser
from . import _markup_formats, _more_formats, _pythonic_formats, _tagged_json_formats

__all__ = [
    "BaseToolParser",
    "ParsedToolCall",
    "ParsedToolCallDelta",
    "ParsedToolResponse",
    "ToolParser",
    "available",
    "create",
    "for_family",
    "format_for_family",
    "get_parser_cls",
]

_REGISTRY: dict[str, type[BaseToolParser]] = {
    "hermes": HermesToolParser,
    "qwen3_coder": Qwen3CoderToolParser,
    "qwen3_5": Qwen3CoderToolParser,
    "llama3_json": Llama3JsonToolParser,
    "deepseek_v3": DeepSeekV3ToolParser,
    "deepseek_v31": DeepSeekV31ToolParser,
    "kimi_k2": KimiK2ToolParser,
    "glm45": Glm45ToolParser,
    "minimax_m2": MiniMaxM2ToolParser,
    "mistral": MistralToolParser,
    "deepseekv4": DeepSeekV4ToolParser,
    "gemma4": Gemma4ToolParser,
    "inkling": InklingToolParser,
    "laguna": LagunaToolParser,
    "muse_glimmer": MuseGlimmerToolParser,
    # Modular MAX 26.7's names for formats above (same grammar, checked against
    # MAX's parsers; glm45, minimax_m2 and qwen3_5 are spelled as ours)
    "deepseekv3": DeepSeekV3ToolParser,
    "deepseekv3_1": DeepSeekV31ToolParser,
    "kimik2_5": KimiK2ToolParser,
    "llama": Llama3JsonToolParser,
}

# Further formats, each module with its own names (and the engines' names for
# them, read by the integrations through ``engine_names``).
_FORMAT_MODULES = (_pythonic_formats, _tagged_json_formats, _markup_formats, _more_formats)


def _add_format_modules() -> None:
    for mod in _FORMAT_MODULES:
        for name, cls in mod.PARSERS.items():
            if _REGISTRY.setdefault(name, cls) is not cls:  # pragma: no cover - a wiring mistake
                raise RuntimeError(f"tool format name {name!r} registered twice")


_add_format_modules()


def engine_names(engine: str) -> tuple[dict, dict]:
    """``(served, unserved)`` for ``engine`` ("vllm" or "sglang") from the
    format modules: engine name -> our format (SGLang: its spec tuple), and
    engine name -> why it is not served."""
    served: dict = {}
    unserved: dict[str, str] = {}
    for mod in _FORMAT_MODULES:
        served.update(getattr(mod, f"{engine.upper()}_NAMES"))
        unserved.update(getattr(mod, f"{engine.upper()}_UNSERVED"))
    return served, unserved


def available() -> list[str]:
    """Every tool format name ``create`` takes, aliases included, sorted."""
    return sorted(_REGISTRY)


def get_parser_cls(name: str) -> type[BaseToolParser]:
    """The parser class of tool format ``name``; ``ValueError`` naming the unknown name."""
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown tool parser {brief(name)}; available: {', '.join(available())}"
        ) from None


def create(name: str) -> BaseToolParser:
    """A fresh parser (one per request) for tool format ``name``."""
    return get_parser_cls(name)()


def format_for_family(name: str) -> str | None:
    """The name of the tool format a reasoning family's models write
    (``Family.tool_parser``, a name ``create`` takes), or None when the family
    has no tool format here.  ``ValueError`` for an unknown family."""
    from ..families import get_family

    return get_family(name).tool_parser


def for_family(name: str) -> BaseToolParser | None:
    """A fresh tool *parser* (not its name) for the format a reasoning family's
    models write: ``create(format_for_family(name))``, or None when the family
    has no tool format here.  ``ValueError`` for an unknown family."""
    fmt = format_for_family(name)
    return None if fmt is None else create(fmt)
