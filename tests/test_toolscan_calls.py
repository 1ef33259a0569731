"""The scanner's whole-call shortcuts against the grammar they shortcut.

``_scan.call_object`` reads a plain call object (``{"name": ..., "arguments":
{...}}``) in one pass when all of it is in the buffer; ``_scan.until`` finds
the next marker or the suffix to hold in one pass.  Checked here, on random
input:

- each against its twin (``reasoning_core_py/_toolscan.py``), and
  ``call_object``'s answer against ``json``;
- every format that reads call objects, streamed in random chunks and read
  one-shot, gives the same results (every chunk's deltas, the finish, the
  one-shot parse, the calls kept) with the shortcut and with it turned off (the
  grammar reading every object itself), on both scanners.

More examples: ``TOOLSCAN_EXAMPLES=500 python -m pytest tests/test_toolscan_calls.py``.
"""
from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reasoning_core import tools
from reasoning_core.tools import _base, _json
from reasoning_core_py import _toolscan as pure

import test_toolscan as T
from test_toolscan import _examples, compiled, needs_compiled

BACKENDS = ["cython", "python"] if _json.SCAN_BACKEND == "cython" else ["python"]


# ------------------------------------------------------------------ call objects

_NAMES = st.sampled_from(["get_weather", "f", "a-b_9", "x" * 64, "x" * 65, "get weather", " f", "f\\u0041", "é",
                          "", "weather.get"])
_KEYS = st.sampled_from(["name", "arguments", "parameters", "tool_name", "args", "other", "na\\u006de", "Name"])
_WS = st.sampled_from(["", " ", "\n", " \t\r\n "])
_ARG_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8)


@st.composite
def call_objects(draw):
    """The text after a call object's ``{``: a few members (names, argument
    objects, other values; in any order, repeated), random layout, then maybe
    cut short or mangled, then maybe more text."""
    members = []
    for _ in range(draw(st.integers(0, 4))):
        key = draw(_KEYS)
        kind = draw(st.integers(0, 3))
        if kind == 0:
            value = '"' + draw(_NAMES) + '"'
        elif kind == 1:
            value = json.dumps(draw(st.dictionaries(st.text(max_size=4), _ARG_VALUES, max_size=3)),
                               ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 0, 2])))
        elif kind == 2:
            value = json.dumps(draw(_ARG_VALUES))
        else:
            value = draw(st.sampled_from(["{", '"get_weather', "[1, 2]", "{}", '{"a": 1}}', "nul"]))
        members.append(draw(_WS) + '"' + key + '"' + draw(_WS) + ":" + draw(_WS) + value + draw(_WS))
    text = ",".join(members) + draw(st.sampled_from(["}", "}", "", ",}", "]", " }"]))
    if text and draw(st.integers(0, 3)) == 0:
        i = draw(st.integers(0, len(text) - 1))
        text = text[:i] + draw(st.sampled_from(["", "\\", '"', "}", ",", "\x01", "\ud800", " "])) \
            + text[i + draw(st.integers(0, 2)):]
    if text and draw(st.integers(0, 3)) == 0:
        text = text[:draw(st.integers(0, len(text)))]
    return text + draw(st.sampled_from(["", "</tool_call>", " tail", "]"]))


_KEY_SETS = [(("name",), ("arguments", "parameters")), (("tool_name", "name"), ("parameters", "arguments")),
             (("name",), ("args", "arguments", "parameters"))]


def _check_call_object(mod, text, lead, names, args_keys, need_args):
    buf = lead + text
    got = mod.call_object(buf, len(lead), names, args_keys, need_args)
    if got is None:
        return None
    name, args, end = got
    assert buf[end - 1] == "}"
    obj = json.loads("{" + buf[len(lead):end])  # the object read is JSON (keys once each)
    keys = [k for k in obj if k in names]
    assert len(keys) == 1 and obj[keys[0]] == name and _base.valid_name(name)
    arg = [k for k in obj if k in args_keys]
    assert set(obj) == set(keys) | set(arg)
    if arg:
        assert json.loads(args) == obj[arg[0]] and args == _json.normalize(args)
    else:
        assert args == "{}" and not need_args
    return got


@_examples(400)
@given(call_objects(), st.sampled_from(["", "<tool_call>{", " {"]), st.sampled_from(_KEY_SETS), st.booleans())
def test_call_object_matches_the_twin_and_json(text, lead, keys, need_args):
    want = _check_call_object(pure, text, lead, *keys, need_args)
    if compiled is not None:
        assert _check_call_object(compiled, text, lead, *keys, need_args) == want


def test_call_object_reads_the_usual_call_whole():
    """The shortcut is taken for the calls models write (not only None)."""
    text = '{"name": "get_weather", "arguments": {"city": "S\u00e3o Paulo", "days": [1, 2.50, true]}}\n</tool_call>'
    for mod in [pure] + ([compiled] if compiled is not None else []):
        assert mod.call_object(text, 1, ("name",), ("arguments",), False) == (
            "get_weather", '{"city": "S\u00e3o Paulo", "days": [1, 2.50, true]}', text.index("\n"))
        # arguments first, then the name
        t2 = '{ "arguments" : {} ,\n"name":"f" }'
        assert mod.call_object(t2, 1, ("name",), ("arguments",), True) == ("f", "{}", len(t2))
        # no arguments: {} unless they are required
        assert mod.call_object('{"name": "f"}', 1, ("name",), ("arguments",), False) == ("f", "{}", 13)
        assert mod.call_object('{"name": "f"}', 1, ("name",), ("arguments",), True) is None
        # not whole in the buffer, or not plain: left to the grammar
        for t in ['{"name": "f", "arguments": {"a": 1}', '{"name": "f", "arguments": {"a": 1}} ', '{"name": "f\\u0041"}',
                  '{"name": "f", "name": "g"}', '{"name": "f", "x": 1}', '{"name": " f"}', '{}', '{"na\\u006de": "f"}']:
            got = mod.call_object(t, 1, ("name",), ("arguments",), False)
            assert got is None or t.endswith(" ") and got == ("f", '{"a": 1}', len(t) - 1), t


# ------------------------------------------------------------------ the formats, with and without the shortcut

# formats whose grammar reads call objects (``_call_object``), and an opener for each
_CALL_FORMATS = {
    "hermes": ("<tool_call>", "</tool_call>"),
    "mistral": ("[TOOL_CALLS][", "]"),
    "llama3_json": ("<|python_tag|>", ""),
}


_cuts = T._cuts
_run = T.run_parser


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fmt", sorted(_CALL_FORMATS))
@_examples(60)
@given(data=st.data())
def test_the_shortcut_gives_the_grammars_answer(fmt, backend, data):
    opener, closer = _CALL_FORMATS[fmt]
    body = data.draw(call_objects())
    text = data.draw(st.sampled_from(["", "Sure.\n"])) + opener + "{" + body + closer
    if data.draw(st.booleans()):
        text += data.draw(st.sampled_from([" ", "\n", "; "])) + opener + "{" + data.draw(call_objects()) + closer
    chunks = [text] if data.draw(st.booleans()) else _cuts(data.draw, text)
    with _base._use_scanner(backend) as mod:
        with_shortcut = _run(fmt, text, chunks)
        saved = mod.call_object
        mod.call_object = lambda *a: None  # every object read by the grammar
        try:
            without = _run(fmt, text, chunks)
        finally:
            mod.call_object = saved
    assert with_shortcut == without


# ------------------------------------------------------------------ every format, with and without every shortcut

def _no_shortcuts(mod):
    """Turn the whole-piece shortcuts off (``take``, ``json_value``,
    ``call_object`` and the parsers' ``*_now`` methods answer "not now"): the
    grammar then reads every piece through its generators."""
    saved = {k: getattr(mod, k) for k in ("take", "json_value", "call_object", "xml_params", "deepseek_call", "kimi_call")}
    for k in saved:
        setattr(mod, k, lambda *a: None)
    # json_value at the end of input is ``normalize`` (a value's type), not a shortcut
    mod.json_value = lambda buf, pos, req, eof=False, _f=saved["json_value"]: _f(buf, pos, req, eof) if eof else None
    from reasoning_core.tools._json_formats import MistralToolParser
    from reasoning_core.tools._max_formats import DsmlToolParser

    methods = [(_base.BaseToolParser, "_xml_value_now", False), (_base.BaseToolParser, "_ws_now", False),
               (_base.BaseToolParser, "_expect_now", None), (MistralToolParser, "_read_now", False),
               (DsmlToolParser, "_param_value_now", False)]
    saved_methods = [(cls, name, cls.__dict__[name]) for cls, name, _ in methods]
    for cls, name, answer in methods:
        setattr(cls, name, lambda self, *a, _answer=answer: _answer)

    def restore():
        for k, v in saved.items():
            setattr(mod, k, v)
        for cls, name, f in saved_methods:
            setattr(cls, name, f)
    return restore


@pytest.fixture(scope="module", params=T.FORMATS)
def any_fmt(request):
    T._template_of(request.param)
    return request.param


@pytest.mark.parametrize("backend", BACKENDS)
@_examples(12)
@given(data=st.data())
def test_every_format_reads_the_same_with_and_without_the_shortcuts(any_fmt, backend, data):
    text = data.draw(T.format_texts(any_fmt))
    chunks = [text] if data.draw(st.booleans()) else _cuts(data.draw, text)
    schemas = T._SCHEMA if data.draw(st.booleans()) else None
    with _base._use_scanner(backend) as mod:
        want = _run(any_fmt, text, chunks, schemas)
        restore = _no_shortcuts(mod)
        try:
            got = _run(any_fmt, text, chunks, schemas)
        finally:
            restore()
    assert got == want


@_examples(300)
@given(st.sampled_from([("</tool_call>", "<tool_call>"), ("<parameter=", "</function>", "</tool_call>"),
                        (">", "\n", "</function>"), ("ab", "abc", "b"), ("<｜tool▁sep｜>", "\n")]),
       st.lists(st.sampled_from(list("<>/_=\nabcolt｜▁") + ["tool_call", "</"]), max_size=20).map("".join),
       st.integers(0, 40), st.booleans())
def test_take_is_a_first_pass_of_text_until(ms, buf, pos, eof):
    """``take`` answers exactly when one pass of ``until`` finds the marker or
    the end of input, with the same text, marker and position, on both
    scanners; otherwise it reads nothing."""
    m = _base.markers(*ms)
    pos = min(pos, len(buf))
    for mod in [pure] + ([compiled] if compiled is not None else []):
        p, q = T._UntilState(buf, pos, eof), T._UntilState(buf, pos, eof)
        got: list = []
        r = mod.until(p, m, got.append)
        t = mod.take(q, m)
        if r is False:
            assert t is None and q._pos == pos and q._lane is None
        else:
            assert t == ("".join(got), r) and q._pos == p._pos


@_examples(300)
@given(T.json_texts(), st.sampled_from(["", " ", "x{"]), st.booleans(), st.booleans())
def test_json_value_is_a_reader_that_finishes_in_the_buffer(text, lead, require_object, eof):
    buf = lead + text
    for mod in [pure] + ([compiled] if compiled is not None else []):
        out: list = []
        pos, status = mod.JsonReader(out.append, require_object).feed(buf, len(lead), eof)
        want = ("".join(out), pos) if status == mod.DONE else None
        assert mod.json_value(buf, len(lead), require_object, eof) == want
        if not eof:
            assert mod.json_value(buf, len(lead), require_object) == want


# ------------------------------------------------------------------ until on random marker sets

_MARK_CHARS = st.sampled_from(list("ab<>/\n｜") + ["\U0001f600"])


@needs_compiled
@_examples(400)
@given(st.lists(st.text(_MARK_CHARS, min_size=1, max_size=4), min_size=1, max_size=4),
       st.lists(_MARK_CHARS | st.sampled_from(["x", "<a", "ab>"]), max_size=16).map("".join),
       st.integers(0, 20), st.booleans())
def test_until_on_random_markers_matches_the_twin(ms, buf, pos, eof):
    """Markers that share prefixes, contain one another and span character
    widths: the marker found (leftmost, longest at equal start), the text sent,
    the held suffix, on both scanners."""
    m = _base.Markers.of(*ms)
    pos = min(pos, len(buf))
    seen = []
    for mod in (compiled, pure):
        p = T._UntilState(buf, pos, eof)
        got: list = []
        r = mod.until(p, m, got.append)
        seen.append((r, got, p._pos, p._lane is None))
    assert seen[0] == seen[1]


def test_until_with_more_than_sixteen_first_characters():
    letters = "abcdefghijklmnopqrst"
    m = _base.Markers.of(*(c + "!" for c in letters))
    for mod in [pure] + ([compiled] if compiled is not None else []):
        for buf, want in (("xyz t! q", ("t!", 6)), ("xyz q", (False, 4)), ("xyz", (False, 3))):
            p = T._UntilState(buf, 0, False)
            got: list = []
            assert (mod.until(p, m, got.append), p._pos) == want
            assert "".join(got) == buf[:p._pos - (len(want[0]) if want[0] else 0)]


# ------------------------------------------------------------------ an untyped XML value's JSON

@_examples(400)
@given(st.one_of(T.json_texts(), st.text(st.sampled_from(list('\n \t"\\a1.e-{}[]tfn\x01é') + ["\ud800"]), max_size=12)),
       st.sampled_from(["", "\n"]), st.sampled_from(["", "\n", " \n", "\n\n"]), st.booleans())
def test_value_json_is_typed_value_without_types(text, lead, tail, framed):
    v = lead + text + tail
    if framed:
        w = v[1:] if v.startswith("\n") else v
        w = w[:-1] if w.endswith("\n") else w
        want = _json.typed_value(w, frozenset())
    else:
        want = _json.typed_value(v, frozenset())
    for mod in [pure] + ([compiled] if compiled is not None else []):
        assert mod.value_json(v, framed) == want
    json.loads(want)


# ------------------------------------------------------------------ text already in canonical form

_CANON_MUTANTS = ["", " ", "  ", "\n", ",", ":", '"', "\\", "\\/", "\\u00e9", "\\n", "\x01", "\ud800", "}", "]",
                  "{", "[", "0", "-", ".", "e", "E", "+", "01", "1.", "tru", "nul", "x", "é", "\U0001f600"]


@st.composite
def canonical_texts(draw):
    """A reader's own canonical output (so the compiled pass that copies such
    text is taken), then maybe mutated at one place or cut short, with maybe
    more text after it."""
    value = draw(st.recursive(
        st.none() | st.booleans() | st.integers(-10**20, 10**20) | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(st.sampled_from(list('ab"\\\n\t\x08\x0c\r/é') + ["\U0001f600"]), max_size=6),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
        max_leaves=10))
    text = _json.normalize(json.dumps(value, ensure_ascii=draw(st.booleans())))
    if draw(st.booleans()):
        i = draw(st.integers(0, len(text)))
        text = text[:i] + draw(st.sampled_from(_CANON_MUTANTS)) + text[i + draw(st.integers(0, 2)):]
    if draw(st.integers(0, 3)) == 0:
        text = text[:draw(st.integers(0, len(text)))]
    return text + draw(st.sampled_from(["", " ", "x", "}", "\n</tool_call>", "3"]))


def _reader_answer(mod, buf, pos, require_object, eof):
    out: list = []
    end, status = mod.JsonReader(out.append, require_object).feed(buf, pos, eof)
    return ("".join(out), end) if status == mod.DONE else None


@_examples(600)
@given(canonical_texts(), st.sampled_from(["", " ", "\n ", "x{"]), st.booleans(), st.booleans())
def test_canonical_text_is_read_as_the_reader_reads_it(text, lead, require_object, eof):
    """``json_value``, ``value_json`` and ``call_object`` copy a value that is
    already canonical without the reader: their answers are the reader's (the
    twin's and the compiled one's) for canonical text, mutated or cut."""
    buf = lead + text
    want = _reader_answer(pure, buf, len(lead), require_object, eof)
    framed = eof
    w = text[1:] if framed and text.startswith("\n") else text
    w = w[:-1] if framed and w.endswith("\n") else w
    typed = _json.typed_value(w, frozenset())
    obj = '"name": "f", "arguments": ' + text
    call = pure.call_object(obj, 0, ("name",), ("arguments",), True)
    for mod in [pure] + ([compiled] if compiled is not None else []):
        assert _reader_answer(mod, buf, len(lead), require_object, eof) == want
        assert mod.json_value(buf, len(lead), require_object, eof) == want
        assert mod.value_json(text, framed) == typed
        assert mod.call_object(obj, 0, ("name",), ("arguments",), True) == call


@pytest.mark.parametrize("depth", [1, 63, 64, 65, 200])
def test_deep_canonical_values_are_read_whole(depth):
    """Nesting past what the compiled copy tracks goes to the reader: the same answer."""
    for text in ("[" * depth + "]" * depth, '{"a": ' * depth + "1" + "}" * depth, "[" * depth + "]" * (depth - 1)):
        for mod in [pure] + ([compiled] if compiled is not None else []):
            assert mod.json_value(text + " ", 0, False) == _reader_answer(mod, text + " ", 0, False, False)
            assert mod.value_json(text, True) == _json.typed_value(text, frozenset())


# ------------------------------------------------------------------ XML parameter elements read whole

_XML_FORMS = {
    "qwen3_coder": ("<parameter=", "</function>", "</tool_call>"),
    "minimax_m2": ('<parameter name="', "</invoke>", "</minimax:tool_call>"),
}
_XML_PIECES = ["\n", " ", "city", "a b", '"x"', "3", "-1.5e3", "[1, 2]", '{"k": "v"}', "null", "true", "é", "\\",
               "\x01", ">", "</parameter>", "</par", "<", "\n\n", "{", '\\"']


@st.composite
def xml_param_texts(draw, fmt):
    """The text after a call's name in ``fmt``: parameter elements (keys and
    values of any kind, closers missing or doubled, junk between them), then
    the call's end or another marker, maybe cut short, maybe more text."""
    opener, fend, send = _XML_FORMS[fmt]
    out = [draw(st.sampled_from([">\n", ">", ""]))]
    for _ in range(draw(st.integers(0, 3))):
        key = draw(st.sampled_from(["city", " days ", "a\"b", "", "é", "x>y"]))
        if fmt == "minimax_m2" and draw(st.booleans()):
            key = key + '"'
        value = "".join(draw(st.lists(st.sampled_from(_XML_PIECES), max_size=4)))
        close = draw(st.sampled_from(["</parameter>", "</parameter>", "", "</parameter></parameter>"]))
        out.append(draw(st.sampled_from(["", "\n", " junk "])) + opener + key + draw(st.sampled_from([">", ">", ""]))
                   + value + close)
    out.append(draw(st.sampled_from(["\n", ""])) + draw(st.sampled_from([fend, fend, send, "", "<function=",
                                                                          "<invoke name="])))
    text = "".join(out)
    if draw(st.integers(0, 3)) == 0:
        text = text[:draw(st.integers(0, len(text)))]
    return text + draw(st.sampled_from(["", "\n</tool_call>", " tail", "</"]))


def _xml_params(mod, fmt, buf, pos):
    from reasoning_core.tools import _xml_formats as X

    cls = X.Qwen3CoderToolParser if fmt == "qwen3_coder" else X.MiniMaxM2ToolParser
    clean = str.strip if fmt == "qwen3_coder" else X._unquote
    return mod.xml_params(buf, pos, _XML_FORMS[fmt][0], ">", "</parameter>", cls._PARAM_SCAN, cls._KEY_END,
                          cls._VALUE_END, clean)


@_examples(500)
@given(st.data(), st.sampled_from(sorted(_XML_FORMS)), st.sampled_from(["", "<function=f"]))
def test_xml_params_matches_the_twin_and_the_grammar(data, fmt, lead):
    """``xml_params`` on both scanners: the same answer; and where it reads the
    elements, the arguments and the marker the grammar's generators give for
    the same text (the shortcuts off)."""
    text = data.draw(xml_param_texts(fmt))
    buf = lead + text
    want = _xml_params(pure, fmt, buf, len(lead))
    if compiled is not None:
        assert _xml_params(compiled, fmt, buf, len(lead)) == want
    if want is None:
        return
    args, m, end = want
    json.loads(args)
    # the grammar, every step through its generators, on the text read
    p = tools.create(fmt)
    p._buf, p._pos, p._eof = buf[:end], len(lead), False
    p._open_call("f")
    with _base._use_scanner("python") as mod:
        restore = _no_shortcuts(mod)
        try:
            g = p._params("f", _XML_FORMS[fmt][0], str.strip if fmt == "qwen3_coder" else __import__(
                "reasoning_core.tools._xml_formats", fromlist=["_unquote"])._unquote)
            try:
                while True:
                    next(g)
                    if p._pos >= len(p._buf):
                        break
                got = None
            except StopIteration as stop:
                got = stop.value
        finally:
            restore()
    assert (got, p._pos) == (m, end)
    assert "".join(p._calls[0].args) == args and p._calls[0].ok is True


# ------------------------------------------------------------------ a call read whole, in a class with its own event methods

_WHOLE_TEXTS = {
    "deepseek_v3": "ok <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{\"a\": 1}\n```"
                   "<｜tool▁call▁end｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>g\n{}<｜tool▁call▁end｜>"
                   "<｜tool▁calls▁end｜> after",
    "kimi_k2": "ok <|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>"
               "{\"a\": [1, \"x\"]}<|tool_call_end|><|tool_calls_section_end|> after",
    "qwen3_coder": "ok <tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n<parameter=b>\nx y\n</parameter>\n"
                   "</function>\n</tool_call> after",
    "minimax_m2": 'ok <minimax:tool_call><invoke name="f"><parameter name="a">[1]</parameter></invoke>'
                  "</minimax:tool_call> after",
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fmt", sorted(_WHOLE_TEXTS))
def test_a_call_read_whole_calls_a_subclass_event_methods(fmt, backend):
    """Where a class has its own ``_open_call``/``_emit_args``/``_close_call``,
    a call read whole goes through them (the shortcut writes the events
    itself only for the base methods): the same deltas and calls either way,
    and the subclass sees every call open, its arguments and its close."""
    base = type(tools.create(fmt))
    seen: list = []

    class Recording(base):
        def _open_call(self, name, cid=None):
            seen.append(("open", name))
            return super()._open_call(name, cid)

        def _emit_args(self, text):
            seen.append(("args", text))
            super()._emit_args(text)

        def _close_call(self, ok):
            seen.append(("close", ok))
            super()._close_call(ok)

    text = _WHOLE_TEXTS[fmt]
    with _base._use_scanner(backend):
        results = []
        for cls in (base, Recording):
            p = cls()
            got = p.parse_delta(text) or []
            got += p.finish()
            results.append([(d.index, d.name, d.arguments, d.content) for d in got])
            results.append([(c.name, c.arguments) for c in cls().parse_complete(text).tool_calls])
    assert results[0] == results[2] and results[1] == results[3]
    assert results[1] and all(json.loads(a) is not None for _, a in results[1])
    opened = [s[1] for s in seen if s[0] == "open"]
    assert opened == [n for n, _ in results[1]] * 2  # streamed, then one-shot
    assert ("close", True) in seen and any(s[0] == "args" for s in seen)



def _grammar_call(p):
    """What the grammar's own ``_call`` answers on ``p``'s buffer, with every
    compiled shortcut off (the generators read it): its return, or "waited"."""
    with _base._use_scanner("python") as mod:
        restore = _no_shortcuts(mod)
        try:
            g = p._call()
            try:
                next(g)
                return "waited"
            except StopIteration as stop:
                return stop.value
        finally:
            restore()


def _whole_call_agrees(read, fmt, buf, lead):
    """``read(mod, buf, pos)`` on both scanners: the same answer, returned; where
    it reads a call (answers ``(..., marker, end)``), the grammar's generators
    (the shortcuts off) on a ``fmt`` parser of ``buf[:end]`` stop at ``end`` on
    the same marker without waiting.  Answers ``(answer, the parser's calls)``."""
    want = read(pure, buf, len(lead))
    if compiled is not None:
        assert read(compiled, buf, len(lead)) == want
    if want is None:
        return None, None
    m, end = want[-2:]
    p = tools.create(fmt)
    p._buf, p._pos, p._eof = buf[:end], len(lead), False
    assert (_grammar_call(p), p._pos) == (m, end)
    return want, p._calls

# ------------------------------------------------------------------ a DeepSeek-V3 call read whole

_DS_SEP, _DS_END, _DS_BEGIN, _DS_CALLS_END = "<｜tool▁sep｜>", "<｜tool▁call▁end｜>", "<｜tool▁call▁begin｜>", \
    "<｜tool▁calls▁end｜>"


@st.composite
def deepseek_calls(draw):
    """The text after a DeepSeek-V3 call's begin marker: a head, the name
    line, a fence or none, arguments (canonical or not, valid or not), the
    fence's end and a marker, with a piece maybe dropped, doubled or mangled,
    maybe cut short, maybe more text."""
    args = draw(st.sampled_from(['{"city": "Paris", "days": 3}', '{"a":1}', '{ "a" : [1, 2] }', "{}", '{"s": "\\u00e9"}',
                                 "[1]", '{"a": 1', '"x"', '{"a": tru}', "{\n}", '{"a": 1}}']))
    well_formed = draw(st.booleans())

    def pick(good, bad):
        return draw(st.sampled_from(good if well_formed else good + bad))

    pieces = [pick(["function", "", " function "], ["fn<"]), pick([_DS_SEP], ["\n"]),
              pick(["get_weather", " f ", "a-b_9"], ["", "bad name", "x" * 65, "é"]),
              pick(["\n", " \n"], [_DS_END, ""]),
              pick(["```json\n", "", "  ", "\n"], ["``` json", "```" + _DS_END]), args,
              pick(["\n```", "", " ", "\n```\n"], []),
              pick([_DS_END, _DS_BEGIN, _DS_CALLS_END], ["<｜tool", ""])]
    if draw(st.integers(0, 3)) == 0:
        i = draw(st.integers(0, len(pieces) - 1))
        pieces[i] = draw(st.sampled_from(["", pieces[i] * 2, "<", "\n", "`"]))
    text = "".join(pieces)
    if draw(st.integers(0, 3)) == 0:
        text = text[:draw(st.integers(0, len(text)))]
    return text + draw(st.sampled_from(["", "tail", _DS_CALLS_END, "<"]))


def _deepseek_call(mod, buf, pos):
    from reasoning_core.tools import _marker_formats as MF

    return mod.deepseek_call(buf, pos, MF._HEAD_END, MF.SEP, MF._NAME_LINE_END, MF.DeepSeekV3ToolParser._TAIL)


@_examples(500)
@given(deepseek_calls(), st.sampled_from(["", "x" + _DS_BEGIN]))
def test_deepseek_call_matches_the_twin_and_the_grammar(text, lead):
    """``deepseek_call`` on both scanners: the same answer; and where it reads
    the call, the grammar's generators (the shortcuts off) read the same
    name, arguments and marker from the same text, without waiting."""
    want, calls = _whole_call_agrees(_deepseek_call, "deepseek_v3", lead + text, lead)
    if want is None:
        return
    name, args, _m, _end = want
    assert json.loads(args) is not None and _base.valid_name(name)
    assert [(c.name, "".join(c.args), c.ok) for c in calls] == [(name, args, True)]


# ------------------------------------------------------------------ a Kimi-K2 call read whole

_K_ARG, _K_END, _K_BEGIN, _K_SEC_END = "<|tool_call_argument_begin|>", "<|tool_call_end|>", "<|tool_call_begin|>", \
    "<|tool_calls_section_end|>"


@st.composite
def kimi_calls(draw):
    """The text after a Kimi-K2 call's begin marker: an id (``functions.NAME:IDX``
    or parts of it, or not), the argument marker, arguments (canonical or
    not, valid or not) and a marker, maybe mangled, cut short or followed by
    more text."""
    well_formed = draw(st.booleans())

    def pick(good, bad):
        return draw(st.sampled_from(good if well_formed else good + bad))

    pieces = [pick(["functions.get_weather:0", " functions.f:12 ", "f", "f:3", "functions.a-b_9", "functions"],
                   ["functions.", "f:", "f:x", "f:1:2", "functions.f.g:1", ":1", "f:١", "é", "x" * 65, " "]),
              pick([_K_ARG], [_K_END, "<|tool_call_argument", ""]),
              pick(['{"city": "Paris", "days": 3}', '{"a":1}', ' { "a" : [1, 2] }', "{}", '{"s": "\\u00e9"}'],
                   ["[1]", '{"a": 1', '"x"', '{"a": tru}']),
              pick([_K_END, _K_BEGIN, _K_SEC_END, " " + _K_END], ["<|tool", "", "x"])]
    text = "".join(pieces)
    if draw(st.integers(0, 3)) == 0:
        text = text[:draw(st.integers(0, len(text)))]
    return text + draw(st.sampled_from(["", "tail", _K_SEC_END, "<"]))


def _kimi_call(mod, buf, pos):
    from reasoning_core.tools import _marker_formats as MF

    K = MF.KimiK2ToolParser
    return mod.kimi_call(buf, pos, K._HEAD_END, MF.K_ARG_BEGIN, K._TAIL)


@_examples(500)
@given(kimi_calls(), st.sampled_from(["", "x" + _K_BEGIN]))
def test_kimi_call_matches_the_twin_and_the_grammar(text, lead):
    """``kimi_call`` on both scanners: the same answer; and where it reads the
    call, the grammar's generators (the shortcuts off) read the same name,
    id, arguments and marker from the same text, without waiting."""
    want, calls = _whole_call_agrees(_kimi_call, "kimi_k2", lead + text, lead)
    if want is None:
        return
    name, ident, args, _m, _end = want
    assert json.loads(args) is not None and _base.valid_name(name)
    assert [(c.name, c.id, "".join(c.args), c.ok) for c in calls] == [(name, ident, args, True)]
