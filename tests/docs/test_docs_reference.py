"""docs/cli.md documents every subcommand and option of `serq`, and docs/report.md
every key of the JSON report."""

from __future__ import annotations

import argparse
import json
import re

from serq import cli
from serq.report import codec
from tests.docs.blocks import DOCS, ROOT


def _sections(page: str) -> dict[str, str]:
    """The `## ` sections of a Markdown page by title."""
    parts = re.split(r"^## ", page, flags=re.M)
    return {p.split("\n", 1)[0].strip(): p for p in parts[1:]}


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = cli._parser()
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(actions[0].choices)


def test_every_subcommand_and_option_is_documented() -> None:
    sections = _sections((DOCS / "cli.md").read_text(encoding="utf-8"))
    for name, sub in _subcommands().items():
        title = f"`serq {name}`"
        assert title in sections, f"docs/cli.md has no section {title}"
        text = sections[title]
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if action.option_strings:
                long = max(action.option_strings, key=len)
                shared = name != "explain" and long == "--color"
                where = sections["Conventions every command follows"] if shared else text
                assert long in where, f"`serq {name} {long}` is not documented"
            else:
                assert action.metavar in text, f"`serq {name}`'s {action.metavar}"


def test_every_report_key_is_documented(capsys) -> None:
    program = ROOT / "examples" / "tutorial" / "05_step_engine.sq"
    assert cli.main(["run", str(program), "--json", "--horizon", "5", "--warmup", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    sections = _sections((DOCS / "report.md").read_text(encoding="utf-8"))

    def documented(key: str, section: str) -> None:
        assert f"| `{key}` |" in sections[section], (
            f"docs/report.md, {section}: `{key}`"
        )

    for key in report:
        documented(key, "The top level")
    for key in next(iter(report["observes"].values())):
        documented(key, "`observes`")
    for key in codec._GAUGE:
        documented(key, "`gauges`")
    for key in report["stages"][0]:
        documented(key, "`stages`")
    for key in report["pools"][0]:
        documented(key, "`pools`")
    assert f'"schema": {report["schema"]}' in sections["An example"]


def test_examples_cite_our_docs() -> None:
    """The examples point the reader at pages of docs/, and at headings those pages have,
    never at sections of a specification the repository does not hold."""
    cite = re.compile(r'docs/([\w-]+\.md)(?:, "([^"]+)")?')
    files = sorted((ROOT / "examples").rglob("*.sq"))
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert "§" not in text and not re.search(r"\bspec\b", text), path.name
        for page, heading in cite.findall(text):
            target = DOCS / page
            assert target.is_file(), f"{path.name} cites docs/{page}"
            if heading:
                headings = re.findall(r"^#+ (.*)$", target.read_text(encoding="utf-8"), re.M)
                assert heading in headings, f"{path.name} cites docs/{page}, {heading!r}"


def _slug(heading: str) -> str:
    """The anchor a Markdown renderer (GitHub's) gives a heading."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: str) -> set[str]:
    """The anchors of a page's headings (a repeated one gets `-1`, `-2`, ...) and its
    explicit `<a id>`s."""
    found: set[str] = set(re.findall(r'<a id="([^"]+)"></a>', page))
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#+ (.*)$", page, re.M):
        slug = _slug(heading)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def test_links_between_the_docs_resolve() -> None:
    link = re.compile(r"\]\(([\w./-]*?)(?:#([\w-]+))?\)")
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for target, anchor in link.findall(text):
            if target.startswith("http"):
                continue
            path = page if target == "" else (page.parent / target)
            assert path.exists(), f"{page.name} links to {target}"
            if anchor and path.suffix == ".md":
                anchors = _anchors(path.read_text(encoding="utf-8"))
                assert anchor in anchors, f"{page.name} links to {target}#{anchor}"
