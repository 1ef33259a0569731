"""Regression tests for the engine-side hardening (one test per reported behaviour).

Each test is named after the behaviour it pins (``test_i11_NN_...``) and runs on
both backends through the ``backend`` fixture.
"""
from __future__ import annotations

import array
import dataclasses
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import reasoning_core as rc
from reasoning_core._dispatch import backend_module
from reasoning_core._tables import END, START, TERM, Pattern, Tables, build_tables
from vocab import encode, family_tokenizer

THINK, UNTHINK = 128821, 128822
ROOT = Path(__file__).resolve().parent.parent


def _r1(deepseek_tokenizer, backend):
    return rc.get_parser("deepseek_r1", deepseek_tokenizer, backend=backend)


# -- 1. re-entrant / concurrent use of one parser ---------------------------------------------
class _ReentrantIndex:
    """An id whose ``__index__`` uses the parser it is being read by."""

    def __init__(self, parser, value):
        self.parser, self.value = parser, value

    def __index__(self):
        self.parser.stream(list(range(100_000)), True)  # would regrow the scratch buffer
        return self.value


@pytest.mark.parametrize("container", ["list", "tuple"])
def test_i11_01_reentrant_index_raises_runtime_error(deepseek_tokenizer, backend, container):
    p = _r1(deepseek_tokenizer, backend)
    ids = [5, THINK, 6] * 50 + [_ReentrantIndex(p, 7)] + [8, UNTHINK, 9] * 50
    ids = ids if container == "list" else tuple(ids)
    # The prompt check reads ids from the end and stops at the deciding
    # marker: the re-entrant id must come after the last one to be read.
    tail = list(ids) + [_ReentrantIndex(p, 7)]
    tail = tail if container == "list" else tuple(tail)
    for call in (lambda: p.stream(ids, True), lambda: p.split(ids), lambda: p.will_reason_after_prompt(tail)):
        with pytest.raises(RuntimeError, match="already running a call"):
            call()
    # The parser is usable afterwards and gives the usual answer.
    assert p.stream([5, THINK, 6, UNTHINK, 7], False).span.reasoning == (2, 3)
    assert p.begin([UNTHINK]).split([5, THINK, 6]).reasoning_ids == [6]


class _ReentrantBool:
    """A truth value whose ``__bool__`` runs the same parser on a large delta."""

    def __init__(self, parser, value):
        self.parser, self.value = parser, value

    def __bool__(self):
        self.parser.stream(list(range(200_000)), True)
        return self.value


@pytest.mark.parametrize("dtype", ["list", np.int32, np.int64])
def test_i11_01_truth_value_evaluated_before_the_scan(deepseek_tokenizer, backend, dtype):
    p = _r1(deepseek_tokenizer, backend)
    ids = [5, 6, THINK, 7, 8, UNTHINK, 9] * 300
    delta = ids if dtype == "list" else np.asarray(ids, dtype=dtype)
    expected = _r1(deepseek_tokenizer, backend).stream(delta, False)
    for _ in range(5):
        got = p.stream(delta, _ReentrantBool(p, False))
        assert got.span == expected.span and got.is_still_reasoning == expected.is_still_reasoning
    assert p.engine.scan_stream(delta, _ReentrantBool(p, False))[:4] == (2, 3, 5, 6)


def test_i11_01_other_thread_during_conversion_raises(deepseek_tokenizer, backend):
    p = _r1(deepseek_tokenizer, backend)
    inside, done = threading.Event(), threading.Event()
    seen: list[BaseException | object] = []

    class Slow:
        def __index__(self):
            inside.set()
            done.wait(10)  # the other thread runs while this call converts its input
            return 5

    def other():
        inside.wait(10)
        try:
            seen.append(p.stream(list(range(50_000)), True))
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertion
            seen.append(exc)
        finally:
            done.set()

    t = threading.Thread(target=other)
    t.start()
    p.stream([THINK, Slow(), UNTHINK], False)
    t.join()
    assert len(seen) == 1 and isinstance(seen[0], RuntimeError)


# -- 2. tables are immutable and fully bounded ------------------------------------------------
def test_i11_02_tables_are_immutable(deepseek_tokenizer, backend):
    p = _r1(deepseek_tokenizer, backend)
    t = p.tables
    for name in ("sigma", "trans", "depth", "fire_state", "fire_consume", "fire_kind", "root"):
        arr = getattr(t, name)
        with pytest.raises(ValueError):
            arr[0] = 10_000
        with pytest.raises(ValueError):
            arr.flags.writeable = True
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(t, name, arr.copy())
    assert isinstance(t.paths, tuple)
    assert p.engine.tables is t
    # Still works after every attempt.
    assert p.begin([UNTHINK]).split([5, THINK, 6, UNTHINK, 7]).reasoning_ids == [6]


@pytest.mark.parametrize(
    "field, value",
    [
        ("fire_kind", 100),  # used as a bit position
        ("fire_kind", -5),
        ("fire_state", 7),
        ("fire_consume", 2),
        ("depth", 300),  # the batch reports held counts in a byte
        ("root", 99),
    ],
)
def test_i11_02_check_tables_bounds_every_indexed_field(field, value):
    good = build_tables([Pattern((1, 2), START), Pattern((3,), END), Pattern((4,), TERM)])
    arr = getattr(good, field).copy()
    arr[-1] = value
    with pytest.raises(ValueError):
        dataclasses.replace(good, **{field: arr})


def test_i11_02_unsorted_sigma_rejected():
    good = build_tables([Pattern((1,), START), Pattern((9,), END)])
    with pytest.raises(ValueError, match="inconsistent"):
        dataclasses.replace(good, sigma=good.sigma[::-1].copy())


def test_i11_02_forced_writeable_array_refused_by_engines(backend):
    good = build_tables([Pattern((1,), START), Pattern((2,), END)])
    object.__setattr__(good, "trans", good.trans.copy())  # writeable again
    with pytest.raises(ValueError, match="Tables.trans"):
        rc.parser.FamilyParser(good, backend=backend)
    with pytest.raises(ValueError, match="Tables.trans"):
        backend_module(backend).BatchEngine(good, 2)


# -- 6. a returned TokenSplit never changes ---------------------------------------------------
@pytest.mark.parametrize("kind", ["list", "numpy", "array"])
def test_i11_06_split_result_independent_of_reused_buffer(deepseek_tokenizer, backend, kind):
    p = _r1(deepseek_tokenizer, backend).begin([UNTHINK])
    data = [5, THINK, 6, 7, UNTHINK, 8]
    buf = {"list": list, "numpy": lambda d: np.asarray(d, dtype=np.int32), "array": lambda d: array.array("i", d)}[kind](data)
    s = p.split(buf)
    for i in range(len(buf)):
        buf[i] = 1  # the caller reuses its buffer before reading the result
    assert (s.tokens, s.reasoning_ids, s.content_ids, s.delimiter_ids) == (data, [6, 7], [5, 8], [THINK, UNTHINK])


# -- 8. Gemma 4: skipping thinking ends it for the grammar -------------------------------------
def test_i11_08_gemma4_batch_signals_reasoning_ended_when_thinking_is_skipped(backend):
    tok = family_tokenizer("gemma4")
    think, chan = encode(tok, "<|think|>")[0], encode(tok, "<|channel>")[0]
    batch = rc.ReasoningBatch("gemma4", 4, tokenizer=tok, backend=backend)
    word = encode(tok, "hello")[0]
    assert batch.open(0, [think]) is True  # awaiting the start: grammar suspended
    assert batch.open(1, [think]) is True
    res = batch.step(np.array([0, 1], np.int32), np.array([word, chan], np.int32))
    assert res.reasoning_ended.tolist() == [True, False]  # slot 0 answered without thinking
    assert batch.thinking_mask()[:2].tolist() == [False, True]
    # The same through the ragged step and on a token inside the delimiter alphabet.
    batch.open(2, [think])
    res = batch.step_ragged(np.array([2], np.int32), np.array([0, 2], np.int32),
                            np.array([encode(tok, "<channel|>")[0], word], np.int32))
    assert res.reasoning_ended.tolist() == [True, False]
    assert not batch.thinking_mask()[2]


def test_i11_08_reasoning_ended_iff_thinking_mask_turns_false(backend):
    tok = family_tokenizer("gemma4")
    ids = [encode(tok, s)[0] for s in ("<|channel>", "<channel|>", "<|tool_call>", "<|think|>", "a", "b")]
    rng = np.random.default_rng(11)
    batch = rc.ReasoningBatch("gemma4", 8, tokenizer=tok, backend=backend)
    for slot in range(8):
        batch.open(slot, [ids[3]] if slot % 2 else [])
    slots = np.arange(8, dtype=np.int32)
    for _ in range(200):
        before = batch.thinking_mask().copy()
        res = batch.step(slots, rng.choice(ids, size=8).astype(np.int32))
        after = batch.thinking_mask()
        assert (res.reasoning_ended == (before & ~after)).all()


# -- 9. masked arrays ----------------------------------------------------------------------
def test_i11_09_masked_arrays_rejected(deepseek_tokenizer, backend):
    p = _r1(deepseek_tokenizer, backend)
    m = np.ma.masked_array([5, THINK, 6, UNTHINK], mask=[0, 1, 0, 0])
    with pytest.raises(TypeError, match="masked"):
        p.split(m)
    with pytest.raises(TypeError, match="masked"):
        p.stream(m, False)
    with pytest.raises(TypeError, match="masked"):
        p.will_reason_after_prompt(m)
    batch = rc.ReasoningBatch(p, 2)
    batch.open(0)
    with pytest.raises(TypeError, match="masked"):
        batch.step(np.ma.masked_array([0], mask=[0]), np.array([5], np.int32))
    with pytest.raises(TypeError, match="masked"):
        batch.step(np.array([0], np.int32), np.ma.masked_array([5], mask=[1]))


# -- 12. open() is O(1) --------------------------------------------------------------------
def test_i11_12_batch_open_does_not_build_the_whole_mask(deepseek_tokenizer, backend):
    batch = rc.ReasoningBatch("deepseek_r1", 1 << 16, tokenizer=deepseek_tokenizer, backend=backend)
    engine = batch._engine

    class NoMask:
        def __getattr__(self, name):
            if name == "thinking_mask":
                raise AssertionError("open() must not build the whole thinking mask")
            return getattr(engine, name)

    batch._engine = NoMask()
    assert batch.open(5, [THINK]) is True
    assert batch.open(6, [THINK, 9, UNTHINK]) is False
    assert batch.open(7) is True  # deepseek_r1 starts in reasoning


# -- 14. the scratch buffer does not pin a huge delta -------------------------------------------
@pytest.mark.compiled  # the twin keeps no scratch buffer (scratch_bytes is always 0)
def test_i11_14_scratch_buffer_shrinks_after_a_huge_delta(deepseek_tokenizer):
    backend = "cython"
    p = _r1(deepseek_tokenizer, backend)
    big = list(range(3_000_000))
    p.split(big)
    assert p.engine.scratch_bytes <= 8 << 20
    p.stream(big, True)
    assert p.engine.scratch_bytes <= 8 << 20
    tp = rc.text_parser("deepseek_r1", backend=backend)
    tp.feed("x" * 3_000_000)
    assert tp._engine.scratch_bytes <= 8 << 20
    # Small deltas keep their buffer (no realloc per token).
    p.split([1, 2, 3])
    assert p.engine.scratch_bytes <= 8 << 20


# -- 15. clear errors for out-of-range numbers ----------------------------------------------
def test_i11_15_huge_python_ints_in_batch_inputs(deepseek_tokenizer, backend):
    batch = rc.ReasoningBatch("deepseek_r1", 4, tokenizer=deepseek_tokenizer, backend=backend)
    batch.open(0, [THINK])
    # A huge id is just not a delimiter.
    res = batch.step([0], [2**63])
    assert res.is_reasoning.tolist() == [True]
    res = batch.step([0], [2**70])
    assert res.is_reasoning.tolist() == [True]
    for slot in (2**63, 2**40, -(2**63) - 1):
        with pytest.raises(ValueError, match=str(slot)):
            batch.step([slot], [5])
    with pytest.raises(ValueError, match=str(2**40)):
        batch.step(np.array([2**40], dtype=np.uint64), np.array([5], np.int32))
    with pytest.raises(ValueError, match=str(2**63)):
        batch.step_ragged([0], [0, 2**63], [5])
    with pytest.raises(ValueError, match="out of range"):
        batch.open(2**63, [THINK])


@pytest.mark.parametrize("capacity", [2**31, 2**63, 2**70])
def test_i11_15_capacity_too_large_is_value_error(deepseek_tokenizer, backend, capacity):
    with pytest.raises(ValueError, match="capacity"):
        rc.ReasoningBatch("deepseek_r1", capacity, tokenizer=deepseek_tokenizer, backend=backend)
    parser = _r1(deepseek_tokenizer, backend)
    batch = rc.ReasoningBatch(parser, 2)
    with pytest.raises(ValueError, match="capacity"):
        batch.new_result(capacity)
    with pytest.raises(TypeError):
        batch.new_result(2.5)


@pytest.mark.parametrize("make", [range, memoryview, lambda d: array.array("q", d), list, tuple])
def test_i11_15_extract_content_on_every_accepted_delta(deepseek_tokenizer, backend, make):
    p = _r1(deepseek_tokenizer, backend)
    ids = [5, THINK, 6, UNTHINK, 7]
    if make is range:
        delta = range(5, 10)
        expected = [5, 6, 7, 8, 9]
    elif make is memoryview:
        delta = memoryview(array.array("q", ids))
        expected = [5, 7]
    else:
        delta = make(ids)
        expected = [5, 7]
    parsed = p.stream(delta, False)
    assert list(parsed.span.extract_content(delta)) == expected
    assert list(parsed.span.extract_reasoning(delta)) == ([6] if make is not range else [])


# -- 16, 17, 24: backend selection, imports and the environment flags -----------------------
def _run(code: str, **env) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("REASONING_CORE_")}
    full.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, cwd=ROOT)


@pytest.mark.parametrize("flag", [None, "1"])
def test_i11_17_pure_twin_imports_first(flag):
    env = {} if flag is None else {"REASONING_CORE_NO_EXTENSIONS": flag}
    r = _run("import reasoning_core_py as p; import reasoning_core as rc; "
             "e = p.Engine(rc.get_parser('passthrough').tables); print(type(e).__module__, rc.BACKEND)", **env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == "reasoning_core_py._engine"


@pytest.mark.parametrize("value, disabled", [("", False), ("0", False), ("1", True), ("yes", True), (" 0 ", False)])
def test_i11_24_one_reading_of_the_no_extensions_flag(value, disabled):
    from reasoning_core._flags import env_flag

    assert env_flag("REASONING_CORE_NO_EXTENSIONS", {"REASONING_CORE_NO_EXTENSIONS": value}) is disabled
    # setup.py decides with the same function.
    setup = (ROOT / "setup.py").read_text()
    assert "env_flag(\"REASONING_CORE_NO_EXTENSIONS\")" in setup
    r = _run("import reasoning_core as rc; print(rc.BACKEND)", REASONING_CORE_NO_EXTENSIONS=value)
    assert r.returncode == 0, r.stderr
    from tests.conftest import COMPILED_BUILT

    assert r.stdout.strip() == ("python" if disabled or not COMPILED_BUILT else "cython")


def test_i11_16_missing_extension_fails_when_required():
    r = _run("import reasoning_core", REASONING_CORE_REQUIRE_EXTENSIONS="1", REASONING_CORE_NO_EXTENSIONS="1")
    assert r.returncode != 0
    assert "REASONING_CORE_REQUIRE_EXTENSIONS" in r.stderr
    # The test run refuses to start, rather than skipping the compiled tests.
    full = {k: v for k, v in os.environ.items() if not k.startswith("REASONING_CORE_")}
    full.update(REASONING_CORE_REQUIRE_EXTENSIONS="1", REASONING_CORE_NO_EXTENSIONS="1")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "tests/test_hardening_engine.py::test_i11_17_pure_twin_imports_first"],
                       capture_output=True, text=True, env=full, cwd=ROOT)
    assert r.returncode != 0
    assert "compiled engine" in r.stdout + r.stderr
