"""Call builders for structural tags: one tool call's xgrammar ``tag`` format.

``ToolTagSpec`` and ``schema_call`` (re-exported by ``reasoning_core.structural_tag``)
and the helpers that spell out the tag-per-parameter syntaxes of the further
tool formats.  A leaf of the package's imports (it reads only the family table),
so the tool formats import their ``tool_tag`` builders from here while
``structural_tag`` imports the tool registry, without an import circle.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence, Union

__all__ = ["ToolTagSpec", "schema_call"]

from .families import get_family, tool_opener

Tag = dict  # one xgrammar format, as JSON

# Tool-call markers, from the family table (written there once).
_TOOL_CALL = tool_opener("qwen3")  # <tool_call>, also GLM's, MiMo's, Hunyuan's inner call
_GEMMA_CALL = tool_opener("gemma4")  # <|tool_call>
_COMMENTARY = get_family("gpt_oss").header_terminators[-1]  # <|channel|>commentary


# ---------------------------------------------------------------------------- format pieces

def _const(value: str) -> Tag:
    return {"type": "const_string", "value": value}


def _any(excludes: Sequence[str] = ()) -> Tag:
    return {"type": "any_text", "excludes": list(excludes)} if excludes else {"type": "any_text"}


def _seq(elements: list) -> Tag:
    return elements[0] if len(elements) == 1 else {"type": "sequence", "elements": elements}


def _or(elements: list) -> Tag:
    return elements[0] if len(elements) == 1 else {"type": "or", "elements": elements}


def _optional(content: Tag) -> Tag:
    return {"type": "optional", "content": content}


def _tag(begin: str, content: Tag, end: Union[str, list]) -> Tag:
    return {"type": "tag", "begin": begin, "content": content, "end": end}


def _json(schema: Any, style: str = "json") -> Tag:
    out = {"type": "json_schema", "json_schema": schema}
    if style != "json":
        out["style"] = style
    return out


def schema_call(begin: str, end: str, style: str = "json") -> Callable[[str, Any], Tag]:
    """A ``ToolTagSpec.call``: ``begin`` + the arguments (JSON schema ``style``) +
    ``end``; ``{name}`` in ``begin``/``end`` is the tool's name."""

    def call(name: str, parameters: Any) -> Tag:
        return _tag(begin.replace("{name}", name), _json(parameters, style), end.replace("{name}", name))

    return call


@dataclass(frozen=True)
class ToolTagSpec:
    """How a tool format's calls look, for the structural tag.

    ``trigger``: the text that opens tool-call output (a prefix of ``section[0]``,
    or of every call's begin when there is no section); ``call(name, parameters)``:
    one call's ``tag`` format; ``section``: ``(begin, end)`` around the calls, or
    None when calls stand alone; ``separator``: text between consecutive calls.
    Text a call writes before its trigger (Inkling writes the tool's name) is
    content: free, not checked against the call.
    """

    trigger: str
    call: Callable[[str, Any], Tag]
    section: Optional[tuple[str, str]] = None
    separator: str = ""


# ---------------------------------------------------------------------------- custom argument syntaxes

def _types(schema: Mapping) -> set:
    t = schema.get("type")
    if isinstance(t, str):
        return {t}
    if isinstance(t, list):
        return {x for x in t if isinstance(x, str)}
    return set()


def _members(props: Mapping, required, pair: Callable[[str, Any], Tag], sep: str) -> Tag:
    """Object members in declared order, each required one present, each optional
    one present or not, ``sep`` between two that are (the first one written may be
    any optional member before the first required one)."""
    items = [(pair(k, v), k in required) for k, v in props.items()]
    first_req = next((i for i, (_, req) in enumerate(items) if req), None)
    alts = []
    for k in range(len(items) if first_req is None else first_req + 1):
        elems = [items[k][0]]
        for f, req in items[k + 1:]:
            f = _seq([_const(sep), f]) if sep else f
            elems.append(f if req else _optional(f))
        alts.append(_seq(elems))
    body = _or(alts)
    return _optional(body) if first_req is None else body


def _plain_object(schema: Any) -> Optional[tuple[dict, set]]:
    if not isinstance(schema, Mapping) or not isinstance(schema.get("properties"), Mapping):
        return None
    if schema.get("properties") == {} or any(k in schema for k in ("anyOf", "oneOf", "allOf", "$ref")):
        return None
    req = schema.get("required")
    return dict(schema["properties"]), set(req) if isinstance(req, list) else set()


G_STR = '<|"|>'
G_CALL_END = "<tool_call|>"


def _gemma_value(schema: Any) -> Tag:
    """Gemma 4's argument syntax: strings between ``<|"|>``, bare keys, bare JSON
    scalars, ``{k:v,...}`` and ``[v,...]`` without spaces."""
    if not isinstance(schema, Mapping):
        schema = {}
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return _or([_seq([_const(G_STR), _const(v), _const(G_STR)]) if isinstance(v, str)
                    else _const(json.dumps(v)) for v in schema["enum"]])
    types = _types(schema)
    alts = []
    if "string" in types or not types:
        alts.append(_seq([_const(G_STR), _any([G_STR, G_CALL_END]), _const(G_STR)]))
    scalars = sorted(types & {"integer", "number", "boolean", "null"}) or (
        [] if types else ["number", "boolean", "null"])
    if scalars:
        sub = {k: v for k, v in schema.items() if k not in ("type", "properties", "items")}
        alts.append(_json({**sub, "type": scalars[0] if len(scalars) == 1 else scalars}))
    if "object" in types:
        alts.append(_gemma_object(schema))
    if "array" in types:
        item = _gemma_value(schema.get("items"))
        alts.append(_seq([_const("["), _optional(_seq([item, {"type": "star", "content": _seq([_const(","), item])}])),
                          _const("]")]))
    return _or(alts)


def _gemma_object(schema: Any) -> Tag:
    plain = _plain_object(schema)
    if plain is None:  # free-form object: any text up to the closing brace of the call
        return _seq([_const("{"), _any(["}", G_CALL_END]), _const("}")])
    props, req = plain
    return _seq([_const("{"), _members(props, req, lambda k, v: _seq([_const(k + ":"), _gemma_value(v)]), ","),
                 _const("}")])


def _gemma_call(name: str, parameters: Any) -> Tag:
    begin = f"{_GEMMA_CALL}call:{name}"
    if _plain_object(parameters) is None:  # unconstrained arguments
        return _tag(begin + "{", _any([G_CALL_END]), "}" + G_CALL_END)
    return _tag(begin, _gemma_object(parameters), G_CALL_END)


def _regex(pattern: str) -> Tag:
    return {"type": "regex", "pattern": pattern}


_INDEX = r"[0-9]+"  # a per-turn call counter the model writes (ids, indices)


def _is_text(schema: Any) -> bool:
    """A value written as raw text (a string, or any value) rather than JSON."""
    types = _types(schema) if isinstance(schema, Mapping) else set()
    return "string" in types or not types


def _text_value(schema: Any, excludes: Sequence[str]) -> Tag:
    """A parameter's value in a tag-per-parameter format: a string's text
    verbatim (an enum: one of its values), any other value as JSON."""
    if isinstance(schema, Mapping) and isinstance(schema.get("enum"), list) and schema["enum"]:
        return _or([_const(v if isinstance(v, str) else json.dumps(v)) for v in schema["enum"]])
    return _any(excludes) if _is_text(schema) else _json(schema)


def _params_call(begin: str, end: str, pair: Callable[[str, Any], Tag], free: Sequence[str],
                 head: Optional[Tag] = None) -> Callable[[Any], Tag]:
    """A call whose arguments are one element per parameter (``pair(key,
    schema)``, declared order; see ``_members``) after ``begin`` (and ``head``,
    a format, when the call's header is not fixed text); arguments without a
    plain object schema are any text without ``free``."""

    def build(parameters: Any) -> Tag:
        plain = _plain_object(parameters)
        body = _any(free) if plain is None else _members(plain[0], plain[1], pair, "")
        return _tag(begin, body if head is None else _seq([head, body]), end)

    return build


ATEM_PARAM_END = "</atem:parameter>"


def _atem_call(name: str, parameters: Any) -> Tag:
    """Muse Glimmer: one ``<atem:parameter name="K">V</atem:parameter>`` per
    argument, a string's text verbatim, any other value as JSON."""

    def pair(key: str, schema: Any) -> Tag:
        value = _text_value(schema, [ATEM_PARAM_END, "<atem:"])
        return _seq([_const(f'<atem:parameter name="{key}">'), value, _const(ATEM_PARAM_END + "\n")])

    return _params_call(f'<atem:invoke name="{name}">\n', "</atem:invoke>\n", pair,
                        ["</atem:invoke>"])(parameters)


def _flagged_call(prefix: str) -> Callable[[str, Any], Tag]:
    """DSML's invoke under another tag prefix (GigaChat 3.5's ``｜GCML｜``,
    DeepSeek V4.1's ``｜DSML｜ ``): ``<PinvokeQ name="N">`` then one
    ``<Pparameter name="K" string="true|false">V</Pparameter>`` per argument (a
    string's text verbatim with ``true``, any other value as JSON with ``false``)."""
    p_end, inv_end = f"</{prefix}parameter>", f"</{prefix}invoke>"

    def pair(key: str, schema: Any) -> Tag:
        enum = schema.get("enum") if isinstance(schema, Mapping) else None
        text = all(isinstance(v, str) for v in enum) if isinstance(enum, list) and enum else _is_text(schema)
        head = f'<{prefix}parameter name="{key}" string="{"true" if text else "false"}">'
        return _seq([_const(head), _text_value(schema, [p_end, f"<{prefix}"]), _const(p_end + "\n")])

    def call(name: str, parameters: Any) -> Tag:
        return _params_call(f'<{prefix}invoke name="{name}">\n', inv_end + "\n", pair, [inv_end])(parameters)

    return call


_S3_PARAM_END = "</steptml:parameter>"


def _step3_call(name: str, parameters: Any) -> Tag:
    """Step-3: ``<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="N">``
    then ``<steptml:parameter name="K">V</steptml:parameter>`` per argument."""

    def pair(key: str, schema: Any) -> Tag:
        return _seq([_const(f'<steptml:parameter name="{key}">'), _text_value(schema, [_S3_PARAM_END, "<steptml:"]),
                     _const(_S3_PARAM_END + "\n")])

    begin = f'<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="{name}">\n'
    return _params_call(begin, "</steptml:invoke><｜tool_call_end｜>", pair,
                        ["</steptml:invoke>", "<｜tool_call_end｜>"])(parameters)


_K3_ARG_END = "<|close|>argument<|sep|>"


def _k3_type(schema: Any) -> str:
    if isinstance(schema, Mapping) and isinstance(schema.get("enum"), list) and schema["enum"]:
        return _json_type(schema["enum"][0])
    types = sorted(_types(schema) if isinstance(schema, Mapping) else set())
    return "string" if "string" in types or not types else types[0]


def _json_type(v: Any) -> str:
    return ("null" if v is None else "boolean" if isinstance(v, bool) else "integer" if isinstance(v, int)
            else "number" if isinstance(v, float) else "string" if isinstance(v, str)
            else "array" if isinstance(v, list) else "object")


def _k3_call(name: str, parameters: Any) -> Tag:
    """Kimi K3 (XTML): ``<|open|>call tool="N" index="I"<|sep|>`` then
    ``<|open|>argument key="K" type="T"<|sep|>V<|close|>argument<|sep|>`` per
    argument (``type="string"``: the text verbatim; another schema type: JSON)."""

    def pair(key: str, schema: Any) -> Tag:
        return _seq([_const(f'<|open|>argument key="{key}" type="{_k3_type(schema)}"<|sep|>'),
                     _text_value(schema, [_K3_ARG_END, "<|open|>", "<|close|>"]), _const(_K3_ARG_END)])

    return _params_call(f'<|open|>call tool="{name}" index="', "<|close|>call<|sep|>", pair,
                        ["<|close|>call<|sep|>"], head=_seq([_regex(_INDEX), _const('"<|sep|>')]))(parameters)


_IFM_VALUE_END = "</ifm|arg_value>"


def _ifm_call(name: str, parameters: Any) -> Tag:
    """K2 Horizon (IFM): ``<ifm|tool_call>BODY</ifm|tool_call>`` in any of the
    template's three ``tool_call_format`` dialects: ``xml`` (its default: ``N``
    then ``<ifm|arg_key>K</ifm|arg_key><ifm|arg_value>V</ifm|arg_value>`` per
    argument, one per line), ``xml_typed`` (an ``<ifm|arg_type>T</ifm|arg_type>``
    between key and value) and ``json`` (``{"name": "N", "arguments": {…}}``)."""
    typed = _optional(_seq([_const("<ifm|arg_type>"), _any(["</ifm|arg_type>", "<ifm|"]),
                            _const("</ifm|arg_type>")]))

    def pair(key: str, schema: Any) -> Tag:
        return _seq([_const(f"<ifm|arg_key>{key}</ifm|arg_key>"), typed, _const("<ifm|arg_value>"),
                     _text_value(schema, [_IFM_VALUE_END, "<ifm|"]), _const(_IFM_VALUE_END + "\n")])

    plain = _plain_object(parameters)
    pairs = _any(["</ifm|tool_call>"]) if plain is None else _members(plain[0], plain[1], pair, "")
    xml = _seq([_const(f"{name}\n"), pairs])
    js = _seq([_const(f'{{"name": "{name}", "arguments": '), _json(parameters), _const("}")])
    return _tag("<ifm|tool_call>", _or([xml, js]), "</ifm|tool_call>")


MM = "]<]minimax[>["
_MM_DEPTH = 8  # nesting spelled out per property; deeper objects are free elements


def _mm_value(key: str, schema: Any, depth: int) -> Tag:
    """MiniMax M3: the element ``MM<K>…MM</K>`` of one value: a string's text,
    a scalar's JSON, an object's properties as child elements, an array's items
    as ``<item>`` children (any other object or array: free text, which the
    parser reads as elements or JSON)."""
    close = f"{MM}</{key}>"
    t = _types(schema) if isinstance(schema, Mapping) else set()
    if depth < _MM_DEPTH and t == {"object"} and _plain_object(schema) is not None:
        props, req = _plain_object(schema)
        inner = _members(props, req, lambda k, v: _mm_value(k, v, depth + 1), "")
    elif depth < _MM_DEPTH and t == {"array"}:
        inner = {"type": "star", "content": _mm_value("item", schema.get("items"), depth + 1)}
    elif t & {"object", "array"} and not (isinstance(schema, Mapping) and "enum" in schema):
        inner = _any([close])
    else:
        inner = _text_value(schema, [MM])
    return _seq([_const(f"{MM}<{key}>"), inner, _const(close + "\n")])


def _mm3_call(name: str, parameters: Any) -> Tag:
    return _params_call(f'{MM}<invoke name="{name}">\n', f"{MM}</invoke>\n",
                        lambda k, v: _mm_value(k, v, 0), [f"{MM}</invoke>"])(parameters)


FG_ESC, FG_END = "<escape>", "<end_function_call>"


def _fg_value(schema: Any) -> Tag:
    """FunctionGemma's value: a string between ``<escape>`` tags, a scalar as
    bare JSON, an object or array as JSON between ``<escape>`` tags (the parser
    reads a bare value only up to the next ``,`` or ``}``)."""
    if isinstance(schema, Mapping) and isinstance(schema.get("enum"), list) and schema["enum"]:
        return _or([_const(f"{FG_ESC}{v}{FG_ESC}") if isinstance(v, str) else _const(json.dumps(v))
                    for v in schema["enum"]])
    if _is_text(schema):
        return _seq([_const(FG_ESC), _any([FG_ESC, FG_END]), _const(FG_ESC)])
    types = _types(schema)
    if types & {"object", "array"}:
        return _seq([_const(FG_ESC), _json(schema), _const(FG_ESC)])
    return _json(schema)


def _fg_call(name: str, parameters: Any) -> Tag:
    """FunctionGemma: ``<start_function_call>call:N{k:<escape>v<escape>,n:5}<end_function_call>``."""
    begin = f"<start_function_call>call:{name}{{"
    plain = _plain_object(parameters)
    if plain is None:
        return _tag(begin, _any([FG_END]), "}" + FG_END)
    props, req = plain
    return _tag(begin, _members(props, req, lambda k, v: _seq([_const(k + ":"), _fg_value(v)]), ","), "}" + FG_END)


def _hunyuan_call(name: str, parameters: Any) -> Tag:
    """Hunyuan Hy3 / Hy4: GLM's ``<arg_key>``/``<arg_value>`` pairs after the
    name, ``<tool_sep>`` between them (Hy3) or not (Hy4)."""
    return _tag(f"{_TOOL_CALL}{name}", _seq([_optional(_const("<tool_sep>")), _json(parameters, "glm_xml")]),
                "</tool_call>")


def _mimo_call(name: str, parameters: Any) -> Tag:
    """MiMo: Qwen3-Coder's ``<function=N>``/``<parameter=K>`` inside
    ``<tool_call>``, with or without the newlines between the tags."""
    nl = _optional(_const("\n"))
    return _tag(_TOOL_CALL, _seq([nl, _const(f"<function={name}>"), _json(parameters, "qwen_xml"),
                                     _const("</function>"), nl]), "</tool_call>")


def _cohere_call(name: str, parameters: Any) -> Tag:
    """Cohere Command's action in its list: ``{"tool_call_id": "I", "tool_name":
    "N", "parameters": {…}}`` (the id a per-turn counter), with the whitespace
    around it free (the template writes one action per indented line, SGLang
    none)."""
    ws = _regex(r"[ \n]*")
    return _tag("", _seq([ws, _const('{"tool_call_id": "'), _regex(_INDEX),
                          _const(f'", "tool_name": "{name}", "parameters": '), _json(parameters), _const("}"), ws]), "")


def _gpt_oss_call(name: str, parameters: Any) -> Tag:
    """gpt-oss (harmony): a commentary message to ``functions.N`` constrained
    to JSON, ended by ``<|call|>``; the recipient in the channel header
    (``<|channel|>commentary to=functions.N <|constrain|>json<|message|>``) or in
    the role header (``<|start|>assistant to=functions.N<|channel|>commentary
    json<|message|>``). The trigger is the recipient: the header text before it
    is content to the tag."""
    message = _const("<|constrain|>json<|message|>")
    channel_first = _seq([_optional(_const(" ")), message])
    role_first = _seq([_const(_COMMENTARY + " "), _or([message, _const("json<|message|>")])])
    return _tag(f"to=functions.{name}", _seq([_or([channel_first, role_first]), _json(parameters)]), "<|call|>")


def _kimi_call(name: str, parameters: Any) -> Tag:
    # the call id's index (functions.NAME:IDX) is any number
    index = {"type": "regex", "pattern": r"[0-9]+"}
    return _tag(f"<|tool_call_begin|>functions.{name}:",
                _seq([index, _const("<|tool_call_argument_begin|>"), _json(parameters)]), "<|tool_call_end|>")


_BEAM_PARAM_END = "</rfl:parameter>"


def _beam_call(name: str, parameters: Any) -> Tag:
    """Beam: `` to=N<|channel|>analysis <|constrain|>xml<|message|>`` then
    ``<rfl:parameter name="K">\nV\n</rfl:parameter>`` per argument, ``<|call|>``."""

    def pair(key: str, schema: Any) -> Tag:
        return _seq([_const(f'<rfl:parameter name="{key}">\n'),
                     _text_value(schema, [_BEAM_PARAM_END, "<rfl:parameter", "<|call|>", "<|end|>"]),
                     _const("\n" + _BEAM_PARAM_END)])

    return _params_call(f" to={name}<|channel|>analysis <|constrain|>xml<|message|>", "<|call|>", pair,
                        ["<|call|>", "<|end|>"])(parameters)


def _minicpm_call(name: str, parameters: Any) -> Tag:
    """MiniCPM5: ``<function name="N">`` then ``<param name="K">V</param>`` per
    argument; a string is XML text (references allowed, no ``<``) or a CDATA
    section, any other value JSON."""

    def pair(key: str, schema: Any) -> Tag:
        if _is_text(schema) and not (isinstance(schema, Mapping) and "enum" in schema):
            value = _or([_any(["<"]), _seq([_const("<![CDATA["), _any(["]]>"]), _const("]]>")])])
        else:
            value = _text_value(schema, ["<"])
        return _seq([_const(f'<param name="{key}">'), value, _const("</param>")])

    return _params_call(f'<function name="{name}">', "</function>", pair, ["</function>"])(parameters)
