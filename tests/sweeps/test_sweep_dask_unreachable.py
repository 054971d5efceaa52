"""`serq sweep --dask` at a scheduler it cannot reach, or at an address Dask cannot read:
a diagnostic naming the address and status 2, never Dask's traceback (before round 20:
a 30 s wait, then three chained tracebacks, and for a malformed address 20 s more spent
in the failed client's finaliser)."""

from __future__ import annotations

import socket
import time

import pytest

import serq
from serq import cli
from serq.sweeps import executors
from serq.sweeps.executors import SchedulerUnreachable
from tests.sweeps.conftest import MM1, SHORT

pytest.importorskip("distributed")


def _closed_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    ("address", "why", "help"),
    [
        (None, "Timed out trying to connect", "is the scheduler running?"),
        ("foo", "missing port number in address 'foo'", "`tcp://HOST:PORT`"),
        ("xyz://a:1", "unknown address scheme 'xyz'", "`tcp://HOST:PORT`"),
        ("tcp://h", "missing port number", "`tcp://HOST:PORT`"),
    ],
    ids=["refused", "no-port", "scheme", "tcp-no-port"],
)
def test_an_unreachable_scheduler_is_a_diagnostic(address, why, help, capsys, monkeypatch):
    monkeypatch.setattr(executors, "CONNECT", 2.0)
    address = address or f"tcp://127.0.0.1:{_closed_port()}"
    started = time.monotonic()
    status = cli.main(["sweep", MM1, "--set", "lambda=0.5,0.6", "--dask", address,
                       "--horizon", "400", "--warmup", "40", "--color", "never"])
    err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err
    assert f"error[E-io]: cannot reach the Dask scheduler `{address}`: {why}" in err
    assert f" --> <--dask {address}>:1:1" in err and help in err
    assert time.monotonic() - started < 10


def test_serq_sweep_from_python_raises_a_plain_oserror():
    with pytest.raises(SchedulerUnreachable, match="cannot reach the Dask scheduler `foo`") as e:
        serq.sweep(MM1, sets={"lambda": "0.5"}, executor="foo", **SHORT)
    assert isinstance(e.value, OSError) and e.value.malformed
