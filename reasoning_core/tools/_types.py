"""Result types and the parser protocol (names and fields follow Modular MAX)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Protocol, runtime_checkable

__all__ = [
    "ParsedToolCall",
    "ParsedToolCallDelta",
    "ParsedToolResponse",
    "ToolParser",
]


@dataclass
class ParsedToolCall:
    """One complete call; ``arguments`` is a JSON object serialized as text."""

    id: str
    name: str
    arguments: str


@dataclass
class ParsedToolCallDelta:
    """One streamed piece. A delta that carries ``content`` carries nothing else."""

    index: int
    id: Optional[str] = None
    name: Optional[str] = None
    arguments: Optional[str] = None
    content: Optional[str] = None


@dataclass
class ParsedToolResponse:
    content: Optional[str] = None
    tool_calls: list[ParsedToolCall] = field(default_factory=list)


@runtime_checkable
class ToolParser(Protocol):
    """Modular MAX's tool-parser protocol, which every parser here implements."""

    def parse_complete(self, response: str) -> ParsedToolResponse:
        """The content and tool calls of a whole response."""
        ...

    def parse_delta(self, delta: str) -> Optional[list[ParsedToolCallDelta]]:
        """Feed the next piece of streamed content: the call deltas it completes (None: nothing yet)."""
        ...

    def reset(self) -> None:
        """Forget the current request."""
        ...

    def set_streaming_tool_schemas(self, schemas: Optional[dict]) -> None:
        """The request's tool schemas, used to type streamed argument values."""
        ...
