"""Pure-Python twin of reasoning-core's compiled engine.

Normally you never import this directly: ``reasoning_core`` picks the
compiled engine and falls back to this one when the extension is missing or
``REASONING_CORE_NO_EXTENSIONS=1`` is set.
"""
# The twin uses reasoning_core's shared modules (tables, input checks), and
# reasoning_core's dispatcher may import this package's engine: importing
# reasoning_core first settles that order whichever package is imported first.
import reasoning_core  # noqa: F401

from ._engine import BatchEngine, BatchStepResult, Engine

__all__ = ["Engine", "BatchEngine", "BatchStepResult"]
