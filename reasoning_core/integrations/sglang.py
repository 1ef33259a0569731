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
import shown in ``../shared/peers/README.md``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional



def _import_parser_modules():
    """SGLang's reasoning-parser module.

    Imported normally when ``import sglang`` works.  SGLang's package
    ``__init__`` pulls its whole serving runtime (triton, CUDA kernels); where
    that runtime cannot import (a CPU-only install) but the package is there,
    the package is entered without its ``__init__`` (the parser modules need
    none of it), as ``../shared/peers/README.md`` describes.
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
from .._tables import SEEDED
from ..text import TextReasoningParser

__all__ = [
    "REASONING_DETECTORS",
    "TOOL_DETECTORS",
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
    "gpt-oss": _Spec("<|channel|>analysis<|message|>", "<|end|>", force=True, force_fixed=False),
    "k2_horizon": _Spec("<ifm|think>", "</ifm|think>", tool_start="<ifm|tool_call", force=True,
                        requires_force=True),
    "kimi": _Spec("◁think▷", "◁/think▷", force_fixed=False),
    "kimi_k2": _Spec(tool_start="<|tool_calls_section_begin|>", reasoning_default="thinking"),
    "kimi_k3": _Spec("<|open|>think<|sep|>", "<|close|>think<|sep|>", tool_start="<|open|>tools<|sep|>",
                     force=True, reasoning_default="thinking"),
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
        # The start state, as SGLang's detector decides it (previous_content
        # of a continued assistant message overrides force_reasoning).
        inside = bool(self._in_reasoning)
        self._inside = inside
        self._tp = self._text_parser()
        self._feed = self._tp.feed
        self._plain = stream_reasoning and not force_nonempty_content and not spec.append_think \
            and not spec.drop_leading_end and not spec.lstrip_content_newlines
        self._first = True
        self._pending_reasoning: list[str] = []
        self._acc_reasoning: list[str] = []
        self._seen_reasoning = inside
        self._content_started = False
        self._lead = ""
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
        tp = TextReasoningParser(fam, starts_in_reasoning=True)
        if fam.awaiting_start:
            # Inside a block the output did not open (Gemma 4's forced thought
            # channel), not awaiting its start: the engine's seeded state (a
            # first start re-opens the block).  The label belongs to the
            # template's start, so it is not stripped from the output's head.
            tp.seed(SEEDED)
            fmt = tp._fmt
            if fmt is not None:
                fmt.flush()
        return tp

    # -- one shot ---------------------------------------------------------------
    def detect_and_parse(self, text: str) -> StreamingParseResult:
        spec = self.spec
        if spec.append_think:
            return _result(spec.start + text, "")
        if spec.drop_leading_end and not self._inside:
            stripped = text.lstrip()
            if stripped.startswith(spec.end):
                text = stripped[len(spec.end):]
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
            self._lead += new_text
            stripped = self._lead.lstrip()
            if not stripped:
                return _result("", "")
            if len(stripped) < len(spec.end) and spec.end.startswith(stripped):
                return _result("", "")
            self._lead_checked = True
            new_text = stripped[len(spec.end):] if stripped.startswith(spec.end) else self._lead
            self._lead = ""
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
        return _result(c, r)

    def finish(self) -> StreamingParseResult:
        """End of the stream (SGLang's ``parse_stream_end``): held text and,
        with ``stream_reasoning=False``, reasoning never closed are released."""
        spec = self.spec
        if spec.append_think:
            return _result("", "")
        if not self._lead_checked:
            lead, self._lead, self._lead_checked = self._lead, "", True
            return _result(lead, "")
        was = self._tp.is_reasoning
        r, c = self._tp.finish()
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


def _make_class(name: str, spec: _Spec) -> type[RcReasoningDetector]:
    cls_name = "".join(p.capitalize() for p in name.replace("-", "_").split("_")) + "RcDetector"
    ns: dict[str, Any] = {"sglang_name": name, "spec": spec, "__module__": __name__}
    if spec.wants_tokenizer or name == "k2_horizon":
        # SGLang passes tokenizer= / reasoning_effort= only when the signature names them.
        def __init__(self, stream_reasoning=True, force_reasoning=None, continue_final_message=False,
                     previous_content="", tokenizer=None, force_nonempty_content=False, reasoning_effort="high"):
            RcReasoningDetector.__init__(self, stream_reasoning, force_reasoning, continue_final_message,
                                         previous_content, force_nonempty_content, tokenizer=tokenizer,
                                         reasoning_effort=reasoning_effort)
        ns["__init__"] = __init__
    return type(cls_name, (RcReasoningDetector,), ns)


REASONING_DETECTORS: dict[str, type[RcReasoningDetector]] = {
    name: _make_class(name, spec) for name, spec in _SPECS.items()
}


# ---------------------------------------------------------------------------
# Function-call detectors
# ---------------------------------------------------------------------------

TOOL_DETECTORS: dict[str, type] = {}


def _build_tool_detectors() -> None:
    from . import _sglang_tools  # noqa: F401  (fills TOOL_DETECTORS)


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
        from sglang.srt.function_call.function_call_parser import FunctionCallParser

        m = FunctionCallParser.ToolCallParserEnum
        for name, cls in TOOL_DETECTORS.items():
            key = name if replace else f"rc_{name}"
            if m.get(key) is not cls:
                m[key] = cls
