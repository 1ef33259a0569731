"""Fuzz targets for the serving engines' TOOL-PARSER classes (issue 25):
``vllm_tools``, ``sglang_tools``, ``max_tools`` and ``mlx_tools``.

Each decodes the fuzz bytes (``targets.Reader``) into one served name, a
request (tools lists with schemas or none, ``tool_choice`` auto / none / named
/ required where the engine has one) and one to three streams of hostile
model output run on one instance: marker soup of the format's own markup,
well-formed calls with fuzzed names, keys and raw values (huge, odd, invalid
JSON), slices of calls (partial markers), prose, empty deltas, text without
ids; the end-of-stream hooks, one-shot calls and the engine's bookkeeping
reads in any order, and the instance reused after (or without) its end.

Checked on every input:

- nothing raises on model output (streaming, end-of-stream hooks, one-shot);
- an instance whose tool-call scanner is the compiled ``_toolscan`` and one on
  the pure twin give equal results call by call (call ids compared as present
  or not: they are random);

and, on a fresh instance whose stream was ended by the engine's hook:

- the wrapper streams what the format's own parser streams on the same chunks
  (calls, in order, with their arguments; content, up to the engine's
  documented whitespace rule) -- for SGLang, less the calls to tools the
  request does not list, which SGLang drops;
- conservation: with ``tool_choice="none"`` (vLLM) every character comes out
  as content, in order; text with no call comes out whole as content;
- the engine's bookkeeping (vLLM's ``streamed_args_for_tool`` /
  ``prev_tool_call_arr``, SGLang's ``streamed_args_for_tool``) equals what
  was streamed;
- the stream equals the one-shot parse (``extract_tool_calls``,
  ``detect_and_parse``, ``parse_complete``) wherever the format's own parser
  gives the same result both ways (a well-formed output).
"""
from __future__ import annotations

import collections
import contextlib
import functools
import json
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
for _p in (HERE, TESTS):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from targets import COMPILED, TOOL_BITS, Reader  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")

# ------------------------------------------------------------------ the two scanners


@functools.lru_cache(maxsize=None)
def _scanner_patches(backend: str) -> tuple:
    """(module namespace, attribute, value) for every tool-format module that
    holds the selected scanner or one of its functions, ``backend``'s instead."""
    from reasoning_core import tools
    from reasoning_core.tools import _json

    for n in tools.available():  # every format module imported
        tools.create(n)
    cur, new = _json.SCAN, _json.scanner(backend)
    swap = {id(cur): new, id(cur.JsonReader): new.JsonReader, id(cur.escape): new.escape}
    out = []
    for name, mod in list(sys.modules.items()):
        if mod is None or not name.startswith("reasoning_core.tools"):
            continue
        ns = vars(mod)
        for attr, val in list(ns.items()):
            if id(val) in swap and val is not swap[id(val)]:
                out.append((ns, attr, swap[id(val)], val))
    return tuple(out)


@contextlib.contextmanager
def scanner(backend: str):
    """The tool parsers run on ``backend``'s scanner inside the block."""
    patches = _scanner_patches(backend) if backend == "python" and COMPILED else ()
    for ns, attr, new, _old in patches:
        ns[attr] = new
    try:
        yield
    finally:
        for ns, attr, _new, old in patches:
            ns[attr] = old


BACKENDS = ("cython", "python") if COMPILED else ("python",)
# How often each oracle ran (and with how many calls): a replay or a test can
# check that the inputs reach the checks.
STATS: collections.Counter = collections.Counter()


class Pair:
    """One instance per scanner backend; ``call`` runs an operation on each
    (under its scanner) and checks that nothing raised and the normalized
    results agree."""

    def __init__(self, make, case: list) -> None:
        self.case = case
        self.make = make  # a fresh instance (under the scanner in use)
        self.insts = []
        for be in BACKENDS:
            with scanner(be):
                self.insts.append((be, make()))

    def call(self, what: str, fn, norm=lambda x: x, allow: tuple = ()):
        """``allow``: exceptions the engine's protocol lets this call raise
        (both backends must raise the same)."""
        results = []
        for be, inst in self.insts:
            with scanner(be):
                try:
                    results.append(norm(fn(inst)))
                except allow as exc:
                    results.append(("raised", type(exc).__name__))
                except Exception as exc:  # noqa: BLE001 - model output must never raise
                    raise AssertionError(f"{what} raised {type(exc).__name__}: {exc}\ncase: {self.case!r}") from exc
        for other in results[1:]:
            assert other == results[0], f"{what}: compiled {results[0]!r} != pure {other!r}\ncase: {self.case!r}"
        return results[0]

    @property
    def first(self):
        return self.insts[0][1]


# ------------------------------------------------------------------ hostile model output

GOOD_NAMES = ("get_weather", "search", "other_tool")  # the last is in no request's tools
ODD_NAMES = ("", "f", "x" * 65, "n" * 3000, "名前", "f.g", "f g", "f\"", "a\\b", "<tool_call>", "\x00", "\ud800",
             "functions.f:0", "get_weather ", "\n")
KEYS = ("city", "days", "q", "", "k" * 300, "a b", "é", '"', "<")
VALUES = ('"Paris"', "3", "true", "null", '{"a": [1, 2.50, "x"]}', '["a", {"b": null}]', '"' + "v" * 3000 + '"',
          "9" * 400, "1e400", "NaN", "-", '"unterminated', "{", "[1,", '{"a": ', "'single'", '"\\ud800"', "",
          "Paris", "<", " 7 ")
PROSE = ("Let me check. ", " ", "\n", "\n\n", "  \n ", "é", "🧠", "Done.", "{", "[", "call get_weather", "<", "|",
         "x" * 200)


@functools.lru_cache(maxsize=None)
def call_template(fmt: str) -> str:
    """One call of format ``fmt`` as the model writes it, with the
    placeholders NAMEQQ, KEYQQ and VALQQ (the value raw, as the model writes it)."""
    from reasoning_core import tools

    from test_hardening_tools import call_text

    fname = tools.create(fmt).format_name
    for f in (fmt, fname):
        try:
            text = call_text(f, "NAMEQQ", "KEYQQ", "VALQQ")
        except (AssertionError, AttributeError, KeyError, TypeError):
            continue
        if "NAMEQQ" in text and "VALQQ" in text:
            return text
    import test_tools_max as tm

    for f in (fmt, fname):
        if f in tm.NEW:
            return tm.render(f, [("NAMEQQ", {"KEYQQ": "VALQQ"})]).replace('"VALQQ"', "VALQQ")
    return ""


def format_strings(fmt: str) -> list[str]:
    """The format's own markers and think pairs, and the pieces of its call template."""
    from reasoning_core import tools

    cls = tools.get_parser_cls(fmt)
    out = list(cls.openers) + [s for pair in cls.think_pairs for s in pair]
    tpl = call_template(fmt)
    for ph in ("NAMEQQ", "KEYQQ", "VALQQ"):
        tpl = tpl.replace(ph, "\x01")
    out += [p for p in tpl.split("\x01") if p]
    return out


def read_call(r: Reader, fmt: str, good: bool) -> str:
    tpl = call_template(fmt)
    if not tpl:
        return ""
    name = r.pick(GOOD_NAMES) if good or r.int(0, 2) else r.pick(ODD_NAMES)
    key = r.pick(KEYS[:3]) if good or r.int(0, 2) else r.pick(KEYS)
    value = r.pick(VALUES[:6]) if good or r.bool() else r.pick(VALUES)
    return tpl.replace("NAMEQQ", name).replace("KEYQQ", key).replace("VALQQ", value)


def read_output(r: Reader, fmt: str) -> str:
    strings = format_strings(fmt)
    pieces: list[str] = []
    for _ in range(r.int(0, 8)):
        k = r.int(0, 11)
        if k <= 2:
            pieces.append(read_call(r, fmt, good=k < 2))
        elif k == 3:
            s = read_call(r, fmt, good=True)
            a = r.int(0, len(s))
            pieces.append(s[a:r.int(a, len(s))] if r.bool() else s[:a])  # a slice: partial markers
        elif k <= 5 and strings:
            s = r.pick(strings)
            pieces.append(s if k == 4 else s[: r.int(0, len(s))])
        elif k <= 8:
            pieces.append(r.pick(PROSE))
        elif k == 9:
            pieces.append(r.pick(TOOL_BITS))
        else:
            pieces.append("".join(chr(r.int(0x20, 0x7E)) for _ in range(r.int(1, 4))))
    return "".join(pieces)


def read_chunks(r: Reader, text: str) -> list[str]:
    """Deltas: cut anywhere (inside markers and surrogate-free code points
    alike), with empty deltas among them."""
    cuts = sorted(r.int(0, len(text)) for _ in range(r.int(0, 12)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    if r.int(0, 3) == 0:
        chunks.insert(r.int(0, len(chunks)), "")
    return chunks


# ------------------------------------------------------------------ the format's own stream


def core_stream(parser, chunks):
    """(content, [(name, arguments)]) of ``parser`` fed ``chunks`` then ``finish()``."""
    content: list[str] = []
    calls: dict[int, list] = {}
    for res, raw in [(parser.parse_delta(c), c) for c in chunks] + [(parser.finish(), None)]:
        if res is None:
            content.append(raw)
            continue
        for d in res:
            if d.content is not None:
                content.append(d.content)
                continue
            c = calls.setdefault(d.index, [None, ""])
            if d.name is not None:
                c[0] = d.name
            c[1] += d.arguments or ""
    return "".join(content), [tuple(calls[i]) for i in sorted(calls)]


def core_consistent(make, text: str, streamed) -> bool:
    """The format's own parser gives ``streamed`` one-shot as well (a well-formed output)."""
    try:
        full = make().parse_complete(text)
    except ValueError:
        return False
    return (full.content or "") == streamed[0] and [(c.name, c.arguments) for c in full.tool_calls] == streamed[1]


def _strip(s) -> str:
    return (s or "").strip()


def _merge(calls: dict, index: int, name, args) -> None:
    c = calls.setdefault(index, [None, ""])
    if name:
        assert c[0] is None or c[0] == name, f"call {index} renamed {c[0]!r} -> {name!r}"
        c[0] = name
    c[1] += args or ""


# ------------------------------------------------------------------ vLLM

VLLM_TOOL_NAMES: list[str] = []


@functools.lru_cache(maxsize=None)
def _vllm_setup():
    from integration_targets import _vllm_tok
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    tok = _vllm_tok("qwen3")

    def tool(name, props):
        return {"type": "function", "function": {"name": name, "description": "d", "parameters": {
            "type": "object", "properties": props}}}

    tools_a = [tool("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}}),
               tool("search", {"q": {"type": "string"}})]
    tools_b = [tool("get_weather", {"city": {"type": "object"}, "q": {"type": "array"}})]
    msgs = [{"role": "user", "content": "hi"}]

    def req(**kw):
        return ChatCompletionRequest(model="m", messages=msgs, **kw)

    requests = (
        ("no tools", req()),
        ("auto", req(tools=tools_a)),
        ("auto b", req(tools=tools_b, tool_choice="auto")),
        ("none", req(tools=tools_a, tool_choice="none")),
        ("named", req(tools=tools_a, tool_choice={"type": "function", "function": {"name": "search"}})),
        ("required", req(tools=tools_a, tool_choice="required")),
    )
    return tok, requests, {"a": tools_a, "b": tools_b}


def _vllm_msg(m):
    if m is None:
        return None
    calls = []
    for tc in m.tool_calls or ():
        fn = tc.function
        calls.append((tc.index, tc.id is not None, tc.type, getattr(fn, "name", None) if fn else None,
                      getattr(fn, "arguments", None) if fn else None))
    return (m.content, getattr(m, "reasoning", None), tuple(calls))


def _vllm_oneshot(info):
    return (bool(info.tools_called), info.content,
            tuple((c.function.name, c.function.arguments, c.type) for c in info.tool_calls))


def _vllm_book(p):
    return (list(p.streamed_args_for_tool), [dict(x) for x in p.prev_tool_call_arr], p.get_remaining_unstreamed_args())


def check_vllm_tools(data: bytes) -> None:
    from reasoning_core.integrations import vllm as rcv

    tok, requests, tool_lists = _vllm_setup()
    r = Reader(data)
    name = r.pick(VLLM_TOOL_NAMES)
    cls = rcv.TOOL_PARSERS[name]
    fmt = cls.rc_format
    init_tools = tool_lists.get(r.pick(("", "a", "b")))
    case: list = [name, bool(init_tools)]
    pair = Pair(lambda: cls(tok, init_tools), case)
    fresh = True
    for _ in range(r.int(1, 3)):
        rname, req = r.pick(requests)
        text = read_output(r, fmt)
        chunks = read_chunks(r, text)
        case.append((rname, text, chunks))
        content: list[str] = []
        calls: dict[int, list] = {}
        prev = ""
        for i, ch in enumerate(chunks):
            cur = prev + ch
            ids = [] if r.bool() else list(range(len(ch)))  # text without ids, or made-up ids

            def step(p, prev=prev, cur=cur, ch=ch, ids=ids):
                return p.extract_tool_calls_streaming(prev, cur, ch, [], list(ids), list(ids), req)

            out = pair.call("extract_tool_calls_streaming", step, _vllm_msg)
            prev = cur
            if out is not None:
                content.append(out[0] or "")
                for idx, _has_id, _t, n, a in out[2]:
                    _merge(calls, idx, n, a)
            hook = r.int(0, 9)
            if hook == 0:
                case.append(("book", i))
                pair.call("bookkeeping", _vllm_book)
            elif hook == 1:
                case.append(("extract_tool_calls", i))
                pair.call("extract_tool_calls", lambda p, cur=cur: p.extract_tool_calls(cur, req), _vllm_oneshot)
        end = r.int(0, 5)
        if end <= 3:  # the engine's end of stream
            case.append("finish_streaming")
            out = pair.call("finish_streaming", lambda p: p.finish_streaming(), _vllm_msg)
            if out is not None:
                content.append(out[0] or "")
                for idx, _has_id, _t, n, a in out[2]:
                    _merge(calls, idx, n, a)
            if end == 0:
                case.append("finish_streaming again")
                again = pair.call("finish_streaming again", lambda p: p.finish_streaming(), _vllm_msg)
                assert again is None or (not again[0] and not again[2]), f"a second finish gave {again!r}\n{case!r}"
            if fresh:
                _vllm_oracles(pair, cls, fmt, req, rname, text, chunks, "".join(content), calls, case)
        fresh = False  # the instance is reused (after its end of stream, or abandoned mid-stream)
        if r.int(0, 3) == 0:
            case.append("new instance")
            pair = Pair(lambda: cls(tok, init_tools), case)
            fresh = True


def _vllm_oracles(pair, cls, fmt, req, rname, text, chunks, content, calls, case) -> None:
    from reasoning_core import tools as rct
    from reasoning_core.integrations import vllm as rcv

    got = [tuple(calls[i]) for i in sorted(calls)]
    STATS["checked"] += 1
    STATS["with calls"] += bool(calls)
    if getattr(req, "tool_choice", None) == "none":
        assert (content, got) == (text, []), f"tool_choice='none' must pass the text through\n{case!r}"
        return
    # whatever the chunks, the same content and calls as the whole response in one delta
    q = pair.make()
    whole: list[str] = []
    whole_calls: dict[int, list] = {}
    for m in (q.extract_tool_calls_streaming("", text, text, [], [], [], req), q.finish_streaming()):
        m = _vllm_msg(m)
        if m is not None:
            whole.append(m[0] or "")
            for idx, _has_id, _t, n, a in m[2]:
                _merge(whole_calls, idx, n, a)
    assert ("".join(whole), whole_calls) == (content, calls), \
        f"streamed {content!r} {calls!r} != {''.join(whole)!r} {whole_calls!r} in one delta\n{case!r}"
    inst = pair.first
    schemas = rcv._tool_schemas(getattr(req, "tools", None) or inst.tools)

    def make():
        p = rct.create(fmt)
        if schemas:
            p.set_streaming_tool_schemas(schemas)
        return p

    if cls.__mro__[1] in set(rcv._TOOL_BASES.values()):
        # vLLM's own rules for these names (a group read whole, blocks checked against
        # the request's tools, calls to unknown tools kept as text, dots' blocks streamed
        # whole, apertus's one-shot text joined by a newline): the format's stream
        # is not the oracle; tests/integrations/test_vllm_tool_rules.py compares them
        # with vLLM's classes
        return
    want = core_stream(make(), chunks)
    assert got == want[1], f"streamed calls {got!r} != the format's {want[1]!r}\n{case!r}"
    if not got or not inst._ws_drop:
        assert content == want[0], f"streamed content {content!r} != the format's {want[0]!r}\n{case!r}"
    else:
        assert _strip(content) == _strip(want[0]), f"content {content!r} != {want[0]!r} (whitespace aside)\n{case!r}"
    # what vLLM's serving layer reads at the end of the stream
    args, prev, rest = pair.call("bookkeeping", _vllm_book)
    assert rest == ""
    for i, (n, a) in enumerate(got):
        assert i < len(args) and args[i] == a, f"streamed_args_for_tool {args!r} != streamed {got!r}\n{case!r}"
        assert prev[i].get("name") == n and prev[i].get("arguments", "") == a, \
            f"prev_tool_call_arr {prev!r} != streamed {got!r}\n{case!r}"
    if core_consistent(make, text, want):
        STATS["one-shot"] += 1
        one = pair.call("extract_tool_calls", lambda p: p.extract_tool_calls(text, req), _vllm_oneshot)
        if issubclass(cls, rcv._SchemaFixedVllm):
            # vLLM's parsers of these names correct each value against the request's
            # schema as it completes (streamed too), and open a lone arguments/input
            # wrapper one-shot only: the same calls, names compared
            assert [n for n, _a, _ in one[2]] == [n for n, _a in got], \
                f"one-shot calls {one!r} != streamed {got!r}\n{case!r}"
        else:
            assert [(n, a) for n, a, _ in one[2]] == got, f"one-shot calls {one!r} != streamed {got!r}\n{case!r}"
        assert one[0] == bool(got)
        assert _strip(one[1]) == _strip(content), f"one-shot content {one[1]!r} != streamed {content!r}\n{case!r}"


# ------------------------------------------------------------------ SGLang

SGLANG_TOOL_NAMES: list[str] = []


@functools.lru_cache(maxsize=None)
def _sglang_tools():
    from sglang.srt.entrypoints.openai.protocol import Function, Tool

    def tool(name, props):
        return Tool(type="function", function=Function(name=name, description="d", parameters={
            "type": "object", "properties": props}))

    return {
        "none": [],
        "a": [tool("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}}),
              tool("search", {"q": {"type": "string"}})],
        "b": [tool("search", {"q": {"type": "object"}}), tool("get_weather", {"city": {"type": "array"}})],
    }


def _fc(res):
    return (res.normal_text, tuple((c.tool_index, c.name, c.parameters) for c in res.calls))


def _fc_tuple(res):
    normal, calls = res
    return (normal, tuple((c.tool_index, c.name, c.parameters) for c in calls))


def check_sglang_tools(data: bytes) -> None:
    from reasoning_core.integrations import sglang as rcs
    from sglang.srt.function_call.function_call_parser import FunctionCallParser

    r = Reader(data)
    name = r.pick(SGLANG_TOOL_NAMES)
    cls = rcs.TOOL_DETECTORS[name]
    fmt = cls.tool_format
    via_parser = r.bool()  # SGLang's FunctionCallParser around the detector, or the detector directly
    tname = r.pick(("a", "a", "b", "none"))
    tools = _sglang_tools()[tname]
    case: list = [name, via_parser, tname]
    if via_parser:
        pair = Pair(lambda: FunctionCallParser(tools, f"rc_{name}"), case)
        det = lambda p: p.detector  # noqa: E731
    else:
        pair = Pair(lambda: cls(), case)
        det = lambda p: p  # noqa: E731
    fresh = True
    for _ in range(r.int(1, 3)):
        text = read_output(r, fmt)
        chunks = read_chunks(r, text)
        case.append((text, chunks))
        normal: list[str] = []
        calls: dict[int, list] = {}
        for i, ch in enumerate(chunks):
            if via_parser:
                out = pair.call("parse_stream_chunk", lambda p, ch=ch: p.parse_stream_chunk(ch), _fc_tuple)
            else:
                out = pair.call("parse_streaming_increment",
                                lambda p, ch=ch: p.parse_streaming_increment(ch, tools), _fc)
            normal.append(out[0])
            for idx, n, a in out[1]:
                _merge(calls, idx, n, a)
            hook = r.int(0, 11)
            if hook == 0:
                case.append(("detect_and_parse", i))
                pair.call("detect_and_parse", lambda p: det(p).detect_and_parse(text, tools), _fc)
            elif hook == 1:
                case.append(("book", i))
                pair.call("bookkeeping", lambda p: (list(det(p).streamed_args_for_tool),
                                                    list(det(p).prev_tool_call_arr)))
            elif hook == 2:
                case.append(("has_tool_call", i))
                pair.call("has_tool_call", lambda p: bool(det(p).has_tool_call(text)))
        end = r.int(0, 5)
        if end <= 3:
            case.append("end of stream")
            if via_parser:
                out = pair.call("parse_stream_end", lambda p: p.parse_stream_end(), _fc_tuple)
            else:
                out = pair.call("finish", lambda p: p.finish(tools), _fc)
            normal.append(out[0])
            for idx, n, a in out[1]:
                _merge(calls, idx, n, a)
            if end == 0:
                again = pair.call("end of stream again", lambda p: det(p).finish(tools), _fc)
                assert again == ("", ()), f"a second end of stream gave {again!r}\n{case!r}"
            if fresh:
                _sglang_oracles(pair, det, cls, fmt, tools, via_parser, text, chunks, "".join(normal), calls, case)
        fresh = False
        if r.int(0, 3) == 0:
            case.append("new instance")
            pair = Pair(lambda: FunctionCallParser(tools, f"rc_{name}") if via_parser else cls(), case)
            fresh = True


def _sglang_oracles(pair, det, cls, fmt, tools, via_parser, text, chunks, normal, calls, case) -> None:
    from reasoning_core.integrations import sglang as rcs

    got = [tuple(calls[i]) for i in sorted(calls)]
    STATS["checked"] += 1
    STATS["with calls"] += bool(calls)
    if via_parser and not tools and not det(pair.first).parses_without_tools():
        assert (normal, got) == (text, []), f"no tools: SGLang passes the text through\n{case!r}"
        return
    d0 = det(pair.first)
    if issubclass(cls, rcs._DotsBlocks):
        # SGLang's dots reads each block whole (tests/integrations/test_sglang_dots.py
        # compares it with SGLang's detector): whatever the chunking, the stream gives
        # what one-shot gives (the same reader over the whole text), only listed tools
        one = cls().detect_and_parse(text, tools)
        assert normal == one.normal_text, f"streamed text {normal!r} != one-shot {one.normal_text!r}\n{case!r}"
        want = [(c.name, json.loads(c.parameters)) for c in one.calls]
        assert [(n, json.loads(a)) for n, a in got] == want, f"streamed calls {got!r} != one-shot {want!r}\n{case!r}"
        listed = {rcs._tool_name_of(t) for t in tools}
        assert rcs._forward_unknown() or all(n in listed for n, _a in got), f"unlisted tool in {got!r}\n{case!r}"
        args, prev = pair.call("bookkeeping", lambda p: (list(det(p).streamed_args_for_tool),
                                                         list(det(p).prev_tool_call_arr)))
        assert [(p["name"], a) for p, a in zip(prev, args)] == got, f"bookkeeping {prev!r} {args!r}\n{case!r}"
        return

    def make():
        p = d0._new_parser(cls.undeclared_stream)
        d0._set_schemas(p, tools)
        return p

    want = core_stream(make(), chunks)
    listed = {rcs._tool_name_of(t) for t in tools}
    keep = [c for c in want[1] if c[0] in listed or not cls.stream_drop_unknown or rcs._forward_unknown()]
    assert got == keep, f"streamed calls {got!r} != the format's {keep!r} (of {want[1]!r})\n{case!r}"
    want_text = want[0]
    if getattr(cls, "stream_drop_ws_after_call", False) and got:
        # SGLang's qwen25/qwen: whitespace after a call is dropped while streaming
        normal_cmp, want_cmp = "".join(normal.split()), "".join(want_text.split())
    else:
        normal_cmp, want_cmp = normal, want_text
    assert normal_cmp == want_cmp, f"streamed text {normal!r} != the format's {want_text!r}\n{case!r}"
    # whatever the chunks (the qwen25/qwen whitespace rule included), the text is
    # exactly what the whole response streamed in one chunk gives
    q = cls()
    whole = q.parse_streaming_increment(text, tools).normal_text + q.finish(tools).normal_text
    assert normal == whole, f"streamed text {normal!r} != {whole!r} streamed in one chunk\n{case!r}"
    args, prev = pair.call("bookkeeping", lambda p: (list(det(p).streamed_args_for_tool),
                                                     list(det(p).prev_tool_call_arr)))
    for i, (n, a) in enumerate(got):
        assert args[i] == a, f"streamed_args_for_tool {args!r} != streamed {got!r}\n{case!r}"
        assert prev[i]["name"] == n, f"prev_tool_call_arr {prev!r} != streamed {got!r}\n{case!r}"
    if not core_consistent(make, text, want):
        return
    # one-shot: the same calls (SGLang's one-shot rule for unlisted tools), the
    # same text up to SGLang's whitespace shaping
    STATS["one-shot"] += 1
    if via_parser:
        one = pair.call("parse_non_stream", lambda p: p.parse_non_stream(text), _fc_tuple)
    else:
        one = pair.call("detect_and_parse", lambda p: p.detect_and_parse(text, tools), _fc)
    one_want, prefix_bad = want[1], False
    bot, eot = "<minimax:tool_call>", "</minimax:tool_call>"
    if getattr(cls, "oneshot_unclosed_is_text", False) and bot in text and eot not in text[text.rindex(bot):]:
        # SGLang's minimax-m2 detector keeps a last block it never closes as
        # text one-shot (docs/engines/sglang.md): only the calls before it
        try:
            one_want = [(c.name, c.arguments) for c in make().parse_complete(text[:text.rindex(bot)]).tool_calls]
        except ValueError:
            # markup before it that no call parses from: one-shot gives the
            # whole response as text, where streaming drops the unclosed block
            one_want, prefix_bad = [], True
    keep1 = [c for c in one_want if c[0] in listed or not cls.drop_unknown or rcs._forward_unknown()]
    assert [n for _i, n, _a in one[1]] == [n for n, _a in keep1], f"one-shot {one!r} != {keep1!r}\n{case!r}"
    if cls.undeclared_oneshot == cls.undeclared_stream:
        assert [json.loads(a) for _i, _n, a in one[1]] == [json.loads(a) for _n, a in keep1], \
            f"one-shot arguments {one!r} != streamed {keep1!r}\n{case!r}"
    if prefix_bad:
        assert one[0] == text, f"one-shot text {one[0]!r} != the response {text!r}\n{case!r}"
        return
    if via_parser and not one[1] and not pair.first.has_tool_call(text):
        return  # SGLang's gate: a response it sees no call in is returned as written
    one_text = one[0]
    opener = "<minimax:tool_call>"
    if getattr(cls, "sglang_name", "") == "minimax-m2" and one_text and opener in one_text \
            and "</minimax:tool_call>" not in one_text[one_text.rindex(opener):]:
        # SGLang's minimax-m2 detector keeps a last block it never closes as text one-shot
        # (docs/engines/sglang.md); streaming holds it, and releases it as text at the end
        # only when our parser does (a call it opened there that cannot complete)
        cut = one_text.rindex(opener)
        try:
            released = (make().parse_complete(text).content or "").endswith(one_text[cut:])
        except ValueError:
            released = False
        if not released:
            one_text = one_text[:cut]
    assert _strip(one_text) == _strip(normal), f"one-shot text {one[0]!r} != streamed {normal!r}\n{case!r}"


# ------------------------------------------------------------------ MAX

MAX_TOOL_NAMES: list[str] = []
MAX_SCHEMAS = (None, {"get_weather": {"type": "object", "properties": {"city": {"type": "string"},
                                                                        "days": {"type": "integer"}}}},
               {"get_weather": {"properties": {"city": {"type": "object"}}}, "search": {"parameters": {}}})


def _max_deltas(out):
    if out is None:
        return None
    return tuple((d.index, d.id is not None, d.name, d.arguments, d.content) for d in out)


def _max_resp(res):
    return (res.content, tuple((c.name, c.arguments, c.id is not None) for c in res.tool_calls))


def check_max_tools(data: bytes) -> None:
    from reasoning_core.integrations import max as rcm

    r = Reader(data)
    name = r.pick(MAX_TOOL_NAMES)
    cls = rcm.TOOL_PARSERS[name]
    case: list = [name]
    pair = Pair(cls, case)
    fresh = True
    schemas = None
    for _ in range(r.int(1, 3)):
        if r.bool():
            schemas = r.pick(MAX_SCHEMAS)
            case.append(("schemas", schemas))
            pair.call("set_streaming_tool_schemas", lambda p: p.set_streaming_tool_schemas(schemas))
        text = read_output(r, cls.tool_format)
        chunks = read_chunks(r, text)
        case.append((text, chunks))
        content: list[str] = []
        calls: dict[int, list] = {}
        for i, ch in enumerate(chunks):
            out = pair.call("parse_delta", lambda p, ch=ch: p.parse_delta(ch), _max_deltas)
            if out is None:
                content.append(ch)
            else:
                for idx, _h, n, a, c in out:
                    if c is not None:
                        content.append(c)
                    else:
                        _merge(calls, idx, n, a)
            if r.int(0, 9) == 0:
                case.append(("parse_complete", i))
                # MAX's parsers raise ValueError on a call section with no valid call (its route catches it)
                pair.call("parse_complete", lambda p: p.parse_complete(text), _max_resp, allow=(ValueError,))
        end = r.int(0, 7)
        flushed = False
        if end <= 2:
            case.append("finish")
            for idx, _h, n, a, c in pair.call("finish", lambda p: p.finish(), _max_deltas):
                if c is not None:
                    content.append(c)
                else:
                    _merge(calls, idx, n, a)
        elif end <= 4:
            case.append("flush")  # MAX's chat route: held text only
            flushed = True
            held = pair.call("flush", lambda p: p.flush())
            assert held is None or (isinstance(held, str) and held), f"flush gave {held!r}\n{case!r}"
            content.append(held or "")
        elif end == 5:
            case.append("reset")
            pair.call("reset", lambda p: p.reset())
        if end <= 4:
            again = pair.call("end again", lambda p: (p.finish(), p.flush()), lambda x: (_max_deltas(x[0]), x[1]))
            assert again == ((), None), f"a second end of stream gave {again!r}\n{case!r}"
            if fresh:
                _max_oracles(pair, cls, schemas, text, chunks, "".join(content), calls, flushed, case)
        fresh = end <= 5  # ended or reset: the next stream is a fresh one
        if r.int(0, 5) == 0:
            case.append("new instance")
            pair = Pair(cls, case)
            schemas, fresh = None, True


def _max_oracles(pair, cls, schemas, text, chunks, content, calls, flushed, case) -> None:
    from reasoning_core import tools as rct

    def make():
        p = rct.create(cls.tool_format)
        p.set_streaming_tool_schemas(dict(schemas) if schemas is not None else None)
        return p

    got = [tuple(calls[i]) for i in sorted(calls)]
    want = core_stream(make(), chunks)
    STATS["checked"] += 1
    STATS["with calls"] += bool(calls)
    if flushed:  # flush() carries text only: a call still open at the end keeps what was streamed
        assert content == want[0], f"streamed+flushed content {content!r} != the format's {want[0]!r}\n{case!r}"
        assert [n for n, _ in got] == [n for n, _ in want[1]][: len(got)], f"{got!r} vs {want[1]!r}\n{case!r}"
        return
    assert (content, got) == want, f"streamed {(content, got)!r} != the format's {want!r}\n{case!r}"
    if core_consistent(make, text, want):
        STATS["one-shot"] += 1
        one = pair.call("parse_complete", lambda p: p.parse_complete(text), _max_resp)
        assert [(n, a) for n, a, _ in one[1]] == got, f"one-shot {one!r} != streamed {got!r}\n{case!r}"
        want_content = _strip(content) if got and cls.trims_content else content
        assert (one[0] or "") == want_content, f"one-shot content {one[0]!r} != {want_content!r}\n{case!r}"


# ------------------------------------------------------------------ vllm-mlx

MLX_TOOL_NAMES: list[str] = []


def _mlx_out(out):
    if out is None:
        return None
    # (a class that streams a call as it reads it sends pieces without a name or id)
    calls = tuple((c["index"], bool(c.get("id")), c.get("type"), c["function"].get("name"),
                   c["function"].get("arguments")) for c in out.get("tool_calls", ()))
    return (out.get("content"), calls, tuple(sorted(set(out) - {"content", "tool_calls"})))


def _mlx_oneshot(info):
    return (bool(info.tools_called), info.content, tuple((c["name"], c["arguments"]) for c in info.tool_calls))


def check_mlx_tools(data: bytes) -> None:
    from reasoning_core.integrations import vllm_mlx as rcx

    r = Reader(data)
    name = r.pick(MLX_TOOL_NAMES)
    cls = rcx.TOOL_PARSERS[name]
    case: list = [name]
    pair = Pair(lambda: cls(None), case)
    fresh = True
    for _ in range(r.int(1, 3)):
        text = read_output(r, cls.tool_format)
        chunks = read_chunks(r, text)
        case.append((text, chunks))
        content: list[str] = []
        calls: list[tuple] = []
        by_index: dict[int, list] = {}  # the calls merged by index (a class may stream one in pieces)
        prev = ""
        for i, ch in enumerate(chunks):
            out = pair.call("extract_tool_calls_streaming",
                            lambda p, prev=prev, ch=ch: p.extract_tool_calls_streaming(prev, prev + ch, ch), _mlx_out)
            prev += ch
            if out is not None:
                assert out[2] == (), f"unexpected keys {out[2]!r}\n{case!r}"
                content.append(out[0] or "")
                calls += [(n, a) for _i, _h, _t, n, a in out[1]]
                for idx, _h, _t, n, a in out[1]:
                    _merge(by_index, idx, n, a)
            if r.int(0, 9) == 0:
                case.append(("extract_tool_calls", i))
                pair.call("extract_tool_calls", lambda p: p.extract_tool_calls(text), _mlx_oneshot)
        end = r.int(0, 5)
        if end <= 3:
            case.append("finalize_streaming")
            out = pair.call("finalize_streaming", lambda p: p.finalize_streaming(prev), _mlx_out)
            if out is not None:
                content.append(out[0] or "")
                calls += [(n, a) for _i, _h, _t, n, a in out[1]]
                for idx, _h, _t, n, a in out[1]:
                    _merge(by_index, idx, n, a)
            if fresh and not issubclass(cls, rcx.RcMlxGemma4ToolParser):
                # whatever the chunks, what a fresh instance streams for the whole
                # output in one delta (gemma4 aside: as vllm-mlx's, from the delta in
                # which a fallback form's marker (call:, tool_code) shows, nothing is
                # content, that delta's text before the marker included)
                q = cls(None)
                one = [_mlx_out(q.extract_tool_calls_streaming("", text, text)) if text else None,
                       _mlx_out(q.finalize_streaming(text))]
                whole: dict[int, list] = {}
                for o in one:
                    for idx, _h, _t, n, a in (o[1] if o is not None else ()):
                        _merge(whole, idx, n, a)
                whole_content = "".join((o[0] or "") for o in one if o is not None)
                assert ("".join(content), by_index) == (whole_content, whole), \
                    f"streamed {(''.join(content), by_index)!r} != one delta {(whole_content, whole)!r}\n{case!r}"
            if fresh and name in rcx._TOOL_NAMES:
                # the format's own stream is the oracle for a class over one format; the
                # composed classes (several forms, vllm-mlx's rules per name) are checked
                # against vllm-mlx's parsers in tests/integrations/test_vllm_mlx_tools.py
                _mlx_oracles(cls, text, chunks, "".join(content), calls, case)
        elif end == 4:
            case.append("reset")
            pair.call("reset", lambda p: p.reset())
        fresh = end == 4
        if r.int(0, 3) == 0:
            case.append("new instance")
            pair = Pair(lambda: cls(None), case)
            fresh = True


def _mlx_oracles(cls, text, chunks, content, calls, case) -> None:
    """vllm-mlx gets each call whole once it closes (a broken one is not sent)."""
    from reasoning_core import tools as rct

    make = functools.partial(rct.create, cls.tool_format)
    want = core_stream(make(), chunks)
    STATS["checked"] += 1
    STATS["with calls"] += bool(calls)
    assert content == want[0], f"streamed content {content!r} != the format's {want[0]!r}\n{case!r}"
    want_calls = [(n, a or "{}") for n, a in want[1]]
    if core_consistent(make, text, want):
        assert calls == want_calls, f"streamed calls {calls!r} != the format's {want_calls!r}\n{case!r}"
        if "</think>" not in text:  # (one-shot drops think blocks first, as vllm-mlx's parsers do)
            STATS["one-shot"] += 1
            one = _mlx_oneshot(cls(None).extract_tool_calls(text))
            assert list(one[2]) == calls and one[0] == bool(calls), f"one-shot {one!r} != streamed {calls!r}\n{case!r}"
            want_content = (_strip(content) or None) if calls else content
            assert one[1] == want_content, f"one-shot content {one[1]!r} != {want_content!r}\n{case!r}"
    else:
        it = iter(want_calls)
        assert all(c in it for c in calls), f"streamed calls {calls!r} not among the format's {want_calls!r}\n{case!r}"


TARGETS = {"vllm_tools": check_vllm_tools, "sglang_tools": check_sglang_tools, "max_tools": check_max_tools,
           "mlx_tools": check_mlx_tools}


def prepare(target: str) -> None:
    """Import the engine, build the requests and the call templates before fuzzing starts."""
    global VLLM_TOOL_NAMES, SGLANG_TOOL_NAMES, MAX_TOOL_NAMES, MLX_TOOL_NAMES
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if target == "vllm_tools":
            from reasoning_core.integrations import vllm as rcv

            _vllm_setup()
            VLLM_TOOL_NAMES = sorted(rcv.TOOL_PARSERS)
            fmts = {c.rc_format for c in rcv.TOOL_PARSERS.values()}
        elif target == "sglang_tools":
            from reasoning_core.integrations import sglang as rcs

            rcs.register()
            _sglang_tools()
            SGLANG_TOOL_NAMES = sorted(rcs.TOOL_DETECTORS)
            fmts = {c.tool_format for c in rcs.TOOL_DETECTORS.values()}
        elif target == "max_tools":
            from reasoning_core.integrations import max as rcm

            MAX_TOOL_NAMES = sorted(rcm.TOOL_PARSERS)
            fmts = {c.tool_format for c in rcm.TOOL_PARSERS.values()}
        else:
            from reasoning_core.integrations import vllm_mlx as rcx

            MLX_TOOL_NAMES = sorted(rcx.TOOL_PARSERS)
            fmts = {c.tool_format for c in rcx.TOOL_PARSERS.values()}
        for f in fmts:
            call_template(f)
        for be in BACKENDS:
            _scanner_patches(be)
