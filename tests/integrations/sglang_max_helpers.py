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


# ---------------------------------------------------------------------------
# SGLang's serving layer on a CPU-only install
# ---------------------------------------------------------------------------

def enter_sglang_serving() -> None:
    """Make ``sglang.srt.server_args`` and ``sglang.srt.entrypoints.openai.serving_chat``
    importable where SGLang's GPU runtime is absent (the peers venv).

    SGLang's package ``__init__`` and some modules those two import pull in
    triton, torchvision, sentencepiece, compressed-tensors and the model
    runtime; none of it runs when a chat request is answered.  Placeholder
    modules stand in for them (every attribute a permissive class), torch's
    own triton probes run first so torch sees no triton.  This changes
    ``sys.modules`` for good: call it only in a process of its own (the tests
    run it in a subprocess), never in the pytest process.
    """
    import importlib.abc
    import importlib.machinery
    import types

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch._dynamo  # noqa: F401  (probe for triton before the placeholder exists)
        import torch._inductor.compile_fx  # noqa: F401
        import torch.utils.flop_counter  # noqa: F401
        import transformers  # noqa: F401  (probes sentencepiece)

    class _Anything:
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return _Anything()

        def __call__(self, *args, **kwargs):
            if len(args) == 1 and not kwargs and callable(args[0]):
                return args[0]  # used as a decorator
            return _Anything()

        def __getitem__(self, key):
            return _Anything()

    class _Meta(type):
        def __getattr__(cls, name):
            if name.startswith("__"):
                raise AttributeError(name)
            return _Anything()

    def _init(self, *args, **kwargs):
        pass

    def _call(self, *args, **kwargs):
        return args[0] if args else self

    class _Placeholder(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            cls = _Meta(name, (), {"__init__": _init, "__call__": _call})
            setattr(self, name, cls)
            return cls

    roots = ("triton", "torchvision", "sentencepiece", "compressed_tensors",
             "sglang.srt.configs.model_config", "sglang.srt.managers.schedule_batch")

    class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path=None, target=None):
            if any(name == r or name.startswith(r + ".") for r in roots):
                return importlib.machinery.ModuleSpec(name, self, is_package=True)
            return None

        def create_module(self, spec):
            mod = _Placeholder(spec.name)
            mod.__path__ = []
            return mod

        def exec_module(self, module):
            pass

    sys.meta_path.insert(0, _Finder())
    if "sglang" not in sys.modules:  # the package without its runtime-importing __init__
        spec = importlib.util.find_spec("sglang")
        pkg = types.ModuleType("sglang")
        pkg.__path__ = list(spec.submodule_search_locations)
        pkg.__spec__ = spec
        sys.modules["sglang"] = pkg


def package_root() -> str:
    """The directory holding the ``reasoning_core`` this process imports (the
    source tree or an installed copy), for subprocesses to import the same."""
    import reasoning_core

    return str(Path(reasoning_core.__file__).resolve().parent.parent)
