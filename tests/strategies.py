"""Hypothesis strategies shared by the differential and thread tests.

Random delimiter tables (every pattern kind, prefix-sharing multi-token
delimiters, every default state, awaiting-start families), token streams that
put whole and broken-off delimiters at random places among ordinary,
negative and oversized ids, every integer container the engines accept, and
random chunkings.  Everything here is built from the engine's own public
table builder; nothing knows how a backend walks the tables.

The runners at the end (``run_engine_program``, ``run_batch_program``) play
one program of calls on both backends and compare every result, exception
type and state; ``test_differential.py`` and the fuzz harness share them.
"""
from __future__ import annotations

import array

import numpy as np
from hypothesis import strategies as st

import reasoning_core
from reasoning_core._dispatch import backend_module

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
    build_tables,
)

ALL_KINDS = (START, END, TERM, HEADER, FRAME, BOUNDARY, ENABLE)
DEFAULT_STATES = (CONTENT, SEEDED, AWAITING)
ENGINE_STATES = (CONTENT, REASONING, SEEDED, AWAITING)

# A small alphabet makes delimiters share prefixes and collide with each other.
SMALL_IDS = tuple(range(1, 6))
# Delimiter ids near the edges of the integer types the engines use.
EDGE_DELIMITER_IDS = (2**31 - 1, 2**31, 2**32 + 1, 2**63 - 1)
# Ids that can never be delimiters: negative, or outside int32/int64.  Several
# are a small id plus a power of two, so a truncating conversion would turn
# them into a delimiter id.
OUTSIDE_IDS = (
    -1, -2, -(2**31), 2**32 + 1, 2**32 + 2, 2**64 + 1, 2**64 + 3, -(2**64) + 2,
    2**63, -(2**63) - 1, 2**100, -(2**100),
)

NUMPY_INT_DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")
ARRAY_TYPECODES = tuple("bBhHiIlLqQ")


@st.composite
def pattern_lists(draw, *, alphabet=SMALL_IDS, max_len=4, edge_ids=True):
    """Random delimiters: always a start and an end, the other kinds at random."""
    ids = st.sampled_from(alphabet + EDGE_DELIMITER_IDS) if edge_ids else st.sampled_from(alphabet)
    # Edge ids are rare: most draws stay in the small alphabet.
    one = st.one_of(st.sampled_from(alphabet), st.sampled_from(alphabet), st.sampled_from(alphabet), ids)
    seq = st.lists(one, min_size=1, max_size=max_len).map(tuple)
    pats = [Pattern(draw(seq), START), Pattern(draw(seq), END)]
    for kind in ALL_KINDS[2:]:
        if draw(st.booleans()):
            pats.append(Pattern(draw(seq), kind))
    for _ in range(draw(st.integers(0, 2))):
        pats.append(Pattern(draw(seq), draw(st.sampled_from(ALL_KINDS))))
    return draw(st.permutations(pats))


@st.composite
def table_specs(draw, **kw):
    """(patterns, default_state, awaiting_family): arguments of ``build_tables``."""
    patterns = draw(pattern_lists(**kw))
    return patterns, draw(st.sampled_from(DEFAULT_STATES)), draw(st.booleans())


def make_tables(spec):
    patterns, default_state, awaiting = spec
    return build_tables(patterns, default_state=default_state, awaiting_family=awaiting)


@st.composite
def token_streams(draw, patterns, *, max_size=48, outside=True, alphabet=(0,) + SMALL_IDS + (6, 7)):
    """Ids with delimiters and delimiter prefixes at random places."""
    # 0 and negative ids are below every delimiter id: plain text
    pieces = [st.lists(st.sampled_from(alphabet), max_size=4), st.lists(st.sampled_from((0, -1, -5)), max_size=4)]
    if outside:
        pieces.append(st.lists(st.sampled_from(OUTSIDE_IDS), min_size=1, max_size=2))
    out: list[int] = []
    for _ in range(draw(st.integers(0, 10))):
        choice = draw(st.integers(0, 4))
        if choice <= 1 and patterns:
            ids = draw(st.sampled_from(patterns)).ids
            # whole delimiter, or one broken off after a random prefix
            out.extend(ids if choice == 0 else ids[: draw(st.integers(1, len(ids)))])
        else:
            out.extend(draw(st.one_of(pieces)))
    return out[:max_size]


@st.composite
def chunkings(draw, seq, max_cuts=8):
    """``seq`` cut at random points (empty chunks allowed)."""
    n = len(seq)
    cuts = sorted(draw(st.lists(st.integers(0, n), max_size=max_cuts)))
    out, prev = [], 0
    for c in cuts + [n]:
        out.append(list(seq[prev:c]))
        prev = c
    return out


# ------------------------------------------------------------------ containers
def _fits(values, lo, hi):
    return all(lo <= v <= hi for v in values)


def _bounds(dtype):
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


CONTAINER_KINDS = ("list", "tuple", "ndarray", "strided", "readonly", "array", "memoryview", "range")


def as_container(kind: str, values: list[int], dtype: str = "int64", typecode: str = "q"):
    """``values`` in a container of ``kind``, or None when they do not fit it.

    Returns ``(container, logical_ids)``: what the engines are given, and the
    ids it holds as Python ints.
    """
    if kind == "list":
        return list(values), list(values)
    if kind == "tuple":
        return tuple(values), list(values)
    if kind == "range":
        if len(values) >= 1 and values == list(range(values[0], values[0] + len(values))):
            return range(values[0], values[0] + len(values)), list(values)
        return None
    if kind in ("ndarray", "strided", "readonly", "memoryview"):
        lo, hi = _bounds(dtype)
        if not _fits(values, lo, hi):
            return None
        if kind == "strided":
            # every other element of a twice-as-long array: not contiguous
            base = np.zeros(2 * len(values), dtype=dtype)
            base[::2] = values
            arr = base[::2]
        else:
            arr = np.array(values, dtype=dtype)
        if kind == "readonly":
            arr.flags.writeable = False
        if kind == "memoryview":
            return memoryview(arr), list(values)
        return arr, list(values)
    if kind == "array":
        probe = array.array(typecode)
        bits = probe.itemsize * 8
        lo, hi = (0, 2**bits - 1) if typecode.isupper() else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        if not _fits(values, lo, hi):
            return None
        return array.array(typecode, values), list(values)
    raise ValueError(kind)


@st.composite
def containers(draw, values):
    """``values`` in a random accepted container; a list when they do not fit the one drawn."""
    kind = draw(st.sampled_from(CONTAINER_KINDS))
    dtype = draw(st.sampled_from(NUMPY_INT_DTYPES))
    typecode = draw(st.sampled_from(ARRAY_TYPECODES))
    got = as_container(kind, list(values), dtype, typecode)
    if got is None:
        return list(values), list(values)
    return got


# ------------------------------------------------------------------ bad input
def bad_inputs():
    """Inputs that are not a sequence of integer ids (or are odd ones)."""
    return [
        [1.0],
        [1, 2.5],
        None,
        "12",
        b"\x01\x02",
        bytearray(b"\x01"),
        [None],
        [1, None],
        ["1"],
        [[1, 2]],
        [(1,)],
        np.zeros((2, 2), dtype=np.int64),
        np.zeros((1, 3), dtype=np.int32),
        np.zeros(3),
        np.zeros(2, dtype=np.float32),
        np.array([1.0, 2.0]),
        np.array(["1"]),
        np.array([1, 2], dtype=object),
        np.array([True, False]),
        [True, False, 2],
        np.ma.masked_array([1, 2, 3], mask=[False, True, False]),
        np.ma.masked_array([1, 2], mask=[False, False]),
        np.int64(3),
        3,
        {1: 2},
        {1, 2},
        array.array("d", [1.0]),
        array.array("u", "ab"),
        memoryview(b"\x01\x02"),
        memoryview(np.zeros(2)),
        memoryview(np.zeros((2, 2), dtype=np.int64)),
        [2**64 + 1, -(2**70), 2**63, -(2**63) - 1],
        [np.int64(1), np.uint8(2), np.int32(-3)],
        [np.float64(1.0)],
        np.array([2**64 - 1, 2**63], dtype=np.uint64),
        np.array([], dtype=np.float64),
        [],
    ]


# ------------------------------------------------------------------ differential runners
# Used by test_differential.py and the fuzz harness: run the same calls on
# both backends and compare every result, exception type and state.
BACKENDS = ("cython", "python")


def plain(value):
    """A result as plain, comparable Python data (arrays with their dtype)."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tolist())
    if isinstance(value, (list, tuple)):
        return tuple(plain(v) for v in value)
    if isinstance(value, reasoning_core.TokenSplit):
        return ("TokenSplit", plain(value.tokens), tuple(value.segments), value.is_reasoning,
                value.awaiting_start, len(value))
    if isinstance(value, reasoning_core.ParsedReasoningDelta):
        span = value.span
        return ("delta", span.reasoning_with_delimiters, span.reasoning, value.is_still_reasoning)
    if hasattr(value, "reasoning_ended") and hasattr(value, "completed"):  # a BatchStepResult
        return batch_result(value)
    if isinstance(value, (np.integer, np.bool_)):
        return ("npscalar", value.dtype.str, value.item())
    return value


def outcome(fn, *args):
    """``("ok", result)`` or ``("raises", exception type)``."""
    try:
        return "ok", plain(fn(*args))
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return "raises", type(e)


def batch_result(res):
    fields = ("is_reasoning", "is_delimiter", "reasoning_ended", "is_held", "in_reasoning", "released", "completed")
    return (res.size, res.capacity) + tuple(plain(getattr(res, f)) for f in fields)


def engine_snapshot(eng):
    return eng.state, eng.held, tuple(eng.held_ids)


def text_of(ids):
    """``ids`` as code points (feed_text), where they are code points."""
    return "".join(chr(i) if 0 <= i <= 0x10FFFF else "\x00" for i in ids)


def make_engines(tables):
    engines = []
    for backend in BACKENDS:
        eng = backend_module(backend).Engine(tables)
        opened: list[int] = []
        eng.configure_stream(lambda *key: ("made",) + key, lambda opened=opened: opened.append(1))
        engines.append((eng, opened))
    return engines


def run_engine_program(spec, program):
    tables = make_tables(spec)
    (c, c_opened), (p, p_opened) = make_engines(tables)
    assert engine_snapshot(c) == engine_snapshot(p)
    for step, (op, args) in enumerate(program):
        # "bad:feed" is feed() on input that may be rejected; valid ids never raise.
        bad, op = op.startswith("bad:"), op.removeprefix("bad:")
        got_c = outcome(getattr(c, op), *args)
        got_p = outcome(getattr(p, op), *args)
        where = f"step {step}: {op}{args!r}"
        assert got_c == got_p, where
        if not bad and op != "set_state":
            assert got_c[0] == "ok", f"valid input raised {got_c[1]!r} at {where}"
        assert engine_snapshot(c) == engine_snapshot(p), where
        assert len(c_opened) == len(p_opened), where
    assert outcome(c.finish) == outcome(p.finish)
    assert engine_snapshot(c) == engine_snapshot(p)


def batch_snapshot(eng, capacity):
    rows = []
    for s in range(capacity):
        rows.append((eng.is_open(s), eng.state_of(s), tuple(eng.held_ids(s))))
    return tuple(rows), plain(eng.thinking_mask()), plain(eng.open_mask())


def _out_buffer(mod, kind, n):
    if kind is None:
        return None
    size = {"same": n, "bigger": n + 3, "smaller": max(n - 1, 0)}[kind]
    return mod.BatchStepResult(size)


def run_batch_program(spec, capacity, program):
    tables = make_tables(spec)
    mods = [backend_module(b) for b in BACKENDS]
    engines = [m.BatchEngine(tables, capacity) for m in mods]
    for step, (op, args) in enumerate(program):
        got = []
        for mod, eng in zip(mods, engines):
            if op in ("step", "ragged"):
                call_args, out_kind = args
                n = len(call_args[-1]) if op == "ragged" else len(call_args[0])
                out = _out_buffer(mod, out_kind, n)
                fn = eng.step if op == "step" else eng.step_ragged
                try:
                    got.append(("ok", batch_result(fn(*call_args, out=out))))
                except Exception as e:  # noqa: BLE001
                    got.append(("raises", type(e)))
            else:
                got.append(outcome(getattr(eng, op), *args))
        where = f"step {step}: {op}{args!r}"
        assert got[0] == got[1], where
        if op in ("step", "ragged") and _valid_step(engines[0], capacity, op, *args):
            assert got[0][0] == "ok", f"a valid step raised {got[0][1]!r} at {where}"
        assert batch_snapshot(engines[0], capacity) == batch_snapshot(engines[1], capacity), where


def _valid_step(eng, capacity, op, call_args, out_kind):
    """Distinct open slots, matching lengths, a big enough ``out``: the step must work."""
    slots = [int(s) for s in call_args[0]]
    if len(set(slots)) != len(slots) or not all(0 <= s < capacity and eng.is_open(s) for s in slots):
        return False
    n = len(call_args[-1])
    if op == "step" and n != len(slots):
        return False
    return out_kind != "smaller" or n == 0


