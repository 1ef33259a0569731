"""reasoning-core inside vLLM: reasoning and tool parsers under vLLM's names.

``REASONING_PARSERS`` maps each vLLM reasoning-parser name we serve to a
``vllm.reasoning.ReasoningParser`` subclass; ``TOOL_PARSERS`` maps vLLM
tool-parser names to ``vllm.tool_parsers.ToolParser`` subclasses over
``reasoning_core.tools``.  ``register()`` adds them to vLLM's registries as
``rc_<name>`` (``replace=True``: under vLLM's own names).  Importing this
module registers the ``rc_`` names, so it works as
``--reasoning-parser-plugin reasoning_core.integrations.vllm`` (or give the
file ``vllm_plugin.py`` next to it); the ``vllm.general_plugins`` entry point
calls ``register``.

Under a vLLM name, each class answers what vLLM's parser of that name answers
(start state, ``None`` vs ``""`` results, thinking switches in
``chat_template_kwargs``), but does the work on reasoning-core's per-request
engine state: a streaming step costs O(delta), never a rescan of
``current_text`` / ``current_token_ids``.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Iterable, Optional, Sequence

try:
    from vllm.entrypoints.generate.base.protocol import DeltaMessage
    from vllm.reasoning import ReasoningParser as _VllmReasoningParser
    from vllm.reasoning import ReasoningParserManager
except ImportError as exc:  # pragma: no cover - exercised without vLLM
    raise ImportError(
        "reasoning_core.integrations.vllm needs the 'vllm' package (pip install vllm); "
        "the rest of reasoning_core works without it"
    ) from exc

from .._shared import brief
from .._tables import (
    CONTENT,
    SEG_START,
    BOUNDARY,
    END,
    SEG_CONTENT,
    SEG_HELD,
    SEG_REASONING,
    START,
    TERM,
    ids_of_kind,
)
from .._dispatch import resolve_backend
from ..families import Family, get_family
from ..parser import FamilyParser, LabelStripper, parser_class
from ..text import TextReasoningParser
from . import replace_requested
from ._common import TokenizerLRU as _TokenizerLRU

def _fast_delta_factory():
    """A ``DeltaMessage`` builder that skips pydantic validation (our fields are
    plain ``str``): vLLM's interface costs one model per call, and validating
    it is most of that cost.  Checked against the validated constructor at
    import; any mismatch (another pydantic or vLLM) falls back to it."""
    from ..tools import _json as tool_json

    scan = tool_json.SCAN  # compiled (or its pure twin): no validation, a new fields set and list
    extra = DeltaMessage.model_config.get("extra") == "allow"
    try:  # one shape per fields set: reasoning in the INDEX place, content in the PIECE place
        shapes = {(r, c): scan.ModelShape([(DeltaMessage, {"role": None, "content": scan.PIECE,
                                                           "reasoning": scan.INDEX, "tool_calls": []},
                                            frozenset(n for n, on in (("reasoning", r), ("content", c)) if on),
                                            extra)]).build
                  for r in (False, True) for c in (False, True)}
    except (TypeError, ValueError):  # pragma: no cover - models another pydantic builds otherwise
        shapes = None

    def fast(reasoning: Optional[str] = None, content: Optional[str] = None, _shapes=shapes) -> DeltaMessage:
        return _shapes[reasoning is not None, content is not None](reasoning, content)

    def slow(reasoning: Optional[str] = None, content: Optional[str] = None) -> DeltaMessage:
        kw = {}
        if reasoning is not None:
            kw["reasoning"] = reasoning
        if content is not None:
            kw["content"] = content
        return DeltaMessage(**kw)

    if shapes is None:  # pragma: no cover
        return slow
    try:
        for r, c in (("a", None), (None, "b"), ("a", "b"), (None, None)):
            f, v = fast(r, c), slow(r, c)
            if (f != v or repr(f) != repr(v)
                    or f.model_dump_json(exclude_unset=True) != v.model_dump_json(exclude_unset=True)
                    or f.model_dump() != v.model_dump() or f.model_fields_set != v.model_fields_set):
                return slow
        f = fast("a")
        f.content = "b"  # vLLM's serving loop assigns fields afterwards
        if f.content != "b" or fast("a").model_fields_set != {"reasoning"} or f.tool_calls is fast("a").tool_calls:
            return slow
    except Exception:  # pragma: no cover - another pydantic
        return slow
    return fast


_delta = _fast_delta_factory()

__all__ = [
    "REASONING_PARSERS",
    "TOOL_NOT_SERVED",
    "TOOL_PARSERS",
    "VllmReasoningParser",
    "register",
    "family_of",
]


# ---------------------------------------------------------------------------
# Per-name behaviour
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class _Spec:
    """How vLLM's parser of one name behaves, in our terms.

    style "r1": vLLM's ``BaseThinkingReasoningParser`` rules (one-shot
    reasoning is always a string, content ``None`` until an end is seen;
    ``is_reasoning_end`` has no turn boundaries nor terminators; the
    streaming gate is "the end token is in the delta").
    style "engine": vLLM's ``ParserEngine`` rules (empty results are
    ``None``; terminators end reasoning; the prompt scan stops at a turn
    boundary; nothing decisive -> ended unless the parser waits for reasoning).
    """

    family: str
    style: str = "engine"
    thinking: bool = True                 # the default when chat_template_kwargs are silent
    thinking_keys: tuple[str, ...] = ("enable_thinking",)
    # chat_template_kwargs switch thinking off -> vLLM returns (None, output) one-shot
    off_is_identity: bool = True
    # thinking off: vLLM's class does no reasoning parsing at all (deepseek_v3's identity delegate)
    off_passthrough: bool = False
    # The stream's start state and is_reasoning_end's answer when nothing
    # decides ("waits for reasoning"); None: whether thinking is on.
    start: Optional[bool] = None
    wait: Optional[bool] = None
    # Trailing whitespace of the reasoning is dropped (vLLM's engine default,
    # strip_trailing_reasoning_whitespace); None: True for style "engine".
    rstrip_reasoning: Optional[bool] = None
    # A stray end delimiter in content is dropped (vLLM's engine grammars absorb it).
    absorb_stray_end: Optional[bool] = None
    # Tool-call openers vLLM's grammar treats as an implicit end that our row lacks.
    extra_terminators: tuple[str, ...] = ()
    # Gemma 4: a first delta that looks like a reasoning block without its
    # start (``thought\n``..., or holding the end) gets the start put in front.
    inject_start_if: tuple[str, ...] = ()
    # extract_content_ids when no end is found: "all" ids (vLLM's engine
    # default), "none" (kimi_k2, minimax_m2: [] unless a tool section opened)
    # or "open" (minimax_m3: [] while a block is open, else all).
    content_ids_missing: str = "all"
    # Leading whitespace of the content is dropped (granite_thinking_parser).
    lstrip_content: bool = False
    # One-shot without an end: "reasoning" (the default) or "content" (k2_horizon:
    # ("", output without its start)).
    one_shot_no_end: str = "reasoning"
    # Thinking follows chat_template_kwargs/kwargs "reasoning_effort" (not
    # "no_think") instead of the thinking keys (hy_v3).
    thinking_from_effort: bool = False
    default_effort: str = "no_think"
    # One-shot: a block that opened gives "" reasoning, not None (minimax_m3).
    empty_reasoning_when_opened: bool = False
    # vLLM's grammar has no (content, start) transition: a start delimiter
    # after the block closed, or with thinking off, is plain content text.
    # None: True for style "engine".
    start_text_in_content: Optional[bool] = None
    # Thinking off removes the reasoning grammar entirely (glm47, ling3): both
    # delimiters are plain content text.
    off_markers_text: bool = False
    # Whether an open reasoning block at the end of the prompt starts the
    # output in reasoning (adjust_initial_state_from_prompt).  vLLM's engine
    # parsers ignore it except gemma4; ours follow the prompt (README lists it).
    prompt_opens: bool = True
    # Use ``family`` here rather than ENGINE_PARSER_NAMES (which maps this name
    # to a family for its reasoning split; this class needs the markers).
    own_family: bool = False
    # count_reasoning_tokens (usage.reasoning_tokens): vLLM's counting rule for this name.
    #   "engine": the ids our parser puts in reasoning, from the start state the
    #       thinking switches give (never the prompt's open block), less the special
    #       tokens vLLM's parser engine drops (EOS and any special token that is not
    #       a marker).  "" means "engine" for styles "engine" and "legacy".
    #   "depth": vLLM's R1 depth counter: tokens between start and end markers,
    #       nested starts deepen, a stray end is ignored, markers are not counted.
    #       "" means "depth" for style "r1".
    #   "to_end": every token before the first end marker (all of them without
    #       one), start and EOS included (step3).
    #   "to_end_after_start": as "to_end", a leading start token not counted (hy_v4).
    #   "open_close": the start marker opens (no nesting), the end marker and
    #       ``count_close_also`` close, ``count_close_before_open`` closes only
    #       before any start; markers are not counted, everything else inside is
    #       (EOS included).  Inside from the first token if ``count_inside_first``
    #       (kimi_k3; inkling: outside).
    #   "header": Harmony-like messages (muse): ``count_header[0]`` ends a header;
    #       the message is reasoning when its header names no recipient
    #       (``to=NAME`` at its end) or names ``count_header[1]``; the other texts
    #       end a message; every token inside a reasoning message counts.
    #   "none": 0 (vLLM's base class: granite, hunyuan_a13b, gpt-oss, ...).
    #   "vllm": vLLM's class of this name counts: hf (its rule parses the decoded
    #       text with the checkpoint's response template) and beam (its class does
    #       not build here, so its rule is unchecked).
    count: str = ""
    # "depth": the count starts inside a block when this chat_template_kwargs
    # (key, value) pair is given (minimax_m3: thinking_mode="enabled").
    count_open_if: tuple[str, str] = ("", "")
    # "open_close": see above (marker texts).
    count_close_also: tuple[str, ...] = ()
    count_close_before_open: str = ""
    count_inside_first: bool = False
    # "engine": marker tokens vLLM's grammar for this name passes through in any
    # state, never counted (minicpmv: <|im_end|> and its reserved markers).
    count_skip: tuple[str, ...] = ()
    # "engine": where counting stops for good (vLLM's grammar never returns to
    # reasoning): "block" at the first end or terminator of a block open from
    # the first token (the default where a later start is content text), "tool"
    # at the first terminator (a tool call), "none": never.
    count_cut: str = ""
    # "header": (header end, reasoning recipient, message end texts...)
    count_header: tuple[str, ...] = ()
    count_cut_when_off: str = ""          # thinking off: another grammar (minicpmv)
    # "engine": terminator texts vLLM's grammar for this name reads as plain
    # reasoning text (kimi_k2's singular section marker).
    count_not_end: tuple[str, ...] = ()
    # The count ignores the thinking switches (hy_v3's class counts with its R1
    # rules whatever its delegate; step3 has no switch).
    count_when_off: bool = False
    # Thinking switched off: vLLM's no-thinking grammar for this name never
    # enters reasoning, so the count is 0 (its start marker is content text).
    count_zero_when_off: bool = False
    # Thinking for the count: the first of these chat_template_kwargs keys that is
    # given decides (kimi_k3: "thinking", then "enable_thinking"); () : as above.
    count_thinking_keys: tuple[str, ...] = ()
    # is_reasoning_end as vLLM's class of this name answers it whatever the
    # ids: "none" (granite: vLLM's base method, None), "false" (muse: only a
    # tool channel ends it), "true" (openai_gptoss); "" : from the ids.
    reasoning_end_answer: str = ""
    # chat_template_kwargs (key, value) that starts the output inside reasoning
    # (minimax_m3: thinking_mode="enabled", the template prefills the start).
    start_when: tuple[str, str] = ()
    # Starting in content, an end delimiter at the very start of the output is
    # dropped (minimax_m3's stray leading closer); later ones stay content.
    drop_leading_end: bool = False
    # One-shot, the request's chat_template_kwargs (enable_thinking=False or
    # force_nonempty_content=True) swap reasoning into content when content is
    # "absent" (None: granite_thinking_parser) or "blank" (None or whitespace:
    # nemotron_v3); "": never.
    force_content: str = ""
    # start/end delimiter per chat_template_kwargs "reasoning_effort" (the first
    # is the default); another effort is a ValueError, as in vLLM (k2_horizon).
    efforts: tuple[tuple[str, str, str], ...] = ()
    # style "r1" whose is_reasoning_end also ends at a terminator (k2_horizon's <ifm|tool_calls>).
    r1_terminators: bool = False
    # vLLM's class of this name finds its delimiters in the streamed *text*, so
    # a delimiter the model writes in several tokens (although the vocabulary
    # has it as one) still splits (minimax_m3, k2_horizon): ours streams at the
    # text level; a delimiter whose id is in the step but whose text the
    # detokenizer skipped is put back where its id was.  The streaming gate
    # answers from the stream's state once it began.
    text_stream: bool = False
    # The id helpers (is_reasoning_end, extract_content_ids, the depth count,
    # the gate before any streaming) match each delimiter as the tokenizer's
    # encoding of its text, a token sequence, as vLLM's class does (minimax_m3).
    encoded_markers: bool = False
    # With encoded_markers, the streaming gate is vLLM's window rule (kimi_k3):
    # the newest delimiter among this step's ids and the few before it
    # decides (an end: ended), whatever the stream's state.
    gate_window: bool = False
    # extract_content_ids(ids of the step that ended reasoning) answers the
    # content ids of that step (vLLM's streaming cache: kimi_k3, minimax_m3).
    content_ids_cache: bool = False
    # strip_content_streaming (what vLLM's composed Kimi K3 parser calls
    # without a tool parser): the content wrapper markers it removes from the
    # streamed content, the opener (first occurrence only) then the closers.
    content_wrapper: tuple[str, ...] = ()
    # engine_based_streaming (vLLM's serving loop then hands over deltas only,
    # never the accumulated text): False where vLLM composes this name's class
    # in a parser that reads the accumulated text (KimiK3Parser's
    # strip_content_streaming).
    engine_based: bool = True
    # Our class also derives from vLLM's class of this name: vLLM's composed
    # parser for the name checks for it (KimiK3Parser strips the response
    # wrapper from the content only for its own reasoning class).
    vllm_base: bool = False
    prompt_closes: bool = True            # set_prompt_token_ids: a closed block in this turn -> content
    terminators_end: bool = True          # terminators count for is_reasoning_end
    notes: str = ""


# vLLM reasoning-parser name -> how vLLM's parser of that name behaves.  The
# family serving each name comes from reasoning_core.families.ENGINE_PARSER_NAMES
# ["vllm"] (built per tokenizer by family_for_tokenizer for the names whose
# markers come from the checkpoint); ``family`` here is only the fallback.
_TT = ("thinking", "enable_thinking")
_MUSE_HEADER = ("<|message|>", "self", "<|eom|>", "<|eot|>", "<|start|>")
_SPECS: dict[str, _Spec] = {
    # vLLM's BaseThinkingReasoningParser family (DeepSeek R1 rules)
    "deepseek_r1": _Spec("deepseek_r1", style="r1", thinking_keys=()),
    "step5": _Spec("deepseek_r1", style="r1", thinking_keys=()),
    "deepseek_v3": _Spec("deepseek_v3", style="r1", thinking=False, thinking_keys=_TT, off_passthrough=True),
    "holo2": _Spec("holo2", style="r1", thinking_keys=_TT, off_passthrough=True),
    "poolside_v1": _Spec("poolside_v1", style="r1", thinking=False, thinking_keys=_TT, off_passthrough=True),
    "ernie45": _Spec("ernie45", style="r1", thinking_keys=()),
    "hy_v3": _Spec("hy_v3", style="r1", thinking_from_effort=True, off_passthrough=True, count_when_off=True),
    "k2_horizon": _Spec("k2_horizon", style="r1", one_shot_no_end="content", thinking_keys=(), r1_terminators=True,
                        text_stream=True,
                        efforts=(("high", "<ifm|think>", "</ifm|think>"),
                                 ("medium", "<ifm|think_fast>", "</ifm|think_fast>"),
                                 ("low", "<ifm|think_faster>", "</ifm|think_faster>"))),
    "minimax_m3": _Spec("minimax_m3", start=False, wait=True, rstrip_reasoning=False, absorb_stray_end=False,
                        start_text_in_content=False, start_when=("thinking_mode", "enabled"),
                        drop_leading_end=True, empty_reasoning_when_opened=True, content_ids_missing="open",
                        count="depth", count_open_if=("thinking_mode", "enabled"), count_when_off=True,
                        text_stream=True, encoded_markers=True, content_ids_cache=True),
    "step3": _Spec("step3", style="r1", thinking_keys=(), count="to_end", count_when_off=True),
    # vLLM's ParserEngine grammars
    "qwen3": _Spec("qwen3", rstrip_reasoning=False,
                   count_zero_when_off=True),
    "mimo": _Spec("mimo", rstrip_reasoning=False,
                  count_zero_when_off=True),
    "minicpmv": _Spec("qwen3_5", rstrip_reasoning=False, start_text_in_content=False,
                      count_skip=("<|im_end|>",) + tuple(f"<reserved_{i}>" for i in range(12, 16)), count_cut="block",
                      count_cut_when_off="tool"),
    "granite_thinking_parser": _Spec("granite_thinking", lstrip_content=True, force_content="absent",
                                     count_zero_when_off=True),
    "glm45": _Spec("glm47", thinking_keys=_TT, start_text_in_content=False, off_markers_text=True,
                   count_zero_when_off=True, count_cut="tool"),
    "glm47": _Spec("glm47", thinking_keys=_TT, start_text_in_content=False, off_markers_text=True,
                   count_zero_when_off=True, count_cut="tool"),
    "ling3": _Spec("glm47", thinking_keys=_TT, start_text_in_content=False, off_markers_text=True,
                   count_zero_when_off=True, count_cut="tool"),
    "kimi_k2": _Spec("kimi_k2", thinking_keys=_TT, rstrip_reasoning=True, content_ids_missing="none",
                     off_markers_text=True,
                     count_zero_when_off=True, count_not_end=("<|tool_call_section_begin|>",)),
    "minimax_m2": _Spec("minimax_m2", thinking_keys=(), content_ids_missing="none"),
    "nemotron_v3": _Spec("nemotron_v3", force_content="blank",
                         count_zero_when_off=True),
    "seed_oss": _Spec("seed_oss", rstrip_reasoning=False, extra_terminators=("<seed:tool_call>",),
                      count_zero_when_off=True),
    "step3p5": _Spec("step3", thinking_keys=(), extra_terminators=("<tool_call>",)),
    "mistral": _Spec("mistral", thinking_keys=(), start=False, start_text_in_content=False),
    "gemma4": _Spec("gemma4", thinking=False, start=False, off_is_identity=False, start_text_in_content=False,
                    inject_start_if=("thought\n", "thought"), count_cut="tool"),
    "deepseek_v4": _Spec("deepseek_v3", thinking_keys=_TT, off_is_identity=False, start_text_in_content=False),
    "deepseek_v41": _Spec("deepseek_v3", thinking_keys=_TT, off_is_identity=False, start_text_in_content=False),
    "plamo3": _Spec("plamo3", rstrip_reasoning=False, start_text_in_content=False,
                    count_zero_when_off=True, count_cut="tool"),
    "inkling": _Spec("inkling", start=False, start_text_in_content=False, count="open_close",
                      count_close_also=("<|content_model_end_sampling|>",)),
    # vLLM's own one-off parsers
    "cohere_command3": _Spec("cohere_command", style="legacy", count="none"),
    "cohere_command4": _Spec("cohere_command", style="legacy", count="none"),
    "granite": _Spec("granite", style="legacy", thinking=False, reasoning_end_answer="none", count="none"),
    "hunyuan_a13b": _Spec("hunyuan_a13b", style="legacy", thinking=False, count="none"),
    "hy_v4": _Spec("hy_v4", style="r1", thinking_from_effort=True, default_effort="high", off_passthrough=True,
                   count="to_end_after_start"),
    "kimi_k3": _Spec("kimi_k3", style="legacy", thinking_keys=_TT, off_passthrough=True, count="open_close",
                     count_inside_first=True, count_close_before_open="<|open|>response<|sep|>",
                     count_thinking_keys=("thinking", "enable_thinking"), content_ids_cache=True,
                     content_wrapper=("<|open|>response<|sep|>", "<|close|>response<|sep|>",
                                      "<|close|>message<|sep|>"), engine_based=False, vllm_base=True,
                     encoded_markers=True, gate_window=True),
    "minimax_m2_append_think": _Spec("minimax_m2", style="append_think", terminators_end=False, wait=True,
                                      own_family=True, count="none"),
    "muse": _Spec("muse", style="legacy", thinking=False, reasoning_end_answer="false",
                  count="header", count_header=_MUSE_HEADER),
    "musespark1x": _Spec("muse", style="legacy", thinking=False, reasoning_end_answer="false",
                         count="header", count_header=_MUSE_HEADER),
    "muse_glimmer": _Spec("muse_glimmer", style="legacy", thinking=False, reasoning_end_answer="false", count="none"),
    "olmo3": _Spec("olmo3", style="legacy", count="none"),
    "openai_gptoss": _Spec("gpt_oss", style="legacy", thinking=False, reasoning_end_answer="true", count="none"),
    "beam": _Spec("passthrough", style="legacy", count="vllm"),
    "hf": _Spec("passthrough", style="legacy", count="vllm"),
}

NOT_SERVED: dict[str, str] = {}

# Names whose vLLM class gives no reasoning_start_str / reasoning_end_str (so
# vLLM refuses a thinking_token_budget for them): ours answer the same.
_NO_MARKER_STRINGS = frozenset({"deepseek_v3", "granite", "hunyuan_a13b", "minimax_m2_append_think", "muse",
                                "muse_glimmer", "musespark1x", "openai_gptoss", "poolside_v1"})


def _engine_names() -> dict[str, str]:
    try:
        from ..families import ENGINE_PARSER_NAMES
    except ImportError:  # pragma: no cover - an older core without the map
        return {}
    return dict(ENGINE_PARSER_NAMES.get("vllm", {}))


_ENGINE_NAMES = _engine_names()


def family_of(vllm_name: str) -> str:
    """Our family for a vLLM reasoning-parser name (KeyError if not served)."""
    spec = _SPECS[vllm_name]
    return _ENGINE_NAMES.get(vllm_name, spec.family)


def _family_for(vllm_name: str, tokenizer: Any) -> Family:
    try:
        from ..families import family_for_tokenizer
    except ImportError:  # pragma: no cover
        return get_family(family_of(vllm_name))
    if vllm_name in _ENGINE_NAMES:
        return family_for_tokenizer(vllm_name, tokenizer, engine="vllm")
    return get_family(family_of(vllm_name))


# ---------------------------------------------------------------------------
# vLLM's own parser of a name (for what the serving layer asks once per request)
# ---------------------------------------------------------------------------

def _snapshot(manager_attr: str) -> dict[str, Any]:
    """vLLM's own registrations (class, or (module, class name) for lazy
    ones), taken before ``register(replace=True)`` can replace them."""
    out: dict[str, Any] = {}
    try:
        if manager_attr == "reasoning":
            mgr, eager = ReasoningParserManager, ReasoningParserManager.reasoning_parsers
        else:
            from vllm.tool_parsers import ToolParserManager as mgr
            eager = mgr.tool_parsers
        out.update(getattr(mgr, "lazy_parsers", {}))
        for name, cls in eager.items():
            if not getattr(cls, "__module__", "").startswith(__name__):
                out[name] = cls
    except Exception:  # pragma: no cover - another vLLM layout
        pass
    return out


_VLLM_OWN: dict[str, dict[str, Any]] = {"reasoning": _snapshot("reasoning"), "tool": {}}
_OWN_CACHE: dict[tuple, Any] = {}
# (tokenizer, vLLM's tool-parser class) -> vLLM's parser built on it
_OWN_TOOLS = _TokenizerLRU(8)


def _vllm_own_class(kind: str, name: str) -> Optional[type]:
    """vLLM's own class registered under ``name`` (None if it has none or it
    does not import here)."""
    key = (kind, name)
    if key in _OWN_CACHE:
        return _OWN_CACHE[key]
    entry = _VLLM_OWN[kind].get(name)
    cls = None
    if isinstance(entry, tuple):
        try:
            import importlib

            cls = getattr(importlib.import_module(entry[0]), entry[1])
        except Exception:
            cls = None
    elif isinstance(entry, type):
        cls = entry
    if cls is not None and getattr(cls, "__module__", "").startswith(__name__):
        cls = None
    _OWN_CACHE[key] = cls
    return cls


_FLAGS = ("skip_special_tokens", "spaces_between_special_tokens")


def _refused(exc: BaseException) -> bool:
    """Whether ``exc`` is vLLM refusing the request (its validation error)."""
    try:
        from vllm.exceptions import VLLMValidationError
    except ImportError:  # pragma: no cover - another vLLM layout
        return False
    return isinstance(exc, VLLMValidationError)


def _adjust_like_vllm(kind: str, name: str, build, request: Any, more: tuple[str, ...] = ()) -> bool:
    """Apply to ``request`` the detokenization switches vLLM's own parser of
    ``name`` sets in its ``adjust_request`` (``skip_special_tokens``,
    ``spaces_between_special_tokens``), read from a copy of the request.
    False when vLLM's class is unavailable."""
    cls = _vllm_own_class(kind, name)
    if cls is None or not hasattr(request, "skip_special_tokens"):
        return False
    try:
        theirs = build(cls)
        # copy.copy, not model_copy(): a Mock's model_copy() answers a new Mock
        # that reads as having tools whatever the request says
        probe = __import__("copy").copy(request)
        probe = theirs.adjust_request(probe) or probe
    except Exception as exc:
        if _refused(exc):
            # A request vLLM's parser of this name refuses (a named tool choice
            # Kimi K3 cannot force without its structural tag) is refused.
            raise
        return False
    for flag in _FLAGS + more:
        if hasattr(request, flag) and hasattr(probe, flag) and getattr(probe, flag) != getattr(request, flag):
            setattr(request, flag, getattr(probe, flag))
    return True


# ---------------------------------------------------------------------------
# The reasoning parser
# ---------------------------------------------------------------------------

def _single_ids(seqs: Iterable[tuple[int, ...]]) -> frozenset[int]:
    return frozenset(s[0] for s in seqs if len(s) == 1)


_DECIDE_START, _DECIDE_END, _DECIDE_BOUNDARY = 1, 2, 3
# (tokenizer, family spec) -> the special ids vLLM's parser engine drops
_DROPPED = _TokenizerLRU(8)


_extends = resolve_backend(None)[1].extends  # (ids, prev): whether ids start with prev, compiled


def _non_dropped(ids: Sequence[int], dropped: frozenset[int]) -> int:
    """How many of ``ids`` are not in ``dropped`` (C-level counts)."""
    n = len(ids)
    if dropped and n:
        for t in dropped.intersection(ids):
            n -= ids.count(t)
    return n


class _Resumable:
    """An incremental ``count_reasoning_tokens``: ``count(ids)`` answers for the
    whole of ``ids`` and keeps what it learnt of them, so that the next call
    with a longer sequence that extends them (vLLM asks on every step with
    ``stream_options.continuous_usage_stats``) reads only the new ids.  A loop
    over markers of up to ``span`` ids keeps the state it had at the last
    position whose markers were whole in ``ids`` (``_mark``), and resumes
    there: a marker begun at the very end is decided again with more ids."""

    span = 1

    def __init__(self) -> None:
        self._at = 0          # resume position
        self._state: tuple = ()

    def _mark(self, n: int) -> int:
        return n - self.span + 1


class _DepthCount(_Resumable):
    """vLLM's R1 depth counter (see ``_Spec.count``), resumable."""

    def __init__(self, start: tuple[int, ...], end: tuple[int, ...], depth: int) -> None:
        super().__init__()
        self.start, self.end = start, end
        self.span = max(len(start), len(end), 1)
        self._state = (depth, 0)

    def count(self, ids: Sequence[int]) -> int:
        start, end = self.start, self.end
        depth, count = self._state
        i, n = self._at, len(ids)
        if not start:
            return n if depth else 0
        s0, e0, ls, le = start[0], end[0] if end else None, len(start), len(end)
        if i == 0 and ls == 1 and le == 1 and not depth and n > 64:
            # a first count over many ids, one block at most: C-level scans
            n_starts = ids.count(s0)
            if n_starts <= 1:
                if n_starts:
                    i = ids.index(s0)
                    try:
                        count, depth = ids.index(e0, i + 1) - i - 1, 0
                    except ValueError:
                        count, depth = n - i - 1, 1
                self._at, self._state = n, (depth, count)
                return count
        mark = self._mark(n)
        saved = False
        while i < n:
            if not saved and i >= mark:
                self._at, self._state, saved = i, (depth, count), True
            t = ids[i]
            if t == s0 and (ls == 1 or tuple(ids[i:i + ls]) == start):
                depth += 1
                i += ls
                continue
            if t == e0 and (le == 1 or tuple(ids[i:i + le]) == end):
                if depth > 0:
                    depth -= 1
                i += le
                continue
            if depth > 0:
                count += 1
            i += 1
        if not saved:
            self._at, self._state = i, (depth, count)
        return count


class _ToEndCount(_Resumable):
    """Rules "to_end" / "to_end_after_start": every id before the first end."""

    def __init__(self, end: Optional[int], start: Optional[int], after_start: bool) -> None:
        super().__init__()
        self.end, self.start, self.after_start = end, start, after_start
        self._skip = -1
        self._found = -1

    def count(self, ids: Sequence[int]) -> int:
        if self._skip < 0:
            self._skip = self._at = 1 if self.after_start and ids[0] == self.start else 0
        skip = self._skip
        if self._found >= 0:
            return self._found - skip
        try:
            self._found = ids.index(self.end, self._at)
            return self._found - skip
        except ValueError:
            self._at = max(len(ids), skip)
            return len(ids) - skip


class _OpenCloseCount(_Resumable):
    """Rule "open_close" (see ``_Spec.count``), resumable."""

    def __init__(self, rule: tuple, inside_first: bool) -> None:
        super().__init__()
        self.rule = rule
        opener, closers, early, _ = rule
        self.span = max([len(opener), len(early)] + [len(c) for c in closers] + [1])
        self._state = (0, inside_first, False)

    def count(self, ids: Sequence[int]) -> int:
        opener, closers, early, heads = self.rule
        count, inside, opened = self._state
        i, n = self._at, len(ids)
        mark = self._mark(n)
        saved = False
        while i < n:
            if not saved and i >= mark:
                self._at, self._state, saved = i, (count, inside, opened), True
            t = ids[i]
            if t in heads:
                if opener and tuple(ids[i:i + len(opener)]) == opener:
                    inside = opened = True
                    i += len(opener)
                    continue
                hit = 0
                for c in closers:
                    if tuple(ids[i:i + len(c)]) == c:
                        hit = len(c)
                        break
                if not hit and early and not opened and tuple(ids[i:i + len(early)]) == early:
                    hit = len(early)
                if hit:
                    inside = False
                    i += hit
                    continue
            if inside:
                count += 1
            i += 1
        if not saved:
            self._at, self._state = i, (count, inside, opened)
        return count


class _HeaderCount(_Resumable):
    """Rule "header" (see ``_Spec.count``): one decode per message header."""

    def __init__(self, owner: "VllmReasoningParser") -> None:
        super().__init__()
        vocab = owner.vocab
        head_end, self.own, *ends = owner.spec.count_header
        self.message = vocab.get(head_end)
        self.enders = frozenset(vocab[t] for t in ends if t in vocab)
        self.decode = owner.model_tokenizer.decode
        self._state = (0, 0, False)  # count, header start, inside

    def count(self, ids: Sequence[int]) -> int:
        message, enders = self.message, self.enders
        count, header_start, inside = self._state
        for i in range(self._at, len(ids)):
            t = ids[i]
            if t == message:
                header = self.decode(list(ids[header_start:i])).rstrip()
                name, at = "", header.rfind("to=")
                while at >= 0:  # the recipient runs to the header's end: no space, no "<"
                    rest = header[at + 3:]
                    if any(c.isspace() or c == "<" for c in rest):
                        break
                    if rest:
                        name = rest
                        break
                    at = header.rfind("to=", 0, at)
                inside = not name or name == self.own
                header_start = i + 1
            elif t in enders:
                inside = False
                header_start = i + 1
            elif inside:
                count += 1
        self._at, self._state = len(ids), (count, header_start, inside)
        return count


def _first_from(ids: Sequence[int], marks: Iterable[int], lo: int) -> int:
    """Index of the first id of ``ids[lo:]`` in ``marks`` (len(ids) if none)."""
    cut = len(ids)
    for t in marks:
        try:
            cut = ids.index(t, lo, cut)
        except ValueError:
            pass
    return cut


class _EngineCount(_Resumable):
    """Rule "engine" (see ``_Spec.count``): the ids our parser puts in
    reasoning, less the ones vLLM's engine drops; incremental.  The parser
    keeps the ids it was fed; a delimiter prefix it holds at the end is
    counted on the side it would be released to (as ``finish()`` does), without
    releasing it."""

    def __init__(self, owner: "VllmReasoningParser") -> None:
        super().__init__()
        self.o = owner
        spec = owner.spec
        self.engine = spec.style == "engine"
        self.start = owner._count_start if self.engine else False
        self.dropped = owner._count_dropped() if self.engine else frozenset()
        self.cut = owner._count_cut
        sid = owner.start_token_id
        self.sid = sid if spec.inject_start_if and sid is not None else None
        self.inject: Optional[bool] = None
        self.flags_at = 0       # ids read for the injection's flags
        self.sid_seen = False
        self.end_seen = False
        self.limit = -1         # where the ids are cut for good (absolute), once found
        self.s0 = -1            # cut "block" without start: the first start's index
        self.p: Any = None
        self.fed = 0            # ids fed to the parser (or counted, cut "block" with start)
        self.r = 0              # reasoning ids so far

    def _injects(self, ids: Sequence[int]) -> bool:
        o, lo = self.o, self.flags_at
        if lo < len(ids):
            new = ids[lo:]
            self.sid_seen = self.sid_seen or self.sid in new
            self.end_seen = self.end_seen or not o._end_ids.isdisjoint(new)
            self.flags_at = len(ids)
        if self.sid_seen:
            return False
        return o._injects(o._decode(ids[:4]) if not self.end_seen else o._family.end[0], self.start)

    def count(self, ids: Sequence[int]) -> int:
        o, n = self.o, len(ids)
        if self.sid is not None:
            inject = self._injects(ids)
            if self.inject is None:
                self.inject = inject
            elif inject != self.inject:  # decided again (at most a few times): recount
                fresh = _EngineCount(o)
                self.__dict__.update(fresh.__dict__)
                return self.count(ids)
        hi = n if self.limit < 0 else self.limit
        cut = self.cut
        if cut == "block" and self.start:
            # open from the first id, closed for good by its first end or terminator
            if self.limit < 0:
                hi = _first_from(ids, o._count_block_ends, self.fed)
                if hi < n:
                    self.limit = hi
            if hi > self.fed:
                self.r += _non_dropped(ids[self.fed:hi], self.dropped)
                self.fed = hi
            return self.r
        if self.limit < 0 and cut != "none":
            if cut == "tool":
                j = _first_from(ids, o._term_ids, self.fed)
            else:  # "block": the block opens at the first start, if any
                j = n
                if self.s0 < 0:
                    s0 = _first_from(ids, o._start_ids, self.fed)
                    if s0 < n:
                        self.s0 = s0
                if self.s0 >= 0:
                    j = _first_from(ids, o._count_block_ends, max(self.fed, self.s0 + 1))
            if j < n:
                self.limit = hi = j
        p = self.p
        if hi > self.fed:
            if p is None:
                p = self.p = parser_class(o._family)(o._parser.tables)
                p.begin(starts_in_reasoning=self.start)
                if self.inject:
                    p.split([self.sid])  # vLLM's start injection (gemma4)
            rs = p.split(ids[self.fed:hi]).reasoning_ids
            self.r += _non_dropped(rs, self.dropped)
            self.fed = hi
        if p is None:
            return 0
        held = p.held_ids
        return self.r + (_non_dropped(held, self.dropped) if held and p.is_reasoning else 0)


class VllmReasoningParser(_VllmReasoningParser):
    """A vLLM ``ReasoningParser`` over one reasoning-core family.

    Subclasses bind ``vllm_name`` and ``spec``; one instance serves one
    request, as in vLLM.
    """

    vllm_name: str = ""
    spec: _Spec = _Spec("passthrough")
    # vLLM then asks has_engine_confirmed_reasoning_end() (O(1) here) instead of
    # re-running is_reasoning_end_streaming, and calls finish_streaming().
    engine_based_streaming: bool = True

    def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(tokenizer, *args, **kwargs)
        self._init_args = (args, kwargs)
        spec = self.spec
        self._effort_pair: Optional[tuple[str, str]] = None
        if spec.efforts:
            effort = (kwargs.get("chat_template_kwargs") or {}).get("reasoning_effort", spec.efforts[0][0])
            pairs = {e: (a, b) for e, a, b in spec.efforts}
            if not isinstance(effort, str) or effort not in pairs:
                raise ValueError(f"Unsupported reasoning_effort {brief(effort)} for {self.vllm_name}; "
                                 f"supported: {', '.join(pairs)}")
            self._effort_pair = pairs[effort]
        fam = get_family(spec.family) if spec.own_family else _family_for(self.vllm_name, tokenizer)
        if spec.extra_terminators:
            fam = _with_terminators(fam, spec.extra_terminators)
        self._family: Family = fam
        chat = kwargs.get("chat_template_kwargs") or {}
        thinking = spec.thinking
        said = [chat[k] for k in spec.thinking_keys if chat.get(k) is not None]
        if said:
            thinking = any(bool(v) for v in said)
        if spec.thinking_from_effort:
            effort = chat.get("reasoning_effort") or kwargs.get("reasoning_effort") or spec.default_effort
            thinking = effort != "no_think"
        self.thinking = thinking
        self._wait = thinking if spec.wait is None else spec.wait
        self._absorb = (spec.style == "engine") if spec.absorb_stray_end is None else spec.absorb_stray_end
        self._start_text = (spec.style == "engine") if spec.start_text_in_content is None else spec.start_text_in_content
        if spec.off_markers_text and not thinking:
            self._absorb, self._start_text = False, True
        self._rstrip = (spec.style == "engine") if spec.rstrip_reasoning is None else spec.rstrip_reasoning
        self._passthrough = spec.off_passthrough and not thinking
        # A tokenizer whose encode gives no token ids (vLLM's tests pass a
        # ``Mock``; vLLM's classes that only look the vocabulary up lazily
        # build with it): this request is split at the text level only, and
        # no id is a delimiter.
        self._text_only = False
        try:
            self._parser: FamilyParser = parser_class(self._family).from_tokenizer_sync(tokenizer)
        except (TypeError, AttributeError):
            from ..text import text_tables

            self._parser = parser_class(self._family)(text_tables(self._family))
            self._text_only = True
        tables = self._parser.tables

        def kind_ids(kind: int) -> list:
            return [] if self._text_only else ids_of_kind(tables, kind)

        self._start_ids = _single_ids(kind_ids(START))
        self._end_ids = _single_ids(kind_ids(END))
        self._closing_ids = self._end_ids | _single_ids(kind_ids(TERM))  # what ends a block in our engine
        self._term_ids = (_single_ids(kind_ids(TERM))
                          if spec.terminators_end and (spec.style != "r1" or spec.r1_terminators) else frozenset())
        self._boundary_ids = (_single_ids(kind_ids(BOUNDARY)) if spec.style in ("engine", "legacy")
                              else frozenset())
        # "append_think" (minimax_m2_append_think): no split at all; the whole
        # output is content with the start delimiter put back in front.
        self._append_think = spec.style == "append_think"
        if self._append_think:
            self._passthrough = True
        self._end_like = self._end_ids | self._term_ids
        self._decisive = {i: _DECIDE_END for i in self._end_like}
        self._decisive.update({i: _DECIDE_START for i in self._start_ids})
        for i in self._boundary_ids:
            self._decisive.setdefault(i, _DECIDE_BOUNDARY)
        # Delimiters that are token *sequences* in this vocabulary (Kimi K3's
        # <|open|>think<|sep|>: three tokens), when no delimiter is one token:
        # the prompt / gate scans match them as sequences, keyed by last id.
        # (Not for plain-text markers such as Granite's, which vLLM's class
        # never looks for in ids.)
        self._multi: dict[int, list[tuple[tuple[int, ...], int]]] = {}
        self._carry = 0
        if not self._start_ids and not self._end_ids and not fam.text_markers and not self._text_only:
            kinds = [(END, _DECIDE_END), (START, _DECIDE_START)]
            if spec.terminators_end and spec.style != "r1":
                kinds.insert(1, (TERM, _DECIDE_END))
            for kind, decision in kinds:
                for seq in ids_of_kind(tables, kind):
                    if len(seq) > 1:
                        self._multi.setdefault(seq[-1], []).append((tuple(seq), decision))
                        self._carry = max(self._carry, len(seq) - 1)
        self._start_state: bool = thinking if spec.start is None else spec.start
        if spec.start_when and chat.get(spec.start_when[0]) == spec.start_when[1]:
            self._start_state = True
        self._lead_end = spec.drop_leading_end and not self._start_state
        self._initial_start = self._start_state  # (the constructor's, before any prompt hook)
        self._count_setup(chat, thinking)
        self._begun = False
        self._ended = False
        self._pending_text = ""        # text of held tokens (a partial delimiter)
        self._deferred_ws: list[str] = []  # trailing reasoning whitespace, in pieces (rstrip_reasoning)
        self._gate_len = -1            # is_reasoning_end_streaming cache: length and answer
        self._gate_answer = False
        self._decode_cache: dict[tuple[int, ...], str] = {}
        self._content_started = False
        self._opened_by_prompt = False
        self._label = LabelStripper(fam.label) if fam.label else None
        self._text_parser: Optional[TextReasoningParser] = None  # text-level fallback (no ids)

    # -- names vLLM's serving layer and tests read ---------------------------
    @property
    def reasoning_start_str(self) -> Optional[str]:
        """What vLLM's ``thinking_token_budget`` reads: the family's start, or
        None where vLLM's class of this name has none."""
        if self.vllm_name in _NO_MARKER_STRINGS:
            return None
        return self._family.start[0] if self._family.start else None

    def _start_text_str(self) -> str:
        return self._family.start[0] if self._family.start else ""

    @property
    def reasoning_end_str(self) -> Optional[str]:
        if self.vllm_name in _NO_MARKER_STRINGS:
            return None
        return self._family.end[0] if self._family.end else None

    @property
    def start_token_id(self) -> Optional[int]:
        seqs = ids_of_kind(self._parser.tables, START)
        return seqs[0][0] if seqs and len(seqs[0]) == 1 else None

    @property
    def end_token_id(self) -> Optional[int]:
        seqs = ids_of_kind(self._parser.tables, END)
        return seqs[0][0] if seqs and len(seqs[0]) == 1 else None

    @property
    def reasoning_end_token_ids(self) -> frozenset[int]:
        return self._end_like

    @property
    def start_token(self) -> Optional[str]:
        """The start delimiter as vLLM's class names it (its tests and
        ``thinking_token_budget`` read it): the requested effort's, if any."""
        if self._effort_pair is not None:
            return self._effort_pair[0]
        return self._family.start[0] if self._family.start else None

    @property
    def end_token(self) -> Optional[str]:
        if self._effort_pair is not None:
            return self._effort_pair[1]
        return self._family.end[0] if self._family.end else None

    @property
    def _thinking_enabled(self) -> bool:
        """vLLM's name for the request's thinking switch (its tests read it)."""
        return self.thinking

    @_thinking_enabled.setter
    def _thinking_enabled(self, value: bool) -> None:
        pass  # (set by vLLM's constructor where our class derives from vLLM's: ours decides)

    def extract_reasoning_content(self, model_output: str, request: Any = None):
        """vLLM's older name for ``extract_reasoning`` (some of its classes keep it)."""
        return self.extract_reasoning(model_output, request)

    def extract_reasoning_content_streaming(self, *args: Any, **kwargs: Any) -> Optional[DeltaMessage]:
        """vLLM's older name for ``extract_reasoning_streaming``."""
        return self.extract_reasoning_streaming(*args, **kwargs)

    @property
    def parser(self) -> FamilyParser:
        """The per-request reasoning-core parser (token level)."""
        return self._parser

    # -- prompt hooks -----------------------------------------------------------
    def _scan(self, ids: Sequence[int]) -> int:
        """The last decisive token of ``ids`` (right to left), 0 if none."""
        if self._multi:
            return self._scan_multi(ids)
        decisive = self._decisive
        if not decisive:
            return 0
        get = decisive.get
        for i in range(len(ids) - 1, -1, -1):
            d = get(ids[i])
            if d is not None:
                return d
        return 0

    def _scan_multi(self, ids: Sequence[int]) -> int:
        """``_scan`` for delimiters that are token sequences: the newest
        complete delimiter (by its last token) decides."""
        get, multi = self._decisive.get, self._multi.get
        for i in range(len(ids) - 1, -1, -1):
            t = ids[i]
            d = get(t)
            if d is not None:
                return d
            cands = multi(t)
            if cands:
                for seq, decision in cands:
                    n = len(seq)
                    if i + 1 >= n and all(ids[i + 1 - n + k] == seq[k] for k in range(n - 1)):
                        return decision
        return 0

    def _answer(self, decision: int) -> bool:
        if decision == _DECIDE_END:
            return True
        if decision == _DECIDE_START and (self.spec.style != "engine" or self._start_state or not self._start_text):
            return False  # (a start that is plain text in the initial state decides nothing)
        if self.spec.style == "r1":
            return False
        return not self._wait

    def set_prompt_token_ids(self, prompt_token_ids: Sequence[int]) -> None:
        if self._passthrough or not self.spec.prompt_closes:
            return
        if self._start_state and self._boundary_ids and self._is_reasoning_end(prompt_token_ids):
            self._start_state = False
            self._count_start = False  # vLLM's counting engine starts in content too

    def adjust_initial_state_from_prompt(self, prompt_token_ids: Sequence[int]) -> None:
        """The prompt decides the start state when it says anything: an open
        block at its end starts in reasoning, a closed one in content."""
        if self._passthrough:
            return
        d = self._scan(prompt_token_ids)
        if d == _DECIDE_START and self.spec.prompt_opens:
            self._start_state = True
            self._opened_by_prompt = True
        elif d == _DECIDE_END:
            self._start_state = False
        if self._begun and not self._parser.engine.held:
            self._begin()

    def _begin(self) -> None:
        # A block the prompt already opened (Gemma 4 after a tool response):
        # the output continues it, no start to wait for.
        self._parser.begin(starts_in_reasoning="inside" if self._start_state and self._opened_by_prompt
                           else self._start_state)
        self._eng = self._parser.engine
        self._held_ids: list[int] = []
        if self._label is not None:
            self._label.begin_block()
        self._begun = True
        self._ended = False
        self._lead_buf = "" if self._lead_end and not self._start_state else None  # (not inside a block the prompt opened)
        self._block_over = False
        self._pending_text = ""
        self._deferred_ws = []
        self._content_started = False

    # -- structured-output gate --------------------------------------------------
    def is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        fixed = self.spec.reasoning_end_answer
        if fixed:
            return None if fixed == "none" else fixed == "true"  # type: ignore[return-value]
        if self.spec.encoded_markers and not self._passthrough:
            return self._is_reasoning_end_encoded(input_ids)
        return self._is_reasoning_end(input_ids)

    def _last_of(self, ids: Sequence[int], seqs: Iterable[tuple[int, ...]]) -> int:
        """Start of the last occurrence in ``ids`` of any of ``seqs`` (-1: none)."""
        best = -1
        for seq in seqs:
            m = len(seq)
            if not m:
                continue
            first = seq[0]
            for i in range(len(ids) - m, best, -1):
                if ids[i] == first and tuple(ids[i:i + m]) == seq:
                    best = i
                    break
        return best

    def _is_reasoning_end_encoded(self, input_ids: Sequence[int]) -> bool:
        starts, ends = self._encoded()
        e = self._last_of(input_ids, ends)
        return e >= 0 and e > self._last_of(input_ids, starts)

    def _content_ids_encoded(self, input_ids: list[int], ids: list[int]) -> list[int]:
        """``_Spec.encoded_markers``: the ids after the last end; none while a
        block is open (in the ids, or from the thinking switches); else all."""
        starts, ends = self._encoded()
        e, best = -1, None
        for seq in ends:
            i = self._last_of(ids, (seq,))
            if i > e:
                e, best = i, seq
        if best is not None:
            return input_ids[e + len(best):]
        if self._initial_start or self._last_of(ids, starts) >= 0:
            return []
        return input_ids

    def _gate_encoded(self, input_ids: Sequence[int], delta: Sequence[int]) -> bool:
        """vLLM's streaming gate for ``_Spec.encoded_markers`` before any
        streaming: an end anywhere ends it; inside from the switches, or ids
        that end in a partial delimiter, wait; ids with no start are content."""
        if self._initial_start:
            return False  # (vLLM's class: inside the block the switches opened until its stream says otherwise)
        starts, ends = self._encoded()
        if self._last_of(delta, ends) >= 0:
            return True
        # What the ids before this call held (kept as they grow: O(delta)).
        n = len(input_ids)
        seen = getattr(self, "_gate_seen", None)
        if seen is None or seen[0] > n:
            seen = [0, False, False]
        longest = max((len(q) for q in starts + ends), default=1)
        a = max(0, seen[0] - longest + 1)
        window = list(input_ids[a:n])
        seen[1] = seen[1] or self._last_of(window, starts) >= 0
        seen[2] = seen[2] or self._last_of(window, ends) >= 0
        seen[0] = n
        self._gate_seen = seen
        if seen[2]:
            return True
        tail = list(input_ids[max(0, n - longest + 1):n])
        for seq in starts + ends:
            for k in range(min(len(seq) - 1, len(tail)), 0, -1):
                if tuple(tail[-k:]) == seq[:k]:
                    return False
        return not seen[1] and n > 0

    def _is_reasoning_end(self, input_ids: Sequence[int]) -> bool:
        if self._passthrough and not self._append_think:
            return True
        return self._answer(self._scan(input_ids))

    def is_reasoning_end_streaming(self, input_ids: Sequence[int], delta_ids: Iterable[int]) -> bool:
        """O(delta): the last decisive token of the delta, else the answer
        for the ids before it (remembered from the previous step)."""
        if self._passthrough and not self._append_think:
            return True
        delta = delta_ids if isinstance(delta_ids, (list, tuple)) else list(delta_ids)
        if self.spec.text_stream and self._begun:
            # vLLM's text-level class: the stream's own state decides once it began.
            if self._ended or self.spec.encoded_markers:
                return self._ended
        if self.spec.gate_window:
            if not delta:
                return False
            starts, ends = self._encoded()
            carry = max((len(q) for q in starts + ends), default=1) - 1
            head = len(input_ids) - len(delta)
            window = list(input_ids[max(0, head - carry):head]) + list(delta)
            return self._is_reasoning_end_encoded(window)
        if self.spec.encoded_markers:
            return self._gate_encoded(input_ids, delta)
        if self.spec.style == "r1":
            # vLLM's rule for these names: an end token in this step's ids.
            end_ids = self._end_ids
            for t in delta:
                if t in end_ids:
                    return True
            return False
        if self._carry:
            # a delimiter may straddle the step boundary: look back far enough
            # (and, as vLLM's class of such a format, only the step's window decides)
            head = len(input_ids) - len(delta)
            return self._answer(self._scan(list(input_ids[max(0, head - self._carry):head]) + list(delta)))
        else:
            d = self._scan(delta)
        n = len(input_ids)
        if d == 0 or d == _DECIDE_BOUNDARY and n > len(delta):
            if self._gate_len == n - len(delta) and d == 0:
                answer = self._gate_answer
            else:
                answer = self._answer(self._scan(input_ids))
        else:
            answer = self._answer(d)
        self._gate_len, self._gate_answer = n, answer
        return answer

    def has_engine_confirmed_reasoning_end(self) -> bool:
        # granite_thinking_parser: vLLM keeps routing deltas here until the
        # content has started (its leading whitespace is dropped).
        return self._ended and (self._content_started or not self.spec.lstrip_content)

    # -- token ids -------------------------------------------------------------
    def _as_ids(self, input_ids: Sequence[Any]) -> list[int]:
        """vLLM's tests pass token strings to extract_content_ids: accept both."""
        if input_ids and any(isinstance(t, str) for t in input_ids):
            vocab = self.vocab
            return [vocab.get(t, -1) if isinstance(t, str) else t for t in input_ids]
        return list(input_ids)

    def extract_content_ids(self, input_ids: list[int]) -> list[int]:
        cached = getattr(self, "_cids", None)
        if cached is not None:
            self._cids = None
            if cached[0] == tuple(input_ids):
                return list(cached[1])
        if self._passthrough:
            return input_ids
        ids = self._as_ids(input_ids)
        if self.spec.encoded_markers:
            return self._content_ids_encoded(input_ids, ids)
        if self.spec.style == "r1":
            end_ids = self._end_ids
            for i in range(len(ids) - 1):
                if ids[i] in end_ids:
                    return input_ids[i + 1:]
            return []
        if not self._wait:
            return input_ids
        end_ids = self._end_ids
        for i in range(len(ids) - 1, -1, -1):
            if ids[i] in end_ids:
                return input_ids[i + 1:]
        if self.spec.content_ids_missing == "open":
            # minimax_m3: no end yet -> nothing while a block is open (opened
            # in the output, or by the template), all ids otherwise
            sids = self._start_ids
            if self._start_state or any(t in sids for t in ids):
                return []
            return input_ids
        if self.spec.content_ids_missing == "none":
            for i in range(len(ids) - 1, -1, -1):
                if ids[i] in self._term_ids:
                    return input_ids[i:]
            return []
        if self._term_ids:
            start = 0
            for i in range(len(ids) - 1, -1, -1):
                if ids[i] in self._boundary_ids:
                    start = i + 1
                    break
            for i in range(start, len(ids)):
                if ids[i] in self._term_ids:
                    return input_ids[i:]
        return input_ids

    def _count_setup(self, chat: dict, thinking: bool) -> None:
        """The count's rule and switches, fixed at construction (vLLM's classes
        read them from the constructor, never from the prompt)."""
        spec = self.spec
        kind = spec.count or {"r1": "depth", "append_think": "none"}.get(spec.style, "engine")
        on = True  # (thinking off: the start state says it, for rule "engine")
        if spec.count_thinking_keys:
            said = [chat[k] for k in spec.count_thinking_keys if chat.get(k) is not None]
            on = bool(said[0]) if said else spec.thinking
        if spec.count_when_off:
            on = True
        elif (spec.off_passthrough or spec.count_zero_when_off) and not thinking:
            on = False
        self._count_kind = kind if on else "none"
        self._count_start = self._start_state
        cut = spec.count_cut_when_off if spec.count_cut_when_off and not thinking else spec.count_cut
        self._count_cut = cut or ("block" if self._start_text and spec.style == "engine" else "none")
        not_end = frozenset(self.vocab[t] for t in spec.count_not_end if t in self.vocab) if spec.count_not_end else ()
        self._count_block_ends = frozenset(i for i in self._end_like if i not in not_end)
        self._count_depth = 0
        self._count_memo: Optional[tuple] = None  # (ids counted, rule key, counter)
        key, value = spec.count_open_if
        if key and chat.get(key) == value:
            self._count_depth = 1

    def _count_dropped(self) -> frozenset[int]:
        """Special tokens vLLM's parser engine drops (never reasoning): every
        special token of the tokenizer that is not one of the family's markers."""
        tok = self.model_tokenizer
        hit = _DROPPED.get(tok, self.spec)
        if hit is not None:
            return hit
        try:
            specials = frozenset(int(i) for i in (getattr(tok, "all_special_ids", None) or ()))
        except Exception:
            specials = frozenset()
        tables = self._parser.tables
        markers: set[int] = set()
        for kind in (START, END, TERM):
            for seq in ids_of_kind(tables, kind):
                markers.update(seq)
        # A start inside an open block is a no-op in vLLM's grammars, never reasoning.
        dropped = (specials - markers) | self._start_ids
        if self.spec.count_skip:
            vocab = self.vocab
            dropped |= {vocab[t] for t in self.spec.count_skip if t in vocab}
        return _DROPPED.put(tok, self.spec, dropped)

    def count_reasoning_tokens(self, token_ids: Sequence[int]) -> int:
        """``usage.completion_tokens_details.reasoning_tokens``: counted by the
        rule vLLM's parser of this name counts with (``_Spec.count``), on the
        output ids (with the EOS id) and this request's thinking switches; the
        prompt's open block does not count (vLLM's counters start from the
        constructor's state).  One pass over the ids; when they extend the
        previous call's (vLLM asks on every step with
        ``stream_options.continuous_usage_stats``), one C-level comparison of
        the ids already counted and a pass over the new ones."""
        kind = self._count_kind
        if kind == "none" or not token_ids:
            return 0
        if kind == "vllm":
            own = self._vllm_own()
            if own is not None:
                try:
                    return int(own.count_reasoning_tokens(token_ids))
                except Exception:
                    pass
            kind = "engine"
        ids = token_ids if type(token_ids) is tuple else tuple(token_ids)
        key = (kind, self._count_start, self._passthrough)
        memo, self._count_memo = self._count_memo, None
        counter = None
        if memo is not None:
            prev, mkey, mcounter = memo
            if mkey == key and (ids is prev or _extends(ids, prev)):
                counter = mcounter
        if counter is None:
            counter = self._counter(kind)
        n = counter.count(ids)
        self._count_memo = (ids, key, counter)
        return n

    def _counter(self, kind: str) -> "_Resumable":
        """A fresh incremental counter for rule ``kind``."""
        if kind == "to_end" or kind == "to_end_after_start":
            return _ToEndCount(self.end_token_id, self.start_token_id, kind == "to_end_after_start")
        if kind == "depth":
            if self.spec.encoded_markers:
                starts, ends = self._encoded()
                start, end = (starts[0] if starts else ()), (ends[0] if ends else ())
            else:
                start, end = self._marker_seq(START), self._marker_seq(END)
            return _DepthCount(start, end, self._count_depth)
        if kind == "open_close":
            rule = getattr(self, "_open_close", None)
            if rule is None:
                rule = self._open_close = self._open_close_rule()
            return _OpenCloseCount(rule, self.spec.count_inside_first)
        if kind == "header":
            return _HeaderCount(self)
        if self._passthrough:
            return _DepthCount((), (), 0)  # counts 0
        return _EngineCount(self)

    def _marker_seq(self, kind: int) -> tuple[int, ...]:
        seqs = ids_of_kind(self._parser.tables, kind)
        return tuple(seqs[0]) if seqs else ()

    def _open_close_rule(self) -> tuple:
        spec, tok = self.spec, self.model_tokenizer

        def enc(text: str) -> tuple[int, ...]:
            return tuple(tok.encode(text, add_special_tokens=False)) if text else ()

        opener = self._marker_seq(START)
        closers = tuple(c for c in (self._marker_seq(END),) + tuple(enc(t) for t in spec.count_close_also) if c)
        early = enc(spec.count_close_before_open)
        heads = frozenset(m[0] for m in (opener, early) + closers if m)
        return opener, closers, early, heads

    # -- one-shot -----------------------------------------------------------------
    def extract_reasoning(self, model_output: str, request: Any = None) -> tuple[Optional[str], Optional[str]]:
        self._had_content = False
        reasoning, content = self._extract_reasoning(model_output, request)
        force = self.spec.force_content
        absent = content is None and not (force == "absent" and self._had_content)
        if force and (absent or force == "blank" and not content.strip()):
            # vLLM's rule for this name: the request's chat_template_kwargs
            # (thinking off, or force_nonempty_content) swap an answer that
            # has no content.
            chat = getattr(request, "chat_template_kwargs", None) or {}
            if chat.get("enable_thinking") is False or chat.get("force_nonempty_content") is True:
                reasoning, content = content, reasoning
        return reasoning, content

    def _extract_reasoning(self, model_output: str, request: Any = None) -> tuple[Optional[str], Optional[str]]:
        if self._passthrough:
            if self._append_think:
                return None, self._start_text_str() + model_output
            if self.spec.content_wrapper and not (getattr(request, "tools", None)
                                                  and getattr(request, "tool_choice", None) != "none"):
                # kimi_k3 thinking off, no tool parser to read the channels:
                # vLLM's class unwraps the response itself.
                st = [0, "", False]
                return None, (self._strip_feed(st, model_output) + st[1]) or None
            return None, model_output
        spec = self.spec
        if spec.style == "engine" and not self.thinking and spec.off_is_identity:
            return None, model_output
        if self._lead_end:
            for end in self._family.end:
                if model_output.startswith(end):
                    return None, model_output[len(end):] or None
        if self._injects(model_output, self._start_state):
            model_output = self._family.start[0] + model_output
        if spec.style == "r1" and self._start_state:
            # vLLM's R1 rule, asserted by its tests (new_line): one-shot, the
            # text before the first start delimiter is not kept.
            for start in self._family.start:
                head, found, tail = model_output.partition(start)
                if found:
                    model_output = tail
                    break
        tp = TextReasoningParser(self._family, starts_in_reasoning=self._start_state)
        r1, c1 = tp.feed(model_output)
        ended = not tp.is_reasoning
        r2, c2 = tp.finish()
        reasoning, content = r1 + r2, c1 + c2
        if self._absorb and content:
            content = self._drop_ends(content)
        if self._rstrip:
            reasoning = reasoning.rstrip()
        self._had_content = bool(content)
        if spec.lstrip_content:
            content = content.lstrip()
        if not ended and spec.one_shot_no_end == "content":
            return "", reasoning + content
        if spec.style == "r1":
            return reasoning, (content or None) if ended else None
        if spec.empty_reasoning_when_opened and not reasoning and any(m in model_output for m in self._family.start):
            return "", content or None
        return reasoning or None, content or None

    # -- streaming ------------------------------------------------------------------
    def _decode(self, ids: Sequence[int]) -> str:
        key = tuple(ids)
        text = self._decode_cache.get(key)
        if text is None:
            try:
                text = self.model_tokenizer.decode(list(ids), skip_special_tokens=False)
            except Exception:  # a tokenizer without decode (vLLM's tests pass stubs)
                text = self._marker_texts().get(key, "")
            if len(key) <= 8:
                self._decode_cache[key] = text
        return text

    def _text_delta(self, text: str) -> Optional[DeltaMessage]:
        if not self._begun:
            self._begin()
        tp = self._text_parser
        if tp is None:
            tp = self._text_parser = TextReasoningParser(
                self._family, starts_in_reasoning=self._eng.state != CONTENT)
        if self._lead_buf is not None:
            # minimax_m3: an end delimiter that opens the output is dropped,
            # also when it comes in pieces (held while it can still be one).
            text = self._lead_buf + text
            end = self._family.end[0] if self._family.end else ""
            if len(text) < len(end) and end.startswith(text):
                self._lead_buf = text
                return None
            self._lead_buf = None
            for end in self._family.end:
                if text.startswith(end):
                    text = text[len(end):]
                    self._ended = True  # vLLM's class: an end in the text ends the phase
                    break
            if not text:
                return None
        if self._block_over:
            # vLLM's text-level class of this name: after the block closed,
            # the rest of the output is content as written.
            return self._content_delta(None, text)
        r, c = tp.feed(text)
        if not tp.is_reasoning and (c or tp.end_seen or not tp.held_text):
            self._ended = True  # (a partial delimiter held in content decides nothing yet)
        if self.spec.text_stream and tp.end_seen and not tp.is_reasoning:
            self._block_over = True
            r2, c2 = tp.finish()  # held text after the end is content
            r, c = r + r2, c + c2
        if c and self._absorb:
            c = self._drop_ends(c)
        if r:
            return self._reasoning_delta(r, c or None)
        return self._content_delta(None, c) if c else None

    def _restore_markers(self, text: str, ids: Sequence[int]) -> str:
        """A step whose ids hold a delimiter whose text ``text`` lacks (a
        detokenizer that skips special tokens): the delimiter's text put back
        where its id was, so the text level still sees it."""
        marks = self._start_ids | self._end_ids | self._term_ids
        if not marks or marks.isdisjoint(ids):
            return text
        names = {seq[0]: m for seq, m in self._marker_texts().items() if len(seq) == 1}
        pieces: list[tuple[bool, list[int]]] = [(False, [])]
        for t in ids:
            if t in marks and t in names:
                pieces.append((True, [t]))
                pieces.append((False, []))
            else:
                pieces[-1][1].append(t)
        if all(names[p[0]] in text for is_mark, p in pieces if is_mark):
            return text
        plain = [self._decode(p) if p else "" for is_mark, p in pieces if not is_mark]
        if "".join(plain) != text:
            # cannot place them: the delimiters first (one-token steps are the marker alone)
            return "".join(names[p[0]] for is_mark, p in pieces if is_mark) + text
        out, k = [], 0
        for is_mark, p in pieces:
            if is_mark:
                out.append(names[p[0]])
            else:
                out.append(plain[k])
                k += 1
        return "".join(out)

    def _drop_leading_end(self, text: str, ids: Sequence[int]) -> tuple[str, Sequence[int]]:
        """minimax_m3: an end delimiter that opens the output is dropped."""
        for end in self._family.end:
            if text.startswith(end):
                for seq in ids_of_kind(self._parser.tables, END):
                    if tuple(ids[:len(seq)]) == tuple(seq):
                        return text[len(end):], list(ids[len(seq):])
        return text, ids

    def _marker_texts(self) -> dict[tuple[int, ...], str]:
        """The family's delimiters by their ids, for a tokenizer that cannot
        decode (the text of anything else then comes from ``delta_text``)."""
        texts = getattr(self, "_marker_text_map", None)
        if texts is None:
            fam, texts = self._family, {}
            for m in fam.start + fam.end + fam.terminators + fam.header_terminators + fam.headers:
                try:
                    texts.setdefault(tuple(self.model_tokenizer.encode(m, add_special_tokens=False)), m)
                except Exception:
                    pass
            self._marker_text_map = texts
        return texts

    def extract_reasoning_streaming(
        self,
        previous_text: str,
        current_text: str,
        delta_text: str,
        previous_token_ids: Sequence[int],
        current_token_ids: Sequence[int],
        delta_token_ids: Sequence[int],
    ) -> Optional[DeltaMessage]:
        if not self.spec.content_ids_cache:
            return self._stream(delta_text, delta_token_ids)
        was, self._cids = self._ended, None
        out = self._stream(delta_text, delta_token_ids)
        if self._ended and not was:
            # vLLM's class of this name remembers the content ids of the step
            # that ended reasoning (its serving loop asks extract_content_ids
            # for that step's ids right after).
            content = out.content if out is not None else None
            self._cids = (tuple(delta_token_ids),
                          self._step_content_ids(delta_text, delta_token_ids, current_token_ids, content))
        return out

    def _step_content_ids(self, delta_text: str, delta_ids: Sequence[int], current_ids: Sequence[int],
                          content: Optional[str]) -> list[int]:
        """The ids of the content of the step that ended reasoning: those after
        the end delimiter's ids when the step (with the ids before it) holds
        them, else the ids whose text is the content."""
        ids = list(delta_ids)
        if not ids:
            return []
        n = len(ids)
        seqs = [tuple(q) for q in ids_of_kind(self._parser.tables, END)] if not self._text_only else []
        if self.spec.encoded_markers:
            seqs += [q for q in self._encoded()[1] if q]
        tail = list(current_ids[-n:]) if len(current_ids) >= n else []
        for seq in seqs:
            m = len(seq)
            window = list(current_ids[max(0, len(current_ids) - n - m + 1):]) if tail == ids else ids
            for i in range(len(window) - m, -1, -1):
                if tuple(window[i:i + m]) == seq:
                    return window[i + m:]
        if not content:
            return []
        if content == delta_text:
            return ids
        if delta_text.endswith(content):
            head = delta_text[:len(delta_text) - len(content)]
            for i in range(n + 1):
                if self._decode(ids[:i]) == head:
                    return ids[i:]
        return list(self._encode(content))

    def _encode(self, text: str) -> tuple[int, ...]:
        try:
            try:
                return tuple(int(i) for i in self.model_tokenizer.encode(text, add_special_tokens=False))
            except TypeError:
                return tuple(int(i) for i in self.model_tokenizer.encode(text))
        except Exception:
            return ()

    def _encoded(self) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
        """(starts, ends): each delimiter as the tokenizer encodes its text
        (``_Spec.encoded_markers``)."""
        enc = getattr(self, "_enc", None)
        if enc is None:
            fam = self._family
            enc = self._enc = (tuple(self._encode(m) for m in fam.start), tuple(self._encode(m) for m in fam.end))
        return enc

    def strip_content_streaming(self, previous_text: str, current_text: str) -> Optional[DeltaMessage]:
        """The content after reasoning with the wrapper markers of this name
        removed (``_Spec.content_wrapper``; what vLLM's composed Kimi K3 parser
        asks when no tool parser runs): ``previous_text`` / ``current_text``
        are the content so far, before and after this step.  A suffix that
        may still become a marker is held.  O(step) when called step after
        step; otherwise ``previous_text`` is read again first."""
        st = getattr(self, "_strip", None)
        if st is None or st[0] != len(previous_text) or not current_text.startswith(previous_text):
            st = self._strip = [0, "", False]
            self._strip_feed(st, previous_text)
        out = self._strip_feed(st, current_text[len(previous_text):])
        st[0] = len(current_text)
        return _delta(None, out) if out else None

    def _strip_feed(self, st: list, chunk: str) -> str:
        wrapper = self.spec.content_wrapper
        if not wrapper:
            return chunk
        text = st[1] + chunk
        out = []
        while True:
            markers = wrapper[1:] if st[2] else wrapper
            best, which = -1, ""
            for m in markers:
                j = text.find(m)
                if j >= 0 and (best < 0 or j < best):
                    best, which = j, m
            if best < 0:
                break
            out.append(text[:best])
            text = text[best + len(which):]
            if which == wrapper[0]:
                st[2] = True
        hold = 0
        for m in wrapper:
            for k in range(min(len(m) - 1, len(text)), hold, -1):
                if text.endswith(m[:k]):
                    hold = k
                    break
        st[1] = text[len(text) - hold:] if hold else ""
        out.append(text[:len(text) - hold] if hold else text)
        return "".join(out)

    def _stream(self, delta_text: str, delta_token_ids: Sequence[int]) -> Optional[DeltaMessage]:
        if self._passthrough:
            if self._append_think and not self._begun:
                self._begun = True
                delta_text = self._start_text_str() + delta_text
            return _delta(None, delta_text) if delta_text else None
        if self.spec.text_stream:
            # vLLM's class of this name reads the text: so does ours.
            if delta_token_ids and not self._text_only:
                delta_text = self._restore_markers(delta_text, delta_token_ids)
            if not delta_text:
                return None
            return self._text_delta(delta_text)
        if not delta_token_ids or self._text_parser is not None or self._text_only:
            # Text without ids (a caller whose ids do not cover its text): from
            # here on this request is split at the text level, from the side
            # the ids left it on.
            if not delta_text:
                return None
            return self._text_delta(delta_text)
        if self._lead_end and not self._begun:
            delta_text, delta_token_ids = self._drop_leading_end(delta_text, delta_token_ids)
            if not delta_text:
                return None
        if not self._begun:
            self._begin()
            self._lead_buf = None  # (dropped above, at the token level)
            if self.spec.inject_start_if and self._injects(delta_text, self._start_state):
                sid = self.start_token_id
                if sid is not None:
                    self._parser.split([sid])
                    if self._label is not None:
                        self._label.begin_block()
        if self._start_text and not self._held_ids:
            # a start in content is text: in content already, or after an end
            # earlier in this step (read in pieces, so whatever the step holds
            # after the end is read as if it came in a step of its own)
            sids = self._start_ids
            for t in delta_token_ids:
                if t in sids:
                    if self._eng.state == CONTENT or self._start_after_close(delta_token_ids):
                        return self._with_text_starts(delta_text, delta_token_ids)
                    break
        # The engine's own feed: segments of (held tokens + this delta), no
        # per-call result object; held tokens are tracked here.
        segs, n_prefix = self._eng.feed(delta_token_ids)
        if not self._ended:
            state = self._eng.state
            if state == CONTENT:
                self._ended = self._start_state or self._saw_reasoning(segs)
        if len(segs) == 1 and not n_prefix and self._label is None:
            kind = segs[0][0]
            if kind == SEG_REASONING:
                if not delta_text:
                    return None
                if self._rstrip:
                    return self._reasoning_delta(delta_text, None)
                return _delta(delta_text)
            if kind == SEG_CONTENT:
                if not delta_text:
                    return None
                if self._absorb:
                    end_ids = self._end_ids
                    for t in delta_token_ids:
                        if t in end_ids:  # a stray end outside reasoning: vLLM's grammars drop it
                            delta_text = self._drop_ends(delta_text)
                            if not delta_text:
                                return None
                            break
                return self._content_delta(None, delta_text)
            if kind == SEG_HELD:
                self._held_ids = list(delta_token_ids)
                self._pending_text += delta_text
                return None
            return None  # a whole delimiter
        if not segs:
            return None
        tokens = self._held_ids + list(delta_token_ids) if n_prefix else list(delta_token_ids)
        self._held_ids = []
        return self._mixed(tokens, segs, delta_text)

    def _start_after_close(self, ids: Sequence[int]) -> bool:
        """Whether a start delimiter follows an end (or a terminator) in ``ids``."""
        sids, closing = self._start_ids, self._closing_ids
        closed = False
        for t in ids:
            if t in closing:
                closed = True
            elif closed and t in sids:
                return True
        return False

    def _with_text_starts(self, delta_text: str, delta_token_ids: Sequence[int]) -> Optional[DeltaMessage]:
        """A delta holding a start delimiter while in content, for a grammar
        where that start is plain text: the pieces around it are fed one by one."""
        if len(delta_token_ids) == 1:
            return self._content_delta(None, delta_text) if delta_text else None
        pieces: list[list[int]] = [[]]
        sids = self._start_ids
        for t in delta_token_ids:
            if t in sids:
                pieces.append([t])
                pieces.append([])
            else:
                pieces[-1].append(t)
        texts = [self._decode(p) for p in pieces]
        if "".join(texts) != delta_text:
            texts[-1] = delta_text[len("".join(texts[:-1])):]
        reasoning: list[str] = []
        content: list[str] = []
        for ids, text in zip(pieces, texts):
            if not ids:
                continue
            m = self._stream(text, ids)
            if m is not None:
                reasoning.append(m.reasoning or "")
                content.append(m.content or "")
        r, c = "".join(reasoning), "".join(content)
        if not r and not c:
            return None
        return _delta(r, c or None) if r else _delta(None, c)

    def _injects(self, text: str, starts_in_reasoning: bool) -> bool:
        """Gemma 4 (vLLM's rule): output that begins like a reasoning block
        without its start delimiter, or holds the end, gets the start put in front."""
        spec = self.spec
        if not spec.inject_start_if or starts_in_reasoning or not text:
            return False
        fam = self._family
        if any(s in text for s in fam.start):
            return False
        if any(e in text for e in fam.end):
            return True
        prefix, whole = spec.inject_start_if[0], spec.inject_start_if[-1]
        return text.startswith(prefix) or text == whole

    def _drop_ends(self, text: str) -> str:
        for e in self._family.end:
            if e in text:
                text = text.replace(e, "")
        return text

    def _saw_reasoning(self, segs) -> bool:
        for k, _, _ in segs:
            if k != SEG_CONTENT and k != SEG_HELD:  # held tokens decide nothing yet
                return True
        return False

    def _mixed(self, toks: list[int], segs, delta_text: str) -> Optional[DeltaMessage]:
        """A delta with more than one kind of segment: its text split by segment."""
        text = self._pending_text + delta_text
        self._pending_text = ""
        pieces = [self._decode(toks[a:b]) for _, a, b in segs]
        if "".join(pieces) != text:
            pieces = _align(pieces, [k for k, _, _ in segs], text)
        reasoning: list[str] = []
        content: list[str] = []
        label = self._label
        for (k, a, b), piece in zip(segs, pieces):
            if k == SEG_REASONING:
                if label is not None:
                    piece = label(piece) or ""
                reasoning.append(piece)
            elif k == SEG_HELD:
                self._pending_text = piece
                self._held_ids = toks[a:b]
            else:
                if label is not None:
                    # A label prefix still pending when the block ends was reasoning.
                    reasoning.append(label.flush() or "")
                    if k == SEG_START:
                        label.begin_block()
                if k == SEG_CONTENT:
                    content.append(piece)
        r = "".join(reasoning)
        c = "".join(content)
        if self._absorb and c:
            c = self._drop_ends(c)
        if not r and not c:
            return None
        return self._reasoning_delta(r, c) if r else self._content_delta(None, c)

    def _reasoning_delta(self, reasoning: str, content: Optional[str]) -> Optional[DeltaMessage]:
        if self._rstrip:
            # Trailing whitespace waits until more reasoning text follows it (kept
            # as pieces: a long blank run costs O(delta) per call, not a rescan).
            kept = reasoning.rstrip()
            if kept:
                tail = reasoning[len(kept):]
                if self._deferred_ws:
                    kept = "".join(self._deferred_ws) + kept
                self._deferred_ws = [tail] if tail else []
            elif reasoning:
                self._deferred_ws.append(reasoning)
            reasoning = kept
            if content and not self._parser.is_reasoning:
                # the block ended here: its trailing whitespace is dropped (a
                # block that opened after this delta's content goes on: its
                # trailing whitespace still waits)
                self._deferred_ws = []
        if not reasoning and not content:
            return None
        if content and self.spec.lstrip_content and not self._content_started:
            content = content.lstrip()
            self._content_started = bool(content)
        if content:
            return _delta(reasoning, content) if reasoning else _delta(None, content)
        return _delta(reasoning) if reasoning else None

    def _content_delta(self, reasoning: Optional[str], content: str) -> Optional[DeltaMessage]:
        self._deferred_ws = []
        if self.spec.lstrip_content and not self._content_started:
            content = content.lstrip()
            if not content:
                return None
            self._content_started = True
        return _delta(None, content)

    def finish_streaming(self) -> Optional[DeltaMessage]:
        """End of the request: held tokens go to the side they were on."""
        if not self._begun or self._passthrough:
            return None
        if self._text_parser is not None or self._lead_buf:
            if self._text_parser is None:
                self._text_parser = TextReasoningParser(
                    self._family, starts_in_reasoning=self._eng.state != CONTENT)
            lead, self._lead_buf = self._lead_buf, None
            r, c = self._text_parser.feed(lead) if lead else ("", "")
            r2, c2 = self._text_parser.finish()
            r, c = r + r2, c + c2
            if not r and not c:
                return None
            return _delta(r, c or None) if r else _delta(None, c)
        held = self._parser.engine.held
        if not held:
            return None
        sp = self._parser.finish()
        self._held_ids = []
        text, self._pending_text = self._pending_text, ""
        if not text:
            return None
        return _delta(text) if sp.reasoning_ids else _delta(None, text)

    # -- request ------------------------------------------------------------------
    def _vllm_own(self) -> Any:
        """vLLM's own parser of this name for this request (built once), or None."""
        own = getattr(self, "_own", False)
        if own is False:
            cls = _vllm_own_class("reasoning", self.vllm_name)
            own = None
            if cls is not None:
                try:
                    args, kwargs = self._init_args
                    own = cls(self.model_tokenizer, *args, **kwargs)
                except Exception:
                    own = None
            self._own = own
        return own

    def adjust_request(self, request: Any) -> Any:
        """The detokenization switches vLLM's parser of this name sets (it
        keeps special tokens for most names); without vLLM's class: keep
        special tokens when the family's markers are special tokens."""
        if _adjust_like_vllm("reasoning", self.vllm_name, lambda cls: self._vllm_own(), request):
            return request
        specials = set(getattr(self.model_tokenizer, "all_special_tokens", ()) or ())
        fam = self._family
        markers = fam.start + fam.end + fam.terminators
        if any(m in specials for m in markers) and hasattr(request, "skip_special_tokens"):
            request.skip_special_tokens = False
        return request


def _align(pieces: list[str], kinds: list[int], text: str) -> list[str]:
    """Fit decoded segment pieces to the detokenizer's text.

    Delimiter pieces are located in ``text`` in order; the text between two
    located delimiters goes to the segments between them (the last of them
    takes any bytes the per-piece decode could not place).
    """
    out = [""] * len(pieces)
    pos = 0
    pending: list[int] = []
    for i, (k, piece) in enumerate(zip(kinds, pieces)):
        if k in (SEG_CONTENT, SEG_REASONING, SEG_HELD):
            pending.append(i)
            continue
        j = text.find(piece, pos) if piece else -1
        if j < 0:
            continue
        _spread(out, pending, pieces, text[pos:j])
        pending = []
        out[i] = piece
        pos = j + len(piece)
    _spread(out, pending, pieces, text[pos:])
    return out


def _spread(out: list[str], idx: list[int], pieces: list[str], gap: str) -> None:
    if not idx:
        return
    pos = 0
    for n, i in enumerate(idx):
        if n == len(idx) - 1:
            out[i] = gap[pos:]
        else:
            want = pieces[i]
            take = want if gap.startswith(want, pos) else gap[pos:pos + len(want)]
            out[i] = take
            pos += len(take)


def _with_terminators(fam: Family, extra: tuple[str, ...]) -> Family:
    from dataclasses import replace

    return replace(fam, name=f"{fam.name}_vllm", terminators=fam.terminators + extra)


def _make_class(name: str, spec: _Spec) -> type[VllmReasoningParser]:
    cls_name = "".join(p.capitalize() for p in name.split("_")) + "RcReasoningParser"
    bases: tuple[type, ...] = (VllmReasoningParser,)
    own = _vllm_own_class("reasoning", name) if spec.vllm_base else None
    if own is not None:
        bases += (own,)
    return type(cls_name, bases, {"vllm_name": name, "spec": spec, "__module__": __name__,
                                  "engine_based_streaming": spec.engine_based})


REASONING_PARSERS: dict[str, type[VllmReasoningParser]] = {name: _make_class(name, s) for name, s in _SPECS.items()}

# ---------------------------------------------------------------------------
# Tool parsers
# ---------------------------------------------------------------------------

try:
    from vllm.entrypoints.generate.base.protocol import (
        DeltaFunctionCall,
        DeltaToolCall,
        ExtractedToolCallInformation,
        FunctionCall,
        ToolCall,
    )
    from vllm.tool_parsers import ToolParser as _VllmToolParser
except ImportError as exc:  # pragma: no cover
    raise ImportError("reasoning_core.integrations.vllm needs vLLM's tool_parsers package") from exc

from .. import tools as _tools
from ..tools import _base as _tool_base
from ..tools import _json as _tool_json
from ..tools._types import ParsedToolCallDelta as _PTD
from ._common import BlockReader as _BlockReader, json_closer as _json_closer, null_text_class as _null_text_class
from ._common import refs_inlined as _refs_inlined


def _tool_delta_builders():
    """``(message, call, args_message, content_message)``: builders of the
    ``DeltaMessage`` / ``DeltaToolCall`` / ``DeltaFunctionCall`` objects our tool
    parser returns, without pydantic validation (every value we put in them is
    already of its field's type), so a delta inside a call's arguments costs
    what the interface itself costs.  The objects match the validated
    constructors' field for field: ``__dict__``, fields set (vLLM's serving layer
    dumps them with ``exclude_unset``), extra; checked here against them on
    samples, and on any difference (another vLLM or pydantic) the validated
    constructors are used instead.

    * ``message(content, calls)``: ``DeltaMessage`` with ``content`` (``None``:
      unset) and ``tool_calls`` (``None``: unset);
    * ``call(index, cid, name, arguments)``: ``DeltaToolCall(index=, id=cid,
      type="function" if cid else None, function=DeltaFunctionCall(name=,
      arguments=) if name or arguments else None)``;
    * ``args_message(index, arguments)``: a message with one call's argument piece;
    * ``content_message(text)``: ``DeltaMessage(content=text)``.
    """
    mk = _tool_json.SCAN.model_new

    def extra(cls) -> bool:
        return cls.model_config.get("extra") == "allow"

    xm, xt, xf = extra(DeltaMessage), extra(DeltaToolCall), extra(DeltaFunctionCall)
    fs_fn = frozenset(("name", "arguments"))
    fs_tc = frozenset(("id", "type", "index", "function"))
    fs_msg = {(True, False): frozenset(("content",)), (False, True): frozenset(("tool_calls",)),
              (True, True): frozenset(("content", "tool_calls")), (False, False): frozenset()}

    def message(content, calls):
        return mk(DeltaMessage, {"role": None, "content": content, "reasoning": None,
                                 "tool_calls": [] if calls is None else calls},
                  fs_msg[content is not None, calls is not None], xm)

    def call(index, cid, name, arguments):
        fn = mk(DeltaFunctionCall, {"name": name, "arguments": arguments}, fs_fn, xf) if (name or arguments) else None
        return mk(DeltaToolCall, {"id": cid, "type": "function" if cid else None, "index": index, "function": fn},
                  fs_tc, xt)

    scan = _tool_json.SCAN
    try:  # one compiled call for the three models of an argument piece
        args_shape = scan.ModelShape([
            (DeltaMessage, {"role": None, "content": None, "reasoning": None, "tool_calls": [scan.CHILD]},
             fs_msg[False, True], xm),
            (DeltaToolCall, {"id": None, "type": None, "index": scan.INDEX, "function": scan.CHILD}, fs_tc, xt),
            (DeltaFunctionCall, {"name": None, "arguments": scan.PIECE}, fs_fn, xf),
        ])
        content_shape = scan.ModelShape([(DeltaMessage, {"role": None, "content": scan.PIECE, "reasoning": None,
                                                         "tool_calls": []}, fs_msg[True, False], xm)])
    except (TypeError, ValueError):  # pragma: no cover - models another pydantic builds otherwise
        args_shape = content_shape = None
    args_message = args_shape.build if args_shape is not None else None

    def content_message(text, _build=content_shape.build if content_shape is not None else None):
        return _build(None, text)

    def v_message(content, calls):
        kw: dict[str, Any] = {}
        if content is not None:
            kw["content"] = content
        if calls is not None:
            kw["tool_calls"] = calls
        return DeltaMessage(**kw)

    def v_call(index, cid, name, arguments):
        fn = DeltaFunctionCall(name=name, arguments=arguments) if (name or arguments) else None
        return DeltaToolCall(index=index, id=cid, type="function" if cid else None, function=fn)

    def v_args_message(index, arguments):
        return v_message(None, [v_call(index, None, None, arguments)])

    def v_content_message(text):
        return DeltaMessage(content=text)

    validated = (v_message, v_call, v_args_message, v_content_message, None, None)
    if args_shape is None or content_shape is None:  # pragma: no cover
        return validated
    try:
        def same(a, b) -> bool:
            return (type(a) is type(b) and a == b and repr(a) == repr(b) and a.model_dump() == b.model_dump()
                    and a.model_dump_json(exclude_unset=True) == b.model_dump_json(exclude_unset=True)
                    and a.model_fields_set == b.model_fields_set and a.__pydantic_extra__ == b.__pydantic_extra__
                    and a.__pydantic_private__ == b.__pydantic_private__)

        calls = ((0, "call_1", "f", None), (1, "call_2", "g", '{"a"'), (2, None, None, "x"), (0, None, None, None))
        for args in calls:
            if not same(call(*args), v_call(*args)):
                return validated
        for content, c in (("a", None), (None, [(0, None, None, "x")]), ("b", calls), (None, None)):
            if not same(message(content, c and [call(*x) for x in c]), v_message(content, c and [v_call(*x) for x in c])):
                return validated
        if not same(args_message(3, "{"), v_args_message(3, "{")) or not same(content_message("c"),
                                                                           v_content_message("c")):
            return validated
        m = args_message(0, "x")
        m.content = "b"  # vLLM's serving loop assigns fields afterwards
        m.tool_calls[0].function.arguments = "y"
        if m.content != "b" or "content" not in m.model_fields_set or m.tool_calls[0].function.arguments != "y":
            return validated
        if args_message(0, "x").model_fields_set != {"tool_calls"}:  # fields sets are not shared
            return validated
    except Exception:  # pragma: no cover - another pydantic
        return validated
    return message, call, args_message, content_message, args_shape, content_shape


# _ARGS_SHAPE: the ModelShape behind _args_message (None when the validated
# constructors are in use; the hot lane is then never used).
# _CONTENT_SHAPE: the one behind _content_message, for the content lane.
_tool_message, _tool_call, _args_message, _content_message, _ARGS_SHAPE, _CONTENT_SHAPE = _tool_delta_builders()

from ..tools._json import schema_types, typed_value  # noqa: E402

# vLLM tool-parser name -> our tool format (reasoning_core.tools).
_TOOL_FORMATS: dict[str, str] = {
    "hermes": "hermes",
    "qwen3_coder": "qwen3_coder",
    "llama3_json": "llama3_json",
    "deepseek_v3": "deepseek_v3",
    "deepseek_v31": "deepseek_v31",
    "deepseek_v4": "deepseekv4",
    "kimi_k2": "kimi_k2",
    "glm45": "glm45",
    "glm47": "glm45",
    "minimax_m2": "minimax_m2",
    "mistral": "mistral",
    "gemma4": "gemma4",
    "inkling": "inkling",
    "muse_glimmer": "muse_glimmer",
}
# Formats of the further tool-format modules (and the names not served, with why).
_MORE_TOOL_FORMATS, TOOL_NOT_SERVED = _tools.engine_names("vllm")
_TOOL_FORMATS.update(_MORE_TOOL_FORMATS)
_VLLM_OWN["tool"] = _snapshot("tool")


# Whitespace shaping of vLLM's engine-based tool parsers (its ParserEngine
# config for that name): (whitespace-only content before the first call is
# dropped, content of a one-shot reply with calls is stripped).  Names not
# listed pass content through as it came.
_TOOL_WS: dict[str, tuple[bool, bool]] = {
    "deepseek_v32": (True, False), "functiongemma": (True, True), "deepseek_v4": (True, False), "deepseek_v41": (True, False),
    "gemma4": (True, True), "glm45": (True, True), "glm47": (True, True), "granite": (True, True),
    "inkling": (True, False), "kimi_k2": (True, False), "ling3": (True, True), "mimo": (True, True),
    "minimax_m2": (True, True), "minimax_m3": (True, False), "plamo3": (True, False),
    "qwen3_coder": (True, True), "qwen3_xml": (True, True), "seed_oss": (True, True), "step3p5": (True, True),
}


def _tool_schemas(tools) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for t in tools or ():
        fn = getattr(t, "function", None)
        name = getattr(fn, "name", None) if fn is not None else getattr(t, "name", None)
        params = getattr(fn, "parameters", None) if fn is not None else getattr(t, "parameters", None)
        if isinstance(name, str) and isinstance(params, dict):
            out[name] = params
    return out


def _named_choice(request) -> Optional[str]:
    choice = getattr(request, "tool_choice", None)
    fn = getattr(choice, "function", None)
    name = getattr(fn, "name", None) if fn is not None else getattr(choice, "name", None)
    return name if isinstance(name, str) else None


_UNSEEN = object()


class _ArgsView(list):
    """``streamed_args_for_tool`` as vLLM reads it: one string per call, the
    pieces joined (and cached) on read; writes go back to the pieces."""

    def __init__(self, pieces: list[list[str]]) -> None:
        super().__init__(_joined(p) for p in pieces)
        self._pieces = pieces

    def __setitem__(self, i, value) -> None:
        super().__setitem__(i, value)
        self._pieces[i][:] = [value] if value else []

    def append(self, value) -> None:
        super().append(value)
        self._pieces.append([value] if value else [])


def _joined(pieces: list[str]) -> str:
    if len(pieces) > 1:
        pieces[:] = ["".join(pieces)]
    return pieces[0] if pieces else ""


class _CallsView(list):
    """``prev_tool_call_arr``: a list of ``{"name", "arguments"}`` dicts whose
    ``"arguments"`` is read from the argument pieces (joined on read)."""

    def __init__(self, owner: "VllmToolParser", value) -> None:
        super().__init__(value or ())
        self._owner = owner

    def __getitem__(self, i):
        item = super().__getitem__(i)
        if isinstance(i, int) and isinstance(item, dict):
            pieces = self._owner._arg_pieces
            j = i if i >= 0 else len(self) + i
            if j < len(pieces) and pieces[j]:
                dict.__setitem__(item, "arguments", _joined(pieces[j]))
            elif "name" in item and "arguments" not in item:
                dict.__setitem__(item, "arguments", "")
        return item

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]


class VllmToolParser(_VllmToolParser):
    """A vLLM ``ToolParser`` over one ``reasoning_core.tools`` format.

    Rules: the request's tools give each parameter's JSON schema (a ``string``
    parameter stays a string); ``tool_choice="none"`` reports no calls (vLLM's
    serving layer passes the text through); a named ``tool_choice`` or
    ``"required"`` is parsed from the model's own format, like ``"auto"``
    (``supports_required_and_named = False``: vLLM does not force its JSON
    list format on us); a call naming a tool that is not in the request is
    still reported (vLLM's parsers do the same by default), never dropped
    silently.
    """

    rc_format: str = "hermes"
    vllm_name: str = ""
    supports_required_and_named = False
    # vLLM then calls finish_streaming() at the end of the stream: a held
    # partial marker is released and a last call without its end marker is
    # completed when its body parses.
    engine_based_streaming = True
    # What adjust_request takes over from vLLM's class of this name (on a copy
    # of the request): the detokenization switches.
    _adopted: tuple[str, ...] = ()

    def __init__(self, tokenizer: Any, tools: Any = None, **kwargs: Any) -> None:
        super().__init__(tokenizer, tools)
        self._tp = self._format()
        self._ws_drop, self._ws_strip = _TOOL_WS.get(self.vllm_name, (False, False))
        self._nonws_seen = False      # content with non-whitespace text went out
        self._deferred_ws: list[str] = []  # whitespace-only content held, in pieces (vLLM's engine rule)
        self._call_seen = False
        # Arguments streamed per call, as pieces: joined only when vLLM reads
        # streamed_args_for_tool / prev_tool_call_arr (O(delta) per call).
        self._arg_pieces: list[list[str]] = []
        self._schemas_from: Any = None
        if tools:
            self._tp.set_streaming_tool_schemas(self._schemas_of(tools) or None)
            self._schemas_from = tools
        self._request: Any = _UNSEEN  # the request the next two were read from
        self._choice_none = False
        # parse_delta, answering a piece of the open call's arguments as a str
        self._step = _tool_base._scan.step_args
        # The call whose arguments stream now: its pieces recorded and its
        # message built in one compiled step (an ArgsLane), or None.
        self._hot: Any = None
        # Outside a lane, a delta our parser answers as content, whole,
        # answered in one compiled step too (a ContentLane), or None.
        self._chot: Any = None

    def _schemas_of(self, tools: Any) -> dict[str, dict]:
        """The parameter schemas of ``tools`` our format reads (a rule class
        may prepare them as vLLM's class of its name reads them)."""
        return _tool_schemas(tools)

    @property
    def default_tool_strict_level(self) -> Any:
        """The strict level vLLM's serving layer applies to this name's
        structural tag when the operator sets none: vLLM's own class's
        (``glm47``: FUNCTION, so ``"auto"`` is constrained), else vLLM's default."""
        own = _vllm_own_class("tool", self.vllm_name)
        base = _VllmToolParser.default_tool_strict_level
        return getattr(own, "default_tool_strict_level", base) if own is not None else base

    def _use_request(self, request: Any) -> None:
        # Read once per request object (vLLM passes the same one on every delta).
        self._request = request
        self._hot = None
        self._choice_none = getattr(request, "tool_choice", None) == "none"
        tools = getattr(request, "tools", None)
        if tools and tools is not self._schemas_from:
            self._tp.set_streaming_tool_schemas(self._schemas_of(tools) or None)
            self._schemas_from = tools
        self._set_content_lane()

    def _plain_streaming(self) -> bool:
        """Whether this parser's ``_streaming`` now does what the base one
        does (a class whose own steps are done with may say so)."""
        return type(self)._streaming is VllmToolParser._streaming

    def _set_content_lane(self) -> None:
        """The content lane, where ``_streaming`` and ``_answer`` would answer
        a content delta as vLLM's content message of it: this class keeps
        both, the request has tools in use, and vLLM's whitespace rule is
        done with (content with non-whitespace text went out) or not ours."""
        scan = _tool_base._scan  # the scanner in use (a test may swap it)
        cls = type(self)
        ok = (not self._choice_none and (not self._ws_drop or self._nonws_seen) and self._plain_streaming()
              and cls._answer is VllmToolParser._answer
              and cls.extract_tool_calls_streaming is VllmToolParser.extract_tool_calls_streaming
              and self._step is scan.step_args and type(_CONTENT_SHAPE) is scan.ModelShape)
        self._chot = scan.ContentLane(self._tp, _PTD, _CONTENT_SHAPE) if ok else None

    def adjust_request(self, request: Any) -> Any:
        request = super().adjust_request(request)
        if _adjust_like_vllm("tool", self.vllm_name, self._vllm_own_tool, request, self._adopted):
            return request
        if (getattr(request, "tools", None) and getattr(request, "tool_choice", None) != "none"
                and hasattr(request, "skip_special_tokens")):
            # Tool-call markers are special tokens in these vocabularies.
            request.skip_special_tokens = False
        return request

    def _vllm_own_tool(self, cls: type) -> Any:
        """vLLM's tool parser of this name for this tokenizer, built once
        (its ``adjust_request`` reads the request, not the instance's tools)."""
        tok = self.model_tokenizer
        own = _OWN_TOOLS.get(tok, cls)
        return own if own is not None else _OWN_TOOLS.put(tok, cls, cls(tok, None))

    def _format(self) -> Any:
        """A fresh parser of this name's format (a rule class may read a variant)."""
        return _tools.create(self.rc_format)

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        tp = self._format()
        schemas = self._schemas_of(getattr(request, "tools", None) or self.tools)
        if schemas:
            tp.set_streaming_tool_schemas(schemas)
        if getattr(request, "tool_choice", None) == "none":
            return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=model_output)
        try:
            resp = tp.parse_complete(model_output)
        except ValueError:
            return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=model_output)
        calls = [ToolCall(id=c.id, type="function", function=FunctionCall(id=c.id, name=c.name, arguments=c.arguments))
                 for c in resp.tool_calls]
        content = resp.content
        if calls and content is not None:
            if self._ws_strip:
                content = content.strip() or None
            elif self._ws_drop and not content.strip():
                content = None
        return ExtractedToolCallInformation(tools_called=bool(calls), tool_calls=calls, content=content)

    # vLLM's per-delta method, compiled (or its twin): inside a call's
    # arguments the lane (``_hot``) answers, for the same request and a
    # non-empty str delta, with no Python frame; every other delta goes to
    # _streaming, and a lane answer that is not a built message to _answer.
    extract_tool_calls_streaming = _tool_json.SCAN.vllm_tool_streaming

    def _streaming(self, previous_text: str, delta_text: str, request: Any) -> Optional[DeltaMessage]:
        """The general path of ``extract_tool_calls_streaming`` (a rule class
        adds its own steps here; the hot case never needs them)."""
        if request is not self._request:
            self._use_request(request)
        if not delta_text:
            return None
        if self._choice_none:
            # No tools requested (or tool_choice="none"): the text is content,
            # as vLLM's non-engine parsers leave it (its engine parsers drop a
            # call written anyway; ours keep its text, as one-shot does).
            return _content_message(delta_text)
        if type(delta_text) is not str:
            out = self._tp.parse_delta(delta_text)
        else:
            hot = self._hot
            out = hot.step(delta_text) if hot is not None else self._step(self._tp, delta_text, _PTD)
            if type(out) is DeltaMessage:
                return out
        return self._answer(out, delta_text)

    def _answer(self, out: Any, delta_text: str) -> Optional[DeltaMessage]:
        """The message for what our parser answered for ``delta_text``."""
        if type(out) is str:  # a piece of the arguments of a call no lane streams
            out = [_PTD(index=self._tp._cur.index, arguments=out)]
        if out is None:
            if self._ws_drop and not self._nonws_seen:
                text = self._shape_content(delta_text)
                return _content_message(text) if text else None
            return _content_message(delta_text)
        return self._message(out)

    def finish_streaming(self) -> Optional[DeltaMessage]:
        finish = getattr(self._tp, "finish", None)
        try:
            msg = self._message(finish(), final=True) if finish is not None else None
        finally:
            self._hot = None  # our parser starts over: its next call 0 is not this lane's
        if self._deferred_ws:
            held, self._deferred_ws = "".join(self._deferred_ws), []
            if self._call_seen:  # whitespace after the last call: dropped
                return msg
            if msg is None:
                return _content_message(held)
            msg.content = held + (msg.content or "")
        return msg

    def _shape_content(self, text: str) -> str:
        """vLLM's engine rule until content has non-whitespace text:
        whitespace-only content is held, released in front of the text that
        follows it, and dropped when a call starts (or at the end, once a call
        went out). A run of whitespace is judged whole, whatever the chunks."""
        if text.strip():
            self._nonws_seen = True
            held, self._deferred_ws = "".join(self._deferred_ws), []
            if self._request is not _UNSEEN:
                self._set_content_lane()  # the rule is done with
            return held + text
        self._deferred_ws.append(text)
        return ""

    def get_remaining_unstreamed_args(self) -> str:
        """Nothing: every argument we parsed was streamed as it came (O(1),
        where vLLM's default compares the whole arguments at the end)."""
        return ""

    # vLLM's serving layer reads these two lists at the end of a stream (and
    # its tests read them after each delta): views over our pieces.
    @property
    def streamed_args_for_tool(self) -> list[str]:
        return _ArgsView(self._arg_pieces)

    @streamed_args_for_tool.setter
    def streamed_args_for_tool(self, value: list[str]) -> None:
        self._arg_pieces = [[v] if v else [] for v in value]
        self._hot = None

    @property
    def prev_tool_call_arr(self) -> list[dict]:
        return self._prev

    @prev_tool_call_arr.setter
    def prev_tool_call_arr(self, value: list[dict]) -> None:
        self._prev = _CallsView(self, value)
        self._hot = None

    def get_structural_tag(self, request: Any, *, reasoning: bool = False, strict_level: Any = None) -> Any:
        """vLLM's structural tag for this request: vLLM's own for a built-in
        model (``structural_tag_model``), ours (``reasoning_core.structural_tag``)
        otherwise, under vLLM's rules: no tag without tools, for
        ``tool_choice="none"``, or for ``"auto"`` at strict level AUTO with no
        ``strict`` tool; a tool's arguments are held to its schema when it is
        strict (level PARAMETER makes every tool strict)."""
        from vllm import envs
        from vllm.tool_parsers.structural_tag_registry import get_structural_tag_tools, resolve_tool_strictness
        from vllm.tool_parsers.tool_strict_level import ToolStrictLevel

        if strict_level is None:
            strict_level = ToolStrictLevel.AUTO
        model = self.structural_tag_model
        if model is None or not model.startswith(_OWN_TAG):
            return super().get_structural_tag(request, reasoning=reasoning, strict_level=strict_level)
        tools, choice = getattr(request, "tools", None), getattr(request, "tool_choice", None)
        if not envs.VLLM_ENFORCE_STRICT_TOOL_CALLING or not tools or choice == "none":
            return None
        tools = resolve_tool_strictness(get_structural_tag_tools(model, tools, choice), choice, strict_level)
        if not tools:
            return None
        from ..structural_tag import structural_tag

        specs = []
        for t in tools:
            fn = getattr(t, "function", t)  # chat completions tool / Responses FunctionTool
            specs.append({"name": fn.name, "parameters": fn.parameters, "strict": bool(fn.strict)})
        named = _named_choice(request)
        if named is None:  # "auto", "required", or an allowed-tools choice with its mode
            named = choice if isinstance(choice, str) else getattr(choice, "mode", "auto")
        return structural_tag(_tag_family(self.vllm_name, self.rc_format), specs, reasoning,
                              tool_choice=named, tool_format=self.rc_format, builtin=False,
                              parallel_tool_calls=getattr(request, "parallel_tool_calls", None) is not False,
                              as_object=True)

    def _message(self, out, final: bool = False) -> Optional[DeltaMessage]:
        if not out:
            return None
        content: list[str] = []
        calls: list[Any] = []
        shape = self._ws_drop and not self._nonws_seen
        for d in out:
            if d.content is not None:
                if shape and not self._nonws_seen:
                    piece = self._shape_content(d.content)
                    if piece:
                        content.append(piece)
                else:
                    content.append(d.content)
                continue
            self._call_seen = True
            if shape and self._deferred_ws:
                self._deferred_ws = []  # whitespace before a call: dropped
            self._record(d)
            calls.append(_tool_call(d.index, d.id, d.name, d.arguments))
        if not content and not calls:
            return None
        return _tool_message("".join(content) if content else None, calls or None)

    def _record(self, d) -> None:
        """Keep vLLM's bookkeeping (prev_tool_call_arr, streamed_args_for_tool)
        equal to what was streamed, so its end-of-stream top-up adds nothing.
        O(len(d.arguments)): the arguments are kept as pieces, joined when read."""
        pieces = self._arg_pieces
        prev = self._prev
        while len(pieces) <= d.index:
            pieces.append([])
        while len(prev) <= d.index:
            list.append(prev, {})
        entry = list.__getitem__(prev, d.index)
        if d.name and isinstance(entry, dict):
            entry["name"] = d.name
        if d.arguments:
            pieces[d.index].append(d.arguments)
        self.current_tool_id = d.index
        hot = self._hot
        if self._choice_none:  # (tool_choice="none": every delta is content, no lane reads one)
            self._hot = None
        elif hot is None or hot.index != d.index:
            scan = _tool_base._scan  # (a test may have swapped the scanner in since import)
            # (a step that sends nothing is no message: what _answer gives for [])
            self._hot = (scan.ArgsLane(self._tp, _PTD, _ARGS_SHAPE, d.index, d.index, pieces[d.index],
                                       empty=scan.NO_ANSWER)
                         if type(_ARGS_SHAPE) is scan.ModelShape else None)

    # -- what vLLM's class of this name has and ours does not ------------------
    def __getattr__(self, name: str) -> Any:
        # Helpers and constants vLLM's class of this name has (its tests and
        # callers reach for them: functiongemma's ``_parse_arguments``,
        # poolside's ``tool_call_start_token``).  A method is vLLM's function
        # run on this object, so it reads and writes our attributes, never the
        # state of a parser that parsed nothing; a constant comes from vLLM's
        # class, or from a fresh instance of it when its __init__ sets one
        # (immutable values only: parsing state is never borrowed).
        if name.startswith("__") or name in _NOT_DELEGATED:
            raise AttributeError(name)
        own = _vllm_own_class("tool", type(self).vllm_name)
        if own is not None:
            for klass in own.__mro__:
                if klass is _VllmToolParser or klass is object:
                    break
                if name in vars(klass):
                    raw = vars(klass)[name]
                    if isinstance(raw, (staticmethod, classmethod)):
                        return raw.__get__(None, own)
                    return raw.__get__(self, type(self)) if hasattr(type(raw), "__get__") else raw
            fresh = self.__dict__.get("_vllm_fresh", _UNSEEN)
            if fresh is _UNSEEN:
                try:
                    fresh = own(self.model_tokenizer, None)
                except Exception:  # noqa: BLE001 - e.g. a tokenizer it cannot read: no constants then
                    fresh = None
                self.__dict__["_vllm_fresh"] = fresh
            value = vars(fresh).get(name, _UNSEEN) if fresh is not None else _UNSEEN
            if value is not _UNSEEN and _immutable(value):
                return value
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


# Names the serving layer probes with hasattr() on every request: never
# answered from vLLM's class (that would build one per request).
_NOT_DELEGATED = frozenset({"skip_reasoning_parsing", "last_unary_citations"})


def _immutable(value: Any) -> bool:
    if value is None or isinstance(value, (str, bytes, int, float, bool, frozenset)):
        return True
    if isinstance(value, tuple):
        return all(_immutable(v) for v in value)
    return hasattr(value, "pattern") and hasattr(value, "finditer")  # a compiled regex (re or regex)


# Structural tags: where vLLM's own parser of a name uses one of its built-in
# model formats (xgrammar's get_model_structural_tag or vLLM's registry), ours
# names the same one and vLLM builds the tag exactly as for its parser.  Every
# other format whose parser describes its calls (reasoning_core.structural_tag)
# gets our tag: its structural_tag_model is _OWN_TAG + format, so vLLM's serving
# layer asks for a tag, and get_structural_tag builds it.
_STRUCTURAL_TAG_MODELS: dict[str, str] = {
    "hermes": "hermes",
    "qwen3_coder": "qwen_3_coder",
    "llama3_json": "llama",
    "deepseek_v3": "deepseek_r1",
    "deepseek_v31": "deepseek_v3_1",
    "deepseek_v4": "deepseek_v4",
    "kimi_k2": "kimi",
    "glm45": "glm_4_7",
    "glm47": "glm_4_7",
    "minimax_m2": "minimax",
    # names of the further format modules whose vLLM parser has a built-in
    "ling3": "glm_4_7",
    "longcat": "longcat",
    "mimo": "mimo",
    "step5": "qwen_3_coder",
    "step3p5": "qwen_3_coder",
    "qwen3_json": "hermes",
    "qwen3_xml": "qwen_3_coder",
    "llama4_json": "llama",
    "deepseek_v32": "deepseek_v3_2",
    "deepseek_v41": "deepseek_v4_1",
    "kimi_k3": "kimi_k3",
    "plamo3": "plamo3",
}
_OWN_TAG = "reasoning_core:"


def _tag_model(name: str, fmt: str) -> Optional[str]:
    from ..structural_tag import has_tool_tag

    model = _STRUCTURAL_TAG_MODELS.get(name)
    if model is None and has_tool_tag(fmt):
        model = _OWN_TAG + fmt
    return model


def _tag_family(name: str, fmt: str) -> Optional[Family]:
    """The family whose reasoning markers frame this format's output (for
    ``reasoning=True``): the family of the same name, else the first that
    writes this format, else none."""
    from ..families import FAMILIES

    fam = FAMILIES.get(name)
    if fam is not None and fam.tool_parser == fmt:
        return fam
    return next((f for f in FAMILIES.values() if f.tool_parser == fmt), None)


class _GroupedVllmToolParser(VllmToolParser):
    """vLLM's rules for a format whose calls come in one closed group and are
    checked as a whole before any is reported (vLLM's ``k2_horizon``): the
    request picks the dialect (``chat_template_kwargs["tool_call_format"]``,
    checked in ``adjust_request``); a block in another dialect, a name not
    among the request's tools (or not the named ``tool_choice``), text between
    blocks, or a group without its end leaves the whole output as content
    (nothing is lost: the text goes out as it came). Streaming holds the group
    until its end marker and then reports its calls whole."""

    group_open = ""
    group_close = ""
    block_open = ""
    block_close = ""
    dialects: tuple[str, ...] = ()
    default_dialect = ""
    tool_format = ""

    def __init__(self, tokenizer: Any, tools: Any = None, **kwargs: Any) -> None:
        super().__init__(tokenizer, tools, **kwargs)
        self.tool_format = self.default_dialect
        self._buf = ""
        self._sent = 0          # buffer text already handed out (or consumed by the group)
        self._group_at = -1     # where the open group starts in the buffer
        self._resolved = False  # the group was read: the rest is content
        self._ws_held: list[str] = []  # whitespace-only content held until text or a call, in pieces
        self._gparts: list[str] = []  # text of the open group not yet joined into the buffer
        self._gtail = ""        # the open group's last characters (a close marker may begin there)

    _named_tool = staticmethod(_named_choice)

    @classmethod
    def _dialect(cls, request: Any) -> str:
        kwargs = getattr(request, "chat_template_kwargs", None) or {}
        fmt = kwargs.get("tool_call_format", cls.default_dialect)
        if not isinstance(fmt, str) or fmt not in cls.dialects:
            raise ValueError(f"Unsupported tool_call_format {brief(fmt)} for {cls.vllm_name}: "
                             f"use one of {', '.join(cls.dialects)}")
        return fmt

    def adjust_request(self, request: Any) -> Any:
        self._dialect(request)  # a bad dialect fails before generation, as in vLLM
        return request

    def _block_dialect_ok(self, body: str, dialect: str) -> bool:
        raise NotImplementedError

    def _fix_arguments(self, name: str, args: str, dialect: str, schemas: dict) -> str:
        return args

    def _read_group(self, text: str, request: Any):
        """``(calls, content)`` for a text holding a whole group, or None when
        the group is missing, unclosed or fails a check."""
        dialect = self._dialect(request)
        self.tool_format = dialect
        start = text.find(self.group_open)
        if start < 0:
            return None
        end = text.find(self.group_close, start + len(self.group_open))
        if end < 0:
            return None
        body = text[start + len(self.group_open):end]
        blocks, pos = [], 0
        while True:
            i = body.find(self.block_open, pos)
            if i < 0:
                break
            j = body.find(self.block_close, i + len(self.block_open))
            if j < 0 or body[pos:i].strip():
                return None
            blocks.append(body[i + len(self.block_open):j])
            pos = j + len(self.block_close)
        if not blocks or body[pos:].strip():
            return None
        if not all(self._block_dialect_ok(b, dialect) for b in blocks):
            return None
        tools = getattr(request, "tools", None) or self.tools
        schemas = _tool_schemas(tools)
        tp = _tools.create(self.rc_format)
        if schemas:
            tp.set_streaming_tool_schemas(schemas)
        try:
            resp = tp.parse_complete(text[start:end + len(self.group_close)])
        except ValueError:
            return None
        if len(resp.tool_calls) != len(blocks) or (resp.content or "").strip():
            return None
        names = _tool_names(tools)
        named = _named_choice(request)
        calls = []
        for c in resp.tool_calls:
            if (names and c.name not in names) or (named is not None and c.name != named):
                return None
            args = self._fix_arguments(c.name, c.arguments, dialect, schemas)
            calls.append(ToolCall(id=c.id, type="function", function=FunctionCall(id=c.id, name=c.name, arguments=args)))
        content = text[:start] + text[end + len(self.group_close):]
        return calls, (content if content.strip() else None)

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        self._dialect(request)
        if getattr(request, "tool_choice", None) == "none":
            return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=model_output)
        got = self._read_group(model_output, request)
        if got is None:
            return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=model_output)
        return ExtractedToolCallInformation(tools_called=True, tool_calls=got[0], content=got[1])

    def _content(self, text: str, final: bool = False) -> str:
        """Content out, whitespace-only text held until text follows (dropped
        once a call went out, released at the end otherwise). The held text is
        kept in pieces and only the new text is searched: O(delta) however
        long a run of whitespace the model writes."""
        if self._nonws_seen:
            return text
        held = self._ws_held
        if text.strip():
            self._nonws_seen = True
            if held:
                text = "".join(held) + text
                held.clear()
            return text
        if not final:
            held.append(text)
            return ""
        text = "".join(held) + text
        held.clear()
        return "" if self._call_seen else text

    def extract_tool_calls_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                     previous_token_ids: Sequence[int], current_token_ids: Sequence[int],
                                     delta_token_ids: Sequence[int], request: Any) -> Optional[DeltaMessage]:
        self._dialect(request)
        if not delta_text:
            return None
        if self._resolved or getattr(request, "tool_choice", None) == "none":
            out = self._content(delta_text)
            return DeltaMessage(content=out) if out else None
        content = ""
        close = self.group_close
        if self._group_at >= 0:
            # Inside the open group: only the new text, with the tail that may
            # begin the close marker, is searched; pieces joined once it closes.
            window = self._gtail + delta_text
            self._gparts.append(delta_text)
            if close not in window:
                self._gtail = window[len(window) - len(close) + 1:] if len(close) > 1 else ""
                return None
            self._buf += "".join(self._gparts)
            self._gparts = []
        else:
            # Before a group: text handed out is not kept.
            self._buf = self._buf[self._sent:] + delta_text
            self._sent = 0
            at = self._buf.find(self.group_open)
            if at < 0:
                keep = _held_prefix(self._buf, self.group_open, 0)
                content = self._content(self._buf[:len(self._buf) - keep])
                self._sent = len(self._buf) - keep
                return DeltaMessage(content=content) if content else None
            content = self._content(self._buf[:at])
            self._group_at = self._sent = at
        end = self._buf.find(close, self._group_at + len(self.group_open))
        if end < 0:
            self._gtail = self._buf[len(self._buf) - len(close) + 1:] if len(close) > 1 else ""
            return DeltaMessage(content=content) if content else None
        end += len(self.group_close)
        self._resolved = True
        got = self._read_group(self._buf[self._group_at:end], request)
        if got is None:
            content += self._content(self._buf[self._sent:])
            self._sent = len(self._buf)
            return DeltaMessage(content=content) if content else None
        deltas = []
        for call in got[0]:
            index = len(self._arg_pieces)
            self._call_seen = True
            self._prev.append({"name": call.function.name})
            self._arg_pieces.append([call.function.arguments])
            deltas.append(DeltaToolCall(index=index, id=call.id, type="function",
                                        function=DeltaFunctionCall(name=call.function.name,
                                                                   arguments=call.function.arguments)))
        self._ws_held.clear()
        content += self._content(self._buf[end:])
        self._sent = len(self._buf)
        return DeltaMessage(content=content or None, tool_calls=deltas)

    def finish_streaming(self) -> Optional[DeltaMessage]:
        if self._gparts:
            self._buf += "".join(self._gparts)
            self._gparts = []
        rest = "" if self._resolved else self._buf[self._sent:]
        self._sent, self._resolved = len(self._buf), True
        out = self._content(rest, final=True)
        return DeltaMessage(content=out) if out else None


def _json_object(text: str) -> Optional[dict]:
    """The object ``text`` holds as JSON, else None."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _held_prefix(text: str, marker: str, start: int) -> int:
    """Length of the longest tail of ``text[start:]`` that begins ``marker``."""
    for k in range(min(len(marker) - 1, len(text) - start), 0, -1):
        if marker.startswith(text[len(text) - k:]):
            return k
    return 0


def _tool_names(tools) -> frozenset:
    out = set()
    for t in tools or ():
        fn = getattr(t, "function", None)
        name = getattr(fn, "name", None) if fn is not None else getattr(t, "name", None)
        if isinstance(name, str):
            out.add(name)
    return frozenset(out)


class _K2HorizonVllm(_GroupedVllmToolParser):
    """vLLM's ``k2_horizon``: dialects ``json`` (``{"name", "arguments"}``,
    string values coerced to the parameter's schema), ``xml`` (no
    ``<ifm|arg_type>``) and ``xml_typed`` (one on every argument); ``xml`` by
    default."""

    group_open, group_close = "<ifm|tool_calls>", "</ifm|tool_calls>"
    block_open, block_close = "<ifm|tool_call>", "</ifm|tool_call>"
    dialects = ("json", "xml", "xml_typed")
    default_dialect = "xml"

    def get_structural_tag(self, request: Any, *, reasoning: bool = False, strict_level: Any = None) -> Any:
        """None: the request picks one of three dialects, and a tag written for
        one would force it on a request that asked for another (vLLM's parser
        has no tag either)."""
        return None

    def _block_dialect_ok(self, body: str, dialect: str) -> bool:
        if dialect == "json":
            return body.lstrip().startswith("{")
        if body.lstrip().startswith("{"):
            return False
        keys, typed = body.count("<ifm|arg_key>"), body.count("<ifm|arg_type>")
        return typed == 0 if dialect == "xml" else typed == keys

    def _fix_arguments(self, name: str, args: str, dialect: str, schemas: dict) -> str:
        if dialect != "json":
            return args
        props = (schemas.get(name) or {}).get("properties")
        if not isinstance(props, dict):
            return args
        values = _json_object(args)
        if values is None:
            return args
        changed = False
        for key, value in values.items():
            types = schema_types(props.get(key))
            if not types:
                continue
            if isinstance(value, str) and "string" not in types:
                try:
                    new = json.loads(typed_value(value.strip(), types))
                except RecursionError:  # (nested deeper than Python's JSON reader goes: kept as written)
                    continue
            elif not isinstance(value, str) and types == frozenset(["string"]):
                new = json.dumps(value, ensure_ascii=False)
            else:
                continue
            if new != value:
                values[key], changed = new, True
        return json.dumps(values, ensure_ascii=False) if changed else args


class _MiniCPM5Vllm(VllmToolParser):
    """vLLM's ``minicpm5``: byte-level tokenizer marks (``Ġ`` space, ``Ċ``
    newline) read as the characters they stand for, and, with the request's
    tools, each whole ``<function …>…</function>`` block checked before it
    counts as a call: the tool is one of the request's, every ``<param>`` has a
    name and none repeats, parameters the schema does not list are dropped (a
    ``properties``/``arguments`` parameter holding an object gives its listed
    fields), and the required ones are there. A block that fails, or one
    without its ``</function>``, stays in the content as written (vLLM's
    parser drops all content once a call is found; ours keeps it)."""

    _MARKS = str.maketrans({"\u0120": " ", "\u010a": "\n"})
    _BLOCK = re.compile(r"<function.*?</function>", re.DOTALL)
    _PARAM_HEAD = re.compile(r"<param\b([^>]*)>")
    _PARAM_NAME = re.compile(r"""\s*name\s*=\s*(?:"([^"]*)"|'([^']*)')""")
    _WRAPPERS = ("properties", "arguments")

    def __init__(self, tokenizer: Any, tools: Any = None, **kwargs: Any) -> None:
        super().__init__(tokenizer, tools, **kwargs)
        # call index -> [name written, id, argument pieces, closer] of a call held under an alias
        self._aliased: dict[int, list] = {}

    def extract_tool_calls_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                     previous_token_ids: Sequence[int], current_token_ids: Sequence[int],
                                     delta_token_ids: Sequence[int], request: Any) -> Optional[DeltaMessage]:
        return super().extract_tool_calls_streaming(previous_text, current_text, delta_text.translate(self._MARKS),
                                                    previous_token_ids, current_token_ids, delta_token_ids, request)

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        text = model_output.translate(self._MARKS)
        tools = getattr(request, "tools", None) or self.tools
        if not tools or getattr(request, "tool_choice", None) == "none":
            return super().extract_tool_calls(text, request)
        schemas = {name: _tool_schemas(tools).get(name) or {} for name in _tool_names(tools)}
        calls, content, last = [], [], 0
        for m in self._BLOCK.finditer(text):
            call = self._checked_call(m.group(), schemas)
            if call is None:
                continue
            content.append(text[last:m.start()])
            last = m.end()
            calls.append(call)
        content.append(text[last:])
        if not calls:
            return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=text)
        rest = "".join(content)
        return ExtractedToolCallInformation(tools_called=True, tool_calls=calls, content=rest if rest.strip() else None)

    @staticmethod
    def _alias(name: str, arguments: str, schemas: dict) -> Optional[tuple[str, dict]]:
        """vLLM's MiniCPM5 alias rule: a call to a tool the request does not
        list, under a name MiniCPM5 is known to write for one it does, is that
        tool's call with its arguments mapped (``_MINICPM5_ALIASES``); the
        target's required parameters must be there.  None: no alias applies."""
        rule = _MINICPM5_ALIASES.get(name)
        if rule is None or rule[0] not in schemas:
            return None
        args = _json_object(arguments)
        if args is None:
            return None
        target, fields, constants = rule
        mapped: dict = {}
        for key, sources in fields:
            if sources is None:  # copied when written, whatever its value
                if key in args:
                    mapped[key] = args[key]
                continue
            value = None
            for src in sources:  # the first truthy one, else the last read
                value = args.get(src)
                if value:
                    break
            if value is not None:
                mapped[key] = value
        if not mapped:
            return None
        mapped.update(constants)
        required = (schemas[target] or {}).get("required")
        if isinstance(required, list) and not {r for r in required if isinstance(r, str)} <= set(mapped):
            return None
        return target, mapped

    def _message(self, out, final: bool = False) -> Optional[DeltaMessage]:
        # Streamed, a call under an alias name is held until its arguments
        # close, then sent once under the tool it maps to (vLLM's class sends
        # a MiniCPM5 call when its block is complete).
        if out and (self._aliased or any(d.name in _MINICPM5_ALIASES for d in out if d.content is None)):
            out = self._alias_deltas(out, final)
        return super()._message(out, final)

    def _alias_deltas(self, out: list, final: bool) -> list:
        schemas = _tool_schemas(getattr(self._request, "tools", None) or self.tools)
        schemas = {n: schemas.get(n) or {} for n in _tool_names(getattr(self._request, "tools", None) or self.tools)}
        kept = []
        for d in out:
            if d.content is None and d.name is not None and d.name not in schemas and d.name in _MINICPM5_ALIASES:
                rule = _MINICPM5_ALIASES[d.name]
                if rule[0] in schemas:
                    self._aliased[d.index] = [d.name, d.id, [], _json_closer()]
                    if d.arguments:
                        self._alias_feed(d.index, d.arguments, schemas, kept)
                    continue
            held = self._aliased.get(d.index) if d.content is None else None
            if held is not None:
                if d.arguments:
                    self._alias_feed(d.index, d.arguments, schemas, kept)
                continue
            kept.append(d)
        if final:
            for index in list(self._aliased):
                self._alias_release(index, schemas, kept)
        return kept

    def _alias_feed(self, index: int, piece: str, schemas: dict, kept: list) -> None:
        held = self._aliased[index]
        held[2].append(piece)
        if held[3].feed(piece):
            self._alias_release(index, schemas, kept)

    def _alias_release(self, index: int, schemas: dict, kept: list) -> None:
        name, cid, pieces, _closer = self._aliased.pop(index)
        renamed = self._alias(name, "".join(pieces), schemas)
        if renamed is not None:
            name, args = renamed
            kept.append(_PTD(index=index, id=cid, name=name, arguments=json.dumps(args, ensure_ascii=False)))
        else:  # no alias applies after all: the call as written
            kept.append(_PTD(index=index, id=cid, name=name, arguments="".join(pieces)))

    def _checked_call(self, block: str, schemas: dict) -> Optional[ToolCall]:
        seen = set()
        for head in self._PARAM_HEAD.finditer(block):
            pm = self._PARAM_NAME.match(head.group(1))
            key = (pm.group(1) if pm.group(1) is not None else pm.group(2)) if pm else ""
            if not key.strip() or key in seen:
                return None
            seen.add(key)
        tp = _tools.create(self.rc_format)
        tp.set_streaming_tool_schemas({k: v for k, v in schemas.items() if v} or None)
        try:
            resp = tp.parse_complete(block)
        except ValueError:
            return None
        if len(resp.tool_calls) != 1:
            return None
        c = resp.tool_calls[0]
        if c.name not in schemas:
            renamed = self._alias(c.name, c.arguments, schemas)
            if renamed is None:
                return None
            name, args = renamed
            arguments = json.dumps(args, ensure_ascii=False)
            return ToolCall(id=c.id, type="function", function=FunctionCall(id=c.id, name=name, arguments=arguments))
        schema = schemas[c.name]
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        try:
            args = json.loads(c.arguments)
        except (ValueError, RecursionError):
            return None
        if props:
            kept = {}
            for key, value in args.items():
                if key in props:
                    kept[key] = value
                elif key in self._WRAPPERS:
                    inner = _literal_object(value)
                    if inner is None:
                        return None
                    found = [k for k in inner if k in props]
                    if not found or any(k in kept for k in found):
                        return None
                    for k in found:
                        v = inner[k]
                        if schema_types(props[k]) == frozenset(["string"]) and not isinstance(v, str):
                            v = json.dumps(v, ensure_ascii=False)
                        kept[k] = v
            args = kept
        required = schema.get("required")
        if isinstance(required, list) and not set(r for r in required if isinstance(r, str)) <= set(args):
            return None
        arguments = json.dumps(args, ensure_ascii=False)
        return ToolCall(id=c.id, type="function", function=FunctionCall(id=c.id, name=c.name, arguments=arguments))


# vLLM's MiniCPM5 tool parser maps names MiniCPM5 writes for some tools (the
# tau-bench telecom set) onto the tool the request lists: alias -> (target,
# ((target key, alias keys read in order, or None: copied when present), ...),
# constants added).  A fact about vLLM's parser of that name, applied only
# under it (our minicpm5 class for vLLM) and only when the alias is not itself
# one of the request's tools.
_MINICPM5_ALIASES: dict[str, tuple[str, tuple, dict]] = {}
for _alias_names, _target, _fields, _consts in (
        (("get_details_by_phone",), "get_customer_by_phone", (("phone_number", ("phone_number", "phone")),), {}),
        (("get_details_by_name",), "get_customer_by_name",
         (("full_name", ("full_name", "name")), ("date_of_birth", ("date_of_birth", "dob")),
          ("dob", ("date_of_birth", "dob"))), {}),
        (("get_line_details", "get_line_status", "get_roaming_status"), "get_details_by_id",
         (("id", ("line_id", "id")),), {}),
        (("get_plan_details",), "get_details_by_id", (("id", ("plan_id", "id")),), {}),
        (("enable_roaming",), "toggle_roaming", (("line_id", ("line_id", "id")),), {"enabled": True}),
        (("disable_roaming",), "toggle_roaming", (("line_id", ("line_id", "id")),), {"enabled": False}),
        (("add_refueled_data", "add_data_to_line"), "refuel_data",
         (("customer_id", None), ("line_id", ("line_id", "id")),
          ("amount_gb", ("amount_gb", "gb", "gb_amount", "amount"))), {})):
    for _a in _alias_names:
        _MINICPM5_ALIASES[_a] = (_target, _fields, _consts)


def _literal_object(value: Any) -> Optional[dict]:
    """A dict from a parameter value: an object, or text holding one as JSON or
    a Python literal; else None."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, str):
        return None
    try:
        out = json.loads(value)
    except (ValueError, RecursionError):
        import ast

        try:
            out = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return None
    return out if isinstance(out, dict) else None


class _SchemaFixedVllm(VllmToolParser):
    """vLLM's engine-based parsers (``deepseek_v32``, ``deepseek_v4``, ``deepseek_v41``): one-shot arguments are
    then corrected against the request's schema with vLLM's own coercion
    helpers (a value of the wrong JSON kind is converted when it can be, e.g.
    ``"42"`` for an integer, ``null`` for a string), and a lone
    ``arguments``/``input`` parameter the schema does not list, holding an
    object of listed fields, is unwrapped.  Each parameter's value is read as
    vLLM's engine types it (``_VllmDsmlValues``), streaming included."""

    def _format(self) -> Any:
        return _vllm_format(self.rc_format)()

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        out = super().extract_tool_calls(model_output, request)
        schemas = _tool_schemas(getattr(request, "tools", None) or self.tools)
        for call in out.tool_calls if schemas else ():
            props = (schemas.get(call.function.name) or {}).get("properties")
            if isinstance(props, dict) and props:
                call.function.arguments = _schema_fixed(call.function.arguments, props)
        return out


def _schema_fixed(args_json: str, props: dict) -> str:
    try:
        args = json.loads(args_json)
    except (ValueError, RecursionError):
        return args_json
    if not isinstance(args, dict):
        return args_json
    if len(args) == 1:
        (key, inner), = args.items()
        if key in ("arguments", "input") and key not in props:
            if isinstance(inner, str):
                try:
                    inner = json.loads(inner)
                except (ValueError, RecursionError):
                    inner = None
            if isinstance(inner, dict) and set(inner) <= set(props):
                args = inner

    fixed = {k: _vllm_coerced(v, props.get(k)) for k, v in args.items()}
    return json.dumps(fixed, ensure_ascii=False)


def _vllm_coerced(value: Any, schema: Any) -> Any:
    """``value`` corrected against a parameter's ``schema`` with vLLM's own
    helpers, as vLLM's engine-based parsers do (objects and lists by their
    ``properties`` / ``items``)."""
    from vllm.tool_parsers.utils import coerce_to_schema_type, extract_types_from_schema

    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        sub = schema.get("properties")
        return {k: _vllm_coerced(v, sub.get(k)) for k, v in value.items()} if isinstance(sub, dict) else value
    if isinstance(value, list):
        items = schema.get("items")
        return [_vllm_coerced(v, items) for v in value] if isinstance(items, dict) else value
    types = extract_types_from_schema(schema)
    try:
        return coerce_to_schema_type(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False), types)
    except RecursionError:  # (nested deeper than Python's JSON reader goes: kept as read)
        return value


_DOTS_OPEN, _DOTS_CLOSE = "<dots_function_call>", "</dots_function_call>"


class _KnownToolsVllm(VllmToolParser):
    """vLLM's ``dots``.  One-shot: an output whose calls all name tools the
    request does not list reports no calls and stays content as written
    (vLLM's parser also drops an unknown call beside known ones; ours reports
    it, losing nothing).  A parameter whose schema is a ``$ref`` to the
    schema's ``$defs`` is typed as the definition says; an XML value written
    ``null`` (any case) is ``null`` whatever the parameter's type.

    Streaming reads a ``<dots_function_call>`` block whole, as vLLM's class
    does: its calls go out complete (name and arguments in one delta) when
    its end marker comes, a JSON body as soon as its object is complete; a
    block with no call of a listed tool, or one that does not parse, gives its
    text without the markers, trimmed; a bare end marker outside a block is
    dropped from the text (wherever the chunks split it).  A block the stream
    ends inside goes out at ``finish_streaming`` as calls when it parses, as
    its text otherwise (vLLM's class drops it)."""

    def __init__(self, tokenizer: Any, tools: Any = None, **kwargs: Any) -> None:
        super().__init__(tokenizer, tools, **kwargs)
        # the blocks read whole, the text around them (a bare end marker dropped)
        self._reader = _BlockReader(_DOTS_OPEN, _DOTS_CLOSE, json_body=True)
        self._early: Optional[tuple[int, str]] = None  # (index, arguments) of the open block's call sent early
        self._next_call = 0

    def _schemas_of(self, tools: Any) -> dict[str, dict]:
        return {name: _refs_inlined(params) for name, params in _tool_schemas(tools).items()}

    @property
    def _buffer(self) -> str:
        """The text held back now (vLLM's class of this name calls it ``_buffer``)."""
        return self._reader.held_text()

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        out = super().extract_tool_calls(model_output, request)
        names = _tool_names(getattr(request, "tools", None) or self.tools)
        if out.tools_called and names and not any(c.function.name in names for c in out.tool_calls):
            return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=model_output)
        return out

    def _format(self) -> Any:
        # an XML value written null is null, as vLLM's class reads it (a class
        # switch: parse_complete reads with a fresh parser of the same class)
        return _null_text_class(_tools.get_parser_cls(self.rc_format))()

    def _read_block(self, block: str) -> Optional[list]:
        """The calls of one whole block, or None when it does not parse."""
        tp = self._format()
        schemas = self._schemas_of(getattr(self._request, "tools", None) or self.tools)
        if schemas:
            tp.set_streaming_tool_schemas(schemas)
        try:
            res = tp.parse_complete(block)
        except ValueError:
            return None
        return res.tool_calls or None

    # what the block reader hands over, in stream order: a whole block, an open one, text
    def _block_done(self, block: str, out: list, final: bool = False) -> None:
        early, self._early = self._early, None
        calls = self._read_block(block if not final else block + _DOTS_CLOSE)
        names = _tool_names(getattr(self._request, "tools", None) or self.tools)
        if calls and names and not any(c.name in names for c in calls):
            calls = None
        if not calls:
            if early is None:
                text = self._reader.inner_text(block, final)
                if text:
                    out.append(_PTD(index=0, content=text))
            return
        if early is not None:
            idx, sent = early
            first = calls.pop(0)
            if first.arguments.startswith(sent) and len(first.arguments) > len(sent):
                out.append(_PTD(index=idx, arguments=first.arguments[len(sent):]))
        for c in calls:
            out.append(_PTD(index=self._next_call, id=c.id, name=c.name, arguments=c.arguments))
            self._next_call += 1

    def _block_open(self, out: list) -> None:
        # A JSON body whose object is complete goes out before the end marker.
        if self._early is not None:
            return
        block = self._reader.json_block()
        if block is None:
            return
        calls = self._read_block(block + _DOTS_CLOSE)
        names = _tool_names(getattr(self._request, "tools", None) or self.tools)
        if not calls or len(calls) != 1 or (names and calls[0].name not in names):
            return
        c, idx = calls[0], self._next_call
        self._next_call += 1
        out.append(_PTD(index=idx, id=c.id, name=c.name, arguments=""))
        out.append(_PTD(index=idx, arguments=c.arguments))
        self._early = (idx, c.arguments)

    def extract_tool_calls_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                     previous_token_ids: Sequence[int], current_token_ids: Sequence[int],
                                     delta_token_ids: Sequence[int], request: Any) -> Optional[DeltaMessage]:
        if request is not self._request:
            self._use_request(request)
        if not delta_text:
            return None
        if self._choice_none:
            return _content_message(delta_text)
        out: list = []
        self._reader.feed(str(delta_text), self, out)
        return self._message(out)

    def _block_text(self, piece: str, out: list) -> None:
        out.append(_PTD(index=0, content=piece))

    def finish_streaming(self) -> Optional[DeltaMessage]:
        out: list = []
        self._reader.finish(self, out)
        try:
            return self._message(out, final=True)
        finally:
            self._hot = None

    def flush_pending_normal_text(self) -> str:
        """The text held back at the end of a stream when it is not inside a
        block (a partial opening marker, a partial end marker): released
        once.  A block the stream ends inside is released by
        ``finish_streaming``."""
        return self._reader.flush_text()


def _wants_logprobs(request: Any) -> bool:
    if getattr(request, "logprobs", None):
        return True
    include = getattr(request, "is_include_output_logprobs", None)  # a Responses request
    try:
        return bool(include()) if callable(include) else False
    except Exception:  # noqa: BLE001 - a request of another shape
        return False


class _PoolsideVllm(VllmToolParser):
    """vLLM's ``poolside_v1``: a streamed step whose text is all held back (a
    partial marker) answers an empty content delta, not ``None``, when the
    request asks for logprobs and has tools to call (the step's logprobs then
    still go out)."""

    def extract_tool_calls_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                     previous_token_ids: Sequence[int], current_token_ids: Sequence[int],
                                     delta_token_ids: Sequence[int], request: Any) -> Optional[DeltaMessage]:
        out = super().extract_tool_calls_streaming(previous_text, current_text, delta_text, previous_token_ids,
                                                   current_token_ids, delta_token_ids, request)
        if out is None and getattr(request, "tools", None) and getattr(request, "tool_choice", None) != "none" \
                and _wants_logprobs(request):
            return _content_message("")
        return out


class _ApertusVllm(VllmToolParser):
    """vLLM's ``apertus``, one-shot: the text around a call block is trimmed
    and the text after it joins the text before on a new line; an output cut
    off inside its last call block still reports the calls whose arguments
    are complete (a call cut inside its arguments stays text: vLLM completes
    the partial JSON)."""

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        out = super().extract_tool_calls(model_output, request)
        opener, close = self._tp.openers[0], self._tp.close
        i = model_output.find(opener)
        if i < 0 or getattr(request, "tool_choice", None) == "none":
            return out
        if model_output.rfind(close) < model_output.rfind(opener):
            # cut off inside its last block: read as a stream read it
            got = self._cut_off_calls(model_output, request)
            if got is not None and len(got[1]) > len(out.tool_calls):
                out = ExtractedToolCallInformation(tools_called=True, tool_calls=got[1], content=got[0])
        if out.tools_called:
            before, content = model_output[:i], out.content or ""
            if content.startswith(before):
                after = content[len(before):].replace(close, "")
                out.content = "\n".join(t for t in (before.strip(), after.strip()) if t) or None
        return out

    def _cut_off_calls(self, text: str, request: Any) -> Optional[tuple[str, list]]:
        tp = _tools.create(self.rc_format)
        schemas = _tool_schemas(getattr(request, "tools", None) or self.tools)
        if schemas:
            tp.set_streaming_tool_schemas(schemas)
        calls: dict[int, list] = {}
        content: list[str] = []
        for d in (tp.parse_delta(text) or []) + (tp.finish() or []):
            if d.content is not None:
                content.append(d.content)
            else:
                entry = calls.setdefault(d.index, [d.id, d.name, []])
                entry[1] = entry[1] or d.name
                entry[2].append(d.arguments or "")
        out = []
        for cid, name, pieces in calls.values():
            args = "".join(pieces)
            try:
                json.loads(args)
            except (ValueError, RecursionError):
                return None
            out.append(ToolCall(id=cid, type="function", function=FunctionCall(id=cid, name=name, arguments=args)))
        return "".join(content), out


def _guided_choice(request: Any) -> bool:
    """A ``"required"`` or named tool choice (vLLM's mistral guides these)."""
    return getattr(request, "tool_choice", None) == "required" or _named_choice(request) is not None


class _MistralVllm(VllmToolParser):
    """vLLM's mistral rules for a ``"required"`` or named tool choice: its
    ``adjust_request`` constrains the output to a bare JSON array of calls
    (no ``[TOOL_CALLS]``) where the tokenizer brings no grammar of its own
    (taken over here: ``structured_outputs`` / ``response_format``), and
    output without the marker is then read as that array."""

    _adopted = ("structured_outputs", "response_format")
    _BOT = "[TOOL_CALLS]"
    _bare_checked = False  # the first text of this stream was looked at

    def extract_tool_calls(self, model_output: str, request: Any) -> ExtractedToolCallInformation:
        if self._BOT in model_output or not _guided_choice(request) or not model_output.strip():
            return super().extract_tool_calls(model_output, request)
        out = super().extract_tool_calls(self._BOT + model_output.strip(), request)
        if not out.tools_called:  # not an array of calls: the text as written
            return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=model_output)
        return out

    def _plain_streaming(self) -> bool:
        # once the first text is read, this class's _streaming is the base one
        return self._bare_checked and type(self)._streaming is _MistralVllm._streaming

    _first = ""  # the first text of a guided request while it may still become the marker

    def _streaming(self, previous_text: str, delta_text: str, request: Any) -> Optional[DeltaMessage]:
        if not self._bare_checked and delta_text and (self._first or delta_text.strip()):
            # The first text of a guided request that is not the marker: the
            # bare array (read as if the marker opened it). While that text is
            # a part of the marker it is held (it may still become it), so the
            # answer does not depend on where the deltas split it.
            if self._first or (_guided_choice(request) and not previous_text.strip()):
                text = self._first + delta_text
                head = text.lstrip()
                if len(head) < len(self._BOT) and self._BOT.startswith(head):
                    self._first, self._first_request = text, request
                    return None
                self._first = ""
                delta_text = self._marked(text)
            self._bare_checked = True
            self._set_content_lane()
        return super()._streaming(previous_text, delta_text, request)

    def _marked(self, text: str) -> str:
        """``text`` read as the bare array: the marker in front of its first
        non-whitespace character, unless it is there (whitespace before it
        stays content, as in its own delta)."""
        head = text.lstrip()
        return text if head.startswith(self._BOT) else text[:len(text) - len(head)] + self._BOT + head

    def finish_streaming(self) -> Optional[DeltaMessage]:
        first, self._first = self._first, ""
        if not first:
            return super().finish_streaming()
        # the output ended inside what could have been the marker: the bare array's start
        self._bare_checked = True
        head = super()._streaming("", self._marked(first), self._first_request)
        tail = super().finish_streaming()
        if head is None or tail is None:
            return tail if head is None else head
        return _tool_message(((head.content or "") + (tail.content or "")) or None,
                             list(head.tool_calls or ()) + list(tail.tool_calls or ()) or None)


_TOOL_BASES: dict[str, type[VllmToolParser]] = {"k2_horizon": _K2HorizonVllm, "minicpm5": _MiniCPM5Vllm,
                                                "deepseek_v32": _SchemaFixedVllm, "deepseek_v4": _SchemaFixedVllm,
                                                "deepseek_v41": _SchemaFixedVllm, "dots": _KnownToolsVllm,
                                                "poolside_v1": _PoolsideVllm, "apertus": _ApertusVllm,
                                                "mistral": _MistralVllm}


# ---- Gemma 4 under vLLM's name ----------------------------------------------

from .._tag_calls import G_CALL_END as _G4_END  # noqa: E402
from ..tools._base import _drop as _drop_text, markers as _g4_markers  # noqa: E402
from ..tools._max_formats import DsmlToolParser as _DsmlFormat  # noqa: E402
from ..tools._max_formats import G_CALL as _G4_CALL, Gemma4ToolParser as _Gemma4Format  # noqa: E402

_G4_NAME_END = _g4_markers("{", "(", _G4_END, _G4_CALL)
_G4_AFTER = _g4_markers(_G4_END, _G4_CALL)


class _VllmGemma4Format(_Gemma4Format):
    """Our gemma4 format read with vLLM's call rules: a name is any text up to
    its ``{`` (``call:f x{…}`` is a call named ``f x``); ``call:NAME`` closed
    by ``<tool_call|>`` or the end of the output is a call without arguments;
    arguments cut short by ``<tool_call|>`` or the end are completed (the value
    begun is kept, the open objects and lists closed).  A name cut by another
    ``<|tool_call>`` or by ``(`` stays a failed call (vLLM folds the next call
    into the name)."""

    format_name = "vllm_gemma4"

    def _section(self, opener):
        if not ((yield from self._expect("call:")) or (yield from self._expect(":"))):
            self._fail()
        else:
            name, m = yield from self._text_until(_G4_NAME_END)
            name = name.strip()
            if name and (m == "{" or m == _G4_END or m is None):
                self._open_call(name)
                if m == "{":
                    self._close_call((yield from self._args(name)))
                    self._held = None  # a parameter left open by a broken call
                else:
                    self._emit_args("{}")
                    self._close_call(True)
                    return None
            else:
                self._fail()
                if m == _G4_END or m is None:
                    return None
                if m == _G4_CALL:
                    return m
        m = yield from self._until(_G4_AFTER, _drop_text)
        return m if m == _G4_CALL else None

    def reset(self) -> None:
        super().reset()
        self._held: Optional[tuple] = None  # (schema, pieces) of an object/list parameter being read

    def _args_cut(self, stack: list, value: str) -> bool:
        self._emit_args(value + "".join(reversed(stack[1:])))
        self._param_closed()
        self._emit_args(stack[0])
        return True

    # A parameter's value as vLLM's engine reads it: a bare value is text
    # (``count:5`` is ``"5"``, inside objects and lists too), and a parameter
    # the tool's schema lists is corrected by it (``_vllm_coerced``; an object
    # or list is held until it closes, then corrected whole).
    def _emit_args(self, text: str) -> None:
        held = self._held
        if held is None:
            _Gemma4Format._emit_args(self, text)
        else:
            held[1].append(text)

    def _param_opened(self, fname: str, top) -> None:
        prop = _vllm_prop(self._schemas, fname, top)
        self._held = None if prop is None else (prop, [])

    def _param_closed(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            text = "".join(held[1])
            try:
                value = json.loads(text)
            except (ValueError, RecursionError):
                self._emit_args(text)
                return
            self._emit_args(_value_json(_vllm_coerced(value, held[0]), text))

    def _string_json(self, fname: str, top, body: str) -> str:
        prop = None if top is None else _vllm_prop(self._schemas, fname, top)
        if prop is None or _string_only(prop):
            return super()._string_json(fname, top, body)
        text = self._string_text(body)
        return _value_json(_vllm_coerced(text, prop), text)

    def _bare_json(self, fname: str, top, raw: str, types: frozenset) -> str:
        text = raw.strip()
        if top is None:
            return json.dumps(text, ensure_ascii=False)
        prop = _vllm_prop(self._schemas, fname, top)
        return _value_json(text if prop is None else _vllm_coerced(text, prop), text)


class _Gemma4Vllm(VllmToolParser):
    """vLLM's ``gemma4``: our format with vLLM's call rules (``_VllmGemma4Format``)."""

    def _format(self) -> Any:
        return _VllmGemma4Format()


_TOOL_BASES.update({"gemma4": _Gemma4Vllm})


# ---- values as vLLM's engine-based parsers type them (minimax_m2, DSML) ------

from ..tools import _json as _tjson  # noqa: E402


def _vllm_prop(schemas: dict, fname: str, key: str) -> Optional[dict]:
    """The schema of parameter ``key`` of tool ``fname`` when vLLM's engine
    would correct its value (the tool lists properties and this one among
    them); None: the value stays as read."""
    schema = schemas.get(fname)
    if isinstance(schema, dict) and isinstance(schema.get("function"), dict):
        schema = schema["function"]
    if isinstance(schema, dict) and isinstance(schema.get("parameters"), dict):
        schema = schema["parameters"]
    props = schema.get("properties") if isinstance(schema, dict) else None
    prop = props.get(key) if isinstance(props, dict) else None
    return prop if isinstance(prop, dict) else None


def _string_only(prop: dict) -> bool:
    from vllm.tool_parsers.utils import extract_types_from_schema

    return set(extract_types_from_schema(prop)) == {"string"}


def _json_or_text(raw: str) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return raw


def _value_json(value: Any, raw: str) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        return json.dumps(raw, ensure_ascii=False)


class _VllmEngineValues:
    """Value reading shared by the variants below: a value vLLM keeps as text
    streams as it arrives; one its schema corrects is held until its end
    marker, then corrected once (O(value), so a delta still costs O(delta))."""

    def _vllm_verbatim(self, ends):
        self._emit_args('"')
        m = yield from self._until(ends, _tjson.SCAN.XmlStringSink(self._emit_args, False))
        self._emit_args('"')
        return m

    def _vllm_held(self, prop: dict, read, ends):
        raw, m = yield from self._text_until(ends)
        self._emit_args(_value_json(_vllm_coerced(read(raw), prop), raw))
        return m


class _VllmMinimaxM2Values(_VllmEngineValues):
    """vLLM's ``minimax_m2``: a value is the text between its tags, byte for
    byte (no newline framing), corrected by the tool's schema where it lists
    the parameter with a type other than ``string``."""

    def _xml_value(self, fname: str, key: str, ends):
        prop = _vllm_prop(self._schemas, fname, key)
        if prop is None or _string_only(prop):
            return (yield from self._vllm_verbatim(ends))
        return (yield from self._vllm_held(prop, str, ends))


class _VllmDsmlValues(_VllmEngineValues):
    """vLLM's DSML parsers (``deepseek_v32``, ``deepseek_v4``,
    ``deepseek_v41``): a parameter the tool's schema lists is read as vLLM
    reads it (``string="true"``: the text; otherwise JSON, else the text) and
    corrected by that schema as it completes, so a stream adds up to the
    one-shot answer.  An ``invoke`` outside the block is a call, as in vLLM
    (the model left the block's start out): after it, whitespace and DSML tags
    (another dialect's block end, the block end itself) are dropped, the next
    ``invoke`` is the next call, and other text is content again (vLLM drops
    everything after a call)."""

    _START_SPELLINGS: tuple = ()  # other spellings of the block's start vLLM's parser takes

    @classmethod
    def _tags(cls) -> None:
        super()._tags()
        cls.openers = (*cls.openers, *cls._START_SPELLINGS, cls._INVOKE)
        cls._TAGS = (f"</{cls._PREFIX}", f"<{cls._PREFIX}")

    def _section(self, opener):
        if opener != self._INVOKE:
            return (yield from super()._section(opener))
        m = opener
        while m == self._INVOKE:
            m = yield from self._invoke()
            while m == self._INVOKE_END or m == ">":
                yield from self._skip_ws()
                if (yield from self._expect(self._INVOKE)):
                    m = self._INVOKE
                elif (yield from self._expect(self._TAGS[0])) or (yield from self._expect(self._TAGS[1])):
                    m = yield from self._until(_DSML_TAG_END, _drop_text)
                else:
                    m = None
        return None

    def _param_value(self, name: str, key: str, flag):
        prop = _vllm_prop(self._schemas, name, key)
        if prop is None or (flag == "true" and _string_only(prop)):
            return (yield from super()._param_value(name, key, flag))
        return (yield from self._vllm_held(prop, str if flag == "true" else _json_or_text, self._VALUE_END))


_DSML_TAG_END = _g4_markers(">")
_VLLM_VALUE_MIXINS = {"minimax_m2": _VllmMinimaxM2Values, "deepseek_v32": _VllmDsmlValues,
                      "deepseekv4": _VllmDsmlValues, "deepseek_v41": _VllmDsmlValues}
_VLLM_FORMATS: dict[str, type] = {}


def _vllm_format(fmt: str) -> type:
    """Our format ``fmt`` with vLLM's value rules (``_VLLM_VALUE_MIXINS``), built once."""
    cls = _VLLM_FORMATS.get(fmt)
    if cls is None:
        base = _tools.get_parser_cls(fmt)
        attrs = {"format_name": "vllm_" + fmt, "__module__": __name__}
        if issubclass(base, _DsmlFormat):  # vLLM keeps the newlines before the block as content
            attrs["_LEADS"] = ("",)
        if fmt == "deepseekv4":  # vLLM's V4 parser also opens the block at these two spellings
            attrs["_START_SPELLINGS"] = ("<｜DSML｜toolcalls>", "<｜DSML｜tool>")
        cls = _VLLM_FORMATS[fmt] = type("Vllm" + base.__name__, (_VLLM_VALUE_MIXINS[fmt], base), attrs)
    return cls


class _MinimaxM2Vllm(VllmToolParser):
    """vLLM's ``minimax_m2``: values as vLLM's engine reads them (``_VllmMinimaxM2Values``)."""

    def _format(self) -> Any:
        return _vllm_format(self.rc_format)()


_TOOL_BASES.update({"minimax_m2": _MinimaxM2Vllm})


# Bases whose names have no structural tag under vLLM (the request picks the
# dialect: a tag would force one), as vLLM's classes of those names have none.
_NO_TAG_BASES = frozenset({_K2HorizonVllm})


def _make_tool_class(name: str, fmt: str) -> type[VllmToolParser]:
    cls_name = "".join(p.capitalize() for p in name.split("_")) + "RcToolParser"
    base = _TOOL_BASES.get(name, VllmToolParser)
    attrs = {"rc_format": fmt, "vllm_name": name, "__module__": __name__,
             "structural_tag_model": None if base in _NO_TAG_BASES else _tag_model(name, fmt)}
    return type(cls_name, (base,), attrs)


TOOL_PARSERS: dict[str, type[VllmToolParser]] = {
    name: _make_tool_class(name, fmt) for name, fmt in _TOOL_FORMATS.items() if fmt in _tools.available()
}


def _share_tool_classes() -> None:
    """Names vLLM serves with one tool-parser class (``glm45`` and ``glm47``
    are both vLLM's GLM-4.7 class) share one class of ours too, where our
    settings for those names are the same (the class of the name vLLM's
    module is named after is kept, else the first name's)."""
    groups: dict[Any, list[str]] = {}
    for name, entry in _VLLM_OWN["tool"].items():
        if name in TOOL_PARSERS:
            key = entry if isinstance(entry, tuple) else (entry.__module__, entry.__qualname__)
            groups.setdefault(key, []).append(name)

    def settings(n: str) -> tuple:
        c = TOOL_PARSERS[n]
        return c.rc_format, c.__bases__, c.structural_tag_model, _TOOL_WS.get(n)

    for (module, _), names in groups.items():
        names = sorted(names)
        if len(names) > 1 and len({settings(n) for n in names}) == 1:
            flat = module.replace("_", "")
            keep = next((n for n in names if n.replace("_", "") in flat), names[0])
            for n in names:
                TOOL_PARSERS[n] = TOOL_PARSERS[keep]


_share_tool_classes()


# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------

def register(replace: bool = False) -> None:
    """Add every class to vLLM's registries: ``rc_<name>``, or vLLM's own names
    with ``replace=True`` (replacing vLLM's parsers).  Idempotent."""
    for name, cls in REASONING_PARSERS.items():
        key = name if replace else f"rc_{name}"
        if ReasoningParserManager.reasoning_parsers.get(key) is not cls:
            ReasoningParserManager.register_module(key, force=True, module=cls)
    if TOOL_PARSERS:
        from vllm.tool_parsers import ToolParserManager

        for name, cls in TOOL_PARSERS.items():
            key = name if replace else f"rc_{name}"
            if ToolParserManager.tool_parsers.get(key) is not cls:
                ToolParserManager.register_module(key, force=True, module=cls)


def general_plugin() -> None:
    """The ``vllm.general_plugins`` entry point: registers the ``rc_`` names,
    and vLLM's own names as well under ``REASONING_CORE_REPLACE=1``."""
    register()
    if replace_requested():
        register(replace=True)


general_plugin()
