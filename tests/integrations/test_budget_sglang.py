"""The SGLang custom logit processor for reasoning budgets, through SGLang's own
serialisation (``to_str`` / ``from_str``) and call convention (a ``Req`` per row
in ``custom_param_list``)."""
from __future__ import annotations

from array import array
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("dill")
from sglang_max_helpers import import_sglang_parsers  # noqa: E402

import_sglang_parsers()  # enters SGLang's package without its runtime where that is needed (or skips)

from sglang.srt.sampling.custom_logit_processor import CustomLogitProcessor  # noqa: E402

import reasoning_core as rc  # noqa: E402
from reasoning_core.integrations.sglang_budget import ReasoningBudgetLogitProcessor  # noqa: E402
from vocab import FAMILY_SPECIALS, build_tokenizer, encode, family_tokenizer  # noqa: E402


def _req(tok, prompt):
    return SimpleNamespace(origin_input_ids=list(prompt), output_ids=array("q"), tokenizer=tok)


@pytest.mark.parametrize("name", ["qwen3", "deepseek-r1", "gpt-oss", "granite"])
def test_budget_through_sglangs_processor_calls(name):
    names = rc.families.ENGINE_PARSER_NAMES["sglang"]
    family = names.get(name, name)  # an SGLang name, or one of ours
    tok = family_tokenizer(family) if family in FAMILY_SPECIALS else build_tokenizer(())
    parser = rc.get_parser(family, tok)
    start = rc._tables.ids_of_kind(parser.tables, rc._tables.START)
    prompt = encode(tok, "The user asks. ") + list(start[0])
    reqs = [_req(tok, prompt), _req(tok, prompt)]
    budgets = [3, 6]
    serialized = ReasoningBudgetLogitProcessor.to_str()
    vocab = tok.get_vocab_size()
    banned = sorted(tok.get_added_tokens_decoder())
    rng = torch.Generator().manual_seed(7)
    for _ in range(20):
        proc = CustomLogitProcessor.from_str(serialized)  # SGLang makes one per batch
        logits = torch.randn(2, vocab, generator=rng)
        logits[:, banned] = -1e9  # the random 'model' never writes a marker itself
        params = [{"reasoning_budget": b, "reasoning_parser": name, "__req__": r} for b, r in zip(budgets, reqs)]
        logits = proc(logits, params)
        for r, tid in zip(reqs, logits.argmax(dim=1).tolist()):
            r.output_ids.append(tid)
    end = rc._tables.ids_of_kind(parser.tables, rc._tables.END)[0]
    for r, budget in zip(reqs, budgets):
        out = list(r.output_ids)
        for i in range(1, len(out) + 1):
            p = rc.get_parser(family, tok).begin(prompt)
            split = p.split(out[:i])
            if not p.is_reasoning:
                break
        else:
            pytest.fail(f"reasoning never closed: {out}")
        assert len(rc.get_parser(family, tok).begin(prompt).split(out[:i]).reasoning_ids) == budget
        assert tuple(out[i - len(end):i]) == tuple(end)


def test_rows_without_a_budget_are_untouched():
    tok = family_tokenizer("qwen3")
    logits = torch.randn(2, tok.get_vocab_size())
    proc = ReasoningBudgetLogitProcessor()
    params = [None, {"temperature_hint": 1, "__req__": _req(tok, [])}]
    assert torch.equal(proc(logits.clone(), params), logits)


def test_missing_parser_name_is_a_clear_error():
    tok = family_tokenizer("qwen3")
    with pytest.raises(ValueError, match="reasoning_parser"):
        ReasoningBudgetLogitProcessor()(torch.zeros(1, 8), [{"reasoning_budget": 1, "__req__": _req(tok, [])}])
