"""Channel and markup tool formats, and the engines' names for formats we have.

Seed-OSS writes Qwen3-Coder's XML inside ``<seed:tool_call>``; Step-5 and
Poolside's V1 name formats we already parse (Qwen3-Coder, Laguna).
"""

from __future__ import annotations

from ..families import think_pair_of
from ._base import BaseToolParser, _drop, markers, valid_name
from ._xml_formats import Qwen3CoderToolParser

# ---------------------------------------------------------------------------- seed_oss

_SEED_CALL, _SEED_CALL_END = "<seed:tool_call>", "</seed:tool_call>"


class SeedOssToolParser(Qwen3CoderToolParser):
    """Seed-OSS: ``<seed:tool_call>\\n<function=NAME>\\n<parameter=K>\\nV\\n</parameter>\\n
    </function>\\n</seed:tool_call>``; ``<function=…>`` without the wrapper too.
    Qwen3-Coder's grammar under Seed's wrapper; reasoning is ``<seed:think>``."""

    format_name = "seed_oss"
    openers = (_SEED_CALL, "<function=")
    think_pairs = (think_pair_of("seed_oss"),)
    _IN_WRAPPER = markers("<function=", _SEED_CALL_END)
    _NAME_END = markers(">", "\n", "</function>", _SEED_CALL_END)
    _TO_FUNC_END = markers("</function>", _SEED_CALL_END)
    _PARAM_SCAN = markers("<parameter=", "</function>", _SEED_CALL_END)
    _KEY_END = markers(">", "</parameter>", "<parameter=", "</function>", _SEED_CALL_END)
    _VALUE_END = markers("</parameter>", "<parameter=", "</function>", _SEED_CALL_END)

    def _function(self):
        name, m = yield from self._text_until(self._NAME_END)
        name = name.strip()
        if m != ">" or not valid_name(name):
            self._fail()
            if m in (None, "</function>", _SEED_CALL_END):
                return m
            return (yield from self._until(self._TO_FUNC_END, _drop))
        self._open_call(name)
        return (yield from self._params(name, "<parameter=", str.strip))


# our format name (and aliases) -> parser class, for reasoning_core.tools.create
PARSERS: dict[str, type[BaseToolParser]] = {
    "seed_oss": SeedOssToolParser,
}
# vLLM 0.33 tool-parser name -> our format name
VLLM_NAMES: dict[str, str] = {
    "seed_oss": "seed_oss",
    # Qwen3EngineToolParser with Step-5's content whitespace kept (ours keeps it)
    "step5": "qwen3_coder",
    # GLM-4.5's pairs with Laguna's value rule (Poolside's own model)
    "poolside_v1": "laguna",
}
# SGLang 0.5.23 function-call parser name -> (our format, one-shot tool_index
# mode "tools"|"local", unlisted tools dropped one-shot, ... dropped streaming)
SGLANG_NAMES: dict[str, tuple[str, str, bool, bool]] = {
    "poolside_v1": ("laguna", "tools", True, True),
}
# engine name -> why it is not served (the README lists these)
VLLM_UNSERVED: dict[str, str] = {}
SGLANG_UNSERVED: dict[str, str] = {}
