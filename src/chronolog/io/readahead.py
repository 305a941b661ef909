"""Decoding the input on the second core: a child process runs the reader.

``chronolog run`` on a large regular file spends about a third of its time
decoding JSON (msgspec typed records, then runs of facts grouped into
``FactBatch``es).  ``read_ahead`` forks a child that runs exactly that code
(``EventReader.batches()``) and sends each block's items to the parent as
one pickle; the parent unpickles them — about a third of the cost of
decoding — while the child decodes the next blocks.  Nothing else changes:
the items, their order, the messages about skipped lines (sent in order
and reported by the parent where the reader would have reported them), the
errors (raised in the parent when it reaches them) and the counters
``lines`` and ``skipped`` at the end are those of the reader itself.

Only used where it pays and is safe: a regular input file of at least
``MIN_BYTES``, more than one processor available to the process and not all
of them busy (the 1-minute load average below their number less a quarter:
on a machine whose other cores are taken the child only competes with the
evaluation), a POSIX ``fork``, and no other thread running in the parent.
``CHRONOLOG_READ_AHEAD=0`` turns it off, ``=1`` uses it whatever the load.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator

from chronolog.core.errors import InputError
from chronolog.core.events import Event, OnePredicate
from chronolog.io.batches import FactBatch
from chronolog.io.formats import EventReader

MIN_BYTES = 4 << 20  # smaller inputs decode in well under 0.1 s: not worth a process
_ITEMS, _REPORT, _END, _INPUT_ERROR, _FAILED = range(5)


def usable(path: str) -> bool:
    """Whether ``read_ahead`` should be used for the input file ``path``."""
    setting = os.environ.get("CHRONOLOG_READ_AHEAD", "")
    if setting == "0" or not hasattr(os, "fork"):
        return False
    try:
        if os.path.getsize(path) < MIN_BYTES:
            return False
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    except OSError:
        return False
    if cpus < 2:
        return False
    if setting != "1" and hasattr(os, "getloadavg") and os.getloadavg()[0] > cpus - 0.25:
        return False  # the other cores are busy
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


class ReadAhead:
    """Forks the child at once (so that it decodes while the parent still
    loads the program); iterating yields the items of ``reader.batches()``.

    ``reader`` must not have been read yet; its ``report`` is called by the
    parent, and its ``lines`` and ``skipped`` are set when the input ends.
    ``close()`` (also at the end of the iteration) stops the child and reaps it."""

    def __init__(self, reader: EventReader) -> None:
        rfd, wfd = os.pipe()
        _widen(rfd)
        pid = os.fork()
        if pid == 0:  # the child: decode, send, exit without running the parent's cleanups
            os.close(rfd)
            status = 0
            try:
                _child(reader, wfd)
            except BaseException:  # noqa: BLE001 (the parent learns of failures through the pipe)
                status = 1
            finally:
                os._exit(status)
        os.close(wfd)
        self.reader = reader
        self.pid: int | None = pid
        self.source = os.fdopen(rfd, "rb", buffering=1 << 20)

    def __iter__(self) -> Iterator[FactBatch | Event]:
        import pickle  # noqa: PLC0415 (start-up: after the fork (ReadAhead))

        reader = self.reader
        load = pickle.load
        try:
            while True:
                kind, payload = load(self.source)
                if kind == _ITEMS:
                    for item in payload:
                        if type(item) is tuple:  # a batch of one predicate, packed by _pack
                            t, key, args, file, line, events = item
                            yield FactBatch(t, OnePredicate(key, args), file, line, events)
                        else:
                            yield item
                elif kind == _REPORT:
                    reader.report(payload)
                elif kind == _END:
                    reader.lines, reader.skipped = payload
                    return
                elif kind == _INPUT_ERROR:
                    reader.lines, reader.skipped, message, loc = payload
                    raise InputError(message, loc)
                else:
                    raise payload
        except EOFError:
            raise RuntimeError("the input decoding process ended unexpectedly") from None
        finally:
            self.close()

    def close(self) -> None:
        if self.pid is None:
            return
        self.source.close()  # a child still writing gets EPIPE and exits
        os.waitpid(self.pid, 0)
        self.pid = None


def read_ahead(reader: EventReader) -> Iterator[FactBatch | Event]:
    """The items of ``reader.batches()``, decoded by a child process (see ``ReadAhead``)."""
    ahead = ReadAhead(reader)
    try:
        yield from ahead
    finally:
        ahead.close()


def _widen(fd: int) -> None:
    """A larger pipe (Linux): the child may run a few blocks ahead."""
    try:
        import fcntl  # noqa: PLC0415 (POSIX only)

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError):
        pass


def _pack(item: FactBatch | Event) -> object:
    """A batch of facts of one predicate (``OnePredicate``, as the reader makes
    it) as a plain tuple: sent without pickle's memo, its key once."""
    if type(item) is FactBatch and type(item.facts) is OnePredicate:
        facts = item.facts
        return (item.t, facts.key, facts.args, item.file, item.line, item.events)
    return item


def _child(reader: EventReader, wfd: int) -> None:
    import pickle  # noqa: PLC0415 (start-up: after the fork (ReadAhead))

    # The decoded tuples are all alive until sent: collections would only scan
    # them; and the child makes no cycles worth collecting before it exits.
    gc.disable()
    out = os.fdopen(wfd, "wb", buffering=1 << 20)
    pending: list = []

    def send(kind: int, payload: object) -> None:
        pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
        # No memo: ten times faster on millions of small tuples and strings; the
        # items hold no cycles, and _pack keeps the usual shared key out of them.
        pickler.fast = True
        pickler.dump((kind, payload))
        out.flush()  # the parent works on it while the next one is decoded

    def flush_items() -> None:
        send(_ITEMS, [_pack(item) for item in pending])
        pending.clear()

    def report(message: str) -> None:  # keep the order of items and messages
        if pending:
            flush_items()
        send(_REPORT, message)

    reader.report = report
    try:
        try:
            for item in reader.batches():
                pending.append(item)
                if len(pending) >= 256 or (type(item) is FactBatch and len(item.facts) >= 64):
                    flush_items()
        except InputError as exc:
            if pending:
                flush_items()
            send(_INPUT_ERROR, (reader.lines, reader.skipped, exc.message, exc.loc))
            return
        except Exception as exc:  # noqa: BLE001 (raised again in the parent)
            if pending:
                flush_items()
            try:
                pickle.dumps(exc)
            except Exception:  # noqa: BLE001
                exc = RuntimeError(f"{type(exc).__name__}: {exc}")
            send(_FAILED, exc)
            return
        if pending:
            flush_items()
        send(_END, (reader.lines, reader.skipped))
    finally:
        try:
            out.flush()
        except OSError:  # the parent stopped reading
            pass

