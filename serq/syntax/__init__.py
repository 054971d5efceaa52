"""Syntax: serQ text to the surface AST, with every syntax error of a file.

`parse(text, file)` is the entry point. It never raises on bad input: broken
text yields a whole `Module` with error nodes and `E-parse` diagnostics, one
per mistake, each with its position and what was expected there. Pass an
`ItemCache` to make repeated parses of an edited document incremental.
"""

from serq.syntax import ast
from serq.syntax.document import ItemCache, ParseResult, parse, parse_whole

__all__ = ["ItemCache", "ParseResult", "ast", "parse", "parse_whole"]
