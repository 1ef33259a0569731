"""Hardening, round 3 (issue 25): hostile callers of the engines.

Class 1: batch inputs that are views of the ``out=`` result's own memory.
Class 2: list/tuple subclasses whose ``__len__`` / ``__getitem__`` / ``__iter__`` lie.
Class 3: raw-read buffers of any byte order, alignment, strides, writeability.

Every call is compared with the same call on plain inputs (copies taken before
it), through the pure twin, and the compiled backend must agree with it.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.conftest import COMPILED
from reasoning_core import FamilyParser, ReasoningBatch
from reasoning_core._tables import END, START, TERM, Pattern, build_tables

# Multi-token delimiters, so steps hold, release and complete tokens.
PATTERNS = [Pattern((1, 2), START), Pattern((3,), END), Pattern((4, 5, 3), END), Pattern((6, 6), TERM)]
TABLES = build_tables(PATTERNS)
CAP = 6
IDS = st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7, 40000, -1, 2**31 - 1])
OUT_CAP = 256
BACKENDS = ["cython", "python"] if COMPILED else ["python"]
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _batch(backend: str) -> ReasoningBatch:
    b = ReasoningBatch(FamilyParser(TABLES, backend=backend), CAP, backend=backend)
    for s in range(CAP):
        b.open(s, [1, 2] if s % 2 else None)  # odd slots start seeded (reasoning)
    return b


def _outcome(fn):
    try:
        res = fn()
    except (TypeError, ValueError) as e:
        return ("raised", type(e).__name__, str(e))
    n = res.size
    return ("ok", tuple(tuple(np.asarray(getattr(res, k))[:n].astype(int).tolist()) for k in
                        ("is_reasoning", "is_delimiter", "reasoning_ended", "is_held", "in_reasoning",
                         "released", "completed")))


def _states(b: ReasoningBatch):
    return [(b.state(s), b.held_ids(s)) for s in range(CAP)]


def _block(out) -> np.ndarray:
    """The uint8 block under every array of a result (the out= memory)."""
    a = out.is_reasoning
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a.view(np.uint8)


LAYOUTS = ["plain", "big_endian", "unaligned", "readonly", "strided", "int64_be", "out_view"]


class _Placer:
    """Builds int32-valued input arrays with a given buffer property; ``out_view``
    ones are carved, one after another, out of the out= block itself."""

    def __init__(self, out, skew: int):
        self.block = _block(out)
        self.at = skew  # a byte offset: 1-3 makes the views unaligned

    def place(self, values, layout):
        v = np.array(values, dtype=np.int64)
        if layout == "plain":
            return v.astype(np.int32)
        if layout == "big_endian":
            return v.astype(">i4")
        if layout == "int64_be":
            return v.astype(">i8")
        if layout == "unaligned":
            raw = bytearray(1 + 4 * len(v))
            a = np.frombuffer(raw, dtype=np.int32, offset=1, count=len(v))
            a[:] = v
            return a
        if layout == "readonly":
            a = v.astype(np.int32)
            a.flags.writeable = False
            return a
        if layout == "strided":
            a = np.zeros(2 * len(v), dtype=np.int32)
            a[::2] = v
            return a[::2]
        assert layout == "out_view"
        a = self.block[self.at:self.at + 4 * len(v)].view(np.int32)
        a[:] = v
        self.at += 4 * len(v)
        return a


@st.composite
def _step_cases(draw):
    m = draw(st.integers(0, 40))  # the compiled step decides 16 requests at a time
    slots = draw(st.lists(st.integers(0, CAP - 1) | st.sampled_from([-1, CAP]) if draw(st.booleans())
                          else st.integers(0, CAP - 1), min_size=m, max_size=m))
    counts = draw(st.lists(st.integers(0, 3), min_size=m, max_size=m))
    tokens = draw(st.lists(IDS, min_size=sum(counts), max_size=sum(counts)))
    layouts = draw(st.tuples(*[st.sampled_from(LAYOUTS)] * 3))
    skew = draw(st.integers(0, 3))
    reuse = draw(st.integers(1, 3))  # steps made on the same result
    return slots, counts, tokens, layouts, skew, reuse


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("ragged", [False, True], ids=["step", "step_ragged"])
@SETTINGS
@given(case=_step_cases())
# The crash: slots in is_reasoning's bytes; request 1 waits for the
# automaton while the fast pass writes over its slot (a SIGSEGV before).
@example(case=([j % CAP for j in range(32)], [1] * 32, [7, 1] + [7] * 30,
               ("out_view", "out_view", "out_view"), 0, 1))
# Offsets in is_reasoning's bytes, written as the tokens are decided.
@example(case=([0, 1, 2], [2, 2, 2], [7] * 6, ("plain", "out_view", "plain"), 0, 2))
def test_batch_inputs_with_any_buffer_property_read_as_copies(backend, ragged, case):
    slots, counts, tokens, layouts, skew, reuse = case
    if not ragged:
        tokens = (tokens + [0] * len(slots))[:len(slots)]
    offsets = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).tolist()
    if ragged:
        tokens = (tokens + [0] * offsets[-1])[:offsets[-1]]
    hostile, plain = _batch(backend), _batch("python")
    out = hostile.new_result(OUT_CAP)
    for _ in range(reuse):
        place = _Placer(out, skew)
        s = place.place(slots, layouts[0])
        if ragged:
            o = place.place(offsets, layouts[1])
            t = place.place(tokens, layouts[2])
            got = _outcome(lambda: hostile.step_ragged(s, o, t, out=out))
            want = _outcome(lambda: plain.step_ragged(list(slots), list(offsets), list(tokens)))
        else:
            t = place.place(tokens, layouts[2])
            got = _outcome(lambda: hostile.step(s, t, out=out))
            want = _outcome(lambda: plain.step(list(slots), list(tokens)))
        assert got == want
        assert _states(hostile) == _states(plain)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("field", ["is_reasoning", "is_delimiter", "reasoning_ended", "is_held", "in_reasoning",
                                   "released", "completed"])
def test_read_only_out_array_refused_before_any_change(backend, field):
    b = _batch(backend)
    out = b.new_result(8)
    getattr(out, field).flags.writeable = False
    before = _states(b)
    with pytest.raises(ValueError, match="read-only"):
        b.step([0, 1], [1, 3], out=out)
    with pytest.raises(ValueError, match="read-only"):
        b.step_ragged([0, 1], [0, 1, 2], [1, 3], out=out)
    assert _states(b) == before


@pytest.mark.parametrize("backend", BACKENDS)
def test_big_endian_end_marker_is_seen(backend):
    # The report: a '>i4' array was read byte-swapped, missing the end.
    b = _batch(backend)
    res = b.step(np.array([1, 3], ">i4"), np.array([3, 0], ">i4"))
    assert res.is_delimiter.tolist() == [True, False]
    assert b.state(1) == "content"


# ---------------------------------------------------------------- class 2: lying sequences


def _liars():
    class LongList(list):
        def __len__(self):
            return 2**61

    class LongTuple(tuple):
        def __len__(self):
            return 2**61

    class HugeList(list):
        def __len__(self):
            return 2**63 - 1

    class ShortList(list):
        def __len__(self):
            return 0

    class ShortTuple(tuple):
        def __len__(self):
            return 1

    class OtherItems(list):
        def __getitem__(self, i):
            return 1 if isinstance(i, int) else list.__getitem__(self, i)

    class OtherIter(tuple):
        def __iter__(self):
            return iter([3] * 5)

    class RaisingItems(list):
        def __len__(self):
            return 2**40

        def __getitem__(self, i):
            raise IndexError(i)

    return [LongList, LongTuple, HugeList, ShortList, ShortTuple, OtherItems, OtherIter, RaisingItems]


LIARS = _liars()
STREAMS = st.lists(IDS, max_size=12)


def _result(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - both backends must raise the same
        return ("raised", type(e).__name__, str(e))


def _spans(r):
    return (r.reasoning_with_delimiters, r.reasoning, r.is_still_reasoning) if hasattr(r, "reasoning") else r


ENTRY_POINTS = {
    "stream": lambda p, x: _spans(p.stream(x, True)),
    "stream_content": lambda p, x: _spans(p.stream(x, False)),
    "split": lambda p, x: (lambda s: (s.tokens, s.segments))(p.split(x)),
    "will_reason_after_prompt": lambda p, x: p.will_reason_after_prompt(x),
    "begin": lambda p, x: p.begin(x).state,
    "feed": lambda p, x: p.engine.feed(x),
    "feed_copy": lambda p, x: (lambda r: (r[0], r[1], [int(v) for v in r[2]]))(p.engine.feed_copy(x)),
    "feed_side": lambda p, x: p.engine.feed_side(x),
    "scan_stream": lambda p, x: p.engine.scan_stream(x, True),
    "prompt_state": lambda p, x: p.engine.prompt_state(x),
    "will_reason": lambda p, x: p.engine.will_reason(x),
    "batch_open": lambda p, x: (lambda b: (b.open(0, x), b.state(0)))(ReasoningBatch(p, 2)),
    "batch_step": lambda p, x: _outcome(lambda: _open_batch(p).step(x, x)),
    "batch_step_ragged": lambda p, x: _outcome(lambda: _open_batch(p).step_ragged(x, x, x)),
}


def _open_batch(p):
    b = ReasoningBatch(p, 8)
    for s in range(8):
        b.open(s)
    return b


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize("liar", LIARS, ids=lambda c: c.__name__)
@settings(max_examples=15, deadline=None)
@given(ids=STREAMS)
def test_lying_sequences_read_as_the_elements_they_store(entry, liar, ids):
    fn = ENTRY_POINTS[entry]
    if entry.startswith("batch_step"):
        ids = [i % 8 for i in ids]  # slots and tokens at once
    stored = list(ids)
    results = set()
    for backend in BACKENDS:
        got = _result(lambda: fn(FamilyParser(TABLES, backend=backend), liar(ids)))
        want = _result(lambda: fn(FamilyParser(TABLES, backend=backend), stored))
        assert got == want, backend
        results.add(repr(got))
    assert len(results) == 1  # compiled == pure
