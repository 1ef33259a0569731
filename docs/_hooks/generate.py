"""MkDocs hook: the reference pages that are generated at build time.

Nothing here is copied by hand: each page is rendered from the table or
registry that the code itself reads, when ``mkdocs build`` runs:

- reference/families.md    <- reasoning_core.families.FAMILIES
- reference/model-ids.md   <- families.MODEL_PATTERNS, CONFIG_MODEL_TYPES, CONFIG_ARCHITECTURES
- reference/tool-formats.md <- reasoning_core.tools (registry, classes, Family.tool_parser, tool_tag)
- reference/engine-names.md <- families.ENGINE_PARSER_NAMES / ENGINE_NOTES / RUNTIME_ENGINE_NAMES,
  the integrations' tool-name tables (read with ``ast``, so no engine has to be installed)
- reference/cli.md         <- reasoning_core.cli.build_parser()
- performance.md           <- benchmarks/README.md (and the chart benchmarks/flows.png)

The pages live only in the built site; ``docs/`` holds no copy of them.
"""
from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the checkout's package, as the docs describe it
    sys.path.insert(0, str(ROOT))

GENERATED_NOTE = ("*This page is generated when the site is built, from {src}; "
                  "it changes when the code does.*\n\n")


# -- helpers -------------------------------------------------------------------------------

def _code(s: str) -> str:
    """One marker as inline code inside a table cell: newlines shown as \\n, a leading or
    trailing space as ␣ (it would vanish in code), pipes escaped for the table."""
    s = s.replace("\n", "\\n")
    core = s.strip(" ")
    lead, trail = len(s) - len(s.lstrip(" ")), len(s) - len(s.rstrip(" "))
    s = "␣" * lead + core + "␣" * trail
    ticks = "``" if "`" in s else "`"
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{ticks}{pad}{s}{pad}{ticks}".replace("|", "\\|")


def _codes(items) -> str:
    items = list(items)
    return ", ".join(_code(x) for x in items) if items else "—"


_CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def _cell(s: str) -> str:
    """Prose in a table cell: markup-safe outside code spans (a marker such as <answer> must not
    become HTML), pipes escaped everywhere (the table's column separator)."""
    s = s.replace("\n", " ")
    out, pos = [], 0
    for m in _CODE_SPAN.finditer(s):
        out.append(s[pos:m.start()].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))
        out.append(m.group(0))
        pos = m.end()
    out.append(s[pos:].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))
    return "".join(out).replace("|", "\\|")


def _table(head: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def _literal(module_path: Path, name: str):
    """The literal value assigned to ``name`` at the top level of a module, read without importing it."""
    tree = ast.parse(module_path.read_text(encoding="utf-8"))
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and target.id == name and node.value is not None:
            return ast.literal_eval(node.value)
    raise LookupError(f"{name} is not a literal in {module_path}")


# -- pages ---------------------------------------------------------------------------------

def families_page() -> str:
    from reasoning_core import available_parsers
    from reasoning_core.families import FAMILIES

    rows = []
    for fam in FAMILIES.values():
        starts = "reasoning" if fam.starts_in_reasoning else "content"
        if fam.awaiting_start and fam.enable:
            starts += f" ({_codes(fam.enable)} in the prompt: waits for the start)"
        elif fam.awaiting_start:
            starts += " (reasoning opens only at an explicit start)"
        elif fam.enable:
            starts += f" ({_codes(fam.enable)} in the prompt enables thinking)"
        consumed = list(fam.headers) + list(fam.frames)
        extra = []
        if fam.label:
            extra.append(f"label {_code(fam.label)} stripped")
        if fam.text_markers:
            extra.append("plain-text markers (matched over token bytes)")
        if fam.notes:
            extra.append(_cell(fam.notes))
        rows.append([
            f"`{fam.name}`", _codes(fam.aliases), _codes(fam.start), _codes(fam.end),
            _codes(list(fam.terminators) + list(fam.header_terminators)), _codes(consumed), starts,
            f"`{fam.tool_parser}`" if fam.tool_parser else "—", "; ".join(extra) or "—",
        ])
    return (
        "# Families\n\n"
        + GENERATED_NOTE.format(src="`reasoning_core.families.FAMILIES`")
        + f"{len(FAMILIES)} families, {len(available_parsers())} names with the aliases "
          "(`reasoning_core.available_parsers()`). What the columns mean: [Concepts](../concepts.md). "
          "**start / end** are consumed; **terminators** end reasoning and stay in content; **framing** "
          "(headers and frames) is consumed and belongs to neither side; **starts in** is the state "
          "without a prompt (with one, `will_reason_after_prompt` decides); **tool format** is "
          "`Family.tool_parser` (`reasoning_core.tools.for_family`). In markers, `\\n` is a newline and "
          "`␣` a space at the start or end of the marker.\n\n"
        + _table(["name", "aliases", "start", "end", "terminators (kept in content)", "framing (consumed)",
                  "starts in", "tool format", "notes"], rows)
    )


def model_ids_page() -> str:
    from reasoning_core.families import CONFIG_ARCHITECTURES, CONFIG_MODEL_TYPES, MODEL_PATTERNS

    pats = [[str(i), _code(p), f"`{n}`"] for i, (p, n) in enumerate(MODEL_PATTERNS, 1)]
    types = [[f"`{k}`", f"`{v}`"] for k, v in CONFIG_MODEL_TYPES.items()]
    archs = [[f"`{k}`", f"`{v}`"] for k, v in CONFIG_ARCHITECTURES.items()]
    return (
        "# Model-id patterns\n\n"
        + GENERATED_NOTE.format(src="`reasoning_core.families.MODEL_PATTERNS`, `CONFIG_MODEL_TYPES` and "
                                    "`CONFIG_ARCHITECTURES`")
        + "`reasoning_core.parser_for_model(model_id_or_config)` lower-cases the id and returns the parser of "
          "the first pattern that matches (`re.search`), in this order; no match gives `\"passthrough\"`. "
          "How the lookup works, with tested examples: [Choosing the parser from a model "
          "id](../how-to/model-ids.md).\n\n"
        + _table(["#", "pattern", "parser"], pats)
        + "\n## From a config: `model_type`\n\n"
          "Used when the config's `_name_or_path` matches no pattern above.\n\n"
        + _table(["model_type", "parser"], types)
        + "\n## From a config: `architectures`\n\n"
        + _table(["architecture", "parser"], archs)
    )


def tool_formats_page() -> str:
    from reasoning_core import tools
    from reasoning_core.families import FAMILIES

    by_class: dict[type, list[str]] = {}
    for name in tools.available():
        by_class.setdefault(tools.get_parser_cls(name), []).append(name)
    used_by: dict[str, list[str]] = {}
    for fam in FAMILIES.values():
        if fam.tool_parser:
            used_by.setdefault(fam.tool_parser, []).append(fam.name)
    rows = []
    for cls, names in sorted(by_class.items(), key=lambda kv: kv[1][0]):
        doc = (cls.__doc__ or "").strip().split("\n\n")[0]
        doc = " ".join(doc.split()).rstrip(":") + ("" if doc.rstrip().endswith((".", ")")) else "")
        fams = sorted({f for n in names for f in used_by.get(n, [])})
        tag = "yes" if getattr(cls, "tool_tag", None) is not None else "—"
        rows.append([", ".join(f"`{n}`" for n in names), f"`{cls.__name__}`", _codes(fams), tag,
                     _cell(doc) or "—"])
    return (
        "# Tool formats\n\n"
        + GENERATED_NOTE.format(src="the `reasoning_core.tools` registry, its classes' docstrings, "
                                    "`Family.tool_parser` and each class's `tool_tag`")
        + f"{len(tools.available())} names resolve with `tools.create(name)` (`tools.available()`); names "
          "in one row are the same parser class. **families** are the rows of the family table whose "
          "`tool_parser` is this format; **structural tag** says whether "
          "[`structural_tag()`](../how-to/structural-tags.md) can build a grammar for it. How to use them: "
          "[Tool calls](../how-to/tool-calls.md).\n\n"
        + _table(["names", "class", "families", "structural tag", "description"], rows)
    )


def engine_names_page() -> str:
    from reasoning_core import tools
    from reasoning_core.families import ENGINE_NOTES, ENGINE_PARSER_NAMES, RUNTIME_ENGINE_NAMES

    engines = ("vllm", "sglang", "max")
    label = {"vllm": "vLLM", "sglang": "SGLang", "max": "MAX"}
    fams: dict[str, dict[str, list[str]]] = {}
    for eng in engines:
        for name, fam in ENGINE_PARSER_NAMES.get(eng, {}).items():
            if name in RUNTIME_ENGINE_NAMES.get(eng, ()):
                fam = "built at run time (`response_template_family`)"
            else:
                fam = f"`{fam}`"
            fams.setdefault(fam, {}).setdefault(eng, []).append(name)
    rows = [[fam] + [", ".join(f"`{n}`" for n in sorted(d.get(e, []))) or "—" for e in engines]
            for fam, d in fams.items()]
    notes = [[label[e], f"`{n}`", _cell(t)] for (e, n), t in ENGINE_NOTES.items()]

    integ = ROOT / "reasoning_core" / "integrations"
    vllm_tools = dict(_literal(integ / "vllm.py", "_TOOL_FORMATS"))
    more, vllm_unserved = tools.engine_names("vllm")
    vllm_tools.update(more)
    sgl_tools = {k: v[0] for k, v in _literal(integ / "sglang.py", "_TOOL_NAMES").items()}
    more, sgl_unserved = tools.engine_names("sglang")
    sgl_tools.update({k: (v[0] if isinstance(v, tuple) else v) for k, v in more.items()})
    max_tools = {k: k for k in _literal(integ / "max.py", "_MAX_TOOL_MODULES")}

    ours = set(vllm_tools.values()) | set(sgl_tools.values())

    def canon(fmt: str) -> str:  # MAX's spellings (deepseekv3, llama, ...) -> the format's name in ours
        if fmt in ours:
            return fmt
        cls = tools.get_parser_cls(fmt)
        return next((n for n in sorted(ours) if tools.get_parser_cls(n) is cls), fmt)

    tool_rows: dict[str, dict[str, list[str]]] = {}
    for eng, table in (("vllm", vllm_tools), ("sglang", sgl_tools), ("max", max_tools)):
        for name, fmt in table.items():
            tool_rows.setdefault(canon(fmt), {}).setdefault(eng, []).append(name)
    trows = [[f"`{fmt}`"] + [", ".join(f"`{n}`" for n in sorted(d.get(e, []))) or "—" for e in engines]
             for fmt, d in sorted(tool_rows.items())]
    unserved = [[label[e], f"`{n}`", _cell(why)] for e, tbl in (("vllm", vllm_unserved), ("sglang", sgl_unserved))
                for n, why in sorted(tbl.items())]
    return (
        "# Engine name maps\n\n"
        + GENERATED_NOTE.format(src="`reasoning_core.families.ENGINE_PARSER_NAMES`, `ENGINE_NOTES`, "
                                    "`RUNTIME_ENGINE_NAMES` and the integrations' tool-name tables")
        + "## Reasoning parsers\n\n"
          "Every reasoning-parser name that vLLM, SGLang and MAX register ("
        + ", ".join(f"{label[e]} {len(ENGINE_PARSER_NAMES.get(e, {}))}" for e in engines)
        + "), by the family that serves it "
          "(`ENGINE_PARSER_NAMES[engine][name]`). The integrations serve each under the engine's name "
          "(`register(replace=True)`) or as `rc_<name>`: [vLLM](../engines/vllm.md), "
          "[SGLang](../engines/sglang.md), [MAX](../engines/max.md).\n\n"
        + _table(["family", "vLLM", "SGLang", "MAX"], rows)
        + "\n### Where an engine's parser departs from the family's defaults\n\n"
          "`ENGINE_NOTES[(engine, name)]`: usually a request flag that sets the start state, which the "
          "prompt decides here. Under the engine's name, the integration follows the engine.\n\n"
        + _table(["engine", "name", "note"], notes)
        + "\n## Tool parsers\n\n"
          "Every tool-parser name each engine registers that the integrations serve, by our format "
          "(`reasoning_core.tools`).\n\n"
        + _table(["format", "vLLM", "SGLang", "MAX"], trows)
        + "\n### Not served\n\n"
        + _table(["engine", "name", "why"], unserved)
    )


def _action_row(a: argparse.Action) -> list[str] | None:
    if a.help == argparse.SUPPRESS or isinstance(a, argparse._HelpAction):
        return None
    if a.option_strings:
        flag = ", ".join(f"`{o}`" for o in a.option_strings)
        if a.nargs != 0 and not isinstance(a, (argparse._StoreConstAction, argparse._VersionAction)):
            meta = a.metavar or (("{" + ",".join(a.choices) + "}") if a.choices else a.dest.upper())
            flag += f" `{meta}`"
    else:
        flag = f"`{a.metavar or a.dest}`" + (" (optional)" if a.nargs == "?" else "")
    choices = ", ".join(f"`{c}`" for c in a.choices) if a.choices else ""
    default = "" if a.default in (None, False, argparse.SUPPRESS) or a.nargs == 0 else f"`{a.default}`"
    return [flag.replace("|", "\\|"), _cell(a.help or ""), choices or "—", default or "—"]


def cli_page() -> str:
    from reasoning_core.cli import build_parser

    ap = build_parser()
    ap.prog = "reasoning-core"
    out = ["# Command-line reference\n\n",
           GENERATED_NOTE.format(src="the argument parser, `reasoning_core.cli.build_parser()`"),
           f"{ap.description}\n\n",
           "`reasoning-core` is installed with `pip install \"reasoning-spans[cli]\"`; "
           "`python -m reasoning_core` is the same command. A walk-through: "
           "[Getting started](../getting-started.md#the-command-line).\n\n",
           "```text\n", ap.format_usage(), "```\n\n"]
    top = [r for r in (_action_row(a) for a in ap._actions if not isinstance(a, argparse._SubParsersAction)) if r]
    if top:
        out.append(_table(["option", "what it does", "choices", "default"], top) + "\n")
    sub = next(a for a in ap._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help for c in sub._choices_actions}
    for name, p in sub.choices.items():
        p.prog = f"reasoning-core {name}"
        out.append(f"## `{name}`\n\n{_cell(helps.get(name) or '')}.\n\n")
        if p.description:
            out.append(f"{p.description}\n\n")
        out += ["```text\n", p.format_usage(), "```\n\n"]
        rows = [r for r in (_action_row(a) for a in p._actions) if r]
        if rows:
            out.append(_table(["argument", "what it does", "choices", "default"], rows) + "\n")
    out.append(CLI_NOTES)
    return "".join(out)


CLI_NOTES = """## Exit codes

- `0`: success.
- `1`: an input or tokenizer could not be read. The error names the path.
- `2`: bad arguments, an unknown parser (the error lists the valid names), a `--model` that matches
  no family without `--parser`, or an unknown workload. You get one line on stderr, never a
  traceback.

## `split --json`

`split --json` prints one object:

- `"reasoning"`, `"content"`: the two texts, decoded as `stream` decodes them;
- `"tokens"`: counts of token ids, `{"reasoning", "content", "delimiters", "boundary"}`.
  `"boundary"` counts the tokens that carry a marker's bytes *and* text beside it (markers that
  are not whole tokens: see [Concepts](../concepts.md#markers-that-are-not-whole-tokens)); they are
  among the `"delimiters"`, and their outside text is in `"reasoning"` / `"content"`;
- `"parser"`: the family used; `"backend"`: `"cython"` or `"python"`.

`--keep-special-tokens` keeps the text of special tokens (BOS, EOS, tool-call markers that are
special tokens) in the printed texts; by default they are skipped, as servers do.
"""


def performance_page() -> str:
    text = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    text = re.sub(r"^# Benchmarks\n", "", text, count=1)

    def link(m: re.Match) -> str:  # links relative to benchmarks/ -> the repository files by name
        label, target = m.group(1), m.group(2)
        if target.startswith(("http://", "https://", "#", "flows.png")):
            return m.group(0)
        return label if label.startswith("`") else f"{label} (`{target}`)"

    text = re.sub(r"(?<!!)\[([^\]]+)\]\(([^)]+)\)", link, text)
    head = (PERFORMANCE_INTRO + "\n*The rest of this page is `benchmarks/README.md` of the checkout, "
            "included when the site is built.*\n\n")
    return head + text


PERFORMANCE_INTRO = """# Performance

The installed command times the library on its own (a few seconds):

```bash
reasoning-core bench --quick                  # a few seconds: the installed library alone
reasoning-core bench --json results.json      # about 15 s; machine-readable results too
```

`reasoning-core bench` times `stream()` per token, one `split()` over a 1M-token NumPy array,
a 1,024-request batch step and the text-level `feed()` on the bundled sample, on the compiled
and the pure engine, and prints medians, the pure/compiled ratio and nanoseconds per token,
request or chunk. The full comparison (every workload, memory, the max / sglang / vllm parsers
when installed, and the figures the project aims for, each marked met or not met) is dev
tooling in a source checkout:

```bash
python benchmarks/run.py --quick              # a few seconds (about 40 s without --quick); also --peers, --json FILE, --markdown
python -m pytest benchmarks/ --benchmark-only # the same workloads under pytest-benchmark (c / py side by side)
python -m pytest benchmarks/ -q --benchmark-disable   # each workload once, as a smoke check
```

The comparisons with the engines' own parsers need the engines installed: [Running against the
engines](engines/running.md).
"""


PAGES = {
    "reference/families.md": families_page,
    "reference/model-ids.md": model_ids_page,
    "reference/tool-formats.md": tool_formats_page,
    "reference/engine-names.md": engine_names_page,
    "reference/cli.md": cli_page,
    "performance.md": performance_page,
}


def on_files(files, config):
    from mkdocs.structure.files import File  # here: the doc-block runner imports this module too

    for uri, render in PAGES.items():
        if files.get_file_from_path(uri) is not None:
            raise RuntimeError(f"docs/{uri} is generated at build time; remove the file")
        files.append(File.generated(config, uri, content=render()))
    chart = ROOT / "benchmarks" / "flows.png"
    files.append(File.generated(config, "flows.png", abs_src_path=str(chart)))
    return files


# The doc-block runner's fence options (```python fixture:needs_max) are not
# part of the language name: drop them from what the site renders.
_FENCE_OPTIONS = re.compile(r"^(\s*```\s*python)((?:[ \t]+(?:fixture:\S+|notest))+)[ \t]*$", re.M)


def _table_code(line: str) -> str:
    # GitHub needs "\|" for a pipe inside a code span in a table row; Python-Markdown
    # keeps code spans whole and would show the backslash.
    if not line.lstrip().startswith("|"):
        return line
    return _CODE_SPAN.sub(lambda m: m.group(0).replace("\\|", "|"), line)


def on_page_markdown(markdown, page, config, files):
    markdown = _FENCE_OPTIONS.sub(r"\1", markdown)
    return "\n".join(_table_code(line) for line in markdown.split("\n"))
