"""Text-level parser: family semantics, chunking invariance, bounded holding, bad input."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reasoning_core
from reasoning_core import text_parser
from reasoning_core.families import FAMILIES
from reasoning_core.text import TextReasoningParser, text_tables

ALL_FAMILIES = sorted(FAMILIES)
fixture_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def stream(p: TextReasoningParser, chunks) -> tuple[str, str]:
    r, c = [], []
    for ch in chunks:
        dr, dc = p.feed(ch)
        r.append(dr)
        c.append(dc)
    dr, dc = p.finish()
    return "".join(r) + dr, "".join(c) + dc


def delimiters(name: str) -> list[str]:
    fam = FAMILIES[name]
    return [s for role in ("start", "end", "terminators", "headers", "frames") for s in getattr(fam, role)]


# (family, text, expected reasoning, expected content); no prompt = family default state.
CASES = [
    ("deepseek_r1", "Okay, 17 + 25.\n</think>\n\nIt is **42**.", "Okay, 17 + 25.\n", "\n\nIt is **42**."),
    ("deepseek_r1", "<think>\nOkay.\n</think>\n\n42", "\nOkay.\n", "\n\n42"),
    ("deepseek_r1", "no end yet", "no end yet", ""),
    ("deepseek_v3", "Sure. <think>plan</think> Answer", "plan", "Sure.  Answer"),
    ("deepseek_v3", "<think>need a tool<｜tool▁calls▁begin｜>call", "need a tool", "<｜tool▁calls▁begin｜>call"),
    # DSML rows: only </think> ends reasoning (V3.1's tool opener is reasoning text there)
    ("deepseek_v32", "<think>a <｜tool▁calls▁begin｜> b</think>\n\n<｜DSML｜function_calls>",
     "a <｜tool▁calls▁begin｜> b", "\n\n<｜DSML｜function_calls>"),
    ("deepseek_v4", "<think>plan</think>\n\n<｜DSML｜tool_calls>", "plan", "\n\n<｜DSML｜tool_calls>"),
    ("deepseek_v41", "Sure. <think>p</think> <｜DSML｜ calls>", "p", "Sure.  <｜DSML｜ calls>"),
    ("qwen3", "pre <think>a</think> mid <think>b</think> post", "ab", "pre  mid  post"),
    ("qwen3", "<think>x<tool_call>{}</tool_call>", "x", "<tool_call>{}</tool_call>"),
    ("qwen3", "stray </think> end", "", "stray </think> end"),
    ("qwen3_thinking", "r</think>c<tool_call>t", "r", "c<tool_call>t"),
    ("qwen3_5", "<think>\nr\n</think>\n\nc", "\nr\n", "\n\nc"),
    ("kimi", "◁think▷用户 🧠◁/think▷答案", "用户 🧠", "答案"),
    ("kimi_k2", "r</think>c<|tool_calls_section_begin|>x", "r", "c<|tool_calls_section_begin|>x"),
    ("glm45", "<think>r</think>c<tool_call>f", "r", "c<tool_call>f"),
    ("glm47", "r</think>c", "r", "c"),
    ("step3", "r</think>c", "r", "c"),
    ("minimax_m2", "<think>\nr\n</think>\n\nc<minimax:tool_call>x", "\nr\n", "\n\nc<minimax:tool_call>x"),
    ("seed_oss", "<seed:think>r</seed:think>c", "r", "c"),
    ("hunyuan_a13b", "<think>\nr\n</think>\n<answer>\nc\n</answer>", "r", "c"),
    ("granite", "Here is my thought process: r Here is my response: c", " r ", " c"),
    ("granite", "Here's my thought process: r\nHere's my response: c", " r\n", " c"),
    ("mistral", "[THINK]r[/THINK]c", "r", "c"),
    ("gpt_oss", "<|channel|>analysis<|message|>r<|end|><|start|>assistant<|channel|>final<|message|>c<|return|>",
     "r", "c"),
    ("gpt_oss", "<|channel|>analysis<|message|>r<|start|>assistant<|channel|>commentary to=functions.f",
     "r", "<|start|>assistant<|channel|>commentary to=functions.f"),
    ("ernie45", "r\n</think>\n\n<response>\nc\n</response>", "r\n", "\n\n\nc\n"),
    ("olmo3", "r</think>c", "r", "c"),
    ("nemotron_v3", "r</think>c<tool_call>t", "r", "c<tool_call>t"),
    ("gemma4", "hi<|channel>thought\nr1<channel|>c1<|channel>thought\nr2<channel|>c2<|tool_call>t",
     "r1r2", "hic1c2<|tool_call>t"),
    ("gemma4", "<|channel>no label<channel|>c", "no label", "c"),
    ("gemma4", "<|channel>thou<channel|>c", "thou", "c"),
    ("gemma4", "<|channel>thou", "thou", ""),
    ("passthrough", "<think>all content</think>", "", "<think>all content</think>"),
    # Rows added for the serving engines' parser names (issue 14).
    ("kimi_k3", "r<|close|>think<|sep|><|open|>response<|sep|>c<|close|>response<|sep|><|close|>message<|sep|>",
     "r", "c"),
    ("kimi_k3", "r<|open|>tools<|sep|>[]", "r", "<|open|>tools<|sep|>[]"),
    ("k2_horizon", "<ifm|think_faster>r</ifm|think_faster>c<ifm|tool_calls>t", "r", "c<ifm|tool_calls>t"),
    ("minimax_m3", "<mm:think>r</mm:think>c", "r", "c"),
    ("cohere_command", "r<|END_THINKING|><|START_TEXT|>c<|END_TEXT|>", "r", "c"),
    ("cohere_command", "r<|START_ACTION|>[]<|END_ACTION|>", "r", "<|START_ACTION|>[]<|END_ACTION|>"),
    ("plamo3", "r<|plamo:end_think:plamo|>c", "r", "c"),
    ("inkling", "<|content_thinking|>r<|end_message|><|message_model|><|content_text|>c<|end_message|>", "r", "c"),
    ("inkling", "r<|content_text|>c", "", "rc"),
    ("muse", " to=self<|message|>r<|eom|><|start|>assistant<|message|>s<|eom|>"
     "<|start|>assistant to=user<|message|>c<|eot|>", "rs", "c"),
    ("muse_glimmer", " to=self<|message|>r<|eom|><|start|>assistant to=user<|message|>c<|eot|>", "r", "c"),
    ("muse_glimmer", " to=self<|message|>r<|start|>assistant to=functions.f<|message|>{}",
     "r", "<|start|>assistant to=functions.f<|message|>{}"),
    ("poolside_v1", "<think>r<tool_call>t", "r", "<tool_call>t"),
    ("mimo", "<think>r</think>c", "r", "c"),
    ("holo2", "r <tool_call> still r</think>c", "r <tool_call> still r", "c"),
    ("hy_v3", "<think>r<tool_calls>t", "r", "<tool_calls>t"),
    ("hy_v4", "r</think>c", "r", "c"),
    ("apertus", "<|inner_prefix|>r<|inner_suffix|>c<|tools_prefix|>[]", "r", "c<|tools_prefix|>[]"),
    ("granite_thinking", "r</think>c<tool_call>t", "r", "c<tool_call>t"),
]


@pytest.mark.parametrize("name,text,reasoning,content", CASES)
def test_parse_semantics(backend, name, text, reasoning, content):
    p = text_parser(name, backend=backend)
    assert p.parse(text) == (reasoning, content)
    # Streaming one character at a time (the hardest chunking) agrees.
    assert stream(p, list(text)) == (reasoning, content)


def test_every_family_has_a_case():
    assert {c[0] for c in CASES} == set(ALL_FAMILIES)


def test_public_names():
    assert reasoning_core.text_parser is text_parser
    assert reasoning_core.TextReasoningParser is TextReasoningParser
    assert isinstance(text_parser("qwq"), TextReasoningParser)  # aliases resolve
    assert text_parser("qwq").family.name == "deepseek_r1"


def test_starts_in_reasoning(backend):
    text = "a<think>b</think>c"
    assert text_parser("qwen3", backend=backend).parse(text) == ("b", "ac")
    assert text_parser("qwen3", starts_in_reasoning=True, backend=backend).parse(text) == ("ab", "c")
    assert text_parser("deepseek_r1", starts_in_reasoning=False, backend=backend).parse("x</think>y") == ("", "x</think>y")
    # Gemma 4 with thinking enabled waits for its start: text before it is content.
    g = text_parser("gemma4", starts_in_reasoning=True, backend=backend)
    assert g.parse("pre<|channel>thought\nr<channel|>c") == ("r", "prec")


def test_parse_is_independent_of_streaming_state(backend):
    p = text_parser("qwen3", backend=backend)
    assert p.feed("<think>abc</th") == ("abc", "")
    assert p.parse("x<think>y</think>z") == ("y", "xz")
    assert p.feed("ink>done") == ("", "done")


def test_holds_partial_delimiter_then_releases(backend):
    p = text_parser("qwen3", backend=backend)
    assert p.feed("ans <thi") == ("", "ans ")
    assert p.held_text == "<thi"
    assert p.feed("s is not") == ("", "<this is not")
    assert p.held_text == ""
    # Held text behind other text in the same chunk is still held (no leak).
    assert p.feed("text <think") == ("", "text ")
    assert p.feed(">r</thi") == ("r", "")
    assert p.finish() == ("</thi", "")


def test_finish_releases_to_current_side_and_reset(backend):
    p = text_parser("deepseek_r1", backend=backend)
    assert p.feed("abc</") == ("abc", "")
    assert p.finish() == ("</", "")
    p.reset()
    assert p.is_reasoning
    assert stream(p, ["x</think>", "y"]) == ("x", "y")


def test_label_split_across_chunks(backend):
    p = text_parser("gemma4", backend=backend)
    chunks = ["<|chan", "nel>th", "ough", "t", "\nrea", "son<chan", "nel|>answer"]
    assert stream(p, chunks) == ("reason", "answer")


def test_non_bmp_text_around_delimiters(backend):
    text = "🙂<think>𝔘🧠</think>🎉"
    p = text_parser("qwen3", backend=backend)
    assert p.parse(text) == ("𝔘🧠", "🙂🎉")
    assert stream(p, list(text)) == ("𝔘🧠", "🙂🎉")


# -- chunking invariance -----------------------------------------------------------

FILLER = ["a", " ", "\n", "数", "🧠", "<", ">", "/", "|", "think", "thought\n", "Here", " is my ", "x"]


@st.composite
def family_texts(draw):
    name = draw(st.sampled_from(ALL_FAMILIES))
    dels = delimiters(name)
    # Delimiters, their prefixes and filler glued together: prefixes are the
    # adversarial part (held, then released).
    atoms = FILLER + dels + [d[: len(d) // 2] for d in dels if len(d) > 1]
    parts = draw(st.lists(st.sampled_from(atoms), max_size=25))
    text = "".join(parts)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    chunks = [text[a:b] for a, b in zip([0] + cuts, cuts + [len(text)])]
    starts = draw(st.sampled_from([None, True, False]))
    return name, text, chunks, starts


@fixture_ok
@given(case=family_texts())
def test_chunking_invariance(backend, case):
    name, text, chunks, starts = case
    p = text_parser(name, starts_in_reasoning=starts, backend=backend)
    whole = p.parse(text)
    assert stream(p, chunks) == whole
    p.reset()
    assert stream(p, list(text)) == whole
    # parse() of the pure twin is the reference for both backends.
    assert text_parser(name, starts_in_reasoning=starts, backend="python").parse(text) == whole


def test_conservation_without_label(backend):
    # Nothing but consumed delimiters is dropped: lengths add up.
    p = text_parser("qwen3", backend=backend)
    text = "a<think>b<think>c</think>d</think>e<tool_call>f"
    r, c = p.parse(text)
    assert (r, c) == ("b<think>c", "ad</think>e<tool_call>f")
    assert len(r) + len(c) + len("<think></think>") == len(text)


# -- bounded holding -------------------------------------------------------------------

@pytest.mark.parametrize("name", ALL_FAMILIES)
def test_adversarial_partial_delimiters_stay_bounded(backend, name):
    p = text_parser(name, backend=backend)
    longest = max((len(d) for d in delimiters(name)), default=0)
    assert p.max_hold == longest <= p.max_buffer
    out = 0
    for i in range(3000):
        for d in delimiters(name):
            # Every proper prefix, endlessly: each one is held, then released
            # when the next prefix restarts the match.
            p.feed(d[: 1 + i % max(len(d) - 1, 1)])
            assert len(p.held_text) <= longest
        if not delimiters(name):
            r, c = p.feed("<thi")
            out += len(r) + len(c)
            assert p.held_text == ""
    assert len(p.held_text) <= longest


def test_max_buffer_below_longest_delimiter_is_refused(backend):
    # Deliberate change (hardening item 22): a max_buffer below the longest
    # delimiter used to release a partial header as content and lose the
    # delimiter; it is now refused, naming the minimum.
    minimum = text_parser("gpt_oss", backend=backend).max_hold
    assert minimum > 8
    with pytest.raises(ValueError, match=rf"at least {minimum}\b"):
        text_parser("gpt_oss", max_buffer=8, backend=backend)
    p = text_parser("gpt_oss", max_buffer=minimum, backend=backend)
    r, c = p.feed("<|channel|>analysi")  # 18 characters of a possible header
    assert (r, c) == ("", "") and p.held_text == "<|channel|>analysi"
    assert p.feed("s<|message|>x") == ("x", "")


def test_max_buffer_validation():
    for bad in (0, -1):
        with pytest.raises(ValueError):
            text_parser("qwen3", max_buffer=bad)
    for bad in ("64", 1.5, None, True):
        with pytest.raises(TypeError):
            text_parser("qwen3", max_buffer=bad)
    minimum = text_parser("qwen3").max_hold
    assert text_parser("qwen3", max_buffer=minimum).max_buffer == minimum
    with pytest.raises(ValueError, match=rf"at least {minimum}\b"):
        text_parser("qwen3", max_buffer=minimum - 1)
    assert text_parser("passthrough", max_buffer=1).max_buffer == 1


# -- bad input -----------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [None, b"<think>", bytearray(b"x"), 3, ["a"]])
def test_feed_rejects_non_str(backend, bad):
    p = text_parser("qwen3", backend=backend)
    with pytest.raises(TypeError):
        p.feed(bad)
    with pytest.raises(TypeError):
        p.parse(bad)
    # The parser is still usable afterwards.
    assert stream(p, ["<think>r</think>c"]) == ("r", "c")


def test_bad_names_and_options():
    with pytest.raises(ValueError, match="unknown reasoning parser"):
        text_parser("no_such_family")
    with pytest.raises(TypeError):
        text_parser(None)
    with pytest.raises(ValueError, match="starts_in_reasoning"):
        text_parser("qwen3", starts_in_reasoning="yes")
    with pytest.raises(ValueError):
        text_parser("qwen3", backend="rust")


def test_tables_are_cached_per_family():
    assert text_tables("qwen3") is text_tables("qwen3")
    assert text_tables("qwq") is text_tables("deepseek_r1")


def test_empty_input(backend):
    p = text_parser("qwen3", backend=backend)
    assert p.parse("") == ("", "")
    assert p.feed("") == ("", "")
    assert p.finish() == ("", "")
