"""Shared helpers for the tool-call tests: stream deltas merged by index."""

from __future__ import annotations

import json
import re

from reasoning_core import tools
from reasoning_core.tools import ParsedToolCallDelta

DS_CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
DS_CALLS_END = "<｜tool▁calls▁end｜>"
DS_CALL_BEGIN = "<｜tool▁call▁begin｜>"
DS_CALL_END = "<｜tool▁call▁end｜>"
DS_SEP = "<｜tool▁sep｜>"

# registry names added for Modular MAX 26.7 (issue 18): the four aliases resolve to
# classes tested here under our names; all of them are tested in test_tools_max.py
MAX_NAMES = frozenset(["deepseekv3", "deepseekv3_1", "deepseekv4", "gemma4", "inkling", "kimik2_5",
                       "laguna", "llama", "muse_glimmer"])


def stream(parser, chunks, *, with_ids=True):
    """Feed chunks, then finish(); return (content, [(id, name, arguments)]).

    Deltas are merged by index: id and name set once, arguments concatenated.
    ``with_ids=False`` leaves the ids out (they are random per parser).
    """
    content: list[str] = []
    calls: dict[int, dict] = {}

    def take(res, raw):
        if res is None:
            assert raw is not None, "finish() must return a list"
            content.append(raw)
            return
        assert isinstance(res, list)
        for d in res:
            assert isinstance(d, ParsedToolCallDelta)
            if d.content is not None:
                assert d.id is None and d.name is None and d.arguments is None
                content.append(d.content)
                continue
            c = calls.setdefault(d.index, {"id": None, "name": None, "arguments": ""})
            if d.id is not None:
                assert c["id"] is None, "id set twice"
                c["id"] = d.id
            if d.name is not None:
                assert c["name"] is None, "name set twice"
                c["name"] = d.name
            if d.arguments is not None:
                c["arguments"] += d.arguments

    for ch in chunks:
        take(parser.parse_delta(ch), ch)
    take(parser.finish(), None)
    merged = [(calls[i]["id"], calls[i]["name"], calls[i]["arguments"]) for i in sorted(calls)]
    return "".join(content), merged if with_ids else [c[1:] for c in merged]


# ------------------------------------------------------------------ the further formats' writers

# The format modules' own suites hold one writer per format (``render(fmt, [(name, args)])``,
# written as the model writes it); the generic suites borrow them from there, so a format's
# text shape is written down once. Imported on first use: those modules import this one.
_FURTHER_SUITES = ("test_tools_pythonic", "test_tools_tagged_json", "test_tools_markup", "test_tools_more")


def further_suite(fmt: str):
    """The test module of the further format ``fmt`` (by its own name), or None."""
    import importlib

    from reasoning_core import tools

    name = tools.create(fmt).format_name
    for mod_name in _FURTHER_SUITES:
        mod = importlib.import_module(mod_name)
        fmts = getattr(mod, "FORMATS", None) or getattr(mod, "NEW", ())
        if name in fmts:
            return mod
    return None


def write_calls(fmt: str, calls) -> str:
    """``calls`` ([(name, args)]) in the further format ``fmt``, as its own suite writes them."""
    from reasoning_core import tools

    return further_suite(fmt).render(tools.create(fmt).format_name, calls)


_RAW = 987654321  # written as a number: the writers mark it so (string="false", type="integer")


def write_raw_call(fmt: str, name: str, key: str, value: str) -> str:
    """One call of a further format whose argument ``key`` has the raw text ``value``
    where the model writes the value (JSON, a Python literal, or the text of a tag)."""
    text = write_calls(fmt, [(name, {key: _RAW})])
    assert text.count(str(_RAW)) == 1, fmt
    return text.replace(str(_RAW), value)


def assert_soup_consistent(fmt: str, text: str, chunks) -> None:
    """Any text through format ``fmt``: streamed in ``chunks`` as in one piece;
    one-shot parsing either refuses it (a ValueError naming the format and an
    offset) or agrees on the content, and its calls are among the streamed
    ones with valid JSON arguments that encode as UTF-8."""
    one = stream(tools.create(fmt), [text] if text else [], with_ids=False)
    assert stream(tools.create(fmt), chunks, with_ids=False) == one
    try:
        full = tools.create(fmt).parse_complete(text)
    except ValueError as e:
        assert fmt in str(e) and re.search(r"offset \d+", str(e))
        return
    assert (full.content or "") == one[0]
    for c in full.tool_calls:
        assert (c.name, c.arguments) in one[1]
        json.loads(c.arguments)
        c.arguments.encode("utf-8")
