"""pytest plugin for ``test_vllm_suite.py``: vLLM's own parser tests on our classes.

Loaded with ``-p vllm_suite_plugin`` in the run over vLLM's sdist tests (never
collected by our suite: its name does not start with ``test_``).  Imported
before any test module, it puts our classes under vLLM's names in both places
vLLM's tests find parsers:

* the registries (``register(replace=True)``: ``ReasoningParserManager`` /
  ``ToolParserManager.get_*_parser(name)``);
* the modules that define vLLM's classes, for tests that import a class
  directly (``from vllm.reasoning.kimi_k3_reasoning_parser import
  KimiK3ReasoningParser``): each registered vLLM class is replaced by ours of
  the same name.

vLLM's own classes are looked up first (our classes delegate a few
once-per-request questions to them, e.g. ``adjust_request``).

With ``RC_SUITE_SIDE=theirs`` the plugin leaves the parsers alone (the
baseline run loads it too, so both runs share the same setup: with
``HF_HUB_OFFLINE=1`` vLLM's hub lookups fail at once instead of retrying).  In both runs it
records each test's outcome (passed: setup, call and teardown passed) and
whether it reached one of *our* classes (constructed or a method called),
written as JSON to ``$RC_SUITE_RESULTS``.
"""
from __future__ import annotations

import functools
import importlib
import json
import os
import pkgutil
import types

import pytest

_SIDE = os.environ.get("RC_SUITE_SIDE", "ours")
_touched = False
_results: dict[str, dict] = {}
_ids: dict[type, str] = {}


def _mark(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        global _touched
        _touched = True
        return fn(*args, **kwargs)

    return wrapper


def _instrument(cls: type) -> None:
    for name, value in list(vars(cls).items()):
        if (isinstance(value, types.FunctionType)  # not static/class methods, properties, classes
                and (name == "__init__" or not name.startswith("__"))):
            setattr(cls, name, _mark(value))


def _swap() -> None:
    import reasoning_core.integrations.vllm as M

    # vLLM's own class of every name, resolved before its modules are patched.
    own: dict[type, type] = {}
    for name, cls in M.REASONING_PARSERS.items():
        theirs = M._vllm_own_class("reasoning", name)
        if theirs is not None:
            own.setdefault(theirs, cls)
    for name, cls in M.TOOL_PARSERS.items():
        theirs = M._vllm_own_class("tool", name)
        if theirs is not None:
            own.setdefault(theirs, cls)
    M.register(replace=True)
    import vllm.reasoning as R
    import vllm.tool_parsers as T

    for pkg in (R, T):
        for info in pkgutil.iter_modules(pkg.__path__):
            try:
                mod = importlib.import_module(f"{pkg.__name__}.{info.name}")
            except Exception:  # a module that needs what is not installed here
                continue
            for k, v in list(vars(mod).items()):
                if isinstance(v, type) and v in own:
                    setattr(mod, k, own[v])
    # Test ids built from a class's name keep vLLM's (the same test on both sides).
    for theirs, ours in own.items():
        _ids.setdefault(ours, theirs.__name__)
    _instrument(M.VllmReasoningParser)
    _instrument(M.VllmToolParser)


def _no_retry_offline() -> None:
    """Both sides: with the hub offline, vLLM's config lookups fail the same
    way on every try; its retry waits 2 s per failing test (hundreds here)."""
    if os.environ.get("HF_HUB_OFFLINE") != "1":
        return
    from vllm.transformers_utils import config, repo_utils

    orig = repo_utils.with_retry

    def once(func, log_msg, max_retries=2, retry_delay=2, fatal_errors=()):
        return orig(func, log_msg, 1, retry_delay, fatal_errors)

    repo_utils.with_retry = config.with_retry = once


_no_retry_offline()
if _SIDE == "ours":
    _swap()


def pytest_make_parametrize_id(config, val, argname):
    if isinstance(val, type):
        return _ids.get(val)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    global _touched
    _touched = False


def pytest_runtest_logreport(report):
    entry = _results.setdefault(report.nodeid, {"ok": True, "ran": False, "touched": False, "why": ""})
    if report.when == "call":
        entry["ran"] = True
    if report.failed or report.skipped:
        if entry["ok"]:
            entry["why"] = f"{report.when}: " + (report.longreprtext.strip().splitlines() or [""])[-1][:300]
        entry["ok"] = False
    if report.when == "teardown":
        entry["touched"] = _touched
        entry["ok"] = entry["ok"] and entry["ran"]


def pytest_sessionfinish(session):
    path = os.environ.get("RC_SUITE_RESULTS")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(_results, f)
