"""reasoning-core under vLLM's names, against vLLM's own parsers (vLLM 0.33).

Differential: for every served name whose vLLM parser builds with an offline
tokenizer, ours and vLLM's give the same reasoning and content on generated
well-formed completions, streamed one token per step exactly as vLLM's
serving layer calls them (``ParserManager`` + ``parse_delta``) and as vLLM's
unit tests call them (``extract_reasoning_streaming`` per step), and one-shot.
Skips cleanly when vLLM is not installed.
"""
from __future__ import annotations

import importlib
import sys

import pytest

from conftest import (
    chat_request,
    deepseek_vllm_tokenizer,
    detokenize_steps,
    ids_of,
    import_vllm,
    stream_direct,
    stream_served,
    vllm_tokenizer,
)

import_vllm()

from vllm.reasoning import ReasoningParserManager  # noqa: E402

from reasoning_core.integrations import vllm as rcv  # noqa: E402
from vocab import FAMILY_SPECIALS  # noqa: E402

REASONING = "The user asks for the sum of two numbers.\nLet me think about it step by step. "
CONTENT = "The answer is **4**."


def tokenizer_for(name: str):
    fam = rcv.family_of(name)
    if fam == "deepseek_r1":
        return deepseek_vllm_tokenizer()
    return vllm_tokenizer(FAMILY_SPECIALS[fam])


def completions(name: str) -> dict[str, list[str]]:
    fam = rcv.REASONING_PARSERS[name]
    from reasoning_core.families import get_family

    f = get_family(fam.spec.family)
    s, e = f.start[0], f.end[0]
    label = f.label or ""
    return {
        "full": [s, label + REASONING, e, CONTENT],
        "no_start": [label + REASONING, e, CONTENT],
        "truncated": [s, label + REASONING],
        "truncated_no_start": [label + REASONING],
        "no_markers": [CONTENT],
        "empty_reasoning": [s, e, CONTENT],
        "no_content": [s, label + REASONING, e],
        "newline_content": [s, label + REASONING, e, "\n\n" + CONTENT],
    }


SERVED = sorted(rcv.REASONING_PARSERS)
CASES = [(n, c) for n in SERVED for c in completions(n)]


def _pair(name: str, tok, **kwargs):
    theirs = ReasoningParserManager.get_reasoning_parser(name)(tok, **kwargs)
    ours = rcv.REASONING_PARSERS[name](tok, **kwargs)
    return theirs, ours


@pytest.mark.parametrize("name,case", CASES)
def test_one_shot_equals_vllm(name, case):
    tok = tokenizer_for(name)
    text = "".join(completions(name)[case])
    theirs, ours = _pair(name, tok)
    req = chat_request()
    assert ours.extract_reasoning(text, req) == theirs.extract_reasoning(text, req)


@pytest.mark.parametrize("name,case", CASES)
def test_streaming_direct_equals_vllm(name, case):
    tok = tokenizer_for(name)
    ids = ids_of(tok, completions(name)[case])
    theirs, ours = _pair(name, tok)
    a, b = stream_direct(theirs, tok, ids), stream_direct(ours, tok, ids)
    assert (b.reasoning, b.content) == (a.reasoning, a.content)


@pytest.mark.parametrize("name,case", CASES)
def test_streaming_served_equals_vllm(name, case):
    tok = tokenizer_for(name)
    ids = ids_of(tok, completions(name)[case])
    rcv.register()
    a = stream_served(name, tok, ids)
    b = stream_served(f"rc_{name}", tok, ids)
    assert (b.reasoning, b.content) == (a.reasoning, a.content)


@pytest.mark.parametrize("name,case", CASES)
def test_token_level_answers_equal_vllm(name, case):
    tok = tokenizer_for(name)
    ids = ids_of(tok, completions(name)[case])
    theirs, ours = _pair(name, tok)
    assert ours.is_reasoning_end(ids) == theirs.is_reasoning_end(ids)
    assert ours.extract_content_ids(ids) == theirs.extract_content_ids(ids)
    for n in range(1, len(ids) + 1):
        assert ours.is_reasoning_end_streaming(ids[:n], ids[n - 1:n]) == \
            theirs.is_reasoning_end_streaming(ids[:n], ids[n - 1:n]), n
