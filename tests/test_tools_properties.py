"""Hypothesis properties of the tool-call parsers.

For generated well-formed outputs (content, think blocks that contain call markup,
calls whose JSON strings contain markers): any chunking streams to exactly the
one-shot result, which equals what was generated. For arbitrary marker soup: any
chunking gives the same stream as one chunk, nothing raises, and the streamed
content equals ``parse_complete``'s content.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from reasoning_core import tools
from toolstreams import (
    DS_CALL_BEGIN,
    DS_CALL_END,
    DS_CALLS_BEGIN,
    DS_CALLS_END,
    DS_SEP,
    MAX_NAMES,
    assert_soup_consistent,
    further_suite,
    stream,
    write_calls,
)

K_BEGIN = "<|tool_calls_section_begin|>"
K_END = "<|tool_calls_section_end|>"

FORMATS = ["deepseek_v3", "deepseek_v31", "glm45", "hermes", "kimi_k2", "llama3_json", "minimax_m2", "mistral",
           "qwen3_coder"]
# the further formats (pythonic, tagged-JSON, markup and more modules): properties below, with
# the calls their own suites generate and write; aliases of a format are left to it
FURTHER = sorted({tools.create(n).format_name for n in tools.available()} - set(FORMATS) - MAX_NAMES)

ALL_MARKERS = [
    "<tool_call>", "</tool_call>", "<function=", "</function>", "<parameter=", "</parameter>",
    "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "<minimax:tool_call>",
    "</minimax:tool_call>", "<invoke name=", "</invoke>", "<parameter name=", "[TOOL_CALLS]",
    "[ARGS]", "[CALL_ID]", "<|python_tag|>", DS_CALLS_BEGIN, DS_CALLS_END, DS_CALL_BEGIN,
    DS_CALL_END, DS_SEP, K_BEGIN, K_END, "<|tool_call_section_begin|>", "<|tool_call_section_end|>",
    "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>",
    "<think>", "</think>", "[THINK]", "[/THINK]",
]
FRAGMENTS = ALL_MARKERS + [m[: len(m) // 2] for m in ALL_MARKERS] + [
    "{", "}", "[", "]", '"', "\\", ":", ",", ";", "\n", " ", "name", "arguments", "parameters",
    '"name": "f"', '"arguments": {', "functions.f:0", "1", "true", "x", "é", "\x00", "\ud800",
]


def chunked(data, text):
    cuts = data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=30), label="cuts")
    cuts = sorted(set(c for c in cuts if 0 < c < len(text)))
    return [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)])]


# ------------------------------------------------------------------ generated outputs

names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,15}", fullmatch=True)
json_scalars = (
    st.none() | st.booleans() | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.lists(st.sampled_from(list('ab "\\\n\t\x01é😀<>/{}[]')) | st.sampled_from(FRAGMENTS), max_size=6).map("".join)
)
json_values = st.recursive(
    json_scalars,
    lambda ch: st.lists(ch, max_size=3) | st.dictionaries(st.text(max_size=5), ch, max_size=3),
    max_leaves=8,
)
json_args = st.dictionaries(st.text(max_size=6), json_values, max_size=4)
# arguments as a model might format them
json_styles = st.sampled_from([
    dict(), dict(ensure_ascii=False), dict(indent=2), dict(separators=(",", ":")),
    dict(separators=(" , ", " : "), ensure_ascii=False),
])

xml_keys = st.from_regex(r"[a-z_][a-z0-9_]{0,7}", fullmatch=True)
xml_strings = st.text(st.sampled_from(list('ab <>/="\n\t\\é{}[]1')), max_size=12)
xml_values = st.one_of(xml_strings, json_values)
xml_args = st.dictionaries(xml_keys, xml_values, max_size=4)


def _no_markers(s: str) -> bool:
    return not any(m in s for m in ALL_MARKERS)


@st.composite
def call(draw, fmt):
    xml = fmt in ("qwen3_coder", "glm45", "minimax_m2")
    args = draw(xml_args if xml else json_args)
    if xml:
        for v in args.values():
            rendered = v if isinstance(v, str) else json.dumps(v)
            assume(_no_markers(rendered))
            if isinstance(v, str) and fmt != "qwen3_coder":
                assume(not v.startswith("\n") and not v.endswith("\n"))
    return draw(names), args, draw(json_styles)


def content_text(fmt):
    text = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=4), max_size=6).map("".join)
    banned = ("{", ";") if fmt == "llama3_json" else ()
    return text.filter(lambda s: _no_markers(s) and not any(b in s for b in banned))


def render_calls(fmt, group, first_index, style):
    out = []
    for k, (name, args, jstyle) in enumerate(group):
        js = json.dumps(args, **jstyle)
        if fmt == "hermes":
            out.append(f'<tool_call>\n{{"name": "{name}", "arguments": {js}}}\n</tool_call>')
        elif fmt == "llama3_json":
            key = "parameters" if style % 2 else "arguments"
            obj = f'{{"{key}": {js}, "name": "{name}"}}' if style % 3 == 0 else f'{{"name": "{name}", "{key}": {js}}}'
            out.append(("<|python_tag|>" if k == 0 and style % 2 else "") + obj)
        elif fmt == "deepseek_v3":
            out.append(f"{DS_CALL_BEGIN}function{DS_SEP}{name}\n```json\n{js}\n```{DS_CALL_END}")
        elif fmt == "deepseek_v31":
            out.append(f"{DS_CALL_BEGIN}{name}{DS_SEP}{js}{DS_CALL_END}")
        elif fmt == "kimi_k2":
            idx = first_index + k
            out.append(f"<|tool_call_begin|>functions.{name}:{idx}<|tool_call_argument_begin|>{js}<|tool_call_end|>")
        elif fmt == "mistral":
            out.append((name, js))
        elif fmt == "qwen3_coder":
            params = "".join(
                f"<parameter={key}>\n{v if isinstance(v, str) else json.dumps(v)}\n</parameter>\n"
                for key, v in args.items())
            out.append(f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>")
        elif fmt == "glm45":
            params = "".join(
                f"<arg_key>{key}</arg_key>\n<arg_value>{v if isinstance(v, str) else json.dumps(v)}</arg_value>\n"
                for key, v in args.items())
            out.append(f"<tool_call>{name}\n{params}</tool_call>")
        elif fmt == "minimax_m2":
            q = '"' if style % 2 else ""
            params = "".join(
                f"<parameter name={q}{key}{q}>{v if isinstance(v, str) else json.dumps(v)}</parameter>\n"
                for key, v in args.items())
            out.append(f"<invoke name={q}{name}{q}>\n{params}</invoke>\n")
    if fmt == "llama3_json":
        return "; ".join(out)
    if fmt in ("deepseek_v3", "deepseek_v31"):
        return DS_CALLS_BEGIN + "\n".join(out) + DS_CALLS_END
    if fmt == "kimi_k2":
        return K_BEGIN + " ".join(out) + K_END
    if fmt == "minimax_m2":
        return "<minimax:tool_call>\n" + "".join(out) + "</minimax:tool_call>"
    if fmt == "mistral":
        if style % 2:
            return "[TOOL_CALLS][" + ", ".join(f'{{"name": "{n}", "arguments": {js}}}' for n, js in out) + "]"
        return "".join(f"[TOOL_CALLS]{n}[ARGS]{js}" for n, js in out)
    return "".join(out)


def expected_arguments(fmt, args):
    # our canonical form: json.dumps(ensure_ascii=False), unpaired surrogates escaped
    text = json.dumps(args, ensure_ascii=False)
    return re.sub("[\ud800-\udfff]", lambda m: "\\u%04x" % ord(m.group()), text)


@st.composite
def output(draw, fmt):
    """(text, expected content, expected [(name, arguments)], schemas)."""
    pieces = draw(st.lists(st.sampled_from(["content", "think", "calls"]), max_size=6))
    # two content pieces in a row could join into a marker
    pieces = [k for i, k in enumerate(pieces) if k != "content" or i == 0 or pieces[i - 1] != "content"]
    text, content, calls, typing = [], [], [], {}
    after_call = False
    for kind in pieces:
        if kind == "calls":
            group = draw(st.lists(call(fmt), min_size=1, max_size=3))
            style = draw(st.integers(0, 5))
            text.append(render_calls(fmt, group, len(calls), style))
            for name, args, _ in group:
                calls.append((name, expected_arguments(fmt, args)))
                # a tool name seen twice must get the same parameter typing
                seen = typing.setdefault(name, {})
                for k, v in args.items():
                    assume(seen.setdefault(k, isinstance(v, str)) == isinstance(v, str))
            after_call = True
            continue
        if kind == "think":
            inner = draw(content_text(fmt))
            if draw(st.booleans()):
                inner += render_calls(fmt, draw(st.lists(call(fmt), min_size=1, max_size=2)), 0, 1)
            o, c = ("[THINK]", "[/THINK]") if fmt == "mistral" and draw(st.booleans()) else ("<think>", "</think>")
            assume(c not in inner)  # reasoning ends at its end marker, wherever it is
            piece = o + inner + c
        else:
            piece = draw(content_text(fmt))
        text.append(piece)
        if fmt == "llama3_json" and after_call:
            piece = re.sub(r"^[ \t\n\r]*", "", piece)
        if piece:
            after_call = False
        content.append(piece)
    schemas = {
        n: {"properties": {k: {"type": "string"} for k, is_str in t.items() if is_str}}
        for n, t in typing.items()
    }
    return "".join(text), "".join(content), calls, schemas


@pytest.mark.parametrize("fmt", FORMATS)
@given(data=st.data())
def test_any_chunking_streams_to_the_one_shot_result(fmt, data):
    text, content, calls, schemas = data.draw(output(fmt), label="output")
    p = tools.create(fmt)
    p.set_streaming_tool_schemas(schemas)
    full = p.parse_complete(text)
    assert (full.content or "") == content
    assert [(c.name, c.arguments) for c in full.tool_calls] == calls
    if fmt == "kimi_k2":
        assert [c.id for c in full.tool_calls] == [f"functions.{n}:{i}" for i, (n, _) in enumerate(calls)]
    else:
        assert all(re.fullmatch(r"call_[0-9a-f]{24}", c.id) for c in full.tool_calls)
    q = tools.create(fmt)
    q.set_streaming_tool_schemas(schemas)
    assert stream(q, chunked(data, text), with_ids=False) == (content, calls)


@pytest.mark.parametrize("fmt", FORMATS)
@given(data=st.data())
def test_marker_soup_is_chunking_invariant_and_conserves_content(fmt, data):
    text = data.draw(st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=3), max_size=25).map("".join), label="text")
    one = stream(tools.create(fmt), [text] if text else [], with_ids=False)
    assert stream(tools.create(fmt), chunked(data, text), with_ids=False) == one
    try:
        full = tools.create(fmt).parse_complete(text)
    except ValueError as e:
        assert fmt != "llama3_json"
        assert fmt in str(e) or fmt == "qwen3_coder"
        return
    assert (full.content or "") == one[0]
    for c in full.tool_calls:
        assert (c.name, c.arguments) in one[1]
        json.loads(c.arguments)
        c.arguments.encode("utf-8")


# ------------------------------------------------------------------ the further formats

# Each format's own suite knows which arguments the format can carry (bare keys, trimmed text
# values, ...); its strategies draw them and its writer writes them. Here they meet the generic
# content (other formats' markers as prose), think blocks holding calls, and any chunking.
# Fewer examples per format than above: there are ~35 of them, and each own suite runs more.
FURTHER_EXAMPLES = settings(max_examples=30)
# their suites imported now, not first inside a @given (Hypothesis forbids nesting @given)
_SUITES = {fmt: further_suite(fmt) for fmt in FURTHER}
# formats with no think text to wrap a call in, by design: trinity reads calls inside <think>
# (test_tools_more's vectors); inkling_framed drops its framing tokens, thinking included;
# Muse's reasoning is a message without a recipient
NO_THINK = ("trinity", "inkling_framed", "muse")


def _further_call(fmt):
    """A strategy of (name, args) the format's own suite generates."""
    mod = further_suite(fmt)
    if hasattr(mod, "_py_values"):  # pythonic module
        return st.tuples(mod._names, st.dictionaries(mod._keys, mod._json, max_size=3))
    if hasattr(mod, "_xml_safe"):  # more module
        return st.tuples(mod.names, st.dictionaries(mod.keys, mod.values, max_size=3).map(
            lambda a: {k: v for k, v in mod._xml_safe(fmt, a).items()
                       if not isinstance(v, str) or (v.strip() == v and v.lower() != "null")}))
    return mod.call(fmt)


def _type_of(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    for t, name in ((str, "string"), (int, "integer"), (float, "number"), (list, "array"), (dict, "object")):
        if isinstance(v, t):
            return name
    raise AssertionError(v)  # pragma: no cover


def _further_avoid(fmt):
    """Text that content must not hold: the format's own markup."""
    mod = further_suite(fmt)
    avoid = list(tools.create(fmt).openers) + ["<|", "|>", "\n\n"]
    avoid += list(getattr(mod, "CONTENT_AVOID", {}).get(fmt, ()))
    if isinstance(getattr(mod, "MARKERS", None), list):
        avoid += mod.MARKERS
    return tuple(a for a in avoid if a)


def _further_think(fmt):
    return dict(further_suite("seed_oss").THINK).get(fmt, ("<think>", "</think>"))


@st.composite
def further_output(draw, fmt):
    """(text, expected content, expected [(name, args)], schemas): the schema declares each
    parameter's type as generated (formats that write values as text type them by it)."""
    avoid = _further_avoid(fmt)
    prose = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=4), max_size=6).map("".join).filter(
        lambda s: _no_markers(s) and not any(a in s for a in avoid))
    kinds = ["content", "calls"] + ([] if fmt in NO_THINK else ["think"])
    pieces = draw(st.lists(st.sampled_from(kinds), max_size=5))
    pieces = [k for i, k in enumerate(pieces) if k != "content" or i == 0 or pieces[i - 1] != "content"]
    text, content, calls, seen = [], [], [], {}
    after_call = False
    for kind in pieces:
        if kind == "calls":
            group = draw(st.lists(_further_call(fmt), min_size=1, max_size=1 if fmt == "gigachat3" else 2))
            for n, a in group:
                for k, v in a.items():
                    assume(seen.setdefault((n, k), _type_of(v)) == _type_of(v))
            text.append(write_calls(fmt, group))
            calls.extend((n, json.loads(json.dumps(a))) for n, a in group)
            after_call = True
            continue
        piece = draw(prose)
        if kind == "think":
            o, c = _further_think(fmt)
            inner = piece + (write_calls(fmt, [draw(_further_call(fmt))]) if draw(st.booleans()) else "")
            assume(c not in inner)
            piece = o + inner + c
        elif fmt == "granite_20b_fc" and after_call:
            piece = piece.lstrip(" \t\n\r")  # whitespace after a call is markup
        if fmt == "muse":  # content is in messages of its own
            text.append(f"<|start|>assistant to=user<|message|>{piece}<|eom|>")
        else:
            text.append(piece)
        content.append(piece)
        if piece:
            after_call = False
    schemas: dict = {}
    for (n, k), t in seen.items():
        schemas.setdefault(n, {"type": "object", "properties": {}})["properties"][k] = {"type": t}
    return "".join(text), "".join(content), calls, schemas


def _args(pairs):
    return [(n, json.loads(a)) for n, a in pairs]


@pytest.mark.parametrize("fmt", FURTHER)
@FURTHER_EXAMPLES
@given(data=st.data())
def test_further_formats_any_chunking_streams_to_the_one_shot_result(fmt, data):
    text, content, calls, schemas = data.draw(further_output(fmt), label="output")
    p = tools.create(fmt)
    p.set_streaming_tool_schemas(schemas)
    full = p.parse_complete(text)
    assert (full.content or "") == content
    # (compared as JSON: a Python literal's float keeps its own spelling)
    assert _args((c.name, c.arguments) for c in full.tool_calls) == calls
    assert all(re.fullmatch(r"call_[0-9a-f]{24}", c.id) for c in full.tool_calls)
    q = tools.create(fmt)
    q.set_streaming_tool_schemas(schemas)
    got = stream(q, chunked(data, text), with_ids=False)
    assert got == (content, [(c.name, c.arguments) for c in full.tool_calls])


@pytest.mark.parametrize("fmt", FURTHER)
@FURTHER_EXAMPLES
@given(data=st.data())
def test_further_formats_marker_soup_is_chunking_invariant_and_conserves_content(fmt, data):
    call = write_calls(fmt, [("f", {"a": 1})])
    own = [call[: len(call) // 3], call[len(call) // 3: 2 * len(call) // 3], call[2 * len(call) // 3:],
           *tools.create(fmt).openers, *_further_think(fmt)]
    text = data.draw(st.lists(st.sampled_from(FRAGMENTS + own) | st.text(max_size=3), max_size=25).map("".join),
                     label="text")
    assert_soup_consistent(fmt, text, chunked(data, text))
