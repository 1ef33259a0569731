"""Fuzz targets for the serving-engine integrations (issue 25): ``vllm``,
``sglang`` and ``max``.

Each decodes the fuzz bytes (``targets.Reader``) into one engine class, a
family's small offline vocabulary (``tests/vocab.py``) and a hostile program
run on one instance: empty deltas, ids outside the vocabulary, text without
ids and ids without text, multi-token steps, one-shot calls in the middle of a
stream, reset / finish in any order and the instance reused afterwards.

Checked: no call raises on model output, results have the engine's types, and,
where the compiled engine is built, an instance on the compiled engine and one
on the pure twin give equal results call by call.  These need the engines (the
peers venv, ``../shared/peers``); ``prepare(name)`` imports them and builds the
vocabularies before the clock starts.
"""
from __future__ import annotations

import functools
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from targets import COMPILED, Reader  # noqa: E402
from vocab import FAMILY_SPECIALS, build_tokenizer  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")

# Families with a small vocabulary whose special tokens are the family's markers.
FAMILIES = ("deepseek_r1", "qwen3", "gpt_oss", "kimi_k2", "glm45", "minimax_m2", "seed_oss", "step3", "gemma4",
            "mistral", "hunyuan_a13b")
TEXT_BITS = ("", "a", " ", "\n", "\n\n", "é", "🧠", "<", ">", "/", "</", "|", "think", "<|", "|>", "\ufffd")


@functools.lru_cache(maxsize=None)
def _hf(fam: str):
    from transformers import PreTrainedTokenizerFast

    return PreTrainedTokenizerFast(tokenizer_object=build_tokenizer(FAMILY_SPECIALS[fam]))


@functools.lru_cache(maxsize=None)
def _vllm_tok(fam: str):
    from vllm.tokenizers.hf import get_cached_tokenizer

    return get_cached_tokenizer(_hf(fam))


class _Vocab:
    """A family's marker strings and ids, and the vocabulary size."""

    def __init__(self, fam: str) -> None:
        from reasoning_core.families import get_family

        hf = _hf(fam)
        f = get_family(fam)
        self.size = len(hf)
        self.markers = [m for m in (*f.start, *f.end, *f.terminators, *f.headers, *f.boundaries) if m]
        self.marker_ids = [list(hf.encode(m, add_special_tokens=False)) for m in self.markers]
        self.hf = hf

    def ids(self, r: Reader) -> list[int]:
        """A step's ids: several, one or none; markers, their parts, ordinary
        ids and ids outside the vocabulary."""
        out: list[int] = []
        for _ in range(r.pick((0, 1, 1, 1, 2, 3, 5))):
            k = r.int(0, 7)
            if k <= 2 and self.marker_ids:
                m = r.pick(self.marker_ids)
                out.extend(m if k else m[: r.int(1, len(m))])
            elif k == 3:
                out.append(r.pick((self.size, self.size + 1, self.size + 977, 2**31 - 1)))
            else:
                out.append(r.int(0, min(self.size, 65536) - 1))
        return out

    def text_of(self, ids: list[int]) -> str:
        return self.hf.decode([i for i in ids if 0 <= i < self.size], skip_special_tokens=False)

    def text(self, r: Reader) -> str:
        parts = []
        for _ in range(r.int(0, 4)):
            parts.append(r.pick(self.markers) if self.markers and r.int(0, 2) == 0 else r.pick(TEXT_BITS))
        return "".join(parts)


@functools.lru_cache(maxsize=None)
def _vocab(fam: str) -> _Vocab:
    return _Vocab(fam)


def _fail(what: str, case: list, exc: BaseException) -> AssertionError:
    return AssertionError(f"{what} raised {type(exc).__name__}: {exc}\nprogram so far: {case!r}")


def _run_pair(instances, call, case, what):
    """``call(instance)`` on each instance: no exception, equal results."""
    results = []
    for inst in instances:
        try:
            results.append(call(inst))
        except Exception as exc:  # noqa: BLE001 - model output must never raise
            raise _fail(what, case, exc) from exc
    for other in results[1:]:
        assert other == results[0], f"{what}: compiled {results[0]!r} != pure {other!r}\nprogram: {case!r}"
    return results[0]


# ------------------------------------------------------------------ vLLM


def _vllm_names() -> list[str]:
    from reasoning_core.integrations import vllm as rcv

    return sorted(n for n in rcv.REASONING_PARSERS if rcv.family_of(n) in FAMILIES)


def _delta(d):
    if d is None:
        return None
    return (getattr(d, "reasoning", None), getattr(d, "content", None))


def check_vllm(data: bytes) -> None:
    from reasoning_core import parser as rcp
    from reasoning_core.integrations import vllm as rcv

    r = Reader(data)
    name = r.pick(VLLM_NAMES)
    fam = rcv.family_of(name)
    voc, tok = _vocab(fam), _vllm_tok(fam)
    cls = rcv.REASONING_PARSERS[name]
    kwargs = {}
    if r.bool():
        kwargs["chat_template_kwargs"] = {r.pick(("thinking", "enable_thinking")): r.bool()}
    try:
        insts = [cls(tok, **kwargs)]
    except (TypeError, ValueError):
        return  # a constructor refusing these kwargs is not model output
    if COMPILED:
        pure = cls(tok, **kwargs)
        pure._parser = rcp.parser_class(pure._family).from_tokenizer_sync(tok, backend="python")
        insts.append(pure)
    case: list = [name, kwargs]
    prev_ids: list[int] = []
    prev_text = ""
    for _ in range(r.int(1, 14)):
        op = r.int(0, 11)
        if op <= 5:
            ids = voc.ids(r)
            mode = r.int(0, 3)
            text = voc.text(r) if mode == 0 else ("" if mode == 1 else voc.text_of(ids))
            ids = [] if mode == 0 and r.bool() else ids  # text without ids
            cur_ids, cur_text = prev_ids + ids, prev_text + text
            case.append(("step", text, ids))
            out = _run_pair(insts, lambda p: _delta(p.extract_reasoning_streaming(
                prev_text, cur_text, text, list(prev_ids), list(cur_ids), list(ids))), case, "extract_reasoning_streaming")
            assert out is None or all(v is None or isinstance(v, str) for v in out)
            _run_pair(insts, lambda p: bool(p.is_reasoning_end_streaming(list(cur_ids), list(ids))), case,
                      "is_reasoning_end_streaming")
            prev_ids, prev_text = cur_ids, cur_text
        elif op == 6:
            case.append("is_reasoning_end")
            _run_pair(insts, lambda p: bool(p.is_reasoning_end(list(prev_ids))), case, "is_reasoning_end")
        elif op == 7:
            case.append("extract_content_ids")
            _run_pair(insts, lambda p: list(p.extract_content_ids(list(prev_ids))), case, "extract_content_ids")
        elif op == 8:
            case.append("count_reasoning_tokens")
            counted = _run_pair(insts, lambda p: int(p.count_reasoning_tokens(list(prev_ids))), case,
                                "count_reasoning_tokens")
            fresh = cls(tok, **kwargs)  # one pass over the ids, nothing kept from earlier calls
            fresh._start_state, fresh._count_start = insts[0]._start_state, insts[0]._count_start
            assert counted == fresh.count_reasoning_tokens(list(prev_ids)), ("count kept across calls", case)
        elif op == 9:
            text = prev_text + voc.text(r)
            case.append(("extract_reasoning", text))
            _run_pair(insts, lambda p: p.extract_reasoning(text, None), case, "extract_reasoning")
        elif op == 10 and hasattr(cls, "finish_streaming"):
            case.append("finish_streaming")
            _run_pair(insts, lambda p: _delta(p.finish_streaming()), case, "finish_streaming")
            prev_ids, prev_text = [], ""  # the instance is reused for another stream
        else:
            ids = voc.ids(r)
            case.append(("prompt", ids))
            _run_pair(insts, lambda p: p.set_prompt_token_ids(list(ids)), case, "set_prompt_token_ids")


# ------------------------------------------------------------------ SGLang


def _sglang_names() -> list[str]:
    from reasoning_core.integrations import sglang as rcs

    return sorted(n for n in rcs.REASONING_DETECTORS if rcs.family_of(n) in FAMILIES)


def _sgl(res):
    return (res.normal_text, res.reasoning_text)


def check_sglang(data: bytes) -> None:
    from reasoning_core import text as rct
    from reasoning_core.integrations import sglang as rcs

    r = Reader(data)
    name = r.pick(SGLANG_NAMES)
    cls = rcs.REASONING_DETECTORS[name]
    voc = _vocab(rcs.family_of(name))
    kwargs = {"stream_reasoning": r.bool(), "force_reasoning": r.pick((None, True, False))}
    if cls.spec.requires_force:
        kwargs["force_reasoning"] = True
    backends = ("cython", "python") if COMPILED else ("python",)
    insts = []
    for be in backends:
        # The detector makes its text parsers on the default backend: the pure
        # instance gets them from the twin.
        rcs.TextReasoningParser = functools.partial(rct.TextReasoningParser, backend=be)
        try:
            insts.append((be, cls(**kwargs)))
        except (TypeError, ValueError):
            return
        finally:
            rcs.TextReasoningParser = rct.TextReasoningParser
    case: list = [name, kwargs]

    def on_each(call, what):
        results = []
        for be, det in insts:
            rcs.TextReasoningParser = functools.partial(rct.TextReasoningParser, backend=be)
            try:
                results.append(call(det))
            except Exception as exc:  # noqa: BLE001 - model output must never raise
                raise _fail(what, case, exc) from exc
            finally:
                rcs.TextReasoningParser = rct.TextReasoningParser
        for other in results[1:]:
            assert other == results[0], f"{what}: compiled {results[0]!r} != pure {other!r}\nprogram: {case!r}"
        return results[0]

    for _ in range(r.int(1, 16)):
        op = r.int(0, 9)
        if op <= 6:
            chunk = voc.text(r)
            case.append(("chunk", chunk))
            out = on_each(lambda d: _sgl(d.parse_streaming_increment(chunk)), "parse_streaming_increment")
            assert all(isinstance(v, str) for v in out)
        elif op == 7:
            text = voc.text(r) + voc.text(r)
            case.append(("detect_and_parse", text))
            on_each(lambda d: _sgl(d.detect_and_parse(text)), "detect_and_parse")
        elif op == 8 and hasattr(cls, "finish"):
            case.append("finish")
            on_each(lambda d: _sgl(d.finish()), "finish")
        else:
            case.append("hooks")
            on_each(lambda d: (d.get_think_end_token_ids(voc.hf), d.get_answer_frame()), "token hooks")


# ------------------------------------------------------------------ MAX


def _max_names() -> list[str]:
    from reasoning_core.integrations import max as rcm

    return sorted(n for n in rcm.REASONING_PARSERS if rcm.family_of(n) in FAMILIES)


def check_max(data: bytes) -> None:
    from reasoning_core._tokenizer import tables_for
    from reasoning_core.integrations import max as rcm
    from reasoning_core.parser import parser_class

    r = Reader(data)
    name = r.pick(MAX_NAMES)
    cls = rcm.REASONING_PARSERS[name]
    fam = rcm.family_of(name)
    voc = _vocab(fam)
    tables = tables_for(cls.family, voc.hf)
    backends = ("cython", "python") if COMPILED else ("python",)
    insts = [cls(parser_class(cls.family)(tables, backend=be)) for be in backends]
    case: list = [name]
    for _ in range(r.int(1, 16)):
        op = r.int(0, 9)
        if op <= 6:
            ids = voc.ids(r)
            reasoning = r.bool()
            case.append(("stream", ids, reasoning))

            def step(p, ids=ids, reasoning=reasoning):
                d = p.stream(list(ids), reasoning)
                got = (list(d.span.extract_reasoning(list(ids))), list(d.span.extract_content(list(ids))),
                       bool(d.is_still_reasoning))
                assert len(got[0]) + len(got[1]) <= len(ids), "a span gave out more ids than the delta has"
                return got

            _run_pair(insts, step, case, "stream")
        elif op == 7:
            ids = voc.ids(r) + voc.ids(r)
            case.append(("will_reason_after_prompt", ids))
            _run_pair(insts, lambda p: bool(p.will_reason_after_prompt(list(ids))), case, "will_reason_after_prompt")
        else:
            case.append("reset")
            _run_pair(insts, lambda p: p.reset(), case, "reset")


TARGETS = {"vllm": check_vllm, "sglang": check_sglang, "max": check_max}
VLLM_NAMES: list[str] = []
SGLANG_NAMES: list[str] = []
MAX_NAMES: list[str] = []


def prepare(target: str) -> None:
    """Import the engine and build the vocabularies before fuzzing starts."""
    global VLLM_NAMES, SGLANG_NAMES, MAX_NAMES
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if target == "vllm":
            VLLM_NAMES = _vllm_names()
            from reasoning_core.integrations import vllm as rcv

            for n in VLLM_NAMES:
                _vllm_tok(rcv.family_of(n))
        elif target == "sglang":
            SGLANG_NAMES = _sglang_names()
        else:
            MAX_NAMES = _max_names()
    for fam in FAMILIES:
        _vocab(fam)
