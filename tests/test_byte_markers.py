"""Markers that are not whole tokens: matched over token bytes, exact for any tokenization.

For every family, on vocabularies where its markers are ordinary text (the
real DeepSeek vocabulary for other families' markers, a byte-level BPE built
without any marker token) and where they are special tokens, random texts
glue punctuation, letters, newlines and multibyte characters right against
the markers.  Whatever the BPE merges, the decoded stream equals the text
parser on the decoded text, in random chunkings, on both backends; the token
level (``split()`` plus the boundary tokens' byte ranges) carries exactly the
same text; the batch agrees with ``split()``.
"""
from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import SentencePieceBPETokenizer

import reasoning_core as rc
from reasoning_core import ReasoningBatch, ReasoningStreamDecoder, get_parser, text_parser
from reasoning_core._bytes import UNKNOWN_BYTE, TokenBytes, token_bytes
from reasoning_core.families import FAMILIES, ROLES
from tests.vocab import CORPUS, build_tokenizer, decode, deepseek_tokenizer, family_tokenizer

# Foreign vocabularies lack some optional markers (chat-turn boundaries): expected here.
pytestmark = pytest.mark.filterwarnings("ignore::reasoning_core.errors.ReasoningCoreWarning")


def fixture_ok(n: int):
    return settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
                    deadline=None, max_examples=n)

MARKED = sorted(name for name, fam in FAMILIES.items() if fam.start)
GLUE = [".", " ", "\n", "a", "H", "<", ">", "|", ":", "é", "数", "🧠", "ok", " the", "\n\n", "Here"]


def markers(name: str) -> list[str]:
    fam = FAMILIES[name]
    return [m for role, _, _ in ROLES for m in getattr(fam, role)]


def plain_tokenizer():
    """A byte-level BPE with no marker among its added tokens."""
    return build_tokenizer(("<|endoftext|>",), 700)


@functools.lru_cache(maxsize=1)
def metaspace_tokenizer():
    """A SentencePiece-style BPE (``▁`` for spaces, Metaspace decoder) with no marker token."""
    sp = SentencePieceBPETokenizer()
    sp.train_from_iterator(CORPUS * 4, vocab_size=500, special_tokens=["<unk>"], show_progress=False)
    return sp._tokenizer


VOCABS = {
    "deepseek": deepseek_tokenizer,
    "plain": plain_tokenizer,
    "metaspace": metaspace_tokenizer,
    "family": None,  # the family's own specials (markers are whole tokens where the model has them)
}


def vocab(kind: str, name: str):
    return family_tokenizer(name) if kind == "family" else VOCABS[kind]()


def usable_markers(name: str, tok) -> list[str]:
    """The family's markers, less the terminators a token-id parser ignores in this vocabulary.

    A terminator counts only as a real vocabulary entry (a tool-call marker
    spelled out in prose must not end reasoning); when every marker is a whole
    token the parser matches ids, and such a terminator is not one here.
    Over bytes (some marker is text) every marker is matched as text.
    """
    if tok is None or get_parser(name, tok).matches_bytes:
        return markers(name)
    fam = FAMILIES[name]
    exact_only = {m for role, _, exact in ROLES if exact for m in getattr(fam, role)}
    return [m for m in markers(name) if m not in exact_only or tok.token_to_id(m) is not None]


@st.composite
def glued_text(draw, name: str, tok=None) -> str:
    pieces = draw(st.lists(st.one_of(st.sampled_from(usable_markers(name, tok)), st.sampled_from(GLUE)),
                           min_size=1, max_size=24))
    return "".join(pieces)


def chunked(ids: list[int], cuts: list[int]) -> list[list[int]]:
    points = sorted({c % (len(ids) + 1) for c in cuts} | {0, len(ids)})
    return [ids[a:b] for a, b in zip(points, points[1:])]


def decoded_stream(name: str, tok, ids: list[int], chunks, backend: str) -> tuple[str, str]:
    parser = get_parser(name, tok, backend=backend).begin()
    dec = ReasoningStreamDecoder(parser, tok, skip_special_tokens=False)
    reasoning, content = [], []
    for chunk in chunks:
        out = dec.push(chunk)
        reasoning.append(out.reasoning)
        content.append(out.content)
    out = dec.finish()
    return "".join(reasoning) + out.reasoning, "".join(content) + out.content


@pytest.mark.parametrize("kind", sorted(VOCABS))
@pytest.mark.parametrize("name", MARKED)
@fixture_ok(25)
@given(data=st.data())
def test_decoded_stream_equals_text_parser_on_glued_text(name, kind, backend, data):
    tok = vocab(kind, name)
    text = data.draw(glued_text(name, tok))
    ids = tok.encode(text, add_special_tokens=False).ids
    cuts = data.draw(st.lists(st.integers(0, 200), max_size=8))
    got = decoded_stream(name, tok, ids, chunked(ids, cuts), backend)
    assert got == text_parser(name).parse(decode(tok, ids))


def _side_bytes(parser, vocab_bytes: TokenBytes, splits) -> tuple[bytes, bytes]:
    """Reasoning and content bytes carried by split() results, boundary pieces included."""
    reasoning, content = bytearray(), bytearray()
    out = {"reasoning": reasoning, "content": content}
    for s in splits:
        toks = s.tokens
        bounds = dict(s.boundaries)
        for kind, a, b in s.segments:
            for i in range(a, b):
                if i in bounds:
                    piece = vocab_bytes.of(toks[i])
                    for k, x, y in bounds[i]:
                        if k in out:
                            out[k] += piece[x:y]
                elif kind in out:
                    out[kind] += vocab_bytes.of(toks[i])
    return bytes(reasoning), bytes(content)


@pytest.mark.parametrize("name", [n for n in MARKED if not FAMILIES[n].label])
@fixture_ok(30)
@given(data=st.data())
def test_token_level_carries_the_text_parsers_split(name, backend, data):
    tok = plain_tokenizer()
    text = data.draw(glued_text(name))
    ids = tok.encode(text, add_special_tokens=False).ids
    parser = get_parser(name, tok, backend=backend).begin()
    assert parser.matches_bytes
    cuts = data.draw(st.lists(st.integers(0, 200), max_size=8))
    splits = [parser.split(c) for c in chunked(ids, cuts)] + [parser.finish()]
    # Conservation: every token is in exactly one segment, in order.
    flat = []
    for s in splits:
        flat.extend(t for kind, a, b in s.segments if kind != "held" for t in s.tokens[a:b])
    assert flat == ids
    reasoning, content = text_parser(name).parse(decode(tok, ids))
    assert _side_bytes(parser, token_bytes(tok), splits) == (reasoning.encode(), content.encode())


@pytest.mark.parametrize("name", ["granite", "gpt_oss", "hunyuan_a13b", "olmo3", "kimi"])
@fixture_ok(20)
@given(data=st.data())
def test_batch_agrees_with_split_over_bytes(name, backend, data):
    tok = deepseek_tokenizer()
    text = data.draw(glued_text(name))
    ids = tok.encode(text, add_special_tokens=False).ids
    parser = get_parser(name, tok, backend=backend).begin()
    assert parser.matches_bytes
    batch = ReasoningBatch(get_parser(name, tok, backend=backend), 2)
    batch.open(1)
    own = {}  # token index -> kind, for tokens decided at their own step
    held = []  # indices of tokens the batch reported held
    released = completed = 0
    for i, t in enumerate(ids):
        res = batch.step([1], [t])
        released += int(res.released[0])
        completed += int(res.completed[0])
        if res.is_held[0]:
            held.append(i)
        else:
            own[i] = "delimiter" if res.is_delimiter[0] else "reasoning" if res.is_reasoning[0] else "content"
    s = parser.split(ids)
    kinds = {i: ("delimiter" if k == "start" else k) for k, a, b in s.segments for i in range(a, b)}
    assert {i: kinds[i] for i in own} == own
    still = [i for i in held if kinds[i] == "held"]
    later = [kinds[i] for i in held if kinds[i] != "held"]
    assert released == sum(k in ("reasoning", "content") for k in later)
    assert completed == sum(k == "delimiter" for k in later)
    assert batch.held_ids(1) == parser.held_ids == tuple(ids[i] for i in still)
    assert batch.state(1) == parser.state
    assert batch.thinking_mask()[1] == (parser.state != "content")


def test_examples_from_the_issue(backend):
    tok = deepseek_tokenizer()
    harmony = ("<|channel|>analysis<|message|>Think hard.<|end|><|start|>assistant<|channel|>final"
               "<|message|>Answer.<|return|>")
    granite = "Here is my thought process: hmm.Here is my response: ok"
    for name, text, want in (("gpt_oss", harmony, ("Think hard.", "Answer.")),
                             ("granite", granite, (" hmm.", " ok"))):
        ids = tok.encode(text, add_special_tokens=False).ids
        assert decoded_stream(name, tok, ids, [[i] for i in ids], backend) == want
        parser = get_parser(name, tok, backend=backend).begin()
        s = parser.split(ids)
        # The token ".<" / ".H" is the delimiter's; its "." is reasoning.
        assert any(pieces[0] == ("reasoning", 0, 1) for _, pieces in s.boundaries)
        assert decode(tok, s.reasoning_ids) == want[0][:-1]


def test_single_token_markers_keep_the_id_path():
    tok = deepseek_tokenizer()
    for name in ("deepseek_r1", "deepseek_v3"):
        assert not get_parser(name, tok).matches_bytes
    for name in ("qwen3", "glm45", "kimi_k2", "minimax_m2", "gemma4", "mistral", "seed_oss"):
        assert not get_parser(name, family_tokenizer(name)).matches_bytes
    # Markers that are ordinary text in this vocabulary.
    for name in ("granite", "gpt_oss", "hunyuan_a13b", "olmo3", "kimi"):
        assert get_parser(name, tok).matches_bytes


def test_stream_span_over_bytes(backend):
    tok = deepseek_tokenizer()
    parser = get_parser("granite", tok, backend=backend)
    text = "Here is my thought process: hmm.Here is my response: ok"
    ids = tok.encode(text, add_special_tokens=False).ids
    span = parser.stream(ids, False).span
    d0, d1 = span.reasoning_with_delimiters
    r0, r1 = span.reasoning
    assert decode(tok, ids[r0:r1]) == " hmm"  # ".H" is the end delimiter's token
    assert decode(tok, span.extract_content(ids)) == " ok"
    assert d0 == 0 and r0 > 0 and d1 < len(ids)
    assert parser.will_reason_after_prompt(tok.encode("User: hi\nHere is my thought process:").ids)
    assert not parser.will_reason_after_prompt(tok.encode("a.Here is my response: b").ids)


def test_unknown_ids_break_markers_and_never_crash(backend):
    tok = deepseek_tokenizer()
    parser = get_parser("granite", tok, backend=backend).begin()
    ids = tok.encode("Here is my thought process: x", add_special_tokens=False).ids
    s = parser.split(ids[:2] + [10**12, -5] + ids[2:])
    assert "start" not in [k for k, _, _ in s.segments]
    assert token_bytes(tok).of(-1) == UNKNOWN_BYTE
    assert token_bytes(tok).of(10**12) == UNKNOWN_BYTE
    with pytest.raises(TypeError):
        parser.split([1.5])
    assert rc.BACKEND in ("cython", "python")


class _Reentrant:
    def __init__(self, parser, value):
        self.parser, self.value = parser, value

    def __index__(self):
        self.parser.split([1, 2, 3])
        return self.value


def test_reentry_is_refused_and_the_parser_stays_usable(backend):
    tok = deepseek_tokenizer()
    p = get_parser("granite", tok, backend=backend).begin()
    ids = tok.encode("Here is my thought process: a. Here is my response: b").ids
    for call in (lambda: p.split(ids[:3] + [_Reentrant(p, 5)]), lambda: p.stream([_Reentrant(p, 5)], False),
                 lambda: p.will_reason_after_prompt([_Reentrant(p, 5)])):
        with pytest.raises(RuntimeError, match="already running a call"):
            call()
    p.begin()
    parts = [p.split(ids), p.finish()]
    assert [k for k, _, _ in parts[0].segments] == ["start", "reasoning", "delimiter", "content"]


def test_stream_span_keeps_a_terminators_token_in_content(backend):
    # qwen3 on a vocabulary without its markers: byte path; "a<tool_call>" glued
    # into tokens that also carry reasoning text must stay content (as in split()).
    tok = plain_tokenizer()
    parser = get_parser("qwen3", tok, backend=backend)
    assert parser.matches_bytes
    text = "<think>plan.<tool_call>x</tool_call>"
    ids = tok.encode(text, add_special_tokens=False).ids
    span = parser.stream(ids, False).span
    content = decode(tok, span.extract_content(ids))
    assert "<tool_call>x</tool_call>" in content
    assert span.reasoning[1] == span.reasoning_with_delimiters[1]  # nothing consumed after the reasoning
    s = parser.begin().split(ids)
    assert decode(tok, s.content_ids).endswith("<tool_call>x</tool_call>")
