"""``extends(ids, prev)``: the prefix check behind vLLM's per-step usage count,
compiled and pure, against the obvious definition."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

import reasoning_core_py._engine as pure

try:
    from reasoning_core import _engine as compiled
except ImportError:  # the pure-only run
    compiled = None

BACKENDS = [pure] + ([compiled] if compiled is not None else [])
ids = st.lists(st.one_of(st.integers(-5, 300), st.integers(2**62, 2**62 + 3), st.floats(0, 3)), max_size=12)


@pytest.mark.parametrize("mod", BACKENDS, ids=lambda m: m.__name__)
@given(a=ids, b=ids, cut=st.integers(0, 12))
def test_extends_is_a_prefix_check(mod, a, b, cut):
    head = tuple(a[:cut])
    for x, y in ((tuple(a), tuple(b)), (tuple(a), head), (tuple(a) + tuple(b), tuple(a)), (head, tuple(a))):
        assert mod.extends(x, y) is (len(x) >= len(y) and list(x[:len(y)]) == list(y))


def test_extends_compares_equal_items_not_only_the_same_objects():
    big = 2**70
    for mod in BACKENDS:
        assert mod.extends((int(str(big)), 1), (int(str(big)),))  # equal ints, different objects
        assert not mod.extends((big, 1), (big + 1,))


@pytest.mark.parametrize("mod", BACKENDS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("bad", [[1, 2], "ab", None, range(2)])
def test_extends_takes_tuples_only(mod, bad):
    with pytest.raises(TypeError):
        mod.extends(bad, (1,))
    with pytest.raises(TypeError):
        mod.extends((1,), bad)
