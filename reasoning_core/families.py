"""The family table: every supported model family as one row of data.

A family is its delimiter strings and a few flags; one parser class
(``reasoning_core.parser.FamilyParser``) and one text parser serve them all.
Adding a family means adding a row here (and tests).

Delimiter roles:
- ``start`` / ``end``: open and close a reasoning block (both consumed).
- ``terminators``: close reasoning without being consumed, so the marker
  stays in content for the tool-call parser (e.g. ``<tool_call>``).  They
  count only as real vocabulary entries: a marker spelled out in plain text
  must not end reasoning.
- ``header_terminators``: terminators that are several special tokens by
  design (harmony's ``<|channel|>commentary`` header), resolved by encoding.
- ``headers``: framing consumed wherever it appears and leaving content
  (harmony's ``final`` channel header, ``<|return|>``); inside reasoning a
  header also closes the block.
- ``frames``: answer wrappers consumed in content (``<response>``).
- ``boundaries``: chat-turn markers; the prompt scan stops at the nearest one,
  so markers in earlier turns (a ``<tool_call>`` example in a system prompt)
  cannot decide the start state.
- ``enable``: a thinking-enable marker anywhere in the prompt (Gemma 4).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from ._shared import brief
from ._tables import BOUNDARY, ENABLE, END, FRAME, HEADER, START, TERM

__all__ = [
    "ROLES", "terminators_of", "think_pair_of",
    "Family", "FAMILIES", "ALIASES", "MODEL_PATTERNS", "CONFIG_MODEL_TYPES", "CONFIG_ARCHITECTURES",
    "get_family", "family_names", "parser_for_model",
    "ENGINE_PARSER_NAMES", "ENGINE_NOTES", "RUNTIME_ENGINE_NAMES",
    "make_family", "response_template_of", "response_template_family", "hunyuan_token_suffix",
    "family_for_tokenizer",
]


@dataclass(frozen=True)
class Family:
    name: str
    start: tuple[str, ...]
    end: tuple[str, ...]
    starts_in_reasoning: bool
    aliases: tuple[str, ...] = ()
    terminators: tuple[str, ...] = ()
    header_terminators: tuple[str, ...] = ()
    headers: tuple[str, ...] = ()
    frames: tuple[str, ...] = ()
    boundaries: tuple[str, ...] = ()
    enable: tuple[str, ...] = ()
    # Reasoning only ever opens at an explicit start: a pre-seeded or
    # thinking-enabled state waits for it (tokens before it are content).
    awaiting_start: bool = False
    # Label the formatter strips at the start of every reasoning block.
    label: str | None = None
    # Plain-text markers (no special token in any vocabulary).
    text_markers: bool = False
    # The reasoning_core.tools format this family's models write tool calls in
    # (None: none of ours).  Its opening markers are this row's terminators.
    tool_parser: str | None = None
    notes: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        """The family's name, then its aliases."""
        return (self.name,) + self.aliases


# Family field -> delimiter kind, and whether it counts only as an exact
# vocabulary entry (optional markers: a tool-call marker spelled out in plain
# text must not end reasoning).  Token and text level both read this list.
ROLES: tuple[tuple[str, int, bool], ...] = (
    ("start", START, False),
    ("end", END, False),
    ("headers", HEADER, False),
    ("terminators", TERM, True),
    ("header_terminators", TERM, False),
    ("frames", FRAME, False),
    ("boundaries", BOUNDARY, True),
    ("enable", ENABLE, True),
)

_QWEN_TURNS = ("<|im_start|>", "<|im_end|>")
_DS_TURNS = ("<｜User｜>", "<｜Assistant｜>")
_THINK = ("<think>",)
_UNTHINK = ("</think>",)
_GRANITE_TURNS = ("<|start_of_role|>", "<|end_of_role|>", "<|end_of_text|>")
_COHERE_TURNS = ("<|START_OF_TURN_TOKEN|>", "<|END_OF_TURN_TOKEN|>", "<|CHATBOT_TOKEN|>", "<|USER_TOKEN|>",
                 "<|SYSTEM_TOKEN|>")
_MUSE_TOOLS = ("<|start|>assistant to=functions.",)
_MUSE_HEADERS = tuple(
    pre + f"to={who}<|message|>" for who in ("user", "commentary") for pre in ("<|start|>assistant ", " ", "")
) + ("<|eot|>",)
_MUSE_SELF = ("<|start|>assistant to=self<|message|>", " to=self<|message|>", "to=self<|message|>")

_ROWS = (
    Family("deepseek_r1", _THINK, _UNTHINK, True, aliases=("qwq", "deepseek-r1", "gigachat35", "iquest_q1"),
           boundaries=_DS_TURNS + _QWEN_TURNS,
           notes="R1 templates inject <think>; output may or may not repeat it", tool_parser="deepseek_v3"),
    Family("deepseek_v3", _THINK, _UNTHINK, False, aliases=("deepseek_v31", "deepseek-v3"),
           terminators=("<｜tool▁calls▁begin｜>",), boundaries=_DS_TURNS,
           notes="hybrid: a prompt ending in <think> means thinking mode", tool_parser="deepseek_v31"),
    # V3.2, V4 and V4.1 think as V3.1 does but write tool calls as a DSML
    # block, always after </think> (MAX's rule: only </think> ends reasoning).
    Family("deepseek_v32", _THINK, _UNTHINK, False, aliases=("deepseek-v32", "deepseekv32"),
           boundaries=_DS_TURNS, tool_parser="deepseek_v32",
           notes="as deepseek_v3; tool calls in a <｜DSML｜function_calls> block"),
    Family("deepseek_v4", _THINK, _UNTHINK, False, aliases=("deepseekv4", "deepseek-v4"),
           boundaries=_DS_TURNS, tool_parser="deepseekv4",
           notes="as deepseek_v3; tool calls in a <｜DSML｜tool_calls> block"),
    Family("deepseek_v41", _THINK, _UNTHINK, False, aliases=("deepseek-v41", "deepseekv41"),
           boundaries=_DS_TURNS, tool_parser="deepseek_v41",
           notes="as deepseek_v3; tool calls in a <｜DSML｜ calls> block"),
    Family("qwen3", _THINK, _UNTHINK, False, aliases=("interns1", "nanbeige", "dots"),
           terminators=("<tool_call>",), boundaries=_QWEN_TURNS,
           notes="enable_thinking=False renders <think>\\n\\n</think> into the prompt", tool_parser="hermes"),
    Family("qwen3_thinking", _THINK, _UNTHINK, True, aliases=("qwen3-thinking",),
           terminators=("<tool_call>",), boundaries=_QWEN_TURNS, tool_parser="hermes"),
    Family("qwen3_5", _THINK, _UNTHINK, True, aliases=("qwen3.5", "qwen3_6", "minicpmv"),
           terminators=("<tool_call>",), boundaries=_QWEN_TURNS, tool_parser="qwen3_coder"),
    Family("kimi", ("◁think▷",), ("◁/think▷",), False, aliases=("kimi_vl", "kimi_k1_5"),
           boundaries=("<|im_user|>", "<|im_assistant|>", "<|im_middle|>")),
    Family("kimi_k2", _THINK, _UNTHINK, True, aliases=("kimik2_5", "kimi_k2_5"),
           terminators=("<|tool_calls_section_begin|>", "<|tool_call_section_begin|>"),
           boundaries=("<|im_user|>", "<|im_assistant|>", "<|im_middle|>", "<|im_system|>"), tool_parser="kimi_k2"),
    Family("glm45", _THINK, _UNTHINK, False, aliases=("glm4_5", "glm46"), terminators=("<tool_call>",),
           boundaries=("<|user|>", "<|assistant|>", "<|system|>", "<|observation|>"), tool_parser="glm45"),
    Family("glm47", _THINK, _UNTHINK, True, aliases=("glm5", "glm4_7", "ling3"), terminators=("<tool_call>",),
           boundaries=("<|user|>", "<|assistant|>", "<|system|>", "<|observation|>"), tool_parser="glm45"),
    Family("step3", _THINK, _UNTHINK, True, aliases=("step3p5", "step5"),
           boundaries=("<|BOT|>", "<|EOT|>")),
    Family("minimax_m2", _THINK, _UNTHINK, True, aliases=("minimax",), terminators=("<minimax:tool_call>",),
           boundaries=("]~b]", "]~!b["), tool_parser="minimax_m2"),
    Family("seed_oss", ("<seed:think>",), ("</seed:think>",), True,
           boundaries=("<seed:bos>", "<seed:eos>"), tool_parser="seed_oss"),
    Family("hunyuan_a13b", ("<think>\n",), ("\n</think>\n<answer>\n", "</think>\n<answer>\n"), False,
           aliases=("hunyuan",), frames=("\n</answer>", "</answer>"),
           tool_parser="hunyuan_a13b", notes="the <answer> frame around the reply is unwrapped"),
    Family("granite", ("Here is my thought process:", "Here's my thought process:"),
           ("Here is my response:", "Here's my response:"), False, text_markers=True,
           notes="plain-text markers, matched however the BPE splits them"),
    Family("mistral", ("[THINK]",), ("[/THINK]",), False, aliases=("magistral",), tool_parser="mistral"),
    Family("gpt_oss", ("<|channel|>analysis<|message|>", "<|start|>assistant<|channel|>analysis<|message|>"),
           ("<|end|>",), False, aliases=("harmony", "gpt-oss", "openai_gptoss"),
           header_terminators=("<|start|>assistant<|channel|>commentary", "<|channel|>commentary"),
           headers=("<|start|>assistant<|channel|>final<|message|>", "<|channel|>final<|message|>", "<|return|>"),
           boundaries=("<|start|>",),
           tool_parser="gpt_oss",
           notes="analysis channel is reasoning; final is content; commentary (tool calls) stays in content"),
    Family("ernie45", _THINK, _UNTHINK, True, aliases=("ernie",), frames=("<response>", "</response>"),
           tool_parser="hermes", notes="the <response> frame around the reply is unwrapped"),
    Family("olmo3", _THINK, _UNTHINK, True, text_markers=True,
           notes="<think> is ordinary text in this vocabulary"),
    Family("nemotron_v3", _THINK, _UNTHINK, True, aliases=("nemotron3", "nemotron_nano_v3", "nemotron_3"),
           terminators=("<tool_call>",), boundaries=_QWEN_TURNS, tool_parser="qwen3_coder"),
    Family("gemma4", ("<|channel>",), ("<channel|>",), False, terminators=("<|tool_call>",),
           enable=("<|think|>",), boundaries=("<|turn>", "<turn|>"), awaiting_start=True,
           label="thought\n", tool_parser="gemma4",
           notes="<|think|> in the prompt enables thinking; label stripped by the formatter"),
    # ---- formats added for the serving engines' parser names (issue 14) ----
    Family("kimi_k3", ("<|open|>think<|sep|>",), ("<|close|>think<|sep|>",), True,
           header_terminators=("<|open|>tools<|sep|>",),
           headers=("<|open|>response<|sep|>", "<|close|>response<|sep|>", "<|close|>message<|sep|>"),
           boundaries=("<|open|>",),
           notes="XTML channels: think is reasoning; the response wrapper is unwrapped; the tools channel "
                 "stays in content", tool_parser="kimi_k3"),
    Family("k2_horizon", ("<ifm|think>", "<ifm|think_fast>", "<ifm|think_faster>"),
           ("</ifm|think>", "</ifm|think_fast>", "</ifm|think_faster>"), True, aliases=("k2_v3",),
           terminators=("<ifm|tool_calls>",), boundaries=("<|ifm|im_start|>", "<|ifm|im_end|>"),
           tool_parser="k2_horizon",
           notes="one start/end pair per reasoning effort (high, medium, low); any of them is recognised"),
    Family("minimax_m3", ("<mm:think>",), ("</mm:think>",), False, aliases=("minimax-m3",),
           boundaries=("]~b]", "]~!b["),
           tool_parser="minimax_m3", notes="thinking_mode=enabled prefills <mm:think> into the prompt"),
    Family("cohere_command", ("<|START_THINKING|>",), ("<|END_THINKING|>",), True,
           aliases=("cohere_command3", "cohere_command4", "cohere"),
           terminators=("<|START_ACTION|>",),
           # The answer's opener also ends reasoning: with reasoning off the
           # template writes both thinking markers and the output starts there.
           headers=("<|START_TEXT|>", "<|START_RESPONSE|>"), frames=("<|END_TEXT|>", "<|END_RESPONSE|>"),
           boundaries=_COHERE_TURNS, tool_parser="cohere_command",
           notes="the template opens thinking; the answer's START_TEXT/START_RESPONSE frame is unwrapped; "
                 "an action block (tool calls) stays in content"),
    Family("plamo3", ("<|plamo:begin_think:plamo|>",), ("<|plamo:end_think:plamo|>",), True,
           terminators=("<|plamo:begin_tool_requests:plamo|>",),
           tool_parser="plamo3", notes="enable_thinking=False renders no think block: give the prompt"),
    Family("inkling", ("<|content_thinking|>",), ("<|end_message|>",), False,
           terminators=("<|content_invoke_tool_json|>",), tool_parser="inkling",
           headers=("<|message_model|>", "<|content_text|>"), frames=("<|end_message|>",),
           boundaries=("<|message_user|>", "<|message_system|>", "<|message_tool|>"),
           awaiting_start=True,
           notes="typed message blocks: only <|content_thinking|> opens reasoning; <|end_message|> closes it "
                 "(and a text message, consumed in content)"),
    Family("muse", _MUSE_SELF + ("<|start|>assistant<|message|>",), ("<|eom|>",), False,
           aliases=("musespark1x", "muse_spark"),
           header_terminators=_MUSE_TOOLS, headers=_MUSE_HEADERS, boundaries=("<|start|>",),
           notes="recipient channels: to=self (and a later recipient-less message) is reasoning, to=user and "
                 "to=commentary are content, a tool recipient's channel stays in content"),
    Family("muse_glimmer", _MUSE_SELF, ("<|eom|>",), False,
           header_terminators=_MUSE_TOOLS, tool_parser="muse_glimmer",
           headers=_MUSE_HEADERS + ("<|start|>assistant<|message|>",), boundaries=("<|start|>",),
           notes="recipient channels: to=self is reasoning; to=user, to=commentary and recipient-less messages "
                 "are content; a tool recipient's channel stays in content"),
    Family("poolside_v1", _THINK, _UNTHINK, False, aliases=("laguna",), terminators=("<tool_call>",),
           boundaries=("<assistant>",), tool_parser="laguna",
           notes="thinking is opt-in (enable_thinking=True prefills <think>); the prompt scan stops at <assistant>"),
    Family("mimo", _THINK, _UNTHINK, False, terminators=("<tool_call>",), boundaries=_QWEN_TURNS,
           tool_parser="mimo", notes="Qwen3 markers; tool calls in the Qwen3-Coder XML form, values verbatim"),
    Family("holo2", _THINK, _UNTHINK, True, boundaries=_QWEN_TURNS,
           notes="thinks by default; a tool call inside reasoning does not end it"),
    Family("hy_v3", _THINK, _UNTHINK, False, terminators=("<tool_calls>",),
           notes="checkpoints may suffix the structural tokens (<think:abc123>): build the row for a "
                 "vocabulary with family_for_tokenizer()", tool_parser="hunyuan"),
    Family("hy_v4", _THINK, _UNTHINK, True, terminators=("<tool_calls>",),
           tool_parser="hunyuan", notes="as hy_v3, but reasoning_effort defaults to high (thinking)"),
    Family("apertus", ("<|inner_prefix|>",), ("<|inner_suffix|>",), False, aliases=("apertus2509",),
           terminators=("<|tools_prefix|>",),
           boundaries=("<|assistant_start|>", "<|assistant_end|>", "<|user_start|>", "<|user_end|>",
                       "<|system_start|>", "<|system_end|>", "<|developer_start|>", "<|developer_end|>"),
           tool_parser="apertus", notes="the model opens its inner block itself"),
    Family("granite_thinking", _THINK, _UNTHINK, True, aliases=("granite_thinking_parser", "granite4_2"),
           terminators=("<tool_call>",), boundaries=_GRANITE_TURNS, tool_parser="qwen3_coder",
           notes="Granite 4.2: the Nemotron V3 format inside Granite's role markers"),
    Family("passthrough", (), (), False, aliases=("none", "identity")),
)

FAMILIES: dict[str, Family] = {f.name: f for f in _ROWS}
ALIASES: dict[str, str] = {a: f.name for f in _ROWS for a in f.aliases}


# Every reasoning-parser name the serving engines register (vLLM 0.33,
# SGLang 0.5.23, MAX 26.7) -> the family of ours that serves it.  The
# integrations read this map; ENGINE_NOTES says where the engine's parser of
# that name behaves differently from the family's defaults (a request flag
# that changes the start state, text it adds or drops).  Names in
# RUNTIME_ENGINE_NAMES have no fixed markers: their family is built per
# tokenizer with family_for_tokenizer() (the value here is a placeholder).
ENGINE_PARSER_NAMES: dict[str, dict[str, str]] = {
    "vllm": {
        "beam": "passthrough",
        "cohere_command3": "cohere_command",
        "cohere_command4": "cohere_command",
        "deepseek_r1": "deepseek_r1",
        "deepseek_v3": "deepseek_v3",
        "deepseek_v4": "deepseek_v4",
        "deepseek_v41": "deepseek_v41",
        "ernie45": "ernie45",
        "gemma4": "gemma4",
        "glm45": "glm45",
        "glm47": "glm47",
        "granite": "granite",
        "granite_thinking_parser": "granite_thinking",
        "hf": "passthrough",
        "holo2": "holo2",
        "hunyuan_a13b": "hunyuan_a13b",
        "hy_v3": "hy_v3",
        "hy_v4": "hy_v4",
        "inkling": "inkling",
        "k2_horizon": "k2_horizon",
        "kimi_k2": "kimi_k2",
        "kimi_k3": "kimi_k3",
        "ling3": "glm47",
        "mimo": "mimo",
        "minicpmv": "qwen3_5",
        "minimax_m2": "minimax_m2",
        "minimax_m2_append_think": "passthrough",
        "minimax_m3": "minimax_m3",
        "mistral": "mistral",
        "muse": "muse",
        "muse_glimmer": "muse_glimmer",
        "musespark1x": "muse",
        "nemotron_v3": "nemotron_v3",
        "olmo3": "olmo3",
        "openai_gptoss": "gpt_oss",
        "plamo3": "plamo3",
        "poolside_v1": "poolside_v1",
        "qwen3": "qwen3",
        "seed_oss": "seed_oss",
        "step3": "step3",
        "step3p5": "step3",
        "step5": "step3",
    },
    "sglang": {
        "apertus2509": "apertus",
        "beam": "passthrough",
        "cohere_command4": "cohere_command",
        "deepseek-r1": "deepseek_r1",
        "deepseek-v3": "deepseek_v3",
        "deepseek-v4": "deepseek_v4",
        "deepseek-v41": "deepseek_v41",
        "dots": "qwen3",
        "gemma4": "gemma4",
        "gigachat35": "deepseek_r1",
        "glm45": "glm45",
        "gpt-oss": "gpt_oss",
        "granite_thinking_parser": "granite_thinking",
        "hunyuan": "hy_v3",
        "inkling": "inkling",
        "interns1": "qwen3",
        "iquest_q1": "deepseek_r1",
        "k2_horizon": "k2_horizon",
        "kimi": "kimi",
        "kimi_k2": "kimi_k2",
        "kimi_k3": "kimi_k3",
        "ling3": "glm47",
        "mimo": "mimo",
        "minimax": "minimax_m2",
        "minimax-append-think": "passthrough",
        "minimax-m3": "minimax_m3",
        "mistral": "mistral",
        "muse": "muse_glimmer",
        "nanbeige": "qwen3",
        "nemotron_3": "nemotron_v3",
        "poolside_v1": "poolside_v1",
        "qwen3": "qwen3",
        "qwen3-thinking": "qwen3_thinking",
        "response_template": "passthrough",
        "step3": "step3",
        "step3p5": "step3",
    },
    "max": {
        "deepseekv4": "deepseek_v4",
        "gemma4": "gemma4",
        "glm45": "glm45",
        "inkling": "inkling",
        "kimik2_5": "kimi_k2",
        "laguna": "poolside_v1",
        "minimax_m2": "minimax_m2",
        "muse_glimmer": "muse_glimmer",
        "qwen3_5": "qwen3_5",
    },
}

# Engine names whose markers come from the checkpoint (the tokenizer's
# ``response_template`` metadata): family_for_tokenizer() builds their family.
RUNTIME_ENGINE_NAMES: dict[str, frozenset[str]] = {
    "vllm": frozenset({"hf", "beam"}),
    "sglang": frozenset({"response_template", "beam"}),
    "max": frozenset(),
}

# (engine, name) -> how that engine's parser differs from the family's
# defaults.  "starts in reasoning" below is the engine's start state when the
# request does not say otherwise; ours is decided by the prompt
# (will_reason_after_prompt) and, without a prompt, by the family default.
ENGINE_NOTES: dict[tuple[str, str], str] = {
    ("vllm", "qwen3"): "starts in reasoning unless chat_template_kwargs enable_thinking=False (the template "
                       "is assumed to have opened <think>); ours starts in content without a prompt",
    ("vllm", "glm45"): "starts in reasoning unless enable_thinking=False; ours starts in content without a prompt",
    ("vllm", "mimo"): "starts in reasoning unless enable_thinking=False; SGLang's mimo starts in content",
    ("vllm", "minicpmv"): "enable_thinking=False drops a stray <think>...</think> instead of reporting it",
    ("vllm", "ling3"): "thinking (or enable_thinking) False: everything is content",
    ("vllm", "step3p5"): "a <tool_call> ends reasoning (Qwen3 grammar); SGLang's step3p5 and our step3 do not",
    ("vllm", "deepseek_v3"): "thinking/enable_thinking False (the default): identity, everything is content",
    ("vllm", "deepseek_v4"): "starts in reasoning when thinking is on; a DSML tool-calls block "
                             "(<｜DSML｜tool_calls>) also ends reasoning (ours: only </think>, as MAX)",
    ("vllm", "deepseek_v41"): "as deepseek_v4, with the V4.1 '<｜DSML｜ calls>' tag",
    ("max", "deepseekv4"): "same as ours: only </think> ends reasoning (a DSML block never appears inside it)",
    ("sglang", "deepseek-v4"): "reasoning only with thinking=True",
    ("sglang", "deepseek-v41"): "reasoning only with thinking=True",
    ("vllm", "holo2"): "DeepSeek-R1 rules with thinking on by default",
    ("vllm", "step5"): "DeepSeek-R1 rules (starts in reasoning, no tool terminator)",
    ("vllm", "poolside_v1"): "thinking False by default (identity); the prompt scan stops at <assistant>",
    ("max", "laguna"): "the template appends <think>, so a prompt decides; <tool_call> ends reasoning",
    ("sglang", "poolside_v1"): "reasoning only with enable_thinking=True",
    ("sglang", "mimo"): "reasoning only with enable_thinking=True",
    ("sglang", "minimax"): "forced into reasoning; <tool_call> (not <minimax:tool_call>) is its tool opener",
    ("sglang", "qwen3"): "a <tool_call> ends reasoning (SGLang 0.5.23 does not require it at a line start)",
    ("sglang", "hunyuan"): "the Hy3 format (<think>, <tool_calls>), not Hunyuan-A13B's <answer> frame",
    ("sglang", "gigachat35"): "DeepSeek-R1 rules (starts in reasoning)",
    ("sglang", "iquest_q1"): "starts in reasoning unless thinking/enable_thinking is False",
    ("sglang", "dots"): "the Qwen3 detector", ("sglang", "interns1"): "the Qwen3 detector",
    ("sglang", "nanbeige"): "the Qwen3 detector",
    ("vllm", "hy_v3"): "reasoning_effort defaults to no_think (identity); token names may carry a per-checkpoint "
                       "suffix read from the vocabulary",
    ("vllm", "hy_v4"): "reasoning_effort defaults to high; per-checkpoint token suffix as hy_v3; <tool_calls> "
                       "inside reasoning does not end it (SGLang's hunyuan and ours do)",
    ("vllm", "k2_horizon"): "only the requested effort's pair (default high) is recognised; without </...> "
                            "or a tool opener, one-shot extraction returns everything as content",
    ("sglang", "k2_horizon"): "requires force_reasoning; the tool opener is the prefix '<ifm|tool_call'",
    ("vllm", "kimi_k3"): "thinking False: everything is content; tolerates spaces inside the XTML markers; "
                         "<|open|>tools<|sep|> inside an open think channel does not end it (SGLang's and ours "
                         "do)",
    ("sglang", "kimi_k3"): "a bare <|close|>response<|sep|> with no think close makes the preceding text content",
    ("vllm", "minimax_m3"): "starts in reasoning only with thinking_mode=enabled",
    ("sglang", "minimax-m3"): "starts in reasoning only with thinking_mode=enabled",
    ("vllm", "minimax_m2_append_think"): "no extraction: '<think>' is prepended to the content (the integration "
                                         "adds it); everything is content",
    ("sglang", "minimax-append-think"): "no extraction: '<think>' is prepended to the content",
    ("vllm", "cohere_command3"): "parsed by cohere_melody (preset cmd3): START_RESPONSE frames the answer",
    ("vllm", "cohere_command4"): "parsed by cohere_melody (preset cmd4): START_TEXT frames the answer",
    ("sglang", "cohere_command4"): "without <|START_TEXT|> or an action block the content is empty",
    ("vllm", "inkling"): "starts awaiting a message header; a stray <|end_message|> in content is dropped",
    ("sglang", "inkling"): "typed blocks; <|content_model_end_sampling|> ends the turn",
    ("max", "inkling"): "<|end_message|>, <|message_model|> and <|content_text|> outside reasoning stay in "
                        "content (ours consumes them as framing, as vLLM does)",
    ("vllm", "muse"): "Muse Spark rules: recipient-less messages are reasoning, developer messages dropped",
    ("vllm", "musespark1x"): "alias of vLLM's muse",
    ("sglang", "muse"): "Muse Glimmer rules (recipient-less messages are content)",
    ("vllm", "plamo3"): "enable_thinking=False disables reasoning; <|plamo:tag|> also ends it",
    ("vllm", "granite_thinking_parser"): "strips the leading newline of the content and trailing whitespace of "
                                         "the reasoning; swaps reasoning into content when thinking is off and "
                                         "content is empty",
    ("sglang", "granite_thinking_parser"): "starts in content unless force_reasoning; enable_thinking=False "
                                           "forces non-empty content",
    ("sglang", "nemotron_3"): "starts in content unless force_reasoning (vLLM's nemotron_v3 and ours start in "
                              "reasoning)",
    ("vllm", "muse_glimmer"): "a recipient-less message is dropped (MAX's muse_glimmer and ours: content)",
    ("vllm", "nemotron_v3"): "swaps reasoning into content when thinking is off and content is empty",
    ("sglang", "apertus2509"): "tool calls start with the text '<|tools_prefix|>['",
    ("vllm", "hf"): "markers from the tokenizer's response_template metadata",
    ("vllm", "beam"): "markers from the tokenizer's response_template metadata",
    ("sglang", "response_template"): "markers from the tokenizer's response_template metadata",
    ("sglang", "beam"): "markers from the tokenizer's response_template metadata",
}


def family_names() -> list[str]:
    """Every name that resolves, aliases included, sorted."""
    return sorted(set(FAMILIES) | set(ALIASES))


def get_family(name: str) -> Family:
    """The family ``name`` (or an alias; case and surrounding spaces ignored) names.

    ``ValueError`` for an unknown name, ``TypeError`` for a non-str.
    """
    if not isinstance(name, str):
        raise TypeError(f"parser name must be a str, not {type(name).__name__}")
    key = name.strip().lower()
    fam = FAMILIES.get(key) or FAMILIES.get(ALIASES.get(key, ""))
    if fam is None:
        raise ValueError(f"unknown reasoning parser {brief(name)}; available: {', '.join(family_names())}")
    return fam


# Auto-selection: most specific first.  Matched (``re.search``) against the
# lower-cased id.  Rows mapping to "passthrough" name releases of a family
# that never think: a parser that starts in reasoning would otherwise turn
# their whole answer into reasoning.
MODEL_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"gpt-oss|gpt_oss", "gpt_oss"),
    (r"deepseek-r1|deepseek_r1|r1-distill|r1-1776|deepseek-reasoner", "deepseek_r1"),
    (r"qwq", "deepseek_r1"),
    (r"gigachat-?3[._]5", "deepseek_r1"),
    (r"iquest", "deepseek_r1"),
    # V3.2 (not the V3.2-Exp preview, which writes V3.1's calls), V4.1, V4: DSML tool calls
    (r"deepseek[-_]v3[._]?2(?!-exp)", "deepseek_v32"),
    (r"deepseek[-_]v4[._]?1", "deepseek_v41"),
    (r"deepseek[-_]v4", "deepseek_v4"),
    (r"deepseek-v3|deepseek_v3|deepseek-chat", "deepseek_v3"),
    (r"holo-?2", "holo2"),
    (r"mimo", "mimo"),
    (r"minicpm-?v-?4[._]5", "qwen3_5"),
    (r"intern-?s1|nanbeige|dots[.-]llm", "qwen3"),
    # Qwen3.5 / 3.6, but not a size such as "qwen3-5b".
    (r"qwen3(\.|_|-)[56](?![0-9]*b)", "qwen3_5"),
    (r"qwen3.*thinking", "qwen3_thinking"),
    (r"qwen3", "qwen3"),
    # Kimi K2 Instruct/Base never think; the rest of K2 (Thinking, K2.5) do.
    (r"kimi-k3|kimi_k3", "kimi_k3"),
    (r"k2-?horizon|k2_horizon", "k2_horizon"),
    (r"kimi-k2-(instruct|base)", "passthrough"),
    (r"kimi-k2|kimi_k2", "kimi_k2"),
    (r"kimi", "kimi"),
    (r"glm-?4\.[78]|glm-?5", "glm47"),
    (r"(^|/)(ling|ring)-3", "glm47"),
    (r"glm-?4\.[56]|glm-?4_[56]|glm4_moe", "glm45"),
    (r"(^|[/_-])step-?[35]", "step3"),
    (r"minimax-m3|minimax_m3", "minimax_m3"),
    (r"minimax-m2|minimax_m2", "minimax_m2"),
    (r"seed-oss|seed_oss", "seed_oss"),
    (r"hunyuan-a13b|hunyuan_a13b", "hunyuan_a13b"),
    (r"(^|/)(hy|hunyuan)-?v?3", "hy_v3"),
    (r"(^|/)(hy|hunyuan)-?v?4", "hy_v4"),
    (r"granite-?4\.[2-9]", "granite_thinking"),
    (r"granite", "granite"),
    (r"magistral", "mistral"),
    # ERNIE 4.5 thinks only in its "-Thinking" and VL releases.
    (r"ernie-?4[._]5.*(thinking|vl)", "ernie45"),
    (r"ernie-?4[._]5", "passthrough"),
    # OLMo 3 thinks only in its "-Think" releases (Instruct and Base do not).
    (r"olmo-?3.*think", "olmo3"),
    (r"olmo-?3", "passthrough"),
    (r"nemotron-?(nano-)?v?3|nemotron_v3", "nemotron_v3"),
    (r"gemma-?4", "gemma4"),
    (r"command-a-reasoning|command-a-plus", "cohere_command"),
    (r"plamo-?3", "plamo3"),
    (r"inkling", "inkling"),
    (r"muse-?glimmer", "muse_glimmer"),
    (r"muse-?spark", "muse"),
    (r"laguna|poolside", "poolside_v1"),
    (r"apertus", "apertus"),
)
_COMPILED = tuple((re.compile(p), name) for p, name in MODEL_PATTERNS)

# HF config ``model_type`` values.  A model type is more specific than an
# architecture class: Kimi K2 ships ``DeepseekV3ForCausalLM`` with
# ``model_type: kimi_k2``.
CONFIG_MODEL_TYPES: dict[str, str] = {
    "gpt_oss": "gpt_oss",
    "qwen3": "qwen3",
    "qwen3_moe": "qwen3",
    "qwen3_next": "qwen3",
    "qwen3_vl": "qwen3",
    "qwen3_vl_moe": "qwen3",
    "qwen3_5": "qwen3_5",
    "qwen3_5_moe": "qwen3_5",
    "kimi_k2": "kimi_k2",
    "kimi_k25": "kimi_k2",
    "kimi_vl": "kimi",
    "glm4_moe": "glm45",
    "glm4v_moe": "glm45",
    "minimax_m2": "minimax_m2",
    "seed_oss": "seed_oss",
    "hunyuan_v1_moe": "hunyuan_a13b",
    "granite": "granite",
    "ernie4_5_moe": "ernie45",
    "ernie4_5": "ernie45",
    "ernie4_5_vl_moe": "ernie45",
    "olmo3": "olmo3",
    "nemotron_h": "nemotron_v3",
    "gemma4": "gemma4",
    "gemma4_text": "gemma4",
    "step3": "step3",
    "step3_vl": "step3",
    "step3p5": "step3",
    "deepseek_v3": "deepseek_v3",
    "deepseek_v32": "deepseek_v32",
    "deepseek_v4": "deepseek_v4",
    "deepseek_v41": "deepseek_v41",
    "kimi_k3": "kimi_k3",
    "minimax_m3": "minimax_m3",
    "minimax_m3_vl": "minimax_m3",
    "bailing_hybrid": "glm47",
    "bailing_moe_v3_vl": "glm47",
}

# HF ``architectures`` class names (used when neither id nor model type decides).
CONFIG_ARCHITECTURES: dict[str, str] = {
    "GptOssForCausalLM": "gpt_oss",
    "DeepseekV3ForCausalLM": "deepseek_v3",
    "DeepseekV32ForCausalLM": "deepseek_v32",
    "Qwen3ForCausalLM": "qwen3",
    "Qwen3MoeForCausalLM": "qwen3",
    "Qwen3NextForCausalLM": "qwen3",
    "Qwen3_5ForConditionalGeneration": "qwen3_5",
    "Qwen3_5MoeForConditionalGeneration": "qwen3_5",
    "KimiK25ForConditionalGeneration": "kimi_k2",
    "KimiVLForConditionalGeneration": "kimi",
    "Glm4MoeForCausalLM": "glm45",
    "MiniMaxM2ForCausalLM": "minimax_m2",
    "SeedOssForCausalLM": "seed_oss",
    "HunYuanMoEV1ForCausalLM": "hunyuan_a13b",
    "GraniteForCausalLM": "granite",
    "Ernie4_5_MoeForCausalLM": "ernie45",
    "Ernie4_5_ForCausalLM": "ernie45",
    "Olmo3ForCausalLM": "olmo3",
    "NemotronHForCausalLM": "nemotron_v3",
    "Gemma4ForConditionalGeneration": "gemma4",
    "Gemma4ForCausalLM": "gemma4",
    "Step3VLForConditionalGeneration": "step3",
    "Step3p5ForCausalLM": "step3",
    "DeepseekV4ForCausalLM": "deepseek_v4",
    "BailingMoeV3ForCausalLM": "glm47",
    "BailingMoeV3VLForConditionalGeneration": "glm47",
    "IQuestQ1ForCausalLM": "deepseek_r1",
    "MiniMaxM3SparseForCausalLM": "minimax_m3",
    "MiniMaxM3SparseForConditionalGeneration": "minimax_m3",
    "LagunaForCausalLM": "poolside_v1",
    "InklingForConditionalGeneration": "inkling",
    "MuseGlimmerForConditionalGeneration": "muse_glimmer",
    "K2HorizonForCausalLM": "k2_horizon",
}
_ARCHITECTURES_LOWER = {k.lower(): v for k, v in CONFIG_ARCHITECTURES.items()}


def _match_id(model_id: str) -> str | None:
    key = model_id.lower()
    for rx, name in _COMPILED:
        if rx.search(key):
            return name
    return None


# Multimodal wrappers nest the language model's config (``text_config``);
# real configs nest one or two levels.  The walk stops at this depth and at
# a config it has already seen, so a cyclic or absurdly deep config is
# "unknown", never a RecursionError.
MAX_CONFIG_DEPTH = 16


def _config_family(cfg: Mapping) -> str | None:
    """The parser name an HF config dict selects, or None if nothing matches."""
    seen: set[int] = set()
    depth = 0
    while isinstance(cfg, Mapping) and id(cfg) not in seen and depth <= MAX_CONFIG_DEPTH:
        seen.add(id(cfg))
        depth += 1
        # A model id names the release (R1 vs V3, Thinking vs Instruct); the
        # config fields only name the architecture family.
        for k in ("_name_or_path", "name_or_path", "model_id"):
            v = cfg.get(k)
            if isinstance(v, str) and v:
                found = _match_id(v)  # a known non-thinking release stays passthrough
                if found is not None:
                    return found
        mt = cfg.get("model_type")
        if isinstance(mt, str) and mt.lower() in CONFIG_MODEL_TYPES:
            return CONFIG_MODEL_TYPES[mt.lower()]
        archs = cfg.get("architectures") or ()
        if isinstance(archs, str):
            archs = (archs,)
        for arch in archs:
            if isinstance(arch, str) and arch.lower() in _ARCHITECTURES_LOWER:
                return _ARCHITECTURES_LOWER[arch.lower()]
        cfg = cfg.get("text_config")
    return None


def parser_for_model(model_id_or_config: str | Mapping) -> str:
    """The parser name for a model id (or HF config dict); ``"passthrough"`` if unknown."""
    if isinstance(model_id_or_config, str):
        return _match_id(model_id_or_config) or "passthrough"
    if isinstance(model_id_or_config, Mapping):
        return _config_family(model_id_or_config) or "passthrough"
    if hasattr(model_id_or_config, "to_dict"):  # a transformers PretrainedConfig
        return parser_for_model(model_id_or_config.to_dict())
    raise TypeError(f"expected a model id or a config mapping, not {type(model_id_or_config).__name__}")


def terminators_of(name: str) -> tuple[str, ...]:
    """A family's terminators: the tool-call openers its tool format starts a section with."""
    return get_family(name).terminators


def tool_opener(name: str) -> str:
    """A family's one tool-call opener: its terminator, or its multi-token header
    terminator when it has no single one (Kimi K3's ``<|open|>tools<|sep|>``).

    The tool formats read their section markers through this, so each marker is
    written once, in the family table.  ``ValueError`` when the family has no
    opener or more than one (a format must then say which it means).
    """
    fam = get_family(name)
    found = fam.terminators or fam.header_terminators
    if len(found) != 1:
        raise ValueError(f"family {fam.name!r} has {len(found)} tool-call openers, not one: {found!r}")
    return found[0]


def think_pair_of(name: str) -> tuple[str, str]:
    """A family's first (start, end) delimiter pair: text a tool parser must not read as calls."""
    fam = get_family(name)
    return fam.start[0], fam.end[0]


# ----------------------------------------------------------------------------
# Families built at run time
# ----------------------------------------------------------------------------

def _markers(value, what: str) -> tuple[str, ...]:
    """``value`` (a str or an iterable of str) as a tuple of non-empty strings."""
    if isinstance(value, str):
        value = (value,)
    elif value is None:
        return ()
    elif isinstance(value, (bytes, bytearray, Mapping)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{what} must be a str or a sequence of str, not {type(value).__name__}")
    out = []
    for s in value:
        if not isinstance(s, str):
            raise TypeError(f"{what} must hold str markers, not {type(s).__name__}")
        if not s:
            raise ValueError(f"{what} holds an empty marker")
        if s not in out:
            out.append(s)
    return tuple(out)


def make_family(
    name: str,
    start,
    end,
    *,
    starts_in_reasoning: bool = False,
    terminators=(),
    header_terminators=(),
    headers=(),
    frames=(),
    boundaries=(),
    enable=(),
    awaiting_start: bool = False,
    label: str | None = None,
    text_markers: bool = False,
    tool_parser: str | None = None,
    notes: str = "",
) -> Family:
    """A family from given markers (a str or a sequence of str per role).

    ``reasoning_core.parser.parser_class(family)`` turns it into a parser
    class, ``text_parser``'s ``TextReasoningParser(family)`` into a text
    parser.  Raises TypeError for a wrongly typed argument and ValueError for
    markers that cannot make a family (naming the argument).
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, not {type(name).__name__}")
    if not name.strip():
        raise ValueError("name must not be empty")
    for flag, value in (("starts_in_reasoning", starts_in_reasoning), ("awaiting_start", awaiting_start),
                        ("text_markers", text_markers)):
        if not isinstance(value, bool):
            raise TypeError(f"{flag} must be a bool, not {type(value).__name__}")
    for what, value in (("label", label), ("tool_parser", tool_parser)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{what} must be a str or None, not {type(value).__name__}")
        if value == "":
            raise ValueError(f"{what} must not be empty (use None)")
    if not isinstance(notes, str):
        raise TypeError(f"notes must be a str, not {type(notes).__name__}")
    roles = {
        "start": _markers(start, "start"), "end": _markers(end, "end"),
        "terminators": _markers(terminators, "terminators"),
        "header_terminators": _markers(header_terminators, "header_terminators"),
        "headers": _markers(headers, "headers"), "frames": _markers(frames, "frames"),
        "boundaries": _markers(boundaries, "boundaries"), "enable": _markers(enable, "enable"),
    }
    if not roles["end"] and not (roles["terminators"] or roles["header_terminators"] or roles["headers"]):
        raise ValueError("end: a family needs a marker that ends reasoning")
    if not roles["start"] and not starts_in_reasoning:
        raise ValueError("start: a family without a start marker must start in reasoning "
                         "(starts_in_reasoning=True)")
    if awaiting_start and not roles["start"]:
        raise ValueError("awaiting_start needs a start marker")
    # One marker, one role: the delimiter kinds the engines act on must not
    # overlap.  An end may also be a frame (it closes reasoning inside a block
    # and is consumed in content, as Inkling's <|end_message|>).
    seen: dict[str, str] = {}
    for role in ("start", "end", "terminators", "header_terminators", "headers", "frames", "enable"):
        for s in roles[role]:
            if s in seen and not (seen[s] == "end" and role == "frames"):
                raise ValueError(f"{role}: {brief(s)} is already a {seen[s]} marker")
            seen[s] = role
    return Family(name.strip(), roles["start"], roles["end"], starts_in_reasoning,
                  terminators=roles["terminators"], header_terminators=roles["header_terminators"],
                  headers=roles["headers"], frames=roles["frames"], boundaries=roles["boundaries"],
                  enable=roles["enable"], awaiting_start=awaiting_start, label=label,
                  text_markers=text_markers, tool_parser=tool_parser, notes=notes)


# The fields of a checkpoint's ``response_template`` (vLLM ``hf``/``beam``,
# SGLang ``response_template``/``beam``) that the serving parsers route.
_RT_FIELDS = frozenset({"thinking", "content", "tool_calls"})


def response_template_of(tokenizer) -> dict | None:
    """The ``response_template`` metadata a tokenizer carries (its attribute, or
    the ``init_kwargs`` entry read from ``tokenizer_config.json``), or None."""
    template = getattr(tokenizer, "response_template", None)
    if not isinstance(template, Mapping):
        init_kwargs = getattr(tokenizer, "init_kwargs", None)
        template = init_kwargs.get("response_template") if isinstance(init_kwargs, Mapping) else None
    return dict(template) if isinstance(template, Mapping) else None


def _rt_literals(field: Mapping, key: str, scope: str) -> tuple[str, ...]:
    if f"{key}_pattern" in field:
        raise ValueError(f"{scope}: '{key}_pattern' is a regular expression; only literal markers "
                         f"('{key}') can be matched at the token level")
    if key not in field:
        return ()
    raw = field[key]
    if isinstance(raw, str) or (isinstance(raw, (list, tuple)) and raw):
        return _markers(raw, f"{scope}.{key}")
    raise ValueError(f"{scope}: '{key}' must be a non-empty string or list of strings")


def response_template_family(template_or_tokenizer, *, name: str = "response_template") -> Family:
    """The family a checkpoint's ``response_template`` describes.

    Accepts the template dict or a tokenizer carrying it.  The ``thinking``
    field's open/close literals are the start/end markers (no open: the field
    is the implicit one, so reasoning starts at once); the ``tool_calls``
    field's openers end reasoning and stay in content; the ``content``
    field's opener is consumed (and ends open reasoning), its closer is
    consumed in content; the start anchor's literals are turn boundaries.
    """
    if isinstance(template_or_tokenizer, Mapping):
        template = dict(template_or_tokenizer)
    else:
        template = response_template_of(template_or_tokenizer)
        if template is None:
            raise ValueError(f"{type(template_or_tokenizer).__name__} carries no response_template metadata")
    if template.get("version", 1) != 1:
        raise ValueError(f"response_template: unsupported version {brief(template.get('version'))}")
    fields = template.get("fields")
    if not isinstance(fields, Mapping) or not fields:
        raise ValueError("response_template.fields must be a non-empty mapping")
    unknown = set(fields) - _RT_FIELDS
    if unknown:
        raise ValueError(f"response_template: unsupported fields {brief(sorted(unknown))} "
                         f"(supported: {sorted(_RT_FIELDS)})")
    for key, field in fields.items():
        if not isinstance(field, Mapping):
            raise ValueError(f"response_template field {brief(key)} must be a mapping")
    thinking = fields.get("thinking")
    if thinking is None:
        raise ValueError("response_template has no 'thinking' field: nothing to extract as reasoning")
    start = _rt_literals(thinking, "open", "thinking")
    end = _rt_literals(thinking, "close", "thinking")
    content = fields.get("content", {})
    tools = fields.get("tool_calls", {})
    content_open = _rt_literals(content, "open", "content")
    content_close = _rt_literals(content, "close", "content")
    tool_open = _rt_literals(tools, "open", "tool_calls")
    if "start_anchor_pattern" in template:
        raise ValueError("response_template: 'start_anchor_pattern' is a regular expression; only literal "
                         "anchors can be matched at the token level")
    anchors = _markers(template.get("start_anchor", ()), "start_anchor")
    return make_family(
        name, start, end,
        starts_in_reasoning=not start,
        header_terminators=tool_open,
        headers=content_open,
        frames=tuple(s for s in content_close if s not in end),
        boundaries=anchors,
        notes="built from the checkpoint's response_template",
    )


# Hunyuan 3/4 checkpoints may suffix their structural tokens per checkpoint
# (``<think:6124c78e>``); the suffix is read from the vocabulary (or the
# tokenizer's ``token_suffix`` init argument).
_HY_TOKEN = re.compile(r"<(?:think|tool_calls|tool_call|arg_key|arg_value)(:[^\s>]+)?>")


def _vocab_of(tokenizer) -> Mapping | None:
    if isinstance(tokenizer, Mapping):
        return tokenizer
    for obj in (tokenizer, getattr(tokenizer, "delegate", None)):
        get_vocab = getattr(obj, "get_vocab", None)
        if callable(get_vocab):
            try:
                vocab = get_vocab()
            except Exception:  # a tokenizer that cannot list its vocabulary
                continue
            if isinstance(vocab, Mapping):
                return vocab
    return None


def hunyuan_token_suffix(tokenizer) -> str:
    """The per-checkpoint suffix of Hunyuan 3/4 structural tokens (``":6124c78e"``), or ``""``."""
    init_kwargs = getattr(tokenizer, "init_kwargs", None)
    if isinstance(init_kwargs, Mapping) and isinstance(init_kwargs.get("token_suffix"), str):
        return init_kwargs["token_suffix"]
    vocab = _vocab_of(tokenizer) or {}
    for token in vocab:
        if isinstance(token, str):
            m = _HY_TOKEN.fullmatch(token)
            if m and m.group(1):
                return m.group(1)
    return ""


def _with_suffix(fam: Family, suffix: str) -> Family:
    # "</think>" -> "</think:sfx>": the closing form carries the suffix too.
    def fix_all(markers: tuple[str, ...]) -> tuple[str, ...]:
        out = []
        for s in markers:
            closing = s.startswith("</")
            body = "<" + s[2:] if closing else s
            body = _HY_TOKEN.sub(lambda m: m.group(0)[:-1] + suffix + ">", body)
            out.append("</" + body[1:] if closing else body)
        return tuple(out)
    return make_family(fam.name, fix_all(fam.start), fix_all(fam.end), starts_in_reasoning=fam.starts_in_reasoning,
                       terminators=fix_all(fam.terminators), boundaries=fam.boundaries,
                       tool_parser=fam.tool_parser, notes=fam.notes)


def family_for_tokenizer(name: str, tokenizer, *, engine: str | None = None) -> Family:
    """The family ``name`` serves with this tokenizer.

    ``name`` is one of ours, or an engine's parser name when ``engine`` is
    given (``"vllm"``, ``"sglang"``, ``"max"``; see ENGINE_PARSER_NAMES).  Most
    names give their table row unchanged; the names whose markers come from
    the checkpoint are built here: ``hf``/``beam``/``response_template`` from
    the tokenizer's ``response_template`` metadata, and Hunyuan 3/4
    (``hy_v3``/``hy_v4``) with the vocabulary's token suffix.
    """
    if not isinstance(name, str):
        raise TypeError(f"parser name must be a str, not {type(name).__name__}")
    key = name.strip()
    if engine is not None:
        if engine not in ENGINE_PARSER_NAMES:
            raise ValueError(f"unknown engine {brief(engine)}; known: {', '.join(sorted(ENGINE_PARSER_NAMES))}")
        names = ENGINE_PARSER_NAMES[engine]
        if key not in names:
            raise ValueError(f"{engine} registers no reasoning parser {brief(name)}; its names: {', '.join(sorted(names))}")
        if key in RUNTIME_ENGINE_NAMES[engine]:
            return response_template_family(tokenizer, name=key)
        key = names[key]
    elif key in ("response_template", "hf", "beam"):
        return response_template_family(tokenizer, name=key)
    fam = get_family(key)
    if fam.name in ("hy_v3", "hy_v4"):
        suffix = hunyuan_token_suffix(tokenizer)
        if suffix:
            return _with_suffix(fam, suffix)
    return fam
