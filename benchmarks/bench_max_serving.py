"""Per-token cost through MAX 26.7's own serving path: no parser, MAX's, ours.

The harness of ``tests/integrations/test_max_serving.py`` (MAX's app, chat route,
``OpenAIChatResponseGenerator``, ``TokenGeneratorPipeline``, ``TextTokenizer``,
a scripted model worker): one streamed request of a long reasoning block and
answer, one token per step, timed end to end; µs per generated token, median
and min-max of the runs.  Run with the peers venv and MAX's serving extras::

    PYTHONPATH=.:/tmp/max-site HF_HUB_OFFLINE=1 python benchmarks/bench_max_serving.py [--repeat 5]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "integrations"), str(ROOT / "tests")]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--names", nargs="+", default=["qwen3_5", "glm45"])
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    import pytest  # noqa: F401 - the harness skips through pytest when MAX is absent

    import test_max_serving as t
    from sglang_max_helpers import CONTENT, REASONING

    import max_serving_helpers as h

    for name in args.names:
        folder, reasoning, tool, start, end = t.setup(name)
        apps = {"no parser": h.serve(folder, None, None), "MAX": h.serve(folder, reasoning, tool),
                "ours": h.serve(folder, reasoning and f"rc_{reasoning}", tool and f"rc_{tool}")}
        tok = apps["MAX"].tokenizer.delegate
        ids = tok.encode(start + REASONING * 20 + end + CONTENT * 10, add_special_tokens=False)
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True,
                "stream_options": {"include_usage": True}}
        if tool:
            body["tools"] = t.TOOLS
        print(f"{name}: {len(ids)} tokens, one per step, {args.repeat} runs (us/token, median (min-max))")
        for label, served in apps.items():
            h.chat(served, body, [[i] for i in ids])  # warm-up
            runs = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                h.chat(served, body, [[i] for i in ids])
                runs.append((time.perf_counter() - t0) / len(ids) * 1e6)
            print(f"  {label:10s} {statistics.median(runs):8.1f}  ({min(runs):.1f}-{max(runs):.1f})")


if __name__ == "__main__":
    main()
