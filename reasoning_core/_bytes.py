"""Markers matched over the bytes of tokens, whatever the BPE did to them.

A marker that is one added (special) token in a vocabulary is found by its
id: that is the engines' fast path.  A marker that is ordinary text there
(Granite's ``Here is my response:``, harmony's ``<|end|>`` in a vocabulary
without it) may be split into tokens in many ways, and glued to the text
around it: ``.<`` and ``><`` are single tokens in most byte-level BPEs.  No
id sequence can match such a marker reliably.

For those families the parser runs the same engine over the *bytes* of the
tokens instead (``TokenBytes`` maps every id to its bytes once per
tokenizer; the tables are the family's markers in UTF-8), so a marker is
found wherever its bytes are, exactly where the text parser finds it in the
decoded text.  ``ByteEngine`` then projects the byte-level decision back to
tokens:

- a token whose bytes are all on one side is that side;
- a token whose bytes fall on more than one side (``hmm.H`` before
  ``ere is my response:``) is a *boundary token*: it belongs to the delimiter
  whose bytes it carries (a ``start`` or ``delimiter`` segment; a terminator's
  token is content, as the terminator is), and ``TokenSplit.boundaries``
  gives the byte ranges of each side within it, so text-emitting code can put
  the outside text on its correct side;
- a token is held until all its bytes are decided.

Both backends are driven through the same code here: only the byte scan
runs in the backend engine, so the compiled and pure engines stay identical.
"""
from __future__ import annotations

import json
import threading
import weakref
from bisect import bisect_left, bisect_right
from collections.abc import Mapping
from typing import Any

import numpy as np

from reasoning_core_py._engine import stream_result

from ._input import to_int_list
from ._tables import (
    AWAITING, CONTENT, REASONING, SEEDED, SEG_CONTENT, SEG_DELIMITER, SEG_HELD, SEG_REASONING, SEG_START,
    Tables,
)

__all__ = ["TokenBytes", "token_bytes", "ByteEngine", "UNKNOWN_BYTE"]

# Stands for a token with no bytes (an id outside the vocabulary, an empty
# piece): 0xFF never occurs in UTF-8, so it can never be part of a marker,
# and it breaks a marker exactly as an unknown token in the text would.
UNKNOWN_BYTE = b"\xff"


def _gpt2_byte_decoder() -> dict[str, int]:
    """Byte-level BPE's printable alias of each byte, inverted."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars = keep[:]
    extra = 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(keep, chars)}


_BYTE_OF = _gpt2_byte_decoder()


def _byte_level(piece: str) -> bytes | None:
    try:
        return bytes(_BYTE_OF[c] for c in piece)
    except KeyError:
        return None


def _metaspace(piece: str) -> bytes:
    if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
        try:
            return bytes((int(piece[3:5], 16),))
        except ValueError:
            pass
    return piece.replace("\u2581", " ").encode("utf-8")


def _as_ids(data: bytes):
    """Bytes as the engines' input: a list for short runs (their fastest path),
    a zero-copy array view for long ones."""
    return list(data) if len(data) < 256 else np.frombuffer(data, dtype=np.uint8)


class TokenBytes:
    """Every token id's bytes, as one table built once per tokenizer."""

    __slots__ = ("table", "size", "__weakref__")

    def __init__(self, table: list[bytes]) -> None:
        self.table = [t if t else UNKNOWN_BYTE for t in table]
        self.size = len(self.table)

    def of(self, tid: int) -> bytes:
        return self.table[tid] if 0 <= tid < self.size else UNKNOWN_BYTE

    def expand(self, ids: list[int]) -> tuple[bytes, list[int]]:
        """The bytes of ``ids`` and each token's byte length."""
        table, size = self.table, self.size
        try:
            if ids and (min(ids) < 0 or max(ids) >= size):
                raise IndexError
            pieces = [table[i] for i in ids]
        except IndexError:
            pieces = [table[i] if 0 <= i < size else UNKNOWN_BYTE for i in ids]
        return b"".join(pieces), [len(p) for p in pieces]

    def text(self, ids: list[int]) -> bytes:
        return self.expand(ids)[0]


def _fast(tok: Any):
    try:
        from tokenizers import Tokenizer
    except ImportError:  # pragma: no cover - tokenizers is a dependency
        return None
    for cand in (tok, getattr(tok, "backend_tokenizer", None), getattr(tok, "_tokenizer", None)):
        if isinstance(cand, Tokenizer):
            return cand
    return None


def _decoder_kind(fast: Any) -> str:
    """"byte_level", "metaspace" or "other", from the tokenizer's decoder."""
    dec = fast.decoder
    if dec is None:
        return "other"
    try:
        spec = json.loads(dec.__getstate__())
    except Exception:  # pragma: no cover - not a serialisable decoder
        return "other"
    kinds = {d.get("type") for d in spec.get("decoders", [spec])} if isinstance(spec, dict) else set()
    if "ByteLevel" in kinds:
        return "byte_level"
    if kinds & {"Metaspace", "ByteFallback", "Replace"}:
        return "metaspace"
    return "other"


def _table_from_vocab(vocab: Mapping, added: Mapping[int, str], kind: str) -> list[bytes]:
    size = max([v for v in vocab.values() if isinstance(v, int) and v >= 0] + [-1]) + 1
    table = [b""] * size
    for piece, tid in vocab.items():
        if not isinstance(tid, int) or tid < 0 or not isinstance(piece, str):
            continue
        if tid in added:
            table[tid] = added[tid].encode("utf-8")
        elif kind == "byte_level":
            table[tid] = _byte_level(piece) or piece.encode("utf-8")
        elif kind == "metaspace":
            table[tid] = _metaspace(piece)
        else:
            table[tid] = piece.encode("utf-8")
    return table


def _looks_byte_level(vocab: Mapping) -> bool:
    sample = [p for p in list(vocab)[:2000] if isinstance(p, str)]
    return any("\u0120" in p or "\u010a" in p for p in sample) and all(_byte_level(p) is not None for p in sample
                                                                       if not p.startswith("<"))


def _build(tok: Any) -> TokenBytes | None:
    fast = _fast(tok)
    if fast is not None:
        added = {i: t.content for i, t in fast.get_added_tokens_decoder().items()}
        return TokenBytes(_table_from_vocab(fast.get_vocab(with_added_tokens=True), added, _decoder_kind(fast)))
    if isinstance(tok, Mapping):
        kind = "byte_level" if _looks_byte_level(tok) else "metaspace"
        return TokenBytes(_table_from_vocab(tok, {}, kind))
    get_vocab = getattr(tok, "get_vocab", None)
    convert = getattr(tok, "convert_tokens_to_string", None)
    if callable(get_vocab) and callable(convert):  # a slow transformers tokenizer
        vocab = get_vocab()
        added = {}
        for tid, t in (getattr(tok, "added_tokens_decoder", None) or {}).items():
            added[int(tid)] = getattr(t, "content", str(t))
        table = _table_from_vocab(vocab, added, "other")
        for piece, tid in vocab.items():
            if tid not in added and 0 <= tid < len(table):
                try:
                    table[tid] = convert([piece]).encode("utf-8")
                except Exception:
                    pass
        return TokenBytes(table)
    return None


_lock = threading.Lock()
_weak: "weakref.WeakKeyDictionary[Any, TokenBytes | None]" = weakref.WeakKeyDictionary()


def token_bytes(tok: Any) -> TokenBytes | None:
    """The id -> bytes table of ``tok`` (cached per tokenizer), or None if it cannot tell."""
    try:
        with _lock:
            if tok in _weak:
                return _weak[tok]
    except TypeError:  # not weak-referenceable or unhashable
        return _build(tok)
    table = _build(tok)
    try:
        with _lock:
            _weak.setdefault(tok, table)
    except TypeError:  # pragma: no cover
        pass
    return table


def atomic_ids(tok: Any) -> frozenset[int] | None:
    """Ids the tokenizer always keeps whole (added tokens), or None if it cannot tell."""
    if isinstance(tok, Mapping):
        return None
    fast = _fast(tok)
    if fast is not None:
        return frozenset(fast.get_added_tokens_decoder())
    added = getattr(tok, "added_tokens_decoder", None)
    if isinstance(added, Mapping):
        return frozenset(int(i) for i in added)
    return None


class ByteEngine:
    """The token-level engine interface, with markers matched over token bytes.

    Wraps a backend ``Engine`` built on byte tables.  Tokens whose bytes are
    not all decided yet are *pending* (reported as held); ``_runs`` are the
    decided byte runs of the pending tokens, oldest first.
    """

    __slots__ = ("_eng", "_vocab", "_tables", "_pend", "_lens", "_runs", "_done", "boundaries",
                 "_make", "_on_open", "_opened", "_deltas", "_awaiting_family", "_busy")

    def __init__(self, byte_tables: Tables, vocab: TokenBytes, engine_cls: Any) -> None:
        self._eng = engine_cls(byte_tables)
        self._tables = byte_tables
        self._vocab = vocab
        self._pend: list[int] = []
        self._lens: list[int] = []
        self._runs: list[list[int]] = []
        self._done = 0  # decided bytes of the pending tokens
        self.boundaries: tuple = ()
        self._make = None
        self._on_open = None
        self._opened = False
        self._deltas: dict = {}
        self._awaiting_family = byte_tables.awaiting_family
        self._busy = False

    def _ids(self, token_ids) -> list[int]:
        # Converting the input is where Python callbacks (__index__) run: a
        # call re-entering this parser from one is refused, as by the engines.
        if self._busy:
            raise RuntimeError(
                "this parser is already running a call (re-entered from a callback, or used "
                "from another thread): parsers are per-request objects"
            )
        self._busy = True
        try:
            return to_int_list(token_ids)
        finally:
            self._busy = False

    # -- state ------------------------------------------------------------
    @property
    def tables(self) -> Tables:
        return self._tables

    @property
    def vocab(self) -> TokenBytes:
        return self._vocab

    @property
    def scratch_bytes(self) -> int:
        return self._eng.scratch_bytes

    @property
    def state(self) -> int:
        return self._eng.state

    @property
    def held(self) -> int:
        return len(self._pend)

    @property
    def held_ids(self) -> tuple[int, ...]:
        return tuple(self._pend)

    def set_state(self, state: int) -> None:
        self._eng.set_state(state)
        self._pend, self._lens, self._runs, self._done = [], [], [], 0
        self._opened = False

    def configure_stream(self, make, on_open=None) -> None:
        self._make, self._on_open, self._deltas = make, on_open, {}

    # -- the split --------------------------------------------------------
    def _take(self, segs) -> None:
        runs = self._runs
        for kind, a, b in segs:
            if kind == SEG_HELD:
                break
            if runs and runs[-1][0] == kind:
                runs[-1][1] += b - a
            else:
                runs.append([kind, b - a])
            self._done += b - a

    def _settle(self, n_prefix: int) -> list[tuple[int, int, int]]:
        """Token segments for every pending token whose bytes are all decided."""
        pend, lens, runs = self._pend, self._lens, self._runs
        segs: list[list[int]] = []
        bounds = []
        i = 0
        done = self._done
        ri = 0
        used = 0  # bytes of runs[ri] already given to earlier tokens
        while i < len(pend) and lens[i] <= done:
            need = lens[i]
            done -= need
            kinds = []
            pieces = []
            off = 0
            while need:
                kind, avail = runs[ri]
                take = min(need, avail - used)
                kinds.append(kind)
                pieces.append((kind, off, off + take))
                off += take
                need -= take
                used += take
                if used == avail:
                    ri += 1
                    used = 0
            if len(kinds) == 1:
                kind = kinds[0]
            else:
                kind = (SEG_START if SEG_START in kinds else SEG_DELIMITER if SEG_DELIMITER in kinds
                        else SEG_CONTENT)
                bounds.append((i, tuple(pieces)))
            if segs and segs[-1][0] == kind:
                segs[-1][2] += 1
            else:
                segs.append([kind, i, i + 1])
            i += 1
        # Drop what was settled.
        if i:
            del pend[:i]
            del lens[:i]
            rest = runs[ri:]
            if rest and used:
                rest[0] = [rest[0][0], rest[0][1] - used]
            self._runs = rest
            self._done = done
        if pend:
            segs.append([SEG_HELD, i, i + len(pend)])
        self.boundaries = tuple(bounds)
        return [tuple(s) for s in segs]

    def _feed_list(self, ids: list[int]) -> tuple[list, int]:
        n_prefix = len(self._pend)
        vocab = self._vocab
        if len(ids) == 1:
            t = ids[0]
            data = vocab.table[t] if 0 <= t < vocab.size else UNKNOWN_BYTE
            lens = [len(data)]
        else:
            data, lens = vocab.expand(ids)
        segs, _ = self._eng.feed(_as_ids(data))
        if not n_prefix and len(segs) == 1 and segs[0][0] != SEG_HELD:
            # Nothing pending, every byte decided as one kind: the whole delta is that kind.
            self.boundaries = ()
            return [(segs[0][0], 0, len(ids))], 0
        self._pend.extend(ids)
        self._lens.extend(lens)
        self._take(segs)
        return self._settle(n_prefix), n_prefix

    def feed(self, token_ids) -> tuple[list, int]:
        return self._feed_list(self._ids(token_ids))

    def feed_copy(self, token_ids):
        ids = self._ids(token_ids)
        snapshot = ids[:] if ids is token_ids else ids
        segs, n_prefix = self._feed_list(ids)
        return segs, n_prefix, snapshot

    feed_side = feed

    def finish(self) -> tuple[list, int]:
        n = len(self._pend)
        segs, _ = self._eng.finish()
        self._take(segs)
        out = self._settle(n)
        return out, n

    # -- MAX stream() and the prompt -------------------------------------------
    def scan_stream(self, token_ids, is_currently_reasoning: bool) -> tuple[int, int, int, int, bool]:
        reasoning = bool(is_currently_reasoning)
        ids = self._ids(token_ids)
        data, lens = self._vocab.expand(ids)
        d0, r0, r1, d1, still = self._eng.scan_stream(_as_ids(data), reasoning)
        if not ids:
            return 0, 0, 0, 0, still
        ends = np.cumsum(lens).tolist()
        starts = [e - n for e, n in zip(ends, lens)]
        # Tokens carrying delimiter bytes belong to the delimiter region.
        t_d0 = bisect_right(ends, d0)  # first token not wholly before d0
        t_r0 = max(bisect_left(starts, r0), t_d0)
        t_r1 = max(bisect_right(ends, r1), t_r0)
        # No consumed end (an implicit end, a terminator, or none): a token that
        # carries the terminator stays content, as in split().
        t_d1 = t_r1 if d1 == r1 else max(bisect_left(starts, d1), t_r1)
        return t_d0, t_r0, t_r1, t_d1, still

    def stream(self, token_ids, is_currently_reasoning=True):
        reasoning = bool(is_currently_reasoning)
        if reasoning and not self._opened and self._awaiting_family:
            reasoning = False
        return stream_result(self, self.scan_stream(token_ids, reasoning))

    def prompt_state(self, prompt_token_ids) -> int:
        ids = self._ids(prompt_token_ids)
        data, _ = self._vocab.expand(ids)
        return self._eng.prompt_state(_as_ids(data))

    def will_reason(self, prompt_token_ids) -> bool:
        return self.prompt_state(prompt_token_ids) != CONTENT


def is_reasoning_state(state: int) -> bool:
    return state == REASONING or state == SEEDED


_ = (AWAITING, CONTENT, SEG_REASONING)  # re-exported names used by callers


def byte_batch_engine(parser: Any, capacity: int):
    """A batch engine for a parser that matches markers over token bytes.

    The requests' states are ``ByteEngine``s stepped one by one (Python per
    request: such vocabularies are not the batch's fast path); the arguments
    are checked, and the result arrays filled, as by the array engines.
    """
    from reasoning_core_py._engine import BatchEngine

    class ByteBatchEngine(BatchEngine):
        __slots__ = ("_engines", "_make")

        def __init__(self) -> None:
            super().__init__(parser.tables, capacity)
            byte_tables, vocab = parser.tables.byte_plan
            engine_cls = type(parser.engine._eng)
            self._make = lambda: ByteEngine(byte_tables, vocab, engine_cls)
            self._engines: list[ByteEngine | None] = [None] * self.capacity

        def open(self, slot, state: int) -> None:
            super().open(slot, state)
            eng = self._make()
            eng.set_state(state)
            self._engines[int(slot)] = eng

        def close(self, slot) -> None:
            super().close(slot)
            self._engines[int(slot)] = None

        def finish(self, slot) -> tuple[tuple[int, ...], bool]:
            slot = self._check_slot(slot)
            eng = self._engines[slot]
            if eng is None or not self._open[slot]:
                raise ValueError(f"slot {slot} is not open")
            held = eng.held_ids
            reasoning = is_reasoning_state(eng.state)
            eng.finish()
            self._state[slot] = eng.state
            return held, reasoning

        def state_of(self, slot) -> int:
            eng = self._engines[self._check_slot(slot)]
            return CONTENT if eng is None else eng.state

        def held_ids(self, slot) -> tuple[int, ...]:
            eng = self._engines[self._check_slot(slot)]
            return () if eng is None else eng.held_ids

        def _run(self, slots, tokens, offsets, res) -> None:
            o_r, o_d, o_e, o_h, o_i = (res.is_reasoning, res.is_delimiter, res.reasoning_ended, res.is_held,
                                       res.in_reasoning)
            o_rel, o_comp = res.released, res.completed
            for j, slot in enumerate(slots):
                lo_i, hi_i = (j, j + 1) if offsets is None else (offsets[j], offsets[j + 1])
                eng = self._engines[slot]
                for i in range(lo_i, hi_i):
                    before = eng.state
                    segs, n_prefix = eng.feed([tokens[i]])
                    released = completed = 0
                    kind = SEG_HELD
                    for k, a, b in segs:
                        if k == SEG_HELD:
                            break
                        earlier = min(b, n_prefix) - a
                        if earlier > 0:
                            if k == SEG_START or k == SEG_DELIMITER:
                                completed += earlier
                            else:
                                released += earlier
                        if b > n_prefix:
                            kind = k
                    after = eng.state
                    o_r[i] = kind == SEG_REASONING
                    o_d[i] = kind == SEG_START or kind == SEG_DELIMITER
                    o_h[i] = kind == SEG_HELD
                    o_e[i] = before != CONTENT and after == CONTENT
                    o_i[i] = is_reasoning_state(after)
                    o_rel[i] = released
                    o_comp[i] = completed
                self._state[slot] = eng.state

    return ByteBatchEngine()
