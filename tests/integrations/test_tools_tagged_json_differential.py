"""The tagged-JSON tool formats (``reasoning_core.tools._tagged_json_formats``)
under the engines' names, against the engines' own parsers.

vLLM: ``extract_tool_calls`` and ``extract_tool_calls_streaming`` fed one token
per step as vLLM's serving loop does. SGLang: ``detect_and_parse`` (through
``FunctionCallParser.parse_non_stream``) and ``parse_streaming_increment`` fed
random chunkings. Compared: the calls (name, arguments as JSON values) and the
content with whitespace runs collapsed (the engines strip or re-join the text
around a tool section; ours keeps it verbatim). Where an engine loses text the
case is an ``xfail(strict=True)`` naming the engine's behaviour.
"""
from __future__ import annotations

import json
import random
import re

import pytest

from vllm_helpers import chat_request, detokenize_steps, import_vllm, vllm_tokenizer

import_vllm()

from vllm.tool_parsers import ToolParserManager  # noqa: E402

from reasoning_core.integrations import vllm as rcv  # noqa: E402
from sglang_max_helpers import import_sglang_parsers, text_chunks  # noqa: E402
from vocab import FAMILY_SPECIALS  # noqa: E402

_reasoning_parser, rcs = import_sglang_parsers()

from sglang.srt.entrypoints.openai.protocol import Function, Tool  # noqa: E402
from sglang.srt.function_call.function_call_parser import FunctionCallParser  # noqa: E402

PROPS = {
    "get_weather": {"city": {"type": "string"}, "days": {"type": "integer"},
                    "opts": {"type": "object"}},
    "get_time": {"tz": {"type": "string"}},
}
VLLM_TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": p}}}
              for n, p in PROPS.items()]
SGL_TOOLS = [Tool(type="function", function=Function(name=n, description="d",
                                                     parameters={"type": "object", "properties": p}))
             for n, p in PROPS.items()]

WEATHER = ("get_weather", {"city": "Paris", "days": 3})
TIME = ("get_time", {"tz": "UTC"})
RICH = ("get_weather", {"city": 'São Paulo 東京 "q" \\ end', "days": -12,
                        "opts": {"a": [1, 2.5e3, None, True], "b": {"c": "d"}}})
PRE = "Let me check. "
POST = " Done, see above."


def _v(value) -> str:
    """A parameter value as an XML-style format writes it: strings verbatim."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _j(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def write(fmt: str, calls: list) -> str:
    """The tool section(s) of ``calls`` in format ``fmt`` as the model writes it."""
    if fmt == "apertus":
        return "<|tools_prefix|>[" + ", ".join(_j({n: a}) for n, a in calls) + "]<|tools_suffix|>"
    if fmt == "hunyuan_a13b":
        return "<tool_calls>" + _j([{"name": n, "arguments": a} for n, a in calls]) + "</tool_calls>"
    if fmt == "gigachat3":
        (n, a), = calls
        return "<|message_sep|>function call<|role_sep|>\n" + _j({"name": n, "arguments": a})
    if fmt == "functiongemma":
        return "".join("<start_function_call>call:" + n + "{"
                       + ",".join(f"{k}:<escape>{_v(v)}<escape>" for k, v in a.items())
                       + "}<end_function_call>" for n, a in calls)
    if fmt == "mimo":
        return "".join(f"<tool_call>\n<function={n}>\n"
                       + "".join(f"<parameter={k}>{_v(v)}</parameter>\n" for k, v in a.items())
                       + "</function>\n</tool_call>" for n, a in calls)
    if fmt == "ling3":
        return "".join(f"<tool_call>{n}\n"
                       + "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{_v(v)}</arg_value>\n" for k, v in a.items())
                       + "</tool_call>" for n, a in calls)
    if fmt == "hy_v3":
        return ("<tool_calls>\n" + "".join(
            f"<tool_call>{n}<tool_sep>\n"
            + "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{_v(v)}</arg_value>\n" for k, v in a.items())
            + "</tool_call>\n" for n, a in calls) + "</tool_calls>")
    if fmt == "dots":
        return "".join("<dots_function_call>\n" + "".join(
            f'<invoke name="{n}">\n' + "".join(f'<parameter name="{k}">{_v(v)}</parameter>\n' for k, v in a.items())
            + "</invoke>\n" for n, a in calls) + "</dots_function_call>" for _ in (0,))
    if fmt == "dots_json":
        return "".join(f"<dots_function_call>\n{_j({'name': n, 'arguments': a})}\n</dots_function_call>"
                       for n, a in calls)
    if fmt == "gigachat35":
        g = "｜GCML｜"
        return (f"<{g}tool_calls>\n" + "".join(
            f'<{g}invoke name="{n}">\n' + "".join(
                f'<{g}parameter name="{k}" string="{"true" if isinstance(v, str) else "false"}">{_v(v)}'
                f"</{g}parameter>\n" for k, v in a.items()) + f"</{g}invoke>\n" for n, a in calls)
            + f"</{g}tool_calls>")
    if fmt == "hy_v4":
        return "<tool_calls>" + "".join(
            f"<tool_call>{n}" + "".join(f"<arg_key>{k}</arg_key><arg_value>{_v(v)}</arg_value>" for k, v in a.items())
            + "</tool_call>" for n, a in calls) + "</tool_calls>"
    tags = {"longcat": ("<longcat_tool_call>", "</longcat_tool_call>"), "ernie45": ("<tool_call>", "</tool_call>")}
    start, end = tags[fmt]
    return "\n".join(f"{start}\n{_j({'name': n, 'arguments': a})}\n{end}" for n, a in calls)


def outputs(fmt: str) -> dict[str, str]:
    out = {
        "one": PRE + write(fmt, [WEATHER]),
        "rich": PRE + write(fmt, [RICH]),
        "first": write(fmt, [WEATHER]),
        "after": PRE + write(fmt, [WEATHER]) + POST,
        "single": PRE + write(fmt, [TIME]),
        "none": "The weather in Paris is sunny.",
    }
    if fmt == "ling3":  # the forms without a newline after the name, and without arguments
        out["compact"] = PRE + write(fmt, [WEATHER]).replace(f"{WEATHER[0]}\n", WEATHER[0]).replace(
            "</arg_key>\n", "</arg_key>") + "<tool_call>get_time</tool_call>"
    if fmt == "gigachat35":  # the template's separator before the block
        out["sep"] = PRE + "<|message_sep|>" + write(fmt, [WEATHER])
    if fmt == "dots":  # the JSON body the format also accepts
        out["json"] = PRE + write("dots_json", [WEATHER, TIME])
    if fmt != "gigachat3":  # one call per answer
        out["two"] = PRE + write(fmt, [WEATHER, TIME])
    return out


_HY = ("<think>", "</think>", "<tool_calls>", "</tool_calls>", "<tool_call>", "</tool_call>", "<arg_key>",
       "</arg_key>", "<arg_value>", "</arg_value>")
SPECIALS = {
    "apertus": ("<|tools_prefix|>", "<|tools_suffix|>"),
    "hunyuan_a13b": ("<think>", "</think>", "<tool_calls>", "</tool_calls>"),
    "longcat": ("<longcat_tool_call>", "</longcat_tool_call>"),
    "gigachat3": ("<|message_sep|>", "<|role_sep|>", "<|function_call|>", "</s>"),
    "functiongemma": ("<start_function_call>", "<end_function_call>", "<escape>"),
    "mimo": ("<think>", "</think>", "<tool_call>", "</tool_call>"),
    "ernie45": ("<think>", "</think>", "<tool_call>", "</tool_call>", "<response>", "</response>"),
    "ling3": FAMILY_SPECIALS["glm47"],
    "hy_v3": _HY + ("<tool_sep>",),
    "hy_v4": _HY,
    "dots": ("<dots_function_call>", "</dots_function_call>"),
    "gigachat35": ("<|message_sep|>", "<｜GCML｜tool_calls>", "</｜GCML｜tool_calls>", "<｜GCML｜invoke",
                   "</｜GCML｜invoke>", "<｜GCML｜parameter", "</｜GCML｜parameter>"),
}
VLLM_TESTED = ("apertus", "dots", "ernie45", "functiongemma", "gigachat3", "hunyuan_a13b", "hy_v3", "hy_v4", "ling3",
               "longcat", "mimo")
# the engine name's format in ``write`` (SGLang's names)
SGL_FORMAT = {"apertus2509": "apertus", "gigachat3": "gigachat3", "mimo": "mimo", "ling3": "ling3",
              "hunyuan": "hy_v3", "dots": "dots", "gigachat35": "gigachat35"}

# Where an engine's parser loses or moves text, or cannot read a well-formed case.
_AFTER_LOST = "the engine keeps only the text before the first call (the text after it is lost)"
_A13B_STREAM = "vLLM streams everything as content unless the answer starts with the call"
VLLM_XFAIL = {
    **{(n, "after", "one_shot"): _AFTER_LOST
       for n in ("hunyuan_a13b", "ernie45", "functiongemma", "ling3", "longcat", "mimo", "hy_v3", "hy_v4", "dots")},
    **{(n, "after", "stream"): _AFTER_LOST for n in ("ernie45", "longcat", "hy_v3", "hy_v4")},
    **{("hunyuan_a13b", c, "stream"): _A13B_STREAM for c in ("one", "rich", "two", "after", "single")},
    ("hunyuan_a13b", "first", "stream"): "vLLM streams the <tool_calls> tag as content",
    **{("functiongemma", c, "stream"): "vLLM streams a call of several parameters as two closed objects "
                                       "(invalid JSON)" for c in ("one", "rich", "first", "after", "two")},
    ("gigachat3", "after", "one_shot"): "vLLM reads no call when text follows the call object",
    ("gigachat3", "after", "stream"): "vLLM streams the text after the call object into its arguments",
}
SGL_XFAIL = {
    ("gigachat35", "unknown", "stream"): "SGLang's gigachat35 streams a call's index counting the dropped calls "
                                         "before it (a gap: the first call sent has index 1)",
    **{("mimo", "unknown", m): "SGLang's mimo returns a call to an unlisted tool as its raw text in the content; "
                                "ours drops the call" for m in ("one_shot", "stream")},
    ("gigachat3", "after", "one_shot"): "SGLang reads no call when text follows the call object",
    ("gigachat3", "after", "stream"): "SGLang streams the text after the call object into its arguments",
    ("ling3", "after", "one_shot"): _AFTER_LOST,
    ("mimo", "after", "one_shot"): _AFTER_LOST,
    ("hunyuan", "after", "one_shot"): _AFTER_LOST,
    ("dots", "after", "one_shot"): _AFTER_LOST,
    ("gigachat35", "after", "one_shot"): _AFTER_LOST,
    ("gigachat35", "after", "stream"): "SGLang's gigachat35 never releases the text after the tool block",
    ("gigachat35", "sep", "stream"): "SGLang streams the <|message_sep|> before the block as content (its one-shot "
                                     "drops it)",
    ("mimo", "after", "stream"): "SGLang's mimo holds the text after a call for a further call and never "
                                 "releases it",
}


N_CALLS = {"none": 0, "two": 2, "json": 2, "unknown": 1, "compact": 2}


def _ws(text) -> str | None:
    return " ".join((text or "").split()) or None


def _mark(table, key):
    why = table.get(key)
    return [pytest.mark.xfail(strict=True, reason=why)] if why else []


# ---------------------------------------------------------------------------- vLLM

VLLM_CASES = [
    pytest.param(n, c, mode, marks=_mark(VLLM_XFAIL, (n, c, mode)), id=f"{n}-{c}-{mode}")
    for n in VLLM_TESTED for c in outputs(n) for mode in ("one_shot", "stream")
]


def test_every_wired_name_is_tested():
    from reasoning_core.tools import _tagged_json_formats as fm

    assert set(VLLM_TESTED) == set(fm.VLLM_NAMES)
    assert set(SGL_FORMAT) == set(fm.SGLANG_NAMES)


def _vllm_pair(name, tok):
    theirs = ToolParserManager.get_tool_parser(name)(tok, None)
    return theirs, rcv.TOOL_PARSERS[name](tok, None)


def _calls(info):
    return [(c.function.name, json.loads(c.function.arguments)) for c in info.tool_calls]


def _vllm_stream(parser, tok, ids, req):
    content, calls = [], {}
    msgs = [parser.extract_tool_calls_streaming(pt, ct, dt, pi, ci, di, req)
            for dt, pt, ct, pi, ci, di in detokenize_steps(tok, ids)]
    if getattr(parser, "engine_based_streaming", False) and hasattr(parser, "finish_streaming"):
        msgs.append(parser.finish_streaming())
    for m in msgs:
        if m is None:
            continue
        if m.content:
            content.append(m.content)
        for tc in m.tool_calls or ():
            slot = calls.setdefault(tc.index, {"name": "", "arguments": ""})
            if tc.function is not None:
                slot["name"] += tc.function.name or ""
                slot["arguments"] += tc.function.arguments or ""
    merged = [(c["name"], json.loads(c["arguments"]) if c["arguments"] else {}) for _, c in sorted(calls.items())]
    return merged, _ws("".join(content))


@pytest.mark.parametrize("name,case,mode", VLLM_CASES)
def test_vllm_equal(name, case, mode):
    assert name in rcv.TOOL_PARSERS
    tok = vllm_tokenizer(SPECIALS[name])
    text = outputs(name)[case]
    theirs, ours = _vllm_pair(name, tok)
    req = chat_request(tools=VLLM_TOOLS)
    if mode == "one_shot":
        a, b = theirs.extract_tool_calls(text, req), ours.extract_tool_calls(text, req)
        assert (b.tools_called, _calls(b), _ws(b.content)) == (a.tools_called, _calls(a), _ws(a.content))
        assert b.tools_called == (case != "none")
    else:
        ids = list(tok.encode(text, add_special_tokens=False))
        got = _vllm_stream(ours, tok, ids, req)
        assert got == _vllm_stream(theirs, tok, ids, req)
        assert len(got[0]) == N_CALLS.get(case, 1)


# ---------------------------------------------------------------------------- SGLang

_ATOMS = {n: re.compile("|".join(re.escape(m) for m in sorted(SPECIALS[f], key=len, reverse=True)))
          for n, f in SGL_FORMAT.items()}

UNKNOWN = ("unknown_tool", {"x": "y"})


def sgl_outputs(name: str) -> dict[str, str]:
    """``outputs`` plus a call to a tool the request does not list (SGLang drops it)."""
    fmt = SGL_FORMAT[name]
    out = outputs(fmt)
    out["unknown"] = PRE + write(fmt, [UNKNOWN] if fmt == "gigachat3" else [UNKNOWN, TIME])
    return out


SGL_CASES = [
    pytest.param(n, c, mode, marks=_mark(SGL_XFAIL, (n, c, mode)), id=f"{n}-{c}-{mode}")
    for n in sorted(SGL_FORMAT) for c in sgl_outputs(n) for mode in ("one_shot", "stream")
]


def _sgl_stream(p, pieces):
    normal, calls = [], {}

    def take(n, cs):
        normal.append(n or "")
        for c in cs:
            d = calls.setdefault(c.tool_index, {"name": None, "args": ""})
            if c.name:
                d["name"] = c.name
            d["args"] += c.parameters or ""

    for piece in pieces:
        take(*p.parse_stream_chunk(piece))
    take(*p.parse_stream_end())
    return _ws("".join(normal)), [(k, calls[k]["name"], json.loads(calls[k]["args"] or "null")) for k in sorted(calls)]


@pytest.mark.parametrize("name,case,mode", SGL_CASES)
def test_sglang_equal(name, case, mode):
    assert name in rcs.TOOL_DETECTORS
    rcs.register()
    text = sgl_outputs(name)[case]
    if mode == "one_shot":
        theirs, ours = FunctionCallParser(SGL_TOOLS, name), FunctionCallParser(SGL_TOOLS, f"rc_{name}")
        assert ours.has_tool_call(text) == theirs.has_tool_call(text)
        norm = lambda r: (_ws(r[0]), [(c.tool_index, c.name, json.loads(c.parameters)) for c in r[1]])  # noqa: E731
        got = norm(ours.parse_non_stream(text))
        assert got == norm(theirs.parse_non_stream(text))
        assert len(got[1]) == (0 if (name, case) == ("gigachat3", "unknown") else N_CALLS.get(case, 1))
        return
    rng = random.Random(f"{name}/{case}")
    for _ in range(4):
        pieces = text_chunks(text, rng, _ATOMS[name], most=5)
        a = _sgl_stream(FunctionCallParser(SGL_TOOLS, name), pieces)
        b = _sgl_stream(FunctionCallParser(SGL_TOOLS, f"rc_{name}"), pieces)
        assert b == a, pieces


@pytest.mark.parametrize("mode", ["one_shot", "stream"])
def test_vllm_hy_v4_suffixed_tags(mode):
    """A checkpoint whose tags carry a suffix (``<tool_calls:6124c78e>``): vLLM
    reads it from the vocabulary, ours from the section's opening tag."""
    sfx = ":6124c78e"
    tok = vllm_tokenizer(tuple(m[:-1] + sfx + ">" for m in _HY))
    text = re.sub(r"<(/?(?:tool_calls|tool_call|arg_key|arg_value))>", lambda m: f"<{m.group(1)}{sfx}>",
                  PRE + write("hy_v4", [WEATHER, TIME]))
    theirs, ours = _vllm_pair("hy_v4", tok)
    req = chat_request(tools=VLLM_TOOLS)
    if mode == "one_shot":
        a, b = theirs.extract_tool_calls(text, req), ours.extract_tool_calls(text, req)
        assert (b.tools_called, _calls(b), _ws(b.content)) == (a.tools_called, _calls(a), _ws(a.content))
        assert len(_calls(b)) == 2
    else:
        ids = list(tok.encode(text, add_special_tokens=False))
        got = _vllm_stream(ours, tok, ids, req)
        assert got == _vllm_stream(theirs, tok, ids, req) and len(got[0]) == 2
