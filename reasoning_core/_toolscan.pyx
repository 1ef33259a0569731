# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled tool-call scanner; the pure twin is ``reasoning_core_py/_toolscan.py``.

The scanning every tool-call format shares: the incremental JSON reader that
re-serializes as it reads (canonical form: ``reasoning_core/tools/_json.py``),
JSON string escaping, the hold of a suffix that may still become a marker, the
streaming writer of an XML-style string value, the conversion of a chunk's
events into ``ParsedToolCallDelta`` objects, and the per-chunk fast lane
(``step``).  Same names, same behaviour as the twin (differential tests:
``tests/test_toolscan*.py``); the formats' grammars stay Python.
"""

from cpython.list cimport PyList_GET_SIZE
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE
from cpython.dict cimport PyDict_Copy, PyDict_GetItem, PyDict_SetItem
from cpython.object cimport Py_TYPE, PyObject_GenericSetAttr, PyTypeObject
from cpython.ref cimport PyObject
from cpython.set cimport PySet_New
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport uint16_t, uint32_t
from libc.string cimport memcpy
from cpython.unicode cimport (PyUnicode_DATA, PyUnicode_FindChar, PyUnicode_FromKindAndData, PyUnicode_FromOrdinal,
                              PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_New, PyUnicode_READ,
                              PyUnicode_READ_CHAR, PyUnicode_Substring, PyUnicode_WRITE)

import re

NEED, DONE, ERROR = 0, 1, 2

cdef enum:
    C_NEED = 0
    C_DONE = 1
    C_ERROR = 2

cdef enum:  # reader states
    S_VALUE = 0
    S_OBJ_FIRST
    S_OBJ_KEY
    S_COLON
    S_ARR_FIRST
    S_AFTER
    S_STR
    S_ESC
    S_UESC
    S_NUM
    S_LIT

_NUM_OK = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
cdef object _num_ok = _NUM_OK.fullmatch


cdef inline bint _special(Py_UCS4 c):
    # what ends a run of plain string characters: quote, backslash, control, surrogate
    return c == 34 or c == 92 or c < 0x20 or (0xD800 <= c <= 0xDFFF)


cdef str _esc_char(Py_UCS4 c):
    """The JSON string body for one character (as ``escape`` writes it)."""
    if c == 34:
        return '\\"'
    if c == 92:
        return "\\\\"
    if c == 10:
        return "\\n"
    if c == 13:
        return "\\r"
    if c == 9:
        return "\\t"
    if c == 8:
        return "\\b"
    if c == 12:
        return "\\f"
    if c < 0x20 or (0xD800 <= c <= 0xDFFF):
        return "\\u%04x" % (<long>c)
    return PyUnicode_FromOrdinal(<int>c)


cdef inline Py_UCS4 _short_esc(Py_UCS4 c):
    """The letter of a two-character escape for ``c`` (0: none)."""
    if c == 34:
        return 34
    if c == 92:
        return 92
    if c == 10:
        return 110
    if c == 13:
        return 114
    if c == 9:
        return 116
    if c == 8:
        return 98
    if c == 12:
        return 102
    return 0


cdef unsigned char _ESC_EXTRA[256]  # characters an escape adds for a one-byte character
for _b in range(256):
    _ESC_EXTRA[_b] = (1 if _short_esc(_b) else 5) if _b < 0x20 else (1 if _b == 34 or _b == 92 else 0)


cdef str _escaped_1(str s):
    """``_escaped`` of a one-byte-per-character string (no surrogate can be
    in it): the same text, the runs between escapes copied whole."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(s), i, m = 0, j = 0, r
    cdef const unsigned char* src = <const unsigned char*>PyUnicode_DATA(s)
    cdef unsigned char* dst
    cdef unsigned char b, acc = 0, e
    cdef int h
    for i in range(n):
        b = src[i]
        acc |= b
        m += _ESC_EXTRA[b]
    out = PyUnicode_New(n + m, 127 if acc < 128 else 255)
    dst = <unsigned char*>PyUnicode_DATA(out)
    r = 0  # start of the run not yet copied
    for i in range(n):
        b = src[i]
        if not _ESC_EXTRA[b]:
            continue
        if i > r:
            memcpy(dst + j, src + r, i - r)
            j += i - r
        r = i + 1
        dst[j] = 92
        e = <unsigned char>_short_esc(b)
        if e:
            dst[j + 1] = e
            j += 2
            continue
        dst[j + 1] = 117  # u
        dst[j + 2] = 48
        dst[j + 3] = 48
        dst[j + 4] = 48 + (b >> 4)
        h = b & 15
        dst[j + 5] = <unsigned char>((48 + h) if h < 10 else (87 + h))
        j += 6
    if n > r:
        memcpy(dst + j, src + r, n - r)
    return out


ctypedef fused _wide_t:
    uint16_t
    uint32_t


cdef object _escaped_wide(str s, const _wide_t* src):
    """``_escaped`` of a two- or four-byte string (``src``: its data) whose
    output is as wide: the runs between escapes copied whole.  ``None`` when
    the output would be narrower (every wide character in it is a surrogate,
    which is escaped): the general path writes that one."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(s), i, m = 0, j = 0, r
    cdef uint32_t c, e, maxc = 0
    cdef _wide_t* dst
    cdef int h
    for i in range(n):
        c = src[i]
        if _special(c):
            m += 1 if _short_esc(c) else 5
        elif c > maxc:
            maxc = c
    if (maxc < 0x100) if _wide_t is uint16_t else (maxc < 0x10000):
        return None
    out = PyUnicode_New(n + m, maxc)
    dst = <_wide_t*>PyUnicode_DATA(out)
    r = 0  # start of the run not yet copied
    for i in range(n):
        c = src[i]
        if not _special(c):
            continue
        if i > r:
            memcpy(dst + j, src + r, (i - r) * sizeof(_wide_t))
            j += i - r
        r = i + 1
        dst[j] = 92
        e = _short_esc(c)
        if e:
            dst[j + 1] = <_wide_t>e
            j += 2
            continue
        dst[j + 1] = 117  # u
        for h in range(4):
            e = (c >> (12 - 4 * h)) & 15
            dst[j + 2 + h] = <_wide_t>((48 + e) if e < 10 else (87 + e))
        j += 6
    if n > r:
        memcpy(dst + j, src + r, (n - r) * sizeof(_wide_t))
    return out


cdef str _escaped(str s):
    """``escape`` of a string that needs it: the output's length and widest
    character first, then one string written in place."""
    cdef Py_ssize_t n = len(s), i, m = 0, j = 0
    cdef int kind = PyUnicode_KIND(s), okind
    if kind == 1:
        return _escaped_1(s)
    if kind == 2:
        w = _escaped_wide(s, <const uint16_t*>PyUnicode_DATA(s))
    else:
        w = _escaped_wide(s, <const uint32_t*>PyUnicode_DATA(s))
    if w is not None:
        return <str>w
    cdef void* data = PyUnicode_DATA(s)
    cdef void* odata
    cdef Py_UCS4 c, e, maxc = 127
    cdef int h
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if _special(c):
            m += 2 if _short_esc(c) else 6
        else:
            m += 1
            if c > maxc:
                maxc = c
    out = PyUnicode_New(m, maxc)
    okind = PyUnicode_KIND(out)
    odata = PyUnicode_DATA(out)
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if not _special(c):
            PyUnicode_WRITE(okind, odata, j, c)
            j += 1
            continue
        PyUnicode_WRITE(okind, odata, j, 92)
        e = _short_esc(c)
        if e:
            PyUnicode_WRITE(okind, odata, j + 1, e)
            j += 2
            continue
        PyUnicode_WRITE(okind, odata, j + 1, 117)  # u
        for h in range(4):
            e = (<unsigned int>c >> (12 - 4 * h)) & 15
            PyUnicode_WRITE(okind, odata, j + 2 + h, <Py_UCS4>((48 + <unsigned int>e) if e < 10 else (87 + <unsigned int>e)))
        j += 6
    return out


cdef inline bint _plain_run(str s):
    # whether ``s`` has no character that ends a run of plain string characters
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(s), i
    cdef int kind = PyUnicode_KIND(s)
    cdef void* data = PyUnicode_DATA(s)
    for i in range(n):
        if _special(PyUnicode_READ(kind, data, i)):
            return False
    return True


cdef inline bint _verbatim_run(str s):
    # whether the JSON reader, inside a string, writes ``s`` as it is: plain
    # characters and whole escapes it keeps as written (\" \\ \b \f \n \r \t;
    # not \/ or \u, which it rewrites, nor a backslash at the end)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(s), i = 0
    cdef int kind = PyUnicode_KIND(s)
    cdef void* data = PyUnicode_DATA(s)
    cdef Py_UCS4 c
    while i < n:
        c = PyUnicode_READ(kind, data, i)
        if c == 92:  # backslash
            if i + 1 >= n:
                return False
            c = PyUnicode_READ(kind, data, i + 1)
            if not (c == 34 or c == 92 or c == 98 or c == 102 or c == 110 or c == 114 or c == 116):
                return False
            i += 2
            continue
        if _special(c):
            return False
        i += 1
    return True


cpdef str escape(str s):
    """Body of a JSON string literal for ``s`` (no quotes)."""
    return s if _plain_run(s) else _escaped(s)


cdef inline int _hex4(str s, Py_ssize_t i, Py_ssize_t n):
    """The value of the four hex digits at ``s[i:]`` (-1: not four hex digits)."""
    cdef int v = 0, d, k
    if i + 4 > n:
        return -1
    for k in range(4):
        d = _hexval(s[i + k])
        if d < 0:
            return -1
        v = v * 16 + d
    return v


cdef inline Py_ssize_t _put_escaped(Py_UCS4* out, Py_ssize_t j, Py_UCS4 c):
    """Write ``c`` as ``escape`` writes it at ``out[j:]``; the next free index."""
    cdef Py_UCS4 e
    cdef int h
    if not _special(c):
        out[j] = c
        return j + 1
    out[j] = 92
    e = _short_esc(c)
    if e:
        out[j + 1] = e
        return j + 2
    out[j + 1] = 117  # u
    for h in range(4):
        e = (<unsigned int>c >> (12 - 4 * h)) & 15
        out[j + 2 + h] = <Py_UCS4>((48 + <unsigned int>e) if e < 10 else (87 + <unsigned int>e))
    return j + 6


cdef inline Py_ssize_t _put(Py_UCS4* out, Py_ssize_t j, Py_UCS4 c):
    """``_put_escaped``, or with ``out`` NULL only the next free index."""
    if out != NULL:
        return _put_escaped(out, j, c)
    if not _special(c):
        return j + 1
    return j + (2 if _short_esc(c) else 6)


cdef Py_ssize_t _gemma_decode(str body, Py_UCS4* out) except -2:
    """The JSON string literal of ``body`` decoded with JSON string escapes
    and escaped again, written at ``out`` (quotes included); its length, or
    -1 when ``body`` does not decode.  With ``out`` NULL, only the length."""
    cdef Py_ssize_t n = len(body), i = 0, j = 1
    cdef Py_UCS4 c, e
    cdef int cp, lo
    cdef int kind = PyUnicode_KIND(body)
    cdef void* data = PyUnicode_DATA(body)
    if out != NULL:
        out[0] = 34
    while i < n:
        c = PyUnicode_READ(kind, data, i)
        if c < 0x20:
            return -1
        if c != 92:
            j = _put(out, j, c)
            i += 1
            continue
        if i + 1 >= n:
            return -1
        e = PyUnicode_READ(kind, data, i + 1)
        if e == 92 or e == 47:  # \\ \/
            c = e
        elif e == 98:
            c = 8
        elif e == 102:
            c = 12
        elif e == 110:
            c = 10
        elif e == 114:
            c = 13
        elif e == 116:
            c = 9
        elif e == 117:  # u
            cp = _hex4(body, i + 2, n)
            if cp < 0:
                return -1
            i += 6
            if 0xD800 <= cp <= 0xDBFF and i + 1 < n and PyUnicode_READ(kind, data, i) == 92 \
                    and PyUnicode_READ(kind, data, i + 1) == 117:
                lo = _hex4(body, i + 2, n)
                if lo < 0:
                    return -1
                if 0xDC00 <= lo <= 0xDFFF:
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                    i += 6
            j = _put(out, j, <Py_UCS4>cp)
            continue
        else:  # \" (the quote ends the literal) or an unknown escape
            return -1
        j = _put(out, j, c)
        i += 2
    if out != NULL:
        out[j] = 34
    return j + 1


def gemma_string_json(str body):
    """The JSON string literal of a Gemma 4 ``<|"|>``-delimited body when it
    decodes with JSON string escapes (a raw ``"`` is a quote; a raw control
    character, a bad escape or ``\\"`` does not decode), else ``None``.
    One pass measures the literal, a second writes it into a buffer of
    exactly that size."""
    cdef Py_ssize_t n = len(body), i, m
    cdef Py_UCS4 c
    cdef Py_UCS4* buf
    cdef int kind = PyUnicode_KIND(body)
    cdef void* data = PyUnicode_DATA(body)
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if c == 92 or c < 0x20:
            break
    else:
        return '"' + escape(body) + '"'
    m = _gemma_decode(body, NULL)
    if m < 0:
        return None
    buf = <Py_UCS4*>PyMem_Malloc(m * sizeof(Py_UCS4))
    if buf == NULL:
        raise MemoryError()
    try:
        _gemma_decode(body, buf)
        return PyUnicode_FromKindAndData(4, buf, m)
    finally:
        PyMem_Free(buf)


cdef inline int _hexval(Py_UCS4 ch):
    cdef int c = <int>ch
    if 48 <= c <= 57:
        return c - 48
    if 97 <= c <= 102:
        return c - 87
    if 65 <= c <= 70:
        return c - 55
    return -1


cdef extern from "Python.h":
    int _list_cut "PyList_SetSlice"(object lst, Py_ssize_t low, Py_ssize_t high, PyObject* items) except -1


cdef extern from "Python.h":
    object PyObject_GenericGetDict(object o, void* context)


cdef inline dict _dict_of(o):
    """``o.__dict__`` without the attribute protocol (no class ``__getattr__``
    hook or descriptor lookup on the way)."""
    d = PyObject_GenericGetDict(o, NULL)
    if type(d) is not dict:
        raise TypeError(f"{type(o).__name__} object keeps no plain __dict__")
    return <dict>d


cdef class JsonReader:
    """Reads exactly one JSON value from successive buffers (see the twin).

    ``feed(buf, pos, eof)`` returns ``(pos, status)``: ``NEED``, ``DONE`` (the
    character at ``pos`` is not consumed) or ``ERROR`` (``pos`` is the offending
    character, or ``len(buf)`` at end of input).  Output is collected per ``feed``
    and handed to the sink in one piece.
    """

    cdef public object sink
    cdef list out
    cdef int state
    cdef list stack        # 'o' / 'a'
    cdef int tokn          # \\u digits read, or a literal's letters read
    cdef int tokv          # \\u value so far
    cdef str lit           # the literal being read
    cdef list num          # the pieces of a number
    cdef long hi           # pending high surrogate
    cdef bint is_key, require_object, started

    def __init__(self, sink, bint require_object=False):
        self.sink = sink
        self.out = []
        self.state = S_VALUE
        self.stack = []
        self.tokn = 0
        self.tokv = 0
        self.lit = ""
        self.num = []
        self.hi = -1
        self.is_key = False
        self.require_object = require_object
        self.started = False

    cdef inline bint _plain(self, str text):
        # whether reading ``text`` now only copies it: inside a string, no
        # high surrogate pending, plain characters and escapes kept as written
        return self.state == S_STR and self.hi < 0 and PyUnicode_GET_LENGTH(text) > 0 and _verbatim_run(text)

    cdef inline void _flush_hi(self):
        if self.hi >= 0:
            self.out.append("\\u%04x" % self.hi)
            self.hi = -1

    def feed(self, str buf, Py_ssize_t pos, bint eof):
        cdef int status = self._feed(buf, &pos, eof)
        cdef list out = self.out
        cdef Py_ssize_t k = PyList_GET_SIZE(out)
        if k:
            self.sink(out[0] if k == 1 else "".join(out))
            _list_cut(out, 0, k, NULL)
        return pos, status

    cdef int _feed(self, str buf, Py_ssize_t* ppos, bint eof) except -1:
        cdef Py_ssize_t pos = ppos[0]
        cdef Py_ssize_t n = len(buf), start
        cdef Py_UCS4 c
        cdef int st, d
        cdef long cp
        cdef list out = self.out
        cdef str text, word
        cdef int kind = PyUnicode_KIND(buf)
        cdef void* data = PyUnicode_DATA(buf)
        while True:
            st = self.state
            if st == S_STR:
                start = pos
                while pos < n and not _special(PyUnicode_READ(kind, data, pos)):
                    pos += 1
                if pos > start:
                    self._flush_hi()
                    out.append(PyUnicode_Substring(buf, start, pos))
                if pos >= n:
                    break
                c = buf[pos]
                pos += 1
                if c == 34:
                    self._flush_hi()
                    out.append('"')
                    self.state = S_COLON if self.is_key else S_AFTER
                elif c == 92:
                    self.state = S_ESC
                else:  # raw control character or surrogate
                    self._flush_hi()
                    out.append(_esc_char(c))
                continue
            if st == S_ESC:
                if pos >= n:
                    break
                c = buf[pos]
                if c == 117:  # u
                    self.tokn = 0
                    self.tokv = 0
                    self.state = S_UESC
                elif c == 34 or c == 92 or c == 47:  # " \\ /
                    self._flush_hi()
                    out.append('\\"' if c == 34 else "\\\\" if c == 92 else "/")
                    self.state = S_STR
                elif c == 98 or c == 102 or c == 110 or c == 114 or c == 116:  # b f n r t
                    self._flush_hi()
                    out.append("\\b" if c == 98 else "\\f" if c == 102 else "\\n" if c == 110
                               else "\\r" if c == 114 else "\\t")
                    self.state = S_STR
                else:
                    ppos[0] = pos
                    return C_ERROR
                pos += 1
                continue
            if st == S_UESC:
                while pos < n and self.tokn < 4:
                    d = _hexval(buf[pos])
                    if d < 0:
                        ppos[0] = pos
                        return C_ERROR
                    self.tokv = self.tokv * 16 + d
                    self.tokn += 1
                    pos += 1
                if self.tokn < 4:
                    break
                cp = self.tokv
                self.state = S_STR
                if self.hi >= 0 and 0xDC00 <= cp <= 0xDFFF:
                    out.append(PyUnicode_FromOrdinal(<int>(0x10000 + ((self.hi - 0xD800) << 10) + (cp - 0xDC00))))
                    self.hi = -1
                else:
                    self._flush_hi()
                    if 0xD800 <= cp <= 0xDBFF:
                        self.hi = cp
                    else:
                        out.append(_esc_char(<Py_UCS4>cp))
                continue
            if st == S_NUM:
                start = pos
                while pos < n:
                    c = buf[pos]
                    if (48 <= c <= 57) or c == 101 or c == 69 or c == 46 or c == 43 or c == 45:
                        pos += 1
                    else:
                        break
                if pos > start:
                    self.num.append(PyUnicode_Substring(buf, start, pos))
                if pos >= n and not eof:
                    break
                text = self.num[0] if len(self.num) == 1 else "".join(self.num)
                del self.num[:]
                if _num_ok(text) is None:
                    ppos[0] = pos
                    return C_ERROR
                out.append(text)
                self.state = S_AFTER
                continue
            if st == S_LIT:
                word = self.lit
                while pos < n and self.tokn < len(word):
                    if buf[pos] != word[self.tokn]:
                        ppos[0] = pos
                        return C_ERROR
                    self.tokn += 1
                    pos += 1
                if self.tokn < len(word):
                    break
                out.append(word)
                self.state = S_AFTER
                continue
            if st == S_AFTER and not self.stack:
                ppos[0] = pos
                return C_DONE
            # structural states: skip whitespace first
            while pos < n:
                c = buf[pos]
                if c == 32 or c == 9 or c == 10 or c == 13:
                    pos += 1
                else:
                    break
            if pos >= n:
                break
            c = buf[pos]
            if st == S_VALUE:
                if self.require_object and not self.started and c != 123:
                    ppos[0] = pos
                    return C_ERROR
                self.started = True
                if c == 123:  # {
                    out.append("{")
                    self.stack.append("o")
                    self.state = S_OBJ_FIRST
                elif c == 91:  # [
                    out.append("[")
                    self.stack.append("a")
                    self.state = S_ARR_FIRST
                elif c == 34:
                    out.append('"')
                    self.is_key = False
                    self.state = S_STR
                elif c == 45 or 48 <= c <= 57:
                    del self.num[:]
                    self.state = S_NUM
                    continue
                elif c == 116 or c == 102 or c == 110:  # t f n
                    self.lit = "true" if c == 116 else "false" if c == 102 else "null"
                    self.tokn = 1
                    self.state = S_LIT
                else:
                    ppos[0] = pos
                    return C_ERROR
                pos += 1
            elif st == S_OBJ_FIRST or st == S_OBJ_KEY:
                if c == 34:
                    out.append('"')
                    self.is_key = True
                    self.state = S_STR
                elif c == 125 and st == S_OBJ_FIRST:
                    out.append("}")
                    self.stack.pop()
                    self.state = S_AFTER
                else:
                    ppos[0] = pos
                    return C_ERROR
                pos += 1
            elif st == S_COLON:
                if c != 58:
                    ppos[0] = pos
                    return C_ERROR
                out.append(": ")
                self.state = S_VALUE
                pos += 1
            elif st == S_ARR_FIRST:
                if c == 93:
                    out.append("]")
                    self.stack.pop()
                    self.state = S_AFTER
                    pos += 1
                else:
                    self.state = S_VALUE
            else:  # S_AFTER inside a container
                top = self.stack[len(self.stack) - 1]
                if c == 44:
                    out.append(", ")
                    self.state = S_OBJ_KEY if top == "o" else S_VALUE
                elif (c == 125 and top == "o") or (c == 93 and top == "a"):
                    out.append("}" if c == 125 else "]")
                    self.stack.pop()
                else:
                    ppos[0] = pos
                    return C_ERROR
                pos += 1
        # buffer exhausted
        ppos[0] = pos
        if eof:
            if self.state == S_AFTER and not self.stack:
                return C_DONE
            return C_ERROR
        return C_NEED


cdef int _firsts(tuple ms_markers, Py_UCS4* out) except -2:
    """The distinct first characters of the markers (at most 16; -1: more)."""
    cdef int k = 0, j
    cdef Py_UCS4 c
    cdef str m
    for m in ms_markers:
        c = m[0]
        for j in range(k):
            if out[j] == c:
                break
        else:
            if k == 16:
                return -1
            out[k] = c
            k += 1
    return k


cdef inline bint _is_first(Py_UCS4 c, Py_UCS4* firsts, int nf):
    cdef int j
    if nf < 0:
        return True
    for j in range(nf):
        if firsts[j] == c:
            return True
    return False


cdef Py_ssize_t _hold(ms, str buf, Py_ssize_t pos) except -1:
    cdef Py_UCS4 firsts[16]
    cdef int nf = _firsts(ms.markers, firsts)
    return _hold_f(ms, firsts, nf, buf, pos)


cdef Py_ssize_t _hold_f(ms, Py_UCS4* firsts, int nf, str buf, Py_ssize_t pos) except -1:
    """``_hold`` with the markers' first characters already known."""
    cdef Py_ssize_t n = len(buf), k, i, maxk
    cdef tuple ms_markers = ms.markers
    cdef str m
    cdef Py_ssize_t ml
    cdef bint ok
    maxk = <Py_ssize_t>ms.maxlen - 1
    if n - pos < maxk:
        maxk = n - pos
    k = maxk
    while k > 0:
        # is buf[n-k:] a proper prefix of some marker?
        if _is_first(buf[n - k], firsts, nf):
            for m in ms_markers:
                ml = len(m)
                if ml <= k:
                    continue
                ok = True
                for i in range(k):
                    if buf[n - k + i] != m[i]:
                        ok = False
                        break
                if ok:
                    return n - k
        k -= 1
    return n


cdef bint _may_start_f(Py_UCS4* firsts, int nf, str buf) except -1:
    """Whether ``buf`` holds the first character of a marker (without one,
    neither a marker nor a held suffix can be in it)."""
    cdef Py_ssize_t n = len(buf), i
    cdef int kind = PyUnicode_KIND(buf)
    cdef void* data = PyUnicode_DATA(buf)
    for i in range(n):
        if _is_first(PyUnicode_READ(kind, data, i), firsts, nf):
            return True
    return False


def hold_start(ms, str buf, Py_ssize_t pos):
    """Start of the longest suffix of ``buf[pos:]`` that a marker of ``ms`` (a
    ``Markers``) could still complete; ``len(buf)`` when there is none."""
    return _hold(ms, buf, pos)


cdef Py_ssize_t _find(tuple mks, Py_UCS4* firsts, int nf, str buf, Py_ssize_t pos, bint eof,
                      Py_ssize_t* mlen) except -2:
    """One pass over ``buf[pos:]`` for the markers ``mks`` (longest first): the
    start of the leftmost whole marker (its index in ``mks`` at ``mlen[0]``),
    unless a suffix that a marker could still complete starts at or before it
    (not at ``eof``): then that suffix's start, ``mlen[0]`` = -1.  ``len(buf)``
    and -1 when there is neither.  The same answer as ``rx.search`` and
    ``_hold`` together (a whole marker wins only when it starts before the
    held suffix), without the regex or its match object."""
    cdef Py_ssize_t n = len(buf), i, k, ml, j
    cdef int kind = PyUnicode_KIND(buf), km
    cdef void* data = PyUnicode_DATA(buf)
    cdef Py_ssize_t nm = len(mks)
    cdef str m
    cdef bint ok
    cdef Py_UCS4 c
    if pos < 0:  # (as a regex search from a negative position: from the start)
        pos = 0
    i = pos - 1
    while True:
        # the next position holding a marker's first character (markers that
        # all start with one character: the string library's own search)
        i += 1
        if nf == 1:
            i = PyUnicode_FindChar(buf, firsts[0], i, n, 1)
            if i < 0:
                break
        else:
            while i < n and not _is_first(PyUnicode_READ(kind, data, i), firsts, nf):
                i += 1
            if i >= n:
                break
        if not eof:
            # a marker this suffix could still become: hold it (it starts here,
            # so it is the longest such suffix)
            for j in range(nm):
                m = <str>mks[j]
                ml = len(m)
                if ml <= n - i:
                    continue
                km = PyUnicode_KIND(m)
                ok = True
                for k in range(n - i):
                    if PyUnicode_READ(kind, data, i + k) != PyUnicode_READ(km, PyUnicode_DATA(m), k):
                        ok = False
                        break
                if ok:
                    mlen[0] = -1
                    return i
        for j in range(nm):
            m = <str>mks[j]
            ml = len(m)
            if ml > n - i:
                continue
            km = PyUnicode_KIND(m)
            ok = True
            for k in range(ml):
                if PyUnicode_READ(kind, data, i + k) != PyUnicode_READ(km, PyUnicode_DATA(m), k):
                    ok = False
                    break
            if ok:
                mlen[0] = j
                return i
    mlen[0] = -1
    return n


cdef inline Py_ssize_t _find_at(ms, str buf, Py_ssize_t pos, bint eof, Py_ssize_t* j) except -2:
    """``_find`` for a ``Markers`` object (its first characters found here)."""
    cdef tuple mks = ms.markers
    cdef Py_UCS4 firsts[16]
    cdef int nf = _firsts(mks, firsts)
    return _find(mks, firsts, nf, buf, pos, eof, j)


def until(p, ms, sink):
    """One pass of ``BaseToolParser._until`` (see the twin): the marker of ``ms``
    next in the parser's buffer (consumed, the text before it sent to ``sink``),
    ``None`` at the end of input, or ``False``: the text that cannot start a
    marker went to ``sink``, the rest is held, and the parser waits in this
    scan (its lane is set).  One compiled pass finds the marker or the held
    suffix (``_find``)."""
    cdef dict d = _dict_of(p)
    cdef str buf = <str>d["_buf"]
    cdef Py_ssize_t pos = d["_pos"], at, j = -1
    cdef bint eof = d["_eof"]
    cdef str m
    at = _find_at(ms, buf, pos, eof, &j)
    if j >= 0:
        m = <str>ms.markers[j]
        sink(PyUnicode_Substring(buf, pos, at))
        d["_pos"] = at + len(m)
        return m
    sink(PyUnicode_Substring(buf, pos, at))
    d["_pos"] = at
    if eof:
        return None
    d["_lane"] = (ms, sink)
    d["_lane_args"] = type(sink) is XmlStringSink and p._args_sink((<XmlStringSink>sink).emit)
    return False


def take(p, ms):
    """``(text, marker)`` when the parser's buffer decides ``_text_until(ms)``
    now: the text up to the next marker of ``ms`` and the marker (consumed),
    or at the end of input the rest and ``None``; otherwise ``None``, nothing
    consumed (the grammar then waits in ``_text_until``)."""
    cdef dict d = _dict_of(p)
    cdef str buf = <str>d["_buf"]
    cdef Py_ssize_t pos = d["_pos"], at, j = -1
    cdef bint eof = d["_eof"]
    cdef str m
    at = _find_at(ms, buf, pos, eof, &j)
    if j >= 0:
        m = <str>ms.markers[j]
        d["_pos"] = at + len(m)
        return PyUnicode_Substring(buf, pos, at), m
    if eof:
        d["_pos"] = at
        return PyUnicode_Substring(buf, pos, at), None
    return None


cdef inline Py_ssize_t _skip_ws(int kind, void* data, Py_ssize_t i, Py_ssize_t n):
    cdef Py_UCS4 c
    while i < n:
        c = PyUnicode_READ(kind, data, i)
        if c == 32 or c == 9 or c == 10 or c == 13:
            i += 1
        else:
            break
    return i


cdef inline Py_ssize_t _plain_str_end(int kind, void* data, Py_ssize_t i, Py_ssize_t n):
    """The end of the string literal without escapes at ``i`` (its closing quote
    consumed), or -1 (no quote at ``i``, an escape, a control character, a
    surrogate, or no closing quote in the buffer)."""
    cdef Py_UCS4 c
    if i >= n or PyUnicode_READ(kind, data, i) != 34:
        return -1
    i += 1
    while i < n:
        c = PyUnicode_READ(kind, data, i)
        if c == 34:
            return i + 1
        if _special(c):
            return -1
        i += 1
    return -1


cdef inline bint _name_chars(int kind, void* data, Py_ssize_t i, Py_ssize_t j):
    """Whether ``[i, j)`` is a valid tool name (``NAME_RE``: 1-64 of ``[A-Za-z0-9_-]``)."""
    cdef Py_UCS4 c
    if j - i < 1 or j - i > 64:
        return False
    while i < j:
        c = PyUnicode_READ(kind, data, i)
        if not ((48 <= c <= 57) or (65 <= c <= 90) or (97 <= c <= 122) or c == 95 or c == 45):
            return False
        i += 1
    return True


cdef inline Py_ssize_t _canon_num_end(int kind, void* data, Py_ssize_t i, Py_ssize_t n, bint eof):
    """The end of the number at ``i`` when the reader would copy it as written:
    its run of ``[0-9eE.+-]`` ends inside the buffer (or at ``eof``) and
    matches ``_NUM_OK``; -1 otherwise."""
    cdef Py_ssize_t j = i, e
    cdef Py_UCS4 c
    while j < n:
        c = PyUnicode_READ(kind, data, j)
        if (48 <= c <= 57) or c == 101 or c == 69 or c == 46 or c == 43 or c == 45:
            j += 1
        else:
            break
    if j >= n and not eof:
        return -1
    # -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? over [i, j)
    e = i
    if e < j and PyUnicode_READ(kind, data, e) == 45:
        e += 1
    if e >= j:
        return -1
    c = PyUnicode_READ(kind, data, e)
    if c == 48:
        e += 1
    elif 49 <= c <= 57:
        e += 1
        while e < j and 48 <= PyUnicode_READ(kind, data, e) <= 57:
            e += 1
    else:
        return -1
    if e < j and PyUnicode_READ(kind, data, e) == 46:
        e += 1
        if e >= j or not (48 <= PyUnicode_READ(kind, data, e) <= 57):
            return -1
        while e < j and 48 <= PyUnicode_READ(kind, data, e) <= 57:
            e += 1
    if e < j:
        c = PyUnicode_READ(kind, data, e)
        if c != 101 and c != 69:
            return -1
        e += 1
        if e < j:
            c = PyUnicode_READ(kind, data, e)
            if c == 43 or c == 45:
                e += 1
        if e >= j or not (48 <= PyUnicode_READ(kind, data, e) <= 57):
            return -1
        while e < j and 48 <= PyUnicode_READ(kind, data, e) <= 57:
            e += 1
    return j if e == j else -1


cdef inline Py_ssize_t _canon_str_end(int kind, void* data, Py_ssize_t i, Py_ssize_t n):
    """The end of the string literal at ``i`` (its quote) when the reader would
    copy it as written (only the escapes it keeps: ``\\" \\\\ \\b \\f \\n \\r
    \\t``; no control character or surrogate); -1 otherwise."""
    cdef Py_UCS4 c
    i += 1
    while i < n:
        c = PyUnicode_READ(kind, data, i)
        if c == 34:
            return i + 1
        if c == 92:
            if i + 1 >= n:
                return -1
            c = PyUnicode_READ(kind, data, i + 1)
            if not (c == 34 or c == 92 or c == 98 or c == 102 or c == 110 or c == 114 or c == 116):
                return -1
            i += 2
            continue
        if c < 0x20 or (0xD800 <= c <= 0xDFFF):
            return -1
        i += 1
    return -1


cdef inline Py_ssize_t _canon_key_end(int kind, void* data, Py_ssize_t i, Py_ssize_t n):
    """Where the value after the object key at ``i`` starts when the key is a
    string the reader copies as written, followed by its colon and one space
    (nothing else, and more text after them); -1 otherwise."""
    if i >= n or PyUnicode_READ(kind, data, i) != 34:
        return -1
    i = _canon_str_end(kind, data, i, n)
    if i < 0 or i + 2 >= n or PyUnicode_READ(kind, data, i) != 58 or PyUnicode_READ(kind, data, i + 1) != 32:
        return -1
    return i + 2


cdef Py_ssize_t _canon_end(str buf, Py_ssize_t i, bint require_object, bint eof):
    """The end of the JSON value at ``buf[i]`` when its text is already what a
    ``JsonReader`` writes for it (no whitespace but the one space after each
    ``:`` and ``,``, strings and numbers the reader copies as written), the
    value whole in the buffer: the reader would stop there and its output
    would be ``buf[i:end]``.  -1 for anything else (then the reader reads it:
    the answer for any text is the reader's)."""
    cdef Py_ssize_t n = len(buf)
    cdef int kind = PyUnicode_KIND(buf)
    cdef void* data = PyUnicode_DATA(buf)
    cdef char stack[64]
    cdef int depth = 0
    cdef Py_UCS4 c
    cdef bint value = True  # a value is expected (else: what follows one)
    if i >= n:
        return -1
    c = PyUnicode_READ(kind, data, i)
    if require_object and c != 123:
        return -1
    while True:
        if value:
            if i >= n:
                return -1
            c = PyUnicode_READ(kind, data, i)
            if c == 123 or c == 91:  # { [
                if depth == 64:
                    return -1
                stack[depth] = <char>c
                depth += 1
                i += 1
                if i >= n:
                    return -1
                c = PyUnicode_READ(kind, data, i)
                if c == 125 + (<int>stack[depth - 1] - 123):  # } or ]: empty
                    depth -= 1
                    i += 1
                    value = False
                elif stack[depth - 1] == 123:
                    i = _canon_key_end(kind, data, i, n)
                    if i < 0:
                        return -1
                continue
            if c == 34:
                i = _canon_str_end(kind, data, i, n)
            elif c == 45 or 48 <= c <= 57:
                i = _canon_num_end(kind, data, i, n, eof)
            elif c == 116 or c == 110:  # true null
                if i + 4 > n or PyUnicode_READ(kind, data, i + 1) != (114 if c == 116 else 117) \
                        or PyUnicode_READ(kind, data, i + 2) != (117 if c == 116 else 108) \
                        or PyUnicode_READ(kind, data, i + 3) != (101 if c == 116 else 108):
                    return -1
                i += 4
            elif c == 102:  # false
                if i + 5 > n or PyUnicode_READ(kind, data, i + 1) != 97 or PyUnicode_READ(kind, data, i + 2) != 108 \
                        or PyUnicode_READ(kind, data, i + 3) != 115 or PyUnicode_READ(kind, data, i + 4) != 101:
                    return -1
                i += 5
            else:
                return -1
            if i < 0:
                return -1
            value = False
            continue
        if depth == 0:
            return i
        if i >= n:
            return -1
        c = PyUnicode_READ(kind, data, i)
        if c == 44:  # , and its one space
            if i + 2 >= n or PyUnicode_READ(kind, data, i + 1) != 32:
                return -1
            i += 2
            value = True
            if stack[depth - 1] == 123:  # a key next
                i = _canon_key_end(kind, data, i, n)
                if i < 0:
                    return -1
            continue
        if c == 125 + (<int>stack[depth - 1] - 123):
            depth -= 1
            i += 1
            continue
        return -1


def json_value(str buf, Py_ssize_t pos, bint require_object, bint eof=False):
    """``(canonical JSON, end)`` of the JSON value at ``buf[pos:]`` (leading
    whitespace skipped) when the buffer holds all of it, as a ``JsonReader``
    fed ``buf`` (and ``eof``) would write it; ``None`` when the value is not
    whole in the buffer (without ``eof``, a number at its end included) or is
    not valid JSON (nothing read: the grammar then reads it itself, ``_json``)."""
    cdef JsonReader reader
    cdef list out
    cdef Py_ssize_t s = _skip_ws(PyUnicode_KIND(buf), PyUnicode_DATA(buf), pos, len(buf)), e
    e = _canon_end(buf, s, require_object, eof)
    if e >= 0:  # already canonical: the reader would copy it
        return PyUnicode_Substring(buf, s, e), e
    reader = JsonReader(None, require_object)
    if reader._feed(buf, &pos, eof) != C_DONE:
        return None
    out = reader.out
    return (out[0] if len(out) == 1 else "".join(out)), pos


def value_json(str v, bint framed):
    """The JSON of an XML-style value that no schema types: ``v`` (without one
    leading and one trailing newline when ``framed``) as JSON when all of it is
    one JSON value (surrounding whitespace allowed; canonical form), else as a
    JSON string (``typed_value(v, frozenset())`` of ``tools._json``, in one call)."""
    return _value_json(v, framed)


cdef str _value_json(str v, bint framed):
    cdef Py_ssize_t n = len(v), a = 0, b, pos = 0
    cdef JsonReader reader
    cdef list out
    cdef str s
    cdef int kind
    cdef void* data
    b = n
    if framed:
        if n and v[0] == u"\n":
            a = 1
        if b > a and v[b - 1] == u"\n":
            b -= 1
    s = v if (a == 0 and b == n) else PyUnicode_Substring(v, a, b)
    kind = PyUnicode_KIND(s)
    data = PyUnicode_DATA(s)
    cdef Py_UCS4 c
    pos = _skip_ws(kind, data, 0, len(s))
    if pos >= len(s):  # no value: a string (the reader would fail at the end)
        return '"' + escape(s) + '"'
    c = PyUnicode_READ(kind, data, pos)
    if not (c == 123 or c == 91 or c == 34 or c == 45 or 48 <= c <= 57 or c == 116 or c == 102 or c == 110):
        return '"' + escape(s) + '"'  # no JSON value starts here: the reader would fail at once
    if True:
        a = _canon_end(s, pos, False, True)
        if a >= 0:  # already canonical: the reader would copy it
            if _skip_ws(kind, data, a, len(s)) == len(s):
                return s if (pos == 0 and a == len(s)) else PyUnicode_Substring(s, pos, a)
            return '"' + escape(s) + '"'
    pos = 0
    reader = JsonReader(None, False)
    if reader._feed(s, &pos, True) == C_DONE:
        kind = PyUnicode_KIND(s)
        data = PyUnicode_DATA(s)
        if _skip_ws(kind, data, pos, len(s)) == len(s):
            out = reader.out
            return out[0] if len(out) == 1 else "".join(out)
    return '"' + escape(s) + '"'


cdef object _STR_STRIP = str.strip


def xml_params(str buf, Py_ssize_t pos, str opener, str key_close, str param_end, scan, key_end, value_end,
               clean_key):
    """The parameter elements of an XML-style call read in one pass when the
    buffer decides every step: ``(arguments' JSON, the marker that ended them,
    end)`` or ``None`` (see the twin).  Each step is ``_find`` (a whole marker
    before any suffix that may still become one), the three marker sets'
    first characters found once."""
    cdef tuple ms_scan = scan.markers, ms_key = key_end.markers, ms_value = value_end.markers
    cdef Py_UCS4 f_scan[16]
    cdef Py_UCS4 f_key[16]
    cdef Py_UCS4 f_value[16]
    cdef int n_scan = _firsts(ms_scan, f_scan), n_key = _firsts(ms_key, f_key), n_value = _firsts(ms_value, f_value)
    cdef list parts = []
    cdef Py_ssize_t at, j = -1
    cdef str m, km, key
    at = _find(ms_scan, f_scan, n_scan, buf, pos, False, &j)
    if j < 0:
        return None
    m = <str>ms_scan[j]
    pos = at + len(m)
    while m == opener:
        at = _find(ms_key, f_key, n_key, buf, pos, False, &j)
        if j < 0:
            return None
        km = <str>ms_key[j]
        if km != key_close:
            pos = at + len(km)
            if km == param_end:
                at = _find(ms_scan, f_scan, n_scan, buf, pos, False, &j)
                if j < 0:
                    return None
                m = <str>ms_scan[j]
                pos = at + len(m)
            else:
                m = km
            continue
        key = PyUnicode_Substring(buf, pos, at)
        pos = at + len(km)
        at = _find(ms_value, f_value, n_value, buf, pos, False, &j)
        if j < 0:
            return None
        m = <str>ms_value[j]
        key = key.strip() if clean_key is _STR_STRIP else clean_key(key)
        parts.append('"' + escape(key) + '": ' + _value_json(PyUnicode_Substring(buf, pos, at), True))
        pos = at + len(m)
        if m == param_end:
            at = _find(ms_scan, f_scan, n_scan, buf, pos, False, &j)
            if j < 0:
                return None
            m = <str>ms_scan[j]
            pos = at + len(m)
    if not parts:
        return "{}", m, pos
    return ("{" + (<str>parts[0] if len(parts) == 1 else ", ".join(parts)) + "}"), m, pos


cdef object _args_then(str buf, Py_ssize_t pos, tuple ms_tail, Py_UCS4* f_tail, int n_tail):
    """``(arguments' JSON, the marker of ``ms_tail`` after them, end)`` for the
    JSON object at ``pos``, whole in the buffer with a whole marker after it
    (copied when already canonical, else read by a reader); ``None`` otherwise."""
    cdef Py_ssize_t e = _canon_end(buf, pos, True, False), at, j = -1
    cdef JsonReader reader
    cdef list out
    cdef str args, m
    if e >= 0:
        args = PyUnicode_Substring(buf, pos, e)
    else:
        reader = JsonReader(None, True)
        e = pos
        if reader._feed(buf, &e, False) != C_DONE:
            return None
        out = reader.out
        args = out[0] if len(out) == 1 else "".join(out)
    at = _find(ms_tail, f_tail, n_tail, buf, e, False, &j)
    if j < 0:
        return None
    m = <str>ms_tail[j]
    return args, m, at + len(m)


def deepseek_call(str buf, Py_ssize_t pos, head_end, str sep, line_end, tail):
    """A DeepSeek-V3 call read in one pass when the buffer decides every step
    and the call is well formed: ``(name, arguments' JSON, the marker after
    them, end)`` or ``None`` (see the twin)."""
    cdef tuple ms_head = head_end.markers, ms_line = line_end.markers, ms_tail = tail.markers
    cdef Py_UCS4 f_head[16]
    cdef Py_UCS4 f_line[16]
    cdef Py_UCS4 f_tail[16]
    cdef int n_head = _firsts(ms_head, f_head), n_line = _firsts(ms_line, f_line), n_tail = _firsts(ms_tail, f_tail)
    cdef Py_ssize_t at, j = -1, n = len(buf)
    cdef int kind = PyUnicode_KIND(buf)
    cdef void* data = PyUnicode_DATA(buf)
    cdef str name
    at = _find(ms_head, f_head, n_head, buf, pos, False, &j)
    if j < 0 or <str>ms_head[j] != sep:
        return None
    pos = at + len(<str>ms_head[j])
    at = _find(ms_line, f_line, n_line, buf, pos, False, &j)
    if j < 0 or <str>ms_line[j] != u"\n":
        return None
    name = PyUnicode_Substring(buf, pos, at).strip()
    if not _name_chars(PyUnicode_KIND(name), PyUnicode_DATA(name), 0, len(name)):
        return None
    pos = _skip_ws(kind, data, at + 1, n)
    if pos >= n:
        return None
    if PyUnicode_READ(kind, data, pos) == 96:  # ` : a fence line
        at = _find(ms_line, f_line, n_line, buf, pos, False, &j)
        if j < 0 or <str>ms_line[j] != u"\n":
            return None
        pos = at + 1
    pos = _skip_ws(kind, data, pos, n)
    got = _args_then(buf, pos, ms_tail, f_tail, n_tail)
    return None if got is None else (name,) + <tuple>got


def kimi_call(str buf, Py_ssize_t pos, head_end, str arg_begin, tail):
    """A Kimi-K2 call read in one pass when the buffer decides every step and
    the call is well formed: ``(name, id, arguments' JSON, the marker after
    them, end)`` or ``None`` (see the twin)."""
    cdef tuple ms_head = head_end.markers, ms_tail = tail.markers
    cdef Py_UCS4 f_head[16]
    cdef Py_UCS4 f_tail[16]
    cdef int n_head = _firsts(ms_head, f_head), n_tail = _firsts(ms_tail, f_tail)
    cdef Py_ssize_t at, j = -1, n = len(buf), e, a, b, k, ni
    cdef int kind = PyUnicode_KIND(buf), ik
    cdef void* data = PyUnicode_DATA(buf)
    cdef void* idata
    cdef str ident
    at = _find(ms_head, f_head, n_head, buf, pos, False, &j)
    if j < 0 or <str>ms_head[j] != arg_begin:
        return None
    ident = PyUnicode_Substring(buf, pos, at).strip()
    e = at + len(arg_begin)
    # the name: after an optional "functions.", up to an optional ":" and digits
    ni = len(ident)
    ik = PyUnicode_KIND(ident)
    idata = PyUnicode_DATA(ident)
    a = 10 if ident.startswith(u"functions.") else 0
    b = a
    while b < ni and PyUnicode_READ(ik, idata, b) != 58:  # :
        b += 1
    if b < ni:
        if b + 1 >= ni:
            return None
        for k in range(b + 1, ni):
            if not (48 <= PyUnicode_READ(ik, idata, k) <= 57):
                return None
    if not _name_chars(ik, idata, a, b):
        return None
    got = _args_then(buf, _skip_ws(kind, data, e, n), ms_tail, f_tail, n_tail)
    return None if got is None else (PyUnicode_Substring(ident, a, b), ident) + <tuple>got


def call_object(str buf, Py_ssize_t pos, tuple name_keys, tuple arg_keys, bint need_args):
    """A plain call object read in one pass: ``(name, arguments, end)`` or
    ``None`` (see the twin for what "plain" is; the compiled pass walks the
    buffer once, the twin uses regexes and the JSON reader)."""
    cdef Py_ssize_t n = len(buf), i = pos, e
    cdef int kind = PyUnicode_KIND(buf)
    cdef void* data = PyUnicode_DATA(buf)
    cdef Py_UCS4 c
    cdef object name = None, args = None
    cdef JsonReader reader
    cdef list out
    while True:
        i = _skip_ws(kind, data, i, n)
        e = _plain_str_end(kind, data, i, n)
        if e < 0:
            return None
        key = PyUnicode_Substring(buf, i + 1, e - 1)
        i = _skip_ws(kind, data, e, n)
        if i >= n or PyUnicode_READ(kind, data, i) != 58:  # :
            return None
        i = _skip_ws(kind, data, i + 1, n)
        if i >= n:
            return None
        if name is None and key in name_keys:
            e = _plain_str_end(kind, data, i, n)
            if e < 0 or not _name_chars(kind, data, i + 1, e - 1):
                return None
            name = PyUnicode_Substring(buf, i + 1, e - 1)
            i = e
        elif args is None and key in arg_keys:
            if PyUnicode_READ(kind, data, i) != 123:  # {
                return None
            e = _canon_end(buf, i, True, False)
            if e >= 0:  # already canonical: the reader would copy it
                args = PyUnicode_Substring(buf, i, e)
                i = e
            else:
                reader = JsonReader(None, True)
                if reader._feed(buf, &i, False) != C_DONE:
                    return None
                out = reader.out
                args = out[0] if len(out) == 1 else "".join(out)
        else:
            return None
        i = _skip_ws(kind, data, i, n)
        if i >= n:
            return None
        c = PyUnicode_READ(kind, data, i)
        if c == 44:  # ,
            i += 1
            continue
        if c == 125:  # }
            i += 1
            break
        return None
    if name is None or (args is None and need_args):
        return None
    return name, "{}" if args is None else args, i


cdef class XmlStringSink:
    """Writes an XML-style ``string`` parameter value as the body of a JSON string
    while it streams: one leading and one trailing newline are framing (the
    trailing one is held until more text shows it was not the last); with
    ``framed=False`` the value is the text byte for byte."""

    cdef public object emit
    cdef bint start, held, framed

    def __init__(self, emit, bint framed=True):
        self.emit = emit
        self.start = True
        self.held = False
        self.framed = framed

    def __call__(self, str t):
        out = self.text_of(t)
        if out is not None:
            self.emit(out)

    cpdef text_of(self, str t):
        """What ``__call__`` emits for ``t`` (None: nothing), the state updated."""
        cdef Py_ssize_t n = len(t)
        cdef str out
        if n == 0:
            return None
        if not self.framed:
            return escape(t)
        if self.start:
            self.start = False
            if t[0] == u"\n":
                if n == 1:
                    return None
                t = PyUnicode_Substring(t, 1, n)
                n -= 1
        out = "\n" + t if self.held else t
        n = len(out)
        self.held = out[n - 1] == u"\n"
        if self.held:
            out = PyUnicode_Substring(out, 0, n - 1)
        return escape(out)


cdef class JsonCloser:
    """Says, one piece at a time and in O(piece), when a JSON value streamed in
    pieces first closes: ``feed`` answers True for the piece in which its
    outermost ``}`` / ``]`` comes (never again after)."""

    cdef public int depth
    cdef public bint in_str, esc, done

    def __init__(self):
        self.depth = 0
        self.in_str = False
        self.esc = False
        self.done = False

    cpdef bint feed(self, str s) except -1:
        # (the characters read from the string's buffer; inside a string
        # literal only a quote or a backslash matters, so that run is skipped
        # in a loop of its own)
        cdef Py_ssize_t i = 0, n
        cdef Py_UCS4 c
        cdef int kind
        cdef void* data
        if s is None:
            raise TypeError("JsonCloser.feed: the piece must be a str, not None")
        n = PyUnicode_GET_LENGTH(s)
        if self.done:
            return False
        if self.esc and n:
            self.esc = False
            i = 1
        kind = PyUnicode_KIND(s)
        data = PyUnicode_DATA(s)
        while i < n:
            if self.in_str:
                c = PyUnicode_READ(kind, data, i)
                while c != 34 and c != 92:  # '"', '\\'
                    i += 1
                    if i >= n:
                        return False
                    c = PyUnicode_READ(kind, data, i)
                if c == 92:
                    if i + 1 >= n:
                        self.esc = True
                        return False
                    i += 2
                    continue
                self.in_str = False
            else:
                c = PyUnicode_READ(kind, data, i)
                if c == 34:
                    self.in_str = True
                elif c == 123 or c == 91:  # '{', '['
                    self.depth += 1
                elif c == 125 or c == 93:  # '}', ']'
                    self.depth -= 1
                    if self.depth <= 0:
                        self.done = True
                        return True
            i += 1
        return False


# -- result objects ------------------------------------------------------------------

_FIELDS = ("index", "id", "name", "arguments", "content")
cdef object _object_new = object.__new__
cdef object _fast_cls = None      # the class the fast builder was checked for
cdef dict _checked = {}           # class -> bool (fast builder matches its constructor)


cdef object _fast_new(cls, index, cid, name, arguments, content):
    d = _object_new(cls)
    d.__dict__ = {"index": index, "id": cid, "name": name, "arguments": arguments, "content": content}
    return d


cdef bint _check(cls):
    """Whether the fast builder makes the same objects as ``cls``'s constructor."""
    try:
        import dataclasses

        if tuple(f.name for f in dataclasses.fields(cls)) != _FIELDS:
            return False
        for args in ((0, None, None, None, "c"), (2, "call_1", "f", "{", None), (1, None, None, "x", None)):
            a, b = _fast_new(cls, args[0], args[1], args[2], args[3], args[4]), cls(*args)
            if a != b or repr(a) != repr(b) or vars(a) != vars(b):
                return False
    except Exception:
        return False
    return True


cdef inline object _new(cls, index, cid, name, arguments, content):
    global _fast_cls
    if cls is _fast_cls:
        return _fast_new(cls, index, cid, name, arguments, content)
    ok = _checked.get(cls)
    if ok is None:
        ok = _checked[cls] = _check(cls)
        if ok and _fast_cls is None:
            _fast_cls = cls
    if ok:
        return _fast_new(cls, index, cid, name, arguments, content)
    return cls(index=index, id=cid, name=name, arguments=arguments, content=content)


cdef str _DICT = "__dict__"
cdef str _FSET = "__pydantic_fields_set__"
cdef str _EXTRA = "__pydantic_extra__"
cdef str _PRIV = "__pydantic_private__"


def model_new(cls, dict values, fields, bint extra):
    """An instance of the pydantic model ``cls`` holding ``values`` (taken as its
    ``__dict__``, not copied), built without validation: fields set = a new set
    of ``fields``, ``__pydantic_extra__`` = a new ``{}`` when ``extra`` (a model
    with ``extra="allow"``) else ``None``, no private attributes.  Callers check
    it against the validated constructor before using it (the engines' result
    types, ``reasoning_core.integrations``)."""
    m = _object_new(cls)
    PyObject_GenericSetAttr(m, _DICT, values)
    PyObject_GenericSetAttr(m, _FSET, PySet_New(fields))
    PyObject_GenericSetAttr(m, _EXTRA, {} if extra else None)
    PyObject_GenericSetAttr(m, _PRIV, None)
    return m


cdef class _Hole:
    """A place in a ``ModelShape`` template (``INDEX``, ``PIECE``, ``CHILD``)."""
    cdef readonly str name

    def __init__(self, str name):
        self.name = name

    def __repr__(self):
        return f"<{self.name}>"


INDEX = _Hole("index")
PIECE = _Hole("piece")
CHILD = _Hole("child")
NO_ANSWER = _Hole("no answer")  # an ArgsLane's ``empty``: a step that sends nothing answers None

cdef tuple _MODEL_SLOTS = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")

cdef extern from "Python.h":
    PyTypeObject PyBaseObject_Type
    PyTypeObject PyMemberDescr_Type
    unsigned long Py_TPFLAGS_HEAPTYPE
    ctypedef struct PyMemberDef:
        int type
        Py_ssize_t offset
        int flags
    ctypedef struct PyMemberDescrObject:
        PyMemberDef *d_member

cdef extern from "structmember.h":
    int T_OBJECT_EX
    int READONLY

cdef extern from *:
    """
    static inline void rc_slot_put(PyObject *obj, Py_ssize_t offset, PyObject *value) {
        PyObject **p = (PyObject **)((char *)obj + offset);
        PyObject *old = *p;
        Py_INCREF(value);
        *p = value;
        Py_XDECREF(old);
    }
    /* A new instance of a class whose tp_new is object's, from its tp_alloc:
       what object.__new__ does without the argument and abstract checks (the
       caller checked both once) and, on 3.11/3.12, without pre-filling the
       instance's inline attribute values, which the __dict__ set right after
       would first turn into a dict of their own and then drop. */
    static inline PyObject *rc_alloc(PyObject *cls) {
        PyTypeObject *t = (PyTypeObject *)cls;
        return t->tp_alloc(t, 0);
    }
    static inline int rc_is_abstract(PyObject *cls) {
        return (((PyTypeObject *)cls)->tp_flags & Py_TPFLAGS_IS_ABSTRACT) != 0;
    }
    /* The setter behind a getset descriptor (NULL for any other descriptor). */
    static inline void *rc_getset_setter(PyObject *descr) {
        if (Py_TYPE(descr) != &PyGetSetDescr_Type) return NULL;
        return (void *)((PyGetSetDescrObject *)descr)->d_getset->set;
    }
    /* A fresh instance's __dict__ set in place: what the default __dict__
       setter does for an instance that has none yet (3.11 and 3.12: the
       dict's place comes from _PyObject_GetDictPtr, which for a managed dict
       with no inline values is that place), without the setter's walk over
       the type's bases.  The caller checked once that the class's __dict__
       descriptor is the default one and no builtin base has a dict of its
       own.  0: not done (another version, or the place is taken): the caller
       uses the descriptor. */
    static inline int rc_dict_put(PyObject *obj, PyObject *dict) {
    #if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030D0000 && !defined(PYPY_VERSION)
        PyObject **p = _PyObject_GetDictPtr(obj);
        if (p == NULL || *p != NULL) return 0;
        Py_INCREF(dict);
        *p = dict;
        return 1;
    #else
        (void)obj; (void)dict;
        return 0;
    #endif
    }
    """
    void rc_slot_put(object obj, Py_ssize_t offset, object value)
    object rc_alloc(object cls)
    bint rc_is_abstract(object cls)
    void* rc_getset_setter(object descr)
    int rc_dict_put(object obj, object d)


class _PlainDict:
    pass


# the default __dict__ setter (the one a class statement gives its instances)
cdef void* _DEFAULT_DICT_SETTER = rc_getset_setter(_PlainDict.__dict__["__dict__"])
del _PlainDict


cdef bint _default_dict(cls):
    """Whether instances of ``cls`` get their ``__dict__`` set by the default
    setter, with no builtin base keeping a dict of its own."""
    cdef PyTypeObject* t
    if _DEFAULT_DICT_SETTER == NULL or rc_getset_setter(_data_descriptor(cls, "__dict__")) != _DEFAULT_DICT_SETTER:
        return False
    for k in cls.__mro__:
        t = <PyTypeObject*>k
        if not (t.tp_flags & Py_TPFLAGS_HEAPTYPE) and t.tp_dictoffset != 0:
            return False
    return True


cdef object _data_descriptor(cls, str name):
    for k in cls.__mro__:
        d = k.__dict__
        if name in d:
            v = d[name]
            if Py_TYPE(v).tp_descr_set == NULL:
                break
            return v
    raise ValueError(f"ModelShape: {cls.__qualname__} has no settable {name} (not a pydantic model)")


cdef inline int _descr_set(object descr, object obj, object value) except -1:
    return Py_TYPE(descr).tp_descr_set(descr, obj, value)


cdef Py_ssize_t _slot_offset(object descr):
    """The offset of a writable object slot (``__slots__`` member), else -1."""
    cdef PyMemberDef *m
    if Py_TYPE(descr) != &PyMemberDescr_Type:
        return -1
    m = (<PyMemberDescrObject*><PyObject*>descr).d_member
    if m.type != T_OBJECT_EX or m.flags & READONLY or m.offset <= 0:
        return -1
    return m.offset


cdef inline int _slot_set(object descr, Py_ssize_t offset, object obj, object value) except -1:
    if offset > 0:
        rc_slot_put(obj, offset, value)
        return 0
    return Py_TYPE(descr).tp_descr_set(descr, obj, value)


cdef enum:
    _MAX_SUBS = 16   # open places per level (a template with more is refused)


cdef class _Level:
    cdef object cls
    cdef dict template
    cdef frozenset fields
    cdef bint extra
    cdef list subs        # [(key, kind)]: 0 index, 1 piece, 2 child, 3 [child], 4 a copy of the template's list
    cdef int nsubs
    cdef PyObject* sub_keys[_MAX_SUBS]    # subs as C arrays (the keys are held by ``subs``)
    cdef int sub_kinds[_MAX_SUBS]
    cdef object d_dict, d_fset, d_extra, d_priv
    cdef bint dict_in_place    # the default __dict__ setter: the dict is put in its place (rc_dict_put)
    cdef Py_ssize_t o_fset, o_extra, o_priv    # their slot offsets (-1: set through the descriptor)

    cdef void _index_subs(self):
        cdef tuple s
        cdef int i = 0
        for s in self.subs:
            self.sub_keys[i] = <PyObject*>s[0]
            self.sub_kinds[i] = <int>s[1]
            i += 1
        self.nsubs = i

    cdef object make(self, object index, object piece, object child):
        cdef dict values = PyDict_Copy(self.template)
        cdef int i, kind
        cdef object key
        for i in range(self.nsubs):
            kind = self.sub_kinds[i]
            key = <object>self.sub_keys[i]
            if kind == 0:
                PyDict_SetItem(values, key, index)
            elif kind == 1:
                PyDict_SetItem(values, key, piece)
            elif kind == 2:
                PyDict_SetItem(values, key, child)
            elif kind == 3:
                PyDict_SetItem(values, key, [child])
            else:
                PyDict_SetItem(values, key, list(<list>self.template[key]))
        m = rc_alloc(self.cls)
        if not (self.dict_in_place and rc_dict_put(m, values)):
            _descr_set(self.d_dict, m, values)
        _slot_set(self.d_fset, self.o_fset, m, PySet_New(self.fields))
        _slot_set(self.d_extra, self.o_extra, m, {} if self.extra else None)
        _slot_set(self.d_priv, self.o_priv, m, None)
        return m


cdef class ModelShape:
    """Nested pydantic models of one fixed shape with two values left open, built
    without validation (see ``model_new``): ``levels`` lists ``(cls, template,
    fields, extra)`` from the outermost model in; each template is the model's
    ``__dict__`` in field order, where ``INDEX`` and ``PIECE`` mark the two
    open values and ``CHILD`` (or ``[CHILD]``, a one-item list) the next
    level's model.  ``build(index, piece)`` makes one new tree (new dicts, new
    fields sets, and a new list for every list in a template: no two trees
    share one).  Other values are shared as they are (use immutable ones).
    Callers check it against the validated constructors before using it
    (``reasoning_core.integrations``)."""
    cdef list levels        # innermost first

    def __init__(self, levels):
        if not isinstance(levels, (list, tuple)) or not levels:
            raise TypeError("ModelShape: levels must be a non-empty list of (cls, template, fields, extra)")
        cdef list out = []
        cdef _Level lv
        cdef int n = len(levels), i, index_seen = 0, piece_seen = 0, children
        for i in range(n):
            item = levels[i]
            if not isinstance(item, tuple) or len(item) != 4:
                raise TypeError(f"ModelShape: level {i} must be a (cls, template, fields, extra) tuple")
            cls, template, fields, extra = item
            if not isinstance(cls, type):
                raise TypeError(f"ModelShape: level {i}: cls must be a class, not {type(cls).__name__}")
            if (<PyTypeObject*>cls).tp_new != PyBaseObject_Type.tp_new:
                raise ValueError(f"ModelShape: level {i}: {cls.__qualname__} has its own __new__")
            if rc_is_abstract(cls):
                raise ValueError(f"ModelShape: level {i}: {cls.__qualname__} is abstract")
            if not isinstance(template, dict):
                raise TypeError(f"ModelShape: level {i}: template must be a dict, not {type(template).__name__}")
            lv = _Level.__new__(_Level)
            lv.cls = cls
            lv.template = dict(template)
            lv.fields = frozenset(fields)
            lv.extra = bool(extra)
            lv.subs = []
            children = 0
            for key, v in template.items():
                if v is INDEX or v is PIECE:
                    if v is INDEX:
                        index_seen += 1
                    else:
                        piece_seen += 1
                    lv.subs.append((key, 0 if v is INDEX else 1))
                elif v is CHILD or (type(v) is list and len(v) == 1 and v[0] is CHILD):
                    children += 1
                    lv.subs.append((key, 2 if v is CHILD else 3))
                elif isinstance(v, list):
                    if any(x is CHILD or x is INDEX or x is PIECE for x in v):
                        raise ValueError(f"ModelShape: level {i}: a hole inside a list must be [CHILD] alone")
                    lv.subs.append((key, 4))
            if len(lv.subs) > _MAX_SUBS:
                raise ValueError(f"ModelShape: level {i} has more than {_MAX_SUBS} open places")
            lv._index_subs()
            if children != (0 if i == n - 1 else 1):
                raise ValueError(f"ModelShape: level {i} must hold {'no' if i == n - 1 else 'one'} CHILD")
            lv.d_dict, lv.d_fset, lv.d_extra, lv.d_priv = [_data_descriptor(cls, a) for a in _MODEL_SLOTS]
            lv.dict_in_place = _default_dict(cls)
            lv.o_fset, lv.o_extra, lv.o_priv = _slot_offset(lv.d_fset), _slot_offset(lv.d_extra), _slot_offset(lv.d_priv)
            out.append(lv)
        if index_seen > 1 or piece_seen > 1:
            raise ValueError("ModelShape: INDEX and PIECE may each appear once")
        out.reverse()
        self.levels = out

    def build(self, index, piece):
        """A new tree of the shape holding ``index`` and ``piece``."""
        return self._build(index, piece)

    cdef object _build(self, index, piece):
        cdef _Level lv
        child = None
        for lv in self.levels:
            child = lv.make(index, piece, child)
        return child


cdef class ArgsLane:
    """The call whose arguments stream now, as an integration records and sends
    them.  ``step(delta)`` is ``step_args(parser, delta, cls)``, except that a
    piece of this call's arguments (the parser's open call has index
    ``index``) is appended to ``pieces``, ``slot`` added to ``dirty`` (when
    given), fed to ``closer`` (when given: ``on_close(slot)`` runs in the step
    where the arguments' JSON value first closes) and answered as
    ``shape.build(slot, piece)``.  Every other answer comes back as
    ``step_args`` gives it, and so does every answer once ``guard.version``
    (when a guard is given) is no longer ``version``: the caller then takes
    its general path.  ``empty`` is what a step that sends nothing (``step_args``
    answers ``[]``: text held, e.g. half an escape) answers instead of the
    empty list: ``None`` (the default) keeps the list; a ``ModelShape``, a new
    tree of it (built with ``None`` for the index and the piece); ``NO_ANSWER``,
    ``None``."""
    cdef object parser, cls, closer, on_close, guard, version, empty
    cdef dict gdict       # the guard's __dict__, where its version is read (None: read as an attribute)
    cdef dict pdict       # the parser's __dict__ (its attributes live there)
    cdef object cur       # the parser's open call, once seen to be this lane's
    cdef object cur_args  # its args list (a call keeps the same list)
    cdef ModelShape shape
    cdef list pieces
    cdef set dirty
    cdef bint built
    cdef readonly object index, slot

    def __init__(self, parser, cls, ModelShape shape not None, index, slot, list pieces not None,
                 set dirty=None, closer=None, on_close=None, guard=None, version=None, empty=None):
        if empty is not None and empty is not NO_ANSWER and type(empty) is not ModelShape:
            raise TypeError("ArgsLane: empty must be None, NO_ANSWER or a ModelShape")
        if closer is not None and not callable(getattr(closer, "feed", None)):
            raise TypeError("ArgsLane: closer must have a feed(piece) method")
        if (closer is None) != (on_close is None) or (on_close is not None and not callable(on_close)):
            raise TypeError("ArgsLane: closer and on_close (a callable) come together")
        if guard is not None and not hasattr(guard, "version"):
            raise TypeError("ArgsLane: guard must have a version attribute")
        pdict = getattr(parser, "__dict__", None)
        if type(pdict) is not dict:
            raise TypeError("ArgsLane: parser must keep its attributes in a __dict__")
        self.parser, self.cls, self.shape, self.index, self.slot = parser, cls, shape, index, slot
        self.pdict = <dict>pdict
        self.pieces, self.dirty, self.closer, self.on_close = pieces, dirty, closer, on_close
        self.guard, self.version, self.empty = guard, version, empty
        gd = getattr(guard, "__dict__", None) if guard is not None else None
        if type(gd) is dict and "version" in <dict>gd and not any("version" in k.__dict__ for k in type(guard).__mro__):
            self.gdict = <dict>gd   # a plain attribute: no class attribute or descriptor of the name

    def step(self, delta):
        if type(delta) is not str:
            raise TypeError(f"ArgsLane.step: delta must be a str, not {type(delta).__name__}")
        return self._run(<str>delta)

    cdef object _run(self, str delta):
        # step(); self.built tells whether the answer is the shape's tree
        self.built = False
        cdef dict d = self.pdict
        cdef PyObject* curp = NULL
        cdef PyObject* v
        cdef bint unrecorded = False
        out = _step_d(self.parser, d, delta, self.cls, True, &curp, &unrecorded)
        if type(out) is not str:
            if type(out) is list and PyList_GET_SIZE(out) == 0 and self.empty is not None:
                self.built = True
                return None if self.empty is NO_ANSWER else (<ModelShape>self.empty)._build(None, None)
            return out
        cur = <object>curp if curp != NULL else d["_cur"]
        if cur is not self.cur:   # (a call's index never changes: once seen, identity tells)
            if unrecorded:   # the piece, recorded in its call as step_args records it
                cur.args.append(out)
            if cur is None or cur.index != self.index:
                return out
            self.cur = cur
            self.cur_args = cur.args
        elif unrecorded:
            self.cur_args.append(out)
        if self.guard is not None:
            v = PyDict_GetItem(self.gdict, "version") if self.gdict is not None else NULL
            if v != NULL:
                if <object>v is not self.version and <object>v != self.version:
                    return out
            elif self.guard.version != self.version:   # (no plain attribute: read as one, as the twin does)
                return out
        self.built = True
        self.pieces.append(out)
        if self.dirty is not None:
            self.dirty.add(self.slot)
        closer = self.closer
        if closer is not None:
            if type(closer) is JsonCloser:
                if (<JsonCloser>closer).feed(out):
                    self.on_close(self.slot)
            elif closer.feed(out):
                self.on_close(self.slot)
        return self.shape._build(self.slot, out)



cdef class ContentLane:
    """Where an integration answers content: ``step(delta)`` is
    ``step_args(parser, delta, cls)``, except that a delta the parser answers
    as content, whole (``None``), is answered as ``shape.build(None, delta)``
    (the engine's content result).  Every other answer comes back as
    ``step_args`` gives it (``built`` false): the caller then takes its
    general path."""
    cdef object parser, cls
    cdef dict pdict
    cdef ModelShape shape
    cdef bint _built

    def __init__(self, parser, cls, ModelShape shape not None):
        pdict = getattr(parser, "__dict__", None)
        if type(pdict) is not dict:
            raise TypeError("ContentLane: parser must keep its attributes in a __dict__")
        self.parser, self.cls, self.shape, self.pdict = parser, cls, shape, <dict>pdict

    def step(self, delta):
        if type(delta) is not str:
            raise TypeError(f"ContentLane.step: delta must be a str, not {type(delta).__name__}")
        if not PyUnicode_GET_LENGTH(delta):
            raise ValueError("ContentLane.step: delta must not be empty")
        return self._run(<str>delta)

    @property
    def built(self):
        """Whether the last step's answer is the shape's content result."""
        return self._built

    cdef object _run(self, str delta):
        out = _step_d(self.parser, self.pdict, delta, self.cls, True)
        if out is None:
            self._built = True
            return self.shape._build(None, delta)
        self._built = False
        return out


cdef inline object _lane_or_general(owner, ArgsLane lane, str delta):
    out = lane._run(delta)
    if lane.built:
        return out
    return owner._answer(out, delta)


cdef inline object _content_or_general(owner, ContentLane lane, str delta):
    out = lane._run(delta)
    if lane._built:
        return out
    return owner._answer(out, delta)


cdef inline object _lanes_or_general(owner, dict d, ArgsLane lane, str delta):
    # _lane_or_general, and a delta the argument lane's step answered as
    # content, whole, answered by the owner's content lane (when it keeps one)
    out = lane._run(delta)
    if lane.built:
        return out
    if out is None:
        c = d.get("_chot")
        if type(c) is ContentLane:
            return (<ContentLane>c).shape._build(None, delta)
    return owner._answer(out, delta)


def vllm_tool_streaming(self, previous_text, current_text, delta_text, previous_token_ids, current_token_ids,
                        delta_token_ids, request):
    """vLLM's ``extract_tool_calls_streaming`` for an integration class that
    keeps its lane in ``_hot`` and its request in ``_request`` (a class
    attribute: it binds as a method).  Inside a call's arguments (a lane, the
    same request, a non-empty ``str`` delta) the lane answers, and what it
    does not build goes to ``self._answer(out, delta_text)``; every other
    delta goes to ``self._streaming(previous_text, delta_text, request)``.
    A class that keeps a ``ContentLane`` in ``_chot`` has it answer the same
    deltas outside a lane (what it does not build goes to ``_answer``), and
    build the content result of one the lane's step answered as content."""
    cdef dict d = _dict_of(self)
    if type(delta_text) is str and PyUnicode_GET_LENGTH(delta_text) and request is d.get("_request"):
        hot = d.get("_hot")
        if type(hot) is ArgsLane:
            return _lanes_or_general(self, d, <ArgsLane>hot, <str>delta_text)
        if hot is None:
            hot = d.get("_chot")
            if type(hot) is ContentLane:
                return _content_or_general(self, <ContentLane>hot, <str>delta_text)
    return self._streaming(previous_text, delta_text, request)


def sglang_tool_streaming(self, new_text, tools):
    """SGLang's ``parse_streaming_increment`` for an integration class that
    keeps its lane in ``_hot`` and the tools its schemas came from in
    ``_schemas_for`` (a class attribute: it binds as a method).  Inside a
    call's arguments (a lane, the same tools, a ``str`` delta) the lane
    answers, and what it does not build goes to ``self._answer(out,
    new_text)``; every other delta goes to ``self._streaming(new_text, tools)``.
    A class that keeps a ``ContentLane`` in ``_chot`` has it answer a
    non-empty delta outside a lane (what it does not build goes to
    ``_answer``), and build the content result of one the lane's step
    answered as content."""
    cdef dict d = _dict_of(self)
    if type(new_text) is str and tools is d.get("_schemas_for"):
        hot = d.get("_hot")
        if type(hot) is ArgsLane:
            return _lanes_or_general(self, d, <ArgsLane>hot, <str>new_text)
        if hot is None and PyUnicode_GET_LENGTH(new_text):
            hot = d.get("_chot")
            if type(hot) is ContentLane:
                return _content_or_general(self, <ContentLane>hot, <str>new_text)
    return self._streaming(new_text, tools)

cdef enum:
    _TAIL_LEN = 16
TAIL = _TAIL_LEN  # characters of what it read that ``sglang_tool_streaming_tail`` keeps


def sglang_tool_streaming_tail(self, new_text, tools):
    """``sglang_tool_streaming`` for a detector that also keeps the last
    ``TAIL`` characters it read in ``_mtail``: a result the lane builds
    updates it, as reading ``new_text`` would; ``self._answer(out, new_text)``
    (the lane read the text and built nothing) updates it itself.  While a
    call is held (``_held`` not ``None``, no lane), a ``str`` delta for the
    same tools that lacks every character of ``_hold.stops`` is kept there
    unread and answered ``_kept_shape.build(None, "")``, as
    ``sglang_held_streaming`` keeps one (``_mtail`` is left: the kept text is
    read later)."""
    cdef dict d = _dict_of(self)
    cdef Py_ssize_t n
    if type(new_text) is str and tools is d.get("_schemas_for"):
        hot = d.get("_hot")
        if type(hot) is ArgsLane:
            out = (<ArgsLane>hot)._run(<str>new_text)
            if (<ArgsLane>hot).built:
                n = PyUnicode_GET_LENGTH(new_text)
                if n >= _TAIL_LEN:
                    d["_mtail"] = PyUnicode_Substring(new_text, n - _TAIL_LEN, n)
                elif n:
                    tail = <str>d["_mtail"] + <str>new_text
                    n = PyUnicode_GET_LENGTH(tail)
                    d["_mtail"] = PyUnicode_Substring(tail, n - _TAIL_LEN, n) if n > _TAIL_LEN else tail
                return out
            return self._answer(out, new_text)
        if d.get("_held") is not None:
            shape = d.get("_kept_shape")
            if type(shape) is ModelShape and _hold_keeps_plain(d.get("_hold"), <str>new_text):
                return (<ModelShape>shape)._build(None, "")
    return self._streaming(new_text, tools)


def to_deltas(list events, cls):
    """A chunk's events in text order -> ``cls`` deltas, joining neighbours of the
    same kind (pieces joined once per delta)."""
    cdef list groups = []
    cdef list last = None
    cdef tuple e
    cdef list out = []
    for e in events:
        kind = e[0]
        if kind == "c":
            if last is not None and last[0] == "c":
                (<list>last[4]).append(e[2])
                continue
            last = ["c", e[1], None, None, [e[2]]]
        elif kind == "n":
            last = ["a", e[1], e[2], e[3], []]
        else:
            if last is not None and last[0] == "a" and last[1] == e[1]:
                (<list>last[4]).append(e[2])
                continue
            last = ["a", e[1], None, None, [e[2]]]
        groups.append(last)
    for g in groups:
        pieces = <list>g[4]
        text = pieces[0] if len(pieces) == 1 else "".join(pieces)
        if g[0] == "c":
            out.append(_new(cls, g[1], None, None, None, text))
        else:
            out.append(_new(cls, g[1], g[2], g[3], text if pieces else None, None))
    return out


# -- one chunk -----------------------------------------------------------------------

def step(p, str delta, cls):
    """``p.parse_delta(delta)`` for a checked, non-empty ``delta`` (see the twin):
    the chunk goes straight to the scan the parser waits in while that scan
    cannot finish in it; otherwise the parser's generator resumes."""
    return _step(p, delta, cls, False)


cdef object _STEP = step


def max_tool_step(self, delta):
    """MAX's ``parse_delta`` for an integration class that keeps our parser
    in ``_rc``, MAX's delta class in ``_delta_t`` and the scanner's ``step``
    it uses in ``_step`` (a class attribute: it binds as a method).  A
    non-empty ``str`` delta is that step, answered in MAX's class (this
    module's step with no Python frame); everything else goes to
    ``self._parse_other(delta)``."""
    cdef dict d = _dict_of(self)
    if type(delta) is str and PyUnicode_GET_LENGTH(delta):
        st = d.get("_step")
        if st is _STEP:
            return _step(d["_rc"], <str>delta, d["_delta_t"], False)
        if st is not None:
            return st(d["_rc"], delta, d["_delta_t"])
    return self._parse_other(delta)


cdef enum:
    _HOLD_BLOCK = 256   # kept deltas an ArgHold joins into one block


cdef bint _hold_keeps_plain(hold, str delta) except -1:
    # ``hold.keep_plain(delta)``: ``delta`` lacks every character of
    # ``hold.stops`` (an ``ArgHold``'s: the character every closer ends with),
    # so it is kept unread (appended to ``hold.pend``; ``hold.compact()`` once
    # 256 are kept) and True answered.  False (nothing done): a delta with one
    # of them, or a hold without a non-empty ``stops`` str and a ``pend`` list.
    cdef Py_ssize_t i, n
    if hold is None:
        return False
    stops = getattr(hold, "stops", None)
    if type(stops) is not str or PyUnicode_GET_LENGTH(stops) == 0:
        return False
    n = PyUnicode_GET_LENGTH(delta)
    for i in range(PyUnicode_GET_LENGTH(stops)):
        if PyUnicode_FindChar(delta, PyUnicode_READ_CHAR(stops, i), 0, n, 1) >= 0:
            return False
    pend = getattr(hold, "pend", None)
    if type(pend) is not list:
        return False
    (<list>pend).append(delta)
    if PyList_GET_SIZE(pend) >= _HOLD_BLOCK:
        hold.compact()
    return True


def sglang_held_streaming(self, new_text, tools):
    """SGLang's ``parse_streaming_increment`` for an integration class that
    keeps the deltas of an open call's arguments in an ``ArgHold`` (``_hold``)
    while ``_held`` is not ``None`` (a class attribute: it binds as a method).
    A ``str`` delta for the same tools (``_schemas_for``) that cannot complete
    a closer (it lacks every character of ``_hold.stops``) is kept there and answered
    ``_kept_shape.build(None, "")`` (a ``ModelShape``: SGLang's empty text
    result), with no Python frame; every other delta goes to
    ``self._held_streaming(new_text, tools)``."""
    cdef dict d = _dict_of(self)
    if type(new_text) is str and d.get("_held") is not None and tools is d.get("_schemas_for"):
        shape = d.get("_kept_shape")
        if type(shape) is ModelShape and _hold_keeps_plain(d.get("_hold"), <str>new_text):
            return (<ModelShape>shape)._build(None, "")
    return self._held_streaming(new_text, tools)


def max_held_step(self, delta):
    """MAX's ``parse_delta`` for an integration class that keeps the deltas
    of an open call's arguments in an ``ArgHold`` (``_hold``) while ``_held``
    is not ``None`` (a class attribute: it binds as a method).  A ``str``
    delta that cannot complete a closer (it lacks every character of ``_hold.stops``) is kept
    there and answered ``[]``, with no Python frame; every other delta goes
    to ``self._held_parse(delta)``."""
    cdef dict d = _dict_of(self)
    if type(delta) is str and d.get("_held") is not None and _hold_keeps_plain(d.get("_hold"), <str>delta):
        return []
    return self._held_parse(delta)


def step_args(p, str delta, cls):
    """``step``, except that a result made of one piece of the open call's
    arguments (``p._cur``) comes back as that piece's text (a ``str``)."""
    return _step(p, delta, cls, True)


def push_content(p, str delta):
    """``p._push(delta)`` for a non-empty ``delta`` (see the twin): the content
    it gave, joined (``""`` for none)."""
    cdef dict d = _dict_of(p)
    text = _feed(p, delta, d)
    if text is _ALL_CONTENT:
        return delta
    if text:
        d["_cur"].args.append(text)
    cdef list events = p._events
    if PyList_GET_SIZE(events) == 0:
        return ""
    p._events = []
    cdef list parts = []
    cdef tuple e
    for e in events:
        if e[0] == "c":
            parts.append(e[2])
    return parts[0] if PyList_GET_SIZE(parts) == 1 else "".join(parts)


cdef object _LIST_APPEND = type([].append)


def stretch(p, tuple drops not None):
    """The ``Markers`` of the stretch the parser waits in, reading it without
    a word (see the twin), else ``None``."""
    cdef dict d = _dict_of(p)
    lane = d["_lane"]
    if type(lane) is not tuple or PyTuple_GET_SIZE(lane) != 2 or d["_rec"] is not None \
            or d["_pos"] != len(d["_buf"]):
        return None
    ms = <object>PyTuple_GET_ITEM(lane, 0)
    sink = <object>PyTuple_GET_ITEM(lane, 1)
    if ms is d["_content_markers"]:
        return None
    if type(sink) is _LIST_APPEND:
        return ms if type(sink.__self__) is list and sink.__name__ == "append" else None
    for x in drops:
        if sink is x:
            return ms
    return None


cdef object _MISSING = object()
cdef dict _base_resume = {}    # parser class -> its _resume when it is the base one, else None
cdef dict _base_content = {}   # the same for _content


cdef object _base_method(cls, str name, dict cache):
    """``cls.<name>`` when it is the one the most basic class defining
    ``name`` has (BaseToolParser's, found through the MRO, so this module
    imports nothing of the tool package), else ``None``; kept in ``cache``
    (one per name, keyed by class)."""
    f = cache.get(cls, _MISSING)
    if f is _MISSING:
        f = None
        for k in reversed(cls.__mro__):
            if name in k.__dict__:
                base = k.__dict__[name]
                if getattr(cls, name, None) is base:
                    f = base
                break
        if len(cache) > 512:  # classes made at run time: keep the cache bounded
            cache.clear()
        cache[cls] = f
    return f


cdef int _resume(p, dict d) except -1:
    """``p._resume()``, run here when the parser's class keeps the base one
    (same steps: resume the generator; at its end, close a call left open)."""
    keeps = _base_method(type(p), "_resume", _base_resume) is not None
    if not keeps:
        p._resume()
        return 0
    gen = d["_gen"]
    if gen is None:
        return 0
    try:
        gen.send(None)
    except StopIteration:
        d["_gen"] = None
        if d["_cur"] is not None:
            p._close_call(False)
    return 0


cdef extern from "Python.h":
    bint PyMethod_Check(object o)
    PyObject* PyMethod_GET_SELF(object o)
    PyObject* PyMethod_GET_FUNCTION(object o)


cdef object _ALL_CONTENT = object()   # _feed's answer: the whole delta is content (no event written)


cdef inline bint _content_sink(p, sink):
    # whether ``sink`` is ``p._content`` bound to ``p``, the base one
    if not PyMethod_Check(sink) or PyMethod_GET_SELF(sink) != <PyObject*>p:
        return False
    base = _base_method(type(p), "_content", _base_content)
    return PyMethod_GET_FUNCTION(sink) == <PyObject*>base


cdef object _feed(p, str delta, dict d):
    """``p._push(delta)``, the scan the parser waits in fed directly while it
    cannot finish in the chunk (see ``step``): the text of the open call's
    arguments that the lane wrote and the parser did not (``_lane_args``),
    ``_ALL_CONTENT`` when the whole delta is content (the parser's base
    ``_content`` would get it whole, and no event is pending: nothing is
    written, the caller answers as for that one event), else ``None``.
    ``d`` is ``p.__dict__``: the parser's attributes are read and written there (plain attributes: no descriptor of these names exists on
    any parser class)."""
    cdef str buf
    cdef object text = None
    cdef Py_ssize_t pos, h, k, n, j = -1
    cdef int status, nf, may
    cdef tuple e
    cdef list events, out
    cdef JsonReader reader
    cdef Py_UCS4 firsts[16]
    lane = d["_lane"]
    if lane is None or d["_rec"] is not None:
        p._push(delta)
    else:
        buf = <str>d["_buf"]
        pos = d["_pos"]
        n = len(buf)
        # (a delta read whole below leaves _buf and _pos as they are, all of
        # _buf read, and moves _base past it: the same offsets and held text
        # as reading it from a new _buf)
        if pos >= n and type(lane) is JsonReader and (<JsonReader>lane)._plain(delta):
            # inside a string, nothing held, the delta plain characters and
            # escapes the reader keeps as written: it is the piece (what the
            # reader would write), read whole
            d["_base"] = d["_base"] + PyUnicode_GET_LENGTH(delta)
            if d["_lane_args"]:
                return delta
            (<JsonReader>lane).sink(delta)
            return None
        if type(lane) is tuple:
            ms, sink = <tuple>lane
            nf = _firsts(ms.markers, firsts)
            # nothing held: the text to read is the delta, scanned once here
            may = _may_start_f(firsts, nf, delta) if pos >= n else -1
            if may == 0 and _content_sink(p, sink) and PyList_GET_SIZE(<list>d["_events"]) == 0:
                # nothing held, no marker can start in the delta, the sink the
                # parser's own _content: the delta is content, whole
                d["_base"] = d["_base"] + PyUnicode_GET_LENGTH(delta)
                return _ALL_CONTENT
            if pos:
                d["_base"] = d["_base"] + pos
            buf = (PyUnicode_Substring(buf, pos, n) + delta) if pos < n else delta
            d["_buf"] = buf
            if may < 0:
                may = _may_start_f(firsts, nf, buf)
            # a marker before any held suffix: the generator reads it (a marker
            # only inside the held suffix is held, as the generator would)
            h = _find(ms.markers, firsts, nf, buf, 0, False, &j) if may else len(buf)
            if j >= 0:
                d["_pos"] = 0
                _resume(p, d)
            else:
                d["_pos"] = h
                if d["_lane_args"]:
                    text = (<XmlStringSink>sink).text_of(PyUnicode_Substring(buf, 0, h))
                else:
                    sink(PyUnicode_Substring(buf, 0, h))
        else:
            if pos:
                d["_base"] = d["_base"] + pos
            buf = (PyUnicode_Substring(buf, pos, n) + delta) if pos < n else delta
            d["_buf"] = buf
            if type(lane) is JsonReader:
                reader = <JsonReader>lane
                pos = 0
                status = reader._feed(buf, &pos, False)
                out = reader.out
                k = PyList_GET_SIZE(out)
                if k:
                    text = out[0] if k == 1 else "".join(out)
                    _list_cut(out, 0, k, NULL)
                    if not d["_lane_args"]:
                        reader.sink(text)
                        text = None
            else:
                pos_status = lane.feed(buf, 0, False)
                pos = pos_status[0]
                status = pos_status[1]
            d["_pos"] = pos
            if status != C_NEED:
                if text:
                    p._emit_args(text)
                    text = None
                d["_lane_status"] = status
                _resume(p, d)
    return text


cdef object _step(p, str delta, cls, bint raw):
    return _step_d(p, _dict_of(p), delta, cls, raw)


cdef object _step_d(p, dict d, str delta, cls, bint raw, PyObject** cur_out=NULL, bint* unrecorded=NULL):
    # _step with the parser's __dict__ given; a raw piece's call (p._cur) is
    # written to cur_out when given (a borrowed reference: the parser holds
    # it).  With ``unrecorded``, a piece the lane wrote is answered without
    # appending it to the call's args (``unrecorded[0]`` set: the caller appends it)
    cdef tuple e
    text = _feed(p, delta, d)
    if text is _ALL_CONTENT:
        return None
    if text:
        cur = d["_cur"]
        if raw and unrecorded != NULL:
            unrecorded[0] = True
        else:
            cur.args.append(text)
        if raw:
            if cur_out != NULL:
                cur_out[0] = <PyObject*>cur
            return text
        return [_new(cls, cur.index, None, None, text, None)]
    events = d["_events"]
    if PyList_GET_SIZE(events) == 0:
        return []
    d["_events"] = []
    if PyList_GET_SIZE(events) == 1:
        e = events[0]
        if e[0] == "c" and e[2] == delta:
            return None
        if e[0] == "a":
            if raw:
                cur = d["_cur"]
                if cur is not None and cur.index == e[1]:
                    if cur_out != NULL:
                        cur_out[0] = <PyObject*>cur
                    return e[2]
            return [_new(cls, e[1], None, None, e[2], None)]
    else:
        for e in events:
            if e[0] != "c":
                break
        else:
            if "".join([e[2] for e in events]) == delta:
                return None
    return to_deltas(events, cls)
