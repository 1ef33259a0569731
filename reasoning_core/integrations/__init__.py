"""Adapters that plug reasoning-core into serving engines.

Each module is imported only when asked for (``reasoning_core.integrations.vllm``);
the core never imports an engine, and importing an adapter without its engine
installed raises ``ImportError`` naming the missing package.
"""
from __future__ import annotations

__all__: list[str] = []
