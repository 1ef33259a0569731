"""Differential: the channel/markup tool formats (``reasoning_core.tools._markup_formats``)
under vLLM 0.33's and SGLang 0.5.23's names, through our integration classes,
against each engine's own parser of that name.

Well-formed outputs (calls with nested / unicode / number arguments, several
calls, content before them) are generated as each model's chat template writes
them and parsed by both: vLLM one-shot (``extract_tool_calls``) and streamed one
token per step (``extract_tool_calls_streaming``, then ``finish_streaming``);
SGLang one-shot (``detect_and_parse``) and streamed in random chunks
(``parse_streaming_increment``). Calls compare as (name, arguments as JSON);
content compares with surrounding whitespace trimmed (the engines trim it).

Where an engine loses or changes text (content after the calls) or misreads a
case, the case is an ``xfail(strict=True, raises=AssertionError)`` with the
reason; checks on our own result inside it raise RuntimeError, so a fault of
ours fails the test instead of passing as the engine's difference. Where an
engine's streaming is broken for every chunking (SGLang step3, gpt-oss), ours
streamed is compared with its one-shot result.
"""

from __future__ import annotations

import json
import random
import re
import warnings

import pytest

from vllm_helpers import chat_request, detokenize_steps, import_vllm, vllm_tokenizer

import_vllm()

from vllm.tool_parsers import ToolParserManager  # noqa: E402

from reasoning_core.integrations import vllm as rcv  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from reasoning_core.integrations import sglang as rcs  # noqa: E402  (parser-only import)
    from sglang.srt.entrypoints.openai.protocol import Function, Tool  # noqa: E402
    from sglang.srt.function_call.function_call_parser import FunctionCallParser  # noqa: E402

from reasoning_core.tools import _markup_formats as mf  # noqa: E402

SGL_NATIVE = {k: v for k, v in FunctionCallParser.ToolCallParserEnum.items() if not k.startswith("rc_")}

# ------------------------------------------------------------------ tools and values

PROPS = {
    "city": {"type": "string"},
    "days": {"type": "integer"},
    "ratio": {"type": "number"},
    "flag": {"type": "boolean"},
    "opts": {"type": "object"},
    "tags": {"type": "array"},
}
TOOL_SPECS = {
    "get_weather": PROPS,
    "search_web": {"query": {"type": "string"}, "limit": {"type": "integer"}, "opts": {"type": "object"}},
    "ping": {},
}
OPENAI_TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": p}}}
                for n, p in TOOL_SPECS.items()]
SGL_TOOLS = [Tool(type="function", function=Function(name=n, description="d",
                                                     parameters={"type": "object", "properties": p}))
             for n, p in TOOL_SPECS.items()]

_CH = list("ab xyz Q09_-.,:;!?'é中😀") + ["  ", "/", "=", "(", ")"]


def _text(rnd, most=14, extra=()):
    chars = _CH + list(extra)
    return "".join(rnd.choice(chars) for _ in range(rnd.randint(1, most)))


def _string(rnd):
    """A string value no format can confuse with markup or JSON, without edge spaces."""
    while True:
        s = _text(rnd).strip()
        if not s:
            continue
        try:
            json.loads(s)
        except ValueError:
            if s not in ("True", "False", "None", "null", "true", "false"):
                return s


def _json_value(rnd, depth=0, lt=True):
    kinds = ["str", "int", "float", "bool", "null"] + (["list", "dict"] if depth < 2 else [])
    k = rnd.choice(kinds)
    if k == "str":
        return _text(rnd, extra=['"', "\\", "\n", "{", "}"] + (["<", ">"] if lt else []))
    if k == "int":
        return rnd.choice([rnd.randint(-9, 9), rnd.randint(-10**6, 10**6), 10**18 + 7])
    if k == "float":
        return rnd.choice([0.5, -2.25, 1e-7, 3.14159, 2.5e20])
    if k == "bool":
        return rnd.random() < 0.5
    if k == "null":
        return None
    if k == "list":
        return [_json_value(rnd, depth + 1, lt) for _ in range(rnd.randint(0, 3))]
    return {rnd.choice(["a", "k_1", "日本", "x y", 'q"t']): _json_value(rnd, depth + 1, lt)
            for _ in range(rnd.randint(0, 3))}


def _typed(rnd, schema, lt=True):
    t = schema["type"]
    if t == "string":
        return _string(rnd)
    if t == "integer":
        return rnd.choice([0, 7, -3, 123456, 10**15])
    if t == "number":
        return rnd.choice([0.5, -2.25, 3.14159, 1e-7, 12.0])
    if t == "boolean":
        return rnd.random() < 0.5
    if t == "object":
        return {rnd.choice(["a", "k_1", "日本"]): _json_value(rnd, 1, lt) for _ in range(rnd.randint(1, 3))}
    return [_json_value(rnd, 1, lt) for _ in range(rnd.randint(1, 3))]


def gen_calls(rnd, most=3, lt=True, scalars_only=False):
    calls = []
    for _ in range(rnd.randint(1, most)):
        name = rnd.choice(list(TOOL_SPECS))
        props = TOOL_SPECS[name]
        keys = rnd.sample(list(props), rnd.randint(0, len(props))) if props else []
        if scalars_only:
            keys = [k for k in keys if props[k]["type"] not in ("object", "array")]
        calls.append((name, {k: _typed(rnd, props[k], lt) for k in keys}))
    return calls


def bare(v):
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def want_calls(calls):
    return [(n, json.loads(json.dumps(a))) for n, a in calls]


def _scalars(calls):
    return [(n, {k: v for k, v in a.items() if not isinstance(v, (dict, list))}) for n, a in calls]


def check_calls(name, got, calls):
    """``got`` ([(name, args)]) is what was generated (top-level scalars only
    for the formats in SCALARS_CHECKED)."""
    if name in SCALARS_CHECKED:
        assert _scalars(got) == _scalars(want_calls(calls))
        assert [sorted(a) for _, a in got] == [sorted(a) for _, a in calls]
    else:
        assert got == want_calls(calls)


def content_before(rnd):
    return rnd.choice(["", _text(rnd, 30) + rnd.choice(["", "\n", "\n\n", " "])])


# ------------------------------------------------------------------ renderers


def render_qwen(calls, rnd, wrap=("<tool_call>", "</tool_call>")):
    out = []
    for name, args in calls:
        params = "".join(f"<parameter={k}>\n{bare(v)}\n</parameter>\n" for k, v in args.items())
        out.append(f"{wrap[0]}\n<function={name}>\n{params}</function>\n{wrap[1]}")
    return "\n".join(out)


def render_seed(calls, rnd):
    return render_qwen(calls, rnd, ("<seed:tool_call>", "</seed:tool_call>"))


def render_glm(calls, rnd):
    out = []
    for name, args in calls:
        nl = rnd.choice(["\n", ""])
        params = "".join(f"<arg_key>{k}</arg_key>{nl}<arg_value>{bare(v)}</arg_value>{nl}" for k, v in args.items())
        out.append(f"<tool_call>{name}\n{params}</tool_call>")
    return "\n".join(out)


def render_cohere(calls, rnd):
    ind = rnd.choice([None, 4])
    items = [json.dumps({"tool_call_id": str(i), "tool_name": n, "parameters": a}, ensure_ascii=rnd.random() < 0.5,
                        indent=ind) for i, (n, a) in enumerate(calls)]
    return "<|START_ACTION|>[\n" + ",\n".join(items) + "\n]<|END_ACTION|>"


def render_step3(calls, rnd):
    out = []
    for name, args in calls:
        params = "".join(f'<steptml:parameter name="{k}">{bare(v)}</steptml:parameter>\n' for k, v in args.items())
        out.append(f'<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="{name}">\n{params}'
                   "</steptml:invoke><｜tool_call_end｜>")
    return "<｜tool_calls_begin｜>\n" + "\n".join(out) + "\n<｜tool_calls_end｜>"


def _k3_type(v):
    if isinstance(v, bool):
        return "boolean"
    if v is None:
        return "null"
    return {str: "string", int: "integer", float: "number", list: "array", dict: "object"}[type(v)]


def render_k3(calls, rnd):
    nl = rnd.choice(["", "\n"]) if rnd is not None else ""
    out = []
    for i, (name, args) in enumerate(calls):
        params = "".join(f'<|open|>argument key="{k}" type="{_k3_type(v)}"<|sep|>{bare(v)}<|close|>argument<|sep|>{nl}'
                         for k, v in args.items())
        out.append(f'<|open|>call tool="{name}" index="{i + 1}"<|sep|>{nl}{params}<|close|>call<|sep|>{nl}')
    return f"<|open|>tools<|sep|>{nl}" + "".join(out) + "<|close|>tools<|sep|>"


def frame_k3(before, rnd):
    """The response channel around the content, as the model writes it (the
    opening marker is often the prompt's generation prefix)."""
    k = rnd.randint(0, 2)
    if k == 0 or not before:
        return before
    return ("<|open|>response<|sep|>" if k == 2 else "") + before + "<|close|>response<|sep|>"


def render_k2h(calls, rnd, dialect=None):
    dialect = dialect or rnd.choice(["xml", "xml_typed", "json"])
    nl = rnd.choice(["", "\n"])
    out = []
    for name, args in calls:
        if dialect == "json":
            body = json.dumps({"name": name, "arguments": args}, ensure_ascii=rnd.random() < 0.5)
        else:
            body = name + nl + "".join(
                f"<ifm|arg_key>{k}</ifm|arg_key>"
                + (f"<ifm|arg_type>{_k3_type(v)}</ifm|arg_type>" if dialect == "xml_typed" else "")
                + f"<ifm|arg_value>{bare(v)}</ifm|arg_value>{nl}" for k, v in args.items())
        out.append(f"<ifm|tool_call>{body}</ifm|tool_call>")
    return f"<ifm|tool_calls>{nl}" + nl.join(out) + f"{nl}</ifm|tool_calls>"


K2H_SPECIALS = ("<ifm|tool_calls>", "</ifm|tool_calls>", "<ifm|tool_call>", "</ifm|tool_call>", "<ifm|arg_key>",
                "</ifm|arg_key>", "<ifm|arg_type>", "</ifm|arg_type>", "<ifm|arg_value>", "</ifm|arg_value>",
                "<ifm|think>", "</ifm|think>")
def render_plamo(calls, rnd):
    out = []
    for name, args in calls:
        js = json.dumps(args, ensure_ascii=rnd.random() < 0.5)
        out.append(f"<|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>{name}"
                   "<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json"
                   f"<|plamo:msg|>{js}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|>")
    return "<|plamo:begin_tool_requests:plamo|>" + "".join(out) + "<|plamo:end_tool_requests:plamo|>"


# PLaMo's markers are split into several tokens (vLLM's own list of the pieces)
PLAMO_SPECIALS = ("<|plamo:begin_", "<|plamo:end_", ":plamo|>", "<|plamo:constrain|>", "<|plamo:msg|>",
                  "<|plamo:tag|>")
MM = "]<]minimax[>["


def _mm_value(v):
    if isinstance(v, dict):
        return "".join(f"{MM}<{k}>{_mm_value(x)}{MM}</{k}>" for k, x in v.items())
    if isinstance(v, list):
        return "".join(f"{MM}<item>{_mm_value(x)}{MM}</item>" for x in v)
    return "null" if v is None else bare(v)


def render_mm3(calls, rnd):
    out = []
    for name, args in calls:
        params = "".join(f"{MM}<{k}>{_mm_value(v)}{MM}</{k}>\n" for k, v in args.items())
        out.append(f'{MM}<invoke name="{name}">\n{params}{MM}</invoke>\n')
    return f"{MM}<tool_call>\n" + "".join(out) + f"{MM}</tool_call>"


def render_gptoss(calls, rnd):
    # (SGLang reads only the recipient in the channel header, not in the role header)
    out = []
    for name, args in calls:
        js = json.dumps(args, ensure_ascii=rnd.random() < 0.5)
        out.append(f"<|start|>assistant<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>"
                   f"{js}<|call|>")
    return "".join(out)


K3_SPECIALS = ("<|open|>", "<|close|>", "<|sep|>")
STEP3_SPECIALS = ("<｜tool_calls_begin｜>", "<｜tool_calls_end｜>", "<｜tool_call_begin｜>", "<｜tool_call_end｜>",
                  "<｜tool_sep｜>", "<think>", "</think>")
COHERE_SPECIALS = ("<|START_ACTION|>", "<|END_ACTION|>", "<|START_THINKING|>", "<|END_THINKING|>",
                   "<|START_RESPONSE|>", "<|END_RESPONSE|>", "<|END_OF_TURN_TOKEN|>")
# vLLM names whose own parser cannot run here (vLLM parses Command's whole
# message with cohere_melody, absent from the peers venv; its ToolParser
# classes are stubs): ours is compared with SGLang's parser of the same format
VLLM_VIA_SGLANG = {"cohere_command3": "cohere_command4", "cohere_command4": "cohere_command4"}

# vLLM name -> (renderer, special tokens of its vocabulary)
QWEN_SPECIALS = ("<tool_call>", "</tool_call>", "<think>", "</think>")
VLLM = {
    "seed_oss": (render_seed, ("<seed:tool_call>", "</seed:tool_call>", "<seed:think>", "</seed:think>",
                               "<seed:bos>", "<seed:eos>")),
    "step5": (render_qwen, QWEN_SPECIALS),
    "poolside_v1": (render_glm, QWEN_SPECIALS + ("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>")),
    "cohere_command3": (render_cohere, COHERE_SPECIALS),
    "cohere_command4": (render_cohere, COHERE_SPECIALS),
    "step3": (render_step3, STEP3_SPECIALS),
    "kimi_k3": (render_k3, K3_SPECIALS),
    "k2_horizon": (render_k2h, K2H_SPECIALS),
    "plamo3": (render_plamo, PLAMO_SPECIALS),
    "minimax_m3": (render_mm3, ()),  # M3's markers are plain text (non-special added tokens)
}
# SGLang name -> renderer
SGLANG = {
    "poolside_v1": render_glm,
    "cohere_command4": render_cohere,
    "step3": render_step3,
    "kimi_k3": render_k3,
    "k2_horizon": render_k2h,
    "minimax-m3": render_mm3,
    "gpt-oss": render_gptoss,
}
# vLLM's step3 leaves an object or array parameter's text a string
VLLM_SCALARS_ONLY = {"step3"}
# SGLang's minimax-m3 reads untyped nested elements its own way (``<item>``
# children as a list, "false" as false): compared on scalar parameters
SGLANG_SCALARS_ONLY = {"minimax-m3"}
# values may not hold "<" (SGLang's step3 parameter pattern stops at it)
NO_LT = {"step3"}
# engine names whose one-shot parse drops the text after the calls
VLLM_DROPS_AFTER = {"seed_oss", "step5", "poolside_v1", "kimi_k3", "plamo3", "minimax_m3"}
SGLANG_DROPS_AFTER = {"poolside_v1", "cohere_command4", "kimi_k3"}
# nested values whose schema gives no inner types come back as the engine's
# strings: only the top-level scalars are checked against what was generated
SCALARS_CHECKED = {"minimax_m3", "minimax-m3"}
# vLLM's k2_horizon reads the dialect the request's chat template asked for
DIALECTS = {"k2_horizon": ("xml", "xml_typed", "json")}
# content framed by the format's response channel (the frame is dropped)
FRAMES = {"kimi_k3": frame_k3}
# SGLang streams a cohere action block's calls with the tool's index in the
# request (two calls of one tool share an index); ours number the calls
SGLANG_STREAM_TOOL_INDEX = {"cohere_command4"}
# SGLang's step3 streaming reads the parameters of every call still in its
# buffer into the current one: ours streamed is compared with its one-shot
SGLANG_STREAM_BROKEN = {"step3"}
# SGLang's gpt-oss streams content twice (and leaks "assistant"); it needs each
# harmony token in one chunk: its streamed calls are compared, and our
# streamed content with its one-shot content
SGLANG_STREAM_CONTENT_BROKEN = {"gpt-oss"}
SGLANG_SPACE_JOIN = {"gpt-oss"}
_HARMONY_TOKEN = re.compile(r"<\|[a-z]+\|>")


def _token_chunks(text, rnd):
    """Random pieces of text, each harmony token whole."""
    out, pos = [], 0
    for m in [*_HARMONY_TOKEN.finditer(text), None]:
        seg = text[pos:m.start() if m else len(text)]
        while seg:
            k = rnd.randint(1, 6)
            out.append(seg[:k])
            seg = seg[k:]
        if m:
            out.append(m.group())
            pos = m.end()
    return out


def test_every_wired_name_is_tested_here():
    assert sorted(VLLM) == sorted(mf.VLLM_NAMES)
    assert sorted(SGLANG) == sorted(mf.SGLANG_NAMES)
    for n in mf.VLLM_NAMES:
        assert n in rcv.TOOL_PARSERS and ToolParserManager.get_tool_parser(n) is not None
    for n in mf.SGLANG_NAMES:
        assert n in rcs.TOOL_DETECTORS and n in SGL_NATIVE


# ------------------------------------------------------------------ vLLM runners


def _norm(s):
    return (s or "").strip() or None


def _squash(s):
    return "".join((s or "").split())


def ours_ok(cond, what):
    """A check on our own result inside an xfail test: a failure here is a real
    failure (RuntimeError), not the documented engine difference (AssertionError)."""
    if not cond:
        raise RuntimeError(what)


def _vllm_one(cls, tok, text, **kw):
    p = cls(tok, _request_tools())  # vLLM's serving layer builds the parser with the request's tools
    info = p.extract_tool_calls(text, chat_request(tools=OPENAI_TOOLS, **kw))
    return [(c.function.name, json.loads(c.function.arguments)) for c in info.tool_calls], _norm(info.content)


def _vllm_stream(cls, tok, text, **kw):
    p = cls(tok, _request_tools())
    req = chat_request(tools=OPENAI_TOOLS, **kw)
    ids = list(tok.encode(text, add_special_tokens=False))
    msgs = [p.extract_tool_calls_streaming(pt, ct, dt, pi, ci, di, req)
            for dt, pt, ct, pi, ci, di in detokenize_steps(tok, ids)]
    if getattr(p, "engine_based_streaming", False) and hasattr(p, "finish_streaming"):
        msgs.append(p.finish_streaming())
    content, calls = [], {}
    for m in msgs:
        if m is None:
            continue
        content.append(m.content or "")
        for tc in m.tool_calls or ():
            s = calls.setdefault(tc.index, {"name": "", "arguments": ""})
            if tc.function is not None:
                s["name"] += tc.function.name or ""
                s["arguments"] += tc.function.arguments or ""
    merged = [(c["name"], json.loads(c["arguments"] or "{}")) for _, c in sorted(calls.items())]
    return merged, _norm("".join(content))


def _vllm_pair(name):
    _, specials = VLLM[name]
    tok = vllm_tokenizer(specials)
    theirs = ToolParserManager.get_tool_parser(name) if name not in VLLM_VIA_SGLANG else None
    return tok, theirs, rcv.TOOL_PARSERS[name]


def _request_tools():
    return chat_request(tools=OPENAI_TOOLS).tools


def _via_sglang(name, text):
    r = SGL_NATIVE[VLLM_VIA_SGLANG[name]]().detect_and_parse(text, SGL_TOOLS)
    return [(c.name, json.loads(c.parameters)) for c in r.calls], _norm(r.normal_text)


def vllm_case(name, seed):
    rnd = random.Random(f"vllm-{name}-{seed}")
    render, _ = VLLM[name]
    calls = gen_calls(rnd, lt=name not in NO_LT, scalars_only=name in VLLM_SCALARS_ONLY)
    before = content_before(rnd)
    framed = FRAMES[name](before, rnd) if name in FRAMES else before
    if name in DIALECTS:
        dialect = DIALECTS[name][seed % len(DIALECTS[name])]
        return before, calls, framed + render(calls, rnd, dialect), {
            "chat_template_kwargs": {"tool_call_format": dialect}}
    return before, calls, framed + render(calls, rnd), {}


VSEEDS = range(25)


@pytest.mark.parametrize("name", sorted(VLLM))
def test_vllm_one_shot_equals(name):
    tok, theirs, ours = _vllm_pair(name)
    for seed in VSEEDS:
        before, calls, text, kw = vllm_case(name, seed)
        a = _via_sglang(name, text) if theirs is None else _vllm_one(theirs, tok, text, **kw)
        b = _vllm_one(ours, tok, text, **kw)
        check_calls(name, a[0], calls)  # the generator writes what the engine reads
        assert b == a, (seed, text)
        assert b[1] == _norm(before)


@pytest.mark.parametrize("name", sorted(VLLM))
def test_vllm_streamed_equals(name):
    tok, theirs, ours = _vllm_pair(name)
    for seed in range(8):
        before, calls, text, kw = vllm_case(name, seed)
        a = _via_sglang(name, text) if theirs is None else _vllm_stream(theirs, tok, text, **kw)
        b = _vllm_stream(ours, tok, text, **kw)
        assert b == a, (seed, text)
        check_calls(name, b[0], calls)


def _vllm_after_params():
    out = []
    for n in sorted(VLLM):
        marks = [pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"vLLM's {n} one-shot drops the text after the calls")] \
            if n in VLLM_DROPS_AFTER else [pytest.mark.xfail(strict=True, raises=AssertionError, reason="SGLang's cohere_command4 one-shot "
                                                      "drops the text after the action block")] \
        if n in VLLM_VIA_SGLANG else []
        out.append(pytest.param(n, marks=marks))
    return out


@pytest.mark.parametrize("name", _vllm_after_params())
def test_vllm_one_shot_keeps_text_after_calls(name):
    tok, theirs, ours = _vllm_pair(name)
    before, calls, text, kw = vllm_case(name, 1)
    text += "\nDone, see above."
    a = _via_sglang(name, text) if theirs is None else _vllm_one(theirs, tok, text, **kw)
    b = _vllm_one(ours, tok, text, **kw)
    # (the newline between two blocks of some formats is content too)
    ours_ok(_squash(b[1]) == _squash(before + "Done, see above."), "our content")
    try:
        check_calls(name, b[0], calls)
    except AssertionError as exc:
        raise RuntimeError("our calls") from exc
    assert b[0] == a[0]
    assert a[1] == b[1]


# ------------------------------------------------------------------ SGLang runners


def _sgl_one(det, text):
    r = det.detect_and_parse(text, SGL_TOOLS)
    return [(c.tool_index, c.name, json.loads(c.parameters)) for c in r.calls], _norm(r.normal_text)


def _sgl_stream(det, pieces, by_index=True):
    """Streamed results: (calls merged by tool_index, or in emission order with
    ``by_index=False``, a name item starting each call; content)."""
    normal, calls, order = [], {}, []
    results = [det.parse_streaming_increment(piece, SGL_TOOLS) for piece in pieces]
    fin = getattr(det, "finish", None)
    if fin is not None:
        results.append(fin(SGL_TOOLS))
    for r in results:
        normal.append(r.normal_text or "")
        for c in r.calls:
            if c.name:
                order.append({"name": c.name, "args": ""})
            elif not order:
                continue
            order[-1]["args"] += c.parameters or ""
            s = calls.setdefault(c.tool_index, {"name": None, "args": ""})
            if c.name:
                s["name"] = c.name
            s["args"] += c.parameters or ""
    if by_index:
        merged = [(k, c["name"], json.loads(c["args"] or "{}")) for k, c in sorted(calls.items())]
    else:
        merged = [(c["name"], json.loads(c["args"] or "{}")) for c in order]
    return merged, _norm("".join(normal))


def _chunks(text, rnd):
    k = rnd.randint(0, min(len(text) - 1, 30)) if len(text) > 1 else 0
    cuts = sorted(rnd.sample(range(1, len(text)), k)) if k else []
    return [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)])]


def sglang_case(name, seed):
    rnd = random.Random(f"sglang-{name}-{seed}")
    calls = gen_calls(rnd, lt=name not in NO_LT, scalars_only=name in SGLANG_SCALARS_ONLY)
    before = content_before(rnd)
    framed = FRAMES[name](before, rnd) if name in FRAMES else before
    return before, calls, framed + SGLANG[name](calls, rnd), rnd


@pytest.mark.parametrize("name", sorted(SGLANG))
def test_sglang_one_shot_equals(name):
    for seed in VSEEDS:
        before, calls, text, _ = sglang_case(name, seed)
        a = _sgl_one(SGL_NATIVE[name](), text)
        b = _sgl_one(rcs.TOOL_DETECTORS[name](), text)
        assert b == a, (seed, text)
        check_calls(name, [(n, x) for _, n, x in b[0]], calls)


@pytest.mark.parametrize("name", sorted(SGLANG))
def test_sglang_streamed_equals(name):
    for seed in VSEEDS:
        before, calls, text, rnd = sglang_case(name, seed)
        pieces = _chunks(text, rnd) if name not in SGLANG_STREAM_CONTENT_BROKEN else _token_chunks(text, rnd)
        if name in SGLANG_STREAM_CONTENT_BROKEN:
            a = _sgl_stream(SGL_NATIVE[name](), pieces)
            b = _sgl_stream(rcs.TOOL_DETECTORS[name](), pieces)
            assert b[0] == a[0], (seed, pieces)
            assert b[1] == _sgl_one(SGL_NATIVE[name](), text)[1]
            check_calls(name, [(n, x) for _, n, x in b[0]], calls)
            continue
        if name in SGLANG_STREAM_BROKEN:
            one, content = _sgl_one(SGL_NATIVE[name](), text)
            got = _sgl_stream(rcs.TOOL_DETECTORS[name](), pieces)
            assert got == ([(i, n, x) for i, (_, n, x) in enumerate(one)], content), (seed, pieces)
            continue
        by_index = name not in SGLANG_STREAM_TOOL_INDEX
        a = _sgl_stream(SGL_NATIVE[name](), pieces, by_index)
        b = _sgl_stream(rcs.TOOL_DETECTORS[name](), pieces, by_index)
        assert b == a, (seed, pieces)
        got = b[0] if not by_index else [(n, x) for _, n, x in b[0]]
        check_calls(name, got, calls)
        assert [k for k, _, _ in _sgl_stream(rcs.TOOL_DETECTORS[name](), pieces)[0]] == list(range(len(calls)))


def _sglang_after_params():
    return [pytest.param(n, marks=[pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"SGLang's {n} one-shot drops the text "
                                                     "after the calls")] if n in SGLANG_DROPS_AFTER else [])
            for n in sorted(SGLANG)]


@pytest.mark.parametrize("name", _sglang_after_params())
def test_sglang_one_shot_keeps_text_after_calls(name):
    before, calls, text, _ = sglang_case(name, 2)
    text += "\nDone, see above."
    a = _sgl_one(SGL_NATIVE[name](), text)
    b = _sgl_one(rcs.TOOL_DETECTORS[name](), text)
    # (the newline between two blocks of some formats is content too)
    ours_ok(_squash(b[1]) == _squash(before + "Done, see above."), "our content")
    try:
        check_calls(name, [(n, x) for _, n, x in b[0]], calls)
    except AssertionError as exc:
        raise RuntimeError("our calls") from exc
    assert a[0] == b[0]
    if name in SGLANG_SPACE_JOIN:  # SGLang joins the text around a call with a space
        assert _squash(a[1]) == _squash(b[1])
    else:
        assert a[1] == b[1]


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="vLLM's step3 leaves an object or array parameter a string")
def test_vllm_step3_object_parameter_is_json():
    tok, theirs, ours = _vllm_pair("step3")
    text = render_step3([("get_weather", {"opts": {"a": [1, "x"]}, "tags": [1, 2]})], None)
    b = _vllm_one(ours, tok, text)
    ours_ok(b[0] == [("get_weather", {"opts": {"a": [1, "x"]}, "tags": [1, 2]})], "our calls")
    assert _vllm_one(theirs, tok, text) == b


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="SGLang's step3 streaming reads a later call's parameters into the current one")
def test_sglang_step3_streams_two_calls_in_one_chunk():
    calls = [("get_weather", {"city": "Paris"}), ("search_web", {"query": "x", "limit": 2})]
    text = "Hi " + render_step3(calls, None)
    a = _sgl_stream(SGL_NATIVE["step3"](), [text])
    b = _sgl_stream(rcs.TOOL_DETECTORS["step3"](), [text])
    ours_ok(b == ([(0, "get_weather", {"city": "Paris"}), (1, "search_web", {"query": "x", "limit": 2})], "Hi"),
            "our stream")
    assert a == b


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="SGLang's minimax-m3 reads untyped <item> children as a list and 'false' as "
                          "false; vLLM's (and ours) keep the element structure and the text")
def test_sglang_minimax_m3_untyped_nested_values():
    text = render_mm3([("get_weather", {"opts": {"a": [False, 1]}})], None)
    a = _sgl_one(SGL_NATIVE["minimax-m3"](), text)
    b = _sgl_one(rcs.TOOL_DETECTORS["minimax-m3"](), text)
    tok, theirs, _ = _vllm_pair("minimax_m3")
    ours_is_vllms = [(n, x) for _, n, x in b[0]] == _vllm_one(theirs, tok, text)[0]
    ours_ok(ours_is_vllms, "ours is vLLM's reading")
    assert a == b


@pytest.mark.parametrize("name", sorted(SGLANG))
def test_sglang_unlisted_tool_handled_as_sglang(name):
    """A call to a tool the request does not list: dropped or kept (and how it
    is indexed) as SGLang's own detector does, one-shot and streamed."""
    calls = [("unknown_tool", {"city": "Rome"}), ("get_weather", {"city": "Paris"})]
    text = "Let me check. " + SGLANG[name](calls, random.Random(0))
    a = _sgl_one(SGL_NATIVE[name](), text)
    b = _sgl_one(rcs.TOOL_DETECTORS[name](), text)
    assert b == a
    if name in SGLANG_STREAM_BROKEN:
        return
    pieces = (_token_chunks if name in SGLANG_STREAM_CONTENT_BROKEN else _chunks)(text, random.Random(1))
    if name in SGLANG_STREAM_CONTENT_BROKEN:
        assert _sgl_stream(rcs.TOOL_DETECTORS[name](), pieces)[0] == _sgl_stream(SGL_NATIVE[name](), pieces)[0]
        return
    by_index = name not in SGLANG_STREAM_TOOL_INDEX
    assert _sgl_stream(rcs.TOOL_DETECTORS[name](), pieces, by_index) == _sgl_stream(SGL_NATIVE[name](), pieces,
                                                                                     by_index)


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="SGLang's gpt-oss streams the content before a call "
                                                              "twice and leaks the role name")
def test_sglang_gpt_oss_streamed_content():
    text = "Let me check. " + render_gptoss([("get_weather", {"city": "Paris"})], random.Random(0))
    pieces = _token_chunks(text, random.Random(0))
    b = _sgl_stream(rcs.TOOL_DETECTORS["gpt-oss"](), pieces)
    ours_ok(b == ([(0, "get_weather", {"city": "Paris"})], "Let me check."), "our stream")
    assert _sgl_stream(SGL_NATIVE["gpt-oss"](), pieces) == b
