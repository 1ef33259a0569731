"""``max serve --custom-architectures``: the module shipped in the package.

MAX 26.7 imports the module a ``--custom-architectures`` path names (its
directory appended to ``sys.path``) before it looks any architecture or parser
name up, and requires a non-empty ``ARCHITECTURES`` list.  Checked here with
MAX's own importer (``PIPELINE_REGISTRY._import_custom_architectures``, what
``max serve`` calls first) in a fresh interpreter, with and without
``REASONING_CORE_REPLACE``; the whole ``max serve`` command line runs up to
model loading with ``REASONING_CORE_FULL_ENGINE_TESTS=1`` (needs MAX's serving
extras on ``PYTHONPATH``, see test_max_serving.py).  Skips without MAX.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from sglang_max_helpers import import_max

import_max()  # skips without MAX; sets MAX's cache directories

from reasoning_core.integrations import max_architectures  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# Subprocesses start here, so `python -m` / `-c` import the reasoning_core this
# process imports, not a checkout in the current directory.
NEUTRAL = tempfile.gettempdir()

_PROBE = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
from max.pipelines.lib.registry import PIPELINE_REGISTRY
PIPELINE_REGISTRY._import_custom_architectures([sys.argv[1]])
from max.pipelines.lib import reasoning, tool_parsing
from max.pipelines.lib.arch_lookup import ARCH_LOOKUP
import reasoning_core.integrations.max as rcm
ours = set(rcm.REASONING_PARSERS.values()) | set(rcm.TOOL_PARSERS.values())
arch = ARCH_LOOKUP.architectures["ReasoningCoreQwen3_5ForCausalLM"]
ARCH_LOOKUP.materialize("Qwen3_5ForCausalLM")
print(json.dumps({
    "rc_reasoning": reasoning._REASONING_PARSERS.get("rc_qwen3_5") in ours,
    "rc_tool": tool_parsing._TOOL_PARSERS.get("rc_qwen3_5") in ours,
    "max_reasoning_is_ours": reasoning._REASONING_PARSERS.get("qwen3_5") in ours,
    "max_tool_is_ours": tool_parsing._TOOL_PARSERS.get("qwen3_5") in ours,
    "arch_parsers": [arch.reasoning_parser, arch.tool_parser],
    "max_arch_parsers": [ARCH_LOOKUP.architectures["Qwen3_5ForCausalLM"].reasoning_parser,
                         ARCH_LOOKUP.architectures["Qwen3_5ForCausalLM"].tool_parser],
    "rc_names": sorted(n for n in reasoning._REASONING_PARSERS if n.startswith("rc_")),
}))
"""


def _env(**extra: str) -> dict:
    env = dict(os.environ)
    # The reasoning_core this process imports (the installed one in CI, a checkout here).
    import reasoning_core

    here = str(Path(reasoning_core.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join([here] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.pop("REASONING_CORE_REPLACE", None)
    env.update(extra)
    return env


def test_path_is_printed_and_names_an_importable_module():
    out = subprocess.run([sys.executable, "-m", "reasoning_core.integrations.max_architectures"], env=_env(),
                         capture_output=True, text=True, check=True, timeout=60, cwd=NEUTRAL).stdout.strip()
    assert out == max_architectures.PATH
    assert Path(out + ".py").is_file()
    # Alone in its directory: MAX appends the directory to sys.path.
    assert sorted(p.name for p in Path(out).parent.glob("*.py")) == ["__init__.py", "__main__.py",
                                                                     "reasoning_core_max.py"]


@pytest.mark.parametrize("replace", ["", "1"], ids=["rc_names", "replace"])
def test_maxs_importer_registers_our_parsers(replace):
    if not replace and not os.environ.get("REASONING_CORE_FULL_ENGINE_TESTS"):
        pytest.skip("one interpreter start is enough in CI: REASONING_CORE_FULL_ENGINE_TESTS=1 runs both")
    done = subprocess.run([sys.executable, "-c", _PROBE, max_architectures.PATH],
                          env=_env(REASONING_CORE_REPLACE=replace), capture_output=True, text=True, timeout=300,
                          cwd=NEUTRAL)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["rc_reasoning"] and got["rc_tool"]
    assert got["max_reasoning_is_ours"] is bool(replace)
    assert got["max_tool_is_ours"] is bool(replace)
    assert got["arch_parsers"] == ["rc_qwen3_5", "rc_qwen3_5"]
    # MAX's own architecture of that model is untouched.
    assert got["max_arch_parsers"] == ["qwen3_5", "qwen3_5"]
    assert len(got["rc_names"]) >= 9


def test_replace_switch_reads_like_the_other_engines():
    from reasoning_core.integrations import max as rcm

    for value, on in (("", False), ("0", False), (" 0 ", False), ("1", True), ("yes", True)):
        os.environ["REASONING_CORE_REPLACE"] = value
        try:
            assert rcm.replace_requested() is on, value
        finally:
            del os.environ["REASONING_CORE_REPLACE"]


def _model_folder(d: Path) -> Path:
    """A local model folder MAX's CLI resolves (config, tokenizer, one tiny float32 tensor)."""
    import struct

    sys.path.insert(0, str(ROOT / "tests"))
    from vocab import build_tokenizer

    tok = build_tokenizer(("<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<tool_call>",
                           "</tool_call>"))
    tok.save(str(d / "tokenizer.json"))
    (d / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|im_end|>",
        "chat_template": "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
                         "{% endfor %}<|im_start|>assistant\n<think>\n"}))
    (d / "config.json").write_text(json.dumps({
        "architectures": ["Qwen3_5ForCausalLM"], "model_type": "qwen3_5_text", "vocab_size": tok.get_vocab_size(),
        "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 2,
        "num_key_value_heads": 1, "head_dim": 32, "max_position_embeddings": 4096, "rms_norm_eps": 1e-6,
        "torch_dtype": "float32", "eos_token_id": 1, "tie_word_embeddings": True}))
    hdr = json.dumps({"model.embed_tokens.weight": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}})
    hdr += " " * (-len(hdr) % 8)
    (d / "model.safetensors").write_bytes(struct.pack("<Q", len(hdr)) + hdr.encode() + bytes(16))
    return d


@pytest.mark.skipif(not os.environ.get("REASONING_CORE_FULL_ENGINE_TESTS"),
                    reason="a whole `max serve` start-up (about a minute): REASONING_CORE_FULL_ENGINE_TESTS=1")
def test_max_serve_command_line_gets_to_model_loading(tmp_path):
    import shutil

    exe = shutil.which("max", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("no `max` command in this environment")
    model = _model_folder(tmp_path)
    cmd = [exe, "serve", "--model-path", str(model), "--devices", "cpu", "--port", "8977",
           "--custom-architectures", max_architectures.PATH,
           "--reasoning-parser", "rc_qwen3_5", "--tool-parser", "rc_qwen3_5"]
    done = subprocess.run(cmd, env=_env(REASONING_CORE_REPLACE="1"), capture_output=True, text=True, timeout=500)
    log = done.stdout + done.stderr
    if "No module named 'pydantic_settings'" in log:
        pytest.skip("MAX's serving extras are not installed (see test_max_serving.py)")
    # Past the CLI, the custom module and task detection; it stops where the
    # model itself is built (this folder has no real weights).
    assert "Failed to import custom model" not in log, log[-3000:]
    assert "Auto-detected pipeline task: text_generation" in log, log[-3000:]
    assert done.returncode != 0
