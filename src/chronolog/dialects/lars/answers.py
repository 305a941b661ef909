"""Answer lines (CONTRACT §3): the engine's changes written as JSON Lines.

Two forms with the same meaning:

* ``changelog`` (default): an atom of a now-predicate gets ``[t,inf)`` when
  it starts to hold and ``[t,inf)`` with ``diff: -1`` when it stops; atoms at
  explicit times (``@``-heads) get one ``t`` line when first derived.
* ``points``: one ``t`` line per atom and time point.

Corrections (delayed events, retractions) are written as ``diff`` lines,
consecutive points of one atom merged into one interval.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import IO

# JSON of answer values, compact as orjson writes it: msgspec is loaded anyway
# to decode the input (orjson would cost about 5 ms of start-up), and it also
# writes integers beyond 64 bits, which arithmetic in rules can make.
from msgspec.json import encode as dumps

from chronolog.dialects.lars.engine.core import Engine, StepResult
from chronolog.dialects.lars.plan import Plan, PredKey
from chronolog.dialects.lars.reasoner import Change
from chronolog.versions import negated

Atom = tuple[PredKey, tuple]


def _order(item: tuple) -> tuple:
    """Deterministic output order across runs for mixed str/int arguments."""
    (pred, _), args = item[0], item[1]
    return (pred, tuple((type(a) is str, a) for a in args)) + tuple(item[2:])


def args_order(args: tuple) -> tuple:
    """A total order of argument tuples mixing strings and integers (integers first); where
    plain tuple comparison works, the same order (an upgrade's restatement orders atoms so)."""
    return tuple((type(a) is str, a) for a in args)


SORT_LIMIT = 64  # larger groups of lines keep the engine's order


def _sorted(rows: Collection[tuple]) -> list[tuple]:
    """Args in a deterministic order (the same in every run, whatever the hash
    seed) for groups of up to SORT_LIMIT lines; larger groups in the engine's
    (set) order, as sorting them would cost more than computing them."""
    if len(rows) > SORT_LIMIT:
        return rows if type(rows) is list else list(rows)
    try:
        return sorted(rows)
    except TypeError:  # strings and integers in one column
        return sorted(rows, key=args_order)


def render(head: bytes, tail: bytes, rows: list[tuple]) -> bytes:
    """``head + json(args) + tail`` for every args of ``rows``, as one bytes object.

    One ``dumps`` serialises all rows (``[[..],[..],..]``); the
    separators ``],[`` between rows become line breaks.  The length of the
    result tells how many were replaced: more than the rows' separators if a
    string argument contains ``],[`` itself, and then each row is serialised
    on its own."""
    if not rows:
        return b""
    blob = dumps(rows)
    sep = b"]" + tail + head + b"["
    lines = blob.replace(b"],[", sep)
    if len(lines) - len(blob) == (len(rows) - 1) * (len(sep) - 3):
        return b"".join((head, memoryview(lines)[1:-1], tail))
    return b"".join([head + dumps(r) + tail for r in rows])  # noqa: RUF005


class AnswerWriter:
    def __init__(self, out: IO[str], plan: Plan, mode: str = "changelog") -> None:
        if mode not in ("changelog", "points"):
            raise ValueError(f"unknown answer form {mode!r}")
        self.out = out
        # Whole time points are written as UTF-8 bytes, straight to the binary buffer when there is one.
        buffer = getattr(out, "buffer", None)
        self._raw = buffer if buffer is not None and getattr(out, "encoding", "").lower().replace("-", "") == "utf8" else None
        self.plan = plan
        self.mode = mode
        # Atoms of timed predicates published per time and predicate, as ``args + (T,)``
        # (the engine's own tuples: set operations with its changes reuse their hashes).
        self.recent: dict[int, dict[PredKey, set[tuple]]] = {}
        self.lines = 0
        self.corrections = 0
        self.no_answer_sets = 0  # time points without an answer set (no_answer_set lines)
        self._names: dict[PredKey, bytes] = {}
        # the evaluations whose answers it writes (``evaluations``): all, or [first, last]
        self.first: int | None = None
        self.last: int | None = None
        self._bounded = False
        self.reach: int | None = plan.output_reach  # how long ``recent`` keeps a time (Reasoner.output_reach)
        # a provisional evaluation's lines, and ``recent`` before it (``record``)
        self._recording: list[bytes] | None = None
        self._recent_before: list = []

    def evaluations(self, first: int | None, last: int | None) -> None:
        """Write only what the evaluations at points in [first, last] derive (None: no bound):
        a program version chosen by the time point evaluated (an ``@``-head of an evaluation
        from ``first`` on may date its atom before it).  The evaluation at ``first`` writes
        everything it derives (the lines open there); later ones their changes, as always."""
        self.first, self.last = first, last
        self._bounded = first is not None or last is not None

    def counts(self, t: int) -> bool:
        """Whether the evaluation at ``t`` is one whose answers it writes."""
        return (self.first is None or t >= self.first) and (self.last is None or t <= self.last)

    def _name(self, pred: PredKey) -> bytes:
        name = self._names.get(pred)
        if name is None:
            name = self._names[pred] = dumps(pred[0])
        return name

    # ------------------------------------------------------------ state as data

    def export_state(self) -> dict:
        """The timed atoms published per time (so none is published twice) and the counters."""
        return {"recent": self._recent_data(), "lines": self.lines, "corrections": self.corrections,
                "no_answer_sets": self.no_answer_sets}

    def _recent_data(self) -> list:
        return [[T, [[list(p), [list(tup) for tup in tuples]] for p, tuples in by_pred.items()]]
                for T, by_pred in self.recent.items()]

    def import_state(self, state: dict) -> None:
        self._import_recent(state["recent"])
        self.lines = int(state["lines"])
        self.corrections = int(state["corrections"])
        self.no_answer_sets = int(state.get("no_answer_sets", 0))

    def _import_recent(self, data: list) -> None:
        self.recent = {}
        for T, by_pred in data:
            self.recent[int(T)] = {(str(p[0]), int(p[1])): {tuple(tup) for tup in tuples} for p, tuples in by_pred}

    # ------------------------------------------------------------ provisional evaluations

    def record(self) -> None:
        """Keep the lines written from now on, and the timed atoms published so far: an idle
        flush's provisional evaluation (dialects/lars/provisional.py), which ``take_back`` undoes."""
        self._recording = []
        self._recent_before = self._recent_data()

    def recorded(self) -> dict:
        """What ``take_back`` needs (data: it goes in the reasoner's checkpoint); recording stops."""
        lines, self._recording = self._recording or [], None
        recent, self._recent_before = self._recent_before, []
        return {"lines": b"".join(lines).decode(), "recent": recent}

    def take_back(self, recorded: dict | None) -> None:
        """Undo the recorded lines in the answers' meaning (CONTRACT §3: the sum of the diffs):
        each written again with its diff negated (a ``no_answer_set`` line carries no atom and
        stays); the timed atoms published are those before them again."""
        if not recorded:
            return
        back = [line for line in map(negated, recorded["lines"].encode().splitlines()) if line is not None]
        if back:
            self._emit(b"\n".join(back) + b"\n", len(back))
            self.corrections += len(back)
        self._import_recent(recorded["recent"])

    # ------------------------------------------------------------ writing

    def _emit(self, data: bytes, lines: int) -> None:
        if self._recording is not None:
            self._recording.append(data)
        if self._raw is not None:
            self._raw.write(data)
        else:
            self.out.write(data.decode())
        self.lines += lines

    def _write(self, pred: PredKey, args: tuple, when: str | int, diff: int = 1) -> None:
        rec: dict = {"interval": when} if isinstance(when, str) else {"t": when}
        rec["pred"] = pred[0]
        rec["args"] = list(args)
        if diff != 1:
            rec["diff"] = diff
        self._emit(dumps(rec) + b"\n", 1)

    # ------------------------------------------------------------ live steps

    def step(self, result: StepResult, engine: Engine) -> None:
        t = result.t
        if self._bounded and (t == self.first or not self.counts(t)):
            if self.counts(t):
                self._first_step(result, engine)
            return
        parts: list[bytes] = self._no_answer_set(result)
        count = len(parts)
        if self.mode == "changelog":
            since = b'{"interval":"[%d,inf)","pred":' % t
            groups = result.now_groups()
            if len(groups) > 1:
                groups = sorted(groups, key=lambda g: g[0])
            for pred, added, removed in groups:
                head = since + self._name(pred) + b',"args":'
                if added:
                    parts.append(render(head, b"}\n", _sorted(added)))
                    count += len(added)
                if removed:
                    parts.append(render(head, b',"diff":-1}\n', _sorted(removed)))
                    count += len(removed)
        else:
            by_pred: dict[PredKey, list[tuple]] = {}
            for p, args in engine.holding_now():
                by_pred.setdefault(p, []).append(args)
            for p in sorted(by_pred):
                rows = by_pred[p]
                parts.append(render(b'{"t":%d,"pred":' % t + self._name(p) + b',"args":', b"}\n", _sorted(rows)))
                count += len(rows)
        groups = result.timed_groups()
        if groups:
            count += self._timed(groups, parts)
        if count:
            self._emit(b"".join(parts), count)
        reach = self.reach
        if reach is not None and self.recent:
            for T in [T for T in self.recent if T < t - reach]:
                del self.recent[T]

    def quiet(self, first: int, last: int, engine: Engine) -> bool:
        """The points ``first``..``last`` evaluate exactly as the last step, which changed nothing
        (``gaps.py``): changelog lines stay open, nothing to write; ``points`` writes each
        point's lines from the atoms holding now (as many lines as stepping: the user's
        choice of form).  False (step them) where it writes only some evaluations or records."""
        if self._bounded or self._recording is not None:
            return False
        if self.mode == "points":
            by_pred: dict[PredKey, list[tuple]] = {}
            for p, args in engine.holding_now():
                by_pred.setdefault(p, []).append(args)
            rows = [(self._name(p), _sorted(by_pred[p])) for p in sorted(by_pred)]
            count = sum(len(r) for _, r in rows)
            if count:
                for t in range(first, last + 1):
                    self._emit(b"".join([render(b'{"t":%d,"pred":' % t + name + b',"args":', b"}\n", r)
                                         for name, r in rows]), count)
        return True

    def _timed(self, groups: list, parts: list[bytes]) -> int:
        """The lines of atoms at explicit times (``@``-heads) derived, each once when first
        published (``recent[T]``), appended to ``parts``; how many."""
        count = 0
        fresh: dict[tuple[PredKey, int], list[tuple]] = {}
        recent = self.recent
        for pred, added, _ in groups:
            if not added:
                continue
            times = {tup[-1] for tup in added}
            if len(times) == 1:  # the common case: all at one time, as sets
                (T,) = times
                published = recent.get(T)
                if published is None:
                    published = recent[T] = {}
                seen = published.get(pred)
                if seen is None:
                    new = published[pred] = set(added)
                else:
                    new = (added if type(added) is set else set(added)) - seen
                    seen |= new
                if new:
                    fresh.setdefault((pred, T), []).extend([tup[:-1] for tup in new])
                continue
            for tup in added:
                T = tup[-1]
                seen = recent.setdefault(T, {}).setdefault(pred, set())
                if tup not in seen:
                    seen.add(tup)
                    fresh.setdefault((pred, T), []).append(tup[:-1])
        for pred, T in sorted(fresh):
            rows = fresh[pred, T]
            parts.append(render(b'{"t":%d,"pred":' % T + self._name(pred) + b',"args":', b"}\n", _sorted(rows)))
            count += len(rows)
        return count

    def _no_answer_set(self, result: StepResult) -> list[bytes]:
        """No answer set at t (an odd loop, a constraint): said among the lines, not silently
        nothing (the answers of t are empty: open lines close at t).  What reads the lines
        inside chronolog needs the line; the user's answer stream has it only on request
        (contract/no_answer_set.py): the reasoner's warning says it otherwise."""
        if result.consistent:
            return []
        self.no_answer_sets += 1
        return [b'{"t":%d,"no_answer_set":true}\n' % result.t]

    def _first_step(self, result: StepResult, engine: Engine) -> None:
        """The evaluation at ``first``: every answer it derives (nothing was written before)."""
        t = result.t
        parts: list[bytes] = self._no_answer_set(result)
        count = len(parts)
        head = b'{"interval":"[%d,inf)","pred":' % t if self.mode == "changelog" else b'{"t":%d,"pred":' % t
        by_pred: dict[PredKey, list[tuple]] = {}
        for p, args in engine.holding_now():
            by_pred.setdefault(p, []).append(args)
        for p in sorted(by_pred):
            rows = by_pred[p]
            parts.append(render(head + self._name(p) + b',"args":', b"}\n", _sorted(rows)))
            count += len(rows)
        timed: dict[PredKey, set[tuple]] = {}
        for p, args, T in engine.derived_at():
            if p in self.plan.timed:
                timed.setdefault(p, set()).add(args + (T,))
        count += self._timed([(p, timed[p], ()) for p in sorted(timed)], parts)
        if count:
            self._emit(b"".join(parts), count)

    # ------------------------------------------------------------ corrections

    def correct(self, changes: list[Change], engine: Engine, upto: int, previous: Engine) -> None:
        """Lines for ``changes`` (the corrected span up to ``upto``); ``engine`` is
        the corrected state at ``upto``, ``previous`` the state the answers so
        far were written from: its atoms holding now are the open lines (none where the
        evaluation at ``upto`` is not one it writes: ``evaluations``)."""
        counted = not self._bounded or self.counts(upto)
        now = set(engine.holding_now()) if counted else set()
        opened = set(previous.holding_now()) if self.mode == "changelog" and counted else set()
        by_atom: dict[Atom, list[tuple[int, int]]] = {}
        for pred, args, T, sign in changes:
            by_atom.setdefault((pred, args), []).append((T, sign))
            if pred in self.plan.timed:
                if sign > 0:
                    self.recent.setdefault(T, {}).setdefault(pred, set()).add(args + (T,))
                else:
                    self.recent.get(T, {}).get(pred, set()).discard(args + (T,))
        for atom in sorted(by_atom, key=_order):
            for lo, hi, sign in runs(sorted(by_atom[atom])):
                # A run that reaches the present merges with the open changelog line.
                if self.mode == "changelog" and hi == upto and atom[0] not in self.plan.timed:
                    if sign > 0 and atom in now and atom not in opened:
                        opened.add(atom)
                        self._write(*atom, f"[{lo},inf)", 1)
                        self.corrections += 1
                        continue
                    if sign < 0 and atom not in now and atom in opened:
                        opened.discard(atom)
                        self._write(*atom, f"[{lo},inf)", -1)
                        self.corrections += 1
                        continue
                self._write(*atom, f"[{lo},{hi}]" if lo != hi else lo, sign)
                self.corrections += 1
        if self.mode == "changelog":  # the open lines must claim exactly what holds now
            for atom in sorted(now - opened, key=_order):
                self._write(*atom, f"[{upto + 1},inf)", 1)
            for atom in sorted(opened - now, key=_order):
                self._write(*atom, f"[{upto + 1},inf)", -1)


def runs(points: Iterable[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """Merge sorted (time, sign) points into maximal runs of consecutive times with one sign."""
    runs: list[tuple[int, int, int]] = []
    for T, sign in points:
        if runs and runs[-1][2] == sign and runs[-1][1] == T - 1:
            runs[-1] = (runs[-1][0], T, sign)
        else:
            runs.append((T, T, sign))
    return runs
