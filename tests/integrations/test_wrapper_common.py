"""Helpers shared by the engine wrappers (``reasoning_core.integrations._common``)."""
from __future__ import annotations

import itertools
import random

import pytest

from reasoning_core.integrations._common import ArgHold, CloserStripper, KeptChunks

CLOSER = "</c>"


def _texts():
    # every string of up to 6 characters over the closer's letters and one other
    for n in range(7):
        yield from ("".join(t) for t in itertools.product("</c>x", repeat=n))


def test_same_as_one_replace_however_the_text_is_split():
    for text in _texts():
        want = text.replace(CLOSER, "")
        for cut in range(len(text) + 1):
            s = CloserStripper(CLOSER)
            got = s.feed(text[:cut]) + s.feed(text[cut:]) + s.feed("", final=True)
            assert got == want, (text, cut)
        s = CloserStripper(CLOSER)
        assert "".join(s.feed(ch) for ch in text) + s.feed("", final=True) == want, text


def test_holds_only_what_could_start_the_closer():
    s = CloserStripper(CLOSER)
    assert s.feed("ab</") == "ab" and s.held == "</"
    assert s.feed("x") == "</x" and s.held == ""
    assert s.feed("</c", final=True) == "</c" and s.held == ""


@pytest.mark.parametrize("bad", ["", None, 3])
def test_bad_closer(bad):
    with pytest.raises(ValueError):
        CloserStripper(bad)


# ---------------------------------------------------------------------------- BlockReader

OPEN, CLOSE = "<b>", "</b>"


class _Sink:
    """Records what a BlockReader hands over: text (merged), whole blocks, and
    the open block whenever it is offered as a complete JSON body."""

    def __init__(self, reader):
        self.reader = reader
        self.json_offers = 0

    def _block_text(self, piece, out):
        assert piece
        if out and out[-1][0] == "t":
            out[-1] = ("t", out[-1][1] + piece)
        else:
            out.append(("t", piece))

    def _block_done(self, block, out, final):
        out.append(("end" if final else "b", block))

    def _block_open(self, out):
        if self.reader.json_block() is not None:
            self.json_offers += 1


def _reference(text: str) -> list:
    """The same split read over the whole text at once."""
    out, pos = [], 0
    while True:
        i = text.find(OPEN, pos)
        seg = text[pos:] if i < 0 else text[pos:i]
        seg = seg.replace(CLOSE, "")
        if seg:
            out.append(("t", seg))
        if i < 0:
            return out
        j = text.find(CLOSE, i + len(OPEN))
        if j < 0:
            out.append(("end", text[i:]))
            return out
        out.append(("b", text[i:j + len(CLOSE)]))
        pos = j + len(CLOSE)


def _merged(events: list) -> list:
    out: list = []
    for kind, s in events:
        if kind == "t" and out and out[-1][0] == "t":
            out[-1] = ("t", out[-1][1] + s)
        else:
            out.append((kind, s))
    return out


def _read(pieces: list[str]):
    from reasoning_core.integrations._common import BlockReader

    r = BlockReader(OPEN, CLOSE, json_body=True)
    sink, out = _Sink(r), []
    for p in pieces:
        r.feed(p, sink, out)
    r.finish(sink, out)
    return _merged(out), sink.json_offers


def _block_texts():
    parts = (OPEN, CLOSE, "<", "</", "b>", "x", "{", "}", " ")
    for n in range(5):
        for t in itertools.product(parts, repeat=n):
            yield "".join(t)


def test_block_reader_same_split_however_the_text_is_cut():
    for text in _block_texts():
        want = _reference(text)
        assert _read([text])[0] == want, text
        assert _read(list(text))[0] == want, text
        for cut in range(1, len(text)):
            assert _read([text[:cut], text[cut:]])[0] == want, (text, cut)


def _json_moments(pieces: list[str]) -> int:
    # after each piece: an open block whose body is a complete JSON object, the piece ending in its "}"
    import json

    n, text = 0, ""
    for p in pieces:
        text += p
        i = text.rfind(OPEN)
        if i < 0 or CLOSE in text[i:] or not p.rstrip().endswith("}"):
            continue
        body = text[i + len(OPEN):].strip()
        try:
            ok = body.startswith("{") and isinstance(json.loads(body), dict)
        except ValueError:
            ok = False
        n += ok
    return n


@pytest.mark.parametrize("text", [OPEN + ' {"a": {"b": "}"}} ' + CLOSE, OPEN + '{"a": 1} x}' + CLOSE,
                                  "t " + OPEN + '\n{"k": [1, {}]}\n' + CLOSE + OPEN + "{}" + CLOSE,
                                  OPEN + "x {} }" + CLOSE])
def test_block_reader_offers_a_json_body_when_its_object_is_complete(text):
    for pieces in [[text], list(text)] + [[text[:c], text[c:]] for c in range(1, len(text))]:
        assert _read(pieces)[1] == _json_moments(pieces), pieces


def test_block_reader_flush_and_held_text():
    from reasoning_core.integrations._common import BlockReader

    r, out = BlockReader(OPEN, CLOSE), []
    sink = _Sink(r)
    r.feed("a </", sink, out)
    assert out == [("t", "a ")] and r.held_text() == "</"
    assert r.flush_text() == "</" and r.flush_text() == ""
    r.feed("<", sink, out)
    assert r.held_text() == "<"
    r.feed("b>xy", sink, out)
    assert r.held_text() == "<b>xy" and r.flush_text() == ""  # a block is open: finish releases it
    r.finish(sink, out)
    assert out[-1] == ("end", "<b>xy")
    with pytest.raises(ValueError):
        BlockReader("", CLOSE)


HOLD_CLOSERS = ("</p>", "</fn>")


def _ends_in(seen: str, n: int) -> bool:
    """Whether a closer ends in the last ``n`` characters of ``seen``."""
    return any(c in seen[max(0, len(seen) - n - len(c) + 1):] for c in HOLD_CLOSERS)


def test_arg_hold_keeps_what_cannot_complete_a_closer_and_reads_each_character_once():
    rng = random.Random(7)
    bits = ["</p>", "</fn>", "</", "p", "fn", ">", "x", "ab\n", "</p", "n>", "/"]
    for _ in range(3000):
        text = "".join(rng.choice(bits) for _ in range(rng.randint(0, 30)))
        hold, seen, read = ArgHold(HOLD_CLOSERS), "", []
        i = 0
        while i < len(text):
            n = rng.randint(1, 6)
            ch, i = text[i:i + n], i + n
            seen += ch
            before = "".join(read)[-4:]  # (the longest closer's length, less one)
            if rng.random() < 0.1:  # now and then, a delta read whatever it holds
                got, at_close = hold.take_read(ch)
                read.append(got)
                assert at_close == any(c in before + got for c in HOLD_CLOSERS), (text, seen)
                continue
            if hold.keeps(ch):
                assert not _ends_in(seen, len(ch)), (text, seen)
                continue
            assert ">" in ch
            got, at_close = hold.take_read(ch)
            read.append(got)
            assert at_close and got.endswith(ch) and any(c in before + got for c in HOLD_CLOSERS)
            if not _ends_in(seen, len(ch)):  # read early: only when a closer lies in what was read just before
                assert any(c in seen[-len(ch) - 4:] for c in HOLD_CLOSERS), (text, seen)
        read.append(hold.take_read("")[0])
        assert "".join(read) == text and not hold.held()


def test_arg_hold_blocks_and_closers_across_them():
    hold = ArgHold(HOLD_CLOSERS)
    for _ in range(600):
        assert hold.keeps("x")
    assert hold.blocks and hold.keeps("</") and hold.keeps("f") and not hold.keeps("n>")
    got, at_close = hold.take_read("n>")
    assert got == "x" * 600 + "</fn>" and at_close and not hold.held()
    assert hold.take_read("tail") == ("tail", False)


@pytest.mark.parametrize("bad", [(), ("</p>", "</q"), ["</p>", "x"]])
def test_arg_hold_bad_closers(bad):
    with pytest.raises(ValueError):
        ArgHold(bad)


def test_kept_chunks_keep_what_lacks_every_stop_and_give_it_back_in_order():
    rng = random.Random(3)
    bits = ["a", "}", "]", "{", "[", "é", "", "\\"]
    kept = KeptChunks("}]")
    want, n = [], 0
    for _ in range(2000):
        ch = "".join(rng.choice(bits) for _ in range(rng.randint(0, 3)))
        if kept.keep_plain(ch):
            assert "}" not in ch and "]" not in ch
            want.append(ch)
            n += 1
        else:
            assert "}" in ch or "]" in ch
            assert kept.take(ch) == "".join(want) + ch and not kept.held()
            want = []
        assert len(kept.pend) < 256 and "".join(kept.blocks) + "".join(kept.pend) == "".join(want)
    assert n > 300
    kept.take("")
    for _ in range(600):
        kept.keep_plain("x")
    assert len(kept.blocks) == 2 and kept.held() and kept.take("") == "x" * 600 and not kept.held()
    kept.keep_plain("y")
    kept.reset()
    assert not kept.held() and kept.take("z") == "z"
    # an ArgHold is one: its stop is the character its closers end with
    assert isinstance(ArgHold(HOLD_CLOSERS), KeptChunks) and ArgHold(HOLD_CLOSERS).stops == ">"


@pytest.mark.parametrize("bad", ["", None, b"}", ["}"]])
def test_kept_chunks_bad_stops(bad):
    with pytest.raises(ValueError, match="KeptChunks"):
        KeptChunks(bad)


def test_tokenizer_lru_keeps_the_last_pairs_used_by_identity():
    import gc
    import weakref

    from reasoning_core.integrations._common import TokenizerLRU

    class Tok:
        def __eq__(self, other):  # equal to every other one: the cache goes by identity
            return True

        __hash__ = None

    cache = TokenizerLRU(2)
    a, b, c = Tok(), Tok(), Tok()
    assert cache.get(a, "k") is None and cache.get(a, "k", 0) == 0
    assert cache.put(a, "k", 1) == 1 and cache.get(a, "k") == 1
    assert cache.get(a, "other") is None and cache.get(b, "k") is None
    cache.put(b, "k", 2)
    assert cache.get(a, "k") == 1  # a is now the one used last
    cache.put(c, "k", 3)  # b goes
    assert len(cache) == 2 and cache.get(b, "k") is None and cache.get(a, "k") == 1 and cache.get(c, "k") == 3
    ref = weakref.ref(b)
    del b
    gc.collect()
    assert ref() is None  # an evicted tokenizer is let go
    cache.clear()
    assert len(cache) == 0 and cache.get(a, "k") is None
