"""Test helpers: run token streams through parsers and an independent reference.

The reference model below is written from the SPEC's prose (longest pending
suffix that may still become an active delimiter; first complete delimiter
wins), not from the engine's tables, so agreement is evidence, not an echo.
"""
from __future__ import annotations

from hypothesis import strategies as st

from reasoning_core._tables import (
    AWAITING,
    BOUNDARY,
    CONTENT,
    ENABLE,
    END,
    FRAME,
    HEADER,
    REASONING,
    SEEDED,
    START,
    TERM,
    Pattern,
)

LABEL = {"content": "C", "reasoning": "R", "delimiter": "D", "start": "D"}


def run_split(parser, chunks, *, finish=True):
    """Feed chunks through ``parser.split``; return (tokens, labels) in order.

    Checks conservation on the way: the tokens the splits decide, in order,
    are exactly the input, and held tokens come back first in the next split.
    """
    tokens, labels, pending = [], [], []
    for chunk in chunks:
        s = parser.split(chunk)
        virtual = s.tokens
        assert virtual[: len(pending)] == pending, "held tokens must lead the next split"
        assert virtual[len(pending):] == list(chunk)
        pos = 0
        new_pending = []
        for kind, a, b in s.segments:
            assert a == pos, "segments must tie"
            pos = b
            if kind == "held":
                assert b == len(virtual), "held tokens are only at the end"
                new_pending = virtual[a:b]
            else:
                tokens.extend(virtual[a:b])
                labels.extend(LABEL[kind] * (b - a))
        assert pos == len(virtual), "segments must cover every token"
        pending = new_pending
    if finish:
        s = parser.finish()
        assert s.tokens == pending
        for kind, a, b in s.segments:
            assert kind in ("content", "reasoning")
            tokens.extend(s.tokens[a:b])
            labels.extend(LABEL[kind] * (b - a))
    return tokens, "".join(labels)


# ---------------------------------------------------------------- reference
_ACTIVE = {
    CONTENT: {START: (REASONING, True), HEADER: (CONTENT, True), FRAME: (CONTENT, True)},
    AWAITING: {START: (REASONING, True), HEADER: (CONTENT, True), FRAME: (CONTENT, True)},
    SEEDED: {START: (REASONING, True), END: (CONTENT, True), TERM: (CONTENT, False), HEADER: (CONTENT, True)},
    REASONING: {END: (CONTENT, True), TERM: (CONTENT, False), HEADER: (CONTENT, True)},
}
_PRIORITY = (START, END, TERM, HEADER, FRAME)


def reference_labels(patterns, state, ids):
    """Per-token labels (C/R/D) plus final state, with ``finish()`` applied."""
    labels = []
    held = []

    def side(s):
        return "R" if s in (REASONING, SEEDED) else "C"

    for t in ids:
        held.append(t)
        while held:
            active = [(p, *_ACTIVE[state][p.kind]) for k in _PRIORITY for p in patterns
                      if p.kind == k and k in _ACTIVE[state]]
            full = next((a for a in active if list(a[0].ids) == held), None)
            if full is not None:
                _, new_state, consumed = full
                labels.extend(("D" if consumed else "C") * len(held))
                held = []
                state = new_state
                break
            if any(len(p.ids) > len(held) and list(p.ids[: len(held)]) == held for p, _, _ in active):
                break
            labels.append(side(state))
            if state == AWAITING:
                state = CONTENT
            held.pop(0)
    labels.extend(side(state) * len(held))
    if held and state == AWAITING:
        state = CONTENT
    return "".join(labels), state


def reference_prompt_state(patterns, default_state, ids, awaiting_family=False):
    """Right to left: the nearest start/end/terminator/header/boundary decides."""
    found = None
    # Scan positions from the end; the first occurrence found (latest start
    # that completes when read backwards) decides.
    rev = [(tuple(reversed(p.ids)), p.kind) for k in (START, END, TERM, HEADER, BOUNDARY)
           for p in patterns if p.kind == k]
    r = list(reversed(ids))
    held = []
    for t in r:
        held.append(t)
        while held:
            full = next((kind for seq, kind in rev if list(seq) == held), None)
            if full is not None:
                found = full
                break
            if any(len(seq) > len(held) and list(seq[: len(held)]) == held for seq, _ in rev):
                break
            held.pop(0)
        if found is not None:
            break
    if found == START:
        return SEEDED
    enables = [p.ids for p in patterns if p.kind == ENABLE]
    for e in enables:
        for i in range(len(ids) - len(e) + 1):
            if tuple(ids[i:i + len(e)]) == e:
                return AWAITING
    if found in (END, TERM, HEADER):
        return CONTENT
    return default_state


# ---------------------------------------------------------------- strategies
@st.composite
def pattern_sets(draw, alphabet=range(1, 6), max_len=3, kinds=(START, END, TERM, HEADER, FRAME)):
    """Random delimiter sets over a small alphabet (so they collide often)."""
    seq = st.lists(st.sampled_from(list(alphabet)), min_size=1, max_size=max_len).map(tuple)
    pats = [Pattern(draw(seq), START), Pattern(draw(seq), END)]
    for kind in kinds[2:]:
        if draw(st.booleans()):
            pats.append(Pattern(draw(seq), kind))
    if draw(st.booleans()):
        pats.append(Pattern(draw(seq), draw(st.sampled_from([START, END]))))
    return pats


@st.composite
def streams_for(draw, patterns, alphabet=range(0, 7), max_size=40):
    """A token stream with delimiters (and broken-off delimiter prefixes) mixed in."""
    parts = []
    for _ in range(draw(st.integers(0, 8))):
        choice = draw(st.integers(0, 3))
        if choice == 0 and patterns:
            parts.extend(draw(st.sampled_from(patterns)).ids)
        elif choice == 1 and patterns:
            ids = draw(st.sampled_from(patterns)).ids
            parts.extend(ids[: draw(st.integers(1, len(ids)))])
        else:
            parts.extend(draw(st.lists(st.sampled_from(list(alphabet)), max_size=5)))
    return parts[:max_size]


@st.composite
def chunkings(draw, seq):
    """Random cut points (empty chunks allowed)."""
    n = len(seq)
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=8)))
    out, prev = [], 0
    for c in cuts + [n]:
        out.append(list(seq[prev:c]))
        prev = c
    return out


def degenerate_outputs(start: str, end: str, n: int) -> dict[str, str]:
    """Degenerate model output of about ``n`` characters for a family whose
    reasoning markers are ``start`` / ``end``: blank runs, endless partial
    markers, repeated markers (the linearity checks of every integration)."""
    part_end = end[:-1] or end
    part_start = start[:-1] or start
    return {
        "newlines": "\n" * n,
        "spaces": " " * n,
        "partial_end": part_end * (n // max(1, len(part_end))),
        "partial_start": part_start * (n // max(1, len(part_start))),
        "repeated_markers": (start + "x" + end) * (n // (len(start) + len(end) + 1)),
        "newlines_then_text": "\n" * n + "answer",
    }
