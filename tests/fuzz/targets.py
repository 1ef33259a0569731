"""Fuzz targets: fuzz bytes -> a structured case -> parity and invariant checks.

Each target decodes its input with ``Reader`` (no atheris needed, so a saved
input can be replayed and printed anywhere) and raises AssertionError on a
broken property.  Targets: engine, batch, text, decoder, tools.
"""
from __future__ import annotations

import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)

import reasoning_core  # noqa: E402
from reasoning_core import FamilyParser, ReasoningStreamDecoder, get_parser, tools  # noqa: E402
from reasoning_core._tables import Pattern  # noqa: E402
from reasoning_core.families import FAMILIES, ROLES  # noqa: E402
from streams import run_split  # noqa: E402
from strategies import (  # noqa: E402
    ALL_KINDS,
    ARRAY_TYPECODES,
    CONTAINER_KINDS,
    DEFAULT_STATES,
    EDGE_DELIMITER_IDS,
    ENGINE_STATES,
    NUMPY_INT_DTYPES,
    OUTSIDE_IDS,
    as_container,
    bad_inputs,
    make_tables,
    run_batch_program,
    run_engine_program,
    text_of,
)


def _compiled() -> bool:
    if os.environ.get("REASONING_CORE_NO_EXTENSIONS", "") not in ("", "0"):
        return False
    try:
        from reasoning_core import _engine  # noqa: F401
    except ImportError:
        return False
    return True


COMPILED = _compiled()
BACKENDS = ("cython", "python") if COMPILED else ("python",)


class Reader:
    """Structured values from fuzz bytes; zeros once the bytes run out."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self.data):
            return 0
        self.pos += 1
        return self.data[self.pos - 1]

    def int(self, lo: int, hi: int) -> int:
        span = hi - lo + 1
        v = self.byte()
        if span > 256:
            v = v << 8 | self.byte()
        return lo + v % span

    def bool(self) -> bool:
        return bool(self.byte() & 1)

    def pick(self, seq):
        return seq[self.int(0, len(seq) - 1)]

    def more(self) -> bool:
        return self.pos < len(self.data)


# ------------------------------------------------------------------ token-level cases
SMALL = (1, 2, 3, 4, 5)


def read_spec(r: Reader):
    def seq():
        n = r.int(1, 4)
        return tuple(r.pick(EDGE_DELIMITER_IDS) if r.int(0, 7) == 0 else r.pick(SMALL) for _ in range(n))

    patterns = [Pattern(seq(), ALL_KINDS[0]), Pattern(seq(), ALL_KINDS[1])]
    for _ in range(r.int(0, 5)):
        patterns.append(Pattern(seq(), r.pick(ALL_KINDS)))
    return patterns, r.pick(DEFAULT_STATES), r.bool()


def read_ids(r: Reader, patterns, max_size=24):
    out: list[int] = []
    for _ in range(r.int(0, 8)):
        k = r.int(0, 5)
        if k == 0:
            out.extend(r.pick(patterns).ids)
        elif k == 1:
            ids = r.pick(patterns).ids
            out.extend(ids[: r.int(1, len(ids))])
        elif k == 2:
            out.append(r.pick(OUTSIDE_IDS))
        else:
            out.extend(r.int(0, 7) for _ in range(r.int(1, 3)))
    return out[:max_size]


def read_chunks(r: Reader, seq):
    cuts = sorted(r.int(0, len(seq)) for _ in range(r.int(0, 6)))
    return [list(seq[a:b]) for a, b in zip([0, *cuts], [*cuts, len(seq)])]


def read_container(r: Reader, ids):
    got = as_container(r.pick(CONTAINER_KINDS), list(ids), r.pick(NUMPY_INT_DTYPES), r.pick(ARRAY_TYPECODES))
    return list(ids) if got is None else got[0]


def read_engine_program(r: Reader, patterns):
    ops = []
    id_ops = ("feed", "feed", "feed_side", "stream", "scan_stream", "prompt_state")
    for _ in range(r.int(1, 10)):
        op = r.pick(id_ops + ("feed_text", "set_state", "finish", "bad"))
        if op in id_ops:
            box = read_container(r, read_ids(r, patterns, 12))
            args = (box, r.bool()) if op in ("stream", "scan_stream") else (box,)
        elif op == "feed_text":
            args = (text_of(read_ids(r, patterns, 12)),)
        elif op == "set_state":
            args = (r.pick(ENGINE_STATES + (-1, 7)),)
        elif op == "bad":
            op = r.pick(id_ops + ("feed_text",))
            args = (r.pick(bad_inputs()),)
            if op in ("stream", "scan_stream"):
                args += (True,)
            op = "bad:" + op
        else:
            args = ()
        ops.append((op, args))
    return ops


def engine_case(data: bytes):
    r = Reader(data)
    spec = read_spec(r)
    ids = read_ids(r, spec[0])
    prompt = read_ids(r, spec[0], 8) if r.bool() else None
    chunks = read_chunks(r, ids)
    return spec, prompt, ids, chunks, read_engine_program(r, spec[0])


def check_engine(data: bytes) -> None:
    spec, prompt, ids, chunks, program = engine_case(data)
    tables = make_tables(spec)
    results = []
    for backend in BACKENDS:
        def parser():
            return FamilyParser(tables, backend=backend).begin(prompt)

        one = run_split(parser(), [ids])  # checks conservation on the way
        assert one[0] == ids, "conservation"
        assert run_split(parser(), chunks) == one, "chunking invariance"
        assert run_split(parser(), [[t] for t in ids]) == one, "token-by-token chunking"
        results.append(one)
    assert all(x == results[0] for x in results), "backends disagree on split"
    if COMPILED:
        run_engine_program(spec, program)


def batch_case(data: bytes):
    r = Reader(data)
    spec = read_spec(r)
    cap = r.int(1, 4)
    ops = [("open", (k, r.pick(ENGINE_STATES))) for k in range(cap) if r.int(0, 3)]
    for _ in range(r.int(1, 10)):
        op = r.pick(("step", "step", "ragged", "ragged", "open", "close", "finish"))
        if op == "open":
            ops.append((op, (r.int(-1, cap), r.pick(ENGINE_STATES))))
        elif op in ("close", "finish"):
            ops.append((op, (r.int(-1, cap),)))
        else:
            import numpy as np

            if r.bool():  # distinct slots, the usual engine step
                slots = list(dict.fromkeys(r.int(0, cap - 1) for _ in range(r.int(0, cap))))
            else:
                slots = [r.int(0, cap - 1) if r.int(0, 7) else r.int(-1, cap) for _ in range(r.int(0, cap + 1))]
            if op == "step":
                toks = (read_ids(r, spec[0], len(slots)) + [0] * len(slots))[: len(slots)]
                offsets = None
            else:
                offsets = [0]
                for _ in slots:
                    offsets.append(offsets[-1] + r.int(0, 4))
                toks = (read_ids(r, spec[0], offsets[-1]) + [0] * offsets[-1])[: offsets[-1]]
            if r.bool():
                toks = np.array([t if -(2**63) <= t < 2**63 else -7 for t in toks], dtype=np.int64)
                slots = np.array(slots, dtype=np.int32)
            args = (slots, toks) if offsets is None else (slots, offsets, toks)
            ops.append((op, (args, r.pick((None, "same", "bigger", "smaller")))))
    return spec, cap, ops


def check_batch(data: bytes) -> None:
    spec, cap, ops = batch_case(data)
    if COMPILED:
        run_batch_program(spec, cap, ops)
    else:
        run_batch_program_single(spec, cap, ops)


def run_batch_program_single(spec, cap, ops):
    """Without the compiled engine: the program must at least run (no crash)."""
    from reasoning_core._dispatch import backend_module

    eng = backend_module("python").BatchEngine(make_tables(spec), cap)
    for op, args in ops:
        try:
            if op == "step":
                eng.step(*args[0])
            elif op == "ragged":
                eng.step_ragged(*args[0])
            else:
                getattr(eng, op)(*args)
        except (ValueError, TypeError):
            pass


# ------------------------------------------------------------------ text level
FAMILY_NAMES = sorted(FAMILIES)
TEXT_BITS = ("a", " ", "\n", "é", "🧠", "<", ">", "/", "|", "think", "thought\n", "<|", "|>", "\ud800", "\x00")


def family_strings(name):
    fam = FAMILIES[name]
    out = [s for role, _, _ in ROLES for s in getattr(fam, role)]
    return out + ([fam.label] if fam.label else [])


def read_text(r: Reader, strings, max_pieces=12):
    pieces = []
    for _ in range(r.int(0, max_pieces)):
        k = r.int(0, 4)
        if k == 0 and strings:
            pieces.append(r.pick(strings))
        elif k == 1 and strings:
            s = r.pick(strings)
            pieces.append(s[: r.int(1, len(s))])
        elif k == 2:
            pieces.append(r.pick(TEXT_BITS))
        else:
            pieces.append("".join(chr(r.int(0x20, 0x7E)) for _ in range(r.int(1, 3))))
    return "".join(pieces)


def read_text_chunks(r: Reader, text):
    cuts = sorted(r.int(0, len(text)) for _ in range(r.int(0, 6)))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]


def text_case(data: bytes):
    r = Reader(data)
    name = r.pick(FAMILY_NAMES)
    seeded = r.pick((None, True, False))
    text = read_text(r, family_strings(name))
    return name, seeded, text, read_text_chunks(r, text)


def check_text(data: bytes) -> None:
    name, seeded, text, chunks = text_case(data)
    streams, ones = [], []
    for b in BACKENDS:
        tp = reasoning_core.text_parser(name, starts_in_reasoning=seeded, backend=b)
        outs = [tp.feed(ch) for ch in chunks] + [tp.finish()]
        streams.append(outs)
        joined = ("".join(x for x, _ in outs), "".join(y for _, y in outs))
        one = tp.parse(text)
        assert joined == one, "streamed text differs from parse()"
        ones.append(one)
    assert all(s == streams[0] for s in streams), "backends disagree on text feed()"
    assert all(o == ones[0] for o in ones), "backends disagree on text parse()"


# ------------------------------------------------------------------ decoder
DECODER_FAMILIES = ("deepseek_r1", "qwen3", "gemma4", "gpt_oss", "granite", "hunyuan_a13b", "mistral", "kimi_k2")


def decoder_case(data: bytes):
    from vocab import CORPUS, encode, family_tokenizer

    r = Reader(data)
    name = r.pick(DECODER_FAMILIES)
    tok = family_tokenizer(name)
    strings = family_strings(name) + [c[:14] for c in CORPUS]
    text = "".join(c for c in read_text(r, strings, 8) if not "\ud800" <= c <= "\udfff")  # encodable text only
    ids = encode(tok, text)
    size = tok.get_vocab_size()
    for _ in range(r.int(0, 3)):
        at = r.int(0, len(ids))
        ids[at:at] = [r.int(0, size - 1)]
    prompt = r.pick((None, [], "<think>", "<|think|>", "</think>", "<|channel|>analysis<|message|>"))
    if isinstance(prompt, str):
        prompt = encode(tok, prompt)
    return name, prompt, ids, read_chunks(r, ids)


def check_decoder(data: bytes) -> None:
    from vocab import family_tokenizer

    name, prompt, ids, chunks = decoder_case(data)
    tok = family_tokenizer(name)
    runs = []
    for b in BACKENDS:
        dec = ReasoningStreamDecoder(get_parser(name, tok, backend=b).begin(prompt), tok)
        runs.append([tuple(dec.push(ch)) for ch in chunks] + [tuple(dec.finish())])
    assert all(x == runs[0] for x in runs), "backends disagree on decoded deltas"


# ------------------------------------------------------------------ tool parsers
TOOL_NAMES = tools.available()
TOOL_BITS = (
    "{", "}", "[", "]", '"', "\\", ":", ",", "\n", " ", "name", '"name": "f"', '"arguments": {', '"parameters": {',
    "functions.f:0", "1", "true", "x", "é", "\x00", "\ud800", "<think>", "</think>", "[THINK]", "[/THINK]",
    "</tool_call>", "</function>", "<parameter=", "</parameter>", "<arg_key>", "</arg_key>", "<arg_value>",
    "</arg_value>", "</minimax:tool_call>", "<invoke name=", "</invoke>", "<parameter name=", "[ARGS]",
    "[CALL_ID]", "<｜tool▁calls▁end｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>", "<|tool_calls_section_end|>",
    "<|tool_call_section_end|>", "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>",
    # the formats added for MAX's names (issue 18)
    "call:f{", "<tool_call|>", '<|"|>', '"args": {', '<｜DSML｜invoke name="f">', "</｜DSML｜invoke>",
    '<｜DSML｜parameter name="a" string="true">', '<｜DSML｜parameter name="a" string="false">',
    "</｜DSML｜parameter>", "</｜DSML｜tool_calls>", '<atem:invoke name="f">', "</atem:invoke>",
    '<atem:parameter name="a">', "</atem:parameter>", "</atem:function_calls>",
    # runs that go past a name's or an id's length limit when two meet (64; 256 for vllm-mlx's
    # mistral names)
    "n" * 40, "7" * 40, "n" * 130,
    # the pythonic formats' calls
    "f(a=1)", "(", ")", "=",
)


def tool_markers(name):
    cls = tools.get_parser_cls(name)
    return tuple(cls.openers) + tuple(s for s, _ in cls.think_pairs)


def tools_case(data: bytes):
    r = Reader(data)
    name = r.pick(TOOL_NAMES)
    strings = list(tool_markers(name)) + list(TOOL_BITS)
    text = read_text(r, strings, 16)
    return name, text, read_text_chunks(r, text)


def _stream(parser, chunks):
    """Feed chunks and finish(): (content, [(name, arguments)]), checking the delta types."""
    content, calls = [], {}
    for ch in chunks + [None]:
        res = parser.parse_delta(ch) if ch is not None else parser.finish()
        if res is None:
            assert ch is not None, "finish() returned None"
            content.append(ch)
            continue
        assert isinstance(res, list), f"parse_delta returned {type(res).__name__}"
        for d in res:
            if d.content is not None:
                content.append(d.content)
                continue
            c = calls.setdefault(d.index, [None, ""])
            if d.name is not None:
                assert c[0] is None, "a call named twice"
                c[0] = d.name
            if d.arguments is not None:
                c[1] += d.arguments
    return "".join(content), [tuple(calls[i]) for i in sorted(calls)]


def check_tools(data: bytes) -> None:
    name, text, chunks = tools_case(data)
    streamed = _stream(tools.create(name), chunks)  # streaming never raises
    assert _stream(tools.create(name), [text] if text else []) == streamed, "chunking changes the stream"
    content = streamed[0]
    # Content is conserved: everything before the first marker is content, verbatim.
    first = min((i for i in (text.find(m) for m in tool_markers(name)) if i >= 0), default=len(text))
    before = text[:first]
    if name == "inkling" and first < len(text):  # the call's name, written before its marker, is markup
        before = re.sub(r"[A-Za-z0-9_-]{1,64}\Z", "", before)
    assert content.startswith(before), "text before the first marker was lost"
    if first == len(text):
        assert streamed == (text, []), "marker-free text must stream through unchanged"
    try:
        full = tools.create(name).parse_complete(text)
    except ValueError:
        assert tools.get_parser_cls(name).raises_on_failure, "llama3_json must not raise"
        return
    assert (full.content or "") == content, "parse_complete content differs from the stream"
    for c in full.tool_calls:
        assert (c.name, c.arguments) in streamed[1], "a one-shot call missing from the stream"


TARGETS = {
    "engine": check_engine,
    "batch": check_batch,
    "text": check_text,
    "decoder": check_decoder,
    "tools": check_tools,
}
CASES = {
    "engine": engine_case,
    "batch": batch_case,
    "text": text_case,
    "decoder": decoder_case,
    "tools": tools_case,
}
