"""Requests for the vLLM serving comparison: per parser name, the flows a
deployment sees (thinking on/off, prompt-opened blocks, truncation, no
markers, a stray end with thinking off, tool calls after reasoning), each
one-shot, streamed one token per step, and streamed 2–4 tokens per step."""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Optional

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}},
]

# vLLM tool-parser name -> (the reasoning parser it is served with, our sample writer's format)
TOOL_PAIRS = {
    "hermes": ("qwen3", "hermes"),
    "qwen3_coder": ("qwen3", "qwen3_coder"),
    "glm45": ("glm45", "glm45"),
    "glm47": ("glm47", "glm45"),
    "kimi_k2": ("kimi_k2", "kimi_k2"),
    "minimax_m2": ("minimax_m2", "minimax_m2"),
    "deepseek_v3": ("deepseek_r1", "deepseek_v3"),
    "deepseek_v31": ("deepseek_v3", "deepseek_v31"),
    "mistral": ("mistral", "mistral"),
}

# The names CI runs; REASONING_CORE_FULL_ENGINE_TESTS=1 runs every served name.
CI_NAMES = ("qwen3", "deepseek_r1", "deepseek_v3", "glm45", "kimi_k2", "minimax_m2", "mistral", "granite",
            "openai_gptoss", "gemma4", "ernie45", "seed_oss", "hy_v3", "k2_horizon")
CI_TOOLS = ("hermes", "qwen3_coder", "glm45", "deepseek_v3")


@dataclass(frozen=True)
class Case:
    name: str          # vLLM reasoning-parser name
    tool: Optional[str]
    flow: str
    text: str
    finish: str = "stop"
    kwargs: tuple = ()   # chat_template_kwargs items
    tools: bool = False
    modes: tuple = field(default=("oneshot", "k1", "k2-4"))

    @property
    def id(self) -> str:
        return f"{self.name}/{self.tool or '-'}/{self.flow}"


def markers(name: str) -> tuple[str, str]:
    from reasoning_core.families import get_family
    from reasoning_core.integrations import vllm as rcv

    fam = get_family(rcv.family_of(name))
    return (fam.start[0] if fam.start else ""), (fam.end[0] if fam.end else "")


def reasoning_cases(name: str) -> list[Case]:
    s, e = markers(name)
    r, c = "Let me think about it step by step.", "The answer is 4."
    off = (("enable_thinking", False), ("thinking", False))
    out = [
        Case(name, None, "think", s + r + e + c),
        Case(name, None, "think_nl", s + "\n" + r + "\n" + e + "\n\n" + c),
        Case(name, None, "no_markers", c),
        Case(name, None, "no_start", r + e + c),
        Case(name, None, "truncated", s + r, finish="length"),
        Case(name, None, "prompt_open", r + e + c, kwargs=(("prompt_suffix", s),)),
        Case(name, None, "off", c, kwargs=off),
        Case(name, None, "off_stray_end", "Here " + e + c, kwargs=off),
        Case(name, None, "on_explicit", s + r + e + c, kwargs=(("enable_thinking", True), ("thinking", True))),
    ]
    if name == "hy_v3" or name == "hy_v4":
        out.append(Case(name, None, "effort_high", s + r + e + c, kwargs=(("reasoning_effort", "high"),)))
    return out


def tool_cases(tool: str) -> list[Case]:
    from test_hardening_tools import call_text

    name, fmt = TOOL_PAIRS[tool]
    s, e = markers(name)
    call = call_text(fmt, "get_weather", "city", '"Paris"')
    r = "The user wants the weather."
    return [
        Case(name, tool, "tool_after_reasoning", s + r + e + "\n\n" + call, tools=True),
        Case(name, tool, "tool_text_before", s + r + e + "Let me check. " + call, tools=True),
        Case(name, tool, "tool_no_call", s + r + e + "It is sunny.", tools=True),
        Case(name, tool, "tool_no_tools_listed", s + r + e + "\n\n" + call, tools=False),
    ]


def sizes_for(mode: str, n: int, seed: str) -> list[int]:
    if mode in ("oneshot", "k1"):
        return [1] * n
    rng = random.Random(seed)
    out: list[int] = []
    while sum(out) < n:
        out.append(min(rng.randint(2, 4), n - sum(out)))
    return out or [0]
