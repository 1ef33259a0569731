"""Every SGLang detector we serve does O(chunk) work per chunk, whatever came before.

Degenerate model output (long runs of newlines or spaces, endless partial
markers, repeated markers) through every reasoning detector, and long tool-call
arguments plus degenerate output through every function-call detector: the
input ×4 must cost at most ×6 the time (a quadratic detector shows ×16).  The
time of each size is the best of a few runs (noise only adds time); a case
over the bound is measured again, larger, before it fails (CI runs a slice of the
inputs; REASONING_CORE_FULL_ENGINE_TESTS=1 all of them).  It also checks
that ``streamed_args_for_tool`` / ``prev_tool_call_arr`` (what SGLang's
serving layer reads at the end of a stream) hold what was streamed.
"""
from __future__ import annotations

import json
import time

import pytest

from sglang_max_helpers import import_sglang_parsers
from streams import degenerate_outputs

reasoning_parser, rcs = import_sglang_parsers()

from sglang.srt.entrypoints.openai.protocol import Function, Tool  # noqa: E402

RATIO = 6.0
CHUNK = 4


def _reasoning_inputs(name: str, n: int) -> dict[str, str]:
    sp = rcs.REASONING_DETECTORS[name].spec
    return degenerate_outputs(sp.start, sp.end, n)


def _chunks(text: str, size: int = CHUNK) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


BLOCK = 64


def _cost(make, pieces: list, finish=None, repeats: int = 3) -> float:
    """Time to feed ``pieces`` to a fresh feeder from ``make()``: per block
    of chunks, the best of ``repeats`` streams (a shared machine adds
    sporadic pauses; the work itself is the minimum), summed."""
    import gc

    blocks = [pieces[i:i + BLOCK] for i in range(0, len(pieces), BLOCK)]
    best = [float("inf")] * (len(blocks) + 1)
    was = gc.isenabled()  # no collect(): SGLang's heap makes one cost 0.5 s
    gc.disable()
    try:
        for _ in range(repeats):
            feed, end = make()
            clock = time.perf_counter
            for k, block in enumerate(blocks):
                t = clock()
                for piece in block:
                    feed(piece)
                t = clock() - t
                if t < best[k]:
                    best[k] = t
            t = clock()
            end()
            best[-1] = min(best[-1], clock() - t)
    finally:
        if was:
            gc.enable()
    return sum(best)


def _ratio(cost, base: int) -> tuple[float, float, float]:
    small = cost(base)
    large = cost(4 * base)
    return large / max(small, 1e-9), small, large


def _check_linear(cost, base: int, what: str) -> None:
    r, small, large = _ratio(cost, base)
    if r > RATIO:  # once more, larger (fixed costs and noise weigh less)
        r, small, large = _ratio(cost, 2 * base)
    assert r <= RATIO, f"{what}: ×4 input took ×{r:.1f} time ({small * 1e3:.2f} ms -> {large * 1e3:.2f} ms)"


import os  # noqa: E402

# CI runs a slice (the kinds that found the quadratic cases); the rest with
# REASONING_CORE_FULL_ENGINE_TESTS=1.
FULL = os.environ.get("REASONING_CORE_FULL_ENGINE_TESTS", "").strip() not in ("", "0")
_CI_KINDS = {"newlines", "partial_end", "repeated_markers"}
REASONING_CASES = [(n, k) for n in sorted(rcs.REASONING_DETECTORS) for k in _reasoning_inputs(n, 8)
                   if FULL or k in _CI_KINDS]


@pytest.mark.parametrize("name,kind", REASONING_CASES)
def test_reasoning_detector_linear(name, kind):
    cls = rcs.REASONING_DETECTORS[name]
    forces = []
    for force in (False, True):
        try:
            cls(force_reasoning=force)
            forces.append(force)
        except ValueError:
            pass

    def cost(n: int) -> float:
        text = _reasoning_inputs(name, n)[kind]
        total = 0.0
        for force in forces:
            def make():
                det = cls(force_reasoning=force)
                return det.parse_streaming_increment, det.finish
            total += _cost(make, _chunks(text))
            # one shot: the whole text as one piece
            def make_one():
                det = cls(force_reasoning=force)
                return det.detect_and_parse, lambda: None
            total += _cost(make_one, [text])
        return total

    _check_linear(cost, 6000, f"{name} {kind}")


def test_minimax_m3_blank_run_kept():
    """The held leading whitespace of minimax-m3 still comes out as before."""
    cls = rcs.REASONING_DETECTORS["minimax-m3"]
    for text in ("\n" * 50 + "</mm:think>answer", "\n" * 50 + "answer", "\n \n", "  </mm:thi"):
        det = cls()
        out = [det.parse_streaming_increment(p) for p in _chunks(text, 3)] + [det.finish()]
        content = "".join(r.normal_text for r in out)
        reasoning = "".join(r.reasoning_text for r in out)
        one = cls().detect_and_parse(text)
        assert (content, reasoning) == (one.normal_text, one.reasoning_text), text


# ---------------------------------------------------------------------------
# Function-call detectors
# ---------------------------------------------------------------------------

TOOLS = [Tool(type="function", function=Function(name="write_file", description="d", parameters={
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}))]

CORE_TOOL_NAMES = sorted(set(rcs.TOOL_DETECTORS) - set(rcs._MORE_TOOL_NAMES))


def _long_call(name: str, n: int) -> str:
    import test_sglang as ts

    body = ("def f(x):\n    return {'a': [x, \"q\\\\n\"]}  # }{][\n" * (n // 40 + 1))[:n]
    call = ts._call_text(name, "write_file", {"path": "a.py", "content": body})
    return "I will write it. " + ts._section(name, [call])


def _feed_tools(cls, text: str):
    det = cls()
    for piece in _chunks(text, 12):
        det.parse_streaming_increment(piece, TOOLS)
    det.finish(TOOLS)
    return det


def _tool_cost(cls, text: str) -> float:
    def make():
        det = cls()
        return (lambda piece: det.parse_streaming_increment(piece, TOOLS)), (lambda: det.finish(TOOLS))
    return _cost(make, _chunks(text, 12))


@pytest.mark.parametrize("name", CORE_TOOL_NAMES)
def test_tool_detector_linear_long_arguments(name):
    cls = rcs.TOOL_DETECTORS[name]
    _check_linear(lambda n: _tool_cost(cls, _long_call(name, n)), 16000, f"{name} long arguments")


@pytest.mark.parametrize("name", CORE_TOOL_NAMES)
def test_tool_detector_bookkeeping(name):
    """What SGLang's serving layer reads at the end of a stream: the streamed
    argument text and the parsed arguments of the last call."""
    cls = rcs.TOOL_DETECTORS[name]
    det = _feed_tools(cls, _long_call(name, 3000))
    assert len(det.prev_tool_call_arr) == len(det.streamed_args_for_tool) == 1
    streamed = det.streamed_args_for_tool[0]
    assert isinstance(streamed, str)
    parsed = json.loads(streamed)
    assert det.prev_tool_call_arr[0]["name"] == "write_file"
    assert det.prev_tool_call_arr[0]["arguments"] == parsed
    assert parsed["path"] == "a.py" and len(parsed["content"]) == 3000
    assert list(det.streamed_args_for_tool) == [streamed]


_LIST_OPS = {
    # reads
    "getitem": (lambda a: a[1], False), "slice": (lambda a: a[::-1], False), "iter": (lambda a: list(iter(a)), False),
    "reversed": (lambda a: list(reversed(a)), False), "contains": (lambda a: "cd" in a, False),
    "eq": (lambda a: a == ["ab", "cd", "ef"], False), "ne": (lambda a: a != ["ab", "cd", "ef"], False),
    "lt": (lambda a: a < ["zz"], False), "repr": (lambda a: repr(a), False), "add": (lambda a: a + ["q"], False),
    "mul": (lambda a: a * 2, False), "rmul": (lambda a: 2 * a, False), "index": (lambda a: a.index("cd"), False),
    "count": (lambda a: a.count("ab"), False), "copy": (lambda a: a.copy(), False), "len": (lambda a: len(a), False),
    # changes
    "setitem": (lambda a: a.__setitem__(1, "zz"), False), "append": (lambda a: a.append("q"), False),
    "setslice": (lambda a: a.__setitem__(slice(0, 2), ["x"]), True), "delitem": (lambda a: a.__delitem__(0), True),
    "iadd": (lambda a: a.__iadd__(["q"]) and None, True), "imul": (lambda a: a.__imul__(2) and None, True),
    "extend": (lambda a: a.extend(["q", "r"]), True), "insert": (lambda a: a.insert(1, "zz"), True),
    "pop": (lambda a: a.pop(), True), "pop0": (lambda a: a.pop(0), True), "remove": (lambda a: a.remove("cd"), True),
    "clear": (lambda a: a.clear(), True), "sort": (lambda a: a.sort(reverse=True), True),
    "reverse": (lambda a: a.reverse(), True),
}


@pytest.mark.parametrize("op", sorted(_LIST_OPS))
def test_streamed_args_list_operations_see_the_joined_texts(op):
    """``streamed_args_for_tool`` keeps each call's arguments as pieces; every
    list operation reads and changes the joined texts, as on a plain list, and
    one that may move them rebuilds the pieces (a lane holding the old ones
    stops: ``version``), so what is appended next lands on the right text."""
    fn, moves = _LIST_OPS[op]
    args = rcs._ArgPieces()
    args.ensure(3)
    for i, text in enumerate(("ab", "cd", "ef")):
        for ch in text:
            args.add(i, ch)
    plain = ["ab", "cd", "ef"]
    version = args.version
    assert fn(args) == fn(plain)
    assert list(args) == plain and len(args) == len(plain)
    assert ["".join(p) for p in args._pieces] == plain
    assert (args.version != version) == moves
    for i in range(len(plain)):
        args.add(i, "+")
        plain[i] += "+"
    assert list(args) == plain and args == plain


def _degenerate_tool_inputs(cls, n: int) -> dict[str, str]:
    opener = next(iter(cls()._parser.openers), "<")
    part = opener[:-1] or opener
    return {"newlines": "\n" * n, "spaces": " " * n, "partial_opener": part * (n // max(1, len(part))),
            "lt": "<" * n}


TOOL_DEGENERATE = [(n, k) for n in sorted(rcs.TOOL_DETECTORS)
                   for k in ("newlines", "spaces", "partial_opener", "lt") if FULL or k in ("newlines", "partial_opener")]


@pytest.mark.parametrize("name,kind", TOOL_DEGENERATE)
def test_tool_detector_linear_degenerate(name, kind):
    cls = rcs.TOOL_DETECTORS[name]
    _check_linear(lambda n: _tool_cost(cls, _degenerate_tool_inputs(cls, n)[kind]), 8000, f"{name} {kind}")


@pytest.mark.parametrize("name", CORE_TOOL_NAMES)
def test_tool_detector_parses_the_arguments_when_read_not_at_the_close(name, monkeypatch):
    """The delta whose piece closes a call's JSON arguments does not parse
    what was streamed (O(piece) whatever the arguments' length): the
    arguments are parsed once, when SGLang reads ``prev_tool_call_arr``."""
    decoded = []
    real = rcs._JSON_DECODE
    monkeypatch.setattr(rcs, "_JSON_DECODE", lambda s, i=0: decoded.append(len(s)) or real(s, i))
    cls = rcs.TOOL_DETECTORS[name]
    with monkeypatch.context() as m:
        m.setattr(rcs.json, "loads", lambda *a, **k: pytest.fail("json.loads while streaming"))
        det = _feed_tools(cls, _long_call(name, 3000) + _long_call(name, 200))
    assert decoded == []
    streamed = list(det.streamed_args_for_tool)
    assert len(streamed) == 2
    want = [{"name": "write_file", "arguments": json.loads(s)} for s in streamed]
    assert det.prev_tool_call_arr[1] == want[1] and decoded == [len(s) for s in streamed]
    assert det.prev_tool_call_arr == want and len(decoded) == 2  # each call parsed once


def _arr_after(pieces: list[str]):
    det = rcs.TOOL_DETECTORS["qwen25"]()
    det.parse_streaming_increment("", TOOLS)
    det._open_call(0, "write_file")
    for piece in pieces:
        det._add_args(0, 0, piece)
    return det


def test_called_arguments_are_the_value_at_the_close():
    # pieces after the JSON closed (only text after it) leave the value as it was
    det = _arr_after(['{"a": ', '[1, 2]', '}', '  ', ' x}'])
    assert det.prev_tool_call_arr[0] == {"name": "write_file", "arguments": {"a": [1, 2]}}
    # leading JSON whitespace is skipped, as json.loads skips it
    assert _arr_after([" \n", '{"b": 1}']).prev_tool_call_arr[0]["arguments"] == {"b": 1}
    # not closed: the arguments stay as they were when the call opened
    assert _arr_after(['{"a": 1']).prev_tool_call_arr[0]["arguments"] == {}


def test_a_dict_read_before_the_close_is_filled_in_place():
    det = _arr_after(['{"a": '])
    entry = det.prev_tool_call_arr[0]
    det._add_args(0, 0, "2}")
    # (the dict is filled when the list is next read)
    assert det.prev_tool_call_arr[0] is entry and entry["arguments"] == {"a": 2}


def _calls_list():
    det = _arr_after(['{"k": "', 'v"}'])
    for i in (1, 2):
        det._open_call(i, "write_file")
        det._add_args(i, i, '{"k": %d}' % i)
    return det.prev_tool_call_arr


_CALL_ITEMS = [{"name": "write_file", "arguments": {"k": v}} for v in ("v", 1, 2)]
# _LIST_OPS over this list: its items, not the texts ("cd" -> the second item)
_CALL_OPS = dict(_LIST_OPS, contains=(lambda a: _CALL_ITEMS[1] in a, False),
                 index=(lambda a: a.index(_CALL_ITEMS[1]), False), count=(lambda a: a.count(_CALL_ITEMS[0]), False),
                 remove=(lambda a: a.remove(_CALL_ITEMS[1]), True))


def _outcome(fn, arr):
    try:
        return fn(arr)
    except (TypeError, ValueError, IndexError) as exc:
        return type(exc)


@pytest.mark.parametrize("op", sorted(_CALL_OPS))
def test_calls_list_operations_see_the_parsed_arguments(op):
    """Every list operation on ``prev_tool_call_arr`` sees (and changes) the
    arguments parsed, as on the list an eager parse gives; copies and pickles
    are plain lists of them."""
    import copy
    import pickle

    fn, _moves = _CALL_OPS[op]
    ours, plain = _calls_list(), copy.deepcopy(_CALL_ITEMS)
    assert _outcome(fn, ours) == _outcome(fn, plain)
    assert list(ours) == plain and len(ours) == len(plain)
    ours = _calls_list()
    for make in (copy.copy, copy.deepcopy, lambda a: pickle.loads(pickle.dumps(a))):
        got = make(ours)
        assert type(got) is list and got == _CALL_ITEMS


def test_a_calls_list_replaced_by_a_plain_one_is_filled_at_the_close():
    det = _arr_after([])
    det.prev_tool_call_arr = [dict(det.prev_tool_call_arr[0])]  # a caller's own list
    det._add_args(0, 0, '{"a": 1}')
    assert det.prev_tool_call_arr == [{"name": "write_file", "arguments": {"a": 1}}]
