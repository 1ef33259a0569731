"""Adapters that plug reasoning-core into serving engines.

Each module is imported only when asked for (``reasoning_core.integrations.vllm``);
the core never imports an engine, and importing an adapter without its engine
installed raises ``ImportError`` naming the missing package.
"""
from __future__ import annotations

from .._flags import env_flag

__all__ = ["REPLACE_ENV", "replace_requested"]

#: The one switch, read by every engine's plugin: our parsers under the engine's own names too.
REPLACE_ENV = "REASONING_CORE_REPLACE"


def replace_requested() -> bool:
    """Whether ``REASONING_CORE_REPLACE`` is on (set to anything but empty or ``0``).

    Each engine's plugin then registers our parsers under the engine's own
    names as well as ``rc_<name>``, so serving behaviour the engine keys on a
    parser's name is kept.
    """
    return env_flag(REPLACE_ENV)
