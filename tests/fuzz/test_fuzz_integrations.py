"""pytest entry for the integration fuzz targets (``integration_targets.py``,
``tool_targets.py``): each engine's reasoning and tool-parser targets run in
one subprocess for ``REASONING_CORE_INTEGRATION_FUZZ_SECONDS`` seconds
(default 10), where its engine is installed (the peers venv; vllm-mlx for
``mlx_tools``)."""
from __future__ import annotations

import importlib.util
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from run import COMBINED_NAMES, run_target  # noqa: E402

SECONDS = float(os.environ.get("REASONING_CORE_INTEGRATION_FUZZ_SECONDS", "10"))
ENGINE_MODULE = {"vllm": "vllm", "sglang": "sglang", "max": "max.pipelines", "vllm_tools": "vllm",
                 "sglang_tools": "sglang", "max_tools": "max.pipelines", "mlx_tools": "vllm_mlx"}


def _installed(mod: str) -> bool:
    try:
        return importlib.util.find_spec(mod) is not None
    except ModuleNotFoundError:
        return False


@pytest.mark.parametrize("target", COMBINED_NAMES + ("mlx_tools",))
def test_fuzz_integration_target(target, tmp_path):
    pytest.importorskip("atheris", reason="atheris is not installed (pip install atheris) — fuzzing skipped")
    if not _installed(ENGINE_MODULE[target.split("+")[0]]):
        pytest.skip(f"{target} is not installed (see ../shared/peers)")
    code, execs, tail = run_target(target, max(1.0, SECONDS), str(tmp_path / "artifacts"), str(tmp_path / "corpus"))
    saved = sorted(os.listdir(tmp_path / "artifacts")) if (tmp_path / "artifacts").exists() else []
    assert code == 0, f"fuzz target {target!r} failed; saved inputs {saved} in {tmp_path}:\n{tail}"
    assert execs > 0, f"fuzz target {target!r} ran no input:\n{tail}"
