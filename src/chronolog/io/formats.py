"""Input stream readers: JSON Lines (CONTRACT §2) and the ``lines`` text format.

Every bad line becomes an ``InputError`` naming file, line and column; with
``on_error="skip"`` it is reported, counted and skipped instead, so one bad
event never stops a stream.

Validation of a JSONL event (the same checks guard the fleet's ingest):

* ``t`` is a JSON integer.  Booleans, floats (also integral ones such as
  ``5.0``), strings and integers beyond 64 bits are rejected: LARS time is
  integral and a silent conversion would hide a producer's bug.
* ``pred`` is a non-empty string (any characters).  Without ``pred`` the line
  is a time advance (``{"t": 9}``); ``"pred": null``, ``"args": []`` and
  ``"op": "assert"`` are tolerated there.
* ``args`` (default ``[]``) is a list of JSON strings and integers; floats,
  booleans, null, lists and objects are rejected.
* ``op`` is absent, ``"assert"`` or ``"retract"``; any other key is an error,
  and ``interval`` says that interval facts need the mtl dialect.
* Blank lines are skipped; in JSONL nothing else is (no comments).

The column of an error is the 1-based character position of the offending
value (or key) in the raw line.  The common well-formed line takes a fast
path (one ``orjson.loads`` and a few type checks); locating columns happens
only on the full check.  The checks and their messages are
``io/event_checks.py``'s, the column scanner ``io/json_scan.py``'s.

``EventReader.batches()`` is the embedded runtime's faster path: it cuts the
input into blocks of lines, each decoded at once (``io/batches.py``: msgspec,
one ``FactBatch`` per run of facts at one time point).  A block the typed
decoding does not accept as is (an error, a blank line, an integer beyond
int64) is read again line by line here, so errors, skipped lines and their
positions are exactly those of the per-line path (tests/io cross-checks the
two on generated input).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from operator import attrgetter
from typing import IO, TYPE_CHECKING, Any

from chronolog.core.errors import InputError
from chronolog.core.events import Event
from chronolog.core.source import Loc
from chronolog.io.batches import FactBatch, decode_block
from chronolog.io.event_checks import BadLine, check_event, decode_col, decode_message, plain_fact, surrogate_col
from chronolog.io.json_scan import WS, clip

if TYPE_CHECKING:
    from fractions import Fraction

    import orjson
else:
    orjson: Any = None  # imported by _load_orjson() on first use: start-up time (files take the msgspec path)


def _load_orjson() -> None:
    """Import orjson for the per-line path (pipes, blocks with errors) and error messages."""
    global orjson
    if orjson is None:
        import orjson as module  # noqa: PLC0415 (start-up: see above)

        orjson = module


FORMATS = ("jsonl", "lines", "meteor", "rtec")
_BLOCK = 4096  # lines decoded at once by the batch path (text input)
_CHUNK = 1 << 18  # bytes read at once by the batch path (binary input)
_get_t = attrgetter("t")


class EventReader:
    """Iterates the events of one input; counts lines read and lines skipped.

    ``lines`` is the number of physical lines read so far, ``skipped`` the
    number of bad lines skipped (``on_error="skip"``), each reported through
    ``report`` as ``"file:line:col: skipped: message"``.  Retractions and
    delayed events (time before the latest seen) carry their ``loc`` so that
    later warnings about them can name the line.
    """

    def __init__(
        self,
        stream: IO[str],
        filename: str,
        fmt: str = "jsonl",
        *,
        on_error: str = "fail",
        report: Callable[[str], None] | None = None,
        raw: IO[bytes] | None = None,
    ) -> None:
        """``raw``: the binary file under ``stream`` (UTF-8, universal newlines,
        undecodable bytes escaped, nothing read yet), for ``batches()``."""
        if fmt not in FORMATS:
            raise InputError(f"unknown input format {fmt!r} (choose from {', '.join(FORMATS)})")
        if fmt in ("meteor", "rtec"):
            raise InputError(f"input format {fmt!r} is not supported yet (planned with its dialect)")
        if on_error not in ("fail", "skip"):
            raise ValueError(f"on_error must be 'fail' or 'skip', not {on_error!r}")
        self.stream = stream
        self.filename = filename
        self.format = fmt
        self.on_error = on_error
        self.report = report or (lambda msg: None)
        self.lines = 0
        self.skipped = 0
        self._latest: int | Fraction | None = None  # latest time seen (JSONL), for delayed events
        self._done = 0
        self.raw = raw

    def __iter__(self) -> Iterator[Event]:
        return self._jsonl() if self.format == "jsonl" else self._lines()

    def batches(self) -> Iterator[FactBatch | Event]:
        """The input as ``FactBatch``es (runs of facts at one time point, time
        advances) and ``Event``s (retractions); flattened, the same events as
        iterating the reader, with the same errors.

        With ``raw`` (the binary file under a UTF-8 text stream with universal
        newlines, not read yet) blocks are cut from the bytes directly; else
        from the text lines."""
        if self.format != "jsonl":
            yield from self
            return
        self._done = 0  # lines handled so far
        try:
            if self.raw is not None:
                yield from self._binary_blocks(self.raw)
            else:
                yield from self._text_blocks()
        finally:
            self.lines = max(self.lines, self._done)

    def _text_blocks(self) -> Iterator[FactBatch | Event]:
        lines_in = iter(self.stream)
        while True:
            block = list(islice(lines_in, _BLOCK))
            if not block:
                return
            if self._done == 0 and block[0].startswith("\ufeff"):
                block[0] = block[0][1:]
            items = decode_block("[" + ",".join(block) + "]", len(block), self.filename, self._done + 1)
            yield from self._block_items(items, len(block), block)

    def _binary_blocks(self, raw: IO[bytes]) -> Iterator[FactBatch | Event]:
        tail = b""
        start = True
        while True:
            data = raw.read(_CHUNK)
            if data:
                data = tail + data if tail else data
                cut = data.rfind(b"\n") + 1
                if cut == 0:
                    tail = data
                    continue
                chunk, tail = data[:cut], data[cut:]
            elif tail:
                chunk, tail = tail, b""
            else:
                return
            if start:
                start = False
                if chunk.startswith(b"\xef\xbb\xbf"):
                    chunk = chunk[3:]
                    if not chunk:  # the whole input is a BOM: one empty line, as the text layer reads it
                        self._done += 1
                        continue
            items = None
            n = 0
            lone_cr = b"\r" in chunk and chunk.count(b"\r") != chunk.count(b"\r\n")  # a line break in text mode
            if not lone_cr:
                body = chunk[:-1] if chunk.endswith(b"\n") else chunk
                n = body.count(b"\n") + 1
                items = decode_block(b"[" + body.replace(b"\n", b",") + b"]", n, self.filename, self._done + 1)
            # The per-line path reads what the text layer would: UTF-8 with the
            # undecodable bytes escaped, universal newlines.
            text = None if items is not None else io.StringIO(chunk.decode("utf-8", "surrogateescape"), newline=None)
            yield from self._block_items(items, n, text)

    def _block_items(
        self, items: list[FactBatch | Event] | None, n: int, lines: Iterable[str] | None
    ) -> Iterator[FactBatch | Event]:
        """The items of a block of ``n`` lines decoded at once, else its lines one by one."""
        if items is not None:
            self._done += n
            if items:
                top = max(map(_get_t, items))
                if self._latest is None or top > self._latest:
                    self._latest = top
            yield from items
            return
        slow = self._jsonl_line
        assert lines is not None
        _load_orjson()
        for raw in lines:
            self._done += 1
            ev = slow(raw, self._done)
            if ev is not None:
                yield ev

    def _bad(self, bad: BadLine, number: int) -> None:
        """Raise the error of a bad line, or report and count it."""
        self.lines = number
        err = InputError(bad.message, Loc(self.filename, number, bad.col))
        if self.on_error == "fail":
            raise err from None
        self.skipped += 1
        self.report(f"{err.loc}: skipped: {bad.message}")

    def _jsonl(self) -> Iterator[Event]:
        line = self._jsonl_line
        number = 0
        _load_orjson()
        try:
            for number, raw in enumerate(self.stream, 1):
                if number == 1 and raw.startswith("\ufeff"):
                    raw = raw[1:]
                ev = line(raw, number)
                if ev is not None:
                    yield ev
        finally:
            self.lines = max(self.lines, number)

    def _jsonl_line(self, raw: str, number: int) -> Event | None:
        """The event of one line (None: blank or skipped); sets ``loc`` for
        retractions and delayed events (time before the latest seen)."""
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            if not raw.strip(WS):
                return None
            self._bad(BadLine(decode_message(exc, raw), decode_col(exc, raw)), number)
            return None
        latest = self._latest
        ev = plain_fact(obj)
        if ev is not None:
            if latest is None or ev.t >= latest:
                self._latest = ev.t
            else:
                ev.loc = Loc(self.filename, number, 1)
            return ev
        try:
            ev = check_event(obj, raw)
        except BadLine as bad:
            self._bad(bad, number)
            return None
        if latest is None or ev.t >= latest:
            self._latest = ev.t
            if ev.retract:
                ev.loc = Loc(self.filename, number, 1)
        else:
            ev.loc = Loc(self.filename, number, 1)
        return ev

    def _lines(self) -> Iterator[Event]:
        filename = self.filename
        latest: int | None = None
        number = 0
        try:
            for number, raw in enumerate(self.stream, 1):
                parts = raw.split()
                for i, part in enumerate(parts):
                    if part[0] == "#":  # a comment to the end of the line, also after a fact
                        del parts[i:]
                        break
                if not parts:
                    continue
                try:
                    if not raw.isascii():
                        _check_text(raw)
                    first = parts[0]
                    if not (first.isdigit() or (first[0] == "-" and first[1:].isdigit())) or not first.isascii():
                        raise BadLine(_bad_time_message(first), raw.find(first) + 1)
                except BadLine as bad:
                    self._bad(bad, number)
                    continue
                t = int(first)
                if len(parts) == 1:
                    ev = Event(t)
                else:
                    ev = Event(t, parts[1], tuple([_value(a) for a in parts[2:]]))
                if latest is None or t >= latest:
                    latest = t
                else:
                    ev.loc = Loc(filename, number, 1)
                yield ev
        finally:
            self.lines = max(self.lines, number)


def read_events(
    stream: IO[str],
    filename: str,
    fmt: str = "jsonl",
    *,
    on_error: str = "fail",
    report: Callable[[str], None] | None = None,
) -> Iterator[Event]:
    """The events of ``stream`` (named ``filename`` in messages) in input order."""
    return iter(EventReader(stream, filename, fmt, on_error=on_error, report=report))


# ---------------------------------------------------------------- lines format


def _check_text(raw: str) -> None:
    col = surrogate_col(raw)
    if col:
        raise BadLine("the line is not valid UTF-8", col)


def _bad_time_message(first: str) -> str:
    hint = " (this looks like JSON: use --format jsonl)" if first.startswith("{") else ""
    return f"expected an integer time point, got {clip(repr(first), 40)}{hint}"


def _value(text: str) -> str | int:
    """An argument: an integer if it is one (ASCII digits, optional '-'), else a string."""
    if (text.isdigit() or (text[0] == "-" and text[1:].isdigit())) and text.isascii():
        return int(text)
    return text
