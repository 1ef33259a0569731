"""Helpers shared by the engine wrappers (``reasoning_core.integrations._common``)."""
from __future__ import annotations

import itertools

import pytest

from reasoning_core.integrations._common import CloserStripper

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
