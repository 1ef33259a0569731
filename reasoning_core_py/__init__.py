"""Pure-Python twin of reasoning-core's compiled engine.

Normally you never import this directly: ``reasoning_core`` picks the
compiled engine and falls back to this one when the extension is missing or
``REASONING_CORE_NO_EXTENSIONS=1`` is set.
"""
from ._engine import BatchEngine, BatchStepResult, Engine

__all__ = ["Engine", "BatchEngine", "BatchStepResult"]
