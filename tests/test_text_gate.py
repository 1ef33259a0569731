"""``text_gate``: the per-delta pass-through test of the vllm-mlx tool parsers,
compiled and pure, against its definition and against each other."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

import reasoning_core_py._engine as pure

try:
    from reasoning_core import _engine as compiled
except ImportError:  # the pure-only run
    compiled = None

BACKENDS = [pure] + ([compiled] if compiled is not None else [])
BY_NAME = {m.__name__: m for m in BACKENDS}


class _Reader:
    """A value that ends before its first "!" (status 1 there), else goes on (0)."""

    def __init__(self):
        self.read = []

    def feed(self, buf, pos, eof):
        self.read.append(buf[pos:])
        i = buf.find("!", pos)
        return (len(buf), 0) if i < 0 else (i, 1)

    def __call__(self, buf, pos, eof):
        """State 9's feed: a value that ends after its first "!" (status 1), fails
        at its first "?" (status 2), else goes on (0)."""
        self.read.append(("9", buf[pos:]))
        i, j = buf.find("!", pos), buf.find("?", pos)
        if j >= 0 and (i < 0 or j < i):
            return j, 2
        return (len(buf), 0) if i < 0 else (i + 1, 1)


def _run(mod, triggers, keep_triggers, script, piece_triggers="<", closers=None, openers=None, keep="<",
         index=0, quiet=None, stepper=False, budget=0, calls=False, holds=None):
    """Feed ``script`` (delta, same_object, idle_after_general) through a gate;
    return what each call returned, what reached ``general`` and ``keeps``, and
    the state at the end.  ``closers``: a tuple of markers as ``keeps``."""
    gate_state = mod.TextGate("")
    gate_state.keep = keep
    gate_state.quiet = quiet
    gate_state.budget = budget
    gate_state.reader = reader = _Reader()
    gate_state.index = index
    log = []

    def keeps_fn(cur, delta):
        log.append(("keeps", cur, delta))
        return "!" not in delta

    keeps = keeps_fn if closers is None else closers

    idles = iter([])

    def general(prev, cur, delta, a, b, c, request):
        log.append(("general", prev is gate_state.cur, delta, request))
        gate_state.cur = cur
        gate_state.idle = next(idles)
        return {"general": delta}

    def piece(delta):
        log.append(("piece", delta))
        return {"piece": delta}

    def after_feed(delta, end, status):
        log.append(("fed", delta, end, status))
        return {"fed": delta}

    def step(text, cur, request):
        log.append(("stepper", text, cur is gate_state.cur, list(gate_state.pend), request))
        gate_state.idle = next(idles)
        return {"stepped": text}

    def open_call(pend):
        log.append(("open", list(pend)))
        gate_state.reader = reader
        return {"open": "".join(pend)}

    def replay():
        log.append(("replay", list(gate_state.pend)))
        gate_state.pend = []
        gate_state.idle = 0

    f = mod.text_gate(gate_state, triggers, keep_triggers, keeps, general, piece, piece_triggers, openers, after_feed,
                      step if stepper else None,
                      ("<o>", "ab", 3, "<a>", open_call, replay) if calls else None, holds)
    out = []
    prev = gate_state.cur
    for delta, same, idle in script:
        cur = prev + delta if isinstance(delta, str) else prev
        idles = iter([idle])
        out.append(f(prev if same else (prev + ".")[:-1], cur, delta, request="r"))  # a copy: another object
        prev = cur if gate_state.cur is cur or same else gate_state.cur
    return out, log, reader.read, (gate_state.cur, gate_state.idle, list(gate_state.pend), gate_state.keep,
                                   gate_state.quiet, gate_state.budget, gate_state.done)


# state 6's quiet markers: a small chain of stretches (a marker read without a word
# leads to the next stretch's keep and quiet markers), cycles included
_Q_B = {"<b>": ("<", None)}
_Q_A = {"<a>": ("<[", _Q_B), "[x": ("", None)}
_Q_B["<a>"] = ("<", _Q_A)
quiets = st.sampled_from([None, {}, _Q_A, _Q_B])
deltas = st.one_of(st.text(alphabet="ab<[!>?o", max_size=6), st.just(""),
                   st.sampled_from(["<a>", "<b>", "[x", "<o>", "<", "[", "ab"]))
scripts = st.lists(st.tuples(deltas, st.booleans(), st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])),
                   max_size=25)
holds_t = st.sampled_from([None, ("<o>",), ("<o>", "[x", "<a>"), ("[x", "[", "<o")])
triggers = st.sampled_from(["<", "<[", "<[!", "[", ""])
keeps_t = st.sampled_from([">", "<>", "", "<>!"])
closer_sets = st.one_of(st.none(), st.lists(st.text(alphabet="ab<[!>", min_size=1, max_size=4), max_size=3).map(tuple))


@pytest.mark.skipif(compiled is None, reason="the pure-only run")
@settings(max_examples=300, deadline=None)
@given(t=triggers, k=keeps_t, script=scripts, pt=st.sampled_from(["<", "", "<!"]), cl=closer_sets,
       op=st.sampled_from([None, (), ("<a",), ("<a", "[b>", "<"), {"<a": ("<", None), "<": ("[", _Q_A)}]), kp=st.sampled_from(["", "<", "<!b"]),
       ix=st.integers(0, 3), q=quiets, sp=st.booleans(), b=st.integers(0, 9), ca=st.booleans(), h=holds_t)
def test_compiled_and_pure_gates_agree(t, k, script, pt, cl, op, kp, ix, q, sp, b, ca, h):
    assert _run(compiled, t, k, script, pt, cl, op, kp, ix, q, sp, b, ca, h) == \
        _run(pure, t, k, script, pt, cl, op, kp, ix, q, sp, b, ca, h)


@pytest.mark.parametrize("mod", BACKENDS, ids=lambda m: m.__name__)
@settings(max_examples=200, deadline=None)
@given(script=st.lists(st.one_of(st.text(alphabet="ab<[>", max_size=5), st.sampled_from(["<a>", "<b>", "[x"])),
                       max_size=12),
       q=quiets, keep=st.sampled_from(["<", "<[", ""]))
def test_state_6_keeps_plain_deltas_and_quiet_markers(mod, script, q, keep):
    """The definition of state 6: a delta with none of ``keep``'s characters is
    kept; one that is a key of ``quiet`` is kept and moves ``keep`` and
    ``quiet`` to what it maps to; anything else goes to the general path (which
    here leaves the state as it is)."""
    s = mod.TextGate("")
    s.idle, s.keep, s.quiet = 6, keep, q
    f = mod.text_gate(s, "<", "", None, lambda *a: "G")
    prev, kept, k, qq = "", [], keep, q
    for d in script:
        cur = prev + d
        got = f(prev, cur, d)
        if not any(c in d for c in k):
            assert got is None
            kept.append(d)
        elif qq is not None and d in qq:
            assert got is None
            kept.append(d)
            k, qq = qq[d]
        else:
            assert got == "G"
            break
        assert (s.pend, s.keep, s.quiet, s.cur) == (kept, k, qq, cur)
        prev = cur


def _ends_in(text: str, dlen: int, closers: tuple) -> bool:
    """The definition: some marker of ``closers`` ends in the last ``dlen`` characters."""
    return any(text.endswith(m, 0, end) for m in closers for end in range(len(text) - dlen + 1, len(text) + 1))


@pytest.mark.parametrize("mod", BACKENDS, ids=lambda m: m.__name__)
@settings(max_examples=300, deadline=None)
@given(before=st.text(alphabet="ab<>!", max_size=12), delta=st.text(alphabet="ab<>!", max_size=6),
       closers=st.lists(st.text(alphabet="ab<>!", min_size=1, max_size=4), min_size=1, max_size=3).map(tuple))
def test_a_closer_tuple_keeps_a_delta_unless_one_ends_in_it(mod, before, delta, closers):
    s = mod.TextGate(before)
    s.idle = 3
    f = mod.text_gate(s, "<", ">!<ab", closers, lambda *a: "G")
    got = f(before, before + delta, delta)
    if _ends_in(before + delta, len(delta), closers):
        assert got == "G" and s.pend == []
    else:
        assert got is None and s.pend == [delta] and s.cur == before + delta


@pytest.mark.parametrize("mod", BACKENDS, ids=lambda m: m.__name__)
@settings(max_examples=200, deadline=None)
@given(script=st.lists(st.text(alphabet="ab_<[ ", max_size=4), max_size=10), chars=st.sampled_from(["ab_", "a", ""]),
       budget=st.integers(0, 12), stepper=st.booleans())
def test_state_7_keeps_a_run_within_its_budget(mod, script, chars, budget, stepper):
    """The definition of state 7: a delta made only of ``keep``'s characters and
    no longer than what the budget has left is kept (the budget goes down);
    another goes to the stepper, joined to the kept deltas, or to the general path."""
    s = mod.TextGate("")
    s.idle, s.keep, s.budget = 7, chars, budget
    stepped = []
    f = mod.text_gate(s, "<", "", None, lambda *a: "G", None, "", None, None,
                      (lambda text, cur, request: stepped.append(text) or "S") if stepper else None)
    prev, kept, left = "", [], budget
    for d in script:
        cur = prev + d
        got = f(prev, cur, d)
        if len(d) <= left and all(c in chars for c in d):
            assert got is None
            kept.append(d)
            left -= len(d)
            assert (s.pend, s.budget, s.cur) == (kept, left, cur)
        else:
            assert got == ("S" if stepper else "G")
            if stepper:
                assert stepped == ["".join(kept) + d] and s.pend == [] and s.cur == cur
            break
        prev = cur


def _held_at(text, markers):
    """The definition: the first start where a marker of ``markers`` is cut off
    by the end of ``text`` (the start), or stands whole (-2), a cut-off one seen
    first at one start; -1 for neither."""
    for i in range(len(text)):
        if any(len(m) > len(text) - i and m.startswith(text[i:]) for m in markers):
            return i
        if any(text.startswith(m, i) for m in markers):
            return -2
    return -1


@pytest.mark.parametrize("mod", BACKENDS, ids=lambda m: m.__name__)
@settings(max_examples=300, deadline=None)
@given(script=st.lists(st.one_of(st.text(alphabet="ab<[x>", max_size=5), st.sampled_from(["<o>", "[x", "<", "["])),
                       max_size=12),
       holds=st.sampled_from([("<o>",), ("<o>", "[x"), ("[x", "[", "<o"), ("<o>", "<")]), stepper=st.booleans())
def test_states_1_and_10_send_plain_content_and_hold_a_cut_off_marker(mod, script, holds, stepper):
    """The definition of states 1 and 10 given ``holds``: the kept text and the
    delta together are content up to where a marker cut off by their end
    starts (the rest kept, state 10), or all content (state 1); where a whole
    marker starts first, the delta goes to the stepper joined to the kept text,
    or to the general path."""
    s = mod.TextGate("")
    s.idle = 1
    stepped = []
    f = mod.text_gate(s, "<[", "", None, lambda *a: "G", None, "", None, None,
                      (lambda text, cur, request: stepped.append(text) or "S") if stepper else None, None, holds)
    prev, kept = "", ""
    for d in script:
        cur = prev + d
        got = f(prev, cur, d)
        text = kept + d
        at = _held_at(text, holds) if (kept or any(c in d for c in "<[")) else -1
        if at == -2:
            if kept and stepper:
                assert got == "S" and stepped == [text] and s.pend == []
            else:
                assert got == ("S" if kept and stepper else "G")
            break
        want_content = text if at < 0 else text[:at]
        assert got == ({"content": want_content} if want_content else None)
        kept = "" if at < 0 else text[at:]
        assert (s.pend, s.idle, s.cur) == ([kept] if kept else [], 10 if kept else 1, cur)
        prev = cur


@pytest.mark.parametrize("mod", BACKENDS, ids=lambda m: m.__name__)
def test_states_8_and_9_read_a_call_and_replay_it_on_anything_else(mod):
    s = mod.TextGate("")
    log = []
    r = _Reader()

    def open_call(pend):
        log.append(("open", list(pend)))
        s.reader, s.index = r, 4
        return "O"

    def replay():
        log.append(("replay", list(s.pend)))
        s.pend, s.idle = [], 0

    stepped = []
    calls = ("<o>", "ab", 3, "<a>", open_call, replay)
    f = mod.text_gate(s, "<", "", None, lambda *a: log.append(("general", a[2], s.idle)) or "G", None, "", None,
                      None, lambda text, cur, request: stepped.append(text) or "S", calls)
    s.idle = 1
    assert f("", "<o>", "<o>") is None and (s.idle, s.pend, s.budget) == (8, ["<o>"], 3)  # the opener: kept
    assert f("<o>", "<o>ab", "ab") is None and s.budget == 1                    # name characters: kept
    assert f("<o>ab", "<o>abab", "ab") == "S" and stepped == ["<o>abab"]         # past the limit: the stepper
    s.cur, s.idle, s.pend = "", 1, []
    assert f("", "<o>", "<o>") is None and f("<o>", "<o><a>", "<a>") == "S"     # no name yet: the stepper
    s.cur, s.idle, s.pend = "", 1, []
    assert f("", "<o>", "<o>") is None and f("<o>", "<o>a", "a") is None
    assert f("<o>a", "<o>a<a>", "<a>") == "O" and s.idle == 9 and log[-1] == ("open", ["<o>", "a", "<a>"])
    assert f("<o>a<a>", "<o>a<a>xy", "xy") == {"tool_calls": [{"index": 4, "type": "function",
                                                                 "function": {"arguments": "xy"}}]}
    assert s.pend == ["<o>", "a", "<a>", "xy"] and r.read == [("9", "xy")]      # read whole, going on: kept
    assert f("<o>a<a>xy", "<o>a<a>xyz!", "z!") == {"tool_calls": [{"index": 4, "type": "function",
                                                                   "function": {"arguments": "z!"}}]}
    assert s.done == [["<o>", "a", "<a>", "xy", "z!"]] and s.pend == []     # the value ends: the call is done
    assert s.idle == 1 and s.cur == "<o>a<a>xyz!"
    # where the arguments stand (st.budget): a delta inside a string with no quote, backslash,
    # control character or surrogate is not fed to the reader; escapes are followed through
    s.cur, s.idle, s.pend = "", 1, []
    f("", "<o>", "<o>"), f("<o>", "<o>a", "a"), f("<o>a", "<o>a<a>", "<a>")
    assert s.budget == 0
    prev, r.read[:] = s.cur, []
    for d, fed, after in (('{"k', True, 1), ("ey", False, 1), ('\\', True, 2), ("u", True, 6), ("00", True, 4),
                          ("e", True, 3), ("9x", True, 1), ("\u00e9 ", False, 1), ("\x01", True, 1),
                          ('\\"', True, 1), ('"', True, 0), (": ", True, 0), ('"v\\', True, 2), ("n", True, 1),
                          ("\ud800", True, 1), ("w", False, 1)):
        n_read, cur = len(r.read), prev + d
        assert f(prev, cur, d) == {"tool_calls": [{"index": 4, "type": "function", "function": {"arguments": d}}]}
        assert (len(r.read) > n_read, s.budget) == (fed, after), d
        prev = cur
    for tail, status in (("z!w", "ends inside"), ("z?", "fails"), ("", "empty")):
        s.cur, s.idle, s.pend = "", 1, []
        f("", "<o>", "<o>"), f("<o>", "<o>a", "a"), f("<o>a", "<o>a<a>", "<a>")
        assert f("<o>a<a>", "<o>a<a>" + tail, tail) == "G", status               # anything else: replayed first
        assert log[-2:] == [("replay", ["<o>", "a", "<a>"]), ("general", tail, 0)]
    s.cur, s.idle, s.pend = "", 1, []
    f("", "<o>", "<o>"), f("<o>", "<o>a", "a"), f("<o>a", "<o>a<a>", "<a>")
    assert f("other", "otherq", "q") == "G" and log[-2][0] == "replay"           # a stream that does not go on
    g = mod.text_gate(s, "<", "", None, lambda *a: "G")                          # no calls: states 8 and 9 unread
    for idle in (8, 9):
        s.cur, s.idle, s.pend = "", idle, []
        assert g("", "ab", "ab") == "G"


@pytest.mark.parametrize("mod", BACKENDS, ids=lambda m: m.__name__)
def test_what_each_state_does_with_a_plain_delta(mod):
    s = mod.TextGate("x")
    calls = []
    f = mod.text_gate(s, "<", ">", lambda cur, d: d != "keep>no", lambda *a: calls.append(a[2]) or "G")
    s.idle = 1
    assert f("x", "xab", "ab") == {"content": "ab"} and s.cur == "xab"
    assert f("xab", "xab", "") is None                      # an empty delta: nothing to send
    assert f("xab", "xab<", "<") == "G" and calls == ["<"]  # a trigger: the general path
    s.cur, s.idle = "y", 2
    assert f("y", "yq", "q") is None and s.cur == "yq"      # dropped
    s.idle = 3
    assert f("yq", "yqr", "r") is None and s.pend == ["r"]  # kept
    assert f("yqr", "yqr>", ">") is None and s.pend == ["r", ">"]  # keeps() says kept
    assert f("yqr>", "yqr>keep>no", "keep>no") == "G"       # keeps() says a closer ends here
    s.idle = 4                                              # no piece function: the general path
    assert f(s.cur, s.cur + "v", "v") == "G"
    g = mod.text_gate(s, "<", ">", None, lambda *a: "G", lambda d: ("P", d), "<")
    s.cur, s.idle = "w", 4
    assert g("w", "wv", "v") == ("P", "v") and s.cur == "wv"  # a piece of the arguments
    assert g("wv", "wv<", "<") == "G"                       # may end them: the general path
    o = mod.text_gate(s, "<", ">", None, lambda *a: "G", None, "", ("<t>", "<u>"))
    for idle in (1, 2):
        s.cur, s.idle, s.pend = "m", idle, []
        assert o("m", "m<t>", "<t>") is None and s.pend == ["<t>"] and s.idle == 3  # an opener: kept, inside
        s.cur, s.idle, s.pend = "m", idle, []
        assert o("m", "m<t>x", "<t>x") == "G" and s.pend == []  # more than the opener: the general path
    s.cur, s.idle, s.pend = "m", 4, []
    assert o("m", "m<t>", "<t>") == "G"                     # not in states 1 and 2
    q = {"</k>": ("\n", None)}
    given = {"<t>": ("<", q)}
    o6 = mod.text_gate(s, "<", ">", None, lambda *a: "G", None, "", given)
    given["<t>"] = ("bad",)  # the gate reads the pairs it was given when it was made
    for idle in (1, 2):
        s.cur, s.idle, s.pend, s.keep, s.quiet = "m", idle, [], "", None
        assert o6("m", "m<t>", "<t>") is None and s.pend == ["<t>"]  # an opener of a stretch: kept
        assert (s.idle, s.keep, s.quiet) == (6, "<", q)
        assert o6("m<t>", "m<t>a", "a") is None and o6("m<t>a", "m<t>a</k>", "</k>") is None
        assert s.pend == ["<t>", "a", "</k>"] and (s.keep, s.quiet) == ("\n", None)
    r = _Reader()
    v = mod.text_gate(s, "<", "", None, lambda *a: "G", None, "", None, lambda d, e, st_: ("F", d, e, st_))
    s.cur, s.idle, s.pend, s.reader, s.index = "v", 5, [], r, 2
    assert v("v", "vab", "ab") == {"tool_calls": [{"index": 2, "type": "function", "function": {"arguments": "ab"}}]}
    assert s.pend == ["ab"] and s.cur == "vab" and r.read == ["ab"]  # read whole, the value goes on: kept
    assert v("vab", "vabc!d", "c!d") == ("F", "c!d", 1, 1) and s.cur == "vabc!d"  # it ends: after_feed
    assert v("vabc!d", "vabc!d", "") == "G" and r.read == ["ab", "c!d"]  # an empty delta is not fed
    assert o("vabc!d", "vabc!de", "e") == "G"               # no after_feed: the general path
    s.cur, s.idle, s.pend, s.keep = "m", 6, [], "<\n"
    assert o("m", "mab", "ab") is None and s.pend == ["ab"] and s.cur == "mab"  # read without a word: kept
    assert o("mab", "mab\n", "\n") == "G" and s.pend == ["ab"]  # one of keep's characters: general
    s.cur, s.pend, s.quiet = "m", [], {"<k>": ("<", {"</k>": ("\n", None)})}
    assert o("m", "m<k>", "<k>") is None and s.pend == ["<k>"] and s.keep == "<"  # a quiet marker: kept
    assert o("m<k>", "m<k>a", "a") is None and s.quiet == {"</k>": ("\n", None)}  # the next stretch's
    assert o("m<k>a", "m<k>a</k>", "</k>") is None and (s.keep, s.quiet) == ("\n", None)
    assert o("m<k>a</k>", "m<k>a</k><", "<") is None and s.pend == ["<k>", "a", "</k>", "<"]
    assert o("m<k>a</k><", "m<k>a</k><\n", "\n") == "G"     # no quiet markers: general
    s.cur, s.pend, s.keep, s.quiet = "m", [], "<", {"<k>": ("<", None)}
    assert o("m", "m<k>x", "<k>x") == "G" and s.pend == []  # more than the marker: general
    stepped = []
    w = mod.text_gate(s, "<", ">", None, lambda *a: "G", None, "", None, None,
                      lambda text, cur, request: stepped.append((text, cur, request, list(s.pend), s.cur)) or "S")
    s.cur, s.idle, s.pend, s.keep, s.quiet = "m", 6, [], "<", {"<k>": ("<", None)}
    assert w("m", "mab", "ab") is None and w("mab", "mab<k>", "<k>") is None  # kept, as without a stepper
    assert w("mab<k>", "mab<k>c<", "c<", request="R") == "S" and s.cur == "mab<k>c<"
    assert stepped == [("ab<k>c<", "mab<k>c<", "R", [], "mab<k>c<")]  # joined to the kept deltas, pend emptied
    s.cur, s.idle, s.pend = "n", 6, []
    assert w("n", "n<", "<") == "S" and stepped[-1][0] == "<"  # nothing kept: the delta alone
    s.cur, s.idle = "n", 1
    assert w("n", "n<", "<") == "G"                         # not in states 3 and 6: the general path
    w3 = mod.text_gate(s, "<", ">", ("</c>",), lambda *a: "G", None, "", None, None,
                       lambda text, cur, request: stepped.append((text, cur, request, list(s.pend), s.cur)) or "S")
    s.cur, s.idle, s.pend = "p", 3, []
    assert w3("p", "p<c>a", "<c>a") is None and w3("p<c>a", "p<c>a</c", "</c") is None  # kept: no closer ends
    assert w3("p<c>a</c", "p<c>a</c>", ">") == "S" and stepped[-1] == ("<c>a</c>", "p<c>a</c>", None, [], "p<c>a</c>")
    s.cur, s.idle = "x", 6
    assert w("other", "other<", "<") == "G"                 # nor when the stream does not continue
    s.idle = 1
    assert f("other", "otherz", "z") == "G"                 # not the text it saw last
    s.cur = "k"
    assert f("k", "kxz", "z") == "G"                        # current_text is not the two together
    s.cur = "k"
    assert f("k", None, "z") == "G"                         # nor a str
    s.cur = None
    assert f(None, "z", "z") == "G"                         # nor is previous_text
    assert f(s.cur, s.cur, 5) == "G"                        # not a str: the general path decides


@pytest.mark.parametrize("mod", BACKENDS, ids=lambda m: m.__name__)
def test_bad_arguments_are_type_errors(mod):
    with pytest.raises(TypeError):
        mod.text_gate(object(), "<", ">", None, None)
    with pytest.raises(TypeError):
        mod.text_gate(mod.TextGate(), 1, ">", None, None)
    with pytest.raises(TypeError):
        mod.text_gate(mod.TextGate(), "<", ">", ("</a>", ""), None)
    with pytest.raises(TypeError):
        mod.text_gate(mod.TextGate(), "<", ">", ("</a>", 3), None)
    with pytest.raises(TypeError):
        mod.text_gate(mod.TextGate(), "<", ">", None, None, None, 5)
    with pytest.raises(TypeError):
        mod.text_gate(mod.TextGate(), "<", ">", None, None, None, "", ("<a>", ""))
    for openers in (["<a>"], {"<a>": "<"}, {"<a>": ("<",)}, {"<a>": (1, None)}, {"<a>": ("<", [])}, {"": ("<", None)}):
        with pytest.raises(TypeError):
            mod.text_gate(mod.TextGate(), "<", ">", None, None, None, "", openers)
    ok = ("<o>", "ab", 3, "<a>", len, len)
    for calls in (["<o>"], ok[:5], (*ok, len), ("", *ok[1:]), (*ok[:3], "", *ok[4:]), (ok[0], None, *ok[2:]),
                  (*ok[:2], -1, *ok[3:]), (*ok[:2], "3", *ok[3:]), (*ok[:4], None, ok[5]), (*ok[:5], 5)):
        with pytest.raises(TypeError):
            mod.text_gate(mod.TextGate(), "<", ">", None, None, None, "", None, None, None, calls)
    for holds in ((), ("",), ("<a", 3), ["<a"]):
        with pytest.raises(TypeError):
            mod.text_gate(mod.TextGate(), "<", ">", None, None, None, "", None, None, None, None, holds)
    # a state object set up wrongly fails with a TypeError, never a read of a missing string
    for idle in (6, 7):
        gs = mod.TextGate("")
        gs.idle, gs.keep, gs.budget = idle, None, 5
        with pytest.raises(TypeError):
            mod.text_gate(gs, "<", ">", None, lambda *a: "general")("", "x", "x")
    for quiet in ([("<a>", ("<", None))], {"<a>": "<"}, {"<a>": ("<",)}, {"<a>": (3, None)}):
        gs = mod.TextGate("")
        gs.idle, gs.keep, gs.quiet = 6, "<", quiet
        with pytest.raises(TypeError):
            mod.text_gate(gs, "<", ">", None, lambda *a: "general")("", "<a>", "<a>")
