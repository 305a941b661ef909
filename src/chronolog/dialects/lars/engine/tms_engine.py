"""Non-stratified LARS by truth maintenance: Ticker's incremental TMS strategy.

At every time point the program is grounded for the evaluation at ``t``
(``LarsGrounder``), the ground rules are compared with those of ``t-1``, and
only the difference enters the TMS (``engine/tms.py``): rules for new facts
and time points are added, expired ones removed, and the TMS re-labels just
the atoms the change reaches.  This is Ticker's ``IncrementTick`` with the
expiration of a ground rule being "no longer in the grounding at ``t``".

Atoms are kept time-independent where the semantics allows, so that the
same atom (and its label) survives from one time point to the next:

* an atom of a predicate derived only *now* (no ``@``-head reaches it) is
  ``(pred, args)`` — Ticker's ``a(X)`` for ``a_@(X, t)``;
* an atom of a *timed* predicate is ``(pred, args + (T,))`` with ``T``
  absolute — Ticker's ``a_@(X, T)``;
* a diamond or box over a timed predicate is an auxiliary atom defined by
  rules over the window's time points (Ticker's ``omega_e``), e.g.
  ``("#dia", pred, lo, args) :- (pred, args + (T,))`` for ``T`` in ``[lo, t]``;
* literals over stream (extensional) predicates are decided while grounding
  (the window contents are known), so they never become TMS atoms: a rule
  instance whose stream literals hold is in the grounding, else it is not.

Grounding is bottom-up and semi-naive over the atoms that could hold (the
positive closure, negation ignored); negative literals over atoms that
cannot hold are dropped.  It is a function of the window contents at ``t``
alone, so a restarted engine grounds exactly the same rules.

The stratified lower part of the program (``engine/tms_split.py``) is not
grounded here: a core ``Engine`` evaluates it, and its atoms are read like
stream facts.

The grounder is ``tms_grounder.py`` (with the window relations it reads,
``tms_relations.py``), the labels' JSON form ``tms_labels.py``; this module
drives the TMS with the grounder's changes and shows its answers.

The interface is the incremental ``Engine``'s (``step``, ``derived_at``,
``holding_now``, ``exported``), so the reasoner, the answer writer, the
corrections, the fleet and the backfill drive it unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from chronolog.dialects.lars.engine import tms_labels
from chronolog.dialects.lars.engine.content import Content, grouped, merged
from chronolog.dialects.lars.engine.core import ANSWERS, Engine, Fact, StepResult
from chronolog.dialects.lars.engine.tms import Tms
from chronolog.dialects.lars.engine.tms_grounder import LarsGrounder
from chronolog.dialects.lars.engine.tms_split import split_plan
from chronolog.dialects.lars.plan import Plan, PredKey, trim_stream

# why there is no answer set where the truth maintenance finds no labelling (a ``run`` warning)
UNLABELLED = "no consistent labelling: an odd loop through not, or a constraint"


class TmsEngine:
    """The TMS strategy behind the incremental ``Engine``'s interface."""

    def __init__(self, plan: Plan, t1: int, seed: int = 0, split: bool = True) -> None:
        self.t1 = t1
        self.t: int | None = None
        # The stratified lower part (engine/tms_split.py) is the core engine's; the
        # TMS grounds and labels the rest, reading the lower atoms as input.
        parts = split_plan(plan) if split else None
        self.lower: Engine | None = None
        self._reads: tuple[PredKey, ...] = ()
        self._below: dict[PredKey, frozenset] = {}
        self._below_timed: frozenset[PredKey] = frozenset()
        self._lower_ok = True
        # The lower part's answers as published so far (mirrored from its changes),
        # and whether they were shown at the last point: a point without an answer
        # set shows none of them (docs/tms.md#no-answer-set).
        self._lower_now: set[tuple[PredKey, tuple]] = set()
        self._lower_timed: set[tuple[PredKey, tuple]] = set()
        self._lower_shown = True
        if parts is not None:
            self.lower = Engine(plan, t1, only=parts.lower)
            self._reads = parts.reads
            self._below = {p: frozenset() for p in parts.reads}
            self._below_timed = frozenset(p for p in parts.reads if p in plan.timed)
            plan = parts.upper
        self.plan = plan
        self.grounder = LarsGrounder(plan)
        self.tms = Tms(seed)
        self._events: list[tuple[int, PredKey, tuple]] = []
        self._now: set[tuple[PredKey, tuple]] = set()  # output atoms holding now
        self._timed: set[tuple[PredKey, tuple, int]] = set()  # output atoms at explicit times
        self.consistent = True
        # The labels (atoms in) after each evaluation, shared while unchanged: a
        # replay of the past (a correction, a restart) follows them (``guide``), so
        # it re-derives exactly what was published where the log did not change,
        # and keeps those choices where they still give an answer set.
        self.history: dict[int, frozenset] = {}
        self.guide: dict[int, frozenset] | None = None

    def step(self, t: int, facts: Sequence[Fact], imported: object = None) -> StepResult:
        if self.t is not None and t != self.t + 1:
            raise ValueError(f"engine at {self.t} cannot step to {t}")
        self.t = t
        routes = self.plan.input_routes
        self._events.extend((t, routes.get(key, key), args) for key, args in facts)
        self._trim(t)
        low = None
        if self.lower is not None:
            low = self.lower.step(t, facts)
            self._lower_ok = low.consistent
            rels, below = self.lower.rels, self._below
            for p in self._reads:  # (unchanged rows keep their identity: cheap cache checks)
                rows = rels[p].tuples
                if rows != below[p]:
                    below[p] = frozenset(rows)
        changes = self.grounder.ground(self.t1, t, self._events, self._below, self._below_timed)
        tms = self.tms
        for removed, _ in changes:  # expired ground rules out, new ones in
            for rule in removed:
                tms.remove(*rule)
        for _, added in changes:
            for rule in added:
                tms.add(*rule)
        guide = None if self.guide is None else self.guide.get(t)
        prefer = None if guide is None else guide.__contains__
        was, version = self.consistent, tms.version
        self.consistent = tms.update(prefer, self._shifted) and self._lower_ok
        previous = self.history.get(t - 1)
        if tms.version == version and self.consistent == was and previous is not None and not self.grounder.padded:
            self.history[t] = previous  # the labels did not change: nor did the answer
            return self._result(t, low, unchanged=True)
        labels = frozenset(tms.model())
        self.history[t] = previous if previous == labels else labels
        return self._result(t, low)

    def follow(self, previous: TmsEngine) -> None:
        """Replay the past as ``previous`` evaluated it (its labels guide the choices)."""
        self.guide = previous.history

    def inherit(self, previous: TmsEngine, start: int) -> None:
        """After a replay exact from ``start``: the labels before it are the previous engine's
        (the replay's own there are its warm-up's, which saw only part of the windows)."""
        self.history = {t: labels for t, labels in previous.history.items() if t < start} | \
            {t: labels for t, labels in self.history.items() if t >= start}
        self.guide = None

    def forget_before(self, t: int) -> None:
        """Drop the labels of times before ``t`` (no replay reaches them any more)."""
        for old in [k for k in self.history if k < t]:
            del self.history[old]

    def _shifted(self, key: object) -> bool | None:
        """For an atom pinned to now (timed, time t): the label of the same atom at
        t-1, so a choice on a timed predicate is kept as time moves on."""
        if type(key) is tuple and len(key) == 2 and key[0] in self.plan.timed and key[1][-1] == self.t:
            return self.tms.holds((key[0], key[1][:-1] + (self.t - 1,)))  # type: ignore[operator]
        return None

    def _result(self, t: int, low: StepResult | None, unchanged: bool = False) -> StepResult:
        """The answer's changes since t-1 (none to compute when the labels did not
        change), the lower part's (``low``) first."""
        result = StepResult(t) if low is None else self._shown(t, low)
        result.consistent = self.consistent
        if not self.consistent:
            result.reason = low.reason if low is not None and not low.consistent else UNLABELLED
        if unchanged:
            return result
        now, timed = self._answer_now(t) if self.consistent else (set(), set())
        before_now, before_timed = self._now, self._timed
        if now != before_now:
            for p, (added, removed) in _by_pred(now - before_now, before_now - now, lambda x: (x[0], x[1])).items():
                result.add_now(p, added, removed)
        if timed != before_timed:
            for p, (added, removed) in _by_pred(timed - before_timed, before_timed - timed, lambda x: (x[0], x[1] + (x[2],))).items():
                result.add_timed(p, added, removed)
        self._now, self._timed = now, timed
        return result

    def _shown(self, t: int, low: StepResult) -> StepResult:
        """The lower part's changes as the answer stream shows them: passed on while
        every point has an answer set; at a point without one its atoms all stop,
        and at the next point with one they all start again."""
        before = (set(self._lower_now), set(self._lower_timed)) if self._lower_shown and not self.consistent else None
        for p, added, removed in low.now_groups():
            self._lower_now.difference_update((p, a) for a in removed)
            self._lower_now.update((p, a) for a in added)
        for p, added, removed in low.timed_groups():
            self._lower_timed.difference_update((p, a) for a in removed)
            self._lower_timed.update((p, a) for a in added)
        shown, self._lower_shown = self._lower_shown, self.consistent
        if shown and self.consistent:
            return low
        if before is None:  # shown neither before nor now, or shown again from now
            before = (set(), set()) if not shown else (self._lower_now, self._lower_timed)
        after = (self._lower_now, self._lower_timed) if self.consistent else (set(), set())
        result = StepResult(t)
        for p, (added, removed) in _by_pred(after[0] - before[0], before[0] - after[0], lambda x: x).items():
            result.add_now(p, added, removed)
        for p, (added, removed) in _by_pred(after[1] - before[1], before[1] - after[1], lambda x: x).items():
            result.add_timed(p, added, removed)
        return result

    def _answer_now(self, t: int) -> tuple[set[tuple[PredKey, tuple]], set[tuple[PredKey, tuple, int]]]:
        """The output atoms of the labels: (those holding now, those at explicit times)."""
        plan = self.plan
        now: set[tuple[PredKey, tuple]] = set()
        timed: set[tuple[PredKey, tuple, int]] = set()
        for key in self.tms.model():
            first = key[0]
            if first == "#user":
                _, pred, tup = key
                if pred in plan.output:
                    timed.add((pred, tup[:-1], tup[-1]))
                continue
            if type(first) is not tuple or first not in plan.output:
                continue
            pred, tup = key
            if pred in plan.timed:
                if pred in self.grounder.padded and tup[-1] != t:
                    continue
                timed.add((pred, tup[:-1], tup[-1]))
            else:
                now.add((pred, tup))
        return now, timed

    def _trim(self, t: int) -> None:
        trim_stream(self._events, t, self.plan)

    # ------------------------------------------------------------ inspection

    def holding_now(self) -> Iterable[tuple[PredKey, tuple]]:
        lower = [] if self.lower is None or not self.consistent else list(self.lower.holding_now())
        return lower + list(self._now)

    def exported(self) -> Content:
        """The answer as ``Imported.content`` for the fleet's output service."""
        out: list = list(self._now)
        for p, a, T in self._timed:
            out.append((p, a + (T,)))
            if p in self.grounder.padded:
                out.append(((ANSWERS, p), a + (T,)))
        mine = grouped(out)
        return mine if self.lower is None or not self.consistent else merged((mine, self.lower.exported()))

    def derived_at(self) -> set[tuple[PredKey, tuple, int]]:
        t = self.t
        mine = {(p, a, t) for p, a in self._now} | self._timed  # type: ignore[misc]
        return mine if self.lower is None or not self.consistent else mine | self.lower.derived_at()

    # ------------------------------------------------------------ labels as data

    def export_labels(self) -> dict[str, Any]:
        """The TMS's choices as JSON-able data: the atoms in after the last evaluation,
        and the history of labels as changes per time point (``tms_labels.py``)."""
        return tms_labels.labels_data(self.t, self.consistent, self.tms.model(), self.history)

    def kept_labels(self) -> tms_labels.Kept:
        """The choices as of now, kept as they are (the history's dict copied, its labels
        shared), not written out as ``export_labels`` does: an idle flush keeps them before its
        provisional evaluation, and needs them only to take it back (``adopt_kept``) or as data
        in a checkpoint (dialects/lars/provisional.py)."""
        return tms_labels.Kept(self.t, self.consistent, frozenset(self.tms.model()), dict(self.history))

    def adopt_kept(self, kept: tms_labels.Kept) -> bool:
        """``import_labels`` of ``kept_labels``' choices (the engine rebuilt following their history)."""
        self.guide = None
        if kept.t != self.t or not kept.consistent or not self.consistent or not self.tms.adopt(list(kept.model)):
            return False
        self._now, self._timed = self._answer_now(self.t) if self.t is not None else (set(), set())
        self.history.update(kept.history)
        return True

    labels_history = staticmethod(tms_labels.labels_history)  # export_labels's history back per time point

    def import_labels(self, data: dict[str, Any]) -> bool:
        """Continue with a checkpoint's labels if they are an answer set of the rules
        grounded here at the same time point (True); else keep this engine's.  (The
        reasoner rebuilt this engine following the checkpoint's history, so they
        normally agree already.)"""
        self.guide = None  # (the rebuild that followed the checkpoint's history is over)
        if data.get("t") != self.t or not data.get("consistent") or not self.consistent:
            return False
        keys = tms_labels.labels_in(data)
        if not self.tms.adopt(keys):
            return False
        self._now, self._timed = self._answer_now(self.t) if self.t is not None else (set(), set())
        self.history.update(self.labels_history(data))
        return True


def _by_pred(added: set, removed: set, split: Any) -> dict[PredKey, tuple[list, list]]:
    """Changes grouped per predicate; ``split`` maps one to (pred, args)."""
    out: dict[PredKey, tuple[list, list]] = {}
    for sign, atoms in ((0, added), (1, removed)):
        for x in atoms:
            p, args = split(x)
            out.setdefault(p, ([], []))[sign].append(args)
    return out

