"""Argument values nested deeper than Python's JSON reader goes, through every
tool format on either backend: with the tool's schema typing the argument (as
an array) and without, one-shot parsing keeps or refuses the call (a
``ValueError``), and streaming in chunks and whole never raises.  A typed
reader that converts such a value with ``json.loads`` once let the reader's
``RecursionError`` out; the value is now kept as written."""
from __future__ import annotations

import os
import sys

import pytest

from reasoning_core import tools

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz"))
from tool_targets import call_template  # noqa: E402

DEEP = {"arrays": "[" * 5000 + "]" * 5000, "objects": '{"x": ' * 3000 + "1" + "}" * 3000}
SCHEMAS = {"untyped": None, "array": {"f": {"type": "object", "properties": {"a": {"type": "array"}}}}}


@pytest.mark.parametrize("schemas", sorted(SCHEMAS))
@pytest.mark.parametrize("fmt", tools.available())
def test_values_nested_too_deep_for_json_never_raise(fmt, schemas):
    template = call_template(fmt)
    if not template:
        pytest.skip(f"no call template for {fmt}")
    for value in DEEP.values():
        text = "I will call it. " + template.replace("NAMEQQ", "f").replace("KEYQQ", "a").replace("VALQQ", value)
        p = tools.create(fmt)
        p.set_streaming_tool_schemas(SCHEMAS[schemas])
        try:
            p.parse_complete(text)
        except ValueError:
            pass
        for size in (7, len(text)):
            p = tools.create(fmt)
            p.set_streaming_tool_schemas(SCHEMAS[schemas])
            for i in range(0, len(text), size):
                p.parse_delta(text[i:i + size])
            p.finish()


@pytest.mark.parametrize("types", [["array"], ["object"], []])
def test_minimax_m3_typed_value_nested_too_deep_is_kept_as_written(types):
    from reasoning_core.tools._markup_formats import _mm_coerce

    for value in DEEP.values():
        assert _mm_coerce(value, types) == value
