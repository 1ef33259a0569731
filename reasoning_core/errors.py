"""Warning and error types raised by reasoning-core."""
from __future__ import annotations

__all__ = ["ReasoningCoreWarning"]


class ReasoningCoreWarning(UserWarning):
    """Something the caller should fix, that does not stop the parser working.

    Raised once per (tokenizer, family) when a family's optional markers (a
    tool-call terminator, chat-turn boundaries, a thinking-enable marker)
    cannot be resolved with the tokenizer given, so that part of the family's
    behaviour is off.
    """
