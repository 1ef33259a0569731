"""The one place that chooses the engine backend.

The compiled engine is used unless it is missing or
REASONING_CORE_NO_EXTENSIONS is set to a non-empty value other than "0".
"""
from __future__ import annotations

import os

_flag = os.environ.get("REASONING_CORE_NO_EXTENSIONS", "")
BACKEND: str

if _flag and _flag != "0":
    from reasoning_core_py._engine import BatchEngine, BatchStepResult, Engine

    BACKEND = "python"
else:
    try:
        from ._engine import BatchEngine, BatchStepResult, Engine

        BACKEND = "cython"
    except ImportError:  # not compiled (e.g. installed without a compiler)
        from reasoning_core_py._engine import BatchEngine, BatchStepResult, Engine

        BACKEND = "python"

__all__ = ["BACKEND", "Engine", "BatchEngine", "BatchStepResult"]


def backend_module(backend: str | None):
    """The engine module for ``backend`` ("cython", "python" or None = default)."""
    if backend is None:
        backend = BACKEND
    if backend == "python":
        from reasoning_core_py import _engine as mod

        return mod
    if backend == "cython":
        try:
            from . import _engine as mod
        except ImportError:
            raise ValueError("the compiled engine is not built in this installation") from None
        return mod
    raise ValueError(f"backend must be 'cython' or 'python', not {backend!r}")
