"""Prompt-aware start state on prompts rendered by real chat templates.

The templates below are short re-creations of what each model's own chat
template does around the generation prompt (thinking on/off, tool
instructions in the system prompt, reasoning kept in history), rendered with
``transformers``' ``apply_chat_template`` over offline tokenizers.  The same
objects check that a ``transformers`` tokenizer, a MAX-style pipeline
tokenizer and a plain mapping are all accepted.
"""
from __future__ import annotations

import asyncio
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here may reach the network

import pytest

import reasoning_core
from vocab import decode, deepseek_tokenizer, encode, family_tokenizer, qwen3_tokenizer

transformers = pytest.importorskip("transformers")
pytest.importorskip("jinja2")

# -- templates (written for these tests; HF renders with trim_blocks/lstrip_blocks) --

QWEN_TOOLS_SYSTEM = r"""
{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0].role == 'system' %}{{- messages[0].content + '\n\n' }}{%- endif %}
    {{- '# Tools\n\nYou may call one or more functions.\n<tools>' }}
    {%- for tool in tools %}{{- '\n' + (tool | tojson) }}{%- endfor %}
    {{- '\n</tools>\n\nFor each function call, return a json object within <tool_call></tool_call> XML tags:\n' }}
    {{- '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' }}
{%- elif messages[0].role == 'system' %}
    {{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
    {%- if message.role == 'assistant' %}
        {{- '<|im_start|>assistant\n' }}
        {%- if message.reasoning_content %}
            {{- '<think>\n' + message.reasoning_content + '\n</think>\n\n' }}
        {%- endif %}
        {{- message.content }}
        {%- for call in message.tool_calls or [] %}
            {{- '\n<tool_call>\n' + ({'name': call.name, 'arguments': call.arguments} | tojson) + '\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == 'tool' %}
        {{- '<|im_start|>user\n<tool_response>\n' + message.content + '\n</tool_response><|im_end|>\n' }}
    {%- elif message.role != 'system' %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
    {%- endif %}
{%- endfor %}
"""

# Qwen3 hybrid: thinking is on unless enable_thinking=False, which pre-fills an empty block.
QWEN3 = QWEN_TOOLS_SYSTEM + r"""
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\n\n</think>\n\n' }}{%- endif %}
{%- endif %}
"""

# Qwen3-*-Thinking-2507: the template opens the block itself.
QWEN3_THINKING_2507 = QWEN_TOOLS_SYSTEM + r"""
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n<think>\n' }}{%- endif %}
"""

# A thinking model whose template leaves the opening to the model.
QWEN_PLAIN = QWEN_TOOLS_SYSTEM + r"""
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}
"""

DEEPSEEK_BODY = r"""
{{- bos_token }}
{%- if messages[0].role == 'system' %}{{- messages[0].content }}{%- endif %}
{%- if tools %}
    {{- '\n\n## Tools\nYou have access to the following tools:\n' }}
    {%- for tool in tools %}{{- '\n### ' + tool.name + '\nParameters: ' + (tool.parameters | tojson) }}{%- endfor %}
    {{- '\n\nIMPORTANT: ALWAYS adhere to this exact format for tool use:\n' }}
    {{- '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>tool_call_name<｜tool▁sep｜>tool_call_arguments' }}
    {{- '<｜tool▁call▁end｜><｜tool▁calls▁end｜>\n' }}
{%- endif %}
{%- for message in messages %}
    {%- if message.role == 'user' %}
        {{- '<｜User｜>' + message.content }}
    {%- elif message.role == 'assistant' %}
        {#- earlier turns keep only the answer #}
        {{- '<｜Assistant｜>' + history_open + message.content.split('</think>')[-1] + '<｜end▁of▁sentence｜>' }}
    {%- endif %}
{%- endfor %}
"""

# DeepSeek-R1-0528: the generation prompt opens the block.
DEEPSEEK_R1 = "{%- set history_open = '' %}" + DEEPSEEK_BODY + r"""
{%- if add_generation_prompt %}{{- '<｜Assistant｜><think>\n' }}{%- endif %}
"""

# The first DeepSeek-R1 release: the model had to open the block itself.
DEEPSEEK_R1_ORIGINAL = "{%- set history_open = '' %}" + DEEPSEEK_BODY + r"""
{%- if add_generation_prompt %}{{- '<｜Assistant｜>' }}{%- endif %}
"""

# DeepSeek-V3.1: thinking=True opens the block, otherwise it is closed at once.
DEEPSEEK_V31 = "{%- set history_open = '</think>' %}" + DEEPSEEK_BODY + r"""
{%- if add_generation_prompt %}
    {{- '<｜Assistant｜>' + ('<think>' if thinking is defined and thinking else '</think>') }}
{%- endif %}
"""

# Gemma 4: enable_thinking puts <|think|> in the system turn; the model opens <|channel> itself.
GEMMA4 = r"""
{%- if (enable_thinking is defined and enable_thinking) or messages[0].role == 'system' %}
    {{- '<|turn>system\n' }}
    {%- if enable_thinking is defined and enable_thinking %}{{- '<|think|>' }}{%- endif %}
    {%- if messages[0].role == 'system' %}{{- messages[0].content }}{%- endif %}
    {{- '<turn|>\n' }}
{%- endif %}
{%- for message in messages %}
    {%- if message.role == 'assistant' %}
        {{- '<|turn>model\n' + message.content + '<turn|>\n' }}
    {%- elif message.role != 'system' %}
        {{- '<|turn>' + message.role + '\n' + message.content + '<turn|>\n' }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|turn>model\n' }}{%- endif %}
"""

# gpt-oss harmony: the prompt ends at the assistant's start; channels come from the model.
HARMONY = r"""
{%- for message in messages %}
    {{- '<|start|>' + message.role + '<|message|>' + message.content + '<|end|>' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|start|>assistant' }}{%- endif %}
"""

TOOLS = [{"name": "get_weather", "description": "Weather for a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]
ASK = [{"role": "user", "content": "What is 2+2?"}]
WITH_SYSTEM = [{"role": "system", "content": "You are terse."}] + ASK
HISTORY = [
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "", "reasoning_content": "Need the tool.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
    {"role": "tool", "content": '{"temp": 18}'},
    {"role": "assistant", "content": "It is 18 °C.", "reasoning_content": "Read the result."},
    {"role": "user", "content": "And 2+2?"},
]
# A user who pastes delimiters into the question (they tokenize as the special tokens).
TRICKY_USER = [{"role": "user", "content": "Explain what </think> and <tool_call> mean."}]


def hf(tok, template: str, **special):
    """A transformers tokenizer around an offline ``tokenizers.Tokenizer``."""
    out = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, **special)
    out.chat_template = template
    return out


@pytest.fixture(scope="module")
def qwen_small():
    return family_tokenizer("qwen3")


@pytest.fixture(scope="module")
def deepseek_hf():
    return hf(deepseek_tokenizer(), DEEPSEEK_R1, bos_token="<｜begin▁of▁sentence｜>")


def render(tok, messages, template=None, **kwargs) -> list[int]:
    if template is not None:
        tok.chat_template = template
    ids = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=True, **kwargs)
    if not isinstance(ids, list):  # transformers 5 returns a BatchEncoding
        ids = ids["input_ids"]
    text = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False, **kwargs)
    assert ids == tok.encode(text, add_special_tokens=False)
    return list(ids)


def run(parser, prompt, completion_ids):
    parser.begin(prompt)
    a = parser.split(completion_ids)
    b = parser.finish()
    return a.reasoning_ids + b.reasoning_ids, a.content_ids + b.content_ids


# -- Qwen3 family --------------------------------------------------------------


QWEN_CASES = [
    # (family, template, messages, kwargs, will_reason)
    ("qwen3", QWEN3, ASK, {}, False),  # hybrid: the model opens <think> itself
    ("qwen3", QWEN3, ASK, {"enable_thinking": True}, False),
    ("qwen3", QWEN3, ASK, {"enable_thinking": False}, False),
    ("qwen3", QWEN3, WITH_SYSTEM, {"tools": TOOLS}, False),
    ("qwen3_thinking", QWEN3_THINKING_2507, ASK, {}, True),
    ("qwen3_thinking", QWEN3_THINKING_2507, HISTORY, {"tools": TOOLS}, True),
    ("qwen3_thinking", QWEN3_THINKING_2507, TRICKY_USER, {}, True),
    ("qwen3_5", QWEN3, ASK, {"enable_thinking": False}, False),
    ("qwen3_5", QWEN3, ASK, {"enable_thinking": True}, True),
    # A <tool_call> example in the system prompt must not decide the start.
    ("qwen3_thinking", QWEN_PLAIN, WITH_SYSTEM, {"tools": TOOLS}, True),
    ("qwen3_5", QWEN_PLAIN, WITH_SYSTEM, {"tools": TOOLS}, True),
    ("nemotron_v3", QWEN_PLAIN, WITH_SYSTEM, {"tools": TOOLS}, True),
    ("nemotron_v3", QWEN3, ASK, {"enable_thinking": False}, False),
    # ... nor a tool call and reasoning in earlier turns, nor delimiters a user typed.
    ("qwen3_thinking", QWEN_PLAIN, HISTORY, {"tools": TOOLS}, True),
    ("qwen3_thinking", QWEN_PLAIN, TRICKY_USER, {}, True),
    ("qwen3", QWEN3, TRICKY_USER, {"enable_thinking": True}, False),
]


@pytest.mark.parametrize("family, template, messages, kwargs, expected", QWEN_CASES)
def test_qwen_templates(family, template, messages, kwargs, expected, qwen_small, backend):
    tok = hf(qwen_small, template)
    prompt = render(tok, messages, **kwargs)
    parser = reasoning_core.get_parser(family, tok, backend=backend)
    assert parser.will_reason_after_prompt(prompt) is expected
    assert parser.state == ("seeded" if parser.family.starts_in_reasoning else "content")  # no side effect

    # The same prompt text in Qwen3's real vocabulary gives the same answer.
    real = qwen3_tokenizer()
    real_prompt = encode(real, tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False,
                                                       **kwargs))
    assert 151644 in real_prompt
    assert reasoning_core.get_parser(family, real, backend=backend).will_reason_after_prompt(real_prompt) is expected


@pytest.mark.parametrize("family, template, messages, kwargs, expected", QWEN_CASES)
def test_qwen_templates_then_split(family, template, messages, kwargs, expected, qwen_small, backend):
    """begin(prompt) then split(): the answer comes out right whatever the template did."""
    tok = hf(qwen_small, template)
    prompt = render(tok, messages, **kwargs)
    parser = reasoning_core.get_parser(family, tok, backend=backend)
    if expected:  # the template (or the family) opened the block: the model continues it
        completion, want = "The sum is 4.\n</think>\n\nThe answer is 4.", ("The sum is 4.\n", "\n\nThe answer is 4.")
    elif kwargs.get("enable_thinking") is False:
        completion, want = "The answer is 4.", ("", "The answer is 4.")
    else:  # hybrid with thinking on: the model opens the block
        completion, want = "<think>\nThe sum is 4.\n</think>\n\n4.", ("\nThe sum is 4.\n", "\n\n4.")
    reasoning, content = run(parser, prompt, tok.encode(completion, add_special_tokens=False))
    assert (decode(qwen_small, reasoning), decode(qwen_small, content)) == want


def test_qwen3_thinking_off_renders_closed_block(qwen_small):
    tok = hf(qwen_small, QWEN3)
    text = tok.apply_chat_template(ASK, add_generation_prompt=True, tokenize=False, enable_thinking=False)
    assert text.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    text = tok.apply_chat_template(ASK, add_generation_prompt=True, tokenize=False, tools=TOOLS)
    assert "<tool_call>\n{" in text and text.endswith("<|im_start|>assistant\n")


def test_seeded_prompt_then_tool_call(qwen_small, backend):
    tok = hf(qwen_small, QWEN3_THINKING_2507)
    prompt = render(tok, WITH_SYSTEM, tools=TOOLS)
    parser = reasoning_core.get_parser("qwen3_thinking", tok, backend=backend)
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    reasoning, content = run(parser, prompt, tok.encode("Need the weather.\n" + call, add_special_tokens=False))
    assert decode(qwen_small, reasoning) == "Need the weather.\n"
    assert decode(qwen_small, content) == call


# -- DeepSeek (real vocabulary) ------------------------------------------------------


DEEPSEEK_CASES = [
    ("deepseek_r1", DEEPSEEK_R1, ASK, {}, True),
    ("deepseek_r1", DEEPSEEK_R1, HISTORY[:1] + [{"role": "assistant", "content": "<think>\nx\n</think>\n\nSunny."},
                                                {"role": "user", "content": "Thanks"}], {}, True),
    # The original R1 template did not open the block; the family default (reasoning) holds,
    # and the tool-calls example in the system prompt must not change that.
    ("deepseek_r1", DEEPSEEK_R1_ORIGINAL, WITH_SYSTEM, {"tools": TOOLS}, True),
    ("deepseek_v3", DEEPSEEK_V31, ASK, {"thinking": True}, True),
    ("deepseek_v3", DEEPSEEK_V31, ASK, {"thinking": False}, False),
    ("deepseek_v3", DEEPSEEK_V31, WITH_SYSTEM, {"thinking": True, "tools": TOOLS}, True),
    ("deepseek_v3", DEEPSEEK_V31, WITH_SYSTEM, {"thinking": False, "tools": TOOLS}, False),
    ("deepseek_v3", DEEPSEEK_V31, HISTORY, {"thinking": True}, True),
    # V3 (no thinking) ends at the assistant tag: family default, content.
    ("deepseek_v3", DEEPSEEK_R1_ORIGINAL, WITH_SYSTEM, {"tools": TOOLS}, False),
]


@pytest.mark.parametrize("family, template, messages, kwargs, expected", DEEPSEEK_CASES)
def test_deepseek_templates(family, template, messages, kwargs, expected, deepseek_hf, backend):
    prompt = render(deepseek_hf, messages, template, **kwargs)
    assert prompt[0] == 0  # BOS
    parser = reasoning_core.get_parser(family, deepseek_hf, backend=backend)
    assert parser.will_reason_after_prompt(prompt) is expected
    if expected:
        completion = "Two plus two is four.\n</think>\n\nThe answer is 4."
        want = ("Two plus two is four.\n", "\n\nThe answer is 4.")
    else:
        completion, want = "The answer is 4.", ("", "The answer is 4.")
    raw = deepseek_tokenizer()
    reasoning, content = run(parser, prompt, encode(raw, completion))
    assert (decode(raw, reasoning), decode(raw, content)) == want


def test_deepseek_v31_thinking_tool_call(deepseek_hf, backend):
    prompt = render(deepseek_hf, WITH_SYSTEM, DEEPSEEK_V31, thinking=True, tools=TOOLS)
    assert prompt[-1] == 128821
    assert 128806 in prompt  # the tool-calls example in the system prompt
    parser = reasoning_core.get_parser("deepseek_v3", deepseek_hf, backend=backend)
    call = '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    raw = deepseek_tokenizer()
    reasoning, content = run(parser, prompt, encode(raw, "I should call the tool." + call))
    assert decode(raw, reasoning) == "I should call the tool."
    assert decode(raw, content) == call


def test_transformers_tokenizer_resolves_like_raw(deepseek_hf):
    for name in ("deepseek_r1", "deepseek_v3"):
        via_hf = reasoning_core.get_parser(name, deepseek_hf).tables.patterns
        via_raw = reasoning_core.get_parser(name, deepseek_tokenizer()).tables.patterns
        assert via_hf == via_raw


def test_transformers_tokenizer_end_id(deepseek_hf):
    cls = reasoning_core.get_parser_cls("deepseek_r1")
    assert asyncio.run(cls.reasoning_end_token_id(deepseek_hf)) == 128822
    assert asyncio.run(reasoning_core.create("deepseek_v3", deepseek_hf)).family.name == "deepseek_v3"


# -- Gemma 4 -------------------------------------------------------------------


@pytest.fixture(scope="module")
def gemma_hf():
    return hf(family_tokenizer("gemma4"), GEMMA4)


@pytest.mark.parametrize("thinking", [True, False])
@pytest.mark.parametrize("messages", [ASK, WITH_SYSTEM], ids=["ask", "system"])
def test_gemma4_template(thinking, messages, gemma_hf, backend):
    prompt = render(gemma_hf, messages, enable_thinking=thinking)
    parser = reasoning_core.get_parser("gemma4", gemma_hf, backend=backend)
    assert parser.will_reason_after_prompt(prompt) is thinking
    parser.begin(prompt)
    assert parser.state == ("awaiting" if thinking else "content")
    raw = family_tokenizer("gemma4")
    completion = "<|channel>thought\nAdd them.<channel|>The answer is 4." if thinking else "The answer is 4."
    reasoning, content = run(parser, prompt, encode(raw, completion))
    assert decode(raw, reasoning) == ("thought\nAdd them." if thinking else "")
    assert decode(raw, content) == "The answer is 4."


def test_gemma4_thinking_enabled_but_skipped(gemma_hf, backend):
    """Awaiting start: an answer without a thought channel is all content."""
    prompt = render(gemma_hf, ASK, enable_thinking=True)
    parser = reasoning_core.get_parser("gemma4", gemma_hf, backend=backend)
    raw = family_tokenizer("gemma4")
    reasoning, content = run(parser, prompt, encode(raw, "The answer is 4."))
    assert reasoning == [] and decode(raw, content) == "The answer is 4."


# -- gpt-oss harmony -------------------------------------------------------------------


def test_harmony_prompt(backend):
    raw = family_tokenizer("gpt_oss")
    tok = hf(raw, HARMONY)
    prompt = render(tok, WITH_SYSTEM)
    parser = reasoning_core.get_parser("gpt_oss", tok, backend=backend)
    assert parser.will_reason_after_prompt(prompt) is False  # channels come from the model
    completion = ("<|channel|>analysis<|message|>Add.<|end|><|start|>assistant<|channel|>final<|message|>"
                  "4<|return|>")
    reasoning, content = run(parser, prompt, encode(raw, completion))
    assert (decode(raw, reasoning), decode(raw, content)) == ("Add.", "4")


# -- other tokenizer shapes -------------------------------------------------------------


class MaxStyleTokenizer:
    """Mimics a MAX pipeline tokenizer: async ``encode`` and the HF tokenizer as ``.delegate``."""

    def __init__(self, delegate):
        self.delegate = delegate

    async def encode(self, prompt, add_special_tokens=False):
        return self.delegate.encode(prompt, add_special_tokens=add_special_tokens)


@pytest.mark.parametrize("name", ["qwen3", "granite", "olmo3", "gpt_oss"])
def test_max_style_tokenizer(name, backend):
    raw = family_tokenizer(name)
    max_tok = MaxStyleTokenizer(hf(raw, QWEN3))
    parser = asyncio.run(reasoning_core.create(name, max_tok, backend=backend))
    assert parser.tables.patterns == reasoning_core.get_parser(name, raw).tables.patterns
    end = asyncio.run(reasoning_core.get_parser_cls(name).reasoning_end_token_id(max_tok))
    assert (end is None) == (name in ("granite", "olmo3"))


def test_max_style_tokenizer_splits(backend):
    raw = family_tokenizer("qwen3")
    parser = asyncio.run(reasoning_core.create("qwen3", MaxStyleTokenizer(raw), backend=backend))
    reasoning, content = run(parser, None, encode(raw, "<think>Hm.</think>Four."))
    assert (decode(raw, reasoning), decode(raw, content)) == ("Hm.", "Four.")


def test_plain_mapping(backend):
    vocab = {"<think>": 7, "</think>": 8, "<tool_call>": 9, "<|im_start|>": 10}
    parser = reasoning_core.get_parser("qwen3", vocab, backend=backend)
    assert asyncio.run(reasoning_core.get_parser_cls("qwen3").reasoning_end_token_id(vocab)) == 8
    out = parser.split([1, 7, 2, 3, 8, 4, 9, 5])
    assert (out.content_ids, out.reasoning_ids, out.delimiter_ids) == ([1, 4, 9, 5], [2, 3], [7, 8])
    assert parser.will_reason_after_prompt([10, 1, 7]) is True
    assert parser.will_reason_after_prompt([9, 10, 1]) is False  # a tool call in an earlier turn
    parser = asyncio.run(reasoning_core.create("qwen3", vocab, backend=backend))
    assert parser.split([7, 1, 8, 2]).reasoning_ids == [1]


def test_plain_mapping_missing_delimiter():
    with pytest.raises(ValueError, match="</think>"):
        reasoning_core.get_parser("qwen3", {"<think>": 1})
    with pytest.raises(ValueError, match="</think>"):
        asyncio.run(reasoning_core.create("qwen3", {"<think>": 1}))
