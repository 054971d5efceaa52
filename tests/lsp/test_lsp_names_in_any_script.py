"""The editor on names of any script (§66): hover, definition and rename of `λ` and
`débit_2` land on the names, in UTF-16 columns after `é中`; renaming to `vitesse_é` is
taken and the program still checks clean."""

from __future__ import annotations

import pytest
from lsprotocol import types

from tests.lsp.conftest import EXAMPLES, apply_edits, position_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

TEXT = """\
let λ = 0.5; /* é中 */ let débit_2 = λ * 2;
stage s : delay;
workload { arrive poisson(λ); }
session { /* é中 */ run s (débit_2); end; }
run { horizon 20; }
"""


async def test_definition_and_rename_of_names_of_any_script(client, docs):
    uri = (EXAMPLES / "names_in_any_script.sq").as_uri()
    assert await docs.open(uri, TEXT) == []
    doc = types.TextDocumentIdentifier(uri=uri)
    use = position_of(TEXT, "débit_2", nth=1)
    (found,) = await client.text_document_definition_async(
        types.DefinitionParams(text_document=doc, position=use)
    )
    start = position_of(TEXT, "débit_2")
    assert found.range == types.Range(start, types.Position(0, start.character + 7))
    edit = await client.text_document_rename_async(
        types.RenameParams(
            text_document=doc, position=position_of(TEXT, "λ", nth=2), new_name="vitesse_é"
        )
    )
    renamed = apply_edits(TEXT, edit.changes[uri])
    assert renamed.count("vitesse_é") == 3 and "λ" not in renamed
    assert await docs.replace(uri, renamed) == []
    docs.close(uri)


MARKS = """\
let मान = 0.5;\u3000let x² = मान * 2;
stage s : delay;
workload { arrive poisson(मान); }
session { run s (x²); end; }
run { horizon 20; }
"""


async def test_names_with_vowel_signs_and_blanks_beyond_ascii(client, docs):
    """§68: `मान` (a vowel sign inside) and `x²` are names, U+3000 a blank, as in pyserq:
    no diagnostic, and the definition of `मान` is the whole name."""
    uri = (EXAMPLES / "names_with_marks.sq").as_uri()
    assert await docs.open(uri, MARKS) == []
    doc = types.TextDocumentIdentifier(uri=uri)
    (found,) = await client.text_document_definition_async(
        types.DefinitionParams(text_document=doc, position=position_of(MARKS, "मान", nth=2))
    )
    assert found.range == types.Range(types.Position(0, 4), types.Position(0, 7))
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=doc, position=position_of(MARKS, "x²", nth=1))
    )
    assert hover is not None and "x²" in str(hover.contents)
    docs.close(uri)
