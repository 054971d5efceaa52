"""Messages a newcomer reads: a count agrees with its noun ("takes 1 argument", not "1
argument(s)"), and a backquote the lexer cannot read is named, not shown as "```"
(§66, every message of the checker and linker read by hand)."""

from __future__ import annotations

import pytest

from serq import api

RUN = "stage server : fifo(1);\nworkload { arrive poisson(0.5); }\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "def service(mean) = ~exp(mean);\n" + RUN + "session { run server (service(1, 2)); }\n",
            "`service` takes 1 argument, given 2",
        ),
        (
            "def service(a, b) = a + b;\n" + RUN + "session { run server (service(1)); }\n",
            "`service` takes 2 arguments, given 1",
        ),
        (
            "let NP = 1;\nlet BwP = 1;\nqueue P[NP] : prefill, decode {\n"
            "  pool kv { cap 100; evict lru; }\n  serve fifo(2) latency 0.5;\n  nic ps(BwP);\n"
            "  prefill (prompt) { run (prompt); }\n  decode (prompt, n) from P { run (n); }\n}\n",
            "`P.decode` takes 1 parameter, as the role says; it declares 2",
        ),
        ("let a = 1 ` 2;\n", "unexpected character U+0060 (a backquote)"),
    ],
)
def test_the_message_reads_well(text: str, message: str) -> None:
    messages = [d.message for d in api.check_source(text, "x.sq")]
    assert message in messages, messages
    assert not any("(s)" in m or "```" in m for m in messages), messages
