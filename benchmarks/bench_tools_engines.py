"""Tool-call parsing side by side, through each serving engine's own interface (issue 26).

    PYTHONPATH=$PWD /tmp/peers/venv/bin/python benchmarks/bench_tools_engines.py --quick
    PYTHONPATH=$PWD /tmp/peers/venv/bin/python benchmarks/bench_tools_engines.py \\
        --markdown --json tools_engines.json
    python benchmarks/bench_tools_engines.py --from tools_engines.json --chart tools_engines.png

(with the peers venv's environment variables: ``../shared/peers/README.md``.)

One streamed call whose ``content`` argument is code (2 KB, 32 KB or 1 MB),
tokenized with a vocabulary that has the format's markers as special tokens and
fed 1 or 4 tokens per delta, through:

* **vLLM** ``extract_tool_calls_streaming(previous_text, current_text, delta_text,
  previous_token_ids, current_token_ids, delta_token_ids, request)``: vLLM's
  parser of the name, ours (``reasoning_core.integrations.vllm``), and the
  floor (a parser that only wraps the delta as call 0's arguments in vLLM's
  ``DeltaMessage`` / ``DeltaToolCall`` / ``DeltaFunctionCall``);
* **SGLang** ``FunctionCallParser.parse_stream_chunk(text)``: SGLang's detector,
  ours (``reasoning_core.integrations.sglang``, registered as ``rc_<name>``),
  and a floor detector returning the delta as call 0's ``ToolCallItem``;
* **MAX** ``ToolParser.parse_delta(text)``: MAX's parser, ours
  (``reasoning_core.integrations.max``), and a floor returning MAX's
  ``ParsedToolCallDelta(index=0, arguments=delta)``.

Only the parser call is timed, in process CPU time (a shared machine's
preemptions stay out of the clock; the clock's own cost, the same for the
three parsers, cancels in "above the floor"); the harness's ``previous_text +
delta`` and id lists, which vLLM's serving loop builds too, are outside it, and
the garbage collector is off during a stream (as ``timeit`` does). Figures:
µs per delta, median over repeats with min–max, and the work above the floor,
engine ÷ ours. A parser that needs more than ``--cap`` seconds of parser
time for one stream is cut there: its figure (marked ``cut at N %``) is the mean
over the part streamed, a lower bound for the parsers whose per-delta cost grows
with the stream. Ours must also stream the exact arguments (checked per run).

``--content`` streams about 2 KB of text with no call in it instead, against
each interface's content floor (the delta as the engine's content result).

``--long`` (1 MB, one token per delta, ours against the bare parser) times
each quarter of the stream whole instead: a clock read per delta costs about
0.2 µs here, which would sit in both figures and shrink their ratio. For
SGLang it also times our detector's ``parse_streaming_increment`` alone,
without ``FunctionCallParser``'s per-chunk work around it.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "integrations"))

import workloads as W  # noqa: E402

SIZES = {"2KB": 2_000, "32KB": 32_000, "1MB": 1_000_000}
LONG = 500_000  # characters: a stream this long gives ours and the vLLM floors no previous/current text
TOOL = "write_file"
PROPS = {"path": {"type": "string"}, "content": {"type": "string"}}
SCHEMA = {"type": "object", "properties": PROPS}

# our format -> (vLLM name, SGLang name, vocabulary: a FAMILY_SPECIALS key or None for DeepSeek's)
ENGINE_FORMATS = {
    "hermes": ("hermes", "qwen25", "qwen3"),
    "qwen3_coder": ("qwen3_coder", "qwen3_coder", "qwen3"),
    "deepseek_v3": ("deepseek_v3", "deepseekv3", None),
    "deepseek_v31": ("deepseek_v31", "deepseekv31", None),
    "kimi_k2": ("kimi_k2", "kimi_k2", "kimi_k2"),
    "glm45": ("glm45", "glm45", "glm45"),
    "minimax_m2": ("minimax_m2", "minimax-m2", "minimax_m2"),
    "mistral": ("mistral", "mistral", "mistral"),
    "llama3_json": ("llama3_json", "llama3", ("<|python_tag|>", "<|eom_id|>")),
}
# MAX's names (each is also our name) -> vocabulary
MAX_FORMATS = {"deepseekv4": None, "gemma4": ("<|tool_call>", "<tool_call|>", '<|"|>'), "kimik2_5": "kimi_k2",
               "qwen3_5": "qwen3", "glm45": "glm45"}


def _quiet_imports():
    warnings.simplefilter("ignore")


# ---------------------------------------------------------------- inputs

def call_text(fmt: str, nbytes: int, engine: str | None = None) -> str:
    """The call of ``fmt`` grown to about ``nbytes``, in the form the engine's
    own parser reads as a call: a Llama 3 JSON call is the whole message (vLLM's
    and SGLang's parsers take text that starts with a sentence for content), and
    SGLang's ``mistral`` reads ``[TOOL_CALLS] [...]`` with its space (without it,
    SGLang's detector sends nothing at all). Ours reads every form."""
    base = W.tools_base_text(fmt)
    if fmt == "llama3_json" and engine in ("vllm", "sglang"):
        base = base[base.index("{"):]
    elif fmt == "mistral" and engine == "sglang":
        base = base.replace("[TOOL_CALLS][", "[TOOL_CALLS] [", 1)
    return W.tools_grown(base, max(20, nbytes // 62))


def _tokenizer(vocab):
    from vllm_helpers import deepseek_vllm_tokenizer, vllm_tokenizer
    from vocab import FAMILY_SPECIALS

    if vocab is None:
        return deepseek_vllm_tokenizer()
    return vllm_tokenizer(vocab if isinstance(vocab, tuple) else FAMILY_SPECIALS[vocab])


def token_deltas(tok, text: str, k: int):
    """[(delta_text, delta_ids)], ``k`` tokens per delta, cut at the tokens' text
    offsets (a delta that would be empty joins the next)."""
    enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
    ids, offs = enc["input_ids"], enc["offset_mapping"]
    out, start, pend = [], 0, []
    for i in range(0, len(ids), k):
        pend.extend(ids[i:i + k])
        j = i + k
        end = len(text) if j >= len(ids) else offs[j][0]
        if end > start:
            out.append((text[start:end], pend))
            start, pend = end, []
    if start < len(text) or pend:
        out.append((text[start:], pend))
    return out


# ---------------------------------------------------------------- vLLM

def vllm_runner(fmt: str):
    _quiet_imports()
    from vllm.entrypoints.generate.base.protocol import DeltaFunctionCall, DeltaToolCall
    from vllm.tool_parsers import ToolParserManager
    from vllm_helpers import chat_request

    from reasoning_core.integrations import vllm as rcv

    DeltaMessage = rcv.DeltaMessage
    vname, _, vocab = ENGINE_FORMATS[fmt]
    tok = _tokenizer(vocab)
    tools = [{"type": "function", "function": {"name": TOOL, "parameters": SCHEMA}}]
    req = chat_request(tools=tools)

    class Floor:
        """Wraps the delta as call 0's arguments, built the cheapest way we know
        (the builder ours uses: no pydantic validation, checked against it)."""

        def __init__(self, tokenizer, tools=None):
            pass

        def extract_tool_calls_streaming(self, pt, ct, dt, pi, ci, di, request, _m=rcv._args_message):
            return _m(0, dt)

    class ValidatedFloor(Floor):
        """The same with vLLM's validated constructors, as vLLM's own parsers build them."""

        def extract_tool_calls_streaming(self, pt, ct, dt, pi, ci, di, request):
            return DeltaMessage(tool_calls=[DeltaToolCall(index=0, function=DeltaFunctionCall(arguments=dt))])

    class ContentFloor(Floor):
        """Answers the delta as content, built the cheapest way we know (--content)."""

        def extract_tool_calls_streaming(self, pt, ct, dt, pi, ci, di, request, _m=rcv._content_message):
            return _m(dt)

    makers = {"engine": lambda: ToolParserManager.get_tool_parser(vname)(tok, None),
              "ours": lambda: rcv.TOOL_PARSERS[vname](tok, None),
              "floor": lambda: Floor(tok), "floor_validated": lambda: ValidatedFloor(tok),
              "floor_content": lambda: ContentFloor(tok)}

    def run(which, deltas, cap):
        p = makers[which]()
        f = p.extract_tool_calls_streaming
        state = {"text": "", "prev_ids": [], "ids": [], "args": []}
        args = state["args"]
        # previous_text + delta per delta, as vLLM's serving loop builds it: quadratic
        # in the harness, outside the clock. A long stream gives ours and the floors
        # (which never read the two texts) empty ones instead.
        texts = which == "engine" or sum(len(d[0]) for d in deltas) < LONG

        def timed(i, dt, di):
            prev = state["text"]
            cur = prev + dt if texts else ""
            state["text"] = cur
            prev_ids, ids = state["prev_ids"], state["ids"]
            if i:
                prev_ids.extend(deltas[i - 1][1])
            ids.extend(di)
            t0 = time.process_time()
            m = f(prev, cur, dt, prev_ids, ids, di, req)
            state["spent"] += time.process_time() - t0
            if m is not None and which == "ours":
                for tc in m.tool_calls or ():
                    if tc.function is not None and tc.function.arguments:
                        args.append(tc.function.arguments)
            return m

        n = len(deltas)
        state["spent"] = 0.0
        for i, (dt, di) in enumerate(deltas):
            timed(i, dt, di)
            if state["spent"] > cap:
                return state["spent"] / (i + 1), (i + 1) / n, "".join(args)
        if which == "ours" and hasattr(p, "finish_streaming"):
            m = p.finish_streaming()
            for tc in (m.tool_calls if m is not None else None) or ():
                if tc.function is not None and tc.function.arguments:
                    args.append(tc.function.arguments)
        return state["spent"] / n, 1.0, "".join(args)

    def stream(which):
        # --long: the texts and id lists stay empty (neither ours nor the floor
        # reads them); the loop is the one the clock sees, the same per delta.
        p = makers[which]()
        f = p.extract_tool_calls_streaming

        def loop(seg, _e="", _ids=[], _req=req):  # noqa: B006 - one shared empty list on purpose
            for dt in seg:
                f(_e, _e, dt, _ids, _ids, _ids, _req)

        def pieces(seg):
            out = []
            for dt in seg:
                m = f("", "", dt, [], [], [], req)
                if m is not None:
                    out.extend(tc.function.arguments for tc in m.tool_calls or ()
                               if tc.function is not None and tc.function.arguments)
            if hasattr(p, "finish_streaming"):
                m = p.finish_streaming()
                out.extend(tc.function.arguments for tc in (m.tool_calls if m is not None else None) or ()
                           if tc.function is not None and tc.function.arguments)
            return out

        return loop, pieces

    return tok, run, stream


# ---------------------------------------------------------------- SGLang

def sglang_runner(fmt: str):
    _quiet_imports()
    from sglang_max_helpers import import_sglang_parsers

    _, rcs = import_sglang_parsers()
    rcs.register()
    from sglang.srt.entrypoints.openai.protocol import Function, Tool
    from sglang.srt.function_call.base_format_detector import BaseFormatDetector
    from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    class FloorDetector(BaseFormatDetector):
        def has_tool_call(self, text):
            return True

        def detect_and_parse(self, text, tools):
            return StreamingParseResult(normal_text="", calls=[])

        def parse_streaming_increment(self, new_text, tools, _r=rcs._fc_args_result):
            # built the cheapest way we know: the builder ours uses (no validation, checked against it)
            return _r(0, new_text)

        def structure_info(self):  # pragma: no cover - never asked here
            raise NotImplementedError

    class ValidatedFloorDetector(FloorDetector):
        def parse_streaming_increment(self, new_text, tools):
            return StreamingParseResult(normal_text="", calls=[ToolCallItem(tool_index=0, name=None,
                                                                           parameters=new_text)])

    class ContentFloorDetector(FloorDetector):
        def parse_streaming_increment(self, new_text, tools, _r=rcs._fc_normal_result):
            # the delta as text, built the cheapest way we know (--content)
            return _r(new_text)

    FunctionCallParser.ToolCallParserEnum["bench_floor"] = FloorDetector
    FunctionCallParser.ToolCallParserEnum["bench_floor_validated"] = ValidatedFloorDetector
    FunctionCallParser.ToolCallParserEnum["bench_floor_content"] = ContentFloorDetector
    _, sname, vocab = ENGINE_FORMATS[fmt]
    tok = _tokenizer(vocab)
    tools = [Tool(type="function", function=Function(name=TOOL, description="d", parameters=SCHEMA))]
    names = {"engine": sname, "ours": f"rc_{sname}", "floor": "bench_floor", "floor_validated": "bench_floor_validated",
             "floor_content": "bench_floor_content"}

    def run(which, deltas, cap):
        p = FunctionCallParser(tools, names[which])
        f = p.parse_stream_chunk
        clock = time.process_time
        spent, args = 0.0, []
        n = len(deltas)
        for i, (dt, _) in enumerate(deltas):
            t0 = clock()
            _, calls = f(dt)
            spent += clock() - t0
            if which == "ours":
                args.extend(c.parameters for c in calls if c.parameters)
            if spent > cap:
                return spent / (i + 1), (i + 1) / n, "".join(args)
        if which == "ours":
            args.extend(c.parameters for c in p.parse_stream_end()[1] if c.parameters)
        return spent / n, 1.0, "".join(args)

    def stream(which):
        # "ours_direct" / "floor_direct": the detector's own parse_streaming_increment,
        # without FunctionCallParser's per-chunk work around it
        direct = which.endswith("_direct")
        p = FunctionCallParser(tools, names[which[:-len("_direct")] if direct else which])
        f = p.parse_stream_chunk
        g, ptools = p.detector.parse_streaming_increment, p.tools

        def loop(seg):
            for dt in seg:
                f(dt)

        def loop_direct(seg):
            for dt in seg:
                g(dt, ptools)

        def pieces(seg):
            out = []
            for dt in seg:
                out.extend(c.parameters for c in f(dt)[1] if c.parameters)
            out.extend(c.parameters for c in p.parse_stream_end()[1] if c.parameters)
            return out

        return (loop_direct if direct else loop), pieces

    return tok, run, stream


# ---------------------------------------------------------------- MAX

def max_runner(fmt: str):
    _quiet_imports()
    from max.pipelines.lib import tool_parsing as max_tools
    from max.pipelines.modeling.types.tool_parsing import ParsedToolCallDelta as MaxDelta

    from reasoning_core.integrations import max as rcm

    rcm._native_tool_classes()  # imports MAX's parser modules (registers them)
    tok = _tokenizer(MAX_FORMATS[fmt])

    class Floor:
        def parse_delta(self, delta):
            return [MaxDelta(index=0, arguments=delta)]

    class ContentFloor:
        def parse_delta(self, delta):
            return [MaxDelta(index=0, content=delta)]

    makers = {"engine": lambda: max_tools.create(fmt), "ours": lambda: rcm.TOOL_PARSERS[fmt](),
              "floor": Floor, "floor_content": ContentFloor}

    def run(which, deltas, cap):
        p = makers[which]()
        if hasattr(p, "set_streaming_tool_schemas"):
            try:
                p.set_streaming_tool_schemas({TOOL: SCHEMA})
            except Exception:  # noqa: BLE001 - an engine parser without schema support
                pass
        f = p.parse_delta
        clock = time.process_time
        spent, args = 0.0, []
        n = len(deltas)
        for i, (dt, _) in enumerate(deltas):
            t0 = clock()
            out = f(dt)
            spent += clock() - t0
            if which in ("ours", "bare") and out:
                args.extend(d.arguments for d in out if d.arguments)
            if spent > cap:
                return spent / (i + 1), (i + 1) / n, "".join(args)
        if which in ("ours", "bare"):
            args.extend(d.arguments for d in p.finish() if d.arguments)
        return spent / n, 1.0, "".join(args)

    def stream(which):
        p = makers[which]()
        if hasattr(p, "set_streaming_tool_schemas"):
            p.set_streaming_tool_schemas({TOOL: SCHEMA})
        return _parse_delta_stream(p)

    return tok, run, stream


def _parse_delta_stream(p):
    """(loop, pieces) over ``p.parse_delta``: ``loop(seg)`` feeds the deltas
    (what the clock sees), ``pieces(seg)`` feeds them and answers the argument
    pieces, with ``finish()``'s (an untimed check run on a fresh parser)."""
    f = p.parse_delta

    def loop(seg):
        for dt in seg:
            f(dt)

    def pieces(seg):
        out = []
        for dt in seg:
            out.extend(d.arguments for d in f(dt) or () if d.arguments)
        out.extend(d.arguments for d in p.finish() if d.arguments)
        return out

    return loop, pieces


def bare_stream(fmt: str):
    """Our parser itself (``reasoning_core.tools.create(fmt).parse_delta``): what
    each engine wrapper is compared with in ``--long``."""
    from reasoning_core import tools

    p = tools.create(fmt)
    p.set_streaming_tool_schemas({TOOL: SCHEMA})
    return _parse_delta_stream(p)


RUNNERS = {"vllm": (vllm_runner, list(ENGINE_FORMATS)), "sglang": (sglang_runner, list(ENGINE_FORMATS)),
           "max": (max_runner, list(MAX_FORMATS))}


# ---------------------------------------------------------------- the table

def _engine_formats(engines, rows):
    """``(engine, format, tokenizer, run, stream)`` for each format of each
    engine; one that cannot be made here is an error row in ``rows``."""
    for engine in engines:
        make, fmts = RUNNERS[engine]
        for fmt in fmts:
            try:
                tok, run, stream = make(fmt)
            except Exception as exc:  # noqa: BLE001 - an engine build without this parser
                rows.append({"interface": engine, "format": fmt, "error": f"{type(exc).__name__}: {exc}"[:200]})
                continue
            yield engine, fmt, tok, run, stream


def _timed(run, which, deltas, cap, row, warm=False):
    """One stream of ``which``, timed after a ``gc.collect()`` with the
    collector off (as timeit does: no collector pause lands in one parser's
    clock): ``(µs per delta, share streamed, arguments)``, or ``None`` when it
    raised (recorded in ``row``)."""
    gc.collect()
    gc.disable()
    try:
        if warm:
            run(which, deltas, cap)
        s, share, args = run(which, deltas, cap)
    except Exception as exc:  # noqa: BLE001 - record, keep going
        row[which + "_error"] = f"{type(exc).__name__}: {exc}"[:200]
        return None
    finally:
        gc.enable()
    return s * 1e6, share, args


def measure(engines, sizes, rates, repeats, cap, progress=print, repeats_1mb=1, warm=False):
    """``warm``: before each timed stream, an untimed one of the same parser on
    the same deltas (after the ``gc.collect()``), so the timed stream does not
    start with caches the collector's walk over the whole process left cold."""
    rows = []
    for engine, fmt, tok, run, _stream in _engine_formats(engines, rows):
        for size in sizes:
            text = call_text(fmt, SIZES[size], engine)
            want = json.loads(json.dumps(W.TOOLS_ARGS))  # the grown content is checked below
            for k in rates:
                deltas = token_deltas(tok, text, k)
                row = {"interface": engine, "format": fmt, "size": size, "tokens_per_delta": k,
                       "deltas": len(deltas), "chars": len(text)}
                for which in ("engine", "ours", "floor") + (("floor_validated",) if engine != "max" else ()):
                    per, shares = [], []
                    for _ in range(repeats_1mb if size == "1MB" else repeats):
                        got = _timed(run, which, deltas, cap, row, warm and size != "1MB")
                        if got is None:
                            break
                        per.append(got[0])
                        share, args = got[1], got[2]
                        shares.append(share)
                        if which == "ours" and share == 1.0:
                            streamed = json.loads(args)
                            if streamed.get("path") != want["path"] or not streamed.get("content", "").startswith(
                                    "def report(values):"):
                                row["ours_error"] = "streamed arguments differ from the call's"
                    if per:
                        row[which] = {"median": statistics.median(per), "min": min(per), "max": max(per),
                                      "share": min(shares)}
                        if min(shares) < 1:  # a lower bound of the whole stream's parser time
                            row[which]["stream_s"] = statistics.median(per) * 1e-6 * len(deltas)
                rows.append(row)
                progress(_line(row))
    return rows


# Content: what every chunk of a reply without a call costs through the tool
# parser (most chunks of most replies): prose, markdown and code, none of it
# a format's marker.
CONTENT_TEXT = (
    "Here is how the report works. It reads the values, scales each one by 2 and adds them up; "
    "the total is returned to the caller.\n\n"
    "1. Read the input file (one value per line).\n"
    "2. Skip blank lines and comments that start with a hash.\n"
    "3. Print the total, rounded to 2 places, with the caf\u00e9's name.\n\n"
    "    total = sum(2 * v for v in values)\n"
    "    print(f\"total: {total:.2f}\")\n\n"
    "That is all it needs. If you want, I can also add a test that checks the rounding. "
)


def measure_content(engines, rates, repeats, progress=print):
    """``--content``: about 2 KB of prose with no marker in it, 1 or 4 tokens
    per delta, through each engine's interface: its parser, ours, and the
    interface's content floor (the delta as the engine's content result, built
    the cheapest way we know; MAX: ``[ParsedToolCallDelta(index=0, content=delta)]``,
    what MAX's own parsers answer)."""
    text = (CONTENT_TEXT * 6)[:2_000]
    rows = []
    for engine, fmt, tok, run, _stream in _engine_formats(engines, rows):
        for k in rates:
            deltas = token_deltas(tok, text, k)
            row = {"interface": engine, "format": fmt, "size": "2KB text", "tokens_per_delta": k,
                   "deltas": len(deltas), "chars": len(text)}
            for which in ("engine", "ours", "floor_content"):
                per = []
                for _ in range(repeats):
                    got = _timed(run, which, deltas, 1e9, row)
                    if got is None:
                        break
                    per.append(got[0])
                    if which == "ours" and got[2]:
                        row["ours_error"] = "ours streamed arguments from text without a call"
                if per:
                    row["floor" if which == "floor_content" else which] = {
                        "median": statistics.median(per), "min": min(per), "max": max(per), "share": 1.0}
            rows.append(row)
            progress(_line(row))
    return rows


def _timed_quarters(loop, texts):
    """Process CPU seconds of ``loop`` over each quarter of ``texts``: the clock is
    read five times per stream, never per delta (a clock read costs about
    0.2 µs here, as much as a quarter of what is measured)."""
    n = len(texts)
    cuts = [n * j // 4 for j in range(5)]
    segs = [texts[a:b] for a, b in zip(cuts, cuts[1:])]
    clock = time.process_time
    out = []
    for seg in segs:
        t0 = clock()
        loop(seg)
        out.append(clock() - t0)
    return [t / max(1, len(seg)) for t, seg in zip(out, segs)], sum(out) / n


def measure_long(engines, size="1MB", k=1, repeats=1, progress=print):
    """``--long``: one call with ``size`` of arguments, ``k`` tokens per delta,
    streamed whole through each engine wrapper (ours), the bare parser and the
    interface's floor, in process CPU time of the whole stream (one clock read
    per quarter); the wrapper's cost per delta in each quarter shows whether it
    grows with what was streamed. The arguments each streamed are checked in a
    separate, untimed stream of a fresh parser."""
    rows = []
    for engine in engines:
        make, fmts = RUNNERS[engine]
        for fmt in fmts:
            try:
                tok, run, stream = make(fmt)
            except Exception as exc:  # noqa: BLE001 - an engine build without this parser
                rows.append({"interface": engine, "format": fmt, "error": f"{type(exc).__name__}: {exc}"[:200]})
                continue
            deltas = token_deltas(tok, call_text(fmt, SIZES[size], engine), k)
            texts = [d for d, _ in deltas]
            row = {"interface": engine, "format": fmt, "size": size, "tokens_per_delta": k, "deltas": len(deltas),
                   "timing": "whole stream"}
            got = {}
            kinds = ("bare", "ours", "floor") + (("ours_direct", "floor_direct") if engine == "sglang" else ())
            for which in kinds:
                def make_stream(which=which):
                    return bare_stream(fmt) if which == "bare" else stream(which)

                per, quarters = [], None
                for _ in range(repeats):
                    loop, _pieces = make_stream()
                    gc.collect()
                    gc.disable()
                    try:
                        this, spent = _timed_quarters(loop, texts)
                    finally:
                        gc.enable()
                    per.append(spent * 1e6)
                    if quarters is None or spent * 1e6 <= min(per):
                        quarters = [x * 1e6 for x in this]
                if which in ("bare", "ours"):
                    got[which] = "".join(make_stream()[1](texts))
                row[which] = {"median": statistics.median(per), "min": min(per), "max": max(per), "share": 1.0,
                              "quarters": quarters}
            if got["ours"] != got["bare"] and not _same_but_framing(got["ours"], got["bare"]):
                row["ours_error"] = "the wrapper streamed other arguments than the bare parser"
            rows.append(row)
            progress(_long_line(row))
    return rows


def _same_but_framing(a: str, b: str) -> bool:
    """The same call's arguments, but for the one leading and one trailing
    newline of XML-style string values: the bare parser drops them (framing),
    vLLM's ``minimax_m2`` keeps every character between the tags (its rule)."""
    def unframed(v):
        if isinstance(v, str):
            return v[1:] if v.startswith("\n") else v
        return v

    try:
        ja, jb = json.loads(a), json.loads(b)
    except ValueError:
        return False
    if not (isinstance(ja, dict) and isinstance(jb, dict)) or ja.keys() != jb.keys():
        return False
    for k in ja:
        x, y = ja[k], jb[k]
        if x == y:
            continue
        if not (isinstance(x, str) and isinstance(y, str)):
            return False
        x, y = unframed(x), unframed(y)
        x, y = (x[:-1] if x.endswith("\n") else x), (y[:-1] if y.endswith("\n") else y)
        if x != y:
            return False
    return True


def _long_line(row):
    if "error" in row:
        return f"{row['interface']:6} {row['format']:12} error: {row['error']}"
    b, o, f = (row[w]["median"] for w in ("bare", "ours", "floor"))
    q = row["ours"]["quarters"]
    direct = ""
    if "ours_direct" in row:
        od, fd = row["ours_direct"]["median"], row["floor_direct"]["median"]
        direct = f"  detector alone: ours {od:.2f} ({od / b:.2f}× bare), floor {fd:.2f}"
    return (f"{row['interface']:6} {row['format']:12} {row['deltas']} deltas: bare {b:.2f}  ours {o:.2f} "
            f"({o / b:.2f}× bare)  floor {f:.2f}  (ours − floor) ÷ bare {(o - f) / b:.2f}  "
            f"ours by quarter {' / '.join(f'{x:.2f}' for x in q)}{direct}"
            + "".join(f"  [{k}: {v}]" for k, v in row.items() if k.endswith("_error")))


def long_table(rows):
    head = ["interface", "format", "deltas", "bare parser", "through the wrapper (ours)", "ours ÷ bare",
            "interface floor", "(ours − floor) ÷ bare", "SGLang: our detector's method alone (÷ bare)",
            "ours per delta, by quarter of the stream"]
    lines = ["| " + " | ".join(head) + " |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['interface']} | {r['format']} | error: {r['error']} | | | | | | | |")
            continue
        b, o, f = (r[w]["median"] for w in ("bare", "ours", "floor"))
        d = r.get("ours_direct")
        direct = f"{d['median']:.2f} ({d['median'] / b:.2f}×)" if d else "—"
        lines.append(f"| {r['interface']} | {r['format']} | {r['deltas']:,} | {b:.2f} | {o:.2f} | {o / b:.2f}× | "
                     f"{f:.2f} | {(o - f) / b:.2f}× | {direct} | "
                     f"{' / '.join(f'{x:.2f}' for x in r['ours']['quarters'])} |")
    return "\n".join(lines)


def _above(row, which):
    a, f = row.get(which), row.get("floor")
    if not a or not f:
        return None
    return a["median"] - f["median"]


def _cell(m):
    if not m:
        return "—"
    s = f"{m['median']:,.2f} ({m['min']:,.2f}–{m['max']:,.2f})"
    if m["share"] < 1:
        s += f" cut at {m['share'] * 100:.0f} %"
        if m.get("stream_s"):
            s += f", > {m['stream_s']:,.0f} s per stream"
    return s


def _ratio(row):
    e, o = _above(row, "engine"), _above(row, "ours")
    if e is None or o is None:
        return "—"
    if o <= 0:
        return "ours at the floor"
    r = e / o
    s = f"{r:,.1f}×"
    if row["engine"]["share"] < 1:
        s = "≥ " + s
    return s


def _line(row):
    if "error" in row:
        return f"{row['interface']:6} {row['format']:12} error: {row['error']}"
    return (f"{row['interface']:6} {row['format']:12} {row['size']:5} {row['tokens_per_delta']} tok: "
            f"engine {_cell(row.get('engine'))}  ours {_cell(row.get('ours'))}  floor {_cell(row.get('floor'))}  "
            f"engine÷ours above floor {_ratio(row)}"
            + "".join(f"  [{k}: {v}]" for k, v in row.items() if k.endswith("_error")))


def table(rows, markdown=True):
    head = ["interface", "format", "size", "tok/delta", "engine's parser µs", "ours µs", "floor µs",
            "above floor, engine ÷ ours", "floor, validated µs"]
    body = []
    for r in rows:
        if "error" in r:
            body.append([r["interface"], r["format"], "—", "—", "error: " + r["error"], "—", "—", "—", "—"])
            continue
        body.append([r["interface"], r["format"], r["size"], str(r["tokens_per_delta"]), _cell(r.get("engine")),
                     _cell(r.get("ours")), _cell(r.get("floor")), _ratio(r), _cell(r.get("floor_validated"))])
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(b) + " |" for b in body]
        return "\n".join(lines)
    w = [max(len(x[i]) for x in [head] + body) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w[i]) for i, c in enumerate(x)) for x in [head] + body)


def chart(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in rows if "error" not in r and r.get("engine") and r.get("ours") and r.get("floor")]
    labels = [f"{r['interface']} {r['format']} {r['size']} {r['tokens_per_delta']}t" for r in ok]
    fig, ax = plt.subplots(figsize=(10, max(4, 0.22 * len(ok))))
    y = range(len(ok))
    for off, which, color in ((-0.27, "engine", "tab:red"), (0, "ours", "tab:blue"), (0.27, "floor", "tab:gray")):
        ax.barh([i + off for i in y], [r[which]["median"] for r in ok], height=0.27, color=color,
                label={"engine": "engine's parser", "ours": "ours", "floor": "interface floor"}[which])
    ax.set_yticks(list(y), labels, fontsize=6)
    ax.set_xscale("log")
    ax.invert_yaxis()
    ax.set_xlabel("µs per delta (median, log scale)")
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="benchmarks/bench_tools_engines.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2 KB and 32 KB, one repeat, short cap")
    ap.add_argument("--engines", default="vllm,sglang,max")
    ap.add_argument("--formats", help="comma-separated formats (default: all of each engine)")
    ap.add_argument("--sizes", help="comma-separated among 2KB,32KB,1MB")
    ap.add_argument("--rates", default="1,4", help="tokens per delta")
    ap.add_argument("--repeats", type=int)
    ap.add_argument("--repeats-1mb", type=int, default=1, help="repeats of the 1 MB cells (default 1)")
    ap.add_argument("--cap", type=float, help="seconds of parser time per stream before it is cut")
    ap.add_argument("--warm", action="store_true",
                    help="an untimed stream of the same parser before each timed one (not at 1 MB)")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--chart", metavar="PNG", help="write a chart (needs matplotlib, the [bench] extra)")
    ap.add_argument("--long", action="store_true",
                    help="1 MB of arguments, one token per delta, whole, through each wrapper vs the bare parser")
    ap.add_argument("--content", action="store_true",
                    help="2 KB of text without a call, through each interface (its content floor)")
    ap.add_argument("--from", dest="load", metavar="JSON", nargs="+",
                    help="print the table (and --chart) of saved --json results instead of measuring")
    args = ap.parse_args(argv)
    if args.load:
        saved = [json.loads(Path(f).read_text()) for f in args.load]
        if any(d.get("long") for d in saved):
            print(long_table([r for d in saved if d.get("long") for r in d["rows"]]))
        rows = [r for d in saved if not d.get("long") for r in d["rows"]]
        if rows:
            print(table(rows, markdown=args.markdown))
        if args.chart:
            chart(rows, args.chart)
        return 0
    sizes = args.sizes.split(",") if args.sizes else (["2KB", "32KB"] if args.quick else list(SIZES))
    repeats = args.repeats or (1 if args.quick else 3)
    cap = args.cap or (2.0 if args.quick else 20.0)
    engines = [e for e in args.engines.split(",") if e]
    if args.formats:
        keep = set(args.formats.split(","))
        for e in engines:
            RUNNERS[e] = (RUNNERS[e][0], [f for f in RUNNERS[e][1] if f in keep])
    from reasoning_core.tools import _json as scan

    print(f"# {platform.node()} {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"Python {platform.python_version()}, tool scanner {scan.SCAN_BACKEND}; load {os.getloadavg()[0]:.1f}",
          file=sys.stderr)
    if args.long:
        rows = measure_long(engines, repeats=args.repeats or 1,
                            progress=lambda s: print(s, file=sys.stderr, flush=True))
        print(long_table(rows))
        if args.json:
            Path(args.json).write_text(json.dumps({"scanner": scan.SCAN_BACKEND, "long": True, "rows": rows},
                                                  indent=1) + "\n")
        return 0
    if args.content:
        rows = measure_content(engines, [int(x) for x in args.rates.split(",")], args.repeats or 7,
                               progress=lambda s: print(s, file=sys.stderr, flush=True))
        print(table(rows, markdown=args.markdown))
        if args.json:
            Path(args.json).write_text(json.dumps({"scanner": scan.SCAN_BACKEND, "content": True, "rows": rows},
                                                  indent=1) + "\n")
        return 0
    rows = measure(engines, sizes, [int(x) for x in args.rates.split(",")], repeats, cap,
                   progress=lambda s: print(s, file=sys.stderr, flush=True), repeats_1mb=args.repeats_1mb,
                   warm=args.warm)
    print(table(rows, markdown=args.markdown))
    if args.json:
        Path(args.json).write_text(json.dumps({"scanner": scan.SCAN_BACKEND, "cap_s": cap, "repeats": repeats,
                                               "rows": rows}, indent=1) + "\n")
    if args.chart:
        chart(rows, args.chart)
    return 0


if __name__ == "__main__":
    sys.exit(main())
