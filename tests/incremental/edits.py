"""Random edits of serQ programs for the incremental analysis' tests: most keep the text
parsing (so the expander and the linker run), each changes names, values or items."""

from __future__ import annotations

import random
import re

from serq.syntax import parse
from serq.syntax.scanner import scan
from serq.syntax.source_text import text_start

_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_NUMBER = re.compile(r"\b[0-9]+(?:\.[0-9]+)?\b")

NEW_ITEMS = [
    "let q = 1;",
    "let bs = 8;",
    "let B = 0;",
    "let Lambda = -1;",
    "let N = 2.5;",
    "let z = q + 1;",
    "let inf = 3;",
    "let prompt = 2;",
    "def f(a, b) = a * b + q;",
    "def g(x) = f(x, x) + z;",
    "def long_prefill(r, c) = c;",
    "def serve_on(w) { run engine (w); }",
    "stage engine : fifo;",
    "stage tool : delay;",
    "pool kv { cap 100; }",
    "gauge used_kv = used(kv);",
    "let hit = 1;",
    "share maxmin;",
    'use "lib/vllm.sq";',
    'use "std/args";',
    'let rate = args.number("rate", 0.5);',
    "claim c: at end (now > 0);",
    "let y = max j in 3 (j * q);",
    "let w = 0 / 0;",
    "let k = g(1);",
]


def edit(rng: random.Random, text: str, file: str) -> str:
    """A random edit of `text`."""
    kind = rng.random()
    chunks = [c for c in scan(text, text_start(text)) if c.kind == "item"]
    if kind < 0.3:  # a name replaced by another of the program's
        words = list(_IDENT.finditer(text))
        if words:
            m = rng.choice(words)
            other = rng.choice(words).group() if rng.random() < 0.8 else rng.choice("qxyz")
            return text[: m.start()] + other + text[m.end() :]
    if kind < 0.45:  # a number changed
        numbers = list(_NUMBER.finditer(text))
        if numbers:
            m = rng.choice(numbers)
            value = rng.choice(["0", "1", "2", "-1", "0.5", "1000", "inf", "3"])
            return text[: m.start()] + value + text[m.end() :]
    if kind < 0.6 and chunks:  # an item deleted
        c = rng.choice(chunks)
        return text[: c.start] + text[c.end :]
    if kind < 0.7 and chunks:  # an item duplicated elsewhere
        c = rng.choice(chunks)
        at = rng.choice(chunks).start
        return text[:at] + text[c.start : c.end] + "\n" + text[at:]
    if kind < 0.9:  # a new item
        at = rng.choice(chunks).start if chunks else 0
        return text[:at] + rng.choice(NEW_ITEMS) + "\n" + text[at:]
    # a character typed or deleted anywhere (may not parse)
    at = rng.randint(0, len(text))
    if rng.random() < 0.5:
        return text[:at] + rng.choice(["x", "1", " ", "\n", ";", "(", "}"]) + text[at:]
    return text[:at] + text[at + 1 :]


def parses(text: str, file: str) -> bool:
    return not parse(text, file).diagnostics
