"""Reasoning budgets per engine step: ours vs vLLM's thinking-budget state holder.

Run in a venv with vLLM and CPU torch (the engines' venv; see the docs page
"Running against the engines"), from the repository root:

    HF_HUB_OFFLINE=1 PYTHONPATH=. python benchmarks/bench_budget.py [--quick]

For 64 and 1,024 requests whose reasoning is already L tokens long (L from 1k
to 16k), with the real DeepSeek vocabulary and a budget no request reaches
(so every request is tracked, none forced), one engine step is:

- ours: ``BudgetBatch.step(slots, token_ids)`` (one call for the batch) and
  the logits mask for the rows that must take a forced token;
- vLLM: ``ThinkingBudgetStateHolder.update_state`` + ``apply_to_logits``
  (CPU torch), the work vLLM 0.33 does per step for ``thinking_token_budget``;
- no budget: the cost of appending the step's token to each request's
  output list (what the engine does anyway).

It prints milliseconds per step (median, min-max) and our per-request cost,
and the forced-row mask cost of the vLLM processor on a (rows x 129,280)
CPU logits tensor.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import numpy as np  # noqa: E402


def _timed(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times), max(times)


def _fmt(t):
    med, lo, hi = t
    return f"{med * 1e3:9.3f} ms ({lo * 1e3:.3f}-{hi * 1e3:.3f})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer sizes and repeats")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--device", default=None,
                    help="only the logits mask and the transformers processor step, on this torch device "
                         "(e.g. cuda); needs no vLLM")
    args = ap.parse_args(argv)
    if args.device:
        return device_main(args.device, args.quick, args.repeat)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch
        torch.set_num_threads(1)  # a shared 2-core machine: the intra-op pool only adds waits
        from vllm.v1.sample.logits_processor.interface import BatchUpdate
        from vllm.v1.sample.thinking_budget_state import ThinkingBudgetStateHolder
        from vllm import SamplingParams

    from reasoning_core.budget import BudgetBatch
    from vocab import deepseek_tokenizer

    tok = deepseek_tokenizer()
    start, end = 128821, 128822
    word = tok.encode("the", add_special_tokens=False).ids[0]
    batches = (64,) if args.quick else (64, 1024)
    lengths = (1024, 4096) if args.quick else (1024, 4096, 8192, 16384)
    repeat = 3 if args.quick else args.repeat
    print(f"{'requests':>8} {'reasoning':>9} | {'ours: BudgetBatch.step':>30} {'per request':>12} | "
          f"{'vLLM ThinkingBudgetStateHolder':>34} | {'no budget':>26} | vLLM/ours")
    rows_out = []
    for n in batches:
        for length in lengths:
            # Ours: n requests that opened <think> in the prompt and have reasoned `length` tokens.
            ours = BudgetBatch("deepseek_r1", n, budget=10**9, tokenizer=tok)
            slots = np.arange(n, dtype=np.int32)
            for s in range(n):
                ours.open(s, [start])
            ids = np.full(n, word, dtype=np.int32)
            for _ in range(length):
                ours.step(slots, ids)
            t_ours = _timed(lambda: ours.step(slots, ids), repeat * 20)

            # vLLM: the same requests with outputs of `length` tokens.
            cfg = SimpleNamespace(reasoning_start_token_ids=[start], reasoning_end_token_ids=[end])
            holder = ThinkingBudgetStateHolder(cfg, n, 0, torch.device("cpu"), False)
            outs = [[word] * length for _ in range(n)]
            added = [(i, SamplingParams(thinking_token_budget=10**9), [start], outs[i]) for i in range(n)]
            holder.sync_batch(BatchUpdate(batch_size=n, removed=[], added=added, moved=[]))
            holder.update_state(outs, None)
            logits = torch.zeros(n, 8)

            def vllm_step():
                for o in outs:
                    o.append(word)
                holder.update_state(outs, None)
                holder.apply_to_logits(logits, False, None)

            t_vllm = _timed(vllm_step, repeat)

            def bare_step():
                for o in outs:
                    o.append(word)

            t_bare = _timed(bare_step, repeat)
            ratio = t_vllm[0] / t_ours[0]
            print(f"{n:>8} {length:>9} | {_fmt(t_ours):>30} {t_ours[0] / n * 1e9:>9.1f} ns | {_fmt(t_vllm):>34} | "
                  f"{_fmt(t_bare):>26} | {ratio:8.0f}x")
            rows_out.append((n, length, t_ours, t_vllm, t_bare))

    # The mask: rows that must take a forced token, on CPU logits over the real vocabulary.
    from reasoning_core.integrations._forcing import force_rows

    vocab = 129280
    for n in batches:
        logits = torch.zeros(n, vocab)
        for forced_rows in (0, 1, n // 8):
            rows = np.arange(forced_rows)
            toks = np.full(forced_rows, end)
            t = _timed(lambda: force_rows(logits, rows, toks), repeat * 5)
            print(f"mask: {n} rows x {vocab} ids, {forced_rows} forced: {_fmt(t)}")
    return rows_out


def _timed_on(device, fn, repeat):
    """Like _timed, waiting for the device's queued work after each call."""
    import torch

    sync = torch.cuda.synchronize if str(device).startswith("cuda") else (lambda: None)
    fn()
    sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times), max(times)


def device_main(device, quick, repeat):
    """The per-step work a budget adds on ``device``: the mask over real-size
    logits, and ``ReasoningBudgetProcessor`` for one generate() step (the
    step's last ids copied to the host, the batch engine's step, the mask)."""
    import torch

    from reasoning_core.integrations._forcing import force_rows
    from reasoning_core.integrations.transformers import ReasoningBudgetProcessor
    from vocab import deepseek_tokenizer

    tok = deepseek_tokenizer()
    start, end = 128821, 128822
    word = tok.encode("the", add_special_tokens=False).ids[0]
    vocab = 129280
    name = torch.cuda.get_device_name(0) if str(device).startswith("cuda") else "cpu"
    print(f"device: {device} ({name}), torch {torch.__version__}")
    rows_out = []
    for n in ((64,) if quick else (64, 1024)):
        logits = torch.zeros(n, vocab, device=device)
        for forced_rows in (0, 1, n // 8, n):
            rows = np.arange(forced_rows)
            toks = np.full(forced_rows, end)
            t = _timed_on(device, lambda: force_rows(logits, rows, toks), repeat * 5)
            print(f"mask: {n} rows x {vocab} ids, {forced_rows} forced: {_fmt(t)}")
            rows_out.append(("mask", n, forced_rows, t))
        # One generate() step after a reasoning prompt, no row forced (budget not reached),
        # then the step where every row reaches its budget and is forced.
        for label, budget in (("no row forced", 10**9), ("every row forced", 1)):
            proc = ReasoningBudgetProcessor("deepseek_r1", budget=budget, tokenizer=tok)
            prompt = torch.tensor([[word, start]] * n, device=device)
            proc(prompt, logits)
            ids = torch.cat([prompt, torch.full((n, 1), word, device=device)], dim=1)

            def step():
                proc._length = ids.shape[1] - 1  # the same step again, as the next one
                proc(ids, logits)

            t = _timed_on(device, step, repeat * 5)
            forced = int((proc._batch.forced(proc._slots) >= 0).sum())
            print(f"processor step: {n} rows, {label} ({forced} forced after the last step): {_fmt(t)}")
            rows_out.append(("processor", n, label, t))
    return rows_out


if __name__ == "__main__":
    main()
