"""The one place that chooses the engine backend.

The compiled engine is used unless it is missing or REASONING_CORE_NO_EXTENSIONS
is on (see ``_flags.env_flag``).  With REASONING_CORE_REQUIRE_EXTENSIONS on, a
missing or disabled compiled engine is an ImportError instead of a silent
fallback (CI sets it, so a broken build cannot pass as a second pure run).
"""
from __future__ import annotations

import platform
from typing import Any

from ._flags import env_flag

BACKEND: str

_REQUIRED = env_flag("REASONING_CORE_REQUIRE_EXTENSIONS")

# The compiled engine is a CPython extension; other interpreters use the twin.
_PURE_ONLY = platform.python_implementation() != "CPython"

if env_flag("REASONING_CORE_NO_EXTENSIONS") or _PURE_ONLY:
    if _REQUIRED:
        raise ImportError(
            "REASONING_CORE_REQUIRE_EXTENSIONS is set, but the compiled engine is disabled "
            "(REASONING_CORE_NO_EXTENSIONS, or not CPython)"
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


def resolve_backend(backend: str | None) -> tuple[str, Any]:
    """``(name, engine module)`` for ``backend`` ("cython", "python" or None = the default).

    The only place that knows which module is which backend: callers store
    the name instead of inspecting the module.
    """
    if backend is None or type(backend) is str:
        found = _RESOLVED.get(backend)
        if found is not None:
            return found
    name = BACKEND if backend is None else backend
    found = _resolve(name)
    if backend is None or type(backend) is str:
        _RESOLVED[backend] = found
    return found


_RESOLVED: dict = {}


def _resolve(backend: Any) -> tuple[str, Any]:
    if backend == "python":
        from reasoning_core_py import _engine as mod

        return "python", mod
    if backend == "cython":
        try:
            from . import _engine as mod
        except ImportError:
            raise ValueError("the compiled engine is not built in this installation") from None
        return "cython", mod
    raise ValueError(f"backend must be 'cython' or 'python', not {backend!r}")


def backend_module(backend: str | None) -> Any:
    """The engine module for ``backend`` (see ``resolve_backend``)."""
    return resolve_backend(backend)[1]
