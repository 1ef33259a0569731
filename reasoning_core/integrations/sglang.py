"""reasoning-core inside SGLang: reasoning and function-call detectors under SGLang's names.

``REASONING_DETECTORS`` maps each name of SGLang's ``ReasoningParser.DetectorMap``
we serve to a subclass of SGLang's ``BaseReasoningFormatDetector``;
``TOOL_DETECTORS`` maps SGLang function-call parser names to subclasses of its
``BaseFormatDetector`` over ``reasoning_core.tools``.  ``register()`` adds
them to SGLang's maps as ``rc_<name>`` (``replace=True``: under SGLang's own
names), so ``ReasoningParser("rc_qwen3", stream_reasoning=..., force_reasoning=...)``
and ``FunctionCallParser(tools, "rc_qwen25")`` work unchanged.

The work is done by reasoning-core's text parser (one engine call per chunk,
O(chunk)); the class keeps the attributes SGLang's serving layer reads
(``think_start_token``, ``think_end_token``, ``reasoning_default``,
``thinks_internally``, ...) with the values SGLang's detector of that name has,
so the request switches (``chat_template_kwargs`` thinking/enable_thinking,
``reasoning_effort``) decide ``force_reasoning`` exactly as for SGLang's own
detector.

SGLang's package ``__init__`` imports its whole runtime; this module imports
only ``sglang.srt.parser.reasoning_parser`` and ``sglang.srt.function_call``
(works both with the package imported normally and with the parser-only
import shown in ``docs/engines/running.md``).
"""
from __future__ import annotations

import inspect
import json
import re
from dataclasses import dataclass
from typing import Any, Optional



def _import_parser_modules():
    """SGLang's reasoning-parser module.

    Imported normally when ``import sglang`` works.  SGLang's package
    ``__init__`` pulls its whole serving runtime (triton, CUDA kernels); where
    that runtime cannot import (a CPU-only install) but the package is there,
    the package is entered without its ``__init__`` (the parser modules need
    none of it), as ``docs/engines/running.md`` describes.
    """
    import importlib
    import sys

    name = "sglang.srt.parser.reasoning_parser"
    try:
        return importlib.import_module(name)
    except ImportError:
        if "sglang" in sys.modules:
            raise
        import importlib.util
        import types

        spec = importlib.util.find_spec("sglang")
        if spec is None or not spec.submodule_search_locations:
            raise
        for key in [k for k in sys.modules if k.startswith("sglang.")]:
            del sys.modules[key]  # half-imported pieces of the failed runtime import
        pkg = types.ModuleType("sglang")
        pkg.__path__ = list(spec.submodule_search_locations)
        pkg.__spec__ = spec
        sys.modules["sglang"] = pkg
        return importlib.import_module(name)


try:
    _rp = _import_parser_modules()
except ImportError as exc:  # pragma: no cover - exercised without SGLang
    raise ImportError(
        "reasoning_core.integrations.sglang needs the 'sglang' package (pip install sglang); "
        "the rest of reasoning_core works without it"
    ) from exc

_SglBase = _rp.BaseReasoningFormatDetector
_SglReasoningParser = _rp.ReasoningParser
StreamingParseResult = _rp.StreamingParseResult

from ..families import ENGINE_PARSER_NAMES, RUNTIME_ENGINE_NAMES, Family, family_for_tokenizer, get_family
from ..text import TextReasoningParser
from .. import tools as _rc_tools
from ..tools import _base as _tool_base, _json as _tool_json
from ..tools._tagged_json_formats import DOTS_CALL as _DOTS_OPEN, DOTS_END as _DOTS_CLOSE
from ..tools._types import ParsedToolCallDelta as _PTD
from ._common import ArgHold as _ArgHold, KeptChunks as _KeptChunks, BlockReader as _BlockReader, json_closer as _json_closer, null_text_class as _null_text_class
from ._common import regroup_held as _regroup_held
from ._common import refs_inlined as _refs_inlined

__all__ = [
    "REASONING_DETECTORS",
    "TOOL_DETECTORS",
    "TOOL_NOT_SERVED",
    "NOT_SERVED",
    "RcReasoningDetector",
    "register",
    "family_of",
]


# ---------------------------------------------------------------------------
# Per-name behaviour
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class _Spec:
    """What SGLang's detector of one name does, in our terms.

    ``start``/``end``/``tool_start`` and the two serving flags are the values
    SGLang's detector exposes (its serving layer reads them); ``force`` is
    the default of ``force_reasoning``; ``force_fixed`` is set when SGLang's
    detector ignores the argument (DeepSeek-R1 always reasons, Kimi never).
    """

    start: str = "<think>"
    end: str = "</think>"
    tool_start: Optional[str] = None
    force: bool = False
    force_fixed: Optional[bool] = None
    reasoning_default: str = "always"
    thinks_internally: bool = False
    label: str = ""
    # no extraction: the start marker is put back in front of the content
    append_think: bool = False
    # force_reasoning=False raises (K2 Horizon's templates always open reasoning)
    requires_force: bool = False
    # a stray end marker at the very start of a non-thinking reply is dropped (MiniMax-M3)
    drop_leading_end: bool = False
    # newlines at the start of the content are dropped once reasoning was seen (Granite 4.2)
    lstrip_content_newlines: bool = False
    # accepts a tokenizer (SGLang passes it when the signature names it)
    wants_tokenizer: bool = False
    # force_nonempty_content defaults on; one-shot reasoning without content
    # (and without a tool call) becomes the content (Ling3)
    nonempty_default: bool = False
    # one-shot, outside reasoning: an end marker with no start before it still
    # ends a block the output was in (Kimi K3 with thinking switched off)
    oneshot_stray_end: bool = False
    # an end marker outside reasoning closes a message and is not text
    # (gpt-oss: SGLang's harmony parser drops a bare <|end|>)
    drop_stray_end: bool = False


_Q3 = dict(tool_start="<tool_call>", thinks_internally=True, reasoning_default="enable_thinking")
_SPECS: dict[str, _Spec] = {
    "apertus2509": _Spec("<|inner_prefix|>", "<|inner_suffix|>", force_fixed=False),
    "deepseek-r1": _Spec(force=True, force_fixed=True),
    "deepseek-v3": _Spec(**{**_Q3, "reasoning_default": "explicit_thinking"}),
    "deepseek-v4": _Spec(thinks_internally=True, reasoning_default="explicit_thinking"),
    "deepseek-v41": _Spec(thinks_internally=True, reasoning_default="explicit_thinking"),
    "dots": _Spec(**_Q3),
    "glm45": _Spec(**_Q3),
    "ling3": _Spec(**{**_Q3, "thinks_internally": True}, nonempty_default=True),
    "hunyuan": _Spec(tool_start="<tool_calls>", wants_tokenizer=True),
    "gpt-oss": _Spec("<|channel|>analysis<|message|>", "<|end|>", force=True, force_fixed=False,
                     drop_stray_end=True),
    "k2_horizon": _Spec("<ifm|think>", "</ifm|think>", tool_start="<ifm|tool_call", force=True,
                        requires_force=True),
    "kimi": _Spec("◁think▷", "◁/think▷", force_fixed=False),
    "kimi_k2": _Spec(tool_start="<|tool_calls_section_begin|>", reasoning_default="thinking"),
    "kimi_k3": _Spec("<|open|>think<|sep|>", "<|close|>think<|sep|>", tool_start="<|open|>tools<|sep|>",
                     force=True, reasoning_default="thinking", oneshot_stray_end=True),
    "mimo": _Spec(**{**_Q3, "reasoning_default": "explicit_enable_thinking"}),
    "muse": _Spec(" to=self<|message|>", "<|eom|>", force_fixed=False),
    "poolside_v1": _Spec(**{**_Q3, "reasoning_default": "explicit_enable_thinking"}),
    "qwen3": _Spec(**_Q3),
    "qwen3-thinking": _Spec(**_Q3, force=True, force_fixed=True),
    "minimax": _Spec(**_Q3, force=True, force_fixed=True),
    "minimax-append-think": _Spec(append_think=True),
    "minimax-m3": _Spec("<mm:think>", "</mm:think>", drop_leading_end=True),
    "nanbeige": _Spec(**_Q3),
    "step3": _Spec(force=True, force_fixed=True),
    "step3p5": _Spec(force=True, force_fixed=True),
    "mistral": _Spec("[THINK]", "[/THINK]", reasoning_default="mistral"),
    "nemotron_3": _Spec(tool_start="<tool_call>", reasoning_default="enable_thinking"),
    "granite_thinking_parser": _Spec(tool_start="<tool_call>", reasoning_default="enable_thinking",
                                     lstrip_content_newlines=True),
    "interns1": _Spec(**_Q3),
    "gemma4": _Spec("<|channel>", "<channel|>", reasoning_default="explicit_enable_thinking", label="thought\n"),
    "gigachat35": _Spec(force=True, force_fixed=True),
    "inkling": _Spec("<|content_thinking|>", "<|end_message|>", force_fixed=False),
    "iquest_q1": _Spec(force=True, thinks_internally=True, reasoning_default="enable_thinking"),
    "cohere_command4": _Spec("<|START_THINKING|>", "<|END_THINKING|>", force=True),
}

# SGLang names we do not serve, and why (the README repeats this).
NOT_SERVED: dict[str, str] = {
    "response_template": "markers come from the checkpoint's response_template metadata together with a "
                         "grammar SGLang builds per request (prefix, grammar_start, constrained tool calls); "
                         "served only as our family via family_for_tokenizer, not as SGLang's detector",
    "beam": "as response_template (SGLang's beam detector reads the checkpoint's template metadata)",
}

_ENGINE_NAMES: dict[str, str] = dict(ENGINE_PARSER_NAMES.get("sglang", {}))
# SGLang's own detectors, as shipped (register(replace=True) changes the map later).
_ORIGINAL_DETECTORS: dict[str, type] = dict(_SglReasoningParser.DetectorMap)
_RUNTIME = RUNTIME_ENGINE_NAMES.get("sglang", frozenset())


def family_of(sglang_name: str) -> str:
    """Our family for an SGLang reasoning-parser name (KeyError if not served)."""
    if sglang_name not in _SPECS:
        raise KeyError(sglang_name)
    return _ENGINE_NAMES[sglang_name]


# ---------------------------------------------------------------------------
# The reasoning detector
# ---------------------------------------------------------------------------

_new_result = StreamingParseResult.__new__


def _result(normal: str, reasoning: str) -> StreamingParseResult:
    # StreamingParseResult with its two fields set directly (its __init__
    # only maps None to "").
    r = _new_result(StreamingParseResult)
    r.normal_text = normal
    r.reasoning_text = reasoning
    return r


class RcReasoningDetector(_SglBase):
    """An SGLang reasoning detector over one reasoning-core family.

    Subclasses bind ``sglang_name`` and ``spec``; one instance serves one
    request, as in SGLang.  ``force_reasoning=True`` starts inside reasoning
    (an awaiting-start family such as Gemma 4 starts inside an open thought
    channel, as SGLang's detector does); ``stream_reasoning=False`` returns the
    reasoning once, when it ends (or at ``finish()``).
    """

    sglang_name: str = ""
    spec: _Spec = _Spec()

    # SGLang's detectors keep ``_in_reasoning`` current as they parse (its tests
    # and callers read it between chunks); ours answers from the text parser's
    # state once it exists (SGLang's base ``__init__`` sets the start value).
    @property
    def _in_reasoning(self) -> bool:
        tp = self.__dict__.get("_tp")
        if tp is None:
            return self.__dict__.get("_in_reasoning_start", False)
        return tp.is_reasoning

    @_in_reasoning.setter
    def _in_reasoning(self, value: bool) -> None:
        self.__dict__["_in_reasoning_start"] = bool(value)

    def __init__(
        self,
        stream_reasoning: bool = True,
        force_reasoning: Optional[bool] = None,
        continue_final_message: bool = False,
        previous_content: str = "",
        force_nonempty_content: Optional[bool] = None,
        **kwargs: Any,
    ) -> None:
        spec = self.spec
        if force_nonempty_content is None:
            force_nonempty_content = spec.nonempty_default
        if force_reasoning is None:
            force_reasoning = spec.force
        if spec.requires_force and not force_reasoning:
            raise ValueError(f"the {self.sglang_name} reasoning parser requires force_reasoning=True")
        if spec.force_fixed is not None:
            force_reasoning = spec.force_fixed
        super().__init__(
            spec.start, spec.end,
            force_reasoning=bool(force_reasoning),
            stream_reasoning=stream_reasoning,
            tool_start_token=spec.tool_start,
            continue_final_message=continue_final_message,
            previous_content=previous_content,
            thinks_internally=spec.thinks_internally,
            reasoning_default=spec.reasoning_default,
            force_nonempty_content=force_nonempty_content,
        )
        self.think_start_self_label = spec.label
        fam = self._family_for(kwargs.get("tokenizer"), kwargs.get("reasoning_effort"))
        self._family: Family = fam
        if spec.wants_tokenizer and fam.start and fam.end:
            # Markers read from this checkpoint's vocabulary (Hunyuan's token suffix).
            self.think_start_token, self.think_end_token = fam.start[0], fam.end[0]
            if fam.terminators:
                self.tool_start_token = fam.terminators[0]
        # The start state, as SGLang's detector decides it (previous_content
        # of a continued assistant message overrides force_reasoning).
        inside = bool(self._in_reasoning)
        self._inside = inside
        self._tp = self._text_parser()
        self._feed = self._tp.feed
        self._plain = stream_reasoning and not force_nonempty_content and not spec.append_think \
            and not spec.drop_leading_end and not spec.lstrip_content_newlines and not spec.drop_stray_end
        self._end_hold = ""
        self._first = True
        self._pending_reasoning: list[str] = []
        self._acc_reasoning: list[str] = []
        self._seen_reasoning = inside
        self._content_started = False
        self._lead = ""
        self._lead_ws: list[str] = []
        self._lead_checked = not spec.drop_leading_end or inside
        if self._plain:
            # The hot path: the text parser's feed plus one result object.
            feed = self._feed
            new = _new_result
            cls = StreamingParseResult

            def parse_streaming_increment(new_text: str) -> StreamingParseResult:
                r, c = feed(new_text)
                res = new(cls)
                res.normal_text = c
                res.reasoning_text = r
                return res

            self.parse_streaming_increment = parse_streaming_increment

    # -- construction helpers -------------------------------------------------
    def _family_for(self, tokenizer: Any, effort: Any) -> Family:
        name = self.sglang_name
        if self.spec.wants_tokenizer and tokenizer is not None:
            fam = family_for_tokenizer(name, tokenizer, engine="sglang")
        else:
            fam = get_family(_ENGINE_NAMES[name])
        if name == "k2_horizon":
            fam = _k2_horizon_family(fam, effort)
        elif name == "muse":
            fam = _muse_family(fam)
        return fam

    def _text_parser(self) -> TextReasoningParser:
        fam = self._family
        if not self._inside:
            return TextReasoningParser(fam, starts_in_reasoning=False)
        # Inside a block the output did not open (Gemma 4's forced thought
        # channel included: not awaiting its start, and its label belongs to
        # the template's start, so it is not stripped from the output's head).
        return TextReasoningParser(fam, starts_in_reasoning="inside")

    # -- one shot ---------------------------------------------------------------
    def detect_and_parse(self, text: str) -> StreamingParseResult:
        spec = self.spec
        if spec.append_think:
            return _result(spec.start + text, "")
        lead = spec.start + spec.label
        if lead and text.startswith(lead + lead):
            # One-shot, SGLang drops a repeated start marker at the head (a
            # marker, not reasoning text).
            while text.startswith(lead + lead):
                text = text[len(lead):]
        if spec.drop_leading_end and not self._inside:
            stripped = text.lstrip()
            if stripped.startswith(spec.end):
                text = stripped[len(spec.end):]
        if spec.oneshot_stray_end and not self._inside and spec.end in text and spec.start not in text:
            tp = TextReasoningParser(self._family, starts_in_reasoning="inside")
        else:
            tp = self._text_parser()
        r1, c1 = tp.feed(text)
        ended = not tp.is_reasoning
        r2, c2 = tp.finish()
        reasoning, content = r1 + r2, c1 + c2
        if spec.lstrip_content_newlines and content and (ended or reasoning):
            content = content.lstrip("\n")
        if self._force_nonempty_content and not content:
            if not (spec.nonempty_default and (not reasoning or (spec.tool_start and spec.tool_start in text))):
                content, reasoning = reasoning, content
        if spec.drop_stray_end and spec.end in content:
            content = content.replace(spec.end, "")
        return _result(content, reasoning)

    # -- streaming ----------------------------------------------------------------
    def parse_streaming_increment(self, new_text: str) -> StreamingParseResult:
        """Classify the next chunk (the general path: options that change what
        is emitted; the plain case is an instance attribute set in __init__)."""
        spec = self.spec
        if spec.append_think:
            if self._first:
                self._first = False
                new_text = spec.start + new_text
            return _result(new_text, "")
        if not self._lead_checked:
            # Held: leading whitespace (pieces, never re-scanned) and the
            # first non-blank text (shorter than the end marker).
            tail = self._lead
            if not tail:
                t = new_text.lstrip()
                if len(t) < len(new_text):
                    self._lead_ws.append(new_text[:len(new_text) - len(t)])
                if not t:
                    return _result("", "")
                tail = t
            else:
                tail += new_text
            if len(tail) < len(spec.end) and spec.end.startswith(tail):
                self._lead = tail
                return _result("", "")
            self._lead_checked = True
            new_text = tail[len(spec.end):] if tail.startswith(spec.end) else "".join(self._lead_ws) + tail
            self._lead, self._lead_ws = "", []
            if not new_text:
                return _result("", "")
        was = self._tp.is_reasoning
        r, c = self._feed(new_text)
        now = self._tp.is_reasoning
        if r or was or now:
            self._seen_reasoning = True
        return self._emit(r, c, now)

    def _emit(self, r: str, c: str, now: bool) -> StreamingParseResult:
        if not self.stream_reasoning:
            if r:
                self._pending_reasoning.append(r)
            if now:
                r = ""
            else:
                r = "".join(self._pending_reasoning)
                self._pending_reasoning = []
        if self._force_nonempty_content:
            if now:
                self._acc_reasoning.append(r)
            else:
                self._acc_reasoning = []
        if self.spec.lstrip_content_newlines and c and self._seen_reasoning and not self._content_started:
            c = c.lstrip("\n")
            self._content_started = bool(c)
        if self.spec.drop_stray_end and (c or self._end_hold):
            c = self._drop_end(c)
        return _result(c, r)

    def _drop_end(self, c: str) -> str:
        # Content without the end marker; a trailing piece that may begin one
        # is held for the next chunk (O(chunk + marker)).
        end = self.spec.end
        c = self._end_hold + c
        self._end_hold = ""
        if end in c:
            c = c.replace(end, "")
        for k in range(min(len(end) - 1, len(c)), 0, -1):
            if end.startswith(c[-k:]):
                self._end_hold = c[-k:]
                return c[:-k]
        return c

    def finish(self) -> StreamingParseResult:
        """End of the stream (SGLang's ``parse_stream_end``): held text and,
        with ``stream_reasoning=False``, reasoning never closed are released."""
        spec = self.spec
        if spec.append_think:
            return _result("", "")
        if not self._lead_checked:
            lead = "".join(self._lead_ws) + self._lead
            self._lead, self._lead_ws, self._lead_checked = "", [], True
            return _result(lead, "")
        was = self._tp.is_reasoning
        r, c = self._tp.finish()
        if self._end_hold or (spec.drop_stray_end and c):
            c = self._drop_end(c) + self._end_hold
            self._end_hold = ""
        if not was:
            return _result(c, r)
        if self._force_nonempty_content:
            acc = "".join(self._acc_reasoning) + r
            if not self.stream_reasoning:
                acc = "".join(self._pending_reasoning) + acc
            self._acc_reasoning, self._pending_reasoning = [], []
            return _result(acc, "")
        if not self.stream_reasoning:
            r = "".join(self._pending_reasoning) + r
            self._pending_reasoning = []
        return _result(c, r)

    @property
    def family(self) -> Family:
        """The reasoning-core family this detector runs."""
        return self._family

    # -- token-level hooks SGLang's scheduler and grammar backend call -----------
    # (the ids of the end marker, of a start the model writes itself, the answer
    # frame): answered by SGLang's own detector of this name, so the grammar
    # side behaves exactly as with SGLang's detector.
    def _native(self):
        native = getattr(self, "_native_detector", None)
        if native is None:
            cls = _ORIGINAL_DETECTORS.get(self.sglang_name)
            if cls is None:
                return None
            try:
                native = cls(force_reasoning=True) if self.spec.requires_force else cls()
            except Exception:  # noqa: BLE001 - e.g. a detector needing a tokenizer: base-class behaviour
                return None
            self._native_detector = native
        return native

    def get_think_end_token_ids(self, tokenizer: Any):
        native = self._native()
        if native is not None:
            return native.get_think_end_token_ids(tokenizer)
        return super().get_think_end_token_ids(tokenizer)

    def get_self_opened_think_start_token_ids(self, tokenizer: Any):
        native = self._native()
        if native is not None:
            return native.get_self_opened_think_start_token_ids(tokenizer)
        return super().get_self_opened_think_start_token_ids(tokenizer)

    def get_answer_frame(self):
        native = self._native()
        return native.get_answer_frame() if native is not None else super().get_answer_frame()


def _k2_horizon_family(fam: Family, effort: Any) -> Family:
    """SGLang's K2 Horizon recognises only the requested effort's pair (an
    unsupported value selects medium): restrict the row to that pair."""
    from dataclasses import replace

    efforts = {"high": 0, "medium": 1, "low": 2}
    i = efforts.get(effort, 1) if isinstance(effort, str) else (0 if effort is None else 1)
    if len(fam.start) <= i or len(fam.end) <= i:
        return fam
    return replace(fam, name=f"{fam.name}_{i}", start=(fam.start[i],), end=(fam.end[i],))


def _muse_family(fam: Family) -> Family:
    return fam


def _key(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


def _sglang_owner(cls: type) -> Optional[str]:
    """The name an SGLang detector class stands for among the names it serves
    (the one it is named after, else its first), or None if it serves none."""
    names = [n for n, c in _ORIGINAL_DETECTORS.items() if c is cls and n in _SPECS]
    named = [n for n in names if _key(n) and _key(n) in _key(cls.__name__)]
    return (named or names or [None])[0]


def _sglang_base_name(name: str) -> Optional[str]:
    """The served name whose class ours for ``name`` derives from, mirroring
    SGLang's classes: a name served by a class that stands for another name
    (``minimax`` by ``Qwen3Detector``), or by a subclass of such a class
    (``deepseek-v3``: ``_DeepSeekV3Detector(Qwen3Detector)``)."""
    cls = _ORIGINAL_DETECTORS.get(name)
    if cls is None:
        return None
    owner = _sglang_owner(cls)
    if owner is not None and owner != name:
        return owner
    for base in cls.__mro__[1:]:
        owner = _sglang_owner(base)
        if owner is not None and owner != name:
            return owner
    return None


def _make_class(name: str, spec: _Spec, base: Optional[type] = None) -> type[RcReasoningDetector]:
    base = base or RcReasoningDetector
    cls_name = "".join(p.capitalize() for p in name.replace("-", "_").split("_")) + "RcDetector"
    ns: dict[str, Any] = {"sglang_name": name, "spec": spec, "__module__": __name__}
    if base is not RcReasoningDetector and "__init__" in vars(base):
        ns["__init__"] = RcReasoningDetector.__init__
    original = _ORIGINAL_DETECTORS.get(name)
    if original is not None:
        # Static and class methods SGLang's class of this name defines (its
        # serving layer calls e.g. IQuestQ1ReasoningDetector.thinking_enabled),
        # answered by that class.
        for cls_ in original.__mro__:
            if cls_ is _SglBase or cls_ is object:
                break
            for attr, value in vars(cls_).items():
                if attr in ns or hasattr(RcReasoningDetector, attr):
                    continue
                if isinstance(value, (staticmethod, classmethod)):
                    ns[attr] = staticmethod(getattr(original, attr))
    if spec.wants_tokenizer or name == "k2_horizon":
        # SGLang passes tokenizer= / reasoning_effort= only when the signature names them.
        def __init__(self, stream_reasoning=True, force_reasoning=None, continue_final_message=False,
                     previous_content="", tokenizer=None, force_nonempty_content=False, reasoning_effort="high"):
            RcReasoningDetector.__init__(self, stream_reasoning, force_reasoning, continue_final_message,
                                         previous_content, force_nonempty_content, tokenizer=tokenizer,
                                         reasoning_effort=reasoning_effort)
        ns["__init__"] = __init__
    return type(cls_name, (base,), ns)


def _make_classes() -> dict[str, type[RcReasoningDetector]]:
    out: dict[str, type[RcReasoningDetector]] = {}

    def make(name: str) -> type[RcReasoningDetector]:
        if name not in out:
            base_name = _sglang_base_name(name)
            base = make(base_name) if base_name else None
            if base_name and _ORIGINAL_DETECTORS[name] is _ORIGINAL_DETECTORS[base_name] \
                    and _SPECS[name] == _SPECS[base_name] and _ENGINE_NAMES[name] == _ENGINE_NAMES[base_name] \
                    and not _SPECS[name].wants_tokenizer and name not in ("k2_horizon", "muse"):
                # SGLang serves both names with one class and ours behaves the
                # same under both: one class too (DetectorMap["dots"] is
                # DetectorMap["qwen3"], as in SGLang).
                out[name] = base
            else:
                out[name] = _make_class(name, _SPECS[name], base)
        return out[name]

    for name in _SPECS:
        make(name)
    return {name: out[name] for name in _SPECS}


REASONING_DETECTORS: dict[str, type[RcReasoningDetector]] = _make_classes()


# ---------------------------------------------------------------------------
# Function-call detectors
# ---------------------------------------------------------------------------

def _function_call_modules():
    """SGLang's function-call base class, result types and detector map (None
    when this SGLang build cannot import them)."""
    try:
        from sglang.srt.function_call import core_types
        from sglang.srt.function_call.base_format_detector import BaseFormatDetector
        from sglang.srt.function_call.function_call_parser import FunctionCallParser
    except Exception:  # pragma: no cover - an SGLang without the function-call package
        return None
    return BaseFormatDetector, core_types, FunctionCallParser


_FC = _function_call_modules()

def _engine_tool_names(engine: str):
    from ..tools import engine_names

    return engine_names(engine)


# SGLang function-call parser name -> our tool format, how SGLang numbers the
# calls of a one-shot parse ("tools": the tool's index in the request's tool
# list; "local": the call's position in the response), and whether SGLang's
# detector drops calls to tools the request does not list, one-shot and
# streaming (qwen3_coder and kimi_k2 keep them; SGLang's DeepSeek and GLM
# detectors drop them one-shot but stream them).
_TOOL_NAMES: dict[str, tuple[str, str, bool, bool]] = {
    # name: (our format, one-shot tool_index, unlisted tools dropped one-shot, ... streaming)
    "hermes": ("hermes", "tools", True, True),
    "qwen25": ("hermes", "tools", True, True),
    "qwen": ("hermes", "tools", True, True),
    "qwen3_coder": ("qwen3_coder", "local", False, False),
    "llama3": ("llama3_json", "tools", True, True),
    "deepseekv3": ("deepseek_v3", "tools", True, False),
    "deepseekv31": ("deepseek_v31", "tools", True, False),
    "kimi_k2": ("kimi_k2", "local", False, False),
    "glm45": ("glm45", "tools", True, False),
    "glm": ("glm45", "tools", True, False),
    "minimax-m2": ("minimax_m2", "tools", True, True),
    "mistral": ("mistral", "tools", True, True),
}
# Formats of the further tool-format modules (and the names not served, with why).
_MORE_TOOL_NAMES, TOOL_NOT_SERVED = _engine_tool_names("sglang")
_TOOL_NAMES.update(_MORE_TOOL_NAMES)


def _tool_name_of(tool: Any) -> Optional[str]:
    fn = getattr(tool, "function", None)
    if fn is None and isinstance(tool, dict):
        fn = tool.get("function", tool)
        return fn.get("name") if isinstance(fn, dict) else None
    return getattr(fn, "name", None)


def _tool_schema_of(tool: Any) -> Optional[dict]:
    fn = getattr(tool, "function", None)
    if fn is None and isinstance(tool, dict):
        fn = tool.get("function", tool)
        return fn.get("parameters") if isinstance(fn, dict) else None
    params = getattr(fn, "parameters", None)
    return params if isinstance(params, dict) else None


def _forward_unknown() -> bool:
    try:
        from sglang.srt.environ import envs

        return bool(envs.SGLANG_FORWARD_UNKNOWN_TOOLS.get())
    except Exception:  # pragma: no cover - older SGLang
        return False


def _normal_json(args: str) -> str:
    try:
        return json.dumps(json.loads(args), ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):  # (nested deeper than Python's JSON reader goes: as written)
        return args


class _ArgPieces(list):
    """``streamed_args_for_tool`` as SGLang reads it (one str per call), kept
    as pieces and joined only when read: appending costs O(piece) however
    long the arguments already are.  Every list method reads (or changes)
    the joined texts; one that may move them (``del``, ``insert``, ``pop``,
    ``sort``...) rebuilds each call's pieces from the texts afterwards and
    bumps ``version``, so a lane holding a replaced piece list stops."""

    def __init__(self) -> None:
        super().__init__()
        self._pieces: list[list[str]] = []
        self._dirty: set[int] = set()
        self.version = 0  # bumped when the piece lists themselves are replaced

    def ensure(self, n: int) -> None:
        while len(self._pieces) < n:
            list.append(self, "")
            self._pieces.append([])

    def add(self, i: int, piece: str) -> None:
        self._pieces[i].append(piece)
        self._dirty.add(i)

    def _sync(self) -> None:
        for i in self._dirty:
            pieces = self._pieces[i]
            joined = "".join(pieces)
            pieces[:] = [joined]
            list.__setitem__(self, i, joined)
        self._dirty.clear()

    def _moved(self) -> None:
        self._pieces = [[v] for v in list.__iter__(self)]
        self.version += 1

    def __setitem__(self, i, value) -> None:
        self._sync()
        list.__setitem__(self, i, value)
        if isinstance(i, int):
            self._pieces[i][:] = [value]  # in place: the detector holds the open call's list
        else:
            self._moved()

    def append(self, value: str) -> None:
        self._sync()
        list.append(self, value)
        self._pieces.append([value])

    __hash__ = None  # type: ignore[assignment]


def _joined_first(name: str, moves: bool) -> Any:
    """``list.<name>`` for ``_ArgPieces``: on the joined texts (and, when it
    may move them, each call's pieces rebuilt after it)."""
    op = getattr(list, name)

    def method(self: _ArgPieces, *args: Any, **kwargs: Any) -> Any:
        if self._dirty:
            self._sync()
        out = op(self, *args, **kwargs)
        if moves:
            self._moved()
        return out

    method.__name__ = name
    method.__qualname__ = f"_ArgPieces.{name}"
    return method


class _CallsParsedWhenRead(list):
    """``prev_tool_call_arr`` as SGLang reads it (``{"name", "arguments"}`` per
    call, the arguments parsed), with each call's arguments parsed when the
    list is read, not in the delta whose piece closed their JSON: that delta
    costs O(piece) however long the arguments are.  ``due(slot)`` notes a
    call whose arguments closed; every list method first parses the noted
    calls' streamed text (the first JSON value in it, so pieces sent after the
    close change nothing) into their dicts, in place."""

    def __init__(self, owner: Any) -> None:
        super().__init__()
        self._owner = owner        # the detector (its streamed_args_for_tool as read then)
        self._dirty: list[int] = []  # slots whose arguments closed, not parsed yet

    def due(self, slot: int) -> None:
        self._dirty.append(slot)

    def _sync(self) -> None:
        due, self._dirty = self._dirty, []
        args = self._owner.streamed_args_for_tool
        for slot in due:
            entry = list.__getitem__(self, slot) if slot < list.__len__(self) else None
            if isinstance(entry, dict) and slot < len(args):
                value = _first_json(args[slot])
                if value is not _NO_JSON:
                    entry["arguments"] = value

    def _moved(self) -> None:
        pass  # (nothing is noted after _sync)

    def __reduce_ex__(self, protocol: Any) -> Any:
        # copied or pickled as the plain list it reads as (not its detector)
        if self._dirty:
            self._sync()
        return (list, (list(list.__iter__(self)),))

    __hash__ = None  # type: ignore[assignment]


_NO_JSON = object()
_JSON_DECODE = json.JSONDecoder().raw_decode
_JSON_SPACE = re.compile(r"[ \t\n\r]*")


def _first_json(text: str) -> Any:
    """The first JSON value in ``text`` (leading JSON whitespace skipped), or
    ``_NO_JSON`` when it does not start with a whole one."""
    try:
        return _JSON_DECODE(text, _JSON_SPACE.match(text).end())[0]
    except (TypeError, ValueError, RecursionError):  # (nested deeper than Python's JSON reader goes)
        return _NO_JSON


for _cls in (_ArgPieces, _CallsParsedWhenRead):
    for _name in ("__getitem__", "__iter__", "__reversed__", "__contains__", "__eq__", "__ne__", "__lt__", "__le__",
                  "__gt__", "__ge__", "__repr__", "__add__", "__mul__", "__rmul__", "index", "count", "copy"):
        setattr(_cls, _name, _joined_first(_name, False))
    for _name in ("__delitem__", "__iadd__", "__imul__", "extend", "insert", "pop", "remove", "clear", "sort",
                  "reverse"):
        setattr(_cls, _name, _joined_first(_name, True))
for _name in ("__setitem__", "append"):
    setattr(_CallsParsedWhenRead, _name, _joined_first(_name, False))


TOOL_DETECTORS: dict[str, type] = {}
_UNSEEN = object()
# detector class -> the markers of SGLang's detector of its name (bot_token,
# eot_token, tool_call_separator; () when SGLang has none)
_NATIVE_MARKS: dict[type, tuple] = {}

if _FC is not None:
    _BaseFormatDetector, _core_types, _FunctionCallParser = _FC
    _ToolCallItem = _core_types.ToolCallItem
    _FcResult = _core_types.StreamingParseResult
    _ORIGINAL_TOOL_DETECTORS = dict(_FunctionCallParser.ToolCallParserEnum)

    def _fc_builders():
        """``(result(normal_text, calls), args_result(tool_index, piece))``:
        SGLang's ``StreamingParseResult`` / ``ToolCallItem`` built without pydantic
        validation (our values already have the fields' types), so a chunk inside
        a call's arguments costs what the interface costs.  Checked here against
        the validated constructors (fields, fields set, extra, dumps); on any
        difference those are used."""
        from ..tools import _json as tool_json

        mk = tool_json.SCAN.model_new
        xr = _FcResult.model_config.get("extra") == "allow"
        xi = _ToolCallItem.model_config.get("extra") == "allow"
        fs_r = frozenset(("normal_text", "calls"))
        fs_i = frozenset(("tool_index", "name", "parameters"))
        fs_n = frozenset(("normal_text",))

        def result(normal_text, calls):
            return mk(_FcResult, {"normal_text": normal_text, "calls": calls}, fs_r, xr)

        scan = tool_json.SCAN
        try:  # one compiled call for each result of a piece of text
            normal_shape = scan.ModelShape([(_FcResult, {"normal_text": scan.PIECE, "calls": []}, fs_n, xr)])
        except (TypeError, ValueError):  # pragma: no cover - models another pydantic builds otherwise
            normal_shape = None

        def normal_result(text, _build=normal_shape.build if normal_shape is not None else None):
            return _build(None, text)

        try:  # one compiled call for the two models of an argument piece
            args_shape = scan.ModelShape([
                (_FcResult, {"normal_text": "", "calls": [scan.CHILD]}, fs_r, xr),
                (_ToolCallItem, {"tool_index": scan.INDEX, "name": None, "parameters": scan.PIECE}, fs_i, xi),
            ])
        except (TypeError, ValueError):  # pragma: no cover - models another pydantic builds otherwise
            args_shape = None
        args_result = args_shape.build if args_shape is not None else None
        try:  # what a chunk that sends nothing answers (_convert([]))
            empty_shape = scan.ModelShape([(_FcResult, {"normal_text": "", "calls": []}, fs_r, xr)])
        except (TypeError, ValueError):  # pragma: no cover - models another pydantic builds otherwise
            empty_shape = None

        def item(slot, name, piece):
            return mk(_ToolCallItem, {"tool_index": slot, "name": name, "parameters": piece}, fs_i, xi)

        def v_result(normal_text, calls):
            return _FcResult(normal_text=normal_text, calls=calls)

        def v_item(slot, name, piece):
            return _ToolCallItem(tool_index=slot, name=name, parameters=piece)

        def v_args_result(slot, piece):
            return v_result("", [v_item(slot, None, piece)])

        def v_normal_result(text):
            return _FcResult(normal_text=text)

        validated = (v_result, v_args_result, v_item, v_normal_result, None, None, None)
        if args_shape is None or normal_shape is None or empty_shape is None:  # pragma: no cover
            return validated
        try:
            def same(a, b) -> bool:
                return (type(a) is type(b) and a == b and repr(a) == repr(b) and a.model_dump() == b.model_dump()
                        and a.model_dump_json(exclude_unset=True) == b.model_dump_json(exclude_unset=True)
                        and a.model_fields_set == b.model_fields_set
                        and a.__pydantic_extra__ == b.__pydantic_extra__
                        and a.__pydantic_private__ == b.__pydantic_private__)

            for x in ((0, "f", ""), (1, None, '{"a"')):
                if not same(item(*x), v_item(*x)):
                    return validated
            if not (same(result("t", []), v_result("t", []))
                    and same(result("", [item(0, "f", "")]), v_result("", [v_item(0, "f", "")]))
                    and same(args_result(2, "x"), v_args_result(2, "x"))
                    and same(normal_result("n"), v_normal_result("n"))
                    and same(empty_shape.build(None, None), v_result("", []))
                    and same(empty_shape.build(None, None), result("", []))):
                return validated
            r = args_result(0, "x")
            r.normal_text = "y"
            if r.normal_text != "y" or args_result(0, "x").calls[0].parameters != "x":
                return validated
            for make in (lambda: normal_result("a"), lambda: empty_shape.build(None, None)):
                r = make()
                r.calls.append(item(0, None, "x"))
                if make().calls:  # a fresh list each
                    return validated
        except Exception:  # pragma: no cover - another pydantic
            return validated
        return result, args_result, item, normal_result, args_shape, empty_shape, normal_shape

    # _FC_ARGS_SHAPE: the ModelShape behind _fc_args_result (None when the
    # validated constructors are in use; the hot lane is then never used);
    # _FC_EMPTY_SHAPE: the result of a chunk that sends nothing, for the lane.
    # _FC_NORMAL_SHAPE: the one behind _fc_normal_result, for the content lane.
    (_fc_result, _fc_args_result, _fc_item, _fc_normal_result, _FC_ARGS_SHAPE, _FC_EMPTY_SHAPE,
     _FC_NORMAL_SHAPE) = _fc_builders()

    class RcToolDetector(_BaseFormatDetector):
        """An SGLang function-call detector over one ``reasoning_core.tools`` format.

        Parsing (one-shot and streaming, O(chunk)) is ours; the grammar side
        (``structure_info``, structural tags) is answered by SGLang's own
        detector of the same name, so constrained decoding is unchanged.
        Calls to tools the request does not list are dropped, as SGLang does
        (kept with ``tool_index=-1`` one-shot when ``SGLANG_FORWARD_UNKNOWN_TOOLS`` is set).
        """

        sglang_name: str = ""
        tool_format: str = ""
        index_mode: str = "local"
        drop_unknown: bool = True
        stream_drop_unknown: bool = True
        # streamed whitespace-only text after a call is dropped, as SGLang's
        # detector of this name drops it (its Qwen 2.5 detector)
        stream_drop_ws_after_call: bool = False
        # one-shot, a last call block its closer never ends stays text, as
        # SGLang's detector of this name leaves it (MiniMax M2)
        oneshot_unclosed_is_text: bool = False
        # one-shot text before the first call: "strip" (trimmed), "prefix" (as
        # written), None (ours unchanged: SGLang's detector agrees with it)
        oneshot_normal: Optional[str] = None
        # values of parameters no schema declares, one-shot and streamed: the
        # tools parser's ``undeclared_as_string`` (False: JSON when it parses)
        undeclared_oneshot: Any = False
        undeclared_stream: Any = False
        # a parameter schema's "$ref" to its "$defs" read as what it names, as
        # SGLang's detector of this name resolves it (dots)
        resolve_refs: bool = False

        def __init__(self, **kwargs: Any) -> None:
            super().__init__()
            self._rc_tools = _rc_tools
            self._parser = self._new_parser(self.undeclared_stream)
            # SGLang's own detector of this name (grammar hooks, one-shot
            # detection), made when first asked for (``_native``); its
            # markers are copied now, read once per class.
            self._native_kwargs = kwargs
            marks = _NATIVE_MARKS.get(type(self)) if not kwargs else None
            if marks is None:
                native = self._native
                marks = None if native is None else (getattr(native, "bot_token", ""),
                                                      getattr(native, "eot_token", ""),
                                                      getattr(native, "tool_call_separator", ", "))
                if not kwargs:
                    _NATIVE_MARKS[type(self)] = marks or ()
            if marks:
                self.bot_token, self.eot_token, self.tool_call_separator = marks
            self._schemas_for: Any = _UNSEEN  # the tools list the schemas were read from
            self._tool_names: dict[str, int] = {}
            # parse_delta, answering a piece of the open call's arguments as a str
            self._step = _tool_base._scan.step_args
            # The call whose arguments stream now: its pieces recorded (dirty
            # set, JSON closer) and its result built in one compiled step (an
            # ArgsLane), or None.
            self._hot: Any = None
            # Outside a lane, a delta our parser answers as content, whole,
            # answered in one compiled step too (a ContentLane), or None.
            self._chot: Any = None
            self._slot: dict[int, int] = {}     # our call index -> emitted tool_index (-1: dropped)
            self._names: dict[int, str] = {}
            self._closers: dict[int, _JsonCloser] = {}
            self._emitted = 0
            self._ws_after_call: list[str] = []
            self._ws_run_text = False  # the text since the last call sent has more than whitespace
            # SGLang's bookkeeping, as its serving layer reads it (a list of
            # str per call, built from pieces only when read).
            self.streamed_args_for_tool = _ArgPieces()
            self.prev_tool_call_arr = _CallsParsedWhenRead(self)

        @property
        def _native(self) -> Any:
            """SGLang's own detector of this name (None: SGLang has none, or
            it cannot be built here), made on first use."""
            d = self.__dict__
            try:
                return d["_native_obj"]
            except KeyError:
                pass
            native = None
            native_cls = _ORIGINAL_TOOL_DETECTORS.get(self.sglang_name)
            if native_cls is not None:
                try:
                    native = native_cls(**d.get("_native_kwargs", {}))
                except Exception:  # noqa: BLE001 - grammar hooks then fall back to the base class
                    native = None
            d["_native_obj"] = native
            return native

        def _format_cls(self) -> Any:
            return self._rc_tools.create(self.tool_format)

        def _new_parser(self, undeclared: Any):
            p = self._format_cls()
            if undeclared:
                p.undeclared_as_string = undeclared
            return p

        # -- detection --------------------------------------------------------------
        def has_tool_call(self, text: str) -> bool:
            # SGLang parses a whole response only when this says yes: a call
            # our format reads but SGLang's detector does not recognize (a
            # lenient form) must say yes too, or one-shot would keep as text
            # what streaming parses.
            if self._native is not None and self._native.has_tool_call(text):
                return True
            if not any(m in text for m in self._parser.openers):
                return False
            if self._native is None:
                return True
            try:
                return bool(self._new_parser(self.undeclared_oneshot).parse_complete(text).tool_calls)
            except ValueError:
                return False

        def _set_schemas(self, parser: Any, tools: Any) -> dict[str, int]:
            names: dict[str, int] = {}
            schemas: dict[str, dict] = {}
            for i, t in enumerate(tools or ()):
                n = _tool_name_of(t)
                if n:
                    names.setdefault(n, i)
                    sch = _tool_schema_of(t)
                    if sch is not None:
                        schemas[n] = _refs_inlined(sch) if self.resolve_refs else sch
            if schemas:
                parser.set_streaming_tool_schemas(schemas)
            return names

        def detect_and_parse(self, text: str, tools: Any):
            p = self._new_parser(self.undeclared_oneshot)
            names = self._set_schemas(p, tools)
            tail = ""
            if self.oneshot_unclosed_is_text and self._native is not None:
                n = self._native
                bot = n.bot_token or getattr(n, "tool_call_start_token", "")
                eot = n.eot_token or getattr(n, "tool_call_end_token", "")
                i = text.rfind(bot) if bot and eot else -1
                if i >= 0 and text.find(eot, i) < 0:
                    text, tail = text[:i], text[i:]
            try:
                res = p.parse_complete(text)
            except ValueError:
                return _FcResult(normal_text=text + tail, calls=[])
            content = res.content or ""
            if self.stream_drop_ws_after_call and res.tool_calls and content.strip():
                content = self._without_ws_after_calls(text, tools, content)
            forward = _forward_unknown() or not self.drop_unknown
            calls = []
            local = 0
            for c in res.tool_calls:
                if c.name not in names and not forward:
                    continue
                idx = names.get(c.name, -1) if self.index_mode == "tools" else local
                calls.append(_ToolCallItem(tool_index=idx, name=c.name, parameters=_normal_json(c.arguments)))
                local += 1
            return _FcResult(normal_text=self._shape_normal(text, content) + tail, calls=calls)

        def _without_ws_after_calls(self, text: str, tools: Any, content: str) -> str:
            """One-shot ``content`` without the whitespace-only text between and
            after calls, as streaming drops it under this name (text with
            anything else in it is kept whole, as streamed in one chunk)."""
            q = self._new_parser(self.undeclared_oneshot)
            names = self._set_schemas(q, tools)
            try:
                deltas = (q.parse_delta(text) or []) + q.finish()
            except ValueError:  # pragma: no cover - streaming never raises on model output
                return content
            send = not self.stream_drop_unknown or _forward_unknown()
            dropped: set[int] = set()  # calls streaming does not send: no call to the text around them
            kept: list[str] = []
            every: list[str] = []
            run: list[str] = []  # the content since the last call sent
            after_call = False
            for d in deltas + [None]:
                if d is not None:
                    if d.content is not None:
                        run.append(d.content)
                        continue
                    if d.name is not None and not (send or d.name in names):
                        dropped.add(d.index)
                    if d.index in dropped:
                        continue
                piece = "".join(run)
                run.clear()
                every.append(piece)
                if not after_call or piece.strip():
                    kept.append(piece)
                after_call = True
            # (read whole, the stream's content is the one-shot content; were it
            # not, ours would stay as it is)
            return "".join(kept) if "".join(every) == content else content

        def _shape_normal(self, text: str, content: str) -> str:
            """One-shot text around the calls, whitespace shaped as SGLang's
            detector of this name shapes it: the text before the first call
            (``strip``: trimmed); whitespace between and after calls dropped.
            Non-whitespace text after a call, which SGLang's detectors drop,
            is kept (docs/engines/sglang.md)."""
            mode = self.oneshot_normal
            if mode is None:
                return content
            hits = [i for i in (text.find(m) for m in self._parser.openers) if i >= 0]
            if not hits:
                return content
            prefix = text[:min(hits)]
            if content.startswith(prefix) and not content[len(prefix):].strip():
                content = prefix
            return content.strip() if mode == "strip" else content

        # -- streaming ----------------------------------------------------------------
        def _use_tools(self, tools: Any) -> None:
            self._schemas_for = tools
            self._tool_names = self._set_schemas(self._parser, tools)
            self._set_content_lane()

        def _set_content_lane(self) -> None:
            """The content lane, where ``_streaming`` and ``_answer`` would
            answer a content delta as SGLang's text result of it: this class
            keeps both, and no whitespace rule after a call is in force."""
            scan = _tool_base._scan  # the scanner in use (a test may swap it)
            cls = type(self)
            ok = (cls._streaming is RcToolDetector._streaming and cls._answer is RcToolDetector._answer
                  and cls.parse_streaming_increment is RcToolDetector.parse_streaming_increment
                  and self._step is scan.step_args and type(_FC_NORMAL_SHAPE) is scan.ModelShape
                  and not (self._emitted and self.stream_drop_ws_after_call))
            self._chot = scan.ContentLane(self._parser, _PTD, _FC_NORMAL_SHAPE) if ok else None

        # SGLang's per-delta method, compiled (or its twin): inside a call's
        # arguments the lane (``_hot``) records the piece and builds the result
        # (what _convert does for it), for the same tools and a str delta, with
        # no Python frame; every other delta goes to _streaming, and a lane
        # answer that is not a built result to _answer.
        parse_streaming_increment = _tool_json.SCAN.sglang_tool_streaming

        def _streaming(self, new_text: str, tools: Any):
            """The general path of ``parse_streaming_increment``."""
            if tools is not self._schemas_for:
                self._use_tools(tools)
            p = self._parser
            if type(new_text) is not str:
                return self._answer(p.parse_delta(new_text), new_text)
            return self._answer(self._step(p, new_text, _PTD), new_text)

        def _answer(self, deltas: Any, new_text: str):
            """The result for what our parser answered for ``new_text``."""
            if type(deltas) is str:  # a piece of the arguments of a call no lane streams
                deltas = [_PTD(index=self._parser._cur.index, arguments=deltas)]
            if deltas is None:
                if self._emitted and self.stream_drop_ws_after_call:
                    return _fc_normal_result(self._after_call(new_text))
                return _fc_normal_result(new_text)
            return self._convert(deltas)

        def finish(self, tools: Any):
            if tools is not self._schemas_for:
                self._use_tools(tools)
            try:
                return self._convert(self._parser.finish())
            finally:
                self._hot = None  # our parser starts over: its next call 0 is not this lane's

        def _flush_pending_normal_text(self) -> str:
            # SGLang detectors with this hook: at the end of the stream, the
            # text held back (a partial opener) as normal text.
            try:
                return self._convert(self._parser.finish()).normal_text
            finally:
                self._hot = None

        def _after_call(self, text: str) -> str:
            # Whitespace after a call is held; dropped when the next call or
            # the end comes, released in front of text that follows. Once the
            # text since the call has anything else in it, the rest of it is
            # kept as it comes: what is dropped is a whitespace-only run
            # between calls (or after the last), whatever the chunks.
            if self._ws_run_text:
                return text
            if not text.strip():
                self._ws_after_call.append(text)
                return ""
            self._ws_run_text = True
            if self._ws_after_call:
                text = "".join(self._ws_after_call) + text
                self._ws_after_call.clear()
            return text

        def _closed(self, slot: int) -> None:
            arr = self.prev_tool_call_arr
            if type(arr) is _CallsParsedWhenRead and arr._owner is self:
                arr.due(slot)  # parsed when read
                return
            try:
                arr[slot]["arguments"] = json.loads(self.streamed_args_for_tool[slot])
            except (ValueError, RecursionError):
                pass

        def _lane(self, i: int, slot: int) -> Any:
            """The lane of our call ``i`` (sent as ``slot``), or None."""
            scan = _tool_base._scan  # the scanner in use (a test may swap it)
            if type(_FC_ARGS_SHAPE) is not scan.ModelShape:
                return None
            args = self.streamed_args_for_tool
            return scan.ArgsLane(self._parser, _PTD, _FC_ARGS_SHAPE, i, slot, args._pieces[slot], args._dirty,
                                 self._closers[i], self._closed, args, args.version, _FC_EMPTY_SHAPE)

        def _open_call(self, i: int, name: str) -> int:
            """Our call ``i`` (to ``name``) sent as the next tool_index, in
            SGLang's bookkeeping; answers the index."""
            slot = self._emitted
            self._emitted += 1
            if self.stream_drop_ws_after_call:
                self._chot = None  # content after a call: the whitespace rule (_answer)
            self._ws_after_call.clear()
            self._ws_run_text = False
            self._slot[i] = slot
            self._names[i] = name
            self._closers[i] = _json_closer()
            self.current_tool_id = slot
            arr = self.prev_tool_call_arr
            if type(arr) is _CallsParsedWhenRead:
                # (the list's own methods: a call still to be parsed is an
                # earlier slot, parsed when SGLang reads the list)
                while list.__len__(arr) <= slot:
                    list.append(arr, {})
                list.__setitem__(arr, slot, {"name": name, "arguments": {}})
            else:
                while len(arr) <= slot:
                    arr.append({})
                arr[slot] = {"name": name, "arguments": {}}
            self.streamed_args_for_tool.ensure(slot + 1)
            return slot

        def _add_args(self, i: int, slot: int, piece: str) -> None:
            self.streamed_args_for_tool.add(slot, piece)
            if self._closers[i].feed(piece):
                self._closed(slot)

        def _convert(self, deltas: list):
            # O(delta): the arguments of each call are kept as pieces (joined
            # when SGLang reads streamed_args_for_tool) and parsed into
            # prev_tool_call_arr once, when their JSON value closes.
            normal: list[str] = []
            calls = []
            names = self._tool_names
            for d in deltas:
                if d.content is not None:
                    if self._emitted and self.stream_drop_ws_after_call:
                        normal.append(self._after_call(d.content))
                        continue
                    normal.append(d.content)
                    continue
                i = d.index
                if d.name is not None:
                    if d.name in names or not self.stream_drop_unknown or _forward_unknown():
                        calls.append(_fc_item(self._open_call(i, d.name), d.name, ""))
                    else:
                        self._slot[i] = -1
                slot = self._slot.get(i, -1)
                if d.arguments and slot >= 0:
                    self._add_args(i, slot, d.arguments)
                    calls.append(_fc_item(slot, None, d.arguments))
                    cur = self._parser._cur  # (a lane only for a call still open)
                    self._hot = self._lane(i, slot) if cur is not None and cur.index == i else None
            return _fc_result("".join(normal), calls)

        # (What SGLang's detector of this name has and ours does not: its
        # methods, forwarded to it by each class, _native_methods; no
        # __getattr__ hook, which would slow every attribute read, SGLang's
        # per-chunk method lookup included.)

        @classmethod
        def parses_without_tools(cls) -> bool:
            native_cls = _ORIGINAL_TOOL_DETECTORS.get(cls.sglang_name)
            return bool(native_cls.parses_without_tools()) if native_cls is not None else False

        # -- grammar hooks: SGLang's own detector of this name ------------------------
        def structure_info(self):
            if self._native is None:
                raise NotImplementedError(f"SGLang has no {self.sglang_name} detector to take structure info from")
            return self._native.structure_info()

        def supports_structural_tag(self) -> bool:
            return self._native.supports_structural_tag() if self._native is not None else False

        def get_structural_tag_name(self):
            return self._native.get_structural_tag_name() if self._native is not None else None

        def get_structural_tag(self, *args: Any, **kwargs: Any):
            return self._native.get_structural_tag(*args, **kwargs) if self._native is not None else None

        def get_auto_tool_call_structural_tag(self, *args: Any, **kwargs: Any):
            if self._native is None:
                return None
            return self._native.get_auto_tool_call_structural_tag(*args, **kwargs)

        def parses_required_natively(self) -> bool:
            return self._native.parses_required_natively() if self._native is not None else False

    class _ReadsAtEnd(RcToolDetector):
        """A detector whose ``_read(text, tools, final)`` also ends the stream
        (what it kept is read then)."""

        def finish(self, tools: Any):
            try:
                return self._read("", tools, final=True)
            finally:
                self._hot = None  # our parser starts over: its next call 0 is not this lane's

        def _flush_pending_normal_text(self) -> str:
            try:
                return self._read("", self._schemas_for if self._schemas_for is not _UNSEEN else None,
                                  final=True).normal_text
            finally:
                self._hot = None

        def _step_text(self, text: str) -> Optional[list]:
            """Our parser's deltas for ``text`` (a piece of the open call's arguments as one)."""
            if not text:
                return []
            p = self._parser
            deltas = self._step(p, text, _PTD)
            return [_PTD(index=p._cur.index, arguments=deltas)] if type(deltas) is str else deltas

        def _text_for(self, text: Any, tools: Any) -> Any:
            """``_read``'s start: the request's tools taken, a str subclass as its text."""
            if tools is not self._schemas_for:
                self._use_tools(tools)
            if type(text) is not str and isinstance(text, str):
                text = str.__str__(text)  # a str subclass: its text, after what is kept
            return text

    class _HeldArgs(_ReadsAtEnd):
        """A detector whose SGLang namesake (``Qwen3CoderDetector``) sends a
        call's arguments only when a parameter's value closes
        (``</parameter>``: the parameter as one ``"key": value`` piece) and when
        the call closes (``</function>``: ``}``), not while a value streams.
        Ours sends at the same deltas: inside an open call a delta that cannot
        complete one of those closers is kept unread and answered as SGLang's
        detector answers it (an empty result); it is read with the delta that
        completes one, and what our parser gives for the call in between is
        sent then, in one piece.  The call's name goes out when it is read, as
        SGLang's does.  Each character is still read once by our parser, so
        the arguments are the same whatever the chunking; ``finish`` reads and
        sends what is kept.  ``streamed_args_for_tool`` holds what was sent."""

        hold_closers: tuple = ("</parameter>", "</function>")

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._hold = _ArgHold(self.hold_closers)
            self._held: Optional[int] = None  # our index of the open call whose arguments are held
            self._opend: list[str] = []       # its argument pieces read and not sent yet
            # a kept delta's answer, _fc_normal_result(""), built by the
            # compiled entry (None: the validated constructors are in use)
            self._kept_shape = _FC_NORMAL_SHAPE

        # SGLang's per-delta method, compiled (or its twin): a delta that
        # cannot complete a closer (no ``>``) while a call's arguments are held
        # is kept and answered with no Python frame; every other delta goes to
        # _held_streaming.
        parse_streaming_increment = _tool_json.SCAN.sglang_held_streaming

        def _held_streaming(self, new_text: str, tools: Any):
            if self._held is not None and tools is self._schemas_for and type(new_text) is str:
                if self._hold.keeps(new_text):
                    return _fc_normal_result("")
            return self._read(new_text, tools)

        def _read(self, text: Any, tools: Any, final: bool = False):
            # (one method, the helpers written out: a call's structural
            # points, the deltas read here, each run it once)
            if tools is not self._schemas_for:
                self._use_tools(tools)
            p = self._parser
            if type(text) is not str and isinstance(text, str):
                text = str.__str__(text)  # a str subclass: its text, after what is kept
            if type(text) is not str:
                deltas = p.parse_delta(text)  # its checks: a wrong type
                at_close = False
            else:
                text, at_close = self._hold.take_read(text)
                if not text:
                    deltas = []
                else:
                    deltas = self._step(p, text, _PTD)
                    if type(deltas) is str:  # a piece of the open call's arguments
                        deltas = [_PTD(index=p._cur.index, arguments=deltas)]
            if final:
                at_close = True
                deltas = (deltas or []) + (p.finish() or [])
            if deltas is None:
                if self._opend:
                    deltas = [_PTD(index=0, content=text)]
                elif self._emitted and self.stream_drop_ws_after_call:
                    return _fc_normal_result(self._after_call(text))
                else:
                    return _fc_normal_result(text)
            out, self._held = _regroup_held(deltas, self._held, self._opend, _PTD, p._cur is not None, at_close)
            return self._convert(out)

        def _lane(self, i: int, slot: int) -> Any:
            # (this class's per-delta method reads every chunk itself: no lane)
            return None

    class _MistralHeld(_ReadsAtEnd):
        """SGLang's ``mistral`` sends a compact call (``[TOOL_CALLS]name[ARGS]{...}``)
        whole when its JSON arguments close: the name (empty arguments) and the
        arguments in one piece, at that chunk; nothing before.  Ours sends such a
        call at the same chunk: once our parser opens a call whose name ended at
        ``[ARGS``, a chunk with neither ``}`` nor ``]`` (none can close the JSON)
        is kept unread and answered with an empty result, as SGLang's is; it is
        read with the next chunk that has one, and the call's name and arguments
        go out when our parser closes it.  The ``[TOOL_CALLS] [...]`` form streams
        as before (SGLang's streams it too).  ``finish`` reads and sends what is kept."""

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._mtail = ""                  # the last characters read
            self._held: Optional[int] = None  # our index of the compact call being held
            self._hitems: list = []           # its deltas read and not sent
            self._hold = _KeptChunks("}]")    # chunks kept unread (none can close the JSON)
            # a kept chunk's answer, _fc_normal_result(""), built by the
            # compiled entry (None: the validated constructors are in use)
            self._kept_shape = _FC_NORMAL_SHAPE

        # Inside a call's arguments (nothing held: a held call has no lane) the
        # lane answers, compiled, and keeps _mtail; while a compact call is
        # held, a chunk without "}" or "]" is kept there with no Python frame;
        # the rest goes to _streaming or, when the lane read the text and
        # built nothing, to _answer.
        parse_streaming_increment = _tool_json.SCAN.sglang_tool_streaming_tail

        def _streaming(self, new_text: str, tools: Any):
            if tools is self._schemas_for and type(new_text) is str and self._held is not None \
                    and self._hold.keep_plain(new_text):
                return _fc_normal_result("")
            return self._read(new_text, tools)

        def _answer(self, deltas: Any, new_text: str):
            # the lane read new_text (nothing was kept: no call is held)
            tail = self._note_read(new_text)
            if type(deltas) is str:
                deltas = [_PTD(index=self._parser._cur.index, arguments=deltas)]
            return self._result(deltas, new_text, tail, False)

        def _note_read(self, text: str) -> str:
            """``text`` about to be read: the last characters read before it and
            ``text`` (what ``_regroup`` looks for ``[ARGS`` in); ``_mtail`` keeps
            the last ``TAIL`` of them, as the compiled entry does."""
            n = _tool_json.SCAN.TAIL
            tail = self._mtail + text if len(text) < n else text
            self._mtail = tail[-n:]
            return tail

        def _read(self, text: Any, tools: Any, final: bool = False):
            text = self._text_for(text, tools)
            p = self._parser
            if type(text) is not str:
                deltas = p.parse_delta(text)  # its checks: a wrong type
                tail = self._mtail
            else:
                text = self._hold.take(text)
                tail = self._note_read(text)
                deltas = self._step_text(text)
            if final:
                deltas = (deltas or []) + (p.finish() or [])
            return self._result(deltas, text, tail, final)

        def _result(self, deltas: Any, text: str, tail: str, final: bool):
            if deltas is None:
                if not self._hitems:
                    if self._emitted and self.stream_drop_ws_after_call:
                        return _fc_normal_result(self._after_call(text))
                    return _fc_normal_result(text)
                deltas = [_PTD(index=0, content=text)]
            out = self._convert(self._regroup(deltas, tail, final))
            if self._held is not None:
                self._hot = None  # a held call's chunks are kept unread: no lane reads them
            return out

        def _regroup(self, deltas: list, tail: str, final: bool) -> list:
            out: list = []
            held, items = self._held, self._hitems
            for d in deltas:
                if held is not None and d.index == held and d.content is None and d.name is None:
                    items.append(d)
                    continue
                if items:
                    out.extend(self._whole(items))
                held = None
                if d.name is not None and d.content is None and "[ARGS" in tail:
                    held = d.index  # a compact call: sent whole when it closes
                    items.append(d)
                    continue
                out.append(d)
            if items and (final or self._parser._cur is None):
                out.extend(self._whole(items))
                held = None
            self._held = held
            return out

        @staticmethod
        def _whole(items: list) -> list:
            name = items[0]
            args = "".join(d.arguments for d in items if d.arguments)
            items.clear()
            out = [_PTD(index=name.index, id=name.id, name=name.name)]
            if args:
                out.append(_PTD(index=name.index, arguments=args))
            return out

    class _DotsBlocks(RcToolDetector):
        """SGLang's ``dots``: a ``<dots_function_call>`` block is read whole,
        as SGLang's detector reads it.  Streaming, its calls go out when its
        end marker comes (name and arguments in one item each), a JSON body
        as soon as its object is complete; calls to tools the request does not
        list are dropped, and a block left with no call, or one that does not
        parse, gives its inner text, trimmed, as content.  A bare end marker is
        dropped from the text wherever the chunks split it.  A block the
        stream ends inside goes out at ``finish`` as calls when it parses, as
        its text otherwise (SGLang's detector drops it).  One-shot reads the
        same way (SGLang's one-shot drops the inner text of such a block, and
        all text after the first block).  A value written ``null`` is
        ``null``; a parameter schema's ``$ref`` is resolved."""

        resolve_refs = True

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self._reader = _BlockReader(_DOTS_OPEN, _DOTS_CLOSE, json_body=True)
            self._early = False  # the open block's call went out before its end marker
            self._next_call = 0
            self._drop = self.stream_drop_unknown

        def _format_cls(self) -> Any:
            return _null_text_class(self._rc_tools.get_parser_cls(self.tool_format))()

        def parse_streaming_increment(self, new_text: str, tools: Any):
            if tools is not self._schemas_for:
                self._use_tools(tools)
            out: list = []
            if new_text:
                self._reader.feed(str(new_text), self, out)
            return self._result(out)

        def finish(self, tools: Any):
            if tools is not self._schemas_for:
                self._use_tools(tools)
            out: list = []
            self._reader.finish(self, out)
            return self._result(out)

        def _flush_pending_normal_text(self) -> str:
            return self._reader.flush_text()

        @staticmethod
        def _result(out: list):
            if not out:
                return _fc_normal_result("")
            if len(out) == 1 and type(out[0]) is str:
                return _fc_normal_result(out[0])
            return _fc_result("".join(x for x in out if type(x) is str), [x for x in out if type(x) is not str])

        def detect_and_parse(self, text: str, tools: Any):
            d = type(self)()
            d._drop = self.drop_unknown
            d._use_tools(tools)
            out: list = []
            d._reader.feed(text, d, out)
            d._reader.finish(d, out)
            merged: dict[int, list] = {}
            for x in out:
                if type(x) is not str:
                    m = merged.setdefault(x.tool_index, [None, []])
                    m[0] = m[0] or x.name
                    m[1].append(x.parameters or "")
            names = d._tool_names
            calls = [_ToolCallItem(tool_index=names.get(n, -1) if self.index_mode == "tools" else k, name=n,
                                   parameters="".join(a)) for k, (n, a) in sorted(merged.items())]
            return _FcResult(normal_text="".join(x for x in out if type(x) is str), calls=calls)

        def _read_block(self, block: str) -> Optional[list]:
            """The calls of one whole block, or None when it does not parse."""
            p = self._new_parser(self.undeclared_stream)
            self._set_schemas(p, self._schemas_for if self._schemas_for is not _UNSEEN else None)
            try:
                return p.parse_complete(block).tool_calls
            except ValueError:
                return None

        def _listed(self, name: str) -> bool:
            return name in self._tool_names or not self._drop or _forward_unknown()

        # what the block reader hands over, in stream order
        def _block_text(self, piece: str, out: list) -> None:
            out.append(piece)

        def _block_done(self, block: str, out: list, final: bool = False) -> None:
            early, self._early = self._early, False
            calls = self._read_block(block + _DOTS_CLOSE if final else block)
            kept = [c for c in calls if self._listed(c.name)] if calls else []
            if not kept:
                if not early or calls is None:  # SGLang: a body that does not parse is text even then
                    text = self._reader.inner_text(block, final)
                    if text:
                        out.append(text)
                return
            if early:
                first, slot = kept.pop(0), self._emitted - 1
                args, sent = _normal_json(first.arguments), self.streamed_args_for_tool[slot]
                if args.startswith(sent) and len(args) > len(sent):
                    self._add_args(self._next_call - 1, slot, args[len(sent):])
                    out.append(_fc_item(slot, None, args[len(sent):]))
            for c in kept:
                self._send(c, out)

        def _send(self, c: Any, out: list) -> None:
            args = _normal_json(c.arguments)
            i, self._next_call = self._next_call, self._next_call + 1
            slot = self._open_call(i, c.name)
            self._add_args(i, slot, args)
            out.append(_fc_item(slot, c.name, args))

        def _block_open(self, out: list) -> None:
            # A JSON body whose object is complete goes out before the end marker
            # (SGLang: the name with empty arguments, then the arguments).
            if self._early:
                return
            block = self._reader.json_block()
            if block is None:
                return
            calls = self._read_block(block + _DOTS_CLOSE)
            if not calls or len(calls) != 1 or not self._listed(calls[0].name):
                return
            c, args = calls[0], _normal_json(calls[0].arguments)
            i, self._next_call = self._next_call, self._next_call + 1
            slot = self._open_call(i, c.name)
            out.append(_fc_item(slot, c.name, ""))
            self._add_args(i, slot, args)
            out.append(_fc_item(slot, None, args))
            self._early = True

    # How SGLang's detectors shape the one-shot text before the first call.
    _ONESHOT_NORMAL = {**dict.fromkeys(("hermes", "qwen25", "qwen", "deepseekv3", "deepseekv31", "glm45", "glm",
                                        "mistral"), "strip"),
                       "qwen3_coder": "prefix", "kimi_k2": "prefix"}

    # Values of parameters no schema declares (a tool the request does not
    # list included), (one-shot, streamed), as SGLang's detectors read them.
    _UNDECLARED = {"qwen3_coder": (True, True), "minimax-m2": (True, True),
                   "glm45": (False, "all"), "glm": (False, "all")}

    def _forwarded(attr: str) -> Any:
        def method(self, *args: Any, **kwargs: Any) -> Any:
            native = self._native
            if native is None:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")
            return getattr(native, attr)(*args, **kwargs)

        method.__name__ = method.__qualname__ = attr
        method.__doc__ = f"SGLang's detector's ``{attr}``, run by that detector (one that parsed nothing)."
        return method

    def _native_methods(name: str, base: type) -> dict[str, Any]:
        # What SGLang's detector class of this name has and ours lacks: its
        # static and class methods (e.g. PythonicDetector._text_strip),
        # answered by that class; its methods (helpers its tests and callers
        # use, e.g. Mistral's ``_extract_json_array``), run by SGLang's own
        # detector: state is never borrowed from a detector that parsed nothing.
        out: dict[str, Any] = {}
        original = _ORIGINAL_TOOL_DETECTORS.get(name)
        if original is None:
            return out
        for cls_ in original.__mro__:
            if cls_ is _BaseFormatDetector or cls_ is object:
                break
            for attr, value in vars(cls_).items():
                if attr in out or attr.startswith("__") or hasattr(base, attr):
                    continue
                if isinstance(value, (staticmethod, classmethod)):
                    out[attr] = staticmethod(getattr(original, attr))
                elif inspect.isfunction(value):
                    out[attr] = _forwarded(attr)
        return out

    def _make_tool_class(name: str, fmt: str, index_mode: str, drop_unknown: bool, stream_drop: bool) -> type:
        cls_name = "".join(p.capitalize() for p in re.split(r"[_-]", name)) + "RcDetector"
        original = _ORIGINAL_TOOL_DETECTORS.get(name)
        base = _DotsBlocks if fmt == "dots" else (
            _HeldArgs if original is not None and original.__name__ == "Qwen3CoderDetector" else
            _MistralHeld if original is not None and original.__name__ == "MistralDetector" else RcToolDetector)
        extra = _native_methods(name, base)
        if original is not None and hasattr(original, "flush_pending_normal_text"):
            extra["flush_pending_normal_text"] = base._flush_pending_normal_text
        return type(cls_name, (base,), {**extra,
                                                   "sglang_name": name, "tool_format": fmt, "index_mode": index_mode,
                                                   "drop_unknown": drop_unknown, "stream_drop_unknown": stream_drop,
                                                   "oneshot_normal": _ONESHOT_NORMAL.get(name),
                                                   "undeclared_oneshot": _UNDECLARED.get(name, (False, False))[0],
                                                   "undeclared_stream": _UNDECLARED.get(name, (False, False))[1],
                                                   "stream_drop_ws_after_call": name in ("qwen25", "qwen"),
                                                   "oneshot_unclosed_is_text": name == "minimax-m2",
                                                   "__module__": __name__})

    TOOL_DETECTORS.update({n: _make_tool_class(n, *spec) for n, spec in _TOOL_NAMES.items()})


# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------

def register(replace: bool = False) -> None:
    """Add every detector to SGLang's maps: ``rc_<name>``, or SGLang's own
    names with ``replace=True`` (replacing SGLang's detectors).  Idempotent."""
    dm = _SglReasoningParser.DetectorMap
    for name, cls in REASONING_DETECTORS.items():
        key = name if replace else f"rc_{name}"
        if dm.get(key) is not cls:
            dm[key] = cls
    if TOOL_DETECTORS:
        m = _FunctionCallParser.ToolCallParserEnum
        for name, cls in TOOL_DETECTORS.items():
            key = name if replace else f"rc_{name}"
            if m.get(key) is not cls:
                m[key] = cls
