"""Differential: the formats of ``reasoning_core.tools._more_formats`` under every
vLLM and SGLang name it wires, against the engine's own parser of that name.

Well-formed outputs (calls with nested / unicode / number arguments, several calls,
content before them) are generated per format, then parsed one-shot and streamed
by both: vLLM through ``extract_tool_calls`` and ``extract_tool_calls_streaming``
one token per step (its serving pattern), SGLang through ``detect_and_parse`` and
``parse_streaming_increment`` in random text chunks. The calls must be equal
(names, arguments as JSON values, SGLang's tool_index) and the content equal up
to the whitespace the engines trim around tool markup. Where an engine loses text
on purpose the case is an explicit strict xfail. Skips without the engines.
"""

from __future__ import annotations

import json
import random
import re
import warnings

import pytest

from sglang_max_helpers import import_sglang_parsers
from vllm_helpers import chat_request, detokenize_steps, import_vllm, vllm_tokenizer

_rp, rcs = import_sglang_parsers()  # skips without SGLang
import_vllm()  # skips without vLLM

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from sglang.srt.entrypoints.openai.protocol import Function, Tool
    from sglang.srt.function_call.function_call_parser import FunctionCallParser
    from vllm.tool_parsers import ToolParserManager

    from reasoning_core.integrations import vllm as rcv
    from reasoning_core.tools import _more_formats as more

SGL_NATIVE = {k: v for k, v in FunctionCallParser.ToolCallParserEnum.items() if not k.startswith("rc_")}

D = "｜DSML｜"
NAMES = ["get_weather", "search", "f", "tool_1"]

# ------------------------------------------------------------------ generated outputs

_TEXT = list("ab xyz Q09_-.,:;!?'é中😀") + ["\t", "  ", "=", "(", ")", "/"]


def _text(rnd, most=12):
    return "".join(rnd.choice(_TEXT) for _ in range(rnd.randint(0, most)))


def _plain_string(rnd):
    """A string value no format can read as anything else: no markup, no
    surrounding whitespace, not JSON."""
    while True:
        s = _text(rnd).strip()
        if not s or (len(s) > 1 and s[0] == s[-1] and s[0] in "'\""):
            continue  # (SGLang's GLM-4.7 unquotes a string value written in quotes)
        try:
            json.loads(s)
        except ValueError:
            return s


def _value(rnd, depth=0):
    kinds = ["str", "int", "float", "bool", "null"] + (["list", "dict"] if depth < 2 else [])
    k = rnd.choice(kinds)
    if k == "str":
        return _plain_string(rnd) if depth == 0 else _text(rnd) + rnd.choice(['"', "\\", "\n", "<b>", ""])
    if k == "int":
        return rnd.choice([rnd.randint(-5, 5), rnd.randint(-10**9, 10**9)])
    if k == "float":
        return rnd.choice([1.5, -0.25, 3.0e-5, 12345.678])
    if k == "bool":
        return rnd.random() < 0.5
    if k == "null":
        return None
    if k == "list":
        return [_value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))]
    return {rnd.choice(["k", "日本", "a b", "x-y"]): _value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))}


# each parameter has one JSON Schema type (every request lists the tools' schemas)
SCHEMA = {"city": "string", "q": "string", "n": "integer", "x": "number", "flag": "boolean", "opts": "object",
          "items": "array"}


def _typed(rnd, t):
    if t == "string":
        return _plain_string(rnd)
    if t == "integer":
        return rnd.choice([rnd.randint(-5, 5), rnd.randint(-10**9, 10**9)])
    if t == "number":
        return rnd.choice([1.5, -0.25, 3.0e-5, 12345.678, 7])
    if t == "boolean":
        return rnd.random() < 0.5
    if t == "array":
        return [_value(rnd, 1) for _ in range(rnd.randint(0, 3))]
    return {rnd.choice(["k", "日本", "a b", "x-y"]): _value(rnd, 1) for _ in range(rnd.randint(0, 3))}


def _args(rnd):
    return {k: _typed(rnd, SCHEMA[k]) for k in rnd.sample(sorted(SCHEMA), rnd.randint(0, 4))}


def _bare(v):
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _gemma(v):
    if isinstance(v, str):
        return '<|"|>' + v + '<|"|>'
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{_gemma(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(_gemma(x) for x in v) + "]"
    return json.dumps(v)


def _gemma_safe(v):
    """Gemma 4 keys are bare words and strings may not hold the delimiter's pieces."""
    if isinstance(v, dict):
        return {re.sub(r"\W", "_", k, flags=re.ASCII) or "k": _gemma_safe(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_gemma_safe(x) for x in v]
    if isinstance(v, str):
        return v.replace("\\", "").replace('"', "").replace("<", "").replace("\n", " ")
    if v is None or v == 3.0e-5:
        return 1  # SGLang reads a nested bare null or exponent as a string (test_sglang_gemma4_nested_bare_values)
    return v


def _dsml(block, inv, par, calls):
    out = []
    for name, args in calls:
        ps = "".join(f'<{D}{par} name="{k}" string="{"true" if isinstance(v, str) else "false"}">{_bare(v)}'
                     f"</{D}{par}>\n" for k, v in args.items())
        out.append(f'<{D}{inv} name="{name}">\n{ps}</{D}{inv}>\n')
    return f"\n\n<{D}{block}>\n" + "".join(out) + f"</{D}{block}>"


def render(fmt, calls, rnd):
    """The call text for ``calls`` ([(name, args)]) as the format's template writes it."""
    if fmt == "hermes":
        return "".join(f"<tool_call>\n{json.dumps({'name': n, 'arguments': a}, ensure_ascii=False)}\n</tool_call>\n"
                       for n, a in calls)
    if fmt == "qwen3_coder":
        return "".join("<tool_call>\n<function=" + n + ">\n"
                       + "".join(f"<parameter={k}>\n{_bare(v)}\n</parameter>\n" for k, v in a.items())
                       + "</function>\n</tool_call>\n" for n, a in calls)
    if fmt == "llama3_json":
        return "; ".join(json.dumps({"name": n, "parameters": a}, ensure_ascii=False) for n, a in calls)
    if fmt == "deepseek_v32":
        return _dsml("function_calls", "invoke", "parameter", calls)
    if fmt == "deepseek_v41":
        return _dsml(" calls", " invoke", " parameter", calls)
    if fmt == "deepseekv4":
        return _dsml("tool_calls", "invoke", "parameter", calls)
    if fmt == "spark25":
        return "".join(f"<tool_call>{n}\n" + "".join(f"<arg_key>{k}</arg_key><arg_value>{_bare(v)}</arg_value>\n"
                                                     for k, v in a.items()) + "</tool_call>" for n, a in calls)
    if fmt in ("glm47", "iquest_q1"):
        tag = "tool_call" if fmt == "glm47" else "iquest_tool_call"
        return "".join(f"<{tag}>{n}" + "".join(f"<arg_key>{k}</arg_key><arg_value>{_bare(v)}</arg_value>"
                                              for k, v in a.items()) + f"</{tag}>" for n, a in calls)
    if fmt == "gemma4":
        return "".join(f"<|tool_call>call:{n}{_gemma(a)}<tool_call|>" for n, a in calls)
    if fmt == "inkling":
        return "".join(f"{n}<|content_invoke_tool_json|>"
                       + json.dumps({"name": n, "args": a}, ensure_ascii=False, separators=(",", ":"))
                       for n, a in calls)
    if fmt == "beam":
        head = "<|channel|>final<|message|>ok<|end|><|start|>assistant" if rnd.random() < 0.5 else ""
        return head + "<|end|><|start|>assistant".join(
            f" to={n}<|channel|>analysis <|constrain|>xml<|message|>"
            + "".join(f'<rfl:parameter name="{k}">\n{_bare(v)}\n</rfl:parameter>' for k, v in a.items())
            for n, a in calls) + "<|call|>"
    if fmt == "muse":
        msgs = ["<|start|>assistant to=self<|message|>Let me see.<|eom|>"] if rnd.random() < 0.5 else []
        for n, a in calls:  # the template writes a listed tool "f" as the recipient "f.*": "f.f" in the call
            inv = rnd.choice([n, f"{n}.{n}", f"functions.{n}"])
            msgs.append(f"<|start|>assistant to={n}<|message|><atem:function_calls>\n<atem:invoke name=\"{inv}\">\n"
                        + "".join(f'<atem:parameter name="{k}">{_bare(v)}</atem:parameter>\n' for k, v in a.items())
                        + "</atem:invoke>\n</atem:function_calls><|eom|>")
        return "".join(msgs) + "<|start|>assistant to=user<|message|>Done.<|eot|>"
    if fmt == "inkling_framed":
        return "".join(f"<|message_model|>{n}<|content_invoke_tool_json|>"
                       + json.dumps({"name": n, "args": a}, ensure_ascii=False, separators=(",", ":"))
                       + "<|end_message|>" for n, a in calls)
    if fmt == "muse_glimmer":
        return "<atem:function_calls>\n" + "".join(
            f'<atem:invoke name="{n}">\n'
            + "".join(f'<atem:parameter name="{k}">{_bare(v)}</atem:parameter>\n' for k, v in a.items())
            + "</atem:invoke>\n" for n, a in calls) + "</atem:function_calls>"
    if fmt == "minicpm5":
        return "".join(f'<function name="{n}">' + "".join(f'<param name="{k}">{_xml(_bare(v), rnd)}</param>'
                                                          for k, v in a.items()) + "</function>" for n, a in calls)
    raise KeyError(fmt)


def _xml(text, rnd):
    if "\n" in text or rnd.random() < 0.2:
        return "<![CDATA[" + text + "]]>"
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# engine name -> (our sample writer, the special tokens of its vocabulary)
_DSML_TOKS = tuple(f"{o}{D}{t}>" for t in ("function_calls", "tool_calls", " calls", "invoke", " invoke",
                                               "parameter", " parameter") for o in ("<", "</"))
VLLM = {
    "qwen3_json": ("hermes", ("<tool_call>", "</tool_call>", "<think>", "</think>")),
    "qwen3_xml": ("qwen3_coder", ("<tool_call>", "</tool_call>", "<think>", "</think>")),
    "step3p5": ("qwen3_coder", ("<tool_call>", "</tool_call>", "<think>", "</think>")),
    "llama4_json": ("llama3_json", ("<|python_tag|>", "<|eom_id|>")),
    "deepseek_v32": ("deepseek_v32", ("<think>", "</think>")),
    "deepseek_v41": ("deepseek_v41", ("<think>", "</think>")),
    "minicpm5": ("minicpm5", ("<think>", "</think>")),
}
SGLANG = {
    "step3p5": "qwen3_coder", "nanbeige": "qwen3_coder", "deepseekv32": "deepseek_v32", "deepseekv4": "deepseekv4",
    "deepseekv41": "deepseek_v41", "glm47": "glm47", "gemma4": "gemma4",
    "trinity": "hermes", "iquest_q1": "iquest_q1", "minicpm5": "minicpm5", "spark25": "spark25",
    "inkling": "inkling_framed", "beam": "beam", "muse": "muse",
}


def test_every_wired_name_is_tested_here():
    assert sorted(VLLM) == sorted(more.VLLM_NAMES)
    assert sorted(SGLANG) == sorted(more.SGLANG_NAMES)
    for n in VLLM:
        assert n in rcv.TOOL_PARSERS and n in ToolParserManager.list_registered()
    for n in SGLANG:
        assert n in rcs.TOOL_DETECTORS and n in SGL_NATIVE


def case(fmt, seed, names=NAMES, unlisted=()):
    rnd = random.Random(f"{fmt}-{seed}")
    calls = []
    for _ in range(rnd.randint(1, 3)):
        name = rnd.choice(names)
        a = _args(rnd)
        if name in unlisted:  # no schema: only strings read the same in every format
            a = {k: v for k, v in a.items() if SCHEMA[k] == "string"}
        calls.append((name, _gemma_safe(a) if fmt == "gemma4" else a))
    before = "" if fmt == "llama3_json" else _text(rnd).strip() + rnd.choice(["", " ", "\n", ". "])
    if fmt == "inkling" and before and before[-1].isalnum():
        before += "."  # the name written before the marker is the call's header
    if fmt == "muse":  # content is a message of its own; the reasoning and the answer are content too
        text = f" to=commentary<|message|>{before}<|eom|>" + render(fmt, calls, rnd)
        return before, calls, text, rnd
    return before, calls, before + render(fmt, calls, rnd), rnd


def _want(calls):
    return [(n, json.loads(json.dumps(a))) for n, a in calls]


def _ws(s):
    return "".join((s or "").split())


# ------------------------------------------------------------------ SGLang

_PROPS = {k: {"type": t} for k, t in SCHEMA.items()}


def _sgl_tool(name):
    return Tool(type="function", function=Function(name=name, parameters={"type": "object", "properties": _PROPS}))


SGL_TOOLS = [_sgl_tool(n) for n in NAMES]


def _sgl_one_shot(det, text, tools):
    r = det.detect_and_parse(text, tools)
    return _ws(r.normal_text), [(c.tool_index, c.name, json.loads(c.parameters)) for c in r.calls]


def _sgl_stream(det, chunks, tools):
    normal, calls = [], {}

    def take(r):
        normal.append(r.normal_text or "")
        for c in r.calls:
            d = calls.setdefault(c.tool_index, {"name": None, "args": ""})
            if c.name:
                d["name"] = c.name
            d["args"] += c.parameters or ""

    for ch in chunks:
        take(det.parse_streaming_increment(ch, tools))
    fin = getattr(det, "finish", None)
    if fin is not None:
        take(fin(tools))
    return _ws("".join(normal)), [(k, calls[k]["name"], _loads(calls[k]["args"] or "{}")) for k in sorted(calls)]


def _loads(s):
    try:
        return json.loads(s)
    except ValueError:  # an engine's broken stream: kept as text, it compares unequal
        return s


def _chunks(text, rnd):
    k = rnd.randint(0, min(len(text) - 1, 30)) if len(text) > 1 else 0
    cuts = sorted(rnd.sample(range(1, len(text)), k)) if k else []
    return [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)])]


SEEDS = range(40)

# Where SGLang's own streaming disagrees with its own one-shot parse of the same
# text (a lost call or content, a value left a string). Such a chunking is not
# compared; ours must still equal the one-shot result. Any other streamed
# difference fails.
ENGINE_STREAM_DEFECTS = {
    "glm47": "a call whose end arrives split from its last value is lost",
    "step3p5": "an object parameter streams as a JSON string",
    "nanbeige": "an object parameter streams as a JSON string",
    "trinity": "content before a call is lost when a chunk ends inside <tool_call>",
    # RcToolDetector streams the call's place in the output, as the other detectors
    "gemma4": "streams tool_index = the tool's place in the request: calls reorder, two calls to one tool share "
              "a slot",
}


def _stream_check(name, text, chunks, tools, want):
    a = _sgl_one_shot(SGL_NATIVE[name](), text, tools)
    ours = _sgl_one_shot(rcs.TOOL_DETECTORS[name](), text, tools)
    sa = _sgl_stream(SGL_NATIVE[name](), chunks, tools)
    sb = _sgl_stream(rcs.TOOL_DETECTORS[name](), chunks, tools)
    assert sb[0] == ours[0] and [(n, x) for _, n, x in sb[1]] == want, (name, chunks)
    assert [i for i, _, _ in sb[1]] == list(range(len(sb[1]))), (name, chunks)
    if sa[1] != [(i, n, x) for i, (n, x) in enumerate(want)] or sa[0] != a[0]:
        assert name in ENGINE_STREAM_DEFECTS, (name, chunks, sa, a)
        return False
    assert sb == sa, (name, chunks)
    return True


@pytest.mark.parametrize("name", sorted(SGLANG))
def test_sglang_one_shot_and_streaming_equal_the_engine(name):
    fmt = SGLANG[name]
    compared = 0
    for seed in SEEDS:
        before, calls, text, rnd = case(fmt, seed)
        a = _sgl_one_shot(SGL_NATIVE[name](), text, SGL_TOOLS)
        b = _sgl_one_shot(rcs.TOOL_DETECTORS[name](), text, SGL_TOOLS)
        where = (name, seed, text)
        assert [(n, x) for _, n, x in a[1]] == _want(calls), where  # the generator writes what SGLang reads
        assert b == a, where
        compared += _stream_check(name, text, _chunks(text, rnd), SGL_TOOLS, _want(calls))
    assert compared  # at least some chunkings are compared


# SGLang leaves the text of a call to an unlisted tool in the content; RcToolDetector
# drops the call (as the other detectors do)
_UNLISTED_KEPT_AS_TEXT = pytest.mark.xfail(strict=True, reason="SGLang keeps a call to an unlisted tool as text")


@pytest.mark.parametrize("name", [pytest.param(n, marks=_UNLISTED_KEPT_AS_TEXT) if n == "minicpm5" else n
                                  for n in sorted(SGLANG)])
def test_sglang_unlisted_tools_and_tool_index_as_the_engine(name):
    """Calls to a tool the request does not list, and tool_index (the tool's place
    in the request or the call's place in the output)."""
    fmt = SGLANG[name]
    tools = list(reversed(SGL_TOOLS[:3]))  # get_weather and search listed, in another order; tool_1 unlisted
    spec = more.SGLANG_NAMES[name]
    for seed in range(12):
        before, calls, text, rnd = case(fmt, seed, names=["get_weather", "search", "tool_1"], unlisted=("tool_1",))
        a = _sgl_one_shot(SGL_NATIVE[name](), text, tools)
        b = _sgl_one_shot(rcs.TOOL_DETECTORS[name](), text, tools)
        assert b == a, (name, seed, text)
        chunks = _chunks(text, rnd)
        sa = _sgl_stream(SGL_NATIVE[name](), chunks, tools)
        sb = _sgl_stream(rcs.TOOL_DETECTORS[name](), chunks, tools)
        kept = [(n, x) for n, x in _want(calls) if n != "tool_1" or not spec[3]]
        assert [(n, x) for _, n, x in sb[1]] == kept, (name, seed, chunks)
        if sa[1] != [(i, n, x) for i, (n, x) in enumerate(kept)]:
            assert name in ENGINE_STREAM_DEFECTS, (name, chunks, sa)
        else:
            assert sb[1] == sa[1], (name, seed, chunks)


# ------------------------------------------------------------------ vLLM

V_TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": _PROPS}}}
           for n in NAMES]


def _v_calls(info):
    return [(c.function.name, json.loads(c.function.arguments)) for c in info.tool_calls]


def _v_stream(parser, tok, ids, req):
    content, calls = [], {}
    msgs = [parser.extract_tool_calls_streaming(pt, ct, dt, pi, ci, di, req)
            for dt, pt, ct, pi, ci, di in detokenize_steps(tok, ids)]
    if getattr(parser, "engine_based_streaming", False) and hasattr(parser, "finish_streaming"):
        msgs.append(parser.finish_streaming())
    for m in msgs:
        if m is None:
            continue
        content.append(m.content or "")
        for tc in m.tool_calls or ():
            slot = calls.setdefault(tc.index, {"name": "", "arguments": ""})
            if tc.function is not None:
                slot["name"] += tc.function.name or ""
                slot["arguments"] += tc.function.arguments or ""
    return _ws("".join(content)), [(c["name"], json.loads(c["arguments"] or "{}")) for _, c in sorted(calls.items())]


# vLLM's parser reports no content at all when a call was made (ours keeps it)
VLLM_DROPS_CONTENT = {"minicpm5"}
# Where vLLM's own streaming disagrees with its own one-shot parse (not compared)
VLLM_STREAM_DEFECTS = {"minicpm5": "the first call streams as content when <function is split over tokens"}


@pytest.mark.parametrize("name", sorted(VLLM))
def test_vllm_one_shot_and_streaming_equal_the_engine(name):
    fmt, specials = VLLM[name]
    tok = vllm_tokenizer(specials + _DSML_TOKS)
    req = chat_request(tools=V_TOOLS)
    for seed in range(25):
        before, calls, text, rnd = case(fmt, seed)
        theirs = ToolParserManager.get_tool_parser(name)(tok, None)
        ours = rcv.TOOL_PARSERS[name](tok, None)
        a, b = theirs.extract_tool_calls(text, req), ours.extract_tool_calls(text, req)
        where = (name, seed, text)
        assert _v_calls(a) == _want(calls), where
        assert (b.tools_called, _v_calls(b)) == (a.tools_called, _v_calls(a)), where
        if name not in VLLM_DROPS_CONTENT:
            assert _ws(b.content) == _ws(a.content), where
        else:
            # (ours: content made only of whitespace beside calls is no content, as in vLLM's other parsers)
            assert b.content == (before if before.strip() else None) and a.content is None, where
        if seed % 3:
            continue  # one token per step is slow: a third of the cases stream
        ids = list(tok.encode(text, add_special_tokens=False))
        sa = _v_stream(ToolParserManager.get_tool_parser(name)(tok, None), tok, ids, req)
        sb = _v_stream(rcv.TOOL_PARSERS[name](tok, None), tok, ids, req)
        assert sb == (_ws(b.content), _want(calls)), where
        if sa[1] != _want(calls) or (sa[0] != _ws(a.content) and name not in VLLM_DROPS_CONTENT):
            assert name in VLLM_STREAM_DEFECTS, (where, sa)
            continue
        assert sb == sa or name in VLLM_DROPS_CONTENT, where


# ------------------------------------------------------------------ where the engines lose text (ours keeps it)

_DSML_SGL = {"deepseekv32": "deepseek_v32", "deepseekv4": "deepseekv4", "deepseekv41": "deepseek_v41"}


@pytest.mark.xfail(strict=True, reason="vLLM and SGLang drop text after a DSML block (the block ends the turn); "
                                       "ours keeps it as content")
@pytest.mark.parametrize("name", sorted(_DSML_SGL) + ["v:deepseek_v32", "v:deepseek_v41"])
def test_dsml_text_after_the_block(name):
    fmt = _DSML_SGL.get(name) or name[2:]
    text = "Checking." + render(fmt, [("get_weather", {"city": "Paris"})], random.Random(0)) + " Done."
    if name.startswith("v:"):
        tok = vllm_tokenizer(VLLM[name[2:]][1] + _DSML_TOKS)
        req = chat_request(tools=V_TOOLS)
        a = ToolParserManager.get_tool_parser(name[2:])(tok, None).extract_tool_calls(text, req)
        b = rcv.TOOL_PARSERS[name[2:]](tok, None).extract_tool_calls(text, req)
        assert _v_calls(a) == _v_calls(b) == [("get_weather", {"city": "Paris"})]
        assert _ws(a.content) == _ws(b.content)
    else:
        a = _sgl_one_shot(SGL_NATIVE[name](), text, SGL_TOOLS)
        b = _sgl_one_shot(rcs.TOOL_DETECTORS[name](), text, SGL_TOOLS)
        assert a[1] == b[1] == [(0, "get_weather", {"city": "Paris"})]
        assert a == b


@pytest.mark.xfail(strict=True, reason="SGLang trims a string=\"true\" value; vLLM (and MAX) keep it byte for "
                                       "byte, as ours does")
@pytest.mark.parametrize("name", sorted(_DSML_SGL))
def test_sglang_dsml_string_value_with_surrounding_spaces(name):
    text = render(_DSML_SGL[name], [("get_weather", {"city": " Paris "})], random.Random(0))
    b = _sgl_one_shot(rcs.TOOL_DETECTORS[name](), text, SGL_TOOLS)
    assert b[1] == [(0, "get_weather", {"city": " Paris "})]
    assert _sgl_one_shot(SGL_NATIVE[name](), text, SGL_TOOLS) == b


@pytest.mark.xfail(strict=True, reason="SGLang's gemma4 reads a bare null or exponent number nested in an "
                                       "object or array as a string")
def test_sglang_gemma4_nested_bare_values():
    text = "<|tool_call>call:get_weather{opts:{a:null,b:3e-05},items:[null]}<tool_call|>"
    b = _sgl_one_shot(rcs.TOOL_DETECTORS["gemma4"](), text, SGL_TOOLS)
    assert b[1] == [(0, "get_weather", {"opts": {"a": None, "b": 3e-05}, "items": [None]})]
    assert _sgl_one_shot(SGL_NATIVE["gemma4"](), text, SGL_TOOLS) == b


def test_unserved_names_are_the_engines_own():
    assert set(more.VLLM_UNSERVED) <= set(ToolParserManager.list_registered())
    assert set(more.SGLANG_UNSERVED) <= set(SGL_NATIVE)
