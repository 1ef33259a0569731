"""reasoning-core under vLLM's names, against vLLM's own parsers (vLLM 0.33).

Differential: for every served name whose vLLM parser builds with an offline
tokenizer, ours and vLLM's give the same reasoning and content on generated
well-formed completions, streamed one token per step exactly as vLLM's
serving layer calls them (``ParserManager`` + ``parse_delta``) and as vLLM's
unit tests call them (``extract_reasoning_streaming`` per step), and one-shot.
Skips cleanly when vLLM is not installed.
"""
from __future__ import annotations

import functools
import re

import pytest

from vllm_helpers import (
    chat_request,
    deepseek_vllm_tokenizer,
    detokenize_steps,
    encode,
    ids_of,
    import_vllm,
    stream_direct,
    stream_served,
    vllm_tokenizer,
)

import_vllm()

from vllm.reasoning import ReasoningParserManager  # noqa: E402

from reasoning_core.integrations import vllm as rcv  # noqa: E402
from vocab import FAMILY_SPECIALS  # noqa: E402

REASONING = "The user asks for the sum of two numbers.\nLet me think about it step by step. "
CONTENT = "The answer is **4**."


_SPECIAL = re.compile(r"<[^<>\s]+>|\[/?[A-Z_]+\]")


def specials_of(fam) -> tuple[str, ...]:
    """The special tokens a family's markers are made of (composite markers
    such as ``<|open|>think<|sep|>`` give their bracketed parts)."""
    if fam.name in FAMILY_SPECIALS:
        return FAMILY_SPECIALS[fam.name]
    if fam.text_markers:
        return ()
    out: list[str] = []
    for field in ("start", "end", "terminators", "header_terminators", "headers", "frames", "boundaries", "enable"):
        for marker in getattr(fam, field):
            for tok in _SPECIAL.findall(marker):
                if tok not in out:
                    out.append(tok)
    return tuple(out)


# Extra vocabulary some of vLLM's parsers require at construction.
EXTRA_SPECIALS = {
    "poolside_v1": ("<assistant>",),
    "k2_horizon": ("<ifm|think>", "</ifm|think>"),
    "minimax_m3": ("<mm:think>", "</mm:think>"),
}


def tokenizer_for(name: str):
    fam = rcv.family_of(name)
    if fam == "deepseek_r1" or name in ("deepseek_v3", "deepseek_v4", "deepseek_v41"):
        return deepseek_vllm_tokenizer()
    from reasoning_core.families import get_family

    return vllm_tokenizer(specials_of(get_family(fam)) + EXTRA_SPECIALS.get(name, ()))


def completions(name: str) -> dict[str, list[str]]:
    from reasoning_core.families import get_family

    f = get_family(rcv.family_of(name))
    if not f.start:
        return {"no_markers": [CONTENT]}
    s, e = f.start[0], f.end[0]
    label = f.label or ""
    return {
        "full": [s, label + REASONING, e, CONTENT],
        "no_start": [label + REASONING, e, CONTENT],
        "truncated": [s, label + REASONING],
        "truncated_no_start": [label + REASONING],
        "no_markers": [CONTENT],
        "empty_reasoning": [s, e, CONTENT],
        "no_content": [s, label + REASONING, e],
        "newline_content": [s, label + REASONING, e, "\n\n" + CONTENT],
    }


# Where vLLM's own parser of a name gives a different answer from ours on these
# completions, and why (README, "vLLM": differences).  A listed case that
# agrees passes; one that differs is an expected failure with this reason.
_ALL = None
KNOWN_DIFFERENCES: dict[str, tuple[object, object, str]] = {
    # name: (cases or _ALL, tests or _ALL, reason)
    "step3": (("full", "truncated", "empty_reasoning", "no_content", "newline_content"), _ALL,
              "vLLM's step3 only knows </think>: a leading <think> stays in its reasoning text; ours consumes it"),
    "cohere_command3": (_ALL, _ALL, "vLLM's class for this name only answers is_reasoning_end; the parsing is "
                        "vllm.parser.cohere_command.CohereCommandParser, which vLLM composes by name"),
    "cohere_command4": (_ALL, _ALL, "as cohere_command3"),
    "granite": (_ALL, _ALL, "vLLM's granite is a text-regex parser: a thought without the response marker is all "
                "content, empty reasoning leaks ':' into the streamed content, is_reasoning_end is not "
                "implemented (None)"),
    "hunyuan_a13b": (_ALL, _ALL, "vLLM's parser matches its markers as token-id sequences of the real Hunyuan "
                     "vocabulary; with the vocabulary built here it streams everything as content"),
    "openai_gptoss": (_ALL, _ALL, "vLLM's class for this name only detects the reasoning boundary "
                      "(extract_reasoning raises; vLLM parses harmony output in HarmonyParser with the real "
                      "o200k_harmony vocabulary); ours splits the channels itself"),
    "inkling": (_ALL, ("token_level",), "vLLM's inkling token answers: not yet reconciled"),
    "mistral": (_ALL, ("prompt",), "a prompt ending in [THINK]: vLLM's mistral ignores it (no prompt hook), reads "
                "the reasoning as content and drops the [/THINK]; ours starts in reasoning, as the prompt says"),
    "muse": (_ALL, _ALL, "vLLM's muse drops text outside a recipient channel (content after <|eom|> with no "
             "to=user header, header-less output when streaming); ours keeps it as content. Completions in "
             "the full channel format are not generated here yet"),
    "musespark1x": (_ALL, _ALL, "as muse"),
    "muse_glimmer": (_ALL, _ALL, "as muse"),
}


def answer(fn):
    """fn()'s value, or the exception type it raised (vLLM's stubs raise)."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001
        return ("raised", type(exc).__name__)


_R1_MULTI = ("vLLM's R1 rules put a <think> into the reasoning text when a multi-token step holds it "
             "without </think>; ours consumes it")
MORE_DIFFERENCES: dict[str, list[tuple[object, object, str]]] = {
    name: [(_ALL, ("multi",), _R1_MULTI)] for name in ("deepseek_r1", "step5", "holo2", "ernie45", "deepseek_v3", "hy_v4")
}
MORE_DIFFERENCES["step3"] = [(_ALL, ("count",), "vLLM's step3 counts the <think> token as reasoning")]
MORE_DIFFERENCES["kimi_k3"] = [(_ALL, ("count",), "vLLM's kimi_k3 reasoning-token count: not yet reconciled")]


def check(name: str, case: str, test: str, ours, theirs) -> None:
    if ours != theirs:
        entries = ([KNOWN_DIFFERENCES[name]] if name in KNOWN_DIFFERENCES else []) + MORE_DIFFERENCES.get(name, [])
        for cases, tests, why in entries:
            if (cases is _ALL or case in cases) and (tests is _ALL or test in tests):
                pytest.xfail(why)
    assert ours == theirs


SERVED = sorted(rcv.REASONING_PARSERS)
CASES = [(n, c) for n in SERVED for c in completions(n)]


@functools.lru_cache(maxsize=None)
def _builds(name: str) -> str:
    """Why vLLM's parser of ``name`` does not build with our offline tokenizer ("" if it does)."""
    try:
        ReasoningParserManager.get_reasoning_parser(name)(tokenizer_for(name))
    except Exception as exc:  # noqa: BLE001 - any failure means: cannot compare here
        return f"{type(exc).__name__}: {exc}"[:200]
    return ""


def _pair(name: str, tok, **kwargs):
    why = _builds(name)
    if why:
        pytest.skip(f"vLLM's {name} parser does not build with an offline tokenizer: {why}")
    theirs = ReasoningParserManager.get_reasoning_parser(name)(tok, **kwargs)
    ours = rcv.REASONING_PARSERS[name](tok, **kwargs)
    return theirs, ours


@pytest.mark.parametrize("name,case", CASES)
def test_one_shot_equals_vllm(name, case):
    tok = tokenizer_for(name)
    text = "".join(completions(name)[case])
    theirs, ours = _pair(name, tok)
    req = chat_request()
    check(name, case, "one_shot", ours.extract_reasoning(text, req), answer(lambda: theirs.extract_reasoning(text, req)))


@pytest.mark.parametrize("name,case", CASES)
def test_streaming_direct_equals_vllm(name, case):
    tok = tokenizer_for(name)
    ids = ids_of(tok, completions(name)[case])
    theirs, ours = _pair(name, tok)
    a, b = answer(lambda: stream_direct(theirs, tok, ids)), stream_direct(ours, tok, ids)
    a = (a.reasoning, a.content) if hasattr(a, "content") else a
    check(name, case, "streaming", (b.reasoning, b.content), a)


@pytest.mark.parametrize("k", [2, 3, 7])
@pytest.mark.parametrize("name,case", CASES)
def test_multi_token_steps_equal_vllm(name, case, k):
    """Several tokens per step (speculative decoding): deltas that mix sides."""
    tok = tokenizer_for(name)
    ids = ids_of(tok, completions(name)[case])
    theirs, ours = _pair(name, tok)
    a, b = answer(lambda: stream_direct(theirs, tok, ids, k)), stream_direct(ours, tok, ids, k)
    a = (a.reasoning, a.content) if hasattr(a, "content") else a
    check(name, case, "multi", (b.reasoning, b.content), a)


@pytest.mark.parametrize("name,case", CASES)
def test_count_reasoning_tokens_equals_vllm(name, case):
    tok = tokenizer_for(name)
    ids = ids_of(tok, completions(name)[case])
    theirs, ours = _pair(name, tok)
    if type(theirs).count_reasoning_tokens is type(theirs).__mro__[-2].count_reasoning_tokens:
        pytest.skip("vLLM's parser does not count reasoning tokens (base class: 0)")
    # Engine-based parsers count what their streaming saw: stream first, as vLLM does.
    stream_direct(theirs, tok, ids)
    stream_direct(ours, tok, ids)
    check(name, case, "count", ours.count_reasoning_tokens(ids), answer(lambda: theirs.count_reasoning_tokens(ids)))


@pytest.mark.parametrize("name,case", CASES)
def test_streaming_served_equals_vllm(name, case):
    tok = tokenizer_for(name)
    ids = ids_of(tok, completions(name)[case])
    _pair(name, tok)
    rcv.register()
    a = answer(lambda: stream_served(name, tok, ids))
    a = (a.reasoning, a.content) if hasattr(a, "content") else a
    b = stream_served(f"rc_{name}", tok, ids)
    check(name, case, "served", (b.reasoning, b.content), a)


@pytest.mark.parametrize("name,case", CASES)
def test_token_level_answers_equal_vllm(name, case):
    tok = tokenizer_for(name)
    ids = ids_of(tok, completions(name)[case])
    theirs, ours = _pair(name, tok)

    def answers(p):
        gate = [p.is_reasoning_end_streaming(ids[:n], ids[n - 1:n]) for n in range(1, len(ids) + 1)]
        return p.is_reasoning_end(ids), p.extract_content_ids(ids), gate

    check(name, case, "token_level", answers(ours), answer(lambda: answers(theirs)))


# ---------------------------------------------------------------------------
# The start state: prompts and chat_template_kwargs, through vLLM's serving loop
# ---------------------------------------------------------------------------

PROMPTED = ["deepseek_r1", "qwen3", "glm47", "kimi_k2", "minimax_m2", "nemotron_v3", "seed_oss", "mimo",
            "step3p5", "plamo3", "holo2", "ernie45", "gemma4", "mistral"]


def prompts(name: str) -> dict[str, list[str]]:
    from reasoning_core.families import get_family

    f = get_family(rcv.family_of(name))
    turn = [f.boundaries[0]] if f.boundaries else []
    return {
        "open": ["user text"] + turn + [f.start[0], "\n"],
        "closed": ["user text"] + turn + [f.start[0], "\n\n", f.end[0], "\n\n"],
        "plain": ["user text"] + turn,
    }


@pytest.mark.parametrize("name", PROMPTED)
@pytest.mark.parametrize("prompt", ["open", "closed", "plain"])
@pytest.mark.parametrize("case", ["no_start", "truncated_no_start", "no_markers", "full"])
def test_prompt_decides_the_start_like_vllm(name, prompt, case):
    tok = tokenizer_for(name)
    _pair(name, tok)
    prompt_ids = ids_of(tok, prompts(name)[prompt])
    ids = ids_of(tok, completions(name)[case])
    rcv.register()
    a = answer(lambda: stream_served(name, tok, ids, prompt_ids=prompt_ids))
    a = (a.reasoning, a.content) if hasattr(a, "content") else a
    b = stream_served(f"rc_{name}", tok, ids, prompt_ids=prompt_ids)
    check(name, case, "prompt", (b.reasoning, b.content), a)


SWITCHES = [
    ("qwen3", {"enable_thinking": False}),
    ("deepseek_v3", {"thinking": True}),
    ("holo2", {"thinking": False}),
    ("glm47", {"enable_thinking": False}),
    ("kimi_k2", {"thinking": False}),
    ("deepseek_v4", {"thinking": False}),
    ("gemma4", {"enable_thinking": True}),
    ("mimo", {"enable_thinking": False}),
    ("hy_v3", {"reasoning_effort": "high"}),
    ("hy_v4", {"reasoning_effort": "no_think"}),
]


@pytest.mark.parametrize("name,kwargs", SWITCHES, ids=[f"{n}-{k}" for n, k in SWITCHES])
@pytest.mark.parametrize("case", ["full", "no_start", "no_markers", "truncated"])
def test_chat_template_kwargs_switch_like_vllm(name, kwargs, case):
    tok = tokenizer_for(name)
    _pair(name, tok)
    pieces = completions(name)[case]
    ctk = {"chat_template_kwargs": dict(kwargs)}
    theirs = ReasoningParserManager.get_reasoning_parser(name)(tok, **ctk)
    ours = rcv.REASONING_PARSERS[name](tok, **ctk)
    req = chat_request()
    text = "".join(pieces)
    check(name, case, "switch", ours.extract_reasoning(text, req), answer(lambda: theirs.extract_reasoning(text, req)))
    ids = ids_of(tok, pieces)
    rcv.register()
    a = stream_served(name, tok, ids, chat_template_kwargs=kwargs)
    b = stream_served(f"rc_{name}", tok, ids, chat_template_kwargs=kwargs)
    check(name, case, "switch", (b.reasoning, b.content), (a.reasoning, a.content))
    check(name, case, "switch", ours.is_reasoning_end(ids), theirs.is_reasoning_end(ids))


def test_an_unsupported_reasoning_effort_is_named_cut_short():
    tok = tokenizer_for("k2_horizon")
    for effort in ("x" * 1_000_000, 2 ** 100_000):
        with pytest.raises(ValueError, match="reasoning_effort") as info:
            rcv.REASONING_PARSERS["k2_horizon"](tok, chat_template_kwargs={"reasoning_effort": effort})
        assert len(str(info.value)) < 500


# ---------------------------------------------------------------------------
# O(delta): streaming never reads the accumulated text or ids
# ---------------------------------------------------------------------------

class Untouchable:
    """Stands in for previous/current text and ids: any read fails."""

    def __getattr__(self, name):
        raise AssertionError(f"read .{name}")

    def __len__(self):
        raise AssertionError("len() of the accumulated output")

    def __iter__(self):
        raise AssertionError("iterated the accumulated output")

    def __contains__(self, item):
        raise AssertionError("searched the accumulated output")

    def __getitem__(self, item):
        raise AssertionError("indexed the accumulated output")


class CountingList(list):
    reads = 0

    def __getitem__(self, item):
        CountingList.reads += 1
        return super().__getitem__(item)

    def __iter__(self):
        CountingList.reads += 1
        return super().__iter__()


@pytest.mark.parametrize("name", ["deepseek_r1", "qwen3", "kimi_k2", "gemma4", "mistral"])
def test_streaming_reads_only_the_delta(name):
    tok = tokenizer_for(name)
    ids = ids_of(tok, completions(name)["newline_content"])
    ours = rcv.REASONING_PARSERS[name](tok)
    u = Untouchable()
    for delta_text, *_rest, delta_ids in detokenize_steps(tok, ids):
        ours.extract_reasoning_streaming(u, u, delta_text, u, u, delta_ids)
    # The structured-output gate: the ids before the delta are never scanned.
    gate = rcv.REASONING_PARSERS[name](tok)
    CountingList.reads = 0
    for n in range(1, len(ids) + 1):
        gate.is_reasoning_end_streaming(CountingList(ids[:n]), ids[n - 1:n])
    assert CountingList.reads <= 1  # at most one scan, for the first call


# ---------------------------------------------------------------------------
# Registration, the plugin file, the entry point
# ---------------------------------------------------------------------------

def test_register_is_idempotent_and_replace_uses_vllms_names():
    from vllm.tool_parsers import ToolParserManager

    rcv.register()
    rcv.register()
    names = ReasoningParserManager.list_registered()
    assert all(f"rc_{n}" in names for n in rcv.REASONING_PARSERS)
    assert all(f"rc_{n}" in ToolParserManager.list_registered() for n in rcv.TOOL_PARSERS)
    assert ReasoningParserManager.get_reasoning_parser("rc_qwen3") is rcv.REASONING_PARSERS["qwen3"]
    saved = dict(ReasoningParserManager.reasoning_parsers)
    saved_tools = dict(ToolParserManager.tool_parsers)
    try:
        rcv.register(replace=True)
        rcv.register(replace=True)
        assert ReasoningParserManager.get_reasoning_parser("qwen3") is rcv.REASONING_PARSERS["qwen3"]
        assert ToolParserManager.get_tool_parser("hermes") is rcv.TOOL_PARSERS["hermes"]
    finally:
        ReasoningParserManager.reasoning_parsers.clear()
        ReasoningParserManager.reasoning_parsers.update(saved)
        ToolParserManager.tool_parsers.clear()
        ToolParserManager.tool_parsers.update(saved_tools)
    assert ReasoningParserManager.get_reasoning_parser("qwen3") is not rcv.REASONING_PARSERS["qwen3"]


PLUGIN_CHECK = r"""
import sys, warnings
warnings.simplefilter("ignore")
from vllm.reasoning import ReasoningParserManager as R
from vllm.tool_parsers import ToolParserManager as T
assert "rc_qwen3" not in R.list_registered()
getattr(R, sys.argv[1])(sys.argv[2])
assert "rc_qwen3" in R.list_registered() and "rc_deepseek_r1" in R.list_registered(), R.list_registered()
assert "rc_hermes" in T.list_registered()
print(len([n for n in R.list_registered() if n.startswith("rc_")]))
"""


@pytest.mark.parametrize("how", ["file", "module"])
def test_plugin_loads_through_vllms_own_import(how, tmp_path):
    """``--reasoning-parser-plugin``: vLLM's import_reasoning_parser, in a fresh process."""
    import os
    import subprocess
    import sys as _sys
    from pathlib import Path

    import reasoning_core.integrations as pkg

    target = str(Path(pkg.__file__).with_name("vllm_plugin.py")) if how == "file" else "reasoning_core.integrations.vllm"
    env = dict(os.environ, VLLM_LOGGING_LEVEL="ERROR", VLLM_PLUGINS="")
    out = subprocess.run([_sys.executable, "-c", PLUGIN_CHECK, "import_reasoning_parser", target],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.split()[-1]) == len(rcv.REASONING_PARSERS)


def test_entry_point_registers_the_rc_names():
    from importlib.metadata import entry_points

    eps = [ep for ep in entry_points(group="vllm.general_plugins") if ep.value.startswith("reasoning_core.")]
    if not eps:
        pytest.skip("installed metadata predates the entry point (reinstall the package)")
    (ep,) = eps
    assert ep.load() is rcv.general_plugin
    rcv.general_plugin()
    assert "rc_qwen3" in ReasoningParserManager.list_registered()


def test_serving_composition_with_our_reasoning_and_tool_parsers():
    """What `vllm serve --reasoning-parser rc_qwen3 --enable-auto-tool-choice
    --tool-call-parser rc_hermes` builds: vLLM's ParserManager composes and
    validates the pair against the tokenizer, then one request streams through it."""
    import json

    from vllm.parser.parser_manager import ParserManager

    rcv.register()
    tok = vllm_tokenizer(FAMILY_SPECIALS["qwen3"])
    cls = ParserManager.get_parser(tool_parser_name="rc_hermes", reasoning_parser_name="rc_qwen3",
                                   enable_auto_tools=True, tokenizer=tok)
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}]
    request = chat_request(tools=tools)
    parser = cls(tok, request.tools)
    text_pieces = ["<think>", "Check the weather.", "</think>", "\n\n", "<tool_call>",
                   '\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n', "</tool_call>"]
    ids = ids_of(tok, text_pieces)
    reasoning, content, calls = [], [], {}
    steps = detokenize_steps(tok, ids)
    for n, (delta_text, *_rest, delta_ids) in enumerate(steps):
        m = parser.parse_delta(delta_text, list(delta_ids), request, prompt_token_ids=None,
                               finished=n == len(steps) - 1)
        if m is None:
            continue
        reasoning.append(m.reasoning or "")
        content.append(m.content or "")
        for tc in m.tool_calls or ():
            slot = calls.setdefault(tc.index, ["", ""])
            if tc.function is not None:
                slot[0] += tc.function.name or ""
                slot[1] += tc.function.arguments or ""
    assert "".join(reasoning) == "Check the weather."
    assert "".join(content).strip() == ""
    assert [(n, json.loads(a)) for n, a in calls.values()] == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize("label", ["", "thought\n"])
def test_reasoning_whitespace_kept_when_content_came_before_the_block(label):
    """A step that brings content and then opens a block (gemma4: text before
    ``<|channel>``) ends inside reasoning: the reasoning's trailing whitespace
    waits for more reasoning, as in any other step; it was dropped as if the
    block had ended (``x<|channel>bc `` then ``a`` streamed ``bca``)."""
    name = "gemma4"
    tok = tokenizer_for(name)
    theirs, ours = _pair(name, tok)
    got = {}
    for who, parser in (("theirs", theirs), ("ours", ours)):
        r, prev_t, prev_i = [], "", []
        for piece in ["x<|channel>" + label + "bc ", "a", " d ", "e", "<channel|>", "y"]:
            ids = ids_of(tok, [piece])
            m = parser.extract_reasoning_streaming(prev_t, prev_t + piece, piece, prev_i, prev_i + ids, ids)
            if m is not None:
                r.append(m.reasoning or "")
            prev_t, prev_i = prev_t + piece, prev_i + ids
        got[who] = "".join(r)
    assert got["ours"] == got["theirs"] == "bc a d e"


def _stream_steps(parser, tok, pieces_per_step):
    r, c, prev_t, prev_i = [], [], "", []
    for step in pieces_per_step:
        text = "".join(step)
        ids = ids_of(tok, step)
        m = parser.extract_reasoning_streaming(prev_t, prev_t + text, text, prev_i, prev_i + ids, ids)
        if m is not None:
            r.append(m.reasoning or "")
            c.append(m.content or "")
        prev_t, prev_i = prev_t + text, prev_i + ids
    if getattr(parser, "engine_based_streaming", False):
        m = parser.finish_streaming()
        if m is not None:
            r.append(m.reasoning or "")
            c.append(m.content or "")
    return "".join(r), "".join(c)


@pytest.mark.parametrize("name,pieces", [
    ("qwen3", ["<think>", "a", "</think>", "<think>", "b", "</think>", "c"]),
    ("qwen3", ["<think>", "a", "<tool_call>", "<think>", "b"]),
    ("step3p5", ["a", "</think>", "<think>", "b"]),
    ("kimi_k2", ["<think>", "a", "<|tool_calls_section_begin|>", "<think>", "b"]),
    ("seed_oss", ["<seed:think>", "a", "</seed:think>", "<seed:think>", "b"]),
])
def test_a_start_after_the_end_in_one_step_is_text_as_in_its_own_step(name, pieces):
    """Once reasoning ended, a start delimiter is text (vLLM's rule, and ours
    when it came in a later step); a step that held the end (or a call
    section that ends reasoning) and then a start reopened reasoning, so
    speculative steps streamed otherwise than single tokens."""
    tok = tokenizer_for(name)
    theirs, ours = _pair(name, tok)
    fresh = rcv.REASONING_PARSERS[name](tok)
    one_step = _stream_steps(ours, tok, [pieces])
    assert one_step == _stream_steps(fresh, tok, [[p] for p in pieces])
    assert one_step == _stream_steps(theirs, tok, [pieces])


def test_tokenizers_no_longer_served_are_let_go():
    # vLLM's own tool parser (built for adjust_request) and the special ids
    # count_reasoning_tokens drops are kept per tokenizer: for the last few
    # tokenizers only, so one a LoRA adapter or a test built goes when it is
    # no longer used, with what was built on it.
    import gc
    import weakref

    from transformers import PreTrainedTokenizerFast
    from vllm.tokenizers.hf import get_cached_tokenizer
    from vocab import build_tokenizer

    tools = [{"type": "function", "function": {"name": "f", "description": "d",
                                               "parameters": {"type": "object", "properties": {}}}}]
    refs = []
    for _ in range(12):
        tok = get_cached_tokenizer(PreTrainedTokenizerFast(
            tokenizer_object=build_tokenizer.__wrapped__(FAMILY_SPECIALS["qwen3"])))
        tp = rcv.TOOL_PARSERS["hermes"](tok)
        for _ in range(2):  # the second request finds what the first built
            assert tp.adjust_request(chat_request(tools=tools)).skip_special_tokens is False
        rp = rcv.REASONING_PARSERS["qwen3"](tok)
        assert rp.count_reasoning_tokens(encode(tok, "<think>a b</think>c")) == \
            rp.count_reasoning_tokens(encode(tok, "<think>a b</think>c"))
        refs.append(weakref.ref(tok))
        del tok, tp, rp
    gc.collect()
    assert refs[0]() is None
    alive = sum(r() is not None for r in refs)
    assert alive <= max(rcv._OWN_TOOLS.size, rcv._DROPPED.size) < len(refs)
