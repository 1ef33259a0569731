"""Hypothesis properties of the token engine: reference agreement,
conservation, chunking invariance and backend parity."""
from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from reasoning_core import FamilyParser
from reasoning_core._tables import (
    AWAITING,
    CONTENT,
    END,
    HEADER,
    REASONING,
    SEEDED,
    START,
    TERM,
    Pattern,
    build_tables,
)
from streams import chunkings, pattern_sets, reference_labels, reference_prompt_state, run_split, streams_for


def _parser(patterns, default_state, backend, awaiting=False):
    tables = build_tables(patterns, default_state=default_state, awaiting_family=awaiting)
    return FamilyParser(tables, backend=backend)


@st.composite
def cases(draw):
    patterns = draw(pattern_sets())
    state = draw(st.sampled_from([CONTENT, SEEDED, AWAITING]))
    ids = draw(streams_for(patterns))
    return patterns, state, ids, draw(chunkings(ids))


@given(cases())
@example(([Pattern((1, 2), START), Pattern((1, 3), END)], CONTENT, [1, 1, 2, 0, 1, 3], [[1], [1, 2, 0, 1], [3]]))
@example(([Pattern((1, 2, 3), START), Pattern((2, 3), END)], SEEDED, [1, 2, 3, 1, 2, 4, 2, 3], [[1, 2], [3, 1, 2], [4, 2], [3]]))
def test_split_agrees_with_reference(backend, case):
    patterns, state, ids, chunks = case
    parser = _parser(patterns, state, backend)
    tokens, labels = run_split(parser.begin(), chunks)
    expected, final_state = reference_labels(patterns, state, ids)
    assert tokens == ids  # conservation
    assert labels == expected
    assert parser.is_reasoning == (final_state in (REASONING, SEEDED))


@given(cases())
def test_chunking_invariance(backend, case):
    patterns, state, ids, chunks = case
    one_shot = run_split(_parser(patterns, state, backend).begin(), [ids])
    assert run_split(_parser(patterns, state, backend).begin(), chunks) == one_shot
    assert run_split(_parser(patterns, state, backend).begin(), [[t] for t in ids]) == one_shot


@pytest.mark.compiled
@given(cases(), st.lists(st.integers(0, 7), max_size=20))
def test_backends_agree_everywhere(case, prompt):
    patterns, state, ids, chunks = case
    c = _parser(patterns, state, "cython")
    p = _parser(patterns, state, "python")
    assert c.engine.prompt_state(prompt) == p.engine.prompt_state(prompt)
    c.begin(prompt)
    p.begin(prompt)
    for chunk in chunks:
        assert c.split(chunk) == p.split(chunk)
        assert c.held_ids == p.held_ids
        assert c.state == p.state
        for seeded in (True, False):
            assert c.stream(chunk, seeded) == p.stream(chunk, seeded)
    assert c.finish() == p.finish()


@given(pattern_sets(kinds=(START, END, TERM, HEADER)), st.lists(st.integers(0, 6), max_size=25),
       st.sampled_from([CONTENT, SEEDED]))
def test_prompt_state_agrees_with_reference(backend, patterns, prompt, default):
    parser = _parser(patterns, default, backend)
    assert parser.engine.prompt_state(prompt) == reference_prompt_state(patterns, default, prompt)
    assert parser.will_reason_after_prompt(prompt) == (
        reference_prompt_state(patterns, default, prompt) != CONTENT
    )


def _first(patterns, ids, begin, mode, wanted):
    """First complete delimiter (reference walk from a fresh state at ``begin``)."""
    from streams import _ACTIVE, _PRIORITY

    held_start = begin
    i = begin
    while i < len(ids):
        held = ids[held_start:i + 1]
        active = [p for k in _PRIORITY for p in patterns if p.kind == k and k in _ACTIVE[mode]]
        full = next((p for p in active if list(p.ids) == held), None)
        if full is not None:
            if full.kind in wanted:
                return full.kind, held_start, i + 1
            held_start = i + 1
            i += 1
            continue
        if any(len(p.ids) > len(held) and list(p.ids[: len(held)]) == held for p in active):
            i += 1
            continue
        held_start += 1
        if held_start > i:
            i += 1
    return None


def reference_stream(patterns, ids, reasoning):
    n = len(ids)
    if reasoning:
        hit = _first(patterns, ids, 0, SEEDED, (START, END, TERM, HEADER))
        if hit is None:
            return (0, 0, n, n, True)
        kind, a, b = hit
        if kind == TERM:
            return (0, 0, a, a, False)
        if kind != START:
            return (0, 0, a, b, False)
        d0, r0 = a, b
    else:
        hit = _first(patterns, ids, 0, CONTENT, (START,))
        if hit is None:
            return (0, 0, 0, 0, False)
        _, d0, r0 = hit
    hit = _first(patterns, ids, r0, REASONING, (END, TERM, HEADER))
    if hit is None:
        return (d0, r0, n, n, True)
    kind, a, b = hit
    return (d0, r0, a, a, False) if kind == TERM else (d0, r0, a, b, False)


@given(pattern_sets(), st.data())
def test_stream_agrees_with_reference(backend, patterns, data):
    ids = data.draw(streams_for(patterns))
    reasoning = data.draw(st.booleans())
    parser = _parser(patterns, CONTENT, backend)
    got = parser.stream(ids, reasoning)
    d0, r0, r1, d1, still = reference_stream(patterns, ids, reasoning)
    assert (got.span.reasoning_with_delimiters, got.span.reasoning, got.is_still_reasoning) == (
        (d0, d1), (r0, r1), still)
    # Conservation within the delta: content + reasoning + delimiters = input.
    reasoning_ids = got.span.extract_reasoning(ids)
    content_ids = got.span.extract_content(ids)
    assert len(reasoning_ids) + len(content_ids) + (d1 - d0) - (r1 - r0) == len(ids)


@given(cases())
def test_feed_side_is_feed_without_lists(backend, case):
    patterns, state, ids, chunks = case
    a = _parser(patterns, state, backend).begin().engine
    b = _parser(patterns, state, backend).begin().engine
    for chunk in chunks:
        got = a.feed_side(chunk)
        segs, n_prefix = b.feed(chunk)
        if isinstance(got, int):
            assert (segs, n_prefix) == ([(got, 0, len(chunk))], 0)
        else:
            assert got == (segs, n_prefix)
        assert (a.state, a.held_ids) == (b.state, b.held_ids)
