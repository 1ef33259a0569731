"""What a first call costs after the caches went cold, compiled or Python (issue 26).

    PYTHONPATH=$PWD /tmp/peers/venv/bin/python benchmarks/bench_cold_calls.py [--engines]

The 2 KB cells of ``bench_tools_engines.py`` time each stream after a
``gc.collect()``, whose walk over every object of the process leaves the CPU's
caches (and the page-table walks behind them) cold.  A call's structural
points (a call opening, a parameter closing) then each cost tens of µs where
they cost a few warm.  This asks whether compiling those points would help:
each function below is called once right after a collection (cold) and again
at once (warm), 15 times, and the medians are printed in µs:

* ``len(s)``, a builtin, and a two-line Python function: the floor of any call;
* the compiled scanner's ``xml_params`` reading a whole ``qwen3_coder`` call's
  parameters, and a Python loop of ``str.find`` doing about the same reading;
* each of them again after some unrelated Python work (the interpreter's own
  code and data warm again, ours still cold).

``--engines`` imports vLLM, SGLang and MAX first (the peers venv): a process
the size of a serving one, whose collection touches far more memory.

``--streams`` (the peers venv) asks the same of a whole stream: the 2 KB call of
the two cells that send only at structural points (SGLang ``qwen3_coder`` and
MAX ``qwen3_5``, four tokens per delta), timed after a collection and warm,
through the engine's parser, ours, the interface's floor, and a *minimal*
parser: one function written for this stream alone (no schema types, no
checks, no bookkeeping beyond what it sends), which sends the same arguments at
the same deltas.  It is not a parser to use; it shows what the harness's cold
start costs a parser with one function behind each structural point, against
ours, whose points each run 15-30 functions of the general grammar.
"""
from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

BUF = ("<parameter=path>\nsrc/report.py\n</parameter>\n<parameter=content>\ndef report(values):\n"
       "    return sum(values)\n</parameter>\n</function>\n</tool_call>")


def _python_params(buf: str) -> list:
    out = []
    i = buf.find("<parameter=")
    while i >= 0:
        j = buf.find(">", i)
        k = buf.find("</parameter>", j)
        out.append((buf[i + 11:j], buf[j + 1:k].strip()))
        i = buf.find("<parameter=", k)
    return out


def _tiny(a, b):
    return a + b


def _unrelated() -> list:
    d = {}
    for i in range(200):
        d[str(i)] = [i] * 3
    return sorted(d)


def cases():
    from reasoning_core.tools import _base, _json
    from reasoning_core.tools._xml_formats import Qwen3CoderToolParser as Q

    scan = _base._scan
    args = (BUF, 0, "<parameter=", ">", "</parameter>", Q._PARAM_SCAN, Q._KEY_END, Q._VALUE_END, str.strip)
    return [("len(s), a builtin", len, (BUF,)), ("a two-line Python function", _tiny, (1, 2)),
            (f"xml_params ({_json.SCAN_BACKEND} scanner)", scan.xml_params, args),
            ("the same reading in Python (str.find)", _python_params, (BUF,))]


def measure(repeats: int = 15, warm_interpreter: bool = False) -> list[tuple[str, float, float]]:
    clock = time.perf_counter
    rows = []
    for name, f, a in cases():
        cold, warm = [], []
        for _ in range(repeats):
            gc.collect()
            gc.disable()
            try:
                if warm_interpreter:
                    _unrelated()
                    _unrelated()
                t0 = clock()
                f(*a)
                t1 = clock()
                f(*a)
                t2 = clock()
            finally:
                gc.enable()
            cold.append((t1 - t0) * 1e6)
            warm.append((t2 - t1) * 1e6)
        rows.append((name, statistics.median(cold), statistics.median(warm)))
    return rows


# ---------------------------------------------------------------- --streams

class _MinimalCall:
    """The minimal parser's one function: the benchmark's ``qwen3_coder`` call
    (the happy path only), read the way the engines that send at structural
    points send it.  ``feed(delta)`` answers ``None`` (nothing to send),
    ``("content", text)``, ``("name", name)`` or ``("args", piece)``;
    ``brace_with_name``: the ``{`` goes out with the name (MAX) or with the
    first parameter (SGLang)."""

    def __init__(self, brace_with_name: bool) -> None:
        self.buf, self.state, self.kept, self.sent = "", 0, [], False
        self.first = "" if brace_with_name else "{"  # what comes before the first parameter

    def feed(self, delta: str):
        if self.state == 2 and ">" not in delta:
            self.kept.append(delta)
            return None
        b = self.buf + ("".join(self.kept) if self.kept else "") + delta
        self.kept = []
        if self.state == 0:
            i = b.find("<tool_call>")
            if i < 0:
                self.buf = ""
                return ("content", b)
            self.state, self.buf = 1, b[i + 11:]
            return ("content", b[:i])
        if self.state == 1:
            i = b.find("<function=")
            j = b.find(">", i) if i >= 0 else -1
            if j < 0:
                self.buf = b
                return None
            self.state, self.buf = 2, b[j + 1:]
            return ("name", b[i + 10:j])
        if self.state == 2:
            pieces, at = [], 0
            while True:
                k = b.find("</parameter>", at)
                if k < 0:
                    break
                i = b.find("<parameter=", at)
                j = b.find(">", i)
                v = b[j + 1:k]
                v = v[1:] if v.startswith("\n") else v
                v = v[:-1] if v.endswith("\n") else v
                pieces.append((", " if self.sent else self.first) + json.dumps(b[i + 11:j]) + ": " + json.dumps(v))
                self.sent, at = True, k + 12
            if b.find("</function>", at) >= 0:
                self.state, self.buf = 3, ""
                pieces.append("}")
            else:
                self.buf = b[at:]
            return ("args", "".join(pieces)) if pieces else None
        self.buf = ""
        return None


def _minimal_sglang(rcs):
    """A one-function SGLang detector (``_MinimalCall``), built with ours'
    cheap result builders."""
    from sglang.srt.function_call.base_format_detector import BaseFormatDetector

    empty, normal, args, item, result = (rcs._FC_EMPTY_SHAPE, rcs._fc_normal_result, rcs._fc_args_result,
                                         rcs._fc_item, rcs._fc_result)

    class Minimal(BaseFormatDetector):
        def __init__(self):
            super().__init__()
            self.feed = _MinimalCall(False).feed

        def has_tool_call(self, text):
            return "<tool_call>" in text

        def detect_and_parse(self, text, tools):  # pragma: no cover - streaming only
            raise NotImplementedError

        def structure_info(self):  # pragma: no cover - streaming only
            raise NotImplementedError

        def parse_streaming_increment(self, new_text, tools):
            out = self.feed(new_text)
            if out is None:
                return empty.build(None, None)
            kind, text = out
            if kind == "content":
                return normal(text)
            if kind == "name":
                return result("", [item(0, text, "")])
            return args(0, text)

    return Minimal


def _minimal_max(delta_t):
    """A one-function MAX parser (``_MinimalCall``): MAX's
    ``ParsedToolCallDelta`` at the points MAX sends."""

    class Minimal:
        def __init__(self):
            self.feed = _MinimalCall(True).feed

        def set_streaming_tool_schemas(self, schemas):
            pass

        def parse_delta(self, delta):
            out = self.feed(delta)
            if out is None:
                return []
            kind, text = out
            if kind == "content":
                return [delta_t(index=0, content=text)] if text else []
            if kind == "name":
                return [delta_t(index=0, id="call_0", name=text, arguments="{")]
            return [delta_t(index=0, arguments=text)]

        def finish(self):
            return []

    return Minimal


def stream_cells(repeats: int = 11) -> list[dict]:
    """One row per cell: µs per stream (median of ``repeats``, and min–max) after a
    collection ("cold") and right after another stream of the same parser
    ("warm"), for the engine's parser, ours, the floor and the minimal one;
    and the arguments each of ours and the minimal one streamed, parsed."""
    import bench_tools_engines as B

    B._quiet_imports()
    made = {(engine, fmt): B.RUNNERS[engine][0](fmt) for engine, fmt in (("sglang", "qwen3_coder"), ("max", "qwen3_5"))}
    # (the runners import each engine the way it imports here)
    from max.pipelines.modeling.types.tool_parsing import ParsedToolCallDelta
    from sglang.srt.entrypoints.openai.protocol import Function, Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    from reasoning_core.integrations import sglang as rcs

    FunctionCallParser.ToolCallParserEnum["bench_minimal"] = _minimal_sglang(rcs)
    minimal_max = _minimal_max(ParsedToolCallDelta)
    rows = []
    for (engine, fmt), (tok, _run, stream) in made.items():
        segs = [d for d, _ in B.token_deltas(tok, B.call_text(fmt, B.SIZES["2KB"], engine), 4)]
        tools = [Tool(type="function", function=Function(name=B.TOOL, description="d", parameters=B.SCHEMA))]

        def feeder(which, engine=engine, stream=stream, tools=tools):
            if which != "minimal":
                loop, pieces = stream(which)
                return loop, pieces
            if engine == "sglang":
                p = FunctionCallParser(tools, "bench_minimal")
                f = p.parse_stream_chunk

                def loop(seg):
                    for dt in seg:
                        f(dt)

                def pieces(seg):
                    return [c.parameters for dt in seg for c in f(dt)[1] if c.parameters]
                return loop, pieces
            p = minimal_max()
            f = p.parse_delta

            def loop(seg):
                for dt in seg:
                    f(dt)

            def pieces(seg):
                return [d.arguments for dt in seg for d in f(dt) if d.arguments]
            return loop, pieces

        row = {"engine": engine, "format": fmt, "deltas": len(segs)}
        for which in ("ours", "minimal"):
            row[f"{which}_args"] = json.loads("".join(feeder(which)[1](segs)))
        clock = time.perf_counter
        for which in ("engine", "ours", "floor", "minimal"):
            for mode in ("cold", "warm"):
                spent = []
                for _ in range(repeats):
                    if mode == "warm":
                        feeder(which)[0](segs)
                    loop = feeder(which)[0]
                    if mode == "cold":
                        gc.collect()
                    gc.disable()
                    try:
                        t0 = clock()
                        loop(segs)
                        spent.append((clock() - t0) * 1e6)
                    finally:
                        gc.enable()
                row[f"{which}_{mode}"] = statistics.median(spent)
                row[f"{which}_{mode}_range"] = (min(spent), max(spent))
        rows.append(row)
    return rows


def _figure(row: dict, which: str, mode: str) -> str:
    lo, hi = row[f"{which}_{mode}_range"]
    return f"{row[f'{which}_{mode}']:,.0f} ({lo:,.0f}–{hi:,.0f})"


def _above(row: dict, which: str, mode: str) -> str:
    floor = row[f"floor_{mode}"]
    mine = row[f"{which}_{mode}"] - floor
    if mine <= 0:
        return "at the floor"
    return f"{(row[f'engine_{mode}'] - floor) / mine:.1f}×"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="benchmarks/bench_cold_calls.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--engines", action="store_true", help="import vLLM, SGLang and MAX first (the peers venv)")
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--streams", action="store_true",
                    help="whole 2 KB streams, cold and warm, with a minimal parser beside ours (the peers venv)")
    args = ap.parse_args(argv)
    if args.streams:
        print("| interface, format | state | engine's parser µs | ours µs | floor µs | minimal µs "
              "| above floor, engine ÷ ours | engine ÷ minimal |")
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        for row in stream_cells(args.repeats):
            if row["ours_args"] != row["minimal_args"]:
                raise SystemExit(f"{row['engine']} {row['format']}: the minimal parser streamed other arguments")
            for mode in ("cold", "warm"):
                cells = " | ".join(_figure(row, which, mode) for which in ("engine", "ours", "floor", "minimal"))
                print(f"| {row['engine']} {row['format']} | {mode} | {cells} "
                      f"| {_above(row, 'ours', mode)} | {_above(row, 'minimal', mode)} |")
        return 0
    if args.engines:
        import bench_tools_engines as B

        B._quiet_imports()
        for make in (B.vllm_runner, B.sglang_runner, B.max_runner):
            make("qwen3_coder" if make is not B.max_runner else "qwen3_5")
    objects = len(gc.get_objects())
    print(f"{objects:,} objects tracked by the collector")
    print("| call | after a collection µs | again at once µs | after a collection and other Python work µs |")
    print("|---|---:|---:|---:|")
    plain = measure(args.repeats)
    other = measure(args.repeats, warm_interpreter=True)
    for (name, cold, warm), (_, cold2, _w) in zip(plain, other):
        print(f"| {name} | {cold:.1f} | {warm:.1f} | {cold2:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
