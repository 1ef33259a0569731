"""Auto-selection from model ids and HF configs, and the parser registry."""
from __future__ import annotations

import re

import pytest

import reasoning_core
from reasoning_core import FAMILIES, parser_for_model
from reasoning_core.families import ALIASES, MODEL_PATTERNS, get_family
from vocab import family_tokenizer

# Real Hugging Face ids (and a few serving names) per expected parser.
MODEL_IDS = {
    "deepseek_r1": [
        "deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-R1-0528", "deepseek-ai/DeepSeek-R1-Zero",
        "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", "deepseek-ai/DeepSeek-R1-Distill-Llama-70B",
        # R1 distilled into Qwen3: the R1 template wins over the Qwen3 pattern.
        "deepseek-ai/DeepSeek-R1-0528-Qwen3-8B", "unsloth/DeepSeek-R1-GGUF", "perplexity-ai/r1-1776",
        "Qwen/QwQ-32B", "Qwen/QwQ-32B-Preview", "deepseek-reasoner",
    ],
    "deepseek_v3": [
        "deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3-0324", "deepseek-ai/DeepSeek-V3.1",
        "deepseek-ai/DeepSeek-V3.1-Terminus", "deepseek-ai/DeepSeek-V3.2-Exp", "deepseek-chat",
    ],
    "deepseek_v32": ["deepseek-ai/DeepSeek-V3.2", "deepseek-ai/DeepSeek-V3.2-Speciale"],
    "deepseek_v4": ["deepseek-ai/DeepSeek-V4", "deepseek-ai/DeepSeek-V4-Flash"],
    "deepseek_v41": ["deepseek-ai/DeepSeek-V4.1"],
    "qwen3": [
        "Qwen/Qwen3-8B", "Qwen/Qwen3-0.6B", "Qwen/Qwen3-4B", "Qwen/Qwen3-32B", "Qwen/Qwen3-30B-A3B",
        "Qwen/Qwen3-235B-A22B", "Qwen/Qwen3-8B-FP8", "Qwen/Qwen3-32B-AWQ", "Qwen/Qwen3-235B-A22B-Instruct-2507",
        "Qwen/Qwen3-Next-80B-A3B-Instruct", "Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3",
    ],
    "qwen3_thinking": [
        "Qwen/Qwen3-30B-A3B-Thinking-2507", "Qwen/Qwen3-235B-A22B-Thinking-2507", "Qwen/Qwen3-4B-Thinking-2507",
        "Qwen/Qwen3-Next-80B-A3B-Thinking", "Qwen/Qwen3-VL-235B-A22B-Thinking",
    ],
    "qwen3_5": ["Qwen/Qwen3.5-397B-A17B", "Qwen/Qwen3.5-27B", "Qwen/Qwen3.5-35B-A3B", "Qwen/Qwen3.6-Plus"],
    "kimi_k2": ["moonshotai/Kimi-K2-Thinking", "moonshotai/Kimi-K2.5", "moonshotai/Kimi-K2-Thinking-0905"],
    "kimi": ["moonshotai/Kimi-VL-A3B-Thinking", "moonshotai/Kimi-VL-A3B-Thinking-2506"],
    "glm45": ["zai-org/GLM-4.5", "zai-org/GLM-4.5-Air", "zai-org/GLM-4.5-FP8", "zai-org/GLM-4.6",
              "zai-org/GLM-4.5V"],
    "glm47": ["zai-org/GLM-4.7", "zai-org/GLM-4.7-Flash", "zai-org/GLM-5"],
    "step3": ["stepfun-ai/step3", "stepfun-ai/Step-3.5-Flash"],
    "minimax_m2": ["MiniMaxAI/MiniMax-M2", "MiniMaxAI/MiniMax-M2.1"],
    "seed_oss": ["ByteDance-Seed/Seed-OSS-36B-Instruct"],
    "hunyuan_a13b": ["tencent/Hunyuan-A13B-Instruct", "tencent/Hunyuan-A13B-Instruct-FP8"],
    "granite": ["ibm-granite/granite-3.2-8b-instruct", "ibm-granite/granite-3.3-8b-instruct"],
    "mistral": ["mistralai/Magistral-Small-2506", "mistralai/Magistral-Medium-2506", "mistralai/Magistral-Small-2509"],
    "gpt_oss": ["openai/gpt-oss-20b", "openai/gpt-oss-120b", "unsloth/gpt-oss-20b-GGUF"],
    "ernie45": ["baidu/ERNIE-4.5-21B-A3B-Thinking", "baidu/ERNIE-4.5-VL-28B-A3B-PT"],
    "olmo3": ["allenai/Olmo-3-7B-Think", "allenai/Olmo-3-32B-Think", "allenai/Olmo-3.1-32B-Think"],
    "nemotron_v3": ["nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-FP8"],
    "gemma4": ["google/gemma-4-31b-it", "google/gemma-4-E4B-it", "google/gemma-4-26b-a4b-it"],
    "passthrough": [
        "meta-llama/Llama-3.1-8B-Instruct", "mistralai/Mistral-Small-3.2-24B-Instruct-2506",
        "google/gemma-3-4b-it", "google/gemma-3n-E4B-it", "Qwen/Qwen2.5-7B-Instruct",
        "microsoft/phi-4", "some-org/unknown-model", "",
        # Releases of thinking families that never think: starting them in
        # reasoning would turn their whole answer into reasoning.
        "moonshotai/Kimi-K2-Instruct", "moonshotai/Kimi-K2-Instruct-0905", "baidu/ERNIE-4.5-21B-A3B-PT",
        "baidu/ERNIE-4.5-300B-A47B-Base-PT", "allenai/Olmo-3-7B-Instruct",
        "nvidia/NVIDIA-Nemotron-Nano-9B-v2",
    ],
}
ID_PARAMS = [pytest.param(mid, name, id=f"{name}:{mid}") for name, ids in MODEL_IDS.items() for mid in ids]


@pytest.mark.parametrize("model_id, expected", ID_PARAMS)
def test_model_id(model_id, expected):
    assert parser_for_model(model_id) == expected


def test_issue_examples():
    assert parser_for_model("deepseek-ai/DeepSeek-R1-0528") == "deepseek_r1"
    assert parser_for_model("Qwen/Qwen3-30B-A3B-Thinking-2507") == "qwen3_thinking"
    assert parser_for_model("Qwen/Qwen3-8B") == "qwen3"
    assert parser_for_model("moonshotai/Kimi-K2-Thinking") == "kimi_k2"
    assert parser_for_model("zai-org/GLM-4.5") == "glm45"
    assert parser_for_model("openai/gpt-oss-20b") == "gpt_oss"
    assert parser_for_model("google/gemma-4-31b-it") == "gemma4"
    assert parser_for_model("nobody/nothing") == "passthrough"


def test_case_insensitive():
    assert parser_for_model("QWEN/QWEN3-8B") == parser_for_model("qwen/qwen3-8b") == "qwen3"


def test_every_family_is_reachable():
    targets = {name for _, name in MODEL_PATTERNS}
    assert set(FAMILIES) - {"passthrough"} <= targets
    assert targets <= set(FAMILIES)


def test_patterns_compile_and_are_lowercase():
    for pattern, _ in MODEL_PATTERNS:
        re.compile(pattern)
        assert pattern == pattern.lower()


CONFIGS = [
    ({"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss"}, "gpt_oss"),
    ({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3"}, "qwen3"),
    ({"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe"}, "qwen3"),
    ({"architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe"}, "qwen3_5"),
    # Kimi K2 reuses DeepSeek's architecture class; its model type decides.
    ({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "kimi_k2"}, "kimi_k2"),
    ({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3"}, "deepseek_v3"),
    ({"architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe"}, "glm45"),
    ({"architectures": ["MiniMaxM2ForCausalLM"], "model_type": "minimax_m2"}, "minimax_m2"),
    ({"architectures": ["SeedOssForCausalLM"], "model_type": "seed_oss"}, "seed_oss"),
    ({"architectures": ["HunYuanMoEV1ForCausalLM"], "model_type": "hunyuan_v1_moe"}, "hunyuan_a13b"),
    ({"architectures": ["Ernie4_5_MoeForCausalLM"], "model_type": "ernie4_5_moe"}, "ernie45"),
    ({"architectures": ["Olmo3ForCausalLM"], "model_type": "olmo3"}, "olmo3"),
    ({"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h"}, "nemotron_v3"),
    ({"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4"}, "gemma4"),
    ({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}, "passthrough"),
    # Architectures alone, model type alone.
    ({"architectures": ["GptOssForCausalLM"]}, "gpt_oss"),
    ({"architectures": "Gemma4ForCausalLM"}, "gemma4"),
    ({"model_type": "MINIMAX_M2"}, "minimax_m2"),
    # A multimodal wrapper whose language model is nested.
    ({"model_type": "some_vlm", "text_config": {"model_type": "qwen3"}}, "qwen3"),
    # The id names the release, which the architecture cannot.
    ({"_name_or_path": "deepseek-ai/DeepSeek-R1-0528", "model_type": "deepseek_v3"}, "deepseek_r1"),
    ({"_name_or_path": "Qwen/Qwen3-4B-Thinking-2507", "model_type": "qwen3"}, "qwen3_thinking"),
    ({"_name_or_path": "moonshotai/Kimi-K2-Instruct", "model_type": "kimi_k2"}, "passthrough"),
    ({"_name_or_path": "/models/local-copy", "model_type": "glm4_moe"}, "glm45"),
    ({}, "passthrough"),
]


@pytest.mark.parametrize("config, expected", CONFIGS)
def test_config_dict(config, expected):
    assert parser_for_model(config) == expected


def test_transformers_config_object():
    from transformers import PretrainedConfig

    cfg = PretrainedConfig(architectures=["GptOssForCausalLM"])
    cfg.model_type = "gpt_oss"
    assert parser_for_model(cfg) == "gpt_oss"


def test_bad_argument():
    with pytest.raises(TypeError):
        parser_for_model(42)


# -- registry ---------------------------------------------------------------------


def test_available_parsers_lists_names_and_aliases():
    names = reasoning_core.available_parsers()
    assert names == sorted(set(names))
    assert set(FAMILIES) | set(ALIASES) == set(names)
    for alias in ("qwq", "deepseek_v31", "deepseekv4", "kimik2_5", "glm5", "step3p5", "magistral", "harmony",
                  "none"):
        assert alias in names


@pytest.mark.parametrize("name", reasoning_core.available_parsers())
def test_every_listed_name_resolves(name, backend):
    cls = reasoning_core.get_parser_cls(name)
    fam = cls.family
    assert fam is get_family(name)
    tok = family_tokenizer(fam.name)
    parser = reasoning_core.get_parser(name, tok, backend=backend)
    assert parser.family is fam and parser.backend == backend
    assert parser.state == ("seeded" if fam.starts_in_reasoning else "content")


@pytest.mark.parametrize("name, family", [
    ("kimik2_5", "kimi_k2"), ("minimax_m2", "minimax_m2"), ("qwen3_5", "qwen3_5"), ("glm45", "glm45"),
    ("deepseekv4", "deepseek_v4"), ("gemma4", "gemma4"),
])
def test_max_names(name, family):
    assert reasoning_core.get_parser_cls(name).family.name == family


def test_names_are_normalised():
    assert reasoning_core.get_parser_cls(" QWEN3 ").family.name == "qwen3"


def test_unknown_name_lists_available():
    with pytest.raises(ValueError) as err:
        reasoning_core.get_parser_cls("no_such_family")
    msg = str(err.value)
    assert "no_such_family" in msg
    for name in reasoning_core.available_parsers():
        assert name in msg
    with pytest.raises(ValueError):
        reasoning_core.get_parser("no_such_family", family_tokenizer("qwen3"))


def test_non_string_name():
    with pytest.raises(TypeError):
        reasoning_core.get_parser_cls(None)


def test_selected_parser_is_usable():
    name = parser_for_model("Qwen/Qwen3-8B")
    parser = reasoning_core.get_parser(name, family_tokenizer("qwen3"))
    assert parser.family.name == "qwen3"
