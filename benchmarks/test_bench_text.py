"""Text-level feed() and the decoded stream, beside tokenizers' bare DecodeStream."""
import pytest


@pytest.mark.parametrize("name", ["text_feed_1tok", "decoder_push", "decoder_push_bytes"])
def test_text(run_workload, name):
    run_workload(name)


def test_decode_stream_bare(benchmark, bench_ctx):
    # No engine involved: the floor decoder_push is compared with.
    from workloads import WORKLOADS

    w = WORKLOADS["decode_stream_bare"]
    benchmark.group = w.group_name
    benchmark.extra_info.update({"workload": w.name, "unit": w.unit, "units": w.units(bench_ctx)})
    benchmark(w.build(bench_ctx, "python"))
