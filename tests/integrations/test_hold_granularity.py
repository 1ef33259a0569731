"""When ours sends a call's arguments, against the engine's own parser of the name.

SGLang's ``qwen3_coder`` detector (also serving ``step3p5`` and ``nanbeige``) and
MAX's ``qwen3_5`` parser send a call's arguments only at structural points: a
parameter's value when its ``</parameter>`` comes, ``}`` when ``</function>``
comes; the deltas in between give an empty result.  Ours under those names sends
at the same deltas (docs/engines/sglang.md, max.md).  Checked here on well-formed
streams in random chunkings, against the real engine classes:

* the deltas that carry anything of a call (a name or argument text) are the
  same for ours and the engine's parser;
* the arguments sent, joined per call, are the same JSON as the engine's, and
  the same text as our bare parser streams for the same chunks (nothing held is
  lost, nothing is sent twice), a stream cut inside a value included (``finish``);
* SGLang's bookkeeping (``streamed_args_for_tool``) read after any delta holds
  exactly what was sent so far; a MAX parser reused after ``reset()`` answers the same.
"""

from __future__ import annotations

import json
import random
import warnings

import pytest

from sglang_max_helpers import import_max, import_sglang_parsers

from reasoning_core import tools as rc_tools

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"},
                                            "mode": {"type": "string"}}}
NAMES = ("write_file", "append_file")
_PIECES = ["a", "bc", "x = 1", " < ", "->", ">= ", "<div>", "</b>", "é", "\\n", '"q"', "\t", "\n", "y>", "<", "=",
           "{", "}", "[1, 2]", "def f(x):", " # ", "<tool", "param", "function"]


def _value(rng: random.Random) -> str:
    v = "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 25)))
    return v.strip("\n") or "v"


def _text(rng: random.Random) -> str:
    out = [rng.choice(["Writing the file now.\n", "", "Sure.\n\n"])]
    for k in range(rng.randint(1, 2)):
        out.append("<tool_call>\n<function=%s>\n" % rng.choice(NAMES))
        for key in rng.sample(sorted(SCHEMA["properties"]), rng.randint(1, 3)):
            out.append("<parameter=%s>\n%s\n</parameter>\n" % (key, _value(rng)))
        out.append("</function>\n</tool_call>")
        if k == 0:
            out.append("\n")
    return "".join(out)


def _cuts(rng: random.Random, n: int, most: int):
    i = 0
    while i < n:
        k = rng.randint(1, most)
        yield i, k
        i += k


def _chunks(rng: random.Random, text: str) -> list[str]:
    cuts, i = [], 0
    while i < len(text):
        n = rng.choice([1, 1, 2, 3, 4, 5, 8, 13, 21, 40])
        cuts.append(text[i:i + n])
        i += n
    return cuts


CASES = [(seed, random.Random(seed)) for seed in range(60)]


def _bare_args(fmt: str, chunks: list[str]) -> dict[int, str]:
    p = rc_tools.create(fmt)
    p.set_streaming_tool_schemas({n: SCHEMA for n in NAMES})
    args: dict[int, list] = {}
    for c in chunks:
        for d in p.parse_delta(c) or ():
            if d.arguments:
                args.setdefault(d.index, []).append(d.arguments)
    for d in p.finish():
        if d.arguments:
            args.setdefault(d.index, []).append(d.arguments)
    return {i: "".join(a) for i, a in args.items()}


# ---------------------------------------------------------------- SGLang

@pytest.fixture(scope="module")
def sgl():
    _, rcs = import_sglang_parsers()
    rcs.register()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from sglang.srt.entrypoints.openai.protocol import Function, Tool
        from sglang.srt.function_call.function_call_parser import FunctionCallParser
    tools = [Tool(type="function", function=Function(name=n, description="d", parameters=SCHEMA)) for n in NAMES]
    return rcs, FunctionCallParser, tools


def _sgl_stream(sgl, name: str, chunks: list[str], end: bool = True, check_books: bool = False):
    rcs, FunctionCallParser, tools = sgl
    p = FunctionCallParser(tools, name)
    points, names, args = [], {}, {}
    for i, c in enumerate(chunks):
        _, calls = p.parse_stream_chunk(c)
        if any(x.name or x.parameters for x in calls):
            points.append(i)
        for x in calls:
            if x.name:
                names[x.tool_index] = x.name
            if x.parameters:
                args.setdefault(x.tool_index, []).append(x.parameters)
        if check_books:
            books = p.detector.streamed_args_for_tool
            for k, a in args.items():
                assert books[k] == "".join(a), (i, k)
    if end:
        _, calls = p.parse_stream_end()
        for x in calls:
            if x.parameters:
                args.setdefault(x.tool_index, []).append(x.parameters)
    return points, names, {k: "".join(a) for k, a in args.items()}, p.detector


@pytest.mark.parametrize("name", ["qwen3_coder", "step3p5", "nanbeige"])
@pytest.mark.parametrize("seed,rng", CASES[:40], ids=[f"s{s}" for s, _ in CASES[:40]])
def test_sglang_sends_where_sglang_does(sgl, name, seed, rng):
    rcs = sgl[0]
    if name not in rcs.TOOL_DETECTORS or name not in sgl[1].ToolCallParserEnum:
        pytest.skip(f"this SGLang has no {name} detector")
    text = _text(rng)
    chunks = _chunks(rng, text)
    e_points, e_names, e_args, _ = _sgl_stream(sgl, name, chunks)
    o_points, o_names, o_args, det = _sgl_stream(sgl, "rc_" + name, chunks, check_books=True)
    assert o_points == e_points, (text, chunks)
    assert o_names == e_names
    assert {k: json.loads(v) for k, v in o_args.items()} == {k: json.loads(v) for k, v in e_args.items()}
    assert o_args == _bare_args("qwen3_coder", chunks)


@pytest.mark.parametrize("seed,rng", CASES[40:], ids=[f"s{s}" for s, _ in CASES[40:]])
def test_sglang_cut_inside_a_value_sends_it_at_the_end(sgl, seed, rng):
    text = _text(rng)
    cut = text.index("</parameter>") - rng.randint(1, 3)  # inside the first value
    chunks = _chunks(rng, text[:cut])
    e_points = _sgl_stream(sgl, "qwen3_coder", chunks, end=False)[0]
    o_points = _sgl_stream(sgl, "rc_qwen3_coder", chunks, end=False, check_books=True)[0]
    assert o_points == e_points and len(o_points) == 1  # the name only
    _, _, args, _ = _sgl_stream(sgl, "rc_qwen3_coder", chunks, end=True)
    assert args == _bare_args("qwen3_coder", chunks)


@pytest.mark.parametrize("seed", [1, 2])
def test_long_values_held_in_blocks(sgl, maxp, seed):
    # a value of thousands of deltas is kept in joined blocks: the same deltas send, the same arguments
    rng = random.Random(seed)
    body = "".join(rng.choice(["x", "y = 2", " -> ", "\\n", "<b>", "\n", "é", "z" * 7]) for _ in range(1500))
    text = ("<tool_call>\n<function=write_file>\n<parameter=content>\n%s\n</parameter>\n"
            "<parameter=path>\na.py\n</parameter>\n</function>\n</tool_call>" % body.strip("\n"))
    chunks = [text[i:i + 2] for i in range(0, len(text), 2)]
    e = _sgl_stream(sgl, "qwen3_coder", chunks)
    o = _sgl_stream(sgl, "rc_qwen3_coder", chunks, check_books=True)
    assert o[0] == e[0] and len(o[0]) == 4
    assert json.loads(o[2][0]) == json.loads(e[2][0])
    assert o[2] == _bare_args("qwen3_coder", chunks)
    rcm, max_tools = maxp
    e = _max_stream(max_tools.create("qwen3_5"), chunks)
    o = _max_stream(rcm.TOOL_PARSERS["qwen3_5"](), chunks)
    assert o[0] == e[0] and json.loads(o[2][0]) == json.loads(e[2][0])
    assert o[2] == _bare_args("qwen3_5", chunks)


def test_str_subclass_deltas_keep_their_order(sgl, maxp):
    # a str subclass delta (an engine's StrEnum marker) while deltas are kept is read after them
    class S(str):
        pass

    text = "<tool_call>\n<function=write_file>\n<parameter=path>\nabcdefgh\n</parameter>\n</function>\n</tool_call>"
    chunks = [text[i:i + 3] for i in range(0, len(text), 3)]
    mixed = [S(c) if i % 4 == 3 else c for i, c in enumerate(chunks)]
    o = _sgl_stream(sgl, "rc_qwen3_coder", mixed, check_books=True)
    assert o[:3] == _sgl_stream(sgl, "rc_qwen3_coder", chunks)[:3]
    assert json.loads(o[2][0]) == {"path": "abcdefgh"}
    rcm, _ = maxp
    assert _max_stream(rcm.TOOL_PARSERS["qwen3_5"](), mixed) == _max_stream(rcm.TOOL_PARSERS["qwen3_5"](), chunks)
    with pytest.raises(TypeError):
        rcm.TOOL_PARSERS["qwen3_5"]().parse_delta(b"x")


def _compact(rng: random.Random) -> str:
    out = [rng.choice(["Sure.\n", "", "Writing it.\n\n"])]
    for _ in range(rng.randint(1, 2)):
        args = {k: _value(rng) + "x" * 20 for k in rng.sample(sorted(SCHEMA["properties"]), rng.randint(1, 3))}
        if rng.random() < 0.3:
            args["path"] = [1, {"b": "}]"}]
        out.append("[TOOL_CALLS]%s[ARGS]%s" % (rng.choice(NAMES), json.dumps(args, ensure_ascii=rng.random() < 0.5)))
    return "".join(out)


@pytest.mark.parametrize("seed,rng", CASES[:40], ids=[f"s{s}" for s, _ in CASES[:40]])
def test_sglang_mistral_compact_call_goes_out_whole(sgl, seed, rng):
    # SGLang's mistral sends [TOOL_CALLS]name[ARGS]{...} whole when the JSON closes; ours at the same chunk
    text = _compact(rng)
    chunks = [text[i:i + n] for i, n in _cuts(rng, len(text), 13)]
    e_points, e_names, e_args, e_det = _sgl_stream(sgl, "mistral", chunks)
    o_points, o_names, o_args, o_det = _sgl_stream(sgl, "rc_mistral", chunks, check_books=True)
    assert o_points == e_points, (text, chunks)
    assert o_names == e_names
    assert o_args == e_args
    assert list(o_det.streamed_args_for_tool) == list(e_det.streamed_args_for_tool)
    assert o_det.prev_tool_call_arr == e_det.prev_tool_call_arr


@pytest.mark.parametrize("seed", [1, 2])
def test_sglang_mistral_long_compact_call_held_in_blocks(sgl, seed):
    # a compact call of thousands of chunks is kept in joined blocks (compiled entry or twin,
    # KeptChunks): sent whole at the chunk that closes its JSON, as SGLang's
    rng = random.Random(seed)
    body = "".join(rng.choice(["x", "y = 2", " -> ", "\\n", "<b>", "é", "[", "{", "z" * 7]) for _ in range(1500))
    text = "Sure.\n[TOOL_CALLS]%s[ARGS]%s" % (NAMES[0], json.dumps({"path": "a.py", "content": body}))
    chunks = [text[i:i + 2] for i in range(0, len(text), 2)]
    e_points, e_names, e_args, _ = _sgl_stream(sgl, "mistral", chunks)
    o_points, o_names, o_args, o_det = _sgl_stream(sgl, "rc_mistral", chunks, check_books=True)
    assert o_points == e_points and len(o_points) == 1
    assert (o_names, o_args) == (e_names, e_args)
    assert json.loads(o_args[0]) == {"path": "a.py", "content": body}
    assert o_args == _bare_args("mistral", chunks) and not o_det._hold.held()


def test_sglang_mistral_compact_cut_inside_the_json(sgl):
    text = '[TOOL_CALLS]write_file[ARGS]{"path": "a.py", "content": "abc'
    chunks = [text[i:i + 3] for i in range(0, len(text), 3)]
    points, _, args, _ = _sgl_stream(sgl, "rc_mistral", chunks, end=False)
    assert points == []  # nothing before the JSON closes, as SGLang
    _, names, args, _ = _sgl_stream(sgl, "rc_mistral", chunks, end=True)
    assert args == _bare_args("mistral", chunks)


@pytest.mark.parametrize("seed,rng", CASES[:25], ids=[f"s{s}" for s, _ in CASES[:25]])
def test_sglang_mistral_list_then_compact_calls_do_not_depend_on_the_chunks(sgl, seed, rng):
    # A [TOOL_CALLS] [...] call streams on the lane (compiled, keeping the last
    # characters read); a compact call after it is still held and sent whole.
    # Arguments with brackets and "[ARGS" inside strings, cut every way.
    listed = {"path": "a[1].py", "content": "x = [1, 2]  # [ARGS] " + _value(rng) + "y" * rng.randint(0, 40)}
    compact = {"path": "b.py", "content": "[TOOL_CALLS] " + _value(rng)}
    text = ("Sure.\n[TOOL_CALLS] [" + json.dumps({"name": NAMES[0], "arguments": listed}) + "]"
            + "[TOOL_CALLS]%s[ARGS]%s" % (NAMES[1], json.dumps(compact)))
    whole = _sgl_stream(sgl, "rc_mistral", [text], check_books=True)
    assert whole[1] == {0: NAMES[0], 1: NAMES[1]}
    assert {k: json.loads(v) for k, v in whole[2].items()} == {0: listed, 1: compact}
    for most in (1, 4, 17):
        chunks = [text[i:i + n] for i, n in _cuts(rng, len(text), most)]
        _, names, args, det = _sgl_stream(sgl, "rc_mistral", chunks, check_books=True)
        assert (names, args) == whole[1:3], (seed, most, chunks)
        assert args == _bare_args("mistral", chunks)
        assert det._hot is None or det._held is None


def test_sglang_plain_text_and_other_formats_stream_every_delta(sgl):
    # SGLang's kimi_k2 and glm45 send argument text at every delta: ours too.
    text = ('<|tool_calls_section_begin|><|tool_call_begin|>functions.write_file:0<|tool_call_argument_begin|>'
            '{"path": "abcdefghijklmnopqrstuvwxyz"}<|tool_call_end|><|tool_calls_section_end|>')
    chunks = _chunks(random.Random(1), text)
    e_points = _sgl_stream(sgl, "kimi_k2", chunks)[0]
    o_points = _sgl_stream(sgl, "rc_kimi_k2", chunks)[0]
    assert len(e_points) > 5 and len(o_points) > 5


# ---------------------------------------------------------------- MAX

@pytest.fixture(scope="module")
def maxp():
    import_max()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from reasoning_core.integrations import max as rcm
        rcm._native_tool_classes()
        from max.pipelines.lib import tool_parsing as max_tools
    return rcm, max_tools


def _max_stream(p, chunks: list[str], end: bool = True):
    p.set_streaming_tool_schemas({n: SCHEMA for n in NAMES})
    points, names, args = [], {}, {}
    for i, c in enumerate(chunks):
        out = p.parse_delta(c)
        if any(d.name or d.arguments for d in out or ()):
            points.append(i)
        for d in out or ():
            if d.name:
                names[d.index] = d.name
            if d.arguments:
                args.setdefault(d.index, []).append(d.arguments)
    if end and hasattr(p, "finish"):
        for d in p.finish():
            if d.arguments:
                args.setdefault(d.index, []).append(d.arguments)
    return points, names, {k: "".join(a) for k, a in args.items()}


@pytest.mark.parametrize("seed,rng", CASES[:40], ids=[f"s{s}" for s, _ in CASES[:40]])
def test_max_sends_where_max_does(maxp, seed, rng):
    rcm, max_tools = maxp
    text = _text(rng)
    chunks = _chunks(rng, text)
    e_points, e_names, e_args = _max_stream(max_tools.create("qwen3_5"), chunks)
    ours = rcm.TOOL_PARSERS["qwen3_5"]()
    o_points, o_names, o_args = _max_stream(ours, chunks)
    assert o_points == e_points, (text, chunks)
    assert o_names == e_names
    assert {k: json.loads(v) for k, v in o_args.items()} == {k: json.loads(v) for k, v in e_args.items()}
    assert o_args == _bare_args("qwen3_5", chunks)
    ours.reset()  # reused: the same again
    assert _max_stream(ours, chunks) == (o_points, o_names, o_args)


@pytest.mark.parametrize("seed,rng", CASES[40:], ids=[f"s{s}" for s, _ in CASES[40:]])
def test_max_cut_inside_a_value_sends_it_at_the_end(maxp, seed, rng):
    rcm, max_tools = maxp
    text = _text(rng)
    cut = text.index("</parameter>") - rng.randint(1, 3)
    chunks = _chunks(rng, text[:cut])
    e_points = _max_stream(max_tools.create("qwen3_5"), chunks, end=False)[0]
    assert _max_stream(rcm.TOOL_PARSERS["qwen3_5"](), chunks, end=False)[0] == e_points and len(e_points) == 1
    _, _, args = _max_stream(rcm.TOOL_PARSERS["qwen3_5"](), chunks)
    assert args == _bare_args("qwen3_5", chunks)
    # MAX's end-of-stream hook reads what is kept (only text travels there)
    p = rcm.TOOL_PARSERS["qwen3_5"]()
    p.set_streaming_tool_schemas({n: SCHEMA for n in NAMES})
    for c in chunks:
        p.parse_delta(c)
    assert p.flush() is None and not p._hold.held()
