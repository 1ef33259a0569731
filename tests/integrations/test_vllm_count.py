"""``usage.completion_tokens_details.reasoning_tokens``: our classes count
without building vLLM's parser, and must give what vLLM's class of the same
name gives, for every name whose vLLM class builds here.

Each sequence is an output shape a model writes (at most one reasoning
block, its start optional, content, a tool-call opener, the EOS id), cut
anywhere (truncation), and scrambled shapes (markers repeated, nested or
stray, other families' markers, EOS anywhere), counted under several
thinking switches (``chat_template_kwargs``).  Runs on the compiled and the pure
backend (``REASONING_CORE_NO_EXTENSIONS=1``).  Skips without vLLM.
"""
from __future__ import annotations

import random

import pytest

from vllm_helpers import import_vllm

import_vllm()

from reasoning_core.integrations import vllm as rcv  # noqa: E402

EOS = "<|im_end|>"
WORDS = ("Let", " me", " think", ".", "\n", " 4", "Hello", "\n\n", " thought", "thought\n")
KWARGS = (
    {}, {"enable_thinking": False}, {"enable_thinking": True}, {"thinking": False}, {"thinking": True},
    {"enable_thinking": False, "thinking": True}, {"enable_thinking": True, "thinking": False},
    {"reasoning_effort": "high"}, {"reasoning_effort": "no_think"}, {"thinking_mode": "enabled"},
)
# olmo3: vLLM's class needs its real vocabulary; beam, hf: our classes (and hf's
# count) need the checkpoint's own files, so those two still ask vLLM's class.
SKIP = {"olmo3", "beam", "hf"}
N_SEQS = 40


def _tokenizer():
    from transformers import PreTrainedTokenizerFast
    from vllm.tokenizers.hf import get_cached_tokenizer
    from vllm_serving_helpers import union_specials
    from vocab import build_tokenizer

    # As vLLM serves a checkpoint: EOS is a special token.
    return get_cached_tokenizer(PreTrainedTokenizerFast(tokenizer_object=build_tokenizer(union_specials()),
                                                        eos_token=EOS))


@pytest.fixture(scope="module")
def tok():
    return _tokenizer()


def _words(rng: random.Random) -> list[str]:
    return [rng.choice(WORDS) for _ in range(rng.randint(0, 6))]


def _sequences(tok, name: str, rng: random.Random) -> list[list[int]]:
    """Output shapes a model writes: at most one reasoning block (its start
    optional: the prompt may open it), content, a tool-call opener, EOS; any
    of them cut short."""
    from reasoning_core.families import get_family

    fam = get_family(rcv.family_of(name))
    out = []
    for _ in range(N_SEQS):
        pieces = []
        if fam.start and rng.random() < 0.6:
            pieces.append(rng.choice(fam.start))
        pieces += _words(rng)
        if fam.end and rng.random() < 0.7:
            pieces.append(rng.choice(fam.end))
        pieces += _words(rng)
        if fam.terminators and rng.random() < 0.2:
            pieces.append(rng.choice(fam.terminators))
            pieces += _words(rng)
        ids = []
        for p in pieces:
            ids.extend(tok.encode(p, add_special_tokens=False))
        if rng.random() < 0.3 and ids:
            ids = ids[: rng.randint(0, len(ids))]
        elif rng.random() < 0.8:
            ids.append(tok.convert_tokens_to_ids(EOS))
        out.append(ids)
    return out + _scrambled(tok, fam, rng)


OTHERS = ("<think>", "</think>", "<|im_start|>", "<tool_call>", "<|channel>", "<channel|>",
          "<|start|>assistant to=functions.get_weather<|message|>", "<|eom|>")


def _scrambled(tok, fam, rng: random.Random) -> list[list[int]]:
    """Shapes no template asks for: markers repeated, nested or stray, other
    families' markers, EOS anywhere."""
    markers = [m for m in fam.start + fam.end + fam.terminators if m]
    out = []
    for _ in range(N_SEQS):
        pieces = []
        for _ in range(rng.randint(0, 12)):
            r = rng.random()
            if r < 0.35 and markers:
                pieces.append(rng.choice(markers))
            elif r < 0.42:
                pieces.append(EOS)
            elif r < 0.5:
                pieces.append(rng.choice(OTHERS))
            else:
                pieces.append(rng.choice(WORDS))
        out.append([i for p in pieces for i in tok.encode(p, add_special_tokens=False)])
    return out


def _names():
    from vllm.reasoning import ReasoningParserManager

    registered = set(ReasoningParserManager.list_registered())
    return [n for n in rcv.REASONING_PARSERS if n in registered and n not in SKIP]


@pytest.mark.parametrize("name", _names())
def test_count_equals_vllm(tok, name):
    cls = rcv._vllm_own_class("reasoning", name)
    if cls is None:
        pytest.skip(f"vLLM's {name} does not import here")
    rng = random.Random(name)
    seqs = _sequences(tok, name, rng)
    compared = 0
    for kw in KWARGS:
        try:
            theirs_p = cls(tok, chat_template_kwargs=dict(kw))
        except Exception:
            continue
        ours_p = rcv.REASONING_PARSERS[name](tok, chat_template_kwargs=dict(kw))
        for ids in seqs:
            try:
                theirs = theirs_p.count_reasoning_tokens(tuple(ids))
            except Exception:
                continue
            ours = ours_p.count_reasoning_tokens(tuple(ids))
            assert ours == theirs, (name, kw, tok.convert_ids_to_tokens(ids), ours, theirs)
            compared += 1
    assert compared >= 2 * N_SEQS


def test_count_builds_no_vllm_class(tok, monkeypatch):
    """The count never builds vLLM's class (the hot path stays ours)."""
    names = [n for n in _names() if rcv._SPECS[n].count != "vllm"]
    monkeypatch.setattr(rcv.VllmReasoningParser, "_vllm_own", lambda self: pytest.fail("built vLLM's class"))
    ids = tok.encode("<think>Let me think</think>The answer", add_special_tokens=False)
    for name in names:
        rcv.REASONING_PARSERS[name](tok).count_reasoning_tokens(tuple(ids))


@pytest.fixture(scope="module")
def plain_tok():
    from vllm_helpers import vllm_tokenizer
    from vllm_serving_helpers import union_specials

    return vllm_tokenizer(union_specials())  # no token flagged special: EOS is plain text


@pytest.mark.parametrize("name", _names())
def test_count_equals_vllm_eos_not_special(plain_tok, name):
    """The same with a vocabulary that flags no special token (vLLM's engine
    then drops nothing, save the markers its grammar for the name lists)."""
    test_count_equals_vllm(plain_tok, name)
