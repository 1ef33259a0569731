"""Through MAX 26.7's own serving path: MAX's parsers vs ours under MAX's names.

MAX's chat route, ``OpenAIChatResponseGenerator``, ``TokenGeneratorPipeline``
and ``TextTokenizer`` run behind a scripted model worker
(``max_serving_helpers.py``).  For each MAX name we serve, the same requests are
answered by an app configured with MAX's parser names and one with ``rc_<name>``;
the responses (reasoning, content, tool calls with parsed arguments, usage with
reasoning tokens, finish_reason) and the context MAX hands the worker (prompt
ids, grammar) must be equal: streamed one token and 2-4 tokens per step, and
one-shot; thinking on and off; truncated; no markers; calls after reasoning;
answers ending in a prefix of a marker.  The harness is validated with MAX's
parser on both sides (must agree on everything).

Needs MAX's serving extras on PYTHONPATH; in CI the peers stage installs them:

    pip install --no-deps --target /tmp/max-site pydantic-settings==2.11.0 python-dotenv==1.2.1 \
        opentelemetry-api==1.35.0 opentelemetry-sdk==1.35.0 opentelemetry-exporter-otlp-proto-http==1.35.0 \
        opentelemetry-exporter-otlp-proto-common==1.35.0 opentelemetry-proto==1.35.0 \
        opentelemetry-semantic-conventions==0.56b0 opentelemetry-exporter-prometheus==0.56b0 protobuf==6.33.5 \
        importlib-metadata==8.7.0 zipp==3.23.0 sse-starlette==2.1.3 aiofiles==24.1.0 \
        python-json-logger==3.3.0 asgiref==3.9.1 uvicorn==0.38.0
    PYTHONPATH=/tmp/max-site python -m pytest -q tests/integrations/test_max_serving.py

Without them (or without MAX) it skips.  ``REASONING_CORE_FULL_ENGINE_TESTS=1``
widens the sweep (more chunkings and generated calls).
"""
from __future__ import annotations

import functools
import os
import random

import pytest

import max_serving_helpers as h
from sglang_max_helpers import CONTENT, REASONING

from max.pipelines.context.status import GenerationStatus  # noqa: E402

h.load_max_parsers()
rcm = h.rcm
FULL = bool(os.environ.get("REASONING_CORE_FULL_ENGINE_TESTS"))

# Each served MAX model: its reasoning name, tool name, the markers its
# vocabulary holds as single tokens, and how its template opens the answer.
REASONING_NAMES = sorted(rcm.REASONING_PARSERS)
TOOL_NAMES = sorted(rcm.TOOL_PARSERS)
SERVED = sorted(set(REASONING_NAMES) | set(TOOL_NAMES))

D = "｜DSML｜"
_TOOL_TOKENS = {
    "deepseekv3": ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>",
                   "<｜tool▁sep｜>"),
    "kimik2_5": ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
                 "<|tool_call_argument_begin|>", "<|tool_call_end|>"),
    "glm45": ("<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"),
    "qwen3_5": ("<tool_call>", "</tool_call>"),
    "laguna": ("<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"),
    "minimax_m2": ("<minimax:tool_call>", "</minimax:tool_call>"),
    "gemma4": ("<|tool_call>", "<tool_call|>", '<|"|>'),
    "inkling": ("<|content_invoke_tool_json|>",),
}
_TOOL_TOKENS["deepseekv3_1"] = _TOOL_TOKENS["deepseekv3"]


@functools.lru_cache(maxsize=None)
def setup(name: str):
    """(folder, reasoning name, tool name, start, end) for one served model."""
    reasoning = name if name in REASONING_NAMES else None
    tool = name if name in TOOL_NAMES else None
    if reasoning:
        spec = rcm.REASONING_PARSERS[name].spec
        start, end = spec.start, spec.end
    else:
        start = end = None
    specials: tuple = ("<|user|>", "<|assistant|>")
    added: tuple = _TOOL_TOKENS.get(name, ())
    if name == "muse_glimmer":
        specials += ("<|start|>", "<|message|>", "<|eom|>", "<|eot|>", "assistant")
        gen_on = gen_off = "<|start|>assistant"
        start, end = "<|start|>assistant to=self<|message|>", "<|eom|>"
    elif name == "gemma4":
        added += ("<|channel>", "<channel|>", "<|think|>")
        gen_on, gen_off = "<|think|><|assistant|>", "<|assistant|>"
        start = "<|channel>thought\n"
    elif reasoning:
        added += (spec.start, spec.end)
        gen_on, gen_off = "<|assistant|>" + spec.start, "<|assistant|>" + spec.start + spec.end
        if name == "inkling":
            gen_on, gen_off = "<|assistant|>", "<|assistant|>"
    else:
        gen_on = gen_off = "<|assistant|>"
    template = ("{% for m in messages %}<|user|>{{ m['content'] }}{% endfor %}"
                "{% if enable_thinking is defined and not enable_thinking %}" + gen_off + "{% else %}" + gen_on
                + "{% endif %}")
    folder = h.model_folder(specials, template, "<|endoftext|>", tuple(dict.fromkeys(added)))
    return folder, reasoning, tool, start, end


@functools.lru_cache(maxsize=None)
def apps(name: str):
    folder, reasoning, tool, _, _ = setup(name)
    theirs = h.serve(folder, reasoning, tool)
    ours = h.serve(folder, reasoning and f"rc_{reasoning}", tool and f"rc_{tool}")
    return theirs, ours


def _call_text(name: str) -> str:
    from test_tools_max_differential import render

    rnd = random.Random(name)
    return render(name, [("get_weather", {"city": "Paris", "n": 3})], rnd)


def completions(name: str) -> dict[str, tuple[str, GenerationStatus]]:
    _, reasoning, tool, start, end = setup(name)
    eos, length = GenerationStatus.END_OF_SEQUENCE, GenerationStatus.MAXIMUM_LENGTH
    out: dict[str, tuple[str, GenerationStatus]] = {"no_markers": (CONTENT, eos),
                                                    "prefix_at_end": ("It is 42 <t", eos),
                                                    "blank_lines_at_end": (CONTENT + "\n\n", eos)}
    answer = (lambda s: "<|start|>assistant to=user<|message|>" + s + "<|eot|>") if name == "muse_glimmer" else str
    if reasoning:
        think = start + REASONING + end
        out.update({
            "think_answer": (think + answer(CONTENT), eos),
            "open_answer": (REASONING + end + answer(CONTENT), eos),
            "truncated": (start + REASONING, length),
            "truncated_open": (REASONING, length),
            "think_prefix_at_end": (think + answer("It is 42 <t"), eos),
        })
    if tool:
        call = _call_text(name)
        if name == "muse_glimmer":
            call = "<|start|>assistant to=functions.get_weather<|message|>" + call + "<|eom|>"
        out["call"] = ("Let me check. " + call if name not in ("llama", "muse_glimmer") else call, eos)
        if reasoning:
            out["think_call"] = (start + REASONING + end + ("" if name == "muse_glimmer" else "\n\n") + call, eos)
    return out


TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "n": {"type": "integer"}}}}}]


def _requests(name: str):
    _, reasoning, tool, _, _ = setup(name)
    for thinking in ((True, False) if reasoning else (True,)):
        for stream in (True, False):
            body = {"model": "m", "messages": [{"role": "user", "content": "What is the weather?"}], "stream": stream,
                    "chat_template_kwargs": {"enable_thinking": thinking}}
            if stream:
                body["stream_options"] = {"include_usage": True}
            if tool:
                body["tools"] = TOOLS
            yield f"{'on' if thinking else 'off'}/{'stream' if stream else 'oneshot'}", body


def _chunkings(ids: list[int], rnd: random.Random, stream: bool):
    if not stream:
        yield "whole", [ids] if ids else []
        return
    yield "1/step", [[t] for t in ids]
    for k in range(6 if FULL else 1):
        out, i = [], 0
        while i < len(ids):
            n = rnd.randint(2, 4)
            out.append(ids[i:i + n])
            i += n
        yield f"2-4/step#{k}", out


def _context(served) -> tuple:
    c = served.worker.contexts[-1]
    return ([int(t) for t in c.tokens.prompt], c.grammar is not None, bool(getattr(c, "grammar_enforced", False)),
            c.json_schema)


def run_name(name: str, theirs, ours):
    """Every (case, request, chunking) of one name: (label, MAX's response, ours)."""
    tok = theirs.tokenizer.delegate
    rnd = random.Random(name)
    for case, (text, final) in completions(name).items():
        ids = tok.encode(text, add_special_tokens=False)
        for label, body in _requests(name):
            for how, script in _chunkings(ids, rnd, body["stream"]):
                a = h.chat(theirs, body, script, final)
                ca = _context(theirs)
                b = h.chat(ours, body, script, final)
                cb = _context(ours)
                yield f"{case}/{label}/{how}", (a, ca), (b, cb)


@pytest.mark.parametrize("name", SERVED)
def test_harness_agrees_with_itself(name):
    """MAX's parser on both sides: the harness must give equal answers."""
    theirs, _ = apps(name)
    again = h.serve(*setup(name)[:3])
    bad = [(label, a, b) for label, a, b in run_name(name, theirs, again) if _comparable(a) != _comparable(b)]
    assert not bad, bad[:3]


def _comparable(resp):
    (r, ctx) = resp
    return r, ctx


# Where MAX's own parser loses what the model wrote, ours keeps it (docs/engines/max.md):
# - qwen3_5, laguna (no end-of-stream hook reaches MAX's classes of these
#   names): a streamed answer ending in a prefix of the call opener loses it.
# - llama: MAX's class does not parse streamed calls (the JSON is content).
_HOLDS_TAIL = {"qwen3_5", "laguna"}


def _documented(name: str, label: str, a: dict, b: dict) -> bool:
    streamed = "/stream/" in label
    if name in _HOLDS_TAIL and streamed and label.split("/")[0].endswith("prefix_at_end"):
        rest_a = {k: v for k, v in a.items() if k != "content"}
        rest_b = {k: v for k, v in b.items() if k != "content"}
        return rest_a == rest_b and b["content"] == a["content"] + "<t"
    if name == "llama" and streamed and label.startswith("call/"):
        return (a["tool_calls"] == [] and b["content"] is None and a["content"] == _call_text("llama")
                and [c[:2] for c in b["tool_calls"]] == [("get_weather", {"city": "Paris", "n": 3})]
                and b["finish"] == "tool_calls" and a["usage"] == b["usage"])
    return False


@pytest.mark.parametrize("name", SERVED)
def test_responses_equal_maxs(name):
    theirs, ours = apps(name)
    results = list(run_name(name, theirs, ours))
    bad, documented = [], 0
    for label, a, b in results:
        if a == b:
            continue
        if a[1] == b[1] and _documented(name, label, a[0], b[0]):
            documented += 1
            continue
        bad.append((label, a[0], b[0]))
    assert not bad, f"{len(bad)}/{len(results)} differ; first: {bad[:4]}"
    # The documented cases are the ones this sweep was built to show.
    assert documented == 0 or name in _HOLDS_TAIL | {"llama"}
