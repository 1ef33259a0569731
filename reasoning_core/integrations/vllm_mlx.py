"""reasoning-core inside vllm-mlx: reasoning and tool parsers under vllm-mlx's names.

``REASONING_PARSERS`` maps each name of ``vllm_mlx.reasoning.list_parsers()``
to a subclass of vllm-mlx's ``ReasoningParser``; ``TOOL_PARSERS`` maps the
vllm-mlx tool-parser names we have a format for to subclasses of its
``ToolParser`` over ``reasoning_core.tools`` (``TOOL_NOT_SERVED``: the rest,
with why).  ``register()`` adds them to vllm-mlx's registries as ``rc_<name>``
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
import re
import sys
import uuid
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
from ..families import Family, get_family
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
        self._head = ""       # think: a partial end tag held before the answer's first character
        self._tagged = False  # glm4: a tag was seen while streaming untagged content
        self._fresh = False   # gemma4: right after a channel end, before the answer's first text
        self._install_hot_path()

    def _install_hot_path(self) -> None:
        """Bind this stream's per-delta call as an instance attribute: the
        common chunks (reasoning only; the answer under way) cost one engine
        ``feed`` and one ``DeltaMessage``, the rest go to the general path."""
        spec = self.spec
        tp = self._tp
        feed = tp.feed
        dm = DeltaMessage
        if spec.kind in ("gpt_oss", "harmony"):
            def extract_reasoning_streaming(previous_text: Any, current_text: Any,
                                            delta_text: str) -> Optional[DeltaMessage]:
                if not delta_text:
                    return None
                r, c = feed(delta_text)
                if r or c:
                    return dm(None, c or None, r or None)
                return None
        elif spec.kind == "think" and spec.stream_family is not None:
            eng = tp._engine
            inside = (REASONING, SEEDED)
            slow = self._promote_slow
            box, trim, untagged = spec.strip_box, spec.trim_end_newline, spec.untagged_content
            end = self.end_token

            def extract_reasoning_streaming(previous_text: Any, current_text: Any,
                                            delta_text: str) -> Optional[DeltaMessage]:
                if not delta_text:
                    return None
                if box and "<|" in delta_text:
                    delta_text = delta_text.replace(_BOX[0], "").replace(_BOX[1], "")
                    if not delta_text:
                        return None
                if self._tc is not None:
                    return self._tc_step(delta_text)
                held = tp._held
                was = eng.state in inside
                r, c = feed(delta_text)
                if not c:
                    if not r:
                        return None
                    if not trim or (not self._nl and r[-1] != "\n"):
                        return dm(None, None, r)
                    return self._shape(r, "", eng.state in inside)
                if not was and not r:
                    if self._content_started:
                        return dm(None, c, None)  # the answer under way
                    if untagged and not self._tagged and not tp._seen and end not in c:
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
        if spec.strip_box and "<|" in delta_text:
            delta_text = delta_text.replace(_BOX[0], "").replace(_BOX[1], "")
            if not delta_text:
                return None
        if self._gemma:
            was = self._tp.is_reasoning
            r, c = self._feed(delta_text)
            if was and not self._tp.is_reasoning:
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
        # (c is a suffix of pre: the end tag must not come before the tool call)
        while was and not tp.is_reasoning and c.startswith(_TC_OPEN) and self.end_token not in pre[:len(pre) - len(c)]:
            if self._opened:
                return r, c, True
            # before an explicit start tag vllm-mlx streams the tool call as reasoning
            tp.seed(REASONING)
            r2, c = self._feed(c[len(_TC_OPEN):])
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
        m = self._tc_step(c)
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

    def _gemma_content(self, c: str) -> str:
        # vllm-mlx's gemma4: channel end tokens are dropped from content, and
        # the newlines that open an answer after one are trimmed.
        parts = c.split(self.end_token)
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
                # is dropped and the answer starts afresh after it
                end = self.end_token
                if end in c:
                    pre, _, post = c.rpartition(end)
                    self._tagged = True
                    c = pre.replace(end, "") + self._content_head(post)
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
        if self._tc is not None:
            # an unclosed tool call opened inside reasoning: promoted as it is
            buf, self._tc = self._tc, None
            self._tp.reset()
            return DeltaMessage(content=buf) if buf else None
        was = self._tp.is_reasoning
        r, c = self._tp.finish()
        if self._fast:
            return _msg(r, c)
        if self._gemma:
            if was and not self._tp.is_reasoning:
                self._fresh = True
            return _msg(r, self._gemma_content(c) if c else c)
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
# tool-parser tests); vllm-mlx's lenient parsers that accept several formats
# under one name are listed in TOOL_NOT_SERVED with what they accept beyond.
_TOOL_NAMES: dict[str, str] = {
    "deepseek": "deepseek_v3", "deepseek_v3": "deepseek_v3", "deepseek_r1": "deepseek_v3",
    "kimi": "kimi_k2", "kimi_k2": "kimi_k2", "moonshot": "kimi_k2",
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
    "hermes": f"{_LENIENT}: <tool_call> JSON (ours: hermes) and also <function=...> XML inside or outside "
              "<tool_call>, bare JSON objects, <tool_call_reasoning>; it sends a call on its closing tag",
    "nous": "alias of hermes",
    "qwen": f"{_LENIENT}: <tool_call> JSON, <function=...> XML and [Calling tool: f({{...}})]",
    "qwen3": "alias of qwen",
    "llama": f"{_LENIENT}: <|python_tag|> JSON, bare JSON and <function=...>{{...}}</function>",
    "llama3": "alias of llama",
    "llama4": "alias of llama",
    "mistral": f"{_LENIENT}: [TOOL_CALLS][{{...}}] (ours: mistral) and [TOOL_CALLS]name{{...}} / name[ARGS]{{...}}",
    "qwen3_xml": "vllm-mlx's qwen3_xml also reads <function=...> without <tool_call>, coerces values by schema, "
                 "and streams arguments on its own chunk contract",
    "qwen3_coder": "alias of qwen3_xml",
    "qwen3.5": "alias of qwen3_xml",
    "gemma4": f"{_LENIENT}: <|tool_call>call:f{{...}}<tool_call|> (ours: gemma4) and fallback forms "
              "without the special tokens",
    "deepseek_v4": "vllm-mlx's DSML parser streams and recovers malformed markup on its own contract "
                   "(its tests check the chunk-by-chunk output)",
    "dsml": "alias of deepseek_v4",
    "poolside_v1": "vllm-mlx's poolside_v1 drops calls to tools the request does not list and coerces "
                   "values by schema while streaming",
    "step3p5": "vllm-mlx's step3p5 collapses consecutive duplicate calls",
    "step": "alias of step3p5",
    "harmony": "vllm-mlx's harmony tool parser reads headers split by newlines (<|channel|>final\\n<|message|>), "
               "gives the final channel as the content and sends a call on <|call|>; ours (gpt_oss) reads "
               "gpt-oss's own token text",
    "gpt-oss": "alias of harmony",
}


def _new_id() -> str:
    return f"call_{uuid.uuid4().hex[:8]}"


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

    def reset(self) -> None:
        super().reset()
        self._parser = self._rc_tools.create(self.tool_format)
        self._sent = 0
        self._fed = 0  # characters of the output read so far

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
            out.append({"id": c.id if c.id and c.id.startswith("call_") else _new_id(),
                        "name": c.name, "arguments": "".join(c.args) or "{}"})
        return out

    def _result(self, content: str, calls: list[dict]) -> Optional[dict]:
        out: dict = {}
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
        if previous_text.__class__ is str and len(previous_text) > self._fed:
            # vllm-mlx's server passes text through as content until tool
            # markup looks possible, then calls us with it as previous_text:
            # read what we did not see (it was sent already, so its content
            # is not sent again).
            self._parser.parse_delta(previous_text[self._fed:])
        self._fed = (len(previous_text) if previous_text.__class__ is str else self._fed) + len(delta_text)
        deltas = self._parser.parse_delta(delta_text)
        if deltas is None:
            return {"content": delta_text} if delta_text else None
        content = "".join(d.content for d in deltas if d.content is not None)
        return self._result(content, self._closed_calls(False))

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


_ORIGINAL_TOOL_PARSERS: dict[str, type] = {}
for _n in list(_TOOL_NAMES):
    try:
        _ORIGINAL_TOOL_PARSERS[_n] = ToolParserManager.get_tool_parser(_n)
    except (KeyError, ImportError):  # pragma: no cover - another vllm-mlx
        del _TOOL_NAMES[_n]


# Class attributes vllm-mlx's server reads off a tool parser (markers that
# open tool markup, stop tokens, native tool-message support): the native
# class's values.
_SERVING_ATTRS = ("STREAMING_MARKERS", "SUPPORTS_BARE_JSON_STREAMING", "REQUIRES_EAGER_STREAMING",
                  "SUPPORTS_NATIVE_TOOL_FORMAT", "extra_stop_tokens")


def _make_tool_class(name: str, fmt: str) -> type:
    cls_name = "".join(p.capitalize() for p in name.replace("-", "_").replace(".", "_").split("_")) + "RcMlxToolParser"
    ns = {"mlx_name": name, "tool_format": fmt, "__module__": __name__}
    native = _ORIGINAL_TOOL_PARSERS[name]
    for attr in _SERVING_ATTRS:
        if hasattr(native, attr):
            ns[attr] = getattr(native, attr)
    return type(cls_name, (RcMlxToolParser,), ns)


def _tool_classes() -> dict[str, type]:
    # Names that share one vllm-mlx class share one of ours (vllm-mlx's
    # aliases are the same class; its tests check that).
    by_native: dict[type, type] = {}
    out: dict[str, type] = {}
    for name, fmt in _TOOL_NAMES.items():
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
