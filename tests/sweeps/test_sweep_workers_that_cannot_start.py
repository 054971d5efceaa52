"""A sweep whose local pool of workers cannot start says so (round 31, NOTES §70).

Found beside the outputs written whole: under a file size limit, the pool's shared
memory (a file, `multiprocessing`'s heap arena) could not be made, and the sweep ended
in a traceback from `multiprocessing`; a full /dev/shm or a fork refused does the same.
It is now an E-io diagnostic, status 2, with `--jobs 1` as the help."""

from __future__ import annotations

from pathlib import Path

from tests.file_size_limit import serq_limited

MM1 = (Path(__file__).resolve().parents[2] / "examples" / "mm1.sq").read_text(encoding="utf-8")


def test_a_sweep_whose_workers_cannot_start_says_so(tmp_path: Path) -> None:
    (tmp_path / "mm1.sq").write_text(MM1, encoding="utf-8")
    args = ["sweep", "mm1.sq", "--set", "lambda=0.1:0.9:0.1", "--horizon", "200"]
    done = serq_limited([*args, "--warmup", "10", "--jobs", "2"], tmp_path)
    assert done.returncode == 2, done.stderr
    assert "cannot start 2 worker processes: File too large" in done.stderr
    assert "`--jobs 1` runs the points in this process" in done.stderr
    assert "Traceback" not in done.stderr
