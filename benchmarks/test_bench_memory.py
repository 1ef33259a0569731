"""tracemalloc bytes per idle parser and per ReasoningBatch slot."""
import pytest


@pytest.mark.parametrize("name", ["memory_idle_parser", "memory_batch_slot"])
def test_memory(run_workload, name):
    assert run_workload(name) >= 0
