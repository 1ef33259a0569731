"""Reasoning budgets (reasoning_core.budget): the counting and forcing rules,
one request and a batch, on every family of the table and both backends.

The reference is the parser itself: the count a budget keeps must equal the
reasoning ids a fresh parser reports for the same prompt and output, and a
generation that takes every forced token must close reasoning within the
budget (plus the closing sequence), for every family's end delimiter.
"""
from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import reasoning_core as rc
from reasoning_core._tables import END, START, TERM, ids_of_kind
from reasoning_core.budget import BudgetBatch, ReasoningBudget, boundary_mask
from vocab import FAMILY_SPECIALS, deepseek_tokenizer, encode, family_tokenizer, build_tokenizer

# Families whose reasoning has an end delimiter (passthrough has none).
FAMILIES = [name for name in rc.FAMILIES if name != "passthrough"]
TEXT = "The user asks for the sum of two numbers. Let me think about it step by step. So the answer is 4.\n\n"


def _tokenizer(name: str):
    if name in FAMILY_SPECIALS:
        return family_tokenizer(name)
    return build_tokenizer(())  # plain-text markers (granite, olmo3)


def _parser(name: str, backend: str):
    return rc.get_parser(name, _tokenizer(name), backend=backend)


def _pool(parser, tok) -> list[int]:
    """Ids a random 'model' draws from: the family's markers (whole and broken) and ordinary text."""
    marks = [i for k in (START, END, TERM) for seq in ids_of_kind(parser.tables, k) for i in seq]
    return marks * 3 + encode(tok, TEXT)


def _replay(parser, prompt, ids) -> tuple[int, bool]:
    ref = type(parser)(parser.tables, backend=parser.backend)
    ref.begin(prompt)
    split = ref.split(list(ids))
    return len(split.reasoning_ids), ref.is_reasoning


def _generate(budget_obj, pool, rng, n):
    out = []
    for _ in range(n):
        forced = budget_obj.forced
        tid = forced if forced is not None else rng.choice(pool)
        out.append(tid)
        budget_obj.step([tid])
    return out


@pytest.mark.parametrize("name", FAMILIES)
def test_every_family_closes_within_budget(name, backend):
    parser = _parser(name, backend)
    tok = _tokenizer(name)
    starts = ids_of_kind(parser.tables, START)
    prompt = list(starts[0]) if starts else []
    longest = max(len(s) for s in ids_of_kind(parser.tables, END, TERM, START))
    pool = _pool(parser, tok)
    for budget, closing in ((0, None), (5, None), (12, "Time is up.")):
        b = ReasoningBudget(parser, budget=budget, tokenizer=tok, closing_text=closing)
        b.begin(prompt)
        rng = random.Random(f"{name}-{budget}")
        out = _generate(b, pool, rng, 160)
        count, _ = _replay(parser, prompt, out)
        assert b.reasoning_tokens == count
        closing_len = b.end_sequence.__len__() - len(ids_of_kind(parser.tables, END)[0])
        # Tokens held as a possible delimiter may be released as reasoning all at once.
        assert count <= budget + closing_len + longest
        # The caller's parser was not touched.
        assert parser.state == _parser(name, backend).state


def test_forced_sequence_is_the_vocabulary_end_token(backend):
    tok = deepseek_tokenizer()
    b = ReasoningBudget("deepseek_r1", budget=2, tokenizer=tok, backend=backend)
    assert b.end_sequence == (128822,)  # </think> as the special token, not its text pieces
    assert b.forced is None
    assert b.step([5718]) is None
    assert b.step([678]) == 128822
    assert b.step([128822]) is None
    assert not b.is_reasoning
    assert b.reasoning_tokens == 2


def test_budget_zero_closes_a_prompt_opened_block_at_once(backend):
    tok = deepseek_tokenizer()
    b = ReasoningBudget("deepseek_v3", budget=0, tokenizer=tok, backend=backend)
    assert b.forced is None  # starts in content: nothing to close
    b.begin([128803, 10, 128804, 128821])  # the template opened <think>
    assert b.forced == 128822
    b = ReasoningBudget("deepseek_v3", budget=0, tokenizer=tok, backend=backend)
    b.begin([128803, 10, 128804, 128821, 128822])  # thinking switched off in the prompt
    assert b.forced is None
    assert b.step(encode(tok, "Hello")) is None
    # A block the output opens is closed as soon as it opens.
    assert b.step([128821]) == 128822


def test_closing_text_then_end_and_said_once(backend):
    tok = deepseek_tokenizer()
    closing = " Considering the limited time, I answer now."
    b = ReasoningBudget("deepseek_r1", budget=1, tokenizer=tok, closing_text=closing, backend=backend)
    want = tuple(encode(tok, closing)) + (128822,)
    assert b.end_sequence == want
    got = []
    b.step([5718])
    while b.forced is not None:
        got.append(b.forced)
        b.step([b.forced])
    assert tuple(got) == want
    # A second block: the budget is spent, so only the end delimiter is forced.
    assert b.step([7805, 128821]) == 128822
    b.step([128822])
    assert b.forced is None and not b.is_reasoning


def test_soft_margin_closes_at_a_sentence_end(backend):
    tok = deepseek_tokenizer()
    mask = boundary_mask(tok)
    period = encode(tok, ".")[0]
    newline = encode(tok, "\n")[0]
    word = encode(tok, " word")[0]
    assert mask[period] and mask[newline] and not mask[word]
    b = ReasoningBudget("deepseek_r1", budget=3, tokenizer=tok, soft_margin=4, backend=backend)
    assert b.step([word, word, word]) is None  # budget reached, but mid-sentence
    assert b.step([word]) is None
    assert b.step([period]) == 128822  # the sentence ended: close now
    b = ReasoningBudget("deepseek_r1", budget=3, tokenizer=tok, soft_margin=4, backend=backend)
    assert b.step([word] * 6) is None
    assert b.step([word]) == 128822  # budget + margin: close whatever the text


def test_a_token_other_than_the_forced_one_is_taken_and_forced_again(backend):
    tok = deepseek_tokenizer()
    b = ReasoningBudget("deepseek_r1", budget=1, tokenizer=tok, backend=backend)
    assert b.step([5718]) == 128822
    assert b.step([678]) == 128822  # the engine ignored the mask: still reasoning, still forced
    assert b.reasoning_tokens == 2


def test_draft_tokens_after_a_forced_position_are_rejected(backend):
    tok = deepseek_tokenizer()
    b = ReasoningBudget("deepseek_r1", budget=2, tokenizer=tok, backend=backend)
    assert b.accept_draft([5718, 678, 2118, 16]) == 2  # the third position had to be </think>
    assert b.forced == 128822
    assert b.accept_draft([128822, 7805, 16]) == 3
    assert not b.is_reasoning and b.forced is None


def test_rollback_restores_count_forcing_and_parser_state(backend):
    tok = deepseek_tokenizer()
    b = ReasoningBudget("deepseek_r1", budget=3, tokenizer=tok, closing_text=" Done.", backend=backend)
    ids = [5718, 678, 2118]
    b.step(ids)
    snapshot = (b.reasoning_tokens, b.forced, b.is_reasoning)
    b.step([b.forced, b.forced])
    b.rollback(2)
    assert (b.reasoning_tokens, b.forced, b.is_reasoning) == snapshot
    b.rollback(3)
    assert (b.reasoning_tokens, b.forced) == (0, None)
    with pytest.raises(ValueError, match="roll back"):
        b.rollback(1)


def test_bad_arguments_are_named():
    tok = deepseek_tokenizer()
    with pytest.raises(TypeError, match="budget"):
        ReasoningBudget("deepseek_r1", budget=1.5, tokenizer=tok)
    with pytest.raises(ValueError, match="budget"):
        ReasoningBudget("deepseek_r1", budget=-1, tokenizer=tok)
    with pytest.raises(ValueError, match="tokenizer"):
        ReasoningBudget(rc.get_parser("deepseek_r1", tok), budget=1, closing_text="x")
    with pytest.raises(ValueError, match="no end delimiter"):
        ReasoningBudget("passthrough", budget=1)
    with pytest.raises(TypeError, match="parser"):
        BudgetBatch(object(), 4, budget=1)
    b = ReasoningBudget("deepseek_r1", budget=1, tokenizer=tok)
    with pytest.raises(TypeError, match="ints"):
        b.step([1.0])


# -- the batch form against the one-request form -----------------------------------

@st.composite
def programs(draw):
    name = draw(st.sampled_from(FAMILIES))
    n_req = draw(st.integers(1, 4))
    reqs = []
    for _ in range(n_req):
        reqs.append((draw(st.booleans()), draw(st.integers(0, 6)), draw(st.integers(0, 2**32 - 1))))
    return name, draw(st.integers(0, 3)), draw(st.sampled_from([None, "Time is up."])), reqs


@given(programs())
def test_batch_equals_one_request_budgets(backend, program):
    name, margin, closing, reqs = program
    parser = _parser(name, backend)
    tok = _tokenizer(name)
    pool = _pool(parser, tok)
    starts = ids_of_kind(parser.tables, START)
    batch = BudgetBatch(parser, 8, budget=3, tokenizer=tok, closing_text=closing, soft_margin=margin)
    singles, rngs, slots = [], [], []
    for i, (opened, budget, seed) in enumerate(reqs):
        slot = 2 * i + 1
        prompt = list(starts[0]) if opened and starts else None
        one = ReasoningBudget(parser, budget=budget, tokenizer=tok, closing_text=closing, soft_margin=margin)
        one.begin(prompt)
        batch.open(slot, prompt, budget=budget)
        singles.append(one)
        rngs.append(random.Random(seed))
        slots.append(slot)
    s = np.array(slots, dtype=np.int32)
    for _ in range(40):
        forced = batch.forced(s)
        assert forced.tolist() == [-1 if o.forced is None else o.forced for o in singles]
        ids = [f if f >= 0 else r.choice(pool) for f, r in zip(forced.tolist(), rngs)]
        res = batch.step(s, np.array(ids, dtype=np.int32))
        for one, tid in zip(singles, ids):
            one.step([tid])
        assert res.forced.tolist() == [-1 if o.forced is None else o.forced for o in singles]
        assert batch.reasoning_tokens(s).tolist() == [o.reasoning_tokens for o in singles]
        assert res.in_grammar.tolist() == [o.parser.state == "content" for o in singles]


def test_batch_ragged_drafts(backend):
    tok = deepseek_tokenizer()
    batch = BudgetBatch("deepseek_r1", 4, budget=2, tokenizer=tok, backend=backend)
    batch.open(0)
    batch.open(2, budget=10)
    res = batch.step_ragged(np.array([0, 2]), np.array([0, 4, 7]), np.array([5718, 678, 2118, 16, 5718, 678, 2118]))
    assert res.accepted.tolist() == [2, 3]
    assert res.forced.tolist() == [128822, -1]
    assert batch.reasoning_tokens([0, 2]).tolist() == [2, 3]
    with pytest.raises(ValueError, match="offsets"):
        batch.step_ragged(np.array([0]), np.array([0, 3]), np.array([1, 2]))


def test_budget_batch_rejects_bad_slots_before_any_change():
    tok = deepseek_tokenizer()
    batch = BudgetBatch("deepseek_r1", 2, budget=1, tokenizer=tok)
    batch.open(0)
    with pytest.raises(ValueError):
        batch.step(np.array([0, 1], dtype=np.int32), np.array([5, 6], dtype=np.int32))  # slot 1 not open
    assert batch.reasoning_tokens([0]).tolist() == [0]


@st.composite
def chunked_runs(draw):
    name = draw(st.sampled_from(FAMILIES))
    seed = draw(st.integers(0, 2**32 - 1))
    cuts = draw(st.lists(st.integers(1, 6), min_size=1, max_size=30))
    return name, draw(st.integers(0, 8)), draw(st.booleans()), seed, cuts


@given(chunked_runs())
def test_any_chunking_gives_the_parsers_state(backend, run):
    """Steps of any size: the count is the parser's replay, and chunked equals one token at a time."""
    name, budget, opened, seed, cuts = run
    parser = _parser(name, backend)
    tok = _tokenizer(name)
    starts = ids_of_kind(parser.tables, START)
    prompt = list(starts[0]) if opened and starts else None
    rng = random.Random(seed)
    pool = _pool(parser, tok)
    ids = [rng.choice(pool) for _ in range(sum(cuts))]
    whole = ReasoningBudget(parser, budget=budget, tokenizer=tok).begin(prompt)
    chunked = ReasoningBudget(parser, budget=budget, tokenizer=tok).begin(prompt)
    for tid in ids:
        whole.step([tid])
    at = 0
    for n in cuts:
        chunked.step(ids[at:at + n])
        at += n
    count, reasoning = _replay(parser, prompt, ids)
    assert whole.reasoning_tokens == chunked.reasoning_tokens == count
    assert whole.is_reasoning == chunked.is_reasoning == reasoning
    assert whole.forced == chunked.forced
    assert whole.parser.held_ids == chunked.parser.held_ids
