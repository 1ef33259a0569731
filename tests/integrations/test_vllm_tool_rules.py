"""vLLM-only rules of a few tool-parser names, against vLLM's own classes.

``k2_horizon`` (dialect picked by the request, whole-group checks, the group
held in streaming), ``minicpm5`` (byte-level marks, per-block checks against
the request's tools), ``deepseek_v32`` (arguments corrected against the
schema, a lone wrapper opened) and ``dots`` (calls that all name unknown tools
stay content): one-shot results compared with vLLM's parser of the same name
on inputs where both keep all the text.  Skips without vLLM.
"""
from __future__ import annotations

import json

import pytest

from vllm_helpers import chat_request, import_vllm, vllm_tokenizer

import_vllm()

from reasoning_core.integrations import vllm as rcv  # noqa: E402


def _tool(name, props, required=()):
    params = {"type": "object", "properties": props}
    if required:
        params["required"] = list(required)
    return {"type": "function", "function": {"name": name, "parameters": params}}


TOOLS = [
    _tool("find_room", {"floor": {"type": "integer"}, "label": {"type": "string"}, "open": {"type": "boolean"}},
          required=["floor"]),
    _tool("ring", {}),
]


def _pair(name):
    theirs_cls = rcv._vllm_own_class("tool", name)
    if theirs_cls is None:
        pytest.skip(f"vLLM has no {name} tool parser")
    tok = vllm_tokenizer(())
    return rcv.TOOL_PARSERS[name](tok, None), theirs_cls(tok, None)


def _summary(result):
    calls = [(c.function.name, json.loads(c.function.arguments)) for c in result.tool_calls]
    return result.tools_called, calls, result.content


def _ifm(*blocks, before="", after=""):
    return before + "<ifm|tool_calls>" + "".join(f"<ifm|tool_call>{b}</ifm|tool_call>" for b in blocks) \
        + "</ifm|tool_calls>" + after


K2_CASES = [
    ("xml", _ifm("find_room<ifm|arg_key>floor</ifm|arg_key><ifm|arg_value>4</ifm|arg_value>", before="On it. ")),
    ("xml_typed", _ifm("find_room<ifm|arg_key>floor</ifm|arg_key><ifm|arg_type>integer</ifm|arg_type>"
                       "<ifm|arg_value>7</ifm|arg_value>")),
    ("json", _ifm('{"name": "find_room", "arguments": {"floor": "3", "open": "false"}}', after=" done")),
    ("json", _ifm("find_room<ifm|arg_key>floor</ifm|arg_key><ifm|arg_value>4</ifm|arg_value>")),  # wrong dialect
    ("xml", _ifm('{"name": "ring", "arguments": {}}')),  # wrong dialect
    ("xml_typed", _ifm("find_room<ifm|arg_key>floor</ifm|arg_key><ifm|arg_value>4</ifm|arg_value>")),
    ("xml", _ifm("elevator")),  # not a tool of the request
    ("xml", "<ifm|tool_calls><ifm|tool_call>ring</ifm|tool_call>"),  # no group end
    ("xml", _ifm("ring", "ring")),
]


@pytest.mark.parametrize("dialect,text", K2_CASES)
def test_k2_horizon_one_shot_matches_vllm(dialect, text):
    ours, theirs = _pair("k2_horizon")
    req = chat_request(tools=TOOLS, chat_template_kwargs={"tool_call_format": dialect})
    assert _summary(ours.extract_tool_calls(text, req)) == _summary(theirs.extract_tool_calls(text, req))


def test_k2_horizon_named_choice_and_bad_dialect():
    ours, theirs = _pair("k2_horizon")
    named = chat_request(tools=TOOLS, tool_choice={"type": "function", "function": {"name": "ring"}},
                         chat_template_kwargs={"tool_call_format": "xml"})
    text = _ifm("find_room<ifm|arg_key>floor</ifm|arg_key><ifm|arg_value>2</ifm|arg_value>")
    assert _summary(ours.extract_tool_calls(text, named)) == _summary(theirs.extract_tool_calls(text, named))
    assert not ours.extract_tool_calls(text, named).tools_called
    bad = chat_request(tools=TOOLS, chat_template_kwargs={"tool_call_format": "yaml"})
    with pytest.raises(ValueError):
        theirs.adjust_request(bad)
    with pytest.raises(ValueError, match="tool_call_format"):
        ours.adjust_request(bad)
    # a client's value is named cut short: the error response stays small
    huge = chat_request(tools=TOOLS, chat_template_kwargs={"tool_call_format": "x" * 1_000_000})
    with pytest.raises(ValueError, match=r"tool_call_format .*\(1,000,000 characters\)") as info:
        ours.adjust_request(huge)
    assert len(str(info.value)) < 500


def test_k2_horizon_streams_the_group_whole():
    ours, _ = _pair("k2_horizon")
    req = chat_request(tools=TOOLS, chat_template_kwargs={"tool_call_format": "xml"})
    text = _ifm("find_room<ifm|arg_key>floor</ifm|arg_key><ifm|arg_value>5</ifm|arg_value>", before="Hi", after="!")
    content, calls = [], []
    for ch in text:
        msg = ours.extract_tool_calls_streaming("", "", ch, [], [], [], req)
        if msg is not None:
            content.append(msg.content or "")
            calls += [(c.function.name, json.loads(c.function.arguments)) for c in msg.tool_calls]
    end = ours.finish_streaming()
    content.append(end.content or "" if end is not None else "")
    assert "".join(content) == "Hi!"
    assert calls == [("find_room", {"floor": 5})]


MC_CASES = [
    '<function name="find_room"><param name="floor">2</param><param name="label">A</param></function>',
    '<functionname="find_room"><paramname="floor">9</paramname></function>'.replace("</paramname>", "</param>"),
    '<function\u0120name="find_room"><param\u0120name="floor">1</param></function>',
    '<function name="find_room"><param name="label">no floor</param></function>',  # required missing
    '<function name="lift"><param name="floor">1</param></function>',  # unknown tool
    '<function name="find_room"><param name="floor">1</param><param name="floor">2</param></function>',
    '<function name="find_room"><param>1</param></function>',
    '<function name="find_room"><param name="floor">3</param><param name="extra">x</param></function>',
    '<function name="find_room"><param name="arguments">{"floor": 6}</param></function>',
    '<function name="find_room"><param name="floor">1</param>',  # no </function>
]


@pytest.mark.parametrize("text", MC_CASES)
def test_minicpm5_one_shot_matches_vllm(text):
    ours, theirs = _pair("minicpm5")
    req = chat_request(tools=TOOLS)
    assert _summary(ours.extract_tool_calls(text, req)) == _summary(theirs.extract_tool_calls(text, req))


DS = "｜DSML｜"


def _dsml(params):
    body = "".join(f'<{DS}parameter name="{k}" string="{s}">{v}</{DS}parameter>\n' for k, s, v in params)
    return (f"<{DS}function_calls>\n<{DS}invoke name=\"find_room\">\n{body}</{DS}invoke>\n"
            f"</{DS}function_calls>")


@pytest.mark.parametrize("params", [
    [("floor", "true", "12")],
    [("floor", "false", "3.0"), ("label", "false", "null")],
    [("arguments", "false", '{"floor": 8, "label": "B"}')],
    [("input", "true", '{"floor": 2}')],
])
def test_deepseek_v32_one_shot_matches_vllm(params):
    ours, theirs = _pair("deepseek_v32")
    req = chat_request(tools=TOOLS)
    text = _dsml(params)
    assert _summary(ours.extract_tool_calls(text, req))[:2] == _summary(theirs.extract_tool_calls(text, req))[:2]


@pytest.mark.parametrize("name", ["ring", "elevator"])
def test_dots_unknown_tools_stay_content(name):
    ours, theirs = _pair("dots")
    req = chat_request(tools=TOOLS)
    text = f'<dots_function_call><invoke name="{name}"></invoke></dots_function_call>'
    assert _summary(ours.extract_tool_calls(text, req))[:2] == _summary(theirs.extract_tool_calls(text, req))[:2]
    if name == "elevator":
        assert ours.extract_tool_calls(text, req).content == text


# -- what vLLM's class of a name has beyond the ToolParser interface ------------

@pytest.mark.parametrize("args", ["", "city:<escape>Tokyo<escape>", "n:<escape>42<escape>,ok:<escape>true<escape>",
                                  "m:<escape>Hello World<escape>"])
def test_vllm_helper_methods_answer_on_ours(args):
    ours, theirs = _pair("functiongemma")
    assert ours._parse_arguments(args) == theirs._parse_arguments(args)


def test_vllm_helper_methods_use_our_state_not_a_borrowed_parser():
    ours, theirs = _pair("functiongemma")
    for p in (ours, theirs):
        p.buffered_delta_text = "<start_function_"
    assert ours._buffer_delta_text("call>") == theirs._buffer_delta_text("call>")
    assert ours.buffered_delta_text == theirs.buffered_delta_text == ""
    assert ours._buffer_delta_text("hi <start") == theirs._buffer_delta_text("hi <start") == "hi "
    assert "buffered_delta_text" in vars(ours)  # written on ours
    # constants vLLM's __init__ sets are answered; parsing state and unknown names are not
    pool, pool_theirs = _pair("poolside_v1")
    assert pool.tool_call_start_token == pool_theirs.tool_call_start_token
    with pytest.raises(AttributeError):
        pool.prev_tool_call_arr_of_theirs  # noqa: B018
    assert not hasattr(ours, "skip_reasoning_parsing")  # probed by vLLM's serving layer per request


@pytest.mark.parametrize("choice,expect", [("none", True), ("auto", False)])
def test_adjust_request_reads_a_mock_request_as_it_is(choice, expect):
    from unittest.mock import MagicMock

    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    ours, theirs = _pair("functiongemma")
    reqs = []
    for p in (ours, theirs):
        req = MagicMock(spec=ChatCompletionRequest)
        req.tools = [{"type": "function", "function": {"name": "t"}}]
        req.tool_choice, req.skip_special_tokens, req.parallel_tool_calls = choice, True, True
        reqs.append(p.adjust_request(req).skip_special_tokens)
    assert reqs == [expect, expect]


@pytest.mark.parametrize("logprobs", [False, True])
def test_poolside_held_step_answers_empty_delta_when_logprobs_asked(logprobs):
    ours, theirs = _pair("poolside_v1")
    req = chat_request(tools=TOOLS, logprobs=logprobs, stream=True)
    got = [p.extract_tool_calls_streaming("", "<", "<", [], [], [], req) for p in (ours, theirs)]
    assert [None if m is None else m.content for m in got] == ([""] * 2 if logprobs else [None, None])


APERTUS_CASES = [
    'Let me check. <|tools_prefix|>[{"find_room": {"floor": 2}}]<|tools_suffix|>',
    'Sure.\n\n<|tools_prefix|>[{"find_room": {"floor": 2}}]<|tools_suffix|>\n  Done here. ',
    '<|tools_prefix|>[{"find_room": {"floor": 4}}',  # cut off after the call
    '<|tools_prefix|>[{"find_room": {"floor": 4}',  # cut off after the arguments
    'On it <|tools_prefix|>[{"ring": {}}, {"find_room": {"floor": 4, "open": true}',
    '<|tools_prefix|>[{"find_room": {"floor": 4}}, {"ring": {}}',
    '<|tools_prefix|>[{"find_room": {"floor": 4}}]',
]


@pytest.mark.parametrize("text", APERTUS_CASES)
def test_apertus_one_shot_matches_vllm(text):
    ours, theirs = _pair("apertus")
    req = chat_request(tools=TOOLS)
    assert _summary(ours.extract_tool_calls(text, req)) == _summary(theirs.extract_tool_calls(text, req))


def test_apertus_call_cut_inside_its_arguments_stays_text():
    ours, _ = _pair("apertus")
    text = '<|tools_prefix|>[{"find_room": {"label": "Ro'
    out = ours.extract_tool_calls(text, chat_request(tools=TOOLS))
    assert (out.tools_called, out.content) == (False, text)


# -- dots streamed as vLLM's class streams it: whole blocks -----------------------

REF_TOOLS = [{"type": "function", "function": {"name": "place", "parameters": {
    "type": "object",
    "properties": {"where": {"$ref": "#/$defs/Spot"}, "days": {"type": "integer"},
                   "alt": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/Spot"}]}},
    "$defs": {"Spot": {"type": "object", "properties": {"city": {"type": "string"}}}}}}}]


def _inv(name, **params):
    body = "".join(f'<parameter name="{k}">{v}</parameter>' for k, v in params.items())
    return f'<dots_function_call><invoke name="{name}">{body}</invoke></dots_function_call>'


DOTS_STREAMS = [
    "visible " + _inv("find_room", floor=3, label="B") + " after",
    _inv("find_room", floor=1) + _inv("ring"),
    '<dots_function_call>{"name":"find_room","arguments":{"floor":2}}</dots_function_call>',
    _inv("ghost", q="x") + "tail",  # no listed tool: the block's text
    "<dots_function_call>garbage</dots_function_call>" + _inv("ring"),  # malformed, then a call
    "some text </dots_function_call> more",  # a bare end marker
    "answer <dots_func",  # a partial opening marker at the end
]


def _run_stream(parser, chunks, req, ours):
    prev, content, calls, messages = "", [], {}, []
    for ch in chunks:
        msg = parser.extract_tool_calls_streaming(prev, prev + ch, ch, [], [], [], req)
        prev += ch
        if msg is not None:
            messages.append(msg)
    if ours:
        end = parser.finish_streaming()
        if end is not None:
            messages.append(end)
    for msg in messages:
        content.append(msg.content or "")
        for c in msg.tool_calls or ():
            entry = calls.setdefault(c.index, ["", ""])
            entry[0] += (c.function.name or "") if c.function else ""
            entry[1] += (c.function.arguments or "") if c.function else ""
    if not ours:
        content.append(parser.flush_pending_normal_text())
    return "".join(content), [(n, json.loads(a)) for n, a in (calls[i] for i in sorted(calls))]


def _splits(text):
    yield list(text)
    for i in range(1, len(text)):
        yield [text[:i], text[i:]]


@pytest.mark.parametrize("text", DOTS_STREAMS)
def test_dots_streaming_matches_vllm_at_every_split(text):
    # vLLM's answer for the text in one piece; ours the same however the
    # stream is cut (vLLM's keeps a bare end marker the chunks split)
    _, theirs = _pair("dots")
    req = chat_request(tools=TOOLS)
    expect = _run_stream(theirs, [text], req, False)
    for chunks in _splits(text):
        ours, _ = _pair("dots")
        assert _run_stream(ours, chunks, req, True) == expect, chunks


def test_dots_json_call_goes_out_before_its_end_marker():
    ours, theirs = _pair("dots")
    req = chat_request(tools=TOOLS)
    chunks = ["<dots_function_call>", '{"name":"find_room","arguments":{"floor":2}}', "</dots_function_call>"]
    got = []
    for p in (ours, theirs):
        prev, shape = "", []
        for ch in chunks:
            msg = p.extract_tool_calls_streaming(prev, prev + ch, ch, [], [], [], req)
            prev += ch
            shape.append(None if msg is None else [(c.index, c.function.name, c.function.arguments)
                                                   for c in msg.tool_calls])
        got.append(shape)
    assert got[0] == got[1]
    assert got[0][1] == [(0, "find_room", ""), (0, None, '{"floor": 2}')]


def test_dots_flush_releases_what_ours_hold_once():
    ours, _ = _pair("dots")
    req = chat_request(tools=TOOLS)
    msg = ours.extract_tool_calls_streaming("", "x <dots_fu", "x <dots_fu", [], [], [], req)
    assert msg.content == "x " and ours._buffer == "<dots_fu"
    assert ours.flush_pending_normal_text() == "<dots_fu"
    assert ours.flush_pending_normal_text() == "" and ours._buffer == ""
    assert ours.finish_streaming() is None


def test_dots_block_cut_off_by_the_end_keeps_its_text_or_calls():
    ours, _ = _pair("dots")
    req = chat_request(tools=TOOLS)
    text = '<dots_function_call><invoke name="find_room"><parameter name="floor">4'
    assert ours.extract_tool_calls_streaming("", text, text, [], [], [], req) is None
    assert ours.flush_pending_normal_text() == ""  # inside a block: finish_streaming releases it
    end = ours.finish_streaming()
    got = (end.content, [(c.function.name, json.loads(c.function.arguments)) for c in end.tool_calls])
    assert got in ((text, []), (None, [("find_room", {"floor": 4})]))


@pytest.mark.parametrize("value", ['{"city": "Shanghai"}', '{"city": "Oslo", "zip": 150}', "null", " NULL "])
def test_dots_ref_schemas_type_parameters_as_vllm(value):
    ours, theirs = _pair("dots")
    req = chat_request(tools=REF_TOOLS)
    text = "ok" + _inv("place", where=value, days=3, alt='{"city": "Oslo"}')
    assert _summary(ours.extract_tool_calls(text, req)) == _summary(theirs.extract_tool_calls(text, req))
    assert _run_stream(ours, [text], req, True) == _run_stream(theirs, [text], req, False)


@pytest.mark.parametrize("value", ["null", "Null", " null\n", "nullish"])
def test_dots_xml_value_written_null_reads_as_vllm(value):
    ours, theirs = _pair("dots")
    req = chat_request(tools=TOOLS)
    text = _inv("find_room", floor=value, label=value, extra=value)
    assert _summary(ours.extract_tool_calls(text, req)) == _summary(theirs.extract_tool_calls(text, req))
    assert _run_stream(ours, [text], req, True) == _run_stream(theirs, [text], req, False)


# -- minicpm5: vLLM's alias names (a call written under a name MiniCPM5 uses for a listed tool) ------

_ROAM = _tool("toggle_roaming", {"line_id": {"type": "string"}, "enabled": {"type": "boolean"}},
              required=["line_id", "enabled"])
_ALIAS_CASES = [
    ([_ROAM], 'Sure.\n<function name="enable_roaming"><param name="line_id">L1001</param></function>\nDone.'),
    ([_ROAM], '<function name="disable_roaming"><param name="id">L2</param></function>'),
    ([_tool("get_details_by_id", {"id": {"type": "string"}}, ["id"])],
     '<function name="get_line_details"><param name="customer_id">C1001</param>'
     '<param name="line_id">L1001</param></function>'),
    ([_tool("get_details_by_id", {"id": {"type": "string"}}, ["id"])],
     '<function name="get_plan_details"><param name="plan_id">P9</param></function>'),
    ([_tool("get_customer_by_phone", {"phone_number": {"type": "string"}}, ["phone_number"])],
     '<function name="get_details_by_phone"><param name="phone">555-123-2002</param></function>'),
    ([_tool("get_customer_by_name", {"full_name": {"type": "string"}, "date_of_birth": {"type": "string"}},
            ["full_name"])],
     '<function name="get_details_by_name"><param name="name">Ann Lee</param>'
     '<param name="dob">1990-01-02</param></function>'),
    ([_tool("refuel_data", {"customer_id": {"type": "string"}, "line_id": {"type": "string"},
                            "amount_gb": {"type": "number"}})],
     '<function name="add_data_to_line"><param name="customer_id">C1</param><param name="gb">2.5</param></function>'),
    # no alias: the target is not listed, the alias itself is, or nothing maps
    ([_tool("enable_roaming", {"line_id": {"type": "string"}}, ["line_id"]), _ROAM],
     '<function name="enable_roaming"><param name="line_id">L7</param></function>'),
    ([_tool("other", {})], '<function name="enable_roaming"><param name="line_id">L7</param></function>'),
    ([_ROAM], '<function name="enable_roaming"><param name="colour">red</param></function>'),
]


@pytest.mark.parametrize("tools,text", _ALIAS_CASES)
def test_minicpm5_alias_names_one_shot_as_vllm(tools, text):
    ours, theirs = _pair("minicpm5")
    req = chat_request(tools=tools)
    got, want = _summary(ours.extract_tool_calls(text, req)), _summary(theirs.extract_tool_calls(text, req))
    assert got[:2] == want[:2]


@pytest.mark.parametrize("tools,text", [c for c in _ALIAS_CASES if "colour" not in c[1] and "other" not in str(c[0])])
@pytest.mark.parametrize("step", [1, 2, 3, 7, 1000])
def test_minicpm5_alias_names_streamed_as_one_shot(tools, text, step):
    """Streamed, a call under an alias is held until its arguments close, then
    sent once under the tool it maps to: the same calls as one-shot."""
    ours, _ = _pair("minicpm5")
    req = chat_request(tools=tools)
    want = _summary(ours.extract_tool_calls(text, req))[1]
    ours, _ = _pair("minicpm5")
    calls: dict = {}
    prev = ""
    msgs = []
    for i in range(0, len(text), step):
        dt = text[i:i + step]
        msgs.append(ours.extract_tool_calls_streaming(prev, prev + dt, dt, [], [], [], req))
        prev += dt
    msgs.append(ours.finish_streaming())
    for m in msgs:
        for tc in (m.tool_calls if m is not None else None) or ():
            c = calls.setdefault(tc.index, ["", ""])
            if tc.function is not None and tc.function.name:
                assert not c[0], "a call's name is sent once"
                c[0] = tc.function.name
            if tc.function is not None and tc.function.arguments:
                c[1] += tc.function.arguments
    assert [(n, json.loads(a)) for n, a in calls.values()] == want
