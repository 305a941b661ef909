"""The DatalogMTL evaluator behind ``chronolog.evaluator.Evaluator``.

**Streaming** (forward-propagating programs: only past operators and Since
in bodies, only Boxplus in heads; seed 002, Algorithm 1).  Each
``advance(t)`` evaluates the window ``[e − W, t]`` where ``e`` is the time
already evaluated and ``W`` the program's reach (the largest look-back of a
body plus the largest forward reach of a head): input facts meeting the
window and the facts derived up to ``e`` inside it are the seeds, and the
results in ``(e, t]`` are final.  An interval that still holds at ``t`` is
published open, ``[a,inf)``, and closed by a ``diff: -1`` line when it ends
(CONTRACT §3's changelog form).  The facts kept for evaluation are those of
the window, independent of the stream's length (``kept``).

**Batch** (any program): the whole materialisation once the input is
complete, the maximal intervals clipped to the input's span.

**Corrections**: a fact for a time already evaluated, or a retraction,
evaluates again from the earliest time it changes (the program is
forward-propagating: nothing before depends on it), with the input log's
facts from there minus the reach and what was published before as seeds,
and publishes the differences as -1/+1 interval lines, so the final meaning
is the stream's in time order.  ``retention`` bounds how late: events older
than the latest time seen minus it are reported and ignored (``too_late``),
and the input log keeps only what a correction within the retention can
read.  Without a retention every late event is applied (CONTRACT §2, as
for LARS) and the input log grows with the stream; ``reach_retention``, the
program's reach, is the retention that makes memory flat.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from math import inf
from typing import Any, ClassVar

from chronolog.core.errors import ChronologError
from chronolog.core.events import Event, withdraw_counted
from chronolog.dialects.mtl import intervals as I
from chronolog.dialects.mtl.intervals import Iv
from chronolog.dialects.mtl.materialise import Db, Materialiser
from chronolog.dialects.mtl.parser import interval_from_text
from chronolog.dialects.mtl.syntax import (
    FUTURE,
    PAST,
    Binary,
    Literal,
    MtlProgram,
    Negated,
    Unary,
    atoms_of,
    head_atom,
    operators_of,
)
from chronolog.dialects.mtl.syntax import Atom as AtomLiteral
from chronolog.evaluator import AnswerChange, Block, Changes, Span, StateError, Time, check_state_header, time_text
from chronolog.state.codec import reading, versioned

Atom = tuple[str, tuple]


def not_forward_propagating(program: MtlProgram) -> tuple[str, str] | None:
    """(rule location, operator) of the first rule that keeps the program from
    streaming (future operators or Until in a body, Boxminus in a head), or None."""
    for rule in program.rules:
        where = str(rule.loc) if rule.loc else "a rule"
        for lit in rule.body:
            for op in operators_of(lit):
                if op.op in FUTURE or op.op == "Until":
                    return where, op.op
        head = rule.head
        while isinstance(head, Unary):
            if head.op != "Boxplus":
                return where, head.op
            head = head.operand
    return None


def _lookback(lit: Literal) -> Fraction | float:
    if isinstance(lit, Negated):
        return _lookback(lit.operand)
    if isinstance(lit, Unary):
        return (lit.rho[2] if lit.op in PAST else 0) + _lookback(lit.operand)
    if isinstance(lit, Binary):
        return lit.rho[2] + max(_lookback(lit.left), _lookback(lit.right))
    return Fraction(0)


def reach(program: MtlProgram) -> Fraction | float:
    """W: how far before the evaluated time a window must start."""
    w: Fraction | float = Fraction(0)
    for rule in program.rules:
        back = max((_lookback(lit) for lit in rule.body), default=Fraction(0))
        head, forward = rule.head, Fraction(0)
        while isinstance(head, Unary):
            forward += head.rho[2]
            head = head.operand
        w = max(w, back + forward)
    return w


def diamond_only(program: MtlProgram) -> dict[tuple[str, int], Fraction | float]:
    """The input predicates (no rule derives them) that every rule reads only
    as the operand of a diamond with an operator interval of positive length,
    with the shortest such length: gran(Π) per predicate (seed 002, Algorithm 6).
    Their gaps shorter than it may be filled (``intervals.fill_gaps``)."""
    heads = {head_atom(r.head).key for r in program.rules}
    widths: dict[tuple[str, int], Fraction | float] = {}
    other: set[tuple[str, int]] = set()

    def visit(lit: Literal, width: Fraction | float | None) -> None:
        if isinstance(lit, AtomLiteral):
            if width is None or width <= 0:
                other.add(lit.key)
            else:
                widths[lit.key] = min(widths.get(lit.key, width), width)
        elif isinstance(lit, Negated):
            visit(lit.operand, None)
        elif isinstance(lit, Unary):
            diamond = lit.op in ("Diamondminus", "Diamondplus")
            visit(lit.operand, lit.rho[2] - lit.rho[0] if diamond else None)
        else:
            visit(lit.left, None)
            visit(lit.right, None)

    for rule in program.rules:
        for lit in rule.body:
            visit(lit.operand if isinstance(lit, Negated) else lit, None)
    return {key: w for key, w in widths.items() if key not in other and key not in heads}


def reach_retention(program: MtlProgram) -> Time | None:
    """The retention that makes a stream's memory flat: the program's reach W,
    the window a streaming step reads anyway (a late event is applied while its
    time is still inside the window of the time being evaluated).  The input
    log then holds the facts of about 2W time units and every atom's published
    record as much.  Not the default: without ``--retention`` every late event
    is applied (CONTRACT §2).  None (unlimited) when W is infinite."""
    w = reach(program)
    return None if w == inf else _num(w)


def horizon(program: MtlProgram, retention: Time | float | None) -> Time | None:
    """The evaluator's retention for a ``--retention`` value: None (not given)
    and ``inf`` are unlimited."""
    return None if retention is None or retention == inf else retention


def input_reach(program: MtlProgram) -> Time | None:
    """How far before a time T the input can still change the answers at T, or
    None when nothing bounds it (future operators, an infinite operator interval,
    recursion through rules).  Unlike ``reach`` (one rule: the window that makes
    a step exact once the derived facts before it are seeded), this sums the
    reaches along chains of rules, since a backfill segment starts with nothing
    derived: an upper bound, which is all the warm-up needs."""
    if not_forward_propagating(program) is not None:
        return None
    rules_of: dict[tuple[str, int], list] = {}
    for rule in program.rules:
        rules_of.setdefault(head_atom(rule.head).key, []).append(rule)
    known: dict[tuple[str, int], Fraction | float] = {}
    visiting: set[tuple[str, int]] = set()

    def of(key: tuple[str, int]) -> Fraction | float | None:
        if key in known:
            return known[key]
        if key in visiting:
            return None  # recursion: unbounded
        visiting.add(key)
        most: Fraction | float = Fraction(0)
        for rule in rules_of.get(key, []):
            head, forward = rule.head, Fraction(0)
            while isinstance(head, Unary):
                forward += head.rho[2]
                head = head.operand
            for lit in rule.body:
                below: Fraction | float = Fraction(0)
                for atom in atoms_of(lit):
                    got = of(atom.key)
                    if got is None:
                        return None
                    below = max(below, got)
                most = max(most, _lookback(lit) + forward + below)
        visiting.discard(key)
        known[key] = most
        return most

    total: Fraction | float = Fraction(0)
    for key in rules_of:
        got = of(key)
        if got is None or got == inf:
            return None
        total = max(total, got)
    return _num(total)


def warm_up(program: MtlProgram, changed: set[tuple[str, int]]) -> Fraction | float:
    """How far before an upgrade time T the ``changed`` predicates (an upgrade's changed and
    added strata, ``keep``) must be evaluated from for the new version's answers from T on to
    be exact, every later step (corrections included) reading exact seeds: ``inf`` where
    nothing bounds it (recursion among them, an unbounded operator).

    A changed ``q`` read by a changed rule for ``p`` at ``x`` is read at ``x - w`` at the
    earliest (``w``: the literal's look-back plus the rule head's forward reach), so ``q``
    must be exact from ``T - E(q)`` on, ``E(q)`` the longest such chain up to an answer;
    evaluated from ``L`` with the input and the kept strata's answers (exact everywhere) as
    facts, ``q`` is exact from ``L + d(q)`` on, ``d(q)`` its look-back through changed
    predicates.  So ``L = T - max(E(q) + d(q))``, the longest chain through the changed
    predicates: ``max d(q)``.  A later step from ``t`` reads seeds of ``q`` no earlier than
    ``T - E(q)`` for what it derives from ``T`` on, so the property holds after it too."""
    chains = _chains(program, changed)
    return inf if chains is None else max(chains.values(), default=Fraction(0))


def _chains(program: MtlProgram, changed: set[tuple[str, int]]) -> dict[tuple[str, int], Fraction | float] | None:
    """``d(q)`` of each of the ``changed`` predicates (``warm_up``); None: unbounded."""
    edges: list[tuple[tuple[str, int], tuple[str, int], Fraction | float]] = []  # (read q, by p, w)
    down: dict[tuple[str, int], Fraction | float] = {q: Fraction(0) for q in changed}
    for rule in program.rules:
        p = head_atom(rule.head).key
        if p not in changed:
            continue
        head, forward = rule.head, Fraction(0)
        while isinstance(head, Unary):
            forward += head.rho[2]
            head = head.operand
        for lit in rule.body:
            w = _lookback(lit) + forward
            down[p] = max(down[p], w)  # the input and kept predicates it reads
            edges.extend((a.key, p, w) for a in atoms_of(lit) if a.key in changed)
    for _ in range(len(changed) + 1):  # longest paths; still growing after |V| rounds: a cycle
        moved = False
        for q, p, w in edges:
            if down[q] + w > down[p]:
                down[p], moved = down[q] + w, True
        if not moved:
            break
    else:
        return None
    return None if any(d == inf for d in down.values()) else down


def _span(iv: Iv) -> Span:
    return Span(_num(iv[0]), None if iv[2] == inf else _num(iv[2]), iv[1], iv[3] and iv[2] != inf)


def _num(x: Fraction | float) -> Time:
    x = Fraction(x)
    return x.numerator if x.denominator == 1 else x


class MtlEvaluator:
    dialect: ClassVar[str] = "mtl"
    resumes_mid_stream: ClassVar[bool] = True

    def __init__(self, program: MtlProgram, mode: str | None = None,
                 warn: Callable[[str], None] = lambda m: None, retention: Time | None = None) -> None:
        self.program = program
        self.fired: dict[tuple[str, int], int] = {}  # rule firings per head predicate (Materialiser.fired)
        self.materialiser = Materialiser(program, self.fired)
        # an upgrade's kept strata (``keep``): the materialiser of the other rules, for the one
        # evaluation that follows, which reads the kept predicates as the old version wrote them
        self.changed_only: Materialiser | None = None
        # with ``changed_only``: the predicates its rules read or derive (``keep``); nothing else
        # of the input log or the kept answers can change what they derive
        self.changed_reads: frozenset[tuple[str, int]] = frozenset()
        # where an upgrade's changed strata were evaluated from (``keep``: T minus their warm-up;
        # None: no upgrade kept strata here)
        self.warmed_from: Fraction | None = None
        # the predicates an upgrade evaluated from before its time only (``keep``): what they hold
        # is known from the time given on (a later upgrade keeping one cannot read it earlier)
        self.partial: dict[tuple[str, int], Fraction] = {}
        blocker = not_forward_propagating(program)
        if mode is None:
            mode = "stream" if blocker is None else "batch"
            if blocker is not None:
                warn(f"note: evaluating in batch mode: {blocker[0]}: {blocker[1]} is not forward-propagating "
                     f"(answers when the input ends)")
        elif mode == "stream" and blocker is not None:
            raise ChronologError(f"{blocker[0]}: error: {blocker[1]} is not forward-propagating: this program "
                                 f"cannot be evaluated as a stream (use --mode batch)")
        if mode not in ("stream", "batch"):
            raise ChronologError(f"error: --mode {mode} is not a DatalogMTL mode (stream or batch)")
        self.mode = mode
        self.warn = warn
        # how far before the latest time seen a delayed event or a retraction is still applied (None: any)
        # (batch mode reads the whole input before evaluating: nothing is late)
        self.retention = None if retention is None or mode == "batch" else I.norm(Fraction(retention))
        self.window = I.norm(reach(program))  # an int when integral: int comparisons are many times cheaper
        self.heads = {head_atom(r.head).key for r in program.rules}
        self.fills = diamond_only(program)
        self.inputs: dict[tuple[str, tuple, Iv], int] = {}  # the input log: fact -> count
        self.active: dict[tuple[str, tuple, Iv], int] = {}  # the inputs a later window can still meet
        self.live: set[Atom] = set()  # published atoms holding inside the window (seeds, open claims)
        for f in program.facts:
            self._add(f.pred, f.args, f.interval)
        self.published: dict[Atom, list[Iv]] = {}
        self.lo: Fraction | None = None  # the input's span
        self.hi: Fraction | None = None
        self.evaluated: Fraction | None = None
        self.latest: Fraction | None = None  # the latest time pushed (what --retention counts back from)
        self.dirty = False
        self.redo: Fraction | None = None  # the earliest time a delayed event or retraction changes
        self.prune_every = 64  # time points between two cuts of the input log and published record (retention)
        self.kept = 0  # facts in the last evaluation window
        self.max_kept = 0
        self.unmatched_retractions = 0
        self.delayed = 0
        self.too_late = 0
        self.time_points = 0

    # ------------------------------------------------------------ input

    def _add(self, pred: str, args: tuple, iv: Iv) -> None:
        k = (pred, tuple(args), iv)
        self.inputs[k] = self.inputs.get(k, 0) + 1
        self.active[k] = self.active.get(k, 0) + 1

    def push(self, event: Event) -> None:
        t = I.norm(Fraction(event.t))
        # too late: older than the latest time seen minus the retention (a rule of the input alone, so
        # chronolog run and the fleet, which may have evaluated the latest time already, drop the same events)
        if (self.retention is not None and event.pred is not None and self.latest is not None
                and t < self.latest - self.retention):
            self.too_late += 1
            where = f"{event.loc}: " if event.loc else ""
            self.warn(f"{where}warning: event at t={time_text(_num(t))} is older than the retention horizon "
                      f"({time_text(_num(self.latest - self.retention))}); ignored")
            return
        if self.latest is None or t > self.latest:
            self.latest = t
        iv: Iv = event.span if event.span is not None else I.point(t)  # type: ignore[assignment]
        ends = [t] + ([iv[2]] if event.pred is not None and iv[2] != inf else [])
        self.lo = min([self.lo, *ends]) if self.lo is not None else min(ends)
        self.hi = max([self.hi, *ends]) if self.hi is not None else max(ends)
        if event.pred is None:
            return
        if self.evaluated is not None and t <= self.evaluated:
            self._changes_from(t)
            self.delayed += 1
        k = (event.pred, tuple(event.args), iv)
        if not event.retract:
            self._add(*k)
            return
        if withdraw_counted(self.inputs, k):  # (core.events: the one retraction rule, on counts)
            withdraw_counted(self.active, k)
            if self.evaluated is not None and iv[0] <= self.evaluated:
                self._changes_from(iv[0])
        else:
            self.unmatched_retractions += 1
            where = f"{event.loc}: " if event.loc else ""
            self.warn(f"{where}warning: retraction of {event.pred}{list(event.args)}@{I.text(iv)} matches no "
                      f"earlier event; ignored")

    def _changes_from(self, t: Fraction) -> None:
        """Answers from ``t`` on must be evaluated again (a forward-propagating
        program's answers before ``t`` cannot depend on an event at ``t``)."""
        self.dirty = True
        self.redo = t if self.redo is None else min(self.redo, t)

    # ------------------------------------------------------------ evaluation

    def _model(self, lo: Fraction | float, until: Fraction, seeds: Db | None = None, whole: bool = False,
               derive: Iv | None = None, lo_closed: bool = True) -> Db:
        window = (lo, lo_closed, until, True)
        grouped: dict[tuple, dict[tuple, list[Iv]]] = {}
        reads = self.changed_reads if self.changed_only is not None else None
        for (pred, args, iv) in (self.inputs if whole else self.active):
            if iv[2] < lo or iv[0] > until or (reads is not None and (pred, len(args)) not in reads):
                continue
            got = iv if (lo < iv[0] or (lo_closed and lo == iv[0])) and iv[2] <= until else I.intersect(iv, window)
            if got is not None:
                grouped.setdefault((pred, len(args)), {}).setdefault(args, []).append(got)
        for key, rel in (seeds or {}).items():
            slot = grouped.setdefault(key, {})
            for args, ivs in rel.items():
                slot.setdefault(args, []).extend(ivs)
        db: Db = {key: {args: I.coalesce(ivs) if len(ivs) > 1 else ivs for args, ivs in rel.items()}
                  for key, rel in grouped.items()}
        for key, width in self.fills.items():  # read only through wide diamonds: short gaps change nothing
            if key in db:
                db[key] = {args: I.fill_gaps(ivs, width) for args, ivs in db[key].items()}
        self.kept = sum(len(v) for rel in db.values() for v in rel.values())
        self.max_kept = max(self.max_kept, self.kept)
        return (self.changed_only or self.materialiser).run(db, window, derive)

    def _diff(self, atom: Atom, new: list[Iv], out: list[AnswerChange], keep: int = 0) -> None:
        """Publish what changed from the atom's published intervals to ``new``;
        the first ``keep`` intervals are known to be the same in both."""
        old = self.published.get(atom, [])
        same = keep
        while same < len(old) and same < len(new) and old[same] == new[same]:
            same += 1
        was, now = old[same:], new[same:]
        if not was and not now:
            return
        _changes(atom, was, now, out)
        if new:
            self.published[atom] = new
            self.live.add(atom)
        else:
            self.published.pop(atom, None)
            self.live.discard(atom)

    @staticmethod
    def _open(ivs: list[Iv], until: Fraction) -> list[Iv]:
        """A last interval that holds at ``until`` is claimed on: ``[a,inf)``."""
        if ivs and I.contains(ivs[-1], until):
            return ivs[:-1] + [(ivs[-1][0], ivs[-1][1], inf, False)]
        return ivs

    def _recompute(self, until: Fraction, claim: bool) -> list[AnswerChange]:
        """Everything from the input log: the batch result, and every correction."""
        assert self.lo is not None
        kept: Db = {}  # (those the changed strata read)
        kept_keys: set[tuple[str, int]] = set()
        lo = self.lo
        if self.changed_only is not None:  # the kept strata's answers, as the old version published them
            if self.warmed_from is not None:
                lo = max(lo, self.warmed_from)
            span = (lo, True, until, True)
            for (pred, args), ivs in self.published.items():
                key = (pred, len(args))
                kept_keys.add(key)
                if key not in self.changed_reads:
                    continue
                got = I.intersect_sets(ivs, [span])
                if got:
                    kept.setdefault(key, {})[args] = got
        try:
            model = self._model(lo, until, kept, whole=True)
        finally:
            self.changed_only = None
        self.active = dict(self.inputs)
        self.live = set(self.published)
        out: list[AnswerChange] = []
        atoms = {(k[0], args) for k, rel in model.items() if k in self.heads and k not in kept_keys for args in rel}
        for atom in sorted(atoms | {a for a in self.published if (a[0], len(a[1])) not in kept_keys}, key=_order):
            ivs = model.get((atom[0], len(atom[1])), {}).get(atom[1], [])
            self._diff(atom, self._open(ivs, until) if claim else ivs, out)
        return out

    def _window_step(self, until: Fraction, start: Fraction | None = None) -> list[AnswerChange]:
        """Evaluate the times after ``evaluated`` up to ``until``: the new times
        ``(e, until]`` from the window ``(e − W, until]`` (seed 002's
        ``[t − t_Π, t]``), seeded with what was published before them.  With
        ``start`` (a correction: a delayed event or a retraction at ``start``),
        the times ``[start, until]`` again, from the whole input log."""
        assert self.evaluated is not None and self.lo is not None
        correction = start is not None
        first = self.evaluated if start is None else start  # the new times: (first, until] or [first, until]
        closed = self.window == inf or first - self.window <= self.lo  # the window reaches the input's start
        lo = self.lo if closed else first - self.window
        closed = closed or correction  # [first, ...] looks back to first - W itself
        seeds: Db = {}
        before = (lo, closed, first, not correction)
        for atom in (self.published if correction else self.live):
            ivs = self.published[atom]
            kept = I.intersect_sets(ivs[_reaching(ivs, lo):], [before])
            if kept:
                seeds.setdefault((atom[0], len(atom[1])), {})[atom[1]] = kept
        after = (first, correction, until, True)
        model = self._model(lo, until, seeds, whole=correction, derive=after, lo_closed=closed)
        out: list[AnswerChange] = []
        # what holds after the seeds (the model's facts before them are the seeds: published already)
        fresh = {(k[0], args) for k, rel in model.items() if k in self.heads for args, ivs in rel.items()
                 if ivs[-1][2] > first or (correction and ivs[-1][2] == first)}
        changing = {a for a in (self.published if correction else self.live)
                    if self.published[a][-1][2] == inf or (correction and self.published[a][-1][2] >= first)}
        upto = (-inf, False, first, not correction)
        for atom in sorted(fresh | changing, key=_order):
            ivs = model.get((atom[0], len(atom[1])), {}).get(atom[1], [])
            old = self.published.get(atom, [])
            # only the intervals reaching first or later can change: the others are final and kept as they are
            i = max(0, _reaching(old, first) - 1)  # the one before may merge with what follows
            tail = I.coalesce(I.intersect_sets(old[i:], [upto]) + I.intersect_sets(ivs, [after]))
            self._diff_tail(atom, i, self._open(tail, until), out)
        if correction:
            self.active = dict(self.inputs)  # the working set, pruned again by _forget
            self.live = set(self.published)
        return out

    def _diff_tail(self, atom: Atom, i: int, tail: list[Iv], out: list[AnswerChange]) -> None:
        """``_diff`` of the atom's published intervals from index ``i`` on (the
        ones before are final), changing the published list in place: copying
        it would cost the length of the stream at every step."""
        old = self.published.get(atom)
        was = [] if old is None else old[i:]
        if was == tail:
            return
        _changes(atom, was, tail, out)
        if old is None:
            self.published[atom] = tail
        elif i == 0 and not tail:
            del self.published[atom]
            self.live.discard(atom)
            return
        else:
            del old[i:]
            old.extend(tail)
        self.live.add(atom)

    def push_block(self, block: Block) -> None:
        for event in block.unpacked():
            self.push(event)

    def advance(self, until: Time) -> Changes:
        return Changes(self._advance(until), points=False)  # a point is the punctual interval [7,7]

    def finish(self, until: Time | None = None) -> Changes:
        return Changes(self._finish(until), points=False)

    def pending(self) -> Changes:
        return Changes(points=False)  # nothing is evaluated but in advance and finish

    def _advance(self, until: Time) -> list[AnswerChange]:
        until = I.norm(Fraction(until))
        if self.mode == "batch" or self.lo is None:
            return []
        if self.evaluated is not None and until <= self.evaluated and not self.dirty:
            return []
        if self.evaluated is None or (self.dirty and self.redo is None):
            out = self._recompute(until, claim=True)
        else:  # a correction evaluates again from the earliest time it changes, else only the new times
            out = self._window_step(until, self.redo if self.dirty else None)
        self.evaluated, self.dirty, self.redo = until, False, None
        self.time_points += 1
        self._forget(until)
        return out

    def _forget(self, e: Fraction) -> None:
        """Drop from the working set what no later window can meet (Forget, seed 002):
        the next window is ``(e - W, t]``."""
        if self.window == inf or self.lo is None or e - self.window <= self.lo:
            return  # the next window starts at the input's first time, closed
        start = e - self.window  # the next window is (start, t]: what ends at start is not in it
        self.active = {k: n for k, n in self.active.items() if k[2][2] > start}
        self.live = {a for a in self.live if a in self.published and self.published[a][-1][2] > start}
        if self.retention is not None and self.time_points % self.prune_every == 0:
            # the input log keeps what a correction within the retention can read: from e - retention - W
            horizon = start - self.retention
            self.inputs = {k: n for k, n in self.inputs.items() if k[2][2] >= horizon}
            # published intervals that ended before it can change no more: they were written, and the
            # diffs only ever read an atom's tail (its list would otherwise grow with the stream)
            for atom in list(self.published):
                ivs = self.published[atom]
                cut = _reaching(ivs, horizon)
                if cut == len(ivs):
                    del self.published[atom]
                    self.live.discard(atom)
                elif cut:
                    del ivs[:cut]

    def _finish(self, until: Time | None = None) -> list[AnswerChange]:
        if self.lo is None or self.hi is None:
            return []
        end = self.hi if until is None else min(self.hi, I.norm(Fraction(until)))
        if self.mode == "batch":
            out = self._recompute(end, claim=False)
            self.evaluated = end
            return out
        return self._advance(end)

    # ------------------------------------------------------------ upgrades

    def keep(self, old: Any, kept: frozenset[str], at: Time, until: Time) -> bool:
        """Become the new program version of ``old`` (the running version, of another program)
        from ``at`` on, keeping its strata whose answer predicates (``p/1``) are ``kept``
        (unchanged by content, ``core.strata``): the input log and the kept predicates' answers
        are taken over, and the next evaluation derives only the other predicates, with the
        kept ones as facts (the same model as evaluating everything: the kept strata's rules
        give the same intervals) up to ``until``, where ``old`` has evaluated to — from
        ``at`` minus their ``warm_up`` on (``warmed_from``), from the input's start where that
        is unbounded (recursion among them).  False when it cannot (batch mode, ``old``
        elsewhere): the caller then evaluates the retained input whole."""
        if (not isinstance(old, MtlEvaluator) or self.mode != "stream" or old.mode != "stream" or old.lo is None
                or old.evaluated != I.norm(Fraction(until)) or old.dirty or self.lo is not None):
            return False
        keys = {k for k in self.heads if f"{k[0]}/{k[1]}" in kept}
        if not keys:
            return False
        changed = tuple(r for r in self.program.rules if head_atom(r.head).key not in keys)
        reads = frozenset({a.key for r in changed for lit in r.body for a in atoms_of(lit)})
        heads = {head_atom(r.head).key for r in changed}
        chains = _chains(self.program, heads)
        start = old.lo if chains is None else max(old.lo, I.norm(Fraction(at) - max(chains.values(), default=0)))
        partial = {k: t for k, t in old.partial.items() if k in keys}
        if any(k in reads and start < t for k, t in partial.items()):
            return False  # a kept stratum an earlier upgrade evaluated from later than this one reads it
        inputs = dict(old.inputs)  # the stream's facts, with this program's facts for the old one's
        for f in old.program.facts:
            k = (f.pred, tuple(f.args), f.interval)
            if inputs.get(k, 0) > 1:
                inputs[k] -= 1
            else:
                inputs.pop(k, None)
        for f in self.program.facts:
            k = (f.pred, tuple(f.args), f.interval)
            inputs[k] = inputs.get(k, 0) + 1
        self.inputs, self.active = inputs, dict(inputs)
        self.published = {a: list(ivs) for a, ivs in old.published.items() if (a[0], len(a[1])) in keys}
        self.live = set(self.published)
        self.lo, self.hi, self.latest = old.lo, old.hi, old.latest
        self.unmatched_retractions, self.delayed, self.too_late = old.unmatched_retractions, old.delayed, old.too_late
        self.changed_only = Materialiser(MtlProgram(changed, ()), self.fired)
        self.changed_reads = reads | heads
        self.warmed_from = start
        self.partial = partial
        if chains is not None and start > self.lo:  # what they hold is known from there on only
            self.partial.update({k: I.norm(start + chains[k]) for k in heads})
        return True

    # ------------------------------------------------------------ state

    def written(self, without: frozenset[str] = frozenset()) -> Changes:
        """What the changes returned so far mean: the published intervals, as +1 changes;
        ``without``: answer predicates (``p/1``) left out (an upgrade's kept strata)."""
        published = [x for x in self.published.items() if f"{x[0][0]}/{len(x[0][1])}" not in without]
        return Changes([(p, a, _span(iv), 1) for (p, a), ivs in sorted(published, key=lambda x: _order(x[0]))
                        for iv in ivs], points=False)

    def late_bound(self) -> Time | None:
        """The earliest event time it still applies (older events are too late, ``push``);
        None: any.  An applied event changes answers from its time on only (forward
        propagation), so answers before this bound are final (``versions.Versions`` drops a
        program version that ends before it)."""
        if self.retention is None or self.latest is None:
            return None
        return _num(self.latest - self.retention)

    def retained_span(self) -> tuple[Time | None, Time | None]:
        if self.lo is None:
            return None, None
        complete = None
        if self.retention is not None and self.window != inf and self.latest is not None:
            complete = self.latest - self.retention - self.window
        return complete, self.latest

    def retained(self) -> tuple[Time | None, list[Event]]:
        """The input log as events in time order (each fact as often as it counts), framed by
        the span's first and latest times; complete from what the retention keeps
        (``_forget``: facts ending at or after ``latest - retention - W``)."""
        if self.lo is None:
            return None, []
        facts = sorted(((iv[0], p, a, iv, n) for (p, a, iv), n in self.inputs.items()), key=lambda f: f[0])
        events = [Event(self.lo)]  # type: ignore[arg-type]
        for t, p, a, iv, n in facts:
            events += [Event(t, p, a, span=iv)] * n  # type: ignore[arg-type]
        if self.latest is not None:
            events.append(Event(self.latest))  # type: ignore[arg-type]
        return self.retained_span()[0], events

    @staticmethod
    def log_bucket(item: list) -> int:
        """The time point an ``inputs`` item of ``export_state`` belongs to (the
        floor of its interval's start; ``-inf``: one point before every other):
        a fleet service journals the input log per point, so a commit writes
        the points whose input changed (chronolog/stages/evaluator.py)."""
        text = item[2]
        lo = text[1:text.index(",")]
        if lo == "-inf":
            return -(1 << 62)
        num, _, den = lo.partition("/")
        return int(num) // int(den) if den else int(num)

    def export_state(self) -> dict[str, Any]:
        def num(x: Fraction | None) -> str | None:
            return None if x is None else time_text(_num(x))

        return versioned({
            "dialect": self.dialect, "mode": self.mode,
            "inputs": [[p, list(a), I.text(iv), n] for (p, a, iv), n in self.inputs.items()],
            "published": [[p, list(a), [I.text(iv) for iv in ivs]] for (p, a), ivs in self.published.items()],
            "lo": num(self.lo), "hi": num(self.hi), "evaluated": num(self.evaluated), "latest": num(self.latest),
            "dirty": self.dirty,
            "redo": num(self.redo),
            "counters": [self.unmatched_retractions, self.delayed, self.too_late, self.time_points],
            "partial": [[p, n, num(t)] for (p, n), t in self.partial.items()],
        })

    def import_state(self, data: dict[str, Any]) -> None:
        check_state_header(data, self.dialect)
        if data.get("mode") != self.mode:
            raise StateError(f"state of {data.get('mode')} mode, not {self.mode}")
        with reading("DatalogMTL evaluator state"):
            self.inputs = {(str(p), tuple(a), interval_from_text(iv)): int(n) for p, a, iv, n in data["inputs"]}
            self.published = {(str(p), tuple(a)): [interval_from_text(iv) for iv in ivs]
                              for p, a, ivs in data["published"]}
            self.lo, self.hi, self.evaluated = (None if x is None else I.norm(Fraction(x))
                                                for x in (data["lo"], data["hi"], data["evaluated"]))
            latest = data.get("latest", data["evaluated"])  # absent in states written before: the evaluated time
            self.latest = None if latest is None else I.norm(Fraction(latest))
            self.active = dict(self.inputs)  # the working set, pruned again by the next step
            self.live = set(self.published)
            self.dirty = bool(data["dirty"])
            redo = data.get("redo")  # absent in states written before windowed corrections: recompute all
            self.redo = None if redo is None else I.norm(Fraction(redo))
            (self.unmatched_retractions, self.delayed, self.too_late, self.time_points) = map(int, data["counters"])
            self.partial = {(str(p), int(n)): I.norm(Fraction(t)) for p, n, t in data.get("partial", [])}


def _changes(atom: Atom, was: list[Iv], now: list[Iv], out: list[AnswerChange]) -> None:
    """The -1/+1 lines from the intervals ``was`` to ``now``."""
    for iv in I.subtract(now, was):
        out.append((atom[0], atom[1], _span(iv), 1))
    for iv in I.subtract(was, now):
        out.append((atom[0], atom[1], _span(iv), -1))


def _reaching(ivs: list[Iv], t: Fraction | float) -> int:
    """The index of the first of the (coalesced) intervals that ends at ``t`` or
    later, scanning from the end: a step only ever looks at a stream's tail."""
    i = len(ivs)
    while i > 0 and ivs[i - 1][2] >= t:
        i -= 1
    return i


def _order(atom: Atom) -> tuple:
    return (atom[0], tuple((type(a) is str, a) for a in atom[1]))
