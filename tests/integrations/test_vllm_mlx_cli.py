"""The one command: ``python -m reasoning_core.integrations.vllm_mlx serve ...``
registers our parsers and runs vllm-mlx's own CLI; checked here up to the
point where vllm-mlx starts its engine (which needs MLX, absent on Linux)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("vllm_mlx.reasoning")
M = pytest.importorskip("reasoning_core.integrations.vllm_mlx")

import vllm_mlx.reasoning as R  # noqa: E402
from vllm_mlx.tool_parsers import ToolParserManager  # noqa: E402


@pytest.fixture
def registries():
    before = dict(R._REASONING_PARSERS)
    tools_before = dict(ToolParserManager.tool_parsers)
    yield
    R._REASONING_PARSERS.clear()
    R._REASONING_PARSERS.update(before)
    ToolParserManager.tool_parsers.clear()
    ToolParserManager.tool_parsers.update(tools_before)


def _run_main(monkeypatch, argv, env_replace=None):
    import vllm_mlx.cli as cli

    seen = {}

    def serve_command(args):  # the engine start: where this test stops
        seen["args"] = args
        seen["reasoning"] = R.get_parser(args.reasoning_parser) if args.reasoning_parser else None
        seen["tool"] = ToolParserManager.get_tool_parser(args.tool_call_parser) if args.tool_call_parser else None

    monkeypatch.setattr(cli, "serve_command", serve_command)
    if env_replace is None:
        monkeypatch.delenv("REASONING_CORE_REPLACE", raising=False)
    else:
        monkeypatch.setenv("REASONING_CORE_REPLACE", env_replace)
    monkeypatch.setattr(sys, "argv", ["vllm-mlx"])
    M.main(argv)
    return seen


def test_rc_names_parse_and_resolve(monkeypatch, registries):
    seen = _run_main(monkeypatch, ["serve", "some/model", "--port", "8123", "--reasoning-parser", "rc_qwen3",
                                   "--enable-auto-tool-choice", "--tool-call-parser", "rc_kimi_k2"])
    args = seen["args"]
    assert args.model == "some/model" and args.port == 8123
    assert args.reasoning_parser == "rc_qwen3" and args.tool_call_parser == "rc_kimi_k2"
    assert seen["reasoning"] is M.REASONING_PARSERS["qwen3"]
    assert seen["tool"] is M.TOOL_PARSERS["kimi_k2"]
    # vllm-mlx's own names still resolve to its own classes
    assert R.get_parser("qwen3") is M.ORIGINAL_REASONING_PARSERS["qwen3"]


def test_every_rc_name_is_a_cli_choice(monkeypatch, registries):
    for name in M.REASONING_PARSERS:
        seen = _run_main(monkeypatch, ["serve", "m", "--reasoning-parser", f"rc_{name}"])
        assert seen["reasoning"] is M.REASONING_PARSERS[name]
    for name in M.TOOL_PARSERS:
        seen = _run_main(monkeypatch, ["serve", "m", "--enable-auto-tool-choice", "--tool-call-parser", f"rc_{name}"])
        assert seen["tool"] is M.TOOL_PARSERS[name]


def test_unknown_name_rejected_by_vllm_mlx_cli(monkeypatch, registries, capsys):
    with pytest.raises(SystemExit) as e:
        _run_main(monkeypatch, ["serve", "m", "--reasoning-parser", "rc_nonexistent"])
    assert e.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_replace_switch(monkeypatch, registries):
    seen = _run_main(monkeypatch, ["serve", "m", "--reasoning-parser", "deepseek_r1"], env_replace="1")
    assert seen["reasoning"] is M.REASONING_PARSERS["deepseek_r1"]
    assert R.get_parser("rc_deepseek_r1") is M.REASONING_PARSERS["deepseek_r1"]


def test_module_command_gets_past_argument_parsing(tmp_path):
    # The real process: argument parsing succeeds with our names; what stops
    # it here is vllm-mlx's engine import (MLX), not the command line.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    r = subprocess.run([sys.executable, "-m", "reasoning_core.integrations.vllm_mlx", "serve", str(tmp_path / "model"),
                        "--reasoning-parser", "rc_deepseek_r1", "--enable-auto-tool-choice",
                        "--tool-call-parser", "rc_glm47"], capture_output=True, text=True, timeout=120, env=env,
                       cwd=str(tmp_path))
    assert "invalid choice" not in r.stderr and r.returncode != 2, r.stderr[-2000:]
    try:
        import mlx.core  # noqa: F401
    except ImportError:
        assert "mlx" in r.stderr, r.stderr[-2000:]
    r = subprocess.run([sys.executable, "-m", "reasoning_core.integrations.vllm_mlx", "serve", "m",
                        "--reasoning-parser", "rc_nope"], capture_output=True, text=True, timeout=120, env=env,
                       cwd=str(tmp_path))
    assert r.returncode == 2 and "invalid choice" in r.stderr
