"""Pure-Python twin of ``reasoning_core/_engine.pyx``.

Same class names, constructor arguments, return values and exceptions as the
compiled engine.  The two walk the same tables (``reasoning_core._tables``);
any change to the walking loop lands in both files in the same commit, and
the parity tests in ``tests/`` prove they agree.
"""
from __future__ import annotations

import numpy as np

from reasoning_core._input import check_capacity, index_of, result_arrays, snapshot, to_int32_array, to_int_list
from reasoning_core._shared import TOKEN_SPLIT as _TOKEN_SPLIT
from reasoning_core._shared import batch_result_repr
from reasoning_core._tables import (
    AWAITING,
    CONTENT,
    END,
    ENABLE,
    HEADER,
    HELD_BIT,
    MODE_ENABLE,
    MODE_PROMPT_REV,
    REASONING,
    SEEDED,
    SEG_CONTENT,
    SEG_DELIMITER,
    SEG_HELD,
    SEG_REASONING,
    SEG_START,
    START,
    TERM,
    Tables,
    engine_arrays,
)

__all__ = ["Engine", "BatchEngine", "BatchStepResult", "TextGate"]


class _Tables:
    """Table views as Python lists (list indexing beats NumPy scalars here)."""

    __slots__ = ("tables", "sigma", "ns", "trans", "depth", "fire_state", "fire_consume", "fire_kind", "root",
                 "lo", "hi")

    def __init__(self, tables: Tables) -> None:
        engine_arrays(tables)  # the same acceptance check as the compiled engine
        self.tables = tables
        self.sigma = {int(t): k for k, t in enumerate(tables.sigma.tolist())}
        self.ns = len(self.sigma)
        self.trans = tables.trans.tolist()
        self.depth = tables.depth.tolist()
        self.fire_state = tables.fire_state.tolist()
        self.fire_consume = tables.fire_consume.tolist()
        self.fire_kind = tables.fire_kind.tolist()
        self.root = tables.root.tolist()
        # Range of the delimiter alphabet (the compiled engine's fast reject).
        self.lo, self.hi = (int(tables.sigma[0]), int(tables.sigma[-1])) if self.ns else (1, 0)

    def first_fire(self, ids, begin: int, root: int, wanted: tuple[int, ...]):
        """First complete delimiter of a kind in ``wanted`` at or after ``begin``.

        Returns (kind, match_start, match_end) or None.  Completed delimiters
        of other kinds restart the search, as in the streaming walk.
        """
        sigma, ns, trans, depth = self.sigma, self.ns, self.trans, self.depth
        fire_kind = self.fire_kind
        node = root
        for i in range(begin, len(ids)):
            k = sigma.get(ids[i])
            node = root if k is None else trans[node * ns + k]
            kind = fire_kind[node]
            if kind >= 0:
                if kind in wanted:
                    return kind, i + 1 - depth[node], i + 1
                node = root
        return None


def _advance(t: _Tables, state: int, node: int, tok: int):
    """One token through the automaton: the single transition rule of both loops.

    Returns ``(state, node, released, fired, consumed, was_reasoning)`` as the
    compiled ``_advance`` fills its ``_Move``: ``released`` tokens are decided
    to the side the request was on, ``fired`` is the length of the delimiter
    this token completed (0: none), ``consumed`` whether it is consumed.
    """
    k = t.sigma.get(tok)
    nxt = t.root[state] if k is None else t.trans[node * t.ns + k]
    fs = t.fire_state[nxt]
    was_reasoning = state == REASONING or state == SEEDED
    released = t.depth[node] + 1 - t.depth[nxt]
    if released and state == AWAITING:
        state = CONTENT  # AWAITING ends at the first content token
    if fs >= 0:
        return fs, t.root[fs], released, t.depth[nxt], t.fire_consume[nxt], was_reasoning
    return state, nxt, released, 0, 0, was_reasoning


class Engine:
    """Per-request reasoning state machine over token ids."""

    __slots__ = ("_w", "_state", "_node", "_opened", "_make", "_on_open", "_deltas", "_busy")

    def __init__(self, tables: Tables) -> None:
        self._busy = False
        self._w = _Tables(tables)
        self._state = tables.default_state
        self._node = self._w.root[self._state]
        self._opened = False
        self._make = None
        self._on_open = None
        self._deltas: dict = {}

    def _enter(self) -> None:
        # The compiled engine refuses a call made while another is converting
        # its input (re-entered from __index__, or another thread); so does
        # the twin, so both backends raise the same exception.
        if self._busy:
            raise RuntimeError(
                "this parser is already running a call (re-entered from a callback, or used "
                "from another thread): parsers are per-request objects"
            )
        self._busy = True

    def _load(self, token_ids):
        # The twin's counterpart of the compiled scratch buffer's load: the
        # conversion is where Python callbacks (``__index__``) can run.
        self._enter()
        try:
            return to_int_list(token_ids)
        finally:
            self._busy = False

    def copy(self) -> "Engine":
        """A fresh engine on the same checked tables, in their default state,
        sharing this one's ``stream()`` set-up and result cache."""
        e = Engine.__new__(Engine)
        e._busy = False
        e._w = self._w
        e._state = self._w.tables.default_state
        e._node = self._w.root[e._state]
        e._opened = False
        e._make = self._make
        e._on_open = self._on_open
        e._deltas = self._deltas
        return e

    def configure_stream(self, make, on_open=None) -> None:
        """``stream()`` results: ``make(d0, r0, r1, d1, still)`` builds one (frozen,
        so equal ones are shared); ``on_open()`` runs when a delta opens a block."""
        self._enter()
        self._busy = False
        self._make = make
        self._on_open = on_open
        self._deltas = {}

    @property
    def tables(self) -> Tables:
        return self._w.tables

    @property
    def scratch_bytes(self) -> int:
        """Bytes held by an input scratch buffer between calls (the twin keeps none)."""
        return 0

    @property
    def state(self) -> int:
        return self._state

    @property
    def held(self) -> int:
        """How many trailing tokens are held (a possible delimiter prefix)."""
        return self._w.depth[self._node]

    @property
    def held_ids(self) -> tuple[int, ...]:
        return self._w.tables.paths[self._node]

    def set_state(self, state: int) -> None:
        """Seed the state; drops anything held."""
        if state not in (CONTENT, REASONING, SEEDED, AWAITING):
            raise ValueError(f"invalid engine state {state!r}")
        self._enter()
        self._busy = False
        self._state = state
        self._node = self._w.root[state]
        self._opened = False

    def feed(self, token_ids) -> tuple[list, int]:
        """Classify a delta.

        Returns ``(segments, n_prefix)``: ``segments`` is a list of
        ``(segment_kind, start, end)`` over the virtual sequence
        ``held_ids_before + token_ids`` (``n_prefix`` = how many held ids
        lead it); the last segment is SEG_HELD when tokens are still held.
        """
        ids = self._load(token_ids)
        return self._feed(ids)

    def _feed(self, ids) -> tuple[list, int]:
        t = self._w
        depth, lo, hi = t.depth, t.lo, t.hi
        state, node = self._state, self._node
        n_prefix = depth[node]
        n = len(ids)
        segs: list[list[int]] = []
        pos = 0  # tokens of the virtual sequence decided so far

        def emit(kind: int, count: int) -> None:
            # Extend the open segment or start one of another kind.
            nonlocal pos
            if segs and segs[-1][0] == kind:
                segs[-1][2] += count
            else:
                segs.append([kind, pos, pos + count])
            pos += count

        i = 0
        while i < n:
            if depth[node] == 0:
                # Nothing held: ids outside the delimiter alphabet's range are
                # decided at once, so plain text is a tight scan.
                j = i
                while j < n and (ids[j] < lo or ids[j] > hi):
                    j += 1
                if j > i:
                    if state == REASONING or state == SEEDED:
                        emit(SEG_REASONING, j - i)
                    else:
                        state = CONTENT  # AWAITING ends at the first content token
                        emit(SEG_CONTENT, j - i)
                    i = j
                    continue
            state, node, released, fired, consumed, was_reasoning = _advance(t, state, node, ids[i])
            if released:
                emit(SEG_REASONING if was_reasoning else SEG_CONTENT, released)
            if fired:
                if not consumed:
                    emit(SEG_CONTENT, fired)
                else:
                    emit(SEG_START if state == REASONING else SEG_DELIMITER, fired)
            i += 1
        if depth[node]:
            segs.append([SEG_HELD, pos, pos + depth[node]])
        self._state, self._node = state, node
        return [tuple(seg) for seg in segs], n_prefix

    def feed_copy(self, token_ids):
        """``feed()`` of a list or tuple, plus a private copy of its ids."""
        ids = self._load(token_ids)
        snapshot = ids[:] if ids is token_ids else ids  # a converted list is already private
        segs, n_prefix = self._feed(ids)
        return segs, n_prefix, snapshot

    def split(self, token_ids):
        """``feed()`` as a ``TokenSplit`` owning a copy of the delta (``FamilyParser.split``)."""
        prefix = self._w.tables.paths[self._node] if self._w.depth[self._node] else ()
        kind = type(token_ids)
        if kind is list or kind is tuple:
            segs, _, delta = self.feed_copy(token_ids)
        else:
            delta = snapshot(token_ids)
            segs, _ = self.feed(delta)
        state = self._state
        return _token_split()(prefix, delta, segs, state == REASONING or state == SEEDED, state == AWAITING)

    def feed_side(self, token_ids):
        """``feed()``, minus its lists in the per-token common case.

        Returns ``SEG_REASONING`` or ``SEG_CONTENT`` when nothing was held and
        every id is outside the delimiter alphabet's range (the whole delta
        goes to that side), else exactly what ``feed()`` returns.
        """
        ids = self._load(token_ids)
        w = self._w
        if ids and w.depth[self._node] == 0 and all(t < w.lo or t > w.hi for t in ids):
            if self._state == REASONING or self._state == SEEDED:
                return SEG_REASONING
            self._state = CONTENT  # AWAITING ends at the first content token
            return SEG_CONTENT
        return self._feed(ids)

    def feed_text(self, text: str) -> tuple[list, int]:
        """``feed`` over the code points of ``text`` (tables built from code points)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be str, not {type(text).__name__}")
        self._enter()
        self._busy = False
        return self._feed([ord(c) for c in text])

    def feed_text_side(self, text: str):
        """``feed_text()``, minus its lists when the chunk goes wholly to one side
        (``SEG_REASONING`` / ``SEG_CONTENT``; as compiled)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be str, not {type(text).__name__}")
        w, state = self._w, self._state
        if text and w.depth[self._node] == 0 and state != AWAITING:
            root, sigma, trans, ns = w.root[state], w.sigma, w.trans, w.ns
            if all((k := sigma.get(ord(c))) is None or trans[root * ns + k] == root for c in text):
                return SEG_REASONING if state in (REASONING, SEEDED) else SEG_CONTENT
        return self.feed_text(text)

    def finish(self) -> tuple[list, int]:
        """Release held tokens to the current side (end of generation)."""
        w = self._w
        n = w.depth[self._node]
        segs = []
        self._enter()
        self._busy = False
        if n:
            if self._state == REASONING or self._state == SEEDED:
                segs.append((SEG_REASONING, 0, n))
            else:
                segs.append((SEG_CONTENT, 0, n))
                self._state = CONTENT
            self._node = w.root[self._state]
        return segs, n

    def scan_stream(self, token_ids, is_currently_reasoning: bool) -> tuple[int, int, int, int, bool]:
        """MAX ``stream()`` on one delta, statelessly: (d0, r0, r1, d1, still)."""
        reasoning = bool(is_currently_reasoning)  # evaluated first, as compiled
        ids = self._load(token_ids)
        return _scan_stream(self._w, ids, reasoning)

    def stream(self, token_ids, is_currently_reasoning=True):
        """MAX ``stream()``: the span of one delta, as built by ``configure_stream``.

        An awaiting-start family (Gemma 4) reads a pre-seeded state as
        waiting for its start until this request has opened a block.
        """
        reasoning = bool(is_currently_reasoning)  # evaluated first, as compiled
        ids = self._load(token_ids)
        if reasoning and not self._opened and self._w.tables.awaiting_family:
            reasoning = False
        return stream_result(self, _scan_stream(self._w, ids, reasoning))

    def prompt_state(self, prompt_token_ids) -> int:
        """The state generation starts in after this prompt (no side effects)."""
        kind = type(prompt_token_ids)
        if (kind is list or kind is tuple) and not self._w.tables.has_enable:
            # From the end, converting only the ids read (as compiled).
            self._enter()
            try:
                found = _scan_back(self._w, prompt_token_ids)
            finally:
                self._busy = False
            if found == START:
                return SEEDED
            if found in (END, TERM, HEADER):
                return CONTENT
            return self._w.tables.default_state
        if kind is list or kind is tuple:
            self._enter()
            try:
                if _scan_back(self._w, prompt_token_ids) == START:
                    return SEEDED
            finally:
                self._busy = False
        ids = self._load(prompt_token_ids)
        return _prompt_state(self._w, ids)

    def will_reason(self, prompt_token_ids) -> bool:
        """Whether generation may reason after this prompt (``prompt_state`` is
        not content): MAX's ``will_reason_after_prompt`` in one call."""
        return self.prompt_state(prompt_token_ids) != CONTENT


def _scan_stream(w: _Tables, ids, reasoning: bool):
    n = len(ids)
    if reasoning:
        hit = w.first_fire(ids, 0, w.root[SEEDED], (START, END, TERM, HEADER))
        if hit is None:
            return 0, 0, n, n, True
        kind, a, b = hit
        if kind == START:
            d0, r0 = a, b
        elif kind == TERM:
            return 0, 0, a, a, False
        else:
            return 0, 0, a, b, False
    else:
        hit = w.first_fire(ids, 0, w.root[CONTENT], (START,))
        if hit is None:
            return 0, 0, 0, 0, False
        _, d0, r0 = hit
    hit = w.first_fire(ids, r0, w.root[REASONING], (END, TERM, HEADER))
    if hit is None:
        return d0, r0, n, n, True
    kind, a, b = hit
    if kind == TERM:
        return d0, r0, a, a, False
    return d0, r0, a, b, False


def stream_result(eng, key: tuple):
    """The ``stream()`` result for a scanned span ``key`` = (d0, r0, r1, d1, still).

    Shared by every engine written in Python (this twin and the byte-level
    engine): notes a block opened, and builds the result with the configured
    ``make``, cached so equal spans share one immutable object.
    """
    if key[1] > key[0]:
        eng._opened = True
        if eng._on_open is not None:
            eng._on_open()
    if eng._make is None:
        return key
    parsed = eng._deltas.get(key)
    if parsed is None:
        parsed = eng._make(*key)
        if len(eng._deltas) < 512:
            eng._deltas[key] = parsed
    return parsed


def _token_split():
    """The public ``TokenSplit`` class (registered by reasoning_core.types, see
    reasoning_core._shared: importing that module here would be an import circle)."""
    return _TOKEN_SPLIT[0]


def _scan_back(w: _Tables, seq) -> int:
    """Kind of the last complete marker of a list/tuple of ids, or -1 (items
    before the deciding marker are never read)."""
    sigma, ns, trans, fire_kind = w.sigma, w.ns, w.trans, w.fire_kind
    root = w.root[MODE_PROMPT_REV]
    node = root
    i = len(seq) - 1
    while i >= 0:
        if i >= len(seq):
            raise RuntimeError("token id list changed size while being read")
        item = seq[i]
        if type(item) is not int:
            item = index_of(i, item)
        k = sigma.get(item)
        node = root if k is None else trans[node * ns + k]
        if fire_kind[node] >= 0:
            return fire_kind[node]
        i -= 1
    return -1


def _prompt_state(w: _Tables, ids) -> int:
    sigma, ns, trans, fire_kind = w.sigma, w.ns, w.trans, w.fire_kind
    root = w.root[MODE_PROMPT_REV]
    node = root
    found = -1
    for i in range(len(ids) - 1, -1, -1):
        k = sigma.get(ids[i])
        node = root if k is None else trans[node * ns + k]
        if fire_kind[node] >= 0:
            found = fire_kind[node]
            break
    if found == START:
        return SEEDED
    if w.tables.has_enable and w.first_fire(ids, 0, w.root[MODE_ENABLE], (ENABLE,)) is not None:
        return AWAITING
    if found in (END, TERM, HEADER):
        return CONTENT
    return w.tables.default_state


class BatchStepResult:
    """Per-token output arrays of a batch step (reusable as ``out=``)."""

    __slots__ = ("is_reasoning", "is_delimiter", "reasoning_ended", "is_held", "in_reasoning", "released", "completed", "size")

    def __init__(self, capacity: int) -> None:
        (self.is_reasoning, self.is_delimiter, self.reasoning_ended, self.is_held, self.in_reasoning,
         self.released, self.completed) = result_arrays(check_capacity(capacity, 0))
        self.size = 0

    @property
    def capacity(self) -> int:
        return int(self.is_reasoning.shape[0])

    def __repr__(self) -> str:
        return batch_result_repr(self)

    def view(self, n: int) -> "BatchStepResult":
        """The first ``n`` entries (views, no copy)."""
        out = BatchStepResult.__new__(BatchStepResult)
        for name in ("is_reasoning", "is_delimiter", "reasoning_ended", "is_held", "in_reasoning", "released", "completed"):
            setattr(out, name, getattr(self, name)[:n])
        out.size = n
        return out


class BatchEngine:
    """Reasoning state for many requests in flat arrays."""

    __slots__ = ("_w", "_state", "_node", "_open", "capacity")

    def __init__(self, tables: Tables, capacity: int) -> None:
        self._w = _Tables(tables)
        capacity = check_capacity(capacity, 1)
        self.capacity = capacity
        self._state = np.zeros(capacity, dtype=np.uint8)
        self._node = np.zeros(capacity, dtype=np.int32)
        self._open = np.zeros(capacity, dtype=np.uint8)

    def _check_slot(self, slot) -> int:
        if not isinstance(slot, (int, np.integer)) or isinstance(slot, bool):
            raise TypeError(f"slot must be an int, not {type(slot).__name__}")
        slot = int(slot)
        if not 0 <= slot < self.capacity:
            raise ValueError(f"slot {slot} is out of range for capacity {self.capacity}")
        return slot

    def open(self, slot, state: int) -> None:
        slot = self._check_slot(slot)
        if state not in (CONTENT, REASONING, SEEDED, AWAITING):
            raise ValueError(f"invalid engine state {state!r}")
        self._state[slot] = state
        self._node[slot] = self._w.root[state]
        self._open[slot] = 1

    def close(self, slot) -> None:
        slot = self._check_slot(slot)
        self._open[slot] = 0
        self._state[slot] = CONTENT
        self._node[slot] = self._w.root[CONTENT]

    def finish(self, slot) -> tuple[tuple[int, ...], bool]:
        """Release the slot's held tokens: (ids, whether they are reasoning)."""
        slot = self._check_slot(slot)
        if not self._open[slot]:
            raise ValueError(f"slot {slot} is not open")
        node = int(self._node[slot])
        held = self._w.tables.paths[node]
        state = int(self._state[slot]) & 3
        reasoning = state == REASONING or state == SEEDED
        if held and state == AWAITING:
            state = CONTENT
        self._state[slot] = state
        self._node[slot] = self._w.root[state]
        return held, reasoning

    def is_open(self, slot) -> bool:
        return bool(self._open[self._check_slot(slot)])

    def state_of(self, slot) -> int:
        return int(self._state[self._check_slot(slot)]) & 3

    def held_ids(self, slot) -> tuple[int, ...]:
        return self._w.tables.paths[int(self._node[self._check_slot(slot)])]

    def open_mask(self) -> np.ndarray:
        return self._open.astype(bool)

    def thinking_mask(self) -> np.ndarray:
        """Open requests whose grammar must stay suspended (not in content)."""
        return (self._open != 0) & ((self._state & 3) != CONTENT)

    def _check_slots(self, slots: np.ndarray) -> None:
        # The first bad slot in order names the error, as in the compiled engine.
        if slots.size:
            out = (slots < 0) | (slots >= self.capacity)
            bad = out.copy()
            bad[~out] = self._open[slots[~out]] == 0
            first = np.flatnonzero(bad)
            if first.size:
                j = int(first[0])
                if out[j]:
                    raise ValueError(f"slot {int(slots[j])} is out of range for capacity {self.capacity}")
                raise ValueError(f"slot {int(slots[j])} is not open")

    def _out(self, out, n: int) -> BatchStepResult:
        if out is None:
            return BatchStepResult(n)
        if not isinstance(out, BatchStepResult):
            raise TypeError(f"out must be a BatchStepResult, not {type(out).__name__}")
        if out.capacity < n:
            raise ValueError(f"out holds {out.capacity} entries; this step needs {n}")
        for arr in (out.is_reasoning, out.is_delimiter, out.reasoning_ended, out.is_held, out.in_reasoning,
                    out.released, out.completed):
            if not arr.flags.writeable:
                raise ValueError("out= has a read-only array: a BatchStepResult's arrays must stay writeable")
        # (inputs are read as lists below, before anything is written: an
        # input that views out='s memory is read as it was, as compiled)
        return out

    def step(self, slots, token_ids, out=None) -> BatchStepResult:
        slots = to_int32_array(slots, "slots", False)
        tokens = to_int32_array(token_ids, "token_ids")
        if slots.shape[0] != tokens.shape[0]:
            raise ValueError(f"slots ({slots.shape[0]}) and token_ids ({tokens.shape[0]}) differ in length")
        self._check_slots(slots)
        n = slots.shape[0]
        res = self._out(out, n)
        self._run(slots.tolist(), tokens.tolist(), None, res)
        res.size = n
        return res if res.capacity == n else res.view(n)

    def step_ragged(self, slots, offsets, token_ids, out=None) -> BatchStepResult:
        slots = to_int32_array(slots, "slots", False)
        offsets = to_int32_array(offsets, "offsets", False)
        tokens = to_int32_array(token_ids, "token_ids")
        m = slots.shape[0]
        if offsets.shape[0] != m + 1:
            raise ValueError(f"offsets must have len(slots) + 1 = {m + 1} entries, not {offsets.shape[0]}")
        if int(offsets[0]) != 0 or int(offsets[-1]) != tokens.shape[0]:
            raise ValueError("offsets must start at 0 and end at len(token_ids)")
        if m and bool(np.any(np.diff(offsets) < 0)):
            raise ValueError("offsets must be non-decreasing")
        self._check_slots(slots)
        n = tokens.shape[0]
        res = self._out(out, n)
        self._run(slots.tolist(), tokens.tolist(), offsets.tolist(), res)
        res.size = n
        return res if res.capacity == n else res.view(n)

    def _run(self, slots, tokens, offsets, res: BatchStepResult) -> None:
        t = self._w
        lo, hi, depth = t.lo, t.hi, t.depth
        st, nd = self._state, self._node
        o_r, o_d, o_e, o_h, o_i = res.is_reasoning, res.is_delimiter, res.reasoning_ended, res.is_held, res.in_reasoning
        o_rel, o_comp = res.released, res.completed
        # Zero the rarely-set outputs in bulk; the per-token path below then
        # writes only what can be non-zero.
        n_out = len(slots) if offsets is None else offsets[-1]
        for arr in (o_d, o_e, o_h, o_rel, o_comp):
            arr[:n_out] = 0
        for j, slot in enumerate(slots):
            if offsets is None:
                lo_i, hi_i = j, j + 1
            else:
                lo_i, hi_i = offsets[j], offsets[j + 1]
            sv = int(st[slot])
            for i in range(lo_i, hi_i):
                tok = tokens[i]
                if not (sv & HELD_BIT) and (tok < lo or tok > hi):
                    # Common case: an ordinary token with nothing held; the
                    # state byte alone decides it (no node or table lookups).
                    o_r[i] = o_i[i] = sv == REASONING or sv == SEEDED
                    if sv == AWAITING:
                        sv = CONTENT  # thinking was enabled but skipped: grammar on now
                        o_e[i] = True
                    continue
                before = sv & 3
                state, node, released, fired, consumed, was_reasoning = _advance(t, before, int(nd[slot]), tok)
                nd[slot] = node
                # Any move out of a thinking state (reasoning, seeded, awaiting)
                # into content ends reasoning for the grammar.
                o_e[i] = before != CONTENT and state == CONTENT
                if fired:
                    # The delimiter's earlier tokens were held; they share its class.
                    o_r[i] = False
                    o_d[i] = consumed == 1
                    o_rel[i] = released
                    o_comp[i] = fired - 1
                elif depth[node]:
                    o_r[i] = False
                    o_h[i] = True
                    o_rel[i] = released
                else:
                    # The new token itself was decided, to the side it arrived on.
                    o_r[i] = was_reasoning
                    o_rel[i] = released - 1
                o_i[i] = state == REASONING or state == SEEDED
                sv = state | (HELD_BIT if depth[node] else 0)
            st[slot] = sv


def extends(ids: tuple, prev: tuple) -> bool:
    """Whether ``ids`` starts with every item of ``prev`` (equal items)."""
    if type(ids) is not tuple or type(prev) is not tuple:
        raise TypeError(f"expected two tuples, not {type(ids).__name__} and {type(prev).__name__}")
    return len(ids) >= len(prev) and ids[:len(prev)] == prev


# ---------------------------------------------------------------------------
# The pass-through gate of a text-level streaming wrapper (vllm-mlx's tool
# parsers): per delta, the common case decided without a parser step.
# ---------------------------------------------------------------------------

class TextGate:
    """A stream's state for ``text_gate`` (see the compiled engine's docstring)."""

    __slots__ = ("cur", "idle", "pend", "keep", "reader", "index", "quiet", "budget", "done")

    def __init__(self, cur=None):
        self.cur = cur
        self.idle = 0
        self.pend = []
        self.keep = ""
        self.reader = None
        self.index = 0
        self.quiet = None
        self.budget = 0
        self.done = []


def _none_ends_in(current_text, dlen, closers):
    """No marker of ``closers`` ends in the last ``dlen`` characters of ``current_text``."""
    n = len(current_text)
    for m in closers:
        if current_text.find(m, max(0, n - dlen - len(m) + 1)) >= 0:
            return False
    return True


def _kept(st, delta_text, current_text):
    """A delta kept for the parser (answered ``None``)."""
    st.pend.append(delta_text)
    st.cur = current_text
    return None


def _keep_opener(st, openers, open6, delta_text, current_text):
    """A call's opener from plain content, kept: the state becomes 3, or 6 with
    the ``(keep, quiet)`` pair ``openers`` (a dict) gives it."""
    st.pend.append(delta_text)
    st.cur = current_text
    if open6:
        st.keep, st.quiet = openers[delta_text]
        st.idle = 6
    else:
        st.idle = 3
    return None


def _held_at(text, markers):
    """Where the first of ``markers`` starts in ``text``: -2 for a whole one,
    its start for one cut off by the end of ``text`` (-1: neither); at one
    start, a cut-off marker is seen before a whole one (the parser's scan)."""
    n = len(text)
    for i in range(n):
        rest = text[i:]
        for m in markers:
            if len(m) > n - i and m.startswith(rest):
                return i
        for m in markers:
            if text.startswith(m, i):
                return -2
    return -1


def _json_plain(text):
    """No character of ``text`` ends a plain run of a JSON string (a quote, a
    backslash, a control character, a surrogate)."""
    for c in text:
        if c == '"' or c == "\\" or c < " " or "\ud800" <= c <= "\udfff":
            return False
    return True


def _json_lex(text, t):
    """Where JSON text read whole stands after ``text``, from ``t`` (0 outside
    a string, 1 inside one, 2 after its backslash, 3-6 inside a ``\\u``
    escape)."""
    for c in text:
        if t == 0:
            if c == '"':
                t = 1
        elif t == 1:
            if c == '"':
                t = 0
            elif c == "\\":
                t = 2
        elif t == 2:
            t = 6 if c == "u" else 1
        else:
            t = t - 1 if t > 3 else 1
    return t


def _content_held(st, text, at, current_text):
    """``text`` read against state 1's markers (``at``, from ``_held_at``, not
    -2): the content before ``at`` answered, the rest kept (state 10)."""
    st.cur = current_text
    if at < 0:
        if st.pend:
            st.pend = []
        st.idle = 1
        return {"content": text} if text else None
    st.pend = [text[at:]]
    st.idle = 10
    return {"content": text[:at]} if at else None


def _to_stepper(st, stepper, delta_text, current_text, request):
    """``stepper`` given the delta joined to the deltas kept before it."""
    pend = st.pend
    if pend:
        pend.append(delta_text)
        text = "".join(pend)
        st.pend = []
    else:
        text = delta_text
    st.cur = current_text
    return stepper(text, current_text, request)


def text_gate(st, triggers, keep_triggers, keeps, general, piece=None, piece_triggers="", openers=None,
              after_feed=None, stepper=None, calls=None, holds=None):
    """The per-delta function of a vllm-mlx tool parser: the compiled engine's
    ``text_gate``, in Python (one ``in`` test per character tested)."""
    if not isinstance(st, TextGate):
        raise TypeError(f"text_gate expects a TextGate, not {type(st).__name__}")
    if type(triggers) is not str or type(keep_triggers) is not str or type(piece_triggers) is not str:
        raise TypeError("text_gate: triggers, keep_triggers and piece_triggers must be str")
    closers = type(keeps) is tuple
    if closers and not all(type(m) is str and m for m in keeps):
        raise TypeError("text_gate: keeps must be callable or a tuple of non-empty str")
    if openers is not None and (type(openers) not in (tuple, dict) or not all(type(m) is str and m for m in openers)):
        raise TypeError("text_gate: openers must be a tuple or a dict of non-empty str")
    open6 = type(openers) is dict
    if open6 and not all(type(v) is tuple and len(v) == 2 and type(v[0]) is str and (v[1] is None or type(v[1]) is dict)
                         for v in openers.values()):
        raise TypeError("text_gate: openers (a dict) map a marker to a (keep, quiet) pair")
    if open6:
        openers = dict(openers)  # as checked: a later change to the caller's dict is not seen
    if holds is not None and (type(holds) is not tuple or not holds or not all(type(m) is str and m for m in holds)):
        raise TypeError("text_gate: holds must be a non-empty tuple of non-empty str")
    c_open = c_names = c_args = c_opencall = c_replay = None
    c_limit = 0
    if calls is not None:
        if type(calls) is not tuple or len(calls) != 6:
            raise TypeError("text_gate: calls must be a tuple (opener, name_chars, name_limit, args_marker, "
                            "open_call, replay)")
        c_open, c_names, c_limit, c_args, c_opencall, c_replay = calls
        if type(c_open) is not str or not c_open or type(c_args) is not str or not c_args \
                or type(c_names) is not str:
            raise TypeError("text_gate: calls' opener and args_marker must be non-empty str, name_chars a str")
        if type(c_limit) is not int or c_limit < 0:
            raise TypeError("text_gate: calls' name_limit must be an int >= 0")
        if not (callable(c_opencall) and callable(c_replay)):
            raise TypeError("text_gate: calls' open_call and replay must be callable")

    def clear(delta_text, chars):
        for ch in chars:
            if ch in delta_text:
                return False
        return True

    def gate(previous_text, current_text, delta_text, previous_token_ids=None, current_token_ids=None,
             delta_token_ids=None, request=None):
        if previous_text is st.cur and type(delta_text) is str and type(current_text) is str and \
                type(previous_text) is str and len(current_text) == len(previous_text) + len(delta_text):
            idle = st.idle
            if idle == 1:
                if clear(delta_text, triggers):
                    st.cur = current_text
                    return {"content": delta_text} if delta_text else None
                if openers is not None and delta_text in openers:
                    return _keep_opener(st, openers, open6, delta_text, current_text)
                if c_open is not None and not st.pend and delta_text == c_open:
                    st.budget = c_limit
                    st.idle = 8
                    return _kept(st, delta_text, current_text)
                if holds is not None and not st.pend:
                    at = _held_at(delta_text, holds)
                    if at != -2:
                        return _content_held(st, delta_text, at, current_text)
            elif idle == 10:
                if holds is not None and len(st.pend) == 1:
                    text = st.pend[0] + delta_text
                    at = _held_at(text, holds)
                    if at != -2:
                        return _content_held(st, text, at, current_text)
                    if stepper is not None:
                        return _to_stepper(st, stepper, delta_text, current_text, request)
            elif idle == 9:
                n = len(delta_text)
                if c_open is not None and n:
                    if st.budget == 1 and _json_plain(delta_text):
                        st.pend.append(delta_text)
                        st.cur = current_text
                        return {"tool_calls": [{"index": st.index, "type": "function",
                                                "function": {"arguments": delta_text}}]}
                    end, status = st.reader(delta_text, 0, False)
                    if end == n:
                        if status == 0:
                            st.budget = _json_lex(delta_text, st.budget)
                            st.pend.append(delta_text)
                            st.cur = current_text
                            return {"tool_calls": [{"index": st.index, "type": "function",
                                                    "function": {"arguments": delta_text}}]}
                        if status == 1:
                            st.cur = current_text
                            pend = st.pend
                            pend.append(delta_text)
                            st.done.append(pend)
                            st.pend = []
                            st.idle = 1
                            return {"tool_calls": [{"index": st.index, "type": "function",
                                                    "function": {"arguments": delta_text}}]}
            elif idle == 8:
                if c_open is not None:
                    n = len(delta_text)
                    if n and n <= st.budget and all(ch in c_names for ch in delta_text):
                        st.budget -= n
                        return _kept(st, delta_text, current_text)
                    if st.budget < c_limit and delta_text == c_args:
                        st.pend.append(delta_text)
                        st.cur = current_text
                        st.budget = 0
                        st.idle = 9
                        return c_opencall(st.pend)
                    if stepper is not None:
                        return _to_stepper(st, stepper, delta_text, current_text, request)
            elif idle == 3:
                if clear(delta_text, keep_triggers) or (
                        _none_ends_in(current_text, len(delta_text), keeps) if closers
                        else keeps is not None and keeps(current_text, delta_text)):
                    return _kept(st, delta_text, current_text)
                if stepper is not None:
                    return _to_stepper(st, stepper, delta_text, current_text, request)
            elif idle == 4:
                if piece is not None and clear(delta_text, piece_triggers):
                    st.cur = current_text
                    return piece(delta_text)
            elif idle == 5:
                if after_feed is not None and delta_text:
                    end, status = st.reader.feed(delta_text, 0, False)
                    st.cur = current_text
                    if status == 0 and end == len(delta_text):
                        st.pend.append(delta_text)
                        return {"tool_calls": [{"index": st.index, "type": "function",
                                                "function": {"arguments": delta_text}}]}
                    return after_feed(delta_text, end, status)
            elif idle == 6:
                if clear(delta_text, st.keep):
                    return _kept(st, delta_text, current_text)
                quiet = st.quiet
                if quiet is not None:
                    if type(quiet) is not dict:
                        raise TypeError("text_gate: TextGate.quiet must be a dict or None")
                    nxt = quiet.get(delta_text)
                    if nxt is not None:
                        if type(nxt) is not tuple or len(nxt) != 2 or type(nxt[0]) is not str:
                            raise TypeError("text_gate: TextGate.quiet maps a marker to a (keep, quiet) pair")
                        st.keep, st.quiet = nxt
                        return _kept(st, delta_text, current_text)
                if stepper is not None:
                    return _to_stepper(st, stepper, delta_text, current_text, request)
            elif idle == 7:
                keep = st.keep
                if keep is None:
                    raise TypeError("text_gate: TextGate.keep must be a str")
                if len(delta_text) <= st.budget and all(ch in keep for ch in delta_text):
                    st.budget -= len(delta_text)
                    return _kept(st, delta_text, current_text)
                if stepper is not None:
                    return _to_stepper(st, stepper, delta_text, current_text, request)
            elif idle == 2:
                if clear(delta_text, triggers):
                    st.cur = current_text
                    return None
                if openers is not None and delta_text in openers:
                    return _keep_opener(st, openers, open6, delta_text, current_text)
        if st.idle == 9 and c_replay is not None:
            c_replay()  # the call the gate read so far, read by the parser before this delta
        return general(previous_text, current_text, delta_text, previous_token_ids, current_token_ids,
                       delta_token_ids, request)

    return gate
