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


def _fresh_count(parser, ids) -> int:
    parser._count_memo = None  # nothing kept from an earlier call: one pass over ``ids``
    return parser.count_reasoning_tokens(tuple(ids))


@pytest.mark.parametrize("name", _names())
def test_count_asked_every_step_equals_one_pass(tok, name):
    """With ``stream_options.continuous_usage_stats`` vLLM asks for the count on
    every step, with the ids so far: ours reads only the new ids then.  At
    every step, the answer equals one pass over the ids; ids that do not
    extend the previous call's (another sequence, a shorter one, one that
    differs early) are counted afresh."""
    rng = random.Random("steps-" + name)
    seqs = _sequences(tok, name, rng)
    for kw in KWARGS[:3] + KWARGS[9:]:
        stepped = rcv.REASONING_PARSERS[name](tok, chat_template_kwargs=dict(kw))
        fresh = rcv.REASONING_PARSERS[name](tok, chat_template_kwargs=dict(kw))
        for ids in seqs:
            n = 0
            while n < len(ids):
                n = min(len(ids), n + rng.randint(1, 4))
                got = stepped.count_reasoning_tokens(tuple(ids[:n]))
                assert got == _fresh_count(fresh, ids[:n]), (name, kw, tok.convert_ids_to_tokens(ids[:n]))
            if ids and rng.random() < 0.3:  # the same ids again, then ones that differ at the start
                assert stepped.count_reasoning_tokens(list(ids)) == _fresh_count(fresh, ids)
                other = [ids[-1]] + list(ids[1:])
                assert stepped.count_reasoning_tokens(tuple(other)) == _fresh_count(fresh, other)


def test_count_asked_every_step_reads_only_the_new_ids(tok):
    """The parser behind the memo is fed each id once: a long output asked on
    every step costs one pass over it, not one per step."""
    ours = rcv.REASONING_PARSERS["glm45"](tok)
    ids = tok.encode("<think>" + "Let me think. " * 200 + "</think>" + "The answer. " * 50,
                     add_special_tokens=False)
    expected = _fresh_count(rcv.REASONING_PARSERS["glm45"](tok), ids)
    ours.count_reasoning_tokens(tuple(ids[:1]))
    p = ours._count_memo[2].p
    assert p is not None  # glm45: our parser decides the count
    fed, real_split = [], p.split

    def split(delta):
        fed.append(len(delta))
        return real_split(delta)

    p.split = split
    for n in range(2, len(ids) + 1):
        got = ours.count_reasoning_tokens(tuple(ids[:n]))
    assert got == expected > 200
    assert sum(fed) == len(ids) - 1 and max(fed) == 1


@pytest.fixture(scope="module")
def split_tok():
    from vllm_helpers import vllm_tokenizer

    return vllm_tokenizer((EOS,))  # no marker is one token: each is several ids, held while undecided


@pytest.mark.parametrize("name", _names())
def test_count_asked_every_step_markers_of_several_ids(split_tok, name):
    """The same where the delimiters are several ids each: a step can end
    inside one (our parser holds it; the count puts it where the end of the
    output would release it)."""
    test_count_asked_every_step_equals_one_pass(split_tok, name)



@pytest.mark.parametrize("name", ["mistral", "deepseek_v4", "gemma4"])
@pytest.mark.parametrize("kw", [{}, {"enable_thinking": False}])
def test_count_of_a_step_ending_inside_a_delimiter(split_tok, name, kw):
    """Counted mid-stream, a delimiter prefix our parser holds is counted on
    the side that ending the output there releases it to: the count equals a
    parser's split of the ids so far plus its ``finish()``."""
    from reasoning_core.parser import parser_class

    ours = rcv.REASONING_PARSERS[name](split_tok, chat_template_kwargs=dict(kw))
    fam = ours._family
    ids = split_tok.encode(f"{fam.start[0]}Let me think{fam.end[0]}The answer{fam.start[0]}more{fam.end[0]}",
                           add_special_tokens=False)
    dropped = ours._count_dropped()
    held_seen = 0
    for n in range(1, len(ids) + 1):
        got = ours.count_reasoning_tokens(tuple(ids[:n]))
        ref = parser_class(fam)(ours._parser.tables)
        ref.begin(starts_in_reasoning=ours._count_start)
        if ours._count_memo[2].inject:  # gemma4's start injection, as decided for these ids
            ref.split([ours.start_token_id])
        reasoning = list(ref.split(ids[:n]).reasoning_ids)
        held_seen += bool(ref.held_ids)
        reasoning += ref.finish().reasoning_ids
        expected = sum(1 for t in reasoning if t not in dropped)
        assert got == expected, (name, kw, n)
    assert held_seen  # the steps did end inside delimiters
