"""The ``sglang.srt.plugins`` entry point: SGLang's own argument parser accepts
``rc_<name>`` once SGLang has loaded its plugins, and ``REASONING_CORE_REPLACE``
puts our detectors under SGLang's own names.

SGLang's argument parser and plugin loader run in a subprocess (importing
``sglang.srt.server_args`` on a CPU-only install needs placeholder modules
that must not leak into the pytest process).  Where the project is installed
(CI's peers stage) the entry point is found by SGLang's own ``load_plugins()``;
elsewhere the test checks the declared entry point and calls it.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sglang_max_helpers import import_sglang_parsers, package_root as _package_root

import_sglang_parsers()  # skips without SGLang

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent

_WORKER = textwrap.dedent(r"""
    import argparse, json, sys
    sys.path.insert(0, {here!r})
    from sglang_max_helpers import enter_sglang_serving
    enter_sglang_serving()
    from importlib.metadata import entry_points
    eps = [ep for ep in entry_points(group="sglang.srt.plugins") if ep.name == "reasoning_core"]
    if eps:
        from sglang.srt.plugins import load_plugins
        load_plugins()          # SGLang's own loader, as `sglang serve` runs it
    else:
        from reasoning_core.integrations.sglang_plugin import load
        load()
    from sglang.srt.server_args import ServerArgs
    from sglang.srt.parser.reasoning_parser import ReasoningParser
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    def snapshot():
        parser = argparse.ArgumentParser(exit_on_error=False)
        ServerArgs.add_cli_args(parser)
        out = {{"installed": bool(eps)}}
        for r, t in {pairs!r}:
            try:
                ns = parser.parse_args(["--model-path", "m", "--reasoning-parser", r, "--tool-call-parser", t])
                out[r + "|" + t] = [ns.reasoning_parser, ns.tool_call_parser]
            except (argparse.ArgumentError, SystemExit) as exc:
                out[r + "|" + t] = str(exc)
        out["classes"] = {{
            n: ReasoningParser.DetectorMap[n].__module__ for n in ("qwen3", "rc_qwen3", "kimi_k2", "rc_kimi_k2")
        }}
        out["tool_classes"] = {{
            n: FunctionCallParser.ToolCallParserEnum[n].__module__ for n in ("qwen25", "rc_hermes", "kimi_k2")
        }}
        return out

    result = {{"plain": snapshot()}}
    # The switch, read when the plugin runs ("0" is off, as for every flag of ours).
    import os
    from reasoning_core.integrations.sglang_plugin import load
    os.environ["REASONING_CORE_REPLACE"] = "0"
    load()
    result["zero"] = snapshot()
    os.environ["REASONING_CORE_REPLACE"] = "1"
    load()
    result["replaced"] = snapshot()
    print("RESULT" + json.dumps(result))
""")

PAIRS = [("rc_qwen3", "rc_hermes"), ("rc_deepseek-r1", "rc_deepseekv3"), ("rc_kimi_k2", "rc_kimi_k2"),
         ("rc_gpt-oss", "rc_qwen3_coder"), ("qwen3", "qwen25"), ("rc_nonexistent", "rc_hermes")]


@pytest.fixture(scope="module")
def result() -> dict:
    env = dict(os.environ)
    env.pop("REASONING_CORE_REPLACE", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_package_root(), env.get("PYTHONPATH", "")) if p)
    env.setdefault("HF_HUB_OFFLINE", "1")
    proc = subprocess.run([sys.executable, "-c", _WORKER.format(here=str(HERE), pairs=PAIRS)],
                          capture_output=True, text=True, env=env, timeout=300, cwd=str(ROOT))
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")]
    assert line, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(line[-1][len("RESULT"):])


@pytest.fixture(scope="module")
def plain(result):
    return result["plain"]


@pytest.fixture(scope="module")
def replaced(result):
    return result["replaced"]


def test_entry_point_declared():
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    target = data["project"]["entry-points"]["sglang.srt.plugins"]["reasoning_core"]
    module, func = target.split(":")
    import importlib

    assert callable(getattr(importlib.import_module(module), func))


def test_argument_parser_accepts_rc_names(plain):
    for r, t in PAIRS[:4]:
        assert plain[f"{r}|{t}"] == [r, t]
    assert plain["qwen3|qwen25"] == ["qwen3", "qwen25"]
    # SGLang's choices are still enforced: a name nobody registered is refused.
    assert isinstance(plain["rc_nonexistent|rc_hermes"], str)
    assert "invalid choice" in plain["rc_nonexistent|rc_hermes"]


def test_plain_keeps_sglang_names(plain):
    assert plain["classes"]["rc_qwen3"] == "reasoning_core.integrations.sglang"
    assert plain["classes"]["qwen3"].startswith("sglang.")
    assert plain["classes"]["kimi_k2"].startswith("sglang.")
    assert plain["tool_classes"]["qwen25"].startswith("sglang.")
    assert plain["tool_classes"]["rc_hermes"] == "reasoning_core.integrations.sglang"


def test_replace_switch_takes_sglang_names(replaced):
    assert replaced["rc_qwen3|rc_hermes"] == ["rc_qwen3", "rc_hermes"]
    for n in ("qwen3", "rc_qwen3", "kimi_k2", "rc_kimi_k2"):
        assert replaced["classes"][n] == "reasoning_core.integrations.sglang", n
    for n in ("qwen25", "rc_hermes", "kimi_k2"):
        assert replaced["tool_classes"][n] == "reasoning_core.integrations.sglang", n


def test_replace_switch_zero_is_off(result):
    assert result["zero"]["classes"]["qwen3"].startswith("sglang.")
    assert result["zero"]["tool_classes"]["qwen25"].startswith("sglang.")


def test_sglang_loader_finds_entry_point_when_installed(plain):
    from importlib.metadata import entry_points

    installed = any(ep.name == "reasoning_core" for ep in entry_points(group="sglang.srt.plugins"))
    if not installed:
        pytest.skip("the project is not installed here (CI's peers stage installs it)")
    assert plain["installed"] is True  # SGLang's own load_plugins() ran our entry point
