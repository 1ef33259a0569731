"""pytest entry for the fuzz harness (see ``run.py``): each target runs in a
subprocess for its share of ``REASONING_CORE_FUZZ_SECONDS`` (default 10 s in all)."""
from __future__ import annotations

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from run import NAMES, run_target  # noqa: E402

SECONDS = float(os.environ.get("REASONING_CORE_FUZZ_SECONDS", "10"))


@pytest.mark.parametrize("target", NAMES)
def test_fuzz_target(target, tmp_path):
    pytest.importorskip("atheris", reason="atheris is not installed (pip install atheris) — fuzzing skipped")
    code, execs, tail = run_target(target, max(1.0, SECONDS / len(NAMES)), str(tmp_path / "artifacts"),
                                   str(tmp_path / "corpus"))
    saved = sorted(os.listdir(tmp_path / "artifacts")) if (tmp_path / "artifacts").exists() else []
    assert code == 0, f"fuzz target {target!r} failed; saved inputs {saved} in {tmp_path}:\n{tail}"
    assert execs > 0, f"fuzz target {target!r} ran no input:\n{tail}"
