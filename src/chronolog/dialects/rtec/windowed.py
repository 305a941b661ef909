"""RTEC's windowed mode (``chronolog run --window ω --step s``): RTEC's own answers, window by window.

The default RTEC evaluator is exact: a delayed event repairs the intervals from the earliest
time it affects (RTECinc).  RTEC itself (seed 004, section 2.2; ``eventRecognition/2`` of its
engine) instead works on a *working memory*: at each query time Q (every ``s`` ticks, Q = s,
2s, ...) it considers only the input with time in (Q-ω, Q], forgets everything older, and
computes the window's intervals from scratch, joined with what was carried over at the window
start.  This evaluator gives those answers, so that a chronolog run with RTEC's settings can
be compared with RTEC's own output:

* input older than the next window (time ≤ Q-ω when it arrives) is ignored and counted
  (``too_late``, reported like ``--retention``'s); input at or before Q-ω is forgotten at Q;
* a simple fluent carries over the interval that covers the instant Q-ω+1 by the previous
  query's lists (RTEC's ``setTheSceneSimpleFluent``), and its initiations and terminations
  at Q-ω..Q (input from Q-ω+1) make the rest; ``initially`` applies only when Q-ω ≤ 0;
* a statically determined fluent is computed on its body's lists clipped to the window, the
  part up to Q-ω kept (``setTheSceneSDFluent``); ``complement_all`` complements from the
  first time point after Q-ω (from 0 when Q-ω < 0);
* dynamic grounding is per window: the domain is what the window's input names, plus the
  instances of entities still holding (an open interval) at the previous query;
* the answer: each time point has the verdict of the last window that covers it.

Everything else (the hierarchy, the solver, the answer lists, the publication as changes) is
the default evaluator's; this module only sets the window edges through its hooks.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any, ClassVar

from chronolog.core.errors import ChronologError
from chronolog.core.events import Event, TimeRows
from chronolog.dialects.rtec import intervals as IV
from chronolog.dialects.rtec.analysis import domain_feeds
from chronolog.dialects.rtec.evaluator import NEG_INF, RtecEvaluator
from chronolog.dialects.rtec.intervals import INF
from chronolog.dialects.rtec.parser import RtecProgram
from chronolog.dialects.rtec.terms import Var, inst, is_ground, resolve
from chronolog.evaluator import AnswerChange, Span, StateError, Time


class WindowedRtecEvaluator(RtecEvaluator):
    """The RTEC evaluator run as RTEC runs: windows (Q-ω, Q] at Q = step, 2·step, ..."""

    past_from_start = False
    resumes_mid_stream: ClassVar[bool] = False  # (not checked against a whole run as RtecEvaluator's is)

    def __init__(self, program: RtecProgram, window: int, step: int | None = None, warn=lambda m: None) -> None:
        step = window if step is None else step
        if window <= 0 or step <= 0:
            raise ChronologError(f"error: --window and --step must be positive (got {window} and {step})")
        super().__init__(program, step=step, warn=warn)
        self.window = window
        self.query = 0  # the last query time evaluated (the first one is `step`)
        self.init: float = NEG_INF  # Q-ω of the window being evaluated
        self.too_late = 0
        self._ready: list[AnswerChange] = []  # the changes of the windows evaluated, until advance returns them
        self._window_feeds = domain_feeds(program)  # input functor -> [(domain predicate, argument positions)]

    # ------------------------------------------------------------ input

    def push_block(self, rows: TimeRows) -> None:
        for event in rows.unpacked():  # each event through push (its window's checks), not the bulk path
            self.push(event)

    def push(self, event: Event) -> None:
        self._catch_up(event.t - 1)
        if event.pred is None:
            self._saw(event.t)
            return
        edge = self.query + self.step - self.window  # the next window starts after this time
        end = event.span[1] - 1 if event.span is not None else event.t
        if end <= edge:
            self.too_late += 1  # RTEC forgets it before the next query
            return
        super().push(event)

    def _feed_domain(self, pred: str, args: tuple) -> None:
        """The domain is gathered per window (``_gather_domain``), not as input arrives."""

    # ------------------------------------------------------------ the Evaluator interface

    def _advance(self, until: Time) -> list[AnswerChange]:
        self._catch_up(int(until))
        out, self._ready = self._ready, []
        return out

    def _finish(self, until: Time | None = None) -> list[AnswerChange]:
        if until is not None:
            self._catch_up(int(until))
        elif self.latest is not None:
            self._catch_up(self.latest + (-self.latest) % self.step if self.latest > 0 else self.step)
        out, self._ready = self._ready, []
        return out

    def _catch_up(self, until: int) -> None:
        """Evaluate every query time up to ``until``, once input has arrived: from Q = step on
        (RTEC's start time 0), the windows before the first event too, as they carry
        ``initially`` and complement within themselves (an event before the first one to
        arrive, delayed within ω - s, then means what it means in time order)."""
        if self.first is None:
            return
        while self.query + self.step <= until:
            self._ready += self._query(self.query + self.step)

    def _query(self, q: int) -> list[AnswerChange]:
        init = q - self.window
        self.init = init
        self._forget(init)
        self._gather_domain(init, q)
        self.regrow = False  # a window computes from its start only, whatever the domain gained
        # the lowest of the edges `_component_lo` gives: no component counts as started early
        changed = self._window(min(init, init + 2 - self.tick), q)
        if self.time_points == 0 and init >= 0:
            self._trim_before(init + 1, changed)  # no window covers the times up to Q-ω
        self.query = q
        self.time_points += 1
        self.done = q
        self.lo = q + 1
        return self._publish(changed, q)

    def _component_lo(self, comp: list, lo: float) -> float:
        """RTEC's edges: events from Q-ω; statically determined fluents after it; a simple fluent's
        carry is what covers Q-ω+1 (the sweep reads what holds at ``lo + tick - 1``)."""
        init = self.init
        if init < 0:
            return NEG_INF  # the first window reaches time 0: RTEC computes from the start
        kind = self.h.kind[comp[0]]
        if kind == "event":
            return init
        if kind == "sdf":
            return init + self.tick - 1
        return init + 2 - self.tick

    def _initially(self, keys: set) -> list[tuple]:
        return super()._initially(keys) if self.init <= 0 else []

    # ------------------------------------------------------------ forgetting and grounding

    def _forget(self, init: float) -> None:
        """Drop the input at or before Q-ω and the derived events before the window."""
        store = self.store
        for key in list(store.event_times):
            times = store.event_times[key]
            if times and times[0] <= init:
                self._drop_before(key, init)
        index = getattr(store, "point_times", None)  # a sorted time index of the points, if the store keeps one
        for key, at in store.points.items():
            old = [t for t in at if t <= init]
            if not old:
                continue
            for t in old:
                for fargs, v in at.pop(t):
                    self.point_dups.pop((key, fargs, v, t), None)
            if index is not None and key in index:
                times = index[key]
                del times[:bisect_right(times, init)]
            for fargs, vals in list(store.fluents.get(key, {}).items()):
                for v, ivs in list(vals.items()):
                    store.set_list(key, fargs, v, IV.subtract(ivs, [(NEG_INF, init + self.tick)]))
        start = init + self.tick
        clipped = [ck for ck in self.interval_counts if ck[3] < start]
        if not clipped:
            return
        for ck in clipped:
            n = self.interval_counts.pop(ck)
            if ck[4] > start:
                self.interval_counts[(*ck[:3], start, ck[4])] = n
        touched = {ck[:3] for ck in clipped}
        pairs: dict = {ident: [] for ident in touched}
        for ck in self.interval_counts:
            if ck[:3] in pairs:
                pairs[ck[:3]].append((ck[3], ck[4]))
        for (key, fargs, value), got in pairs.items():
            store.set_list(key, fargs, value, IV.coalesce(got))

    def _trim_before(self, t: float, changed: set) -> None:
        for key, by_args in self.store.fluents.items():
            if key[0] in self.point_decl or key[0] in self.interval_decl:
                continue
            for args, vals in list(by_args.items()):
                for v, ivs in list(vals.items()):
                    if ivs and ivs[0][0] < t:
                        self.store.set_list(key, args, v, IV.subtract(ivs, [(NEG_INF, t)]))
                        changed.add((key, args, v))

    def _drop_before(self, key: tuple, init: float) -> None:
        times = self.store.event_times[key]
        by_t = self.store.events[key]
        i = 0
        while i < len(times) and times[i] <= init:
            del by_t[times[i]]
            i += 1
        del times[:i]

    def _gather_domain(self, init: float, q: int) -> None:
        """RTEC's dynamic grounding: the domain instances the window's input names, and those of
        entities whose list ended open at the previous query."""
        if not self.domain:
            return
        domain: dict = {k: set() for k in self.domain}

        def feed(pred: str, args: tuple) -> None:
            for dkey, positions in self._window_feeds.get(pred, ()):
                if max(positions, default=-1) < len(args):
                    domain[dkey].add(tuple(args[i] for i in positions))

        for key, times in self.store.event_times.items():
            if key[0] in self._window_feeds and ("event", key) not in self.h.kind:
                for t in times:
                    if init < t <= q:
                        for args in self.store.events[key][t]:
                            feed(key[0], args)
        for key, at in self.store.points.items():
            for t, items in at.items():
                if init < t <= q:
                    for fargs, _ in items:
                        feed(key[0], fargs)
        for key, fargs, _, _a, _b in self.interval_counts:
            feed(key[0], fargs)
        for key, by_args in self.store.fluents.items():
            if key[0] in self.point_decl or key[0] in self.interval_decl:
                continue
            for args, vals in by_args.items():
                for v, ivs in vals.items():
                    if ivs and ivs[-1][1] == INF:
                        for dkey, tup in self._grounded_by(key, args, v):
                            domain[dkey].add(tup)
        if domain != self.domain:
            for k, known in self.domain.items():  # in place: the evaluator may hold these sets
                known.clear()
                known.update(domain[k])
            self._expansions.clear()
            self._grounded.clear()

    def _grounded_by(self, key: tuple, args: tuple, value: Any) -> list[tuple]:
        """The domain instances a ``grounding/1`` clause of F=V names (RTEC's ``dgrounded/2``)."""
        out = []
        fv = ("=", (key[0], *args) if key[1] else key[0], value)
        for rule in self.grounding_rules:
            vs = [Var() for _ in range(rule.nvars)]
            head = inst(rule.head, vs)
            mark = len(self.solver.trail)
            if self.solver.unify(head[1], fv):
                for g in rule.body:
                    if isinstance(g, tuple) and (g[0], len(g) - 1) in self.domain:
                        got = resolve(inst(g, vs))
                        if is_ground(got):
                            out.append(((g[0], len(g) - 1), tuple(got[1:])))
            self.solver.undo(mark)
        return out

    # ------------------------------------------------------------ state

    def export_state(self) -> dict[str, Any]:
        data = super().export_state()
        data["windowed"] = {"window": self.window, "step": self.step, "query": self.query,
                            "too_late": self.too_late,
                            # changes of queries evaluated on input (push) that advance has not returned yet
                            "pending": [[p, list(a), s.lo, s.hi, d] for p, a, s, d in self._ready]}
        return data

    def import_state(self, data: dict[str, Any]) -> None:
        super().import_state(data)

        got = data.get("windowed")
        if not isinstance(got, dict) or got.get("window") != self.window or got.get("step") != self.step:
            raise StateError(f"RTEC evaluator state: not of a windowed run with --window {self.window} "
                             f"--step {self.step}")
        self.query, self.too_late = int(got["query"]), int(got["too_late"])
        self._ready = [(p, tuple(a), Span(int(lo), None if hi is None else int(hi), True, False), int(d))
                        for p, a, lo, hi, d in got["pending"]]

