"""Behaviour classes vLLM's own parser tests found, checked against vLLM's classes.

* ``minimax_m3`` and ``k2_horizon``: vLLM's classes find their delimiters in
  the streamed text, so a delimiter the model writes in several tokens
  (although the vocabulary has it as one) still splits; ``minimax_m3``'s id
  helpers match each delimiter as the tokenizer's encoding of its text.
* ``kimi_k3``: ``strip_content_streaming`` (what vLLM's composed Kimi K3
  parser calls), the content ids of the step that ended reasoning, and a
  class that is not engine-based (the composition reads the accumulated text).
* A tokenizer that cannot encode (a ``Mock``) still builds a parser.
* Tool parsers: a request vLLM's parser refuses is refused (``kimi_k3`` named
  choice without its structural tag), vLLM's default strict level per name,
  ``mistral``'s guided bare array for ``"required"``, one class for names vLLM
  serves with one class.

Skips without vLLM.
"""
from __future__ import annotations

import json
import string
from types import SimpleNamespace
from unittest.mock import Mock

import pytest

from vllm_helpers import chat_request, import_vllm, vllm_tokenizer

import_vllm()

from reasoning_core.integrations import vllm as rcv  # noqa: E402


class CharTokenizer:
    """One id per printable character, plus whole-marker vocabulary entries.

    ``atomic``: ``encode`` writes a marker as its one id; otherwise as its
    characters (the vocabulary still lists the marker).  ``chars`` gives the
    ids of a text written character by character, as a model may write a
    marker at run time."""

    def __init__(self, markers: tuple[str, ...], atomic: bool = True) -> None:
        self.markers = tuple(sorted(markers, key=len, reverse=True))
        self.atomic = atomic
        self.vocab: dict[str, int] = {}
        for t in markers + tuple(string.printable):
            self.vocab.setdefault(t, len(self.vocab) + 1)
        self.inverse = {i: t for t, i in self.vocab.items()}

    def get_vocab(self) -> dict[str, int]:
        return dict(self.vocab)

    def __len__(self) -> int:
        return len(self.vocab)

    def tokenize(self, text: str) -> list[str]:
        out, i = [], 0
        while i < len(text):
            m = next((m for m in self.markers if self.atomic and text.startswith(m, i)), None)
            out.append(m or text[i])
            i += len(m) if m else 1
        return out

    def encode(self, text: str, add_special_tokens: bool = False, **_: object) -> list[int]:
        return [self.vocab[t] for t in self.tokenize(text)]

    def chars(self, text: str) -> list[int]:
        return [self.vocab[c] for c in text]

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        ids = [ids] if isinstance(ids, int) else ids
        return "".join(self.inverse[i] for i in ids)

    def convert_ids_to_tokens(self, ids, skip_special_tokens: bool = False) -> list[str]:
        return [self.inverse[i] for i in ids]

    def convert_tokens_to_ids(self, tokens):
        # (HF: an unknown token has no id here, the vocabulary has no unk)
        return self.vocab.get(tokens) if isinstance(tokens, str) else [self.vocab.get(t) for t in tokens]

    def convert_tokens_to_string(self, tokens) -> str:
        return "".join(tokens)


def _own(kind: str, name: str):
    cls = rcv._vllm_own_class(kind, name)
    if cls is None:
        pytest.skip(f"vLLM's {kind} parser {name!r} does not import here")
    return cls


def _stream(parser, chunks, ids_of):
    """vLLM's unit-test pattern: every step through extract_reasoning_streaming,
    the gate asked after each.  (reasoning, content, gate answers, content ids
    of the first step the gate said ended)."""
    prev_t, prev_i, r, c, gates, cids = "", [], [], [], [], None
    for chunk in chunks:
        d_i = ids_of(chunk)
        cur_t, cur_i = prev_t + chunk, prev_i + d_i
        m = parser.extract_reasoning_streaming(prev_t, cur_t, chunk, prev_i, cur_i, d_i)
        if m is not None:
            r.append(m.reasoning or "")
            c.append(m.content or "")
        gates.append(bool(parser.is_reasoning_end_streaming(cur_i, d_i)))
        if gates[-1] and cids is None:
            cids = list(parser.extract_content_ids(d_i))
        prev_t, prev_i = cur_t, cur_i
    return "".join(r), "".join(c), gates, cids


def _chunkings(text: str):
    yield [text]
    for k in (1, 2, 3, 5, 7):
        yield [text[i:i + k] for i in range(0, len(text), k)]


# ---------------------------------------------------------------- minimax_m3

MM3 = ("<mm:think>", "</mm:think>")
MM3_TEXTS = [
    "<mm:think>Let me think.</mm:think>The answer is 4.",
    "</mm:think>The answer is 4.",
    "The answer is 4.",
    "<mm:think>Let me think.",
    "<mm:think></mm:think>The answer is 4.",
    "The answer</mm:think> is 4.",
]
MM3_ENABLED = ["Let me think.</mm:think>The answer is 4.", "Let me think.", "</mm:think>The answer is 4."]


def _mm3_cases():
    for text in MM3_TEXTS:
        yield {}, text
    for text in MM3_ENABLED:
        yield {"thinking_mode": "enabled"}, text


@pytest.mark.parametrize("kwargs,text", list(_mm3_cases()))
def test_minimax_m3_markers_written_in_several_tokens_split_as_vllm(kwargs, text):
    """The vocabulary has each marker as one token, the model writes it in
    characters: the same reasoning, content, gate answers and content ids as
    vLLM's class, for every chunking."""
    tok = CharTokenizer(MM3)
    theirs_cls = _own("reasoning", "minimax_m3")
    ck = {"chat_template_kwargs": kwargs} if kwargs else {}
    for chunks in _chunkings(text):
        ours = _stream(rcv.REASONING_PARSERS["minimax_m3"](tok, **ck), chunks, tok.chars)
        theirs = _stream(theirs_cls(tok, **ck), chunks, tok.chars)
        assert ours == theirs, chunks


@pytest.mark.parametrize("kwargs", [{}, {"thinking_mode": "enabled"}])
def test_minimax_m3_id_helpers_match_the_markers_encodings(kwargs):
    """A tokenizer that encodes the markers as several tokens: is_reasoning_end,
    extract_content_ids, count_reasoning_tokens and the gate of a parser that
    never streamed answer as vLLM's class."""
    tok = CharTokenizer(MM3, atomic=False)
    theirs_cls = _own("reasoning", "minimax_m3")
    ck = {"chat_template_kwargs": kwargs} if kwargs else {}
    texts = MM3_TEXTS + MM3_ENABLED + ["<mm:think>a</mm:think>b<mm:think>c", "x<mm:thi", "abc</mm:"]
    for text in texts:
        ids = tok.encode(text)
        ours, theirs = rcv.REASONING_PARSERS["minimax_m3"](tok, **ck), theirs_cls(tok, **ck)
        assert bool(ours.is_reasoning_end(ids)) == bool(theirs.is_reasoning_end(ids)), text
        assert list(ours.extract_content_ids(ids)) == list(theirs.extract_content_ids(ids)), text
        assert ours.count_reasoning_tokens(ids) == theirs.count_reasoning_tokens(ids), text
        for k in range(1, len(ids) + 1):
            for d in (1, 3):
                args = (ids[:k], ids[max(0, k - d):k])
                assert bool(ours.is_reasoning_end_streaming(*args)) == bool(theirs.is_reasoning_end_streaming(*args)), \
                    (text, k, d)


def test_minimax_m3_skipped_special_marker_still_splits():
    """Markers that are special tokens the detokenizer skips: the text lacks
    them, their ids put them back (vLLM's class, reading the text only, gives
    it all as content; ours splits as one-shot does)."""
    tok = vllm_tokenizer(MM3)
    parser = rcv.REASONING_PARSERS["minimax_m3"](tok)
    pieces = ["<mm:think>", "Let me think.", "</mm:think>", "The answer is 4."]
    r, c, prev_t, prev_i = [], [], "", []
    for piece in pieces:
        for t in tok.encode(piece, add_special_tokens=False):
            cur_i = prev_i + [t]
            cur_t = tok.decode(cur_i, skip_special_tokens=True)
            m = parser.extract_reasoning_streaming(prev_t, cur_t, cur_t[len(prev_t):], prev_i, cur_i, [t])
            if m is not None:
                r.append(m.reasoning or "")
                c.append(m.content or "")
            prev_t, prev_i = cur_t, cur_i
    assert ("".join(r), "".join(c)) == ("Let me think.", "The answer is 4.")


# ---------------------------------------------------------------- k2_horizon

K2 = ("<ifm|think>", "</ifm|think>", "<ifm|think_fast>", "</ifm|think_fast>", "<ifm|think_faster>",
      "</ifm|think_faster>", "<ifm|tool_calls>")


@pytest.mark.parametrize("text", [
    "plan<ifm|tool_calls><ifm|tool_call>ping</ifm|tool_call></ifm|tool_calls>",
    "<ifm|think>plan</ifm|think>The answer is 4.",
    "plan</ifm|think>The answer is 4.",
])
def test_k2_horizon_markers_written_in_several_tokens_split_as_vllm(text):
    tok = CharTokenizer(K2)
    theirs_cls = _own("reasoning", "k2_horizon")
    for chunks in _chunkings(text):
        ours = _stream(rcv.REASONING_PARSERS["k2_horizon"](tok), chunks, tok.chars)
        theirs = _stream(theirs_cls(tok), chunks, tok.chars)
        assert ours[:3] == theirs[:3], chunks


def test_k2_horizon_composed_hands_the_call_to_the_tool_parser():
    """vLLM's ParserManager composition, the tool-calls marker written in
    characters: the reasoning and the call as with vLLM's classes."""
    from vllm.parser.parser_manager import ParserManager

    _own("reasoning", "k2_horizon")
    tok = CharTokenizer(K2)
    tools = [{"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}}]
    text = "plan<ifm|tool_calls><ifm|tool_call>ping</ifm|tool_call></ifm|tool_calls>"

    def run(prefix):
        request = chat_request(tools=tools, tool_choice="auto")
        cls = ParserManager.get_parser(tool_parser_name=prefix + "k2_horizon",
                                       reasoning_parser_name=prefix + "k2_horizon", enable_auto_tools=True)
        parser = cls(tok, request.tools, chat_template_kwargs={"reasoning_effort": "high"})
        reasoning, names = [], []
        for i, ch in enumerate(text):
            d = parser.parse_delta(delta_text=ch, delta_token_ids=tok.chars(ch), request=request,
                                   prompt_token_ids=[] if i == 0 else None, finished=i == len(text) - 1)
            if d is not None:
                reasoning.append(d.reasoning or "")
                names += [t.function.name for t in d.tool_calls if t.function is not None and t.function.name]
        return "".join(reasoning), names

    assert run("rc_") == run("") == ("plan", ["ping"])


# ---------------------------------------------------------------- kimi_k3

K3 = ("<|open|>", "<|close|>", "<|sep|>")
K3_CONTENT = [
    "<|open|>response<|sep|>The answer is 4.<|close|>response<|sep|><|close|>message<|sep|>",
    "The answer is 4.<|close|>message<|sep|>",
    "The answer is 4.",
    "<|open|>response<|sep|>The answer <|open|>response<|sep|>is 4.",
]


@pytest.mark.parametrize("text", K3_CONTENT)
def test_kimi_k3_strip_content_streaming_as_vllm(text):
    tok = CharTokenizer(K3)
    theirs_cls = _own("reasoning", "kimi_k3")
    for chunks in _chunkings(text):
        out = []
        for parser in (rcv.REASONING_PARSERS["kimi_k3"](tok), theirs_cls(tok)):
            prev, got = "", []
            for chunk in chunks:
                m = parser.strip_content_streaming(prev, prev + chunk)
                got.append(m.content if m is not None else "")
                prev += chunk
            out.append("".join(got))
        assert out[0] == out[1], chunks


def test_kimi_k3_content_ids_of_the_ending_step_as_vllm():
    """The close marker split across steps: the gate (vLLM's serving loop asks
    it each step: the class is not engine-based) and is_reasoning_end answer as
    vLLM's class, and extract_content_ids of the step the gate ends on gives
    the ids after the marker."""
    tok = CharTokenizer(K3)
    theirs_cls = _own("reasoning", "kimi_k3")
    ids = tok.encode("<|open|>think<|sep|>plan<|close|>think<|sep|><|open|>response<|sep|>answer")
    for k in (1, 2, 3, 4, 5):
        ours, theirs, prev_i, checked = rcv.REASONING_PARSERS["kimi_k3"](tok), theirs_cls(tok), [], False
        for i in range(0, len(ids), k):
            d = ids[i:i + k]
            cur = prev_i + d
            for p in (ours, theirs):
                p.extract_reasoning_streaming(tok.decode(prev_i), tok.decode(cur), tok.decode(d), prev_i, cur, d)
            gate = theirs.is_reasoning_end_streaming(cur, d)
            assert ours.is_reasoning_end_streaming(cur, d) == gate, (k, i)  # vLLM's window rule
            assert ours.is_reasoning_end(cur) == theirs.is_reasoning_end(cur), (k, i)
            if not checked and gate:
                checked = True
                assert list(ours.extract_content_ids(d)) == list(theirs.extract_content_ids(d)), k
            prev_i = cur
        assert checked


@pytest.mark.parametrize("tools", [False, True])
def test_kimi_k3_thinking_off_one_shot_unwraps_without_tools(tools):
    """Thinking off, one-shot: without a tool parser to read the channels,
    vLLM's class unwraps the response; with tools it leaves them for it."""
    tok = CharTokenizer(K3)
    theirs_cls = _own("reasoning", "kimi_k3")
    kw = {"chat_template_kwargs": {"thinking": False}}
    req = chat_request(tools=_weather_tools()) if tools else chat_request()
    for text in ("<|open|>response<|sep|>The answer is 4.<|close|>response<|sep|><|close|>message<|sep|>",
                 "The answer is 4.<|close|>message<|sep|>", "The answer is 4."):
        assert rcv.REASONING_PARSERS["kimi_k3"](tok, **kw).extract_reasoning(text, req) == \
            theirs_cls(tok, **kw).extract_reasoning(text, req), text
    # text before the response opener: vLLM's class drops it, ours keeps it
    text = "Plan.<|open|>response<|sep|>The answer is 4."
    got = rcv.REASONING_PARSERS["kimi_k3"](tok, **kw).extract_reasoning(text, req)
    assert got == (None, text if tools else "Plan.The answer is 4.")


@pytest.mark.parametrize("thinking", [False, True])
def test_kimi_k3_in_vllms_composed_parser_as_vllm(thinking):
    """vLLM composes the ``kimi_k3`` name in its Kimi K3 parser (so with
    ``register(replace=True)``), which unwraps the response only for a reasoning
    class of its own kind: ours is one, and streams the same reply."""
    from vllm.parser.kimi_k3 import KimiK3Parser

    theirs_cls = _own("reasoning", "kimi_k3")
    tok = CharTokenizer(K3)
    text = ("<|open|>think<|sep|>Let me think.<|close|>think<|sep|>" if thinking else "") + \
        "<|open|>response<|sep|>The answer is 4.<|close|>response<|sep|><|close|>message<|sep|>"

    def run(reasoning_cls):
        composed = type("Composed", (KimiK3Parser,), {"reasoning_parser_cls": reasoning_cls})
        kw = {"thinking": thinking}
        parser, req = composed(tok, chat_template_kwargs=kw), chat_request(chat_template_kwargs=kw)
        r, c, ids = [], [], tok.encode(text)
        for i, t in enumerate(ids):
            d = parser.parse_delta(delta_text=tok.decode([t]), delta_token_ids=[t], request=req,
                                   prompt_token_ids=[1] if i == 0 else None, finished=i == len(ids) - 1)
            if d is not None:
                r.append(d.reasoning or "")
                c.append(d.content or "")
        return "".join(r), "".join(c)

    assert run(rcv.REASONING_PARSERS["kimi_k3"]) == run(theirs_cls) == \
        ("Let me think." if thinking else "", "The answer is 4.")


def test_kimi_k3_is_engine_based_as_vllm():
    """vLLM's composed Kimi K3 parser strips the content from the accumulated
    text, which vLLM's serving loop keeps only for parsers that are not engine-based."""
    theirs_cls = _own("reasoning", "kimi_k3")
    assert rcv.REASONING_PARSERS["kimi_k3"].engine_based_streaming == bool(
        getattr(theirs_cls, "engine_based_streaming", False))


# ---------------------------------------------------------------- Mock tokenizers

def test_a_tokenizer_that_cannot_encode_builds_and_splits_text():
    theirs_cls = _own("reasoning", "openai_gptoss")
    ours, theirs = rcv.REASONING_PARSERS["openai_gptoss"](Mock()), theirs_cls(Mock())
    assert ours.is_reasoning_end([]) is theirs.is_reasoning_end([]) is True
    assert ours.is_reasoning_end_streaming([], []) is theirs.is_reasoning_end_streaming([], []) is True
    parser = rcv.REASONING_PARSERS["qwen3"](Mock())
    text = "<think>Let me think.</think>The answer is 4."
    r, c = [], []
    for i in range(0, len(text), 3):
        m = parser.extract_reasoning_streaming("", "", text[i:i + 3], [], [], [i])
        if m is not None:
            r.append(m.reasoning or "")
            c.append(m.content or "")
    assert ("".join(r), "".join(c)) == ("Let me think.", "The answer is 4.")


# ---------------------------------------------------------------- tool parsers

def _weather_tools():
    return [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def test_kimi_k3_named_choice_refused_without_its_structural_tag():
    from vllm.exceptions import VLLMValidationError
    from vllm.sampling_params import StructuredOutputsParams

    theirs_cls = _own("tool", "kimi_k3")
    tok = CharTokenizer(K3)
    choice = {"type": "function", "function": {"name": "get_weather"}}
    for cls in (rcv.TOOL_PARSERS["kimi_k3"], theirs_cls):
        with pytest.raises(VLLMValidationError):
            cls(tok).adjust_request(chat_request(tools=_weather_tools(), tool_choice=choice))
        req = chat_request(tools=_weather_tools(), tool_choice=choice)
        req.structured_outputs = StructuredOutputsParams(structural_tag='{"type": "structural_tag", "format": {}}')
        assert cls(tok).adjust_request(req).skip_special_tokens is False


def test_default_tool_strict_level_is_vllms_for_every_name():
    for name in rcv.TOOL_PARSERS:
        own = rcv._vllm_own_class("tool", name)
        if own is None:
            continue
        ours = rcv.VllmToolParser.default_tool_strict_level.fget(SimpleNamespace(vllm_name=name))
        assert ours == own.default_tool_strict_level, name
    assert rcv._vllm_own_class("tool", "glm47").default_tool_strict_level != \
        rcv._VllmToolParser.default_tool_strict_level  # the case that matters is covered


def test_mistral_required_choice_guided_bare_array():
    """A tokenizer without Mistral's grammar: vLLM's mistral constrains a
    required choice to a bare JSON array of calls; ours asks for the same
    constraint and reads that array, one-shot and streamed."""
    theirs_cls = _own("tool", "mistral")
    tok = vllm_tokenizer(("[TOOL_CALLS]",))

    def request():
        return chat_request(tools=_weather_tools(), tool_choice="required", response_format={"type": "json_object"})

    ours_req = rcv.TOOL_PARSERS["mistral"](tok).adjust_request(request())
    theirs_req = theirs_cls(tok).adjust_request(request())
    assert ours_req.response_format == theirs_req.response_format
    assert ours_req.structured_outputs == theirs_req.structured_outputs
    assert ours_req.structured_outputs is not None
    text = '[{"name": "get_weather", "arguments": {"city": "Paris"}}]'
    out = rcv.TOOL_PARSERS["mistral"](tok).extract_tool_calls(text, ours_req)
    assert out.tools_called and [(c.function.name, json.loads(c.function.arguments)) for c in out.tool_calls] == \
        [("get_weather", {"city": "Paris"})]
    assert not out.content
    parser, prev, name, args = rcv.TOOL_PARSERS["mistral"](tok), "", None, []
    for i in range(0, len(text), 4):
        chunk = text[i:i + 4]
        m = parser.extract_tool_calls_streaming(prev, prev + chunk, chunk, [], [], [1], ours_req)
        prev += chunk
        for call in (m.tool_calls if m is not None else []):
            name = name or (call.function.name if call.function else None)
            args.append((call.function.arguments or "") if call.function else "")
        assert m is None or not m.content
    assert name == "get_weather" and json.loads("".join(args)) == {"city": "Paris"}
    # not guided ("auto"): the same text stays content
    auto = rcv.TOOL_PARSERS["mistral"](tok).extract_tool_calls(text, chat_request(tools=_weather_tools()))
    assert not auto.tools_called and auto.content == text


def test_mistral_required_choice_first_text_judged_whatever_the_deltas():
    """(found by the vLLM tool fuzz target) the first text of a guided request
    is the bare array unless it is the marker: a first delta that was a part
    of the marker (``[TOOL_CA``) decided it before the text went on. That text
    is now held until it is the marker or is not, so the deltas do not matter;
    a stream that ends inside it ends as the bare array would."""
    tok = vllm_tokenizer(("[TOOL_CALLS]",))
    req = rcv.TOOL_PARSERS["mistral"](tok).adjust_request(
        chat_request(tools=_weather_tools(), tool_choice="required", response_format={"type": "json_object"}))
    call = '[{"name": "get_weather", "arguments": {"city": "Paris"}}]'
    for text in ("[TOOL_CAgggg#: x", " [TOOL_CALLS]" + call, "[TOOL_CALLS]" + call, call, "[TOOL_C", "[", "  ",
                 ' "argum x', " \n" + call, " [TOOL_C"):
        seen = set()
        for size in (1, 2, 3, 8, len(text)):
            parser, prev, content, calls = rcv.TOOL_PARSERS["mistral"](tok), "", [], []
            for i in range(0, len(text), size):
                chunk = text[i:i + size]
                m = parser.extract_tool_calls_streaming(prev, prev + chunk, chunk, [], [], [1], req)
                prev += chunk
                if m is not None:
                    content.append(m.content or "")
                    calls += [(c.function.name, c.function.arguments) for c in m.tool_calls or () if c.function]
            m = parser.finish_streaming()
            if m is not None:
                content.append(m.content or "")
                calls += [(c.function.name, c.function.arguments) for c in m.tool_calls or () if c.function]
            seen.add(("".join(content), tuple(n for n, _ in calls if n), "".join(a or "" for _, a in calls)))
        assert len(seen) == 1, (text, seen)
        content, names, args = seen.pop()
        if "get_weather" in text:
            assert names == ("get_weather",) and json.loads(args) == {"city": "Paris"}, text
        else:
            assert names == () and "[TOOL_CALLS]" not in content, (text, content)


def test_names_vllm_serves_with_one_class_share_ours():
    assert rcv.TOOL_PARSERS["glm45"] is rcv.TOOL_PARSERS["glm47"]
    groups: dict = {}
    for name in rcv.TOOL_PARSERS:
        own = rcv._vllm_own_class("tool", name)
        if own is not None:
            groups.setdefault(own, []).append(name)
    for names in groups.values():
        ours = {rcv.TOOL_PARSERS[n] for n in names}
        formats = {rcv.TOOL_PARSERS[n].rc_format for n in names}
        assert len(ours) == 1 or len(formats) > 1 or len({rcv._TOOL_WS.get(n) for n in names}) > 1, names
