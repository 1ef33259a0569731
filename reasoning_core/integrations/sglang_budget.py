"""Reasoning budgets in SGLang: a ``CustomLogitProcessor`` over reasoning-core's automaton.

Start the server with ``--enable-custom-logit-processor`` and send, per request::

    custom_logit_processor = ReasoningBudgetLogitProcessor.to_str()
    custom_params = {"reasoning_budget": 256, "reasoning_parser": "qwen3"}

(``"reasoning_budget_closing_text"`` optionally adds a sentence before the end
delimiter).  ``reasoning_parser`` is an SGLang parser name or one of ours.
The family's own end sequence is forced (several tokens where the vocabulary
needs them, tool-call openers and channel formats understood), unlike a
processor that knows one start and one end id.

SGLang makes a new processor object per batch and hands it each request's
``Req``; the budget state lives on the request, and each call reads only the
output ids added since the last call.  Only rows that must take a forced
token are touched.  Speculative decoding (several rows per request) is not
supported: such rows are left alone.
"""
from __future__ import annotations

from typing import Any, Optional

try:
    import torch
    from sglang.srt.sampling.custom_logit_processor import CustomLogitProcessor
except ImportError as exc:  # pragma: no cover - exercised without SGLang
    raise ImportError(
        "reasoning_core.integrations.sglang_budget needs the 'sglang' package (pip install sglang); "
        "the rest of reasoning_core works without it"
    ) from exc

from ._forcing import force_rows
from ..budget import ReasoningBudget, _check_budget
from ..families import family_for_tokenizer
from ..parser import parser_class

__all__ = ["ReasoningBudgetLogitProcessor"]

_STATE = "_reasoning_core_budget"


def _budget_for(req: Any, params: dict) -> list:
    """``[budget, output ids taken]`` of a request, made on its first call."""
    state = getattr(req, _STATE, None)
    if state is not None:
        return state
    budget = _check_budget(params["reasoning_budget"], "reasoning_budget")
    name = params.get("reasoning_parser")
    if not isinstance(name, str) or not name:
        raise ValueError("custom_params needs 'reasoning_parser' (the family or SGLang parser name)")
    tok = getattr(req, "tokenizer", None)
    if tok is None:
        raise ValueError("the request carries no tokenizer: reasoning budgets need the server's tokenizer")
    try:
        family = family_for_tokenizer(name, tok, engine="sglang")
    except ValueError:
        family = family_for_tokenizer(name, tok)
    budget_obj = ReasoningBudget(parser_class(family)(tokenizer=tok), budget=budget, tokenizer=tok,
                                 closing_text=params.get("reasoning_budget_closing_text"))
    budget_obj.begin(list(req.origin_input_ids))
    state = [budget_obj, 0]
    setattr(req, _STATE, state)
    return state


class ReasoningBudgetLogitProcessor(CustomLogitProcessor):
    """Per-request reasoning budgets for SGLang (see the module docstring)."""

    def __call__(self, logits: "torch.Tensor", custom_param_list: Optional[list] = None) -> "torch.Tensor":
        if not custom_param_list:
            return logits
        seen: set[int] = set()
        rows, toks = [], []
        for i, params in enumerate(custom_param_list):
            if not params or params.get("reasoning_budget") is None:
                continue
            req = params.get("__req__")
            if req is None or id(req) in seen:  # several rows of one request: speculative decoding
                continue
            seen.add(id(req))
            state = _budget_for(req, params)
            budget, taken = state
            out = req.output_ids
            if len(out) > taken:
                budget.step(list(out[taken:]))
                state[1] = len(out)
            forced = budget.forced
            if forced is not None and forced < logits.shape[-1]:
                rows.append(i)
                toks.append(forced)
        return force_rows(logits, rows, toks)
