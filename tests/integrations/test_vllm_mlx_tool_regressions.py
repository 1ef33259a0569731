"""Regressions found by the ``mlx_tools`` fuzz target (tests/fuzz/tool_targets.py).

``finalize_streaming`` read the calls still open after ``finish()`` had reset
the parser (a new, empty list of calls): a last call without its closing
markup, which one-shot parsing completes, was never streamed.
"""
from __future__ import annotations

import json

import pytest

pytest.importorskip("vllm_mlx.tool_parsers")
M = pytest.importorskip("reasoning_core.integrations.vllm_mlx")

DS = ("<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>")
_D = "\uff5cDSML\uff5c"
_Q = '<|"|>'
# Each served parser class: one call whose body is complete but whose closing markup never came,
# in the syntax that class reads.
CUT = {
    "DeepseekRcMlxToolParser": DS[0] + DS[1] + "function" + DS[2] + 'get_weather\n```json\n{"city": "Paris"}',
    "KimiRcMlxToolParser": '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0'
                           '<|tool_call_argument_begin|>{"city": "Paris"}',
    "Glm47RcMlxToolParser": "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris",
    "PoolsideV1RcMlxToolParser": "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris",
    "MinimaxRcMlxToolParser": '<minimax:tool_call><invoke name="get_weather"><parameter name="city">Paris',
    "NemotronRcMlxToolParser": "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n",
    "Qwen3XmlRcMlxToolParser": "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n",
    "QwenRcMlxToolParser": '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}',
    "Step3p5RcMlxToolParser": '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}',
    "HermesRcMlxToolParser": '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}',
    "LlamaRcMlxToolParser": '<function=get_weather>{"city": "Paris"}',
    "GraniteRcMlxToolParser": '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}',
    "XlamRcMlxToolParser": '[{"name": "get_weather", "arguments": {"city": "Paris"}}',
    "DeepseekV4RcMlxToolParser": f'<{_D}tool_calls>\n<{_D}invoke name="get_weather">\n'
                                 f'<{_D}parameter name="city" string="true">Paris</{_D}parameter>\n',
    "Gemma4RcMlxToolParser": "<|tool_call>call:get_weather{city:" + _Q + "Paris" + _Q + "}",
    "HarmonyRcMlxToolParser": '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json'
                              '<|message|>{"city": "Paris"}',
    "MistralRcMlxToolParser": '[TOOL_CALLS]get_weather{"city": "Paris"}',  # no closing markup exists
}
BARE = {"GraniteRcMlxToolParser", "XlamRcMlxToolParser"}  # the call is the whole output
# Streams a call's name and arguments as it reads them, as vllm-mlx's parser of the
# name does: a cut call is out before the cut is known (one-shot reads none).
AS_READ = {"PoolsideV1RcMlxToolParser"}


def _stream(parser, text, step=3):
    """(name, arguments) per call index, pieces joined (a class may stream a
    call whole or its name and arguments piece by piece)."""
    calls: dict[int, list] = {}
    prev = ""

    def take(out):
        for c in (out or {}).get("tool_calls") or []:
            slot = calls.setdefault(c["index"], ["", ""])
            fn = c.get("function") or {}
            slot[0] += fn.get("name") or ""
            slot[1] += fn.get("arguments") or ""

    for i in range(0, len(text), step):
        ch = text[i:i + step]
        take(parser.extract_tool_calls_streaming(prev, prev + ch, ch))
        prev += ch
    take(parser.finalize_streaming(prev))
    return [(n, json.loads(a)) for _, (n, a) in sorted(calls.items())]


@pytest.mark.parametrize("name", sorted(M.TOOL_PARSERS))
def test_a_last_call_left_open_is_streamed_at_the_end(name):
    """Streamed (ended by ``finalize_streaming``) equals one-shot on a call cut
    before its closing markup (whether the class reads such a call follows
    vllm-mlx's parser of the name for the composed ones)."""
    cls = M.TOOL_PARSERS[name]
    assert cls.__name__ in CUT, f"no cut call written for {cls.__name__}"
    text = CUT[cls.__name__] if cls.__name__ in BARE else "Let me check. " + CUT[cls.__name__]
    one = cls(None).extract_tool_calls(text)
    want = [(c["name"], json.loads(c["arguments"])) for c in one.tool_calls]
    if cls.__name__ in AS_READ:
        assert want == []
        want = [("get_weather", {"city": "Paris"})]
    p = cls(None)
    assert _stream(p, text) == want
    # and the instance, reused after its end of stream, streams the next request alike
    assert _stream(p, text, step=5) == want


def _stream_objects(parser, chunks, same: bool):
    """Content and calls streamed; ``same``: each call's current_text is the
    next call's previous_text object (vllm-mlx's server), else an equal copy."""
    content, calls, prev = [], [], ""
    for ch in chunks:
        cur = prev + ch
        out = parser.extract_tool_calls_streaming(prev, cur if same else "".join([prev, ch]), ch) or {}
        prev = cur
        content.append(out.get("content") or "")
        calls += [(c["index"], c["function"].get("name"), c["function"].get("arguments"))
                  for c in out.get("tool_calls") or []]
    out = parser.finalize_streaming(prev) or {}
    content.append(out.get("content") or "")
    calls += [(c["index"], c["function"].get("name"), c["function"].get("arguments")) for c in out.get("tool_calls") or []]
    return "".join(content), [(i, n) for i, n, _ in calls], "".join(a or "" for _, _, a in calls)


@pytest.mark.parametrize("name", sorted(M.TOOL_PARSERS))
@pytest.mark.parametrize("step", [1, 3, 5])
def test_the_per_delta_fast_path_needs_no_text_identity(name, step):
    """Found by the mlx_tools fuzz target: deltas kept inside a call by the fast
    path were lost when the caller did not hand back the same text object (and
    an empty first delta looked like the inside of a call)."""
    cls = M.TOOL_PARSERS[name]
    body = CUT[cls.__name__]
    for text in ("Let me check. " + body + " Done.", body):
        chunks = [""] + [text[i:i + step] for i in range(0, len(text), step)]
        assert _stream_objects(cls(None), chunks, True) == _stream_objects(cls(None), chunks, False), (name, text)


# -- calls sent whole: read with the delta that completes their end marker --------
# Three calls (a split-prone value: markup-like text inside it) in the syntax of
# each class whose calls wait for an end marker, whole or cut anywhere.
_CLOSED = {
    "DeepseekRcMlxToolParser": DS[0] + "".join(
        DS[1] + "function" + DS[2] + n + "\n```json\n" + json.dumps(a) + "\n```<｜tool▁call▁end｜>"
        for n, a in (("get_weather", {"city": "Paris</x>"}), ("lookup", {"q": "a > b <"}), ("get_weather", {})))
        + "<｜tool▁calls▁end｜>",
    "MinimaxRcMlxToolParser": "<minimax:tool_call>\n" + "".join(
        f'<invoke name="{n}">\n' + "".join(f'<parameter name="{k}">{v}</parameter>\n' for k, v in a.items())
        + "</invoke>\n" for n, a in (("get_weather", {"city": "Paris </invoke"}), ("lookup", {"q": "x>y"})))
        + "</minimax:tool_call>",
    "NemotronRcMlxToolParser": "".join(
        "<tool_call>\n<function=" + n + ">\n" + "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in a.items())
        + "</function>\n</tool_call>\n" for n, a in (("get_weather", {"city": "a </function"}), ("lookup", {"q": "b"}))),
    "Glm47RcMlxToolParser": "".join(
        f"<tool_call>{n}" + "".join(f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>" for k, v in a.items())
        + "</tool_call>" for n, a in (("get_weather", {"city": "</tool_call"}), ("lookup", {"q": ">"}))),
}


_HJ = "".join('<tool_call>\n' + json.dumps({"name": n, "arguments": a}) + "\n</tool_call>\n"
              for n, a in (("get_weather", {"city": "</tool_call"}), ("lookup", {"q": "a > b"})))
_XML = "".join("<tool_call>\n<function=" + n + ">\n" + "".join(f"<parameter={k}>\n{v}\n</parameter>\n"
                                                                for k, v in a.items())
               + "</function>\n</tool_call>\n" for n, a in (("get_weather", {"city": "x </tool_call"}),
                                                          ("lookup", {"q": ">"})))
_CLOSED.update({
    "HermesRcMlxToolParser": _HJ, "QwenRcMlxToolParser": _HJ, "Step3p5RcMlxToolParser": _XML,
    "Qwen3XmlRcMlxToolParser": _XML,
    "KimiRcMlxToolParser": "<|tool_calls_section_begin|>" + "".join(
        f"<|tool_call_begin|>functions.{n}:{i}<|tool_call_argument_begin|>{json.dumps(a)}<|tool_call_end|>"
        for i, (n, a) in enumerate((("get_weather", {"city": "<|tool_call_end"}), ("lookup", {"q": "|>"}))))
        + "<|tool_calls_section_end|>",
    "DeepseekV4RcMlxToolParser": f"<{_D}tool_calls>\n" + "\n".join(
        f'<{_D}invoke name="{n}">\n<{_D}parameter name="{k}" string="true">{v}</{_D}parameter>\n</{_D}invoke>'
        for n, k, v in (("get_weather", "city", "Paris </x>"), ("lookup", "q", "tool_calls>")))
        + f"\n</{_D}tool_calls>",
})
_CLOSED["HarmonyRcMlxToolParser"] = "<|channel|>final<|message|>Checking.<|end|>" + "".join(
    f"<|start|>assistant<|channel|>commentary to=functions.{n} <|constrain|>json<|message|>{json.dumps(a)}<|call|>"
    for n, a in (("get_weather", {"city": "<|call"}), ("lookup", {"q": "a > b"})))
# classes whose composed forms send a call when its block closes (the step-count test's bound
# counts end markers: these forms' closers)
_CLOSERS_OF = {"KimiRcMlxToolParser": ("<|tool_call_end|>",), "DeepseekV4RcMlxToolParser": (f"</{_D}tool_calls>",),
               "HarmonyRcMlxToolParser": ("<|call|>", "<|end|>", "<|message|>")}


def _general_only(cls):
    return type(cls.__name__, (cls,), {"_fast": False})  # every delta goes to the parser


@pytest.mark.parametrize("cls_name", sorted(_CLOSED))
@pytest.mark.parametrize("seed", range(12))
def test_calls_kept_until_their_end_marker_stream_what_every_delta_read_does(cls_name, seed):
    import random

    cls = next(c for c in M.TOOL_PARSERS.values() if c.__name__ == cls_name)
    assert cls(None)._call_closers, "this class no longer keeps a call's deltas until its end marker"
    rng = random.Random(seed)
    text = "Let me check. " + _CLOSED[cls_name] + " Done."
    cuts = sorted(rng.sample(range(1, len(text)), rng.randint(1, len(text) // 2)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    want = _stream_objects(_general_only(cls)(None), chunks, True)
    assert want[1], "the stream has no call"
    assert _stream_objects(cls(None), chunks, True) == want
    assert _stream_objects(cls(None), chunks, False) == want


@pytest.mark.parametrize("cls_name", sorted(_CLOSED))
def test_a_call_is_one_parser_step_when_its_markers_come_whole(cls_name):
    """Tags as single deltas (a tokenizer's special tokens) and the rest a few
    characters at a time: the parser steps once per call (the delta that ends
    it), plus the section's opener and the text around the calls."""
    import re

    cls = next(c for c in M.TOOL_PARSERS.values() if c.__name__ == cls_name)
    body = _CLOSED[cls_name]
    p = cls(None)
    closers = _CLOSERS_OF.get(cls_name) or p._call_closers
    steps = []
    inner = p._parser.parse_delta
    p._parser.parse_delta = lambda d: steps.append(d) or inner(d)
    prev = ""
    chunks = ["Sure. "]
    for piece in re.split(r"(<[^<>]*>)", body):
        if piece.startswith("<"):
            chunks.append(piece)
        else:
            chunks += [piece[i:i + 3] for i in range(0, len(piece), 3)]
    for ch in chunks:
        cur = prev + ch  # the server hands back the text object it gave (vllm-mlx's flow)
        p.extract_tool_calls_streaming(prev, cur, ch)
        prev = cur
    p.finalize_streaming(prev)
    ends = sum(ch in closers for ch in chunks)
    # the first delta, and per end marker at most two steps: it, and the opening
    # markup of a call that starts from plain text (glm's and nemotron's have no section)
    assert len(steps) <= 2 * ends + 1, (len(steps), ends, steps)


# -- every class: the gate's answers are the parser's -----------------------------
# Three calls (values with markup-like text) in the syntax each class reads, after
# and before prose; cut with the markup whole (a tokenizer's special tokens) or at
# random.  Each delta's content must be what the same class gives reading every delta
# (``_fast`` off), and the call entries the same, in the same order; a call sent whole
# may come later on the fast path (at its end marker, as vllm-mlx's parsers send it,
# where reading every delta sends it once its arguments close), never earlier.
_WHOLE = dict(_CLOSED)
_WHOLE.update({
    "PoolsideV1RcMlxToolParser": "".join(
        f"<tool_call>{n}\n" + "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n" for k, v in a.items())
        + "</tool_call>" for n, a in (("get_weather", {"city": "Paris </arg_value", "days": 3}),
                                      ("lookup", {"q": "a > b"}), ("get_weather", {}))),
    "MistralRcMlxToolParser": "".join(
        f"[TOOL_CALLS]{n}[ARGS]{json.dumps(a)}" for n, a in (
            ("get_weather", {"city": 'Pa"ris [TOOL_CALLS]x', "days": 3}), ("lookup", {"q": "S\u00e3o \\ b", "n": [1, {}]}),
            ("get_weather", {}))),
    "Gemma4RcMlxToolParser": "<|tool_call>" + "".join(
        "call:" + n + "{" + ",".join(f"{k}:{_Q}{v}{_Q}" if isinstance(v, str) else f"{k}:{v}" for k, v in a.items()) + "}"
        for n, a in (("get_weather", {"city": "Paris } call:", "days": 3}), ("lookup", {"q": "a"}))) + "<tool_call|>",
    "LlamaRcMlxToolParser": "<|python_tag|>" + "; ".join(
        json.dumps({"name": n, "parameters": a}) for n, a in (("get_weather", {"city": "<|python_tag|>"}),
                                                              ("lookup", {"q": "b"}))),
    "GraniteRcMlxToolParser": "<|tool_call|>" + json.dumps(
        [{"name": "get_weather", "arguments": {"city": "]}"}}, {"name": "lookup", "arguments": {"q": "b"}}]),
    "XlamRcMlxToolParser": json.dumps(
        [{"name": "get_weather", "arguments": {"city": "]}"}}, {"name": "lookup", "arguments": {"q": "b"}}]),
})
_MARKUP = r"(<[^<>]{1,40}>|\[TOOL_CALLS\]|\[ARGS\]|<\|\"\|>|\n)"


def _markup_cut(text, markup, rng, whole=1.0):
    """``markup`` (a regex, one group) as whole deltas (a tokenizer's special tokens;
    each with probability ``whole``), the rest cut 1-4 characters at a time."""
    import re

    chunks = []
    for piece in re.split(markup, text):
        if re.fullmatch(markup, piece) and (whole >= 1 or rng.random() < whole):
            chunks.append(piece)
            continue
        i = 0
        while i < len(piece):
            k = rng.randint(1, 4)
            chunks.append(piece[i:i + k])
            i += k
    return chunks


def _answers(parser, chunks, request=None):
    """Each delta's content (then the end's), and the call entries in order, each
    with the number of deltas read when it came; call ids numbered in order of
    appearance."""
    import copy

    ids: dict = {}
    contents, calls, prev = [], [], ""
    for n, ch in enumerate([*chunks, None]):
        if ch is None:
            got = parser.finalize_streaming(prev)
        else:
            cur = prev + ch
            got = parser.extract_tool_calls_streaming(prev, cur, ch, request=request)
            prev = cur
        assert got is None or set(got) <= {"content", "tool_calls"}, got
        got = copy.deepcopy(got) or {}
        contents.append(got.get("content"))
        for c in got.get("tool_calls") or []:
            if "id" in c:
                c["id"] = ids.setdefault(c["id"], len(ids))
            calls.append((n, c))
    return contents, calls


@pytest.mark.parametrize("cls_name", sorted(_WHOLE))
@pytest.mark.parametrize("seed", range(8))
def test_each_delta_is_answered_as_reading_every_delta_does(cls_name, seed):
    import random

    cls = next(c for c in M.TOOL_PARSERS.values() if c.__name__ == cls_name)
    rng = random.Random(seed)
    body = _WHOLE[cls_name]
    text = body if cls_name in BARE else "Let me check.\n" + body + ("\nDone." if seed % 2 else "")
    if seed < 4:  # markup whole, the rest cut 1-4 characters at a time
        chunks = _markup_cut(text, _MARKUP, rng)
    else:
        cuts = sorted(rng.sample(range(1, len(text)), rng.randint(1, len(text) // 2)))
        chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    want = _answers(_general_only(cls)(None), chunks)
    assert want[1], "the stream has no call"

    def same(got, want):
        assert got[0] == want[0]
        assert [c for _, c in got[1]] == [c for _, c in want[1]]
        assert all(g >= w for (g, _), (w, _) in zip(got[1], want[1]))  # never earlier

    same(_answers(cls(None), chunks), want)
    # and an instance reused after its end of stream answers as one that reads every delta
    p, q = cls(None), _general_only(cls)(None)
    _answers(p, chunks)
    _answers(q, chunks)
    same(_answers(p, chunks), _answers(q, chunks))


@pytest.mark.parametrize("split", [False, True])
def test_gemma4_sends_a_block_s_calls_at_the_delta_holding_its_end_marker(split):
    """gemma4 sends a block's calls at a delta holding ``<tool_call|>`` whole (vllm-mlx's
    rule, kept by ours reading every delta); with the calls' deltas kept by the gate,
    the delta that ends a split marker is read, and sends nothing."""
    cls = M.TOOL_PARSERS["gemma4"]
    end = ["<tool_", "call|>"] if split else ["<tool_call|>"]
    chunks = ["Hi ", "<|tool_call>", "call:get_weather{city:", _Q, "Paris", _Q, "}", "call:lookup{q:", _Q, "b",
              _Q, "}", *end, " Done", " now."]
    want = _answers(_general_only(cls)(None), chunks)
    got = _answers(cls(None), chunks)
    assert got == want
    sent_at = {n for n, _ in want[1]}
    assert sent_at == ({len(chunks)} if split else {chunks.index("<tool_call|>")})


@pytest.mark.parametrize("seed", range(6))
def test_poolside_streams_a_string_value_as_read_whatever_the_gate_keeps(seed):
    """poolside_v1 streams a value the request declares ``string`` as it reads it (the
    gate keeps only the stretches read without a word: names, keys, other values)."""
    import random

    cls = M.TOOL_PARSERS["poolside_v1"]
    request = {"tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]}
    text = ("Let me check.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris, "
            "Texas </arg_value and more</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n"
            "</tool_call> Done.")
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(text)), rng.randint(5, len(text) // 2)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    want = _answers(_general_only(cls)(None), chunks, request)
    assert len({n for n, _ in want[1]}) > 2, "the string value does not stream"
    assert _answers(cls(None), chunks, request) == want


# poolside_v1's keys: the gate keeps a tag that starts or ends a key (the format's
# QUIET_MARKERS) with the stretch's text; the delta that sends something reads them
_POOLSIDE_ODD = ("Hi.\n<tool_call>get_weather\n<arg_key>junk<arg_key>city</arg_key> x <arg_key>city</arg_key>\n"
                 "<arg_value>Paris</arg_value>\n\n<arg_key>days</arg_key><arg_value>3</arg_value> tail "
                 "<arg_key>unit</arg_key></tool_call>\n<tool_call>lookup\n</tool_call> and "
                 "<tool_call>lookup\n<arg_key>q</arg_key>\n<arg_value>a < b</arg_value>\n<arg_key>n")


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("request_kind", ["none", "typed"])
def test_poolside_keeps_a_key_s_tags_and_answers_each_delta_as_reading_every_delta_does(seed, request_kind):
    import random

    cls = M.TOOL_PARSERS["poolside_v1"]
    request = None if request_kind == "none" else {"tools": [
        {"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}},
        {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]}
    chunks = _markup_cut(_POOLSIDE_ODD, r"(<[^<>]{1,20}>|\n)", random.Random(seed), 1.0 if seed < 4 else 0.7)
    want = _answers(_general_only(cls)(None), chunks, request)
    assert want[1], "the stream has no call"
    assert _answers(cls(None), chunks, request) == want  # the same answers, at the same deltas
    # the gate kept the key's tags: reading every delta would step at each of them
    p = cls(None)
    tags = {"<arg_key>", "</arg_key>"}
    seen = []
    real = M._tool_base._scan.step_args
    try:
        M._tool_base._scan.step_args = lambda q, d, c: seen.append(d) or real(q, d, c)
        got = _answers(p, chunks, request)
    finally:
        M._tool_base._scan.step_args = real
    assert got == want
    if seed < 4:
        assert not any(d in tags for d in seen), seen
        assert sum(any(t in d for t in tags) for d in seen) >= 3, seen


# mistral's names: the gate keeps the deltas of a name (a run of name characters, within
# the 256 a name may have) and the parser reads them with the delta after the run
_MISTRAL_NAMES = ["get_weather[ARGS]{\"a\": 1}", "get.weather-2 [ARGS]{}", "look_up{\"q\": \"x\"}",
                  "bad name[ARGS]{}", "x" * 250 + "_too_long_a_name[ARGS]{}", "y" * 256 + "[ARGS]{}",
                  "z" * 257 + "[ARGS]{}", "caf\u00e9[ARGS]{}", "tail_at_the_end"]


def test_mistral_name_characters_are_what_its_name_pattern_matches():
    chars = M._M_NAME_CHARS
    assert len(set(chars)) == len(chars)
    assert {chr(i) for i in range(0x3000) if M._M_NAME.fullmatch(chr(i))} == set(chars)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("body", _MISTRAL_NAMES, ids=range(len(_MISTRAL_NAMES)))
def test_mistral_keeps_a_name_s_deltas_and_answers_each_delta_as_reading_every_delta_does(body, seed):
    import random

    cls = M.TOOL_PARSERS["mistral"]
    rng = random.Random(seed)
    text = "Ok. [TOOL_CALLS]" + body + " done [TOOL_CALLS]lookup[ARGS]{}"
    chunks = _markup_cut(text, r"(\[TOOL_CALLS\]|\[ARGS\])", rng)
    want = _answers(_general_only(cls)(None), chunks)
    assert _answers(cls(None), chunks) == want
    # the name's deltas after its first were kept: reading every delta steps at each
    seen = []
    real = M._tool_base._scan.step_args
    try:
        M._tool_base._scan.step_args = lambda q, d, c: seen.append(d) or real(q, d, c)
        assert _answers(cls(None), chunks) == want
    finally:
        M._tool_base._scan.step_args = real
    assert len(seen) < len(chunks) - 2, seen


# mistral: the gate reads a call itself ([TOOL_CALLS], the name, [ARGS] as whole deltas, then
# argument deltas its JSON reader reads whole) and holds a cut-off marker in plain content; any
# other delta has the parser read what the gate kept.  Streams built from well-formed calls,
# broken ones and prose with marker-like text, cut at random with the markers whole or not.
def _mistral_streams():
    from hypothesis import strategies as hs

    leaf = hs.one_of(hs.integers(-5, 500), hs.booleans(), hs.none(), hs.floats(allow_nan=False, width=16),
                     hs.text(alphabet='ab "\\[]{}<>\u00e9\U0001f600\n\x01/', max_size=6),
                     hs.sampled_from(["[TOOL_CALLS]x", "[ARGS]", '"}', "[THINK]"]))
    value = hs.recursive(leaf, lambda kids: hs.one_of(hs.lists(kids, max_size=3),
                                                      hs.dictionaries(hs.text("ab[", max_size=3), kids, max_size=3)),
                         max_leaves=6)
    # written as a model may: escapes as \\uXXXX (surrogate pairs too) or the characters themselves
    args = hs.tuples(hs.dictionaries(hs.text("abc", min_size=1, max_size=4), value, max_size=3), hs.booleans()).map(
        lambda t: json.dumps(t[0], ensure_ascii=t[1]))
    broken = hs.sampled_from(['{"a": tru', '{"a" 1}', "{,}", '{"a": 1}}', '{"a": 1} tail', "[1]", "{", ""])
    name = hs.one_of(hs.sampled_from(["get_weather", "lookup", "a.b-c_1", "x" * 255, "y" * 256, "z" * 257]),
                     hs.text(alphabet="abc _[{", min_size=0, max_size=5))
    call = hs.tuples(name, hs.sampled_from(["[ARGS]"] * 4 + ["", " [ARGS]", "[AR"]), hs.one_of(args, args, broken)).map(
        lambda t: "[TOOL_CALLS]" + "".join(t))
    prose = hs.one_of(hs.text(alphabet="ab .[]<>T", max_size=8), hs.sampled_from(
        ["[1] ", "[TOOL", "[T", "<thi", "[TOOL_CALLS", "[[", "\n", "<b>"]), hs.sampled_from(
        ["[THINK]a[/THINK]", "<think>b</think>", "[THINK]", "[/THINK]"]).filter(lambda _: True))
    return hs.lists(hs.one_of(prose, call, call), min_size=1, max_size=6).map("".join)


def _mistral_chunks(text, data, whole):
    """``text`` cut at random (``data`` draws the cuts), markers whole where ``whole``."""
    import random

    rng = random.Random(data)
    if whole:
        # a "}" alone too: a value's end is a delta's end (where the gate closes a call)
        return _markup_cut(text, r"(\[TOOL_CALLS\]|\[ARGS\]|\[THINK\]|\[/THINK\]|<think>|\})", rng)
    if len(text) < 2:
        return [text]
    cuts = sorted(rng.sample(range(1, len(text)), rng.randint(1, len(text) - 1)))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]


def test_mistral_gate_streams_as_reading_every_delta_does():
    from hypothesis import given, settings, strategies as hs

    cls = M.TOOL_PARSERS["mistral"]

    @settings(max_examples=300, deadline=None)
    @given(text=_mistral_streams(), seed=hs.integers(0, 2**16), whole=hs.sampled_from([True, True, False]))
    def check(text, seed, whole):
        chunks = _mistral_chunks(text, seed, whole)
        want = _answers(_general_only(cls)(None), chunks)
        p = cls(None)
        assert _answers(p, chunks) == want
        # an instance reused after its end of stream too
        assert _answers(p, chunks) == want

    check()


def _mistral_mixed(rng):
    """Deltas of a stream mixing calls the gate reads (markers whole, each value ending at
    a delta's end) with prose and calls it hands to the parser (a space before the name,
    a marker cut, a value that ends inside a delta, broken JSON), in random order."""
    def cut(text, lo=1, hi=4):
        out, i = [], 0
        while i < len(text):
            k = rng.randint(lo, hi)
            out.append(text[i:i + k])
            i += k
        return out

    def value(depth=0):
        r = rng.random()
        if depth < 2 and r < 0.3:
            return {rng.choice(["a", "b[", 'c"', "d\\"]): value(depth + 1) for _ in range(rng.randint(0, 3))}
        if depth < 2 and r < 0.4:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return rng.choice([0, -12, 3.5, True, None, "", "Paris", 'say "hi"', "a\\b", "[TOOL_CALLS]x", "S\u00e3o",
                           "\U0001f600", "tab\t", "}]"])

    chunks = []
    for _ in range(rng.randint(2, 6)):
        name = rng.choice(["get_weather", "lookup", "a.b-c_1", "f"])
        args = json.dumps({"k": value(), "m": value()}, ensure_ascii=rng.random() < 0.5)
        r = rng.random()
        if r < 0.2:
            chunks += cut(rng.choice(["Sure [1]. ", "a <b> c ", "[TOOL", "x[", "\n"]))
        elif r < 0.7:  # read by the gate
            chunks += ["[TOOL_CALLS]", *cut(name, 1, 3), "[ARGS]", *cut(args)]
        elif r < 0.8:
            chunks += ["[TOOL_CALLS]", *cut(" " + name), "[ARGS]", *cut(args)]
        elif r < 0.9:
            chunks += cut("[TOOL_CALLS]" + name + "[ARGS]" + args + rng.choice(["", " ok", "}"]), 2, 9)
        else:
            chunks += ["[TOOL_CALLS]", name, "[ARGS]", *cut(args[:-1] + rng.choice(["x", "]", ", }"]))]
    return chunks


@pytest.mark.parametrize("seed", range(120))
def test_mistral_calls_the_gate_read_then_ones_the_parser_reads_as_reading_every_delta(seed):
    import random

    cls = M.TOOL_PARSERS["mistral"]
    chunks = _mistral_mixed(random.Random(seed))
    want = _answers(_general_only(cls)(None), chunks)
    p = cls(None)
    assert _answers(p, chunks) == want
    assert _answers(p, chunks) == want  # reused after its end of stream


@pytest.mark.parametrize("tail", [[], [" "], ["x"], [", }"], ['"b'], ["\\"]])
def test_mistral_stream_ending_inside_a_gate_read_call_is_ended_as_reading_every_delta(tail):
    """The stream ends (or goes wrong) while the gate reads a call's arguments: the end
    has the parser read what the gate kept first; a call before it, done by the gate,
    is in the parser's records by then."""
    cls = M.TOOL_PARSERS["mistral"]
    chunks = ["Ok", "[TOOL_CALLS]", "f", "[ARGS]", "{}", "[TOOL_CALLS]", "get", "[ARGS]", '{"a"', ": 1", *tail]
    want = _answers(_general_only(cls)(None), chunks)
    p = cls(None)
    assert _answers(p, chunks) == want
    assert _answers(p, chunks) == want


def test_mistral_gate_reads_well_formed_calls_without_a_parser_step():
    """With the markers whole and the arguments cut where the JSON reader reads
    each piece whole, the parser never steps: the gate reads the calls, and a
    ``[`` in prose (held, then released) too; the answers are those of reading
    every delta, and a ``[TOOL_CALLS]`` inside a string stays data."""
    cls = M.TOOL_PARSERS["mistral"]
    chunks = ["Sure", " [", "1", "] see", " <", "b>.", "\n", "[TOOL_CALLS]", "get", "_weather", "[ARGS]",
              '{"', "city", '": "', "Pa", " [TOOL_CALLS]", "x", '", "n"', ": [1", ", {}]", "}",
              "[TOOL_CALLS]", "lookup", "[ARGS]", "{}", " ok"]
    want = _answers(_general_only(cls)(None), chunks)
    seen = []
    real = M._tool_base._scan.step_args
    try:
        M._tool_base._scan.step_args = lambda q, d, c: seen.append(d) or real(q, d, c)
        got = _answers(cls(None), chunks)
    finally:
        M._tool_base._scan.step_args = real
    assert got == want
    assert seen == []
    calls = [c for _, c in want[1]]
    assert [c["function"].get("name") for c in calls if "name" in c["function"]] == ["get_weather", "lookup"]
    args = "".join(c["function"].get("arguments", "") for c in calls if c["index"] == 0)
    assert json.loads(args) == {"city": "Pa [TOOL_CALLS]x", "n": [1, {}]}


def test_mistral_call_ids_are_nine_alphanumerics_each_its_own():
    """Mistral's templates check a call id (9 alphanumeric characters, vllm-mlx's
    ``generate_mistral_tool_id``): streamed by the gate, by the parser, and one-shot."""
    import random

    cls = M.TOOL_PARSERS["mistral"]
    text = "".join(f"[TOOL_CALLS]f{i}[ARGS]{{}}" for i in range(150))
    ids = []
    for chunks in (_markup_cut(text, r"(\[TOOL_CALLS\]|\[ARGS\])", random.Random(1)), [text]):
        p = cls(None)
        prev = ""
        for ch in chunks:
            got = p.extract_tool_calls_streaming(prev, prev + ch, ch) or {}
            prev += ch
            ids += [c["id"] for c in got.get("tool_calls") or [] if "id" in c]
        ids += [c["id"] for c in (p.finalize_streaming(prev) or {}).get("tool_calls") or [] if "id" in c]
    ids += [c["id"] for c in cls(None).extract_tool_calls(text).tool_calls]
    assert len(ids) == 450 and len(set(ids)) == 450
    assert all(len(i) == 9 and i.isascii() and i.isalnum() for i in ids)


# classes whose first tool markup may only be read at the output's start (llama's bare JSON)
# or whose state comes from message headers (harmony): their first delta is read
_READ_FIRST = {"LlamaRcMlxToolParser", "HarmonyRcMlxToolParser"}


@pytest.mark.parametrize("name", sorted(M.TOOL_PARSERS))
def test_a_fresh_stream_s_first_plain_delta_is_content_without_a_parser_step(name):
    """The server's first previous_text is "": a plain first delta takes the gate (a
    reset, or a new instance, starts the stream there), and is the content it is."""
    cls = M.TOOL_PARSERS[name]
    if cls.__name__ in _READ_FIRST:
        pytest.skip("this class reads its first delta")
    p = cls(None)
    for _ in range(2):  # new, then reset after a stream
        calls = []
        parser = p._parser
        inner = parser._push
        parser._push = lambda d, eof=False: calls.append(d) or inner(d, eof)
        step = getattr(p, "_step", None)  # the composed names' machine
        if step is not None:
            p._step = lambda text, *a: calls.append(text) or step(text, *a)
        assert p.extract_tool_calls_streaming("", "Hello there", "Hello there") == {"content": "Hello there"}
        assert calls == []
        del parser._push
        if step is not None:
            del p._step
        p.finalize_streaming("Hello there")
        p.reset()


# -- composed names: a block (or a marker alone) read whole from plain content -----
# Each markup piece one delta (a tokenizer's special tokens, the gate keeping a
# block's deltas until its closer), so a block's deltas reach the machine as one
# text from its opener to its closer: the answers must be those of reading every
# delta, whatever the name's rules on the calls (kinds, duplicates, listed tools),
# the text around the markup, and a caller that shows more at the end.
def _hj(name, args):
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>"


def _fx(name, **params):
    return "<function=" + name + ">\n" + "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items()) \
        + "</function>"


_KB = "<|tool_calls_section_begin|>"
_KE = "<|tool_calls_section_end|>"


def _kc(i, name, args):
    return f"<|tool_call_begin|>functions.{name}:{i}<|tool_call_argument_begin|>{json.dumps(args)}<|tool_call_end|>"


_BLOCKS = {
    # first_kind_only: <function=…> blocks after <tool_call> ones give no call; a block no call parses from is text
    "hermes": ["Sure. ", _hj("get_weather", {"city": "Paris"}), "\n", _fx("lookup", q="b"), " ",
               "<tool_call>", "not json", "</tool_call>", " and ", _hj("lookup", {"q": "x"})],
    # by_kind (calls ranked by form), content dropped after the first markup
    "qwen": ["Hi. ", "[Calling tool: lookup({\"q\": \"a\"})]", " ", _hj("get_weather", {"city": "Rome"}), "\n",
             _fx("lookup", q="c"), " tail"],
    # dedupe: the same call twice in a row is sent once
    "step3p5": ["Ok. ", "<tool_call>\n" + _fx("get_weather", city="Paris") + "\n</tool_call>", "\n",
                "<tool_call>\n" + _fx("get_weather", city="Paris") + "\n</tool_call>", "\n",
                "<tool_call>\n" + _fx("lookup", q="d") + "\n</tool_call>"],
    # section markers as the first delta, two calls in one delta, a call and text after it in one delta
    "kimi": [_KB, _kc(0, "get_weather", {"city": "Paris"}), _kc(1, "lookup", {"q": "a"}) + _kc(2, "lookup", {"q": "b"}),
             _kc(3, "get_weather", {}) + " x", _KE, " Done."],
    # a start-only form (bare JSON), then a tagged block
    "llama": ["{\"name\": \"lookup\", \"parameters\": {\"q\": \"a\"}}", " ", "<function=get_weather>{\"city\": \"P\"}</function>"],
    "deepseek_v4": ["See: ", f"<{_D}tool_calls>\n<{_D}invoke name=\"lookup\">\n<{_D}parameter name=\"q\" string=\"true\">"
                    f"a</{_D}parameter>\n</{_D}invoke>\n</{_D}tool_calls>", " end."],
}


def _split_markup(pieces):
    """Each piece one delta where it is markup, else a few characters at a time."""
    import re

    out = []
    for piece in pieces:
        for part in re.split(_MARKUP, piece):
            if not part:
                continue
            if re.fullmatch(_MARKUP, part):
                out.append(part)
            else:
                out += [part[i:i + 3] for i in range(0, len(part), 3)]
    return out


@pytest.mark.parametrize("name", sorted(_BLOCKS))
@pytest.mark.parametrize("mode", ["pieces", "markup", "more_at_end"])
def test_composed_names_read_a_block_whole_as_reading_every_delta_does(name, mode):
    import copy

    cls = M.TOOL_PARSERS[name]
    request = {"tools": [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
                         for n in ("get_weather", "lookup")]}
    chunks = list(_BLOCKS[name]) if mode == "pieces" else _split_markup(_BLOCKS[name])
    full = "".join(chunks)
    if mode == "more_at_end":
        chunks = chunks[:-1]  # the caller finalizes with text it never streamed: read at the end

    def answers(p):
        out, prev, start = [], "", len(p.prev_tool_call_arr)
        for ch in chunks:
            cur = prev + ch
            out.append(copy.deepcopy(p.extract_tool_calls_streaming(prev, cur, ch, request=request)))
            prev = cur
        out.append(copy.deepcopy(p.finalize_streaming(full)))
        ids: dict = {}
        for got in out:  # call ids numbered in order of appearance
            for c in (got or {}).get("tool_calls") or []:
                c["id"] = ids.setdefault(c["id"], len(ids))
        arr = [dict(c, id=ids.get(c["id"], c["id"])) for c in p.prev_tool_call_arr[start:]]
        return out, arr

    p, q = cls(None), _general_only(cls)(None)
    want = answers(q)
    assert any((got or {}).get("tool_calls") for got in want[0]), "the stream has no call"
    assert answers(p) == want
    # and again on the instances reused after their end of stream (one shown text it
    # was not streamed included: its end leaves the count of text read at the start)
    assert answers(p) == answers(q)


def _writes_idle_state_out(cls_name: str) -> bool:
    cls = next(c for c in M.TOOL_PARSERS.values() if c.__name__ == cls_name)
    return cls._fast and cls._idle_state in (M.RcMlxToolParser._idle_state, M._RcMlxPieceStreamer._idle_state)


@pytest.mark.parametrize("cls_name", sorted(n for n in _WHOLE if _writes_idle_state_out(n)))
@pytest.mark.parametrize("seed", range(4))
def test_the_gate_state_after_each_delta_is_what_idle_state_answers(cls_name, seed):
    """The lean markup steps write ``_idle_state`` out (no method frame): after
    every delta, the state the gate holds is the one ``_idle_state`` answers
    for where the parser stands (a change to one that the other misses fails here)."""
    import random

    cls = next(c for c in M.TOOL_PARSERS.values() if c.__name__ == cls_name)
    rng = random.Random(seed)
    body = _WHOLE[cls_name]
    text = body if cls_name in BARE else "Let me check.\n" + body + "\nDone."
    cuts = sorted(rng.sample(range(1, len(text)), rng.randint(1, len(text) // 2)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
    p = cls(None)
    checked, prev = 0, ""
    for ch in chunks:
        cur = prev + ch
        p.extract_tool_calls_streaming(prev, cur, ch)
        prev = cur
        gate = p._gate
        if gate.pend or p._fed != len(cur):  # the parser has not read up to here (kept or passed through)
            continue
        held = (gate.idle, gate.keep, gate.quiet, gate.budget if gate.idle == 7 else None)
        assert p._idle_state() == held[0], (cls_name, ch)
        assert (gate.keep, gate.quiet, gate.budget if held[0] == 7 else None) == held[1:]
        checked += 1
    assert checked


@pytest.mark.parametrize("n", [255, 256, 257, 300, 1000])
def test_a_mistral_name_run_past_the_limit_is_content_whatever_the_chunks(n):
    """A run of name characters longer than the 256 vllm-mlx's name buffer
    holds is no call: it was cut where the delta that crossed the limit
    ended, so the content depended on the chunks (and lost the rest of the
    run). Now the run is read to its end and released as content."""
    cls = M.TOOL_PARSERS["mistral"]
    run = ("get_" + "x" * n)[:n]
    text = "Hi [TOOL_CALLS]" + run + '[ARGS]{"x": 1} tail'
    got = []
    for k in (1, 3, 7, 64, 255, len(text)):
        content, calls, args = _stream_objects(cls(None), [text[i:i + k] for i in range(0, len(text), k)], True)
        got.append((content, [c for c in calls if c[1]], args))  # (a call's pieces after the first carry no name)
    assert all(g == got[0] for g in got), got
    content, calls, args = got[0]
    if n <= 256:
        assert (content, calls, args) == ("Hi  tail", [(0, run)], '{"x": 1}')
    else:
        assert (content, calls, args) == ("Hi " + run + '[ARGS]{"x": 1} tail', [], "")


@pytest.mark.parametrize("name", ["harmony", "gpt-oss"])
@pytest.mark.parametrize("lead", ["Hi ", "", "Checking.\n"])
def test_harmony_content_up_to_the_first_call_whatever_the_chunks(name, lead):
    """Content stops at the first call (as vllm-mlx's harmony parser streams no
    content once a call was made). Text before the call was sent when it came
    in deltas of its own, and dropped when the call ended in the same delta."""
    cls = M.TOOL_PARSERS[name]
    call = _CLOSED["HarmonyRcMlxToolParser"].split("<|end|>", 1)[1]  # the two calls, without the final message
    text = lead + call + " after"
    for k in (1, 2, 5, 16, len(text)):
        content, calls, _ = _stream_objects(cls(None), [text[i:i + k] for i in range(0, len(text), k)], True)
        assert content == lead, k
        assert [n for _, n in calls] == ["get_weather", "lookup"], k
    # a marker's "|>" split across two deltas
    cut = text.index("<|call|>") + len("<|call|")
    assert _stream_objects(cls(None), [text[:cut], text[cut:]], True)[0] == lead


@pytest.mark.parametrize("name", sorted(M.TOOL_PARSERS))
def test_long_names_and_keys_stream_alike_whatever_the_chunks(name):
    """``test_tool_wrapper_long_runs.py``'s check for vllm-mlx's classes: a
    300- or 70-character name or key in a call between two good ones, fed
    whole, one character and seven characters at a time."""
    from test_tool_wrapper_long_runs import long_run_texts

    cls = M.TOOL_PARSERS[name]
    for label, text in long_run_texts(cls.tool_format).items():
        got = []
        for k in (len(text), 1, 7):
            content, calls, args = _stream_objects(cls(None), [text[i:i + k] for i in range(0, len(text), k)], True)
            got.append((content, [c for c in calls if c[1]], args))
        assert all(g == got[0] for g in got[1:]), (label, got)


@pytest.mark.parametrize("delta", [" more", ""])
def test_harmony_call_in_text_passed_through_is_sent_with_no_content_after(delta):
    """vllm-mlx's server may call the tool parser first with text it already
    passed through as content (``previous_text``): a call that ended there is
    sent with this delta, and the delta's text, after a call, is not content."""
    cls = M.TOOL_PARSERS["harmony"]
    call = _CLOSED["HarmonyRcMlxToolParser"].split("<|end|>", 1)[1]
    out = cls(None).extract_tool_calls_streaming("Hi " + call, "Hi " + call + delta, delta)
    assert [c["function"]["name"] for c in out["tool_calls"]] == ["get_weather", "lookup"]
    assert "content" not in out


@pytest.mark.parametrize("name", ["harmony", "gpt-oss"])
@pytest.mark.parametrize("text", ["}<|call|>", "Hi <|end|> there", "x<|start|>assistant y", "a < b <| c", "<|ret"])
def test_harmony_tokens_left_out_of_content_whatever_the_chunks(name, text):
    """Found by the mlx_tools fuzz target's one-delta check: the tokens vllm-mlx's
    harmony leaves out of content (``<|call|>``, ``<|end|>``, ...) were taken out
    of each delta's content, so one split across two deltas stayed in.  A tail
    that may still become one now waits for the next delta."""
    cls = M.TOOL_PARSERS[name]
    want = _stream_objects(cls(None), [text], True)
    for k in (1, 2, 3, 5):
        assert _stream_objects(cls(None), [text[i:i + k] for i in range(0, len(text), k)], True) == want, k
    assert "<|call|>" not in want[0] and "<|end|>" not in want[0] and "<|start|>" not in want[0]
