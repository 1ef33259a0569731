"""Decoded stream: token deltas in, reasoning/content text out.

The agreement tests tie the token level to the text level for every family:
text produced by ``ReasoningStreamDecoder`` over a real tokenization, one
token at a time or in random chunks, equals ``text_parser(...).parse()`` over
the decoded full text, whitespace kept raw.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reasoning_core
from reasoning_core import ReasoningStreamDecoder, StreamDelta, get_parser, text_parser
from reasoning_core.decode import MAX_PENDING, _fast_tokenizer
from reasoning_core.families import FAMILIES
from tests.vocab import decode, deepseek_tokenizer, family_tokenizer, qwen3_tokenizer

fixture_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

TOOL_QWEN = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'

# Realistic completions (no prompt: each family starts in its default state).
# Text before reasoning, several blocks, terminators kept in content, multibyte text.
FAMILY_TEXTS: dict[str, list[str]] = {
    "deepseek_r1": [
        "Okay, the user asks for 17 + 25. 数学 🧠: 10 + 20 = 30, 7 + 5 = 12.\n</think>\n\nThe answer is **42**.",
        "<think>\nOkay, let me think.\n</think>\n\nSure: 42 🙂",
    ],
    "deepseek_v3": [
        "Let me check. <think>\nThe user wants the weather in Paris.\n</think>\n\nI'll call the tool."
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
        '```json\n{"city": "Paris"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        "<think>\nI need the weather tool.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function"
        "<｜tool▁sep｜>get_weather<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    ],
    # DSML tool blocks: only </think> ends reasoning, the block is content.
    "deepseek_v32": [
        "<think>\nWeather in Paris, 数学 🧠.\n</think>\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"w\">"
        "\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
    ],
    "deepseek_v4": [
        "<think>\nMaybe <｜DSML｜tool_calls> later.\n</think>\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"w\">"
        "\n<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>",
    ],
    "deepseek_v41": [
        "<think>\nA plan 🙂.\n</think>\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"w\">\n</｜DSML｜ invoke>",
        "<think>x</think>y<think>z",
    ],
    "qwen3": [
        "<think>\nThe user asks for the sum of two numbers.\n</think>\n\nThe answer is **4**.",
        "Sure. <think>\nFirst block.\n</think>\n\nPart one. <think>\nSecond 数学 block.\n</think>\n\n" + TOOL_QWEN,
    ],
    "qwen3_thinking": ["The user asks for the sum.\n</think>\n\nThe answer is 4.", "Let me call the tool.\n" + TOOL_QWEN],
    "qwen3_5": ["<think>\nThe user asks for the sum.\n</think>\n\nThe answer is 4." + TOOL_QWEN],
    "kimi": ["◁think▷The user asks for the sum of two numbers. 🧠◁/think▷The answer is 4.",
             "Hello. ◁think▷Let me think.◁/think▷Done."],
    "kimi_k2": [
        "The user asks for the weather.</think>I will call the tool.<|tool_calls_section_begin|>"
        '<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}'
        "<|tool_call_end|><|tool_calls_section_end|>",
    ],
    "glm45": [
        "<think>The user asks for the weather in Paris.</think>\nI will check."
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
        "\n<think></think>\nThe answer is 4.",
    ],
    "glm47": ["The user asks for the sum.</think>The answer is 4.", "Let me think.</think>Done.<tool_call>get_weather"],
    "step3": ["The user asks for the sum of two numbers.\n</think>\n\nThe answer is 4."],
    "minimax_m2": [
        "<think>\nThe user asks for the weather in Paris.\n</think>\n\nI will check.\n<minimax:tool_call>\n"
        '<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n</invoke>\n</minimax:tool_call>',
    ],
    "seed_oss": ["<seed:think>The user asks for the sum. 🧠</seed:think>The answer is 4."],
    "hunyuan_a13b": [
        "<think>\nThe user asks for the sum of two numbers.\n</think>\n<answer>\nThe answer is 4.\n</answer>",
    ],
    "granite": [
        "Here is my thought process: first add the tens, then the ones.\nHere is my response: 42.",
        "Here's my thought process: check the units.\n\nHere's my response: done.",
    ],
    "mistral": ["[THINK]The user asks for the sum of two numbers.[/THINK]The answer is 4.",
                "Sure. [THINK]Let me think.[/THINK]Done.[TOOL_CALLS]get_weather"],
    "gpt_oss": [
        "<|channel|>analysis<|message|>The user asks for the sum. 数学<|end|>"
        "<|start|>assistant<|channel|>final<|message|>The answer is 4.<|return|>",
        "<|channel|>analysis<|message|>I should call the weather tool.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
        '{"city": "Paris"}<|call|>',
    ],
    "ernie45": ["The user asks for the sum of two numbers.\n</think>\n\n<response>\nThe answer is 4.\n</response>"],
    "olmo3": ["The user asks for the sum of two numbers.\n</think>\nThe answer is 4.",
              "<think>\nLet me think.\n</think>\nDone."],
    "nemotron_v3": ["<think>\nThe user asks for the weather.\n</think>\n\n" + TOOL_QWEN],
    "gemma4": [
        "<|channel>thought\nThe user asks for the sum. 🧠<channel|>The answer is 4.",
        "Hello. <|channel>thought\nI should call the tool.<channel|><|tool_call>call:get_weather{city:Paris}<tool_call|>",
        "<|channel>thought\nFirst.<channel|>Part one.<|channel>thought\nSecond.<channel|>Done.",
    ],
    "passthrough": ["<think>Everything is content.</think> 数学 🧠"],
    # Rows added for the serving engines' parser names (issue 14).
    "kimi_k3": ["The user wants 2+2. 🧠<|close|>think<|sep|><|open|>response<|sep|>The answer is 4."
                "<|close|>response<|sep|><|close|>message<|sep|>",
                "Need the tool.<|open|>tools<|sep|>[{\"name\": \"get_weather\"}]"],
    "k2_horizon": ["<ifm|think>Sum of 2 and 2.</ifm|think>The answer is 4.",
                   "Quick 数学 check.</ifm|think_fast>Answer: 4.<ifm|tool_calls>[]"],
    "minimax_m3": ["<mm:think>Add them. 🧠</mm:think>The answer is 4."],
    "cohere_command": ["The user asks for 2+2.<|END_THINKING|><|START_TEXT|>The answer is 4. 🙂<|END_TEXT|>",
                       "Calling the tool.<|START_ACTION|>[{\"tool_name\": \"get_weather\"}]<|END_ACTION|>"],
    "plamo3": ["Adding 数学.<|plamo:end_think:plamo|>The answer is 4.",
               "Need the weather.<|plamo:begin_tool_requests:plamo|>{}<|plamo:end_tool_requests:plamo|>"],
    "inkling": ["<|content_thinking|>Add 2 and 2.<|end_message|><|message_model|><|content_text|>The answer is 4."
                "<|end_message|>"],
    "muse": [" to=self<|message|>Add.<|eom|><|start|>assistant<|message|>Check 🧠.<|eom|>"
             "<|start|>assistant to=user<|message|>4.<|eot|>"],
    "muse_glimmer": [" to=self<|message|>Add 2 and 2.<|eom|><|start|>assistant to=user<|message|>The answer is 4."
                     "<|eot|>",
                     " to=self<|message|>Need weather.<|start|>assistant to=functions.get_weather<|message|>{}<|eom|>"],
    "poolside_v1": ["<think>Add.</think>The answer is 4.", "<think>Need the weather. " + TOOL_QWEN],
    "mimo": ["<think>\nAdd. 数学\n</think>\n\nThe answer is 4."],
    "holo2": ["Click the button.\n</think>\n\nDone. 🙂"],
    "hy_v3": ["<think>Need weather.<tool_calls><tool_call>get_weather<tool_sep>{}</tool_call></tool_calls>"],
    "hy_v4": ["Add.</think>The answer is 4."],
    "apertus": ["<|inner_prefix|>Add. 🧠<|inner_suffix|>The answer is 4.",
                "<|inner_prefix|>Need weather.<|tools_prefix|>[{}]<|tools_suffix|>"],
    "granite_thinking": ["Add.\n</think>\nThe answer is 4.", "Need weather.\n" + TOOL_QWEN],
}

CASES = [pytest.param(name, i, id=f"{name}-{i}") for name, texts in FAMILY_TEXTS.items() for i in range(len(texts))]


def tokenizer_for(name: str):
    # The real DeepSeek vocabulary where the family ships it.
    return deepseek_tokenizer() if name.startswith("deepseek") else family_tokenizer(name)


class DecodeOnly:
    """A tokenizer seen only through ``decode(ids)``: forces the generic detokenizer."""

    def __init__(self, tok) -> None:
        self._tok = tok

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        return self._tok.decode(list(ids), skip_special_tokens=skip_special_tokens)


# The agreement's reference is the full decode *keeping* special tokens
# (tests.vocab.decode): these small vocabularies mark every added token
# special, terminators such as <tool_call> included, so the decoder keeps them
# too.  The default (skip_special_tokens=True) is tested in test_hardening_decode.
KEEP = {"skip_special_tokens": False}


def run(name, tok, ids, bounds, backend, *, wrap=False, field="reasoning"):
    parser = get_parser(name, tok, backend=backend).begin()
    dec = ReasoningStreamDecoder(parser, DecodeOnly(tok) if wrap else tok, field=field, **KEEP)
    deltas = [dec.push(ids[a:b]) for a, b in zip(bounds, bounds[1:])]
    deltas.append(dec.finish())
    return deltas


def joined(deltas) -> tuple[str, str]:
    return "".join(d.reasoning for d in deltas), "".join(d.content for d in deltas)


def encode(name: str, i: int):
    tok = tokenizer_for(name)
    text = FAMILY_TEXTS[name][i]
    ids = tok.encode(text, add_special_tokens=False).ids
    return tok, text, ids


def test_every_family_has_texts():
    assert set(FAMILY_TEXTS) == set(FAMILIES)


@pytest.mark.parametrize("wrap", [False, True], ids=["decodestream", "window"])
@pytest.mark.parametrize("name,i", CASES)
def test_agreement_one_token_deltas(backend, name, i, wrap):
    tok, text, ids = encode(name, i)
    full = decode(tok, ids)
    assert full == text  # the tokenization round-trips
    expected = text_parser(name, backend=backend).parse(full)
    if name != "passthrough" and "<think></think>" not in text:
        assert expected[0] and expected[1]  # both sides non-trivial
    deltas = run(name, tok, ids, list(range(len(ids) + 1)), backend, wrap=wrap)
    assert joined(deltas) == expected
    assert not any("\ufffd" in d.reasoning + d.content for d in deltas)


@fixture_ok
@given(data=st.data())
@pytest.mark.parametrize("name,i", CASES)
def test_agreement_random_chunks(backend, name, i, data):
    tok, text, ids = encode(name, i)
    cuts = data.draw(st.lists(st.integers(0, len(ids)), max_size=10))
    bounds = [0] + sorted(cuts) + [len(ids)]
    wrap = data.draw(st.booleans())
    expected = text_parser(name, backend=backend).parse(decode(tok, ids))
    assert joined(run(name, tok, ids, bounds, backend, wrap=wrap)) == expected


def test_gemma4_label_stripped_across_tokens(backend):
    tok, text, ids = encode("gemma4", 2)
    # The label really is split over several tokens in this vocabulary.
    label_tokens = [decode(tok, [t]) for t in ids[1:4]]
    assert "".join(label_tokens).startswith("thought") and "thought\n" not in label_tokens
    reasoning, content = joined(run("gemma4", tok, ids, list(range(len(ids) + 1)), backend))
    assert (reasoning, content) == ("First.Second.", "Part one.Done.")


def test_qwen3_real_vocabulary(backend):
    # The real Qwen3 vocabulary (tiktoken BPE, no tokenizers.Tokenizer): the
    # generic detokenizer over decode(ids).
    tok = qwen3_tokenizer()
    assert _fast_tokenizer(tok) is None
    text = FAMILY_TEXTS["qwen3"][1] + " 答えは四です 🧠🙂"
    ids = tok.encode(text)
    parser = get_parser("qwen3", tok, backend=backend).begin()
    dec = ReasoningStreamDecoder(parser, tok, **KEEP)
    deltas = [dec.push([t]) for t in ids] + [dec.finish()]
    assert joined(deltas) == text_parser("qwen3", backend=backend).parse(tok.decode(ids))
    assert not any("\ufffd" in d.reasoning + d.content for d in deltas)


# -- multibyte characters split over byte-level tokens -----------------------------------------

MULTIBYTE = "<think>\n数学 🧠 𝔘 ok 答え🙂\n</think>\n\n結果 🎉 𝔘done"


@pytest.mark.parametrize("name", ["deepseek_v3", "qwen3"])
@pytest.mark.parametrize("wrap", [False, True], ids=["decodestream", "window"])
def test_split_multibyte_never_emits_replacement(backend, name, wrap):
    tok = tokenizer_for(name)
    ids = tok.encode(MULTIBYTE, add_special_tokens=False).ids
    # Some tokens really are partial characters on their own.
    assert any("\ufffd" in decode(tok, [t]) for t in ids)
    deltas = run(name, tok, ids, list(range(len(ids) + 1)), backend, wrap=wrap)
    for d in deltas:
        assert "\ufffd" not in d.reasoning + d.content
        d.reasoning.encode("utf-8"), d.content.encode("utf-8")  # whole characters only
    assert joined(deltas) == ("\n数学 🧠 𝔘 ok 答え🙂\n", "\n\n結果 🎉 𝔘done")


@pytest.mark.parametrize("wrap", [False, True], ids=["decodestream", "window"])
def test_truncated_character_is_released_by_finish(backend, wrap):
    tok = family_tokenizer("qwen3")
    ids = tok.encode("<think>ok 🧠", add_special_tokens=False).ids
    cut = next(k for k in range(len(ids), 0, -1) if decode(tok, ids[:k]).endswith("\ufffd"))
    ids = ids[:cut]  # generation stopped in the middle of the emoji
    deltas = run("qwen3", tok, ids, list(range(len(ids) + 1)), backend, wrap=wrap)
    assert not any("\ufffd" in d.reasoning for d in deltas[:-1])
    assert deltas[-1].reasoning.endswith("\ufffd")
    assert joined(deltas) == text_parser("qwen3").parse(decode(tok, ids))


def test_transformers_tokenizer_uses_its_backend(backend):
    transformers = pytest.importorskip("transformers")
    tok = family_tokenizer("qwen3")
    hf = transformers.PreTrainedTokenizerFast(tokenizer_object=tok)
    assert _fast_tokenizer(hf) is hf.backend_tokenizer
    _, text, ids = encode("qwen3", 1)
    parser = get_parser("qwen3", hf, backend=backend).begin()
    dec = ReasoningStreamDecoder(parser, hf, **KEEP)
    deltas = [dec.push([t]) for t in ids] + [dec.finish()]
    assert joined(deltas) == text_parser("qwen3").parse(text)


# -- OpenAI-style deltas -------------------------------------------------------------------------

@pytest.mark.parametrize("field", ["reasoning", "reasoning_content"])
def test_openai_delta(backend, field):
    tok, text, ids = encode("qwen3", 0)
    deltas = run("qwen3", tok, ids, [0, 3, len(ids) - 1, len(ids)], backend, field=field)
    dicts = [d.to_openai_delta() for d in deltas]
    assert all(set(d) <= {field, "content"} for d in dicts)
    assert all(v for d in dicts for v in d.values())  # empty fields are omitted
    assert "".join(d.get(field, "") for d in dicts) == "\nThe user asks for the sum of two numbers.\n"
    assert "".join(d.get("content", "") for d in dicts) == "\n\nThe answer is **4**."


def test_stream_delta_type():
    assert reasoning_core.StreamDelta is StreamDelta
    assert reasoning_core.ReasoningStreamDecoder is ReasoningStreamDecoder
    d = StreamDelta("r", "", "reasoning_content")
    assert d.to_openai_delta() == {"reasoning_content": "r"}
    assert StreamDelta().to_openai_delta() == {}
    assert not StreamDelta() and d
    assert StreamDelta("a", "b") == StreamDelta("a", "b") != StreamDelta("a", "c")


def test_held_sequence_delimiter_across_deltas(backend):
    # Granite's markers are several tokens: held while undecided, then released.
    tok = family_tokenizer("granite")
    text = "Here is my thought process: add.\nHere is my idea, not a response: 42.\nHere is my response: 42."
    ids = tok.encode(text).ids
    deltas = run("granite", tok, ids, list(range(len(ids) + 1)), backend)
    assert joined(deltas) == (" add.\nHere is my idea, not a response: 42.\n", " 42.")
    assert any(not d for d in deltas[1:-1])  # some pushes were held back entirely


def test_empty_push_and_finish_twice(backend):
    tok, _, ids = encode("qwen3", 0)
    dec = ReasoningStreamDecoder(get_parser("qwen3", tok, backend=backend).begin(), tok)
    assert dec.push([]) == StreamDelta()
    dec.push(ids)
    assert dec.finish() == StreamDelta()
    assert dec.finish() == StreamDelta()


# -- bad input -----------------------------------------------------------------------------------

def test_bad_arguments(backend):
    tok = family_tokenizer("qwen3")
    parser = get_parser("qwen3", tok, backend=backend)
    with pytest.raises(ValueError, match="field"):
        ReasoningStreamDecoder(parser, tok, field="thinking")
    with pytest.raises(TypeError):
        ReasoningStreamDecoder(text_parser("qwen3"), tok)
    with pytest.raises(TypeError):
        ReasoningStreamDecoder(parser, None)
    with pytest.raises(TypeError):
        ReasoningStreamDecoder(parser, object())
    dec = ReasoningStreamDecoder(parser.begin(), tok, **KEEP)
    for bad in (None, 1.5, [1.5], ["a"], "abc", b"ab"):
        with pytest.raises(TypeError):
            dec.push(bad)
    assert dec.push([1, 2]).content  # still usable


# -- known effects ---------------------------------------------------------------------------------

def test_granite_marker_keeps_the_space_before_it(backend):
    # A BPE glues the space before a text marker to the marker's first token
    # ("ĠHere"); markers are matched over token bytes, so that space stays
    # reasoning text, as at the text level.
    tok = family_tokenizer("granite")
    ids = tok.encode("Here is my thought process: a. Here is my response: b").ids
    tokens = joined(run("granite", tok, ids, list(range(len(ids) + 1)), backend))
    assert tokens == (" a. ", " b")
    assert text_parser("granite").parse(decode(tok, ids)) == (" a. ", " b")


def test_gpt_oss_commentary_closes_unterminated_analysis(backend):
    # A multi-token channel header ends an unterminated analysis at both levels.
    tok = family_tokenizer("gpt_oss")
    text = ("<|channel|>analysis<|message|>I should call the tool.<|start|>assistant<|channel|>commentary"
            " to=functions.f <|constrain|>json<|message|>{}<|call|>")
    ids = tok.encode(text).ids
    expected = text_parser("gpt_oss").parse(text)
    assert expected[0] == "I should call the tool."
    assert joined(run("gpt_oss", tok, ids, [0, len(ids)], backend)) == expected


@pytest.mark.parametrize("wrap", [False, True], ids=["decodestream", "window"])
def test_invalid_bytes_are_released_not_hoarded(backend, wrap):
    # A stream of lone UTF-8 continuation bytes never completes a character:
    # it comes out as U+FFFD (as the full decode has it) within a few tokens.
    tok = family_tokenizer("qwen3")
    lone = tok.token_to_id(next(t for t, i in tok.get_vocab().items() if decode(tok, [i]) == "\ufffd"))
    head = tok.encode("<think>ok").ids
    ids = head + [lone] * 40 + tok.encode(" fine").ids
    deltas = run("qwen3", tok, ids, list(range(len(ids) + 1)), backend, wrap=wrap)
    assert joined(deltas) == text_parser("qwen3").parse(decode(tok, ids))
    emitted = 0
    for k, d in enumerate(deltas[:-1]):
        emitted += d.reasoning.count("\ufffd")
        pushed = min(max(k + 1 - len(head), 0), 40)
        assert pushed - emitted <= MAX_PENDING  # held back at most a few tokens


@pytest.mark.parametrize("wrap", [False, True], ids=["decodestream", "window"])
def test_long_delta_ending_inside_a_character(backend, wrap):
    tok = family_tokenizer("qwen3")
    text = "<think>" + "数学 🧠 " * 6 + "🙂 done</think>ok"
    ids = tok.encode(text).ids
    cut = next(k for k in range(len(ids) - 1, 0, -1) if decode(tok, ids[:k]).endswith("\ufffd"))
    assert cut > 10
    deltas = run("qwen3", tok, ids, [0, cut, len(ids)], backend, wrap=wrap)
    assert not any("\ufffd" in d.reasoning + d.content for d in deltas)
    assert joined(deltas) == text_parser("qwen3").parse(text)


# -- the compiled per-token push -------------------------------------------------

@pytest.mark.compiled
def test_compiled_push_is_used_where_it_applies():
    from reasoning_core._engine import DecodePush

    tok = deepseek_tokenizer()
    dec = ReasoningStreamDecoder(get_parser("deepseek_r1", tok, backend="cython").begin(), tok)
    assert isinstance(dec.push.__self__, DecodePush)
    # The pure engine, a label formatter (Gemma 4) and a decode-only tokenizer keep the Python push.
    pure = ReasoningStreamDecoder(get_parser("deepseek_r1", tok, backend="python").begin(), tok)
    assert pure.push.__func__ is ReasoningStreamDecoder.push
    g = family_tokenizer("gemma4")
    assert ReasoningStreamDecoder(get_parser("gemma4", g, backend="cython").begin(), g).push.__func__ \
        is ReasoningStreamDecoder.push


@pytest.mark.compiled
@fixture_ok
@given(data=st.data())
@pytest.mark.parametrize("name,i", [c for c in CASES if c.values[0] in ("deepseek_r1", "qwen3", "kimi", "gpt_oss")])
def test_compiled_push_equals_the_python_push_delta_by_delta(name, i, data):
    tok, text, ids = encode(name, i)
    # one-token deltas mostly (the compiled case), some longer ones, some bad input
    bounds, k = [0], 0
    while k < len(ids):
        k = min(len(ids), k + data.draw(st.sampled_from([1, 1, 1, 2, 3])))
        bounds.append(k)
    outs = []
    bads = ([-1], [10 ** 30], ["x"], [tok.get_vocab_size() + 10 ** 6])
    for compiled in (True, False):
        dec = ReasoningStreamDecoder(get_parser(name, tok, backend="cython").begin(), tok, **KEEP)
        push = dec.push if compiled else ReasoningStreamDecoder.push.__get__(dec)
        got = []
        for j, (a, b) in enumerate(zip(bounds, bounds[1:])):
            if j % 7 < len(bads):
                with pytest.raises((TypeError, ValueError)):
                    push(bads[j % 7])  # refused before anything is consumed, on either path
            got.append(tuple(push(ids[a:b])))
        got.append(tuple(dec.finish()))
        outs.append(got)
    assert outs[0] == outs[1]
