"""reasoning-core inside vllm-mlx: reasoning and tool parsers under vllm-mlx's names.

``REASONING_PARSERS`` maps each name of ``vllm_mlx.reasoning.list_parsers()``
to a subclass of vllm-mlx's ``ReasoningParser``; ``TOOL_PARSERS`` maps the
vllm-mlx tool-parser names we have a format for to subclasses of its
``ToolParser`` over ``reasoning_core.tools`` (``TOOL_NOT_SERVED``: the rest,
with why).  Where vllm-mlx's parser of a name reads several forms (hermes,
qwen, llama, kimi, …) ours is composed of our formats: each form's markup is
found in the new delta only, and the block is read by our parser for it.  ``register()`` adds them to vllm-mlx's registries as ``rc_<name>``
(``replace=True``: under vllm-mlx's own names).

vllm-mlx has no plugin hook, so the one command is::

    python -m reasoning_core.integrations.vllm_mlx serve MODEL \\
        --reasoning-parser rc_qwen3 --tool-call-parser rc_hermes

which registers, then runs vllm-mlx's own CLI unchanged
(``REASONING_CORE_REPLACE=1``: our classes under vllm-mlx's own names).

Under a vllm-mlx name each class answers what vllm-mlx's parser of that name
answers (the streaming start state and ``implicit_mode``, ``None`` rather than
``""``, ``finalize_stream``, one-shot stripping and block joining) with the
marker work done by reasoning-core's text engine: one engine call per streamed
delta, never a scan of ``current_text``.  The differences (where vllm-mlx's
parser loses or misplaces text) are listed in ``docs/engines/vllm-mlx.md``.
"""
from __future__ import annotations

import logging
import os
import re
import secrets
import sys
from dataclasses import dataclass, replace as _replace
from typing import Any, Optional

try:
    import vllm_mlx.reasoning as _mlx_reasoning
    from vllm_mlx.reasoning.base import DeltaMessage, ReasoningParser as _MlxReasoningParser
except ImportError as exc:  # pragma: no cover - exercised without vllm-mlx
    raise ImportError(
        "reasoning_core.integrations.vllm_mlx needs the 'vllm-mlx' package (pip install vllm-mlx); "
        "the rest of reasoning_core works without it"
    ) from exc

from .._tables import SEG_CONTENT, SEG_DELIMITER, SEG_HELD, SEG_REASONING, SEG_START, REASONING, SEEDED
from .._dispatch import resolve_backend
from ..families import Family, get_family
from ..tools._base import new_call_id as _pooled_id
from ..text import TextReasoningParser
from . import replace_requested

__all__ = [
    "REASONING_PARSERS",
    "TOOL_PARSERS",
    "TOOL_NOT_SERVED",
    "RcMlxReasoningParser",
    "register",
    "main",
]

# ---------------------------------------------------------------------------
# Per-name behaviour
# ---------------------------------------------------------------------------

_DSML_TOOL_CALLS = "<\uff5cDSML\uff5ctool_calls>"
_BOX = ("<|begin_of_box|>", "<|end_of_box|>")


def _think_family(name: str, base: str, start: str, end: str, terminators: tuple = ()) -> Family:
    # vllm-mlx's think parsers know exactly their two tags (no turn
    # boundaries, no tool-call terminators): a row with just those.
    return _replace(get_family(base), name=name, start=(start,), end=(end,), terminators=terminators,
                    header_terminators=(), headers=(), frames=(), boundaries=(), enable=(),
                    awaiting_start=False, label=None)


@dataclass(frozen=True)
class _Spec:
    """What vllm-mlx's parser of one name does, in our terms.

    kind "think": vllm-mlx's ``BaseThinkingReasoningParser`` (streaming starts
    in its ``pre_think`` phase: a leading start tag is consumed, untagged text
    is reasoning; after the end the content's leading whitespace and any
    further leading blocks are absorbed); "gemma4" (untagged text is content,
    the channel label is stripped); "gpt_oss" / "harmony" (channels).
    """

    family: Family
    kind: str = "think"
    # streaming: the row with <tool_call> as a terminator (a tool call opened
    # inside reasoning is promoted to content); None: ``family``
    stream_family: Optional[Family] = None
    # one-shot: no end tag -> (None, output) even when a start tag is there
    oneshot_needs_end: bool = False
    # untagged streamed text is content unless reset_state(implicit_mode=True) (glm4)
    untagged_content: bool = False
    # GLM-4.6V box tags are removed everywhere
    strip_box: bool = False
    # one "\n" next to the end tag is trimmed on both sides (step3p5)
    trim_end_newline: bool = False
    # the DSML tool-call opener ends reasoning (deepseek_v4); one-shot rule too
    tool_marker: Optional[str] = None


def _gpt_oss_family() -> Family:
    # vllm-mlx's gpt_oss also reads the final channel's constrained form
    # (``<|channel|>final <|constrain|>JSON<|message|>``).
    fam = get_family("gpt_oss")
    extra = tuple(f"{pre}<|channel|>final <|constrain|>{fmt}<|message|>"
                  for pre in ("<|start|>assistant", "") for fmt in ("JSON", "json"))
    # vllm-mlx's harmony parser also reads headers with a newline before <|message|>
    loose_starts = ("<|channel|>analysis\n<|message|>",)
    loose_headers = ("<|channel|>final\n<|message|>",)
    return _replace(fam, name="vllm_mlx_gpt_oss", start=fam.start + loose_starts,
                    headers=extra + loose_headers + fam.headers)


_GPT_OSS = _gpt_oss_family()
# vllm-mlx's gemma4: no tool-call terminator inside the thought channel, and
# ``<|channel>response`` ends it as ``<channel|>`` does.
_GEMMA4 = _replace(get_family("gemma4"), name="vllm_mlx_gemma4", terminators=(),
                   end=("<channel|>", "<|channel>response"))
_TC_OPEN, _TC_CLOSE = "<tool_call>", "</tool_call>"
_THINK = _think_family("vllm_mlx_think", "deepseek_r1", "<think>", "</think>")
_THINK_TC = _think_family("vllm_mlx_think_tc", "deepseek_r1", "<think>", "</think>", terminators=(_TC_OPEN,))
_V4 = _think_family("vllm_mlx_deepseek_v4", "deepseek_r1", "<think>", "</think>", terminators=(_DSML_TOOL_CALLS,))
_V4_TC = _think_family("vllm_mlx_deepseek_v4_tc", "deepseek_r1", "<think>", "</think>",
                       terminators=(_DSML_TOOL_CALLS, _TC_OPEN))
_MISTRAL = _think_family("vllm_mlx_mistral", "deepseek_r1", "[THINK]", "[/THINK]")
_MISTRAL_TC = _think_family("vllm_mlx_mistral_tc", "deepseek_r1", "[THINK]", "[/THINK]", terminators=(_TC_OPEN,))
_SPECS: dict[str, _Spec] = {
    "qwen3": _Spec(_THINK, oneshot_needs_end=True, stream_family=_THINK_TC),
    "deepseek_r1": _Spec(_THINK, stream_family=_THINK_TC),
    "deepseek_v4": _Spec(_V4, tool_marker=_DSML_TOOL_CALLS, stream_family=_V4_TC),
    "gpt_oss": _Spec(_GPT_OSS, kind="gpt_oss"),
    "harmony": _Spec(_GPT_OSS, kind="harmony"),
    "gemma4": _Spec(_GEMMA4, kind="gemma4"),
    "glm4": _Spec(_THINK, untagged_content=True, strip_box=True, stream_family=_THINK_TC),
    "mistral": _Spec(_MISTRAL, oneshot_needs_end=True, stream_family=_MISTRAL_TC),
    "poolside_v1": _Spec(_THINK, oneshot_needs_end=True, stream_family=_THINK_TC),
    "step3p5": _Spec(_THINK, trim_end_newline=True, stream_family=_THINK_TC),
}


def _msg(reasoning: str, content: str) -> Optional[DeltaMessage]:
    if not reasoning and not content:
        return None
    return DeltaMessage(reasoning=reasoning or None, content=content or None)


def _none_if_empty(s: Optional[str]) -> Optional[str]:
    return s if s else None


_log = logging.getLogger(__name__)
_HARMONY_TOKENS = re.compile(r"<\|start\|>(?:assistant)?|<\|end\|>|<\|return\|>|<\|call\|>")
_HARMONY_TOKEN_TEXTS = ("<|start|>assistant", "<|end|>", "<|return|>", "<|call|>")  # what _HARMONY_TOKENS takes out


def _may_become_token(s: str) -> bool:
    """Whether ``s`` is a proper prefix of a token ``_HARMONY_TOKENS`` takes
    out (the rest of it may come in the next delta)."""
    return any(t.startswith(s) and t != s for t in _HARMONY_TOKEN_TEXTS)


def _held_tail(text: str, markers: tuple) -> int:
    """Where the longest suffix of ``text`` that is a proper prefix of one of
    ``markers`` (each begins with ``<``) begins, ``len(text)`` when none: that
    text waits for the next delta, as it may still become the marker."""
    i = text.find("<", max(0, len(text) - max(map(len, markers)) + 1))
    while i >= 0:
        rest = text[i:]
        if any(m.startswith(rest) and m != rest for m in markers):
            return i
        i = text.find("<", i + 1)
    return len(text)


def _untokened(text: str, final: bool) -> tuple:
    """``(text without the tokens _HARMONY_TOKENS takes out, the tail held)``:
    a tail that may still become one of them (split across deltas) is held
    for the next delta (``final``: none is, it is text), so what is taken out
    does not depend on the deltas."""
    cut = len(text) if final else _held_tail(text, _HARMONY_TOKEN_TEXTS)
    out = text[:cut]
    return (_HARMONY_TOKENS.sub("", out) if "<|" in out else out), text[cut:]


def _harmony_head(c: str) -> tuple:
    """``(c without the whitespace and _HARMONY_TOKENS in front of its first
    other character, "")``, or ``("", rest)`` when the rest may still become
    one of those tokens (it waits for the next delta)."""
    while True:
        c = c.lstrip()
        if c[:1] != "<":
            return c, ""
        if _may_become_token(c):
            return "", c
        m = _HARMONY_TOKENS.match(c)
        if m is None:
            return c, ""
        c = c[m.end():]


_TC_CLOSED = re.compile(r"<tool_call>.*?</tool_call>", re.S)
_TC_UNCLOSED = re.compile(r"<tool_call>\s*[{<].*$", re.S)


def _promote_tool_calls(reasoning: Optional[str], content: Optional[str]) -> tuple[Optional[str], Optional[str]]:
    """vllm-mlx's think parsers move tool calls written inside reasoning to the
    content: closed ones after it (one per line), an unclosed one at the
    reasoning's end before it."""
    if not reasoning or _TC_OPEN not in reasoning:
        return reasoning, content
    closed = _TC_CLOSED.findall(reasoning)
    rest = _TC_CLOSED.sub("", reasoning)
    m = _TC_UNCLOSED.search(rest)
    if not closed and m is None:
        return reasoning, content
    _log.warning("promoted %d tool_call block(s) written inside reasoning to content",
                 len(closed) + (m is not None))
    parts = []
    if m is not None:
        parts.append(m.group(0))
        rest = rest[:m.start()]
    if content:
        parts.append(content)
    parts.extend(closed)
    merged = "\n".join(parts).strip()
    return _none_if_empty(rest.strip()), _none_if_empty(merged)


def _gemma_clean(text: str) -> str:
    """Gemma 4 text with its channel tokens, and channel names standing on
    their own line or leading the text, removed; stripped."""
    text = text.replace("<channel|>", "").replace("<|channel>", "")
    text = "\n".join(ln for ln in text.split("\n") if ln.strip() not in ("thought", "response")).strip()
    for name in ("thought", "response"):
        if text.startswith(name) and (len(text) == len(name) or not text[len(name)].isalpha()):
            text = text[len(name):]
            break
    return text.strip()


# ---------------------------------------------------------------------------
# The reasoning parser
# ---------------------------------------------------------------------------

class RcMlxReasoningParser(_MlxReasoningParser):
    """A vllm-mlx reasoning parser over one reasoning-core family.

    One instance per request, as vllm-mlx's server builds them
    (``_build_reasoning_parser``); ``reset_state(implicit_mode=...)`` starts a
    new stream.  Per streamed delta: one engine ``feed`` of the delta plus
    O(1) bookkeeping; ``previous_text`` and ``current_text`` are not read.
    """

    mlx_name: str = ""
    spec: _Spec = _Spec(_THINK)

    def __init__(self, tokenizer: Any = None) -> None:
        super().__init__(tokenizer)
        self.reset_state()

    # -- the start state ------------------------------------------------------------
    @property
    def start_token(self) -> str:
        return self.spec.family.start[0]

    @property
    def end_token(self) -> str:
        return self.spec.family.end[0]

    def _starts_in(self, implicit: bool):
        kind = self.spec.kind
        if kind == "think":
            if self.spec.untagged_content and not implicit:
                return False
            return True  # vllm-mlx's pre_think: a leading start is consumed, untagged text is reasoning
        return None  # the family's own (gemma4: awaiting its channel; gpt_oss: channels)

    def reset_state(self, implicit_mode: bool = False) -> None:
        self._implicit = bool(implicit_mode)
        self._tp = TextReasoningParser(self.spec.stream_family or self.spec.family,
                                       starts_in_reasoning=self._starts_in(self._implicit))
        self._promote = self.spec.stream_family is not None
        self._trim = self.spec.trim_end_newline
        self._tc: Optional[str] = None  # a tool call opened inside reasoning, buffered until it closes
        self._opened = False            # an explicit start tag was seen (vllm-mlx promotes only then)
        self._feed = self._tp.feed
        self._content_started = False
        self._nl = ""          # step3p5: a reasoning "\n" held until we know it precedes the end
        self._fast = self.spec.kind in ("gpt_oss", "harmony")
        self._gemma = self.spec.kind == "gemma4"
        self._head = ""       # think / harmony: a partial end tag / token held before the answer's first character
        self._tagged = False  # glm4: a tag was seen while streaming untagged content
        self._fresh = False   # gemma4: right after a channel end, before the answer's first text
        self._gtail = ""      # gemma4: content that may still become the channel end token
        self._boxh = ""       # strip_box: text that may still become a box token (not fed yet)
        self._box_final = False  # finalize_stream: the held text is fed as it is
        self._install_hot_path()

    def _install_hot_path(self) -> None:
        """Bind this stream's per-delta call as an instance attribute: the
        common chunks (reasoning only; the answer under way) cost one engine
        ``feed`` and one ``DeltaMessage``, the rest go to the general path."""
        spec = self.spec
        tp = self._tp
        feed = tp.feed
        dm = DeltaMessage
        if spec.kind == "gpt_oss":
            side_of = tp._feed_text  # the engine's step (TextReasoningParser.feed, its common case inlined)

            def extract_reasoning_streaming(previous_text: Any, current_text: Any,
                                            delta_text: str) -> Optional[DeltaMessage]:
                if not delta_text:
                    return None
                if tp._fmt is None and delta_text.__class__ is str:
                    side = side_of(delta_text)
                    if side.__class__ is int:  # the chunk wholly on one side, nothing held
                        return dm(None, delta_text, None) if side == SEG_CONTENT else dm(None, None, delta_text)
                    r, c = tp._feed_slow(delta_text, side[0])
                else:
                    r, c = feed(delta_text)
                if r or c:
                    return dm(None, c or None, r or None)
                return None
        elif spec.kind == "harmony":
            me = self
            side_of = tp._feed_text

            def extract_reasoning_streaming(previous_text: Any, current_text: Any,
                                            delta_text: str) -> Optional[DeltaMessage]:
                if not delta_text:
                    return None
                if tp._fmt is None and delta_text.__class__ is str:
                    side = side_of(delta_text)
                    if side.__class__ is int:  # the chunk wholly on one side, nothing held
                        if side != SEG_CONTENT:
                            return dm(None, None, delta_text)
                        if me._content_started and not me._head and "<" not in delta_text:
                            return dm(None, delta_text, None)
                        r, c = "", delta_text
                    else:
                        r, c = tp._feed_slow(delta_text, side[0])
                else:
                    r, c = feed(delta_text)
                if c:
                    # vllm-mlx's harmony streams only message text: the
                    # <|start|> / role text and the whitespace between
                    # messages before the answer are not content, and no
                    # token is (as one-shot: a token split across deltas
                    # waits until it is one or cannot be)
                    if not me._content_started:
                        c, me._head = _harmony_head(me._head + c)
                        if c:
                            me._content_started = True
                            if "<" in c:
                                c, me._head = _untokened(c, False)
                    elif me._head or "<" in c:
                        c, me._head = _untokened(me._head + c, False)
                if r or c:
                    return dm(None, c or None, r or None)
                return None
        elif spec.kind == "think" and spec.stream_family is not None:
            eng = tp._engine
            inside = (REASONING, SEEDED)
            slow = self._promote_slow
            box, trim, untagged = spec.strip_box, spec.trim_end_newline, spec.untagged_content
            end = self.end_token
            end_tail = len(end) - 1  # (the longest proper prefix of the end tag)

            def extract_reasoning_streaming(previous_text: Any, current_text: Any,
                                            delta_text: str) -> Optional[DeltaMessage]:
                if not delta_text:
                    return None
                if box and (self._boxh or "<" in delta_text):
                    delta_text = self._unboxed(delta_text)
                    if not delta_text:
                        return None
                if self._tc is not None:
                    return self._tc_step(delta_text)
                held = tp._held
                was = eng.state in inside
                r, c = feed(delta_text)
                if not c:
                    if not r:
                        if self._nl and eng.state not in inside:
                            self._nl = ""  # the end followed the held "\n" (what comes after it is held)
                        return None
                    if not trim or (not self._nl and r[-1] != "\n"):
                        return dm(None, None, r)
                    return self._shape(r, "", eng.state in inside)
                if not was and not r:
                    if self._content_started:
                        return dm(None, c, None)  # the answer under way
                    if untagged and not self._tagged and not tp._seen and end not in c \
                            and not self._head and "<" not in c[-end_tail:]:
                        return dm(None, c, None)  # glm4: untagged content, as it comes
                return slow(held, delta_text, was, r, c)
        else:
            self.__dict__.pop("extract_reasoning_streaming", None)
            return
        self.extract_reasoning_streaming = extract_reasoning_streaming  # type: ignore[method-assign]

    # -- streaming ------------------------------------------------------------------
    def extract_reasoning_streaming(self, previous_text: str, current_text: str,
                                    delta_text: str) -> Optional[DeltaMessage]:
        if not delta_text:
            return None
        spec = self.spec
        if spec.strip_box and (self._boxh or "<" in delta_text):
            delta_text = self._unboxed(delta_text)
            if not delta_text:
                return None
        if self._gemma:
            tp = self._tp
            was = tp.is_reasoning
            pre = tp._held + delta_text if tp._engine.held else delta_text
            r, c = self._feed(delta_text)
            # a channel that ended here (whether it began in this delta or
            # before): the answer's opening newlines after it are trimmed
            if not tp.is_reasoning and (was or self.end_token in pre[:len(pre) - len(c)]):
                self._fresh = True
            return _msg(r, self._gemma_content(c) if c else c)
        if self._fast:
            r, c = self._feed(delta_text)
            return _msg(r, c)
        if self._promote:
            return self._promoting_step(delta_text)
        r, c = self._feed(delta_text)
        return self._shape(r, c, self._tp.is_reasoning)

    # -- tool calls written inside reasoning (vllm-mlx's think parsers promote them) --
    def _after_feed(self, held: str, delta: str, was: bool, r: str, c: str) -> tuple[str, str, bool]:
        """After the engine fed ``delta`` (``held`` was its held text, ``was``
        its side before): ``(reasoning, content, opened)``, ``opened`` saying
        a ``<tool_call>`` inside an explicitly opened block began the content
        (it then heads ``content``)."""
        tp = self._tp
        self._opened = self._opened or tp.start_seen
        pre = held + delta
        # the call is inside a block when the delta began in one, or one
        # opened in it before the call (reasoning came, or the start tag)
        starts = self.spec.family.start
        inside = was or bool(r) or bool(starts) and starts[0] in pre[:len(pre) - len(c)]
        # (c is a suffix of pre: the end tag must not come before the tool call)
        while inside and not tp.is_reasoning and c.startswith(_TC_OPEN) \
                and self.end_token not in pre[:len(pre) - len(c)]:
            if self._opened:
                return r, c, True
            # before an explicit start tag vllm-mlx streams the tool call as
            # reasoning (what the engine held after it is read again with it)
            rest = c[len(_TC_OPEN):] + (tp._held if tp._engine.held else "")
            tp.seed(REASONING)
            r2, c = self._feed(rest)
            r += _TC_OPEN + r2
            pre = c
        return r, c, False

    def _promoting_step(self, delta: str) -> Optional[DeltaMessage]:
        if self._tc is not None:
            return self._tc_step(delta)
        tp = self._tp
        held = tp._held
        was = tp.is_reasoning
        r, c = self._feed(delta)
        if not c:
            # the common case: reasoning (or nothing) only
            if not r:
                if self._nl and not tp.is_reasoning:
                    self._nl = ""  # the end followed the held "\n" (what comes after it is held)
                return None
            if not self._trim or (not self._nl and r[-1] != "\n"):
                return DeltaMessage(reasoning=r)
            return self._shape(r, c, tp.is_reasoning)
        if not was and self._content_started and not self._trim:
            # the answer is under way
            return DeltaMessage(reasoning=r or None, content=c)
        return self._promote_slow(held, delta, was, r, c)

    def _promote_slow(self, held: str, delta: str, was: bool, r: str, c: str) -> Optional[DeltaMessage]:
        tp = self._tp
        r, c, opened = self._after_feed(held, delta, was, r, c)
        if not opened:
            return self._shape(r, c, tp.is_reasoning)
        self._tc, self._tc_scan = "", 0
        # the engine is not fed again until the call closes: what it holds
        # after the call's opener (a possible tag's start) is the call's text
        r2, c2 = tp._release()
        m = self._tc_step(c + r2 + c2)
        if r:
            before = self._shape(r, "", True)
            head = (before.reasoning or "") if before is not None else ""
            if m is None:
                return _msg(head, "")
            return DeltaMessage(reasoning=head + (m.reasoning or "") or None, content=m.content)
        return m

    def _tc_step(self, delta: str) -> Optional[DeltaMessage]:
        buf = (self._tc or "") + delta
        scan = self._tc_scan
        end = self.end_token
        i = buf.find(_TC_CLOSE, scan)
        e = buf.find(end, scan)
        if i != -1:
            promoted, rest = buf[:i + len(_TC_CLOSE)], buf[i + len(_TC_CLOSE):]
            self._tc = None
            self._tp.seed(REASONING)
            m = self._promoting_step(rest) if rest else None
            r = ((m.reasoning or "").strip() if m is not None else "")
            c = promoted + ((m.content or "") if m is not None else "")
            return DeltaMessage(reasoning=r or None, content=c)
        if e != -1:
            promoted, after = buf[:e], buf[e + len(end):]
            self._tc = None
            self._tp.seed(0)  # content
            c = promoted + (self._content_head(self._feed(after)[1]) if after else "")
            return DeltaMessage(content=c) if c else None
        self._tc = buf
        self._tc_scan = max(0, len(buf) - max(len(_TC_CLOSE), len(end)) + 1)
        return None

    def _unboxed(self, text: str) -> str:
        """``text`` without GLM's box tokens (vllm-mlx's ``strip_box`` names
        drop them); a tail that may still become one waits for the next delta
        (at the end of the stream it is text)."""
        if self._boxh:
            text, self._boxh = self._boxh + text, ""
        if "<|" in text:
            text = text.replace(_BOX[0], "").replace(_BOX[1], "")
        if not self._box_final and "<" in text[1 - len(_BOX[0]):]:
            cut = _held_tail(text, _BOX)
            text, self._boxh = text[:cut], text[cut:]
        return text

    def _gemma_content(self, c: str, final: bool = False) -> str:
        # vllm-mlx's gemma4: channel end tokens are dropped from content, and
        # the newlines that open an answer after one are trimmed.  A tail that
        # may still become the token waits for the next delta.
        end = self.end_token
        if self._gtail:
            c, self._gtail = self._gtail + c, ""
        if not final and "<" in c[1 - len(end):]:
            cut = _held_tail(c, (end,))
            c, self._gtail = c[:cut], c[cut:]
        parts = c.split(end)
        out = []
        for i, part in enumerate(parts):
            if i:
                self._fresh = True
            if self._fresh:
                part = part.lstrip("\n")
                self._fresh = not part
            out.append(part)
        return "".join(out)

    def _shape(self, r: str, c: str, now_reasoning: bool) -> Optional[DeltaMessage]:
        spec = self.spec
        if spec.trim_end_newline:
            if r or self._nl:
                r = self._nl + r
                self._nl = ""
                if r.endswith("\n"):
                    # held while reasoning goes on; dropped when the end follows it
                    r = r[:-1]
                    if now_reasoning:
                        self._nl = "\n"
        if c and not self._content_started:
            tp = self._tp
            if spec.untagged_content and not self._tagged and not (tp.start_seen or tp.end_seen):
                # glm4 before any tag: content as it comes; a stray end tag
                # is dropped and the answer starts afresh after it (a tail
                # that may still become one waits for the next delta, so a
                # tag split across deltas is dropped as a whole one is)
                end = self.end_token
                if self._head:
                    c, self._head = self._head + c, ""
                if end in c:
                    pre, _, post = c.rpartition(end)
                    self._tagged = True
                    c = pre.replace(end, "") + self._content_head(post)
                else:
                    cut = _held_tail(c, (end,))
                    c, self._head = c[:cut], c[cut:]
            else:
                c = self._content_head(c)
        if not r and not c:
            return None
        return DeltaMessage(reasoning=r or None, content=c or None)

    def _content_head(self, c: str) -> str:
        """Before the answer's first character: whitespace and stray end tags
        are dropped (a partial end tag is held), as vllm-mlx's think parsers do."""
        h = self._head + c if self._head else c
        end = self.end_token
        while True:
            h = h.lstrip()
            if not h.startswith(end):
                break
            h = h[len(end):]
        if h and end.startswith(h):
            self._head = h
            return ""
        self._head = ""
        if h:
            self._content_started = True
        return h

    def finalize_stream(self) -> Optional[DeltaMessage]:
        first = None
        if self._boxh:  # (it never became a box token: text, read as any other)
            held, self._boxh = self._boxh, ""
            self._box_final = True
            try:
                first = self.extract_reasoning_streaming("", "", held)
            finally:
                self._box_final = False
        last = self._finalize()
        if first is None:
            return last
        if last is None:
            return first
        return _msg((first.reasoning or "") + (last.reasoning or ""), (first.content or "") + (last.content or ""))

    def _finalize(self) -> Optional[DeltaMessage]:
        if self._tc is not None:
            # an unclosed tool call opened inside reasoning: promoted as it is
            buf, self._tc = self._tc, None
            self._tp.reset()
            return DeltaMessage(content=buf) if buf else None
        was = self._tp.is_reasoning
        r, c = self._tp.finish()
        if self._fast:
            harmony = self.spec.kind == "harmony"
            if harmony and self._content_started:
                if self._head or "<" in c:
                    c, self._head = _untokened(self._head + c, True)[0], ""
            elif self._head or (c and not self._content_started):
                c, held = _harmony_head(self._head + c)
                if harmony and "<" in c:
                    c = _untokened(c, True)[0]
                c, self._head = c or held, ""  # a held partial token: text after all
            return _msg(r, c)
        if self._gemma:
            if was and not self._tp.is_reasoning:
                self._fresh = True
            return _msg(r, self._gemma_content(c, final=True) if (c or self._gtail) else c)
        if self.spec.trim_end_newline and self._nl:
            r, self._nl = self._nl + r, ""
        if self._head:
            c, self._head = self._head + c, ""  # a held partial end tag: text after all
        elif c and not self._content_started:
            c = self._content_head(c) + self._head
            self._head = ""
        return _msg(r, c)

    # -- one shot -------------------------------------------------------------------
    def _blocks(self, text: str, starts_in) -> tuple[list[str], str]:
        """The reasoning blocks and the content of a complete ``text``, as our
        engine splits it (one engine pass; leading whitespace between blocks
        is dropped, as vllm-mlx's one-shot does)."""
        tp = TextReasoningParser(self.spec.family, starts_in_reasoning=starts_in)
        eng = tp._mod.Engine(tp._tables)
        eng.set_state(tp._initial)
        segs, _ = eng.feed_text(text)
        pieces: list[tuple[int, str]] = []
        held: Optional[str] = None
        for kind, a, b in segs:
            if kind == SEG_HELD:
                held = text[a:b]
            else:
                pieces.append((kind, text[a:b]))
        if held is not None:
            state = eng.state
            side = SEG_REASONING if state in (REASONING, SEEDED) else SEG_CONTENT
            tail, _ = eng.finish()
            if tail:
                pieces.extend((side if k == SEG_HELD else k, held[a:b]) for k, a, b in tail)
            else:
                pieces.append((side, held))
        blocks: list[str] = []
        content: list[str] = []
        open_ = False
        for kind, piece in pieces:
            if kind == SEG_START:
                if "".join(content).strip():
                    content.append(piece)  # a start after the answer began stays text
                    continue
                content.clear()
                blocks.append("")
                open_ = True
            elif kind == SEG_REASONING:
                if not open_:
                    blocks.append("")
                    open_ = True
                blocks[-1] += piece
            elif kind == SEG_DELIMITER:
                open_ = False
            elif kind == SEG_CONTENT:
                if not "".join(content).strip():
                    piece = self._strip_leading_ends(piece)
                content.append(piece)
        label = self.spec.family.label
        if label:
            blocks = [b[len(label):] if b.startswith(label) else b for b in blocks]
        return blocks, "".join(content)

    def _strip_leading_ends(self, piece: str) -> str:
        ends = self.spec.family.end
        while True:
            head = piece.lstrip()
            for e in ends:
                if head.startswith(e):
                    piece = head[len(e):]
                    break
            else:
                return piece

    def extract_reasoning(self, model_output: str) -> tuple[Optional[str], Optional[str]]:
        if not isinstance(model_output, str):
            raise TypeError(f"model_output must be str, not {type(model_output).__name__}")
        spec = self.spec
        kind = spec.kind
        text = model_output
        if kind == "gpt_oss":
            return self._oneshot_gpt_oss(text)
        if kind == "harmony":
            return self._oneshot_harmony(text)
        if kind == "gemma4":
            return self._oneshot_gemma4(text)
        if spec.strip_box:
            text = text.replace(_BOX[0], "").replace(_BOX[1], "")
        start, end = self.start_token, self.end_token
        if spec.tool_marker is not None:
            t = text.find(spec.tool_marker)
            if t != -1:
                e = text.find(end)
                if e == -1 or e > t:
                    head = text[:t]
                    if head.startswith(start):
                        head = head[len(start):]
                    return _none_if_empty(head.strip()), _none_if_empty(text[t:])
        if end not in text:
            if spec.oneshot_needs_end or start not in text:
                return None, model_output if not spec.strip_box else text
            return _promote_tool_calls(_none_if_empty(text.partition(start)[2].strip()), None)
        blocks, content = self._blocks(text, True)
        reasoning = "\n".join(b.strip() for b in blocks if b.strip()).strip()
        return _promote_tool_calls(_none_if_empty(reasoning), _none_if_empty(content.strip()))

    def _oneshot_gemma4(self, text: str) -> tuple[Optional[str], Optional[str]]:
        # vllm-mlx's gemma4 one-shot: the reasoning runs from the first channel
        # opening to the LAST channel end (degenerate thought/response cycles
        # all count as reasoning), channel tokens and names removed.
        start, end, alt = "<|channel>", "<channel|>", "<|channel>response"
        if start in text and end in text:
            head, _, tail = text.partition(start)[2].rpartition(end)
        elif text.count(start) >= 2 and alt in text:
            after = text.partition(start)[2]
            i = after.rfind(alt)
            head, tail = after[:i], after[i + len(alt):]
        elif end in text:
            head, _, tail = text.rpartition(end)
        elif start in text:
            return _none_if_empty(_gemma_clean(text.partition(start)[2])), None
        else:
            return None, text
        return _none_if_empty(_gemma_clean(head)), _none_if_empty(_gemma_clean(tail))

    def _oneshot_gpt_oss(self, text: str) -> tuple[Optional[str], Optional[str]]:
        if "<|channel|>" not in text:
            return None, _none_if_empty(text)
        blocks, content = self._blocks(text, None)
        # vllm-mlx's gpt_oss reads the first analysis channel only
        reasoning = blocks[0].strip() if blocks else ""
        content = content.strip()
        if not reasoning and not content:
            return None, text
        return _none_if_empty(reasoning), _none_if_empty(content)

    def _oneshot_harmony(self, text: str) -> tuple[Optional[str], Optional[str]]:
        blocks, content = self._blocks(text, None)
        reasoning = "\n".join(b.strip() for b in blocks)
        # text between channels (<|start|>, role names) is not content to vllm-mlx's harmony
        content = _HARMONY_TOKENS.sub("", content).strip()
        return _none_if_empty(reasoning), _none_if_empty(content)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} vllm-mlx name={self.mlx_name!r} family={self.spec.family.name!r}>"


def _make_class(name: str, spec: _Spec) -> type[RcMlxReasoningParser]:
    cls_name = "".join(p.capitalize() for p in name.split("_")) + "RcMlxReasoningParser"
    return type(cls_name, (RcMlxReasoningParser,), {"mlx_name": name, "spec": spec, "__module__": __name__})


REASONING_PARSERS: dict[str, type[RcMlxReasoningParser]] = {n: _make_class(n, s) for n, s in _SPECS.items()}


# ---------------------------------------------------------------------------
# Tool parsers
# ---------------------------------------------------------------------------

from vllm_mlx.tool_parsers.abstract_tool_parser import (  # noqa: E402
    ExtractedToolCallInformation,
    ToolParser as _MlxToolParser,
    ToolParserManager,
)

# vllm-mlx tool-parser name -> our format.  A name is served where our
# format reads what vllm-mlx's parser of that name reads (checked on its own
# tool-parser tests); names whose vllm-mlx parser reads several forms are
# composed of our formats (_MULTI_NAMES below); the rest are listed in
# TOOL_NOT_SERVED with what keeps them out.
_TOOL_NAMES: dict[str, str] = {
    "deepseek": "deepseek_v3", "deepseek_v3": "deepseek_v3", "deepseek_r1": "deepseek_v3",
    "glm47": "glm45", "glm4": "glm45",
    "minimax": "minimax_m2", "minimax_m2": "minimax_m2",
    "nemotron": "qwen3_coder", "nemotron3": "qwen3_coder",
    "granite": "granite", "granite3": "granite",
    "xlam": "xlam",
}

_LENIENT = "vllm-mlx's parser of this name reads several formats"
TOOL_NOT_SERVED: dict[str, str] = {
    "auto": "vllm-mlx's auto parser guesses among all its formats per response; pick the model's own format",
    "generic": "alias of auto",
    "functionary": "MeetKai Functionary's format has no reasoning_core.tools parser",
    "meetkai": "alias of functionary",
}


def _new_id() -> str:
    """A call id in vllm-mlx's shape, ``call_`` and 8 hex digits, from the pool
    of OS randomness our tool parsers draw their ids from (one system call per
    64 ids, not a ``uuid4`` per call)."""
    return _pooled_id()[:13]


def _short_id(cid: Optional[str]) -> str:
    """vllm-mlx's shape of the id our parser gave a call (drawn from the same pool)."""
    return cid[:13] if cid and cid.startswith("call_") else _new_id()


_NOCUR = object()  # no current_text seen: never the previous_text of a call
_SLOW = object()  # a shortcut that does not apply: the general step reads the delta
_OPENERS: dict = {}  # class -> its markers that open a kept call (``RcMlxToolParser._openers``)
_TextGate = resolve_backend(None)[1].TextGate
_text_gate = resolve_backend(None)[1].text_gate


def _unseen(parser: Any, previous_text: Any, current_text: Any, delta_text: str) -> str:
    """The output before ``delta_text`` that ``parser`` was not shown ("" in
    the server's normal flow), and ``parser._fed`` moved past the delta.

    vllm-mlx's server passes text through as content until tool markup looks
    possible, then calls the tool parser with all of it as ``previous_text``;
    its tests also call with only ``current_text`` set.  What was not seen is
    read once (its content was sent already, so it is not sent again)."""
    fed = parser._fed
    if current_text.__class__ is str:
        end = len(current_text) - len(delta_text)
        src = current_text
    elif previous_text.__class__ is str:
        end = len(previous_text)
        src = previous_text
    else:
        parser._fed = fed + len(delta_text)
        return ""
    parser._fed = max(end, fed) + len(delta_text)
    return src[fed:end] if end > fed else ""


def _joined(first: dict, out: Optional[dict]) -> dict:
    """Two answers as one (kept deltas read before a delta): contents joined, and
    the entries of one call (same index) one entry, its argument pieces joined."""
    if not out:
        return first
    if out.get("content"):
        first["content"] = first.get("content", "") + out["content"]
    more = out.get("tool_calls")
    if more:
        calls = first.setdefault("tool_calls", [])
        at = {c.get("index"): c for c in calls}
        for c in more:
            prior = at.get(c.get("index"))
            if prior is None:
                calls.append(c)
                at[c.get("index")] = c
                continue
            fn, add = prior.setdefault("function", {}), c.get("function") or {}
            for k, v in c.items():
                if k != "function":
                    prior.setdefault(k, v)
            if add.get("name") and not fn.get("name"):
                fn["name"] = add["name"]
            if add.get("arguments"):
                fn["arguments"] = (fn.get("arguments") or "") + add["arguments"]
    return first


class RcMlxToolParser(_MlxToolParser):
    """A vllm-mlx tool parser over one ``reasoning_core.tools`` format.

    One-shot: vllm-mlx's think-tag stripping, then our parser; calls come back
    as vllm-mlx's ``{"id", "name", "arguments"}`` dicts.  Streaming: each delta
    is fed to our incremental parser (O(delta)); content is passed through and
    each call is sent whole, in vllm-mlx's streaming shape, once our parser
    closes it (``finalize_streaming`` sends what is still open at the end).
    """

    mlx_name: str = ""
    tool_format: str = ""
    SUPPORTS_NATIVE_TOOL_FORMAT = True

    def __init__(self, tokenizer: Any = None) -> None:
        super().__init__(tokenizer)
        from .. import tools as rc_tools

        self._rc_tools = rc_tools
        native = _ORIGINAL_TOOL_PARSERS.get(self.mlx_name)
        self.extra_stop_tokens = list(getattr(native, "extra_stop_tokens", []) or [])
        self.reset()
        self._install_fast_path()

    def reset(self) -> None:
        super().reset()
        self._parser = self._rc_tools.create(self.tool_format)
        self._sent = 0
        self._fed = 0  # characters of the output read so far
        # a stream ended with the parser waiting in plain content, nothing held: its
        # reset is left to the next stream's first delta (the general path) or end
        self._stale = False
        # the per-delta gate's state (the engine's TextGate): ``cur`` the current_text
        # of the last delta, ``idle`` what a plain delta gets next (1 passed through as
        # content, 2 dropped, 3 kept: inside a call, until a delta may end it; 0 read),
        # ``pend`` the deltas kept
        gate = self.__dict__.get("_gate")
        if gate is None:
            gate = self._gate = _TextGate(_NOCUR)
        else:  # a reused instance: the installed gate function keeps this object
            gate.cur, gate.idle, gate.pend, gate.done = _NOCUR, 0, [], []
        if type(self).reset is RcMlxToolParser.reset:
            self._prime()

    def _prime(self) -> None:
        """A fresh stream whose parser starts in plain content: the server's first
        previous_text is "" (one object), so the first plain delta takes the gate
        too.  The parser is started on no text (what any chunking reads first).
        Called at the end of ``reset`` (a subclass's, once its parser is made:
        one whose ``_idle_state`` reads that parser's lane)."""
        if self._fast:
            gate = self._gate
            self._parser._push("")
            gate.cur = ""
            if self._idle_state() == 1:
                gate.idle = 1
            else:
                gate.cur = _NOCUR

    # -- the per-delta fast path ----------------------------------------------------
    # A delta that continues the output we saw (``previous_text`` is the last
    # ``current_text``), while the parser waits in plain content with nothing
    # held, and that contains no character a marker of the format starts with,
    # is content as it is: it costs an identity test and a few ``in`` tests,
    # not a parser step.  Everything else takes the general path.
    _fast = True

    def _triggers(self) -> Optional[set]:
        """The characters a marker the parser looks for in content starts with."""
        p = self._parser
        cm = getattr(p, "_content_markers", None)
        return None if cm is None else {m[0] for m in cm.markers}

    def _idle_state(self) -> int:
        """After a delta: 1 when the next plain delta is content as it is, 2
        when it is dropped (no content streams), 0 when it must be read."""
        p = self._parser
        lane = p._lane
        if lane.__class__ is tuple and lane[0] is p._content_markers and p._pos == len(p._buf) \
                and p._rec is None:
            return 1
        if self._call_triggers and lane is not None and (
                p._cur is not None or lane.__class__ is not tuple or lane[1] != p._content) and (
                self._call_closers or (p._rec is None and p._pos == len(p._buf))):
            # inside a call, or in a tool section (not in content or a think block); with
            # closers, whatever the parser holds or records is read with the closer's delta
            return 3
        return 0

    # Inside an open call, where the calls are sent whole when they close: the
    # characters that may end a call (its closing marker's first character, or
    # the JSON brackets).  A delta with none of them is kept and read with the
    # next delta that has one (each character is still read once, by our
    # parser, which gives the same result whatever the chunking); "" reads
    # every delta.
    _call_triggers = ""
    # The markers that end a call (or its section) where calls are sent whole:
    # inside a call a delta is kept unless, with the text before it, it
    # completes one of them (``_call_triggers`` is then their last characters,
    # the O(1) test before the window check).  The call's own markup (its
    # name, argument tags, fences) is read with the closer's delta, in one
    # parser step.  vllm-mlx's parsers of these names send a call when its end
    # marker arrives, and nothing before.
    _call_closers: tuple = ()
    # Where a call's arguments stream as our parser reads them (``_piece``, state 4):
    # the characters that may end the argument text being read ("" : any may)
    _piece_triggers = ""
    # While the general path reads kept deltas with the delta after them: how many
    # of the characters it reads were kept (the rest is the delta itself)
    _kept = 0

    def _openers(self) -> Optional[tuple]:
        """The markers that, read as a whole delta from plain content (nothing
        held), send nothing and leave the parser inside a call whose deltas are
        kept (state 3): the gate keeps such a delta too.  Found once per class
        by reading each marker of the format after some content."""
        if not self._call_triggers or type(self)._idle_state is not RcMlxToolParser._idle_state:
            return None
        cls = type(self)
        got = _OPENERS.get(cls)
        if got is None:
            saved = self._parser
            found = []
            try:
                thinks = {a for a, _ in saved.think_pairs}
                for m in saved._content_markers.markers:
                    if m in thinks:
                        continue
                    self._parser = p = self._rc_tools.create(self.tool_format)
                    p._push("Sure. ")
                    if self._idle_state() != 1:
                        continue
                    p._events = []
                    p._push(m)
                    if not any(e[0] == "c" for e in p._events) and all(c.ok is None for c in p._calls) \
                            and self._idle_state() == 3:
                        found.append(m)
            finally:
                self._parser = saved
            got = _OPENERS[cls] = tuple(found)
        return got or None

    def _gate_calls(self) -> Optional[tuple]:
        """``text_gate``'s ``calls`` (a call the gate reads itself), or ``None``."""
        return None

    def _gate_sync(self) -> None:
        """The calls the gate read to their end (``TextGate.done``) written into
        the parser's records, as if it had read them (a class with ``calls``)."""
        raise NotImplementedError

    def _gate_holds(self) -> Optional[tuple]:
        """``text_gate``'s ``holds`` (state 1 is the parser waiting in plain
        content for these markers, nothing held), or ``None``."""
        return None

    def _install_fast_path(self) -> None:
        trig = self._triggers() if self._fast else None
        if not trig or len(trig) > 3:
            return
        method = type(self).extract_tool_calls_streaming
        me = self
        st = self._gate
        # inside a call, a delta with a closer's last character is kept unless a
        # closer ends in it (the gate searches ``current_text`` from where such a
        # closer would start: a closer may begin in text already read, which the
        # parser holds; one that ended before this delta was read then)
        closers = tuple(self._call_closers) or None
        # the base class's own streaming step, read without its frame (same work)
        lean = method is RcMlxToolParser.extract_tool_calls_streaming
        lean_multi = method is RcMlxMultiToolParser.extract_tool_calls_streaming
        lean_piece = method is _RcMlxPieceStreamer.extract_tool_calls_streaming
        lean_any = lean or lean_multi or lean_piece
        plain_idle = type(self)._idle_state is RcMlxToolParser._idle_state
        piece_idle = lean_piece and type(self)._idle_state is _RcMlxPieceStreamer._idle_state
        args_refined = lean_piece and self._args_refined
        call_triggers = self._call_triggers

        def lean_step(delta_text, current_text, request):
            # a delta with markup, joined to the deltas kept before it, read by the base
            # class's own step without the method's frame (the same work as the method):
            # the parser reads it and the calls it closed are sent; the gate calls it in
            # state 3 (a call's end)
            me._fed = len(current_text)
            p = me._parser
            # ``p._push``, its scan fed first (one compiled step), and the content it gave
            content = _tool_base._scan.push_content(p, delta_text)
            calls = p._calls
            sent = me._sent
            n = len(calls)
            if n > sent:
                c = calls[sent]
                if n == sent + 1 and c.ok:
                    # one call, closed: ``_send`` written out
                    cid = c.id
                    cid = cid[:13] if cid and cid.startswith("call_") else _new_id()
                    name = c.name
                    args = "".join(c.args) or "{}"
                    arr = me.prev_tool_call_arr
                    entry = [{"index": len(arr), "id": cid, "type": "function",
                              "function": {"name": name, "arguments": args}}]
                    arr.append({"id": cid, "name": name, "arguments": args})
                    me._sent = n
                    out = {"tool_calls": entry, "content": content} if content else {"tool_calls": entry}
                else:
                    out = me._send(content, calls, False)
            else:
                out = {"content": content} if content else None
            st.cur = current_text
            if plain_idle:
                # ``_idle_state`` written out (keep the two in step)
                lane = p._lane
                if lane.__class__ is tuple and lane[0] is p._content_markers and \
                        p._pos == len(p._buf) and p._rec is None:
                    st.idle = 1
                elif call_triggers and lane is not None and (
                        p._cur is not None or lane.__class__ is not tuple or lane[1] != p._content) and (
                        closers or (p._rec is None and p._pos == len(p._buf))):
                    st.idle = 3
                else:
                    st.idle = 0
            else:
                st.idle = me._idle_state()
            return out

        def piece_step(delta_text, current_text, request):
            # a delta with markup, joined to the deltas kept before it, read by the class's
            # own step without the method's frame (the same work as the method): one
            # compiled step (the kept deltas sent nothing); the gate calls it in state 6
            me._fed = len(current_text)
            if not me._request_read:
                me._stream_request(request)
            if st.done:
                me._gate_sync()
            p = me._parser
            got = _tool_base._scan.step_args(p, delta_text, _ParsedToolCallDelta)
            # ``_stepped`` written out
            if got is None:
                out = {"content": delta_text}
            elif got.__class__ is str:
                out = me._args_piece(got)
            elif got:
                out = me._deltas(got)
            else:
                out = None
            st.cur = current_text
            if piece_idle:
                # ``_RcMlxPieceStreamer._idle_state`` written out (keep the two in step)
                run = p.__dict__.get("_name_run")
                if run is not None and p._rec is None and p._pos == len(p._buf):
                    st.keep, st.budget = run
                    st.idle = 7
                    return out
                ms = _tool_base._scan.stretch(p, _DROPS)
                if ms is not None:
                    t = _STRETCHES.get(p.__class__)
                    kq = t.get(ms) if t is not None else None
                    st.keep, st.quiet = kq if kq is not None else _stretch(p.__class__, ms)
                    st.idle = 6
                    return out
                lane = p._lane
                if p._cur is not None and lane is not None and p._rec is None:
                    me._piece_lane = lane
                    st.idle = me._args_state() if args_refined else 4
                    return out
                st.idle = RcMlxToolParser._idle_state(me)  # (out of a call: where its super() goes)
            else:
                st.idle = me._idle_state()
            return out

        def general(previous_text, current_text, delta_text, previous_token_ids, current_token_ids,
                    delta_token_ids, request):
            if me._stale:
                me._restart()
            if st.done:
                me._gate_sync()  # the calls the gate read, into the parser's records
            if st.idle == 5 and st.pend:
                me._flush_args()  # argument pieces the gate sent and its reader read
            first = None
            if previous_text is st.cur:
                if lean_any and delta_text.__class__ is str and delta_text and current_text.__class__ is str and (
                        st.pend or len(current_text) == len(previous_text) + len(delta_text)):
                    # a delta with markup (and the deltas kept before it), read by the class's
                    # own step without the method's frame: the same work as the method below
                    pend = st.pend
                    if pend:
                        pend.append(delta_text)
                        delta_text = "".join(pend)
                        st.pend = []
                    me._fed = len(current_text)
                    if lean:
                        return lean_step(delta_text, current_text, request)
                    elif lean_piece:
                        return piece_step(delta_text, current_text, request)
                    else:
                        # a composed name's machine reads it, as the method does after its shortcuts
                        if me._tools is None and request is not None and me.multi.rest_needs_listed_tool:
                            me._tools = _request_tools(request)  # (read by _keep for these names alone)
                        if me._form is None and not me._hold and me._rest is None:
                            # a whole block (or a marker alone) from plain content: read in one step
                            out = me._whole_block(delta_text)
                            if out is not _SLOW:
                                st.cur = current_text
                                st.idle = 1 if (me._content_ok or not me._marked) else 2
                                return out
                        content_l: list = []
                        calls_l: list = []
                        me._step(delta_text, False, content_l, calls_l)
                        out = me._result("".join(content_l), calls_l) if content_l or calls_l else None
                    st.cur = current_text
                    st.idle = me._idle_state()
                    return out
                if st.pend:
                    # the deltas kept inside a call are read now, with this one
                    kept = "".join(st.pend)
                    delta_text = kept + delta_text
                    st.pend = []
                    me._fed = len(current_text) - len(delta_text)
                    me._kept = len(kept)
                else:
                    me._fed = len(previous_text)  # the plain deltas passed through were read
            elif st.pend:
                # a caller that does not hand back the same text object: the kept
                # deltas are read first, as the delta they were
                pend = "".join(st.pend)
                st.pend = []
                me._fed = len(st.cur) - len(pend)
                first = method(me, None, st.cur, pend, None, None, None, request)
            out = method(me, previous_text, current_text, delta_text, previous_token_ids, current_token_ids,
                         delta_token_ids, request)
            me._kept = 0
            if first:
                out = _joined(first, out)
            if current_text.__class__ is str:
                st.cur = current_text
                st.idle = me._idle_state()
            else:
                st.cur = _NOCUR
                st.idle = 0
            return out

        # the gate itself is the engine's (compiled: no Python frame for a plain delta)
        piece = getattr(self, "_piece", None)
        calls = self._gate_calls() if lean_piece else None
        replay = calls[5] if calls else None
        holds = self._gate_holds() if lean_piece else None
        self.extract_tool_calls_streaming = _text_gate(  # type: ignore[method-assign]
            st, "".join(sorted(trig)), self._call_triggers, closers, general, piece, self._piece_triggers,
            self._openers(), getattr(self, "_after_feed", None),
            piece_step if lean_piece else lean_step if lean else None, calls, holds)
        fin = getattr(type(self), "finalize_streaming", None)
        lean_fin = fin is RcMlxToolParser.finalize_streaming
        lean_mfin = fin is RcMlxMultiToolParser.finalize_streaming
        lean_pfin = fin is _RcMlxPieceStreamer.finalize_streaming
        if fin is not None:
            def finalize_streaming(current_text: str = "") -> Optional[dict]:
                if me._stale:
                    me._restart()
                if st.done and not (lean_pfin and st.idle == 1 and not st.pend):
                    me._gate_sync()  # (an end that only resets the parser needs no records)
                if st.idle == 5 and st.pend:
                    me._flush_args()
                elif st.idle == 9 and replay is not None:
                    replay()  # the call the gate read so far: read by the parser before the end
                if lean_fin and not st.pend:
                    # the base class's end of stream, without its frames (same work);
                    # a parser waiting in plain content with nothing held has nothing
                    # to release: it is only reset
                    quiet = st.idle == 1
                    st.cur, st.idle = _NOCUR, 0
                    p = me._parser
                    calls = p._calls
                    content = ""
                    if quiet and p._cur is None:
                        p.reset()
                    else:
                        p._push("", eof=True)
                        events = p._events
                        p.reset()
                        if events:
                            content = "".join([e[2] for e in events if e[0] == "c"])
                    if len(calls) > me._sent:
                        out = me._send(content, calls, True)
                    else:
                        out = {"content": content} if content else None
                    me._sent = 0
                    me._fed = 0
                    return out
                if lean_mfin and not st.pend and me._form is None and me._rest is None and not me._hold:
                    # a composed name's machine in plain content, nothing held: the end
                    # has nothing to read unless the caller shows text it was not given
                    if st.cur is not _NOCUR:
                        me._fed = len(st.cur)
                    st.cur, st.idle = _NOCUR, 0
                    if current_text.__class__ is not str or len(current_text) <= me._fed:
                        me._unclosed = ""
                        me._fed = 0  # (as the class's end of stream leaves it)
                        return None
                    return fin(me, current_text)
                if lean_pfin and st.idle == 1 and not st.pend and me._parser._cur is None:
                    # a piece streamer's parser waiting in plain content with nothing held:
                    # its end (``finish``) reads nothing and sends nothing; it is only reset
                    me._fed = len(st.cur)
                    st.cur, st.idle = _NOCUR, 0
                    # its parser, reset, and its call ids forgotten, when the instance is used
                    # again (``_restart``): vllm-mlx's server builds a parser per stream
                    me._stale = True
                    return None
                first = None
                if st.pend:
                    # deltas kept inside a call: read before the end
                    pend = "".join(st.pend)
                    st.pend = []
                    me._fed = len(st.cur) - len(pend)
                    first = method(me, None, st.cur, pend, None, None, None, None)
                elif st.cur is not _NOCUR:
                    me._fed = len(st.cur)  # the plain deltas passed through were read
                st.cur, st.idle = _NOCUR, 0
                last = fin(me, current_text)
                return _joined(first, last) if first else last

            self.finalize_streaming = finalize_streaming  # type: ignore[method-assign]

    def extract_tool_calls(self, model_output: str, request: Any = None) -> ExtractedToolCallInformation:
        # vllm-mlx's parsers drop think blocks (and an implicit one) first
        text = self.strip_think_tags(model_output) if "</think>" in model_output else model_output
        p = self._rc_tools.create(self.tool_format)
        try:
            res = p.parse_complete(text)
        except ValueError:
            return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=text)
        calls = [{"id": _new_id(), "name": c.name, "arguments": c.arguments} for c in res.tool_calls]
        if not calls:
            return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=text)
        content = (res.content or "").strip()
        return ExtractedToolCallInformation(tools_called=True, tool_calls=calls, content=content or None)

    def _closed_calls(self, final: bool, calls: Optional[list] = None) -> list[dict]:
        out = []
        if calls is None:
            calls = self._parser._calls
        while self._sent < len(calls):
            c = calls[self._sent]
            if c.ok is None and not final:
                break
            self._sent += 1
            if c.ok is False:
                continue
            out.append({"id": _short_id(c.id), "name": c.name, "arguments": "".join(c.args) or "{}"})
        return out

    def _send(self, content: str, calls: list, final: bool) -> Optional[dict]:
        """``_result(content, _closed_calls(final, calls))`` in one pass (the
        base class's calls carry no rank)."""
        sent = self._sent
        arr = self.prev_tool_call_arr
        out: list = []
        n = len(calls)
        while sent < n:
            c = calls[sent]
            ok = c.ok
            if ok is None and not final:
                break
            sent += 1
            if ok is False:
                continue
            cid = c.id
            cid = cid[:13] if cid and cid.startswith("call_") else _new_id()
            name = c.name
            args = "".join(c.args) or "{}"
            out.append({"index": len(arr), "id": cid, "type": "function",
                        "function": {"name": name, "arguments": args}})
            arr.append({"id": cid, "name": name, "arguments": args})
        self._sent = sent
        if out:
            return {"tool_calls": out, "content": content} if content else {"tool_calls": out}
        return {"content": content} if content else None

    def _result(self, content: str, calls: list[dict]) -> Optional[dict]:
        out: dict = {}
        for c in calls:
            c.pop("_rank", None)
        if calls:
            start = len(self.prev_tool_call_arr)
            self.prev_tool_call_arr.extend(calls)
            out["tool_calls"] = [
                {"index": start + i, "id": tc["id"], "type": "function",
                 "function": {"name": tc["name"], "arguments": tc["arguments"]}}
                for i, tc in enumerate(calls)
            ]
        if content:
            out["content"] = content
        return out or None

    def extract_tool_calls_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                     previous_token_ids=None, current_token_ids=None, delta_token_ids=None,
                                     request: Any = None) -> Optional[dict]:
        unseen = _unseen(self, previous_text, current_text, delta_text)
        p = self._parser
        if unseen:
            p.parse_delta(unseen)
        if delta_text.__class__ is not str or not delta_text:
            deltas = p.parse_delta(delta_text)
            if deltas is None:
                return {"content": delta_text} if delta_text else None
            content = "".join(d.content for d in deltas if d.content is not None)
            return self._result(content, self._closed_calls(False))
        # the deltas that reach here hold markup (plain ones take the fast path): the
        # parser reads them and the calls come from its list, so its events are read
        # as they are rather than turned into delta objects first
        p._push(delta_text)
        events = p._events
        if not events:
            return self._result("", self._closed_calls(False))
        p._events = []
        return self._result("".join([e[2] for e in events if e[0] == "c"]), self._closed_calls(False))

    def finalize_streaming(self, current_text: str = "") -> Optional[dict]:
        # finish() completes the last call and resets the parser (a new list
        # of calls): the open calls are read from the list it completed.
        calls = self._parser._calls
        deltas = self._parser.finish()
        content = "".join(d.content for d in deltas if d.content is not None)
        out = self._result(content, self._closed_calls(True, calls))
        self._sent = 0
        self._fed = 0
        return out


# ---------------------------------------------------------------------------
# vllm-mlx names whose parser reads several forms: composed of our formats
# ---------------------------------------------------------------------------

from ..tools._json import typed_value as _typed_value  # noqa: E402
from ..tools._xml_formats import Qwen3CoderToolParser as _Qwen3Coder  # noqa: E402


class _FramedQwen3Coder(_Qwen3Coder):
    """Our qwen3_coder format with the value framing of vllm-mlx's XML readers:
    ``framing="pair"`` (qwen, step3p5) drops one leading and one trailing
    newline only when both are there; ``"strip"`` (hermes) strips the value.
    Values are JSON when they parse, else strings (no schema, as vllm-mlx's
    readers of these names)."""

    format_name = "vllm_mlx_qwen3_coder"
    framing = "pair"

    def _xml_value(self, fname, key, ends):
        parts: list[str] = []
        m = yield from self._until(ends, parts.append)
        v = "".join(parts)
        if self.framing == "strip":
            v = v.strip()
        elif len(v) >= 2 and v[0] == "\n" and v[-1] == "\n":
            v = v[1:-1]
        self._emit_args(_typed_value(v, frozenset()))
        return m


class _StrippedQwen3Coder(_FramedQwen3Coder):
    framing = "strip"


_ONE_SHOT: dict = {}  # format name or class -> idle parsers of it, each reset (as new) after its block


def _calls_of(fmt: Any, block: str) -> list[dict]:
    """The calls our ``fmt`` parser (a format name or class) reads in one whole block ([] when none parse):
    ``parse_complete``'s calls, read by a parser of the format reset after each block (not a new one per
    block).  Each call takes a parser from the format's pool and gives it back (``list.pop``/``append``
    are atomic: threads never share one)."""
    pool = _ONE_SHOT.get(fmt)
    if pool is None:
        pool = _ONE_SHOT.setdefault(fmt, [])
    try:
        p = pool.pop()
    except IndexError:
        from .. import tools as rc_tools

        p = fmt() if isinstance(fmt, type) else rc_tools.create(fmt)
    p._push(block, eof=True)
    out = [{"id": _short_id(c.id), "name": c.name, "arguments": "".join(c.args)} for c in p._calls if c.ok]
    p.reset()
    pool.append(p)
    return out


def _as_hermes(name: str, args: str) -> list[dict]:
    # a name and a JSON argument text written in another wrapper: our hermes
    # parser reads the JSON (the name is quoted here, the arguments are not touched)
    import json

    if not name or not args.lstrip().startswith("{"):
        return []
    return _calls_of("hermes", '<tool_call>{"name": ' + json.dumps(name) + ', "arguments": ' + args + "}</tool_call>")


def _block_tool_call(block: str, xml: type = _FramedQwen3Coder) -> list[dict]:
    """``<tool_call>…</tool_call>``: JSON (our hermes) or ``<function=…>`` (our qwen3_coder)."""
    body = block[len(_TC_OPEN):].lstrip()
    if body.startswith("<function="):
        return _calls_of(xml, block)
    return _calls_of("hermes", block)


def _block_function(block: str, xml: type = _FramedQwen3Coder) -> list[dict]:
    """``<function=NAME>…</function>``: parameter elements (our qwen3_coder) or a JSON body."""
    head, sep, rest = block.partition(">")
    body = rest[: -len("</function>")] if rest.endswith("</function>") else rest
    if sep and body.strip().startswith("{"):
        calls = _as_hermes(head[len("<function="):].strip(), body.strip())
        if calls:
            return calls
    return _calls_of(xml, block)


def _hermes_tool_call(block: str) -> list[dict]:
    return _block_tool_call(block, _StrippedQwen3Coder)


def _hermes_function(block: str) -> list[dict]:
    return _block_function(block, _StrippedQwen3Coder)


def _block_function_json(block: str) -> list[dict]:
    """llama's legacy ``<function=NAME>{…}</function>``: a JSON body only."""
    head, sep, rest = block.partition(">")
    body = rest[: -len("</function>")]
    return _as_hermes(head[len("<function="):].strip(), body) if sep and body.startswith("{") else []


def _block_bracket(block: str) -> list[dict]:
    """``[Calling tool: NAME({…})]``."""
    inner = block[len("[Calling tool:"): -len(")]")].lstrip()
    name, sep, args = inner.partition("(")
    if not sep or not name or not (name.isascii() and name.replace("_", "a").isalnum()):
        return []
    return _as_hermes(name, args)


@dataclass(frozen=True)
class _Form:
    """One tool-call form a vllm-mlx name reads: an opener and either a closer
    (the block up to it is parsed whole, by ``parse``, when it closes) or
    ``rest`` (from the opener on, the output goes to that format's
    incremental parser of ours)."""

    opener: str
    closer: str = ""
    parse: Any = None
    rest: str = ""
    at_start_only: bool = False  # llama's bare JSON: only as the output's first non-space text
    # a "rest" form whose unfinished call at the end of a stream is not released as content (llama's python tag)
    hide_unfinished: bool = False
    # a block whose opening tag is followed by prose (not markup) is no call: its text is content (qwen3_xml)
    prose_abandons: bool = False


@dataclass(frozen=True)
class _Multi:
    forms: tuple
    # streamed content after the first tool markup (hermes: yes; qwen: dropped, as vllm-mlx does)
    content_after_marker: bool = True
    # consecutive duplicate calls collapse (step3p5)
    dedupe: bool = False
    # calls read from a "rest" form must name a tool of the request (hermes' bare JSON)
    rest_needs_listed_tool: bool = False
    # one-shot: an unclosed block at the end is dropped from the content (qwen), or kept
    drop_unclosed: bool = False
    # one-shot: the first matching kind of form wins (hermes: <tool_call> calls, else
    # <function=…> ones, else bare JSON), or all kinds are read (qwen, llama)
    first_kind_only: bool = False
    # one-shot: calls grouped by kind of form, in ``forms`` order (qwen reads
    # its kinds one after another), or in text order
    by_kind: bool = False
    # finalize_streaming answers {"content": ""} when it drops unfinished markup (llama)
    pending_ends_empty: bool = False
    # one-shot: <tool_call_reasoning> blocks leave the text and follow the content as "(Reasoning: …)" (hermes)
    call_reasoning: bool = False
    # a block left open at the end is read all the same (DSML); when no call
    # parses from it, finalize_streaming releases it as content
    parse_unclosed: bool = False


_QWEN = _Multi(
    forms=(_Form("[Calling tool:", ")]", _block_bracket), _Form(_TC_OPEN, _TC_CLOSE, _block_tool_call),
           _Form("<function=", "</function>", _block_function)),
    content_after_marker=False, drop_unclosed=True, by_kind=True)
_HERMES = _Multi(
    forms=(_Form(_TC_OPEN, _TC_CLOSE, _hermes_tool_call), _Form("<function=", "</function>", _hermes_function),
           _Form('{"name":', rest="llama3_json")),
    rest_needs_listed_tool=True, first_kind_only=True, call_reasoning=True)
_LLAMA = _Multi(
    forms=(_Form("<|python_tag|>", rest="llama3_json", hide_unfinished=True),
           _Form("<function=", "</function>", _block_function_json),
           _Form("{", rest="llama3_json", at_start_only=True)), pending_ends_empty=True)

_K_CALL_END = "<|tool_call_end|>"
_K_IN_SECTION: list = []  # kimi_k2 parsers waiting inside a section for a call (see _block_kimi)


def _block_kimi(block: str) -> list[dict]:
    """A Kimi call (``<|tool_call_begin|>…<|tool_call_end|>``), inside its section or not: our kimi_k2.

    A closed block is read by a parser already inside a section, waiting for a call: after
    the call's end it waits there again (the same wait as after the section's opener), and
    the next block reuses it (no section opener to find, no end of input, no reset).  A
    parser left anywhere else is dropped.  The calls are those of the section opener, the
    block and the end of input read by a new parser: nothing after the call's end is read."""
    if not block.endswith(_K_CALL_END):
        return _calls_of("kimi_k2", _K_SECTION + block)
    try:
        p = _K_IN_SECTION.pop()
    except IndexError:
        from .. import tools as rc_tools

        p = rc_tools.create("kimi_k2")
        p._push(_K_SECTION)
    calls = p._calls
    n = len(calls)
    p._push(block)
    out = []
    for c in calls[n:]:
        if c.ok:
            cid = c.id
            out.append({"id": cid[:13] if cid and cid.startswith("call_") else _new_id(), "name": c.name,
                        "arguments": "".join(c.args)})
    p._events = []
    lane = p._lane
    if p._cur is None and lane.__class__ is tuple and lane[0] is _K_SECTION_WAIT and lane[1] is _tool_base._drop \
            and p._pos == len(p._buf) and p._rec is None and len(calls) < 64:
        _K_IN_SECTION.append(p)
    return out


_K_SECTION = "<|tool_calls_section_begin|>"
from ..tools._marker_formats import KimiK2ToolParser as _KimiK2  # noqa: E402

_K_SECTION_WAIT = _KimiK2._SECTION  # the markers a section waits for between calls
_KIMI = _Multi(
    forms=(_Form(_K_SECTION), _Form("<|tool_call_section_begin|>"), _Form("<|tool_calls_section_end|>"),
           _Form("<|tool_call_section_end|>"), _Form("<|tool_call_begin|>", "<|tool_call_end|>", _block_kimi)),
    content_after_marker=False)

_DSML_END = "</\uff5cDSML\uff5ctool_calls>"


def _block_dsml(block: str) -> list[dict]:
    """A DeepSeek-V4 ``<｜DSML｜tool_calls>`` block, closed or not: our deepseekv4 format."""
    return _calls_of("deepseekv4", block)


_DSML = _Multi(forms=(_Form(_DSML_TOOL_CALLS, _DSML_END, _block_dsml),), content_after_marker=False,
               parse_unclosed=True)

_MULTI_NAMES: dict[str, _Multi] = {
    "deepseek_v4": _DSML, "dsml": _DSML,
    "kimi": _KIMI, "kimi_k2": _KIMI, "moonshot": _KIMI,
    "qwen": _QWEN, "qwen3": _QWEN,
    "step3p5": _replace(_QWEN, dedupe=True), "step": _replace(_QWEN, dedupe=True),
    "hermes": _HERMES, "nous": _HERMES,
    "llama": _LLAMA, "llama3": _LLAMA, "llama4": _LLAMA,
}


def _take_blocks(text: str, start: str, end: str) -> tuple[str, list[str]]:
    """``text`` without its closed ``start``…``end`` blocks, and their bodies."""
    out: list[str] = []
    bodies: list[str] = []
    pos = 0
    while True:
        i = text.find(start, pos)
        j = text.find(end, i + len(start)) if i >= 0 else -1
        if j < 0:
            out.append(text[pos:])
            return "".join(out), bodies
        out.append(text[pos:i])
        bodies.append(text[i + len(start):j])
        pos = j + len(end)


def _signature(call: dict) -> tuple:
    import json

    try:
        args = json.dumps(json.loads(call["arguments"]), ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        args = call["arguments"]
    return call["name"], args


class RcMlxMultiToolParser(RcMlxToolParser):
    """A vllm-mlx tool parser for a name whose vllm-mlx parser reads several
    forms: each form's markup is found in the streamed text (only the new
    delta and a held partial marker are scanned), a closed block is read whole
    by our format parser for it (once), a "rest" form hands the output from its
    opener on to that format's incremental parser; a call is sent when its
    block closes, as vllm-mlx's parsers of these names send them."""

    multi: _Multi = _QWEN

    def reset(self) -> None:
        super().reset()
        self._form: Optional[_Form] = None  # the block being read
        self._hold = ""                    # content: a partial opener held back
        self._block: list[str] = []        # the open block's text
        self._tail = ""                    # its last characters (a closer split across deltas)
        self._rest = None                  # our parser for a "rest" form
        self._rest_sent = 0
        self._marked = False               # tool markup seen
        self._begun = False                # non-space text seen (llama's start-only form)
        self._last_sig: Optional[tuple] = None
        self._kind: Optional[_Form] = None  # first_kind_only: the kind of form that gave calls
        self._maxlen = max(len(f.opener) for f in self.multi.forms)
        self._firsts = tuple({f.opener[0] for f in self.multi.forms})
        self._content_ok = self.multi.content_after_marker
        m = self.multi
        self._plain_keep = not (m.by_kind or m.first_kind_only or m.dedupe)  # _keep of a closed block: as read
        self._start_only = any(f.at_start_only for f in m.forms)
        self._anywhere = tuple(f for f in m.forms if not f.at_start_only)  # the forms found after the start
        self._tools: Optional[set] = None
        self._unclosed = ""                # one-shot: an unclosed block at the end
        self._confirmed = True             # prose_abandons: the open block is a call
        self._head = ""                    # prose_abandons: its text until that is known
        self._marked_before = False
        # inside a block, a delta is kept unless it completes a closer (the fast path's window check)
        closers = {f.closer for f in self.multi.forms if f.closer}
        lasts = {c[-1] for c in closers}
        self._call_closers = tuple(sorted(closers)) if len(lasts) <= 2 else ()
        self._call_triggers = "".join(sorted(lasts)) if len(lasts) <= 2 else ""
        if self._fast and not any(f.at_start_only for f in self.multi.forms):
            # a fresh stream starts in plain content: the server's first previous_text
            # is "" (one object), so the first plain delta takes the gate too (what it
            # sets, ``_begun``, matters only to a form read at the start alone)
            self._gate.cur, self._gate.idle = "", 1

    def _triggers(self) -> Optional[set]:
        return set(self._firsts)

    def _openers(self) -> Optional[tuple]:
        # the opener of a block read whole at its closer (not one whose first text
        # decides whether it is a call): read from plain content it sends nothing,
        # and the block's deltas are kept
        if not self._call_triggers:
            return None
        return tuple(f.opener for f in self.multi.forms
                     if f.closer and not f.rest and not f.prose_abandons and f.closer in self._call_closers) or None

    def _idle_state(self) -> int:
        if self._form is None and self._rest is None and not self._hold and self._begun:
            return 1 if (self._content_ok or not self._marked) else 2
        form = self._form
        if form is not None and self._confirmed and self._call_triggers:
            tail, closer = self._tail, form.closer
            c0 = closer[0]
            i = tail.find(c0, max(0, len(tail) - len(closer) + 1))
            while i >= 0:
                if closer.startswith(tail[i:]):
                    return 0  # a closer may be under way: the next delta is read
                i = tail.find(c0, i + 1)
            return 3  # inside a block: only a delta that may hold its closer is read
        return 0

    # -- the machine --------------------------------------------------------------
    def _whole_block(self, text: str) -> Any:
        """``_step(text)`` then ``_result`` where ``text`` (read from plain content,
        nothing held, no open block, after the output's first text) is one
        marker that is a form alone, or one block from its opener to the first
        closer after it, ending the text; ``_SLOW`` (nothing done) for anything
        else.  The form is the one ``_step`` finds: the first, in ``forms``
        order, whose opener starts the text (a form read at the output's start
        alone is left to ``_step``)."""
        if not self._begun and self._start_only:
            return _SLOW
        for f in self._anywhere:
            if not text.startswith(f.opener):
                continue
            if f.rest or f.prose_abandons:
                return _SLOW
            closer = f.closer
            if not closer:  # a marker alone (kimi's section tags): not content
                if len(text) != len(f.opener):
                    return _SLOW
                self._begun = self._marked = True
                return None
            i = text.find(closer, len(f.opener))
            if i < 0 or i + len(closer) != len(text):
                return _SLOW
            self._marked_before = self._marked
            self._begun = self._marked = True
            self._confirmed = True
            self._head = ""
            parsed = f.parse(text)
            if not parsed:
                if self.multi.content_after_marker:
                    return {"content": text}  # markup no call parses from: text, as vllm-mlx leaves it
                return None
            if self._plain_keep:
                calls = parsed
            else:
                calls = self._keep(parsed, f)
                if not calls:
                    return None
            arr = self.prev_tool_call_arr
            n = len(arr)
            out = []
            for c in calls:
                c.pop("_rank", None)
                arr.append(c)
                out.append({"index": n, "id": c["id"], "type": "function",
                            "function": {"name": c["name"], "arguments": c["arguments"]}})
                n += 1
            return {"tool_calls": out}
        return _SLOW

    def _keep(self, calls: list[dict], form: _Form) -> list[dict]:
        m = self.multi
        if m.by_kind:
            rank = m.forms.index(form)
            for c in calls:
                c["_rank"] = rank
        if m.first_kind_only:
            if self._kind is None and calls:
                self._kind = form
            elif self._kind is not None and form is not self._kind:
                return []
        if form.rest and m.rest_needs_listed_tool and self._tools is not None:
            calls = [c for c in calls if c["name"] in self._tools]
        if m.dedupe:
            out = []
            for c in calls:
                sig = _signature(c)
                if sig != self._last_sig:
                    out.append(c)
                self._last_sig = sig
            calls = out
        return calls

    def _step(self, text: str, final: bool, content: list[str], calls: list[dict]) -> None:
        """Read ``text`` (the next piece of the output)."""
        forms = self.multi.forms
        while True:
            if self._rest is not None:
                self._rest_step(text, final, content, calls)
                return
            if self._form is not None:
                form = self._form
                if form.prose_abandons and not self._confirmed and text:
                    text = self._prose_check(form, text, content)
                    if self._form is None:
                        continue
                window = self._tail + text
                i = window.find(form.closer)
                if i < 0:
                    if text:
                        self._block.append(text)
                        k = len(form.closer) - 1
                        self._tail = window[-k:] if k else ""
                    if final:  # an unclosed block at the end
                        block = "".join(self._block)
                        self._form, self._block, self._tail = None, [], ""
                        parsed = form.parse(block) if self.multi.parse_unclosed else []
                        if parsed:
                            calls.extend(self._keep(parsed, form))
                        else:
                            self._unclosed = block
                    return
                cut = i + len(form.closer) - len(self._tail)
                self._block.append(text[:cut])
                block = "".join(self._block)
                self._form, self._block, self._tail = None, [], ""
                parsed = form.parse(block)
                if parsed:
                    calls.extend(self._keep(parsed, form))
                elif self.multi.content_after_marker:
                    content.append(block)  # markup no call parses from: text, as vllm-mlx leaves it
                text = text[cut:]
                if not text and not self._hold:
                    return  # nothing after the closer (what the opener search below finds in "")
                continue
            window = self._hold + text
            self._hold = ""
            best, at = None, -1
            for f in forms:
                if f.at_start_only:
                    if self._begun:
                        continue
                    j = len(window) - len(window.lstrip())
                    if j < len(window) and window.startswith(f.opener, j):
                        if at < 0 or j < at:
                            best, at = f, j
                    continue
                j = window.find(f.opener)
                if j >= 0 and (at < 0 or j < at):
                    best, at = f, j
            if best is None:
                keep = 0 if final else self._partial(window)
                out = window[: len(window) - keep]
                self._hold = window[len(window) - keep:]
                if out:
                    if not self._begun and out.strip():
                        self._begun = True
                    if not self._marked or self.multi.content_after_marker:
                        content.append(out)
                return
            before = window[:at]
            if before and (not self._marked or self.multi.content_after_marker):
                content.append(before)
            self._begun = True
            marked_before = self._marked
            self._marked = True
            text = window[at:]
            if not best.rest and not best.closer:  # a marker alone (kimi's section tags): not content
                text = text[len(best.opener):]
                continue
            if best.rest:
                from .. import tools as rc_tools

                self._rest = rc_tools.create(best.rest)
                self._rest_form = best
                self._rest_sent = 0
                continue
            self._form = best
            self._block, self._tail = [best.opener], ""
            self._confirmed = not best.prose_abandons
            self._head = ""
            self._marked_before = marked_before
            text = text[len(best.opener):]

    def _prose_check(self, form: _Form, text: str, content: list[str]) -> str:
        """Before a ``prose_abandons`` block is confirmed: once the first
        non-space text after its opening tag is known, markup (``<``)
        confirms the call; anything else abandons it, and the block's text
        so far is content, as vllm-mlx's qwen3_xml streams it.  Returns the
        text still to read (all of it: the check reads ``text`` once)."""
        head = self._head + text
        gt = head.find(">")
        if gt < 0:
            self._head = head
            return text
        rest = head[gt + 1:].lstrip()
        if not rest:
            self._head = head
            return text
        self._head = ""
        if rest[0] == "<":
            self._confirmed = True
            return text
        block = "".join(self._block)
        self._form, self._block, self._tail = None, [], ""
        self._marked = self._marked_before
        if not self._marked or self.multi.content_after_marker:
            content.append(block)
        return text

    def _partial(self, window: str) -> int:
        """Length of the longest suffix of ``window`` that may begin an opener."""
        for k in range(min(len(window), self._maxlen - 1), 0, -1):
            suf = window[-k:]
            for f in self.multi.forms:
                if f.opener.startswith(suf) and not f.at_start_only:
                    return k
        if not self._begun:
            for f in self.multi.forms:
                if f.at_start_only and window.strip() and f.opener.startswith(window.lstrip()[:len(f.opener)]):
                    return len(window)
        return 0

    def _rest_step(self, text: str, final: bool, content: list[str], calls: list[dict]) -> None:
        p = self._rest
        keep = self.multi.content_after_marker
        pc = p._calls  # finish() starts a new list: this one keeps the calls
        deltas = p.parse_delta(text) if text else []
        if deltas is None:
            if keep:
                content.append(text)
            deltas = []
        if final:
            deltas = deltas + p.finish()
        if keep:
            content.extend(d.content for d in deltas if d.content is not None)
        got = []
        while self._rest_sent < len(pc):
            c = pc[self._rest_sent]
            if c.ok is None and not final:
                break
            self._rest_sent += 1
            if c.ok:
                got.append({"id": _new_id(), "name": c.name, "arguments": "".join(c.args) or "{}"})
        calls.extend(self._keep(got, self._rest_form))

    # -- one-shot -------------------------------------------------------------------
    def extract_tool_calls(self, model_output: str, request: Any = None) -> ExtractedToolCallInformation:
        text = self.strip_think_tags(model_output) if "</think>" in model_output else model_output
        notes: list[str] = []
        if self.multi.call_reasoning and "<tool_call_reasoning>" in text:
            text, notes = _take_blocks(text, "<tool_call_reasoning>", "</tool_call_reasoning>")
        p = type(self)()
        p._tools = _request_tools(request)
        p._unclosed = ""
        content: list[str] = []
        calls: list[dict] = []
        multi = p.multi
        if not multi.content_after_marker:
            p.multi = _replace(multi, content_after_marker=True)
        p._step(text, True, content, calls)
        if notes:
            note = "(Reasoning: " + " ".join(notes) + ")"
            out = "".join(content).strip()
            content = [out + "\n\n" + note if out else note]
            if not calls:
                return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=content[0])
        if not calls:
            if multi.drop_unclosed and p._unclosed:
                # qwen: a truncated call at the end is not content (a string, "" when nothing is left)
                return ExtractedToolCallInformation(tools_called=False, tool_calls=[],
                                                    content="".join(content).rstrip())
            return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=text)
        if multi.by_kind:
            calls.sort(key=lambda c: c["_rank"])
        for c in calls:
            c.pop("_rank", None)
        out = "".join(content)
        if p._unclosed and not multi.drop_unclosed:
            out += p._unclosed
        out = out.strip()
        return ExtractedToolCallInformation(tools_called=True, tool_calls=calls, content=out or None)

    # -- streaming ------------------------------------------------------------------
    def extract_tool_calls_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                     previous_token_ids=None, current_token_ids=None, delta_token_ids=None,
                                     request: Any = None) -> Optional[dict]:
        fed = self._fed
        form = self._form
        if form is not None and self._confirmed and current_text.__class__ is str \
                and len(current_text) - len(delta_text) == fed:
            # inside a block: look for its closer in the delta (and the held tail) only
            window = self._tail + delta_text
            if form.closer not in window:
                self._fed = fed + len(delta_text)
                if delta_text:
                    self._block.append(delta_text)
                    self._tail = window[1 - len(form.closer):]
                return None
        elif form is None and self._rest is None and self._begun and not self._hold \
                and current_text.__class__ is str and len(current_text) - len(delta_text) == fed:
            # plain text with no character that starts a marker: passed through as it is
            for ch in self._firsts:
                if ch in delta_text:
                    break
            else:
                self._fed = fed + len(delta_text)
                if delta_text and (self._content_ok or not self._marked):
                    return {"content": delta_text}
                return None
        if self._tools is None and request is not None:
            self._tools = _request_tools(request)
        content: list[str] = []
        calls: list[dict] = []
        unseen = _unseen(self, previous_text, current_text, delta_text)
        if unseen:
            self._step(unseen, False, [], calls)  # sent already as content
        if delta_text:
            self._step(delta_text, False, content, calls)
        return self._result("".join(content), calls)

    def finalize_streaming(self, current_text: str = "") -> Optional[dict]:
        content: list[str] = []
        calls: list[dict] = []
        if current_text.__class__ is str and len(current_text) > self._fed:
            # the end of the output we were not shown (a caller that only finalizes)
            self._step(current_text[self._fed:], False, content, calls)
        pending = self._rest is not None or self._form is not None or bool(self._hold)
        hide = self._rest is not None and self._rest_form.hide_unfinished
        self._unclosed = ""
        mark = len(content)
        self._step("", True, content, calls)
        if hide and not calls:
            del content[mark:]  # the unfinished tagged call: protocol markup, not content
        if self._unclosed and self.multi.parse_unclosed:
            content.append(self._unclosed)  # DSML: markup no call parses from is released at the end
        out = self._result("".join(content), calls)
        self._fed = 0  # the stream is over: a reused instance counts the next one's text from its start
        if out is None and pending and self.multi.pending_ends_empty:
            return {"content": ""}  # llama: an unfinished call at the end is not shown
        return out


def _request_tools(request: Any) -> Optional[set]:
    tools = request.get("tools") if isinstance(request, dict) else getattr(request, "tools", None)
    if not tools:
        return None
    out = set()
    for t in tools:
        fn = t.get("function") if isinstance(t, dict) else getattr(t, "function", None)
        name = fn.get("name") if isinstance(fn, dict) else getattr(fn, "name", None)
        if isinstance(name, str):
            out.add(name)
    return out


from ..tools._base import _drop as _rc_drop  # noqa: E402

_LT_ONLY: dict = {}


def _lt_only(ms: Any) -> bool:
    """Whether every marker of ``ms`` starts with "<" (cached per markers object)."""
    got = _LT_ONLY.get(id(ms))
    if got is None or got[0] is not ms:
        got = _LT_ONLY[id(ms)] = (ms, all(m[:1] == "<" for m in ms.markers))
    return got[1]


# vllm-mlx's harmony tool parser gives the final channel's message as the
# content: our gpt_oss row with the commentary channel (the calls, read by our
# gpt_oss tool format) set aside like the analysis channel.
_HARMONY_TOOL_CONTENT = _replace(
    _GPT_OSS, name="vllm_mlx_harmony_tool_content",
    start=_GPT_OSS.start + ("<|start|>assistant<|channel|>commentary", "<|channel|>commentary"),
    end=("<|end|>", "<|call|>"), header_terminators=())


_HARMONY_HEADS = ("<|start|>", "<|channel|>", "<|constrain|>")  # markers a message header goes on after


def _after_marks(delta: str, before: str) -> list:
    """``delta`` cut after each ``|>`` that ends in it (``before``: the
    character read before it)."""
    cuts = [1] if before == "|" and delta[0] == ">" else []
    i = delta.find("|>")
    while i >= 0:
        cuts.append(i + 2)
        i = delta.find("|>", i + 2)
    return [delta[a:b] for a, b in zip([0, *cuts], [*cuts, len(delta)]) if a < b]


class RcMlxHarmonyToolParser(RcMlxToolParser):
    """vllm-mlx's ``harmony`` / ``gpt-oss`` tool parser: the calls are
    commentary messages addressed ``to=functions.NAME`` (our ``gpt_oss`` tool
    format reads them), the content is the final channel's message (our text
    engine on the gpt_oss row, analysis and commentary set aside).  Per delta:
    each reads the delta once; a call is sent once its message ends; as
    vllm-mlx's, no content is streamed once a call was made."""

    tool_format = "gpt_oss"
    # a message header, and a call's message, are kept until the marker that
    # ends them (read in one step by both readers): headers send nothing, and
    # a call is sent when its message ends
    _call_closers = ("<|call|>", "<|end|>", "<|return|>", "<|message|>")
    _call_triggers = ">"

    def reset(self) -> None:
        super().reset()
        self._split = TextReasoningParser(_HARMONY_TOOL_CONTENT, starts_in_reasoning=None)
        self._called = False
        self._last_char = ""  # the last character read (a "|" a marker's ">" may follow)
        self._tok = ""  # content that may still become a token taken out of it (_held_tail)

    def _triggers(self) -> Optional[set]:
        trig = super()._triggers()
        return None if trig is None else trig | {"<"}

    def _idle_state(self) -> int:
        # the content is the text engine's: a plain delta changes neither
        # reader when the engine holds nothing and our gpt_oss parser waits
        # for a marker (all start with "<") with text going to content or
        # nowhere (a message body, text between messages)
        # (what either reader holds is read with the kept deltas, in order)
        p = self._parser
        if p._cur is not None:
            return 3  # inside a call's message: kept until a delta may end it
        cur = self._gate.cur
        i = cur.rfind("<|", max(0, len(cur) - 512))
        if i >= 0 and cur.startswith(_HARMONY_HEADS, i):
            return 3  # inside a message header
        sp = self._split
        if sp._held or self._tok:
            return 0
        lane = p._lane
        if lane.__class__ is tuple and p._pos == len(p._buf) and p._rec is None and not p._lane_args \
                and (lane[1] == p._content or lane[1] is _rc_drop) and _lt_only(lane[0]):
            return 2 if (self._called or sp.is_reasoning) else 1
        return 0

    def extract_tool_calls(self, model_output: str, request: Any = None) -> ExtractedToolCallInformation:
        p = self._rc_tools.create("gpt_oss")
        try:
            res = p.parse_complete(model_output)
        except ValueError:
            res = None
        calls = [{"id": _new_id(), "name": c.name, "arguments": c.arguments} for c in res.tool_calls] if res else []
        split = TextReasoningParser(_HARMONY_TOOL_CONTENT, starts_in_reasoning=None)
        r1, c1 = split.feed(model_output)
        r2, c2 = split.finish()
        content = _HARMONY_TOKENS.sub("", c1 + c2).strip()
        if not content and (calls or r1 or r2):
            content = None
        return ExtractedToolCallInformation(tools_called=bool(calls), tool_calls=calls, content=content)

    def extract_tool_calls_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                     previous_token_ids=None, current_token_ids=None, delta_token_ids=None,
                                     request: Any = None) -> Optional[dict]:
        unseen = _unseen(self, previous_text, current_text, delta_text)
        early: list = []
        if unseen:  # sent already as content
            self._parser.parse_delta(unseen)
            self._split.feed(unseen)
            self._last_char = unseen[-1]
            early = self._closed_calls(False)  # (a call in it is sent now, and no content after it)
            if early:
                self._called = True
        if not delta_text:
            return self._result("", early)
        if self._called:
            self._parser.parse_delta(delta_text)
            self._split.feed(delta_text)
            return self._result("", early + self._closed_calls(False))
        last, self._last_char = self._last_char, delta_text[-1]
        if "|>" in delta_text or (last == "|" and delta_text[0] == ">"):
            # Content stops at the first call: a delta in which a marker ends
            # (every harmony marker ends with "|>") is read in pieces that end
            # there, so the content before the call that ends in it is sent,
            # and what follows is not, wherever the deltas split the output.
            parts: list = []
            calls: list = []
            for piece in _after_marks(delta_text, last):
                self._parser.parse_delta(piece)
                got = self._split.feed(piece)[1]
                if not self._called:
                    parts.append(got)
                new = self._closed_calls(False)
                if new:
                    calls += new
                    self._called = True
            content = "".join(parts)
        else:  # no marker ends here: no call does
            self._parser.parse_delta(delta_text)
            content = self._split.feed(delta_text)[1]
            calls = self._closed_calls(False)
            if calls:
                self._called = True
        # (once a call is out, nothing after it is content: what waits goes now)
        return self._result(self._shown(content, final=self._called), calls)

    def _shown(self, content: str, final: bool = False) -> str:
        """``content`` with the tokens vllm-mlx's harmony leaves out taken out;
        a tail that may still become one (split across deltas) waits for the
        next delta (``final``: it goes now), so what is taken out does not
        depend on the deltas."""
        if self._tok:
            content, self._tok = self._tok + content, ""
        elif "<" not in content:
            return content  # (no token, nor the start of one)
        content, self._tok = _untokened(content, final)
        return content

    def finalize_streaming(self, current_text: str = "") -> Optional[dict]:
        calls = self._parser._calls
        self._parser.finish()
        content = self._split.finish()[1]
        calls = self._closed_calls(True, calls)
        content = self._shown(content, final=True)
        out = self._result("" if (self._called or calls) else content, calls)
        # the stream is over: a reused instance starts the next one clean
        self._sent = self._fed = 0
        self._split = TextReasoningParser(_HARMONY_TOOL_CONTENT, starts_in_reasoning=None)
        self._called = False
        self._last_char = ""
        self._tok = ""
        return out


from ..tools._json import _STRING_ONLY, escape as _json_escape  # noqa: E402
from ..tools._xml_formats import Glm45ToolParser as _Glm45  # noqa: E402


class _PoolsideGlm45(_Glm45):
    """Our glm45 format with vllm-mlx poolside_v1's values: a parameter the
    request's schema declares ``string`` is the raw text (no framing
    trimmed), streamed as it arrives; any other is stripped, JSON when it
    parses, else a string."""

    format_name = "vllm_mlx_poolside_v1"

    def _xml_value(self, fname, key, ends):
        if self._types_for(fname, key) == _STRING_ONLY:
            emit = self._emit_args
            emit('"')
            m = yield from self._until(ends, lambda t: emit(_json_escape(t)))
            emit('"')
            return m
        # ``_until`` into a list, written out (no generator per value)
        parts: list[str] = []
        sink = parts.append
        until = _tool_base._scan.until
        m = until(self, ends, sink)
        while m is False:
            yield
            self._lane = None
            m = until(self, ends, sink)
        # ``_typed_value(text, frozenset())``: JSON when it parses, else a string (one compiled call)
        self._emit_args(_tool_base._scan.value_json("".join(parts).strip(), False))
        return m


def _request_schemas(request: Any) -> dict:
    tools = request.get("tools") if isinstance(request, dict) else getattr(request, "tools", None)
    out: dict = {}
    for t in tools or ():
        fn = t.get("function") if isinstance(t, dict) else getattr(t, "function", None)
        if isinstance(fn, dict) and isinstance(fn.get("name"), str) and isinstance(fn.get("parameters"), dict):
            out[fn["name"]] = fn["parameters"]
    return out


from ..tools import _base as _tool_base  # noqa: E402
from ..tools._types import ParsedToolCallDelta as _ParsedToolCallDelta  # noqa: E402


_FIRSTS: dict = {}  # a Markers object -> the characters its markers start with


def _firsts(ms: Any) -> str:
    got = _FIRSTS.get(ms)
    if got is None:
        if len(_FIRSTS) > 256:  # the formats' marker sets are a few dozen: bounded all the same
            _FIRSTS.clear()
        got = _FIRSTS[ms] = "".join(sorted({m[0] for m in ms.markers}))
    return got


_STRETCHES: dict = {}  # a parser class -> {a stretch's Markers: the gate's (keep, quiet) there}


def _stretch(cls: type, ms: Any) -> tuple:
    """The gate's ``(TextGate.keep, TextGate.quiet)`` where a parser of class
    ``cls`` waits in a stretch read without a word, ending at a marker of
    ``ms``: the characters those markers start with, and the format's
    ``QUIET_MARKERS`` there (each mapped to the pair of the stretch it leads
    to), only where the class reads its calls with the ``_section`` those
    markers describe; ``None`` where it has none."""
    t = _STRETCHES.get(cls)
    if t is None:
        src: dict = {}
        for k in cls.__mro__:
            if "QUIET_MARKERS" in k.__dict__:
                if getattr(cls, "_section", None) is k.__dict__.get("_section"):
                    src = k.__dict__["QUIET_MARKERS"]
                break
        quiet: dict = {lane: {} for lane in src}
        for lane, moves in src.items():
            for m, nxt in moves.items():
                quiet[lane][m] = (_firsts(nxt), quiet.get(nxt))
        if len(_STRETCHES) > 64:  # classes made at run time: keep the cache bounded
            _STRETCHES.clear()
        t = _STRETCHES[cls] = {lane: (_firsts(lane), q) for lane, q in quiet.items()}
    got = t.get(ms)
    if got is None:
        if len(t) > 256:  # a format may build a stretch's markers as it reads: bounded all the same
            t.clear()
        got = t[ms] = (_firsts(ms), None)
    return got


class _RcMlxPieceStreamer(RcMlxToolParser):
    """Streaming over our format parser, answered as vllm-mlx's dict deltas:
    each delta's content and, per call, its name and argument pieces in one
    tool-call entry (O(delta): only the new text is read).  A subclass says
    how a call's entry opens (``_open_call``: its id and shape, or ``None``
    to drop the call) and what it reads from the request."""

    # whether ``_stream_request`` has nothing (more) to read from the request
    _request_read = True
    # whether state 4 (inside a call) is refined by ``_args_state``
    _args_refined = False

    def _args_state(self) -> int:
        return 4

    def _stream_request(self, request: Any) -> None:
        pass

    def _open_call(self, i: int, name: Optional[str]) -> Optional[dict]:
        raise NotImplementedError

    def _idle_state(self) -> int:
        p = self._parser
        run = p.__dict__.get("_name_run")
        if run is not None and p._rec is None and p._pos == len(p._buf):
            # a run of characters read without a word (mistral's name), nothing held: a
            # delta made of them, within what the run may still take, only adds to it
            self._gate.keep, self._gate.budget = run
            return 7
        ms = _tool_base._scan.stretch(p, _DROPS)
        if ms is not None:
            # a stretch read without a word (a name, a key, a value kept whole, the
            # text between tags: the sink keeps or drops it), nothing held: a delta
            # with no character a marker that ends it starts with only adds to it,
            # and sends nothing; nor do the markers the gate may keep there too (the
            # format's QUIET_MARKERS: read there, they lead to another such stretch)
            self._gate.keep, self._gate.quiet = _stretch(p.__class__, ms)
            return 6
        lane = p._lane
        if p._cur is not None and lane is not None and p._rec is None:
            self._piece_lane = lane
            # inside a call: the gate hands each delta to _piece (or, inside arguments
            # sent as written, to their reader: ``_args_state``)
            return self._args_state() if self._args_refined else 4
        return super()._idle_state()

    def _openers(self) -> Optional[dict]:
        """The markers that, read as a whole delta from plain content (nothing
        held), send nothing and leave the parser in a stretch read without a
        word (state 6): the gate keeps such a delta too, and takes that
        stretch's ``(keep, quiet)``.  Found once per class by reading each
        marker of the format after some content (``RcMlxToolParser._openers``)."""
        cls = type(self)
        if cls._idle_state is not _RcMlxPieceStreamer._idle_state:
            return None
        got = _OPENERS.get(cls)
        if got is None:
            saved, gate = self._parser, self._gate
            held = (gate.keep, gate.quiet, self.__dict__.get("_piece_lane"))
            found: dict = {}
            try:
                thinks = {a for a, _ in saved.think_pairs}
                for m in saved._content_markers.markers:
                    if m in thinks:
                        continue
                    self._parser = p = type(saved)()
                    p._push("Sure. ")
                    if self._idle_state() != 1:
                        continue
                    p._events = []
                    p._push(m)
                    if not p._events and not p._calls and self._idle_state() == 6:
                        found[m] = (gate.keep, gate.quiet)
            finally:
                self._parser = saved
                gate.keep, gate.quiet, self._piece_lane = held
            got = _OPENERS[cls] = found
        return got or None

    def _piece(self, delta_text: str) -> Optional[dict]:
        """State 4's delta (the gate checked the stream continues): one compiled
        step.  While the parser stays in the same lane (an argument's text, a
        name, a key) a piece of the open call's arguments is sent as it is;
        otherwise the step is answered as any parser step and the state is
        found anew."""
        self._fed += len(delta_text)
        p = self._parser
        got = _tool_base._scan.step_args(p, delta_text, _ParsedToolCallDelta)
        if got.__class__ is str and p._lane is self._piece_lane:
            return self._args_piece(got)
        self._gate.idle = self._idle_state()
        return self._stepped(got, delta_text)

    def _args_piece(self, text: str) -> Optional[dict]:
        """The answer to a piece of the open call's arguments."""
        slot = self._open_call(self._parser._cur.index, None)
        if slot is None:
            return None
        slot["function"]["arguments"] = text
        return {"tool_calls": [slot]}

    def _stepped(self, got: Any, delta_text: str) -> Optional[dict]:
        """The answer to a compiled step's result: the delta as content
        (``None``), a piece of the open call's arguments (a ``str``), or deltas."""
        if got is None:
            return {"content": delta_text}
        if got.__class__ is str:
            return self._args_piece(got)
        return self._deltas(got)

    def extract_tool_calls_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                     previous_token_ids=None, current_token_ids=None, delta_token_ids=None,
                                     request: Any = None) -> Optional[dict]:
        self._stream_request(request)
        unseen = _unseen(self, previous_text, current_text, delta_text)
        if unseen:
            self._deltas(self._parser.parse_delta(unseen))
        if not delta_text:
            return None
        if delta_text.__class__ is str:
            # the compiled step: a delta that is one piece of the open call's arguments
            # (most deltas inside a call) comes back as its text, no delta objects
            got = _tool_base._scan.step_args(self._parser, delta_text, _ParsedToolCallDelta)  # the scanner in use
        else:
            got = self._parser.parse_delta(delta_text)
        return self._stepped(got, delta_text)

    def _deltas(self, deltas: Optional[list]) -> Optional[dict]:
        if not deltas:
            return None
        if len(deltas) == 1:
            # one delta (a call's name, a closing piece): the loop below, written out
            d = deltas[0]
            if d.content is not None:
                return {"content": d.content}
            slot = self._open_call(d.index, d.name)
            if slot is None:
                return None
            fn = slot["function"]
            if d.name is not None:
                fn["name"] = d.name
            if d.arguments:
                fn["arguments"] = fn.get("arguments", "") + d.arguments
            return {"tool_calls": [slot]}
        content: list[str] = []
        pending: dict[int, Optional[dict]] = {}
        for d in deltas:
            if d.content is not None:
                content.append(d.content)
                continue
            i = d.index
            if i in pending:
                slot = pending[i]
            else:
                slot = pending[i] = self._open_call(i, d.name)
            if slot is None:
                continue
            fn = slot["function"]
            if d.name is not None:
                fn["name"] = d.name
            if d.arguments:
                fn["arguments"] = fn.get("arguments", "") + d.arguments
        out: dict = {}
        if content:
            out["content"] = "".join(content)
        calls = [c for c in pending.values() if c is not None]
        if calls:
            out["tool_calls"] = calls
        return out or None

    def finalize_streaming(self, current_text: str = "") -> Optional[dict]:
        out = self._deltas(self._parser.finish())
        self._end_ids()
        return out

    def _restart(self) -> None:
        """The reset a quiet end of stream left to the next use (``_stale``)."""
        self._stale = False
        self._parser.reset()
        self._gate.done = []  # calls the gate read, never needed in the parser's records
        self._end_ids()

    def _end_ids(self) -> None:
        """The stream is over: the call ids of its indexes are forgotten (a
        reused instance numbers the next stream's calls from 0 again, and
        sends each one's id)."""
        ids = self.__dict__.get("_ids")
        if ids:
            ids.clear()


class RcMlxPoolsideToolParser(_RcMlxPieceStreamer):
    """vllm-mlx's ``poolside_v1``: GLM-4.7 markup (our glm45 format, values as
    above), calls to tools the request does not list dropped, the call's name
    then its argument text streamed as our parser reads them (O(delta))."""

    tool_format = "glm45"
    drop_unlisted = True

    def _new_parser(self) -> Any:
        return _PoolsideGlm45()

    def reset(self) -> None:
        super().reset()
        self._parser = self._new_parser()
        self._tools: Optional[set] = None
        self._request_read = False
        self._ids: dict[int, Optional[str]] = {}  # call index -> its id (None: dropped)
        self._prime()

    def _configure(self, p: Any, request: Any) -> Optional[set]:
        schemas = _request_schemas(request)
        if schemas:
            p.set_streaming_tool_schemas(schemas)
        return _request_tools(request)

    def extract_tool_calls(self, model_output: str, request: Any = None) -> ExtractedToolCallInformation:
        text = self.strip_think_tags(model_output)
        p = self._new_parser()
        tools = self._configure(p, request)
        p.parse_delta(text)  # not finished: a call whose </tool_call> never came is no call (vllm-mlx's rule)
        calls = [{"id": _new_id(), "name": c.name, "arguments": "".join(c.args)} for c in p._calls
                 if c.ok and (not tools or c.name in tools)]
        content = text.partition(_TC_OPEN)[0].strip() or None
        return ExtractedToolCallInformation(tools_called=bool(calls), tool_calls=calls, content=content)

    def _stream_request(self, request: Any) -> None:
        if not self._request_read and request is not None:
            self._tools = self._configure(self._parser, request)
            self._request_read = True

    def _open_call(self, i: int, name: Optional[str]) -> Optional[dict]:
        if name is not None:
            tools = self._tools
            self._ids[i] = _new_id() if not tools or not self.drop_unlisted or name in tools else None
        cid = self._ids.get(i)
        if cid is None:
            return None
        return {"index": i, "id": cid, "type": "function", "function": {"arguments": ""}}

    def _args_piece(self, text: str) -> Optional[dict]:
        # ``_open_call(i, None)`` and the piece in one entry, written out
        i = self._parser._cur.index
        cid = self._ids.get(i)
        if cid is None:
            return None
        return {"tool_calls": [{"index": i, "id": cid, "type": "function", "function": {"arguments": text}}]}


from ..tools._json import DONE as _DONE, JsonReader as _JsonReader, NEED as _NEED  # noqa: E402
from ..tools._json_formats import MistralToolParser as _Mistral  # noqa: E402
from ..tools._base import _Call  # noqa: E402

_M_NAME = re.compile(r"[A-Za-z0-9_.\-]*")
_M_NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"  # _M_NAME's
_M_NAME_LIMIT = 256  # the longest name read (vllm-mlx's name buffer limit)
_M_WS = re.compile(r"\s*")


class _RawJsonLane:
    """The lane our scanner feeds while a JSON value is read: the value is
    checked by our JSON reader, and the source text it consumed is the call's
    arguments, as written (vllm-mlx's mistral streams the model's raw text)."""

    __slots__ = ("p", "reader")

    def __init__(self, p: Any) -> None:
        self.p = p
        self.reader = _JsonReader(_drop_text, True)

    def feed(self, buf: str, pos: int, eof: bool) -> tuple:
        end, status = self.reader.feed(buf, pos, eof)
        if end > pos:
            self.p._emit_args(buf[pos:end])
        return end, status


def _drop_text(_t: str) -> None:
    return None


_DROPS = (_tool_base._drop, _drop_text)  # the sinks of a stretch whose text is dropped (``_scan.stretch``)


class _MlxMistral(_Mistral):
    """Our mistral format with vllm-mlx's reading of it: after ``[TOOL_CALLS]``
    a name then ``[ARGS]`` or directly ``{`` (older checkpoints), and the
    arguments kept as the model wrote them (read by our JSON reader, which
    also tells where they end, so a ``[TOOL_CALLS]`` inside a string is data)."""

    format_name = "vllm_mlx_mistral"

    def reset(self) -> None:
        super().reset()
        # while a name is read across chunks: (the characters it may hold, how many
        # more it may take); a streaming caller may keep the deltas of the run
        # (vllm-mlx's gate, state 7)
        self._name_run: Optional[tuple] = None

    def _section(self, opener):
        yield from self._skip_ws()
        c = yield from self._peek()
        if c == "[" or c == "{" or c is None:
            return (yield from super()._section(opener))
        name = yield from self._read(_M_NAME, _M_NAME_LIMIT, _M_NAME_CHARS, keep=True)  # waits shown as _name_run
        if not name:
            self._fail()
            return None
        if len(name) > _M_NAME_LIMIT:  # no call: the run is content (vllm-mlx's releases its name buffer too)
            self._content(name)
            return None
        ws = yield from self._read(_M_WS, sys.maxsize, keep=True)
        if not (yield from self._expect("[ARGS]")):
            c = yield from self._peek()
            if c != "{":
                # no call after all: the text read is content (vllm-mlx's releases it too)
                self._content(name + (ws or ""))
                return None
        self._open_call(name)
        self._close_call((yield from self._raw_json()))
        return None

    def _raw_json(self):
        lane = _RawJsonLane(self)
        self._pos, status = lane.feed(self._buf, self._pos, self._eof)
        while status == _NEED:
            self._lane = lane
            self._lane_args = False
            yield
            self._lane = None
            status = self._lane_status
            if status is None:
                self._pos, status = lane.feed(self._buf, self._pos, self._eof)
            else:
                self._lane_status = None
        return status == _DONE


_M_IDS: list = []  # mistral call ids, drawn 128 at a time (as ``new_call_id``'s pool)


def _mistral_id() -> str:
    # vllm-mlx's mistral ids: 9 alphanumeric characters (Mistral's templates check them);
    # here 9 hex digits (36 bits from the OS's CSPRNG), one urandom call per 128 ids
    try:
        return _M_IDS.pop()
    except IndexError:
        h = secrets.token_hex(576)  # 128 ids of 9 digits
        _M_IDS.extend([h[i:i + 9] for i in range(0, 1152, 9)])
        return _M_IDS.pop()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_M_IDS.clear)  # a forked child draws its own


class RcMlxMistralToolParser(_RcMlxPieceStreamer):
    """vllm-mlx's ``mistral``: ``[TOOL_CALLS]`` calls (a JSON list, or
    ``NAME[ARGS]{…}`` / ``NAME{…}``) read by our mistral format; streaming
    sends the name once it is known, then each delta's argument text as the
    model wrote it, the call's id on its first piece (O(delta): only the new
    text is read)."""

    tool_format = "mistral"

    def reset(self) -> None:
        super().reset()
        self._parser = _MlxMistral()
        self._ids: dict[int, str] = {}
        self._prime()

    # -- a call the gate reads itself (states 8 and 9, ``text_gate``'s ``calls``):
    # from plain content (the parser waits for a marker with nothing held),
    # ``[TOOL_CALLS]``, the name's deltas and ``[ARGS]`` each as whole deltas,
    # then argument deltas each read whole by the arguments' JSON reader.  The
    # parser does not read them: at ``[ARGS]`` the gate sends the name (what
    # the parser's step sends there), each argument delta is sent as written,
    # and the delta the value ends at the end of closes the call in the
    # parser's records (``_gate_sync``: its call list and offsets, as if it had
    # read the call, its generator waiting again in plain content, where a
    # call leaves it), when the parser is next used; an end of stream that only
    # resets the parser needs none.  Any other delta first has the parser read
    # the call so far (``replay``: it sends again what the gate sent, which is
    # dropped) and then goes on as without the gate.

    def _gate_calls(self) -> Optional[tuple]:
        me = self
        st = self._gate
        reader = _JsonReader
        pop = _M_IDS.pop

        def open_call(pend: list) -> dict:
            i = len(me._parser._calls) + len(st.done)  # the calls the gate read count too
            try:
                cid = pop()  # ``_mistral_id``, written out
            except IndexError:
                cid = _mistral_id()
            name = pend[1] if len(pend) == 3 else "".join(pend[1:-1])
            me._ids[i] = cid
            # the reader's canonical text is not used (the arguments are sent as written):
            # a builtin sink is the cheapest to hand it to
            st.reader = reader(len, True).feed
            st.index = i
            return {"tool_calls": [{"index": i, "type": "function", "function": {"name": name}, "id": cid}]}

        def replay() -> None:
            if st.done:
                me._gate_sync()
            pend = st.pend
            st.pend = []
            st.idle = 0
            if pend:
                me._parser.parse_delta("".join(pend))  # what it sends was sent
            me._fed = len(st.cur) if st.cur.__class__ is str else me._fed

        return ("[TOOL_CALLS]", _M_NAME_CHARS, _M_NAME_LIMIT, "[ARGS]", open_call, replay)

    def _gate_sync(self) -> None:
        st = self._gate
        done = st.done
        st.done = []
        p = self._parser
        ids = self._ids
        for pend in done:
            # [TOOL_CALLS], the name's deltas, [ARGS], the arguments' deltas
            k = pend.index("[ARGS]", 1)
            i = len(p._calls)
            if p._marker_at is None:
                p._marker_at = p._base + p._pos  # where the parser's next character was
            p._calls.append(_Call(i, ids[i], "".join(pend[1:k]), pend[k + 1:], True))
            p._base += sum(map(len, pend))  # the call's text, read (its buffer was read to its end)

    def _gate_holds(self) -> Optional[tuple]:
        # state 1 is ``RcMlxToolParser._idle_state``'s: the parser's content lane
        # (``_run``'s markers), nothing held
        return tuple(self._parser._content_markers.markers)

    def extract_tool_calls(self, model_output: str, request: Any = None) -> ExtractedToolCallInformation:
        if "[TOOL_CALLS]" not in model_output:
            return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=model_output)
        p = _MlxMistral()
        p._push(model_output, eof=True)
        calls = [{"id": _mistral_id(), "name": c.name, "arguments": "".join(c.args)} for c in p._calls if c.ok]
        if not calls:
            return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=model_output)
        content = model_output.partition("[TOOL_CALLS]")[0].strip()
        return ExtractedToolCallInformation(tools_called=True, tool_calls=calls, content=content or None)

    def _open_call(self, i: int, name: Optional[str]) -> Optional[dict]:
        slot: dict = {"index": i, "type": "function", "function": {}}
        if i not in self._ids:  # the id on the call's first piece only
            self._ids[i] = slot["id"] = _mistral_id()
        return slot

    # -- inside the arguments (state 5): the gate feeds each delta to the JSON
    # reader of the raw lane itself; a delta read whole, the value going on, is
    # sent as the call's next argument piece, as written (what the parser's step
    # answers) and kept; the parser takes the kept deltas as read at its next
    # step (``_flush_args``), and a delta the value ends in is finished here
    # (``_after_feed``), as the scanner's step finishes a lane's feed.

    _args_refined = True

    def _args_state(self) -> int:
        p = self._parser
        lane = p._lane
        cur = p._cur
        if lane.__class__ is _RawJsonLane and p._pos == len(p._buf) and p._rec is None and cur is not None \
                and cur.index in self._ids and lane is self._piece_lane:
            st = self._gate
            st.reader = lane.reader
            st.index = cur.index
            return 5
        return 4

    def _piece(self, delta_text: str) -> Optional[dict]:
        if self._gate.done:
            self._gate_sync()
        out = _RcMlxPieceStreamer._piece(self, delta_text)
        st = self._gate
        if st.idle == 4:
            st.idle = self._args_state()
        return out

    def _flush_args(self) -> None:
        st = self._gate
        pend = st.pend
        st.pend = []
        n = 0
        for d in pend:
            n += len(d)
        p = self._parser
        p._cur.args.extend(pend)  # each one the lane's piece of the arguments
        p._base += n              # the text the parser's steps moved past
        self._fed += n

    def _after_feed(self, delta_text: str, end: int, status: int) -> Optional[dict]:
        if self._gate.done:
            self._gate_sync()
        if self._gate.pend:
            self._flush_args()
        self._fed += len(delta_text)
        p = self._parser
        # the scanner's step on the raw lane after its feed (the buffer was read to its end)
        p._base += p._pos
        p._buf = delta_text
        p._pos = end
        if end:
            p._emit_args(delta_text[:end])
        if status != _NEED:
            p._lane_status = status
            p._resume()
        events = p._events
        got: Any = []
        if events:
            p._events = []
            got = None
            if len(events) == 1:
                e = events[0]
                if e[0] == "a" and p._cur is not None and p._cur.index == e[1]:
                    got = e[2]
                elif not (e[0] == "c" and e[2] == delta_text):
                    got = _tool_base._scan.to_deltas(events, _ParsedToolCallDelta)
            elif not (all(e[0] == "c" for e in events) and "".join(e[2] for e in events) == delta_text):
                got = _tool_base._scan.to_deltas(events, _ParsedToolCallDelta)
        # the piece's answer (``_piece``)
        if got.__class__ is str and p._lane is self._piece_lane:
            out = self._args_piece(got)
            self._gate.idle = self._args_state()
            return out
        self._gate.idle = self._idle_state()
        return self._stepped(got, delta_text)


from .._tag_calls import G_CALL_END as _G_CALL_END  # noqa: E402
from ..tools._base import markers as _markers, valid_name as _valid_name  # noqa: E402
from ..tools._max_formats import G_CALL as _G_CALL, Gemma4ToolParser as _Gemma4, _G_NAME_END  # noqa: E402

_G_NEXT = _markers("call:", _G_CALL_END, _G_CALL)


class _MlxGemma4(_Gemma4):
    """Our gemma4 format reading every ``call:NAME{…}`` in one
    ``<|tool_call>`` block, as vllm-mlx's gemma4 does (ours reads one per
    block); text in the block between calls is not content."""

    format_name = "vllm_mlx_gemma4"

    @staticmethod
    def _string_text(body: str) -> str:
        return body  # vllm-mlx's gemma4 keeps a <|"|> string as written (no escapes decoded)

    @staticmethod
    def _key_text(key: str) -> str:
        key = key.strip()  # a key may be written <|"|>quoted<|"|>
        if len(key) >= 10 and key.startswith('<|"|>') and key.endswith('<|"|>'):
            key = key[5:-5]
        return key

    def _section(self, opener):
        while True:
            m = yield from self._until(_G_NEXT, _drop_text)
            if m != "call:":
                return m if m == _G_CALL else None
            name, m = yield from self._text_until(_G_NAME_END)
            name = name.strip()
            if m == "{" and _valid_name(name):
                self._open_call(name)
                self._close_call((yield from self._args(name)))
            else:
                self._fail()
                if m != "{":
                    return m if m == _G_CALL else None


_G_FENCE = re.compile(r"```tool_code\b[^\n]*\n(.*?)```", re.S)
_G_PAREN = re.compile(r"call:(\w+)\s*\(")
_G_ASSIGN = re.compile(r"(?m)^[ \t]*tool_code\s*=\s*(\w+)\s*\(")
_G_BARE = re.compile(r"([A-Za-z_]\w*)\s*\(")


def _paren_end(text: str, i: int) -> int:
    """The index of the ``)`` closing the ``(`` at ``i`` (quoted strings are
    opaque), or -1."""
    depth, q = 0, ""
    n = len(text)
    while i < n:
        ch = text[i]
        if q:
            if ch == "\\":
                i += 1
            elif ch == q:
                q = ""
        elif ch in "'\"":
            q = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _py_call(name: str, text: str, paren: int) -> tuple[list[dict], int]:
    """``NAME(...)`` with its ``(`` at ``paren``, read by our pythonic format: (calls, end)."""
    end = _paren_end(text, paren)
    if end < 0:
        return [], -1
    return _calls_of("pythonic", "[" + name + text[paren:end + 1] + "]"), end + 1


def _gemma_fallback(text: str) -> Optional[tuple[list[dict], str]]:
    """vllm-mlx gemma4's fallback forms (a ```tool_code fence of calls,
    ``call:NAME(...)``, ``tool_code = NAME(...)``), each call read by our
    pythonic format: (calls, the content left), or None without a call."""
    calls: list[dict] = []
    spans: list[tuple[int, int]] = []
    for m in _G_FENCE.finditer(text):
        code, pos = m.group(1), 0
        while True:
            b = _G_BARE.search(code, pos)
            if b is None:
                break
            got, end = _py_call(b.group(1), code, b.end() - 1)
            if end < 0:
                break
            calls.extend(got)
            pos = end
        spans.append((m.start(), m.end()))
    for rx in (_G_PAREN, _G_ASSIGN):
        for m in rx.finditer(text):
            if any(a <= m.start() < b for a, b in spans):
                continue
            got, end = _py_call(m.group(1), text, m.end() - 1)
            if got:
                calls.extend(got)
                spans.append((m.start(), end))
    if not calls:
        return None
    out, pos = [], 0
    for a, b in sorted(spans):
        out.append(text[pos:a])
        pos = max(pos, b)
    out.append(text[pos:])
    content = "".join(out).replace(_G_CALL, "").replace(_G_CALL_END, "")
    content = re.sub(r"(?m)^[ \t]*print\([^\n]*\)[ \t]*$", "", content)
    return calls, content.strip()


class RcMlxGemma4ToolParser(RcMlxToolParser):
    """vllm-mlx's ``gemma4``: ``<|tool_call>call:f{…}call:g{…}<tool_call|>``
    read by our gemma4 format (several calls per block); each call is sent
    once it closes; the one-shot content is the text before the first block."""

    tool_format = "gemma4"

    def _triggers(self) -> Optional[set]:
        # its fallback forms' markers (call:, tool_code) hold ":" and "_"
        trig = super()._triggers()
        return None if trig is None else trig | {":", "_"}

    # Once a call was read, the fallback forms are not looked for (every use of
    # them waits for a stream with no call): inside a block, where nothing is
    # content and the calls are sent at the delta that holds its end marker, a
    # delta is kept until one in which that marker ends (read then; see
    # ``_kept``: the calls go out only when the delta itself holds the marker).
    _call_closers = (_G_CALL_END,)
    _call_triggers = ">"

    def _idle_state(self) -> int:
        if self._parser._calls:
            return super()._idle_state()
        if self._fb_at is not None:
            return 0
        cur = self._gate.cur
        if ":" in cur[-9:] or "_" in cur[-9:]:
            return 0  # a fallback marker may be under way
        idle = super()._idle_state()
        return 0 if idle == 3 else idle  # before a call, every delta is looked at for a fallback form

    def reset(self) -> None:
        super().reset()
        self._parser = _MlxGemma4()
        self._fb_at: Optional[int] = None  # where a fallback form may begin (offset in the output)
        self._fb_tail = ""
        self._fb_done = False
        self._prime()

    def _fallback_step(self, chunk: str, current_text: Any, after: int) -> Optional[dict]:
        """The fallback forms: their markers are looked for in the new text
        only; once one was seen, a delta that can close a call (``)`` or a
        fence) reads the output from the marker on."""
        if self._fb_at is None:
            if current_text.__class__ is str:
                start = len(current_text) - after - len(chunk)
                self._fb_tail = current_text[max(0, start - 9):start]
            w = self._fb_tail + chunk
            hits = [i for i in (w.find("call:"), w.find("tool_code")) if i >= 0]
            if hits:
                self._fb_at = self._fed - after - len(w) + min(hits)
            else:
                self._fb_tail = w[-9:]
                return None
        if after or self._fb_done or not (")" in chunk or "`" in chunk) or current_text.__class__ is not str:
            return {}
        fb = _gemma_fallback(current_text[max(0, self._fb_at - 3):])
        if fb is None:
            return {}
        self._fb_done = True
        return self._result("", fb[0]) or {}

    def extract_tool_calls_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                     previous_token_ids=None, current_token_ids=None, delta_token_ids=None,
                                     request: Any = None) -> Optional[dict]:
        unseen = _unseen(self, previous_text, current_text, delta_text)
        p = self._parser
        if unseen:
            p.parse_delta(unseen)
            if not p._calls and self._fb_at is None:
                # sent already: a fallback call complete in it is not sent again
                self._fallback_step(unseen, current_text, len(delta_text))
                if self._fb_at is not None and _gemma_fallback(current_text[max(0, self._fb_at - 3):
                                                                            len(current_text) - len(delta_text)]):
                    self._fb_done = True
        deltas = p.parse_delta(delta_text)
        # (the kept deltas before it never hold the marker whole: only this delta's text counts)
        calls = self._closed_calls(False) if _G_CALL_END in (delta_text[self._kept:] if self._kept else delta_text) \
            else []
        if not calls and not p._calls:
            fb = self._fallback_step(delta_text, current_text, 0)
            if fb is not None:
                return fb or None  # from a fallback marker on, nothing is content (vllm-mlx's rule)
        if deltas is None:
            return {"content": delta_text} if delta_text else None
        content = "".join(d.content for d in deltas if d.content is not None)
        # as vllm-mlx's: a block's calls are sent when the block closes
        return self._result(content, calls)

    def extract_tool_calls(self, model_output: str, request: Any = None) -> ExtractedToolCallInformation:
        text = self.strip_think_tags(model_output) if "</think>" in model_output else model_output
        if _G_CALL in text:
            p = _MlxGemma4()
            p._push(text, eof=True)
            calls = [{"id": _new_id(), "name": c.name, "arguments": "".join(c.args)} for c in p._calls if c.ok]
            if calls:
                content = text.partition(_G_CALL)[0].strip()
                return ExtractedToolCallInformation(tools_called=True, tool_calls=calls, content=content or None)
        if "(" in text:
            fb = _gemma_fallback(text)
            if fb is not None:
                return ExtractedToolCallInformation(tools_called=True, tool_calls=fb[0], content=fb[1] or None)
        return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=model_output)


class _StreamReset:
    """``parser._xml_parser.reset_streaming_state()``: vllm-mlx's qwen3_xml
    callers (its tests among them) reset a stream through its XML reader;
    here that resets our parser's stream."""

    __slots__ = ("_owner",)

    def __init__(self, owner: Any) -> None:
        self._owner = owner

    def reset_streaming_state(self) -> None:
        self._owner.reset()


class RcMlxQwen3XmlToolParser(RcMlxMultiToolParser):
    """vllm-mlx's ``qwen3_xml`` / ``qwen3_coder`` / ``qwen3.5``: ``<function=…>``
    parameter elements, wrapped in ``<tool_call>`` or bare, read by our
    qwen3_coder format with the request's schemas (values typed by them,
    strings without one, as vllm-mlx's); a bare ``<function=NAME>`` followed
    by prose is no call and stays content; a block left open at the end is
    read all the same."""

    multi = _QWEN
    tool_format = "hermes"

    def __init__(self, tokenizer: Any = None) -> None:
        super().__init__(tokenizer)
        self._xml_parser = _StreamReset(self)

    def reset(self) -> None:
        self._schemas: dict = {}
        self._block_tpl: Optional[tuple] = None
        self.multi = _Multi(
            forms=(_Form(_TC_OPEN, _TC_CLOSE, self._read_block),
                   _Form("<function=", "</function>", self._read_block, prose_abandons=True)),
            content_after_marker=False, drop_unclosed=True, parse_unclosed=True)
        super().reset()

    def _read_block(self, block: str) -> list[dict]:
        # parse_complete reads with a fresh parser of the template's class and
        # settings: one template per set of schemas, never fed
        tpl = self._block_tpl
        if tpl is None or tpl[0] is not self._schemas:
            p = _Qwen3Coder()
            if self._schemas:
                p.set_streaming_tool_schemas(self._schemas)
            tpl = self._block_tpl = (self._schemas, p)
        p = tpl[1]
        if block.startswith(_TC_OPEN) and not block.endswith(_TC_CLOSE):
            block += _TC_CLOSE  # left open at the end: read all the same
        elif block.startswith("<function=") and not block.endswith("</function>"):
            block += "</function>"
        try:
            res = p.parse_complete(block)
        except ValueError:
            return []
        return [{"id": _short_id(c.id), "name": c.name, "arguments": self._literal_objects(c.name, c.arguments)}
                for c in res.tool_calls]

    def _literal_objects(self, name: str, arguments: str) -> str:
        """A value the schema declares ``object``/``array`` written as a Python
        literal (``{'a': 1}``) is read as one, as vllm-mlx's reader does."""
        props = (self._schemas.get(name) or {}).get("properties")
        if not isinstance(props, dict) or "'" not in arguments:
            return arguments
        import ast
        import json

        try:
            args = json.loads(arguments)
        except RecursionError:  # (nested deeper than Python's JSON reader goes: kept as written)
            return arguments
        changed = False
        for k, v in args.items():
            t = props.get(k, {}).get("type") if isinstance(props.get(k), dict) else None
            if t in ("object", "array") and isinstance(v, str) and v[:1] in "{[":
                try:
                    lit = ast.literal_eval(v)
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    continue
                if isinstance(lit, (dict, list)):
                    args[k] = lit
                    changed = True
        return json.dumps(args, ensure_ascii=False) if changed else arguments

    def extract_tool_calls(self, model_output: str, request: Any = None) -> ExtractedToolCallInformation:
        text = self.strip_think_tags(model_output) if "</think>" in model_output else model_output
        p = type(self)()
        p._schemas = _request_schemas(request)
        p._tools = _request_tools(request)
        content: list[str] = []
        calls: list[dict] = []
        p.multi = _replace(p.multi, content_after_marker=True)
        p._step(text, True, content, calls)
        if not calls:
            return ExtractedToolCallInformation(tools_called=False, tool_calls=[], content=text)
        out = "".join(content).strip()
        return ExtractedToolCallInformation(tools_called=True, tool_calls=calls, content=out or None)

    def extract_tool_calls_streaming(self, previous_text: str, current_text: str, delta_text: str,
                                     previous_token_ids=None, current_token_ids=None, delta_token_ids=None,
                                     request: Any = None) -> Optional[dict]:
        if request is not None and not self._schemas:
            self._schemas = _request_schemas(request)
        return super().extract_tool_calls_streaming(previous_text, current_text, delta_text, previous_token_ids,
                                                    current_token_ids, delta_token_ids, request)


# vllm-mlx names served by a class of their own
_OWN_CLASSES: dict[str, type] = {"harmony": RcMlxHarmonyToolParser, "gpt-oss": RcMlxHarmonyToolParser,
                                  "poolside_v1": RcMlxPoolsideToolParser, "mistral": RcMlxMistralToolParser,
                                  "gemma4": RcMlxGemma4ToolParser, "qwen3_xml": RcMlxQwen3XmlToolParser,
                                  "qwen3_coder": RcMlxQwen3XmlToolParser, "qwen3.5": RcMlxQwen3XmlToolParser}

_ORIGINAL_TOOL_PARSERS: dict[str, type] = {}
for _n in [*_TOOL_NAMES, *_MULTI_NAMES, *_OWN_CLASSES]:
    try:
        _ORIGINAL_TOOL_PARSERS[_n] = ToolParserManager.get_tool_parser(_n)
    except (KeyError, ImportError):  # pragma: no cover - another vllm-mlx
        _TOOL_NAMES.pop(_n, None)
        _MULTI_NAMES.pop(_n, None)
        _OWN_CLASSES.pop(_n, None)


# Class attributes vllm-mlx's server reads off a tool parser (markers that
# open tool markup, stop tokens, native tool-message support): the native
# class's values.
_SERVING_ATTRS = ("STREAMING_MARKERS", "SUPPORTS_BARE_JSON_STREAMING", "REQUIRES_EAGER_STREAMING",
                  "SUPPORTS_NATIVE_TOOL_FORMAT", "extra_stop_tokens")


# Where a call of these formats may close: at a marker (all start with "<"),
# or, for the JSON ones, at a closing bracket.
from ..tools._marker_formats import CALL_END as _DS_CALL_END, CALLS_END as _DS_CALLS_END  # noqa: E402

_CALL_CLOSERS = {"deepseek_v3": (_DS_CALL_END, _DS_CALLS_END),
                 "glm45": ("</tool_call>",), "minimax_m2": ("</invoke>", "</minimax:tool_call>"),
                 "qwen3_coder": ("</function>", "</tool_call>")}
_CALL_TRIGGERS = {**{f: "".join(sorted({m[-1] for m in ms})) for f, ms in _CALL_CLOSERS.items()},
                  "granite": "}]", "xlam": "}]"}


def _make_tool_class(name: str, fmt: Any) -> type:
    cls_name = "".join(p.capitalize() for p in name.replace("-", "_").replace(".", "_").split("_")) + "RcMlxToolParser"
    if isinstance(fmt, type):  # a class of its own
        ns = {"mlx_name": name, "__module__": __name__}
        native = _ORIGINAL_TOOL_PARSERS[name]
        for attr in _SERVING_ATTRS:
            if hasattr(native, attr):
                ns[attr] = getattr(native, attr)
        return type(cls_name, (fmt,), ns)
    multi = isinstance(fmt, _Multi)
    ns = {"mlx_name": name, "tool_format": "hermes" if multi else fmt, "__module__": __name__}
    if not multi and fmt in _CALL_TRIGGERS:
        ns["_call_triggers"] = _CALL_TRIGGERS[fmt]
        ns["_call_closers"] = _CALL_CLOSERS.get(fmt, ())
    if multi:
        ns["multi"] = fmt
    native = _ORIGINAL_TOOL_PARSERS[name]
    for attr in _SERVING_ATTRS:
        if hasattr(native, attr):
            ns[attr] = getattr(native, attr)
    return type(cls_name, (RcMlxMultiToolParser if multi else RcMlxToolParser,), ns)


def _tool_classes() -> dict[str, type]:
    # Names that share one vllm-mlx class share one of ours (vllm-mlx's
    # aliases are the same class; its tests check that).
    by_native: dict[type, type] = {}
    out: dict[str, type] = {}
    for name, fmt in [*_TOOL_NAMES.items(), *_MULTI_NAMES.items(), *_OWN_CLASSES.items()]:
        native = _ORIGINAL_TOOL_PARSERS[name]
        cls = by_native.get(native)
        if cls is None:
            cls = by_native[native] = _make_tool_class(name, fmt)
        out[name] = cls
    return out


TOOL_PARSERS: dict[str, type[RcMlxToolParser]] = _tool_classes()
# vllm-mlx's own tool-parser classes under the names served, as shipped.
ORIGINAL_TOOL_PARSERS: dict[str, type] = dict(_ORIGINAL_TOOL_PARSERS)

# vllm-mlx's own classes, as shipped (register(replace=True) changes the registries later).
ORIGINAL_REASONING_PARSERS: dict[str, type] = {n: _mlx_reasoning.get_parser(n) for n in _mlx_reasoning.list_parsers()}


# ---------------------------------------------------------------------------
# Registration and the one command
# ---------------------------------------------------------------------------

def register(replace: bool = False) -> None:
    """Add every class to vllm-mlx's registries: ``rc_<name>``, or vllm-mlx's
    own names with ``replace=True`` (replacing its parsers).  Idempotent.
    Also extends the choices of an already imported ``vllm_mlx.cli``."""
    if not isinstance(replace, bool):
        raise TypeError(f"replace must be a bool, not {type(replace).__name__}")
    for name, cls in REASONING_PARSERS.items():
        key = name if replace else f"rc_{name}"
        if _mlx_reasoning._REASONING_PARSERS.get(key) is not cls:
            _mlx_reasoning.register_parser(key, cls)
    for name, cls in TOOL_PARSERS.items():
        key = name if replace else f"rc_{name}"
        if ToolParserManager.tool_parsers.get(key) is not cls:
            ToolParserManager.register_module(key, cls, force=True)
    cli = sys.modules.get("vllm_mlx.cli")
    if cli is not None:
        # vllm-mlx's CLI froze the tool-parser choices when it was imported.
        choices = getattr(cli, "_TOOL_PARSER_CHOICES", None)
        if isinstance(choices, list):
            for key in ToolParserManager.list_registered():
                if key not in choices:
                    choices.append(key)


def main(argv: Optional[list[str]] = None) -> Any:
    """Register (``REASONING_CORE_REPLACE=1``: under vllm-mlx's own names too),
    then run vllm-mlx's own CLI with ``argv`` (default: ``sys.argv[1:]``)."""
    register(replace=False)
    if replace_requested():
        register(replace=True)
    from vllm_mlx import cli

    register(replace=False)  # extend the CLI's frozen choices
    if argv is not None:
        sys.argv = [sys.argv[0] if sys.argv else "vllm-mlx", *argv]
    return cli.main()


if __name__ == "__main__":  # pragma: no cover - the one command
    # Run the imported module's main, so the registered classes are the ones
    # ``reasoning_core.integrations.vllm_mlx`` exports (not ``__main__``'s copies).
    from reasoning_core.integrations.vllm_mlx import main as _main

    _main()
