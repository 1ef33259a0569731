"""Delimiter tables shared by both engines.

A family's delimiters, once resolved to token-id sequences, are compiled here
into flat transition tables (an Aho-Corasick automaton without output links,
one trie per engine mode).  Both backends walk exactly these tables, so the
compiled engine and its pure-Python twin cannot drift apart in what they
match: only the loop that walks the tables is written twice.

Matching rule (both backends): the automaton tracks the longest suffix of the
undecided tokens that is a prefix of an active delimiter.  Tokens that fall
off the front of that suffix are released to the current side; when the
suffix is a complete delimiter it fires at once (the first complete match
wins, even if a longer delimiter shares the prefix).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._shared import brief

# Engine states.  SEEDED is "reasoning, but the output has not shown a start
# yet" (a prompt or family default put us there); the first start it sees is
# the model re-opening its block and is consumed.  AWAITING is Gemma-4 style
# "thinking enabled, waiting for the start delimiter": tokens are content.
CONTENT, REASONING, SEEDED, AWAITING = 0, 1, 2, 3
# Batch state byte: bits 0-1 hold the state, this bit is set while tokens are held.
HELD_BIT = 4
STATE_NAMES = ("content", "reasoning", "seeded", "awaiting")

# ``starts_in_reasoning="inside"``: generation continues a reasoning block
# the prompt already opened (for every family, Gemma 4's included: no start
# to wait for, and a family label is not stripped from the output's head).
INSIDE = "inside"


def start_state(starts_in_reasoning, awaiting_family: bool) -> int:
    """The engine state a request starts in for ``starts_in_reasoning``
    (False, True or ``"inside"``): True waits for the start delimiter in an
    awaiting-start family (the output opens its block), ``"inside"`` never."""
    if starts_in_reasoning is False:
        return CONTENT
    if starts_in_reasoning is True:
        return AWAITING if awaiting_family else SEEDED
    if starts_in_reasoning == INSIDE and isinstance(starts_in_reasoning, str):
        return SEEDED
    if isinstance(starts_in_reasoning, str):
        raise ValueError(f"starts_in_reasoning must be a bool, None or {INSIDE!r}, not {brief(starts_in_reasoning)}")
    raise TypeError(f"starts_in_reasoning must be a bool, None or {INSIDE!r}, not {type(starts_in_reasoning).__name__}")


# Delimiter kinds.
START, END, TERM, HEADER, FRAME, BOUNDARY, ENABLE = range(7)
KIND_NAMES = ("start", "end", "terminator", "header", "frame", "boundary", "enable")

# Segment kinds reported by Engine.feed.
# SEG_START is a consumed start delimiter; SEG_DELIMITER any other consumed one.
SEG_CONTENT, SEG_REASONING, SEG_DELIMITER, SEG_HELD, SEG_START = 0, 1, 2, 3, 4
SEG_NAMES = ("content", "reasoning", "delimiter", "held", "start")

# Trie roots.  Index = engine state for 0..3; 4 and 5 are the prompt tries.
MODE_PROMPT_REV, MODE_ENABLE = 4, 5
N_ROOTS = 6

# What a pattern does when it completes in a given mode:
# kind -> (new state, consumed as delimiter?)
_ACTIONS = {
    CONTENT: {START: (REASONING, 1), HEADER: (CONTENT, 1), FRAME: (CONTENT, 1)},
    SEEDED: {START: (REASONING, 1), END: (CONTENT, 1), TERM: (CONTENT, 0), HEADER: (CONTENT, 1)},
    REASONING: {END: (CONTENT, 1), TERM: (CONTENT, 0), HEADER: (CONTENT, 1)},
}

MAX_PATTERN_LEN = 64  # <= 255: the batch reports held-token counts in a byte


@dataclass(frozen=True)
class Pattern:
    ids: tuple[int, ...]
    kind: int


def _frozen(values, dtype) -> np.ndarray:
    """A read-only 1-D array backed by an immutable ``bytes`` object.

    Such an array cannot be made writeable again (``flags.writeable = True``
    raises: its base is ``bytes``), so tables shared by every parser of a
    tokenizer cannot be changed under the compiled engine's feet.
    """
    arr = np.ascontiguousarray(np.asarray(values), dtype=dtype).reshape(-1)
    return np.frombuffer(arr.tobytes(), dtype=dtype)


# Field -> dtype of the arrays the compiled engine reads through raw pointers.
_ARRAY_FIELDS = (
    ("sigma", np.int64),
    ("trans", np.int32),
    ("depth", np.int32),
    ("fire_state", np.int8),
    ("fire_consume", np.uint8),
    ("fire_kind", np.int8),
    ("root", np.int32),
)


@dataclass(frozen=True)
class Tables:
    """Flat automaton shared by the engines: immutable once built.

    The arrays are converted to read-only, ``bytes``-backed arrays of the
    dtypes the compiled engine reads, ``paths`` and ``patterns`` to tuples,
    and the whole is checked by ``check_tables`` when the object is made, so
    no ``Tables`` that exists can make an engine index out of bounds.
    """

    sigma: np.ndarray  # int64, strictly increasing: every id that occurs in a pattern
    trans: np.ndarray  # int32 [n_nodes * n_sigma]
    depth: np.ndarray  # int32 [n_nodes]
    fire_state: np.ndarray  # int8 [n_nodes]; -1 = not a complete delimiter
    fire_consume: np.ndarray  # uint8 [n_nodes]
    fire_kind: np.ndarray  # int8 [n_nodes]
    root: np.ndarray  # int32 [N_ROOTS]
    default_state: int
    awaiting_family: bool
    has_enable: bool
    paths: tuple = field(repr=False)  # node -> tuple of ids on the way from its root
    patterns: tuple = ()
    # (byte tables, reasoning_core._bytes.TokenBytes) when some marker is not
    # one whole token in the tokenizer these tables were resolved with: the
    # parser then matches markers over token bytes (see _bytes.ByteEngine).
    byte_plan: Any = field(default=None, repr=False, compare=False)
    # backend name -> the engine every parser of these tables copies (parser.py).
    _engines: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name, dtype in _ARRAY_FIELDS:
            value = getattr(self, name)
            if not isinstance(value, np.ndarray) and not isinstance(value, (list, tuple)):
                raise TypeError(f"Tables.{name} must be an array, not {type(value).__name__}")
            value = np.asarray(value)
            if value.dtype.kind not in "iub":
                raise TypeError(f"Tables.{name} must hold integers, not {value.dtype}")
            if value.size and (value.min() < np.iinfo(dtype).min or value.max() > np.iinfo(dtype).max):
                raise ValueError(f"Tables.{name} has entries outside {np.dtype(dtype).name}")
            object.__setattr__(self, name, _frozen(value, dtype))
        object.__setattr__(self, "paths", tuple(tuple(int(t) for t in p) for p in self.paths))
        object.__setattr__(self, "patterns", tuple(self.patterns))
        check_tables(self)

    @property
    def n_nodes(self) -> int:
        return int(self.depth.shape[0])


def engine_arrays(tables: "Tables") -> tuple[np.ndarray, ...]:
    """The arrays the compiled engine reads through raw pointers, in field order.

    Confirms they are still the read-only arrays ``Tables`` made and checked
    (right dtype, contiguous, not writeable, consistent sizes); anything else
    is refused rather than indexed without bounds checks.
    """
    if not isinstance(tables, Tables):
        raise TypeError(f"expected reasoning_core Tables, not {type(tables).__name__}")
    arrays = tuple(getattr(tables, name) for name, _ in _ARRAY_FIELDS)
    for (name, dtype), arr in zip(_ARRAY_FIELDS, arrays):
        if (type(arr) is not np.ndarray or arr.dtype != dtype or arr.ndim != 1 or arr.flags.writeable
                or not arr.flags.c_contiguous or type(arr.base) is not bytes):
            raise ValueError(f"Tables.{name} is not the checked read-only array: build tables with build_tables")
    sigma, trans, depth, fs, fc, fk, root = arrays
    n = depth.shape[0]
    if (n == 0 or trans.shape[0] != n * sigma.shape[0] or fs.shape[0] != n or fc.shape[0] != n
            or fk.shape[0] != n or root.shape[0] != N_ROOTS):
        raise ValueError("inconsistent tables: build them with reasoning_core._tables.build_tables")
    return arrays


def ids_of_kind(tables: "Tables", *kinds: int) -> tuple[tuple[int, ...], ...]:
    """The resolved id sequences of the patterns of ``kinds``, in that kind order."""
    return tuple(p.ids for k in kinds for p in tables.patterns if p.kind == k)


def check_tables(tables: "Tables") -> None:
    """Raise ValueError unless every table entry the engines index with is in range.

    The compiled engine walks these arrays without bounds checks: every node
    index (``trans``, ``root``), state (``fire_state``), kind (``fire_kind``,
    used as a bit position), depth (a held-token count the batch reports in
    a byte) and the binary-searched alphabet (``sigma``) is bounded here.
    ``Tables`` runs this when it is made, so both backends get only checked
    tables.
    """
    if not isinstance(tables, Tables):
        raise TypeError(f"expected reasoning_core Tables, not {type(tables).__name__}")
    depth = tables.depth
    sigma = tables.sigma
    trans = tables.trans
    root = tables.root
    fs = tables.fire_state
    fk = tables.fire_kind
    n = int(depth.shape[0])
    ns = int(sigma.shape[0])
    ok = (
        0 < n
        and n * max(ns, 1) < 2**31  # node * ns + k is computed in C int
        and trans.shape == (n * ns,)
        and root.shape == (N_ROOTS,)
        and tables.fire_consume.shape == (n,)
        and fk.shape == (n,)
        and fs.shape == (n,)
        and len(tables.paths) == n
        and (ns < 2 or bool(np.all(sigma[1:] > sigma[:-1])))  # binary search needs it
        and (ns == 0 or int(sigma[0]) >= 0)
        and (trans.size == 0 or (int(trans.min()) >= 0 and int(trans.max()) < n))
        and int(root.min()) >= 0 and int(root.max()) < n
        and int(fs.min()) >= -1 and int(fs.max()) <= AWAITING
        and int(fk.min()) >= -1 and int(fk.max()) <= ENABLE
        and bool(np.all((fs >= 0) <= (fk >= 0)))  # a firing node has a kind
        and int(tables.fire_consume.max()) <= 1
        and int(depth.min()) >= 0 and int(depth.max()) <= MAX_PATTERN_LEN
        and all(len(p) == d for p, d in zip(tables.paths, depth.tolist()))
        and all(int(depth[r]) == 0 for r in root.tolist())
        and tables.default_state in (CONTENT, SEEDED, AWAITING)
    )
    if ok and ns:
        # A transition deepens the held suffix by at most one token, so the
        # tokens a step releases (depth[node] + 1 - depth[next]) are >= 0.
        d = depth.astype(np.int64)
        nxt = trans.reshape(n, ns)
        ok = bool(np.all(d[nxt] <= d[:, None] + 1))
    if not ok:
        raise ValueError("inconsistent tables: build them with reasoning_core._tables.build_tables")


class _Trie:
    """One trie per engine mode, all in one node space (node 0..n-1)."""

    def __init__(self) -> None:
        self.children: list[dict[int, int]] = []
        self.depth: list[int] = []
        self.paths: list[tuple[int, ...]] = []
        self.fire: list[tuple[int, int, int]] = []  # (state, consume, kind) or (-1, 0, -1)

    def _node(self, path: tuple[int, ...]) -> int:
        self.children.append({})
        self.depth.append(len(path))
        self.paths.append(path)
        self.fire.append((-1, 0, -1))
        return len(self.depth) - 1

    def add_mode(self, entries: list[tuple[tuple[int, ...], int, int, int]]) -> int:
        """A new root holding ``(ids, new_state, consume, kind)`` entries; returns the root."""
        root = self._node(())
        for ids, new_state, consume, kind in entries:
            node = root
            for t in ids:
                nxt = self.children[node].get(t)
                if nxt is None:
                    nxt = self._node(self.paths[node] + (t,))
                    self.children[node][t] = nxt
                node = nxt
            if self.fire[node][0] < 0:  # the first pattern listed for an id sequence wins
                self.fire[node] = (new_state, consume, kind)
        return root


def _build_tries(patterns: tuple[Pattern, ...]) -> tuple[_Trie, list[int]]:
    """The tries of every mode and the root of each (indexed by state / prompt mode)."""
    trie = _Trie()
    roots = [0] * N_ROOTS
    mode_roots: dict[int, int] = {}
    for mode in (CONTENT, REASONING, SEEDED):
        actions = _ACTIONS[mode]
        mode_roots[mode] = trie.add_mode([
            (p.ids, *actions[p.kind], p.kind)
            for kind in (START, END, TERM, HEADER, FRAME)
            for p in patterns
            if p.kind == kind and kind in actions
        ])
    roots[CONTENT] = roots[AWAITING] = mode_roots[CONTENT]
    roots[REASONING] = mode_roots[REASONING]
    roots[SEEDED] = mode_roots[SEEDED]
    # The prompt is scanned right to left, so its trie holds reversed patterns.
    roots[MODE_PROMPT_REV] = trie.add_mode([
        (tuple(reversed(p.ids)), CONTENT, 1, kind)
        for kind in (START, END, TERM, HEADER, BOUNDARY)
        for p in patterns
        if p.kind == kind
    ])
    roots[MODE_ENABLE] = trie.add_mode([(p.ids, CONTENT, 1, ENABLE) for p in patterns if p.kind == ENABLE])
    return trie, roots


def _fold_failure_links(trie: _Trie, roots: list[int], sigma: list[int]) -> np.ndarray:
    """Dense transitions ``[node * len(sigma) + k]`` with Aho-Corasick failure links folded in.

    Breadth first per root, so a node's failure target is complete before the
    node itself; an id with no edge anywhere falls back to the mode's root.
    """
    ns = len(sigma)
    n = len(trie.depth)
    children = trie.children
    trans = np.zeros(n * ns, dtype=np.int32)
    fail = [0] * n
    for r in sorted(set(roots)):
        queue: deque[int] = deque()
        for k, t in enumerate(sigma):
            c = children[r].get(t)
            if c is None:
                trans[r * ns + k] = r
            else:
                fail[c] = r
                trans[r * ns + k] = c
                queue.append(c)
        while queue:
            u = queue.popleft()
            for k, t in enumerate(sigma):
                c = children[u].get(t)
                if c is None:
                    trans[u * ns + k] = trans[fail[u] * ns + k]
                else:
                    fail[c] = int(trans[fail[u] * ns + k])
                    trans[u * ns + k] = c
                    queue.append(c)
    return trans


def build_tables(
    patterns: list[Pattern] | tuple[Pattern, ...],
    *,
    default_state: int = CONTENT,
    awaiting_family: bool = False,
    byte_plan: Any = None,
) -> Tables:
    """Compile resolved delimiters into the immutable tables both engines walk."""
    patterns = tuple(dict.fromkeys(patterns))  # de-duplicate, keep order
    for p in patterns:
        if not p.ids:
            raise ValueError("a delimiter resolved to an empty token sequence")
        if len(p.ids) > MAX_PATTERN_LEN:
            raise ValueError(f"a delimiter of {len(p.ids)} tokens is longer than {MAX_PATTERN_LEN}")
        if any(i < 0 for i in p.ids):
            raise ValueError("delimiter token ids must be non-negative")
    if default_state not in (CONTENT, SEEDED, AWAITING):
        raise ValueError(f"invalid default state {default_state}")

    sigma = sorted({i for p in patterns for i in p.ids})
    trie, roots = _build_tries(patterns)
    return Tables(
        sigma=np.asarray(sigma, dtype=np.int64),
        trans=_fold_failure_links(trie, roots, sigma),
        depth=np.asarray(trie.depth, dtype=np.int32),
        fire_state=np.asarray([f[0] for f in trie.fire], dtype=np.int8),
        fire_consume=np.asarray([f[1] for f in trie.fire], dtype=np.uint8),
        fire_kind=np.asarray([f[2] for f in trie.fire], dtype=np.int8),
        root=np.asarray(roots, dtype=np.int32),
        default_state=default_state,
        awaiting_family=awaiting_family,
        has_enable=any(p.kind == ENABLE for p in patterns),
        paths=tuple(trie.paths),
        patterns=patterns,
        byte_plan=byte_plan,
    )
