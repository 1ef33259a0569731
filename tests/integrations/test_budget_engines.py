"""Reasoning budgets driven through real generation and real grammar engines.

- Hugging Face ``generate()`` with a tiny randomly initialised Llama built
  here (no download), greedy, our ``ReasoningBudgetProcessor``: for every
  family of the table, reasoning that the prompt opened stops within the
  budget plus the closing sequence, and the parser splits the output where
  the budget closed it.  On CUDA too when a GPU is present.
- xgrammar's ``GrammarMatcher`` inside ``GrammarRegion``: free text while the
  model reasons, the JSON-schema grammar only after reasoning ends, and
  rollback across the boundary.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import reasoning_core as rc  # noqa: E402
from reasoning_core._tables import END, START, ids_of_kind  # noqa: E402
from reasoning_core.budget import GrammarRegion, ReasoningBudget  # noqa: E402
from reasoning_core.integrations.transformers import ReasoningBudgetProcessor  # noqa: E402
from vocab import FAMILY_SPECIALS, build_tokenizer, encode, family_tokenizer  # noqa: E402

FAMILIES = [name for name in rc.FAMILIES if name != "passthrough"]
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def _tokenizer(name):
    return family_tokenizer(name) if name in FAMILY_SPECIALS else build_tokenizer(())


def _model(vocab_size, device, seed=0):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=256)
    model = LlamaForCausalLM(cfg).eval().to(device)
    # No end-of-sequence id: generation runs its full length whatever the random model picks.
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = vocab_size - 1
    return model


class _NoMarkers:
    """Keeps the random model off the family's special tokens, so that only the budget closes reasoning."""

    def __init__(self, banned):
        self.banned = torch.tensor(sorted(banned), dtype=torch.long)

    def __call__(self, input_ids, scores):
        scores[:, self.banned.to(scores.device)] = float("-inf")
        return scores


def _generate(model, prompts, proc, device, n=28, banned=()):
    from transformers import LogitsProcessorList

    ids = torch.tensor(prompts, device=device)
    procs = ([_NoMarkers(banned)] if banned else []) + ([proc] if proc else [])
    with torch.no_grad():
        out = model.generate(ids, max_new_tokens=n, do_sample=False, logits_processor=LogitsProcessorList(procs))
    return [row[len(prompts[0]):] for row in out.tolist()]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", FAMILIES)
def test_generate_stops_reasoning_at_the_budget(name, device):
    tok = _tokenizer(name)
    parser = rc.get_parser(name, tok)
    start = ids_of_kind(parser.tables, START)
    prompt = list(encode(tok, "The user asks. ")) + list(start[0] if start else ())
    end = ids_of_kind(parser.tables, END)[0]
    model = _model(tok.get_vocab_size(), device)
    budgets = [0, 3, 7]
    proc = ReasoningBudgetProcessor(name, budget=7, budgets=budgets, tokenizer=tok, closing_text="So.")
    closing = len(encode(tok, "So."))
    banned = set(tok.get_added_tokens_decoder())
    outputs = _generate(model, [prompt] * len(budgets), proc, device, n=20 + len(end) + closing, banned=banned)
    for budget, gen in zip(budgets, outputs):
        assert rc.get_parser(name, tok).begin(prompt).is_reasoning  # the prompt opened a block
        # Find where reasoning closed: the first prefix after which the parser is out of it.
        closed_at = None
        for i in range(1, len(gen) + 1):
            p = rc.get_parser(name, tok).begin(prompt)
            p.split(gen[:i])
            if not p.is_reasoning:
                closed_at = i
                break
        assert closed_at is not None, (name, budget, gen)
        p = rc.get_parser(name, tok).begin(prompt)
        reasoning = p.split(gen[:closed_at]).reasoning_ids
        # The block holds the budget's tokens and the closing text, then the end delimiter closed it.
        assert len(reasoning) == budget + closing, (name, budget, gen)
        assert tuple(gen[closed_at - len(end):closed_at]) == tuple(end)


@pytest.mark.parametrize("device", DEVICES)
def test_generate_without_reasoning_is_untouched(device):
    tok = _tokenizer("qwen3")
    model = _model(tok.get_vocab_size(), device, seed=1)
    prompt = encode(tok, "The user asks for the sum of two numbers.")
    proc = ReasoningBudgetProcessor("qwen3", budget=0, tokenizer=tok)
    assert _generate(model, [prompt], proc, device) == _generate(model, [prompt], None, device)


def test_processor_rejects_a_budget_list_of_the_wrong_size():
    tok = _tokenizer("qwen3")
    model = _model(tok.get_vocab_size(), "cpu")
    proc = ReasoningBudgetProcessor("qwen3", budget=2, budgets=[1, 2, 3], tokenizer=tok)
    with pytest.raises(ValueError, match="budgets"):
        _generate(model, [encode(tok, "<think>")], proc, "cpu")


# -- xgrammar: the grammar region after reasoning ------------------------------------

xgr = pytest.importorskip("xgrammar")


def _matcher(tok):
    from transformers import PreTrainedTokenizerFast

    hf = PreTrainedTokenizerFast(tokenizer_object=tok)
    info = xgr.TokenizerInfo.from_huggingface(hf, vocab_size=tok.get_vocab_size())
    schema = '{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}'
    compiled = xgr.GrammarCompiler(info).compile_json_schema(schema)
    return xgr.GrammarMatcher(compiled, max_rollback_tokens=64), info


def _allowed(bitmask, tid):
    word = int(bitmask[0, tid // 32]) & 0xFFFFFFFF
    return bool(word >> (tid % 32) & 1)


def test_grammar_region_frees_reasoning_and_enforces_the_schema_after():
    tok = _tokenizer("qwen3")
    matcher, info = _matcher(tok)
    budget = ReasoningBudget("qwen3", budget=4, tokenizer=tok)
    region = GrammarRegion(matcher, budget).begin(encode(tok, "<think>"))
    bitmask = xgr.allocate_token_bitmask(1, info.vocab_size)
    words = encode(tok, " first add the tens, then the ones")
    assert len(words) >= 5
    brace = encode(tok, "{")[0]
    assert not region.in_grammar
    # While reasoning, anything goes, JSON or not.
    assert region.fill_next_token_bitmask(bitmask) is False
    assert _allowed(bitmask, words[0]) and _allowed(bitmask, brace)
    for tid in words[:4]:
        assert region.accept_token(tid)
    # The budget is spent: only </think> is allowed, and nothing else is accepted.
    end = tok.token_to_id("</think>")
    assert region.fill_next_token_bitmask(bitmask) is True
    assert _allowed(bitmask, end) and not _allowed(bitmask, brace)
    assert not region.accept_token(brace)
    assert region.accept_token(end)
    assert region.in_grammar
    # Now the schema: a word is refused, JSON is accepted.
    region.fill_next_token_bitmask(bitmask)
    assert not _allowed(bitmask, words[0]) and _allowed(bitmask, brace)
    assert not region.accept_token(words[0])
    body = encode(tok, '{"a": 12}')
    for tid in body:
        assert region.accept_token(tid), tid
    # Roll back across the boundary: reasoning again, the matcher back at its start.
    region.rollback(len(body) + 1)
    assert not region.in_grammar and budget.forced == end
    assert region.accept_token(end)
    for tid in body:
        assert region.accept_token(tid)
    assert matcher.is_completed()  # the object is whole: the schema is satisfied


def test_grammar_region_implicit_end_is_the_grammars_first_token():
    # qwen3's <tool_call> closes reasoning and stays content: a grammar that
    # starts with it must see it.
    tok = _tokenizer("qwen3")
    from transformers import PreTrainedTokenizerFast

    hf = PreTrainedTokenizerFast(tokenizer_object=tok)
    info = xgr.TokenizerInfo.from_huggingface(hf, vocab_size=tok.get_vocab_size())
    compiled = xgr.GrammarCompiler(info).compile_grammar('root ::= "<tool_call>" [a-z ]* "</tool_call>"')
    matcher = xgr.GrammarMatcher(compiled)
    region = GrammarRegion(matcher, ReasoningBudget("qwen3", budget=100, tokenizer=tok)).begin(encode(tok, "<think>"))
    for tid in encode(tok, "Let me think"):
        assert region.accept_token(tid)
    assert region.accept_token(tok.token_to_id("<tool_call>"))
    assert region.in_grammar
    bitmask = xgr.allocate_token_bitmask(1, info.vocab_size)
    region.fill_next_token_bitmask(bitmask)
    assert not _allowed(bitmask, tok.token_to_id("<tool_call>"))
