"""A run that stops moving long before its horizon says so while it goes on: a livelock
(a hold that can never grow to what its body needs, preempted and executed again for
ever) reaches `execute`'s `notice` the moment the run finds it, and `serq run` on a
terminal prints it as one line above the progress bar; Ctrl-C then prints the full
warning before its `serq: interrupted` line. Before, a livelock at a tiny time step was
named only when the run ended, which could take hours (tests/sim/NOTES.md §36).
"""

from __future__ import annotations

import io

import pytest

from serq import cli
from serq.cli import main
from serq.sim import api as sim_api

# the session is preempted at t = 2 and again at every round after: a horizon this far
# would take the run hours
LIVELOCK = """\
pool kv { cap 10; preempt lifo; }
stage s : fifo(1);
workload { arrive batch(1); }
session { hold kv (6) { run s (1); grow kv (6); run s (1); } }
run { horizon 1e12; }
"""


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_execute_is_told_of_the_livelock_while_the_run_goes_on():
    compiled, diagnostics = sim_api.compile_program(LIVELOCK, "livelock.sq")
    assert compiled is not None and not diagnostics
    told = []

    def notice(found):
        told.append(found)
        raise KeyboardInterrupt  # what the user's Ctrl-C does: the run is stopped here

    with pytest.raises(KeyboardInterrupt):
        sim_api.execute(compiled, notice=notice)
    assert [(d.code, d.span.line, d.span.column) for d in told] == [("W-stall", 4, 11)]
    assert "a livelock at pool `kv`" in told[0].message
    assert "session 0, at position 6 at t = 2" in told[0].message


def test_the_notice_is_the_warning_the_run_ends_with():
    short = LIVELOCK.replace("horizon 1e12", "horizon 100")
    compiled, _ = sim_api.compile_program(short, "livelock.sq")
    for codegen in (True, False):
        told = []
        report, ran = sim_api.execute(compiled, notice=told.append, codegen=codegen)
        assert report is not None
        assert [d.code for d in ran] == ["W-stall"] and len(told) == 1
        assert (told[0].span, told[0].help) == (ran[0].span, ran[0].help)
        assert told[0].message == ran[0].message  # one session: the counts agree too


def test_a_run_without_a_livelock_tells_nothing():
    compiled, _ = sim_api.compile_program(
        LIVELOCK.replace("cap 10", "cap 100").replace("horizon 1e12", "horizon 100"),
        "fits.sq",
    )
    told = []
    report, ran = sim_api.execute(compiled, notice=told.append)
    assert report is not None and ran == [] and told == []


def test_serq_run_on_a_terminal_says_it_at_once_and_ctrl_c_keeps_it(
    tmp_path, monkeypatch
):
    path = tmp_path / "livelock.sq"
    path.write_text(LIVELOCK)
    stream = _Tty()
    monkeypatch.setattr(cli.sys, "stderr", stream)
    # no bar (on a loaded machine the run could pass its half second, and its cursor
    # codes would be in the captured lines): the line is printed as before the bar shows
    monkeypatch.setattr(cli._ProgressBar, "DELAY", float("inf"))
    noted = cli._ProgressBar.note

    def note_then_ctrl_c(self, found):
        noted(self, found)
        raise KeyboardInterrupt  # the user, having read the line

    monkeypatch.setattr(cli._ProgressBar, "note", note_then_ctrl_c)
    assert main(["run", str(path), "--color", "never"]) == 130
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith(f"serq: warning[W-stall] at {path}:4:11, the run goes on")
    assert "Ctrl-C stops it" in lines[0] and "a livelock at pool `kv`" in lines[0]
    # then the full warning, with its source line, and the one line of Ctrl-C
    assert any(line.startswith("warning[W-stall]: a livelock at pool `kv`") for line in lines)
    assert "4 | session { hold kv (6) { run s (1); grow kv (6); run s (1); } }" in lines
    # the clock the run had reached (`serq.sim.Interrupted.now`), though no progress
    # call had reported it yet
    assert lines[-1] == "serq: interrupted at t = 2"


def test_serq_run_off_a_terminal_prints_the_warning_once_at_the_end(tmp_path, capsys):
    path = tmp_path / "livelock.sq"
    path.write_text(LIVELOCK.replace("horizon 1e12", "horizon 100"))
    assert main(["run", str(path), "--color", "never"]) == 0
    err = capsys.readouterr().err
    assert "the run goes on" not in err
    assert err.count("warning[W-stall]: a livelock at pool `kv`") == 1


def test_serq_run_interrupted_warns_of_the_livelock_first(tmp_path, monkeypatch):
    """In a notebook the stop button raises KeyboardInterrupt inside `serq.run`: the
    livelock found by then is warned of before it propagates."""
    import serq
    from serq.sim import api as api_module

    path = tmp_path / "livelock.sq"
    path.write_text(LIVELOCK)
    program = serq.compile(str(path))
    real = api_module.execute

    def execute_then_stop(compiled, **options):
        notice = options["notice"]

        def stop(found):
            notice(found)
            raise KeyboardInterrupt

        return real(compiled, **{**options, "notice": stop})

    monkeypatch.setattr(api_module, "execute", execute_then_stop)
    with pytest.warns(serq.RunWarning, match="a livelock at pool `kv`") as caught:
        with pytest.raises(KeyboardInterrupt):
            serq.run(program)
    assert [w.filename for w in caught] == [__file__]  # from the caller's line
    assert "4 | session { hold kv (6)" in str(caught[0].message)
