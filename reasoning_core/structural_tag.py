"""Structural tags: a grammar for constrained decoding that leaves reasoning free
and holds each tool call to its tool's JSON schema.

``structural_tag(family, tools)`` returns xgrammar's StructuralTag JSON format as
a plain dict (``{"type": "structural_tag", "format": {...}}``), the form every
consumer takes: vLLM's ``structured_outputs={"structural_tag": json.dumps(tag)}``,
SGLang's ``response_format``, xgrammar's ``GrammarCompiler.compile_structural_tag``
(``as_object=True`` gives an ``xgrammar.StructuralTag`` instead).

The tag reads, in order:

- the reasoning block, free text between the family's start and end markers:
  already open when generation starts inside reasoning (``starts_in_reasoning``,
  by default the family's), optional otherwise, absent with ``reasoning=False``;
- the answer: free content in which the tool format's call marker starts a call
  whose name is one of ``tools`` and whose arguments are valid against that
  tool's ``parameters`` (a tool with ``"strict": False`` gets any arguments).
  ``tool_choice``: ``"auto"`` (calls optional), ``"required"`` (the answer starts
  with a call), a tool name or ``{"type": "function", "function": {"name": ...}}``
  (exactly one call of that tool), ``"none"`` (no calls).

Where xgrammar has a built-in template for the family's exact format (its
``get_model_structural_tag``; see ``BUILTIN_MODELS``) that template is used, which
needs xgrammar (``pip install 'reasoning-spans[xgrammar]'``; ``builtin=False``
builds ours instead).  Every other tag is built here from the family table and the
tool format's ``ToolTagSpec``, without xgrammar.

A tool format describes its calls next to its parser: a ``tool_tag`` class
attribute on the parser class (a ``ToolTagSpec``), e.g.::

    from reasoning_core.structural_tag import ToolTagSpec, schema_call

    class MyToolParser(BaseToolParser):
        openers = ("<call>",)
        tool_tag = ToolTagSpec(trigger="<call>",
                               call=schema_call("<call>{name}\\n", "</call>"))

``call(name, parameters)`` returns one call's ``tag`` format (``schema_call``
covers a fixed begin/end around the arguments in any of xgrammar's JSON schema
styles: ``json``, ``qwen_xml``, ``glm_xml``, ``minimax_xml``, ``deepseek_xml``);
``section=(begin, end)`` wraps one or more calls, joined by ``separator``.  The
formats of the first fourteen parsers are described in ``_SPECS`` below; the
helpers in ``reasoning_core._tag_calls`` (``_flagged_call``, ``_k3_call``,
``_mm3_call``, …) spell out the tag-per-parameter syntaxes of the further
formats for their ``tool_tag``.  That module is where the call builders live
(this one re-exports ``ToolTagSpec`` and ``schema_call``): the tool formats
import it, and this module imports the tool registry, without an import circle.
"""
from __future__ import annotations

import json
from typing import Any, Literal, Mapping, Optional, Sequence, Union, overload

from ._shared import brief, brief_names
from ._tag_calls import (Tag, ToolTagSpec, _any, _atem_call, _gemma_call, _kimi_call, _optional, _or, _seq, _tag,
                         schema_call)
from .families import Family, get_family, terminators_of, tool_opener

__all__ = ["structural_tag", "ToolTagSpec", "schema_call", "has_tool_tag", "BUILTIN_MODELS", "JSONValue"]

_EXTRA = "pip install 'reasoning-spans[xgrammar]'"

# A tag as JSON data (what ``structural_tag`` returns without ``as_object``).
JSONValue = Union[dict[str, "JSONValue"], list["JSONValue"], str, int, float, bool, None]

# family -> xgrammar's built-in model whose markers and call syntax are the
# family's own (used for the family's own tool format only)
BUILTIN_MODELS: dict[str, str] = {
    "deepseek_r1": "deepseek_r1",
    "deepseek_v3": "deepseek_v3_1",
    "qwen3": "qwen_3",
    "qwen3_thinking": "qwen_3",
    "qwen3_5": "qwen_3_5",
    "kimi_k2": "kimi",
    "glm45": "glm_4_7",
    "glm47": "glm_4_7",
    "minimax_m2": "minimax",
}


# Tool-call openers, from the family table (written there once).
_DS_CALLS = (tool_opener("deepseek_v3"), "<｜tool▁calls▁end｜>")
_KIMI_CALLS = (terminators_of("kimi_k2")[0], "<|tool_calls_section_end|>")  # the spelling the chat template writes
_TC = tool_opener("qwen3")  # <tool_call>: Hermes, Qwen3-Coder, GLM, Laguna
_MINIMAX = tool_opener("minimax_m2")  # <minimax:tool_call>
_GEMMA = tool_opener("gemma4")  # <|tool_call>
_INKLING = tool_opener("inkling")  # <|content_invoke_tool_json|>

# Our first fourteen formats, by parser ``format_name`` (further formats set
# ``tool_tag`` on their parser class).
_SPECS: dict[str, ToolTagSpec] = {
    "hermes": ToolTagSpec(_TC, schema_call(_TC + '\n{"name": "{name}", "arguments": ', "}\n</tool_call>")),
    "qwen3_coder": ToolTagSpec(_TC, schema_call(_TC + "\n<function={name}>\n", "\n</function>\n</tool_call>",
                                                "qwen_xml")),
    "llama3_json": ToolTagSpec('{"name": "', schema_call('{"name": "{name}", "parameters": ', "}")),
    "deepseek_v3": ToolTagSpec(_DS_CALLS[0], schema_call(
        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n", "\n```<｜tool▁call▁end｜>"),
        section=_DS_CALLS, separator="\n"),
    "deepseek_v31": ToolTagSpec(_DS_CALLS[0], schema_call("<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>",
                                                          "<｜tool▁call▁end｜>"), section=_DS_CALLS),
    "kimi_k2": ToolTagSpec(_KIMI_CALLS[0], _kimi_call, section=_KIMI_CALLS),
    "glm45": ToolTagSpec(_TC, schema_call(_TC + "{name}", "</tool_call>", "glm_xml")),
    "laguna": ToolTagSpec(_TC, schema_call(_TC + "{name}", "</tool_call>", "glm_xml")),
    "minimax_m2": ToolTagSpec(_MINIMAX, schema_call('<invoke name="{name}">\n', "</invoke>\n", "minimax_xml"),
                              section=(_MINIMAX + "\n", "</minimax:tool_call>")),
    "mistral": ToolTagSpec("[TOOL_CALLS]", schema_call("[TOOL_CALLS]{name}[ARGS]", "")),
    "deepseekv4": ToolTagSpec("<｜DSML｜tool_calls>", schema_call('<｜DSML｜invoke name="{name}">\n',
                                                                "</｜DSML｜invoke>\n", "deepseek_xml"),
                              section=("<｜DSML｜tool_calls>\n", "</｜DSML｜tool_calls>")),
    "gemma4": ToolTagSpec(_GEMMA, _gemma_call),
    "inkling": ToolTagSpec(_INKLING, schema_call(_INKLING + '{"name": "{name}", "args": ', "}")),
    "muse_glimmer": ToolTagSpec("<atem:function_calls>", _atem_call,
                                section=("<atem:function_calls>\n", "</atem:function_calls>")),
}


def _spec_of(fmt: str) -> Optional[ToolTagSpec]:
    from . import tools

    cls = tools.get_parser_cls(fmt)  # ValueError naming the unknown format
    spec = getattr(cls, "tool_tag", None)
    if spec is None:
        spec = _SPECS.get(getattr(cls, "format_name", fmt))
    if spec is not None and not isinstance(spec, ToolTagSpec):
        raise TypeError(f"{cls.__name__}.tool_tag must be a ToolTagSpec, got {type(spec).__name__}")
    return spec


def has_tool_tag(fmt: str) -> bool:
    """Whether ``structural_tag`` can build a tag for tool format ``fmt``."""
    try:
        return _spec_of(fmt) is not None
    except ValueError:
        return False


# ---------------------------------------------------------------------------- inputs

def _family(family: Any) -> Optional[Family]:
    if family is None or isinstance(family, Family):
        return family
    if isinstance(family, str):
        return get_family(family)  # ValueError for an unknown name
    raise TypeError(f"family must be a family name (str) or a Family, got {type(family).__name__}")


def _tools(tools: Any) -> list[tuple[str, Any]]:
    """``[(name, parameters schema or True)]`` from OpenAI function specs."""
    from .tools._base import valid_name

    if tools is None:
        return []
    if not isinstance(tools, (list, tuple)):
        raise TypeError(f"tools must be a list of function specs, got {type(tools).__name__}")
    out: list[tuple[str, Any]] = []
    seen: set[str] = set()
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping):
            raise TypeError(f"tools[{i}] must be a dict (a function spec), got {type(tool).__name__}")
        fn = tool.get("function", tool)
        if tool.get("type", "function") != "function" or not isinstance(fn, Mapping):
            raise ValueError(f"tools[{i}] is not a function spec "
                             "({'type': 'function', 'function': {'name': ..., 'parameters': ...}})")
        name = fn.get("name")
        if not isinstance(name, str) or not valid_name(name):
            raise ValueError(f"tools[{i}] has no valid function name (1-64 of A-Z a-z 0-9 _ -): {brief(name)}")
        params = fn.get("parameters")
        if params is not None and not isinstance(params, (Mapping, bool)):
            raise TypeError(f"tools[{i}] ({name}): parameters must be a JSON schema dict, "
                            f"got {type(params).__name__}")
        if fn.get("strict") is False or params is None:
            params = True  # arguments unconstrained (any JSON object)
        if name in seen:
            raise ValueError(f"tools[{i}]: duplicate tool name {brief(name)}")
        seen.add(name)
        out.append((name, dict(params) if isinstance(params, Mapping) else params))
    return out


def _choice(tool_choice: Any, names: list[str]) -> tuple[str, Optional[str]]:
    """``(mode, tool)``: mode "auto" / "required" / "forced" / "none"."""
    if tool_choice is None:
        return "auto", None
    if isinstance(tool_choice, Mapping):
        fn = tool_choice.get("function", tool_choice)
        name = fn.get("name") if isinstance(fn, Mapping) else None
        if not isinstance(name, str):
            raise ValueError(f"tool_choice {brief(tool_choice)} names no function")
        tool_choice = name
    elif not isinstance(tool_choice, str):
        raise TypeError(f"tool_choice must be 'auto', 'required', 'none' or a tool name, "
                        f"got {type(tool_choice).__name__}")
    else:
        if tool_choice in ("auto", "none"):
            return tool_choice, None
        if tool_choice == "required":
            if not names:
                raise ValueError("tool_choice='required' needs at least one tool")
            return "required", None
    if tool_choice not in names:
        raise ValueError(f"tool_choice names tool {brief(tool_choice)}, which is not in tools "
                         f"({brief_names(names) or 'none given'})")
    return "forced", tool_choice


def _xgrammar():
    try:
        import xgrammar
    except ImportError as exc:
        raise ImportError(f"this needs the 'xgrammar' package ({_EXTRA})") from exc
    return xgrammar


# ---------------------------------------------------------------------------- assembly

def _reasoning_prefix(fam: Optional[Family], reasoning: bool, starts: bool) -> Optional[Tag]:
    if not reasoning or fam is None or not fam.start or not fam.end:
        return None
    ends: Union[str, list] = fam.end[0] if len(fam.end) == 1 else list(fam.end)
    if starts:
        return _tag("", _any(), ends)
    return _optional(_or([_tag(s, _any(), ends) for s in fam.start]))


def _content_excludes(fam: Optional[Family]) -> list[str]:
    """Reasoning markers may not reappear in the answer (frames and headers that
    share a marker stay allowed)."""
    if fam is None or fam.text_markers:
        return []
    keep = set(fam.frames) | set(fam.headers)
    return [m for m in (*fam.start, *fam.end) if m not in keep]


def _answer(spec: ToolTagSpec, tools: list, mode: str, forced: Optional[str], parallel: bool,
            excludes: list[str]) -> Tag:
    free = [*excludes, spec.trigger]  # content: the call marker only ever opens a call
    if mode == "none" or not tools:
        return _any(free)
    if mode == "forced":
        tools = [t for t in tools if t[0] == forced]
    calls = [spec.call(name, params) for name, params in tools]
    one = mode == "forced" or not parallel
    if spec.section is not None:
        begin, end = spec.section
        inner = {"type": "tags_with_separator", "tags": calls, "separator": spec.separator,
                 "at_least_one": True, "stop_after_first": one}
        calls = [_tag(begin, inner, end)]
    if mode == "forced":  # content, then the one call, then nothing
        return _seq([_any(free), calls[0]])
    out = {"type": "triggered_tags", "triggers": [spec.trigger], "tags": calls,
           "at_least_one": mode == "required", "stop_after_first": not parallel}
    if excludes:
        out["excludes"] = excludes
    if mode == "required":  # content, then at least one call (xgrammar's at_least_one starts with it)
        return _seq([_any(free), out])
    return out


@overload
def structural_tag(
    family: Union[str, Family, None],
    tools: Optional[Sequence[Mapping[str, object]]],
    reasoning: bool = True,
    *,
    tool_choice: Union[str, Mapping[str, object]] = "auto",
    tool_format: Optional[str] = None,
    starts_in_reasoning: Optional[bool] = None,
    parallel_tool_calls: bool = True,
    builtin: bool = True,
    as_object: Literal[False] = False,
) -> dict[str, JSONValue]: ...


@overload
def structural_tag(
    family: Union[str, Family, None],
    tools: Optional[Sequence[Mapping[str, object]]],
    reasoning: bool = True,
    *,
    tool_choice: Union[str, Mapping[str, object]] = "auto",
    tool_format: Optional[str] = None,
    starts_in_reasoning: Optional[bool] = None,
    parallel_tool_calls: bool = True,
    builtin: bool = True,
    as_object: Literal[True],
) -> Any: ...  # an xgrammar.StructuralTag (xgrammar is optional: not named here)


def structural_tag(
    family: Union[str, Family, None],
    tools: Optional[Sequence[Mapping[str, object]]],
    reasoning: bool = True,
    *,
    tool_choice: Union[str, Mapping[str, object]] = "auto",
    tool_format: Optional[str] = None,
    starts_in_reasoning: Optional[bool] = None,
    parallel_tool_calls: bool = True,
    builtin: bool = True,
    as_object: bool = False,
) -> Any:
    """The structural tag for ``family``'s output with ``tools`` (OpenAI function
    specs: ``{"type": "function", "function": {"name", "parameters", "strict"?}}``
    or the inner ``{"name", "parameters"}``).

    ``reasoning``: the output may hold a reasoning block (free text); False: it
    does not.  ``starts_in_reasoning``: generation starts inside the block (the
    prompt opened it); default the family's.  ``tool_format``: the tool-call format
    (default the family's ``tool_parser``); ``family`` may be None when it is given
    (no reasoning block).  ``parallel_tool_calls=False``: at most one call.
    ``builtin=False``: never xgrammar's built-in template.  ``as_object``: an
    ``xgrammar.StructuralTag`` instead of the dict.

    Raises ``ValueError`` for an unknown family, tool format or tool name in
    ``tool_choice``, ``TypeError`` for inputs of the wrong type, and ``ImportError``
    when xgrammar is needed but missing.
    """
    fam = _family(family)
    if not isinstance(reasoning, bool):
        raise TypeError(f"reasoning must be a bool, got {type(reasoning).__name__}")
    if tool_format is not None and not isinstance(tool_format, str):
        raise TypeError(f"tool_format must be a tool format name (str), got {type(tool_format).__name__}")
    fmt = tool_format if tool_format is not None else (fam.tool_parser if fam is not None else None)
    if fmt is None:
        raise ValueError("no tool format: " + (f"family {fam.name!r} has none of ours; pass tool_format="
                                               if fam is not None else "pass a family or tool_format="))
    spec = _spec_of(fmt)  # ValueError for an unknown format
    tool_list = _tools(tools)
    mode, forced = _choice(tool_choice, [n for n, _ in tool_list])
    if starts_in_reasoning is None:
        starts = fam.starts_in_reasoning if fam is not None else False
    else:
        starts = bool(starts_in_reasoning)  # "inside" (a block the prompt opened) too

    if builtin and fam is not None and fam.name in BUILTIN_MODELS and fmt == fam.tool_parser:
        xtag = _builtin(BUILTIN_MODELS[fam.name], tool_list, mode, forced, reasoning, starts, parallel_tool_calls)
        return xtag if as_object else xtag.model_dump(mode="json")

    if spec is None:
        raise ValueError(f"tool format {fmt!r} does not describe its calls (no ToolTagSpec)")
    answer = _answer(spec, tool_list, mode, forced, parallel_tool_calls, _content_excludes(fam))
    prefix = _reasoning_prefix(fam, reasoning, starts)
    tag = {"type": "structural_tag", "format": answer if prefix is None else _seq([prefix, answer])}
    if as_object:
        return _xgrammar().StructuralTag.from_json(tag)
    return tag


def _builtin(model: str, tools: list, mode: str, forced: Optional[str], reasoning: bool, starts: bool,
             parallel: bool):
    xgr = _xgrammar()
    # unconstrained arguments (True) are xgrammar's non-strict tool
    specs = [{"type": "function", "function": {"name": n, "strict": False} if p is True else
              {"name": n, "parameters": p}} for n, p in tools]
    choice: Any = {"type": "function", "function": {"name": forced}} if mode == "forced" else mode
    return xgr.get_model_structural_tag(
        model, tools=specs, tool_choice=choice,
        reasoning=("enabled" if starts else "auto") if reasoning else "disabled",
        parallel_tool_calls=parallel)
