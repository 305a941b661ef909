"""Window views: what a windowed literal sees at the current time, kept up to date by diffs.

A view turns the diffs of a source predicate (atoms at time points, entering
or leaving the source) plus the advance of time (facts leaving the window)
into the view's content.  The cost of one time point is proportional to the
facts that enter and leave the window, never to the history.

Source kinds:

* *timed* sources (stream predicates, derived predicates with ``@``-heads):
  diffs are ``(args, T, ±1)``;
* *now* sources (derived predicates holding only at the evaluation time):
  the view is a function of the source relation at ``t``.

``Rel`` content per operator: NOW/DIAMOND/BOX hold ``args``; AT holds
``args + (T,)``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection

from chronolog.dialects.lars.engine.relation import Rel
from chronolog.dialects.lars.ir import Op

Diff = tuple[tuple, int, int]  # (args, time, +1 | -1)


class TimeWindowView:
    """DIAMOND / BOX / AT over a time window ``[n]`` (``n`` None: the whole
    timeline) of a derived predicate with ``@``-heads (a *timed* source).

    Its atoms arrive as changes of the predicate's relation (tuples with the
    time last), at any time of the timeline and in both directions.
    ``_by_time`` holds the source tuples inside the window by time; DIAMOND
    and BOX count, per args, the window points holding them.
    """

    __slots__ = ("op", "size", "rel", "_by_time", "_count", "_lo", "_length")

    def __init__(self, op: Op, size: int | None) -> None:
        self.op = Op.DIAMOND if op is Op.NOW else op
        self.size = 0 if op is Op.NOW else size
        self.rel = Rel()
        self._by_time: dict[int, set[tuple]] = {}
        self._count: dict[tuple, int] = {}  # args -> number of window points holding it
        self._lo: int | None = None
        self._length = 0

    def advance(self, t: int, t1: int, added: Collection[tuple], removed: Collection[tuple]) -> None:
        """Time moves to ``t``; the source gained ``added`` and lost ``removed``
        (tuples ``args + (T,)``)."""
        lo = t1 if self.size is None else max(t1, t - self.size)
        by_time = self._by_time
        gone: list[tuple] = []
        if self._lo is not None and lo > self._lo:
            for T in [T for T in by_time if T < lo]:
                gone.extend(by_time.pop(T))
        self._lo = lo
        # The changes mostly lie at one time (atoms derived now, atoms leaving a
        # window together): then they are whole-set operations on one bucket.
        times = {x[-1] for x in removed} if removed else ()
        if len(times) == 1:
            (T,) = times
            bucket = by_time.get(T)
            if bucket is not None:
                hit = bucket.intersection(removed)
                if hit:
                    bucket -= hit
                    if not bucket:
                        del by_time[T]
                    gone.extend(hit)
        else:
            for x in removed:
                bucket = by_time.get(x[-1])
                if bucket is not None and x in bucket:
                    bucket.discard(x)
                    if not bucket:
                        del by_time[x[-1]]
                    gone.append(x)
        new: Collection[tuple] = []
        times = {x[-1] for x in added} if added else ()
        if len(times) == 1:
            (T,) = times
            if type(T) is int and lo <= T <= t:
                bucket = by_time.get(T)
                if bucket is None:
                    new = by_time[T] = set(added)  # a copy: buckets change in place
                else:
                    new = (added if type(added) is set else set(added)) - bucket
                    bucket |= new
        else:
            new = []
            for x in added:
                T = x[-1]
                if type(T) is not int or T < lo or T > t:
                    continue
                bucket = by_time.get(T)
                if bucket is None:
                    by_time[T] = {x}
                elif x in bucket:
                    continue
                else:
                    bucket.add(x)
                new.append(x)
        rel = self.rel
        if self.op is Op.AT:
            if gone:
                rel.discard_many(gone)
            if new:
                rel.add_many(new)
            return
        count = self._count
        left: list[tuple] = []
        for x in gone:
            a = x[:-1]
            c = count[a] - 1
            if c:
                count[a] = c
            else:
                del count[a]
                left.append(a)
        entered: list[tuple] = []
        for x in new:
            a = x[:-1]
            c = count.get(a, 0)
            count[a] = c + 1
            if not c:
                entered.append(a)
        if self.op is Op.DIAMOND:
            if left:
                rel.discard_many([a for a in left if a not in count])
            if entered:
                rel.add_many(entered)
            return
        length = t - lo + 1
        if length != self._length:
            self._length = length
            rel.replace({a for a, c in count.items() if c == length})
            return
        for a in {x[:-1] for x in gone} | {x[:-1] for x in new}:
            if count.get(a, 0) == length:
                rel.add(a)
            else:
                rel.discard(a)


class StreamWindowView:
    """DIAMOND / BOX / AT over a time window of a *stream* predicate.

    Stream facts only ever enter at the evaluation time (a replay re-steps
    the engine for delayed events and retractions), so a time point's facts
    arrive as one batch and the view is kept with set operations on whole
    batches instead of per-fact counters:

    * DIAMOND: ``_by_time[T]`` holds the args whose latest point in the window
      is T; args seen again move to the new point (set differences on the
      few buckets that still hold any), and the bucket that leaves the window
      is exactly what leaves the view;
    * BOX: ``_since`` maps args present now to the start of their current run
      of consecutive points (``_starts`` the inverse); args hold the box once
      their run reaches back to the window's first point;
    * AT: the view holds ``args + (T,)`` of the buckets in the window (the
      buckets hold those stamped tuples).

    The batches are kept as they come (never changed in place), so views
    over one predicate share them.
    """

    __slots__ = ("op", "size", "rel", "_by_time", "_since", "_starts", "_prev", "_lo", "_pending", "_gap")

    def __init__(self, op: Op, size: int | None) -> None:
        self.op = Op.DIAMOND if op is Op.NOW else op
        self.size = 0 if op is Op.NOW else size
        self.rel = Rel()
        self._by_time: dict[int, set[tuple]] = {}  # AT: the stamped batches in the window; DIAMOND: by latest point
        self._since: dict[tuple, int] = {}  # BOX
        self._starts: dict[int, set[tuple]] = {}  # BOX: run start -> args
        self._prev: set[tuple] = set()  # BOX: the args at the previous point
        self._lo: int | None = None
        # Batches not applied yet (``defer``), every time point since, within the window.
        self._pending: deque[tuple[int, set[tuple]]] = deque()
        self._gap = False  # deferred batches were dropped: BOX runs are not known across them

    @property
    def idle(self) -> bool:
        """Holds nothing and remembers nothing: time passing changes nothing."""
        return not (self.rel.tuples or self._by_time or self._prev or self._starts or self._pending)

    def defer(self, t: int, batch: set[tuple]) -> None:
        """Keep the batch of ``t`` without applying it: no rule can use the view
        now.  The next ``advance_batch`` applies the batches the window still
        sees, in order (older ones could only have left the window by then)."""
        pending = self._pending
        pending.append((t, batch))
        assert self.size is not None
        while pending[0][0] < t - self.size:
            pending.popleft()
            self._gap = True

    def advance_batch(self, t: int, t1: int, batch: set[tuple]) -> None:
        """Time moves to ``t`` and ``batch`` (distinct args) holds at ``t``."""
        if self._pending:
            pending, self._pending = self._pending, deque()
            if self._gap:
                self._gap = False
                if self.op is Op.BOX:
                    self._restart()
            for tp, bp in pending:
                self._advance(tp, t1, bp)
        self._advance(t, t1, batch)

    def _advance(self, t: int, t1: int, batch: set[tuple]) -> None:
        lo = t1 if self.size is None else max(t1, t - self.size)
        old_lo = self._lo
        self._lo = lo
        op = self.op
        if op is Op.BOX:
            self._box(t, lo, old_lo, batch)
            return
        by_time = self._by_time
        rel = self.rel
        if op is Op.AT:
            # A bucket holds the stamped tuples themselves: the set that left the
            # window is removed as it was added (set operations reuse stored hashes).
            if old_lo is not None and lo > old_lo:
                for T in [T for T in by_time if T < lo]:
                    rel.discard_many(by_time.pop(T))
            if batch:
                stamped = by_time[t] = {a + (t,) for a in batch}
                rel.add_many(stamped)
            return
        # (the view is the union of the buckets, which are disjoint: a bucket that leaves
        # is all in it, and of a batch only what was not seen again is new)
        fresh = batch
        if batch and rel.tuples and by_time:
            seen = batch & rel.tuples  # seen again: their latest point moves to t
            if seen:
                fresh = batch - seen
                for T, held in list(by_time.items()):
                    if not held.isdisjoint(seen):
                        rest = held - seen
                        if rest:
                            by_time[T] = rest
                        else:
                            del by_time[T]
        if old_lo is not None and lo > old_lo:
            for T in [T for T in by_time if T < lo]:
                rel.discard_present(by_time.pop(T))
        if batch:
            by_time[t] = batch
            rel.add_absent(fresh)

    def _restart(self) -> None:
        """BOX after dropped batches: a run of points before them may or may not go on
        through them, so the runs start again at the kept batches (they cover the window
        of the next evaluation: only points before it were dropped).  Without this, a run
        that started before the gap and holds through it never entered the view: its start
        was passed by more than one point at once (``starts`` is read at ``lo`` only)."""
        self.rel.discard_many(list(self.rel.tuples))
        self._since.clear()
        self._starts.clear()
        self._prev = set()
        self._lo = None

    def _box(self, t: int, lo: int, old_lo: int | None, batch: set[tuple]) -> None:
        prev, since, starts = self._prev, self._since, self._starts
        ended = prev - batch
        if ended:
            for a in ended:
                run = starts.get(since.pop(a))
                if run is not None:
                    run.discard(a)
            self.rel.discard_many(ended)
        fresh = batch - prev
        if fresh:
            since.update(dict.fromkeys(fresh, t))
            starts[t] = fresh
        self._prev = batch
        if old_lo is None or lo > old_lo:
            reached = starts.get(lo)
            if reached:
                self.rel.add_many(reached)
            for T in [T for T in starts if T <= lo]:  # runs that started by lo are in the view
                del starts[T]


class NowSourceView:
    """BOX / AT over a predicate that only ever holds at the evaluation time.

    (NOW and DIAMOND over such a predicate read its relation directly.)
    """

    __slots__ = ("op", "size", "rel")

    def __init__(self, op: Op, size: int | None) -> None:
        self.op = op
        self.size = size
        self.rel = Rel()

    def refresh(self, t: int, t1: int, source: Rel) -> None:
        if self.op is Op.BOX:
            lo = t1 if self.size is None else max(t1, t - self.size)
            self.rel.replace(set(source.tuples) if lo == t else set())
        else:  # AT: the atoms hold at t only
            self.rel.replace({args + (t,) for args in source.tuples})


class TupleQueue:
    """The last ``n`` stream fact events (any predicate), in stream order."""

    __slots__ = ("size", "events")

    def __init__(self, size: int) -> None:
        self.size = size
        self.events: deque[tuple[tuple[str, int], tuple, int]] = deque()

    def push(self, key: tuple[str, int], args: tuple, t: int) -> tuple[str, int] | None:
        """Append one event; return the key of an evicted event's predicate, if any."""
        self.events.append((key, args, t))
        if len(self.events) > self.size:
            return self.events.popleft()  # type: ignore[return-value]
        return None

    def start(self, t1: int) -> int:
        """Start of the window's timeline: time of the n-th last event (t1 if fewer)."""
        return self.events[0][2] if len(self.events) == self.size else t1


class TupleWindowView:
    """DIAMOND / BOX / AT of one predicate over a tuple window ``[n #]``."""

    __slots__ = ("op", "rel", "_events", "_times")

    def __init__(self, op: Op) -> None:
        self.op = op
        self.rel = Rel()
        self._events: dict[tuple, int] = {}  # (args, T) -> selected events
        self._times: dict[tuple, dict[int, int]] = {}  # args -> {T: selected events}

    def enter(self, args: tuple, T: int) -> None:
        k = (args, T)
        self._events[k] = self._events.get(k, 0) + 1
        times = self._times.setdefault(args, {})
        times[T] = times.get(T, 0) + 1
        if self.op is Op.AT:
            self.rel.add(args + (T,))
        elif self.op is Op.DIAMOND:
            self.rel.add(args)

    def leave(self, args: tuple, T: int) -> None:
        k = (args, T)
        c = self._events[k] - 1
        times = self._times[args]
        if c:
            self._events[k] = c
            times[T] -= 1
            return
        del self._events[k]
        del times[T]
        if self.op is Op.AT:
            self.rel.discard(args + (T,))
        if not times:
            del self._times[args]
            if self.op is Op.DIAMOND:
                self.rel.discard(args)

    def settle(self, t: int, start: int) -> None:
        """BOX: p must hold at every point of [start, t] among the selected events."""
        if self.op is not Op.BOX:
            return
        length = t - start + 1
        self.rel.replace(
            {args for args, times in self._times.items() if len(times) == length and min(times) >= start}
        )
