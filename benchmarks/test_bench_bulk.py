"""One split() over 1M tokens, as a Python list and as an int32 NumPy array."""
import pytest


@pytest.mark.parametrize("name", ["bulk_split_list_1M", "bulk_split_numpy_1M"])
def test_bulk_split(run_workload, name):
    run_workload(name)
