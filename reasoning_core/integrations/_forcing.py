"""The one logits mask every budget processor applies (torch, any device)."""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

# Up to this many rows on the CPU, a fill per row beats one gathered fill.
_ROW_BY_ROW = 8


def force_rows(scores: "torch.Tensor", rows: Any, tokens: Any) -> "torch.Tensor":
    """Rows ``rows[i]`` may only take ``tokens[i]``: every other score there becomes -inf.

    Rows not listed are not touched, and nothing is read back from the device.
    ``rows`` and ``tokens`` are host integer sequences (NumPy arrays or lists).
    """
    rows = np.asarray(rows, dtype=np.int64)
    tokens = np.asarray(tokens, dtype=np.int64)
    if not rows.size:
        return scores
    if scores.device.type == "cpu" and rows.size <= _ROW_BY_ROW:
        for r, t in zip(rows.tolist(), tokens.tolist()):
            row = scores[r]
            row.fill_(float("-inf"))
            row[t] = 0.0
        return scores
    r = torch.from_numpy(rows).to(scores.device, non_blocking=True)
    t = torch.from_numpy(tokens).to(scores.device, non_blocking=True)
    scores.index_fill_(0, r, float("-inf"))
    scores.index_put_((r, t), torch.zeros((), dtype=scores.dtype, device=scores.device))
    return scores
