"""The snags a newcomer hit: the silent pure-engine fallback, the CLI's model
directories, table width, long errors, tracebacks, memory on large files and
byte order marks."""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import unicodedata
from pathlib import Path

import pytest

from reasoning_core import cli
from reasoning_core.families import FAMILIES

ROOT = Path(__file__).resolve().parent.parent
# The imported package's directory: a checkout, or site-packages when the tests run against a wheel.
PKG_ROOT = Path(cli.__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from vocab import family_tokenizer  # noqa: E402


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_COLOR", "COLUMNS", "REASONING_CORE_NO_EXTENSIONS", "REASONING_CORE_REQUIRE_EXTENSIONS")}
    env.update(extra)
    return env


def _main(capsys, monkeypatch, *args: str, stdin: bytes = b"", columns: str | None = None):
    """The CLI in-process: (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# -- a checkout without the compiled engine ------------------------------------------------------

@pytest.fixture(scope="module")
def pure_checkout(tmp_path_factory):
    """A source checkout whose engine is not compiled: the package files, no extension."""
    root = tmp_path_factory.mktemp("checkout")
    skip = shutil.ignore_patterns("*.so", "*.pyd", "*.c", "*.html", "__pycache__")
    for pkg in ("reasoning_core", "reasoning_core_py"):
        shutil.copytree(PKG_ROOT / pkg, root / pkg, ignore=skip)
    (root / "setup.py").write_text("# a checkout's build script\n")
    return root


def _python(cwd: Path, code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          env=_env(**env), timeout=120)


WARNING = "CompiledEngineMissingWarning"


def test_missing_compiled_engine_warns_once_naming_the_checkout(pure_checkout):
    r = _python(pure_checkout, "import reasoning_core as rc, reasoning_core.batch, reasoning_core.decode; "
                               "import importlib; importlib.reload(rc); print(rc.BACKEND)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "python"
    assert r.stderr.count("the compiled engine is missing") == 1 and WARNING in r.stderr, r.stderr
    assert "source checkout" in r.stderr and str(pure_checkout) in r.stderr
    assert "REASONING_CORE_NO_EXTENSIONS=1" in r.stderr


def test_missing_compiled_engine_names_the_installed_package_it_shadows(pure_checkout, tmp_path):
    # An installed reasoning-spans elsewhere on the path: Python from the checkout root imports the checkout.
    site_dir = tmp_path / "site"
    (site_dir / "reasoning_core").mkdir(parents=True)
    (site_dir / "reasoning_core" / "__init__.py").write_text("")
    info = site_dir / "reasoning_spans-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: reasoning-spans\nVersion: 0.1.0\n")
    r = _python(pure_checkout, "import reasoning_core", PYTHONPATH=str(site_dir))
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("the compiled engine is missing") == 1 and WARNING in r.stderr
    assert str(site_dir / "reasoning_core") in r.stderr and str(pure_checkout) in r.stderr
    assert "another directory" in r.stderr


def test_no_warning_when_the_pure_engine_is_chosen(pure_checkout):
    r = _python(pure_checkout, "import reasoning_core as rc; print(rc.BACKEND)", REASONING_CORE_NO_EXTENSIONS="1",
                PYTHONWARNINGS="error")
    assert (r.returncode, r.stdout.strip(), r.stderr) == (0, "python", "")


@pytest.mark.compiled
def test_no_warning_with_the_compiled_engine():
    r = _python(ROOT, "import reasoning_core as rc; print(rc.BACKEND)", PYTHONWARNINGS="error")
    assert (r.returncode, r.stdout.strip(), r.stderr) == (0, "cython", "")


def test_required_extensions_under_the_command_is_one_line(pure_checkout):
    script = pure_checkout / "reasoning-core"  # what pip writes for the console script
    script.write_text("import sys\nfrom reasoning_core.cli import main\nsys.exit(main())\n")
    for argv in ([sys.executable, "-m", "reasoning_core", "split"], [sys.executable, str(script), "split"]):
        r = subprocess.run(argv, cwd=pure_checkout, capture_output=True, text=True, timeout=120,
                           env=_env(REASONING_CORE_REQUIRE_EXTENSIONS="1"))
        assert r.returncode == 1 and r.stdout == ""
        line = _one_line(r.stderr)
        assert line.startswith("reasoning-core: error: REASONING_CORE_REQUIRE_EXTENSIONS is set"), line
    # Without the requirement the command runs on the pure engine, the warning one line of its own.
    r = subprocess.run([sys.executable, str(script), "split", "--json"], cwd=pure_checkout, capture_output=True,
                       text=True, timeout=120, env=_env())
    assert r.returncode == 0 and json.loads(r.stdout)["backend"] == "python"
    assert _one_line(r.stderr).startswith("reasoning-core: warning: the compiled engine is missing")
    # A library import still raises ImportError (CI relies on it).
    r = _python(pure_checkout, "import reasoning_core", REASONING_CORE_REQUIRE_EXTENSIONS="1")
    assert r.returncode == 1 and "ImportError: REASONING_CORE_REQUIRE_EXTENSIONS" in r.stderr


# -- --model DIR ------------------------------------------------------------------------------

def test_model_dir_without_tokenizer_is_an_error_naming_it(capsys, monkeypatch, tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen3"}))
    code, out, err = _main(capsys, monkeypatch, "split", "-", "--model", str(tmp_path), stdin=b"<think>a</think>b")
    assert code == 2 and out == ""
    line = _one_line(err)
    assert "tokenizer.json" in line and str(tmp_path) in line and "--tokenizer" in line
    assert "config.json" not in line  # that one is there
    # Given a tokenizer, the directory's config still picks the family.
    tok = tmp_path / "elsewhere.json"
    family_tokenizer("qwen3").save(str(tok))
    code, out, err = _main(capsys, monkeypatch, "split", "-", "--json", "--model", str(tmp_path), "-t", str(tok),
                           stdin=b"<think>a</think>b")
    assert code == 0, err
    assert json.loads(out)["parser"] == "qwen3" and (json.loads(out)["reasoning"], json.loads(out)["content"]) == \
        ("a", "b")


def test_empty_model_dir_says_what_is_missing(capsys, monkeypatch, tmp_path):
    code, out, err = _main(capsys, monkeypatch, "split", "-", "--model", str(tmp_path), stdin=b"x")
    assert code == 2 and out == ""
    line = _one_line(err)
    assert "config.json" in line and "tokenizer.json" in line and str(tmp_path) in line
    assert "--parser" in line and "--tokenizer" in line
    code, out, err = _main(capsys, monkeypatch, "detect", str(tmp_path))
    assert (code, out.strip()) == (0, "passthrough")
    assert "config.json" in _one_line(err)


# -- families fits the terminal ------------------------------------------------------------------

def _columns(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "FW" else 1 for c in line)


@pytest.mark.parametrize("columns", [80, 100, 132])
def test_families_table_fits_the_terminal(capsys, monkeypatch, columns):
    code, out, _ = _main(capsys, monkeypatch, "families", columns=str(columns))
    assert code == 0
    lines = out.splitlines()
    assert max(_columns(ln) for ln in lines) <= columns
    first_column = {ln.split()[0] for ln in lines[1:] if ln and not ln[0].isspace()}
    assert set(FAMILIES) <= first_column  # every family's row, its name whole
    for fam in FAMILIES.values():
        if fam.tool_parser:
            assert fam.tool_parser in out


def test_families_table_hides_columns_only_when_needed(capsys, monkeypatch):
    _, wide, _ = _main(capsys, monkeypatch, "families", columns="400")
    assert "model-id patterns" in wide.splitlines()[0] and "left out" not in wide
    _, narrow, _ = _main(capsys, monkeypatch, "families", columns="80")
    assert "model-id patterns" not in narrow.splitlines()[0] and "families --json" in narrow


def test_unknown_parser_error_is_short_with_the_closest_names(capsys, monkeypatch):
    code, out, err = _main(capsys, monkeypatch, "split", "--parser", "qwen_3")
    line = _one_line(err)
    assert code == 2 and "'qwen_3'" in line and "qwen3" in line and "reasoning-core families" in line
    assert len(line) < 200
    code, out, err = _main(capsys, monkeypatch, "split", "--parser", "zzzzzz")
    line = _one_line(err)
    assert code == 2 and "did you mean" not in line and len(line) < 120


def test_help_documents_the_json_keys_and_keep_special_tokens():
    split_help = cli.build_parser()._subparsers._group_actions[0].choices["split"].format_help()
    text = " ".join(split_help.split())
    assert '"boundary"' in text and '"delimiters"' in text and '"backend"' in text
    assert "--keep-special-tokens" in text and "special tokens" in text


# -- byte order mark -----------------------------------------------------------------------------

def test_a_byte_order_mark_is_not_reasoning(capsys, monkeypatch, tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbf" + "<think>why</think>because".encode())
    for args, stdin in (((str(path),), b""), (("-",), path.read_bytes())):
        code, out, err = _main(capsys, monkeypatch, "split", *args, "--json", stdin=stdin)
        assert code == 0, err
        got = json.loads(out)
        assert (got["reasoning"], got["content"]) == ("why", "because")
    # Only a leading mark is dropped; a bad byte is reported at its offset in the file.
    path.write_bytes(b"\xef\xbb\xbfab\xff")
    code, out, err = _main(capsys, monkeypatch, "split", str(path))
    assert code == 1 and "at byte 5" in _one_line(err)


# -- large inputs: bounded pieces -----------------------------------------------------------------

def _text(n_chars: int) -> str:
    from reasoning_core._sample import sample_text

    base = sample_text()
    return (base * (n_chars // len(base) + 1))[:n_chars]


@pytest.mark.parametrize("which", ["deepseek", "qwen3"])
def test_pieces_tokenize_as_the_whole(which, monkeypatch):
    if which == "deepseek":
        from reasoning_core._sample import load_tokenizer

        tok = load_tokenizer()
    else:
        tok = family_tokenizer("qwen3")
    text = _text(30_000) + " tail without newline " * 50
    monkeypatch.setattr(cli, "PIECE_CHARS", 2_000)
    pieces = [text[i:i + 777] for i in range(0, len(text), 777)]  # reads end anywhere
    got = list(cli._token_pieces(tok, iter(pieces), "test"))
    assert len(got) > 10  # it did cut
    assert [t for p in got for t in p] == tok.encode(text, add_special_tokens=False).ids


def test_split_and_stream_are_the_same_in_pieces(capsys, monkeypatch, tmp_path):
    path = tmp_path / "big.txt"
    path.write_text(_text(40_000), encoding="utf-8")
    whole = [_main(capsys, monkeypatch, cmd, str(path), *extra)
             for cmd, extra in (("split", ("--json",)), ("stream", ("--chunk", "7")))]
    monkeypatch.setattr(cli, "PIECE_CHARS", 1_500)
    monkeypatch.setattr(cli, "_READ_BYTES", 1_000)
    pieces = [_main(capsys, monkeypatch, cmd, str(path), *extra)
              for cmd, extra in (("split", ("--json",)), ("stream", ("--chunk", "7")))]
    assert pieces == whole and whole[0][0] == 0
    # And the split is the library's on the whole text.
    from reasoning_core import ReasoningStreamDecoder, get_parser
    from reasoning_core._sample import load_tokenizer

    tok = load_tokenizer()
    ids = tok.encode(path.read_text(encoding="utf-8"), add_special_tokens=False).ids
    dec = ReasoningStreamDecoder(get_parser("deepseek_r1", tok).begin(), tok)
    a, b = dec.push(ids), dec.finish()
    got = json.loads(whole[0][1])
    assert (got["reasoning"], got["content"]) == (a.reasoning + b.reasoning, a.content + b.content)


def _peak_rss_mb(code: str, *args: str) -> float:
    probe = textwrap.dedent(f"""
        import resource, subprocess, sys
        r = subprocess.run([sys.executable, "-c", {code!r}, *sys.argv[1:]], stdout=subprocess.DEVNULL)
        assert r.returncode == 0
        print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
    """)
    r = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=ROOT,
                       env=_env(PYTHONPATH=str(ROOT)), timeout=300)
    assert r.returncode == 0, r.stderr
    return float(r.stdout.strip())


@pytest.mark.skipif(sys.platform != "linux", reason="peak RSS in kilobytes is Linux's ru_maxrss")
def test_split_of_a_large_file_keeps_memory_bounded(tmp_path):
    """Tokenizing 1.2 MB whole costs ~200 bytes per character (about 240 MB);
    in 64 K-character pieces the peak barely moves over a small input's."""
    big = tmp_path / "big.txt"
    big.write_text(_text(1_200_000), encoding="utf-8")
    small = tmp_path / "small.txt"
    small.write_text(_text(20_000), encoding="utf-8")
    run = ("import sys; from reasoning_core import cli; cli.PIECE_CHARS = 1 << 16; "
           "sys.exit(cli.main(['split', sys.argv[1], '--json']))")
    base = _peak_rss_mb(run, str(small))
    pieces = _peak_rss_mb(run, str(big))
    # Measured here: +~25 MB in pieces; tokenized whole, the same file peaked ~250 MB higher.
    assert pieces - base < 80, (base, pieces)


# -- results and deltas ------------------------------------------------------------------------------

def test_batch_step_result_repr_shows_the_step(backend, deepseek_tokenizer):
    from reasoning_core import ReasoningBatch

    batch = ReasoningBatch("deepseek_r1", 12, tokenizer=deepseek_tokenizer, backend=backend)
    think, end = deepseek_tokenizer.token_to_id("<think>"), deepseek_tokenizer.token_to_id("</think>")
    for slot in range(12):
        batch.open(slot, [think] if slot % 2 else [think, end])
    res = batch.step(list(range(3)), [5, end, 7])
    text = repr(res)
    assert text.startswith("BatchStepResult(size=3, capacity=")
    for name in ("is_reasoning", "is_delimiter", "reasoning_ended", "in_reasoning", "is_held", "released",
                 "completed"):
        values = ", ".join(str(int(v)) for v in getattr(res, name)[:3])
        assert f"{name}=[{values}]" in text
    assert "is_delimiter=[0, 1, 0]" in text and "reasoning_ended=[0, 1, 0]" in text  # the end delimiter in slot 1
    long = repr(batch.step(list(range(12)), [5] * 12))
    assert long.count(", ...]") == 7 and "size=12" in long


def test_decoder_gives_nothing_to_send_for_a_delimiter(backend, deepseek_tokenizer):
    from reasoning_core import ReasoningStreamDecoder, get_parser

    tok = deepseek_tokenizer
    ids = tok.encode("<think>plan</think>answer", add_special_tokens=False).ids
    dec = ReasoningStreamDecoder(get_parser("deepseek_r1", tok, backend=backend).begin(), tok)
    deltas = [dec.push([t]) for t in ids] + [dec.finish()]
    by_id = dict(zip(ids, deltas))
    for marker in ("<think>", "</think>"):
        d = by_id[tok.token_to_id(marker)]
        assert not d and d.to_openai_delta() == {}  # falsy: a loop skips it
    sent = [d.to_openai_delta() for d in deltas if d]  # the documented server loop
    assert all(sent) and "".join(x.get("reasoning", "") for x in sent) == "plan"
    assert "".join(x.get("content", "") for x in sent) == "answer"


def test_stream_command_sends_no_empty_deltas(capsys, monkeypatch):
    code, out, _ = _main(capsys, monkeypatch, "stream", "-", stdin=b"<think>plan</think>answer")
    lines = [json.loads(ln) for ln in out.splitlines()]
    assert code == 0 and lines and all(lines)


def test_for_family_and_format_for_family_agree_with_the_table():
    from reasoning_core import tools

    for name, fam in FAMILIES.items():
        assert tools.format_for_family(name) == fam.tool_parser
        parser = tools.for_family(name)
        if fam.tool_parser is None:
            assert parser is None
        else:
            assert type(parser) is tools.get_parser_cls(fam.tool_parser)
    assert "format_for_family" in tools.__all__ and re.search(r"\bparser\b", tools.for_family.__doc__ or "")
    with pytest.raises(ValueError):
        tools.format_for_family("no_such_family")
