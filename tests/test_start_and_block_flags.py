"""Per-request start states and block flags, on both backends.

``starts_in_reasoning="inside"`` continues a block the prompt opened (every
family; Gemma 4 and Inkling included, which otherwise wait for their start),
and the text parser's ``start_seen``/``end_seen`` say whether the output
opened a block and whether a block ended: what a serving adapter needs to
tell "no reasoning" from "empty reasoning".
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reasoning_core as rc
from reasoning_core.families import FAMILIES
from reasoning_core.text import text_parser
from tests.conftest import COMPILED
from tests.vocab import encode, family_tokenizer

BACKENDS = ("cython", "python") if COMPILED else ("python",)
AWAITING_FAMILIES = sorted(n for n, f in FAMILIES.items() if f.awaiting_start)


def _token_parser(name, backend):
    return rc.get_parser(name, family_tokenizer(name), backend=backend)


def test_awaiting_families_exist():
    assert AWAITING_FAMILIES  # the cases below must not be vacuous


@pytest.mark.parametrize("name", AWAITING_FAMILIES)
def test_inside_continues_the_block_where_true_waits_for_the_start(name, backend):
    fam = FAMILIES[name]
    tok = family_tokenizer(name)
    ids = encode(tok, "plan it" + fam.end[0] + "the answer")
    end_id = encode(tok, fam.end[0])
    p = _token_parser(name, backend)

    waiting = p.begin(starts_in_reasoning=True).split(ids)
    assert len(waiting.reasoning_ids) == 0  # nothing before its start is reasoning
    assert not p.is_reasoning

    inside = p.begin(starts_in_reasoning="inside").split(ids)
    n_reason = len(ids) - len(encode(tok, "the answer")) - len(end_id)
    assert list(inside.reasoning_ids) == ids[:n_reason]
    assert list(inside.content_ids) == ids[n_reason + len(end_id):]
    assert not p.is_reasoning

    tp = text_parser(name, starts_in_reasoning="inside", backend=backend)
    assert tp.parse("plan it" + fam.end[0] + "the answer") == ("plan it", "the answer")
    tp_true = text_parser(name, starts_in_reasoning=True, backend=backend)
    assert tp_true.parse("plan it" + fam.end[0] + "the answer")[0] == ""


@pytest.mark.parametrize("name", sorted(n for n in FAMILIES if FAMILIES[n].start and not FAMILIES[n].awaiting_start))
def test_inside_is_true_for_families_that_do_not_wait(name, backend):
    fam = FAMILIES[name]
    tok = family_tokenizer(name)
    text = "a b" + fam.end[0] + " c" + fam.start[0] + "d" + fam.end[0] + "e"
    ids = encode(tok, text)
    p = _token_parser(name, backend)
    a = p.begin(starts_in_reasoning=True).split(ids)
    a_fin = p.finish()
    b = p.begin(starts_in_reasoning="inside").split(ids)
    b_fin = p.finish()
    assert (a.reasoning_ids, a.content_ids, a_fin.reasoning_ids, a_fin.content_ids) == \
        (b.reasoning_ids, b.content_ids, b_fin.reasoning_ids, b_fin.content_ids)
    assert text_parser(name, starts_in_reasoning=True, backend=backend).parse(text) == \
        text_parser(name, starts_in_reasoning="inside", backend=backend).parse(text)


def test_inside_keeps_a_label_the_prompt_already_wrote(backend):
    # Gemma 4: the prompt ended in "<|channel>thought\n"; a block the output
    # opens itself still has its label stripped.
    text = "thought about it<channel|>done<|channel>thought\nagain<channel|>"
    tp = text_parser("gemma4", starts_in_reasoning="inside", backend=backend)
    assert tp.parse(text) == ("thought about itagain", "done")
    r, c = tp.feed(text)
    r2, c2 = tp.finish()
    assert (r + r2, c + c2) == ("thought about itagain", "done")
    tp.reset()  # a new text starts inside again, label not expected
    r, c = tp.feed("thought x<channel|>y")
    r2, c2 = tp.finish()
    assert (r + r2, c + c2) == ("thought x", "y")


@pytest.mark.parametrize("bad, exc", [("yes", ValueError), ("INSIDE", ValueError), (1, TypeError),
                                      (0.0, TypeError), (b"inside", TypeError)])
def test_bad_start_values_are_refused_by_name(bad, exc, backend):
    with pytest.raises(exc, match="starts_in_reasoning"):
        text_parser("qwen3", starts_in_reasoning=bad, backend=backend)
    p = _token_parser("qwen3", backend)
    with pytest.raises(exc, match="starts_in_reasoning"):
        p.begin(starts_in_reasoning=bad)


# -- block flags ----------------------------------------------------------------

CASES = [
    # (family, starts_in_reasoning, text, start_seen, end_seen)
    ("qwen3", False, "just an answer", False, False),
    ("qwen3", False, "<think>plan</think>answer", True, True),
    ("qwen3", False, "<think></think>answer", True, True),
    ("qwen3", False, "<think>still thinking", True, False),
    ("deepseek_r1", True, "plan</think>answer", False, True),
    ("deepseek_r1", True, "still thinking", False, False),
    ("deepseek_r1", True, "<think>plan</think>answer", True, True),
    ("gemma4", "inside", "plan<channel|>answer", False, True),
    ("gemma4", True, "answer only", False, False),
    ("gemma4", True, "<|channel>thought\nplan<channel|>answer", True, True),
]


@pytest.mark.parametrize("name, start, text, opened, ended", CASES)
def test_block_flags(name, start, text, opened, ended, backend):
    tp = text_parser(name, starts_in_reasoning=start, backend=backend)
    tp.feed(text)
    tp.finish()
    assert (tp.start_seen, tp.end_seen) == (opened, ended)
    tp.reset()
    assert (tp.start_seen, tp.end_seen) == (False, False)


_PIECES = ["<think>", "</think>", "<", "</", "think>", "a", " b", "\n", "é", "<tool_call>"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14), st.sampled_from([False, True, "inside"]),
       st.randoms(use_true_random=False))
def test_block_flags_do_not_depend_on_chunking(pieces, start, rnd):
    text = "".join(pieces)
    flags = set()
    outputs = set()
    for backend in BACKENDS:
        for _ in range(3):
            tp = text_parser("qwen3", starts_in_reasoning=start, backend=backend)
            cuts = sorted(rnd.sample(range(len(text) + 1), min(len(text) + 1, rnd.randint(0, 4))))
            r = c = ""
            prev = 0
            for cut in cuts + [len(text)]:
                dr, dc = tp.feed(text[prev:cut])
                r, c, prev = r + dr, c + dc, cut
            dr, dc = tp.finish()
            outputs.add((r + dr, c + dc))
            flags.add((tp.start_seen, tp.end_seen))
    assert len(flags) == 1 and len(outputs) == 1
    opened, ended = flags.pop()
    # A consumed start is a "<think>" missing from both outputs.
    (reasoning, content), = outputs
    assert opened == (reasoning.count("<think>") + content.count("<think>") < text.count("<think>"))

