"""pytest plugin (``-p sglang_suite_swap``, after ``-p sglang_suite_enter``):
puts reasoning-core's detectors under SGLang's names before any test module
imports SGLang's parser modules.

``register(replace=True)`` fills SGLang's two registries (``ReasoningParser.DetectorMap``,
``FunctionCallParser.ToolCallParserEnum``); SGLang's tests also import detector
classes by their class names (``from sglang.srt.parser.reasoning_parser import
Qwen3Detector``), so every module attribute of SGLang's parser packages that is
one of SGLang's detector classes is replaced by ours for the name that class
serves (a class serving several names: the name the class is named after,
else its first name)."""
from __future__ import annotations

import importlib
import pkgutil
import re
import sys

import sglang_suite_enter  # noqa: F401  (SGLang importable without its runtime)

from reasoning_core.integrations import sglang as rcs


def _key(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


def _swaps() -> dict[type, type]:
    out: dict[type, type] = {}
    pairs = [(rcs._ORIGINAL_DETECTORS, rcs.REASONING_DETECTORS)]
    if rcs.TOOL_DETECTORS:
        pairs.append((rcs._ORIGINAL_TOOL_DETECTORS, rcs.TOOL_DETECTORS))
    for original, ours in pairs:
        by_class: dict[type, list[str]] = {}
        for name, cls in original.items():
            if name in ours:
                by_class.setdefault(cls, []).append(name)
        for cls, names in by_class.items():
            named = [n for n in names if _key(n) and _key(n) in _key(cls.__name__)]
            out[cls] = ours[(named or names)[0]]
    return out


def _patch() -> None:
    rcs.register(replace=True)
    swap = _swaps()
    import sglang.srt.function_call as fc
    import sglang.srt.parser.reasoning_parser  # noqa: F401

    for info in pkgutil.iter_modules(fc.__path__):
        try:
            importlib.import_module(f"{fc.__name__}.{info.name}")
        except Exception:  # noqa: BLE001 - a module this install cannot import: nothing to patch
            pass
    for mod_name, mod in list(sys.modules.items()):
        if not mod_name.startswith(("sglang.srt.parser", "sglang.srt.function_call")) or mod is None:
            continue
        for attr, value in list(vars(mod).items()):
            if isinstance(value, type) and value in swap:
                setattr(mod, attr, swap[value])


_patch()
