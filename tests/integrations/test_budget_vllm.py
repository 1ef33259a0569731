"""The vLLM logits processor for reasoning budgets, through vLLM's own interface.

The processor is built as vLLM builds it (``(vllm_config, device,
is_pin_memory)``, the tokenizer loaded by vLLM's tokenizer registry from a
local folder), fed ``BatchUpdate``s with live output lists as vLLM's
persistent batch does, and compared with vLLM's own thinking-budget state
holder on the families its single start/end pair covers.
"""
from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("vllm.v1.sample.logits_processor.interface")

from vllm import SamplingParams  # noqa: E402
from vllm.v1.sample.logits_processor.interface import BatchUpdate, MoveDirectionality  # noqa: E402

import reasoning_core as rc  # noqa: E402
from reasoning_core.integrations.vllm_budget import ReasoningBudgetLogitsProcessor  # noqa: E402
from vocab import encode, family_tokenizer  # noqa: E402

VOCAB_FAMILY = "qwen3"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    from transformers import PreTrainedTokenizerFast

    d = tmp_path_factory.mktemp("model")
    from transformers import LlamaConfig

    tok = family_tokenizer(VOCAB_FAMILY)
    PreTrainedTokenizerFast(tokenizer_object=tok).save_pretrained(str(d))
    LlamaConfig(vocab_size=tok.get_vocab_size()).save_pretrained(str(d))
    return str(d)


def _config(model_dir, parser_name, *, reasoning_config=None, max_num_seqs=8):
    model_config = SimpleNamespace(skip_tokenizer_init=False, hf_config=None, tokenizer=model_dir, model=model_dir,
                                   runner_type="generate", tokenizer_mode="auto", tokenizer_revision=None,
                                   trust_remote_code=False)
    return SimpleNamespace(model_config=model_config, reasoning_config=reasoning_config,
                           structured_outputs_config=SimpleNamespace(reasoning_parser=parser_name),
                           scheduler_config=SimpleNamespace(max_num_seqs=max_num_seqs))


def _drive(step_fn, rows, vocab, steps, seed, before):
    """Greedy decoding over random logits; ``step_fn(logits)`` masks them. Returns each row's output."""
    rng = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        before()
        logits = torch.randn(len(rows), vocab, generator=rng)
        logits = step_fn(logits)
        for out, tid in zip(rows, logits.argmax(dim=1).tolist()):
            out.append(tid)
    return rows


def _reasoning_before_close(name, tok, prompt, out):
    p = rc.get_parser(name, tok).begin(prompt)
    for i in range(1, len(out) + 1):
        q = rc.get_parser(name, tok).begin(prompt)
        q.split(out[:i])
        if not q.is_reasoning:
            return len(q.begin(prompt).split(out[:i]).reasoning_ids), out[i - 1]
    return None, None


@pytest.mark.parametrize("parser_name", ["qwen3", "rc_qwen3"])
def test_budgets_per_request_and_rows_that_move(model_dir, parser_name):
    tok = family_tokenizer(VOCAB_FAMILY)
    vocab = tok.get_vocab_size()
    proc = ReasoningBudgetLogitsProcessor(_config(model_dir, parser_name), torch.device("cpu"), False)
    prompt = encode(tok, "<|im_start|>assistant\n<think>")
    outs = [[], [], []]
    budgets = [2, None, 6]
    added = []
    for i, b in enumerate(budgets):
        extra = None if b is None else {"reasoning_budget": b}
        added.append((i, SamplingParams(extra_args=extra), prompt, outs[i]))
    proc.update_state(BatchUpdate(batch_size=3, removed=[], added=added, moved=[]))
    # Swap rows 0 and 2 half-way: the state follows the request, not the row.
    rows = list(outs)

    def step(logits):
        return proc.apply(logits)

    _drive(step, rows, vocab, 4, seed=1, before=lambda: proc.update_state(None))
    proc.update_state(BatchUpdate(batch_size=3, removed=[], added=[], moved=[(0, 2, MoveDirectionality.SWAP)]))
    rows[0], rows[2] = rows[2], rows[0]
    _drive(step, rows, vocab, 14, seed=2, before=lambda: proc.update_state(None))
    end = tok.token_to_id("</think>")
    for out, budget in zip(outs, budgets):
        count, last = _reasoning_before_close("qwen3", tok, prompt, out)
        if budget is None:
            continue  # not budgeted: whatever the random logits chose
        assert (count, last) == (budget, end), (budget, out)


def test_unbudgeted_server_leaves_logits_alone(model_dir):
    proc = ReasoningBudgetLogitsProcessor(_config(model_dir, None), torch.device("cpu"), False)
    logits = torch.randn(2, 10)
    proc.update_state(None)
    assert torch.equal(proc.apply(logits.clone()), logits)


def test_validate_params_names_the_bad_budget():
    with pytest.raises((TypeError, ValueError), match="reasoning_budget"):
        ReasoningBudgetLogitsProcessor.validate_params(SamplingParams(extra_args={"reasoning_budget": -3}))


def _vllm_holder(tok, budget):
    from vllm.v1.sample.thinking_budget_state import ThinkingBudgetStateHolder

    cfg = SimpleNamespace(reasoning_start_token_ids=[tok.token_to_id("<think>")],
                          reasoning_end_token_ids=[tok.token_to_id("</think>")])
    return ThinkingBudgetStateHolder(cfg, 4, 0, torch.device("cpu"), False)


@pytest.mark.parametrize("budget", [0, 1, 5, 12])
def test_same_tokens_as_vllms_own_thinking_budget(model_dir, budget):
    tok = family_tokenizer(VOCAB_FAMILY)
    vocab = tok.get_vocab_size()
    prompt = encode(tok, "<|im_start|>assistant\n<think>")
    results = []
    for ours in (True, False):
        out: list[int] = []
        params = SamplingParams(thinking_token_budget=budget)
        update = BatchUpdate(batch_size=1, removed=[], added=[(0, params, prompt, out)], moved=[])
        if ours:
            proc = ReasoningBudgetLogitsProcessor(_config(model_dir, "qwen3"), torch.device("cpu"), False)
            proc.update_state(update)

            def step(logits, proc=proc):
                logits = proc.apply(logits)
                return logits
        else:
            holder = _vllm_holder(tok, budget)
            holder.sync_batch(update)

            def step(logits, holder=holder, out=out):
                holder.update_state([out], None)
                return holder.apply_to_logits(logits, False, None)
        rows = [out]
        rng = torch.Generator().manual_seed(budget)
        for _ in range(budget + 6):
            if ours:
                proc.update_state(None)
            logits = step(torch.randn(1, vocab, generator=rng))
            out.append(int(logits.argmax(dim=1)))
        results.append(rows[0])
    assert results[0] == results[1]
