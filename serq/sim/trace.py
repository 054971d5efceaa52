"""Reading a trace file (`session,turn,new,out,think[,forced]`) into a `TraceTable`.

The file is read in blocks of a quarter megabyte, never whole, and its turns land in flat
typed columns: 8 bytes a turn for each of `new`, `out`, `think`, `forced` and `turn`,
plus 8 a session for the offsets, so the memory is that of the turns kept, not of the
file's text (the `turn` column is dropped once the turns are in order).

A block is parsed in bulk: with numpy (a dependency, imported when a trace of at least
`ACCELERATE_FROM` bytes is read, or already there), by a vectorised decimal parser that
takes the common shape (plain decimals of at most 15 digits, no exponent, canonical
integer session ids, `\\n` or `\\r\\n` line ends) and declines everything else; without
numpy (`accelerate=False`), or when it declines, by splitting the block's text and
converting whole columns with
`float` (through a cache, as columns repeat their values). Only a block where that bulk
pass fails is read row by row, which finds the first malformed row and names its line
and column, or handles what the bulk pass does not (blank lines). A block with a `"`
hands the rest of the file to `csv`, as a quoted field may span lines. Every path gives
the same numbers: the vectorised one computes `digits / 10**k`, which IEEE division
rounds exactly as `float` does for 15 digits or fewer.

The sessions are those of the old row-by-row reader: sessions in the order their id is
first seen (ids compared as text, with surrounding whitespace stripped), the rows of one
id wherever they are in the file, in turn order (a stable sort by the `turn` column,
done only for the sessions whose rows are not already in order).
"""

from __future__ import annotations

import csv
import io
import os
import sys
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from itertools import accumulate, chain, compress, islice, repeat
from operator import le, ne, not_, sub
from pathlib import Path
from typing import Any

from serq import ir
from serq.expand.loader import unreadable
from serq.sim.errors import SimError


def _numpy() -> Any:
    """numpy, imported on the first trace read (so that a run without a trace, and every
    other command, starts without it), or None where it is missing: it only speeds the
    reading up, and the pure path gives the same columns."""
    try:
        import numpy
    except ImportError:  # pragma: no cover - the pure path runs with `accelerate=False`
        return None
    return numpy


# Below this size a file is read without numpy, unless numpy is already imported:
# importing it costs about 80 ms, where the pure path reads about 40 ms a MB and the
# vectorised one 17 (so a 250-byte trace cost a run 80 ms before its first event)
ACCELERATE_FROM = 4 << 20
BLOCK = 1 << 18  # bytes read at a time (the vectorised parser needs ~40 bytes a byte)
FLUSH = 1 << 16  # rows of the csv path gathered before they join the columns
BOM = b"\xef\xbb\xbf"
HEADER = ["session", "turn", "new", "out", "think"]
ASCII_SPACE = " \t\x0b\x0c\x1c\x1d\x1e\x1f"  # what str.strip removes, bar line ends
CACHE_LIMIT = 1 << 17


class TraceTable:
    """The sessions of a trace: session `i`'s turns are rows `starts[i]` to
    `starts[i + 1]` of the columns `new`, `out`, `think` and `forced` (None when the file
    has no `forced` column: 0 every turn)."""

    __slots__ = ("columns", "starts")

    def __init__(self, columns: tuple[array, array, array, array | None], starts: array):
        self.columns = columns
        self.starts = starts

    def __len__(self) -> int:
        return len(self.starts) - 1

    def turns(self, i: int) -> list[tuple[float, float, float, float]]:
        """Session `i`'s turns, each (new, out, think, forced)."""
        new, out, think, forced = self.columns
        rows = range(self.starts[i], self.starts[i + 1])
        return [(new[k], out[k], think[k], 0.0 if forced is None else forced[k]) for k in rows]


def read_trace(trace: ir.Trace, base_dir: str, accelerate: bool | None = None) -> TraceTable:
    """The sessions of `trace`, read relative to `base_dir` (numpy speeds the reading up
    if installed and `accelerate`, which by default holds for a file of `ACCELERATE_FROM`
    bytes or more, or when numpy is imported already; the result is the same). A
    malformed row is a `SimError` at the trace clause naming the file, line and column."""
    path = Path(base_dir) / trace.path
    name = trace.path
    try:
        f = path.open("rb")
    except OSError as e:
        raise SimError(trace.origin, f"cannot read trace `{name}`: {unreadable(e)}") from None
    with f:
        if accelerate is None:
            accelerate = "numpy" in sys.modules or _size(f) >= ACCELERATE_FROM
        try:
            return _Reader(name, trace.origin, _numpy() if accelerate else None).read(f)
        except OSError as e:
            raise SimError(trace.origin, f"cannot read trace `{name}`: {unreadable(e)}") from None


def _size(f: Any) -> int:
    """The size of the open file `f` (0 when it has none: a pipe)."""
    try:
        return os.fstat(f.fileno()).st_size
    except OSError:
        return 0


class _Floats(dict):
    """`float` of a field's text, remembered (a bounded cache: columns repeat values)."""

    def __missing__(self, text: str) -> float:
        if len(self) >= CACHE_LIMIT:
            self.clear()
        value = self[text] = float(text)
        return value


class _Reader:
    def __init__(self, name: str, origin: Any, np: Any) -> None:
        self.name = name
        self.origin = origin
        self.np = np  # numpy, or None: the pure path
        self.accelerate = np is not None
        self.pow10 = None if np is None else np.array([10.0**k for k in range(23)])
        self.width = 0
        self.header: list[str] = []
        self.line = 1  # the number of the next line to read
        self.floats = _Floats()
        # the turns, in file order
        self.turn = array("h")  # widened to doubles by a turn that is not a small integer
        self.data: list[array] = []
        self.n = 0
        # runs of rows with one session id: where each starts, and (once some session's
        # rows are not all contiguous) its session
        self.seen: dict[int | str, int] = {}  # session id (see `_key`) -> session
        self.run_start = array("q")
        self.run_sid: array | None = None
        self.last_key: int | str | None = None
        self.last_sid = -1
        self.last_turn = 0.0
        self.check: set[int] = set()  # sessions whose rows may be out of turn order

    # ------------------------------------------------------------------ errors

    def error(self, message: str) -> SimError:
        return SimError(self.origin, f"trace `{self.name}` {message}")

    def utf8_error(self, raw: bytes, e: UnicodeDecodeError, line: int) -> SimError:
        before = _lines(raw[: e.start].decode("utf-8"))
        line += before.count("\n")
        column = len(before) - before.rfind("\n")
        return self.error(
            f"line {line}, column {column}: the text is not UTF-8 (byte 0x{raw[e.start]:02x})"
        )

    # ------------------------------------------------------------------ the file

    def read(self, f: Any) -> TraceTable:
        buf = f.read(BLOCK)
        while len(buf) < len(BOM) or not (b"\n" in buf or b"\r" in buf[:-1]):
            more = f.read(BLOCK)
            if not more:
                break
            buf += more
        if buf.startswith(BOM):
            buf = buf[len(BOM) :]
        if not buf:
            raise SimError(self.origin, f"trace `{self.name}` is empty")
        end = _line_end(buf)
        self.read_header(buf[:end])
        self.line = 2
        blocks = _blocks(f, buf[end:])
        for block in blocks:
            if self.block(block):
                self.csv_rest(block, blocks)
                break
        return self.finish()

    def read_header(self, raw: bytes) -> None:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise self.utf8_error(raw, e, 1) from None
        header = [c.strip() for c in next(csv.reader([text.rstrip("\r\n")]), [])]
        if header[:5] != HEADER or len(header) > 6 or (len(header) == 6 and header[5] != "forced"):
            raise SimError(
                self.origin,
                f"trace `{self.name}`: the header must be session,turn,new,out,think[,forced]",
            )
        self.header = header
        self.width = len(header)
        self.data = [array("d") for _ in range(self.width - 2)]

    def block(self, raw: bytes) -> bool:
        """Read a block of whole lines; True if it needs the csv reader (a `"`)."""
        if self.accelerate and self.vector_block(raw):
            return False
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise self.utf8_error(raw, e, self.line) from None
        if '"' in text:
            return True
        text = _lines(text)
        lines = text.split("\n")
        lines.pop()  # the block ends with a line end
        if not self.bulk_block(text, lines):
            self.careful((self.line + i, line.split(","), None) for i, line in enumerate(lines))
        self.line += len(lines)
        return False

    # ------------------------------------------------------------------ parsers

    def vector_block(self, raw: bytes) -> bool:
        """Parse `raw` with numpy if it has the common shape; False if it has not."""
        np = self.np
        if b"\r" in raw:
            if raw.count(b"\r") != raw.count(b"\r\n"):
                return False
            raw = raw.replace(b"\r\n", b"\n")
        if raw.translate(None, b"0123456789.-,\n"):
            return False
        width = self.width
        a = np.frombuffer(raw, np.uint8)
        seps = np.flatnonzero((a == 44) | (a == 10))
        nf = len(seps)
        if nf % width:
            return False
        ends = (a[seps] == 10).reshape(-1, width)
        if not ends[:, -1].all() or ends[:, :-1].any():
            return False
        digits = np.flatnonzero(a >= 48)
        dots = np.flatnonzero(a == 46)
        minus = np.flatnonzero(a == 45)
        other = np.zeros(nf, np.int64)  # a field's dot and minus
        dot_field = np.searchsorted(seps, dots)
        if len(dot_field) > 1 and (dot_field[1:] == dot_field[:-1]).any():
            return False
        other[dot_field] = 1
        minus_field = np.searchsorted(seps, minus)
        if len(minus):
            starts = np.concatenate(([0], seps[:-1] + 1))
            if (starts[minus_field] != minus).any():
                return False
            other[minus_field] += 1
        upto = seps - np.arange(nf) - np.cumsum(other)  # digits before each field's end
        count = np.diff(upto, prepend=0)
        if count.min() == 0 or count.max() > 15:
            return False
        keys = np.arange(0, nf, width)
        first = np.concatenate(([0], seps[keys[1:] - 1] + 1))
        if (
            (dot_field % width == 0).any()
            or (minus_field % width == 0).any()
            or ((a[first] == 48) & (count[keys] > 1)).any()
        ):
            return False  # a session id must be a canonical integer, to compare as text
        field = np.repeat(np.arange(nf), count)  # the field of each digit
        power = upto[field]
        power -= np.arange(1, len(digits) + 1)  # the digit's power of ten in its field
        pow10 = self.pow10
        weight = pow10[power]
        weight *= a[digits] - 48
        value = np.bincount(field, weights=weight, minlength=nf)  # exact: sums below 2**53
        value[dot_field] /= pow10[seps[dot_field] - dots - 1]
        value[minus_field] = -value[minus_field]
        rows = value.reshape(-1, width)
        key, turn = rows[:, 0], rows[:, 1]
        same = key[1:] == key[:-1]
        run_starts = np.concatenate(([0], np.flatnonzero(~same) + 1))
        run_keys = key[run_starts].astype(np.int64).tolist()
        descents = np.flatnonzero(same & (turn[1:] < turn[:-1])) + 1
        columns = [array("d", np.ascontiguousarray(rows[:, c]).tobytes()) for c in range(1, width)]
        small = turn.astype(np.int16)
        if (small == turn).all():  # turn numbers kept in 2 bytes: the order is the same
            columns[0] = array("h", small.tobytes())
        self.add(run_keys, run_starts.tolist(), descents.tolist(), columns)
        self.line += len(rows)
        return True

    def bulk_block(self, text: str, lines: list[str]) -> bool:
        """Parse the block's lines by whole columns; False if some line is not a plain row."""
        width = self.width
        if set(map(str.count, lines, repeat(","))) != {width - 1}:
            return False
        fields = text.replace("\n", ",").split(",")
        fields.pop()
        keys = fields[0::width]
        if not text.isascii() or any(c in text for c in ASCII_SPACE):
            keys = list(map(str.strip, keys))
        convert = self.floats.__getitem__
        try:
            columns = [array("d", map(convert, fields[c::width])) for c in range(1, width)]
        except ValueError:
            return False
        self.add_rows(keys, columns)
        return True

    def careful(self, rows: Iterable[tuple[int, list[str], str | None]]) -> None:
        """Read rows one by one (each with its line number, and its text if it may hold
        quotes): the first malformed one is an error naming its line and column; blank
        lines are skipped."""
        width, header = self.width, self.header
        keys: list[str] = []
        values: list[list[float]] = [[] for _ in range(width - 1)]
        for line, row, text in rows:
            if len(row) != width:
                if all(not c.strip() for c in row):
                    continue
                where = _where(line, row, text, min(len(row), width))
                raise self.error(f"{where}: expected {width} columns, found {len(row)}")
            for c in range(1, width):
                try:
                    values[c - 1].append(float(row[c]))
                except ValueError:
                    raise self.error(
                        f"{_where(line, row, text, c)}: "
                        f"`{row[c].strip()}` in column `{header[c]}` is not a number"
                    ) from None
            keys.append(row[0].strip())
            if len(keys) == FLUSH:
                self.add_rows(keys, [array("d", v) for v in values])
                keys = []
                values = [[] for _ in range(width - 1)]
        self.add_rows(keys, [array("d", v) for v in values])

    def csv_rest(self, raw: bytes, blocks: Iterator[bytes]) -> None:
        """Read `raw` and the blocks after it with `csv` (a quoted field may hold a comma
        or span lines)."""
        first = self.line

        def texts() -> Iterator[str]:
            line = first
            for b in chain([raw], blocks):
                try:
                    text = b.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise self.utf8_error(b, e, line) from None
                line += _lines(text).count("\n")
                yield text

        record: list[str] = []  # the lines of the record being read

        def lines() -> Iterator[str]:
            for text in texts():
                for line in io.StringIO(text, newline=""):
                    record.append(line)
                    yield line

        reader = csv.reader(lines())

        def rows() -> Iterator[tuple[int, list[str], str | None]]:
            start = first  # the line the record begins on
            try:
                for row in reader:
                    yield start, row, "".join(record)
                    start = first + reader.line_num
                    record.clear()
            except csv.Error as e:
                raise self.error(f"line {first + reader.line_num - 1}: {e}") from None

        self.careful(rows())

    # ------------------------------------------------------------------ sessions

    def add_rows(self, keys: list[str], columns: list[array]) -> None:
        """Add rows given as their session ids and columns (turn, new, out, think[, forced])."""
        n = len(keys)
        if not n:
            return
        boundary = list(map(ne, keys, islice(keys, 1, None)))
        run_starts = [0, *compress(range(1, n), boundary)]
        run_keys = [_key(keys[r]) for r in run_starts]
        turn = columns[0]
        ordered = list(map(le, turn, islice(turn, 1, None)))
        descents: list[int] = []
        if not all(ordered):
            falls = compress(range(n - 1), map(not_, ordered))
            descents = [r + 1 for r in falls if not boundary[r]]
        self.add(run_keys, run_starts, descents, columns)

    def add(
        self, run_keys: list[Any], run_starts: list[int], descents: list[int], columns: list[array]
    ) -> None:
        """Add a block's rows: the id and first row of each run of rows with one id, the
        rows whose turn is not at least the one before in the same run, the columns."""
        turn = columns[0]
        base = self.n
        seen = self.seen
        skip = 0
        if run_keys[0] == self.last_key:  # the last block's last session goes on
            skip = 1
            if not self.last_turn <= turn[0]:
                self.check.add(self.last_sid)
        keys = run_keys[skip:]
        if (
            self.run_sid is None
            and not any(map(seen.__contains__, keys))
            and len(set(keys)) == len(keys)
        ):  # fast path: new sessions only, each run a session
            sids: Any = range(len(seen), len(seen) + len(keys))
            seen.update(zip(keys, sids, strict=True))
            self.run_start.extend(map(base.__add__, islice(run_starts, skip, None)))
        else:
            if self.run_sid is None:
                self.run_sid = array("q", range(len(self.run_start)))
            sids = []
            for key, start in zip(keys, run_starts[skip:], strict=True):
                sid = seen.get(key)
                if sid is None:
                    sid = seen[key] = len(seen)
                else:
                    self.check.add(sid)  # its rows are in several places
                sids.append(sid)
                self.run_start.append(base + start)
                self.run_sid.append(sid)
        for r in descents:
            j = bisect_right(run_starts, r) - 1 - skip
            self.check.add(self.last_sid if j < 0 else sids[j])
        if len(sids):
            self.last_sid = sids[-1]
        self.last_key = run_keys[-1]
        self.last_turn = turn[-1]
        if self.turn.typecode == turn.typecode:
            self.turn.extend(turn)
        elif turn.typecode == "d":
            self.turn = array("d", self.turn)
            self.turn.extend(turn)
        else:
            self.turn.extend(array("d", turn))
        for column, more in zip(self.data, columns[1:], strict=True):
            column.extend(more)
        self.n += len(turn)

    def finish(self) -> TraceTable:
        n = self.n
        if not n:
            raise SimError(self.origin, f"trace `{self.name}` has no rows")
        data = self.data
        starts = self.run_start
        if self.run_sid is not None or self.check:
            starts, perm = self.order()
            if perm is not None:
                data = [_take(column, perm, self.np) for column in data]
        else:
            starts.append(n)
        self.turn = array("d")
        forced = data[3] if len(data) == 4 else None
        return TraceTable((data[0], data[1], data[2], forced), starts)

    def order(self) -> tuple[array, array | None]:
        """The sessions' offsets and the rows in session order, each in turn order (None:
        the file's order is that already)."""
        n, run_start, run_sid, turn = self.n, self.run_start, self.run_sid, self.turn
        perm: array | None = None
        if run_sid is None:  # each run is a session; some may be out of turn order
            starts = array("q", run_start)
            starts.append(n)
        elif self.accelerate:  # a stable sort of the rows by session
            np = self.np
            first = np.frombuffer(run_start, np.int64)
            sid = np.frombuffer(run_sid, np.int64)
            length = np.diff(first, append=n)
            size = np.bincount(sid, weights=length, minlength=len(self.seen)).astype(np.int64)
            starts = array("q", np.concatenate(([0], np.cumsum(size))).tobytes())
            perm = array("q", np.argsort(np.repeat(sid, length), kind="stable").tobytes())
        else:  # the same, as a counting sort of the runs
            size = array("q", bytes(8 * len(self.seen)))
            lengths = array("q", map(sub, chain(islice(run_start, 1, None), (n,)), run_start))
            for s, length in zip(run_sid, lengths, strict=True):
                size[s] += length
            starts = array("q", accumulate(size, initial=0))
            at = array("q", starts)
            perm = array("q", bytes(8 * n))
            for s, a, length in zip(run_sid, run_start, lengths, strict=True):
                p = at[s]
                perm[p : p + length] = array("q", range(a, a + length))
                at[s] = p + length
        for sid in sorted(self.check):
            a, b = starts[sid], starts[sid + 1]
            rows = range(a, b) if perm is None else perm[a:b]
            turns = [turn[i] for i in rows]
            if not all(map(le, turns, islice(turns, 1, None))):
                if perm is None:
                    perm = array("q", range(n))
                order = sorted(range(len(turns)), key=turns.__getitem__)
                perm[a:b] = array("q", [rows[j] for j in order])
        return starts, perm


def _take(column: array, perm: array, np: Any) -> array:
    """`column` in the order `perm` (with numpy, unless `np` is None)."""
    if np is not None:
        values = np.frombuffer(column, np.float64)[np.frombuffer(perm, np.int64)]
        return array("d", values.tobytes())
    return array("d", map(column.__getitem__, perm))


def _blocks(f: Any, data: bytes) -> Iterator[bytes]:
    """The file from `data` (read already) on, in blocks of whole lines, each ending
    with a line end (one is added to a last line without)."""
    while True:
        cut = data.rfind(b"\n") + 1 or data.rfind(b"\r", 0, len(data) - 1) + 1
        if cut:
            yield data[:cut]
            data = data[cut:]
        more = f.read(BLOCK)
        if not more:
            if data:
                yield data + b"\n"
            return
        data += more


def _line_end(buf: bytes) -> int:
    """The offset just past the first line's end in `buf` (`\\n`, `\\r\\n` or `\\r`)."""
    n, r = buf.find(b"\n"), buf.find(b"\r")
    if r >= 0 and (n < 0 or r < n):
        return r + 2 if buf[r + 1 : r + 2] == b"\n" else r + 1
    return n + 1 if n >= 0 else len(buf)


def _key(text: str) -> int | str:
    """A session id as it is compared: a canonical decimal integer is an int (the
    vectorised parser gives those), any other id its text; equal ids are equal texts."""
    if text.isdigit() and text.isascii() and len(text) <= 18 and (text[0] != "0" or text == "0"):
        return int(text)
    return text


def _lines(text: str) -> str:
    """`text` with every line end (`\\r\\n`, `\\r`, `\\n`, as csv counts them) a `\\n`."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _where(line: int, row: list[str], text: str | None, index: int) -> str:
    """ "line L, column C" where field `index` of `row` starts (or where the row ends):
    `row` begins on `line`; `text`, if not None, is its text as a csv record, which may
    hold quotes and span lines."""
    if text is None:
        return f"line {line}, column {_column(row, index)}"
    before = _lines(text[: _field_start(text, index)])
    return f"line {line + before.count(chr(10))}, column {len(before) - before.rfind(chr(10))}"


def _field_start(text: str, index: int) -> int:
    """The offset in the csv record `text` where field `index` starts, or where the
    record ends (csv's excel dialect: a field starting with `"` is quoted, `""` in it is
    a quote, and after its closing quote the field goes on to the next comma)."""
    i, n = 0, len(text)
    for _ in range(index):
        if i < n and text[i] == '"':
            i += 1
            while i < n:
                if text[i] == '"':
                    if text[i + 1 : i + 2] != '"':
                        i += 1
                        break
                    i += 1
                i += 1
        while i < n and text[i] not in ",\r\n":
            i += 1
        if i >= n or text[i] != ",":
            return i
        i += 1
    return i


def _column(row: list[str], index: int) -> int:
    """The 1-based column where field `index` of `row` starts, or where the row ends."""
    if index >= len(row):
        return len(",".join(row)) + 1
    return 1 + sum(len(c) + 1 for c in row[:index])
