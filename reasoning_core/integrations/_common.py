"""Helpers shared by the engine wrappers (no engine imported here)."""
from __future__ import annotations


class CloserStripper:
    """Drops every bare ``closer`` from streamed text, wherever the chunks
    split it: the end of the text that could start one is held until the next
    text (or the end, ``final=True``) says whether it does.  The text that
    comes out is what one ``str.replace(closer, "")`` over the whole streamed
    text gives.  O(chunk) per call."""

    __slots__ = ("closer", "held")

    def __init__(self, closer: str) -> None:
        if not isinstance(closer, str) or not closer:
            raise ValueError("CloserStripper needs a non-empty closer string")
        self.closer = closer
        self.held = ""  # the end of the text so far, a prefix of the closer

    def feed(self, text: str, final: bool = False) -> str:
        closer = self.closer
        if self.held:
            text = self.held + text
            self.held = ""
        if closer in text:
            parts = text.split(closer)
            # only the text after the last closer can start the next one
            head, text = "".join(parts[:-1]), parts[-1]
        else:
            head = ""
        if not final and closer[0] in text[1 - len(closer):]:
            k = min(len(closer) - 1, len(text))
            while k > 0 and not closer.startswith(text[-k:]):
                k -= 1
            if k:
                self.held = text[-k:]
                text = text[:-k]
        return head + text


def json_closer():
    """A ``JsonCloser`` of the tool-call scanner (compiled, or its pure twin):
    says, in O(piece), when a call's streamed JSON arguments first close (the
    one moment ``json.loads`` of everything streamed can succeed; later pieces
    only add trailing text)."""
    from ..tools import _json as tool_json

    return tool_json.SCAN.JsonCloser()
