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

from ._tables import BOUNDARY, ENABLE, END, FRAME, HEADER, START, TERM

__all__ = [
    "ROLES", "terminators_of", "think_pair_of",
    "Family", "FAMILIES", "ALIASES", "MODEL_PATTERNS", "CONFIG_MODEL_TYPES", "CONFIG_ARCHITECTURES",
    "get_family", "family_names", "parser_for_model",
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

_ROWS = (
    Family("deepseek_r1", _THINK, _UNTHINK, True, aliases=("qwq", "deepseek-r1"),
           boundaries=_DS_TURNS + _QWEN_TURNS,
           notes="R1 templates inject <think>; output may or may not repeat it", tool_parser="deepseek_v3"),
    Family("deepseek_v3", _THINK, _UNTHINK, False, aliases=("deepseek_v31", "deepseekv4", "deepseek_v32", "deepseek-v3"),
           terminators=("<｜tool▁calls▁begin｜>",), boundaries=_DS_TURNS,
           notes="hybrid: a prompt ending in <think> means thinking mode", tool_parser="deepseek_v31"),
    Family("qwen3", _THINK, _UNTHINK, False, terminators=("<tool_call>",), boundaries=_QWEN_TURNS,
           notes="enable_thinking=False renders <think>\\n\\n</think> into the prompt", tool_parser="hermes"),
    Family("qwen3_thinking", _THINK, _UNTHINK, True, aliases=("qwen3-thinking",),
           terminators=("<tool_call>",), boundaries=_QWEN_TURNS, tool_parser="hermes"),
    Family("qwen3_5", _THINK, _UNTHINK, True, aliases=("qwen3.5", "qwen3_6"),
           terminators=("<tool_call>",), boundaries=_QWEN_TURNS, tool_parser="qwen3_coder"),
    Family("kimi", ("◁think▷",), ("◁/think▷",), False, aliases=("kimi_vl", "kimi_k1_5"),
           boundaries=("<|im_user|>", "<|im_assistant|>", "<|im_middle|>")),
    Family("kimi_k2", _THINK, _UNTHINK, True, aliases=("kimik2_5", "kimi_k2_5"),
           terminators=("<|tool_calls_section_begin|>", "<|tool_call_section_begin|>"),
           boundaries=("<|im_user|>", "<|im_assistant|>", "<|im_middle|>", "<|im_system|>"), tool_parser="kimi_k2"),
    Family("glm45", _THINK, _UNTHINK, False, aliases=("glm4_5", "glm46"), terminators=("<tool_call>",),
           boundaries=("<|user|>", "<|assistant|>", "<|system|>", "<|observation|>"), tool_parser="glm45"),
    Family("glm47", _THINK, _UNTHINK, True, aliases=("glm5", "glm4_7"), terminators=("<tool_call>",),
           boundaries=("<|user|>", "<|assistant|>", "<|system|>", "<|observation|>"), tool_parser="glm45"),
    Family("step3", _THINK, _UNTHINK, True, aliases=("step3p5",),
           boundaries=("<|BOT|>", "<|EOT|>")),
    Family("minimax_m2", _THINK, _UNTHINK, True, terminators=("<minimax:tool_call>",),
           boundaries=("]~b]", "]~!b["), tool_parser="minimax_m2"),
    Family("seed_oss", ("<seed:think>",), ("</seed:think>",), True,
           boundaries=("<seed:bos>", "<seed:eos>")),
    Family("hunyuan_a13b", ("<think>\n",), ("\n</think>\n<answer>\n", "</think>\n<answer>\n"), False,
           aliases=("hunyuan",), frames=("\n</answer>", "</answer>"),
           notes="the <answer> frame around the reply is unwrapped"),
    Family("granite", ("Here is my thought process:", "Here's my thought process:"),
           ("Here is my response:", "Here's my response:"), False, text_markers=True,
           notes="plain-text markers, matched however the BPE splits them"),
    Family("mistral", ("[THINK]",), ("[/THINK]",), False, aliases=("magistral",), tool_parser="mistral"),
    Family("gpt_oss", ("<|channel|>analysis<|message|>", "<|start|>assistant<|channel|>analysis<|message|>"),
           ("<|end|>",), False, aliases=("harmony", "gpt-oss"),
           header_terminators=("<|start|>assistant<|channel|>commentary", "<|channel|>commentary"),
           headers=("<|start|>assistant<|channel|>final<|message|>", "<|channel|>final<|message|>", "<|return|>"),
           boundaries=("<|start|>",),
           notes="analysis channel is reasoning; final is content; commentary (tool calls) stays in content"),
    Family("ernie45", _THINK, _UNTHINK, True, aliases=("ernie",), frames=("<response>", "</response>"),
           notes="the <response> frame around the reply is unwrapped"),
    Family("olmo3", _THINK, _UNTHINK, True, text_markers=True,
           notes="<think> is ordinary text in this vocabulary"),
    Family("nemotron_v3", _THINK, _UNTHINK, True, aliases=("nemotron3", "nemotron_nano_v3"),
           terminators=("<tool_call>",), boundaries=_QWEN_TURNS, tool_parser="qwen3_coder"),
    Family("gemma4", ("<|channel>",), ("<channel|>",), False, terminators=("<|tool_call>",),
           enable=("<|think|>",), boundaries=("<|turn>", "<turn|>"), awaiting_start=True,
           label="thought\n", notes="<|think|> in the prompt enables thinking; label stripped by the formatter"),
    Family("passthrough", (), (), False, aliases=("none", "identity")),
)

FAMILIES: dict[str, Family] = {f.name: f for f in _ROWS}
ALIASES: dict[str, str] = {a: f.name for f in _ROWS for a in f.aliases}


def family_names() -> list[str]:
    """Every name that resolves, aliases included, sorted."""
    return sorted(set(FAMILIES) | set(ALIASES))


def get_family(name: str) -> Family:
    if not isinstance(name, str):
        raise TypeError(f"parser name must be a str, not {type(name).__name__}")
    key = name.strip().lower()
    fam = FAMILIES.get(key) or FAMILIES.get(ALIASES.get(key, ""))
    if fam is None:
        raise ValueError(f"unknown reasoning parser {name!r}; available: {', '.join(family_names())}")
    return fam


# Auto-selection: most specific first.  Matched (``re.search``) against the
# lower-cased id.  Rows mapping to "passthrough" name releases of a family
# that never think: a parser that starts in reasoning would otherwise turn
# their whole answer into reasoning.
MODEL_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"gpt-oss|gpt_oss", "gpt_oss"),
    (r"deepseek-r1|deepseek_r1|r1-distill|r1-1776|deepseek-reasoner", "deepseek_r1"),
    (r"qwq", "deepseek_r1"),
    (r"deepseek-v[34]|deepseek_v[34]|deepseek-chat", "deepseek_v3"),
    # Qwen3.5 / 3.6, but not a size such as "qwen3-5b".
    (r"qwen3(\.|_|-)[56](?![0-9]*b)", "qwen3_5"),
    (r"qwen3.*thinking", "qwen3_thinking"),
    (r"qwen3", "qwen3"),
    # Kimi K2 Instruct/Base never think; the rest of K2 (Thinking, K2.5) do.
    (r"kimi-k2-(instruct|base)", "passthrough"),
    (r"kimi-k2|kimi_k2", "kimi_k2"),
    (r"kimi", "kimi"),
    (r"glm-?4\.[78]|glm-?5", "glm47"),
    (r"glm-?4\.[56]|glm-?4_[56]|glm4_moe", "glm45"),
    (r"(^|[/_-])step-?3", "step3"),
    (r"minimax-m2|minimax_m2", "minimax_m2"),
    (r"seed-oss|seed_oss", "seed_oss"),
    (r"hunyuan-a13b|hunyuan_a13b", "hunyuan_a13b"),
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
    "deepseek_v32": "deepseek_v3",
}

# HF ``architectures`` class names (used when neither id nor model type decides).
CONFIG_ARCHITECTURES: dict[str, str] = {
    "GptOssForCausalLM": "gpt_oss",
    "DeepseekV3ForCausalLM": "deepseek_v3",
    "DeepseekV32ForCausalLM": "deepseek_v3",
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


def think_pair_of(name: str) -> tuple[str, str]:
    """A family's first (start, end) delimiter pair: text a tool parser must not read as calls."""
    fam = get_family(name)
    return fam.start[0], fam.end[0]
