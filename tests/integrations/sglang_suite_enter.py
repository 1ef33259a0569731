"""pytest plugin (``-p sglang_suite_enter``) for running SGLang's own parser
unit tests here (``test_sglang_suite.py``): makes ``sglang`` importable on a
CPU-only install without its runtime, as ``sglang_max_helpers.enter_sglang_serving``
does, plus placeholders for what ``sglang.test.test_utils`` imports and never
runs in a parser test (the benchmark datasets).  Loaded in both runs (SGLang's
detectors and ours), so both see the same environment."""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sglang_max_helpers import enter_sglang_serving  # noqa: E402

_EXTRA = ("datasets",)


class _Empty(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Placeholder packages whose every attribute is a permissive class."""

    def find_spec(self, name, path=None, target=None):
        if any(name == r or name.startswith(r + ".") for r in _EXTRA):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        import types

        class _Mod(types.ModuleType):
            def __getattr__(self, attr):
                if attr.startswith("__"):
                    raise AttributeError(attr)
                cls = type(attr, (), {"__init__": lambda self, *a, **k: None})
                setattr(self, attr, cls)
                return cls

        mod = _Mod(spec.name)
        mod.__path__ = []
        return mod

    def exec_module(self, module):
        pass


with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    enter_sglang_serving()
    sys.meta_path.insert(0, _Empty())
