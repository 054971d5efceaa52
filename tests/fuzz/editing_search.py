"""The editor as a user meets it: the examples and the corpus edited the ways users edit,
through one `serq-lsp` process whose log is kept, each answer held against `serq check`,
`serq fmt` and `serq run` of the same text.

Edits (each sent as the `didChange` an editor sends, then undone):
- `lines`: a line deleted (every line of a short file, a sample of a long one);
- `paste`: a block of another program (an item: a line at column 0 and the lines up to
  the next one) pasted at a line start;
- `typing`: an example typed from its first character, a keystroke a change (the first
  `--typed` characters, then the rest pasted);
- `typo`: a name mistyped (a letter dropped, doubled or changed);
- `rename`: the names the server offers to rename (each name's first occurrence and a
  sample of the others), renamed;
- `run`: an example run from the editor (`serq.run`), then its inlay hints;
- `use`: the library a program `use`s opened and edited without saving.

`--variant` edits every source first, as some users' files are: `crlf` (CRLF line ends),
`tabs` (indented with tabs), `nonascii` (comments of accented, CJK and astral-plane
characters on every line that ends a statement or opens a block), `ident` (the first
`let`'s name given a non-ASCII tail everywhere, which serQ refuses: a diagnostic at each
use, its UTF-16 column after the astral character); comma-separated, applied in that
order.

Checks, a line for each failure:
- every published diagnostic lies inside the text of its version, and the diagnostics of
  an edited text are `serq check`'s (code, position, message) for that text;
- no traceback and no error in the server's log (its stderr and `window/logMessage`);
- formatting edits give `serq fmt`'s text, which is idempotent and keeps the comments;
- every quick fix offered removes its diagnostic (`serq check` of the fixed text);
- definition, references and rename agree (the rename's edits are the references), and
  a rename keeps `serq check`'s codes and `serq run`'s report (the new name aside);
- a Run from the editor (`serq.run`) gives `serq run --json`'s report, then inlay hints
  inside the document;
- the diagnostics of a program, and its Run from the editor, follow the unsaved buffer of
  the library it `use`s.

By hand: `python tests/fuzz/editing_search.py --seed 1 --only lines,paste --limit 10`.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import lsp_search  # noqa: E402
import tools_search  # noqa: E402
from lsp_search import _change_of, apply_edits, inside, position_of  # noqa: E402

ROOT = HERE.parents[1]
SCRATCH = ".editing-search-"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Server(lsp_search.Server):
    """lsp_search's server, its stderr kept in a file, every diagnostics notification and
    log message kept."""

    def __init__(self, log: Path) -> None:
        self.log_path = log
        self.log = log.open("w")
        self.every: list[dict] = []
        self.messages: list[str] = []
        super().__init__(self.log)

    def _notified(self, method: str, params: Any) -> None:
        super()._notified(method, params)
        if method == "textDocument/publishDiagnostics":
            self.every.append(params)
        elif method in ("window/logMessage", "window/showMessage"):
            self.messages.append(params.get("message", ""))

    def troubles(self) -> list[str]:
        """What the log says went wrong since the last call."""
        self.log.flush()
        text = self.log_path.read_text(errors="replace")
        seen = getattr(self, "_seen", 0)
        self._seen = len(text)
        out = []
        new = text[seen:]
        if "Traceback" in new or "Error" in new:
            out.append("log: " + new.strip().splitlines()[-1][:300])
        for m in self.messages:
            out.append("logMessage: " + m[:300])
        self.messages.clear()
        return out


class Doc:
    """An open document and the text of each version the server was sent."""

    def __init__(self, server: Server, path: Path, text: str) -> None:
        self.server, self.path, self.uri = server, path, path.as_uri()
        self.version, self.text = 1, text
        self.texts = {1: text}
        server.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": self.uri, "languageId": "serq", "version": 1, "text": text}},
        )

    def change(self, edited: str, whole: bool = False) -> None:
        change = {"text": edited} if whole else _change_of(self.text, edited)
        self.version += 1
        self.texts[self.version] = edited
        self.text = edited
        lsp_search._send(self.server, self.uri, self.version, [change])

    def diagnostics(self) -> list[dict]:
        return self.server.diagnostics(self.uri, self.version)

    def ask(self, method: str, **params) -> dict:
        return self.server.request(
            f"textDocument/{method}", {"textDocument": {"uri": self.uri}, **params}
        )

    def close(self) -> None:
        self.server.notify("textDocument/didClose", {"textDocument": {"uri": self.uri}})


def cli_diagnostics(text: str, path: Path) -> list[tuple]:
    """`serq check`'s diagnostics of `text` as the file `path`: (line, utf-16 column, code,
    message) of those in the file, (code, message) of those in a `use`d file."""
    from serq import api

    out = []
    lines = lsp_search.lsp_lines(text)
    for d in api.check_source(text, str(path)):
        if d.span.file == str(path):
            line = lines[d.span.line - 1] if d.span.line - 1 < len(lines) else ""
            out.append(
                (d.span.line - 1, lsp_search.utf16(line[: d.span.column - 1]), d.code, d.message)
            )
        else:
            out.append((d.code, d.message))
    return sorted(out, key=repr)


# how the server shows a diagnostic of a `use`d file (serq_lsp.convert._moved_to_use); a
# message of the file's own may begin with "in " too ("in `fn main`, the session's ...")
_FROM_A_USED_FILE = re.compile(r"in [^\n]*?:\d+:\d+: ")


def lsp_diagnostics(published: list[dict]) -> list[tuple]:
    out = []
    for d in published:
        message = d["message"]
        used = _FROM_A_USED_FILE.match(message)  # `in FILE:LINE:COL: message`
        if used:
            rest = message[used.end() :]
            out.append((d.get("code"), rest.split("\nnote: ")[0].split("\nhelp: ")[0]))
            continue
        message = message.split("\nnote: ")[0].split("\nhelp: ")[0]
        out.append(
            (d["range"]["start"]["line"], d["range"]["start"]["character"], d.get("code"), message)
        )
    return sorted(out, key=repr)


def against_check(doc: Doc, what: str) -> list[str]:
    """The document's diagnostics now lie inside it and are `serq check`'s."""
    published = doc.diagnostics()
    out = [
        f"{what}: a diagnostic outside the document: {d['range']}"
        for d in published
        if not (inside(doc.text, d["range"]["start"]) and inside(doc.text, d["range"]["end"]))
    ][:1]
    mine, cli = lsp_diagnostics(published), cli_diagnostics(doc.text, doc.path)
    if mine != cli:
        a = [x for x in mine if x not in cli][:2]
        b = [x for x in cli if x not in mine][:2]
        out.append(f"{what}: the server's diagnostics are not serq check's: server {a}, check {b}")
    return out


def every_positioned(server: Server, docs: dict[str, dict[int, str]]) -> list[str]:
    """Every diagnostics notification lies inside the text of the version it is for."""
    out = []
    for p in server.every:
        text = docs.get(p["uri"], {}).get(p.get("version"))
        if text is None:
            continue
        for d in p["diagnostics"]:
            if not (inside(text, d["range"]["start"]) and inside(text, d["range"]["end"])):
                out.append(
                    f"published: version {p.get('version')} has a diagnostic outside it: {d['range']}"
                )
                break
    server.every.clear()
    return out[:3]


def formatting(doc: Doc, what: str, source: tools_search.Source, seed: int) -> list[str]:
    """The server's formatting is `serq fmt`'s; fmt keeps its promises on the text."""
    from serq.formatter import format_source

    out = []
    answer = doc.ask("formatting", options={"tabSize": 2, "insertSpaces": True})
    if "error" in answer:
        return [f"{what}: formatting: error {answer['error'].get('message', '')[:200]}"]
    got = apply_edits(doc.text, answer.get("result") or [])
    want = format_source(doc.text, str(doc.path)).text
    if doc.text.startswith("\ufeff") and not want.startswith("\ufeff"):
        want = "\ufeff" + want  # the editor's formatting keeps it, as `serq fmt`
    if got != want:
        out.append(f"{what}: formatting is not serq fmt's text")
    item = tools_search.Text(source, ("edited",), seed, doc.text)
    out += [f"{what}: {x}" for x in tools_search.check_fmt(item)]
    return out


def quick_fixes(doc: Doc, what: str) -> list[str]:
    """Every quick fix offered for the document's diagnostics removes its diagnostic."""
    published = doc.diagnostics()
    if not published:
        return []
    whole = {"start": {"line": 0, "character": 0}, "end": position_of(doc.text, len(doc.text))}
    answer = doc.ask("codeAction", range=whole, context={"diagnostics": published})
    if "error" in answer:
        return [f"{what}: codeAction: error {answer['error'].get('message', '')[:200]}"]
    out = []
    before = cli_diagnostics(doc.text, doc.path)
    for action in answer.get("result") or []:
        edits = ((action.get("edit") or {}).get("changes") or {}).get(doc.uri)
        if not edits:
            continue
        fixed = apply_edits(doc.text, edits)
        after = cli_diagnostics(fixed, doc.path)
        for d in action.get("diagnostics") or []:
            # the diagnostic is gone when fewer of its kind (code and message) are left: a fix
            # moves the diagnostics after it, and may let the parser find another further on
            kind = (d.get("code"), d["message"].split("\nnote: ")[0].split("\nhelp: ")[0])
            code = kind[0]
            if sum(1 for x in after if _kind(x) == kind) >= sum(
                1 for x in before if _kind(x) == kind
            ):
                where = (d["range"]["start"]["line"] + 1, d["range"]["start"]["character"] + 1)
                out.append(
                    f"{what}: the fix `{action.get('title')}` leaves {code} at {where}: {d['message'][:80]!r}"
                )
                break
    return out


def typos(server: Server, source, rng, count: int) -> list[str]:
    """A name mistyped (a letter dropped, doubled or changed), then put right: the
    diagnostics are check's and every quick fix removes its diagnostic."""
    path = source.path.parent / f"{SCRATCH}typo.sq"
    doc = Doc(server, path, source.text)
    original = doc.text
    names = [m for m in _NAME.finditer(_uncommented(original)) if len(m.group()) > 2]
    out = []
    for _ in range(min(count, len(names))):
        m = rng.choice(names)
        w = m.group()
        k = rng.randrange(1, len(w))
        w2 = rng.choice((w[:k] + w[k + 1 :], w[:k] + w[k] + w[k:], w[:k] + "x" + w[k + 1 :]))
        edited = original[: m.start()] + w2 + original[m.end() :]
        doc.change(edited)
        what = f"`{w}` at {m.start()} typed `{w2}`"
        out += against_check(doc, what)
        out += quick_fixes(doc, what)
        doc.change(original)
    out += every_positioned(server, {doc.uri: doc.texts})
    doc.close()
    return out


def _uncommented(text: str) -> str:
    """`text` with its comments and strings blanked (the same length)."""
    return re.sub(r'//[^\n]*|/\*[\s\S]*?\*/|"[^"\n]*"', lambda m: " " * len(m.group()), text)


def each_line_deleted(server: Server, source, rng, limit: int) -> list[str]:
    path = source.path.parent / f"{SCRATCH}lines.sq"
    doc = Doc(server, path, source.text)
    out = against_check(doc, "open")
    original = doc.text
    lines = original.splitlines(keepends=True)
    picks = list(range(len(lines)))
    if len(picks) > limit:
        picks = sorted(rng.sample(picks, limit))
    for i in picks:
        edited = "".join(lines[:i] + lines[i + 1 :])
        doc.change(edited)
        what = f"line {i + 1} deleted"
        out += against_check(doc, what)
        if rng.random() < 0.3:
            out += quick_fixes(doc, what)
        if rng.random() < 0.15:
            out += formatting(doc, what, source, rng.randrange(1 << 30))
        doc.change(original)  # undo
        if rng.random() < 0.2:
            out += against_check(doc, f"{what}, undone")
    out += every_positioned(server, {doc.uri: doc.texts})
    doc.close()
    return out


def _items(text: str) -> list[str]:
    """The top-level blocks of `text`: a line at column 0 and the lines up to the next."""
    lines = text.splitlines(keepends=True)
    starts = [k for k, x in enumerate(lines) if x[:1].isalpha()]
    return ["".join(lines[a:b]) for a, b in zip(starts, starts[1:] + [len(lines)], strict=True)]


def pasted(server: Server, source, others: list, rng, count: int) -> list[str]:
    path = source.path.parent / f"{SCRATCH}paste.sq"
    doc = Doc(server, path, source.text)
    out = []
    original = doc.text
    lines = original.splitlines(keepends=True)
    for _ in range(count):
        other = rng.choice(others)
        blocks = _items(other.text) or [other.text]
        block = rng.choice(blocks)
        at = rng.randrange(len(lines) + 1)
        edited = "".join(lines[:at]) + block + "".join(lines[at:])
        doc.change(edited)
        what = f"pasted {other.name}'s block at line {at + 1}"
        out += against_check(doc, what)
        out += quick_fixes(doc, what)
        if rng.random() < 0.5:
            out += formatting(doc, what, source, rng.randrange(1 << 30))
        doc.change(original)
    out += every_positioned(server, {doc.uri: doc.texts})
    doc.close()
    return out


def typed(server: Server, source, rng, most: int) -> list[str]:
    """The program typed from its first character (the first `most` characters, then the
    rest pasted), hover and completion asked now and then."""
    path = source.path.parent / f"{SCRATCH}typed.sq"
    doc = Doc(server, path, "")
    out = []
    text = source.text
    for k in range(min(len(text), most)):
        doc.change(text[: k + 1])
        if rng.random() < 0.05:
            for method in ("hover", "completion", "signatureHelp"):
                answer = doc.ask(method, position=position_of(doc.text, k + 1))
                if "error" in answer:
                    out.append(
                        f"typing: {method} at {k + 1}: error {answer['error'].get('message')}"[:300]
                    )
        if rng.random() < 0.02:
            out += against_check(doc, f"typed to {k + 1}")
    if len(text) > most:
        doc.change(text)
    out += against_check(doc, "typed")
    out += every_positioned(server, {doc.uri: doc.texts})
    doc.close()
    return out


def renamed(server: Server, source, rng, run: bool) -> list[str]:
    """Every name offered for rename, renamed: the edits are the references, and the
    renamed program checks and runs as the original."""
    path = source.path.parent / f"{SCRATCH}rename.sq"
    doc = Doc(server, path, source.text)
    doc.diagnostics()
    text = source.text
    out = []
    seen = set()
    original_codes = [x[2] if len(x) == 4 else x[0] for x in cli_diagnostics(text, path)]
    report = _run(text, path) if run else None
    found = [m for m in _NAME.finditer(_uncommented(text))]
    first: dict[str, re.Match] = {}
    for m in found:
        first.setdefault(m.group(), m)
    picked = sorted(
        {*first.values(), *rng.sample(found, min(len(found), 20))}, key=lambda m: m.start()
    )
    for m in picked:
        at = {"position": position_of(text, m.start())}
        prepared = doc.ask("prepareRename", **at)
        if "error" in prepared:
            out.append(f"prepareRename at {m.group()}: error {prepared['error'].get('message')}")
            continue
        if not prepared.get("result"):
            continue
        defined = doc.ask("definition", **at).get("result")
        refs = doc.ask("references", **at, context={"includeDeclaration": True}).get("result") or []
        key = json.dumps(defined, sort_keys=True)
        new = f"zz{m.group()}Q"
        answer = doc.ask("rename", **at, newName=new)
        if "error" in answer:
            continue  # taken names and the like
        edit = answer.get("result") or {}
        changes = edit.get("changes") or {}
        ranges = sorted(json.dumps(e["range"], sort_keys=True) for e in changes.get(doc.uri, []))
        referenced = sorted(
            json.dumps(r["range"], sort_keys=True) for r in refs if r["uri"] == doc.uri
        )
        here = position_of(text, m.start())
        if ranges != referenced:
            out.append(f"rename of `{m.group()}` at {here}: its edits are not the references")
        if defined:
            for r in refs[:6]:
                if r["uri"] != doc.uri:
                    continue
                back = doc.ask("definition", position=r["range"]["start"]).get("result")
                if json.dumps(back, sort_keys=True) != key:
                    out.append(
                        f"definition of `{m.group()}` at {r['range']['start']} is not that at {here}"
                    )
                    break
        if key in seen:
            continue
        seen.add(key)
        if set(changes) != {doc.uri}:
            continue  # a library's name: the other files change too
        new_text = apply_edits(text, changes[doc.uri])
        codes = [x[2] if len(x) == 4 else x[0] for x in cli_diagnostics(new_text, path)]
        if codes != original_codes:
            out.append(f"rename of `{m.group()}`: check's codes {original_codes} became {codes}")
        elif report is not None:
            again = _run(new_text, path)
            if again is not None and json.loads(again.replace(new, m.group())) != json.loads(
                report
            ):
                out.append(f"rename of `{m.group()}`: the run's report changed")
    out += server.troubles()
    doc.close()
    return out


def _mirrored(folder: Path) -> Path:
    """`folder`'s copy in `tools_search.mirror()`, where a program written for `serq run`
    reads its `use`s and `trace`s as beside the original, and where no test of the
    repository lists it (the tests glob examples/ while a search runs)."""
    return tools_search.mirror() / folder.resolve().relative_to(ROOT)


def _run(text: str, path: Path) -> str | None:
    """`serq run --json --horizon 30` of `text` as the file `path`, or None."""
    folder = _mirrored(path.parent)
    with tempfile.NamedTemporaryFile(
        "w", suffix=".sq", dir=folder, prefix=SCRATCH, delete=False
    ) as f:
        f.write(text)
    try:
        status, stdout, _ = tools_search.cli(
            ["run", f.name, "--json", "--horizon", "30", "--warmup", "0", "--seed", "1"]
        )
    finally:
        Path(f.name).unlink()
    if status != 0:
        return None
    report = json.loads(stdout)
    for k in ("file", "path", "program", "elapsed", "wall", "cpu"):
        report.pop(k, None)
    return json.dumps(report, sort_keys=True).replace(Path(f.name).name, "X")


def run_and_hints(server: Server, source) -> list[str]:
    """A Run from the editor gives `serq run --json`'s report (its markdown), and inlay
    hints when the report has figures the program names."""
    sys.path.insert(0, str(ROOT))
    from serq_lsp.commands import report_markdown

    path = source.path.parent / f"{SCRATCH}run.sq"
    doc = Doc(server, path, source.text)
    doc.diagnostics()
    out = []
    with tempfile.NamedTemporaryFile(
        "w", suffix=".sq", dir=_mirrored(path.parent), prefix=SCRATCH, delete=False
    ) as f:
        f.write(source.text)
    try:
        with tools_search.time_limit(20):
            status, stdout, _ = tools_search.cli(["run", f.name, "--json"])
    except tools_search._Timeout:
        doc.close()
        return []  # too long a run for a search
    finally:
        Path(f.name).unlink()
    answer = server.request(
        "workspace/executeCommand", {"command": "serq.run", "arguments": [doc.uri, 60]}
    )
    if "error" in answer:
        if status == 0:
            out.append(
                f"run: the editor's run failed where serq run did not: {answer['error'].get('message', '')[:200]}"
            )
        doc.close()
        return out
    if status != 0:
        out.append("run: the editor's run ran where serq run failed")
    elif answer.get("result") != report_markdown(stdout):
        out.append("run: the editor's report is not serq run's")
    else:
        report = json.loads(stdout)
        whole = {"start": {"line": 0, "character": 0}, "end": position_of(doc.text, len(doc.text))}
        hints = doc.ask("inlayHint", range=whole)
        if "error" in hints:
            out.append(f"run: inlayHint: error {hints['error'].get('message', '')[:200]}")
        elif report.get("observes") and not hints.get("result"):
            out.append("run: no inlay hint after a run with observations")
        else:
            for h in hints.get("result") or []:
                if not inside(doc.text, h["position"]):
                    out.append(f"run: an inlay hint outside the document: {h['position']}")
    doc.close()
    return out


def unsaved_library(server: Server, program: Path, library: Path, rng) -> list[str]:
    """The library `program` uses, edited in the editor and not saved: the program's
    diagnostics are `serq check`'s of the program beside the edited library; closed, the
    disk's again."""
    import shutil

    out = []
    lib_text = library.read_text()
    doc = Doc(server, program, program.read_text())
    out += against_check(doc, f"{program.name} opened")
    lib = Doc(server, library, lib_text)
    lib.diagnostics()
    edits = []
    names = re.findall(r"^def ([A-Za-z_][A-Za-z0-9_]*)", lib_text, re.M)
    for name in names[:6]:  # a def renamed in the library alone
        edits.append(
            re.sub(rf"^def {name}\b", f"def {name}_renamed", lib_text, count=1, flags=re.M)
        )
    lines = lib_text.splitlines(keepends=True)
    for _ in range(6):  # a line deleted
        k = rng.randrange(len(lines))
        edits.append("".join(lines[:k] + lines[k + 1 :]))
    edits.append(lib_text + "\ndef broken(x) = x +\n")
    numbers = list(re.finditer(r"(?<![\w.])\d+(?![\w.])", _uncommented(lib_text)))
    for m in rng.sample(numbers, min(3, len(numbers))):  # a constant changed: the run changes
        edits.append(lib_text[: m.start()] + str(int(m.group()) + 1) + lib_text[m.end() :])
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "t"
        base = ROOT / "examples"
        shutil.copytree(base, tree, ignore=shutil.ignore_patterns("*.png"))
        copy_lib = tree / library.relative_to(base)
        copy_prog = tree / program.relative_to(base)
        for edited in edits:
            lib.change(edited)
            copy_lib.write_text(edited)
            # the user's program is checked again when the library changes
            version = doc.version
            deadline = time.monotonic() + 30
            want = cli_diagnostics(doc.text, copy_prog)
            got = None
            while time.monotonic() < deadline:
                server._pump(lambda: True)
                try:
                    server._pump(lambda: False, timeout=0.3)
                except TimeoutError:
                    pass
                pub = server.published.get(doc.uri)
                if pub is not None and pub.get("version") == version:
                    got = lsp_diagnostics(pub["diagnostics"])
                    if [x[:3] for x in got] == [x[:3] for x in _renamed(want, tree, base)]:
                        break
            want = _renamed(want, tree, base)
            if got is None or [_codes(x) for x in got] != [_codes(x) for x in want]:
                out.append(
                    f"use: after an unsaved edit of {library.name}: server {got and got[:2]}, check {want[:2]}"
                )
            elif not want:  # it links: a Run from the editor runs the buffer's library
                out += _runs_alike(server, doc, copy_prog, f"use: {library.name} edited")
        lib.change(lib_text)
    lib.close()
    doc.close()
    return out


def _runs_alike(server: Server, doc: Doc, program: Path, what: str) -> list[str]:
    """A Run of `doc` from the editor gives the report of `serq run program --json` (a file
    on disk that is what the editor holds)."""
    sys.path.insert(0, str(ROOT))
    from serq_lsp.commands import report_markdown

    try:
        with tools_search.time_limit(30):
            status, stdout, _ = tools_search.cli(["run", str(program), "--json"])
    except tools_search._Timeout:
        return []
    answer = server.request(
        "workspace/executeCommand", {"command": "serq.run", "arguments": [doc.uri, 60]}
    )
    if "error" in answer:
        if status == 0:
            return [f"{what}: the editor's run failed: {answer['error'].get('message', '')[:200]}"]
        return []
    if status != 0:
        return [f"{what}: the editor's run ran where serq run failed"]
    if answer.get("result") != report_markdown(stdout):
        return [f"{what}: the editor's report is not serq run's"]
    return []


def _kind(x: tuple) -> tuple:
    """A diagnostic's code and message (`cli_diagnostics`' tuples)."""
    return tuple(x[2:4]) if len(x) == 4 else tuple(x[:2])


def _codes(x: tuple) -> tuple:
    return x[2:3] if len(x) == 4 else x[:1]


def _renamed(found: list[tuple], tree: Path, folder: Path) -> list[tuple]:
    return sorted(
        (
            tuple(str(v).replace(str(tree), str(folder)) if isinstance(v, str) else v for v in x)
            for x in found
        ),
        key=repr,
    )


_COMMENT = " // débit ✓ 数据 𝔘𝔫𝔦"


def variant(text: str, kinds: list[str]) -> str:
    """`text` edited as `--variant` says (see the module docstring)."""
    for kind in ("ident", "nonascii", "tabs", "crlf"):
        if kind not in kinds:
            continue
        if kind == "ident":
            m = re.search(r"^let\s+([A-Za-z_][A-Za-z0-9_]*)", _uncommented(text), re.M)
            if m:
                name = m.group(1)
                blank = _uncommented(text)
                uses = [u.start() for u in re.finditer(rf"\b{name}\b", blank)]
                for at in reversed(uses):
                    text = text[: at + len(name)] + "é𝑥" + text[at + len(name) :]
        elif kind == "nonascii":
            lines = text.split("\n")
            text = "// Größe — 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ✓\n" + "\n".join(
                line + _COMMENT if line.rstrip().endswith((";", "{")) and "//" not in line else line
                for line in lines
            )
        elif kind == "tabs":
            text = re.sub(
                r"^( +)",
                lambda m: "\t" * (len(m.group(1)) // 2) + " " * (len(m.group(1)) % 2),
                text,
                flags=re.M,
            )
        elif kind == "crlf":
            text = re.sub(r"\r?\n", "\r\n", text)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", default="lines,typo,paste,typing,rename,run,use")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--match", default="")
    parser.add_argument("--lines", type=int, default=25, help="lines deleted per file")
    parser.add_argument("--typed", type=int, default=400, help="characters typed per file")
    parser.add_argument("--run", action="store_true", help="run the renamed programs")
    parser.add_argument("--log", type=Path, default=Path("/tmp/serq-lsp-editing.log"))
    parser.add_argument("--variant", default="", help="crlf,tabs,nonascii,ident")
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    sources = [
        s
        for s in tools_search.sources()
        if s.name.split("/")[0] == "examples" or s.name.startswith("tests/corpus")
    ]
    sources = [s for s in sources if args.match in s.name]
    if args.variant:
        kinds = args.variant.split(",")
        sources = [tools_search.Source(s.path, variant(s.text, kinds), s.name) for s in sources]
    if args.limit:
        sources = sources[: args.limit]
    rng = random.Random(args.seed)
    server = Server(args.log)
    failures = 0
    started = time.monotonic()
    for k, source in enumerate(sources):
        out: list[str] = []
        try:
            if "lines" in only:
                out += each_line_deleted(server, source, rng, args.lines)
            if "typo" in only:
                out += typos(server, source, rng, 8)
            if "paste" in only:
                out += pasted(server, source, sources, rng, 3)
            if "typing" in only and source.name.startswith("examples"):
                out += typed(server, source, rng, args.typed)
            if "rename" in only:
                out += renamed(server, source, rng, args.run)
            if "run" in only and source.name.startswith("examples"):
                out += run_and_hints(server, source)
        except TimeoutError as e:
            out.append(f"time-out: {e}")
            server.close()
            server = Server(args.log.with_suffix(f".{k}.log"))
        out += server.troubles()
        for line in out:
            print(f"{source.name}: {line}", flush=True)
        failures += len(out)
        print(
            f"[{k + 1}/{len(sources)}] {source.name} {time.monotonic() - started:.0f}s",
            file=sys.stderr,
            flush=True,
        )
    if "use" in only:
        for program in sorted((ROOT / "examples").rglob("*.sq")):
            for library in re.findall(r'^\s*use\s+"([^"]+)"', program.read_text(), re.M):
                lib = (program.parent / library).resolve()
                if not lib.is_file():
                    continue
                found = unsaved_library(server, program, lib, rng)
                found += server.troubles()
                for line in found:
                    print(f"{program.relative_to(ROOT)}: {line}", flush=True)
                failures += len(found)
    server.close()
    print(f"{len(sources)} sources, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
