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
only on the error path.

``EventReader.batches()`` is the embedded runtime's faster path: it decodes
a block of lines at once with msgspec (typed decoding and validation in C:
no dict per line, no ``Event`` per fact) and yields one ``FactBatch`` per run
of facts at one time point.  The typed schema accepts a subset of what the
per-line checks accept; a block where it finds anything else (an error, a
blank line, an integer beyond int64) is read again line by line, so errors,
skipped lines and their positions are exactly those of the per-line path
(tests/io cross-checks the two on generated input).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator
from itertools import groupby, islice
from operator import attrgetter
from typing import IO, TYPE_CHECKING, Annotated, Any, Literal

from chronolog.contract.events import FACT_EVENT, OPS
from chronolog.core.errors import InputError
from chronolog.core.events import Event, OnePredicate
from chronolog.core.records import record
from chronolog.core.source import Loc

if TYPE_CHECKING:
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
_KEYS = frozenset({"t", "pred", "args", "op"})
_WS = " \t\r\n"
_NO_ARGS: list = []  # the default "args" (never mutated)
_BLOCK = 4096  # lines decoded at once by the batch path (text input)
_CHUNK = 1 << 18  # bytes read at once by the batch path (binary input)


@record
class FactBatch:
    """Consecutive input events at one time point: asserted facts (``facts``,
    the engine's ``(pred key, args)`` in arrival order) or, with no facts, one
    time advance.  ``line`` is the line number of the first event, ``events``
    how many input events the batch stands for."""

    t: int
    facts: list | OnePredicate
    file: str
    line: int
    events: int

    def locs(self) -> list[Loc]:
        """The location of each fact's line (of the time advance's, without facts)."""
        return [Loc(self.file, self.line + i, 1) for i in range(max(1, len(self.facts)))]

    def unpacked(self) -> Iterator[Event]:
        if not self.facts:
            yield Event(self.t, loc=Loc(self.file, self.line, 1))
        for ((pred, _), args), loc in zip(self.facts, self.locs()):
            yield Event(self.t, pred, args, False, loc)


def _block_decoder() -> tuple[Callable, tuple[type[Exception], ...]]:
    """The batch path's decoder and the errors it raises.  msgspec is imported
    on first use, not with this module: ``chronolog run`` forks its read-ahead
    child (io/readahead.py) right after importing this module, and the child
    and the parent (whose answer writer needs msgspec too) then load it in
    parallel on the two cores instead of the fork waiting for it."""
    global _decoder
    if _decoder is None:
        import msgspec  # noqa: PLC0415 (start-up: see the docstring)

        # The typed schema of the batch path: a strict subset of what _check_event accepts.
        Int64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
        Pred = Annotated[str, msgspec.Meta(min_length=1)]


        kinds = {
            "time": Int64,
            "pred": Pred | None,
            "args": tuple[str | Int64, ...],
            "op": Literal[OPS] | None,  # type: ignore[valid-type]
        }
        line = msgspec.defstruct(
            "_Line",
            [(name, kinds[kind]) if default is ... else (name, kinds[kind], default)
             for name, (kind, default, _) in FACT_EVENT.items()],
            forbid_unknown_fields=True, gc=False, module=__name__,
        )

        # A block is decoded as one array: "[" + ",".join(lines) + "]".  It parses only if
        # every line holds values and no line is blank, and with one element per line
        # each line holds exactly one value, as the per-line path requires.
        _decoder = (
            msgspec.json.Decoder(list[line]).decode,
            (msgspec.DecodeError, msgspec.ValidationError, UnicodeError),
        )
    return _decoder


_decoder: tuple[Callable, tuple[type[Exception], ...]] | None = None
_get_t = attrgetter("t")
_get_pred = attrgetter("pred")
_get_args = attrgetter("args")
_get_op = attrgetter("op")
_NONE = {None}


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
        self._latest: int | None = None  # latest time seen (JSONL), for delayed events
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
            items = _fast_block("[" + ",".join(block) + "]", len(block), self.filename, self._done + 1)
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
                items = _fast_block(b"[" + body.replace(b"\n", b",") + b"]", n, self.filename, self._done + 1)
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

    def _bad(self, bad: _Bad, number: int) -> None:
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
            if not raw.strip(_WS):
                return None
            self._bad(_Bad(_decode_message(exc, raw), _decode_col(exc, raw)), number)
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
            ev = _check_event(obj, raw)
        except _Bad as bad:
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
                if not parts or parts[0][0] == "#":
                    continue
                try:
                    if not raw.isascii():
                        _check_text(raw)
                    first = parts[0]
                    if not (first.isdigit() or (first[0] == "-" and first[1:].isdigit())) or not first.isascii():
                        raise _Bad(_bad_time_message(first), raw.find(first) + 1)
                except _Bad as bad:
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


def _fast_block(array: str | bytes, n: int, filename: str, first: int) -> list[FactBatch | Event] | None:
    """The items of a block of ``n`` lines joined into one JSON array, or None
    if the block needs the per-line path (any line the typed schema does not
    accept as is)."""
    decode, errors = _decoder or _block_decoder()
    try:
        lines = decode(array)
    except errors:
        return None
    if len(lines) != n:  # a line with several values
        return None
    items: list[FactBatch | Event] = []
    number = first
    # No "op" key anywhere (nor a key spelled with escapes): no check per run.
    check_ops = not isinstance(array, bytes) or b'"op"' in array or b"\\u" in array
    for t, run in groupby(lines, _get_t):
        run = list(run)
        preds = set(map(_get_pred, run))
        if None not in preds and (not check_ops or set(map(_get_op, run)) == _NONE):
            # The engine's facts ((pred, arity), args), built without Python code per fact.
            args = list(map(_get_args, run))
            if len(preds) == 1 and len(arities := set(map(len, args))) == 1:
                facts = OnePredicate((preds.pop(), arities.pop()), args)
            else:
                facts = list(zip(zip(map(_get_pred, run), map(len, args)), args))
            items.append(FactBatch(t, facts, filename, number, len(run)))
            number += len(run)
            continue
        batch: FactBatch | None = None
        for e in run:
            if e.pred is None:
                if e.args or e.op == "retract":
                    return None  # an error: reported by the per-line path
                items.append(FactBatch(t, [], filename, number, 1))
                batch = None
            elif e.op == "retract":
                items.append(Event(t, e.pred, e.args, True, Loc(filename, number, 1)))
                batch = None
            else:
                if batch is None:
                    batch = FactBatch(t, [], filename, number, 0)
                    items.append(batch)
                batch.facts.append(((e.pred, len(e.args)), e.args))
                batch.events += 1
            number += 1
    return items


def flatten(items: Iterable[FactBatch | Event]) -> Iterator[Event]:
    """The events of batches (``loc`` on delayed ones, as the per-line reader sets it)."""
    latest: int | None = None
    for item in items:
        if type(item) is FactBatch:
            t = item.t
            delayed = latest is not None and t < latest
            if not delayed:
                latest = t
            if not item.facts:
                yield Event(t, loc=Loc(item.file, item.line, 1) if delayed else None)
            for i, ((pred, _), args) in enumerate(item.facts):
                yield Event(t, pred, args, False, Loc(item.file, item.line + i, 1) if delayed else None)
        else:
            if latest is None or item.t >= latest:
                latest = item.t
            yield item


class _Bad(Exception):
    """A bad line: message and 1-based column (turned into an InputError by the reader)."""

    def __init__(self, message: str, col: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.col = col


# ---------------------------------------------------------------- JSONL checks


def _check_event(obj: object, raw: str) -> Event:
    """Full validation of one parsed JSONL value (the slow path)."""
    if type(obj) is not dict:
        raise _Bad(f"an event must be a JSON object, not {_kind(obj)}", _first_col(raw))
    where = _Members(raw)
    if "interval" in obj:
        raise _Bad("interval facts need the mtl dialect", where.value_col("interval"))
    for key in obj:
        if key not in _KEYS:
            raise _Bad(f"unknown key {_show(key)} (allowed: t, pred, args, op)", where.key_col(key))
    if "t" not in obj:
        raise _Bad('missing time "t"', _first_col(raw))
    t = obj["t"]
    if type(t) is not int:
        text = where.text("t")
        if type(t) is float and _is_int_text(text):
            raise _Bad(f'"t" is out of range (64-bit integers): {text}', where.value_col("t"))
        raise _Bad(f'"t" must be an integer time point, not {text}', where.value_col("t"))
    op = obj.get("op")
    if op is not None and op != "retract" and op != "assert":
        raise _Bad(f'"op" must be "retract" or "assert", not {where.text("op")}', where.value_col("op"))
    pred = obj.get("pred")
    args = obj.get("args", [])
    if pred is None:
        if op == "retract":
            raise _Bad('a retraction needs "pred"', where.key_col("op"))
        if args != []:
            raise _Bad('an event with "args" needs "pred"', where.key_col("args"))
        return Event(t)
    if type(pred) is not str or not pred:
        raise _Bad(f'"pred" must be a non-empty string, not {where.text("pred")}', where.value_col("pred"))
    if type(args) is not list:
        raise _Bad(f'"args" must be a list of strings and integers, not {where.text("args")}', where.value_col("args"))
    for i, a in enumerate(args):
        if type(a) is not str and type(a) is not int:
            text, col = where.element("args", i)
            if type(a) is float and _is_int_text(text):
                raise _Bad(f"argument {i + 1} is out of range (64-bit integers): {text}", col)
            raise _Bad(f"argument {i + 1} must be a string or an integer, not {text}", col)
    return Event(t, pred, tuple(args), op == "retract")


def _is_int_text(text: str) -> bool:
    return text.lstrip("-").isdigit()


def _decode_message(exc: orjson.JSONDecodeError, raw: str) -> str:
    if _surrogate_col(raw):
        return "the line is not valid UTF-8"
    if raw.lstrip(_WS).startswith("#"):
        return "invalid JSON: comments are not allowed in JSONL input (use --format lines for '#' comments)"
    return f"invalid JSON: {exc.msg}"


def _decode_col(exc: orjson.JSONDecodeError, raw: str) -> int:
    return _surrogate_col(raw) or (exc.colno if isinstance(exc.colno, int) and exc.colno > 0 else 1)


def _surrogate_col(raw: str) -> int:
    """Column of the first undecodable byte (read with errors='surrogateescape'), else 0."""
    if raw.isascii():
        return 0
    for i, ch in enumerate(raw):
        if "\ud800" <= ch <= "\udfff":
            return i + 1
    return 0


def _kind(obj: object) -> str:
    return {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean"}.get(
        type(obj), "null"
    )


def _show(text: str, limit: int = 40) -> str:
    shown = orjson.dumps(text).decode()
    return shown if len(shown) <= limit else shown[: limit - 4] + '..."'


def _first_col(raw: str) -> int:
    return len(raw) - len(raw.lstrip(_WS)) + 1


class _Members:
    """Positions of the members of the top-level JSON object in a raw line.

    Only used on the error path, on a line orjson has already parsed, so the
    scanner can assume valid JSON.  A repeated key maps to its last
    occurrence, the one orjson keeps.
    """

    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.members: dict[str, tuple[int, int, int]] = {}  # key -> (key start, value start, value end)
        i = _skip_ws(raw, 0) + 1  # past "{"
        while True:
            i = _skip_ws(raw, i)
            if i >= len(raw) or raw[i] == "}":
                break
            k0 = i
            i = _scan_value(raw, i)
            key = orjson.loads(raw[k0:i])
            i = _skip_ws(raw, i) + 1  # past ":"
            v0 = _skip_ws(raw, i)
            i = _scan_value(raw, v0)
            self.members[key] = (k0, v0, i)
            i = _skip_ws(raw, i)
            if i < len(raw) and raw[i] == ",":
                i += 1

    def key_col(self, key: str) -> int:
        m = self.members.get(key)
        return m[0] + 1 if m else 1

    def value_col(self, key: str) -> int:
        m = self.members.get(key)
        return m[1] + 1 if m else 1

    def text(self, key: str, limit: int = 40) -> str:
        m = self.members.get(key)
        if not m:
            return "?"
        return _clip(self.raw[m[1] : m[2]], limit)

    def element(self, key: str, index: int) -> tuple[str, int]:
        """Text and column of element ``index`` of the array value of ``key``."""
        m = self.members.get(key)
        if not m:
            return "?", 1
        raw = self.raw
        i = m[1] + 1  # past "["
        for n in range(index + 1):
            i = _skip_ws(raw, i)
            start = i
            i = _scan_value(raw, i)
            if n == index:
                return _clip(raw[start:i], 40), start + 1
            i = _skip_ws(raw, i) + 1  # past ","
        return "?", m[1] + 1


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _skip_ws(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] in _WS:
        i += 1
    return i


def _scan_value(s: str, i: int) -> int:
    """End index of the (valid) JSON value starting at ``i``."""
    n = len(s)
    if i >= n:
        return i
    c = s[i]
    if c == '"':
        i += 1
        while i < n:
            c = s[i]
            if c == "\\":
                i += 2
                continue
            if c == '"':
                return i + 1
            i += 1
        return n
    if c in "[{":
        depth = 0
        while i < n:
            c = s[i]
            if c == '"':
                i = _scan_value(s, i)
                continue
            if c in "[{":
                depth += 1
            elif c in "]}":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return n
    while i < n and s[i] not in ",]}" and s[i] not in _WS:
        i += 1
    return i


# ---------------------------------------------------------------- lines format


def _check_text(raw: str) -> None:
    col = _surrogate_col(raw)
    if col:
        raise _Bad("the line is not valid UTF-8", col)


def _bad_time_message(first: str) -> str:
    hint = " (this looks like JSON: use --format jsonl)" if first.startswith("{") else ""
    return f"expected an integer time point, got {_clip(repr(first), 40)}{hint}"


def _value(text: str) -> str | int:
    """An argument: an integer if it is one (ASCII digits, optional '-'), else a string."""
    if (text.isdigit() or (text[0] == "-" and text[1:].isdigit())) and text.isascii():
        return int(text)
    return text


def plain_fact(obj: object) -> Event | None:
    """The fast path of validation: a decoded line that is a well-formed fact
    without ``op``; None means "check it in full" (it may still be valid)."""
    if type(obj) is dict and obj.keys() <= _KEYS and "op" not in obj:
        t = obj.get("t")
        pred = obj.get("pred")
        args = obj.get("args", _NO_ARGS)
        if type(t) is int and type(pred) is str and pred and type(args) is list:
            for a in args:
                if type(a) is not str and type(a) is not int:
                    return None
            return Event(t, pred, tuple(args))
    return None
