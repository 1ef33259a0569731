"""Fixtures for the benchmark suite.

The workloads are the registry in ``workloads.py`` beside this file, which
``run.py`` prints as a table, so the two time exactly the same code.  Every
benchmark is parametrized by backend (ids ``c`` / ``py``) and grouped by
workload, so ``pytest benchmarks/ --benchmark-only`` prints the compiled and
pure engines side by side; ``--benchmark-disable`` runs each body once as a
smoke check.
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # whatever pytest's import mode

import workloads as W  # noqa: E402

COMPILED = W.compiled_available()  # False when REASONING_CORE_NO_EXTENSIONS is set

BACKENDS = [
    pytest.param("cython", id="c", marks=pytest.mark.skipif(not COMPILED, reason="compiled engine not built")),
    pytest.param("python", id="py"),
]


@pytest.fixture(scope="session")
def bench_ctx() -> W.Context:
    """The sample completion, its ids and the derived inputs, built once."""
    return W.Context()


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


@pytest.fixture
def run_workload(benchmark, bench_ctx, backend):
    """Time one named workload from ``workloads.WORKLOADS`` on this backend."""

    def run(name: str):
        w = W.WORKLOADS[name]
        try:
            body = w.build(bench_ctx, backend)
        except (ImportError, AttributeError) as exc:  # a module another part of the project ships
            pytest.skip(f"{name}: {exc}")
        units = w.units(bench_ctx)
        benchmark.group = w.group_name
        benchmark.extra_info.update({"workload": name, "backend": backend, "unit": w.unit, "units": units})
        if w.kind == "memory":
            # Bytes, not time: measured once and recorded beside the timing of the measurement.
            result = benchmark.pedantic(body, rounds=1, iterations=1)
            benchmark.extra_info["bytes_per_unit"] = result
            return result
        result = benchmark(body)
        stats = getattr(benchmark, "stats", None)
        if stats is not None and getattr(stats, "stats", None) is not None:
            benchmark.extra_info["median_ns_per_unit"] = stats.stats.median * 1e9 / units
        return result

    return run
