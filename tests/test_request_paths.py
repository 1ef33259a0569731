"""The per-request paths: what a server does for every request, on both backends.

A parser made per request copies a per-tables template (no table checks, no
resolution), and the prompt check reads ids from the end and stops at the
deciding marker, so its work is the distance to that marker, not the prompt.
"""
from __future__ import annotations

import numpy as np
import pytest

import reasoning_core as rc
from tests.conftest import COMPILED

BACKEND_NAMES = ("cython", "python") if COMPILED else ("python",)

THINK, UNTHINK = 128821, 128822


class CountingId:
    """An int-like id that counts how often it is read."""

    reads = 0

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        CountingId.reads += 1
        return self.value


@pytest.mark.parametrize("container", [list, tuple])
def test_prompt_check_reads_only_back_to_the_deciding_marker(deepseek_tokenizer, backend, container):
    p = rc.get_parser("deepseek_r1", deepseek_tokenizer, backend=backend)
    CountingId.reads = 0
    before = [CountingId(5) for _ in range(1000)]
    assert p.will_reason_after_prompt(container(before + [THINK, 7, 8]))
    assert not p.will_reason_after_prompt(container(before + [UNTHINK]))
    assert CountingId.reads == 0
    # With no marker at all, every id is read once, and the family default decides.
    assert p.will_reason_after_prompt(container(before)) is True
    assert CountingId.reads == 1000


def test_prompt_check_errors_are_those_of_the_ids_it_reads(deepseek_tokenizer, backend):
    p = rc.get_parser("deepseek_r1", deepseek_tokenizer, backend=backend)
    assert p.will_reason_after_prompt([1.5, "x", THINK])  # before the marker: never read
    with pytest.raises(TypeError):
        p.will_reason_after_prompt([THINK, 1.5])
    with pytest.raises(TypeError):
        p.will_reason_after_prompt([None])
    # Arrays are checked whole, as before.
    assert p.will_reason_after_prompt(np.array([5, THINK], dtype=np.int32))


def test_prompt_check_agrees_across_containers_and_backends(deepseek_tokenizer):
    rng = np.random.default_rng(7)
    markers = [THINK, UNTHINK, 128806, 128803, 128804, 5, 6]
    for name in ("deepseek_r1", "deepseek_v3"):
        parsers = [rc.get_parser(name, deepseek_tokenizer, backend=b) for b in BACKEND_NAMES]
        for _ in range(200):
            ids = rng.choice(markers, size=int(rng.integers(0, 12))).tolist()
            answers = {p.will_reason_after_prompt(c) for p in parsers
                       for c in (ids, tuple(ids), np.asarray(ids, dtype=np.int64))}
            assert len(answers) == 1, (name, ids)


def test_gemma_enable_marker_anywhere_still_decides(backend):
    from tests.vocab import family_tokenizer

    tok = family_tokenizer("gemma4")
    p = rc.get_parser("gemma4", tok, backend=backend)
    think = tok.token_to_id("<|think|>")
    turn = tok.token_to_id("<|turn>")
    assert p.will_reason_after_prompt([think] + [5] * 50 + [turn])
    assert not p.will_reason_after_prompt([5] * 50 + [turn])


def test_parsers_of_one_tokenizer_are_independent_copies(deepseek_tokenizer, backend):
    a = rc.get_parser("deepseek_r1", deepseek_tokenizer, backend=backend)
    b = rc.get_parser("deepseek_r1", deepseek_tokenizer, backend=backend)
    assert a.tables is b.tables and a.engine is not b.engine
    a.begin([UNTHINK])
    assert a.split([5, THINK, 6]).reasoning_ids == [6]
    assert a.state == "reasoning" and b.state == "seeded"
    assert b.split([7, UNTHINK, 8]).content_ids == [8]
    # stream() results are shared between copies: equal spans, same objects.
    assert a.stream([5, THINK, 6], False) is b.stream([5, THINK, 6], False)
    # A label family's formatter stays per parser.
    from tests.vocab import family_tokenizer

    tok = family_tokenizer("gemma4")
    g1, g2 = (rc.get_parser("gemma4", tok, backend=backend) for _ in range(2))
    assert g1.formatter is not g2.formatter


def test_families_built_at_run_time_do_not_share_a_rows_cached_tables(deepseek_tokenizer, backend):
    from reasoning_core.families import make_family
    from reasoning_core.parser import parser_class
    from reasoning_core.text import TextReasoningParser

    own = make_family("deepseek_r1", ["<a>"], ["</a>"])  # a row's name, other markers
    assert TextReasoningParser(own, backend=backend).parse("x<a>r</a>c") == ("r", "xc")
    assert rc.text_parser("deepseek_r1", backend=backend).parse("x<a>r</a>c") == ("x<a>r</a>c", "")
    p = parser_class(own).from_tokenizer_sync(deepseek_tokenizer, backend=backend)
    assert p.tables is not rc.get_parser("deepseek_r1", deepseek_tokenizer, backend=backend).tables
    ids = deepseek_tokenizer.encode("x<a>r</a>c", add_special_tokens=False).ids
    assert [k for k, _, _ in p.begin().split(ids).segments][:2] == ["content", "start"]
    # Equal families share one cache entry (and one template).
    again = make_family("deepseek_r1", ["<a>"], ["</a>"])
    assert parser_class(again).from_tokenizer_sync(deepseek_tokenizer, backend=backend).tables is p.tables


def test_text_parser_per_request_is_a_template_copy(backend):
    a = rc.text_parser("deepseek_r1", backend=backend)
    b = rc.text_parser("deepseek_r1", backend=backend)
    assert a.feed("x</thi") == ("x", "")
    assert b.feed("y</think>z") == ("y", "z")
    assert a.feed("nk>w") == ("", "w")


@pytest.mark.compiled
def test_compiled_span_is_the_python_span_in_c():
    import array
    import pickle

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from reasoning_core._engine import ReasoningSpan as CSpan
    from reasoning_core.types import PyReasoningSpan as PSpan

    assert rc.ReasoningSpan is CSpan

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.integers(0, 12), min_size=4, max_size=4).map(sorted), st.integers(0, 14))
    def check(bounds, n):
        d0, r0, r1, d1 = bounds
        c, p = CSpan((d0, d1), (r0, r1)), PSpan((d0, d1), (r0, r1))
        assert (c.reasoning_with_delimiters, c.reasoning, c.is_empty, repr(c), hash(c)) == \
               (p.reasoning_with_delimiters, p.reasoning, p.is_empty, repr(p), hash(p))
        seq = list(range(100, 100 + n))
        for make in (list, tuple, lambda s: array.array("q", s), lambda s: np.asarray(s, dtype=np.int32),
                     range, lambda s: memoryview(array.array("q", s)), lambda s: "".join(chr(65 + (x % 26)) for x in s)):
            obj = make(seq) if make is not range else range(100, 100 + n)
            for a, b in ((c.extract_reasoning(obj), p.extract_reasoning(obj)),
                         (c.extract_content(obj), p.extract_content(obj))):
                assert type(a) is type(b)
                assert list(a) == list(b)
        out = c.extract_content(seq)
        assert out is not seq  # a copy, even when nothing is cut
        assert out == seq[:d0] + seq[d1:]
        assert pickle.loads(pickle.dumps(c)) == c

    check()
    for bad in (((3, 1), (2, 2)), ((0, 5), (1, 6)), ((0, True), (0, 0)), ((0, 1.0), (0, 0)), ((0,), (0, 0)),
                (None, (0, 0)), ((0, 2**70), (0, 1))):
        for cls in (CSpan, PSpan):
            with pytest.raises(ValueError):
                cls(*bad)
    for span in (CSpan((0, 1), (0, 1)), PSpan((0, 1), (0, 1))):
        with pytest.raises(AttributeError):
            span.reasoning = (0, 0)


@pytest.mark.compiled
def test_compiled_token_split_is_the_python_one_in_c(deepseek_tokenizer):
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from reasoning_core._engine import TokenSplit as CSplit
    from reasoning_core.types import PyTokenSplit as PSplit

    assert rc.TokenSplit is CSplit

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.integers(0, 4), max_size=6), st.lists(st.integers(1, 3), max_size=6),
           st.integers(0, 3), st.booleans(), st.sampled_from(["list", "tuple", "array"]))
    def check(kinds, sizes, n_prefix, reasoning, container):
        segs, pos = [], 0
        for k, n in zip(kinds, sizes):
            segs.append((k, pos, pos + n))
            pos += n
        prefix = tuple(range(900, 900 + min(n_prefix, pos)))
        body = list(range(100, 100 + pos - len(prefix)))
        delta = {"list": body, "tuple": tuple(body), "array": np.asarray(body, dtype=np.int64)}[container]
        c = CSplit(prefix, delta, segs, reasoning, False, ((0, ((1, 0, 1), (2, 1, 2))),) if pos else ())
        p = PSplit(prefix, delta, segs, reasoning, False, ((0, ((1, 0, 1), (2, 1, 2))),) if pos else ())
        for name in ("tokens", "segments", "content_ids", "reasoning_ids", "delimiter_ids", "held_ids",
                     "boundaries", "is_reasoning", "awaiting_start"):
            assert getattr(c, name) == getattr(p, name), name
        assert (len(c), repr(c)) == (len(p), repr(p))
        assert c == p and p == c

    check()
    # Both engines' split() return the public class, equal results.
    ids = deepseek_tokenizer.encode("a<think>b</think>c", add_special_tokens=False).ids
    got = [rc.get_parser("deepseek_r1", deepseek_tokenizer, backend=b).begin().split(ids) for b in BACKEND_NAMES]
    assert all(type(s) is CSplit for s in got) and got[0] == got[-1]


def test_tables_cache_by_tokenizer_identity_lets_the_tokenizer_go():
    import gc
    import weakref

    from reasoning_core import _tokenizer
    from tests.vocab import FAMILY_SPECIALS, build_tokenizer

    tok = build_tokenizer.__wrapped__(FAMILY_SPECIALS["qwen3"])  # a fresh one (the helper caches its own)
    first = rc.get_parser("qwen3", tok)
    again = rc.get_parser("qwen3", tok)
    assert again.tables is first.tables  # the second look-up is the identity cache's
    assert id(tok) in _tokenizer._by_id
    key, ref = id(tok), weakref.ref(tok)
    del tok, first, again
    gc.collect()
    assert ref() is None and key not in _tokenizer._by_id
