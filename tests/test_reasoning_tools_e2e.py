"""Reasoning + tool calls end to end (issue 7, item 5).

A completion is tokenized with a real vocabulary (DeepSeek, Qwen3) or a built
one carrying the family's special tokens, and streamed one token at a time or
in random chunks through the token engine. The content side, decoded
incrementally, goes to the tool-call parser; its deltas are merged by index.
Reasoning may end at ``</think>`` or at an implicit terminator (the tool-call
section opener), which stays on the content side so the tool parser sees the
marker intact.

Asserted for every stream: the reasoning text, the content outside calls and
the calls (name + parsed arguments) equal what we expect and what
``parse_complete`` gives on the full content text; call-like text inside the
reasoning block never becomes a call.

Two content paths are checked: ``parser.split()`` with the content ids decoded
incrementally here, and ``ReasoningStreamDecoder.push()`` (what a server uses).
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Callable, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasoning_core import ReasoningStreamDecoder, get_parser, tools
from tests.vocab import decode, deepseek_tokenizer, encode, family_tokenizer, qwen3_tokenizer

fixture_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# DeepSeek markers (single special tokens in the real vocabulary).
DS_CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
DS_CALLS_END = "<｜tool▁calls▁end｜>"
DS_CALL_BEGIN = "<｜tool▁call▁begin｜>"
DS_CALL_END = "<｜tool▁call▁end｜>"
DS_SEP = "<｜tool▁sep｜>"
K_SECTION = "<|tool_calls_section_begin|>"
K_SECTION_1 = "<|tool_call_section_begin|>"  # K2.5's singular spelling
K_SECTION_END = "<|tool_calls_section_end|>"
K_CALL = "<|tool_call_begin|>"
K_ARGS = "<|tool_call_argument_begin|>"
K_CALL_END = "<|tool_call_end|>"


def ds_call(name: str, args: str) -> str:
    return f"{DS_CALL_BEGIN}{name}{DS_SEP}{args}{DS_CALL_END}"


def kimi_call(name: str, idx: int, args: str) -> str:
    return f"{K_CALL}functions.{name}:{idx}{K_ARGS}{args}{K_CALL_END}"


def hermes_call(name: str, args: dict) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


@dataclass(frozen=True)
class Case:
    id: str
    family: str  # reasoning parser
    tool: str  # tool parser
    tokenizer: Callable
    text: str  # the model's output
    reasoning: str  # expected reasoning text
    content: str  # expected content outside calls
    calls: tuple  # expected (name, arguments) pairs
    marker: str  # the opener the tool parser must receive intact
    prompt: Optional[str] = None  # seeds the state (a template that injected <think>)
    ids: tuple = field(default=())  # expected call ids when the format carries them


WEATHER = ("get_weather", {"city": "Paris"})
TIME = ("get_time", {"tz": "Europe/Paris", "format": 24})

DS_SECTION = DS_CALLS_BEGIN + ds_call("get_weather", '{"city": "Paris"}') + ds_call(
    "get_time", '{"tz": "Europe/Paris", "format": 24}') + DS_CALLS_END
# Call markup inside the think block: a lenient deepseek_v31 tool parser would
# take a bare call-begin as a call if the reasoning ever reached it.
DS_THINK = ("The user wants the weather in Paris and the time. I could write "
            + ds_call("get_weather", '{"city": "Rome"}') + " but Rome is wrong. 数学 🧠")

QWEN_SECTION = hermes_call(*WEATHER) + "\n" + hermes_call(*TIME)
QWEN_THINK = ('\nThe user wants the weather in Paris. A call looks like {"name": "get_weather", '
              '"arguments": {"city": "Rome"}} but not for Rome. Résumé café.\n')
CODER_SECTION = ("<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n"
                 "</tool_call>\n<tool_call>\n<function=get_time>\n<parameter=tz>\nEurope/Paris\n</parameter>\n"
                 "<parameter=format>\n24\n</parameter>\n</function>\n</tool_call>")

KIMI_SECTION = (K_SECTION + kimi_call("get_weather", 0, '{"city": "Paris"}')
                + kimi_call("get_time", 1, '{"tz": "Europe/Paris", "format": 24}') + K_SECTION_END)
KIMI_THINK = "The user wants the weather. I will call functions.get_weather:0 with {\"city\": \"Paris\"}."

GLM_SECTION = ("<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>\n"
               "<tool_call>get_time\n<arg_key>tz</arg_key>\n<arg_value>Europe/Paris</arg_value>\n"
               "<arg_key>format</arg_key>\n<arg_value>24</arg_value>\n</tool_call>")
MINIMAX_SECTION = ('<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n'
                   '</invoke>\n<invoke name="get_time">\n<parameter name="tz">Europe/Paris</parameter>\n'
                   '<parameter name="format">24</parameter>\n</invoke>\n</minimax:tool_call>')
XML_THINK = "The user wants the weather in Paris and the time there."

CASES = [
    # (a) DeepSeek V3.1, real vocabulary: explicit </think>, then content, then the section.
    Case("deepseek_v31-end", "deepseek_v3", "deepseek_v31", deepseek_tokenizer,
         f"<think>{DS_THINK}</think>I'll check both.{DS_SECTION}",
         DS_THINK, "I'll check both.", (WEATHER, TIME), DS_CALLS_BEGIN),
    # ... reasoning ended by the tool-calls-begin token itself (no </think>).
    Case("deepseek_v31-implicit", "deepseek_v3", "deepseek_v31", deepseek_tokenizer,
         f"<think>{DS_THINK}{DS_SECTION}", DS_THINK, "", (WEATHER, TIME), DS_CALLS_BEGIN),
    # ... the template injected <think> (prompt-seeded reasoning), terminator ends it.
    Case("deepseek_v31-seeded", "deepseek_v3", "deepseek_v31", deepseek_tokenizer,
         f"{DS_THINK}{DS_SECTION}Done.", DS_THINK, "Done.", (WEATHER, TIME), DS_CALLS_BEGIN,
         prompt="<｜User｜>Weather in Paris?<｜Assistant｜><think>"),
    # (b) Qwen3 / hermes, real Qwen3 vocabulary: <tool_call> ends reasoning implicitly.
    Case("qwen3-hermes-implicit", "qwen3", "hermes", qwen3_tokenizer,
         f"<think>{QWEN_THINK}{QWEN_SECTION}", QWEN_THINK, "\n", (WEATHER, TIME), "<tool_call>"),
    Case("qwen3-hermes-end", "qwen3", "hermes", qwen3_tokenizer,
         f"<think>{QWEN_THINK}</think>\n\nLet me check.\n{QWEN_SECTION}\nThat's all.",
         QWEN_THINK, "\n\nLet me check.\n\n\nThat's all.", (WEATHER, TIME), "<tool_call>"),
    # Qwen3.5 starts in reasoning; its calls are qwen3_coder XML. Values typed as JSON (24 -> int).
    Case("qwen3_5-coder-implicit", "qwen3_5", "qwen3_coder", qwen3_tokenizer,
         f"{XML_THINK}\n{CODER_SECTION}", XML_THINK + "\n", "\n", (WEATHER, TIME), "<tool_call>"),
    # (c) Kimi K2 (starts in reasoning): the section begin ends it, and the ids are the model's own.
    Case("kimi_k2-implicit", "kimi_k2", "kimi_k2", lambda: family_tokenizer("kimi_k2"),
         f"{KIMI_THINK}{KIMI_SECTION}", KIMI_THINK, "", (WEATHER, TIME), K_SECTION,
         ids=("functions.get_weather:0", "functions.get_time:1")),
    Case("kimi_k2-singular", "kimi_k2", "kimi_k2", lambda: family_tokenizer("kimi_k2"),
         f"<think>{KIMI_THINK}{KIMI_SECTION.replace(K_SECTION, K_SECTION_1)}",
         KIMI_THINK, "", (WEATHER, TIME), K_SECTION_1,
         ids=("functions.get_weather:0", "functions.get_time:1")),
    Case("kimi_k2-end", "kimi_k2", "kimi_k2", lambda: family_tokenizer("kimi_k2"),
         f"{KIMI_THINK}</think>I will call the tools.{KIMI_SECTION}",
         KIMI_THINK, "I will call the tools.", (WEATHER, TIME), K_SECTION,
         ids=("functions.get_weather:0", "functions.get_time:1")),
    # (d) GLM-4.5 (starts in content) and MiniMax-M2 (starts in reasoning), XML-style values.
    Case("glm45-implicit", "glm45", "glm45", lambda: family_tokenizer("glm45"),
         f"<think>{XML_THINK}{GLM_SECTION}", XML_THINK, "\n", (WEATHER, TIME), "<tool_call>"),
    Case("glm45-end", "glm45", "glm45", lambda: family_tokenizer("glm45"),
         f"<think>{XML_THINK}</think>\nI will check.{GLM_SECTION}", XML_THINK, "\nI will check.\n",
         (WEATHER, TIME), "<tool_call>"),
    Case("minimax_m2-implicit", "minimax_m2", "minimax_m2", lambda: family_tokenizer("minimax_m2"),
         f"{XML_THINK}\n{MINIMAX_SECTION}", XML_THINK + "\n", "", (WEATHER, TIME), "<minimax:tool_call>"),
    Case("minimax_m2-end", "minimax_m2", "minimax_m2", lambda: family_tokenizer("minimax_m2"),
         f"<think>\n{XML_THINK}\n</think>\n\nI will check.\n{MINIMAX_SECTION}",
         f"\n{XML_THINK}\n", "\n\nI will check.\n", (WEATHER, TIME), "<minimax:tool_call>"),
]


# ----------------------------------------------------------------- the stream


class ToolStream:
    """Content text in, tool-call deltas merged by index."""

    def __init__(self, name: str) -> None:
        self.parser = tools.create(name)
        self.content: list[str] = []
        self.calls: dict[int, dict] = {}

    def feed(self, text: str) -> None:
        if text:
            self._take(self.parser.parse_delta(text), text)

    def finish(self) -> None:
        self._take(self.parser.finish(), "")

    def _take(self, res, raw: str) -> None:
        if res is None:
            self.content.append(raw)
            return
        for d in res:
            if d.content is not None:
                assert d.id is None and d.name is None and d.arguments is None
                self.content.append(d.content)
                continue
            call = self.calls.setdefault(d.index, {"id": None, "name": None, "arguments": ""})
            if d.name is not None:
                assert call["name"] is None, "a call is named once"
                call["id"], call["name"] = d.id, d.name
            if d.arguments is not None:
                assert call["name"] is not None, "arguments before the name"
                call["arguments"] += d.arguments

    def result(self) -> tuple[str, list[dict]]:
        assert sorted(self.calls) == list(range(len(self.calls)))
        return "".join(self.content), [self.calls[i] for i in sorted(self.calls)]


class IncrementalDecode:
    """UTF-8-safe incremental decode of one side's ids (the test's own, simple one)."""

    def __init__(self, tok) -> None:
        self.tok = tok
        self.ids: list[int] = []
        self.sent = 0

    def push(self, ids, final: bool = False) -> str:
        self.ids.extend(ids)
        text = decode(self.tok, self.ids)
        if not final and text.endswith("\ufffd"):
            return ""
        out, self.sent = text[self.sent:], len(text)
        return out


def run_split(case: Case, tok, backend: str, chunks: list[list[int]]):
    """The token engine's ``split()``; content ids decoded here and fed to the tool parser."""
    parser = get_parser(case.family, tok, backend=backend)
    parser.begin(encode(tok, case.prompt) if case.prompt is not None else None)
    reasoning, content_dec, ts = IncrementalDecode(tok), IncrementalDecode(tok), ToolStream(case.tool)
    reasoning_text, content_pieces = [], []
    for chunk in chunks:
        s = parser.split(chunk)
        reasoning_text.append(reasoning.push(s.reasoning_ids))
        piece = content_dec.push(s.content_ids)
        content_pieces.append(piece)
        ts.feed(piece)
    s = parser.finish()
    reasoning_text.append(reasoning.push(s.reasoning_ids, final=True))
    piece = content_dec.push(s.content_ids, final=True)
    content_pieces.append(piece)
    ts.feed(piece)
    ts.finish()
    return "".join(reasoning_text), content_pieces, ts


def run_decoder(case: Case, tok, backend: str, chunks: list[list[int]]):
    """What a server does: ``ReasoningStreamDecoder.push()`` then the tool parser."""
    parser = get_parser(case.family, tok, backend=backend)
    parser.begin(encode(tok, case.prompt) if case.prompt is not None else None)
    # Tool-call markers are special tokens in some vocabularies: a server that
    # parses tool calls keeps special tokens' text, as the README loop does.
    dec = ReasoningStreamDecoder(parser, tok, field="reasoning_content", skip_special_tokens=False)
    ts = ToolStream(case.tool)
    reasoning_text, content_pieces = [], []
    for chunk in chunks:
        d = dec.push(chunk)
        reasoning_text.append(d.reasoning)
        content_pieces.append(d.content)
        ts.feed(d.content)
    d = dec.finish()
    reasoning_text.append(d.reasoning)
    content_pieces.append(d.content)
    ts.feed(d.content)
    ts.finish()
    return "".join(reasoning_text), content_pieces, ts


def check(case: Case, reasoning: str, content_pieces: list[str], ts: ToolStream) -> None:
    full_content = "".join(content_pieces)
    # The reasoning side never reaches the tool parser; the marker arrives intact.
    assert reasoning == case.reasoning
    assert case.marker in full_content
    assert case.marker not in reasoning
    content, calls = ts.result()
    one_shot = tools.create(case.tool).parse_complete(full_content)
    # Streaming equals one-shot on the full content text ...
    assert content == (one_shot.content or "")
    assert [(c["name"], json.loads(c["arguments"])) for c in calls] == [
        (c.name, json.loads(c.arguments)) for c in one_shot.tool_calls]
    assert [c["arguments"] for c in calls] == [c.arguments for c in one_shot.tool_calls]
    # ... and both equal what the model meant.
    assert content == case.content
    assert [(c["name"], json.loads(c["arguments"])) for c in calls] == [(n, a) for n, a in case.calls]
    if case.ids:
        assert tuple(c["id"] for c in calls) == case.ids
        assert tuple(c.id for c in one_shot.tool_calls) == case.ids
    else:
        assert all(c["id"].startswith("call_") and len(c["id"]) == 29 for c in calls)
        assert len({c["id"] for c in calls}) == len(calls)


def ids_of(case: Case):
    tok = case.tokenizer()
    return tok, encode(tok, case.text)


def chunked(ids: list[int], sizes: list[int]) -> list[list[int]]:
    out, i, k = [], 0, 0
    while i < len(ids):
        n = sizes[k % len(sizes)] if sizes else len(ids)
        out.append(ids[i:i + n])
        i += n
        k += 1
    return out


RUNNERS = [pytest.param(run_split, id="split"), pytest.param(run_decoder, id="decoder")]


# ----------------------------------------------------------------- tests


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_tokenization_keeps_the_markers_single_tokens(case):
    # The premise: the markers are special tokens, so the engine sees them as ids.
    tok, ids = ids_of(case)
    marker_ids = encode(tok, case.marker)
    assert len(marker_ids) == 1
    assert marker_ids[0] in ids
    assert decode(tok, ids) == case.text


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_one_token_at_a_time(case, runner, backend):
    tok, ids = ids_of(case)
    reasoning, pieces, ts = runner(case, tok, backend, [[i] for i in ids])
    check(case, reasoning, pieces, ts)
    # One token per delta: the marker token decodes to one whole content piece.
    assert case.marker in pieces


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_one_delta(case, runner, backend):
    tok, ids = ids_of(case)
    check(case, *runner(case, tok, backend, [ids]))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
@fixture_ok
@given(sizes=st.lists(st.integers(1, 9), min_size=1, max_size=12), use_decoder=st.booleans())
def test_random_chunks(case, backend, sizes, use_decoder):
    tok, ids = ids_of(case)
    runner = run_decoder if use_decoder else run_split
    check(case, *runner(case, tok, backend, chunked(ids, sizes)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_random_chunks_seeded(case, backend):
    # A few fixed random chunkings, independent of the Hypothesis profile.
    tok, ids = ids_of(case)
    rng = random.Random(case.id)
    for _ in range(5):
        sizes = [rng.randint(1, 6) for _ in range(rng.randint(1, 8))]
        check(case, *run_split(case, tok, backend, chunked(ids, sizes)))
        check(case, *run_decoder(case, tok, backend, chunked(ids, sizes)))


@pytest.mark.parametrize("case", [c for c in CASES if "</think>" in c.text], ids=lambda c: c.id)
def test_think_block_text_is_not_a_call_even_if_it_reaches_the_tool_parser(case):
    # A server without a reasoning parser hands the raw output to the tool parser:
    # the closed think block (with call-like text in it) still yields no call.
    res = tools.create(case.tool).parse_complete(case.text)
    assert [(c.name, json.loads(c.arguments)) for c in res.tool_calls] == [(n, a) for n, a in case.calls]


def test_deepseek_reasoning_side_would_have_parsed_as_a_call():
    # Guards the strength of the DeepSeek cases: the call markup inside the think
    # block *is* a call to the lenient tool parser, so keeping it out matters.
    res = tools.create("deepseek_v31").parse_complete(DS_THINK)
    assert [(c.name, json.loads(c.arguments)) for c in res.tool_calls] == [("get_weather", {"city": "Rome"})]


def _server_loop():
    # The documentation's server loop (docs/how-to/server-loop.md), executed as written.
    import re
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "docs" / "how-to" / "server-loop.md"
    if not path.exists():  # a copy of tests/ without the docs (installed-wheel and sdist runs)
        pytest.skip("docs/how-to/server-loop.md is not next to these tests")
    for block in re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S):
        if "def chat_deltas" in block:
            ns: dict = {}
            exec(compile(block, str(path), "exec"), ns)
            return ns["chat_deltas"]
    raise AssertionError(f"the server-loop example (def chat_deltas) is missing from {path}")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_documented_server_loop_produces_openai_deltas(case):
    chat_deltas = _server_loop()
    tok, ids = ids_of(case)
    prompt = encode(tok, case.prompt) if case.prompt is not None else None
    for deltas in ([[i] for i in ids], [ids]):
        out = list(chat_deltas(deltas, tok, prompt, family=case.family, tool_format=case.tool))
        reasoning, content, calls = [], [], {}
        for d in out:
            assert len(d) == 1 and set(d) <= {"reasoning_content", "content", "tool_calls"}
            reasoning.append(d.get("reasoning_content", ""))
            content.append(d.get("content", ""))
            for tc in d.get("tool_calls", []):
                if tc["index"] not in calls:
                    assert tc["type"] == "function" and tc["id"] and tc["function"]["name"]
                    calls[tc["index"]] = {"id": tc["id"], "name": tc["function"]["name"], "arguments": ""}
                else:
                    assert "id" not in tc and "name" not in tc["function"]
                calls[tc["index"]]["arguments"] += tc["function"].get("arguments", "")
        assert "".join(reasoning) == case.reasoning
        assert "".join(content) == case.content
        got = [calls[i] for i in sorted(calls)]
        assert [(c["name"], json.loads(c["arguments"])) for c in got] == [(n, a) for n, a in case.calls]
        if case.ids:
            assert tuple(c["id"] for c in got) == case.ids
