"""Where serq keeps what it caches between processes: `$SERQ_CACHE_DIR`, else
`$XDG_CACHE_HOME/serq`, else `~/.cache/serq` (the parser's pickle, `serq.syntax.
grammar_cache`, and the stores of `serq.code_store`: the dataclasses' code and the
lexers' regexes). Imports no serq module."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """The directory (it may not exist yet)."""
    explicit = os.environ.get("SERQ_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "serq"
