"""A seeded search over the editor tooling and the CLI: every program of the repository
and of the spec, and mutants of each, through `serq check | ir | expand | fmt | run`, the
formatter's promises and the incremental parser.

Sources: every `.sq` file under examples/, tests/sim/programs, tests/corpus, bench/,
tests/oracle/main_programs and tests/expand/programs, and the spec's own program text
(`SPEC_DIR`'s serq-language.txt and serq-workload.txt: the complete `fn main()` program
and every code-looking block, the fragments as inputs that need not be valid).

Mutants (`MUTATIONS`): a deleted token, a truncation, two lines swapped, a non-ASCII
character (accents, CJK, an emoji outside the BMP, zero-width and bidi marks), CRLF or
lone CR line ends, tabs for indentation, a very long line, deep nesting, the empty file,
a byte-order mark, comments and white space added between tokens, another program pasted
in. Some of them keep the program's meaning (`KEEPS_MEANING`): for those, the mutant links to the original's IR.

Checks, for each text (a failure is a line saying what and where):
- `cli`: `serq check`, `expand`, `ir`, `fmt --check` (and `run --horizon 30` on texts
  that link) in-process: no exception escapes, no `Traceback` or `E-internal` in the
  output, a documented exit status, an error status only with an `error` diagnostic whose
  `-->` position lies inside the file;
- `fmt`: formatting is idempotent, keeps every comment and the syntax diagnostics' count,
  and a text that parsed formats to text that parses to the same tree and links to the
  same IR (origins aside); a range formatted (one that cuts a token or a comment too)
  keeps the program and its comments;
- `incremental`: random editor edits (a range deleted, text inserted, an undo of the
  edit before), each parsed through one `ItemCache` and through
  `serq.incremental.analyze` with one `Cache`, give the tree and diagnostics of a fresh
  parse and of a whole analysis, and a text seen before gives what it gave then;
- `tools`: `serq run --emit-python` (its source compiles), `serq explain` of every code
  `check` reports, `--set`/`--def` of every kind (numbers, inf, -0, NaN, strings, names
  not declared, bad expressions, one name twice) on `check`, `ir` and `run` (a usage
  error for all three or for none), and `serq sweep` then
  `serq plot` on its results: no traceback, a documented exit status, an error status
  with something on stderr; a sweep over values one of which `serq check --set` rejects
  runs nothing and exits with that check's status.

By hand: `python tests/fuzz/tools_search.py --seed 1 --mutants 4 --edits 6`
(`--only fmt,incremental` to pick checks, `--limit N` for the first N sources).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import re
import signal
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPEC_DIR = Path("/work/shared/spec")
FOLDERS = (
    "examples",
    "tests/sim/programs",
    "tests/corpus",
    "bench",
    "tests/oracle/main_programs",
    "tests/expand/programs",
)
SCRATCH = ".tools-search-"  # the prefix of the mutant files (in `mirror()`)
LIMIT = 20.0  # seconds of CPU time one check of one text may take (wall time for a child)
RUN_HORIZON = "30"


@dataclass(frozen=True)
class Source:
    """A program: where it lives (a `use` is read beside it) and its text."""

    path: Path
    text: str
    name: str


def sources() -> list[Source]:
    """Every program of the repository's folders, then the spec's program texts."""
    out = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.sq")):
            if path.name.startswith(SCRATCH):
                continue
            text = path.read_bytes().decode("utf-8", "surrogateescape")
            out.append(Source(path, text, str(path.relative_to(ROOT))))
    out += spec_sources()
    return out


def spec_sources() -> list[Source]:
    """The spec's code: each run of lines that reads as serQ (braces or `;`-ended lines,
    the complete `fn main()` program among them), as a file of examples/."""
    out = []
    for spec in ("serq-language.txt", "serq-workload.txt"):
        path = SPEC_DIR / spec
        if not path.is_file():
            continue
        for k, block in enumerate(_code_blocks(path.read_text(encoding="utf-8"))):
            name = f"{spec}#{k}"
            out.append(Source(ROOT / "examples" / f"spec_{Path(spec).stem}_{k}.sq", block, name))
    return out


_CODE_LINE = re.compile(r"^\s*(?:[a-z_][A-Za-z0-9_]*\b.*[;{}]|[{}]+)\s*$")


def _code_blocks(text: str) -> Iterator[str]:
    block: list[str] = []
    for line in [*text.splitlines(), ""]:
        if _CODE_LINE.match(line) and "\t" not in line and len(line) < 200:
            block.append(line)
            continue
        if len(block) >= 2:
            yield "\n".join(block) + "\n"
        block = []


# ---------------------------------------------------------------- mutations

_TOKEN = re.compile(
    r'//[^\n]*|/\*[\s\S]*?\*/|"[^"\n]*"|args\.number\b|[A-Za-z_][A-Za-z0-9_]*'
    r"|[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+|==|!=|<=|>=|&&|\|\||\S"
)
UNICODE = (
    "é",
    "Ω",
    "中文",
    "😀",
    "\u200b",
    "\u202e",
    "\u00a0",
    "e\u0301",
    "𝔵",
    "ß",
    "\u2028",
    "\x0c",
    "\x85",
)


def _tokens(text: str) -> list[re.Match]:
    return list(_TOKEN.finditer(text))


def delete_token(rng: random.Random, text: str) -> str:
    found = _tokens(text)
    if not found:
        return text
    m = rng.choice(found)
    return text[: m.start()] + text[m.end() :]


def truncate(rng: random.Random, text: str) -> str:
    return text[: rng.randrange(len(text) + 1)]


def swap_lines(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    if len(lines) < 2:
        return text
    a = rng.randrange(len(lines) - 1)
    b = a + 1 if rng.random() < 0.6 else rng.randrange(len(lines))
    lines[a], lines[b] = lines[b], lines[a]
    return "\n".join(lines)


def unicode(rng: random.Random, text: str) -> str:
    """A non-ASCII character in a comment, a string, a name, or anywhere."""
    char = rng.choice(UNICODE)
    found = _tokens(text)
    kind = rng.random()
    if kind < 0.3:  # a comment of its own that holds it, before a line
        starts = [0] + [m.end() for m in re.finditer("\n", text)]
        at = rng.choice(starts)
        return text[:at] + f"// {char} note\n" + text[at:]
    if kind < 0.5 and found:  # in a trailing comment
        ends = [m.start() for m in re.finditer("\n", text)] or [len(text)]
        at = rng.choice(ends)
        return text[:at] + f" // {char}{char}" + text[at:]
    if kind < 0.7:  # in a name
        names = [m for m in found if m.group()[0].isalpha()]
        if names:
            m = rng.choice(names)
            return text[: m.end()] + char + text[m.end() :]
    at = rng.randrange(len(text) + 1)
    return text[:at] + char + text[at:]


def crlf(rng: random.Random, text: str) -> str:
    return text.replace("\n", "\r\n" if rng.random() < 0.7 else "\r")


def tabs(rng: random.Random, text: str) -> str:
    return re.sub(r"(?m)^( {2})+", lambda m: "\t" * (len(m.group()) // 2), text)


def long_line(rng: random.Random, text: str) -> str:
    """Either the whole program on one line (its `//` comments as `/* */`), or a long sum."""
    if rng.random() < 0.5:
        one = re.sub(r"//([^\n]*)", lambda m: "/*" + m.group(1).replace("*/", "") + "*/", text)
        return re.sub(r"\s*\n\s*", " ", one)
    numbers = [m for m in _tokens(text) if m.group()[0].isdigit()]
    if not numbers:
        return text
    m = rng.choice(numbers)
    return text[: m.start()] + "0 + " * rng.choice((500, 3000)) + text[m.start() :]


def deep_nesting(rng: random.Random, text: str) -> str:
    numbers = [m for m in _tokens(text) if m.group()[0].isdigit()]
    depth = rng.choice((50, 200, 1000))
    if numbers and rng.random() < 0.7:
        m = rng.choice(numbers)
        return text[: m.start()] + "(" * depth + m.group() + ")" * depth + text[m.end() :]
    at = text.find("{")
    at = len(text) if at < 0 else at + 1
    return text[:at] + " loop {" * depth + " end;" + " }" * depth + text[at:]


def empty(rng: random.Random, text: str) -> str:
    return rng.choice(("", "\n", "  \n\t\n", "\ufeff", "// nothing\n", "/*"))


def bom(rng: random.Random, text: str) -> str:
    return text if text.startswith("\ufeff") else "\ufeff" + text


def _after_tokens(rng: random.Random, text: str, most: int, fillers: tuple[str, ...]) -> str:
    """`text` with one to `most` of `fillers` put after random tokens that are not
    comments (each with a space first when it is a comment)."""
    found = _tokens(text)
    for _ in range(rng.randint(1, most)):
        if not found:
            break
        m = rng.choice(found)
        if m.group().startswith(("//", "/*")):
            continue
        filler = rng.choice(fillers)
        if filler.startswith(("//", "/*")):
            filler = " " + filler
        text = text[: m.end()] + filler + text[m.end() :]
        found = _tokens(text)
    return text


def comments(rng: random.Random, text: str) -> str:
    """Comments between tokens and at the ends of lines (the meaning kept)."""
    return _after_tokens(rng, text, 4, ("/* c */", "/**/", "/* a\nb */", "// c\n", "// é 😀\n"))


def spaces(rng: random.Random, text: str) -> str:
    """White space (spaces, new lines, tabs) added between tokens: the meaning kept."""
    return _after_tokens(rng, text, 6, ("  ", "\n", "\n\n\n", "\t", " \n  "))


def bad_bytes(rng: random.Random, text: str) -> str:
    """Bytes that are not UTF-8 (as `decode` escapes them), in a comment or anywhere."""
    junk = "".join(rng.choice(("\udcff", "\udcc3", "\udce2\udc82", "\udc80")) for _ in range(2))
    at = rng.randrange(len(text) + 1)
    if rng.random() < 0.5:
        return text[:at] + "// " + junk + "\n" + text[at:]
    return text[:at] + junk + text[at:]


_PASTED: list[str] = []


def paste(rng: random.Random, text: str) -> str:
    """A whole other program pasted into this one, at a line start or anywhere."""
    if not _PASTED:
        _PASTED.extend(s.text for s in sources())
    at = rng.randrange(len(text) + 1)
    if rng.random() < 0.6:
        at = text.rfind("\n", 0, at) + 1
    return text[:at] + rng.choice(_PASTED) + text[at:]


MUTATIONS: tuple[Callable[[random.Random, str], str], ...] = (
    bad_bytes,
    delete_token,
    truncate,
    swap_lines,
    unicode,
    crlf,
    tabs,
    long_line,
    deep_nesting,
    empty,
    bom,
    comments,
    spaces,
    paste,
)
KEEPS_MEANING = {"crlf", "tabs", "bom", "comments", "spaces"}


@dataclass(frozen=True)
class Text:
    """One text to check: its source, the mutations applied (by name), the seed."""

    source: Source
    mutations: tuple[str, ...]
    seed: int
    text: str

    @property
    def label(self) -> str:
        how = "+".join(self.mutations) or "as is"
        return f"{self.source.name} [{how}, seed {self.seed}]"


def texts(items: list[Source], mutants: int, seed: int) -> Iterator[Text]:
    """Each source as it is, then `mutants` mutants of it, the same for the same `seed`."""
    for source in items:
        yield Text(source, (), seed, source.text)
        for i in range(mutants):
            s = seed * 1_000_003 + zlib.crc32(source.name.encode()) * 101 + i
            rng = random.Random(s)
            text, applied = source.text, []
            ops = [rng.choice(MUTATIONS) for _ in range(rng.choice((1, 1, 2)))]
            if rng.random() < 0.3:  # a mutant that keeps the meaning: those are compared
                ops = [rng.choice([m for m in MUTATIONS if m.__name__ in KEEPS_MEANING])]
            for op in ops:
                text = op(rng, text)
                applied.append(op.__name__)
            yield Text(source, tuple(applied), s, text)


# ---------------------------------------------------------------- checks


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise `_Timeout` in the block after `seconds` of this process's CPU time (not of the
    wall clock: a machine busy with other work, such as another test worker, must not turn
    a slow check into a finding)."""
    old = signal.signal(signal.SIGPROF, _alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def _where(error: BaseException) -> str:
    import traceback

    frames = traceback.extract_tb(error.__traceback__)
    last = next((f for f in reversed(frames) if "/serq" in f.filename), frames[-1])
    return f"{type(error).__name__}: {str(error)[:200]} at {last.filename}:{last.lineno}"


def _stripped(value):
    """`value` (an AST or IR) with its source positions left out."""
    from serq.diagnostics import Span

    if isinstance(value, Span):
        return "span"
    if is_dataclass(value) and not isinstance(value, type):
        return (
            type(value).__name__,
            tuple(_stripped(getattr(value, f.name)) for f in fields(value) if f.name != "span"),
        )
    if isinstance(value, (list, tuple)):
        return tuple(_stripped(v) for v in value)
    if isinstance(value, dict):
        return {k: _stripped(v) for k, v in value.items() if k != "origin"}
    return value


def ir_of(text: str, path: str):
    """The IR `text` links to as the file `path`, origins left out, and the codes of its
    diagnostics (None for the IR when it does not link)."""
    from serq import api
    from serq.ir import codec

    program, diagnostics = api.link_source(text, path)
    codes = sorted(d.code for d in diagnostics)
    if program is None:
        return None, codes
    return _json_stripped(json.loads(codec.to_json(program))), codes


def _json_stripped(value):
    if isinstance(value, dict):
        return {k: _json_stripped(v) for k, v in value.items() if k != "origin"}
    if isinstance(value, list):
        if len(value) == 7 and all(type(v) is int for v in value):
            return "span"
        return [_json_stripped(v) for v in value]
    return value


_WORD = re.compile(r'//[^\n]*|/\*[\s\S]*?\*/|"[^"\n]*"|([A-Za-z_][A-Za-z0-9_]*)')


def _words(text: str) -> list[str]:
    """The names and keywords of `text` outside comments and strings, sorted."""
    return sorted(m.group(1) for m in _WORD.finditer(text) if m.group(1))


def _comment_bodies(text: str) -> list[str]:
    """The words of `text`'s comments (fmt may join two trailing comments of one line)."""
    from serq.formatter.comments import comments as found

    return sorted(w for c in found(text) for w in c.text.split() if w not in ("//", "/*", "*/"))


def check_fmt(item: Text) -> list[str]:
    """The formatter's promises on `item`."""
    from serq.formatter import format_source
    from serq.syntax import parse
    from serq.syntax.source_text import lines_ended

    path = str(item.source.path)
    text = item.text
    out = []
    first = format_source(text, path)
    again = format_source(first.text, path)
    if again.text != first.text:
        out.append("fmt: not idempotent")
    if len(again.diagnostics) != len(first.diagnostics):
        out.append(f"fmt: {len(first.diagnostics)} syntax errors became {len(again.diagnostics)}")
    if _comment_bodies(lines_ended(first.text)) != _comment_bodies(lines_ended(text)):
        lost = set(_comment_bodies(text)) ^ set(_comment_bodies(first.text))
        out.append(f"fmt: comments changed: {sorted(lost)[:3]}")
    if _words(lines_ended(first.text)) != _words(lines_ended(text)):
        lost = set(_words(text)) ^ set(_words(first.text))
        out.append(f"fmt: the names and keywords changed: {sorted(lost)[:5]}")
    if first.diagnostics:
        return out
    before = parse(lines_ended(text), path).module
    after = parse(first.text, path).module
    if _stripped(after) != _stripped(before):
        out.append("fmt: the formatted text parses to another tree")
    original = ir_of(text, path)
    if ir_of(first.text, path) != original:
        out.append("fmt: the formatted text links to another IR")
    rng = random.Random(item.seed)
    for a, b in (sorted(rng.randrange(len(text) + 1) for _ in range(2)), _cut(rng, text)):
        ranged = format_source(text, path, only=(a, b))
        if ranged.diagnostics or ir_of(ranged.text, path) != original:
            out.append(f"fmt: formatting the range {a}..{b} changed the program")
        elif _comment_bodies(lines_ended(ranged.text)) != _comment_bodies(lines_ended(text)):
            out.append(f"fmt: formatting the range {a}..{b} changed the comments")
        elif _unaligned(format_source(ranged.text, path).text) != _unaligned(first.text):
            out.append(
                f"fmt: the range {a}..{b} formatted, then the whole, is not the whole formatted"
            )
    return out


def _cut(rng: random.Random, text: str) -> tuple[int, int]:
    """A range that starts, ends, or both, inside a token or a comment of `text`."""
    inner = [m for m in _tokens(text) if len(m.group()) > 1]
    if not inner:
        return 0, len(text)
    ends = []
    for _ in range(2):
        m = rng.choice(inner)
        ends.append(rng.randrange(m.start() + 1, m.end()))
    if rng.random() < 0.3:
        ends[rng.randrange(2)] = rng.randrange(len(text) + 1)
    a, b = sorted(ends)
    return a, b


def _unaligned(text: str) -> str:
    """`text` without the spaces that align trailing comments and without blank lines: a
    range aligns the comments of its own lines only, and puts a blank line next to an
    item outside it that spans several lines as written (known differences with the whole
    file, left as they are)."""
    return re.sub(r"\n\s*\n", "\n", re.sub(r" {2,}(?=//|/\*)", " ", text))


def check_meaning(item: Text) -> list[str]:
    """A mutant that keeps the meaning links to the original's IR."""
    if not item.mutations or not set(item.mutations) <= KEEPS_MEANING:
        return []
    path = str(item.source.path)
    original = ir_of(item.source.text, path)
    if original[0] is None:
        return []
    mutant = ir_of(item.text, path)
    if mutant != original:
        return [f"meaning: the mutant links to another IR ({mutant[1]} vs {original[1]})"]
    return []


_ALPHABET = (
    "{",
    "}",
    ";",
    "(",
    ")",
    "x",
    "1",
    " ",
    "\n",
    "\r\n",
    "//",
    "/*",
    "*/",
    '"',
    "é",
    "😀",
    "\t",
    "let y = 1;",
    "session {",
    "stage s : fifo;",
    "fn main() {",
)


def random_edit(rng: random.Random, text: str) -> str:
    """An editor's change: a range of `text` replaced by a few characters, a piece of the
    text itself (a paste), or nothing (a deletion)."""
    names = [m for m in _tokens(text) if m.group()[0].isalpha() and len(m.group()) > 2]
    if names and rng.random() < 0.2:  # a typo in a name: a letter dropped or doubled
        m = rng.choice(names)
        k = m.start() + rng.randrange(1, len(m.group()))
        return text[:k] + (text[k - 1] if rng.random() < 0.5 else "") + text[k + 1 :]
    a = rng.randrange(len(text) + 1)
    b = min(len(text), a + rng.choice((0, 0, 1, 1, 2, 5, 30, 200)))
    kind = rng.random()
    if kind < 0.4:
        new = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 3)))
    elif kind < 0.6 and text:
        c = rng.randrange(len(text))
        new = text[c : c + rng.choice((1, 10, 60))]
    else:
        new = ""
    return text[:a] + new + text[b:]


def check_incremental(item: Text, edits: int) -> list[str]:
    """Random edits through one `ItemCache` and one incremental `Cache` agree with fresh
    parses and whole analyses, after every edit."""
    from serq.expand.loader import read_file
    from serq.incremental import Cache, analyze, analyze_whole
    from serq.syntax import ItemCache, parse

    path = str(item.source.path)
    rng = random.Random(item.seed ^ 0x5EED)
    items, cache = ItemCache(), Cache()
    text, before = item.text, None
    seen: dict[str, tuple] = {}  # text -> its tree and diagnostics, parse's and analyze's
    for step in range(edits + 1):
        mine = parse(text, path, items)
        fresh = parse(text, path)
        if mine.module != fresh.module or mine.diagnostics != fresh.diagnostics:
            return [f"incremental: edit {step}: the item cache's parse differs from a fresh one"]
        got = None
        if step % 2 == 0 or step == edits or text in seen:
            got = analyze(text, path, cache, read_file).diagnostics
            whole = analyze_whole(fresh, text, path, read_file).diagnostics
            if got != whole:
                return [f"incremental: edit {step}: analyze differs from a whole analysis"]
        was = seen.setdefault(text, (mine.module, mine.diagnostics, got))
        analysed = got is None or was[2] is None or was[2] == got
        if was[:2] != (mine.module, mine.diagnostics) or not analysed:
            return [f"incremental: edit {step}: an undo gives another tree or diagnostics"]
        if was[2] is None:
            seen[text] = (*was[:2], got)
        if before is not None and rng.random() < 0.25:  # an undo: the text of before
            text, before = before, None
        else:
            text, before = random_edit(rng, text), text
    return []


_STATUS = {
    "check": {0, 1, 2},
    "expand": {0, 1, 2},
    "ir": {0, 1, 2},
    "fmt": {0, 1, 2},
    "run": {0, 1},
}
_POSITION = re.compile(r"--> (.+?):(\d+):(\d+)")


def cli(argv: list[str], stdin: str | None = None) -> tuple[int, str, str]:
    """`serq ARGV` in this process: its status, stdout and stderr."""
    from serq import cli as command

    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    if stdin is not None:
        sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = command.main(argv)
    finally:
        sys.stdin = old_stdin
    return status, out.getvalue(), err.getvalue()


_MIRROR: list[Path] = []


def mirror() -> Path:
    """A copy of the source folders in a temporary directory, made once: the mutants are
    written there, beside copies of the files a `use` or a `trace` of theirs reads, and
    never into the repository (whose tests glob its folders)."""
    if not _MIRROR:
        import atexit
        import shutil
        import tempfile

        top = Path(tempfile.mkdtemp(prefix="serq-tools-search-"))
        atexit.register(shutil.rmtree, top, ignore_errors=True)
        skip = shutil.ignore_patterns("__pycache__", "*.py", "*.pyc", SCRATCH + "*")
        for folder in FOLDERS:
            shutil.copytree(ROOT / folder, top / folder, ignore=skip, dirs_exist_ok=True)
        _MIRROR.append(top)
    return _MIRROR[0]


def check_cli(item: Text, run: bool) -> list[str]:
    """`serq check/expand/ir/fmt (/run)` on the mutant, written beside a copy of its source."""
    source = item.source.path
    folder = mirror() / source.parent.relative_to(ROOT)
    scratch = folder / f"{SCRATCH}{item.seed}-{source.name}"
    scratch.write_bytes(item.text.encode("utf-8", "surrogateescape"))
    out = []
    try:
        commands = [["check"], ["expand"], ["ir", "--compact"], ["fmt", "--check"]]
        if run:
            commands.append(["run", "--horizon", RUN_HORIZON, "--warmup", "0"])
        lines = len(re.findall(r"\r\n|\r|\n", item.text)) + 1
        for command in commands:
            status, stdout, stderr = cli([*command, str(scratch)])
            both = stdout + stderr
            name = command[0]
            if "Traceback" in both or "E-internal" in both:
                first = next(
                    (x for x in both.splitlines() if "E-internal" in x or "Error" in x), ""
                )
                out.append(f"cli {name}: a traceback or E-internal: {first[:200]}")
            if status not in _STATUS[name]:
                out.append(f"cli {name}: exit status {status}")
            if status == 1 and name != "fmt" and "error" not in stderr:
                out.append(f"cli {name}: status 1 without an error diagnostic")
            for m in _POSITION.finditer(stderr):
                if m.group(1) == str(scratch) and int(m.group(2)) > lines + 1:
                    out.append(f"cli {name}: a position past the end: line {m.group(2)}")
            if name == "check" and status == 1 and not _POSITION.search(stderr):
                out.append("cli check: an error without a position")
        out += _fmt_in_place(item, scratch)
        if item.seed % 16 == 0:
            out += _subprocess(scratch)
        return out
    finally:
        scratch.unlink(missing_ok=True)


def _fmt_in_place(item: Text, scratch: Path) -> list[str]:
    """`serq fmt FILE` rewrites the file with nothing lost: its invalid bytes, its BOM,
    its comments, and it formats to itself afterwards."""
    from serq.formatter import format_source
    from serq.syntax.source_text import decode, lines_ended

    before = scratch.read_bytes()
    status, stdout, stderr = cli(["fmt", str(scratch)])
    if "Traceback" in stdout + stderr or status not in _STATUS["fmt"]:
        return [f"cli fmt (in place): status {status}, {stderr[-200:]!r}"]
    after = scratch.read_bytes()
    out = []
    if decode(before).strip() and not after:
        out.append("cli fmt (in place): the file was emptied")
    if before.startswith(b"\xef\xbb\xbf") != after.startswith(b"\xef\xbb\xbf"):
        out.append("cli fmt (in place): the byte-order mark was not kept")
    text = decode(after)
    if sorted(re.findall("[\udc80-\udcff]", text)) != sorted(
        re.findall("[\udc80-\udcff]", decode(before))
    ):
        out.append("cli fmt (in place): an invalid byte was lost or changed")
    if _comment_bodies(lines_ended(text)) != _comment_bodies(lines_ended(decode(before))):
        out.append("cli fmt (in place): comments changed")
    if format_source(text, str(scratch)).text != text:
        out.append("cli fmt (in place): the rewritten file is not formatted")
    return out


def _subprocess(scratch: Path) -> list[str]:
    """A few commands as real processes, their streams strict UTF-8 (not this process')."""
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
    out = []
    for argv in (["check", str(scratch)], ["expand", str(scratch)], ["fmt", "-"]):
        stdin = scratch.read_bytes() if argv[-1] == "-" else None
        done = subprocess.run(
            [sys.executable, "-m", "serq.cli", *argv],
            input=stdin,
            capture_output=True,
            env=env,
            timeout=LIMIT,
        )
        if b"Traceback" in done.stderr or done.returncode not in _STATUS[argv[0]]:
            tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:]
            out.append(f"process {argv[0]}: status {done.returncode} {tail}")
    return out


_CODE = re.compile(r"^(?:error|warning|note)\[([A-Z]-[a-z0-9-]+)\]", re.M)
_LET = re.compile(r"\blet\s+([A-Za-z_][A-Za-z0-9_]*)\s*=")
_DEF = re.compile(r"\bdef\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(([^)]*)\)\s*\{")
# values for `--set NAME=VALUE` of every kind: numbers, odd floats, and bad ones
SET_VALUES = (
    "2",
    "0.5",
    "-1",
    "0",
    "-0",
    "inf",
    "-inf",
    "1e999",
    "1e-400",
    "nan",
    "NaN",
    '"x"',
    "abc",
    "(",
    "1;2",
    "2*3",
    "é",
    "1 // c",
    "true",
    "~exp(1)",
    "now",
)
DEF_BODIES = ("1", "0.5 + 1", '"s"', "(", "nope", "now", "~exp(1)", "inf", "{ 1 }")


def _well(name: str, status: int, stdout: str, stderr: str) -> list[str]:
    """The promises every command keeps: no traceback, a documented status, an error
    status with something said on stderr."""
    out = []
    both = stdout + stderr
    if "Traceback" in both or "E-internal" in both:
        first = next((x for x in both.splitlines() if "E-internal" in x or "Error" in x), "")
        out.append(f"cli {name}: a traceback or E-internal: {first[:200]}")
    if status not in (0, 1, 2):
        out.append(f"cli {name}: exit status {status}")
    if status and not stderr.strip():
        out.append(f"cli {name}: status {status} with nothing on stderr")
    return out


def check_tools(item: Text, run: bool) -> list[str]:
    """`serq run --emit-python`, `explain` of every code `check` reports, `--set` and
    `--def` of every kind on `check`, `ir` and `run`, and `sweep` then `plot`."""
    source = item.source.path
    folder = mirror() / source.parent.relative_to(ROOT)
    scratch = folder / f"{SCRATCH}{item.seed}-t-{source.name}"
    scratch.write_bytes(item.text.encode("utf-8", "surrogateescape"))
    rng = random.Random(item.seed ^ 0x7001)
    out: list[str] = []
    try:
        status, stdout, stderr = cli(["run", "--emit-python", str(scratch)])
        out += _well("run --emit-python", status, stdout, stderr)
        if status == 0:
            try:
                compile(stdout, "<emitted>", "exec")
            except SyntaxError as error:
                out.append(f"cli run --emit-python: the source does not compile: {error}")
        status, stdout, stderr = cli(["check", str(scratch)])
        for code in sorted(set(_CODE.findall(stderr))):
            got = cli(["explain", code])
            if got[0] != 0:
                out.append(f"cli explain {code}: status {got[0]} for a code check reported")
        out += _overrides(item, scratch, rng, run)
        out += _sweep_and_plot(item, scratch, rng)
        return out
    finally:
        scratch.unlink(missing_ok=True)


def _overrides(item: Text, scratch: Path, rng: random.Random, run: bool) -> list[str]:
    """`--set` and `--def` values of every kind for the program's lets and defs, and a
    name it does not declare."""
    out = []
    lets = sorted(set(_LET.findall(item.text))) or ["nope"]
    defs = sorted(set(_DEF.findall(item.text)))
    trials = [["--set", f"{rng.choice(lets)}={rng.choice(SET_VALUES)}"] for _ in range(3)]
    trials.append(["--set", f"not_declared_{item.seed % 97}={rng.choice(SET_VALUES)}"])
    for name, params in defs[:2]:
        body = rng.choice(DEF_BODIES + tuple(p.strip() for p in params.split(",") if p.strip()))
        trials.append(["--def", f"{name}={body}"])
    repeated = rng.choice(trials)
    trials.append([*repeated, *repeated])  # one name twice: a usage error everywhere
    for option in trials:
        commands = [["check"], ["ir", "--compact"]]
        if run:
            commands.append(["run", "--horizon", RUN_HORIZON, "--warmup", "0"])
        usage = set()
        for command in commands:
            status, stdout, stderr = cli([*command, str(scratch), *option])
            out += _well(f"{command[0]} {' '.join(option)}", status, stdout, stderr)
            usage.add(status == 2)
        if len(usage) > 1:
            out.append(f"cli {' '.join(option)}: a usage error for some commands, not all")
        if len(option) > 2 and usage != {True}:
            out.append(f"cli {' '.join(option)}: a name given twice is not a usage error")
    return out


def _sweep_and_plot(item: Text, scratch: Path, rng: random.Random) -> list[str]:
    """`serq sweep` over two values of a let (one of them maybe bad) and one seed, then
    `serq plot` of its results, and of a column it does not have."""
    import tempfile

    name = rng.choice(sorted(set(_LET.findall(item.text))) or ["not_declared"])
    spec = rng.choice(("1,2", "0.5:1:0.5", "2", f"1,{rng.choice(SET_VALUES)}", "1:0:1"))
    out = []
    with tempfile.TemporaryDirectory(prefix="serq-tools-search-sweep-") as where:
        table = Path(where) / "points.csv"
        argv = ["sweep", str(scratch), "--set", f"{name}={spec}", "--seeds", "1", "--jobs", "1"]
        argv += ["--horizon", RUN_HORIZON, "--warmup", "0", "--out", str(table)]
        status, stdout, stderr = cli(argv)
        out += _well(f"sweep --set {name}={spec}", status, stdout, stderr)
        out += _grid_checked(scratch, name, spec, status, stdout)
        if not table.exists():
            return out
        header = table.read_text(encoding="utf-8").split("\n", 1)[0].split(",")
        ys = [c for c in header if c not in (name, "runs", "warning", "error")] or ["nothing"]
        for y in (rng.choice(ys), "no_such_column"):
            argv = ["plot", str(table), "--x", name, "--y", y, "-o", str(Path(where) / "p.png")]
            status, stdout, stderr = cli(argv)
            out += _well(f"plot --y {y}", status, stdout, stderr)
    return out


def _grid_checked(scratch: Path, name: str, spec: str, status: int, stdout: str) -> list[str]:
    """A sweep over a list of values runs nothing when `serq check --set` fails for one of
    them, and exits with the status that check gives (2 if one value's is 2, else 1)."""
    if ":" in spec:
        return []
    values = dict.fromkeys(spec.split(","))
    statuses = [cli(["check", str(scratch), "--set", f"{name}={v}"])[0] for v in values]
    failing = [s for s in statuses if s]
    if not failing:
        return []
    expected = 2 if 2 in failing else 1
    if status == expected and not stdout.strip():
        return []
    ran = "ran" if stdout.strip() else "ran nothing"
    return [f"sweep --set {name}={spec}: status {status}, {ran}; check per value: {statuses}"]


def check(item: Text, only: set[str], edits: int) -> list[str]:
    """Every check of `only` on `item`: what failed, one line each."""
    found = []
    steps: list[tuple[str, Callable[[], list[str]]]] = [
        ("fmt", lambda: check_fmt(item)),
        ("meaning", lambda: check_meaning(item)),
        ("incremental", lambda: check_incremental(item, edits)),
        ("cli", lambda: check_cli(item, run=_links(item))),
        ("tools", lambda: check_tools(item, run=_links(item))),
    ]
    for name, step in steps:
        if name not in only:
            continue
        try:
            with time_limit(LIMIT):
                found += step()
        except _Timeout:
            found.append(f"{name}: no answer within {LIMIT:g} s of CPU time")
        except Exception as error:  # the finding itself
            found.append(f"{name}: {_where(error)}")
    return found


def _links(item: Text) -> bool:
    """Whether to run it: it links, and it is one of the few mutants that are run."""
    if item.mutations and random.Random(item.seed).random() > 0.25:
        return False
    from serq import api

    try:
        program, diagnostics = api.link_source(item.text, str(item.source.path))
    except Exception:
        return False
    return program is not None and not any(d.severity.name == "ERROR" for d in diagnostics)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mutants", type=int, default=4, help="mutants per source")
    parser.add_argument("--edits", type=int, default=6, help="random edits per text")
    parser.add_argument("--only", default="fmt,meaning,incremental,cli,tools")
    parser.add_argument("--limit", type=int, default=0, help="the first N sources only")
    parser.add_argument("--skip", type=int, default=0, help="skip the first N sources")
    parser.add_argument("--match", default="", help="only the sources whose name has this")
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    items = [s for s in sources() if args.match in s.name][args.skip :]
    if args.limit:
        items = items[: args.limit]
    start, count, failures = time.monotonic(), 0, 0
    for item in texts(items, args.mutants, args.seed):
        count += 1
        for problem in check(item, only, args.edits):
            failures += 1
            print(f"{item.label}: {problem}", flush=True)
    took = time.monotonic() - start
    print(
        f"{len(items)} sources, {count} texts, seed {args.seed}: {failures} failures in {took:.0f} s"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
