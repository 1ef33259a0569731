"""Tool-call formats (work in progress)."""

from __future__ import annotations

from ._base import BaseToolParser

# our format name (and aliases) -> parser class, for reasoning_core.tools.create
PARSERS: dict[str, type[BaseToolParser]] = {}
# vLLM 0.33 tool-parser name -> our format name
VLLM_NAMES: dict[str, str] = {}
# SGLang 0.5.23 function-call parser name -> (our format, one-shot tool_index
# mode "tools"|"local", unlisted tools dropped one-shot, ... dropped streaming)
SGLANG_NAMES: dict[str, tuple[str, str, bool, bool]] = {}
# engine name -> why it is not served (the README lists these)
VLLM_UNSERVED: dict[str, str] = {}
SGLANG_UNSERVED: dict[str, str] = {}
