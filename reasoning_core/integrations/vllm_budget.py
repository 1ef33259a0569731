"""Reasoning budgets in vLLM: a V1 logits processor over reasoning-core's automaton.

Serve with ``vllm serve MODEL --reasoning-parser <name> --logits-processors
reasoning_core.integrations.vllm_budget:ReasoningBudgetLogitsProcessor`` and
give a request its budget as ``extra_args={"reasoning_budget": N}`` (in the
OpenAI API: ``"vllm_xargs": {"reasoning_budget": N}``); optional
``"reasoning_budget_closing_text"`` is said before the end delimiter.  When
vLLM's own thinking budget is not configured (no ``--reasoning-config``), a
request's ``thinking_token_budget`` is read too, so clients written for it
work unchanged.

The family comes from the server's ``--reasoning-parser`` (vLLM names and our
``rc_`` names alike), so every family's ends are known: several end markers,
tool-call openers, multi-token and channel ends.  Per step the processor
reads each budgeted request's new output tokens (O(new tokens), never a scan
of the output so far) and masks only the rows that must take a forced token.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

try:
    import torch
    from vllm.v1.sample.logits_processor.interface import BatchUpdate, LogitsProcessor, MoveDirectionality
except ImportError as exc:  # pragma: no cover - exercised without vLLM
    raise ImportError(
        "reasoning_core.integrations.vllm_budget needs the 'vllm' package (pip install vllm); "
        "the rest of reasoning_core works without it"
    ) from exc

from ._forcing import force_rows
from ..budget import BudgetBatch, _check_budget
from ..families import family_for_tokenizer
from ..parser import parser_class

__all__ = ["ReasoningBudgetLogitsProcessor", "BUDGET_KEY", "CLOSING_KEY"]

BUDGET_KEY = "reasoning_budget"
CLOSING_KEY = "reasoning_budget_closing_text"
# Default cap when the scheduler config does not say how many requests run at once.
_DEFAULT_CAPACITY = 256


def _reasoning_parser_name(vllm_config: Any) -> Optional[str]:
    for holder in ("structured_outputs_config", "reasoning_config", "decoding_config"):
        cfg = getattr(vllm_config, holder, None)
        name = getattr(cfg, "reasoning_parser", None) if cfg is not None else None
        if name:
            return str(name)
    return None


def _tokenizer(vllm_config: Any) -> Any:
    from vllm.tokenizers import cached_tokenizer_from_config

    return cached_tokenizer_from_config(vllm_config.model_config)


class ReasoningBudgetLogitsProcessor(LogitsProcessor):
    """vLLM V1 logits processor: per-request reasoning budgets (see the module docstring)."""

    @classmethod
    def validate_params(cls, sampling_params: Any) -> None:
        extra = getattr(sampling_params, "extra_args", None) or {}
        if BUDGET_KEY in extra:
            _check_budget(extra[BUDGET_KEY], BUDGET_KEY)
        closing = extra.get(CLOSING_KEY)
        if closing is not None and not isinstance(closing, str):
            raise ValueError(f"{CLOSING_KEY} must be a string, not {type(closing).__name__}")

    def __init__(self, vllm_config: Any, device: Any, is_pin_memory: bool) -> None:
        name = _reasoning_parser_name(vllm_config)
        self._enabled = bool(name)
        self.device = device
        self._rows: dict[int, list] = {}  # batch row -> [budget batch, slot, output ids (live list), ids taken]
        self._groups: Optional[list] = None  # rows and slots per budget batch, rebuilt when rows change
        if not self._enabled:
            return
        if name.startswith("rc_"):
            name = name[3:]
        self._tokenizer = _tokenizer(vllm_config)
        try:
            family = family_for_tokenizer(name, self._tokenizer, engine="vllm")
        except ValueError:
            family = family_for_tokenizer(name, self._tokenizer)  # one of our own family names
        self._parser = parser_class(family)(tokenizer=self._tokenizer)
        sched = getattr(vllm_config, "scheduler_config", None)
        self.capacity = int(getattr(sched, "max_num_seqs", 0) or _DEFAULT_CAPACITY)
        # vLLM's own thinking budget owns thinking_token_budget when it is configured.
        self._read_vllm_budget = getattr(vllm_config, "reasoning_config", None) is None
        self._batches: dict[Optional[str], BudgetBatch] = {}
        self._free = list(range(self.capacity - 1, -1, -1))

    def is_argmax_invariant(self) -> bool:
        return False  # forcing a token changes the greedy choice

    def _batch(self, closing: Optional[str]) -> BudgetBatch:
        batch = self._batches.get(closing)
        if batch is None:
            batch = self._batches[closing] = BudgetBatch(self._parser, self.capacity, budget=0,
                                                         tokenizer=self._tokenizer, closing_text=closing)
        return batch

    def _budget_of(self, params: Any) -> Optional[tuple[int, Optional[str]]]:
        extra = getattr(params, "extra_args", None) or {}
        budget = extra.get(BUDGET_KEY)
        if budget is None and self._read_vllm_budget:
            budget = getattr(params, "thinking_token_budget", None)
        if budget is None:
            return None
        return _check_budget(budget, BUDGET_KEY), extra.get(CLOSING_KEY)

    def _drop(self, index: int) -> None:
        row = self._rows.pop(index, None)
        if row is not None:
            row[0].close(row[1])
            self._free.append(row[1])
            self._groups = None

    def update_state(self, batch_update: Optional[BatchUpdate]) -> None:
        if not self._enabled:
            return
        if batch_update is not None:
            for index in batch_update.removed:
                self._drop(index)
            for index, params, prompt_ids, output_ids in batch_update.added:
                self._drop(index)
                want = self._budget_of(params)
                if want is None or not self._free:
                    continue
                budget, closing = want
                batch = self._batch(closing)
                slot = self._free.pop()
                batch.open(slot, prompt_ids, budget=budget)
                self._rows[index] = [batch, slot, output_ids, 0]
            for a, b, direction in batch_update.moved:
                ra, rb = self._rows.pop(a, None), self._rows.pop(b, None)
                if direction == MoveDirectionality.SWAP:
                    if ra is not None:
                        self._rows[b] = ra
                    if rb is not None:
                        self._rows[a] = rb
                else:
                    if rb is not None:  # a one-way move replaces the row it lands on
                        rb[0].close(rb[1])
                        self._free.append(rb[1])
                    if ra is not None:
                        self._rows[b] = ra
            self._groups = None
        # New output tokens since the last step: one batch step per position
        # (one position per step without speculative decoding).
        levels: list[dict[int, tuple[list[int], list[int]]]] = []
        for row in self._rows.values():
            batch, slot, out, taken = row
            n = len(out)
            if n > taken:
                for j, tid in enumerate(out[taken:n]):
                    if j == len(levels):
                        levels.append({})
                    slots, ids = levels[j].setdefault(id(batch), ([], []))
                    slots.append(slot)
                    ids.append(tid)
                row[3] = n
        batches = {id(b): b for b in self._batches.values()}
        for level in levels:
            for key, (slots, ids) in level.items():
                batches[key].step(np.array(slots, dtype=np.int32), np.array(ids, dtype=np.int32))

    def _group(self) -> list[tuple[BudgetBatch, np.ndarray, np.ndarray]]:
        groups: dict[int, tuple[BudgetBatch, list[int], list[int]]] = {}
        for index, (batch, slot, _, _) in self._rows.items():
            entry = groups.setdefault(id(batch), (batch, [], []))
            entry[1].append(index)
            entry[2].append(slot)
        return [(b, np.array(rows, dtype=np.int64), np.array(slots, dtype=np.int64))
                for b, rows, slots in groups.values()]

    def apply(self, logits: "torch.Tensor") -> "torch.Tensor":
        if not self._rows:
            return logits
        if self._groups is None:
            self._groups = self._group()
        rows, toks = [], []
        for batch, index, slots in self._groups:
            forced = batch.forced(slots)
            hit = (forced >= 0) & (forced < logits.shape[1]) & (index < logits.shape[0])
            if hit.any():
                rows.append(index[hit])
                toks.append(forced[hit])
        if rows:
            force_rows(logits, np.concatenate(rows), np.concatenate(toks))
        return logits
