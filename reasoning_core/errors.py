"""Warning and error types raised by reasoning-core."""
from __future__ import annotations

__all__ = ["ReasoningCoreWarning", "CompiledEngineMissingWarning"]


class ReasoningCoreWarning(UserWarning):
    """Something the caller should fix, that does not stop the parser working.

    Raised once per (tokenizer, family) when a family's optional markers (a
    tool-call terminator, chat-turn boundaries, a thinking-enable marker)
    cannot be resolved with the tokenizer given, so that part of the family's
    behaviour is off.
    """


class CompiledEngineMissingWarning(ReasoningCoreWarning):
    """The compiled engine could not be imported, so the pure-Python one runs.

    Issued once, at import, when the compiled engine is missing but was not
    switched off: typically a source checkout imported in place of the
    installed package (Python run from the checkout root) or an install built
    without a compiler.  ``REASONING_CORE_NO_EXTENSIONS=1`` chooses the pure
    engine on purpose, without this warning.
    """
