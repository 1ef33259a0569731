"""The decoder's token text table (byte-level tokenizers).

With nothing pending on a side, a token whose bytes are whole characters adds
exactly its own text, so the decoder emits it from a per-tokenizer table
instead of stepping ``DecodeStream``.  These tests hold that shortcut to the
``DecodeStream`` path it replaces: delta by delta, on the real DeepSeek
vocabulary, with byte fragments of unfinished and ill-formed characters,
special and added tokens, delimiters and every chunking, on both backends.
"""
from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, decoders, models, pre_tokenizers

from reasoning_core import ReasoningStreamDecoder, get_parser
from reasoning_core import decode as decode_mod
from reasoning_core.decode import _facts
from tests.vocab import deepseek_tokenizer, family_tokenizer

slow_ok = settings(max_examples=60, deadline=None,
                   suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

TEXT = ("<think>\nLet me think: 数学 🧠, naïve café, Ω≈ç√∫ — 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 and emoji 👩‍👩‍👧 here.\n</think>\n\n"
        "The answer is **42** 🙂. Ελληνικά, русский, العربية, 日本語のテキスト.")


@functools.lru_cache(maxsize=1)
def pools() -> dict[str, list[int]]:
    """Ids of the DeepSeek vocabulary by what they decode to on their own."""
    tok = deepseek_tokenizer()
    n = tok.get_vocab_size(with_added_tokens=True)
    texts = tok.decode_batch([[i] for i in range(n)], skip_special_tokens=False)
    fragments = [i for i, t in enumerate(texts) if "\ufffd" in t]  # bytes that are no whole character
    added = sorted(tok.get_added_tokens_decoder())
    return {
        "text": tok.encode(TEXT, add_special_tokens=False).ids,
        "fragments": fragments,
        "added": added,  # BOS/EOS/pad (special) and DeepSeek's tool-call markers (not special)
        "delimiters": [tok.token_to_id("<think>"), tok.token_to_id("</think>")],
        "any": list(range(0, n, 97)),
    }


def ids_strategy():
    p = pools()
    one = st.one_of(
        st.sampled_from(p["fragments"]),
        st.sampled_from(p["added"]),
        st.sampled_from(p["delimiters"]),
        st.sampled_from(p["any"]),
    )
    runs = st.one_of(
        one.map(lambda i: [i]),
        # a stretch of real text: whole characters whose bytes span several tokens
        st.integers(0, len(p["text"]) - 1).flatmap(
            lambda a: st.integers(a + 1, min(len(p["text"]), a + 12)).map(lambda b: p["text"][a:b])),
    )
    return st.lists(runs, min_size=1, max_size=25).map(lambda rs: [i for r in rs for i in r])


def deltas_of(ids, sizes):
    out, k, j = [], 0, 0
    while k < len(ids):
        n = sizes[j % len(sizes)]
        out.append(ids[k:k + n])
        k, j = k + n, j + 1
    return out


def decode_all(tok, deltas, backend, skip, *, table: bool, start=None):
    if table:
        dec = ReasoningStreamDecoder(get_parser("deepseek_r1", tok, backend=backend).begin(starts_in_reasoning=start),
                                     tok, skip_special_tokens=skip)
    else:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(decode_mod._TokenizerFacts, "stream_args",
                       lambda self, skip: (self.fast, skip, self.decode(skip), None))
            dec = ReasoningStreamDecoder(
                get_parser("deepseek_r1", tok, backend=backend).begin(starts_in_reasoning=start),
                tok, skip_special_tokens=skip)
        assert dec._r._texts is None and dec._c._texts is None
    out = [tuple(dec.push(d)) for d in deltas]
    out.append(tuple(dec.finish()))
    return out


@slow_ok
@given(ids=ids_strategy(), sizes=st.lists(st.sampled_from([1, 1, 1, 1, 2, 3]), min_size=1, max_size=8),
       skip=st.booleans(), start=st.sampled_from([None, True, False]))
def test_table_equals_decodestream_delta_by_delta(backend, ids, sizes, skip, start):
    tok = deepseek_tokenizer()
    deltas = deltas_of(ids, sizes)
    assert decode_all(tok, deltas, backend, skip, table=True, start=start) \
        == decode_all(tok, deltas, backend, skip, table=False, start=start)


@pytest.mark.compiled
@slow_ok
@given(ids=ids_strategy(), skip=st.booleans())
def test_compiled_push_with_table_equals_python_push_without(ids, skip):
    tok = deepseek_tokenizer()
    deltas = [[i] for i in ids]
    assert decode_all(tok, deltas, "cython", skip, table=True) == decode_all(tok, deltas, "python", skip, table=False)


def test_table_entries(backend):
    tok = Tokenizer.from_str(deepseek_tokenizer().to_str())  # a table of its own, empty
    facts = _facts(tok)
    assert facts.byte_level
    for skip in (True, False):
        texts = facts.token_texts(skip)
        assert texts is facts.token_texts(skip)  # one table per tokenizer and setting
        assert len(texts) == tok.get_vocab_size(with_added_tokens=True)
        assert set(texts) == {decode_mod._UNSEEN}
    hello = tok.encode("Hello", add_special_tokens=False).ids
    frag = pools()["fragments"][0]
    eos = tok.token_to_id("<｜end▁of▁sentence｜>")
    for d in (hello, [frag], [eos]):  # each first met with nothing pending: learned
        dec = ReasoningStreamDecoder(get_parser("deepseek_r1", tok, backend=backend).begin(starts_in_reasoning=False),
                                     tok)
        for i in d:
            dec.push([i])
    skip_table, keep_table = facts.token_texts(True), facts.token_texts(False)
    assert [skip_table[i] for i in hello] == [tok.decode([i]) for i in hello]
    assert skip_table[frag] is None  # no whole character of its own
    assert skip_table[eos] is None  # a skipped special token adds nothing: DecodeStream's path
    assert keep_table[eos] is decode_mod._UNSEEN  # each setting learns its own
    decode_mod._learn(keep_table, tok, False, eos)
    assert keep_table[eos] == "<｜end▁of▁sentence｜>"


def metaspace_tokenizer() -> Tokenizer:
    # A SentencePiece-style decoder (the leading space of the first token is
    # dropped): decoding is not concatenation, so there is no table.
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.add_tokens(["<think>", "</think>", "▁hello", "▁world"])
    return tok


@pytest.mark.filterwarnings("ignore::reasoning_core.errors.ReasoningCoreWarning")  # a vocabulary without chat markers
def test_no_table_unless_byte_level(backend):
    tok = metaspace_tokenizer()
    assert _facts(tok).token_texts(True) is None
    dec = ReasoningStreamDecoder(get_parser("deepseek_r1", tok, backend=backend).begin(starts_in_reasoning=False), tok)
    assert dec._c._texts is None
    # a small byte-level BPE has one
    bl = family_tokenizer("deepseek_r1")
    assert _facts(bl).token_texts(True) is not None


def test_tokenizer_that_grew_after_its_table(backend):
    # Ids added after the table was made are past its end: DecodeStream's path.
    tok = Tokenizer.from_str(family_tokenizer("deepseek_r1").to_str())
    first = ReasoningStreamDecoder(get_parser("deepseek_r1", tok, backend=backend).begin(starts_in_reasoning=False),
                                   tok)
    first.push(tok.encode("hello", add_special_tokens=False).ids)
    size = len(_facts(tok).token_texts(True))
    tok.add_tokens(["ZZ-new-token"])
    new = tok.token_to_id("ZZ-new-token")
    assert new >= size
    dec = ReasoningStreamDecoder(get_parser("deepseek_r1", tok, backend=backend).begin(starts_in_reasoning=False), tok)
    ids = tok.encode("a ZZ-new-token b", add_special_tokens=False).ids
    assert new in ids
    got = "".join(dec.push([i]).content for i in ids) + dec.finish().content
    assert got == tok.decode(ids)
