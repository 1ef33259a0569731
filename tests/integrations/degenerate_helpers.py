"""Degenerate model output for the engines' tool wrappers: the cases and the
check shared by ``test_tool_wrappers_degenerate_values.py`` (vLLM, SGLang,
MAX) and ``test_vllm_mlx_degenerate.py`` (vllm-mlx, run in its own stage).

The runs come from ``test_hardening_round3_growth`` (the bare parsers' check):
inside an open call's argument value, where a JSON value starts or inside a
string, and outside any call."""
from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/ (also under --noconftest)

from reasoning_core import tools  # noqa: E402
from test_hardening_round3_growth import FORMATS, _assert_linear, _chunks, _degenerate_values, _value_at  # noqa: E402

FULL = os.environ.get("REASONING_CORE_FULL_ENGINE_TESTS", "").strip() not in ("", "0")
KINDS = None if FULL else ("backslashes", "cut closer")
QUOTES = ("", '"') if FULL else ('"',)
SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}}


def format_of(parser_cls: type) -> str:
    """The name ``_value_at`` knows for a parser class (the nearest in its MRO:
    a wrapper may serve a subclass of a format's class)."""
    by_cls = {tools.get_parser_cls(f): f for f in FORMATS}
    for c in parser_cls.__mro__:
        if c in by_cls:
            return by_cls[c]
    raise AssertionError(f"no format for {parser_cls.__name__}")


CONTENT_KINDS = ("opener cut", "newlines", "less-thans", "openers") if FULL else ("opener cut", "newlines")


def cases(names):
    out = [(n, k, q) for n in names for k in ("backslashes", "escaped quotes", "half escapes", "open brackets",
                                               "nested keys", "less-thans", "cut closer")
           for q in QUOTES if KINDS is None or k in KINDS]
    return out + [(n, k, None) for n in names for k in CONTENT_KINDS]


def content_runs(fmt: str) -> dict:
    """Runs outside any call: the format's first opener cut short, repeated; newlines;
    ``<``; whole openers with nothing after them."""
    opener = next(m for m in tools.get_parser_cls(fmt).openers if isinstance(m, str) and m)
    cut = opener[:-1] or opener
    return {"opener cut": lambda n: cut * max(1, n // len(cut)), "newlines": lambda n: "\n" * n,
            "less-thans": lambda n: "<" * n, "openers": lambda n: opener * max(1, n // len(opener))}


def check(name: str, fmt: str, kind: str, quote, run) -> None:
    if quote is None:  # outside any call
        make = content_runs(fmt)[kind]
        _assert_linear(f"{name} ({fmt}): {kind} outside a call", run, lambda n: _chunks(make(n), 4), 400)
        return
    head, cut = _value_at(fmt)
    (label, make), = [(lb, mk) for lb, mk in _degenerate_values(cut).items() if lb.startswith(kind)]
    _assert_linear(f"{name} ({fmt}): {label} {'in a string' if quote else 'as a value'}", run,
                   lambda n: _chunks(head + quote + make(n), 4), 400)
