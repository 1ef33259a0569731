"""Hardening of the tool-call parsers (issue 11, items 3, 10 and 11).

- 3: hostile model output (huge digit runs, deep nesting, lone surrogates, NUL, huge
  exponents) in any position of a call never raises out of ``parse_delta``/``finish``,
  ``parse_complete`` raises nothing but its documented ``ValueError``, and the content
  around the call survives.
- 10: schemas written with Python type names (``int``, ``float``, ``bool``, ``dict``,
  ``list``, ``str``), type lists, ``anyOf``/``oneOf`` and ``enum`` type XML-style values.
- 11: total work is linear in the output, checked with a deterministic counter (no
  timing): the characters stored into string attributes of the parser, of its JSON
  reader and of the streamed deltas, for an input of size n and of size 2n.
"""

from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasoning_core import tools
from reasoning_core.tools import _base
from toolstreams import (
    DS_CALL_BEGIN,
    DS_CALL_END,
    DS_CALLS_BEGIN,
    DS_CALLS_END,
    DS_SEP,
    MAX_NAMES,
    stream,
    write_raw_call,
)

JSON_FORMATS = ("hermes", "llama3_json", "mistral")
XML_FORMATS = ("qwen3_coder", "qwen3_5", "glm45", "minimax_m2")
MARKER_FORMATS = ("deepseek_v3", "deepseek_v31", "kimi_k2")
# the further formats (pythonic, tagged-JSON, markup and more modules), written by their own suites
FURTHER = [n for n in tools.available() if n not in MAX_NAMES and n not in JSON_FORMATS + XML_FORMATS + MARKER_FORMATS
           + ("mistral",)]
# further formats whose values are their text unless a schema types them
TEXT_VALUED = {"beam", "dots", "hunyuan", "hy_v3", "hy_v4", "mimo", "minimax_m3", "spark25", "step3"}


def ok_args(fmt: str) -> str:
    return '{"x": "1"}' if fmt in TEXT_VALUED else '{"x": 1}'


def random_chunks(text: str, seed: int) -> list[str]:
    rnd = random.Random(seed)
    k = rnd.randint(1, min(len(text) - 1, 60)) if len(text) > 1 else 0
    cuts = sorted(rnd.sample(range(1, len(text)), k)) if k else []
    return [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)])]


def call_text(fmt: str, name: str, key: str, value: str, *, quoted: bool = True) -> str:
    """One call. In the JSON formats ``name`` and ``key`` are raw JSON text when
    ``quoted`` is False (a hostile value goes in as it is), else plain names."""
    q = (lambda s: json.dumps(s)) if quoted else (lambda s: s)
    if fmt == "hermes":
        return f'<tool_call>{{"name": {q(name)}, "arguments": {{{q(key)}: {value}}}}}</tool_call>'
    if fmt == "llama3_json":
        return f'{{"name": {q(name)}, "parameters": {{{q(key)}: {value}}}}}'
    if fmt == "mistral":
        return f'[TOOL_CALLS][{{"name": {q(name)}, "arguments": {{{q(key)}: {value}}}}}]'
    if fmt == "deepseek_v3":
        return (DS_CALLS_BEGIN + DS_CALL_BEGIN + "function" + DS_SEP + name
                + f"\n```json\n{{{q(key)}: {value}}}\n```" + DS_CALL_END + DS_CALLS_END)
    if fmt == "deepseek_v31":
        return DS_CALLS_BEGIN + DS_CALL_BEGIN + name + DS_SEP + f"{{{q(key)}: {value}}}" + DS_CALL_END + DS_CALLS_END
    if fmt == "kimi_k2":
        return (f"<|tool_calls_section_begin|><|tool_call_begin|>functions.{name}:0"
                f"<|tool_call_argument_begin|>{{{q(key)}: {value}}}<|tool_call_end|><|tool_calls_section_end|>")
    if fmt in ("qwen3_coder", "qwen3_5"):
        return f"<tool_call>\n<function={name}>\n<parameter={key}>\n{value}\n</parameter>\n</function>\n</tool_call>"
    if fmt == "glm45":
        return f"<tool_call>{name}\n<arg_key>{key}</arg_key>\n<arg_value>{value}</arg_value>\n</tool_call>"
    if fmt == "minimax_m2":
        return f'<minimax:tool_call><invoke name="{name}"><parameter name="{key}">{value}</parameter></invoke></minimax:tool_call>'
    if fmt in FURTHER:  # the format's own writer, ``value`` put in raw where the model writes the value
        # (Muse: a call is a message of its own, after the one before it ends)
        return ("<|eom|>" if fmt == "muse" else "") + write_raw_call(fmt, name, key, value)
    raise AssertionError(fmt)


def _escape_surrogates(text: str) -> str:
    return re.sub("[\ud800-\udfff]", lambda m: "\\u%04x" % ord(m.group()), text)


D = 1100  # past the json module's recursion limit
N = 4400  # past Python's int-string conversion limit (4300 digits)
# (payload, its canonical JSON text or None when it is not one JSON value)
HOSTILE = [
    ("1" * N, "1" * N),
    ("-" + "9" * N, "-" + "9" * N),
    ("1." + "5" * N + "e-" + "7" * N, "1." + "5" * N + "e-" + "7" * N),
    ("1e999999", "1e999999"),
    ("-1E+999999", "-1E+999999"),
    ("[" * D + "]" * D, "[" * D + "]" * D),
    ("[" * D, None),
    ('{"a": ' * D + "1" + "}" * D, '{"a": ' * D + "1" + "}" * D),
    ('{"a":' * D, None),
    ('[{"a": [' * (D // 3) + "0" + "]}]" * (D // 3), '[{"a": [' * (D // 3) + "0" + "]}]" * (D // 3)),
    ('"\ud800"', '"\\ud800"'),
    ('"\\ud800"', '"\\ud800"'),
    ('"\\udfff\\ud800x"', '"\\udfff\\ud800x"'),
    ('"a\x00b"', '"a\\u0000b"'),
    ("\ud800", None),
    ("\x00", None),
    ('"' + "\\u0000" * 50 + '"', '"' + "\\u0000" * 50 + '"'),
    ("9" * N + "[[[", None),
]
POSITIONS = ("name", "key", "value")


def _hostile_call(fmt: str, pos: str, payload: str) -> str:
    xml_or_marker = fmt not in JSON_FORMATS
    if pos == "name":
        if xml_or_marker:
            return call_text(fmt, payload, "x", "1")
        return call_text(fmt, payload, '"x"', "1", quoted=False)
    if pos == "key":
        if xml_or_marker and fmt not in ("deepseek_v3", "deepseek_v31", "kimi_k2"):
            return call_text(fmt, "f", payload, "1")
        return call_text(fmt, '"f"', payload, "1", quoted=False)
    return call_text(fmt, "f", "x", payload)


def _parse_complete(fmt: str, text: str):
    try:
        r = tools.create(fmt).parse_complete(text)
    except ValueError as e:  # the one documented failure: names the format and the offset
        msg = str(e)
        assert tools.create(fmt).format_name in msg and re.search(r"offset \d+", msg), msg
        return None
    return (r.content or "", [(c.name, c.arguments) for c in r.tool_calls])


def _check_stream(fmt: str, text: str, seeds=range(3)):
    one = stream(tools.create(fmt), [text], with_ids=False)
    for seed in seeds:
        assert stream(tools.create(fmt), random_chunks(text, seed), with_ids=False) == one
    return one


@pytest.mark.parametrize("fmt", [n for n in tools.available() if n not in MAX_NAMES])
def test_i11_03_hostile_payloads_never_raise_and_conserve_content(fmt):
    ok_call = call_text(fmt, "ok", "x", "1")
    for payload, canon in HOSTILE:
        for pos in POSITIONS:
            hostile = _hostile_call(fmt, pos, payload)
            # mistral's section has no end marker: a second call needs its own opener
            text = "before " + hostile + " mid " + ok_call + " after"
            one = _check_stream(fmt, text)
            full = _parse_complete(fmt, text)
            where = (payload[:20], pos)
            assert full is not None, where  # a valid call is there
            content, calls = one
            # one-shot equals the stream; a broken call's streamed fragments are the
            # one difference (SPEC), so the one-shot calls are a subsequence
            assert full[0] == content, where
            rest = iter(calls)
            assert all(c in rest for c in full[1]), where
            assert content.startswith("before "), where
            assert content.endswith("after"), where
            assert calls[-1] == full[1][-1] == ("ok", ok_args(fmt)), where
            for _, args in calls:
                args.encode("utf-8")  # no raw lone surrogate ever reaches the arguments
            if pos == "value":
                if fmt in FURTHER:  # their value rules are checked by their own suites
                    pass
                elif fmt in JSON_FORMATS or fmt in MARKER_FORMATS:
                    if canon is not None:
                        assert full[1][0] == ("f", '{"x": ' + canon + "}"), where
                    else:
                        assert len(full[1]) == 1, where
                else:  # XML-style values: JSON when it parses, else a string
                    want = canon if canon is not None else _escape_surrogates(json.dumps(payload, ensure_ascii=False))
                    assert full[1][0] == ("f", '{"x": ' + want + "}"), where
            if fmt == "llama3_json" and pos == "name":
                # not a call (the name is no string): the object is content, verbatim
                assert content == "before " + hostile + " mid after"
            # cut off: finish() and parse_complete's end-of-input path
            cut = "before " + hostile[: len(hostile) * 2 // 3]
            one = _check_stream(fmt, cut, seeds=range(1))
            full = _parse_complete(fmt, cut)
            assert full is None or full[0] == one[0]
            assert one[0].startswith("before ")


@pytest.mark.parametrize("fmt", JSON_FORMATS)
def test_i11_03_parser_keeps_working_after_a_hostile_name(fmt):
    # the bug: json.loads on the model's name raised out of parse_delta and the
    # parser's machine was dead afterwards, dropping everything that followed
    p = tools.create(fmt)
    for payload in ("7" * N, "[" * D + "]" * D, '{"a": ' * D + "1" + "}" * D):
        hostile = call_text(fmt, payload, '"x"', "1", quoted=False)
        for piece in random_chunks("before " + hostile, 1):
            p.parse_delta(piece)
        content, calls = stream(p, [" then ", call_text(fmt, "ok", "x", "2"), " end"], with_ids=False)
        assert calls == [("ok", '{"x": 2}')]
        assert content.endswith("end")


# ------------------------------------------------------------------ 10: schema type names

PY_SCHEMA = {"f": {"type": "object", "properties": {
    "i": {"type": "int"},
    "fl": {"type": "float"},
    "b": {"type": "bool"},
    "B": {"type": "Boolean"},
    "d": {"type": "dict"},
    "l": {"type": "list"},
    "s": {"type": "str"},
    "n": {"type": ["integer", "null"]},
    "nn": {"type": ["integer", "null"]},
    "any": {"anyOf": [{"type": "int"}, {"type": "null"}]},
    "one": {"oneOf": [{"type": "float"}, {"type": "str"}]},
    "es": {"enum": ["1", "2"]},
    "ei": {"enum": [1, 2]},
    "unknown": {"type": "whatever"},
    "opt": {"type": "int", "nullable": True},
}}}
PY_VALUES = {
    "i": "7", "fl": "2.5", "b": "true", "B": "False", "d": '{"k": 1}', "l": "[1, 2]", "s": "0123",
    "n": "5", "nn": "null", "any": "12", "one": "3.5", "es": "1", "ei": "2", "unknown": "[3]",
    "opt": "null",
}
PY_EXPECTED = {
    "i": 7, "fl": 2.5, "b": True, "B": False, "d": {"k": 1}, "l": [1, 2], "s": "0123",
    "n": 5, "nn": None, "any": 12, "one": 3.5, "es": "1", "ei": 2, "unknown": [3], "opt": None,
}


@pytest.mark.parametrize("fmt", ["qwen3_coder", "glm45", "hermes"])
def test_i11_10_schema_types_are_read_per_tool_on_first_use(fmt):
    # Types come from a tool's schema the first time one of its values needs
    # them; names the model writes that are no tool are never kept.
    schemas = {f"t{i}": PY_SCHEMA["f"] for i in range(50)} | {"f": PY_SCHEMA["f"]}
    p = tools.create(fmt)
    p.set_streaming_tool_schemas(schemas)
    for i in range(200):
        if fmt == "hermes":
            text = '<tool_call>\n{"name": "nope%d", "arguments": {"i": 7}}\n</tool_call>' % i
        else:
            text = _xml_call(fmt, {"i": "7"}).replace("=f>", f"=nope{i}>").replace(">f\n", f">nope{i}\n")
        p.parse_delta(text)
        p.finish()
    assert p._param_types == {}
    if fmt == "hermes":  # JSON arguments: no schema is read
        return
    out = (p.parse_delta("go " + _xml_call(fmt, PY_VALUES)) or []) + p.finish()
    args = "".join(d.arguments for d in out if d.arguments)
    assert json.loads(args) == PY_EXPECTED
    assert set(p._param_types) == {"f"}  # read for the tool called, not the other 50


def _xml_call(fmt: str, values: dict) -> str:
    if fmt in ("qwen3_coder", "qwen3_5"):
        params = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in values.items())
        return f"<tool_call>\n<function=f>\n{params}</function>\n</tool_call>"
    if fmt == "glm45":
        params = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n" for k, v in values.items())
        return f"<tool_call>f\n{params}</tool_call>"
    params = "".join(f'<parameter name="{k}">{v}</parameter>' for k, v in values.items())
    return f'<minimax:tool_call><invoke name="f">{params}</invoke></minimax:tool_call>'


@pytest.mark.parametrize("fmt", XML_FORMATS)
def test_i11_10_python_type_names_and_type_unions_in_schemas(fmt):
    text = "go " + _xml_call(fmt, PY_VALUES)
    p = tools.create(fmt)
    p.set_streaming_tool_schemas(PY_SCHEMA)
    r = p.parse_complete(text)
    assert [(c.name, json.loads(c.arguments)) for c in r.tool_calls] == [("f", PY_EXPECTED)]
    for seed in range(3):
        q = tools.create(fmt)
        q.set_streaming_tool_schemas(PY_SCHEMA)
        got = stream(q, random_chunks(text, seed), with_ids=False)
        assert got == ("go ", [("f", r.tool_calls[0].arguments)])
    # a value that the type cannot hold stays a string, never lost
    q = tools.create(fmt)
    q.set_streaming_tool_schemas(PY_SCHEMA)
    r = q.parse_complete(_xml_call(fmt, {"i": "seven", "b": "maybe", "d": "[1]", "es": "x"}))
    assert json.loads(r.tool_calls[0].arguments) == {"i": "seven", "b": "maybe", "d": "[1]", "es": "x"}


@settings(max_examples=300, deadline=None)
@given(prop=st.dictionaries(
    st.sampled_from(["type", "description", "nullable", "enum", "const", "anyOf", "title"]),
    st.one_of(st.sampled_from(["string", " Int", "FLOAT", "bool", "dict", "list", "null", "whatever", "text"]),
              st.booleans(), st.none(), st.lists(st.sampled_from(["a", 1, 2.5, None, True]), max_size=3),
              st.lists(st.fixed_dictionaries({"type": st.sampled_from(["string", "integer"])}), max_size=2)),
    max_size=3))
def test_i11_10_schema_types_of_one_property_as_of_its_walk(prop):
    # the short way for {"type": name} (with a description) reads as the
    # general walk does: as a property reached through anyOf
    from reasoning_core.tools._json import schema_types

    assert schema_types(prop) == schema_types({"anyOf": [prop]})


def test_i11_10_schema_type_names_map_to_json_schema():
    from reasoning_core.tools._json import schema_types

    assert schema_types({"type": "int"}) == {"integer"}
    assert schema_types({"type": "float"}) == {"number"}
    assert schema_types({"type": "bool"}) == {"boolean"}
    assert schema_types({"type": "dict"}) == {"object"}
    assert schema_types({"type": "list"}) == {"array"}
    assert schema_types({"type": "str"}) == {"string"}
    assert schema_types({"type": ["integer", "null"]}) == {"integer", "null"}
    assert schema_types({"anyOf": [{"type": "int"}, {"oneOf": [{"type": "str"}]}]}) == {"integer", "string"}
    assert schema_types({"enum": ["a", 1, 2.5, None, True]}) == {"string", "integer", "number", "null", "boolean"}
    assert schema_types({"type": "whatever"}) == frozenset()  # unknown: as if no schema
    loop: dict = {"anyOf": []}
    loop["anyOf"].append(loop)  # a self-referencing schema does not recurse forever
    assert schema_types(loop) == frozenset()
    deep: dict = {"type": "int"}
    for _ in range(5000):
        deep = {"anyOf": [deep]}
    assert schema_types(deep) == {"integer"}


@pytest.mark.parametrize("bad", [["f"], "f", 3, {"f": 3}, {3: {}}])
def test_i11_10_bad_schemas_from_the_caller_are_type_errors(bad):
    p = tools.create("qwen3_coder")
    with pytest.raises(TypeError):
        p.set_streaming_tool_schemas(bad)


# ------------------------------------------------------------------ 11: linear work

def _counting(cls, counter):
    class Counting(cls):
        def __setattr__(self, key, value):
            if isinstance(value, str):
                counter[0] += len(value)
            super().__setattr__(key, value)

    Counting.__name__ = Counting.__qualname__ = cls.__name__
    return Counting


def _many_tokens_call(fmt: str, n: int) -> str:
    if fmt in XML_FORMATS:
        # n parameters, each value typed once complete: n argument pieces
        return "go " + _xml_call(fmt, {f"k{i}": str(i) for i in range(n)})
    return "go " + call_text(fmt, "f", "xs", json.dumps(list(range(n))))


def _think_blocks(fmt: str, n: int) -> str:
    o, c = ("[THINK]", "[/THINK]") if fmt == "mistral" else ("<think>", "</think>")
    return f"a{o}r{c}" * n


def _long_number(fmt: str, n: int) -> tuple[str, str, str]:
    head, tail = call_text(fmt, "f", "x", "\x00").split("\x00")
    return head, "1" * n, tail


SCENARIOS = ("one_delta_many_tokens", "parse_complete_many_tokens", "one_delta_many_content_pieces",
             "number_char_by_char", "string_char_by_char")


def _work(monkeypatch, fmt: str, scenario: str, n: int) -> int:
    counter = [0]
    monkeypatch.setattr(_base, "JsonReader", _counting(_base.JsonReader, counter))
    monkeypatch.setattr(_base, "ParsedToolCallDelta", _counting(_base.ParsedToolCallDelta, counter))
    p = _counting(tools.get_parser_cls(fmt), counter)()
    if scenario == "one_delta_many_tokens":
        p.parse_delta(_many_tokens_call(fmt, n))
        p.finish()
    elif scenario == "parse_complete_many_tokens":
        r = p.parse_complete(_many_tokens_call(fmt, n))
        assert len(r.tool_calls) == 1
    elif scenario == "one_delta_many_content_pieces":
        p.parse_delta(_think_blocks(fmt, n))
        p.finish()
    else:
        if scenario == "number_char_by_char":
            head, body, tail = _long_number(fmt, 5 * n)
        else:
            head, body, tail = _long_number(fmt, 5 * n)
            body = '"' + body + '"' if fmt not in XML_FORMATS else "x" + body
        p.parse_delta(head)
        for ch in body:
            p.parse_delta(ch)
        p.parse_delta(tail)
        p.finish()
    return counter[0]


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("fmt", [n for n in tools.available() if n not in MAX_NAMES])
def test_i11_11_work_is_linear_in_the_output(monkeypatch, fmt, scenario):
    n = 800
    small = _work(monkeypatch, fmt, scenario, n)
    big = _work(monkeypatch, fmt, scenario, 2 * n)
    assert small > 0
    assert big <= 2.5 * small, (small, big)
