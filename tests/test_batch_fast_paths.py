"""ReasoningBatch.step's fast paths: one range check per ordinary token, a
queue for the rest, every slot checked before any state changes.

Each test here fails if a fast path decides a token the automaton would have
decided differently, if a queued request is walked out of order (a slot
listed twice in one step), or if a rejected step leaves a trace.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasoning_core import FamilyParser, ReasoningBatch
from reasoning_core._tables import AWAITING, CONTENT, REASONING, SEEDED, build_tables
from streams import pattern_sets

FIELDS = ("is_reasoning", "is_delimiter", "reasoning_ended", "is_held", "in_reasoning", "released", "completed")
STATES = (CONTENT, REASONING, SEEDED, AWAITING)
# Inside the delimiter alphabet's range (1..5), just outside it, and far outside.
TOKENS = st.one_of(st.integers(0, 7), st.sampled_from([-1, -(2**31), 2**31 - 1, 100, 128821]))
# Mostly ids outside the range, so whole blocks of 16 requests take the
# fast path and a block with one odd request (an id in range, a held or
# awaiting slot, a bad slot) has to fall back.
FAST = st.sampled_from([0, 6, 7, -1, 100, 2**31 - 1])
MOSTLY_FAST = st.one_of(FAST, FAST, FAST, FAST, FAST, FAST, FAST, TOKENS)


def snapshot(res):
    return tuple(np.array(getattr(res, f)).tolist() for f in FIELDS)


def slot_states(batch, capacity):
    return [(batch.is_open(s), batch.state(s) if batch.is_open(s) else None,
             batch.held_ids(s) if batch.is_open(s) else None) for s in range(capacity)]


@st.composite
def programs(draw):
    """Tables plus a list of operations on a small batch (capacity 5)."""
    patterns = draw(pattern_sets())
    default = draw(st.sampled_from([CONTENT, SEEDED, AWAITING]))
    ops = []
    for _ in range(draw(st.integers(1, 30))):
        kind = draw(st.sampled_from(["step", "step", "step", "ragged", "open", "close", "finish", "bad"]))
        if kind in ("step", "bad"):
            n = draw(st.integers(0, 12) | st.integers(15, 50))
            slots = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))  # repeats allowed
            toks = draw(st.lists(TOKENS if n < 13 else MOSTLY_FAST, min_size=n, max_size=n))
            if kind == "bad":
                slots.append(draw(st.sampled_from([-1, 5, 2**31 - 1, -(2**31)])))
                toks.append(draw(TOKENS))
                draw(st.randoms()).shuffle(slots)
            ops.append((kind, slots, toks))
        elif kind == "ragged":
            m = draw(st.integers(0, 5))
            slots = draw(st.lists(st.integers(0, 4), min_size=m, max_size=m))
            counts = draw(st.lists(st.integers(0, 3), min_size=m, max_size=m))
            toks = draw(st.lists(TOKENS, min_size=sum(counts), max_size=sum(counts)))
            ops.append((kind, slots, counts, toks))
        elif kind == "open":
            ops.append((kind, draw(st.integers(0, 4)), draw(st.sampled_from(STATES))))
        else:
            ops.append((kind, draw(st.integers(0, 4))))
    return patterns, default, ops


def run_program(backend, patterns, default, ops):
    """Every observable of the batch after each operation (results, errors, slot states)."""
    tables = build_tables(patterns, default_state=default)
    batch = ReasoningBatch(FamilyParser(tables, backend=backend), 5, backend=backend)
    engine = batch._engine
    for s in range(3):
        engine.open(s, default)
    trace = []
    for op in ops:
        kind = op[0]
        try:
            if kind in ("step", "bad"):
                res = batch.step(np.array(op[1], np.int64), np.array(op[2], np.int64))
                trace.append(snapshot(res))
            elif kind == "ragged":
                offsets = np.concatenate([[0], np.cumsum(op[2])]).astype(np.int32)
                res = batch.step_ragged(np.array(op[1], np.int32), offsets, np.array(op[3], np.int64))
                trace.append(snapshot(res))
            elif kind == "open":
                engine.open(op[1], op[2])
            elif kind == "close":
                batch.close(op[1])
            else:
                trace.append(batch.finish(op[1]))
        except (ValueError, TypeError) as exc:
            trace.append((type(exc).__name__, str(exc)))
        trace.append(slot_states(batch, 5))
    return trace


@pytest.mark.compiled
@given(programs())
@settings(max_examples=150)
def test_compiled_equals_pure(program):
    patterns, default, ops = program
    assert run_program("cython", patterns, default, ops) == run_program("python", patterns, default, ops)


@given(programs())
def test_step_equals_one_token_at_a_time(backend, program):
    """A step (repeated slots included) equals stepping its requests one by one."""
    patterns, default, ops = program
    tables = build_tables(patterns, default_state=default)
    whole = ReasoningBatch(FamilyParser(tables, backend=backend), 5, backend=backend)
    single = ReasoningBatch(FamilyParser(tables, backend=backend), 5, backend=backend)
    for b in (whole, single):
        for s in range(5):
            b._engine.open(s, default)
    for op in ops:
        if op[0] != "step":
            continue
        slots, toks = op[1], op[2]
        res = snapshot(whole.step(np.array(slots, np.int32), np.array(toks, np.int64)))
        one = [snapshot(single.step(np.array([s], np.int32), np.array([t], np.int64))) for s, t in zip(slots, toks)]
        assert res == tuple([o[k][0] for o in one] for k in range(len(FIELDS)))
        assert slot_states(whole, 5) == slot_states(single, 5)


@pytest.fixture
def batch(deepseek_tokenizer, backend):
    return ReasoningBatch("deepseek_r1", 6, tokenizer=deepseek_tokenizer, backend=backend)


THINK, UNTHINK, ASSISTANT = 128821, 128822, 128804
THINKING, ANSWERING = [ASSISTANT, THINK], [ASSISTANT, THINK, 5, UNTHINK]  # prompts


def test_rejected_step_clears_its_marks(backend):
    """A bad slot after queued requests (held tokens, a delimiter) leaves every state as it was."""
    tables = build_tables(pattern_sets_fixed(), default_state=CONTENT)
    batch = ReasoningBatch(FamilyParser(tables, backend=backend), 4, backend=backend)
    eng = batch._engine
    eng.open(0, REASONING)
    eng.open(1, REASONING)
    eng.open(2, AWAITING)
    batch.step(np.array([0], np.int32), np.array([7], np.int32))  # 7 8 9 is the end delimiter
    assert batch.held_ids(0) == (7,)
    before = slot_states(batch, 4)
    for bad_slots in ([0, 1, 2, 3], [0, 0, 1, 4], [2, 1, 0, -1], [0, 1, 2, 2**31 - 1]):
        with pytest.raises(ValueError):
            batch.step(np.array(bad_slots, np.int64), np.array([8, 7, 5, 5], np.int32))
        assert slot_states(batch, 4) == before
    res = batch.step(np.array([0, 1, 2], np.int32), np.array([8, 5, 5], np.int32))
    assert list(res.is_held) == [True, False, False]
    assert list(res.reasoning_ended) == [False, False, True]  # awaiting, then a content token
    res = batch.step(np.array([0], np.int32), np.array([9], np.int32))
    assert res.is_delimiter[0] and res.reasoning_ended[0] and res.completed[0] == 2


def pattern_sets_fixed():
    from reasoning_core._tables import END, START, Pattern

    return [Pattern((6,), START), Pattern((7, 8, 9), END)]


def test_repeated_slot_in_one_step(backend):
    """The same slot twice in one step: the second token sees the first's state."""
    tables = build_tables(pattern_sets_fixed(), default_state=CONTENT)
    batch = ReasoningBatch(FamilyParser(tables, backend=backend), 2, backend=backend)
    batch._engine.open(0, REASONING)
    batch._engine.open(1, AWAITING)
    res = batch.step(np.array([0, 1, 0, 1, 0, 0], np.int32), np.array([7, 3, 8, 6, 9, 4], np.int32))
    assert list(res.is_held) == [True, False, True, False, False, False]
    assert list(res.is_delimiter) == [False, False, False, True, True, False]
    assert list(res.reasoning_ended) == [False, True, False, False, True, False]
    assert list(res.is_reasoning) == [False, False, False, False, False, False]
    assert list(res.in_reasoning) == [True, False, True, True, False, False]
    assert batch.state(0) == "content" and batch.state(1) == "reasoning"


def test_previous_result_unchanged(batch):
    """Without ``out=`` every step returns new arrays: an older result never changes."""
    for s in range(4):
        batch.open(s, [ASSISTANT, THINK])
    first = batch.step(np.arange(4, dtype=np.int32), np.array([1, UNTHINK, 2, THINK], np.int32))
    kept = snapshot(first)
    second = batch.step(np.arange(4, dtype=np.int32), np.array([UNTHINK, 3, 4, 5], np.int32))
    assert snapshot(first) == kept
    assert snapshot(second) != kept
    assert not np.shares_memory(first.is_reasoning, second.is_reasoning)


def test_out_rewritten_in_full(batch):
    """``out=`` reused: every entry of the step is rewritten, none left from the last step."""
    for s in range(6):
        batch.open(s, THINKING if s % 2 else ANSWERING)
    out = batch.new_result(6)
    out_arrays = [getattr(out, f) for f in FIELDS]
    for a in out_arrays:
        a[:] = 1
    res = batch.step(np.arange(6, dtype=np.int32), np.array([5, 6, 7, 8, 9, 10], np.int32), out=out)
    assert res is out
    assert list(res.is_reasoning) == [False, True] * 3
    assert list(res.in_reasoning) == [False, True] * 3
    for f in ("is_delimiter", "reasoning_ended", "is_held", "released", "completed"):
        assert not getattr(res, f).any(), f


def test_many_requests_and_repeats(batch):
    """More requests than slots (a long queue when many are delimiters) equals the
    same tokens grouped per slot through step_ragged (its own loop)."""
    other = ReasoningBatch(batch.parser, 6, backend=batch.backend)
    for b in (batch, other):
        for s in range(6):
            b.open(s, THINKING if s % 2 else ANSWERING)
    rng = np.random.default_rng(7)
    n = 70_000  # above the work queue's kept size
    slots = rng.integers(0, 6, n).astype(np.int32)
    toks = rng.choice(np.array([5, THINK, UNTHINK, 128798, 128803, 99], np.int32), n)
    res = snapshot(batch.step(slots, toks))
    order = np.argsort(slots, kind="stable")
    counts = np.bincount(slots, minlength=6)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    grouped = other.step_ragged(np.arange(6, dtype=np.int32), offsets, toks[order])
    want = tuple(np.empty(n, dtype=np.array(getattr(grouped, f)).dtype) for f in FIELDS)
    for w, f in zip(want, FIELDS):
        w[order] = getattr(grouped, f)
    assert res == tuple(w.tolist() for w in want)
    assert slot_states(batch, 6) == slot_states(other, 6)
    # A small step afterwards still works (the queue was given back).
    res = batch.step(np.array([0, 1], np.int32), np.array([5, 5], np.int32))
    assert res.is_reasoning.tolist() == [batch.state(0) != "content", batch.state(1) != "content"]


def test_closed_slot_and_reopen(batch):
    batch.open(0, [ASSISTANT, THINK])
    batch.open(1, [ASSISTANT, THINK])
    batch.close(1)
    with pytest.raises(ValueError, match="slot 1 is not open"):
        batch.step(np.array([0, 1], np.int32), np.array([5, 5], np.int32))
    with pytest.raises(ValueError, match="slot 1 is not open"):
        batch.step(np.array([0, 1], np.int32), np.array([UNTHINK, UNTHINK], np.int32))
    assert batch.state(0) == "seeded"
    batch.open(1, ANSWERING)
    res = batch.step(np.array([0, 1], np.int32), np.array([5, 5], np.int32))
    assert list(res.is_reasoning) == [True, False]
    held, reasoning = batch.finish(0)
    assert held == () and reasoning
    res = batch.step(np.array([0], np.int32), np.array([UNTHINK], np.int32))
    assert res.reasoning_ended[0]
