"""The text report on edge values (§66): an observation with no samples has no interval
(`-`, not an infinitely wide `inf`); the horizon and the warm-up are shown as given, so a
warm-up just below the horizon does not read as equal to it; a stage nothing reached and a
pool never used print dashes and zeros, never `nan`, in aligned columns."""

from __future__ import annotations

import warnings

import serq
from serq.report import report_text

PROGRAM = """\
stage server : fifo(1);
stage never : ps(2);
pool unused { cap 1e300; }
gauge ginf = inf;
workload { arrive poisson(0.5); }
session {
  branch (serial < 0) { observe none = 1; run never (1); }
  branch (serial == 7) { observe one = 3; }
  observe big = 1e300;
  observe oinf = inf;
  run server (~exp(1));
  end;
}
run { horizon 1000; warmup 0; }
"""


def _text(**settings: object) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return report_text(serq.run(serq.compile(source=PROGRAM, **settings)))  # type: ignore[arg-type]


def _row(text: str, name: str) -> list[str]:
    return next(line.split() for line in text.splitlines() if line.split()[:1] == [name])


def test_no_samples_no_interval() -> None:
    text = _text()
    assert _row(text, "none") == ["none", "0", "-", "-", "-", "-"]
    assert _row(text, "one") == ["one", "1", "3", "inf", "-", "3"]
    assert "nan" not in text.lower()


def test_the_settings_are_shown_as_given() -> None:
    text = _text(horizon=12345.678, warmup=999.999999)
    assert text.splitlines()[0].startswith("horizon 12345.678  end 12345.678  warmup 999.999999")
    assert _text(horizon=1e300, arrivals=3).startswith("horizon 1e+300  end ")


def test_the_columns_stay_aligned() -> None:
    text = _text(warmup=999.999999)
    for block in text.split("\n\n")[1:]:
        lines = [line for line in block.splitlines() if line.strip() and "─" not in line]
        widths = {len(line.rstrip()) for line in lines}
        assert len(widths) == 1, block  # right-aligned numbers: every row as wide as the head
