"""reasoning-core for ``max serve --custom-architectures`` (see ``__init__.py``).

MAX imports this file as a top-level module (its directory appended to
``sys.path``) before it resolves ``--reasoning-parser`` / ``--tool-parser``.
Importing it registers our parsers as ``rc_<name>``; with
``REASONING_CORE_REPLACE=1`` (the switch the vLLM and SGLang plugins read too)
they also take MAX's own names, so an architecture's default parsers and every
behaviour MAX keys on those names are ours.

MAX requires a non-empty ``ARCHITECTURES`` list: it holds one architecture
under a name no checkpoint uses (MAX's own Qwen 3.5 text model with our
parsers as its defaults), so no model MAX would have served changes.
"""
from __future__ import annotations

import dataclasses
import warnings

from reasoning_core.integrations import max as _rc_max

# Our names always; MAX's own names too when REASONING_CORE_REPLACE is on.
_rc_max.register()
if _rc_max.replace_requested():
    _rc_max.register(replace=True)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from max.pipelines.architectures.qwen3_5 import qwen3_5_text_arch as _base

ARCHITECTURES = [
    dataclasses.replace(_base, name="ReasoningCoreQwen3_5ForCausalLM", example_repo_ids=[],
                        reasoning_parser="rc_qwen3_5", tool_parser="rc_qwen3_5"),
]
