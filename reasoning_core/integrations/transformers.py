"""Reasoning budgets inside Hugging Face ``generate()``: a ``LogitsProcessor``.

``ReasoningBudgetProcessor("qwen3", budget=256, tokenizer=tok)`` goes into
``generate(..., logits_processor=LogitsProcessorList([proc]))``.  Each row of
the batch is a request: its prompt seeds the parser's state (a template that
opened ``<think>`` starts inside reasoning), every generated token advances
it, and once a row's budget is spent its scores allow only the token that
closes reasoning (see :mod:`reasoning_core.budget` for the rules).  Only those
rows are touched, on whatever device the scores live.

One processor serves one ``generate()`` call at a time; a call whose input is
not the previous call's plus one token starts over from the prompts (or call
``reset()``).  Beam search reorders rows between steps, which a per-row state
cannot follow: use greedy search or sampling.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

try:
    import torch
    from transformers import LogitsProcessor
except ImportError as exc:  # pragma: no cover - exercised without them
    raise ImportError(
        "reasoning_core.integrations.transformers needs the 'torch' and 'transformers' packages "
        "(pip install torch transformers); the rest of reasoning_core works without them"
    ) from exc

from ._forcing import force_rows
from ..budget import BudgetBatch, _check_budget
from ..parser import FamilyParser

__all__ = ["ReasoningBudgetProcessor"]


class ReasoningBudgetProcessor(LogitsProcessor):
    """Force reasoning to close once a row has thought ``budget`` tokens.

    ``budgets`` (one per row) overrides ``budget`` for a batch whose rows
    have different limits.  ``closing_text`` and ``soft_margin`` are
    :class:`reasoning_core.ReasoningBudget`'s.
    """

    def __init__(self, parser: FamilyParser | str, *, budget: int, tokenizer: Any = None,
                 closing_text: Optional[str] = None, soft_margin: int = 0,
                 budgets: Optional[Sequence[int]] = None, backend: Optional[str] = None) -> None:
        self._args = dict(budget=_check_budget(budget, "budget"), tokenizer=tokenizer, closing_text=closing_text,
                          soft_margin=soft_margin, backend=backend)
        self._parser = parser
        self._budgets = None if budgets is None else [_check_budget(b, "budgets entry") for b in budgets]
        self._batch: Optional[BudgetBatch] = None
        self._length = -1
        self._slots = np.zeros(0, dtype=np.int32)
        # Resolved once: a bad parser name or closing text fails here, not mid-generation.
        self._template = BudgetBatch(parser, 1, **self._args)

    def reset(self) -> None:
        """Forget the current generation; the next call starts from its prompts."""
        self._length = -1

    def _start(self, input_ids: "torch.Tensor") -> None:
        rows = int(input_ids.shape[0])
        if self._budgets is not None and len(self._budgets) != rows:
            raise ValueError(f"budgets has {len(self._budgets)} entries for a batch of {rows} rows")
        if self._batch is None or self._batch.capacity < rows:
            self._batch = BudgetBatch(self._template.batch.parser, rows, **self._args)
        prompts = input_ids.tolist()
        for r, prompt in enumerate(prompts):
            self._batch.open(r, prompt, budget=None if self._budgets is None else self._budgets[r])
        self._slots = np.arange(rows, dtype=np.int32)

    def __call__(self, input_ids: "torch.LongTensor", scores: "torch.FloatTensor") -> "torch.FloatTensor":
        length = int(input_ids.shape[1])
        if length != self._length + 1 or input_ids.shape[0] != self._slots.shape[0]:
            self._start(input_ids)
            forced = self._batch.forced(self._slots)
        else:
            last = input_ids[:, -1].to("cpu").numpy().astype(np.int32)
            forced = self._batch.step(self._slots, last).forced
        self._length = length
        rows = np.flatnonzero(forced >= 0)
        if rows.size:
            vocab = scores.shape[-1]
            rows = rows[forced[rows] < vocab]  # an end id outside the model's vocabulary cannot be forced
            force_rows(scores, rows, forced[rows])
        return scores
