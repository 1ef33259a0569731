"""The family rows added for the serving engines' reasoning-parser names (issue 14).

Every reasoning-parser name vLLM 0.33, SGLang 0.5.23 and MAX 26.7 register maps
to a family of ours (``ENGINE_PARSER_NAMES``).  Each new row is run end to end
on a small tokenizer carrying the family's special tokens: ``split()`` one
token at a time, ``stream()`` where every delimiter is one token, the prompt
decision on a rendered chat-template tail, and the text parser on the same
text.  Families built at run time (``make_family``, a checkpoint's
``response_template``, Hunyuan's suffixed tokens) are checked the same way.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reasoning_core
from reasoning_core import FAMILIES, parser_for_model
from reasoning_core.families import (
    ENGINE_NOTES,
    ENGINE_PARSER_NAMES,
    RUNTIME_ENGINE_NAMES,
    family_for_tokenizer,
    get_family,
    hunyuan_token_suffix,
    make_family,
    response_template_family,
    response_template_of,
)
from reasoning_core.parser import parser_class
from reasoning_core.text import TextReasoningParser
from vocab import build_tokenizer, decode, encode, family_tokenizer

NEW_ROWS = ("kimi_k3", "k2_horizon", "minimax_m3", "cohere_command", "plamo3", "inkling", "muse", "muse_glimmer",
            "poolside_v1", "mimo", "holo2", "hy_v3", "hy_v4", "apertus", "granite_thinking")

# The names each engine registers (from the issue; the engines' own lists when installed).
VLLM_NAMES = (
    "beam cohere_command3 cohere_command4 deepseek_r1 deepseek_v3 deepseek_v4 deepseek_v41 ernie45 gemma4 glm45 "
    "glm47 granite granite_thinking_parser hf holo2 hunyuan_a13b hy_v3 hy_v4 inkling k2_horizon kimi_k2 kimi_k3 "
    "ling3 mimo minicpmv minimax_m2 minimax_m2_append_think minimax_m3 mistral muse muse_glimmer musespark1x "
    "nemotron_v3 olmo3 openai_gptoss plamo3 poolside_v1 qwen3 seed_oss step3 step3p5 step5"
).split()
SGLANG_NAMES = (
    "apertus2509 beam cohere_command4 deepseek-r1 deepseek-v3 deepseek-v4 deepseek-v41 dots gemma4 gigachat35 "
    "glm45 gpt-oss granite_thinking_parser hunyuan inkling interns1 iquest_q1 k2_horizon kimi kimi_k2 kimi_k3 "
    "ling3 mimo minimax minimax-append-think minimax-m3 mistral muse nanbeige nemotron_3 poolside_v1 qwen3 "
    "qwen3-thinking response_template step3 step3p5"
).split()
MAX_NAMES = "deepseekv4 gemma4 glm45 inkling kimik2_5 laguna minimax_m2 muse_glimmer qwen3_5".split()


# -- the engine-name map ----------------------------------------------------------


def test_engine_map_covers_every_registered_name():
    assert sorted(ENGINE_PARSER_NAMES) == ["max", "sglang", "vllm"]
    assert sorted(ENGINE_PARSER_NAMES["vllm"]) == sorted(VLLM_NAMES) and len(VLLM_NAMES) == 42
    assert sorted(ENGINE_PARSER_NAMES["sglang"]) == sorted(SGLANG_NAMES) and len(SGLANG_NAMES) == 36
    assert sorted(ENGINE_PARSER_NAMES["max"]) == sorted(MAX_NAMES) and len(MAX_NAMES) == 9


@pytest.mark.parametrize("engine, name", [(e, n) for e, m in ENGINE_PARSER_NAMES.items() for n in m])
def test_every_engine_name_resolves(engine, name):
    fam = get_family(ENGINE_PARSER_NAMES[engine][name])
    assert fam.name == ENGINE_PARSER_NAMES[engine][name]  # values are row names, not aliases
    assert reasoning_core.get_parser_cls(fam.name).family is fam


def test_engine_notes_and_runtime_names_refer_to_mapped_names():
    for engine, name in ENGINE_NOTES:
        assert name in ENGINE_PARSER_NAMES[engine], (engine, name)
    for engine, names in RUNTIME_ENGINE_NAMES.items():
        assert names <= set(ENGINE_PARSER_NAMES[engine])
    assert RUNTIME_ENGINE_NAMES["vllm"] == {"hf", "beam"}
    assert RUNTIME_ENGINE_NAMES["sglang"] == {"response_template", "beam"}


def test_every_new_row_is_served():
    served = {v for m in ENGINE_PARSER_NAMES.values() for v in m.values()}
    assert set(NEW_ROWS) <= served
    assert set(NEW_ROWS) <= set(FAMILIES)
    assert set(NEW_ROWS) <= set(reasoning_core.available_parsers())


def test_engine_names_that_are_ours_too_agree():
    """Where an engine name is also one of our names, it is the same row unless noted."""
    differ = {("sglang", "hunyuan"), ("vllm", "minimax_m2_append_think"), ("sglang", "minimax-append-think"),
              ("vllm", "hf"), ("vllm", "beam"), ("sglang", "beam"), ("sglang", "response_template"),
              ("sglang", "muse")}
    for engine, names in ENGINE_PARSER_NAMES.items():
        for name, fam in names.items():
            if (engine, name) in differ:
                assert (engine, name) in ENGINE_NOTES
                continue
            try:
                ours = get_family(name).name
            except ValueError:
                continue
            assert ours == fam, (engine, name)


@pytest.mark.parametrize("module, engine", [("vllm", "vllm"), ("sglang", "sglang")])
def test_engine_registry_matches_when_installed(module, engine):
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed here")
    if engine == "vllm":
        from vllm.reasoning import ReasoningParserManager

        names = set(ReasoningParserManager.list_registered())
    else:  # import the parser module without starting SGLang's runtime
        import sys
        import types

        spec = importlib.util.find_spec("sglang")
        if "sglang" not in sys.modules:
            m = types.ModuleType("sglang")
            m.__path__ = list(spec.submodule_search_locations)
            sys.modules["sglang"] = m
        from sglang.srt.parser.reasoning_parser import ReasoningParser

        names = set(ReasoningParser.DetectorMap)
    assert names == set(ENGINE_PARSER_NAMES[engine])


# -- realistic completions, one or more per new row --------------------------------


@dataclasses.dataclass(frozen=True)
class Case:
    id: str
    family: str
    text: str
    reasoning: str
    content: str
    prompt: str | None = None
    thinks: bool | None = None  # expected will_reason_after_prompt(prompt)
    blocks: int = 1

    def __str__(self) -> str:
        return self.id


K3_USER = "<|open|>user<|sep|>What is 2+2?<|close|>message<|sep|><|open|>assistant<|sep|>"
K3_TOOLS = '<|open|>tools<|sep|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]<|close|>tools<|sep|>'
COHERE_USER = ("<|START_OF_TURN_TOKEN|><|USER_TOKEN|>What is 2+2?<|END_OF_TURN_TOKEN|>"
               "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>")
COHERE_ACTION = '<|START_ACTION|>[{"tool_name": "get_weather", "parameters": {"city": "Paris"}}]<|END_ACTION|>'
PLAMO_CALL = ('<|plamo:begin_tool_requests:plamo|>{"name": "get_weather", "arguments": {"city": "Paris"}}'
              "<|plamo:end_tool_requests:plamo|>")
INK_PROMPT = "<|message_system|>Be brief.<|end_message|><|message_user|>What is 2+2?<|end_message|><|message_model|>"
INK_TOOL = '<|content_invoke_tool_json|>{"name": "get_weather", "args": {"city": "Paris"}}<|end_message|>'
MUSE_CALL = '<|start|>assistant to=functions.get_weather<|message|>{"city": "Paris"}<|eom|>'
GLM_CALL = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>"
QWEN_CODER = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"
HY_CALL = "<tool_calls><tool_call>get_weather<tool_sep>{\"city\": \"Paris\"}</tool_call></tool_calls>"
APERTUS_CALL = '<|tools_prefix|>[{"get_weather": {"city": "Paris"}}]<|tools_suffix|>'
GRANITE_USER = ("<|start_of_role|>user<|end_of_role|>What is 2+2?<|end_of_text|>\n"
                "<|start_of_role|>assistant<|end_of_role|>")

CASES = [
    # -- Kimi K3: XTML channels, each marker a three-token sequence --
    Case("k3-prefilled", "kimi_k3",
         "The user wants 2+2. That is 4.<|close|>think<|sep|><|open|>response<|sep|>The answer is 4."
         "<|close|>response<|sep|><|close|>message<|sep|>",
         "The user wants 2+2. That is 4.", "The answer is 4.", prompt=K3_USER + "<|open|>think<|sep|>", thinks=True),
    Case("k3-repeats-open", "kimi_k3",
         "<|open|>think<|sep|>Sum it.<|close|>think<|sep|><|open|>response<|sep|>4.<|close|>response<|sep|>",
         "Sum it.", "4."),
    Case("k3-tools-after-think", "kimi_k3", "Need the weather tool.<|close|>think<|sep|>" + K3_TOOLS,
         "Need the weather tool.", K3_TOOLS, prompt=K3_USER + "<|open|>think<|sep|>", thinks=True),
    Case("k3-tools-close-open-think", "kimi_k3", "Need the weather tool." + K3_TOOLS,
         "Need the weather tool.", K3_TOOLS),
    Case("k3-instruct", "kimi_k3", "<|open|>response<|sep|>The answer is 4.<|close|>response<|sep|>",
         "", "The answer is 4.", prompt=K3_USER + "<|open|>think<|sep|><|close|>think<|sep|>", thinks=False),
    # -- K2 Horizon: one pair per reasoning effort --
    Case("k2h-high", "k2_horizon", "<ifm|think>Sum of 2 and 2.</ifm|think>The answer is 4.",
         "Sum of 2 and 2.", "The answer is 4."),
    Case("k2h-medium-prefilled", "k2_horizon", "Quick check.</ifm|think_fast>Answer: 4.",
         "Quick check.", "Answer: 4.", thinks=True,
         prompt="<|ifm|im_start|>user\nWhat is 2+2?<|ifm|im_end|><|ifm|im_start|>assistant\n<ifm|think_fast>\n"),
    Case("k2h-history-does-not-decide", "k2_horizon", "Sum.</ifm|think>4", "Sum.", "4", thinks=True,
         prompt="<|ifm|im_start|>assistant\n<ifm|think>a</ifm|think>3<|ifm|im_end|><|ifm|im_start|>user\nAgain"
                "<|ifm|im_end|><|ifm|im_start|>assistant\n"),
    Case("k2h-tool-ends-reasoning", "k2_horizon",
         'I need the weather.<ifm|tool_calls>[{"name": "get_weather"}]</ifm|tool_calls>',
         "I need the weather.", '<ifm|tool_calls>[{"name": "get_weather"}]</ifm|tool_calls>'),
    # -- MiniMax M3 --
    Case("m3-thinks", "minimax_m3", "<mm:think>Add them.</mm:think>The answer is 4.", "Add them.",
         "The answer is 4."),
    Case("m3-prefilled", "minimax_m3", "Add them.</mm:think>The answer is 4.", "Add them.", "The answer is 4.",
         prompt="]~b]user\nWhat is 2+2?]~!b[]~b]ai\n<mm:think>", thinks=True),
    Case("m3-no-think", "minimax_m3", "The answer is 4.", "", "The answer is 4.",
         prompt="]~b]ai\n<mm:think>old</mm:think>4]~!b[]~b]user\nAgain?]~!b[]~b]ai\n", thinks=False),
    # -- Cohere Command (3 and 4) --
    Case("cohere4-thinks", "cohere_command",
         "The user asks for 2+2.<|END_THINKING|><|START_TEXT|>The answer is 4.<|END_TEXT|>",
         "The user asks for 2+2.", "The answer is 4.", prompt=COHERE_USER + "<|START_THINKING|>", thinks=True),
    Case("cohere3-response", "cohere_command",
         "Sum.<|END_THINKING|><|START_RESPONSE|>The answer is 4.<|END_RESPONSE|>", "Sum.", "The answer is 4."),
    Case("cohere-action", "cohere_command", "I should call the weather tool.<|END_THINKING|>" + COHERE_ACTION,
         "I should call the weather tool.", COHERE_ACTION, prompt=COHERE_USER + "<|START_THINKING|>", thinks=True),
    Case("cohere-action-closes", "cohere_command", "Calling the tool." + COHERE_ACTION,
         "Calling the tool.", COHERE_ACTION),
    Case("cohere-answer-opener-ends-reasoning", "cohere_command", "<|START_TEXT|>The answer is 4.<|END_TEXT|>",
         "", "The answer is 4."),
    Case("cohere-reasoning-off", "cohere_command", "<|START_TEXT|>The answer is 4.<|END_TEXT|>",
         "", "The answer is 4.", prompt=COHERE_USER + "<|START_THINKING|><|END_THINKING|>", thinks=False),
    # -- PLaMo 3 --
    Case("plamo3-thinks", "plamo3", "Adding the numbers.<|plamo:end_think:plamo|>The answer is 4.",
         "Adding the numbers.", "The answer is 4.", prompt="<|plamo:begin_think:plamo|>", thinks=True),
    Case("plamo3-tool", "plamo3", "Need the weather." + PLAMO_CALL, "Need the weather.", PLAMO_CALL),
    # -- Inkling: typed message blocks --
    Case("inkling-think-then-text", "inkling",
         "<|content_thinking|>Add 2 and 2.<|end_message|><|message_model|><|content_text|>The answer is 4."
         "<|end_message|>",
         "Add 2 and 2.", "The answer is 4.", prompt=INK_PROMPT, thinks=False),
    Case("inkling-text-only", "inkling", "<|content_text|>The answer is 4.<|end_message|>", "",
         "The answer is 4.", prompt=INK_PROMPT, thinks=False),
    # <|end_message|> is an answer frame: consumed in content, after a tool call too.
    Case("inkling-tool", "inkling", "<|content_thinking|>Weather needed." + INK_TOOL, "Weather needed.",
         INK_TOOL.removesuffix("<|end_message|>")),
    Case("inkling-prefilled", "inkling", "Add.<|end_message|><|message_model|><|content_text|>4.<|end_message|>",
         "Add.", "4.", prompt=INK_PROMPT + "<|content_thinking|>", thinks=True),
    # -- Muse / Muse Glimmer: recipient channels --
    Case("glimmer-self-user", "muse_glimmer",
         " to=self<|message|>Add 2 and 2.<|eom|><|start|>assistant to=user<|message|>The answer is 4.<|eot|>",
         "Add 2 and 2.", "The answer is 4.", prompt="<|start|>user<|message|>What is 2+2?<|eot|><|start|>assistant",
         thinks=False),
    Case("glimmer-tool", "muse_glimmer", " to=self<|message|>Need weather.<|eom|>" + MUSE_CALL,
         "Need weather.", MUSE_CALL),
    Case("glimmer-tool-closes", "muse_glimmer", " to=self<|message|>Need weather." + MUSE_CALL,
         "Need weather.", MUSE_CALL),
    Case("glimmer-recipientless-is-content", "muse_glimmer",
         " to=self<|message|>Hm.<|eom|><|start|>assistant<|message|>Four.<|eot|>", "Hm.", "Four."),
    Case("muse-recipientless-is-reasoning", "muse",
         " to=self<|message|>Add.<|eom|><|start|>assistant<|message|>Check.<|eom|>"
         "<|start|>assistant to=user<|message|>4.<|eot|>",
         "Add.Check.", "4.", prompt="<|start|>user<|message|>2+2?<|eot|><|start|>assistant", thinks=False,
         blocks=2),
    # -- Poolside / Laguna --
    Case("laguna-thinking", "poolside_v1", "Add.</think>The answer is 4.", "Add.", "The answer is 4.",
         prompt="<system>Be brief.<user>What is 2+2?<assistant><think>", thinks=True),
    Case("laguna-tool", "poolside_v1", "Need weather." + GLM_CALL, "Need weather.", GLM_CALL,
         prompt="<user>Weather?<assistant><think>", thinks=True),
    Case("laguna-history-does-not-decide", "poolside_v1", "The answer is 4.", "", "The answer is 4.",
         prompt="<assistant><think>old</think>3<user>Again?<assistant>", thinks=False),
    # -- MiMo --
    Case("mimo-thinks", "mimo", "<think>\nAdd.\n</think>\n\nThe answer is 4.", "\nAdd.\n", "\n\nThe answer is 4."),
    Case("mimo-tool", "mimo", "Need weather.</think>\n" + QWEN_CODER, "Need weather.", "\n" + QWEN_CODER,
         prompt="<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n<think>", thinks=True),
    # -- Holo2 --
    Case("holo2-default", "holo2", "Click the button.\n</think>\n\nDone.", "Click the button.\n", "\n\nDone."),
    Case("holo2-tool-inside-reasoning", "holo2", "Maybe <tool_call> later.</think>Done.",
         "Maybe <tool_call> later.", "Done.",
         prompt="<|im_start|>user\nGo<|im_end|>\n<|im_start|>assistant\n<think>\n", thinks=True),
    # -- HY v3 / v4 --
    Case("hy3-thinks", "hy_v3", "<think>Add.</think>The answer is 4.", "Add.", "The answer is 4."),
    Case("hy3-no-think", "hy_v3", "The answer is 4.", "", "The answer is 4."),
    Case("hy3-tool", "hy_v3", "<think>Need weather." + HY_CALL, "Need weather.", HY_CALL),
    Case("hy4-prefilled", "hy_v4", "Add.</think>The answer is 4.", "Add.", "The answer is 4.",
         prompt="<think>", thinks=True),
    Case("hy4-tool", "hy_v4", "Need weather." + HY_CALL, "Need weather.", HY_CALL),
    # -- Apertus --
    Case("apertus-inner", "apertus", "<|inner_prefix|>Add.<|inner_suffix|>The answer is 4.", "Add.",
         "The answer is 4.", prompt="<|user_start|>What is 2+2?<|user_end|><|assistant_start|>", thinks=False),
    Case("apertus-tool", "apertus", "<|inner_prefix|>Need weather." + APERTUS_CALL, "Need weather.", APERTUS_CALL),
    # -- Granite 4.2 thinking --
    Case("granite-thinking", "granite_thinking", "Add.\n</think>\nThe answer is 4.", "Add.\n",
         "\nThe answer is 4.", prompt=GRANITE_USER + "<think>\n", thinks=True),
    Case("granite-thinking-off", "granite_thinking", "The answer is 4.", "", "The answer is 4.",
         prompt=GRANITE_USER + "<think>\n</think>\n", thinks=False),
    Case("granite-thinking-tool", "granite_thinking", "Need weather.\n" + QWEN_CODER, "Need weather.\n",
         QWEN_CODER),
]
CASE_PARAMS = [pytest.param(c, id=c.id) for c in CASES]


def test_every_new_row_has_cases():
    assert {c.family for c in CASES} == set(NEW_ROWS)


def _prepare(case: Case, backend: str):
    tok = family_tokenizer(case.family)
    parser = reasoning_core.get_parser(case.family, tok, backend=backend)
    prompt = encode(tok, case.prompt) if case.prompt is not None else None
    return tok, parser, encode(tok, case.text), prompt


def _split(parser, ids, chunks, prompt):
    parser.begin(prompt)
    reasoning, content, every = [], [], []
    for piece in [parser.split(ids[a:b]) for a, b in chunks] + [parser.finish()]:
        reasoning += piece.reasoning_ids
        content += piece.content_ids
        every += [t for kind, a, b in piece.segments if kind != "held" for t in piece.tokens[a:b]]
    assert every == ids  # conservation
    return reasoning, content


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_split(case, backend):
    tok, parser, ids, prompt = _prepare(case, backend)
    for chunks in ([(i, i + 1) for i in range(len(ids))], [(0, len(ids))],
                   [(a, min(a + 3, len(ids))) for a in range(0, len(ids), 3)]):
        reasoning, content = _split(parser, ids, chunks, prompt)
        assert decode(tok, reasoning) == case.reasoning
        assert decode(tok, content) == case.content


@pytest.mark.parametrize("case", CASE_PARAMS)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=20)
@given(data=st.data())
def test_split_random_chunks(case, backend, data):
    tok, parser, ids, prompt = _prepare(case, backend)
    cuts = sorted(data.draw(st.sets(st.integers(1, max(len(ids) - 1, 1)), max_size=10)))
    bounds = [0] + [c for c in cuts if c < len(ids)] + [len(ids)]
    reasoning, content = _split(parser, ids, list(zip(bounds, bounds[1:])), prompt)
    assert (decode(tok, reasoning), decode(tok, content)) == (case.reasoning, case.content)


@pytest.mark.parametrize("case", [c for c in CASE_PARAMS if c.values[0].prompt is not None])
def test_will_reason_after_prompt(case, backend):
    tok, parser, _, prompt = _prepare(case, backend)
    assert parser.will_reason_after_prompt(prompt) is case.thinks


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_text_parser_agrees(case, backend):
    tok, parser, _, prompt = _prepare(case, backend)
    seeded = parser.will_reason_after_prompt(prompt) if prompt is not None else None
    if seeded and FAMILIES[case.family].awaiting_start:
        pytest.skip("a seeded text parser of an awaiting-start family waits for the start (SPEC §3); "
                    "only the token parser sees the prompt's start")
    tp = reasoning_core.text_parser(case.family, starts_in_reasoning=seeded, backend=backend)
    assert tp.parse(case.text) == (case.reasoning, case.content)
    # Streaming in small chunks gives the same.
    tp = reasoning_core.text_parser(case.family, starts_in_reasoning=seeded, backend=backend)
    outs = [tp.feed(case.text[i:i + 2]) for i in range(0, len(case.text), 2)] + [tp.finish()]
    assert ("".join(r for r, _ in outs), "".join(c for _, c in outs)) == (case.reasoning, case.content)


@pytest.mark.parametrize("case", [c for c in CASE_PARAMS if c.values[0].blocks == 1])
def test_max_stream_where_delimiters_are_single_tokens(case, backend):
    tok, parser, ids, prompt = _prepare(case, backend)
    fam = FAMILIES[case.family]
    if any(len(encode(tok, s)) > 1 for role in ("start", "end", "terminators", "headers", "frames")
           for s in getattr(fam, role)) or fam.header_terminators:
        pytest.skip("MAX stream() is per delta: multi-token delimiters are split()'s (SPEC §4.2)")
    now = parser.will_reason_after_prompt(prompt) if prompt is not None else fam.starts_in_reasoning
    reasoning, content = [], []
    for a in range(0, len(ids), 1):
        delta = ids[a:a + 1]
        out = parser.stream(delta, now)
        reasoning += out.span.extract_reasoning(delta)
        content += out.span.extract_content(delta)
        now = out.is_still_reasoning
    if fam.frames:  # stream() does not unwrap answer frames; split() does
        return
    assert decode(tok, reasoning) == case.reasoning
    assert decode(tok, content) == case.content


# -- auto-selection -----------------------------------------------------------------

MODEL_IDS = {
    "kimi_k3": ["moonshotai/Kimi-K3", "moonshotai/Kimi-K3-Instruct"],
    "k2_horizon": ["LLM360/K2-Horizon"],
    "minimax_m3": ["MiniMaxAI/MiniMax-M3"],
    "cohere_command": ["CohereLabs/command-a-reasoning-08-2025"],
    "plamo3": ["pfnet/plamo-3-nict-8b-base", "pfnet/PLaMo-3"],
    "inkling": ["acme/Inkling-1"],
    "muse": ["acme/Muse-Spark-1.5"],
    "muse_glimmer": ["acme/Muse-Glimmer"],
    "poolside_v1": ["poolside/Laguna-XS.2"],
    "mimo": ["XiaomiMiMo/MiMo-7B-RL", "XiaomiMiMo/MiMo-V2-Flash"],
    "holo2": ["Hcompany/Holo2-8B", "Hcompany/Holo2-30B-A3B"],
    "hy_v3": ["tencent/Hy3-preview", "tencent/Hunyuan-V3"],
    "hy_v4": ["tencent/Hy4"],
    "apertus": ["swiss-ai/Apertus-8B-Instruct-2509", "swiss-ai/Apertus-70B-2509"],
    "granite_thinking": ["ibm-granite/granite-4.2-8b"],
    # Engine names that are aliases here.
    "glm47": ["inclusionAI/Ling-3-flash"],
    "qwen3_5": ["openbmb/MiniCPM-V-4_5"],
    "qwen3": ["internlm/Intern-S1", "Nanbeige/Nanbeige4-3B-Thinking-2511"],
    "deepseek_r1": ["ai-sage/GigaChat3.5", "IQuestLab/IQuest-Coder-Q1"],
    "step3": ["stepfun-ai/Step-5"],
    # Earlier rows are not taken over.
    "granite": ["ibm-granite/granite-3.3-8b-instruct"],
    "hunyuan_a13b": ["tencent/Hunyuan-A13B-Instruct"],
    "deepseek_v4": ["deepseek-ai/DeepSeek-V4"],
}


@pytest.mark.parametrize("model_id, expected", [
    pytest.param(m, name, id=f"{name}:{m}") for name, ids in MODEL_IDS.items() for m in ids])
def test_model_id_selects_row(model_id, expected):
    assert parser_for_model(model_id) == expected


@pytest.mark.parametrize("config, expected", [
    ({"model_type": "kimi_k3"}, "kimi_k3"),
    ({"architectures": ["MiniMaxM3SparseForCausalLM"]}, "minimax_m3"),
    ({"model_type": "bailing_hybrid"}, "glm47"),
    ({"architectures": ["LagunaForCausalLM"]}, "poolside_v1"),
    ({"architectures": ["InklingForConditionalGeneration"]}, "inkling"),
    ({"architectures": ["IQuestQ1ForCausalLM"]}, "deepseek_r1"),
    ({"architectures": ["DeepseekV4ForCausalLM"]}, "deepseek_v4"),
    ({"architectures": ["K2HorizonForCausalLM"]}, "k2_horizon"),
])
def test_config_selects_row(config, expected):
    assert parser_for_model(config) == expected


# -- families built at run time -------------------------------------------------------


def test_make_family_builds_a_working_parser(backend):
    fam = make_family("custom", "<reason>", ["</reason>"], starts_in_reasoning=False,
                      terminators="<call>", boundaries=("<turn>",))
    assert fam.start == ("<reason>",) and fam.end == ("</reason>",) and fam.terminators == ("<call>",)
    tok = build_tokenizer(("<reason>", "</reason>", "<call>", "<turn>"))
    parser = parser_class(fam).from_tokenizer_sync(tok, backend=backend)
    ids = encode(tok, "pre<reason>Add.</reason>The answer is 4.")
    out = parser.begin().split(ids)
    assert decode(tok, out.reasoning_ids) == "Add." and decode(tok, out.content_ids) == "preThe answer is 4."
    assert parser.will_reason_after_prompt(encode(tok, "<turn>user<turn>model<reason>")) is True
    out = parser.begin(encode(tok, "<turn>model<reason>")).split(encode(tok, "Hm.<call>{}"))
    assert decode(tok, out.reasoning_ids) == "Hm." and decode(tok, out.content_ids) == "<call>{}"
    assert TextReasoningParser(fam).parse("pre<reason>Add.</reason>4") == ("Add.", "pre4")


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"name": 3}, TypeError, "name"),
    ({"name": " "}, ValueError, "name"),
    ({"start": 5}, TypeError, "start"),
    ({"start": [b"<t>"]}, TypeError, "start"),
    ({"end": [""]}, ValueError, "end"),
    ({"end": ()}, ValueError, "end"),
    ({"start": ()}, ValueError, "start"),
    ({"starts_in_reasoning": 1}, TypeError, "starts_in_reasoning"),
    ({"terminators": "<t>"}, ValueError, "terminators"),
    ({"headers": {"a": 1}}, TypeError, "headers"),
    ({"label": 3}, TypeError, "label"),
    ({"tool_parser": ""}, ValueError, "tool_parser"),
    ({"awaiting_start": True, "start": (), "starts_in_reasoning": True}, ValueError, "awaiting_start"),
])
def test_make_family_validates(kwargs, exc, match):
    args = {"name": "x", "start": "<t>", "end": "</t>"} | kwargs
    with pytest.raises(exc, match=match):
        make_family(args.pop("name"), args.pop("start"), args.pop("end"), **args)


def test_make_family_without_start_starts_in_reasoning(backend):
    fam = make_family("implicit", (), "</t>", starts_in_reasoning=True)
    tok = build_tokenizer(("</t>",))
    out = parser_class(fam).from_tokenizer_sync(tok, backend=backend).begin().split(encode(tok, "Hm.</t>Yes."))
    assert decode(tok, out.reasoning_ids) == "Hm." and decode(tok, out.content_ids) == "Yes."


TEMPLATE = {
    "version": 1,
    "start_anchor": "<|im_start|>",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>"},
        "content": {},
        "tool_calls": {"open": ["<tool_call>"], "close": "</tool_call>", "content": "json", "repeats": True},
    },
}


class _HFLike:
    """What vLLM/SGLang read: ``tokenizer.response_template`` or ``init_kwargs``."""

    def __init__(self, tok, template, *, attr: bool) -> None:
        self._tok = tok
        if attr:
            self.response_template = template
        self.init_kwargs = {} if attr else {"response_template": template}

    def get_vocab(self):
        return self._tok.get_vocab()

    def encode(self, text, add_special_tokens=False):
        return self._tok.encode(text, add_special_tokens=add_special_tokens).ids

    def token_to_id(self, token):
        return self._tok.token_to_id(token)


@pytest.mark.parametrize("attr", [True, False], ids=["attribute", "init_kwargs"])
@pytest.mark.parametrize("engine, name", [("vllm", "hf"), ("vllm", "beam"), ("sglang", "response_template")])
def test_response_template_family(engine, name, attr, backend):
    base = family_tokenizer("qwen3")
    tok = _HFLike(base, TEMPLATE, attr=attr)
    assert response_template_of(tok) == TEMPLATE
    fam = family_for_tokenizer(name, tok, engine=engine)
    assert fam.name == name and fam.start == ("<think>",) and fam.end == ("</think>",)
    assert fam.header_terminators == ("<tool_call>",) and not fam.starts_in_reasoning
    parser = parser_class(fam).from_tokenizer_sync(base, backend=backend)
    text = "<think>Need weather.</think>" + '<tool_call>{"name": "f"}</tool_call>'
    out = parser.begin().split(encode(base, text))
    assert decode(base, out.reasoning_ids) == "Need weather."
    assert decode(base, out.content_ids) == '<tool_call>{"name": "f"}</tool_call>'
    assert parser.will_reason_after_prompt(encode(base, "<|im_start|>assistant\n<think>")) is True


def test_response_template_implicit_thinking_and_content_frame():
    fam = response_template_family({"start_anchor": ["<start_of_turn>model\n"], "fields": {
        "thinking": {"close": "<channel|>"}, "content": {"open": "<answer>", "close": "</answer>"}}})
    assert fam.starts_in_reasoning and fam.start == () and fam.end == ("<channel|>",)
    assert fam.headers == ("<answer>",) and fam.frames == ("</answer>",)
    assert TextReasoningParser(fam).parse("Hm.<channel|><answer>4</answer>") == ("Hm.", "4")


@pytest.mark.parametrize("template, match", [
    ({"fields": {"content": {}}}, "thinking"),
    ({"fields": {"thinking": {"open_pattern": "<t\\d>", "close": "</t>"}}}, "regular expression"),
    ({"start_anchor_pattern": "x+", "fields": {"thinking": {"open": "<t>", "close": "</t>"}}}, "start_anchor"),
    ({"fields": {"thinking": {"open": "<t>", "close": "</t>"}, "citations": {}}}, "unsupported fields"),
    ({"version": 2, "fields": {"thinking": {"open": "<t>", "close": "</t>"}}}, "version"),
    ({"fields": {}}, "fields"),
])
def test_response_template_rejects_what_cannot_be_served(template, match):
    with pytest.raises(ValueError, match=match):
        response_template_family(template)


def test_response_template_needs_metadata():
    with pytest.raises(ValueError, match="response_template"):
        family_for_tokenizer("hf", object(), engine="vllm")
    with pytest.raises(ValueError, match="registers no reasoning parser"):
        family_for_tokenizer("qwen3_5", object(), engine="vllm")
    with pytest.raises(ValueError, match="unknown engine"):
        family_for_tokenizer("qwen3", object(), engine="tgi")


def test_hunyuan_suffixed_tokens(backend):
    specials = ("<think:6124c78e>", "</think:6124c78e>", "<tool_calls:6124c78e>", "</tool_calls:6124c78e>")
    tok = build_tokenizer(specials)
    assert hunyuan_token_suffix(tok) == ":6124c78e"
    assert hunyuan_token_suffix(family_tokenizer("hy_v3")) == ""
    fam = family_for_tokenizer("hy_v4", tok, engine="vllm")
    assert fam.start == ("<think:6124c78e>",) and fam.end == ("</think:6124c78e>",)
    assert fam.terminators == ("<tool_calls:6124c78e>",) and fam.starts_in_reasoning
    parser = parser_class(fam).from_tokenizer_sync(tok, backend=backend)
    out = parser.begin().split(encode(tok, "Add.</think:6124c78e>4<tool_calls:6124c78e>[]"))
    assert decode(tok, out.reasoning_ids) == "Add." and decode(tok, out.content_ids) == "4<tool_calls:6124c78e>[]"
    # Unsuffixed vocabularies keep the table row.
    assert family_for_tokenizer("hy_v3", family_tokenizer("hy_v3")) is get_family("hy_v3")
    assert family_for_tokenizer("hunyuan", family_tokenizer("hy_v3"), engine="sglang") is get_family("hy_v3")


def test_cli_lists_the_new_rows():
    r = subprocess.run([sys.executable, "-m", "reasoning_core.cli", "families", "--json"], capture_output=True,
                       text=True, encoding="utf-8", timeout=60)
    assert r.returncode == 0, r.stderr
    rows = {row["name"]: row for row in json.loads(r.stdout)}
    assert set(NEW_ROWS) <= set(rows)
    for name in NEW_ROWS:
        fam = FAMILIES[name]
        assert rows[name]["start"] == list(fam.start) and rows[name]["end"] == list(fam.end)
        assert rows[name]["model_patterns"], name
