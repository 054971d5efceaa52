"""Student's t quantile and the interval over replication means, against hand computations."""

from __future__ import annotations

import math

import pytest

from serq.sweeps.tstat import interval, t_cdf, t_quantile

# t(0.975, df), as tabulated (to the digits given)
TABLE = {1: 12.7062047, 2: 4.3026527, 3: 3.1824463, 4: 2.7764451, 9: 2.2621572,
         19: 2.0930241, 29: 2.0452296, 120: 1.9799304}


@pytest.mark.parametrize(("df", "expected"), TABLE.items())
def test_quantile_matches_the_table(df, expected):
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=5e-7)


def test_quantile_is_symmetric_and_inverts_the_cdf():
    for df in (1, 3.5, 10):
        for p in (0.01, 0.3, 0.5, 0.9, 0.999):
            q = t_quantile(p, df)
            assert t_cdf(q, df) == pytest.approx(p, abs=1e-12)
            assert t_quantile(1 - p, df) == pytest.approx(-q, abs=1e-9)
    assert t_quantile(0.975, 1e7) == pytest.approx(1.959964, abs=1e-5)  # the normal's
    with pytest.raises(ValueError):
        t_quantile(1.0, 3)


def test_interval_by_hand():
    means = [2.0, 4.0, 4.5, 5.0, 7.0]
    # mean 4.5; squared deviations 6.25 + 0.25 + 0 + 0.25 + 6.25 = 13 over n - 1 = 4
    mean, half = interval(means)
    assert mean == 4.5
    assert half == pytest.approx(2.7764451051977987 * math.sqrt(13 / 4 / 5), rel=1e-12)


def test_interval_edges():
    assert interval([3.0]) == (3.0, math.inf)  # one replication: no spread to measure
    mean, half = interval([])
    assert math.isnan(mean) and math.isnan(half)
    assert interval([1.0, 1.0, 1.0]) == (1.0, 0.0)
    mean, half = interval([1.0, math.inf])
    assert mean == math.inf and math.isnan(half)
