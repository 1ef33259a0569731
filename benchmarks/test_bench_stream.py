"""Per-delta parsing of the ~2,500-token sample: MAX stream() and split()."""
import pytest


@pytest.mark.parametrize("name", ["stream_1tok", "split_1tok", "split_chunks_1_16", "split_1tok_bytes"])
def test_per_delta(run_workload, name):
    run_workload(name)
