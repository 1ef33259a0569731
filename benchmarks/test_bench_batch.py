"""ReasoningBatch.step at batch 64 and 1024, beside a per-request stream() loop
over the same requests (same group, so the ratio is visible in one table)."""
import pytest


@pytest.mark.parametrize("n", [64, 1024])
@pytest.mark.parametrize("how", ["step", "loop"])
def test_batch(run_workload, how, n):
    run_workload(f"batch_{how}_{n}")
