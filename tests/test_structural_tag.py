"""reasoning_core.structural_tag without xgrammar: the tag's structure (reasoning
block, call marker, one tag per tool holding its schema), tool_choice variants and
input validation.  The real xgrammar compiles and runs these tags in
tests/integrations/test_structural_tag_xgrammar.py."""
from __future__ import annotations

import importlib.util
import json

import pytest

import reasoning_core
from reasoning_core import tools as rc_tools
from reasoning_core.families import FAMILIES
from reasoning_core.structural_tag import BUILTIN_MODELS, ToolTagSpec, has_tool_tag, schema_call, structural_tag

HAVE_XGRAMMAR = importlib.util.find_spec("xgrammar") is not None
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
          "required": ["city"]}
WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}
TIME = {"name": "get_time", "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}}}
TOOLS = [WEATHER, TIME]
FIRST_FORMATS = ("hermes", "qwen3_coder", "llama3_json", "deepseek_v3", "deepseek_v31", "kimi_k2", "glm45",
                 "laguna", "minimax_m2", "mistral", "deepseekv4", "gemma4", "inkling", "muse_glimmer")


def walk(node):
    """Every format node of a tag, depth first."""
    if isinstance(node, dict):
        if "type" in node:
            yield node
        for v in node.values():
            if isinstance(v, (dict, list)) and not (isinstance(v, dict) and "properties" in v):
                yield from walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from walk(v)


def kinds(tag) -> list[str]:
    return [n["type"] for n in walk(tag["format"])]


def call_tags(tag) -> list[dict]:
    return [n for n in walk(tag["format"]) if n["type"] == "tag" and "get_" in str(n.get("begin"))]


def schemas(tag) -> list:
    return [n["json_schema"] for n in walk(tag["format"]) if n["type"] == "json_schema"]


def test_public_name():
    assert reasoning_core.structural_tag.structural_tag is structural_tag  # the module, importable lazily
    assert {"structural_tag", "ToolTagSpec"} <= set(reasoning_core.structural_tag.__all__)


@pytest.mark.parametrize("fmt", FIRST_FORMATS)
def test_every_first_format_has_a_tag(fmt):
    assert has_tool_tag(fmt)
    tag = structural_tag(None, TOOLS, tool_format=fmt)
    assert tag["type"] == "structural_tag"
    json.dumps(tag)  # plain JSON
    top = tag["format"]
    assert top["type"] == "triggered_tags" and len(top["triggers"]) == 1
    assert top["at_least_one"] is False
    # one tag per tool (inside the section, when the format has one), begin holds the name
    names = [n for n in ("get_weather", "get_time") if any(n in t["begin"] for t in call_tags(tag))]
    assert names == ["get_weather", "get_time"]
    for t in top["tags"]:
        assert t["begin"].startswith(top["triggers"][0])
    if fmt not in ("gemma4", "muse_glimmer"):  # these two spell the arguments out per property
        assert SCHEMA in schemas(tag)


# the further modules' formats (one name per parser class) and those left without a tag
FURTHER_FORMATS = ("apertus", "hunyuan_a13b", "longcat", "gigachat3", "functiongemma", "mimo", "hunyuan", "dots",
                   "gigachat35", "seed_oss", "cohere_command", "step3", "kimi_k3", "k2_horizon", "plamo3",
                   "minimax_m3", "gpt_oss", "phi4_mini_json", "granite", "granite_20b_fc", "internlm", "xlam",
                   "deepseek_v32", "deepseek_v41", "trinity", "iquest_q1", "spark25", "minicpm5", "inkling_framed",
                   "beam")
UNTAGGED = ("pythonic", "lfm2", "olmo3", "muse")


@pytest.mark.parametrize("fmt", FURTHER_FORMATS)
def test_every_further_format_has_a_tag(fmt):
    assert has_tool_tag(fmt)
    tag = structural_tag(None, TOOLS, tool_format=fmt)
    top = tag["format"]
    assert top["type"] == "triggered_tags" and len(top["triggers"]) == 1
    trigger = top["triggers"][0]
    for t in top["tags"]:  # a section, or the calls themselves, open with the trigger
        assert t["begin"].startswith(trigger)
    text = json.dumps(tag, ensure_ascii=False)
    assert "get_weather" in text and "get_time" in text and "get_stock" not in text
    # the schema is held: as JSON schema, or spelled out per property
    assert SCHEMA in schemas(tag) or ('"city' in text or "city" in text) and {"type": "integer"} in schemas(tag)
    named = structural_tag(None, TOOLS, tool_format=fmt, tool_choice="get_time")
    assert "get_weather" not in json.dumps(named)


@pytest.mark.parametrize("fmt", UNTAGGED)
def test_formats_without_a_tag(fmt):
    assert fmt in rc_tools.available() and not has_tool_tag(fmt)
    with pytest.raises(ValueError, match="does not describe its calls"):
        structural_tag(None, TOOLS, tool_format=fmt)


def test_every_parser_class_is_tagged_or_listed():
    tagged = {rc_tools.get_parser_cls(f) for f in FIRST_FORMATS + FURTHER_FORMATS}
    untagged = {rc_tools.get_parser_cls(f) for f in UNTAGGED}
    assert {rc_tools.get_parser_cls(f) for f in rc_tools.available()} == tagged | untagged


def test_tag_per_parameter_syntaxes():
    """The further formats' own argument syntaxes: one element per property, a
    string as text, another type as JSON; counters and ids as digits."""
    def consts(fmt, tools=(WEATHER,)):
        tag = structural_tag(None, list(tools), tool_format=fmt)
        return [n["value"] for n in walk(tag["format"]) if n["type"] == "const_string"], tag

    c, tag = consts("kimi_k3")
    assert '<|open|>argument key="city" type="string"<|sep|>' in c
    assert '<|open|>argument key="days" type="integer"<|sep|>' in c
    assert {"type": "regex", "pattern": "[0-9]+"} in list(walk(tag["format"]))  # the call's index
    c, tag = consts("gigachat35")
    assert '<｜GCML｜parameter name="city" string="true">' in c
    assert '<｜GCML｜parameter name="days" string="false">' in c and {"type": "integer"} in schemas(tag)
    c, _ = consts("deepseek_v41")
    assert '<｜DSML｜ parameter name="city" string="true">' in c
    c, _ = consts("functiongemma")
    assert c[:4] == ["city:", "<escape>", "<escape>", ","] and "days:" in c
    c, _ = consts("minimax_m3")
    assert c[:2] == ["]<]minimax[>[<city>", "]<]minimax[>[</city>\n"]
    xs = {"type": "array", "items": {"type": "integer"}}
    nested = {"name": "f", "parameters": {"type": "object", "required": ["p"], "properties": {
        "p": {"type": "object", "required": ["xs"], "properties": {"xs": xs}}}}}
    c, tag = consts("minimax_m3", [nested])
    assert c[:3] == ["]<]minimax[>[<p>", "]<]minimax[>[<xs>", "]<]minimax[>[<item>"]
    assert {"type": "integer"} in schemas(tag)
    c, tag = consts("cohere_command")
    assert '", "tool_name": "get_weather", "parameters": ' in c
    assert tag["format"]["tags"][0]["begin"] == "<|START_ACTION|>["
    c, _ = consts("beam")
    assert '<rfl:parameter name="city">\n' in c and "\n</rfl:parameter>" in c
    # a bare JSON list: the trigger opens the first call, the separator each later one
    tag = structural_tag(None, TOOLS, tool_format="xlam")
    section = tag["format"]["tags"][0]
    assert tag["format"]["triggers"] == ['[{"name": "'] and section["begin"] == '[{"name": "'
    assert section["content"]["separator"] == ', {"name": "'
    assert [t["begin"] for t in section["content"]["tags"]] == [
        'get_weather", "arguments": ', 'get_time", "arguments": ']


def test_has_tool_tag():
    described = {f for f in rc_tools.available() if has_tool_tag(f)}
    assert set(FIRST_FORMATS) <= described
    assert not has_tool_tag("no_such_format")
    for fmt in described:  # aliases and the further modules' formats that describe their calls
        json.dumps(structural_tag(None, TOOLS, tool_format=fmt, tool_choice="required"))


def test_reasoning_block_open_at_start():
    tag = structural_tag("deepseek_r1", TOOLS, builtin=False)
    prefix, answer = tag["format"]["elements"]
    assert prefix == {"type": "tag", "begin": "", "content": {"type": "any_text"}, "end": "</think>"}
    assert answer["type"] == "triggered_tags"
    assert "<think>" in answer["excludes"] and "</think>" in answer["excludes"]


def test_reasoning_block_optional_when_the_output_opens_it():
    tag = structural_tag("gemma4", TOOLS)
    prefix = tag["format"]["elements"][0]
    assert prefix["type"] == "optional"
    assert prefix["content"] == {"type": "tag", "begin": "<|channel>", "content": {"type": "any_text"},
                                 "end": "<channel|>"}
    opened = structural_tag("gemma4", TOOLS, starts_in_reasoning=True)
    assert opened["format"]["elements"][0]["begin"] == ""


def test_several_markers():
    fam = FAMILIES["muse_glimmer"]
    prefix = structural_tag("muse_glimmer", TOOLS)["format"]["elements"][0]
    assert prefix["type"] == "optional" and prefix["content"]["type"] == "or"
    assert [t["begin"] for t in prefix["content"]["elements"]] == list(fam.start)


def test_no_reasoning():
    tag = structural_tag("mistral", TOOLS, reasoning=False)
    assert tag["format"]["type"] == "triggered_tags"
    assert "[THINK]" not in json.dumps(tag["format"]["triggers"])
    assert structural_tag(None, TOOLS, tool_format="mistral")["format"]["type"] == "triggered_tags"


def test_tool_choice_required():
    tag = structural_tag("mistral", TOOLS, reasoning=False, tool_choice="required")
    free, calls = tag["format"]["elements"]
    assert free == {"type": "any_text", "excludes": ["[THINK]", "[/THINK]", "[TOOL_CALLS]"]}
    assert calls["type"] == "triggered_tags" and calls["at_least_one"] is True


def test_tool_choice_named():
    for choice in ("get_time", {"type": "function", "function": {"name": "get_time"}}, {"name": "get_time"}):
        tag = structural_tag("mistral", TOOLS, reasoning=False, tool_choice=choice)
        free, call = tag["format"]["elements"]
        assert free["type"] == "any_text"
        assert call["type"] == "tag" and call["begin"] == "[TOOL_CALLS]get_time[ARGS]"
    # a named tool in a sectioned format: exactly one call inside the section
    tag = structural_tag(None, TOOLS, tool_format="minimax_m2", tool_choice="get_time")
    section = tag["format"]["elements"][1]
    assert section["begin"] == "<minimax:tool_call>\n"
    assert section["content"]["stop_after_first"] is True
    assert [t["begin"] for t in section["content"]["tags"]] == ['<invoke name="get_time">\n']


def test_tool_choice_none_and_no_tools():
    for tag in (structural_tag("mistral", TOOLS, reasoning=False, tool_choice="none"),
                structural_tag("mistral", [], reasoning=False), structural_tag("mistral", None, reasoning=False)):
        assert tag["format"] == {"type": "any_text", "excludes": ["[THINK]", "[/THINK]", "[TOOL_CALLS]"]}


def test_parallel_tool_calls_false():
    tag = structural_tag(None, TOOLS, tool_format="hermes", parallel_tool_calls=False)
    assert tag["format"]["stop_after_first"] is True


def test_non_strict_tool_has_free_arguments():
    loose = {"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA, "strict": False}}
    assert schemas(structural_tag(None, [loose], tool_format="hermes")) == [True]
    assert schemas(structural_tag(None, [{"name": "get_weather"}], tool_format="hermes")) == [True]


def test_gemma4_arguments_follow_the_schema():
    tag = structural_tag(None, [WEATHER], tool_format="gemma4")
    consts = [n["value"] for n in walk(tag["format"]) if n["type"] == "const_string"]
    assert consts[:4] == ["{", "city:", '<|"|>', '<|"|>']  # the required key first, a string value
    assert consts[4:7] == [",", "days:", "}"]  # the optional one after a comma
    assert {"type": "integer"} in schemas(tag)


def test_muse_glimmer_arguments_follow_the_schema():
    tag = structural_tag(None, [WEATHER], tool_format="muse_glimmer")
    text = json.dumps(tag)
    assert '<atem:parameter name=\\"city\\">' in text and '<atem:parameter name=\\"days\\">' in text
    assert {"type": "integer"} in schemas(tag)


def test_hook_on_the_parser_class(monkeypatch):
    """A format describes its calls with ``tool_tag`` on its parser class."""
    cls = rc_tools.get_parser_cls("hermes")
    spec = ToolTagSpec("<call>", schema_call("<call>{name}:", "</call>"))
    monkeypatch.setattr(cls, "tool_tag", spec, raising=False)
    tag = structural_tag(None, [WEATHER], tool_format="hermes")
    assert tag["format"]["triggers"] == ["<call>"]
    assert tag["format"]["tags"][0]["begin"] == "<call>get_weather:"
    monkeypatch.setattr(cls, "tool_tag", "not a spec", raising=False)
    with pytest.raises(TypeError, match="ToolTagSpec"):
        structural_tag(None, [WEATHER], tool_format="hermes")


@pytest.mark.parametrize("family", sorted(n for n, f in FAMILIES.items() if f.tool_parser is not None))
def test_every_family_with_a_tool_format(family):
    tag = structural_tag(family, TOOLS, builtin=False)
    assert "sequence" in kinds(tag) or tag["format"]["type"] == "triggered_tags"
    assert json.loads(json.dumps(tag)) == tag


@pytest.mark.skipif(HAVE_XGRAMMAR, reason="xgrammar is installed")
def test_builtin_needs_xgrammar():
    with pytest.raises(ImportError, match=r"reasoning-spans\[xgrammar\]"):
        structural_tag("qwen3", TOOLS)
    with pytest.raises(ImportError, match="xgrammar"):
        structural_tag("gemma4", TOOLS, as_object=True)
    assert structural_tag("qwen3", TOOLS, builtin=False)["type"] == "structural_tag"
    # another tool format than the family's own: ours, no xgrammar needed
    assert structural_tag("qwen3", TOOLS, tool_format="mistral")["type"] == "structural_tag"


def test_builtin_table_names_families_with_tool_formats():
    for fam in BUILTIN_MODELS:
        assert FAMILIES[fam].tool_parser is not None


# ---------------------------------------------------------------------------- validation

@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"family": "no_such_family"}, ValueError, "no_such_family"),
    ({"family": 3}, TypeError, "family must be"),
    ({"family": "kimi"}, ValueError, "has none of ours"),
    ({"family": None}, ValueError, "tool_format"),
    ({"tool_format": "no_such_format"}, ValueError, "no_such_format"),
    ({"tool_format": 1}, TypeError, "tool_format must be"),
    ({"tools": {"name": "x"}}, TypeError, "tools must be a list"),
    ({"tools": ["get_weather"]}, TypeError, r"tools\[0\] must be a dict"),
    ({"tools": [{"type": "code_interpreter"}]}, ValueError, "not a function spec"),
    ({"tools": [{"function": {"parameters": SCHEMA}}]}, ValueError, "valid function name"),
    ({"tools": [{"name": "has space"}]}, ValueError, "valid function name"),
    ({"tools": [{"name": "f", "parameters": "object"}]}, TypeError, "parameters must be"),
    ({"tools": [WEATHER, WEATHER]}, ValueError, "duplicate"),
    ({"tool_choice": "get_stock"}, ValueError, "get_stock"),
    ({"tool_choice": {"type": "function"}}, ValueError, "names no function"),
    ({"tool_choice": 5}, TypeError, "tool_choice must be"),
    ({"tools": [], "tool_choice": "required"}, ValueError, "at least one tool"),
    ({"reasoning": "yes"}, TypeError, "reasoning must be a bool"),
])
def test_bad_input(kwargs, exc, match):
    args = {"family": "mistral", "tools": TOOLS, **kwargs}
    with pytest.raises(exc, match=match):
        structural_tag(args.pop("family"), args.pop("tools"), **args)
