"""Delimiter strings to token ids, once per tokenizer (SPEC §6).

Accepted tokenizers, by duck typing (nothing here imports transformers):
- a ``transformers`` tokenizer (``convert_tokens_to_ids`` + ``encode``),
- a ``tokenizers.Tokenizer`` (``token_to_id`` + ``encode(...).ids``),
- a MAX-style pipeline tokenizer (``.delegate`` is one of the above; an
  async ``encode`` is awaited by the async entry points),
- a plain ``{token: id}`` mapping (exact entries only),
- any object with ``encode(text)`` returning ids, optionally ``get_vocab()``.
"""
from __future__ import annotations

import inspect
import threading
import weakref
from collections.abc import Mapping
from typing import Any

from ._tables import (
    CONTENT,
    SEEDED,
    Pattern,
    Tables,
    build_tables,
)
from .families import ROLES, Family

__all__ = ["resolve_delimiter", "family_patterns", "tables_for", "describe_tokenizer"]


def describe_tokenizer(tok: Any) -> str:
    name = getattr(tok, "name_or_path", None)
    kind = type(tok).__name__
    return f"{kind}({name!r})" if name else kind


def _unwrap(tok: Any) -> Any:
    delegate = getattr(tok, "delegate", None)
    return delegate if delegate is not None and not isinstance(tok, Mapping) else tok


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


def _variants(encode, text: str, sync: bool = True):
    """Every id sequence the text can take in running text: bare, after a space, after a newline."""
    seqs = []
    for prefix in ("", " ", "\n"):
        ids = encode(prefix + text)
        if ids is None:
            return None
        if prefix:
            pre = encode(prefix)
            if pre and ids[: len(pre)] == pre:
                ids = ids[len(pre):]  # the prefix did not merge: same as bare
        if ids and tuple(ids) not in seqs:
            seqs.append(tuple(ids))
    return seqs


def resolve_delimiter(tok: Any, text: str, *, exact_only: bool = False) -> tuple[tuple[int, ...], ...]:
    """Id sequences for one delimiter string ((), if it cannot be resolved)."""
    tok = _unwrap(tok)
    v = _vocab_id(tok, text)
    if v is not None:
        return ((v,),)
    if exact_only or isinstance(tok, Mapping):
        return ()
    seqs = _variants(lambda s: _encode_sync(tok, s), text)
    return tuple(seqs or ())


async def resolve_delimiter_async(tok: Any, text: str, *, exact_only: bool = False):
    inner = _unwrap(tok)
    v = _vocab_id(inner, text)
    if v is not None:
        return ((v,),)
    if exact_only or isinstance(inner, Mapping):
        return ()
    cache: dict[str, list[int] | None] = {}
    for s in {text, " " + text, "\n" + text, " ", "\n"}:
        result = _encode_call(inner, s)
        if inspect.isawaitable(result):
            result = await result
        cache[s] = None if result is None else _ids_of(result)
    return tuple(_variants(cache.__getitem__, text) or ())


def _patterns(family: Family, resolved: Mapping[tuple[str, str], tuple], tok: Any) -> list[Pattern]:
    patterns = []
    for role, kind, _ in ROLES:
        strings = getattr(family, role)
        found_any = False
        for s in strings:
            seqs = resolved[(role, s)]
            found_any = found_any or bool(seqs)
            patterns.extend(Pattern(ids, kind) for ids in seqs)
        if role in ("start", "end") and strings and not found_any:
            raise ValueError(
                f"the {family.name} parser needs the {role} delimiter {strings[0]!r}, "
                f"which {describe_tokenizer(tok)} cannot encode"
            )
    return patterns


def family_patterns(family: Family, tok: Any) -> list[Pattern]:
    resolved = {
        (role, s): resolve_delimiter(tok, s, exact_only=exact)
        for role, _, exact in ROLES
        for s in getattr(family, role)
    }
    return _patterns(family, resolved, tok)


async def family_patterns_async(family: Family, tok: Any) -> list[Pattern]:
    resolved = {}
    for role, _, exact in ROLES:
        for s in getattr(family, role):
            resolved[(role, s)] = await resolve_delimiter_async(tok, s, exact_only=exact)
    return _patterns(family, resolved, tok)


def _default_state(family: Family) -> int:
    return SEEDED if family.starts_in_reasoning else CONTENT


def make_tables(family: Family, patterns: list[Pattern]) -> Tables:
    return build_tables(patterns, default_state=_default_state(family), awaiting_family=family.awaiting_start)


# Per-tokenizer cache of built tables: creating a parser per request costs
# no encoding and no table building.
_cache_lock = threading.Lock()
_weak_cache: "weakref.WeakKeyDictionary[Any, dict[str, Tables]]" = weakref.WeakKeyDictionary()
_strong_cache: dict[int, tuple[Any, dict[str, Tables]]] = {}


def _cache_for(tok: Any) -> dict[str, Tables] | None:
    if isinstance(tok, Mapping):
        return None  # mutable and cheap to look up: not cached
    with _cache_lock:
        try:
            return _weak_cache.setdefault(tok, {})
        except TypeError:  # not weak-referenceable
            entry = _strong_cache.get(id(tok))
            if entry is None or entry[0] is not tok:
                entry = (tok, {})
                _strong_cache[id(tok)] = entry
            return entry[1]


def tables_for(family: Family, tok: Any) -> Tables:
    if tok is None:
        if family.start or family.end:
            raise ValueError(f"the {family.name} parser needs a tokenizer to resolve its delimiters")
        return make_tables(family, [])
    cache = _cache_for(tok)
    if cache is not None and family.name in cache:
        return cache[family.name]
    tables = make_tables(family, family_patterns(family, tok))
    if cache is not None:
        cache[family.name] = tables
    return tables


async def tables_for_async(family: Family, tok: Any) -> Tables:
    if tok is None:
        return tables_for(family, None)
    cache = _cache_for(tok)
    if cache is not None and family.name in cache:
        return cache[family.name]
    tables = make_tables(family, await family_patterns_async(family, tok))
    if cache is not None:
        cache[family.name] = tables
    return tables

