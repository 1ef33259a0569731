"""reasoning-core's tool formats under vLLM's tool-parser names, against vLLM's own.

One-shot (``extract_tool_calls``) and streamed one token per step
(``extract_tool_calls_streaming``, deltas merged by index): the same calls
(name, arguments as JSON) and the same content.  Skips without vLLM.
"""
from __future__ import annotations

import json

import pytest

from vllm_helpers import chat_request, deepseek_vllm_tokenizer, detokenize_steps, import_vllm, vllm_tokenizer

import_vllm()

from vllm.tool_parsers import ToolParserManager  # noqa: E402

from reasoning_core.integrations import vllm as rcv  # noqa: E402
from test_hardening_tools import call_text  # noqa: E402
from vocab import FAMILY_SPECIALS  # noqa: E402

# vLLM tool name -> (the format's sample writer name, the family whose vocabulary has its markers)
FORMATS = {
    "hermes": ("hermes", "qwen3"),
    "qwen3_coder": ("qwen3_coder", "qwen3"),
    "llama3_json": ("llama3_json", ("<|python_tag|>", "<|eom_id|>")),
    "deepseek_v3": ("deepseek_v3", None),
    "deepseek_v31": ("deepseek_v31", None),
    "kimi_k2": ("kimi_k2", "kimi_k2"),
    "glm45": ("glm45", "glm45"),
    "glm47": ("glm45", "glm47"),
    "minimax_m2": ("minimax_m2", "minimax_m2"),
    "mistral": ("mistral", "mistral"),
}

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}},
]
PREFIX = "Let me check the weather. "


def tokenizer(fam):
    """fam: a family whose vocabulary has the markers, a tuple of special tokens, or None (DeepSeek's)."""
    if fam is None:
        return deepseek_vllm_tokenizer()
    return vllm_tokenizer(fam if isinstance(fam, tuple) else FAMILY_SPECIALS[fam])


def texts(fmt: str) -> dict[str, str]:
    one = call_text(fmt, "get_weather", "city", '"Paris"')
    return {
        "call": one if fmt == "llama3_json" else PREFIX + one,
        "no_call": "The weather in Paris is sunny.",
    }


CASES = [(n, c) for n in sorted(FORMATS) for c in texts(FORMATS[n][0])]


def _pair(name: str, tok):
    try:
        theirs = ToolParserManager.get_tool_parser(name)(tok, None)
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"vLLM's {name} tool parser does not build with an offline tokenizer: {exc}"[:200])
    return theirs, rcv.TOOL_PARSERS[name](tok, None)


def _calls(info):
    return [(c.function.name, json.loads(c.function.arguments)) for c in info.tool_calls]


def _norm(content):
    return (content or "").strip() or None


@pytest.mark.parametrize("name,case", CASES)
def test_one_shot_tool_calls_equal_vllm(name, case):
    fmt, fam = FORMATS[name]
    tok = tokenizer(fam)
    text = texts(fmt)[case]
    theirs, ours = _pair(name, tok)
    req = chat_request(tools=TOOLS)
    a, b = theirs.extract_tool_calls(text, req), ours.extract_tool_calls(text, req)
    assert (b.tools_called, _calls(b), _norm(b.content)) == (a.tools_called, _calls(a), _norm(a.content))


def _stream(parser, tok, ids, req):
    content, calls = [], {}
    steps = detokenize_steps(tok, ids)
    msgs = [parser.extract_tool_calls_streaming(pt, ct, dt, pi, ci, di, req) for dt, pt, ct, pi, ci, di in steps]
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
    return merged, _norm("".join(content))


@pytest.mark.parametrize("name,case", CASES)
def test_streamed_tool_calls_equal_vllm(name, case):
    fmt, fam = FORMATS[name]
    tok = tokenizer(fam)
    text = texts(fmt)[case]
    ids = list(tok.encode(text, add_special_tokens=False))
    theirs, ours = _pair(name, tok)
    req = chat_request(tools=TOOLS)
    assert _stream(ours, tok, ids, req) == _stream(theirs, tok, ids, req)


@pytest.fixture(scope="module")
def union_tok():
    from vllm_serving_helpers import union_specials

    return vllm_tokenizer(union_specials())


@pytest.mark.parametrize("name", sorted(rcv.TOOL_PARSERS))
def test_parsing_never_builds_vllms_class(name, union_tok, monkeypatch):
    """Parsing, one-shot and streamed, asks nothing of vLLM's class of the
    name: its helpers are reached only when a caller asks for a name ours
    lacks (building vLLM's class costs a hundred microseconds or more per
    request)."""
    cls = rcv.TOOL_PARSERS[name]
    try:
        ours = cls(union_tok, None)
    except Exception as exc:  # noqa: BLE001 - a name that needs its real vocabulary
        pytest.skip(f"{name} does not build with this vocabulary: {exc}"[:200])
    monkeypatch.setattr(rcv, "_vllm_own_class", lambda *a: pytest.fail(f"{name}: vLLM's class was asked for"))
    texts_ = ["The weather in Paris is sunny."]
    try:
        texts_.append(PREFIX + call_text(cls.rc_format, "get_weather", "city", '"Paris"'))
    except AssertionError:  # one of MAX's formats: its own suite's writer
        import test_tools_max
        from reasoning_core import tools

        fmt = tools.create(cls.rc_format).format_name
        assert fmt in test_tools_max.NEW, fmt
        texts_.append(PREFIX + test_tools_max.render(fmt, [("get_weather", {"city": "Paris"})]))
    for text in texts_:
        ids = list(union_tok.encode(text, add_special_tokens=False))
        _stream(ours, union_tok, ids, chat_request(tools=TOOLS))
        ours.extract_tool_calls(text, chat_request(tools=TOOLS))
    assert "_vllm_fresh" not in vars(ours)


def test_tool_choice_none_reports_no_call():
    tok = tokenizer("qwen3")
    text = texts("hermes")["call"]
    ours = rcv.TOOL_PARSERS["hermes"](tok, None)
    info = ours.extract_tool_calls(text, chat_request(tools=TOOLS, tool_choice="none"))
    assert not info.tools_called and info.content == text


def test_string_parameter_stays_a_string_with_request_schema():
    tok = tokenizer("qwen3")
    text = call_text("qwen3_coder", "get_weather", "city", "1234")
    ours = rcv.TOOL_PARSERS["qwen3_coder"](tok, None)
    info = ours.extract_tool_calls(text, chat_request(tools=TOOLS))
    assert _calls(info) == [("get_weather", {"city": "1234"})]


@pytest.mark.parametrize("name", sorted(rcv._STRUCTURAL_TAG_MODELS))
def test_structural_tag_equals_vllms(name):
    """The structural tag vLLM asks a tool parser for (xgrammar's built-in format)."""
    fmt, fam = FORMATS.get(name, (None, None))
    tok = tokenizer(fam) if fmt is not None else vllm_tokenizer(FAMILY_SPECIALS["qwen3"])
    try:
        theirs = ToolParserManager.get_tool_parser(name)(tok, None)
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"vLLM's {name} tool parser does not build offline: {exc}"[:200])
    from vllm.tool_parsers.tool_strict_level import ToolStrictLevel

    ours = rcv.TOOL_PARSERS[name](tok, None)
    dump = (lambda t: None if t is None else (t.model_dump_json() if hasattr(t, "model_dump_json") else str(t)))
    built = 0
    for choice in ("auto", "required"):
        req = chat_request(tools=TOOLS, tool_choice=choice)
        for reasoning in (True, False):
            for level in (ToolStrictLevel.AUTO, ToolStrictLevel.PARAMETER):
                a = theirs.get_structural_tag(req, reasoning=reasoning, strict_level=level)
                b = ours.get_structural_tag(req, reasoning=reasoning, strict_level=level)
                assert dump(b) == dump(a)
                built += a is not None
    assert built  # a tag was built and compared


def test_structural_tag_compiles_and_matches_with_xgrammar():
    """rc_hermes's tag, compiled by xgrammar against the tokenizer: free
    reasoning, then a valid call, is accepted; an invalid call is rejected."""
    xgr = pytest.importorskip("xgrammar")
    tok = tokenizer("qwen3")
    ours = rcv.TOOL_PARSERS["hermes"](tok, None)
    from vllm.tool_parsers.tool_strict_level import ToolStrictLevel

    tag = ours.get_structural_tag(chat_request(tools=TOOLS, tool_choice="auto"), reasoning=True,
                                  strict_level=ToolStrictLevel.PARAMETER)
    if tag is None:
        pytest.skip("structural tags switched off (VLLM_ENFORCE_STRICT_TOOL_CALLING)")
    info = xgr.TokenizerInfo.from_huggingface(tok, vocab_size=len(tok.get_vocab()))
    compiled = xgr.GrammarCompiler(info).compile_structural_tag(
        tag.model_dump_json() if hasattr(tag, "model_dump_json") else tag)

    def accepts(text: str) -> bool:
        m = xgr.GrammarMatcher(compiled)
        return m.accept_string(text)

    good = ('<think>Free reasoning, {not json}.</think>\n'
            '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>')
    bad = ('<think>ok</think>\n'
           '<tool_call>\n{"name": "get_weather", "arguments": {"city": 12}}\n</tool_call>')
    assert accepts(good)
    assert not accepts(bad)
    assert accepts("<think>No tool needed.</think>\nIt is sunny in Paris.")  # tool_choice="auto": no call is fine


def test_every_vllm_tool_parser_name_is_served_or_explained():
    registered = {n for n in ToolParserManager.list_registered() if not n.startswith("rc_")}
    served, unserved = set(rcv.TOOL_PARSERS), set(rcv.TOOL_NOT_SERVED)
    assert not served & unserved
    assert registered - served - unserved == set()
    assert (served | unserved) - registered == set()  # no stale names
    assert all(isinstance(why, str) and len(why) > 20 for why in rcv.TOOL_NOT_SERVED.values())


@pytest.mark.parametrize("name", ["qwen3_coder", "qwen3_xml", "kimi_k2", "glm45"])
def test_whitespace_after_a_call_is_judged_by_its_run_whatever_the_chunks(name):
    # (found by the vLLM tool fuzz target) under vLLM's whitespace rule, whitespace after a
    # call was dropped when it came in a delta of its own and kept when text came with it:
    # a run of whitespace followed by text now goes out whole, one that a call or the end
    # follows is dropped, in any deltas
    fmt = {"qwen3_xml": "qwen3_coder", "glm45": "glm45"}.get(name, name)
    tok = tokenizer(FORMATS.get(name, (None, "qwen3"))[1] if name in FORMATS else "qwen3")
    one = call_text(fmt, "get_weather", "city", '"Paris"')
    req = chat_request(tools=TOOLS)
    for text, want in ((one + "\n\n</x> done", "\n\n</x> done"), (one + "\n \n" + one + "\n", ""),
                       ("Hi " + one + " \n", "Hi  \n")):  # (the rule ends with the first text)
        seen = set()
        for size in (1, 2, 3, 5, len(text)):
            p = rcv.TOOL_PARSERS[name](tok, None)
            prev, content, names = "", [], []
            for i in range(0, len(text), size):
                ch = text[i:i + size]
                m = p.extract_tool_calls_streaming(prev, prev + ch, ch, [], [], [], req)
                prev += ch
                if m is not None:
                    content.append(m.content or "")
                    names += [tc.function.name for tc in m.tool_calls or () if tc.function and tc.function.name]
            m = p.finish_streaming()
            if m is not None:
                content.append(m.content or "")
            seen.add(("".join(content), tuple(names)))
        assert len(seen) == 1, (name, text, seen)
        got, names = seen.pop()
        assert got == want and names == ("get_weather",) * text.count("get_weather"), (name, text, got)
