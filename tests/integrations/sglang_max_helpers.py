"""Helpers for the SGLang and MAX integration tests: importing each engine's
parser modules (skipping cleanly where the engine is absent), generated
well-formed completions, and the chunkings the engines feed their parsers.

These tests run where the engines are installed (the peers venv,
the commands in ``docs/engines/running.md``); elsewhere every module using this skips.
"""
from __future__ import annotations

import importlib.util
import os
import random
import re
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/vocab.py

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REASONING = "The user asks for the sum of two numbers.\nLet me think about it step by step. "
CONTENT = "The answer is **4**."


def import_sglang_parsers():
    """SGLang's reasoning-parser module, or a clean skip when SGLang is absent.

    SGLang's package ``__init__`` imports its serving runtime (which needs
    triton, absent on CPU): when ``import sglang`` fails, the package is
    entered without its ``__init__`` (``docs/engines/running.md``).
    """
    if importlib.util.find_spec("sglang") is None:
        pytest.skip("SGLang is not installed (see docs/engines/running.md)", allow_module_level=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from reasoning_core.integrations import sglang as rcs  # does the bypass when needed
        from sglang.srt.parser import reasoning_parser
    return reasoning_parser, rcs


def import_max():
    """MAX's reasoning registry module, or a clean skip when MAX is absent."""
    if importlib.util.find_spec("max") is None or importlib.util.find_spec("max.pipelines") is None:
        pytest.skip("Modular MAX is not installed (see docs/engines/running.md)", allow_module_level=True)
    home = os.environ.get("MODULAR_HOME")
    if not home:
        # MAX writes a JIT cache and a crash database under $HOME unless redirected.
        base = Path(os.environ.get("PEERS_DIR", Path(sys.prefix).parent)) / "home"
        for var, sub in (("XDG_CACHE_HOME", ".cache"), ("XDG_DATA_HOME", ".local/share"),
                         ("XDG_STATE_HOME", ".local/state"), ("XDG_CONFIG_HOME", ".config"),
                         ("MODULAR_HOME", ".modular"), ("HF_HOME", "hf")):
            os.environ.setdefault(var, str(base / sub))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from reasoning_core.integrations import max as rcm
    return rcm


def completions(start: str, end: str, *, label: str = "", frame: str = "%s") -> dict[str, str]:
    """Well-formed completions of a start/end format: optional start,
    reasoning, end, content; truncated; no markers; empty reasoning."""
    c = frame % CONTENT
    return {
        "full": start + label + REASONING + end + c,
        "no_start": REASONING + end + c,
        "truncated": start + label + REASONING,
        "truncated_no_start": REASONING,
        "no_markers": c,
        "empty_reasoning": start + label + end + c,
        "no_content": start + label + REASONING + end,
        "newline_content": start + label + REASONING + end + frame % ("\n\n" + CONTENT),
    }


# Cases that open no block: well-formed only when the output starts inside reasoning.
NO_START_CASES = frozenset({"no_start", "truncated_no_start"})

_SPECIAL = re.compile(r"<[^<>\s]+>|\[/?[A-Z_]+\]")


def marker_pattern(markers) -> re.Pattern | None:
    ms = set(m for m in markers if m)
    ms.update(_SPECIAL.findall(" ".join(ms)))
    if not ms:
        return None
    return re.compile("|".join(re.escape(m) for m in sorted(ms, key=len, reverse=True)))


def text_chunks(text: str, rng: random.Random, atomic: re.Pattern | None = None, most: int = 6) -> list[str]:
    """Random text chunks as a detokenizer yields them: markers (special
    tokens) arrive whole, other text in pieces of 1..``most`` characters."""
    parts: list[tuple[str, bool]] = []
    pos = 0
    if atomic is not None:
        for m in atomic.finditer(text):
            parts.append((text[pos:m.start()], False))
            parts.append((m.group(0), True))
            pos = m.end()
    parts.append((text[pos:], False))
    out: list[str] = []
    for t, whole in parts:
        if whole:
            out.append(t)
            continue
        i = 0
        while i < len(t):
            n = rng.randint(1, most)
            out.append(t[i:i + n])
            i += n
    return out


def token_chunks(ids: list[int], rng: random.Random, most: int = 4) -> list[list[int]]:
    out = []
    i = 0
    while i < len(ids):
        n = rng.randint(1, most)
        out.append(list(ids[i:i + n]))
        i += n
    return out
