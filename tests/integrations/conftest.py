"""Helpers for the serving-engine integration tests (vLLM's real classes).

These tests run where the engines are installed (the peers venv,
the commands in ``docs/engines/running.md``); elsewhere every module here skips.
"""
from __future__ import annotations

import functools
import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/vocab.py

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
# vLLM picks its platform once, at its first import (below): a CPU-only machine must
# say so, or its serving code cannot infer a device (and wants pinned memory).
os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")


def _preload() -> None:
    """Import vLLM's heavy modules once with warnings silenced (torch and vLLM
    warn at import; the core's pytest config turns warnings into errors)."""
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import vllm.entrypoints.generate.base.protocol  # noqa: F401
        import vllm.entrypoints.openai.chat_completion.protocol  # noqa: F401
        import vllm.parser.parser_manager  # noqa: F401
        import vllm.reasoning  # noqa: F401
        import vllm.tool_parsers  # noqa: F401


_preload()


def pytest_collection_modifyitems(config, items):
    # vLLM and its dependencies warn at import and at run time; the core's
    # "warnings are errors" rule is for our own code.
    for item in items:
        if "integrations" in str(item.fspath):
            item.add_marker(pytest.mark.filterwarnings("ignore"))
