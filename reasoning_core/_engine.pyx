# cython: language_level=3, embedsignature=True
"""Compiled reasoning engine.

The twin is ``reasoning_core_py/_engine.py``: same classes, arguments,
results and exceptions.  Both walk the tables built by
``reasoning_core._tables``; a change to a loop here lands in the twin in the
same commit.  Every index used in the unchecked loops is either a table entry
(built in range by ``build_tables``) or a position below the validated input
length, which is why bounds checking can be off there.
"""
cimport cython
cimport numpy as cnp
from cpython.dict cimport PyDict_Copy
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE, PyList_GetSlice, PyList_New, PyList_SET_ITEM
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF, Py_XDECREF
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE, PyTuple_SET_ITEM
from cpython.unicode cimport PyUnicode_CheckExact
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t
from libc.stdlib cimport free, realloc
from libc.string cimport memcpy, memset

import numpy as np

from reasoning_core._input import (
    bad_container,
    snapshot,
    check_capacity,
    index_of,
    plain_ids,
    result_arrays,
    to_int32_array,
    to_int64_array,
)
from reasoning_core._tables import Tables, engine_arrays

cnp.import_array()

cdef extern from "Python.h":
    # A type's allocator (the StreamDelta built by DecodePush).
    ctypedef struct _AllocType "PyTypeObject":
        PyObject* (*tp_alloc)(_AllocType*, Py_ssize_t)
    long long PyLong_AsLongLongAndOverflow(object obj, int* overflow) except? -1
    bint PyLong_CheckExact(object obj)
    int PyUnicode_KIND(object text)
    Py_ssize_t PY_SSIZE_T_MAX
    const void* PyUnicode_DATA(object text)

# The text walk's skip to the next character that can begin a delimiter: at
# most four candidate code points (repeated to fill four), compared 32 bytes
# at a time: SSE2 compares and a bit mask where the compiler has them, else a
# block loop it vectorizes; memchr for one candidate in 1-byte storage.
# Reads stay below ``n``.
cdef extern from "Python.h":
    Py_ssize_t PyUnicode_GET_LENGTH(object text)

cdef extern from *:
    """
    #include <string.h>
    /* The per-character end of a scan: the first candidate at or after j. */
    #define RC_SCAN_TAIL(T)                                                     \
        while (j < n) {                                                         \
            T x = p[j];                                                         \
            if (x == c0 || x == c1 || x == c2 || x == c3) break;                \
            j++;                                                                \
        }                                                                       \
        return j;
    #if (defined(__GNUC__) || defined(__clang__)) && defined(__SSE2__)
    #include <emmintrin.h>
    #define RC_ANY4(x) _mm_or_si128(_mm_or_si128(RC_EQ(x, v0), RC_EQ(x, v1)), \
                                    _mm_or_si128(RC_EQ(x, v2), RC_EQ(x, v3)))
    #define RC_DEFINE_SCAN(NAME, T, SET1, EQ, SHIFT)                            \
    static Py_ssize_t NAME(const T* p, Py_ssize_t j, Py_ssize_t n,             \
                           T c0, T c1, T c2, T c3) {                            \
        const Py_ssize_t per = 16 / (Py_ssize_t)sizeof(T);                      \
        const __m128i v0 = SET1(c0), v1 = SET1(c1), v2 = SET1(c2), v3 = SET1(c3); \
        unsigned int mask;                                                      \
        if (c0 == c1 && c0 == c2 && c0 == c3) {                                 \
            while (n - j >= 2 * per) {                                          \
                __m128i a = _mm_loadu_si128((const __m128i*)(p + j));          \
                __m128i b = _mm_loadu_si128((const __m128i*)(p + j + per));    \
                mask = (unsigned int)_mm_movemask_epi8(EQ(a, v0))               \
                     | ((unsigned int)_mm_movemask_epi8(EQ(b, v0)) << 16);      \
                if (mask) return j + (Py_ssize_t)(__builtin_ctz(mask) >> SHIFT); \
                j += 2 * per;                                                   \
            }                                                                   \
        } else {                                                                \
            while (n - j >= 2 * per) {                                          \
                __m128i a = _mm_loadu_si128((const __m128i*)(p + j));          \
                __m128i b = _mm_loadu_si128((const __m128i*)(p + j + per));    \
                mask = (unsigned int)_mm_movemask_epi8(RC_ANY4(a))              \
                     | ((unsigned int)_mm_movemask_epi8(RC_ANY4(b)) << 16);     \
                if (mask) return j + (Py_ssize_t)(__builtin_ctz(mask) >> SHIFT); \
                j += 2 * per;                                                   \
            }                                                                   \
        }                                                                       \
        RC_SCAN_TAIL(T)                                                         \
    }
    #define RC_SET8(c) _mm_set1_epi8((char)(c))
    #define RC_SET16(c) _mm_set1_epi16((short)(c))
    #define RC_SET32(c) _mm_set1_epi32((int)(c))
    #define RC_EQ _mm_cmpeq_epi8
    RC_DEFINE_SCAN(rc_scan_u8, uint8_t, RC_SET8, _mm_cmpeq_epi8, 0)
    #undef RC_EQ
    #define RC_EQ _mm_cmpeq_epi16
    RC_DEFINE_SCAN(rc_scan_u16, uint16_t, RC_SET16, _mm_cmpeq_epi16, 1)
    #undef RC_EQ
    #define RC_EQ _mm_cmpeq_epi32
    RC_DEFINE_SCAN(rc_scan_u32, uint32_t, RC_SET32, _mm_cmpeq_epi32, 2)
    #undef RC_EQ
    #else
    #define RC_SCAN_BLOCK 32
    #define RC_DEFINE_SCAN(NAME, T)                                              \
    static Py_ssize_t NAME(const T* p, Py_ssize_t j, Py_ssize_t n,             \
                           T c0, T c1, T c2, T c3) {                            \
        while (n - j >= RC_SCAN_BLOCK) {                                        \
            const T* q = p + j;                                                 \
            T hit = 0;                                                          \
            for (int k = 0; k < RC_SCAN_BLOCK; k++) {                           \
                T x = q[k];                                                     \
                hit |= (T)((x == c0) | (x == c1) | (x == c2) | (x == c3));     \
            }                                                                   \
            if (hit) break;                                                     \
            j += RC_SCAN_BLOCK;                                                 \
        }                                                                       \
        RC_SCAN_TAIL(T)                                                         \
    }
    RC_DEFINE_SCAN(rc_scan_u8, uint8_t)
    RC_DEFINE_SCAN(rc_scan_u16, uint16_t)
    RC_DEFINE_SCAN(rc_scan_u32, uint32_t)
    #endif

    static Py_ssize_t rc_memchr_u8(const uint8_t* p, Py_ssize_t j, Py_ssize_t n, uint8_t c) {
        const void* hit;
        if (j >= n) return n;
        hit = memchr(p + j, c, (size_t)(n - j));
        return hit ? (Py_ssize_t)((const uint8_t*)hit - p) : n;
    }
    """
    Py_ssize_t rc_scan_u8(const uint8_t* p, Py_ssize_t j, Py_ssize_t n, uint8_t c0, uint8_t c1, uint8_t c2, uint8_t c3) noexcept nogil
    Py_ssize_t rc_scan_u16(const uint16_t* p, Py_ssize_t j, Py_ssize_t n, uint16_t c0, uint16_t c1, uint16_t c2, uint16_t c3) noexcept nogil
    Py_ssize_t rc_scan_u32(const uint32_t* p, Py_ssize_t j, Py_ssize_t n, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3) noexcept nogil
    Py_ssize_t rc_memchr_u8(const uint8_t* p, Py_ssize_t j, Py_ssize_t n, uint8_t c) noexcept nogil

# Keep in step with reasoning_core._tables.
cdef enum:
    CONTENT = 0
    REASONING = 1
    SEEDED = 2
    AWAITING = 3
    K_START = 0
    K_END = 1
    K_TERM = 2
    K_HEADER = 3
    K_ENABLE = 6
    SEG_CONTENT = 0
    SEG_REASONING = 1
    SEG_DELIMITER = 2
    SEG_HELD = 3
    SEG_START = 4
    MODE_PROMPT_REV = 4
    SMALL_COPY = 64  # a list delta up to this long is copied as a list (cheaper than an array)
    MODE_ENABLE = 5
    HELD_BIT = 4  # batch state byte: bits 0-1 the state, bit 2 set while tokens are held
    # A scratch buffer larger than this many ids (8 MiB) is freed after the
    # call that needed it, so one huge delta does not pin its memory.
    SHRINK_ABOVE = 1 << 20

__all__ = ["Engine", "BatchEngine", "BatchStepResult", "TextGate"]


cdef struct _Seg:
    int cur
    Py_ssize_t start
    Py_ssize_t pos


cdef inline int _emit(list segs, _Seg* s, int kind, Py_ssize_t count) except -1:
    # Extend the open segment or close it and start one of another kind.
    if kind != s.cur:
        if s.cur >= 0:
            segs.append((s.cur, s.start, s.pos))
        s.cur = kind
        s.start = s.pos
    s.pos += count
    return 0


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline int _index(const int64_t* sigma, int ns, int64_t lo, int64_t hi, int64_t t) noexcept nogil:
    """Alphabet index of a token id, or -1 (most ids fail the range test)."""
    if t < lo or t > hi:
        return -1
    cdef int a = 0, b = ns - 1, m
    while a <= b:
        m = (a + b) >> 1
        if sigma[m] < t:
            a = m + 1
        elif sigma[m] > t:
            b = m - 1
        else:
            return m
    return -1


cdef struct _Walk:
    # Raw table pointers (owned by a _Tables), copied into C locals by value.
    const uint8_t* stay  # [4 * 256]: id < 256 leaves the state's root where it is (text's fast path)
    # [4 states * 3 widths * 4]: the code points that can move each state's root,
    # as each storage width can hold them, padded with the first; scan_n[state * 3 + width]
    # how many (0: none can occur in that width; -1: more than four, no skipping)
    const uint32_t* scan_c
    const int8_t* scan_n
    const int64_t* sigma
    const int32_t* trans
    const int32_t* depth
    const int8_t* fire_state
    const uint8_t* fire_consume
    const int32_t* root
    int ns
    int64_t lo
    int64_t hi


cdef inline bint _stays(const _Walk* w, int state, int64_t t) noexcept nogil:
    """Whether id ``t`` leaves ``state``'s root node where it is (decided at once)."""
    if t < w.lo or t > w.hi:
        return True
    if t < 256:  # t >= lo >= 0 here
        return w.stay[state * 256 + t]
    cdef int k = _index(w.sigma, w.ns, w.lo, w.hi, t)
    return k < 0 or w.trans[w.root[state] * w.ns + k] == w.root[state]


cdef struct _Move:
    int released        # tokens decided now, to the side the request was on
    int fired           # length of the delimiter this token completed (0: none)
    int consumed        # that delimiter is consumed (else a terminator: content)
    bint was_reasoning  # the side before this token


cdef inline void _advance(const _Walk* w, int* state, int* node, int64_t tok, _Move* mv) noexcept nogil:
    """One token through the automaton: the single transition rule of both loops."""
    cdef int k = _index(w.sigma, w.ns, w.lo, w.hi, tok)
    cdef int nxt = w.root[state[0]] if k < 0 else w.trans[node[0] * w.ns + k]
    cdef int fs = w.fire_state[nxt]
    mv.was_reasoning = state[0] == REASONING or state[0] == SEEDED
    mv.released = w.depth[node[0]] + 1 - w.depth[nxt]
    if mv.released and state[0] == AWAITING:
        state[0] = CONTENT  # AWAITING ends at the first content token
    if fs >= 0:
        mv.fired = w.depth[nxt]
        mv.consumed = w.fire_consume[nxt]
        state[0] = fs
        node[0] = w.root[fs]
    else:
        mv.fired = 0
        mv.consumed = 0
        node[0] = nxt


cdef class _Tables:
    """Raw pointers into a Tables' arrays (kept alive by this object)."""
    cdef object tables, _keep
    cdef const int64_t* sigma
    cdef int ns
    cdef int64_t lo, hi
    cdef const int32_t* trans
    cdef const int32_t* depth
    cdef const int8_t* fire_state
    cdef const uint8_t* fire_consume
    cdef const int8_t* fire_kind
    cdef int32_t root[6]
    cdef uint8_t stay[4 * 256]
    cdef uint32_t scan_c[4 * 3 * 4]
    cdef int8_t scan_n[4 * 3]
    cdef _Walk w
    cdef int default_state
    cdef bint awaiting_family, has_enable

    def __cinit__(self, tables):
        # Tables are immutable and checked when made; engine_arrays() confirms
        # these are those read-only arrays, which this object keeps alive.
        cdef cnp.ndarray sigma, trans, depth, fs, fc, fk, roots
        cdef int st, c, k, r, i, m, width
        cdef int found[4]
        cdef int64_t c64, lim
        sigma, trans, depth, fs, fc, fk, roots = engine_arrays(tables)
        self.tables = tables
        self._keep = (sigma, trans, depth, fs, fc, fk, roots)
        self.sigma = <const int64_t*>cnp.PyArray_DATA(sigma)
        self.ns = <int>sigma.shape[0]
        if self.ns:
            self.lo = self.sigma[0]
            self.hi = self.sigma[self.ns - 1]
        else:
            self.lo, self.hi = 1, 0
        self.trans = <const int32_t*>cnp.PyArray_DATA(trans)
        self.depth = <const int32_t*>cnp.PyArray_DATA(depth)
        self.fire_state = <const int8_t*>cnp.PyArray_DATA(fs)
        self.fire_consume = <const uint8_t*>cnp.PyArray_DATA(fc)
        self.fire_kind = <const int8_t*>cnp.PyArray_DATA(fk)
        for i in range(6):
            self.root[i] = (<const int32_t*>cnp.PyArray_DATA(roots))[i]
        # For ids below 256 (a text's ASCII and Latin-1 characters), whether
        # the id keeps each state's root node where it is: such ids are
        # decided at once, like ids outside the alphabet's range.
        for st in range(4):
            r = self.root[st]
            for c in range(256):
                k = _index(self.sigma, self.ns, self.lo, self.hi, c)
                self.stay[st * 256 + c] = k < 0 or self.trans[r * self.ns + k] == r
        # The code points that move each state's root (the complement of
        # ``stay``, over the whole alphabet), per storage width.
        for st in range(4):
            r = self.root[st]
            m = 0
            for k in range(self.ns):
                if self.trans[r * self.ns + k] != r:
                    if m < 4:
                        found[m] = <int>k
                    m += 1
            for width in range(3):
                if m > 4:
                    self.scan_n[st * 3 + width] = -1
                    continue
                c = 0
                lim = 0xFF if width == 0 else (0xFFFF if width == 1 else 0xFFFFFFFF)
                for i in range(m):
                    c64 = self.sigma[found[i]]
                    if 0 <= c64 <= lim:
                        self.scan_c[(st * 3 + width) * 4 + c] = <uint32_t>c64
                        c += 1
                self.scan_n[st * 3 + width] = c
                for i in range(c, 4):
                    self.scan_c[(st * 3 + width) * 4 + i] = self.scan_c[(st * 3 + width) * 4] if c else 0
        self.w.scan_c = self.scan_c
        self.w.scan_n = self.scan_n
        self.w.stay = self.stay
        self.w.sigma = self.sigma
        self.w.trans = self.trans
        self.w.depth = self.depth
        self.w.fire_state = self.fire_state
        self.w.fire_consume = self.fire_consume
        self.w.root = self.root
        self.w.ns = self.ns
        self.w.lo = self.lo
        self.w.hi = self.hi
        self.default_state = tables.default_state
        self.awaiting_family = tables.awaiting_family
        self.has_enable = tables.has_enable

    cdef inline int index(self, int64_t t) noexcept nogil:
        return _index(self.sigma, self.ns, self.lo, self.hi, t)

    @cython.boundscheck(False)
    @cython.wraparound(False)
    cdef int first_fire(self, const int64_t* ids, Py_ssize_t n, Py_ssize_t begin, int root,
                        unsigned int wanted, Py_ssize_t* a, Py_ssize_t* b) noexcept nogil:
        """First complete delimiter whose kind bit is in ``wanted``; -1 if none."""
        cdef int node = root, k, kind
        cdef Py_ssize_t i
        for i in range(begin, n):
            k = self.index(ids[i])
            node = root if k < 0 else self.trans[node * self.ns + k]
            kind = self.fire_kind[node]
            if kind >= 0:
                if (1u << kind) & wanted:
                    a[0] = i + 1 - self.depth[node]
                    b[0] = i + 1
                    return kind
                node = root
        return -1


cdef class _IdBuffer:
    """Growable int64 scratch buffer: list/tuple input converted once, checked first."""
    cdef int64_t* data
    cdef Py_ssize_t cap
    cdef object keep
    cdef bint overflowed  # the last list/tuple load met an id outside int64 (stored as -1)
    cdef bint all_exact  # every item of the last list/tuple load was an exact int (no callback ran)

    def __dealloc__(self):
        free(self.data)

    cdef inline void release(self) noexcept:
        """Drop the converted input; give back a buffer grown past SHRINK_ABOVE ids."""
        self.keep = None
        if self.cap > SHRINK_ABOVE:
            free(self.data)
            self.data = NULL
            self.cap = 0

    cdef const int64_t* load(self, object obj, Py_ssize_t* n) except NULL:
        cdef Py_ssize_t i, size
        cdef int overflow = 0
        cdef long long v
        cdef cnp.ndarray arr
        cdef int64_t* grown
        cdef object item
        self.keep = None
        self.overflowed = False
        self.all_exact = True
        if type(obj) is list or type(obj) is tuple or isinstance(obj, (list, tuple, range)):
            if type(obj) is not list and type(obj) is not tuple:
                # A range, or a subclass read as the plain list or tuple it
                # stores: its own __len__ / __getitem__ / __iter__ are not
                # called, so neither can size (or overrun) this buffer.
                obj = plain_ids(obj)
                self.keep = obj
            if type(obj) is list:
                size = PyList_GET_SIZE(obj)
            else:
                size = PyTuple_GET_SIZE(obj)
            if size > PY_SSIZE_T_MAX // <Py_ssize_t>sizeof(int64_t):
                raise MemoryError()
            if size > self.cap:
                grown = <int64_t*>realloc(self.data, (size if size > 16 else 16) * sizeof(int64_t))
                if grown == NULL:
                    raise MemoryError()
                self.data = grown
                self.cap = size if size > 16 else 16
            if self.data == NULL:
                grown = <int64_t*>realloc(NULL, 16 * sizeof(int64_t))
                if grown == NULL:
                    raise MemoryError()
                self.data, self.cap = grown, 16
            if type(obj) is list:
                self._load_list(<list>obj, size)
            else:
                for i in range(size):
                    item = <object>PyTuple_GET_ITEM(obj, i)  # (a tuple: its size is fixed)
                    if not PyLong_CheckExact(item):
                        self.all_exact = False
                        item = index_of(i, item)
                    v = PyLong_AsLongLongAndOverflow(item, &overflow)
                    # Ids outside int64 can never be delimiters.
                    self.data[i] = -1 if overflow else v
                    if overflow:
                        self.overflowed = True
            n[0] = size
            return self.data
        if isinstance(obj, (str, bytes, bytearray)) or obj is None:
            raise bad_container(obj)
        arr = to_int64_array(obj)
        self.keep = arr
        n[0] = arr.shape[0]
        if n[0] == 0:
            return <const int64_t*>&self.cap  # never read: n is 0
        return <const int64_t*>cnp.PyArray_DATA(arr)


    @cython.boundscheck(False)
    @cython.wraparound(False)
    cdef int _load_list(self, list obj, Py_ssize_t size) except -1:
        cdef Py_ssize_t i
        cdef int64_t v
        cdef object item
        if len(obj) < size:
            raise RuntimeError("token id list changed size while being read")
        for i in range(size):
            item = obj[i]
            if not PyLong_CheckExact(item):
                self.all_exact = False
                item = index_of(i, item)
                if len(obj) < size:
                    raise RuntimeError("token id list changed size while being read")
            try:
                v = item
            except OverflowError:
                v = -1  # ids outside int64 can never be delimiters
                self.overflowed = True
            self.data[i] = v
        return 0


cdef class Engine:
    """Per-request reasoning state machine over token ids."""
    cdef _Tables t
    cdef _IdBuffer buf
    cdef int _state
    cdef int _node
    cdef bint _opened
    cdef object _make, _on_open, _last
    cdef Py_ssize_t _lk[5]
    cdef dict _deltas
    # Set while a call holds a pointer into ``buf``.  Converting the input can
    # run Python code (``__index__``, ``__bool__``, a list subclass), which
    # could re-enter this parser or let another thread use it and regrow the
    # buffer under the scan: such a call raises RuntimeError instead.
    cdef bint _busy

    def __cinit__(self, tables):
        # A _Tables (only reachable from this module: copy()) was checked when
        # its first engine was made; anything else is checked now.
        self.t = <_Tables>tables if type(tables) is _Tables else _Tables(tables)
        self.buf = _IdBuffer.__new__(_IdBuffer)
        self._state = self.t.default_state
        self._node = self.t.root[self._state]
        # (_opened is False and _make, _on_open, _last None as allocated;
        # _deltas is None until configure_stream sets _make with it.)

    cdef inline int _enter(self) except -1:
        if self._busy:
            raise RuntimeError(
                "this parser is already running a call (re-entered from a callback, or used "
                "from another thread): parsers are per-request objects"
            )
        self._busy = True
        return 0

    cdef inline void _exit(self) noexcept:
        self.buf.release()
        self._busy = False

    @cython.binding(False)  # a bound builtin method: the cheapest call
    def copy(self):
        """A fresh engine on the same checked tables, in their default state,
        sharing this one's ``stream()`` set-up and result cache: how a
        per-tokenizer template makes a per-request parser in O(1)."""
        cdef Engine e = Engine.__new__(Engine, self.t)
        e._make = self._make
        e._on_open = self._on_open
        e._deltas = self._deltas
        return e

    def configure_stream(self, make, on_open=None):
        """``stream()`` results: ``make(d0, r0, r1, d1, still)`` builds one (frozen,
        so equal ones are shared); ``on_open()`` runs when a delta opens a block."""
        self._enter()
        self._exit()
        self._make = make
        self._on_open = on_open
        self._deltas = {}
        self._last = None

    @property
    def tables(self):
        return self.t.tables

    @property
    def scratch_bytes(self):
        """Bytes held by the input scratch buffer between calls (at most 8 MiB)."""
        return self.buf.cap * sizeof(int64_t)

    @property
    def state(self):
        return self._state

    @property
    def held(self):
        """How many trailing tokens are held (a possible delimiter prefix)."""
        return self.t.depth[self._node]

    @property
    def held_ids(self):
        return self.t.tables.paths[self._node]

    def set_state(self, state):
        """Seed the state; drops anything held."""
        if state not in (CONTENT, REASONING, SEEDED, AWAITING):
            raise ValueError(f"invalid engine state {state!r}")
        self._enter()
        self._exit()  # also gives back an oversized scratch buffer
        self._state = state
        self._node = self.t.root[self._state]
        self._opened = False

    def feed(self, token_ids):
        """Classify a delta: ``(segments, n_prefix)`` as in the twin."""
        cdef Py_ssize_t n
        cdef const int64_t* ids
        self._enter()
        try:
            ids = self.buf.load(token_ids, &n)
            return self._feed(ids, n)
        finally:
            self._exit()

    cdef object _copy_of(self, object token_ids, const int64_t* ids, Py_ssize_t n):
        """A private copy of a list/tuple delta just loaded into ``ids``."""
        cdef cnp.ndarray copy
        if self.buf.overflowed:
            # (a subclass's stored elements, as loaded: not its own iteration)
            return list(token_ids if self.buf.keep is None else self.buf.keep)
        if self.buf.all_exact:
            # No callback ran, so the input is what was converted: a tuple of
            # ints is immutable, a short list is copied as a list.
            if type(token_ids) is tuple:
                return token_ids
            if type(token_ids) is list and n <= SMALL_COPY:
                return PyList_GetSlice(token_ids, 0, n)
        copy = np.empty(n, dtype=np.int64)
        if n:
            memcpy(cnp.PyArray_DATA(copy), ids, n * sizeof(int64_t))
        return copy

    cdef inline int _one_side(self, object token_ids):
        # split()'s per-token case: a list of one exact int, nothing held,
        # decided at once by the scan _walk starts with.  Moves the state as
        # _walk would and returns the segment kind the id goes to; -1 (nothing
        # done) for anything else, which the general path handles.
        cdef int overflow = 0
        cdef int state = self._state
        cdef long long v
        cdef object item
        if type(token_ids) is not list or PyList_GET_SIZE(token_ids) != 1 or self._busy:
            return -1
        if self.t.depth[self._node] != 0:
            return -1
        item = <object>PyList_GET_ITEM(token_ids, 0)
        if not PyLong_CheckExact(item):
            return -1
        v = PyLong_AsLongLongAndOverflow(item, &overflow)
        if overflow:
            return -1
        if state == AWAITING:
            if self.t.lo <= v <= self.t.hi:
                return -1
        elif not _stays(&self.t.w, state, v):
            return -1
        if state == REASONING or state == SEEDED:
            return SEG_REASONING
        self._state = CONTENT  # AWAITING ends at the first content token
        return SEG_CONTENT

    @cython.binding(False)  # a bound builtin method: the cheapest call
    def split(self, token_ids):
        """``feed()`` as a ``TokenSplit`` owning a copy of the delta (``FamilyParser.split``)."""
        cdef Py_ssize_t n
        cdef const int64_t* ids
        cdef _Tables t = self.t
        cdef TokenSplit out = TokenSplit.__new__(TokenSplit)
        cdef int side = self._one_side(token_ids)
        out._bounds = ()
        if side >= 0:
            # One id, one side: the split keeps the id itself (an int: its own
            # copy) and no segment list (see TokenSplit._whole).
            out._prefix = ()
            out._delta = (<list>token_ids)[0]
            out._whole = side + 1
            out.is_reasoning = side == SEG_REASONING
            out.awaiting_start = False
            return out
        out._prefix = t.tables.paths[self._node] if t.depth[self._node] else ()
        if type(token_ids) is list or type(token_ids) is tuple:
            self._enter()
            try:
                ids = self.buf.load(token_ids, &n)
                out._delta = self._copy_of(token_ids, ids, n)
                out._segs = self._feed(ids, n)[0]
            finally:
                self._exit()
        else:
            out._delta = snapshot(token_ids)
            self._enter()
            try:
                ids = self.buf.load(out._delta, &n)
                out._segs = self._feed(ids, n)[0]
            finally:
                self._exit()
        out.is_reasoning = self._state == REASONING or self._state == SEEDED
        out.awaiting_start = self._state == AWAITING
        return out

    def feed_copy(self, token_ids):
        """``feed()`` of a list or tuple, plus a private copy of its ids.

        The copy is taken from the converted buffer (a memcpy), so a result
        that outlives the caller's list costs no second pass over Python
        objects; ids beyond int64 (stored as -1) fall back to a list copy so
        the copy still equals the input.
        """
        cdef Py_ssize_t n
        cdef const int64_t* ids
        self._enter()
        try:
            ids = self.buf.load(token_ids, &n)
            copy = self._copy_of(token_ids, ids, n)
            segs, n_prefix = self._feed(ids, n)
            return segs, n_prefix, copy
        finally:
            self._exit()

    def feed_side(self, token_ids):
        """``feed()``, minus its lists in the per-token common case.

        Returns ``SEG_REASONING`` or ``SEG_CONTENT`` when nothing was held and
        every id is outside the delimiter alphabet's range (the whole delta
        goes to that side), else exactly what ``feed()`` returns.
        """
        cdef Py_ssize_t n, j = 0
        cdef const int64_t* ids
        cdef int64_t lo = self.t.lo, hi = self.t.hi
        self._enter()
        try:
            ids = self.buf.load(token_ids, &n)
            if n and self.t.depth[self._node] == 0:
                while j < n and (ids[j] < lo or ids[j] > hi):
                    j += 1
                if j == n:
                    if self._state == REASONING or self._state == SEEDED:
                        return SEG_REASONING
                    self._state = CONTENT  # AWAITING ends at the first content token
                    return SEG_CONTENT
            return self._feed(ids, n)
        finally:
            self._exit()

    cdef int _side_one(self, int64_t t):
        # feed_side([t])'s per-token branch: the side a lone id goes to when
        # nothing is held and it is outside the delimiter alphabet's range;
        # -1 (nothing consumed) otherwise, or while a call is running.
        if self._busy or self.t.depth[self._node] != 0 or (self.t.lo <= t <= self.t.hi):
            return -1
        if self._state == REASONING or self._state == SEEDED:
            return SEG_REASONING
        self._state = CONTENT  # AWAITING ends at the first content token
        return SEG_CONTENT

    def feed_text_side(self, text):
        """``feed_text()``, minus its lists when the chunk goes wholly to one side.

        Returns ``SEG_REASONING`` or ``SEG_CONTENT`` when nothing was held and
        no character of ``text`` can begin a delimiter here, else exactly what
        ``feed_text()`` returns.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be str, not {type(text).__name__}")
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), j  # (a subclass's __len__ is not the storage's)
        cdef int state = self._state
        cdef int kind
        cdef const void* src
        self._enter()
        try:
            if n and self.t.w.depth[self._node] == 0 and state != AWAITING:
                kind = PyUnicode_KIND(text)
                src = PyUnicode_DATA(text)
                if kind == 1:
                    j = _skip(&self.t.w, state, <const uint8_t*>src, 0, n)
                elif kind == 2:
                    j = _skip(&self.t.w, state, <const uint16_t*>src, 0, n)
                else:
                    j = _skip(&self.t.w, state, <const uint32_t*>src, 0, n)
                if j == n:
                    return SEG_REASONING if state == REASONING or state == SEEDED else SEG_CONTENT
            return self._feed_str(text)
        finally:
            self._exit()

    def feed_text(self, text):
        """``feed`` over the code points of ``text`` (tables built from code points)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be str, not {type(text).__name__}")
        self._enter()
        try:
            return self._feed_str(text)
        finally:
            self._exit()

    cdef tuple _feed(self, const int64_t* ids, Py_ssize_t n):
        return _walk(self, ids, n)

    cdef tuple _feed_str(self, object text):
        # Straight over the string's storage (no copy), one walk per width
        # (``text`` is a str, possibly of a subclass: checked by the callers).
        cdef int kind = PyUnicode_KIND(text)
        cdef const void* src = PyUnicode_DATA(text)
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
        if kind == 1:
            return _walk(self, <const uint8_t*>src, n)
        if kind == 2:
            return _walk(self, <const uint16_t*>src, n)
        return _walk(self, <const uint32_t*>src, n)

    def finish(self):
        """Release held tokens to the current side (end of generation)."""
        cdef int n = self.t.depth[self._node]
        segs = []
        self._enter()
        self._exit()
        if n:
            if self._state == REASONING or self._state == SEEDED:
                segs.append((SEG_REASONING, 0, n))
            else:
                segs.append((SEG_CONTENT, 0, n))
                self._state = CONTENT
            self._node = self.t.root[self._state]
        return segs, n

    def scan_stream(self, token_ids, is_currently_reasoning):
        """MAX ``stream()`` on one delta, statelessly: (d0, r0, r1, d1, still)."""
        cdef Py_ssize_t n
        cdef Py_ssize_t sp[5]
        cdef const int64_t* ids
        # Every Python-level argument is evaluated before a pointer is taken.
        cdef bint reasoning = is_currently_reasoning
        self._enter()
        try:
            ids = self.buf.load(token_ids, &n)
            self._scan(ids, n, reasoning, sp)
        finally:
            self._exit()
        return (sp[0], sp[1], sp[2], sp[3], bool(sp[4]))

    def stream(self, token_ids, is_currently_reasoning=True):
        """MAX ``stream()``: the span of one delta, as built by ``configure_stream``.

        An awaiting-start family (Gemma 4) reads a pre-seeded state as
        waiting for its start until this request has opened a block.
        """
        cdef Py_ssize_t n
        cdef Py_ssize_t sp[5]
        cdef const int64_t* ids
        # Every Python-level argument is evaluated before a pointer is taken.
        cdef bint reasoning = is_currently_reasoning
        self._enter()
        try:
            ids = self.buf.load(token_ids, &n)
            if reasoning and not self._opened and self.t.awaiting_family:
                reasoning = False
            self._scan(ids, n, reasoning, sp)
        finally:
            self._exit()
        if sp[1] > sp[0]:
            self._opened = True
            if self._on_open is not None:
                self._on_open()
        # Streams repeat the same span (one-token deltas inside a block):
        # answer from the last result without building a key.
        if (self._last is not None and sp[0] == self._lk[0] and sp[1] == self._lk[1]
                and sp[2] == self._lk[2] and sp[3] == self._lk[3] and sp[4] == self._lk[4]):
            return self._last
        key = (sp[0], sp[1], sp[2], sp[3], bool(sp[4]))
        if self._make is None:
            return key
        parsed = self._deltas.get(key)
        if parsed is None:
            parsed = self._make(*key)
            if len(self._deltas) < 512:
                self._deltas[key] = parsed
        self._last = parsed
        for i in range(5):
            self._lk[i] = sp[i]
        return parsed

    cdef void _scan(self, const int64_t* ids, Py_ssize_t n, bint reasoning, Py_ssize_t* sp) noexcept:
        # sp = (d0, r0, r1, d1, still)
        cdef Py_ssize_t a = 0, b = 0, d0, r0
        cdef _Tables t = self.t
        cdef int kind
        if reasoning:
            kind = t.first_fire(ids, n, 0, t.root[SEEDED],
                                (1u << K_START) | (1u << K_END) | (1u << K_TERM) | (1u << K_HEADER), &a, &b)
            if kind < 0:
                sp[0], sp[1], sp[2], sp[3], sp[4] = 0, 0, n, n, 1
                return
            if kind == K_START:
                d0, r0 = a, b
            elif kind == K_TERM:
                sp[0], sp[1], sp[2], sp[3], sp[4] = 0, 0, a, a, 0
                return
            else:
                sp[0], sp[1], sp[2], sp[3], sp[4] = 0, 0, a, b, 0
                return
        else:
            kind = t.first_fire(ids, n, 0, t.root[CONTENT], 1u << K_START, &a, &b)
            if kind < 0:
                sp[0], sp[1], sp[2], sp[3], sp[4] = 0, 0, 0, 0, 0
                return
            d0, r0 = a, b
        kind = t.first_fire(ids, n, r0, t.root[REASONING],
                            (1u << K_END) | (1u << K_TERM) | (1u << K_HEADER), &a, &b)
        if kind < 0:
            sp[0], sp[1], sp[2], sp[3], sp[4] = d0, r0, n, n, 1
        elif kind == K_TERM:
            sp[0], sp[1], sp[2], sp[3], sp[4] = d0, r0, a, a, 0
        else:
            sp[0], sp[1], sp[2], sp[3], sp[4] = d0, r0, a, b, 0

    @cython.boundscheck(False)
    @cython.wraparound(False)
    @cython.boundscheck(False)
    @cython.wraparound(False)
    cdef int _scan_back(self, object seq) except -2:
        """Kind of the last complete marker of a list/tuple of ids, or -1.

        Items are converted one by one from the end; those before the
        deciding marker are never read.
        """
        cdef _Tables t = self.t
        cdef int root = t.root[MODE_PROMPT_REV], node = root, k, overflow = 0
        cdef Py_ssize_t i = len(seq) - 1
        cdef long long v
        cdef object item
        cdef bint is_list = type(seq) is list
        while i >= 0:
            if is_list:
                if i >= len(<list>seq):
                    raise RuntimeError("token id list changed size while being read")
                item = (<list>seq)[i]
            else:
                item = (<tuple>seq)[i]
            if not PyLong_CheckExact(item):
                item = index_of(i, item)
            v = PyLong_AsLongLongAndOverflow(item, &overflow)
            k = -1 if overflow else t.index(v)
            node = root if k < 0 else t.trans[node * t.ns + k]
            if t.fire_kind[node] >= 0:
                return t.fire_kind[node]
            i -= 1
        return -1

    def prompt_state(self, prompt_token_ids):
        """The state generation starts in after this prompt (no side effects)."""
        return self._prompt_state(prompt_token_ids)

    def will_reason(self, prompt_token_ids):
        """Whether generation may reason after this prompt (``prompt_state`` is
        not content): MAX's ``will_reason_after_prompt`` in one call."""
        return self._prompt_state(prompt_token_ids) != CONTENT

    cdef int _prompt_state(self, prompt_token_ids) except -1:
        cdef Py_ssize_t n, i, a = 0, b = 0
        cdef const int64_t* ids
        cdef _Tables t = self.t
        cdef int root = t.root[MODE_PROMPT_REV], node, k, found = -1
        node = root
        self._enter()
        try:
            if type(prompt_token_ids) is list or type(prompt_token_ids) is tuple:
                # From the end, reading the caller's ids where they are: the
                # work is the distance to the deciding marker, not the prompt.
                found = self._scan_back(prompt_token_ids)
                if found == K_START:
                    return SEEDED
                if not t.has_enable:
                    if found == K_END or found == K_TERM or found == K_HEADER:
                        return CONTENT
                    return t.default_state
                found = -1  # a thinking-enable marker may be anywhere: the full scan decides
            ids = self.buf.load(prompt_token_ids, &n)
            for i in range(n - 1, -1, -1):
                k = t.index(ids[i])
                node = root if k < 0 else t.trans[node * t.ns + k]
                if t.fire_kind[node] >= 0:
                    found = t.fire_kind[node]
                    break
            if found == K_START:
                return SEEDED
            if t.has_enable and t.first_fire(ids, n, 0, t.root[MODE_ENABLE], 1u << K_ENABLE, &a, &b) >= 0:
                return AWAITING
            if found == K_END or found == K_TERM or found == K_HEADER:
                return CONTENT
            return t.default_state
        finally:
            self._exit()


cdef class BatchStepResult:
    """Per-token output arrays of a batch step (reusable as ``out=``)."""
    cdef readonly object is_reasoning, is_delimiter, reasoning_ended, is_held, in_reasoning, released, completed
    cdef public Py_ssize_t size
    cdef Py_ssize_t cap
    cdef uint8_t* p_r
    cdef uint8_t* p_d
    cdef uint8_t* p_e
    cdef uint8_t* p_h
    cdef uint8_t* p_i
    cdef uint8_t* p_rel
    cdef uint8_t* p_comp
    cdef const uint8_t* lo_p  # the memory the seven arrays span: [lo_p, hi_p)
    cdef const uint8_t* hi_p

    def __init__(self, capacity):
        r, d, e, h, i, rel, comp = result_arrays(check_capacity(capacity, 0))
        self._bind(r, d, e, h, i, rel, comp)
        self.size = 0

    cdef _bind(self, r, d, e, h, i, rel, comp):
        self.is_reasoning, self.is_delimiter, self.reasoning_ended = r, d, e
        self.is_held, self.in_reasoning, self.released, self.completed = h, i, rel, comp
        self.cap = r.shape[0]
        self.p_r = <uint8_t*>cnp.PyArray_DATA(r)
        self.p_d = <uint8_t*>cnp.PyArray_DATA(d)
        self.p_e = <uint8_t*>cnp.PyArray_DATA(e)
        self.p_h = <uint8_t*>cnp.PyArray_DATA(h)
        self.p_i = <uint8_t*>cnp.PyArray_DATA(i)
        self.p_rel = <uint8_t*>cnp.PyArray_DATA(rel)
        self.p_comp = <uint8_t*>cnp.PyArray_DATA(comp)
        cdef uint8_t* ps[7]
        cdef int k
        ps[0], ps[1], ps[2], ps[3] = self.p_r, self.p_d, self.p_e, self.p_h
        ps[4], ps[5], ps[6] = self.p_i, self.p_rel, self.p_comp
        self.lo_p = self.hi_p = ps[0]
        for k in range(1, 7):
            if ps[k] < self.lo_p:
                self.lo_p = ps[k]
            if ps[k] > self.hi_p:
                self.hi_p = ps[k]
        self.hi_p += self.cap

    cdef inline bint overlaps(self, cnp.ndarray a) noexcept:
        """Whether the contiguous array ``a`` shares memory with these arrays."""
        cdef const uint8_t* p = <const uint8_t*>cnp.PyArray_DATA(a)
        cdef Py_ssize_t nb = cnp.PyArray_NBYTES(a)
        return nb > 0 and p < self.hi_p and self.lo_p < p + nb

    cdef int check_writeable(self) except -1:
        cdef object a
        for a in (self.is_reasoning, self.is_delimiter, self.reasoning_ended, self.is_held,
                  self.in_reasoning, self.released, self.completed):
            if not cnp.PyArray_ISWRITEABLE(<cnp.ndarray>a):
                raise ValueError("out= has a read-only array: a BatchStepResult's arrays must stay writeable")
        return 0

    @property
    def capacity(self):
        return self.cap

    def __repr__(self):
        from reasoning_core._shared import batch_result_repr  # one repr for both engines
        return batch_result_repr(self)

    def view(self, n):
        """The first ``n`` entries (views, no copy)."""
        cdef BatchStepResult out = BatchStepResult.__new__(BatchStepResult)
        n = int(n)
        if not 0 <= n <= self.cap:
            raise ValueError(f"view of {n} entries exceeds capacity {self.cap}")
        out._bind(self.is_reasoning[:n], self.is_delimiter[:n], self.reasoning_ended[:n], self.is_held[:n],
                  self.in_reasoning[:n], self.released[:n], self.completed[:n])
        out.size = n
        return out


cdef inline cnp.ndarray _int32_input(object obj, str what, bint ids):
    # Fast path: an engine's own int32 arrays go straight through (native
    # byte order and aligned: anything else is converted first).
    if (type(obj) is np.ndarray and cnp.PyArray_TYPE(<cnp.ndarray>obj) == cnp.NPY_INT32
            and cnp.PyArray_NDIM(<cnp.ndarray>obj) == 1 and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>obj)
            and cnp.PyArray_ISBEHAVED_RO(<cnp.ndarray>obj)):
        return <cnp.ndarray>obj
    return to_int32_array(obj, what, ids)


# -- batch step internals ------------------------------------------------------

from libc.stdint cimport uint64_t

cdef enum:
    # The batch state byte beyond the state (bits 0-1) and HELD_BIT:
    PENDING_BIT = 8  # set in a batch step while the slot waits for the automaton (never between calls)
    OPEN_BIT = 16  # set while the slot is open (mirrors the open flags, for the step's one-pass check)
    SLOW = 0x80  # in BatchEngine.fast: the state byte needs the automaton
    FAST_BLOCK = 16  # requests a batch step tries to decide at once
    # The step's work queue is freed after a call that needed more than this.
    QUEUE_KEEP = 1 << 16


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define RC_UNLIKELY(x) __builtin_expect(!!(x), 0)
    #else
    #define RC_UNLIKELY(x) (x)
    #endif
    """
    # A branch hint: the batch step's fast pass lays out the common case as
    # straight-line code.
    bint RC_UNLIKELY(bint) noexcept nogil

cdef extern from *:
    """
    /* Whether any of 16 requests has a slot outside [0, cap) or an id inside
       [lo, lo + span] (unsigned compares; the SSE2 form compares biased
       signed values, which orders them the same way). */
    #if defined(__SSE2__) || defined(_M_X64)
    #include <emmintrin.h>
    static inline int rc_block_odd(const int32_t* slots, const int32_t* ids, uint32_t cap,
                                   uint32_t lo, uint32_t span) {
        const __m128i bias = _mm_set1_epi32((int)0x80000000u);
        const __m128i capb = _mm_set1_epi32((int)(cap ^ 0x80000000u));
        const __m128i spanb = _mm_set1_epi32((int)(span ^ 0x80000000u));
        const __m128i lov = _mm_set1_epi32((int)lo);
        __m128i ok = _mm_set1_epi32(-1);
        int k;
        for (k = 0; k < 16; k += 4) {
            __m128i s = _mm_xor_si128(_mm_loadu_si128((const __m128i*)(slots + k)), bias);
            __m128i t = _mm_xor_si128(_mm_sub_epi32(_mm_loadu_si128((const __m128i*)(ids + k)), lov), bias);
            ok = _mm_and_si128(ok, _mm_and_si128(_mm_cmpgt_epi32(capb, s), _mm_cmpgt_epi32(t, spanb)));
        }
        return _mm_movemask_epi8(ok) != 0xFFFF;
    }
    #else
    static inline int rc_block_odd(const int32_t* slots, const int32_t* ids, uint32_t cap,
                                   uint32_t lo, uint32_t span) {
        unsigned odd = 0;
        int k;
        for (k = 0; k < 16; k++)
            odd |= ((uint32_t)slots[k] >= cap) | ((uint32_t)ids[k] - lo <= span);
        return odd != 0;
    }
    #endif
    /* Bit shift that puts byte i of a uint64_t at memory offset i. */
    #if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    #define RC_LANE_SHIFT(i) (56 - 8 * (i))
    #else
    #define RC_LANE_SHIFT(i) (8 * (i))
    #endif
    """
    int RC_LANE_SHIFT(Py_ssize_t) noexcept nogil
    bint rc_block_odd(const int32_t* slots, const int32_t* ids, uint32_t cap, uint32_t lo,
                      uint32_t span) noexcept nogil


cdef struct _BatchOut:
    # A BatchStepResult's raw pointers, copied into C locals.
    uint8_t* r
    uint8_t* d
    uint8_t* e
    uint8_t* h
    uint8_t* i
    uint8_t* rel
    uint8_t* comp


cdef inline void _bind_out(_BatchOut* o, BatchStepResult res) noexcept:
    o.r, o.d, o.e, o.h = res.p_r, res.p_d, res.p_e, res.p_h
    o.i, o.rel, o.comp = res.p_i, res.p_rel, res.p_comp


cdef inline void _zero_rare(const _BatchOut* o, Py_ssize_t n) noexcept nogil:
    memset(o.e, 0, n)
    memset(o.d, 0, n)
    memset(o.h, 0, n)
    memset(o.rel, 0, n)
    memset(o.comp, 0, n)


cdef inline void _fast_range(const _Walk* w, int64_t* lo, uint64_t* span) noexcept nogil:
    # Ids with ``<uint64_t>(id - lo) > span`` lie outside the alphabet's range:
    # with nothing held they are decided by the state alone.  An empty
    # alphabet gets the range [0, 0]: id 0 then takes the general path, which
    # is right for any id, so only speed depends on this range.
    if w.ns:
        lo[0] = w.lo
        span[0] = <uint64_t>(w.hi - w.lo)
    else:
        lo[0] = 0
        span[0] = 0


cdef inline void _fast_range32(int64_t lo, uint64_t span, uint32_t* lo32, uint32_t* span32) noexcept nogil:
    # The same range for int32 ids: ``<uint32_t>id - lo32 <= span32`` holds for
    # every int32 id inside [lo, lo + span] (and, for an empty intersection,
    # for id 0 alone, which the general path then decides: correct either way).
    cdef int64_t a = lo, b = lo + <int64_t>span
    if a < -2147483648:
        a = -2147483648
    if b > 2147483647:
        b = 2147483647
    if a > b:
        a = b = 0
    lo32[0] = <uint32_t>a
    span32[0] = <uint32_t>(b - a)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline uint8_t _batch_token(const _Walk* w, const _BatchOut* o, Py_ssize_t i, uint32_t sv,
                                 int32_t* node_p, int32_t tok) noexcept nogil:
    """One token of one request through the automaton; writes entry ``i`` of
    every output that can be non-zero and returns the new state byte (``sv``
    is the old one, without PENDING_BIT; OPEN_BIT is kept)."""
    cdef int before = sv & 3
    cdef int state = before
    cdef int node = node_p[0]
    cdef _Move mv
    _advance(w, &state, &node, tok, &mv)
    node_p[0] = node
    # Any move out of a thinking state (reasoning, seeded, awaiting) into
    # content ends reasoning for the grammar.
    o.e[i] = before != CONTENT and state == CONTENT
    if mv.fired:
        # The delimiter's earlier tokens were held; they share its class.
        o.r[i] = 0
        o.d[i] = mv.consumed
        o.rel[i] = <uint8_t>mv.released
        o.comp[i] = <uint8_t>(mv.fired - 1)
    elif w.depth[node]:
        o.r[i] = 0
        o.h[i] = 1
        o.rel[i] = <uint8_t>mv.released
    else:
        # The new token itself was decided, to the side it arrived on.
        o.r[i] = mv.was_reasoning
        o.rel[i] = <uint8_t>(mv.released - 1)
    o.i[i] = state == REASONING or state == SEEDED
    return <uint8_t>(state | (HELD_BIT if w.depth[node] else 0) | (sv & OPEN_BIT))


cdef class BatchEngine:
    """Reasoning state for many requests in flat arrays."""
    cdef _Tables t
    cdef readonly Py_ssize_t capacity
    cdef object _state_arr, _node_arr, _open_arr
    cdef uint8_t* st
    cdef int32_t* nd
    cdef uint8_t* op
    # For each state byte: is_reasoning of an id outside the alphabet's range
    # when the byte alone decides it (open, nothing held or pending, not
    # awaiting), else SLOW.
    cdef uint8_t fast[32]
    cdef Py_ssize_t* queue  # step(): positions that need the automaton
    cdef Py_ssize_t queue_cap

    def __cinit__(self, tables, capacity):
        cdef int b
        for b in range(32):
            if (b & OPEN_BIT) and not (b & (HELD_BIT | PENDING_BIT)) and (b & 3) != AWAITING:
                self.fast[b] = (b & 3) == REASONING or (b & 3) == SEEDED
            else:
                self.fast[b] = SLOW
        self.queue = NULL
        self.queue_cap = 0
        self.t = _Tables(tables)
        self.capacity = check_capacity(capacity, 1)
        self._state_arr = np.zeros(capacity, dtype=np.uint8)
        self._node_arr = np.zeros(capacity, dtype=np.int32)
        self._open_arr = np.zeros(capacity, dtype=np.uint8)
        self.st = <uint8_t*>cnp.PyArray_DATA(self._state_arr)
        self.nd = <int32_t*>cnp.PyArray_DATA(self._node_arr)
        self.op = <uint8_t*>cnp.PyArray_DATA(self._open_arr)

    def __dealloc__(self):
        free(self.queue)

    cdef Py_ssize_t _check_slot(self, slot) except -1:
        if not isinstance(slot, (int, np.integer)) or isinstance(slot, bool):
            raise TypeError(f"slot must be an int, not {type(slot).__name__}")
        s = int(slot)
        if not 0 <= s < self.capacity:
            raise ValueError(f"slot {s} is out of range for capacity {self.capacity}")
        return s

    def open(self, slot, state):
        cdef Py_ssize_t s = self._check_slot(slot)
        if state not in (CONTENT, REASONING, SEEDED, AWAITING):
            raise ValueError(f"invalid engine state {state!r}")
        self.st[s] = <uint8_t>(state | OPEN_BIT)
        self.nd[s] = self.t.root[<int>state]
        self.op[s] = 1

    def close(self, slot):
        cdef Py_ssize_t s = self._check_slot(slot)
        self.op[s] = 0
        self.st[s] = CONTENT
        self.nd[s] = self.t.root[CONTENT]

    def finish(self, slot):
        """Release the slot's held tokens: (ids, whether they are reasoning)."""
        cdef Py_ssize_t s = self._check_slot(slot)
        if not self.op[s]:
            raise ValueError(f"slot {s} is not open")
        held = self.t.tables.paths[self.nd[s]]
        cdef int state = self.st[s] & 3
        reasoning = state == REASONING or state == SEEDED
        if held and state == AWAITING:
            state = CONTENT
        self.st[s] = <uint8_t>(state | OPEN_BIT)
        self.nd[s] = self.t.root[state]
        return held, reasoning

    def is_open(self, slot):
        return bool(self.op[self._check_slot(slot)])

    def state_of(self, slot):
        return int(self.st[self._check_slot(slot)] & 3)

    def held_ids(self, slot):
        return self.t.tables.paths[self.nd[self._check_slot(slot)]]

    def open_mask(self):
        return self._open_arr.astype(bool)

    def thinking_mask(self):
        """Open requests whose grammar must stay suspended (not in content)."""
        return (self._open_arr != 0) & ((self._state_arr & 3) != CONTENT)

    @cython.boundscheck(False)
    @cython.wraparound(False)
    cdef int _check_slots(self, const int32_t* slots, Py_ssize_t m) except -1:
        # One pass for the common case (every slot in range and open): an
        # unsigned compare catches negative slots too, and the open flags are
        # ANDed without a branch.  Only a failed pass looks for the culprit.
        cdef Py_ssize_t j
        cdef int32_t s
        cdef uint32_t cap = <uint32_t>self.capacity  # at most MAX_CAPACITY (int32)
        cdef const uint8_t* op = self.op
        cdef uint8_t all_open = 1
        for j in range(m):
            if <uint32_t>slots[j] >= cap:
                break
            all_open &= op[slots[j]]
        else:
            if all_open:
                return 0
        for j in range(m):
            s = slots[j]
            if s < 0 or s >= self.capacity:
                raise ValueError(f"slot {s} is out of range for capacity {self.capacity}")
            if not self.op[s]:
                raise ValueError(f"slot {s} is not open")
        return 0

    cdef BatchStepResult _out(self, out, Py_ssize_t n):
        if out is None:
            return BatchStepResult(n)
        if not isinstance(out, BatchStepResult):
            raise TypeError(f"out must be a BatchStepResult, not {type(out).__name__}")
        if (<BatchStepResult>out).cap < n:
            raise ValueError(f"out holds {(<BatchStepResult>out).cap} entries; this step needs {n}")
        (<BatchStepResult>out).check_writeable()
        return <BatchStepResult>out

    def step(self, slots, token_ids, out=None):
        """One new token for each listed request; see ReasoningBatch.step."""
        cdef cnp.ndarray s_arr = _int32_input(slots, "slots", False)
        cdef cnp.ndarray t_arr = _int32_input(token_ids, "token_ids", True)
        cdef Py_ssize_t m = s_arr.shape[0]
        if t_arr.shape[0] != m:
            raise ValueError(f"slots ({m}) and token_ids ({t_arr.shape[0]}) differ in length")
        cdef BatchStepResult res = self._out(out, m)
        if out is not None:
            # An input that is a view of out='s memory would change under the
            # step's writes: the step reads a copy of it (as the twin does).
            if res.overlaps(s_arr):
                s_arr = s_arr.copy()
            if res.overlaps(t_arr):
                t_arr = t_arr.copy()
        cdef const int32_t* sp = <const int32_t*>cnp.PyArray_DATA(s_arr)
        # Checks every slot before any request's state changes (see _run_step).
        self._run_step(sp, <const int32_t*>cnp.PyArray_DATA(t_arr), m, res)
        res.size = m
        return res if res.cap == m else res.view(m)

    def step_ragged(self, slots, offsets, token_ids, out=None):
        """Several new tokens per request: ``token_ids[offsets[j]:offsets[j+1]]`` for ``slots[j]``."""
        cdef cnp.ndarray s_arr = _int32_input(slots, "slots", False)
        cdef cnp.ndarray o_arr = _int32_input(offsets, "offsets", False)
        cdef cnp.ndarray t_arr = _int32_input(token_ids, "token_ids", True)
        cdef Py_ssize_t m = s_arr.shape[0], n = t_arr.shape[0], j
        if o_arr.shape[0] != m + 1:
            raise ValueError(f"offsets must have len(slots) + 1 = {m + 1} entries, not {o_arr.shape[0]}")
        cdef const int32_t* op = <const int32_t*>cnp.PyArray_DATA(o_arr)
        if op[0] != 0 or op[m] != n:
            raise ValueError("offsets must start at 0 and end at len(token_ids)")
        for j in range(m):
            if op[j + 1] < op[j]:
                raise ValueError("offsets must be non-decreasing")
        cdef const int32_t* sp = <const int32_t*>cnp.PyArray_DATA(s_arr)
        self._check_slots(sp, m)
        cdef BatchStepResult res = self._out(out, n)
        if out is not None:
            # Inputs that view out='s memory would change under the writes
            # after being checked: the step reads copies of them (nothing has
            # been written yet, so the copies hold what was checked).
            if res.overlaps(s_arr):
                s_arr = s_arr.copy()
                sp = <const int32_t*>cnp.PyArray_DATA(s_arr)
            if res.overlaps(o_arr):
                o_arr = o_arr.copy()
                op = <const int32_t*>cnp.PyArray_DATA(o_arr)
            if res.overlaps(t_arr):
                t_arr = t_arr.copy()
        self._run(sp, <const int32_t*>cnp.PyArray_DATA(t_arr), op, m, res)
        res.size = n
        return res if res.cap == n else res.view(n)

    cdef Py_ssize_t* _queue_for(self, Py_ssize_t m) except NULL:
        cdef Py_ssize_t* grown
        if m > self.queue_cap or self.queue == NULL:
            grown = <Py_ssize_t*>realloc(self.queue, max(m, 1) * sizeof(Py_ssize_t))
            if grown == NULL:
                raise MemoryError()
            self.queue = grown
            self.queue_cap = max(m, 1)
        return self.queue

    cdef void _trim_queue(self) noexcept:
        if self.queue_cap > QUEUE_KEEP:
            free(self.queue)
            self.queue = NULL
            self.queue_cap = 0

    @cython.boundscheck(False)
    @cython.wraparound(False)
    cdef int _run_step(self, const int32_t* slots, const int32_t* tokens, Py_ssize_t m,
                       BatchStepResult res) except -1:
        # One token per request, in two passes.  The first decides every
        # request whose state byte settles it alone (an id outside the
        # alphabet's range, nothing held: one table read) and queues the
        # rest, checking each slot on the way (in range here; open through
        # the table, whose entry for a closed slot is SLOW).  It changes no
        # state but PENDING_BIT, which marks a queued slot so that its later
        # tokens in this step (a slot may be listed twice) are queued too, in
        # order.  A bad slot therefore raises with every state as it was.
        # The second pass walks the queued requests through the automaton.
        # The first pass goes FAST_BLOCK requests at a time while a block is
        # that simple (the common case): vector checks, then the state reads,
        # with each output written as two 8-byte stores instead of 16 byte
        # stores (the stores were what bounded the one-by-one loop).  It has
        # no call, so its pointers stay in registers; the uint8 stores may
        # alias anything, so everything it reads is in locals.
        cdef Py_ssize_t* queue = self._queue_for(m)
        cdef uint8_t fast[32]
        memcpy(fast, self.fast, sizeof(fast))
        cdef uint8_t* st = self.st
        cdef uint8_t* o_r = res.p_r
        cdef uint8_t* o_i = res.p_i
        cdef uint32_t cap = <uint32_t>self.capacity  # at most MAX_CAPACITY (int32)
        cdef Py_ssize_t j = 0, q = 0, k, i, stop
        cdef int32_t slot
        cdef uint8_t sv, x
        cdef uint64_t v, acc8
        cdef Py_ssize_t h
        cdef bint bad = False
        cdef int64_t lo
        cdef uint64_t span
        cdef uint32_t lo32, span32
        _fast_range(&self.t.w, &lo, &span)
        _fast_range32(lo, span, &lo32, &span32)
        while j < m:
            if j + FAST_BLOCK <= m:
                # A whole block at once when every slot is in range, every id
                # outside the alphabet's range and every state byte fast: the
                # checks over the input are vector compares (rc_block_odd),
                # and the state reads need no branch.  Nothing is written but
                # this block's outputs, which the one-by-one loop below
                # rewrites if the block turns out not to be that simple.
                if not RC_UNLIKELY(rc_block_odd(slots + j, tokens + j, cap, lo32, span32)):
                    acc8 = 0
                    for h in range(0, FAST_BLOCK, 8):
                        v = 0
                        for i in range(8):
                            v |= (<uint64_t>fast[st[slots[j + h + i]]]) << RC_LANE_SHIFT(i)
                        memcpy(o_r + j + h, &v, 8)
                        memcpy(o_i + j + h, &v, 8)
                        acc8 |= v
                    if not RC_UNLIKELY(acc8 & 0x8080808080808080ULL):
                        j += FAST_BLOCK
                        continue
                stop = j + FAST_BLOCK
            else:
                stop = m
            while j < stop:
                slot = slots[j]
                if RC_UNLIKELY(<uint32_t>slot >= cap):
                    bad = True
                    break
                sv = st[slot]
                x = fast[sv]
                if RC_UNLIKELY((x & SLOW) or <uint64_t>(<int64_t>tokens[j] - lo) <= span):
                    queue[q] = j
                    q += 1
                    st[slot] = sv | PENDING_BIT
                else:
                    o_r[j] = x
                    o_i[j] = x
                j += 1
            if bad:
                break
        if not bad:
            for k in range(q):
                if not (st[slots[queue[k]]] & OPEN_BIT):
                    bad = True
                    break
        if bad:
            for k in range(q):
                st[slots[queue[k]]] &= ~PENDING_BIT
            self._trim_queue()
            self._check_slots(slots, m)  # raises, naming the first bad slot
            raise AssertionError("unreachable: a slot failed the step's check but not _check_slots")
        # reasoning_ended and the rarely-set outputs are zeroed in bulk;
        # a fast request writes only is_reasoning and in_reasoning.
        cdef _BatchOut o
        _bind_out(&o, res)
        _zero_rare(&o, m)
        cdef _Walk w = self.t.w
        cdef int32_t* nd = self.nd
        for k in range(q):
            j = queue[k]
            slot = slots[j]
            st[slot] = _batch_token(&w, &o, j, st[slot] & ~PENDING_BIT, &nd[slot], tokens[j])
        self._trim_queue()
        return 0

    @cython.boundscheck(False)
    @cython.wraparound(False)
    cdef void _run(self, const int32_t* slots, const int32_t* tokens, const int32_t* offsets,
                   Py_ssize_t m, BatchStepResult res) noexcept:
        # Several tokens per request (step_ragged; slots already checked);
        # the rules of _run_step, one request at a time.
        cdef _Walk w = self.t.w
        cdef _BatchOut o
        cdef uint8_t fast[32]
        memcpy(fast, self.fast, sizeof(fast))
        cdef uint8_t* st = self.st
        cdef int32_t* nd = self.nd
        cdef uint8_t* o_r = res.p_r
        cdef uint8_t* o_i = res.p_i
        cdef Py_ssize_t j, i
        cdef int32_t slot, tok
        cdef uint8_t sv, x
        cdef int64_t lo
        cdef uint64_t span
        _fast_range(&w, &lo, &span)
        _bind_out(&o, res)
        _zero_rare(&o, offsets[m])
        for j in range(m):
            slot = slots[j]
            sv = st[slot]
            for i in range(offsets[j], offsets[j + 1]):
                tok = tokens[i]
                x = fast[sv]
                if (x & SLOW) or <uint64_t>(<int64_t>tok - lo) <= span:
                    sv = _batch_token(&w, &o, i, sv, &nd[slot], tok)
                else:
                    o_r[i] = x
                    o_i[i] = x
            st[slot] = sv


cdef object _content_of = None


cdef inline object _pair_ints(object pair):
    try:
        a, b = pair
    except (TypeError, ValueError):
        raise ValueError("ReasoningSpan takes two (start, end) pairs") from None
    for v in (a, b):
        if type(v) is not int and (not isinstance(v, int) or isinstance(v, bool)):
            raise ValueError(f"ReasoningSpan indices must be ints, got {type(v).__name__}")
    return a, b


cdef class ReasoningSpan:
    """Half-open index pairs into a delta (MAX semantics), compiled.

    ``reasoning_with_delimiters = (d0, d1)`` and ``reasoning = (r0, r1)`` with
    ``0 <= d0 <= r0 <= r1 <= d1``.  Immutable; the extraction methods slice
    lists, tuples and strings in C.  ``reasoning_core.types`` documents the
    same class in Python (the pure engine's), with identical behaviour.
    """
    cdef Py_ssize_t _d0, _d1, _r0, _r1

    def __init__(self, reasoning_with_delimiters, reasoning):
        d0, d1 = _pair_ints(reasoning_with_delimiters)
        r0, r1 = _pair_ints(reasoning)
        if not (0 <= d0 <= r0 <= r1 <= d1):
            raise ValueError(f"ReasoningSpan needs 0 <= d0 <= r0 <= r1 <= d1, got {(d0, d1)} and {(r0, r1)}")
        if d1 > PY_SSIZE_T_MAX:
            raise ValueError(f"ReasoningSpan index {d1} is too large")
        self._d0, self._d1, self._r0, self._r1 = d0, d1, r0, r1

    @property
    def reasoning_with_delimiters(self):
        """``(d0, d1)``: the reasoning block with its delimiters, as half-open indices into the delta."""
        return (self._d0, self._d1)

    @property
    def reasoning(self):
        """``(r0, r1)``: the reasoning text alone, without its delimiters."""
        return (self._r0, self._r1)

    @property
    def is_empty(self):
        """Whether the span covers nothing (no reasoning and no delimiter in the delta)."""
        return self._d0 == self._d1

    def extract_reasoning(self, seq):
        """The reasoning part of ``seq`` (the delta's ids, or its text when the indices are into text)."""
        if type(seq) is list:
            return PyList_GetSlice(seq, self._r0, self._r1)
        return seq[self._r0:self._r1]

    def extract_content(self, seq):
        """``seq`` without the reasoning block and its delimiters, as the same kind of sequence where it concatenates."""
        cdef Py_ssize_t d0 = self._d0, d1 = self._d1
        if type(seq) is list:
            if d0 == d1:
                return PyList_GetSlice(seq, 0, PY_SSIZE_T_MAX)
            return PyList_GetSlice(seq, 0, d0) + PyList_GetSlice(seq, d1, PY_SSIZE_T_MAX)
        global _content_of
        if _content_of is None:  # bound on first use (a leaf module: no import circle)
            from reasoning_core._shared import content_of
            _content_of = content_of
        return _content_of(seq, d0, d1)

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        cdef ReasoningSpan o = <ReasoningSpan>other
        return self._d0 == o._d0 and self._d1 == o._d1 and self._r0 == o._r0 and self._r1 == o._r1

    def __hash__(self):
        return hash(((self._d0, self._d1), (self._r0, self._r1)))

    def __repr__(self):
        return f"ReasoningSpan(reasoning_with_delimiters={(self._d0, self._d1)!r}, reasoning={(self._r0, self._r1)!r})"

    def __reduce__(self):
        return (type(self), ((self._d0, self._d1), (self._r0, self._r1)))


cdef tuple _SEG_NAMES = ("content", "reasoning", "delimiter", "held", "start")


cdef class TokenSplit:
    """One delta split into reasoning, content, delimiters and held tokens, compiled.

    ``reasoning_core.types`` documents the same class in Python (the pure
    engine's), with identical behaviour; see there.
    """
    cdef object _prefix, _delta, _segs, _tokens, _bounds
    # 0, or 1 + the segment kind of Engine.split's per-token result: nothing
    # held before or after, one id (kept in _delta, an int) on that side, and
    # _segs None; every property answers from that as from the segment list.
    cdef int _whole
    cdef public object is_reasoning, awaiting_start

    def __init__(self, prefix, delta, segs, is_reasoning, awaiting_start=False, boundaries=()):
        self._prefix = prefix
        self._delta = delta
        self._segs = segs
        self._whole = 0
        self.is_reasoning = is_reasoning
        self.awaiting_start = awaiting_start
        self._tokens = None
        self._bounds = boundaries

    @property
    def boundaries(self):
        """Tokens whose bytes fall on more than one side of a delimiter.

        Only a parser that matches markers over token bytes (a marker that is
        not one whole token, e.g. ``.H`` + ``ere is my response:``) reports
        them.  Each is ``(index, pieces)``: ``index`` into ``tokens``, and
        ``pieces`` the ``(kind, byte_start, byte_end)`` ranges of that token's
        bytes, in order, with the segment kinds of ``segments``.  The token
        itself is in the segment of the delimiter it carries (``start`` or
        ``delimiter``; a terminator's token is ``content``, as the terminator is).
        """
        return [(i, [(_SEG_NAMES[k], a, b) for k, a, b in pieces]) for i, pieces in self._bounds]

    cdef list _toks(self):
        if self._tokens is None:
            d = self._delta
            if self._whole:
                d = [d]
            elif type(d) is not list:
                d = d.tolist() if hasattr(d, "tolist") else list(d)
            self._tokens = list(self._prefix) + d if self._prefix else d
        return self._tokens

    @property
    def tokens(self):
        """The ids ``segments`` index: tokens held over from the previous delta, then this delta."""
        return self._toks()

    @property
    def segments(self):
        """``(kind, start, end)`` ranges over ``tokens``, in order, each token in exactly one."""
        if self._whole:
            return [(_SEG_NAMES[self._whole - 1], 0, 1)]
        return [(_SEG_NAMES[k], a, b) for k, a, b in self._segs]

    cdef list _collect(self, int k1, int k2):
        cdef list toks
        cdef list out
        cdef Py_ssize_t a, b
        cdef int k
        if self._whole:
            k = self._whole - 1
            if k == k1 or k == k2:
                out = PyList_New(1)
                Py_INCREF(self._delta)
                PyList_SET_ITEM(out, 0, self._delta)
                return out
            return PyList_New(0)
        toks = self._toks()
        segs = self._segs
        if len(segs) == 1:  # one segment, one slice
            k, a, b = segs[0]
            return PyList_GetSlice(toks, a, b) if k == k1 or k == k2 else []
        out = []
        for k, a, b in segs:
            if k == k1 or k == k2:
                out.extend(PyList_GetSlice(toks, a, b))
        return out

    @property
    def content_ids(self):
        """The content tokens, in order."""
        return self._collect(SEG_CONTENT, SEG_CONTENT)

    @property
    def reasoning_ids(self):
        """The reasoning tokens (no delimiter), in order."""
        return self._collect(SEG_REASONING, SEG_REASONING)

    @property
    def delimiter_ids(self):
        """The consumed delimiter tokens (start delimiters and the others), in order."""
        return self._collect(SEG_DELIMITER, SEG_START)

    @property
    def held_ids(self):
        """Tokens held as a possible delimiter prefix, decided by a later delta (or ``finish()``)."""
        return self._collect(SEG_HELD, SEG_HELD)

    def __len__(self):
        if self._whole:
            return 1
        return self._segs[-1][2] if self._segs else 0

    def __repr__(self):
        return f"TokenSplit(segments={self.segments!r}, is_reasoning={self.is_reasoning!r})"

    def __eq__(self, other):
        if type(other).__name__ != "TokenSplit" or not hasattr(other, "segments"):
            return NotImplemented
        return (self.tokens, self.segments, self.is_reasoning) == (other.tokens, other.segments, other.is_reasoning)

    __hash__ = None


ctypedef fused _unit:
    uint8_t
    uint16_t
    uint32_t
    int64_t


@cython.boundscheck(False)
@cython.wraparound(False)
cdef tuple _walk(Engine self, const _unit* ids, Py_ssize_t n):
    # The engine's walk over ``n`` ids (or code points) from the state it is
    # in: ``(segments, n_prefix)``.
    cdef _Walk w = self.t.w  # by value: stores below cannot force reloads
    cdef Py_ssize_t i = 0, j
    cdef int state = self._state, node = self._node
    cdef int n_prefix = w.depth[node]
    cdef _Move mv
    cdef _Seg seg
    seg.cur = -1
    seg.start = 0
    seg.pos = 0
    cdef list segs = []
    while i < n:
        if w.depth[node] == 0:
            # Nothing held: ids outside the delimiter alphabet's range are
            # decided at once, so plain text is a tight scan.
            j = i
            if state == AWAITING:
                while j < n and (ids[j] < w.lo or ids[j] > w.hi):
                    j += 1
            else:
                j = _skip(&w, state, ids, i, n)
            if j > i:
                if state == REASONING or state == SEEDED:
                    _emit(segs, &seg, SEG_REASONING, j - i)
                else:
                    state = CONTENT  # AWAITING ends at the first content token
                    _emit(segs, &seg, SEG_CONTENT, j - i)
                i = j
                continue
        _advance(&w, &state, &node, ids[i], &mv)
        if mv.released:
            _emit(segs, &seg, SEG_REASONING if mv.was_reasoning else SEG_CONTENT, mv.released)
        if mv.fired:
            if not mv.consumed:
                _emit(segs, &seg, SEG_CONTENT, mv.fired)
            else:
                _emit(segs, &seg, SEG_START if state == REASONING else SEG_DELIMITER, mv.fired)
        i += 1
    if seg.cur >= 0:
        segs.append((seg.cur, seg.start, seg.pos))
    if w.depth[node]:
        segs.append((SEG_HELD, seg.pos, seg.pos + w.depth[node]))
    self._state = state
    self._node = node
    return segs, n_prefix


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline Py_ssize_t _skip(const _Walk* w, int state, const _unit* ids, Py_ssize_t j, Py_ssize_t n) noexcept nogil:
    # The first index from ``j`` (``n`` if none) whose id can move ``state``'s
    # root node: every id before it leaves the walk where it is.
    cdef int m, at
    cdef const uint32_t* c
    cdef const uint8_t* st
    cdef uint32_t x
    if _unit is int64_t:
        while j < n and _stays(w, state, ids[j]):
            j += 1
        return j
    else:
        if _unit is uint8_t:
            at = state * 3
        elif _unit is uint16_t:
            at = state * 3 + 1
        else:
            at = state * 3 + 2
        m = w.scan_n[at]
        if m == 0:
            return n
        if m < 0:
            while j < n and _stays(w, state, ids[j]):
                j += 1
            return j
        c = w.scan_c + at * 4
        if n - j < 16:
            # A short run (a streamed chunk): Latin-1 by the stay table, the
            # rest against the candidates.
            st = w.stay + state * 256
            while j < n:
                x = ids[j]
                if x < 256:
                    if not st[x]:
                        break
                elif x == c[0] or x == c[1] or x == c[2] or x == c[3]:
                    break
                j += 1
            return j
        if _unit is uint8_t:
            if m == 1:
                return rc_memchr_u8(ids, j, n, <uint8_t>c[0])
            return rc_scan_u8(ids, j, n, <uint8_t>c[0], <uint8_t>c[1], <uint8_t>c[2], <uint8_t>c[3])
        elif _unit is uint16_t:
            return rc_scan_u16(ids, j, n, <uint16_t>c[0], <uint16_t>c[1], <uint16_t>c[2], <uint16_t>c[3])
        else:
            return rc_scan_u32(ids, j, n, c[0], c[1], c[2], c[3])


cdef inline object _delta(object cls, object reasoning, object content, object field):
    # A StreamDelta (a tuple subclass) built as tuple.__new__ builds it, minus
    # the argument tuple and the call.
    cdef PyObject* o = (<_AllocType*>cls).tp_alloc(<_AllocType*>cls, 3)
    if o == NULL:
        raise MemoryError()
    Py_INCREF(reasoning)
    PyTuple_SET_ITEM(<object>o, 0, reasoning)
    Py_INCREF(content)
    PyTuple_SET_ITEM(<object>o, 1, content)
    Py_INCREF(field)
    PyTuple_SET_ITEM(<object>o, 2, field)
    cdef object result = <object>o  # a second reference: the allocation's is dropped
    Py_XDECREF(o)
    return result


cdef class DecodePush:
    """``ReasoningStreamDecoder.push`` compiled for its per-token case: a list of
    one id inside the vocabulary, decided at once, on the side of the last
    decided segment, with nothing pending on that side: a token whose text is
    known (a byte-level tokenizer's ``texts``, shared by both sides) is that
    text, any other is stepped by that side's ``DecodeStream``. Anything else
    goes to the decoder's own methods, called with the decoder (``slow``: the
    whole push; ``emit``: a decided id on a new side; the detokenizer's
    ``step``), so both give the same results."""

    cdef Engine eng
    cdef object dec, slow, emit, tok, r_det, c_det, field, cls, texts
    cdef object r_stream, c_stream, r_step, c_step  # each side's DecodeStream and its step
    cdef int64_t limit

    def __init__(self, Engine eng, dec, slow, emit, tok, r_det, c_det, field, cls, int64_t limit, texts=None):
        if type(cls) is not type or not issubclass(cls, tuple):
            raise TypeError("cls must be a tuple subclass")
        if texts is not None and type(texts) is not list:
            raise TypeError("texts must be a list or None")
        self.eng = eng
        self.dec = dec
        self.slow = slow
        self.emit = emit
        self.tok = tok
        self.r_det = r_det
        self.c_det = c_det
        self.field = field
        self.cls = cls
        self.limit = limit
        self.texts = texts

    def push(self, ids):
        cdef int overflow = 0
        cdef int side
        cdef long long v
        cdef object t, det, out, stream, entry
        if type(ids) is not list or len(<list>ids) != 1:
            return self.slow(self.dec, ids)
        t = (<list>ids)[0]
        if type(t) is not int:
            return self.slow(self.dec, ids)
        v = PyLong_AsLongLongAndOverflow(t, &overflow)
        if overflow or v < 0 or v >= self.limit:
            return self.slow(self.dec, ids)
        side = self.eng._side_one(v)
        if side < 0:
            return self.slow(self.dec, ids)
        if side != self.dec._last:
            return self.emit(self.dec, ids, [(side, 0, 1)])
        det = self.c_det if side == SEG_CONTENT else self.r_det
        out = None
        if self.texts is not None and v < PyList_GET_SIZE(self.texts):
            # (the list never shrinks; an entry is a str, None or _UNSEEN)
            entry = <object>PyList_GET_ITEM(self.texts, <Py_ssize_t>v)
            if PyUnicode_CheckExact(entry):
                if not det._pending:
                    out = entry
            elif entry is not None:  # not met yet: the detokenizer learns it
                out = det.step(ids)
        if out is None:
            stream = det._stream
            if stream is None:  # (made when first needed)
                out = det.step(ids)
            else:
                # (a detokenizer replaces its DecodeStream when it settles: the
                # bound step is kept per stream object)
                if side == SEG_CONTENT:
                    if stream is not self.c_stream:
                        self.c_stream, self.c_step = stream, stream.step
                    out = self.c_step(self.tok, t)
                else:
                    if stream is not self.r_stream:
                        self.r_stream, self.r_step = stream, stream.step
                    out = self.r_step(self.tok, t)
                if out is None or det._pending:
                    out = det._after(out, ids)
                else:
                    det._ctx = ids  # the context for settling, as the detokenizer keeps it
        if side == SEG_CONTENT:
            return _delta(self.cls, "", out, self.field)
        return _delta(self.cls, out, "", self.field)


def extends(tuple ids not None, tuple prev not None):
    """Whether ``ids`` starts with every item of ``prev`` (equal items; the
    same objects compare without a call): a check that a caller's growing id
    sequence extends the one it passed before, at pointer speed."""
    cdef Py_ssize_t i, m = PyTuple_GET_SIZE(prev)
    cdef PyObject* a
    cdef PyObject* b
    if PyTuple_GET_SIZE(ids) < m:
        return False
    for i in range(m):
        a = PyTuple_GET_ITEM(ids, i)
        b = PyTuple_GET_ITEM(prev, i)
        if a != b and not (<object>a == <object>b):
            return False
    return True


# ---------------------------------------------------------------------------
# The pass-through gate of a text-level streaming wrapper (vllm-mlx's tool
# parsers): per delta, the common case decided without a parser step.
# ---------------------------------------------------------------------------

cdef extern from "Python.h":
    Py_ssize_t PyUnicode_FindChar(object text, Py_UCS4 ch, Py_ssize_t start, Py_ssize_t end, int direction) except -2
    Py_UCS4 PyUnicode_ReadChar(object text, Py_ssize_t index) except? <Py_UCS4>-1
    Py_ssize_t PyUnicode_Find(object text, object sub, Py_ssize_t start, Py_ssize_t end, int direction) except -2
    Py_UCS4 PyUnicode_READ_CHAR(object text, Py_ssize_t index)
    Py_ssize_t PyUnicode_Tailmatch(object text, object sub, Py_ssize_t start, Py_ssize_t end, int direction) except -1
    object PyUnicode_Substring(object text, Py_ssize_t start, Py_ssize_t end)


cdef class TextGate:
    """A stream's state for ``text_gate``: ``cur``, the ``current_text`` object of
    the last delta (a delta continues it when its ``previous_text`` is that
    object); ``idle``, what a plain delta gets next (0 the wrapper reads it,
    1 it passes through as content, 2 it is dropped, 3 it is kept for the
    parser, 4 it goes to the piece function, 5 it goes to ``reader``, 6 it
    is kept for the parser unless it holds a character of ``keep``);
    ``pend``, the deltas kept; ``reader`` and ``index`` (state 5), the reader
    of the open call's arguments and the call's index; ``quiet`` (state 6),
    ``None`` or a dict from a marker to ``(keep, quiet)``: the markers that,
    as a whole delta, the parser would read without a word and then wait in
    another such stretch (whose ``keep`` and ``quiet`` they give); in state 7
    (a run of characters the parser reads without a word, such as a name),
    ``keep`` is the characters the run may hold and ``budget`` how many it
    may still take; in states 8 and 9 (a call the gate reads itself, given
    ``text_gate``'s ``calls``) ``pend`` holds the call's text so far,
    ``budget`` how many more characters its name may take (8), and
    ``reader`` the feed function of its arguments' reader (9); in state 10
    (plain content with a marker cut off by the last delta's end, given
    ``holds``) ``pend`` holds that marker's start; ``done``, the
    calls the gate read to their end (each the list of its deltas), for the
    caller to take."""

    cdef public object cur
    cdef public int idle
    cdef public list pend
    cdef public str keep
    cdef public object reader
    cdef public Py_ssize_t index
    cdef public object quiet
    cdef public Py_ssize_t budget
    cdef public list done

    def __init__(self, cur=None):
        self.cur = cur
        self.idle = 0
        self.pend = []
        self.keep = ""
        self.reader = None
        self.index = 0
        self.quiet = None
        self.budget = 0
        self.done = []


cdef inline bint _has_any(str text, str chars) except -1:
    cdef Py_ssize_t i, n = PyUnicode_GET_LENGTH(text)
    for i in range(PyUnicode_GET_LENGTH(chars)):
        if PyUnicode_FindChar(text, PyUnicode_ReadChar(chars, i), 0, n, 1) >= 0:
            return True
    return False


cdef inline bint _only(str text, str chars) except -1:
    """Every character of ``text`` is one of ``chars``."""
    cdef Py_ssize_t i, n = PyUnicode_GET_LENGTH(chars)
    for i in range(PyUnicode_GET_LENGTH(text)):
        if PyUnicode_FindChar(chars, PyUnicode_ReadChar(text, i), 0, n, 1) < 0:
            return False
    return True


cdef bint _none_ends_in(object current_text, Py_ssize_t dlen, tuple closers) except -1:
    """No marker of ``closers`` ends in the last ``dlen`` characters of
    ``current_text`` (a ``str``): each is searched for from where one ending
    in them could start, so a marker that ended in the text before is not
    seen again."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(current_text), start, i
    cdef object m
    for i in range(PyTuple_GET_SIZE(closers)):
        m = <object>PyTuple_GET_ITEM(closers, i)
        start = n - dlen - PyUnicode_GET_LENGTH(m) + 1
        if PyUnicode_Find(current_text, m, start if start > 0 else 0, n, 1) >= 0:
            return False
    return True


cdef object _kept(TextGate st, delta_text, current_text):
    """A delta kept for the parser (answered ``None``)."""
    st.pend.append(delta_text)
    st.cur = current_text
    return None


cdef object _keep_opener(TextGate st, openers, bint open6, str delta_text, current_text):
    """A call's opener from plain content, kept: the state becomes 3, or 6 with
    the ``(keep, quiet)`` pair ``openers`` (a dict) gives it."""
    st.pend.append(delta_text)
    st.cur = current_text
    if open6:
        nxt = (<dict>openers)[delta_text]
        st.keep = <str>PyTuple_GET_ITEM(nxt, 0)
        st.quiet = <object>PyTuple_GET_ITEM(nxt, 1)
        st.idle = 6
    else:
        st.idle = 3
    return None


cdef Py_ssize_t _held_at(str text, tuple markers) except -3:
    """Where the first of ``markers`` starts in ``text``: -2 for a whole one,
    its start for one cut off by the end of ``text`` (-1: neither); at one
    start, a cut-off marker is seen before a whole one (the parser's scan)."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, k, ml, j, nm = PyTuple_GET_SIZE(markers)
    cdef str m
    cdef bint ok
    cdef Py_UCS4 c
    for i in range(n):
        c = PyUnicode_READ_CHAR(text, i)
        for j in range(nm):
            m = <str>PyTuple_GET_ITEM(markers, j)
            ml = PyUnicode_GET_LENGTH(m)
            if ml > n - i and PyUnicode_READ_CHAR(m, 0) == c:
                ok = True
                for k in range(1, n - i):
                    if PyUnicode_READ_CHAR(text, i + k) != PyUnicode_READ_CHAR(m, k):
                        ok = False
                        break
                if ok:
                    return i
        for j in range(nm):
            m = <str>PyTuple_GET_ITEM(markers, j)
            ml = PyUnicode_GET_LENGTH(m)
            if ml <= n - i and PyUnicode_READ_CHAR(m, 0) == c:
                if PyUnicode_Tailmatch(text, m, i, i + ml, -1):
                    return -2
    return -1


cdef dict _ARGS_CALL = {"index": 0, "type": "function", "function": None}


cdef inline object _args_answer(Py_ssize_t index, object text):
    """``{"tool_calls": [{"index": index, "type": "function", "function":
    {"arguments": text}}]}`` (the entry copied from a template: cheaper than
    building it key by key)."""
    cdef dict call = PyDict_Copy(_ARGS_CALL)
    call["index"] = index
    call["function"] = {"arguments": text}
    return {"tool_calls": [call]}


cdef inline bint _json_plain(str text) except -1:
    """No character of ``text`` ends a plain run of a JSON string (a quote, a
    backslash, a control character, a surrogate)."""
    cdef Py_ssize_t i
    cdef Py_UCS4 c
    for i in range(PyUnicode_GET_LENGTH(text)):
        c = PyUnicode_READ_CHAR(text, i)
        if c == 34 or c == 92 or c < 0x20 or 0xD800 <= c <= 0xDFFF:
            return False
    return True


cdef Py_ssize_t _json_lex(str text, Py_ssize_t t) except -1:
    """Where JSON text read whole stands after ``text``, from ``t`` (0 outside
    a string, 1 inside one, 2 after its backslash, 3-6 inside a ``\\u``
    escape, 6 - t + 1 of its digits read)."""
    cdef Py_ssize_t i
    cdef Py_UCS4 c
    for i in range(PyUnicode_GET_LENGTH(text)):
        c = PyUnicode_READ_CHAR(text, i)
        if t == 0:
            if c == 34:
                t = 1
        elif t == 1:
            if c == 34:
                t = 0
            elif c == 92:
                t = 2
        elif t == 2:
            t = 6 if c == 117 else 1
        else:
            t = t - 1 if t > 3 else 1
    return t


cdef object _content_held(TextGate st, str text, Py_ssize_t at, current_text):
    """``text`` read against state 1's markers (``at``, from ``_held_at``, not
    -2): the content before ``at`` answered, the rest kept (state 10)."""
    st.cur = current_text
    if at < 0:
        if st.pend:
            st.pend = []
        st.idle = 1
        return {"content": text} if PyUnicode_GET_LENGTH(text) else None
    st.pend = [PyUnicode_Substring(text, at, PyUnicode_GET_LENGTH(text))]
    st.idle = 10
    return {"content": PyUnicode_Substring(text, 0, at)} if at else None


cdef object _to_stepper(TextGate st, stepper, str delta_text, current_text, request):
    """``stepper`` given the delta joined to the deltas kept before it."""
    pend = st.pend
    if pend:
        pend.append(delta_text)
        text = "".join(pend)
        st.pend = []
    else:
        text = delta_text
    st.cur = current_text
    return stepper(text, current_text, request)


def text_gate(TextGate st not None, str triggers not None, str keep_triggers not None, keeps, general,
              piece=None, str piece_triggers not None="", openers=None, after_feed=None,
              stepper=None, calls=None, holds=None):
    """The per-delta function of a vllm-mlx tool parser (its
    ``extract_tool_calls_streaming`` signature): a ``str`` delta that continues
    the stream (``previous_text is st.cur``, a ``str``, and ``current_text`` a
    ``str`` as long as the two together) and holds none of ``triggers`` is
    passed through as content (``idle`` 1) or dropped (2) without a parser
    step; inside a call (3) a delta with none of ``keep_triggers``, or one
    that ``keeps`` accepts, is kept in ``st.pend``: ``keeps`` is either
    ``keeps(current_text, delta_text)``, a tuple of markers, accepting a
    delta in which none of them ends (``current_text`` a ``str``), or
    ``None``, accepting none; inside a
    call whose arguments stream as read (4) a delta with none of
    ``piece_triggers`` goes to ``piece(delta_text)``; inside arguments sent
    as the model wrote them (5) a non-empty delta is fed to ``st.reader``
    (``feed(buf, pos, eof)`` -> ``(end, status)``): read whole with the value
    going on (status 0), it is kept in ``st.pend`` and answered as that piece
    of the arguments of call ``st.index``, else ``after_feed(delta_text, end,
    status)`` answers it; in a stretch the
    parser reads without a word (6) a delta with none of the characters of
    ``st.keep`` is kept in ``st.pend``, and so is a delta that is a key of
    ``st.quiet`` (a dict, or ``None``): ``st.keep`` and ``st.quiet`` become
    the ``(keep, quiet)`` pair it maps to.  In states 1 and 2 a
    delta that is exactly one of ``openers`` (markers after which, read from
    plain content, nothing is sent and the state is 3) is kept, and the state
    becomes 3; ``openers`` may instead be a dict from such markers to the
    ``(keep, quiet)`` pair of the stretch read without a word that they
    open: the delta is kept and the state becomes 6 with that pair.  In
    states 3 and 6, given ``stepper``, a delta that is not kept goes to it
    joined to the deltas kept before it: ``stepper(text, current_text,
    request)`` (``st.pend`` emptied, ``st.cur`` set to ``current_text`` first).
    In a run the parser reads without a word (7) a delta made only of the
    characters of ``st.keep``, and no longer than ``st.budget``, is kept in
    ``st.pend`` (``st.budget`` goes down by its length); another goes to
    ``stepper`` as in state 6.
    Given ``calls``, ``(opener, name_chars, name_limit, args_marker, open_call,
    replay)``, the gate reads a call ``opener NAME args_marker
    VALUE`` itself while it comes in whole pieces: in state 1 a delta that is
    ``opener`` (nothing kept) is kept, ``st.budget`` becomes ``name_limit``
    and the state 8; in 8 a non-empty delta made only of ``name_chars``, no
    longer than ``st.budget``, is kept (``st.budget`` goes down by its
    length); ``args_marker`` after at least one such character is kept, the
    state becomes 9 and ``open_call(st.pend)`` answers it (and sets
    ``st.reader`` to a ``feed(buf, pos, eof)`` function); another delta goes
    to ``stepper`` as in state 6.  In 9 ``st.budget`` is where the arguments
    read so far stand (0 outside a string, 1 inside one, 2 after its ``\\``,
    3-6 inside a ``\\u`` escape; set to 0 at ``args_marker``): at 1 a
    non-empty delta with no ``"``, ``\\``, control character or surrogate
    goes on the string (a JSON reader would read it whole, its state
    unchanged) and is kept and answered as below without the reader;
    otherwise a non-empty delta is fed to ``st.reader``: read whole with the value going on (status 0), it is kept
    and answered as that piece of the arguments of call ``st.index``; read
    whole with the value ending at its end (status 1), it is answered as that
    piece too, the call's deltas (``st.pend`` and it) go to ``st.done`` as one
    list, and the state becomes 1.  Any other delta in state 9, and any delta that leaves the
    gate in state 9 for ``general``, first calls ``replay()`` (which is to
    empty ``st.pend`` and leave state 9).
    Given ``holds`` (a tuple of markers: where state 1 is plain content that
    a parser reads with them, nothing held), a delta in state 1 with one of
    ``triggers`` is read against them: where none of them starts in it (whole,
    or cut off by its end) it is content as it is; where a cut-off one starts
    first (at ``i``), ``delta_text[:i]`` is content (``None`` when empty),
    the rest is kept and the state becomes 10.  In 10 the kept text and the
    delta are read the same way together (content, or content and a new kept
    rest); where a whole marker starts first, the delta goes to ``stepper``
    joined to the kept text, as in state 6.
    Anything else goes to ``general`` with the same arguments."""
    if keeps is not None and type(keeps) is tuple:
        for m in <tuple>keeps:
            if type(m) is not str or not m:
                raise TypeError("text_gate: keeps must be callable or a tuple of non-empty str")
    if openers is not None:
        if type(openers) is not tuple and type(openers) is not dict:
            raise TypeError("text_gate: openers must be a tuple or a dict")
        for m in openers:
            if type(m) is not str or not m:
                raise TypeError("text_gate: openers must be a tuple of non-empty str")
            if type(openers) is dict:
                nxt = (<dict>openers)[m]
                if type(nxt) is not tuple or len(nxt) != 2 or type(nxt[0]) is not str or (
                        nxt[1] is not None and type(nxt[1]) is not dict):
                    raise TypeError("text_gate: openers (a dict) map a marker to a (keep, quiet) pair")
    cdef bint open6 = type(openers) is dict
    if open6:
        openers = dict(openers)  # as checked: a later change to the caller's dict is not seen
    cdef bint closers = type(keeps) is tuple
    if holds is not None:
        if type(holds) is not tuple or not holds:
            raise TypeError("text_gate: holds must be a non-empty tuple of non-empty str")
        for m in <tuple>holds:
            if type(m) is not str or not m:
                raise TypeError("text_gate: holds must be a non-empty tuple of non-empty str")
    cdef object c_open = None, c_names = None, c_args = None, c_opencall = None, c_replay = None
    cdef Py_ssize_t c_limit = 0
    if calls is not None:
        if type(calls) is not tuple or len(calls) != 6:
            raise TypeError("text_gate: calls must be a tuple (opener, name_chars, name_limit, args_marker, "
                            "open_call, replay)")
        c_open, c_names, c_limit_o, c_args, c_opencall, c_replay = calls
        if type(c_open) is not str or not c_open or type(c_args) is not str or not c_args \
                or type(c_names) is not str:
            raise TypeError("text_gate: calls' opener and args_marker must be non-empty str, name_chars a str")
        if type(c_limit_o) is not int or c_limit_o < 0:
            raise TypeError("text_gate: calls' name_limit must be an int >= 0")
        if not (callable(c_opencall) and callable(c_replay)):
            raise TypeError("text_gate: calls' open_call and replay must be callable")
        c_limit = c_limit_o

    def gate(previous_text, current_text, delta_text, previous_token_ids=None, current_token_ids=None,
             delta_token_ids=None, request=None):
        cdef int idle
        cdef Py_ssize_t n, end, at
        if previous_text is st.cur and type(delta_text) is str and type(current_text) is str and \
                type(previous_text) is str and PyUnicode_GET_LENGTH(current_text) == \
                PyUnicode_GET_LENGTH(previous_text) + PyUnicode_GET_LENGTH(delta_text):
            idle = st.idle
            if idle == 1:
                if not _has_any(<str>delta_text, triggers):
                    st.cur = current_text
                    return {"content": delta_text} if PyUnicode_GET_LENGTH(delta_text) else None
                if openers is not None and delta_text in openers:
                    return _keep_opener(st, openers, open6, <str>delta_text, current_text)
                if c_open is not None and not st.pend and delta_text == c_open:
                    st.budget = c_limit
                    st.idle = 8
                    return _kept(st, delta_text, current_text)
                if holds is not None and not st.pend:
                    at = _held_at(<str>delta_text, <tuple>holds)
                    if at != -2:
                        return _content_held(st, <str>delta_text, at, current_text)
            elif idle == 10:
                if holds is not None and PyList_GET_SIZE(st.pend) == 1:
                    text = <str><object>PyList_GET_ITEM(st.pend, 0) + <str>delta_text
                    at = _held_at(text, <tuple>holds)
                    if at != -2:
                        return _content_held(st, text, at, current_text)
                    if stepper is not None:
                        return _to_stepper(st, stepper, <str>delta_text, current_text, request)
            elif idle == 9:
                n = PyUnicode_GET_LENGTH(delta_text)
                if c_open is not None and n:
                    if st.budget == 1 and _json_plain(<str>delta_text):
                        st.pend.append(delta_text)
                        st.cur = current_text
                        return _args_answer(st.index, delta_text)
                    r = st.reader(delta_text, 0, False)
                    end = r[0]
                    if end == n:
                        status = r[1]
                        if status == 0:
                            st.budget = _json_lex(<str>delta_text, st.budget)
                            st.pend.append(delta_text)
                            st.cur = current_text
                            return _args_answer(st.index, delta_text)
                        if status == 1:
                            st.cur = current_text
                            pend = st.pend
                            pend.append(delta_text)
                            st.done.append(pend)
                            st.pend = []
                            st.idle = 1
                            return _args_answer(st.index, delta_text)
            elif idle == 8:
                if c_open is not None:
                    n = PyUnicode_GET_LENGTH(delta_text)
                    if n and n <= st.budget and _only(<str>delta_text, <str>c_names):
                        st.budget -= n
                        return _kept(st, delta_text, current_text)
                    if st.budget < c_limit and delta_text == c_args:
                        st.pend.append(delta_text)
                        st.cur = current_text
                        st.budget = 0
                        st.idle = 9
                        return c_opencall(st.pend)
                    if stepper is not None:
                        return _to_stepper(st, stepper, <str>delta_text, current_text, request)
            elif idle == 3:
                if not _has_any(<str>delta_text, keep_triggers) or (
                        _none_ends_in(current_text, PyUnicode_GET_LENGTH(delta_text), <tuple>keeps) if closers
                        else keeps is not None and keeps(current_text, delta_text)):
                    return _kept(st, delta_text, current_text)
                if stepper is not None:
                    return _to_stepper(st, stepper, <str>delta_text, current_text, request)
            elif idle == 4:
                if piece is not None and not _has_any(<str>delta_text, piece_triggers):
                    st.cur = current_text
                    return piece(delta_text)
            elif idle == 5:
                if after_feed is not None and PyUnicode_GET_LENGTH(delta_text):
                    r = st.reader.feed(delta_text, 0, False)
                    st.cur = current_text
                    if r[1] == 0 and r[0] == PyUnicode_GET_LENGTH(delta_text):
                        st.pend.append(delta_text)
                        return _args_answer(st.index, delta_text)
                    return after_feed(delta_text, r[0], r[1])
            elif idle == 6:
                if st.keep is None:
                    raise TypeError("text_gate: TextGate.keep must be a str")
                if not _has_any(<str>delta_text, st.keep):
                    return _kept(st, delta_text, current_text)
                if st.quiet is not None:
                    if type(st.quiet) is not dict:
                        raise TypeError("text_gate: TextGate.quiet must be a dict or None")
                    nxt = (<dict>st.quiet).get(delta_text)
                    if nxt is not None:
                        if type(nxt) is not tuple or PyTuple_GET_SIZE(nxt) != 2 or \
                                type(<object>PyTuple_GET_ITEM(nxt, 0)) is not str:
                            raise TypeError("text_gate: TextGate.quiet maps a marker to a (keep, quiet) pair")
                        st.keep = <str>PyTuple_GET_ITEM(nxt, 0)
                        st.quiet = <object>PyTuple_GET_ITEM(nxt, 1)
                        return _kept(st, delta_text, current_text)
                if stepper is not None:
                    return _to_stepper(st, stepper, <str>delta_text, current_text, request)
            elif idle == 7:
                if st.keep is None:
                    raise TypeError("text_gate: TextGate.keep must be a str")
                if PyUnicode_GET_LENGTH(delta_text) <= st.budget and _only(<str>delta_text, st.keep):
                    st.budget -= PyUnicode_GET_LENGTH(delta_text)
                    return _kept(st, delta_text, current_text)
                if stepper is not None:
                    return _to_stepper(st, stepper, <str>delta_text, current_text, request)
            elif idle == 2:
                if not _has_any(<str>delta_text, triggers):
                    st.cur = current_text
                    return None
                if openers is not None and delta_text in openers:
                    return _keep_opener(st, openers, open6, <str>delta_text, current_text)
        if st.idle == 9 and c_replay is not None:
            c_replay()  # the call the gate read so far, read by the parser before this delta
        return general(previous_text, current_text, delta_text, previous_token_ids, current_token_ids,
                       delta_token_ids, request)

    return gate
