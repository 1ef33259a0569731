"""The text fast paths against their slow references.

* The compiled text walk skips to the next character that can begin a
  delimiter (memchr / a block compare over the string's 1-, 2- or 4-byte
  storage): its segments must equal the pure twin's character-by-character
  walk, for texts of every storage width, delimiters at block and chunk
  edges, near misses and empty text.
* ``parse()`` without a label builds each side from the segments directly:
  it must equal the general path (``_render`` + ``finish``).
* ``text_parser()`` for a name seen before fills the parser from a cached
  entry: it must equal a parser made by the constructor.
"""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reasoning_core import text_parser
from reasoning_core._tables import REASONING, SEEDED
from reasoning_core.families import FAMILIES, make_family
from reasoning_core.text import _FRESH, TextReasoningParser, _render, text_tables

FAMILY_NAMES = sorted(FAMILIES)
ENGINE_STATES = (0, 1, 2, 3)

# Fillers of every storage width: ASCII, Latin-1, BMP (incl. the full-width
# bar of the DSML delimiters and Kimi's triangle), a lone surrogate, astral.
FILLER = ("a", " ", "\n", "x" * 40, "é", "ÿ", "…", "｜", "◁", "▷", "\ud800", "\udfff", "😀", "\U0010ffff", "<", "[", "t",
          "H", "<|", "</", "<t")


def _pieces(fam):
    """Delimiters of a family, their prefixes and near misses (last character changed)."""
    tables = text_tables(fam)
    out = []
    for p in tables.patterns:
        text = "".join(map(chr, p.ids))
        out += [text, text[:-1], text[: len(text) // 2], text[:-1] + "?", text[1:]]
    return tuple(dict.fromkeys(x for x in out if x))


def texts_for(fam):
    pieces = _pieces(fam) + FILLER
    run = st.integers(0, 70).map(lambda k: "b" * k)  # runs that move delimiters across 32-character blocks
    return st.lists(st.one_of(st.sampled_from(pieces), run), max_size=14).map("".join)


def _engines(fam):
    from reasoning_core import _engine as compiled
    from reasoning_core_py import _engine as pure

    tables = text_tables(fam)
    return compiled.Engine(tables), pure.Engine(tables)


CUSTOM = (
    # astral and BMP first characters: starters no 1-byte text can hold
    make_family("astral_pair", "😀think", "😀/think"),
    make_family("bmp_pair", "…go", "…stop"),
    # more than four first characters: the walk falls back to its per-character test
    make_family("many", ("<a>", "[b]", "{c}"), ("</a>", "[/b]", "{/c}", "(/d)", "|/e|")),
    make_family("latin", "é<", "ÿ>", starts_in_reasoning=True),
)


@pytest.mark.compiled
@pytest.mark.parametrize("fam", [FAMILIES[n] for n in FAMILY_NAMES] + list(CUSTOM), ids=lambda f: f.name)
@given(data=st.data())
def test_compiled_text_walk_equals_twin(fam, data):
    text = data.draw(texts_for(fam))
    state = data.draw(st.sampled_from(ENGINE_STATES))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    c, p = _engines(fam)
    c.set_state(state)
    p.set_state(state)
    assert c.feed_text(text) == p.feed_text(text)
    assert (c.state, c.held) == (p.state, p.held)
    # chunked, through feed_text_side (the streaming entry point)
    c.set_state(state)
    p.set_state(state)
    for a, b in zip([0] + cuts, cuts + [len(text)]):
        chunk = text[a:b]
        assert c.feed_text_side(chunk) == p.feed_text_side(chunk), (a, b)
        assert (c.state, c.held) == (p.state, p.held)
    assert c.finish() == p.finish()


@pytest.mark.compiled
@pytest.mark.parametrize("width", ["ascii", "latin1", "bmp", "astral"])
def test_compiled_walk_finds_delimiter_at_every_offset(width):
    """A long filler of one storage width with ``</think>`` at every offset
    around the 32-character blocks, and a near miss before it."""
    fill = {"ascii": "a", "latin1": "é", "bmp": "…", "astral": "😀"}[width]
    fam = FAMILIES["deepseek_r1"]
    c, p = _engines(fam)
    for k in range(0, 100):
        for text in (fill * k + "</think>" + fill * 5, fill * k + "<" + fill * k + "</think",
                     fill * k + "</thinx>" + fill * 33, fill * k):
            for state in ENGINE_STATES:
                c.set_state(state)
                p.set_state(state)
                assert c.feed_text(text) == p.feed_text(text), (k, text, state)
                c.set_state(state)
                p.set_state(state)
                assert c.feed_text_side(text) == p.feed_text_side(text), (k, text, state)


@pytest.mark.compiled
def test_compiled_walk_empty_and_huge():
    c, p = _engines(FAMILIES["deepseek_r1"])
    for text in ("", "x" * 1_000_003, "…" * 100_001 + "</think>", "😀" * 50_001 + "<think>"):
        for state in ENGINE_STATES:
            c.set_state(state)
            p.set_state(state)
            assert c.feed_text(text) == p.feed_text(text)
            c.set_state(state)
            p.set_state(state)
            assert c.feed_text_side(text) == p.feed_text_side(text)


def _general_parse(p: TextReasoningParser, text: str) -> tuple[str, str]:
    """parse() through the general path: _render over the segments, finish()."""
    eng = p._mod.Engine(p._tables)
    eng.set_state(p._initial)
    fmt = p._new_label()
    segs, _ = eng.feed_text(text)
    reasoning, content, held, _, side = _render(text, segs, fmt, p._initial in (REASONING, SEEDED))
    tail, _ = eng.finish()
    r2, c2, _, _, _ = _render(held, tail, fmt, side)
    pending = fmt.flush() if fmt is not None else None
    return reasoning + r2 + (pending or ""), content + c2


@pytest.mark.parametrize("name", FAMILY_NAMES)
@given(data=st.data())
def test_parse_equals_general_path(backend, name, data):
    fam = FAMILIES[name]
    text = data.draw(texts_for(fam))
    starts = data.draw(st.sampled_from([None, True, False, "inside"]))
    p = text_parser(name, starts_in_reasoning=starts, backend=backend)
    got = p.parse(text)
    assert got == _general_parse(p, text)
    assert all(type(x) is str for x in got)
    # and streaming concatenated equals it (any chunking: here one cut)
    cut = data.draw(st.integers(0, len(text)))
    r1, c1 = p.feed(text[:cut])
    r2, c2 = p.feed(text[cut:])
    r3, c3 = p.finish()
    assert (r1 + r2 + r3, c1 + c2 + c3) == got


def test_parse_one_side_returns_whole_text(backend):
    # no delimiter: the whole text is the one side, not a copy of it
    text = "plain answer … 😀" * 10
    r, c = text_parser("qwen3", backend=backend).parse(text)
    assert (r, c) == ("", text) and c is text
    r, c = text_parser("deepseek_r1", backend=backend).parse(text)
    assert (r, c) == (text, "") and r is text
    assert text_parser("deepseek_r1", backend=backend).parse("") == ("", "")


def test_parse_rejects_non_str(backend):
    p = text_parser("deepseek_r1", backend=backend)
    for bad in (b"x", None, 3, ["a"]):
        with pytest.raises(TypeError, match="text must be str"):
            p.parse(bad)

    class S(str):
        pass

    got = p.parse(S("a</think>b"))
    assert got == ("a", "b") and all(type(x) is str for x in got)
    assert p.feed(S("c</think>d")) == ("c", "d")
    got = p.parse(S("whole"))
    assert got == ("whole", "") and type(got[0]) is str


SLOTS = ("family", "max_buffer", "backend", "_initial", "_tables", "_mod", "_held", "_fmt", "_oneshot", "_side",
         "_seen", "_label_done")


def _attrs(p: TextReasoningParser):
    eng = p._engine
    fmt = p._fmt
    return ({s: getattr(p, s) for s in SLOTS if s != "_fmt"}, None if fmt is None else (fmt.label, fmt._pending, fmt._active),
            type(eng), eng.state, eng.held, p._feed_text.__self__ is eng)


@pytest.mark.parametrize("name", FAMILY_NAMES + ["DeepSeek-R1", "deepseek-r1"])
@pytest.mark.parametrize("max_buffer", [None, 64, 10**6])
def test_text_parser_from_cache_equals_constructor(backend, name, max_buffer):
    kw = {} if max_buffer is None else {"max_buffer": max_buffer}
    first = text_parser(name, backend=backend, **kw)
    again = text_parser(name, backend=backend, **kw)
    ref = TextReasoningParser(name, backend=backend, **kw)
    assert _attrs(first) == _attrs(ref) == _attrs(again)
    assert again._engine is not first._engine
    # the two are independent
    first.feed("<think>abc")
    assert again.feed("x</think>y") == text_parser(name, backend=backend, **kw).feed("x</think>y")
    assert again.parse("a</think>b") == ref.parse("a</think>b")


def test_text_parser_cache_keeps_argument_checks(backend):
    text_parser("deepseek_r1", backend=backend)
    assert ("deepseek_r1", backend) in _FRESH
    with pytest.raises(ValueError, match="max_buffer must be at least"):
        text_parser("deepseek_r1", backend=backend, max_buffer=1)
    with pytest.raises(ValueError, match="max_buffer must be at least"):
        text_parser("deepseek_r1", backend=backend, max_buffer=-5)
    for bad in (True, 64.0, "64", None):
        with pytest.raises(TypeError, match="max_buffer must be an int"):
            text_parser("deepseek_r1", backend=backend, max_buffer=bad)
    with pytest.raises(ValueError, match="unknown reasoning parser"):
        text_parser("no_such_family", backend=backend)
    with pytest.raises(TypeError):
        text_parser(["deepseek_r1"], backend=backend)
    with pytest.raises(ValueError):
        text_parser("deepseek_r1", backend="fortran")
    # other starts still go through the constructor
    p = text_parser("deepseek_r1", backend=backend, starts_in_reasoning=False)
    assert p.parse("a</think>b") == ("", "a</think>b")
    q = text_parser("deepseek_r1", backend=backend)
    assert q.parse("a</think>b") == ("a", "b")


def test_text_parser_int_subclass_max_buffer(backend):
    class Big(int):
        pass

    p = text_parser("deepseek_r1", backend=backend, max_buffer=Big(100))
    q = TextReasoningParser("deepseek_r1", backend=backend, max_buffer=Big(100))
    assert p.max_buffer == q.max_buffer == 100


def test_str_subclass_lying_about_its_length(backend):
    """The walk reads the string's own storage length, not ``len()``."""

    class Liar(str):
        def __len__(self):
            return 10**9

    for fam in ("deepseek_r1", "qwen3", "hunyuan_a13b"):
        p = text_parser(fam, backend=backend)
        ref = text_parser(fam, backend="python")
        for text in ("a</think>b", "x" * 40 + "<think>y</think>" + "z" * 40, "…" * 50, "😀" * 9 + "<"):
            assert p.parse(Liar(text)) == ref.parse(text)
            eng = p._mod.Engine(p._tables)
            assert eng.feed_text(Liar(text)) == ref._mod.Engine(ref._tables).feed_text(text)
            eng = p._mod.Engine(p._tables)
            assert eng.feed_text_side(Liar(text)) == ref._mod.Engine(ref._tables).feed_text_side(text)
