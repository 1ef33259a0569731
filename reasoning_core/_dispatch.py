"""The one place that chooses the engine backend.

The compiled engine is used unless it is missing or REASONING_CORE_NO_EXTENSIONS
is on (see ``_flags.env_flag``).  With REASONING_CORE_REQUIRE_EXTENSIONS on, a
missing or disabled compiled engine is an ImportError instead of a silent
fallback (CI sets it, so a broken build cannot pass as a second pure run).
"""
from __future__ import annotations

from ._flags import env_flag

BACKEND: str

_REQUIRED = env_flag("REASONING_CORE_REQUIRE_EXTENSIONS")

if env_flag("REASONING_CORE_NO_EXTENSIONS"):
    if _REQUIRED:
        raise ImportError(
            "REASONING_CORE_REQUIRE_EXTENSIONS is set, but REASONING_CORE_NO_EXTENSIONS disables the compiled engine"
        )
    from reasoning_core_py._engine import BatchEngine, BatchStepResult, Engine

    BACKEND = "python"
else:
    try:
        from ._engine import BatchEngine, BatchStepResult, Engine

        BACKEND = "cython"
    except ImportError as exc:  # not compiled (e.g. installed without a compiler)
        if _REQUIRED:
            raise ImportError(
                f"REASONING_CORE_REQUIRE_EXTENSIONS is set, but the compiled engine cannot be imported: {exc}"
            ) from exc
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
