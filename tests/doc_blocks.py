"""Fixtures for the documentation's code blocks (pytest-markdown-docs).

CI runs every ``python`` block of README.md and docs/ as a test
(``python -m pytest -p tests.doc_blocks --markdown-docs README.md docs``).
A block that needs a serving engine names a fixture in its fence,
```` ```python fixture:needs_vllm ````, and is skipped, with the reason, where
that engine is not installed.
"""
from __future__ import annotations

import pytest


def _engine(module: str, what: str):
    return pytest.importorskip(module, reason=f"this block needs {what} (see docs/engines/running.md)",
                               exc_type=ImportError)


@pytest.fixture
def needs_vllm():
    return _engine("vllm", "vLLM")


@pytest.fixture
def needs_sglang():
    # The integration enters SGLang's package without its runtime where that is needed.
    return _engine("reasoning_core.integrations.sglang", "SGLang")


@pytest.fixture
def sglang_files():
    import importlib.util

    if importlib.util.find_spec("sglang") is None:
        pytest.skip("this block needs SGLang installed (see docs/engines/running.md)")


@pytest.fixture
def needs_max():
    return _engine("max.pipelines.lib.reasoning", "Modular MAX")


@pytest.fixture
def needs_xgrammar():
    return _engine("xgrammar", "xgrammar (pip install 'reasoning-spans[xgrammar]')")


@pytest.fixture
def needs_torch():
    _engine("torch", "PyTorch (pip install 'reasoning-spans[transformers]')")
    return _engine("transformers", "transformers (pip install 'reasoning-spans[transformers]')")
