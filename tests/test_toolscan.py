"""The compiled tool-call scanner against its pure twin (issue 26).

Two levels, both differential: the scanner's pieces (``JsonReader``, ``escape``,
``gemma_string_json``, ``hold_start``, ``XmlStringSink``, ``to_deltas``) on random input and random
chunking, and every registered tool format run end to end on each scanner
(``_base._use_scanner``) over random calls, mutations and chunkings: every chunk's
result, the finish and the one-shot parse must be the same.  Without the compiled
scanner (pure installs) the tests that need it are skipped; the backend rule
itself is checked either way.

More examples: ``TOOLSCAN_EXAMPLES=500 python -m pytest tests/test_toolscan.py``.
"""
from __future__ import annotations

import abc

import itertools
import json
import os
import random
import sys
from typing import ClassVar, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasoning_core import tools
from reasoning_core.tools import _base, _json
from reasoning_core_py import _toolscan as pure

try:
    from reasoning_core import _toolscan as compiled
except ImportError:  # pure install
    compiled = None

needs_compiled = pytest.mark.skipif(compiled is None, reason="the compiled tool-call scanner is not built")
EXAMPLES = int(os.environ.get("TOOLSCAN_EXAMPLES", "0")) or None


def _examples(n: int):
    return settings(max_examples=EXAMPLES or n, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ------------------------------------------------------------------ backend choice

def test_the_scanner_follows_the_engine_backend():
    from reasoning_core import _dispatch

    if _dispatch.BACKEND == "python":
        assert _json.SCAN is pure and _json.SCAN_BACKEND == "python"
    elif compiled is not None:
        assert _json.SCAN is compiled and _json.SCAN_BACKEND == "cython"
    assert _base._scan is _json.SCAN and _base.JsonReader is _json.SCAN.JsonReader


def test_scanner_names_and_bad_backends():
    assert _json.scanner("python") is pure
    with pytest.raises(ValueError):
        _json.scanner("fortran")
    if compiled is not None:
        assert _json.scanner("cython") is compiled
        for name in ("NEED", "DONE", "ERROR"):
            assert getattr(compiled, name) == getattr(pure, name)


# ------------------------------------------------------------------ the pieces

# characters that matter to the JSON reader, and some that do not
_JSON_ALPHABET = st.sampled_from(list('{}[]",:\\/ \t\n\r0123456789-+.eEtrufalsnbx') + ["\u00e9", "\u2028", "\x00",
                                                                                       "\x1f", "\ud83d", "\ude00",
                                                                                       "\U0001f600"])


@st.composite
def json_texts(draw):
    """Valid JSON (random layout and escapes), then maybe mangled; or soup."""
    kind = draw(st.integers(0, 2))
    if kind == 2:
        return draw(st.text(_JSON_ALPHABET, max_size=60))
    value = draw(st.recursive(
        st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=12),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
        max_leaves=12))
    text = json.dumps(value, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 0, 2])))
    if kind == 1 and text:
        i = draw(st.integers(0, len(text)))
        text = text[:i] + draw(st.text(_JSON_ALPHABET, max_size=3)) + text[i + draw(st.integers(0, 2)):]
    return text


def _cuts(draw, text):
    n = len(text)
    if n < 2:
        return [text] if text else []
    cuts = sorted(set(draw(st.lists(st.integers(1, n - 1), max_size=min(n - 1, 16)))))
    return [text[i:j] for i, j in zip([0, *cuts], [*cuts, n])]


def _read(mod, chunks, require_object, eof_at_end):
    out: list[str] = []
    r = mod.JsonReader(out.append, require_object)
    trace = []
    buf, pos = "", 0
    for i, c in enumerate(chunks):
        buf = buf[pos:] + c
        eof = eof_at_end and i == len(chunks) - 1
        pos, status = r.feed(buf, 0, eof)
        trace.append((pos, status, len(out)))
        if status != mod.NEED:
            return trace, out, buf[pos:]
    if not eof_at_end:
        pos, status = r.feed(buf[pos:], 0, True)
        trace.append((pos, status, len(out)))
    return trace, out, None


@needs_compiled
@_examples(400)
@given(st.data(), json_texts(), st.booleans(), st.booleans())
def test_json_reader_matches_the_twin(data, text, require_object, eof_at_end):
    chunks = _cuts(data.draw, text) or [""]
    got = _read(compiled, chunks, require_object, eof_at_end)
    want = _read(pure, chunks, require_object, eof_at_end)
    assert got == want
    # and valid JSON read whole is json.dumps' layout (numbers aside)
    trace, out, _ = want
    if trace and trace[-1][1] == pure.DONE:
        json.loads("".join(out))


# characters of two- and four-byte strings: what escape writes as it is, as a
# short escape and as a six-character one; the lone surrogates (escaped) can leave an output
# narrower than its input
_WIDE_ESCAPE_ALPHABET = st.sampled_from(["a", " ", '"', "\\", "\n", "\t", "\x00", "\x1f", "\x7f", "\u00e9",
                                         "\u00ff", "\u0100", "\u4e2d", "\u2028", "\ud800", "\udbff", "\udc00",
                                         "\udfff", "\ue000", "\uffff", "\U0001f600", "\U0010ffff"])


@needs_compiled
@_examples(300)
@given(st.text(_JSON_ALPHABET, max_size=40) | st.text(max_size=40)
       | st.text(st.characters(max_codepoint=255), max_size=80)  # one byte per character
       | st.text(_WIDE_ESCAPE_ALPHABET, max_size=60))  # two and four bytes, the output as wide or narrower
def test_escape_matches_the_twin_and_json(s):
    assert compiled.escape(s) == pure.escape(s)
    if not any("\ud800" <= ch <= "\udfff" for ch in s):
        assert '"' + compiled.escape(s) + '"' == json.dumps(s, ensure_ascii=False)


# pieces of a Gemma 4 <|"|> string body: escapes good and bad, split pairs, raw
# quotes, controls and surrogates
_GEMMA_PIECES = st.sampled_from(["a", "\u00e9", '"', "\\", "\\u", "\\ud83d", "\\ude00", "\\uD800", "\\udc00",
                                 "\\u00", "\\u001f", "\\u0022", "\\u005c", "\\uZZ12", "\\n", '\\"', "\\/",
                                 "\\x", "\\t", "\\b", "\\f", "\\r", "\n", "\x01", "\ud800", "\udc00",
                                 "\U0001f600", "0", "F", "u", " ", "\x7f", "\u0100"])


@_examples(400)
@given(st.lists(_GEMMA_PIECES, max_size=12).map("".join) | st.text(max_size=30))
def test_gemma_string_json_matches_the_twin_and_json(body):
    """The body decoded as a JSON string literal whose quotes are text, written
    back as one; None exactly where that decoding fails."""
    want = pure.gemma_string_json(body)
    try:
        value = json.loads('"' + body.replace('"', '\\"') + '"')
    except ValueError:
        assert want is None
    else:
        assert want is not None
        if not any("\ud800" <= ch <= "\udfff" for ch in value):
            assert want == json.dumps(value, ensure_ascii=False)
    if compiled is not None:
        assert compiled.gemma_string_json(body) == want


_MARKER_SETS = [("</tool_call>", "<tool_call>"), ("<parameter=", "</function>", "</tool_call>"),
                (">", "\n", "</function>"), ("<｜tool▁call▁end｜>",), ("ab", "abc", "b"),
                ("｜▁", "｜t")]  # (one first character, wider than a byte)


@needs_compiled
@_examples(300)
@given(st.sampled_from(_MARKER_SETS),
       st.lists(st.sampled_from(list("<>/_=\nabcolt｜▁") + ["tool_call", "</"]), max_size=20).map("".join),
       st.integers(0, 40))
def test_hold_start_matches_the_twin(ms, buf, pos):
    m = _base.markers(*ms)
    pos = min(pos, len(buf))
    assert compiled.hold_start(m, buf, pos) == pure.hold_start(m, buf, pos)


class _UntilState:
    """What ``until`` reads and writes of a parser."""

    def __init__(self, buf, pos, eof):
        self._buf, self._pos, self._eof = buf, pos, eof
        self._lane, self._lane_args = None, False

    def _emit_args(self, text):  # pragma: no cover - only compared by identity
        pass

    def _args_sink(self, sink):
        return sink == self._emit_args


@needs_compiled
@_examples(300)
@given(st.sampled_from(_MARKER_SETS),
       st.lists(st.sampled_from(list("<>/_=\nabcolt｜▁") + ["tool_call", "</"]), max_size=20).map("".join),
       st.integers(0, 40), st.booleans(), st.sampled_from(["list", "xml", "xml_args"]))
def test_until_matches_the_twin(ms, buf, pos, eof, kind):
    """One pass of ``_until`` on each scanner: the marker (or None / False), what
    the sink got, the position and the lane left behind."""
    m = _base.markers(*ms)
    pos = min(pos, len(buf))
    seen = []
    for mod in (compiled, pure):
        p = _UntilState(buf, pos, eof)
        got: list = []
        if kind == "list":
            sink = got.append
        else:
            sink = mod.XmlStringSink(p._emit_args if kind == "xml_args" else got.append)
        r = mod.until(p, m, sink)
        lane = p._lane if p._lane is None else (p._lane[0], p._lane[1] is sink)
        seen.append((r, got, p._pos, lane, p._lane_args))
    assert seen[0] == seen[1]
    r, _, at, lane, lane_args = seen[1]
    assert (r is False) == (lane is not None)
    assert lane_args == (r is False and kind == "xml_args")
    if isinstance(r, str):
        assert r in ms and buf[at - len(r):at] == r


@needs_compiled
@_examples(300)
@given(st.lists(st.text(st.sampled_from(list("a\n\"\\<é\x01")), max_size=6), max_size=8), st.booleans())
def test_xml_string_sink_matches_the_twin(pieces, framed):
    got, want = [], []
    a, b = compiled.XmlStringSink(got.append, framed), pure.XmlStringSink(want.append, framed)
    for p in pieces:
        a(p)
        b(p)
    assert got == want
    if not framed:  # the value byte for byte: the whole text, escaped
        assert json.loads('"' + "".join(got) + '"') == "".join(pieces)


_EVENTS = st.lists(st.one_of(
    st.tuples(st.just("c"), st.integers(0, 2), st.text(max_size=3)),
    st.tuples(st.just("n"), st.integers(0, 2), st.text(max_size=3), st.text(max_size=3)),
    st.tuples(st.just("a"), st.integers(0, 2), st.text(min_size=1, max_size=3))), max_size=8)


@needs_compiled
@_examples(300)
@given(_EVENTS)
def test_to_deltas_matches_the_twin_and_the_constructor(events):
    from reasoning_core.tools import ParsedToolCallDelta

    got = compiled.to_deltas(events, ParsedToolCallDelta)
    want = pure.to_deltas(events, ParsedToolCallDelta)
    assert got == want
    for d in got + want:
        assert type(d) is ParsedToolCallDelta
        # the cheap objects are the constructor's objects
        assert d == ParsedToolCallDelta(index=d.index, id=d.id, name=d.name, arguments=d.arguments,
                                        content=d.content)
        assert vars(d) == vars(ParsedToolCallDelta(**vars(d)))


def test_result_objects_fall_back_to_the_constructor_for_another_class():
    """A class the cheap builder does not fit (other fields) is built by its constructor."""
    from dataclasses import dataclass

    @dataclass
    class Other:
        index: int
        id: object = None
        name: object = None
        arguments: object = None
        content: object = None
        extra: int = 7

    for mod in filter(None, (compiled, pure)):
        (d,) = mod.to_deltas([("a", 1, "x")], Other)
        assert d == Other(index=1, arguments="x") and d.extra == 7


# ------------------------------------------------------------------ every format, end to end

def _template(fmt: str) -> str:
    """One call of ``fmt`` whose argument ``k`` holds the placeholder ``\\x00VALUE\\x00``."""
    import test_hardening_tools as H
    import test_tools_max as M

    name = tools.create(fmt).format_name
    if name in M.NEW or fmt in M.NEW:
        text = M.render(fmt if fmt in M.NEW else name, [("f", {"k": 987654321})])
        assert text.count("987654321") == 1, fmt
        return text.replace("987654321", "\x00VALUE\x00")
    for cand in (fmt, name):
        try:
            return H.call_text(cand, "f", "k", "\x00VALUE\x00")
        except Exception:  # noqa: BLE001 - a name call_text does not know: try the format's own name
            continue
    raise AssertionError(f"no writer for {fmt}")


FORMATS = tools.available()
_TEMPLATES: dict = {}


def _template_of(fmt: str) -> str:
    # written once per format, outside Hypothesis (the writers may draw examples themselves)
    if fmt not in _TEMPLATES:
        _TEMPLATES[fmt] = _template(fmt)
    return _TEMPLATES[fmt]
_VALUE_PIECES = st.sampled_from(list('ab {}[]",:\\<>/=\n\t0129.-é') + ["\ud800", "true", "null"])


def _value_text(max_size):
    return st.lists(_VALUE_PIECES, max_size=max_size).map("".join)


def _parser_markers(fmt: str) -> list[str]:
    p = tools.create(fmt)
    found = set(p.openers)
    for cls in type(p).__mro__:
        for v in vars(cls).values():
            if isinstance(v, _base.Markers):
                found.update(v.markers)
    return sorted(found)


@st.composite
def format_texts(draw, fmt):
    tpl = _TEMPLATES[fmt]
    if draw(st.booleans()):
        value = json.dumps(draw(st.recursive(st.none() | st.integers() | st.text(max_size=8),
                                             lambda x: st.lists(x, max_size=3) | st.dictionaries(
                                                 st.text(max_size=4), x, max_size=3), max_leaves=6)),
                           ensure_ascii=draw(st.booleans()))
    else:
        value = draw(_value_text(30))
    text = tpl.replace("\x00VALUE\x00", value)
    marks = _parser_markers(fmt)
    frag = st.sampled_from(marks + [m[:len(m) // 2] for m in marks if len(m) > 1]) | _value_text(4)
    before = "".join(draw(st.lists(frag, max_size=2)))
    after = "".join(draw(st.lists(frag, max_size=2)))
    text = before + text * draw(st.integers(1, 2)) + after
    if draw(st.integers(0, 3)) == 0 and text:  # a mutation somewhere
        i = draw(st.integers(0, len(text) - 1))
        text = text[:i] + draw(frag) + text[i + draw(st.integers(0, 3)):]
    return text


def _snapshot(d):
    return (d.index, d.id is None, d.name, d.arguments, d.content)


def run_parser(fmt, text, chunks, schemas=None):
    """One format on the scanner in use: every chunk's deltas and the finish's,
    the calls kept (name, arguments, ok) before the finish, and the one-shot parse."""
    p = tools.create(fmt)
    if schemas:
        p.set_streaming_tool_schemas(schemas)
    trace = []
    for c in chunks:
        r = p.parse_delta(c)
        trace.append(None if r is None else [_snapshot(d) for d in r])
        # what the parser holds and where it is in the whole output (a chunk
        # read whole may leave _buf as it was: the offsets must agree)
        trace.append((p._buf[p._pos:], p._base + p._pos, p._marker_at, p._error_at))
    calls = [(c.name, "".join(c.args), c.ok) for c in p._calls]
    trace.append([_snapshot(d) for d in p.finish()])
    try:
        full = p.parse_complete(text)
        whole = (full.content, [(c.name, c.arguments) for c in full.tool_calls])
    except ValueError as e:
        whole = ("ValueError", str(e))
    return trace, calls, whole


def _run(backend, fmt, text, chunks, schemas):
    with _base._use_scanner(backend):
        trace, _calls, whole = run_parser(fmt, text, chunks, schemas)
    return trace, whole


_SCHEMA = {"f": {"type": "object", "properties": {"k": {"type": "string"}}}}


@pytest.fixture(scope="module", params=FORMATS)
def fmt(request):
    _template_of(request.param)
    return request.param


@needs_compiled
@_examples(15)
@given(data=st.data())
def test_every_format_streams_the_same_on_both_scanners(fmt, data):
    text = data.draw(format_texts(fmt))
    chunks = _cuts(data.draw, text)
    if data.draw(st.integers(0, 4)) == 0:
        chunks = list(text)
    schemas = _SCHEMA if data.draw(st.booleans()) else None
    assert _run("cython", fmt, text, chunks, schemas) == _run("python", fmt, text, chunks, schemas)


@needs_compiled
@pytest.mark.parametrize("fmt", ["hermes", "qwen3_coder"])
def test_long_arguments_in_token_sized_chunks(fmt):
    """The hot path itself: a long argument (code with quotes, escapes and non-ASCII)
    in 1-13 character chunks, through the lanes of both scanners."""
    rnd = random.Random(26)
    code = "".join(f'    x[{i}] = "caf\u00e9\\t{i}"  # \\u00e9 <tag> {{}}\n' for i in range(300))
    text = "Writing.\n" + _template_of(fmt).replace("\x00VALUE\x00", json.dumps(code) if fmt == "hermes" else code)
    cuts = []
    i = 0
    while i < len(text):
        cuts.append(text[i:i + rnd.randint(1, 13)])
        i += len(cuts[-1])
    for schemas in (None, _SCHEMA):
        got = _run("cython", fmt, text, cuts, schemas)
        assert got == _run("python", fmt, text, cuts, schemas)
        args = "".join(d[3] or "" for r in got[0] if isinstance(r, list) for d in r)
        assert json.loads(args) == {"k": code}


# JSON string bodies in pieces: plain runs, the escapes the reader keeps as
# written, and what ends a run it copies (a quote, an escape it rewrites, half a
# surrogate pair, a control character, a raw surrogate, a bad escape)
_STRING_PIECES = st.sampled_from(["ab", "x y", "\u00e9", "\U0001f4a1", "\\ud83d", "\\ude00", "\\u00e9",
                                  "\\n", '\\"', "\\\\", "\\t", "\\r", "\\b", "\\f", "\\/", "\\x",
                                  "a\\n    b", '"', "\x01", "\ud800", "\\ud83d x", "\\"])


@pytest.fixture(scope="module", params=["hermes", "kimi_k2", "deepseek_v31"])
def json_args_fmt(request):
    _template_of(request.param)
    return request.param


@needs_compiled
@_examples(150)
@given(st.lists(_STRING_PIECES, max_size=10), st.data())
def test_plain_runs_inside_a_json_string_match_the_twin(json_args_fmt, parts, data):
    """A delta of plain characters and escapes the reader keeps as written
    (``\\n``, ``\\"``...) inside a string, with nothing held before it, is
    read whole: it must give what the reader gives, after a pending high
    surrogate, an escape cut in two or a closed string too (the deltas are
    cut at the pieces' edges and at random)."""
    fmt, body = json_args_fmt, "".join(parts)
    text = _template_of(fmt).replace("\x00VALUE\x00", '"' + body + '"')
    start = text.index('"' + body + '"')
    edges = {start, start + 1}
    at = start + 1
    for part in parts:
        at += len(part)
        edges.add(at)
    edges.update(data.draw(st.lists(st.integers(1, len(text) - 1), max_size=6)))
    cuts = sorted(e for e in edges if 0 < e < len(text))
    chunks = [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)])]
    assert _run("cython", fmt, text, chunks, None) == _run("python", fmt, text, chunks, None)


# content around a call: text with and without the markers' first characters,
# reasoning, and half markers
_CONTENT_PIECES = st.sampled_from(["Hi ", "a", " b\n", "<", "<t", "[", "{", "x<y", "\u00e9 ", "<think>", "</think>",
                                   "\n\n", "|", "\U0001f4a1", "<tool", "[TOOL"])


@pytest.fixture(scope="module", params=["hermes", "qwen3_coder", "kimi_k2", "mistral", "inkling", "llama3_json"])
def content_fmt(request):
    _template_of(request.param)
    return request.param


@needs_compiled
@_examples(120)
@given(st.lists(_CONTENT_PIECES, max_size=10), st.lists(_CONTENT_PIECES, max_size=6), st.data())
def test_content_chunks_match_the_twin(content_fmt, before, after, data):
    """A delta the parser's own ``_content`` would take whole (nothing held,
    no marker's first character in it) is answered as content without an
    event: the same answers as the twin for every chunk, before, between and
    after calls, inside reasoning, and for a format whose class has its own
    ``_content`` (``inkling``: it is not taken)."""
    fmt = content_fmt
    call = _template_of(fmt).replace("\x00VALUE\x00", '"v"')
    text = "".join(before) + call + "".join(after)
    edges, at = set(), 0
    for part in before:
        at += len(part)
        edges.add(at)
    at += len(call)
    edges.add(at)
    for part in after:
        at += len(part)
        edges.add(at)
    edges.update(data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=5)))
    cuts = sorted(e for e in edges if 0 < e < len(text))
    chunks = [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)])]
    assert _run("cython", fmt, text, chunks, None) == _run("python", fmt, text, chunks, None)


@pytest.mark.parametrize("backend", ["cython", "python"] if _json.SCAN_BACKEND == "cython" else ["python"])
def test_push_content_answers_a_content_delta_whole(backend):
    with _base._use_scanner(backend) as mod:
        p = tools.create("hermes")
        assert mod.push_content(p, "plain text ") == "plain text "
        assert mod.push_content(p, "more <") == "more "  # "<" held: it may start <tool_call>
        assert mod.push_content(p, "b and c") == "<b and c"
        assert p._events == []


def _public(mod) -> set:
    import types

    return {n for n, v in vars(mod).items()
            if not n.startswith("_") and not isinstance(v, types.ModuleType) and n != "annotations"}


def test_stub_and_compiled_module_declare_the_twins_names():
    import ast
    from pathlib import Path

    import reasoning_core

    tree = ast.parse((Path(reasoning_core.__file__).parent / "_toolscan.pyi").read_text())
    stub = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            stub.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            stub.add(node.target.id)
    assert stub == _public(pure)
    if compiled is not None:
        assert _public(pure) <= set(dir(compiled))


@pytest.mark.parametrize("backend", ["cython", "python"] if _json.SCAN_BACKEND == "cython" else ["python"])
def test_str_subclasses_are_read_as_their_text(backend):
    """An engine may hand a marker as a str subclass (MAX's SpecialToken StrEnum):
    both scanners read its text, in streaming and one-shot parsing alike."""
    import enum

    class Marker(str, enum.Enum):
        OPEN = "<tool_call>"

    class Text(str):
        pass

    pieces = ["Sure. ", Marker.OPEN, Text('{"name": "f", "arguments": {"a": 1}}'), "</tool_call>"]
    with _base._use_scanner(backend):
        plain, sub = tools.create("hermes"), tools.create("hermes")
        def shape(out):  # call ids are random
            return out if not out else [(d.index, d.id is not None, d.name, d.arguments, d.content) for d in out]

        assert [shape(sub.parse_delta(x)) for x in pieces] == [shape(plain.parse_delta(str.__str__(x))) for x in pieces]
        whole = "".join(str.__str__(x) for x in pieces)
        assert tools.create("hermes").parse_complete(Text(whole)).tool_calls[0].name == "f"


def _run_args(backend, fmt, chunks, schemas):
    """Each chunk through ``step`` (one parser) and ``step_args`` (another):
    where ``step_args`` answers a ``str``, ``step`` answers that one piece of the
    open call's arguments; everywhere else the two answer the same."""
    with _base._use_scanner(backend) as mod:
        a, b = tools.create(fmt), tools.create(fmt)
        if schemas:
            a.set_streaming_tool_schemas(schemas)
            b.set_streaming_tool_schemas(schemas)
        trace = []
        for c in chunks:
            ra = a.parse_delta(c)
            rb = mod.step_args(b, c, tools.ParsedToolCallDelta)
            sa = None if ra is None else [_snapshot(d) for d in ra]
            if type(rb) is str:
                assert b._cur is not None
                assert sa == [(b._cur.index, True, None, rb, None)]
                trace.append(("args", b._cur.index, rb))
            else:
                assert sa == (None if rb is None else [_snapshot(d) for d in rb])
                trace.append(sa)
        assert [_snapshot(d) for d in a.finish()] == [_snapshot(d) for d in b.finish()]
    return trace


@_examples(10)
@given(data=st.data())
def test_step_args_answers_what_step_answers(fmt, data):
    text = data.draw(format_texts(fmt))
    chunks = _cuts(data.draw, text)
    schemas = _SCHEMA if data.draw(st.booleans()) else None
    got = _run_args("python", fmt, chunks, schemas)
    if compiled is not None:
        assert _run_args("cython", fmt, chunks, schemas) == got


@pytest.mark.parametrize("fmt", ["hermes", "qwen3_coder"])
def test_step_args_in_long_arguments(fmt):
    code = "".join(f'    x[{i}] = "caf\u00e9\\t{i}"  # <tag> {{}}\n' for i in range(200))
    text = "Writing.\n" + _template_of(fmt).replace("\x00VALUE\x00", json.dumps(code) if fmt == "hermes" else code)
    chunks = [text[i:i + 5] for i in range(0, len(text), 5)]
    got = _run_args("python", fmt, chunks, _SCHEMA)
    assert sum(1 for t in got if t and t[0] == "args") > len(chunks) // 2  # the lane answers most chunks
    if compiled is not None:
        assert _run_args("cython", fmt, chunks, _SCHEMA) == got


def _stretch_def(p, drops):
    """``stretch``'s definition: the parser waits in an ``_until`` scan of markers
    other than the content's, nothing held or recorded, whose sink keeps the
    text in a list or drops it (one of ``drops``)."""
    lane = p._lane
    if not (isinstance(lane, tuple) and len(lane) == 2 and p._rec is None and p._pos == len(p._buf)):
        return None
    ms, sink = lane
    if ms is p._content_markers:
        return None
    kept = getattr(sink, "__self__", None).__class__ is list and getattr(sink, "__name__", None) == "append" \
        and type(sink) is type([].append)
    return ms if kept or any(sink is d for d in drops) else None


@_examples(10)
@given(data=st.data())
def test_stretch_matches_its_definition_and_the_twin(fmt, data):
    """After every chunk a parser reads, in any format, cut anywhere: ``stretch``
    (both scanners, read-only) answers what its definition does; and some
    chunking of some format leaves a parser in a stretch (the test can see one)."""
    text = data.draw(format_texts(fmt))
    chunks = _cuts(data.draw, text)
    drops = (_base._drop,) if data.draw(st.booleans()) else ()
    schemas = data.draw(st.booleans())
    for backend in ["python"] + (["cython"] if compiled is not None else []):
        with _base._use_scanner(backend):
            p = tools.create(fmt)
            if schemas:
                p.set_streaming_tool_schemas(_SCHEMA)
            for c in chunks:
                p.parse_delta(c)
                want = _stretch_def(p, drops)
                assert pure.stretch(p, drops) is want
                if compiled is not None:
                    assert compiled.stretch(p, drops) is want


@pytest.mark.parametrize("backend", ["cython", "python"] if compiled is not None else ["python"])
def test_stretch_sees_a_glm45_key_and_the_text_between_tags(backend):
    mod = compiled if backend == "cython" else pure
    seen = []
    with _base._use_scanner(backend):
        p = tools.create("glm45")
        for c in ["Hi ", "<tool_call>", "get", "\n", "<arg_key>", "ci", "</arg_key>", "\n", "<arg_value>", "3",
                  "</arg_value>", "\n", "</tool_call>", " ok"]:
            p.parse_delta(c)
            ms = mod.stretch(p, (_base._drop,))
            seen.append(None if ms is None else ms.markers)
            assert mod.stretch(p, ()) is (ms if ms is None or p._lane[1] is not _base._drop else None)
    g = tools.Glm45ToolParser
    assert seen == [None, g._NAME_END.markers, g._NAME_END.markers, g._SCAN_ARGS.markers, g._KEY_END.markers,
                    g._KEY_END.markers, g._TO_VALUE.markers, g._TO_VALUE.markers, g._VALUE_END.markers,
                    g._VALUE_END.markers, g._SCAN_ARGS.markers,
                    g._SCAN_ARGS.markers, None, None]
    with pytest.raises(TypeError):
        mod.stretch(p, [_base._drop])


def _push_run(backend, fmt, chunks, schemas, own_push=False):
    """Each chunk through ``backend``'s ``push_content`` (``own_push``: the
    parser's own ``_push``, its content read from its events), on that
    backend's scanner: the content per chunk, the calls and where the parser
    stands at the end."""
    with _base._use_scanner(backend) as mod:
        p = tools.create(fmt)
        if schemas:
            p.set_streaming_tool_schemas(schemas)
        got = []
        for c in chunks:
            if own_push:
                p._push(c)
                events, p._events = p._events, []
                got.append("".join(e[2] for e in events if e[0] == "c"))
            else:
                got.append(mod.push_content(p, c))
        calls = [(c.index, c.name, "".join(c.args), c.ok) for c in p._calls]
        return got, calls, (p._buf[p._pos:], p._base + p._pos, p._cur is None, p._error_at)


@_examples(10)
@given(data=st.data())
def test_push_content_is_push_then_the_content_of_its_events(fmt, data):
    text = data.draw(format_texts(fmt))
    chunks = [c for c in _cuts(data.draw, text) if c]
    schemas = _SCHEMA if data.draw(st.booleans()) else None
    want = _push_run("python", fmt, chunks, schemas, own_push=True)
    assert _push_run("python", fmt, chunks, schemas) == want
    if compiled is not None:
        assert _push_run("cython", fmt, chunks, schemas) == want
        assert _push_run("cython", fmt, chunks, schemas, own_push=True) == want


@pytest.mark.parametrize("backend", ["cython", "python"] if compiled is not None else ["python"])
def test_push_content_reads_prose_and_a_call_fed_to_its_scan(backend):
    chunks = ["Hi ", "there <", "tool_call>\n<function=f>\n<parameter=a>\n1", "2\n</parameter>\n</func", "tion>",
              "\n</tool_call> bye"]
    got = _push_run(backend, "qwen3_coder", chunks, None)
    assert got == _push_run(backend, "qwen3_coder", chunks, None, own_push=True)
    assert "".join(got[0]) == "Hi there  bye" and got[1] == [(0, "f", '{"a": 12}', True)]


@pytest.mark.parametrize("backend", ["cython", "python"] if compiled is not None else ["python"])
def test_model_new_builds_what_the_validated_constructor_builds(backend):
    mod = compiled if backend == "cython" else pure
    Fn, Call, _Msg = _models()

    fn = mod.model_new(Fn, {"name": None, "arguments": "{"}, frozenset(("arguments",)), False)
    want_fn = Fn(arguments="{")
    call = mod.model_new(Call, {"id": "c", "type": None, "index": 2, "function": fn}, ("id", "index", "function"), True)
    want = Call(id="c", index=2, function=want_fn)
    assert call == want and fn == want_fn
    assert call.model_dump_json(exclude_unset=True) == want.model_dump_json(exclude_unset=True)
    assert call.model_fields_set == want.model_fields_set and fn.model_fields_set == want_fn.model_fields_set
    assert call.__pydantic_extra__ == want.__pydantic_extra__ == {} and fn.__pydantic_extra__ is None
    # fields set and extra are the object's own: assignments touch only it
    other = mod.model_new(Call, {"id": None, "type": None, "index": 0, "function": None}, ("index",), True)
    call.name_hint = "x"
    fn.name = "f"
    assert "name" in fn.model_fields_set and other.model_fields_set == {"index"} and other.__pydantic_extra__ == {}
    assert call.model_dump()["name_hint"] == "x"
    with pytest.raises(TypeError):
        mod.model_new(Call, [("index", 0)], (), True)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), text=st.text(alphabet='{}[]"\\ab:,\u00e9\u4e2d\U0001f600', max_size=40))
def test_json_closer_matches_the_twin(data, text):
    chunks = _cuts(data.draw, text)
    mods = [pure] + ([compiled] if compiled is not None else [])
    runs = []
    for mod in mods:
        c = mod.JsonCloser()
        runs.append(([c.feed(x) for x in chunks], c.depth, c.in_str, c.esc, c.done))
    assert all(r == runs[0] for r in runs)


@given(data=st.data(), value=st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab"\\{}[]\n\u00e9', max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet='k"}\\', max_size=3), inner,
                                                                 max_size=3), max_leaves=8))
def test_json_closer_fires_where_the_value_first_parses(data, value):
    """For an object streamed in pieces (trailing text after it), the closer
    fires on the piece that holds its last character, and only there."""
    whole = json.dumps({"v": value}, ensure_ascii=data.draw(st.booleans()))
    chunks = _cuts(data.draw, whole + data.draw(st.sampled_from(["", " ", "}", "]x", '{"a":1}'])))
    ends, n = [], 0
    for x in chunks:
        n += len(x)
        ends.append(n)
    want = [False] * len(chunks)
    want[next(i for i, e in enumerate(ends) if e >= len(whole))] = True
    for mod in [pure] + ([compiled] if compiled is not None else []):
        c = mod.JsonCloser()
        assert [c.feed(x) for x in chunks] == want


# ------------------------------------------------------------------ ModelShape and ArgsLane

def _models():
    pydantic = pytest.importorskip("pydantic")

    class Fn(pydantic.BaseModel):
        name: Optional[str] = None
        arguments: Optional[str] = None

    class Call(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="allow")
        id: Optional[str] = None
        type: Optional[str] = None
        index: int
        function: Optional[Fn] = None

    class Msg(pydantic.BaseModel):
        role: Optional[str] = None
        content: Optional[str] = None
        tool_calls: list[Call] = pydantic.Field(default_factory=list)

    return Fn, Call, Msg


def _shape(mod, Fn, Call, Msg):
    return mod.ModelShape([
        (Msg, {"role": None, "content": None, "tool_calls": [mod.CHILD]}, ("tool_calls",), False),
        (Call, {"id": None, "type": None, "index": mod.INDEX, "function": mod.CHILD}, ("index", "function"), True),
        (Fn, {"name": None, "arguments": mod.PIECE}, ("arguments",), False),
    ])


_BACKENDS = ["cython", "python"] if compiled is not None else ["python"]


@pytest.mark.parametrize("backend", _BACKENDS)
def test_model_shape_builds_what_the_validated_constructors_build(backend):
    mod = compiled if backend == "cython" else pure
    Fn, Call, Msg = _models()
    shape = _shape(mod, Fn, Call, Msg)
    for index, piece in ((0, "{"), (7, ""), (2, '"caf\u00e9\\n"')):
        got = shape.build(index, piece)
        want = Msg(tool_calls=[Call(index=index, function=Fn(arguments=piece))])
        assert type(got) is Msg and got == want and repr(got) == repr(want)
        assert got.model_dump_json(exclude_unset=True) == want.model_dump_json(exclude_unset=True)
        assert got.model_fields_set == want.model_fields_set == {"tool_calls"}
        call, fn = got.tool_calls[0], got.tool_calls[0].function
        assert call.model_fields_set == want.tool_calls[0].model_fields_set
        assert fn.model_fields_set == want.tool_calls[0].function.model_fields_set
        assert call.__pydantic_extra__ == {} and fn.__pydantic_extra__ is None and got.__pydantic_private__ is None
    # every tree is new: dicts, lists, fields sets and extras are its own
    a, b = shape.build(0, "x"), shape.build(0, "x")
    a.content = "c"
    a.tool_calls[0].function.name = "f"
    a.tool_calls[0].hint = 1
    a.tool_calls.append(Call(index=1))
    assert b == Msg(tool_calls=[Call(index=0, function=Fn(arguments="x"))]) and b.model_fields_set == {"tool_calls"}
    assert b.tool_calls[0].function.model_fields_set == {"arguments"} and b.tool_calls[0].__pydantic_extra__ == {}
    assert a.model_dump()["tool_calls"][0]["hint"] == 1
    # two levels, the index and the piece in one model
    flat = mod.ModelShape([(Msg, {"role": None, "content": mod.PIECE, "tool_calls": []}, ("content",), False)])
    a, b = flat.build(None, "t"), flat.build(None, "t")
    assert a == Msg(content="t") and repr(a) == repr(Msg(content="t")) and a.model_fields_set == {"content"}
    a.tool_calls.append(Call(index=0))  # a template's list is copied for each tree
    assert b.tool_calls == [] and flat.build(None, "u").tool_calls == []


@pytest.mark.parametrize("backend", _BACKENDS)
def test_model_shape_trees_own_their_dicts_once(backend):
    # each model's __dict__ is the dict it was built with, referenced by the
    # model alone (the compiled build may put it in its place directly)
    mod = compiled if backend == "cython" else pure
    Fn, Call, Msg = _models()

    class Hooked(Fn):
        # a model class whose instances' __dict__ goes through its own setter
        seen: ClassVar[list] = []

        @property
        def __dict__(self):
            return object.__getattribute__(self, "_d")

        @__dict__.setter
        def __dict__(self, d):
            Hooked.seen.append(d)
            object.__setattr__(self, "_d", d)

    got = _shape(mod, Fn, Call, Msg).build(4, "piece")
    for m in (got, got.tool_calls[0], got.tool_calls[0].function):
        d = vars(m)
        assert type(d) is dict and m.__dict__ is d
        assert sys.getrefcount(d) == 3  # the model's, d's and the argument's
    fn = got.tool_calls[0].function
    d = vars(fn)
    del got, fn, m
    assert sys.getrefcount(d) == 2 and d == {"name": None, "arguments": "piece"}
    try:
        hooked = mod.ModelShape([(Hooked, {"name": None, "arguments": mod.PIECE}, ("arguments",), False)])
    except ValueError:  # no settable slots to build it from
        return
    m = hooked.build(None, "x")
    assert Hooked.seen and Hooked.seen[-1] == {"name": None, "arguments": "x"}


@pytest.mark.parametrize("backend", _BACKENDS)
def test_model_shape_rejects_what_it_cannot_build(backend):
    mod = compiled if backend == "cython" else pure
    Fn, Call, Msg = _models()

    class OwnNew(Fn):
        def __new__(cls, *a, **k):
            return super().__new__(cls)

    class Plain:
        pass

    class Abstract(Fn):
        @abc.abstractmethod
        def f(self):
            """A model with an abstract method cannot be instantiated."""

    fn = (Fn, {"name": None, "arguments": mod.PIECE}, (), False)
    for levels, err in (
        ([], TypeError), ("x", TypeError), ([(Fn, {})], TypeError), ([("Fn", {}, (), False)], TypeError),
        ([(Fn, [("name", None)], (), False)], TypeError),
        ([(OwnNew, {"name": None}, (), False)], ValueError), ([(Plain, {"a": None}, (), False)], ValueError),
        ([(Abstract, {"name": None}, (), False)], ValueError),
        ([(Msg, {"tool_calls": []}, (), False), fn], ValueError),             # no CHILD above the last level
        ([(Fn, {"name": mod.CHILD}, (), False)], ValueError),                # a CHILD in the last level
        ([(Msg, {"content": mod.PIECE, "tool_calls": [mod.CHILD]}, (), False), fn], ValueError),  # PIECE twice
        ([(Msg, {"content": mod.CHILD, "tool_calls": [mod.CHILD]}, (), False), fn], ValueError),
        ([(Msg, {"tool_calls": [mod.CHILD, mod.CHILD]}, (), False), fn], ValueError),  # a hole inside a list
        ([(Fn, {"name": [mod.PIECE]}, (), False)], ValueError),
        ([(Fn, {f"k{i}": [] for i in range(17)}, (), False)], ValueError),  # over 16 open places
    ):
        with pytest.raises(err):
            mod.ModelShape(levels)


class _Guard:
    version = 0


class _InstanceGuard:
    # (the version a plain instance attribute, as the wrappers' guards keep it)
    def __init__(self):
        self.version = 0


def _run_lane(backend, fmt, chunks, bumps, schemas=None, guard_cls=_Guard):
    """Each chunk through ``step_args`` (one parser, the reference) and through
    an integration-style loop over ``ArgsLane`` (another): the lane's built
    results must be exactly the reference's argument pieces of its call, with
    the pieces, dirty set and closer kept as the loop would keep them."""
    Fn, Call, Msg = _models()
    with _base._use_scanner(backend) as mod:
        shape = _shape(mod, Fn, Call, Msg)
        a, b = tools.create(fmt), tools.create(fmt)
        if schemas:
            a.set_streaming_tool_schemas(schemas)
            b.set_streaming_tool_schemas(schemas)
        guard, dirty, pieces, closers, closed, lane = guard_cls(), set(), {}, {}, [], None
        trace = []
        for n, c in enumerate(chunks):
            if n in bumps:
                guard.version += 1
            ref = mod.step_args(a, c, tools.ParsedToolCallDelta)
            out = lane.step(c) if lane is not None else mod.step_args(b, c, tools.ParsedToolCallDelta)
            if type(out) is Msg:
                assert type(ref) is str and a._cur.index == lane.index
                assert out == shape.build(lane.slot, ref)
                trace.append(("built", lane.slot, ref))
                continue
            if type(out) is str:  # the general path: record, then stream the call on a lane
                assert type(ref) is str and out == ref
                i = b._cur.index
                pieces.setdefault(i, []).append(out)
                dirty.add(i)
                closer = closers.setdefault(i, mod.JsonCloser())
                if closer.feed(out):
                    closed.append(i)
                lane = mod.ArgsLane(b, tools.ParsedToolCallDelta, shape, i, i, pieces[i], dirty, closer,
                                    closed.append, guard, guard.version)
                trace.append(("args", i, out))
                continue
            assert type(ref) is not str
            assert (None if ref is None else [_snapshot(d) for d in ref]) == (
                None if out is None else [_snapshot(d) for d in out])
            trace.append(None if out is None else [_snapshot(d) for d in out])
        assert [_snapshot(d) for d in a.finish()] == [_snapshot(d) for d in b.finish()]
    # the pieces are each call's streamed arguments; the closer fired where a fresh one fires
    for i, ps in pieces.items():
        assert "".join(ps) == "".join(t[2] for t in trace if t and t[0] in ("args", "built") and t[1] == i)
        fresh, at = pure.JsonCloser(), None
        for k, p in enumerate(ps):
            if fresh.feed(p):
                at = k
        assert (i in closed) == (at is not None) and closed.count(i) <= 1
    assert dirty == set(pieces)
    return trace, closed


@_examples(5)
@given(data=st.data())
def test_args_lane_answers_what_step_args_answers(fmt, data):
    text = data.draw(format_texts(fmt))
    chunks = _cuts(data.draw, text)
    bumps = set(data.draw(st.lists(st.integers(0, max(len(chunks) - 1, 0)), max_size=2)))
    schemas = _SCHEMA if data.draw(st.booleans()) else None
    guard_cls = _InstanceGuard if data.draw(st.booleans()) else _Guard
    got = _run_lane("python", fmt, chunks, bumps, schemas, guard_cls)
    if compiled is not None:
        assert _run_lane("cython", fmt, chunks, bumps, schemas, guard_cls) == got


@pytest.mark.parametrize("fmt", ["hermes", "qwen3_coder", "mistral"])
def test_args_lane_builds_the_long_arguments(fmt):
    code = "".join(f'    x[{i}] = "caf\u00e9\\t{i}"  # <tag> {{}}\n' for i in range(200))
    text = "Writing.\n" + _template_of(fmt).replace("\x00VALUE\x00", json.dumps(code) if fmt != "qwen3_coder" else code)
    chunks = [text[i:i + 5] for i in range(0, len(text), 5)]
    trace, closed = _run_lane("python", fmt, chunks, {len(chunks) // 2}, _SCHEMA)
    assert sum(1 for t in trace if t and t[0] == "built") > len(chunks) // 2  # the lane answers most chunks
    # a version bump ends the lane (the loop starts another): its guard read either way
    assert any(t and t[0] == "args" and k >= len(chunks) // 2 for k, t in enumerate(trace))
    if compiled is not None:
        assert _run_lane("cython", fmt, chunks, {len(chunks) // 2}, _SCHEMA) == (trace, closed)
        assert _run_lane("cython", fmt, chunks, {len(chunks) // 2}, _SCHEMA, _InstanceGuard) == (trace, closed)


@pytest.mark.parametrize("backend", _BACKENDS)
def test_args_lane_checks_its_arguments(backend):
    mod = compiled if backend == "cython" else pure
    Fn, Call, Msg = _models()
    shape, p = _shape(mod, Fn, Call, Msg), tools.create("hermes")
    with _base._use_scanner(backend):
        lane = mod.ArgsLane(p, tools.ParsedToolCallDelta, shape, 0, 0, [])
        for bad in (None, b"x", 3):
            with pytest.raises(TypeError):
                lane.step(bad)
    for kw in ({"shape": "s"}, {"pieces": None}, {"closer": object(), "on_close": print},
               {"closer": mod.JsonCloser()}, {"on_close": print}, {"guard": object()}, {"empty": "x"},
               {"empty": object()}, {"parser": object()}):  # (a parser without a __dict__)
        args = dict(parser=p, cls=tools.ParsedToolCallDelta, shape=shape, index=0, slot=0, pieces=[])
        args.update(kw)
        with pytest.raises(TypeError):
            mod.ArgsLane(**args)
    with pytest.raises(TypeError):
        mod.JsonCloser().feed(None)


def _content_shape(mod, Msg):
    return mod.ModelShape([(Msg, {"role": None, "content": mod.PIECE, "tool_calls": []}, ("content",), False)])


def _run_content_lane(backend, fmt, chunks, schemas=None):
    """Each chunk through ``step_args`` (one parser, the reference) and
    through a ``ContentLane`` over another: a chunk the reference answers as
    content whole (``None``) is the lane's content message of it (``built``);
    every other answer is the reference's."""
    Fn, Call, Msg = _models()
    with _base._use_scanner(backend) as mod:
        shape = _content_shape(mod, Msg)
        a, b = tools.create(fmt), tools.create(fmt)
        if schemas:
            a.set_streaming_tool_schemas(schemas)
            b.set_streaming_tool_schemas(schemas)
        lane = mod.ContentLane(b, tools.ParsedToolCallDelta, shape)
        trace = []
        for c in chunks:
            ref = mod.step_args(a, c, tools.ParsedToolCallDelta)
            out = lane.step(c)
            if ref is None:
                assert lane.built and out == Msg(content=c) and out.model_fields_set == {"content"}
                trace.append(("content", c))
                continue
            assert not lane.built
            if type(ref) is str:
                assert out == ref
                trace.append(("args", ref))
            else:
                assert [_snapshot(d) for d in ref] == [_snapshot(d) for d in out]
                trace.append([_snapshot(d) for d in out])
        assert [_snapshot(d) for d in a.finish()] == [_snapshot(d) for d in b.finish()]
    return trace


@_examples(5)
@given(data=st.data())
def test_content_lane_answers_what_step_args_answers(fmt, data):
    text = data.draw(format_texts(fmt))
    text = "Some text < [ {.\n" + text + "\nand after."
    chunks = _cuts(data.draw, text)
    schemas = _SCHEMA if data.draw(st.booleans()) else None
    got = _run_content_lane("python", fmt, chunks, schemas)
    if compiled is not None:
        assert _run_content_lane("cython", fmt, chunks, schemas) == got


@pytest.mark.parametrize("backend", _BACKENDS)
def test_content_lane_checks_its_arguments(backend):
    mod = compiled if backend == "cython" else pure
    Fn, Call, Msg = _models()
    shape, p = _content_shape(mod, Msg), tools.create("hermes")
    with _base._use_scanner(backend):
        lane = mod.ContentLane(p, tools.ParsedToolCallDelta, shape)
        for bad in (None, b"x", 3):
            with pytest.raises(TypeError):
                lane.step(bad)
        with pytest.raises(ValueError):
            lane.step("")
        assert lane.step("plain") == Msg(content="plain") and lane.built
    with pytest.raises(TypeError):
        mod.ContentLane(p, tools.ParsedToolCallDelta, "shape")
    with pytest.raises(TypeError):
        mod.ContentLane(object(), tools.ParsedToolCallDelta, shape)  # a parser without a __dict__


class _Owner:
    """An integration-style owner of a lane: ``_streaming`` and ``_answer`` log
    what reaches them (the general path), as the engine wrappers' do."""

    def __init__(self, log):
        self._hot = self._request = self._schemas_for = None
        self.log = log

    def _streaming(self, *args):
        self.log.append(("general",) + tuple(a if type(a) is str else id(a) for a in args))
        return "general"

    def _answer(self, out, delta):
        self.log.append(("answer", None if out is None else type(out).__name__, delta))
        return "answer"


@pytest.mark.parametrize("backend", _BACKENDS)
def test_the_max_entry_steps_a_plain_delta_and_hands_on_the_rest(backend):
    """``max_tool_step`` (bound as ``parse_delta``): a non-empty plain ``str``
    is one step of the scanner kept in ``_step`` (this module's or another's),
    with our parser and the delta class kept; anything else goes to
    ``_parse_other``, as does every delta when no step is kept."""
    mod = compiled if backend == "cython" else pure
    other = pure if mod is compiled else compiled

    class M:
        parse_delta = mod.max_tool_step

        def __init__(self, log, step):
            self._rc, self._delta_t, self.log = tools.create("hermes"), tools.ParsedToolCallDelta, log
            if step is not None:
                self._step = step

        def _parse_other(self, delta):
            self.log.append(delta)
            return "other"

    class Sub(str):
        pass

    text = 'Hi.\n<tool_call>\n{"name": "f", "arguments": {"c": "ab\\n<x>\\u00e9"}}\n</tool_call>\nBye.'
    for step in (mod.step, other.step if other is not None else None):
        if step is None:
            continue
        with _base._use_scanner("cython" if step is getattr(compiled, "step", None) else "python"):
            for size in (1, 3, 7):
                log: list = []
                o, ref = M(log, step), tools.create("hermes")
                for c in [text[i:i + size] for i in range(0, len(text), size)]:
                    got, want = o.parse_delta(c), step(ref, c, tools.ParsedToolCallDelta)
                    assert (got if got is None or got == [] else [_snapshot(d) for d in got]) == (
                        want if want is None or want == [] else [_snapshot(d) for d in want])
                assert log == []
                for bad in ("", Sub("x"), None, b"x"):
                    assert o.parse_delta(bad) == "other"
                assert log == ["", "x", None, b"x"] and type(log[1]) is Sub
    log = []
    assert M(log, None).parse_delta("x") == "other" and log == ["x"]


@pytest.mark.parametrize("backend", _BACKENDS)
def test_the_tail_entry_keeps_what_the_lane_read(backend):
    """``sglang_tool_streaming_tail``: ``sglang_tool_streaming`` that also keeps
    the last ``TAIL`` characters read in ``_mtail`` when the lane builds the
    answer; an answer it does not build (``_answer``) and the general path
    leave ``_mtail`` to the owner."""
    mod = compiled if backend == "cython" else pure
    Fn, Call, Msg = _models()

    class T(_Owner):
        parse_streaming_increment = mod.sglang_tool_streaming_tail

    assert mod.TAIL == 16
    text = ("Hi.\n<tool_call>\n" + '{"name": "f", "arguments": {"c": "' + "ab\\n<x>\\u00e9 0123456789" * 4
            + '"}}\n</tool_call>\nBye.')
    with _base._use_scanner(backend):
        for size in (1, 3, 15, 16, 17, 40):
            chunks = [text[i:i + size] for i in range(0, len(text), size)] + [""]
            log: list = []
            o, req = T(log), object()
            o._schemas_for, o._mtail = req, "seed"
            p = tools.create("hermes")
            built = 0
            for c in chunks:
                if o._hot is None and p._cur is not None and p._cur.args:
                    o._hot = mod.ArgsLane(p, tools.ParsedToolCallDelta, _shape(mod, Fn, Call, Msg), p._cur.index,
                                          0, [])
                before = o._mtail
                got = o.parse_streaming_increment(c, req)
                if type(got) is Msg:
                    assert o._mtail == (before + c)[-16:]
                    built += 1
                else:
                    assert got in ("general", "answer") and o._mtail == before
                    if got == "general":
                        mod.step_args(p, c, tools.ParsedToolCallDelta)
            assert built > (3 if size < 16 else 0) and log


@pytest.mark.parametrize("backend", _BACKENDS)
def test_the_tail_entry_keeps_chunks_of_a_held_call(backend):
    """``sglang_tool_streaming_tail`` while a call is held (``_held`` set, no
    lane): a ``str`` chunk for the same tools without any of ``_hold.stops``
    is kept exactly as ``KeptChunks.keep_plain`` keeps it (256 kept join
    into a block) and answered with a new empty tree of ``_kept_shape``,
    ``_mtail`` untouched; every other chunk, and every chunk of an owner
    with nothing held, no shape or no hold, goes to ``_streaming``."""
    from reasoning_core.integrations._common import KeptChunks

    mod = compiled if backend == "cython" else pure
    Fn, Call, Msg = _models()
    kept_shape = mod.ModelShape([(Msg, {"role": None, "content": mod.PIECE, "tool_calls": []}, ("content",), False)])

    class S:
        parse_streaming_increment = mod.sglang_tool_streaming_tail

        def __init__(self, log, tools_obj):
            self.log, self._schemas_for, self._hot, self._mtail = log, tools_obj, None, "seed"
            self._held, self._hold, self._kept_shape = 0, KeptChunks("}]"), kept_shape

        def _streaming(self, new_text, tools_obj):
            self.log.append((new_text, tools_obj))
            return "python"

    class Sub(str):
        pass

    rng = random.Random(11)
    alphabet = ["a", "{", "}", "[", "]", '"', "\n", "é", ""]
    deltas = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4))) for _ in range(900)]
    req, log = object(), []
    o, ref = S(log, req), KeptChunks("}]")
    kept = 0
    for dt in deltas:
        got = o.parse_streaming_increment(dt, req)
        if "}" in dt or "]" in dt:
            assert got == "python" and log.pop() == (dt, req) and not ref.keep_plain(dt)
            continue
        assert ref.keep_plain(dt) and not log
        kept += 1
        assert type(got) is Msg and got.content == "" and got.tool_calls == [] and got.model_fields_set == {"content"}
        assert (o._hold.pend, o._hold.blocks, o._mtail) == (ref.pend, ref.blocks, "seed")
    assert kept > 256 and o._hold.blocks
    assert o._hold.take("z") == ref.take("z") and not o._hold.held()
    a, b = o.parse_streaming_increment("x", req), o.parse_streaming_increment("y", req)
    assert a is not b and a.tool_calls is not b.tool_calls
    for dt, tl in (("x", object()), (Sub("x"), req), (b"x", req), (None, req)):
        assert o.parse_streaming_increment(dt, tl) == "python" and log.pop() == (dt, tl)
    for attr, value in (("_held", None), ("_kept_shape", None), ("_hold", None)):
        keep = getattr(o, attr)
        setattr(o, attr, value)
        assert o.parse_streaming_increment("x", req) == "python" and log.pop() == ("x", req)
        setattr(o, attr, keep)
    assert o._hold.pend == ["x", "y"]


@pytest.mark.parametrize("backend", _BACKENDS)
def test_the_engine_entries_take_the_lane_only_when_it_applies(backend):
    """``vllm_tool_streaming`` / ``sglang_tool_streaming`` (bound as methods):
    the lane answers a delta only for its own owner state (a lane of this
    backend, the same request or tools, a plain non-empty ``str`` for vLLM, a
    plain ``str`` for SGLang); a lane answer that is not a built result goes to
    ``_answer``; everything else to ``_streaming`` with the arguments given."""
    mod = compiled if backend == "cython" else pure
    other = pure if mod is compiled else compiled
    Fn, Call, Msg = _models()

    class V(_Owner):
        extract_tool_calls_streaming = mod.vllm_tool_streaming

    class S(_Owner):
        parse_streaming_increment = mod.sglang_tool_streaming

    class Sub(str):
        pass

    text = ("Hi.\n<tool_call>\n" + '{"name": "f", "arguments": {"c": "' + "ab\\n<x>\\u00e9" * 6
            + '"}}\n</tool_call>\nBye.')
    with _base._use_scanner(backend):
        empty_msg = mod.ModelShape([(Msg, {"role": None, "content": "", "tool_calls": []}, ("content",), False)])
        cases = [(V, None), (S, None), (V, mod.NO_ANSWER), (S, empty_msg)]
        for (make, empty), size in itertools.product(cases, (1, 3, 4)):
            chunks = [text[i:i + size] for i in range(0, len(text), size)]
            log: list = []
            o, req = make(log), object()
            o._request = o._schemas_for = req
            p = tools.create("hermes")
            ref = tools.create("hermes")
            built = held = 0
            for n, c in enumerate(chunks):
                if o._hot is None and p._cur is not None and p._cur.args:
                    o._hot = mod.ArgsLane(p, tools.ParsedToolCallDelta, _shape(mod, Fn, Call, Msg),
                                          p._cur.index, 0, [], empty=empty)
                want = mod.step_args(ref, c, tools.ParsedToolCallDelta)
                del log[:]
                got = (o.extract_tool_calls_streaming("", "", c, (), (), (), req) if make is V
                       else o.parse_streaming_increment(c, req))
                if o._hot is None:
                    assert got == "general" and log == [("general", "", c, id(req)) if make is V
                                                        else ("general", c, id(req))]
                    mod.step_args(p, c, tools.ParsedToolCallDelta)
                elif type(want) is str:
                    assert type(got) is Msg and got == Msg(tool_calls=[Call(index=0, function=Fn(arguments=want))])
                    assert log == []
                    built += 1
                elif want == [] and empty is not None:  # the lane answers a step that sends nothing
                    assert log == []
                    if empty is mod.NO_ANSWER:
                        assert got is None
                    else:
                        assert got == Msg(content="") and got.model_fields_set == {"content"}
                        got.tool_calls.append(1)  # a new tree each time
                    held += 1
                else:
                    assert got == "answer" and log == [("answer", None if want is None else "list", c)]
            assert built > 5
            assert (held > 0) == (empty is not None)  # chunks end inside the escapes
            # the general path: another request/tools, a str subclass, an empty vLLM delta, another backend's lane
            for call, args in ((V, ("", "", "x", (), (), (), object())), (V, ("", "", Sub("x"), (), (), (), req)),
                               (V, ("", "", "", (), (), (), req)), (S, ("x", object())), (S, (Sub("x"), req))):
                if call is not make:
                    continue
                del log[:]
                f = o.extract_tool_calls_streaming if make is V else o.parse_streaming_increment
                assert f(*args) == "general" and len(log) == 1
            if other is not None:
                o._hot = other.ArgsLane(tools.create("hermes"), tools.ParsedToolCallDelta,
                                        _shape(other, Fn, Call, Msg), 0, 0, [])
                del log[:]
                f = o.extract_tool_calls_streaming if make is V else o.parse_streaming_increment
                assert (f("", "", "x", (), (), (), req) if make is V else f("x", req)) == "general"


@pytest.mark.parametrize("backend", _BACKENDS)
def test_the_held_entries_keep_what_cannot_close_and_hand_on_the_rest(backend):
    """``sglang_held_streaming`` / ``max_held_step`` (bound as methods): while
    a call's arguments are held (``_held`` set), a ``str`` delta without the
    closers' last character is kept in the ``ArgHold`` exactly as its
    ``keeps`` keeps it (256 kept join into a block) and answered at once
    (SGLang: a new tree of ``_kept_shape`` with an empty piece, for the same
    tools only; MAX: a new ``[]``); every other delta, and every delta of an
    owner without a hold, a shape or a held call, goes to the Python side
    with the arguments given."""
    from reasoning_core.integrations._common import ArgHold

    mod = compiled if backend == "cython" else pure
    other = pure if mod is compiled else compiled
    Fn, Call, Msg = _models()
    kept_shape = mod.ModelShape([(Msg, {"role": None, "content": mod.PIECE, "tool_calls": []}, ("content",), False)])

    class S:
        parse_streaming_increment = mod.sglang_held_streaming

        def __init__(self, log, tools_obj):
            self.log, self._schemas_for = log, tools_obj
            self._held, self._hold, self._kept_shape = 0, ArgHold(("</parameter>", "</function>")), kept_shape

        def _held_streaming(self, new_text, tools_obj):
            self.log.append((new_text, tools_obj))
            return "python"

    class M:
        parse_delta = mod.max_held_step

        def __init__(self, log):
            self.log, self._held, self._hold = log, 0, ArgHold(("</parameter>", "</function>"))

        def _held_parse(self, delta):
            self.log.append(delta)
            return "python"

    class Sub(str):
        pass

    rng = random.Random(7)
    alphabet = ["a", "b", "<", "/", "p", ">", "\n", "é", "</parameter>", "</function>", ""]
    deltas = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 5))) for _ in range(700)]
    req = object()
    for make in ("sglang", "max"):
        log: list = []
        o = S(log, req) if make == "sglang" else M(log)
        ref = ArgHold(("</parameter>", "</function>"))
        kept = 0
        for dt in deltas:
            got = o.parse_streaming_increment(dt, req) if make == "sglang" else o.parse_delta(dt)
            if ">" in dt:
                assert got == "python" and log[-1] == ((dt, req) if make == "sglang" else dt)
                log.clear()
                continue
            assert ref.keeps(dt) and not log
            kept += 1
            if make == "sglang":
                assert type(got) is Msg and got.content == "" and got.tool_calls == []
                assert got.model_fields_set == {"content"}
            else:
                assert got == [] and type(got) is list
            assert (o._hold.pend, o._hold.blocks, o._hold.rtail) == (ref.pend, ref.blocks, ref.rtail)
        assert kept > 256 and o._hold.blocks  # a block was joined on the way
        if make == "sglang":
            a, b = o.parse_streaming_increment("x", req), o.parse_streaming_increment("y", req)
            assert a is not b and a.tool_calls is not b.tool_calls
        else:
            a, b = o.parse_delta("x"), o.parse_delta("y")
            assert a is not b
    # what goes to the Python side untouched: nothing held, another tools
    # object, a str subclass or another type, no shape or one of the other
    # backend, a hold without a non-empty ``stops`` str
    log = []
    o = S(log, req)
    before = list(o._hold.pend)
    for dt, tl in (("x", object()), (Sub("x"), req), (b"x", req), (None, req)):
        assert o.parse_streaming_increment(dt, tl) == "python" and log.pop() == (dt, tl)
    o._held = None
    assert o.parse_streaming_increment("x", req) == "python" and log.pop() == ("x", req)
    o._held = 0
    for shape in (None, "shape") + ((other.ModelShape([(Msg, {"role": None, "content": other.PIECE,
                                                              "tool_calls": []}, ("content",), False)]),)
                                    if other is not None else ()):
        o._kept_shape = shape
        assert o.parse_streaming_increment("x", req) == "python" and log.pop() == ("x", req)
    o._kept_shape = kept_shape
    for stops in ("", None, b">"):
        o._hold.stops = stops
        assert o.parse_streaming_increment("x", req) == "python" and log.pop() == ("x", req)
    o._hold.stops = "x>"  # several stops: a delta with any of them goes on
    assert o.parse_streaming_increment("ax", req) == "python" and log.pop() == ("ax", req)
    assert o.parse_streaming_increment("ab", req).content == "" and o._hold.pend[-1] == "ab"
    del o._hold
    assert o.parse_streaming_increment("x", req) == "python" and log.pop() == ("x", req)
    m = M(log)
    for dt in (Sub("x"), b"x", None):
        assert m.parse_delta(dt) == "python" and log.pop() is dt
    m._held = None
    assert m.parse_delta("x") == "python" and log.pop() == "x"
    assert o.__dict__.get("_hold") is None and before == [] and m._hold.pend == []
