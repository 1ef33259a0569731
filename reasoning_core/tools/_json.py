"""Incremental JSON reading that re-serializes as it reads, and JSON value typing.

Model output is fed a chunk at a time; the reader (``JsonReader``, from the tool-call
scanner this module selects: ``reasoning_core/_toolscan.pyx`` or its pure twin
``reasoning_core_py/_toolscan.py``) writes a canonical form to a sink as soon as
each piece is certain, so arguments can stream while staying valid JSON.

Canonical form: ``json.dumps(value, ensure_ascii=False)`` layout (``", "`` and
``": "`` separators, no other whitespace, same string escapes), except that
numbers keep the model's spelling (no float round-trip, no precision loss),
duplicate keys are kept, and surrogate code points that do not form a pair are
written as ``\\uXXXX`` escapes so the text always encodes as UTF-8. Raw control
characters inside strings are accepted (``strict=False``) and escaped. ``NaN`` and
``Infinity`` are rejected.
"""

from __future__ import annotations

import re

from .._shared import brief
from .._flags import env_flag


def _select():
    """The scanner module: the compiled ``reasoning_core._toolscan`` unless it is
    missing or the pure engine is chosen (the engine dispatcher's rule and
    switches: ``REASONING_CORE_NO_EXTENSIONS``, ``REASONING_CORE_REQUIRE_EXTENSIONS``)."""
    from .. import _dispatch

    if _dispatch.BACKEND == "cython":
        try:
            from .. import _toolscan as mod

            return mod, "cython"
        except ImportError as exc:
            if env_flag("REASONING_CORE_REQUIRE_EXTENSIONS"):
                raise ImportError(
                    "REASONING_CORE_REQUIRE_EXTENSIONS is set, but the compiled tool-call scanner "
                    f"cannot be imported: {exc}"
                ) from exc
    from reasoning_core_py import _toolscan as mod

    return mod, "python"


SCAN, SCAN_BACKEND = _select()
NEED, DONE, ERROR = SCAN.NEED, SCAN.DONE, SCAN.ERROR
JsonReader = SCAN.JsonReader
escape = SCAN.escape


def scanner(backend: str):
    """The scanner module of ``backend`` ("cython" or "python")."""
    if backend == "python":
        from reasoning_core_py import _toolscan as mod

        return mod
    if backend == "cython":
        try:
            from .. import _toolscan as mod
        except ImportError:
            raise ValueError("the compiled tool-call scanner is not built in this installation") from None
        return mod
    raise ValueError(f"backend must be 'cython' or 'python', not {brief(backend)}")


def dump_str(s: str) -> str:
    return '"' + escape(s) + '"'


def normalize(text: str):
    """Canonical JSON text for ``text`` if it is exactly one JSON value (surrounding
    whitespace allowed), else ``None``."""
    r = SCAN.json_value(text, 0, False, True)
    if r is None or text[r[1]:].strip(" \t\n\r"):
        return None
    return r[0]


def _kind(canon: str) -> str:
    c = canon[0]
    if c == "{":
        return "object"
    if c == "[":
        return "array"
    if c == '"':
        return "string"
    if c == "t" or c == "f":
        return "boolean"
    if c == "n":
        return "null"
    return "number" if any(ch in canon for ch in ".eE") else "integer"


# JSON Schema type names, plus the Python-style names real tool definitions use
# (compared lower-cased); any other name tells nothing and is ignored
_TYPE_NAMES = {
    "string": "string", "str": "string", "text": "string",
    "integer": "integer", "int": "integer", "long": "integer",
    "number": "number", "float": "number", "double": "number", "decimal": "number",
    "boolean": "boolean", "bool": "boolean",
    "object": "object", "dict": "object", "map": "object",
    "array": "array", "list": "array", "tuple": "array",
    "null": "null", "none": "null", "nonetype": "null",
}


_ONE_TYPE = {name: frozenset((name,)) for name in set(_TYPE_NAMES.values())}


def _value_kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple)):
        return "array"
    if isinstance(v, dict):
        return "object"
    return None


def schema_types(prop) -> frozenset:
    """JSON-schema types a property allows: ``type`` (a name or a list; Python-style
    names such as ``int``/``float``/``bool``/``dict``/``list``/``str`` count as their
    JSON Schema equivalents), the members of ``anyOf``/``oneOf``, ``nullable``, and,
    when no type is given, the kinds of the ``enum``/``const`` values. Empty when
    nothing is known (then values are typed as without a schema). Iterative, and a
    schema that refers to itself is visited once."""
    if type(prop) is dict and len(prop) <= 2:  # the common {"type": name} (with a description)
        t = prop.get("type")
        if type(t) is str and (len(prop) == 1 or "description" in prop):
            known = _TYPE_NAMES.get(t.strip().lower())
            if known is not None:
                return _ONE_TYPE[known]
    types: set[str] = set()
    seen: set[int] = set()
    todo = [prop]
    while todo:
        p = todo.pop()
        if not isinstance(p, dict) or id(p) in seen:
            continue
        seen.add(id(p))
        t = p.get("type")
        names = [t] if isinstance(t, str) else list(t) if isinstance(t, (list, tuple)) else []
        known = {_TYPE_NAMES.get(x.strip().lower()) for x in names if isinstance(x, str)}
        known.discard(None)
        if not known:
            values = p.get("enum")
            if not isinstance(values, (list, tuple)):
                values = [p["const"]] if "const" in p else []
            known = {_value_kind(v) for v in values}
            known.discard(None)
        if known and p.get("nullable") is True:
            known.add("null")
        types |= known
        for key in ("anyOf", "oneOf"):
            subs = p.get(key)
            if isinstance(subs, (list, tuple)):
                todo.extend(subs)
    return frozenset(types)


_STRING_ONLY = frozenset(["string"])


def typed_value(text: str, types: frozenset) -> str:
    """JSON text for an XML-style parameter value.

    Without a schema: JSON when the text parses as JSON, else a string. With one, a
    ``string``-only parameter stays a string; otherwise parsed JSON is kept when its
    kind is allowed (``integer`` counts as a ``number``).
    """
    if types == _STRING_ONLY:
        return dump_str(text)
    canon = normalize(text)
    if canon is None:
        if "boolean" in types and text.strip() in ("True", "False"):
            return "true" if text.strip() == "True" else "false"
        return dump_str(text)
    if not types:
        return canon
    kind = _kind(canon)
    if kind in types or (kind == "integer" and "number" in types):
        return canon
    return dump_str(text)
