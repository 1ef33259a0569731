"""Thread-safety contract (SPEC §7): one parser per request; tokenizers and
tables may be shared; batch objects belong to one engine loop.

Eight threads, each with its own parsers (token split, MAX stream, batch,
text parser, decoder, tool parser) built on the same tokenizer and the same
tables, must give exactly what a sequential run gives.  Creating parsers on a
fresh tokenizer from many threads at once (its table cache is empty) must
give every thread the same delimiters.
"""
from __future__ import annotations

import random
import sys
import threading

import pytest
from tokenizers import Tokenizer

from reasoning_core import ReasoningBatch, ReasoningStreamDecoder, get_parser, text_parser, tools
from strategies import plain
from toolstreams import stream as tool_stream
from vocab import FAMILY_SPECIALS, build_tokenizer, decode, encode

FAMILIES = ("deepseek_r1", "qwen3", "gemma4", "gpt_oss", "granite")
# One small vocabulary with every special token the families above use.
SPECIALS = tuple(dict.fromkeys(s for name in FAMILIES for s in FAMILY_SPECIALS[name]))
TEXTS = {
    "deepseek_r1": "Let me think. 数学 🧠</think>The answer is 4.<think>again</think>done",
    "qwen3": "<think>I should call the tool.</think>Sure.<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>",
    "gemma4": "<|channel>thought\nadd the tens<channel|>It is 42.<|tool_call>call<tool_call|>",
    "gpt_oss": "<|channel|>analysis<|message|>think hard<|end|><|start|>assistant<|channel|>final<|message|>4<|return|>",
    "granite": "Here is my thought process: add. Here is my response: 42. Here's my thought process: x",
}
TOOL_TEXT = 'Sure. <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call> Done.'
N_THREADS = 8


@pytest.fixture(scope="module")
def tok():
    return build_tokenizer(SPECIALS)


def _chunks(seq, seed):
    rng = random.Random(seed)
    out, i = [], 0
    while i < len(seq):
        n = rng.randint(1, 4)
        out.append(seq[i:i + n])
        i += n
    return out


def workload(name, tok, seed, backend):
    """Everything one request does, with parsers of its own; returns every result."""
    ids = encode(tok, TEXTS[name]) * 3
    chunks = _chunks(ids, seed)
    out = []

    parser = get_parser(name, tok, backend=backend).begin()
    out.append([plain(parser.split(c)) for c in chunks] + [plain(parser.finish())])

    stream_parser = get_parser(name, tok, backend=backend)
    reasoning = stream_parser.will_reason_after_prompt([])
    spans = []
    for c in chunks:
        d = stream_parser.stream(c, reasoning)
        reasoning = d.is_still_reasoning
        spans.append(plain(d))
    out.append(spans)

    batch = ReasoningBatch(get_parser(name, tok, backend=backend), 3, backend=backend)
    for slot in range(3):
        batch.open(slot)
    steps = []
    for t in ids:
        res = batch.step([0, 1, 2], [t, t, t])
        steps.append((res.is_reasoning.tolist(), res.is_delimiter.tolist(), res.reasoning_ended.tolist(),
                       res.is_held.tolist(), batch.thinking_mask().tolist()))
    steps.append([batch.finish(slot) for slot in range(3)])
    out.append(steps)

    tp = text_parser(name, backend=backend)
    text = decode(tok, ids)
    out.append([tp.feed(text[i:i + 5]) for i in range(0, len(text), 5)] + [tp.finish()])

    dec = ReasoningStreamDecoder(get_parser(name, tok, backend=backend).begin(), tok)
    out.append([tuple(dec.push(c)) for c in chunks] + [tuple(dec.finish())])

    tp = tools.create("hermes")
    out.append(tool_stream(tp, [TOOL_TEXT[i:i + 7] for i in range(0, len(TOOL_TEXT), 7)], with_ids=False))
    return out


def _run_threads(fn, n=N_THREADS):
    """Run ``fn(i)`` in ``n`` threads started together; re-raise the first error."""
    barrier = threading.Barrier(n)
    results: list = [None] * n
    errors: list = []

    def body(i):
        try:
            barrier.wait()
            results[i] = fn(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    if errors:
        raise errors[0]
    return results


def test_parsers_per_thread_equal_a_sequential_run(backend, tok):
    jobs = [(FAMILIES[i % len(FAMILIES)], i) for i in range(N_THREADS)]
    expected = [workload(name, tok, seed, backend) for name, seed in jobs]
    for _ in range(3):
        got = _run_threads(lambda i: workload(jobs[i][0], tok, jobs[i][1], backend))
        assert got == expected


def test_shared_tables_across_threads(backend, tok):
    """Parsers built from one ``Tables`` object in many threads at once."""
    tables = get_parser("gpt_oss", tok).tables
    cls = type(get_parser("gpt_oss", tok))
    ids = encode(tok, TEXTS["gpt_oss"]) * 20

    def run(i):
        p = cls(tables, backend=backend).begin()
        return [plain(p.split(c)) for c in _chunks(ids, i)] + [plain(p.finish())]

    expected = [run(i) for i in range(N_THREADS)]
    assert _run_threads(run) == expected


def test_parser_creation_races_on_a_fresh_tokenizer(backend, tok):
    fresh = Tokenizer.from_str(tok.to_str())  # nothing cached for this object yet
    expected = {name: get_parser(name, tok, backend=backend).tables.patterns for name in FAMILIES}

    def create(i):
        order = FAMILIES[i % len(FAMILIES):] + FAMILIES[: i % len(FAMILIES)]
        return {name: get_parser(name, fresh, backend=backend).tables.patterns for name in order}

    for got in _run_threads(create):
        assert got == expected
    ids = encode(tok, TEXTS["qwen3"])
    assert plain(get_parser("qwen3", fresh, backend=backend).begin().split(ids)) == plain(
        get_parser("qwen3", tok, backend=backend).begin().split(ids))
