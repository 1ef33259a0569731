"""The one place that chooses the engine backend.

The compiled engine is used unless it is missing or REASONING_CORE_NO_EXTENSIONS
is on (see ``_flags.env_flag``).  A missing engine that was not switched off
is a ``CompiledEngineMissingWarning`` (once, at import) naming the likely
cause.  With REASONING_CORE_REQUIRE_EXTENSIONS on, a missing or disabled
compiled engine is an ImportError instead of a fallback (CI sets it, so a
broken build cannot pass as a second pure run); under the ``reasoning-core``
command that error is one line on stderr, not a traceback.
"""
from __future__ import annotations

import os
import platform
import sys
from typing import Any

from ._shared import brief
from ._flags import env_flag

BACKEND: str

_REQUIRED = env_flag("REASONING_CORE_REQUIRE_EXTENSIONS")

# The compiled engine is a CPython extension; other interpreters use the twin.
_PURE_ONLY = platform.python_implementation() != "CPython"

def _running_cli() -> bool:
    """Whether this process is the ``reasoning-core`` command (or ``python -m reasoning_core``)."""
    script = os.path.basename(sys.argv[0] if sys.argv else "").lower()
    if script.startswith("reasoning-core"):  # the console script (reasoning-core.exe on Windows)
        return True
    argv = list(getattr(sys, "orig_argv", ()))
    return any(a == "-m" and b in ("reasoning_core", "reasoning_core.cli") for a, b in zip(argv, argv[1:]))


def _required_error(message: str) -> ImportError:
    """The REASONING_CORE_REQUIRE_EXTENSIONS failure: an ImportError, or under the
    command one line on stderr and exit status 1 (the import happens before the
    command's own error handling can run)."""
    if _running_cli():
        print(f"reasoning-core: error: {message}", file=sys.stderr)
        raise SystemExit(1)
    return ImportError(message)


def _missing_cause(exc: ImportError) -> str:
    """The likely reason the compiled engine is missing, for the warning."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    checkout = os.path.isfile(os.path.join(here, "_engine.pyx")) and os.path.isfile(os.path.join(root, "setup.py"))
    installed = None
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        try:
            found = str(distribution("reasoning-spans").locate_file("reasoning_core"))
            if os.path.isdir(found) and os.path.abspath(found) != here:
                installed = found
        except PackageNotFoundError:
            pass
    except Exception:  # noqa: BLE001 - metadata only sharpens the message
        pass
    if checkout and installed:
        return (f"reasoning_core was imported from the source checkout {root}, not from the installed "
                f"package at {installed}: Python puts the current directory first on sys.path, so run it "
                "from another directory (or build in place: python setup.py build_ext --inplace)")
    if checkout:
        return (f"reasoning_core was imported from the source checkout {root}, where the engine is not "
                "compiled: build it in place (python setup.py build_ext --inplace), or install the "
                "package and run from another directory")
    return f"this installation has no compiled engine for this Python ({exc}); reinstall from a wheel or with a C compiler"


if env_flag("REASONING_CORE_NO_EXTENSIONS") or _PURE_ONLY:
    if _REQUIRED:
        raise _required_error(
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
            raise _required_error(
                f"REASONING_CORE_REQUIRE_EXTENSIONS is set, but the compiled engine cannot be imported: {exc}"
            ) from exc
        _message = (f"the compiled engine is missing, so the slower pure-Python engine runs: {_missing_cause(exc)}. "
                    "Set REASONING_CORE_NO_EXTENSIONS=1 to choose the pure engine without this warning.")
        if _running_cli():
            print(f"reasoning-core: warning: {_message}", file=sys.stderr)  # one line, like the command's own
        else:
            import warnings

            from .errors import CompiledEngineMissingWarning

            warnings.warn(_message, CompiledEngineMissingWarning)
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
    raise ValueError(f"backend must be 'cython' or 'python', not {brief(backend)}")


def backend_module(backend: str | None) -> Any:
    """The engine module for ``backend`` (see ``resolve_backend``)."""
    return resolve_backend(backend)[1]
