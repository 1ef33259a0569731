"""Hardening of the decoded stream and the text parser's buffer (issue items 4, 5, 21, 22).

Every test runs on both engine backends; the decoder tests also run through
the generic detokenizer (a tokenizer seen only through ``decode(ids)``).
"""
from __future__ import annotations

import array
import functools
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasoning_core import ReasoningStreamDecoder, get_parser, text_parser
from reasoning_core.decode import MAX_PENDING
from reasoning_core.families import FAMILIES
from tests.vocab import CORPUS, decode, deepseek_tokenizer, family_tokenizer, qwen3_tokenizer

fixture_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
WRAP = pytest.mark.parametrize("wrap", [False, True], ids=["decodestream", "window"])
EOS = 1  # <｜end▁of▁sentence｜> in the DeepSeek vocabulary
BOS = 0


class DecodeOnly:
    """A tokenizer seen only through ``decode(ids)``: forces the generic detokenizer."""

    def __init__(self, tok) -> None:
        self._tok = tok

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        return self._tok.decode(list(ids), skip_special_tokens=skip_special_tokens)


def decoder(name, tok, backend, *, wrap=False, **kw) -> ReasoningStreamDecoder:
    parser = get_parser(name, tok, backend=backend).begin()
    return ReasoningStreamDecoder(parser, DecodeOnly(tok) if wrap else tok, **kw)


def run(name, tok, ids, bounds, backend, *, wrap=False, **kw):
    dec = decoder(name, tok, backend, wrap=wrap, **kw)
    deltas = [dec.push(ids[a:b]) for a, b in zip(bounds, bounds[1:])]
    deltas.append(dec.finish())
    return deltas


def joined(deltas) -> tuple[str, str]:
    return "".join(d.reasoning for d in deltas), "".join(d.content for d in deltas)


def chunked(n: int, size: int, offset: int = 0) -> list[int]:
    """Bounds of pushes of ``size`` tokens, the first one ``offset`` tokens long."""
    bounds = [0] + list(range(offset or size, n, size))
    return bounds + [n] if bounds[-1] != n else bounds


# -- item 4: no U+FFFD for valid text, whatever the push sizes --------------------------------------

MULTIBYTE = "<think>数学 🧠 𝔘𝔘𝔘 ok 答え🙂 数学🎉 👨‍👩‍👧</think>結果 🎉 𝔘𝔘done 👨‍👩‍👧 ข้อ"


@WRAP
@pytest.mark.parametrize("size", [9, 10, 12, 17])
def test_i11_04_long_push_ending_inside_a_character(backend, wrap, size):
    tok = deepseek_tokenizer()
    ids = tok.encode(MULTIBYTE, add_special_tokens=False).ids
    bounds = chunked(len(ids), size)
    # The pushes really end inside characters.
    assert any(decode(tok, ids[:b]).endswith("\ufffd") for b in bounds[1:-1])
    deltas = run("deepseek_r1", tok, ids, bounds, backend, wrap=wrap)
    assert not any("\ufffd" in d.reasoning + d.content for d in deltas)
    assert joined(deltas) == text_parser("deepseek_r1", backend=backend).parse(MULTIBYTE)


@WRAP
def test_i11_04_pushes_in_a_row_ending_inside_characters(backend, wrap):
    # 𝔘 is three tokens here; pushes of three shifted by one end inside
    # every character, so undecodable tokens pile up over several pushes.
    tok = deepseek_tokenizer()
    text = "<think>" + "𝔘" * 8 + "</think>" + "𝔘" * 8
    ids = tok.encode(text, add_special_tokens=False).ids
    bounds = [0, 2] + list(range(2, len(ids), 3))[1:] + [len(ids)]
    assert all(decode(tok, ids[:b]).endswith("\ufffd") for b in bounds[2:6])
    deltas = run("deepseek_r1", tok, ids, bounds, backend, wrap=wrap)
    assert not any("\ufffd" in d.reasoning + d.content for d in deltas)
    assert joined(deltas) == ("𝔘" * 8, "𝔘" * 8)
    # Text is not hoarded: each push emits what it completed.
    assert sum(1 for d in deltas if d) >= 8


@WRAP
def test_i11_04_valid_prefix_of_a_long_push_goes_out_at_once(backend, wrap):
    tok = deepseek_tokenizer()
    ids = tok.encode("<think>abc 数学 🧠", add_special_tokens=False).ids
    dec = decoder("deepseek_r1", tok, backend, wrap=wrap)
    # Everything but the emoji's last token: the complete characters go out now.
    assert dec.push(ids[:-1]).reasoning == "abc 数学"
    assert dec.push(ids[-1:]).reasoning == " 🧠"  # the space is in the emoji's first token


def _lone_bytes(tok) -> list[int]:
    return [i for i in range(300) if decode(tok, [i]) == "\ufffd"][:8]


MB_PIECES = ["数学", "答え", "🧠", "🙂", "🎉", "𝔘", "👨‍👩‍👧", "ข้อ", "ñ", "é", " ", "\n", "ok", "The answer", "42",
             "<think>", "</think>"]


@st.composite
def deepseek_streams(draw):
    tok = deepseek_tokenizer()
    pieces = draw(st.lists(st.sampled_from(MB_PIECES), min_size=1, max_size=24))
    ids = tok.encode("".join(pieces), add_special_tokens=False).ids
    if draw(st.booleans()):  # an end-of-sentence token, as a server's stream ends
        ids = ids + [EOS]
    if draw(st.integers(0, 4)) == 0:  # now and then, bytes that never form a character
        lone = _lone_bytes(tok)
        for _ in range(draw(st.integers(1, 12))):
            ids.insert(draw(st.integers(0, len(ids))), draw(st.sampled_from(lone)))
    cuts = draw(st.lists(st.integers(0, len(ids)), max_size=12))
    return ids, [0] + sorted(cuts) + [len(ids)]


@fixture_ok
@given(case=deepseek_streams(), wrap=st.booleans())
def test_i11_04_random_chunkings_of_multibyte_text(backend, case, wrap):
    tok = deepseek_tokenizer()
    ids, bounds = case
    full = tok.decode(ids, skip_special_tokens=True)
    deltas = run("deepseek_r1", tok, ids, bounds, backend, wrap=wrap)
    assert joined(deltas) == text_parser("deepseek_r1", backend=backend).parse(full)
    if "\ufffd" not in full:
        assert not any("\ufffd" in d.reasoning + d.content for d in deltas)
    for d in deltas:  # whole characters only
        d.reasoning.encode("utf-8"), d.content.encode("utf-8")


@functools.lru_cache(maxsize=1)
def byte_fallback_tokenizer():
    """A Llama-style vocabulary: Metaspace words, byte-fallback tokens, a Strip decoder."""
    from tokenizers import Tokenizer, decoders, models, normalizers, trainers

    tok = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"), normalizers.Replace(" ", "\u2581")])
    tok.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(" ", 1, 0)])
    tok.train_from_iterator(CORPUS * 4, trainers.BpeTrainer(
        vocab_size=400, special_tokens=["<unk>", "<s>", "</s>", "[THINK]", "[/THINK]"], show_progress=False))
    # The 256 byte tokens are ordinary vocabulary entries, as in Llama's.
    spec = json.loads(tok.to_str())
    vocab = spec["model"]["vocab"]
    for i in range(256):
        vocab.setdefault(f"<0x{i:02X}>", len(vocab))
    return Tokenizer.from_str(json.dumps(spec))


@fixture_ok
# (Without a literal U+FFFD: a byte-fallback decoder turns a whole run of
# byte tokens into U+FFFDs while one of its characters is unfinished, so a
# literal one inside such a run cannot be told from broken bytes.)
@given(pieces=st.lists(st.sampled_from(MB_PIECES[:-2]), min_size=1, max_size=16),
       cuts=st.lists(st.integers(0, 80), max_size=10), wrap=st.booleans())
def test_i11_04_byte_fallback_vocabulary(backend, pieces, cuts, wrap):
    # Byte-fallback decoders show an unfinished character as one U+FFFD per
    # byte, so a run of such bytes must never be mistaken for invalid ones.
    tok = byte_fallback_tokenizer()
    ids = tok.encode("".join(pieces)).ids
    bounds = [0] + sorted(min(c, len(ids)) for c in cuts) + [len(ids)]
    deltas = run("mistral", tok, ids, bounds, backend, wrap=wrap)
    assert joined(deltas) == ("", tok.decode(ids))


@WRAP
def test_i11_04_invalid_bytes_still_released(backend, wrap):
    # The fix must not turn the decoder into a hoarder: lone continuation
    # bytes come out as U+FFFD within a few tokens, in any push size.
    tok = deepseek_tokenizer()
    lone = _lone_bytes(tok)[0]
    head = tok.encode("<think>ok", add_special_tokens=False).ids
    ids = head + [lone] * 30 + tok.encode(" 数学", add_special_tokens=False).ids
    for size in (1, 4, 13):
        bounds = chunked(len(ids), size)
        deltas = run("deepseek_r1", tok, ids, bounds, backend, wrap=wrap)
        assert joined(deltas) == ("ok" + "\ufffd" * 30 + " 数学", "")
        emitted = 0
        for b, d in zip(bounds[1:], deltas):
            emitted += d.reasoning.count("\ufffd")
            pushed = min(max(b - len(head), 0), 30)
            assert pushed - emitted <= MAX_PENDING  # held back at most a few tokens


# -- item 5: a rejected push changes nothing -------------------------------------------------------

BAD_TEXT = "<think>Let me think: 数学 🧠.</think>The answer is 42 🎉."


@pytest.mark.parametrize("where", ["decodestream", "window", "qwen_generic"])
def test_i11_05_rejected_push_changes_nothing(backend, where):
    if where == "qwen_generic":  # the real Qwen3 vocabulary, no tokenizers.Tokenizer behind it
        tok, name, end, size = qwen3_tokenizer(), "qwen3", 151668, 151669
        ids = tok.encode(BAD_TEXT)
    else:
        tok, name, end, size = deepseek_tokenizer(), "deepseek_r1", 128822, 129280
        ids = tok.encode(BAD_TEXT, add_special_tokens=False).ids
    wrap = where == "window"
    # Qwen's decode() drops every id from its first special one on when
    # skipping special tokens; keeping them, it refuses unknown ids (KeyError).
    kw = {"skip_special_tokens": False} if where == "qwen_generic" else {}
    cut = ids.index(end)
    expected = joined(run(name, tok, ids, [0, 3, cut, len(ids)], backend, wrap=wrap, **kw))
    assert expected[0] and expected[1]
    # A tokenizer seen only through decode() tells its size by refusing an id;
    # DeepSeek's decode() quietly skips ids past its vocabulary.
    sizes = () if where == "window" else (size, size + 7)
    for bad in (-1, 2**32, 2**63, -(2**70), *sizes):
        dec = decoder(name, tok, backend, wrap=wrap, **kw)
        deltas = [dec.push(ids[:3]), dec.push(ids[3:cut])]
        # The delimiter first, then the bad id: nothing of it may be consumed.
        with pytest.raises(ValueError, match=rf"{bad}\b.*position 1"):
            dec.push([ids[cut], bad])
        with pytest.raises(ValueError, match=rf"{bad}\b.*position 0"):
            dec.push([bad])
        assert dec.parser.is_reasoning
        deltas += [dec.push(ids[cut:]), dec.finish()]
        assert joined(deltas) == expected, bad


@WRAP
@pytest.mark.parametrize("bad", [[128822, 1.5], [128822, None], [128822, "a"], "abc", None,
                                 np.array([128822, 1.5]), array.array("d", [1.0])])
def test_i11_05_non_integers_raise_type_error_before_consuming(backend, wrap, bad):
    tok = deepseek_tokenizer()
    ids = tok.encode(BAD_TEXT, add_special_tokens=False).ids
    cut = ids.index(128822)
    expected = joined(run("deepseek_r1", tok, ids, [0, cut, len(ids)], backend, wrap=wrap))
    dec = decoder("deepseek_r1", tok, backend, wrap=wrap)
    deltas = [dec.push(ids[:cut])]
    with pytest.raises(TypeError):
        dec.push(bad)
    deltas += [dec.push(ids[cut:]), dec.finish()]
    assert joined(deltas) == expected


def test_i11_05_bad_id_in_numpy_and_array_input(backend):
    tok = deepseek_tokenizer()
    dec = decoder("deepseek_r1", tok, backend)
    for bad in (np.array([5, 129280], dtype=np.int64), np.array([5, -1], dtype=np.int32),
                array.array("q", [5, 6, 2**40]), (5, -3)):
        with pytest.raises(ValueError, match="position"):
            dec.push(bad)
    assert dec.push(np.array([5, 6], dtype=np.uint16)).reasoning == decode(tok, [5, 6])
    assert dec.push(array.array("i", [7])).reasoning == decode(tok, [7])


def test_i11_05_held_sequence_delimiter_survives_a_rejected_push(backend):
    # Granite's markers are several tokens: a rejected push must not disturb a held prefix.
    tok = family_tokenizer("granite")
    text = "Here is my thought process: add.\nHere is my response: 42."
    ids = tok.encode(text).ids
    expected = joined(run("granite", tok, ids, list(range(len(ids) + 1)), backend))
    marker = tok.encode("\nHere is my response:").ids
    start = next(i for i in range(len(ids)) if ids[i:i + len(marker)] == marker) + 2
    dec = decoder("granite", tok, backend)
    deltas = [dec.push([t]) for t in ids[:start]]
    assert dec.parser.held_ids  # a partial marker is held
    with pytest.raises(ValueError):
        dec.push(ids[start:start + 2] + [tok.get_vocab_size()])
    deltas += [dec.push([t]) for t in ids[start:]] + [dec.finish()]
    assert joined(deltas) == expected == (" add.\n", " 42.")


def test_i11_05_tokenizer_grown_after_a_decoder_was_made(backend):
    # Vocabulary sizes are cached per tokenizer; one that grows is re-measured
    # before an id is refused.
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(family_tokenizer("qwen3").to_str())
    decoder("qwen3", tok, backend)  # measures and caches the size
    size = tok.get_vocab_size(with_added_tokens=True)
    tok.add_tokens(["<new_token>"])
    assert tok.token_to_id("<new_token>") == size
    dec = decoder("qwen3", tok, backend)
    assert dec.push([size]).content == "<new_token>"
    with pytest.raises(ValueError, match=rf"{size + 1}\b.*position 0"):
        dec.push([size + 1])


# -- item 21: special tokens are skipped by default ----------------------------------------------------

@WRAP
def test_i11_21_special_tokens_skipped_by_default(backend, wrap):
    tok = deepseek_tokenizer()
    ids = [BOS] + tok.encode("<think>Hmm 数学.</think>Done 🎉", add_special_tokens=False).ids + [EOS]
    for bounds in ([0, len(ids)], list(range(len(ids) + 1))):
        deltas = run("deepseek_r1", tok, ids, bounds, backend, wrap=wrap)
        assert joined(deltas) == ("Hmm 数学.", "Done 🎉")
        kept = run("deepseek_r1", tok, ids, bounds, backend, wrap=wrap, skip_special_tokens=False)
        assert joined(kept) == ("<｜begin▁of▁sentence｜>Hmm 数学.", "Done 🎉<｜end▁of▁sentence｜>")
    # The end-of-sentence id alone, as a server pushes it, sends nothing to the client.
    dec = decoder("deepseek_r1", tok, backend, wrap=wrap)
    dec.push(tok.encode("<think>a</think>b", add_special_tokens=False).ids)
    assert not dec.push([EOS]) and not dec.finish()


@WRAP
def test_i11_21_non_special_added_tokens_are_kept(backend, wrap):
    # DeepSeek's tool-call markers are added tokens but not special: they are
    # content a tool parser needs, and stay.
    tok = deepseek_tokenizer()
    text = "<think>Tool.</think><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f"
    ids = tok.encode(text, add_special_tokens=False).ids + [EOS]
    deltas = run("deepseek_v3", tok, ids, list(range(len(ids) + 1)), backend, wrap=wrap)
    assert joined(deltas) == ("Tool.", text.split("</think>")[1])


def test_i11_21_skip_special_tokens_must_be_bool(backend):
    tok = deepseek_tokenizer()
    with pytest.raises(TypeError, match="skip_special_tokens"):
        decoder("deepseek_r1", tok, backend, skip_special_tokens="yes")


# -- item 22: max_buffer below the longest delimiter is refused -----------------------------------------

def test_i11_22_max_buffer_below_longest_delimiter_rejected(backend):
    longest = len("</think>")
    with pytest.raises(ValueError, match=rf"at least {longest}\b"):
        text_parser("deepseek_r1", max_buffer=longest - 1, backend=backend)
    with pytest.raises(ValueError, match=r"at least 8\b"):
        text_parser("deepseek_r1", max_buffer=3, backend=backend)
    p = text_parser("deepseek_r1", max_buffer=longest, backend=backend)
    outs = [p.feed("abc</th"), p.feed("ink>answer"), p.finish()]
    assert ("".join(r for r, _ in outs), "".join(c for _, c in outs)) == ("abc", "answer")


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_i11_22_minimum_max_buffer_never_loses_a_delimiter(backend, name):
    minimum = max(text_parser(name, backend=backend).max_hold, 1)
    if minimum > 1:
        with pytest.raises(ValueError, match=rf"at least {minimum}\b"):
            text_parser(name, max_buffer=minimum - 1, backend=backend)
    fam = FAMILIES[name]
    pieces = ["pre "] + [s + " x " for s in (*fam.start, *fam.end, *fam.terminators)] + ["tail"]
    text = "".join(pieces)
    for seeded in (None, True, False):
        p = text_parser(name, max_buffer=minimum, starts_in_reasoning=seeded, backend=backend)
        outs = [p.feed(ch) for ch in text] + [p.finish()]
        assert ("".join(r for r, _ in outs), "".join(c for _, c in outs)) == p.parse(text)
