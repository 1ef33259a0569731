"""The per-request fast paths of parser creation and ``split()``.

``Engine.split`` decides a one-id list with nothing held at once and returns a
``TokenSplit`` without a segment list; ``get_parser`` makes a parser of a
(name, tokenizer, backend) it has seen from a recipe cached on the tables.
Both must be indistinguishable from the general paths: every property of
every split (per token, random chunkings, held multi-token delimiters,
``finish``), on both backends, and every attribute of a parser.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import reasoning_core as rc
from reasoning_core import parser as parser_mod
from reasoning_core._dispatch import backend_module
from reasoning_core._tables import AWAITING, CONTENT, REASONING, SEEDED
from reasoning_core.parser import FamilyParser, get_parser
from tests.conftest import COMPILED
from tests.strategies import OUTSIDE_IDS, chunkings, make_tables, table_specs, token_streams

BACKEND_NAMES = ("cython", "python") if COMPILED else ("python",)
STATES = (CONTENT, REASONING, SEEDED, AWAITING)


def view(s):
    """Everything a TokenSplit shows, with the types of its lists and items."""
    lists = (s.tokens, s.reasoning_ids, s.content_ids, s.delimiter_ids, s.held_ids)
    return (
        type(s).__name__,
        tuple(tuple(x) for x in lists),
        tuple(type(x).__name__ for x in lists),
        tuple(tuple(type(i).__name__ for i in x) for x in lists),
        s.segments,
        s.is_reasoning,
        type(s.is_reasoning).__name__,
        s.awaiting_start,
        type(s.awaiting_start).__name__,
        len(s),
        s.boundaries,
        repr(s),
    )


def engines(tables, state):
    """(compiled fed lists, compiled fed tuples: the general path, pure twin), all in ``state``."""
    out = []
    for backend in (BACKEND_NAMES[0], *BACKEND_NAMES):
        eng = backend_module(backend).Engine(tables)
        eng.set_state(state)
        out.append(eng)
    return out


def snapshot(eng):
    return eng.state, eng.held, tuple(eng.held_ids)


def check_run(tables, state, deltas):
    fast, general, *others = engines(tables, state)
    for i, d in enumerate(deltas):
        before = list(d)
        got = fast.split(d)
        # The result owns its ids: the caller's buffer may change afterwards.
        expected = view(got)
        d[:] = [10**6 + 1] * len(d)
        d.append(-7)
        want = general.split(tuple(before))
        assert view(want) == expected, f"delta {i}: {before}"
        assert view(got) == expected
        assert got == want
        for eng in others:
            assert view(eng.split(list(before))) == expected, f"delta {i} ({type(eng).__module__})"
            assert snapshot(eng) == snapshot(fast)
        assert snapshot(general) == snapshot(fast)
    done = fast.finish()
    for eng in (general, *others):
        assert eng.finish() == done
        assert snapshot(eng) == snapshot(fast)


@given(spec=table_specs(), data=st.data())
def test_per_token_split_equals_the_general_path_and_the_twin(spec, data):
    tables = make_tables(spec)
    ids = data.draw(token_streams([p for p in spec[0]]))
    check_run(tables, data.draw(st.sampled_from(STATES)), [[t] for t in ids])


@given(spec=table_specs(), data=st.data())
def test_random_chunkings_equal_the_general_path_and_the_twin(spec, data):
    tables = make_tables(spec)
    ids = data.draw(token_streams([p for p in spec[0]]))
    check_run(tables, data.draw(st.sampled_from(STATES)), data.draw(chunkings(ids)))


@given(spec=table_specs(), data=st.data())
def test_parser_split_and_finish_agree_across_backends(spec, data):
    tables = make_tables(spec)
    ids = data.draw(token_streams([p for p in spec[0]]))
    deltas = data.draw(st.one_of(st.just([[t] for t in ids]), chunkings(ids)))
    start = data.draw(st.sampled_from((None, True, False, "inside")))
    parsers = [FamilyParser(tables, backend=b).begin(starts_in_reasoning=start) for b in BACKEND_NAMES]
    for d in deltas:
        got = [view(p.split(list(d))) for p in parsers]
        assert got.count(got[0]) == len(got)
        assert len({(p.state, p.is_reasoning, p.held_ids) for p in parsers}) == 1
    done = [view(p.finish()) for p in parsers]
    assert done.count(done[0]) == len(done)


def test_held_tokens_leave_the_fast_path_and_come_back(backend):
    from reasoning_core._tables import END, START, Pattern, build_tables

    tables = build_tables([Pattern((7, 8, 9), START), Pattern((8, 9), END)], default_state=CONTENT)
    eng = backend_module(backend).Engine(tables)
    twin = backend_module("python").Engine(tables)
    for d in ([1], [7], [8], [2], [7], [8], [9], [3], [8], [9], [4], [7], [8]):
        s, t = eng.split(d), twin.split(d)
        assert view(s) == view(t), d
    assert eng.held == 2 and eng.finish() == twin.finish()


def test_one_id_inputs_the_fast_path_refuses_still_split(backend):
    from reasoning_core._tables import END, START, Pattern, build_tables

    class Id(int):
        pass

    tables = build_tables([Pattern((5,), START), Pattern((6,), END)], default_state=CONTENT)
    eng = backend_module(backend).Engine(tables)
    twin = backend_module("python").Engine(tables)
    for d in ([True], [np.int64(3)], [Id(4)], [2**70], [-(2**70)], [2**63 - 1], [-1], [5], [Id(6)], [0],
              *([v] for v in OUTSIDE_IDS)):
        assert view(eng.split(d)) == view(twin.split(d)), d
        assert snapshot(eng) == snapshot(twin)
    for bad in ([1.5], [None], ["1"], [[1]]):
        with pytest.raises(TypeError):
            eng.split(bad)
        with pytest.raises(TypeError):
            twin.split(bad)
        assert snapshot(eng) == snapshot(twin)


def test_split_lists_are_fresh_and_the_split_does_not_change(backend):
    from reasoning_core._tables import END, START, Pattern, build_tables

    tables = build_tables([Pattern((5,), START), Pattern((6,), END)], default_state=SEEDED)
    eng = backend_module(backend).Engine(tables)
    s = eng.split([3])
    assert s.reasoning_ids == [3] and s.content_ids == [] and s.is_reasoning is True
    r, c = s.reasoning_ids, s.content_ids
    assert r is not s.reasoning_ids and c is not s.content_ids
    r.append(1)
    c.append(2)
    s.held_ids.append(3)
    s.delimiter_ids.append(4)
    assert (s.reasoning_ids, s.content_ids, s.held_ids, s.delimiter_ids) == ([3], [], [], [])
    assert s.tokens is s.tokens and s.tokens == [3]
    assert s.segments == [("reasoning", 0, 1)] and len(s) == 1
    with pytest.raises(AttributeError):
        s.tokens = [1]
    eng.split([6])
    c = eng.split([4])
    assert (c.content_ids, c.reasoning_ids, c.is_reasoning, c.awaiting_start) == ([4], [], False, False)


def test_a_split_made_while_the_engine_is_busy_raises(backend):
    from reasoning_core._tables import END, START, Pattern, build_tables

    tables = build_tables([Pattern((5,), START), Pattern((6,), END)], default_state=CONTENT)
    eng = backend_module(backend).Engine(tables)
    seen = []

    class Reenter:
        def __index__(self):
            try:
                eng.split([1])  # a one-id list: the fast path must refuse it too
            except RuntimeError as exc:
                seen.append(exc)
            return 2

    eng.split([Reenter(), 3])
    assert len(seen) == 1
    assert eng.split([1]).content_ids == [1]


def test_awaiting_state_ends_at_the_first_content_token(backend):
    from reasoning_core._tables import END, START, Pattern, build_tables

    tables = build_tables([Pattern((5,), START), Pattern((6,), END)], default_state=AWAITING, awaiting_family=True)
    eng = backend_module(backend).Engine(tables)
    twin = backend_module("python").Engine(tables)
    s = eng.split([1])
    assert view(s) == view(twin.split([1]))
    assert s.awaiting_start is False and eng.state == CONTENT


# ------------------------------------------------------------------ get_parser
def _attrs(p):
    return {k: type(v).__name__ for k, v in vars(p).items()}


@pytest.mark.parametrize("backend_arg", (None,) + BACKEND_NAMES)
def test_get_parser_from_a_recipe_is_the_constructor_s_parser(deepseek_tokenizer, backend_arg, monkeypatch):
    made = []
    new = parser_mod._new_object
    monkeypatch.setattr(parser_mod, "_new_object", lambda cls: made.append(cls) or new(cls))
    first = get_parser("deepseek_r1", deepseek_tokenizer, backend=backend_arg)
    ref = type(first)(first.tables, backend=backend_arg)
    get_parser("deepseek_r1", deepseek_tokenizer, backend=backend_arg)  # (a tokenizer seen twice is known by id)
    made.clear()
    again = [get_parser("deepseek_r1", deepseek_tokenizer, backend=backend_arg) for _ in range(3)]
    assert made == [type(first)] * 3  # the recipe made them
    for p in again:
        assert type(p) is type(ref) and p.backend == ref.backend and p.tables is ref.tables
        assert _attrs(p) == _attrs(ref)
        assert type(p.engine) is type(ref.engine) and p.engine is not ref.engine
        assert p.formatter is None and p.state == ref.state and p.matches_bytes is False
    # Independent per-request state, shared stream() results.
    a, b = again[0], again[1]
    ids = deepseek_tokenizer.encode("<think>hm</think>ok", add_special_tokens=False).ids
    a.begin()
    b.begin(starts_in_reasoning=False)
    sa = [a.split([t]) for t in ids]
    assert (b.state, b.held_ids) == ("content", ())
    assert a.stream([5], True) is ref.stream([5], True)
    r, c = [], []
    for s in sa + [a.finish()]:
        r += s.reasoning_ids
        c += s.content_ids
    assert deepseek_tokenizer.decode(r) == "hm" and deepseek_tokenizer.decode(c) == "ok"


def test_get_parser_errors_stay_the_same_with_recipes(deepseek_tokenizer):
    get_parser("deepseek_r1", deepseek_tokenizer)
    with pytest.raises(ValueError):
        get_parser("deepseek_r1", deepseek_tokenizer, backend="fortran")
    with pytest.raises(ValueError):
        get_parser("deepseek_r1", deepseek_tokenizer, backend=["cython"])
    with pytest.raises(ValueError):
        get_parser("no_such_family", deepseek_tokenizer)
    with pytest.raises(TypeError):
        get_parser(None, deepseek_tokenizer)


class VocabTokenizer:
    """Every marker of every family is one id (weak-referenceable, so cached by identity)."""

    def __init__(self):
        markers = set()
        for fam in rc.families.FAMILIES.values():
            for field in ("start", "end", "terminators", "headers", "header_terminators", "frames", "boundaries",
                          "enable"):
                markers.update(getattr(fam, field, ()) or ())
        self.vocab = {m: 1000 + i for i, m in enumerate(sorted(markers))}

    def token_to_id(self, text):
        return self.vocab.get(text)

    def encode(self, text, add_special_tokens=False):
        return [self.vocab[text]] if text in self.vocab else [ord(c) for c in text]


def test_families_with_a_label_or_byte_markers_take_the_constructor(deepseek_tokenizer, monkeypatch):
    made = []
    new = parser_mod._new_object
    monkeypatch.setattr(parser_mod, "_new_object", lambda cls: made.append(cls) or new(cls))
    tok = VocabTokenizer()
    ps = [get_parser("gemma4", tok) for _ in range(4)]
    assert not ps[0].matches_bytes
    assert all(p.formatter is not None for p in ps) and len({id(p.formatter) for p in ps}) == 4
    ps = [get_parser("gemma4", deepseek_tokenizer) for _ in range(4)]  # markers over bytes here
    assert all(p.matches_bytes and p.formatter is not None for p in ps)
    assert made == []
    # Every family: parsers made again equal the first one, attribute for attribute.
    for name in rc.families.FAMILIES:
        ps = [get_parser(name, tok, backend=b) for b in (None, *BACKEND_NAMES) for _ in range(3)]
        for p in ps:
            ref = type(p)(p.tables, backend=p.backend)
            assert _attrs(p) == _attrs(ref) and p.backend == ref.backend
            assert (p.formatter is None) == (ref.formatter is None)
    assert made


def test_a_subclass_does_not_take_its_parent_s_recipe(deepseek_tokenizer):
    cls = rc.get_parser_cls("deepseek_r1")

    class Mine(cls):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            self.extra = 1

    p = get_parser("deepseek_r1", deepseek_tokenizer)
    m = Mine(p.tables)
    assert m.extra == 1 and type(get_parser("deepseek_r1", deepseek_tokenizer)) is cls
