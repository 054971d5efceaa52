"""Prefill/decode disaggregation (serq-language.txt §2 "A KV transfer", "Queues"; §3
Pools, Stages), one rule at a time.

Each test is a small deterministic program with queues: a gateway, prefill instances P
(a fifo engine, a KV pool whose entry leases its blocks, a NIC) and a decode instance D
(a fifo engine, a KV pool, a NIC) that reads the KV with `D pull P latency 0.5`. Every
prefill is `run (prompt / r)` on P's engine, every decode `run (1)` on D's; all times
are dyadic and the outcome is worked out by hand in the docstring. Both implementations
(`impl`) must give exactly those values: gauge change points (a pool's used level
through time, a NIC's jobs present), the stage rows' utilisation (a NIC's is the
capacity its flows carry, Σ rate / φ) and the pool rows' time averages. The horizon is
10 and the warm-up 0, so a time average is the integral over [0, 10] divided by 10.
The last test runs every program here on serq against the reference and asks for the
same run, row for row.

The programs are inline, as in test_pool_rules.py: test_differential.py requires every
file of tests/sim/programs to sit in one of its tables.
"""

from __future__ import annotations

import pytest

H = 10.0


def _program(
    *,
    route: str,
    np: int = 1,
    p_nic: int = 10,
    d_nic: int = 20,
    d_cap: int = 100,
    rate: int = 10,
    lease: str = "inf",
    share: str = "maxmin",
    gauges: str = "",
) -> str:
    return f"""
queue gw : gateway {{
  route {{
{route}
    observe done = now;
  }}
}}
queue P[{np}] : prefill {{
  pool kv {{ cap 100; }}
  serve fifo;
  nic ps({p_nic});
  prefill (prompt) {{
    hold kv (prompt) {{ run (prompt / {rate}); }} cache (prompt) lease kv ({lease});
  }}
}}
queue D[1] : decode {{
  pool kv {{ cap {d_cap}; }}
  serve fifo;
  nic ps({d_nic});
  decode (prompt) {{
    hold kv (prompt) {{ run (1); }} cache (prompt);
  }}
  decode (prompt) from src {{
    hold kv (prompt) {{ transfer (prompt) from src to kv (prompt); run (1); }} cache (prompt);
  }}
}}
D pull P latency 0.5 share {share};
{gauges}
workload {{ arrive batch(2); session {{ request gw; }} }}
run {{ horizon {H:g}; warmup 0; seed 1; }}
"""


ONE_PREFILLER = """
    set prompt = 20;
    P[0].prefill(prompt);
    D[0].decode(prompt) from P[0];
"""

# Two requests through one prefiller into a decoder with room for one (D.kv cap 20).
LEASED = _program(
    route=ONE_PREFILLER,
    d_cap=20,
    gauges="gauge p_used = used(P.kv);\ngauge p_nic = busy(P.nic);\ngauge d_nic = busy(D.nic);",
)


def _leased(lease: str) -> str:
    return LEASED.replace("lease kv (inf)", f"lease kv ({lease})")


def run(impl, source: str):
    return impl.run(source=source, seed=1)


def changes(report, name: str) -> list[tuple[float, float]]:
    """The change points (time, value) of gauge `name`."""
    g = report.gauges[name]
    return list(zip(g.times, g.values, strict=True))


def stage(report, name: str, index: int = 0):
    (row,) = [s for s in report.stages if s.name == name and s.index == index]
    return row


def pool(report, name: str, index: int = 0):
    (row,) = [p for p in report.pools if p.name == name and p.index == index]
    return row


def done(report) -> list[tuple[int, float]]:
    o = report.observe("done")
    return list(zip(o.sessions, o.samples, strict=True))


# ---------------------------------------------------------------- the lease until the read


def test_prefiller_blocks_stay_leased_until_the_decoders_read(impl):
    """Both requests (prompt 20) are admitted to P.kv at 0 (used 40) and prefill in turn
    on P's fifo: session 0 on [0, 2), session 1 on [2, 4). Their scopes end there, but
    `lease kv (inf)` keeps the blocks allocated. Session 0 holds D.kv (cap 20) at 2,
    waits the latency on [2, 2.5) and reads 20 tokens at min(10, 20) = 10 on [2.5, 4.5):
    the read's release ends its lease at 4.5 (used 20). Session 1, prefilled at 4, waits
    for D.kv, which session 0 keeps until its decode ends at 5.5; it reads on [6, 8), and
    its blocks stay leased through that wait until 8 (used 0).

    P.kv used: 40 on [0, 4.5), 20 on [4.5, 8): (180 + 70) / 10 = 25. Each lease ends in
    the cache (`cache (prompt)`): 20 cached from 4.5 and 20 from 8: (110 + 40) / 10 = 15."""
    r = run(impl, LEASED)
    assert changes(r, "p_used") == [(0.0, 40.0), (4.5, 20.0), (8.0, 0.0)]
    assert done(r) == [(0, 5.5), (1, 9.0)]
    kv = pool(r, "P.kv")
    assert kv.mean_used == pytest.approx(25.0, rel=1e-12)
    assert kv.mean_cached == pytest.approx(15.0, rel=1e-12)
    assert kv.evicted_units == 0


def test_lease_survives_the_scope_not_the_slot(impl):
    """The prefill's scope ends when its run does: P's engine completes both prefills
    (utilisation 4 / 10) while the blocks wait; `lease kv (inf)` is what keeps them, so
    the pool's holders are not the engine's jobs. The decoder's pool is a plain hold:
    D.kv holds 20 on [2, 5.5) and on [5.5, 9), and session 1's admission at 5.5 evicts
    session 0's cached 20 (cap 20), which leaves 20 cached from 9: 2 / 10."""
    r = run(impl, LEASED)
    assert stage(r, "P").utilization == pytest.approx(0.4, rel=1e-12)
    assert stage(r, "P").completed == 2
    d = pool(r, "D.kv")
    assert d.mean_used == pytest.approx((3.5 + 3.5) * 20 / H, rel=1e-12)
    assert d.evicted_units == 20
    assert d.mean_cached == pytest.approx(2.0, rel=1e-12)


# ---------------------------------------------------------------- the read holds both NICs


def test_read_holds_both_nics(impl):
    """A read is one flow over P's NIC (φ 10) and D's (φ 20): it goes at the slower's 10
    and is present on both for its 2 s. The reads are on [2.5, 4.5) and [6, 8): each NIC
    has one job then (busy 1), P.nic carries its whole capacity (10 / 10) and D.nic half
    of its (10 / 20). Utilisation: P.nic 4 / 10, D.nic 2 / 10; each NIC completes two
    jobs, and the latency stage D.nic.latency holds each read 0.5 s before it: 1 / 10."""
    r = run(impl, LEASED)
    reads = [(0.0, 0.0), (2.5, 1.0), (4.5, 0.0), (6.0, 1.0), (8.0, 0.0)]
    assert changes(r, "p_nic") == reads
    assert changes(r, "d_nic") == reads
    assert stage(r, "P.nic").utilization == pytest.approx(0.4, rel=1e-12)
    assert stage(r, "D.nic").utilization == pytest.approx(0.2, rel=1e-12)
    assert stage(r, "P.nic").completed == stage(r, "D.nic").completed == 2
    assert stage(r, "D.nic.latency").utilization == pytest.approx(0.1, rel=1e-12)
    assert stage(r, "D.nic.latency").completed == 2


TWO_READS = """
    set prompt = 20;
    set i = serial;
    P[i].prefill(prompt);
    D[0].decode(prompt) from P[i];
"""


@pytest.mark.parametrize("share", ["maxmin", "bottleneck"])
def test_concurrent_reads_share_the_readers_nic(impl, share):
    """Sessions 0 and 1 prefill 20 tokens on P[0] and P[1] at once ([0, 2)), enter D.kv
    at 2 and wait the latency together; at 2.5 two reads start, each over its own
    prefiller's NIC (φ 10) and the one decoder NIC (φ 16). maxmin: both rise to 8, where
    D.nic fills; bottleneck: each min(10 / 1, 16 / 2) = 8. Both take 20 / 8 = 2.5 s and
    end at 5; D's fifo decodes them on [5, 6) and [6, 7).

    D.nic has two jobs on [2.5, 5) and is full: utilisation 2.5 / 10, mean number
    5 / 10; each P.nic carries 8 / 10 for 2.5 s: 0.2, one job present: 0.25."""
    source = _program(
        route=TWO_READS, np=2, d_nic=16, share=share, gauges="gauge d_nic = busy(D.nic);"
    )
    r = run(impl, source)
    assert changes(r, "d_nic") == [(0.0, 0.0), (2.5, 2.0), (5.0, 0.0)]
    assert done(r) == [(0, 6.0), (1, 7.0)]
    assert stage(r, "D.nic").utilization == pytest.approx(0.25, rel=1e-12)
    assert stage(r, "D.nic").mean_number == pytest.approx(0.5, rel=1e-12)
    for k in (0, 1):
        assert stage(r, "P.nic", k).utilization == pytest.approx(0.2, rel=1e-12)
        assert stage(r, "P.nic", k).mean_number == pytest.approx(0.25, rel=1e-12)
        assert stage(r, "P.nic", k).completed == 1


# ---------------------------------------------------------------- a lease that expires


def test_expired_lease_gives_its_blocks_to_the_cache(impl):
    """`lease kv (0.25)`: nobody renews the lease. Session 0's blocks leave the
    allocation at 2 + 0.25 and session 1's at 4 + 0.25, each before its read (at 2.5 and
    6), and go to the cache per `cache (prompt)`: P.kv used 40 on [0, 2.25), 20 on
    [2.25, 4.25): (90 + 40) / 10 = 13; cached 20 from 2.25 and 20 from 4.25:
    (155 + 115) / 10 = 27 (against 25 and 15 with the lease renewed). The read still
    takes its 2 s over both NICs (its release finds no lease left and releases nothing),
    so the sessions end as before, at 5.5 and 9."""
    r = run(impl, _leased("0.25"))
    assert changes(r, "p_used") == [(0.0, 40.0), (2.25, 20.0), (4.25, 0.0)]
    kv = pool(r, "P.kv")
    assert kv.mean_used == pytest.approx(13.0, rel=1e-12)
    assert kv.mean_cached == pytest.approx(27.0, rel=1e-12)
    assert done(r) == [(0, 5.5), (1, 9.0)]
    assert stage(r, "P.nic").utilization == pytest.approx(0.4, rel=1e-12)


def test_lease_longer_than_the_wait_ends_at_the_read(impl):
    """`lease kv (3)`: session 0's lease would expire at 5, after its read ends at 4.5,
    so the read ends it, as with inf; session 1's would expire at 7, while it waits for
    its read on [6, 8): it ends at 7. P.kv used 40 on [0, 4.5), 20 on [4.5, 7):
    (180 + 50) / 10 = 23; cached 20 from 4.5 and from 7: (110 + 60) / 10 = 17."""
    r = run(impl, _leased("3"))
    assert changes(r, "p_used") == [(0.0, 40.0), (4.5, 20.0), (7.0, 0.0)]
    kv = pool(r, "P.kv")
    assert kv.mean_used == pytest.approx(23.0, rel=1e-12)
    assert kv.mean_cached == pytest.approx(17.0, rel=1e-12)


# ---------------------------------------------------------------- `from` names the member

CROSSED = """
    set prompt = serial == 0 ? 16 : 8;
    set i = 1 - serial;
    P[i].prefill(prompt);
    D[0].decode(prompt) from P[i];
"""

FROM_MEMBER = _program(
    route=CROSSED,
    np=2,
    p_nic=8,
    d_nic=16,
    rate=16,
    gauges="gauge p0_used = used(P[0].kv);\ngauge p1_used = used(P[1].kv);",
)


def test_from_names_the_member_the_request_went_through(impl):
    """Session 0 (prompt 16) goes through P[1], session 1 (prompt 8) through P[0], and
    each decode says `from P[i]`. Session 1: prefill [0, 0.5), latency [0.5, 1), read 8
    at min(8, 16) = 8 on [1, 2), so P.kv[0] is released at 2. Session 0: prefill [0, 1),
    latency [1, 1.5), read 16 from 1.5; on [1.5, 2) the two reads share D.nic (16) at 8
    each, which fills it and slows neither; it ends at 3.5 and releases P.kv[1] then.
    Releasing the other member would find no lease there: the blocks would stay until
    the session ends.

    P.kv[0] used 8 on [0, 2): 1.6, cached 8 from 2: 6.4; P.kv[1] used 16 on [0, 3.5):
    5.6, cached 16 from 3.5: 10.4. D decodes session 1 on [2, 3), session 0 on
    [3.5, 4.5). D.nic carries 8 / 16 on [1, 3.5) and 16 / 16 on [1.5, 2): 1.5 / 10."""
    r = run(impl, FROM_MEMBER)
    assert changes(r, "p0_used") == [(0.0, 8.0), (2.0, 0.0)]
    assert changes(r, "p1_used") == [(0.0, 16.0), (3.5, 0.0)]
    assert done(r) == [(1, 3.0), (0, 4.5)]
    for k, used, cached in ((0, 1.6, 6.4), (1, 5.6, 10.4)):
        kv = pool(r, "P.kv", k)
        assert kv.mean_used == pytest.approx(used, rel=1e-12)
        assert kv.mean_cached == pytest.approx(cached, rel=1e-12)
        assert kv.admissions == 1
    assert stage(r, "P.nic", 0).utilization == pytest.approx(0.1, rel=1e-12)
    assert stage(r, "P.nic", 1).utilization == pytest.approx(0.2, rel=1e-12)
    assert stage(r, "D.nic").utilization == pytest.approx(0.15, rel=1e-12)


# ---------------------------------------------------------------- against the reference

PROGRAMS = {
    "leased": LEASED,
    "expired": _leased("0.25"),
    "lease-3": _leased("3"),
    "two-reads-maxmin": _program(route=TWO_READS, np=2, d_nic=16, share="maxmin"),
    "two-reads-bottleneck": _program(route=TWO_READS, np=2, d_nic=16, share="bottleneck"),
    "from-member": FROM_MEMBER,
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_pd_programs_are_the_reference_run(reference, name):
    """serq gives the reference's run exactly on every program here: samples, gauges,
    stage and pool rows (time averages to 1e-9)."""
    from tests.sim.conftest import _impl
    from tests.sim.test_differential import assert_same_run, same_float

    ours = _impl("serq").run_fresh(source=PROGRAMS[name])
    theirs = reference.run(source=PROGRAMS[name])
    assert_same_run(ours, theirs)
    assert sorted(ours.gauges) == sorted(theirs.gauges)
    for g, mine in ((theirs.gauges[k], ours.gauges[k]) for k in theirs.gauges):
        assert list(mine.times) == list(g.times) and list(mine.values) == list(g.values)
        assert same_float(mine.mean, g.mean)
