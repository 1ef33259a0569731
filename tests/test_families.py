"""Every row of the family table (SPEC §5), end to end on realistic completions.

Each case encodes a full completion with a real vocabulary where one ships
(DeepSeek, Qwen3) or with a small tokenizer carrying the family's special
tokens, runs it through ``split()`` one token at a time and in random chunks,
then ``finish()``, and checks the decoded reasoning and content.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reasoning_core
from reasoning_core import FAMILIES
from vocab import decode, deepseek_tokenizer, encode, family_tokenizer, qwen3_tokenizer

# The backend fixture is a plain string, so reusing it across examples is safe.
FIXTURE_OK = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


def tokenizer_for(name: str):
    if name in ("deepseek_r1", "deepseek_v3", "deepseek_v32", "deepseek_v4", "deepseek_v41"):
        return deepseek_tokenizer()
    if name in ("qwen3", "qwen3_thinking", "qwen3_5"):
        return qwen3_tokenizer()
    return family_tokenizer(name)


@dataclass(frozen=True)
class Case:
    id: str
    family: str
    text: str
    reasoning: str
    content: str
    prompt: str | None = None  # prompt tail, encoded with the same tokenizer
    stream_ok: bool = True  # single-token delimiters only: MAX stream() is per delta
    blocks: int = 1  # MAX stream() finds one span per delta

    def __str__(self) -> str:
        return self.id


WEATHER_QWEN = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
WEATHER_DS = ('<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}'
              "<｜tool▁call▁end｜><｜tool▁calls▁end｜>")


def _dsml(block: str) -> str:
    """A DSML tool-calls block (V3.2: "function_calls", V4: "tool_calls", V4.1: " calls")."""
    d = "｜DSML｜"
    return (f'<{d}{block}>\n<{d}invoke name="get_weather">\n<{d}parameter name="city" string="true">Paris'
            f"</{d}parameter>\n</{d}invoke>\n</{d}{block}>")


WEATHER_KIMI = ('<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0'
                '<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>')
WEATHER_GLM = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>"
WEATHER_MINIMAX = ('<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n'
                   "</invoke>\n</minimax:tool_call>")
HARMONY_CALL = ('<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json'
                '<|message|>{"city": "Paris"}<|call|>')

CASES = [
    # -- DeepSeek (real 129,280-id vocabulary) --
    Case("r1-template-injected", "deepseek_r1",
         "Okay, the user asks for 2+2. That is 4.\n</think>\n\nThe answer is **4**.",
         "Okay, the user asks for 2+2. That is 4.\n", "\n\nThe answer is **4**."),
    Case("r1-repeats-think", "deepseek_r1",
         "<think>\nOkay, 2+2 is 4.\n</think>\n\nThe answer is 4.",
         "\nOkay, 2+2 is 4.\n", "\n\nThe answer is 4."),
    Case("v31-thinking", "deepseek_v3", "Simple sum: 4.</think>The answer is 4.",
         "Simple sum: 4.", "The answer is 4.", prompt="<｜User｜>What is 2+2?<｜Assistant｜><think>"),
    Case("v31-non-thinking", "deepseek_v3", "The answer is 4.", "", "The answer is 4.",
         prompt="<｜User｜>What is 2+2?<｜Assistant｜></think>"),
    Case("v31-default-content", "deepseek_v3", "<think>Sum.</think>The answer is 4.", "Sum.", "The answer is 4."),
    Case("v31-tool-calls-close-reasoning", "deepseek_v3", "I need the weather tool." + WEATHER_DS,
         "I need the weather tool.", WEATHER_DS, prompt="<｜User｜>Weather?<｜Assistant｜><think>"),
    Case("v31-tool-calls-after-answer", "deepseek_v3", "Checking.</think>Let me look." + WEATHER_DS,
         "Checking.", "Let me look." + WEATHER_DS, prompt="<｜Assistant｜><think>"),
    # V3.2 / V4 / V4.1 write DSML blocks after </think>; only </think> ends reasoning.
    Case("v32-dsml-after-think", "deepseek_v32", "Need the weather.</think>\n\n" + _dsml("function_calls"),
         "Need the weather.", "\n\n" + _dsml("function_calls"), prompt="<｜User｜>Weather?<｜Assistant｜><think>"),
    Case("v4-dsml-after-think", "deepseek_v4", "Need the weather.</think>\n\n" + _dsml("tool_calls"),
         "Need the weather.", "\n\n" + _dsml("tool_calls"), prompt="<｜User｜>Weather?<｜Assistant｜><think>"),
    Case("v41-dsml-after-think", "deepseek_v41", "Need the weather.</think>\n\n" + _dsml(" calls"),
         "Need the weather.", "\n\n" + _dsml(" calls"), prompt="<｜User｜>Weather?<｜Assistant｜><think>"),
    Case("v4-v31-opener-stays-reasoning", "deepseek_v4", "Maybe " + WEATHER_DS + "? No.</think>Done.",
         "Maybe " + WEATHER_DS + "? No.", "Done.", prompt="<｜Assistant｜><think>"),
    # -- Qwen3 (real BPE ranks + Qwen3 specials) --
    Case("qwen3-thinks", "qwen3", "<think>\nThe user asks for 2+2.\n</think>\n\nThe answer is 4.",
         "\nThe user asks for 2+2.\n", "\n\nThe answer is 4."),
    Case("qwen3-no-think", "qwen3", "The answer is 4.", "", "The answer is 4."),
    Case("qwen3-tool-after-think", "qwen3", "<think>\nNeed weather.\n</think>\n\n" + WEATHER_QWEN,
         "\nNeed weather.\n", "\n\n" + WEATHER_QWEN),
    Case("qwen3-tool-closes-think", "qwen3", "<think>\nNeed weather.\n" + WEATHER_QWEN,
         "\nNeed weather.\n", WEATHER_QWEN),
    Case("qwen3-thinking-2507", "qwen3_thinking", "The user asks for 2+2.\n</think>\n\nThe answer is 4.",
         "The user asks for 2+2.\n", "\n\nThe answer is 4."),
    Case("qwen3-thinking-tool", "qwen3_thinking", "Need the weather.\n" + WEATHER_QWEN,
         "Need the weather.\n", WEATHER_QWEN),
    Case("qwen3_5", "qwen3_5", "<think>\nSum it.\n</think>\n\n4. " + WEATHER_QWEN,
         "\nSum it.\n", "\n\n4. " + WEATHER_QWEN),
    # -- small tokenizers with each family's specials --
    Case("kimi", "kimi", "◁think▷Let me add 2 and 2.◁/think▷The answer is 4.",
         "Let me add 2 and 2.", "The answer is 4."),
    Case("kimi_k2", "kimi_k2", "The user wants weather.</think>Let me check." + WEATHER_KIMI,
         "The user wants weather.", "Let me check." + WEATHER_KIMI),
    Case("kimi_k2-section-closes", "kimi_k2", "<think>The user wants weather." + WEATHER_KIMI,
         "The user wants weather.", WEATHER_KIMI),
    Case("kimi_k2-singular-section", "kimi_k2", "Weather needed.<|tool_call_section_begin|><|tool_call_begin|>x",
         "Weather needed.", "<|tool_call_section_begin|><|tool_call_begin|>x"),
    Case("glm45", "glm45", "<think>Let me add.</think>\nThe answer is 4.", "Let me add.", "\nThe answer is 4."),
    Case("glm45-tool", "glm45", "<think>Need the tool." + WEATHER_GLM, "Need the tool.", WEATHER_GLM),
    Case("glm47", "glm47", "Need the tool.</think>" + WEATHER_GLM, "Need the tool.", WEATHER_GLM),
    Case("step3", "step3", "Adding the ones.\n</think>\nThe answer is 4.", "Adding the ones.\n", "\nThe answer is 4."),
    Case("minimax_m2", "minimax_m2", "<think>\nNeed weather.\n</think>\n\n" + WEATHER_MINIMAX,
         "\nNeed weather.\n", "\n\n" + WEATHER_MINIMAX),
    Case("minimax_m2-tool-closes", "minimax_m2", "Need weather.\n" + WEATHER_MINIMAX, "Need weather.\n", WEATHER_MINIMAX),
    Case("seed_oss", "seed_oss", "<seed:think>Let me add.</seed:think>The answer is 4.", "Let me add.", "The answer is 4."),
    Case("hunyuan-frames", "hunyuan_a13b",
         "<think>\nThe user asks for a sum.\n</think>\n<answer>\nThe answer is 4.\n</answer>",
         "The user asks for a sum.", "The answer is 4.", stream_ok=False),
    # "/no_think": the model writes an empty block; blank lines stay raw where the frames allow.
    Case("hunyuan-empty-think", "hunyuan_a13b", "<think>\n\n</think>\n<answer>\nThe answer is 4.\n</answer>",
         "", "The answer is 4.", stream_ok=False),
    Case("hunyuan-blank-lines", "hunyuan_a13b",
         "<think>\nSum.\n\n</think>\n<answer>\n\nThe answer is 4.\n\n</answer>",
         "Sum.\n", "\nThe answer is 4.\n", stream_ok=False),
    Case("granite-here-is", "granite",
         "Here is my thought process: first add the tens.\nHere is my response: 42.",
         " first add the tens.\n", " 42.", stream_ok=False),
    Case("granite-heres-newlines", "granite",
         "Here's my thought process:\ncheck the units.\n\nHere's my response:\nThe answer is 42.",
         "\ncheck the units.\n\n", "\nThe answer is 42.", stream_ok=False),
    # After a space the BPE merges the space into the marker's first token;
    # that token is part of the delimiter, the text before it stays content.
    Case("granite-after-space", "granite",
         "So. Here's my thought process: check the units. Here's my response: done.",
         " check the units.", "So. done.", stream_ok=False),
    Case("mistral", "mistral", "[THINK]Let me add 2 and 2.[/THINK]The answer is 4.", "Let me add 2 and 2.", "The answer is 4."),
    # -- gpt-oss harmony --
    Case("harmony-final", "gpt_oss",
         "<|channel|>analysis<|message|>The user asks.<|end|><|start|>assistant<|channel|>final<|message|>"
         "The answer is 4.<|return|>",
         "The user asks.", "The answer is 4.", stream_ok=False),
    Case("harmony-commentary", "gpt_oss",
         "<|channel|>analysis<|message|>Need the weather tool.<|end|>" + HARMONY_CALL,
         "Need the weather tool.", HARMONY_CALL, stream_ok=False),
    Case("harmony-final-closes-analysis", "gpt_oss",
         "<|channel|>analysis<|message|>The user asks.<|start|>assistant<|channel|>final<|message|>4<|return|>",
         "The user asks.", "4", stream_ok=False),
    Case("harmony-commentary-closes-analysis", "gpt_oss",
         "<|channel|>analysis<|message|>Need the weather tool." + HARMONY_CALL,
         "Need the weather tool.", HARMONY_CALL, stream_ok=False),
    Case("harmony-two-analysis-blocks", "gpt_oss",
         "<|channel|>analysis<|message|>First.<|end|><|start|>assistant<|channel|>analysis<|message|>Second."
         "<|end|><|start|>assistant<|channel|>final<|message|>Done.<|return|>",
         "First.Second.", "Done.", stream_ok=False),
    Case("ernie45", "ernie45",
         "The user asks for a sum.\n</think>\n\n<response>\nThe answer is 4.\n</response>",
         "The user asks for a sum.\n", "\n\n\nThe answer is 4.\n", stream_ok=False),
    Case("olmo3", "olmo3", "<think>The user asks for a sum.</think>The answer is 4.",
         "The user asks for a sum.", "The answer is 4.", stream_ok=False),
    Case("olmo3-template-injected", "olmo3", "The user asks for a sum.</think>\nThe answer is 4.",
         "The user asks for a sum.", "\nThe answer is 4.", stream_ok=False),
    Case("olmo3-newlines", "olmo3", "The user asks for a sum.\n</think>\n\nThe answer is 4.",
         "The user asks for a sum.\n", "\n\nThe answer is 4.", stream_ok=False),
    Case("nemotron_v3", "nemotron_v3", "<think>\nAdd them.\n</think>\nThe answer is 4.", "\nAdd them.\n", "\nThe answer is 4."),
    Case("nemotron_v3-tool", "nemotron_v3", "Need weather.\n" + WEATHER_QWEN, "Need weather.\n", WEATHER_QWEN),
    Case("gemma4-thinking", "gemma4", "<|channel>thought\nThe user asks.<channel|>The answer is 4.",
         "thought\nThe user asks.", "The answer is 4.", prompt="<|turn>system\n<|think|><turn|>\n<|turn>model\n"),
    Case("gemma4-two-blocks", "gemma4",
         "<|channel>thought\nFirst.<channel|>Partial answer.<|channel>thought\nSecond.<channel|>Done.",
         "thought\nFirst.thought\nSecond.", "Partial answer.Done.", blocks=2),
    Case("gemma4-tool-closes", "gemma4",
         "<|channel>thought\nNeed weather.<|tool_call>call:get_weather{city:Paris}<tool_call|>",
         "thought\nNeed weather.", "<|tool_call>call:get_weather{city:Paris}<tool_call|>"),
    Case("gemma4-awaiting-never-thinks", "gemma4", "The answer is 4.", "", "The answer is 4.",
         prompt="<|turn>system\n<|think|><turn|>\n<|turn>model\n"),
    Case("passthrough", "passthrough", "<think>not special here</think> The answer is 4.",
         "", "<think>not special here</think> The answer is 4."),
]
CASE_PARAMS = [pytest.param(c, id=c.id) for c in CASES]


def test_every_family_has_a_case():
    from test_engine_families import CASES as ENGINE_CASES  # the rows added for the engines' names

    assert {c.family for c in CASES} | {c.family for c in ENGINE_CASES} == set(FAMILIES)


def _prepare(case: Case, backend: str):
    tok = tokenizer_for(case.family)
    parser = reasoning_core.get_parser(case.family, tok, backend=backend)
    prompt = encode(tok, case.prompt) if case.prompt is not None else None
    return tok, parser, encode(tok, case.text), prompt


def _run_split(parser, ids, chunks, prompt):
    parser.begin(prompt)
    reasoning, content, every = [], [], []
    pieces = [parser.split(ids[a:b]) for a, b in chunks] + [parser.finish()]
    for piece in pieces:
        reasoning += piece.reasoning_ids
        content += piece.content_ids
        # Conservation: every token of the piece is in exactly one segment, in order.
        segs = piece.segments
        assert [s[1] for s in segs] == ([0] + [s[2] for s in segs[:-1]] if segs else [])
        assert (segs[-1][2] if segs else 0) == len(piece.tokens)
        every += [t for kind, a, b in segs if kind != "held" for t in piece.tokens[a:b]]
    assert every == ids
    return reasoning, content


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_split_token_by_token(case, backend):
    tok, parser, ids, prompt = _prepare(case, backend)
    reasoning, content = _run_split(parser, ids, [(i, i + 1) for i in range(len(ids))], prompt)
    assert decode(tok, reasoning) == case.reasoning
    assert decode(tok, content) == case.content


@pytest.mark.parametrize("case", CASE_PARAMS)
@FIXTURE_OK
@given(data=st.data())
def test_split_random_chunks(case, backend, data):
    tok, parser, ids, prompt = _prepare(case, backend)
    cuts = sorted(data.draw(st.sets(st.integers(1, max(len(ids) - 1, 1)), max_size=12)))
    bounds = [0] + [c for c in cuts if c < len(ids)] + [len(ids)]
    reasoning, content = _run_split(parser, ids, list(zip(bounds, bounds[1:])), prompt)
    assert decode(tok, reasoning) == case.reasoning
    assert decode(tok, content) == case.content


# Delta sizes: one token, a few, the whole completion (one delta finds one span,
# so two-block completions are not sent whole).
STREAM_PARAMS = [
    pytest.param(c, size, id=f"{size}-{c.id}")
    for size in (1, 3, 1000)
    for c in CASES
    if c.stream_ok and not (size == 1000 and c.blocks > 1)
]


@pytest.mark.parametrize("case, size", STREAM_PARAMS)
def test_max_stream_realistic_deltas(case, size, backend):
    """MAX stream(): the caller carries is_currently_reasoning from is_still_reasoning."""
    tok, parser, ids, prompt = _prepare(case, backend)
    fam = FAMILIES[case.family]
    reasoning_now = parser.will_reason_after_prompt(prompt) if prompt is not None else fam.starts_in_reasoning
    reasoning, content = [], []
    for a in range(0, len(ids), size):
        delta = ids[a:a + size]
        out = parser.stream(delta, reasoning_now)
        reasoning += out.span.extract_reasoning(delta)
        content += out.span.extract_content(delta)
        reasoning_now = out.is_still_reasoning
    assert decode(tok, reasoning) == case.reasoning
    assert decode(tok, content) == case.content


# -- real vocabularies: the ids are the real ones -----------------------------


def test_qwen3_real_ids(backend):
    tok = qwen3_tokenizer()
    ids = encode(tok, "<think>\nhm\n</think>\n\n" + WEATHER_QWEN)
    assert ids[0] == 151667 and 151668 in ids and 151657 in ids
    parser = reasoning_core.get_parser("qwen3", tok, backend=backend)
    out = parser.split(ids)
    assert out.delimiter_ids == [151667, 151668]
    assert out.content_ids[:2] == [271, 151657]  # "\n\n", then the tool-call opener stays content
    assert asyncio.run(reasoning_core.get_parser_cls("qwen3").reasoning_end_token_id(tok)) == 151668


def test_deepseek_real_ids(backend):
    tok = deepseek_tokenizer()
    assert tok.get_vocab_size() == 129280
    parser = reasoning_core.get_parser("deepseek_v3", tok, backend=backend)
    ids = [128821] + encode(tok, "Need a tool.") + [128806, 128808]
    out = parser.split(ids)
    assert out.delimiter_ids == [128821]
    assert out.content_ids == [128806, 128808]
    assert not out.is_reasoning
    assert asyncio.run(reasoning_core.get_parser_cls("deepseek_r1").reasoning_end_token_id(tok)) == 128822


# -- end-of-reasoning ids ------------------------------------------------------

SINGLE_END = ["deepseek_r1", "deepseek_v3", "qwen3", "qwen3_thinking", "qwen3_5", "kimi", "kimi_k2", "glm45",
              "glm47", "step3", "minimax_m2", "seed_oss", "mistral", "gpt_oss", "ernie45", "nemotron_v3", "gemma4"]


@pytest.mark.parametrize("name", SINGLE_END)
def test_reasoning_end_token_id_single(name):
    tok = tokenizer_for(name)
    end = FAMILIES[name].end[0]
    got = asyncio.run(reasoning_core.get_parser_cls(name).reasoning_end_token_id(tok))
    assert got is not None and decode(tok, [got]) == end
    assert reasoning_core.get_parser_cls(name).reasoning_end_token_ids(tok) == [(got,)]


@pytest.mark.parametrize("name", ["granite", "olmo3", "hunyuan_a13b"])
def test_reasoning_end_token_id_multi(name):
    tok = tokenizer_for(name)
    cls = reasoning_core.get_parser_cls(name)
    assert asyncio.run(cls.reasoning_end_token_id(tok)) is None
    seqs = cls.reasoning_end_token_ids(tok)
    assert seqs and all(isinstance(s, tuple) and len(s) > 1 for s in seqs)
    texts = {decode(tok, s).strip() for s in seqs}
    assert texts <= {e.strip() for e in FAMILIES[name].end}
    # Every spelling of the marker is there (bare and after a space/newline).
    if name == "granite":
        assert texts == {"Here is my response:", "Here's my response:"} and len(seqs) >= 4


def test_passthrough_has_no_end():
    tok = family_tokenizer("passthrough")
    cls = reasoning_core.get_parser_cls("passthrough")
    assert asyncio.run(cls.reasoning_end_token_id(tok)) is None
    assert cls.reasoning_end_token_ids(tok) == []


def test_olmo3_think_is_several_ids():
    tok = family_tokenizer("olmo3")
    assert tok.token_to_id("<think>") is None
    assert len(encode(tok, "<think>")) > 1


# -- gpt-oss harmony details ---------------------------------------------------


def test_harmony_header_consumed_and_call_kept(backend):
    tok = family_tokenizer("gpt_oss")
    parser = reasoning_core.get_parser("gpt_oss", tok, backend=backend)
    text = ("<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>Four."
            "<|return|>")
    out = parser.split(encode(tok, text))
    delims = decode(tok, out.delimiter_ids)
    assert delims == ("<|channel|>analysis<|message|><|end|><|start|>assistant<|channel|>final<|message|>"
                      "<|return|>")
    assert not out.is_reasoning


def test_harmony_no_reasoning_is_content(backend):
    tok = family_tokenizer("gpt_oss")
    parser = reasoning_core.get_parser("gpt_oss", tok, backend=backend)
    ids = encode(tok, "<|channel|>final<|message|>Four.<|return|>")
    out = parser.split(ids)
    assert out.reasoning_ids == [] and decode(tok, out.content_ids) == "Four."
    # MAX stream(): with the header in one delta nothing is reasoning.
    res = parser.stream(ids, False)
    assert res.span.is_empty and not res.is_still_reasoning


def test_harmony_stream_whole_deltas(backend):
    tok = family_tokenizer("gpt_oss")
    parser = reasoning_core.get_parser("gpt_oss", tok, backend=backend)
    ids = encode(tok, "<|channel|>analysis<|message|>Think.<|end|>")
    res = parser.stream(ids, False)
    assert decode(tok, res.span.extract_reasoning(ids)) == "Think."
    assert res.span.extract_content(ids) == [] and not res.is_still_reasoning


# -- Gemma 4 ---------------------------------------------------------------------


def _gemma(backend):
    tok = family_tokenizer("gemma4")
    return tok, reasoning_core.get_parser("gemma4", tok, backend=backend)


def test_gemma4_think_marker_means_awaiting(backend):
    tok, parser = _gemma(backend)
    prompt = encode(tok, "<|turn>system\n<|think|><turn|>\n<|turn>user\nHi<turn|>\n<|turn>model\n")
    assert parser.will_reason_after_prompt(prompt)
    assert not parser.will_reason_after_prompt(encode(tok, "<|turn>user\nHi<turn|>\n<|turn>model\n"))
    parser.begin(prompt)
    assert parser.state == "awaiting"
    first = parser.split(encode(tok, "<|channel>"))
    assert first.is_reasoning
    assert first.delimiter_ids == [tok.token_to_id("<|channel>")]


def test_gemma4_stream_preseeded_waits_for_start(backend):
    tok, parser = _gemma(backend)
    ids = encode(tok, "Sure.<|channel>thought\nHm")
    res = parser.stream(ids, True)  # awaiting start: what comes before it is content
    assert decode(tok, res.span.extract_content(ids)) == "Sure."
    assert decode(tok, res.span.extract_reasoning(ids)) == "thought\nHm"
    assert res.is_still_reasoning
    # Once the block has opened, a pre-seeded delta is reasoning again.
    more = encode(tok, "more")
    assert parser.stream(more, True).span.reasoning == (0, len(more))
    parser.reset()  # a new request: awaiting again
    plain = encode(tok, "The answer is 4.")
    res = parser.stream(plain, True)
    assert res.span.is_empty and not res.is_still_reasoning


def test_gemma4_formatter_across_chunks(backend):
    tok, parser = _gemma(backend)
    res = parser.stream(encode(tok, "<|channel>"), False)
    fmt = res.reasoning_text_formatter
    assert fmt is not None
    assert fmt("thou") is None
    assert fmt("ght\nrest") == "rest"
    assert fmt(" more") == " more"


def test_gemma4_formatter_non_matching_start(backend):
    tok, parser = _gemma(backend)
    fmt = parser.stream(encode(tok, "<|channel>"), False).reasoning_text_formatter
    assert fmt("thou") is None
    assert fmt("sands of steps") == "thousands of steps"


def test_gemma4_formatter_every_block(backend):
    """The label is stripped at the start of every block, not only the first."""
    tok, parser = _gemma(backend)
    text = "<|channel>thought\nFirst.<channel|>Answer.<|channel>thought\nSecond.<channel|>Done."
    ids = encode(tok, text)
    shown, reasoning_now = [], False
    for i in range(len(ids)):
        delta = ids[i:i + 1]
        res = parser.stream(delta, reasoning_now)
        piece = decode(tok, res.span.extract_reasoning(delta))
        if piece:
            out = res.reasoning_text_formatter(piece)
            if out is not None:
                shown.append(out)
        reasoning_now = res.is_still_reasoning
    assert "".join(shown) == "First.Second."


def test_gemma4_reset_clears_formatter(backend):
    tok, parser = _gemma(backend)
    fmt = parser.stream(encode(tok, "<|channel>"), False).reasoning_text_formatter
    assert fmt("thou") is None
    parser.reset()
    # The held "thou" is gone; a new block starts clean.
    assert fmt("thought\nX") == "X"
    parser.reset()
    assert fmt("ght\nY") == "ght\nY"


# -- unresolvable ------------------------------------------------------------------


def test_mapping_missing_end_names_it(backend):
    with pytest.raises(ValueError, match="</think>"):
        reasoning_core.get_parser("deepseek_r1", {"<think>": 5}, backend=backend)


def test_mapping_missing_start_names_it():
    with pytest.raises(ValueError, match=r"\[THINK\]"):
        reasoning_core.get_parser("mistral", {"<think>": 1, "</think>": 2})


def test_vocab_only_tokenizer_missing_delimiter():
    class VocabOnly:  # token_to_id but no encode: cannot spell a missing delimiter
        def token_to_id(self, token):
            return {"◁think▷": 1}.get(token)

    with pytest.raises(ValueError, match="◁/think▷"):
        reasoning_core.get_parser("kimi", VocabOnly())


def test_needs_a_tokenizer():
    with pytest.raises(ValueError):
        reasoning_core.get_parser("qwen3")
    assert reasoning_core.get_parser("passthrough").split([1, 2, 3]).content_ids == [1, 2, 3]
