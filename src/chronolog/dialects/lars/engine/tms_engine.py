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

The interface is the incremental ``Engine``'s (``step``, ``derived_at``,
``holding_now``, ``exported``), so the reasoner, the answer writer, the
corrections, the fleet and the backfill drive it unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from chronolog.dialects.lars.engine.content import Content, grouped, merged
from chronolog.dialects.lars.engine.core import ANSWERS, Engine, Fact, StepResult
from chronolog.dialects.lars.engine.rules import _compare, _Undefined
from chronolog.dialects.lars.engine.tms import Tms
from chronolog.dialects.lars.engine.tms_split import split_plan
from chronolog.dialects.lars.ir import BinOp, Compare, Const, Expr, ExtAtom, Op, Rule, Term, TimeWindow, TupleWindow, Var, expr_vars
from chronolog.dialects.lars.plan import TICK, Plan, PredKey, trim_stream

Binding = dict[str, Any]
GroundRule = tuple  # (head key | None, pos keys, neg keys)


def _eval(e: Expr, b: Binding) -> Any:
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Var):
        return b[e.name]
    assert isinstance(e, BinOp)
    x, y = _eval(e.left, b), _eval(e.right, b)
    if type(x) is not int or type(y) is not int:
        raise _Undefined
    if e.op == "+":
        return x + y
    if e.op == "-":
        return x - y
    if e.op == "*":
        return x * y
    if y == 0:
        raise _Undefined
    q = abs(x) // abs(y)
    if (x < 0) != (y < 0):
        q = -q
    return q if e.op == "/" else x - y * q


def _unify(pattern: Sequence[Term], tup: tuple, b: Binding) -> Binding | None:
    """``b`` extended so that ``pattern`` matches ``tup`` (None if it cannot)."""
    out = b
    for term, v in zip(pattern, tup):
        if isinstance(term, Const):
            if term.value != v or type(term.value) is not type(v):
                return None
        elif term.name == "_":
            continue
        else:
            got = out.get(term.name, _UNBOUND)
            if got is _UNBOUND:
                if out is b:
                    out = dict(b)
                out[term.name] = v
            elif got != v or type(got) is not type(v):
                return None
    return out


_UNBOUND = object()


def _index(pattern: Sequence[Term], bound: set[str] | Binding, rows: Iterable[tuple]) -> tuple[dict, list[Term]]:
    """``rows`` by the values at the pattern's constant and already bound positions
    (those terms in order), so a binding looks up its matches instead of scanning."""
    positions = [i for i, x in enumerate(pattern) if isinstance(x, Const) or (x.name != "_" and x.name in bound)]
    if not positions:
        return {}, []
    index: dict[tuple, list[tuple]] = {}
    for tup in rows:
        index.setdefault(tuple(tup[i] for i in positions), []).append(tup)
    return index, [pattern[i] for i in positions]


def _pattern(lit: ExtAtom) -> tuple[Term, ...]:
    if lit.op is Op.AT:
        assert lit.time is not None
        return lit.atom.args + (lit.time,)
    return lit.atom.args


def derived_relation(rows: set[tuple] | frozenset[tuple], timed: bool, op: Op, lo: int, t: int) -> set[tuple]:
    """The tuples of a literal's pattern over the atoms ``rows`` of a derived
    predicate in the answer at ``t`` (a timed one's with their time last), the
    literal's window starting at ``lo``: a predicate that is not timed holds at
    ``t`` only."""
    if not timed:
        if op is Op.AT:
            return {args + (t,) for args in rows}
        if op is Op.BOX and lo != t:
            return set()
        return rows  # type: ignore[return-value]
    if op is Op.NOW:
        return {r[:-1] for r in rows if r[-1] == t}
    if op is Op.AT:
        return {r for r in rows if lo <= r[-1] <= t}
    if op is Op.DIAMOND:
        return {r[:-1] for r in rows if lo <= r[-1] <= t}
    have: dict[tuple, set[int]] = {}
    for r in rows:
        if lo <= r[-1] <= t:
            have.setdefault(r[:-1], set()).add(r[-1])
    return {a for a, ts in have.items() if len(ts) == t - lo + 1}


class _Window:
    """The stream facts (and background, and the timeline) visible at ``t``."""

    def __init__(
        self, plan: Plan, t1: int, t: int, events: list[tuple[int, PredKey, tuple]],
        lower: dict[PredKey, frozenset] | None = None, lower_timed: frozenset[PredKey] = frozenset(),
    ) -> None:
        self.plan, self.t1, self.t, self.events = plan, t1, t, events
        self.lower = lower or {}  # the atoms of the lower part (engine/tms_split.py) in the answer at t
        self.lower_timed = lower_timed  # its timed predicates (their tuples end with the time)
        self._cache: dict[tuple, set[tuple]] = {}
        self._by_pred: dict[PredKey, list[tuple[int, tuple]]] | None = None

    def span(self, window: object, op: Op) -> int:
        if isinstance(window, TimeWindow):
            return max(self.t1, self.t - window.size)
        if window is None and op is not Op.NOW:
            return self.t1
        return self.t

    def relation(self, lit: ExtAtom) -> set[tuple]:
        """The tuples of the literal's pattern columns that hold at ``t`` (stream literal)."""
        key = (lit.atom.key, lit.op, lit.window)
        got = self._cache.get(key)
        if got is None:
            got = self._cache[key] = self._compute(lit)
        return got

    def _compute(self, lit: ExtAtom) -> set[tuple]:
        pred = lit.atom.key
        t, t1 = self.t, self.t1
        rows = self.lower.get(pred)
        if rows is not None:  # a predicate of the lower part: its atoms in the answer at t
            return derived_relation(rows, pred in self.lower_timed, lit.op, self.span(lit.window, lit.op), t)
        if isinstance(lit.window, TupleWindow):
            n = lit.window.size
            sel = self.events[-n:] if n > 0 else []
            lo = sel[0][0] if len(sel) >= n and sel else t1
            by_time: dict[int, set[tuple]] = {}
            for T, p, args in sel:
                if p == pred and lo <= T <= t:
                    by_time.setdefault(T, set()).add(args)
            background: set[tuple] = set()
        else:
            lo = self.span(lit.window, lit.op)
            by_time = {}
            if self._by_pred is None:  # the stream's facts per predicate, once per time point
                self._by_pred = {}
                for T, p, args in self.events:
                    self._by_pred.setdefault(p, []).append((T, args))
            for T, args in self._by_pred.get(pred, ()):
                if lo <= T <= t:
                    by_time.setdefault(T, set()).add(args)
            background = set(self.plan.background.get(pred, ()))
            if pred == TICK:
                background = {()}
        if lit.op is Op.NOW:
            return by_time.get(t, set()) | background
        if lit.op is Op.DIAMOND:
            out = set(background)
            for rows in by_time.values():
                out |= rows
            return out
        if lit.op is Op.BOX:
            out = set(background)
            every = None
            for T in range(lo, t + 1):
                rows = by_time.get(T, set())
                every = set(rows) if every is None else every & rows
            return out | (every or set())
        out = {args + (T,) for T in range(lo, t + 1) for args in background} if background else set()
        for T, rows in by_time.items():
            out.update(args + (T,) for args in rows)
        return out


def _deltable(rule: Rule, own: set[PredKey], plan: Plan) -> bool:
    """Whether the rule's ground instances are a function of its literals'
    relations alone (not of the time point), one instance per match, so that a
    change of one stream relation changes exactly the instances using a tuple
    added or removed (``_Grounding._delta``): no literal over its own component
    (not recursive), intensional literals only over predicates holding now,
    read now (no auxiliary atoms), and a timed head's time taken from an ``@``
    literal over an input predicate (it lies in the window, so on the timeline)."""
    head = rule.head
    for b in rule.body:
        if not isinstance(b, ExtAtom) or b.atom.key not in plan.intensional:
            continue
        if b.atom.key in own or b.atom.key in plan.timed or b.op not in (Op.NOW, Op.DIAMOND):
            return False
        if b.negated and "_" in b.variables():
            return False
    if head.atom.key not in plan.timed:
        return True
    return isinstance(head.time, Var) and any(
        isinstance(b, ExtAtom) and not b.negated and b.op is Op.AT and b.time == head.time
        and b.atom.key not in plan.intensional
        for b in rule.body
    )


class LarsGrounder:
    """The ground normal program of a LARS plan for the evaluation at one time point."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.rules = [r for r in plan.rules]
        self._orders = [self._order(r) for r in self.rules]
        self.literal_ids: dict[ExtAtom, int] = {}  # names the auxiliary atoms of `not p(_)`
        self.join_orders: dict[tuple, list[int]] = {}  # (rule, semi-naive literal) -> body order
        # (flags, not identities: an engine cloned by pickle has copies of the rules)
        self.hidden = [plan.is_hidden(r) for r in self.rules]
        self.padded = plan.padded
        self.head_keys = [r.head.atom.key for r in self.rules]
        self._literal_facts()
        self.components = [self._component_info(c.preds, c.rules) for c in plan.components]
        self.delta = True  # ground only the change of a deltable component (False: whole, a cross-check)
        # component -> (inputs, ground rules, its atoms, counts of instances per rule and head if deltable)
        self.caches: dict[int, tuple] = {}

    def _literal_facts(self) -> None:
        """Per body literal (by identity): its predicate and pattern, computed once."""
        self.lit_key: dict[int, PredKey] = {}
        self.lit_pattern: dict[int, tuple[Term, ...]] = {}
        for r in self.rules:
            for b in r.body:
                if isinstance(b, ExtAtom):
                    self.lit_key[id(b)] = b.atom.key
                    self.lit_pattern[id(b)] = _pattern(b)

    def __getstate__(self) -> dict:
        state = {k: getattr(self, k) for k in self.__dict__ if k not in ("lit_key", "lit_pattern")}
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._literal_facts()  # (identities are new in a clone)

    def _component_info(self, preds: list[PredKey], rules: list[Rule]) -> tuple:
        """(its predicates, its rules' indices, the lower predicates they read, their
        stream literals, whether its grounding depends on the time point itself,
        whether it is ``_deltable``)."""
        plan = self.plan
        own = set(preds)
        members = [i for i, r in enumerate(self.rules) if any(r is x for x in rules)]
        reads: set[PredKey] = set()
        literals: list[ExtAtom] = []
        timely = False
        for i in members:
            r = self.rules[i]
            if r.head.atom.key in plan.timed:
                timely = True
            for b in r.body:
                if not isinstance(b, ExtAtom):
                    continue
                key = b.atom.key
                if key in plan.intensional:
                    if key not in own:
                        reads.add(key)
                    if key in plan.timed or b.op is Op.AT:
                        timely = True
                elif b not in literals:
                    literals.append(b)
        deltable = all(_deltable(self.rules[i], own, plan) for i in members)
        return own, members, sorted(reads), literals, timely and not deltable, deltable

    @staticmethod
    def _order(rule: Rule) -> list[object]:
        """Body elements in evaluation order: positive literals, each comparison as
        soon as its variables are bound (or it assigns one), negative literals last."""
        pos = [b for b in rule.body if isinstance(b, ExtAtom) and not b.negated]
        cmps = [b for b in rule.body if isinstance(b, Compare)]
        neg = [b for b in rule.body if isinstance(b, ExtAtom) and b.negated]
        out: list[object] = []
        bound: set[str] = set()

        def flush() -> None:
            progress = True
            while progress:
                progress = False
                for c in list(cmps):
                    vs = expr_vars(c.left) | expr_vars(c.right)
                    assigns = c.op == "=" and (
                        (isinstance(c.left, Var) and c.left.name not in bound and expr_vars(c.right) <= bound)
                        or (isinstance(c.right, Var) and c.right.name not in bound and expr_vars(c.left) <= bound)
                    )
                    if vs <= bound or assigns:
                        out.append(c)
                        cmps.remove(c)
                        bound.update(vs)
                        progress = True

        flush()
        for lit in pos:
            out.append(lit)
            bound.update(v for v in lit.variables() if v != "_")
            flush()
        out.extend(cmps)  # unsafe leftovers: evaluated last, fail on unbound variables
        out.extend(neg)
        return out

    def ground(
        self, t1: int, t: int, events: list[tuple[int, PredKey, tuple]], lower: dict[PredKey, frozenset] | None = None,
        lower_timed: frozenset[PredKey] = frozenset(),
    ) -> list[tuple[set, set]]:
        """The change of the ground program for the evaluation at ``t``: (rules
        before, rules now) of every component whose grounding changed; ``lower``:
        the atoms of the lower part, read as input."""
        g = _Grounding(self, _Window(self.plan, t1, t, events, lower, lower_timed))
        return g.run()


class _Grounding:
    def __init__(self, grounder: LarsGrounder, window: _Window) -> None:
        self.gr = grounder
        self.plan = grounder.plan
        self.win = window
        self.t, self.t1 = window.t, window.t1
        self.possible: dict[PredKey, set[tuple]] = {p: set() for p in self.plan.intensional}
        self.ci = 0  # the component being grounded
        self._indexes: dict[tuple, tuple] = {}  # (id of a relation, positions) -> (it, its size, index)
        self.out: dict[GroundRule, int] = {}  # ground rules, with how many instances give each
        self.heads: dict[tuple, int] | None = None  # (pred, tuple) -> instances deriving it, when counted
        self.aux: dict[tuple, tuple] = {}  # its auxiliary atoms -> (kind, pred, lo, args) or ("#ex", lit, binding)

    # -------------------------------------------------------- literals

    def _intensional(self, lit: ExtAtom) -> bool:
        return self.gr.lit_key[id(lit)] in self.plan.intensional

    def _lo(self, lit: ExtAtom) -> int:
        return self.win.span(lit.window, lit.op)

    def relation(self, lit: ExtAtom) -> set[tuple]:
        """Tuples of the literal's pattern that could hold (intensional: over the
        atoms that could hold so far)."""
        pred = self.gr.lit_key[id(lit)]
        if pred not in self.plan.intensional:
            return self.win.relation(lit)
        return derived_relation(self.possible[pred], pred in self.plan.timed, lit.op, self._lo(lit), self.t)

    def atom_of(self, lit: ExtAtom, tup: tuple) -> tuple | None:
        """The TMS atom for an intensional literal matched by ``tup`` (None: false)."""
        pred = self.gr.lit_key[id(lit)]
        t = self.t
        if pred not in self.plan.timed:
            if lit.op is Op.AT and (type(tup[-1]) is not int or tup[-1] != t):
                return None
            if lit.op is Op.BOX and self._lo(lit) != t:
                return None
            return (pred, tup[:-1] if lit.op is Op.AT else tup)
        if lit.op is Op.NOW:
            return (pred, tup + (t,))
        if lit.op is Op.AT:
            lo = self._lo(lit)
            return (pred, tup) if type(tup[-1]) is int and lo <= tup[-1] <= t else None
        kind = "#dia" if lit.op is Op.DIAMOND else "#box"
        key = (kind, self.ci, pred, self._lo(lit), tup)  # (each component defines its own)
        self.aux[key] = (kind, pred, self._lo(lit), tup)
        return key

    # -------------------------------------------------------- rules

    def run(self) -> list[tuple[set[GroundRule], set[GroundRule]]]:
        """The ground rules that changed, as (removed, added) per component.

        Component by component (dependencies first); a component whose inputs —
        the stream literals of its rules, the atoms that could hold of the lower
        components it reads, the time if its rules depend on it — are those of the
        previous time point keeps its ground rules and costs nothing (most of a
        window's content does not change from one point to the next).  A
        ``_deltable`` component of which one stream relation changed grounds
        only the instances that use a tuple added to it or removed from it."""
        changes: list[tuple[set[GroundRule], set[GroundRule]]] = []
        caches = self.gr.caches
        for ci, (preds, members, reads, literals, timely, deltable) in enumerate(self.gr.components):
            signature = (
                self.t1, self.t if timely else self.t == self.t1,
                tuple(self.win.relation(lit) for lit in literals),
                tuple(self.possible[p] for p in reads),
            )
            cached = caches.get(ci)
            if cached is not None and cached[0] == signature:
                self.possible.update(cached[2])
                continue
            if deltable and cached is not None and self.gr.delta:
                got = self._delta(ci, members, literals, cached, signature)
                if got is not None:
                    changes.append(got)
                    continue
            self.ci, self.out, self.aux = ci, {}, {}
            self.heads = {} if deltable else None
            self._component(members, preds)
            finished = self._finish()
            counts = None
            if deltable:
                rules: dict[GroundRule, int] = {}
                for raw, n in self.out.items():
                    f = self._finished(raw)
                    rules[f] = rules.get(f, 0) + n
                counts = (rules, self.heads)
            caches[ci] = (signature, finished, {p: self.possible[p] for p in preds}, counts)
            old = set() if cached is None else cached[1]
            changes.append((old - finished, finished - old))
        return changes

    def _delta(
        self, ci: int, members: list[int], literals: list[ExtAtom], cached: tuple, signature: tuple,
    ) -> tuple[set[GroundRule], set[GroundRule]] | None:
        """(removed, added) ground rules of a ``_deltable`` component whose inputs
        differ from the cached ones in one positive stream literal's relation
        only (None: ground it whole).  Each ground rule and each head counts the
        instances giving it, so a rule leaves when its last instance does."""
        before = cached[0]
        if before[:2] != signature[:2] or before[3] != signature[3]:
            return None
        differ = [k for k, (a, b) in enumerate(zip(before[2], signature[2])) if a is not b and a != b]
        if len(differ) != 1:
            return None
        lit = literals[differ[0]]
        orders = self.gr._orders
        spots = [(i, j) for i in members for j, b in enumerate(orders[i]) if isinstance(b, ExtAtom) and b == lit]
        if lit.negated or len({i for i, _ in spots}) != len(spots):
            return None  # (a literal twice in one rule: its instances are not one per changed tuple)
        old, new = before[2][differ[0]], signature[2][differ[0]]
        ground, finished, kept, (counted, heads) = cached
        touched: set[GroundRule] = set()
        moved: set[tuple] = set()
        for rows, sign in ((old - new, -1), (new - old, 1)):
            if not rows:
                continue
            self.ci, self.out, self.aux, self.heads = ci, {}, {}, {}
            for i, j in spots:
                self._instances(i, self.gr.rules[i], orders[i], (j, rows), {})
            rules: dict[GroundRule, int] = {}
            for raw, n in self.out.items():
                f = self._finished(raw)
                rules[f] = rules.get(f, 0) + n
            touched |= _tally(counted, rules, sign)
            moved |= _tally(heads, self.heads, sign)
        self.heads = None
        removed = {f for f in touched if f in finished and f not in counted}
        added = {f for f in touched if f not in finished and f in counted}
        finished -= removed
        finished |= added
        possible = {p: set(rows) for p, rows in kept.items()}  # (new sets: others' signatures hold the old)
        for pred, tup in moved:
            if (pred, tup) in heads:
                possible[pred].add(tup)
            else:
                possible[pred].discard(tup)
        self.possible.update(possible)
        self.gr.caches[ci] = (signature, finished, possible, (counted, heads))
        return removed, added

    def _component(self, members: list[int], preds: set[PredKey]) -> None:
        """Semi-naive grounding of the rules ``members`` deriving ``preds``."""
        rules = self.gr.rules
        orders = self.gr._orders
        delta: dict[PredKey, set[tuple]] = {}
        for i in members:
            self._instances(i, rules[i], orders[i], None, delta)
        while any(delta.values()):
            new: dict[PredKey, set[tuple]] = {}
            for pred, rows in delta.items():
                self.possible[pred] |= rows
            for i in members:
                for j, b in enumerate(orders[i]):
                    if isinstance(b, ExtAtom) and not b.negated and delta.get(self.gr.lit_key[id(b)]):
                        self._instances(i, rules[i], orders[i], (j, delta), new)
            delta = {p: rows - self.possible[p] for p, rows in new.items()}

    def _instances(
        self, i: int, rule: Rule, order: list[object], focus: tuple[int, dict] | None, new: dict[PredKey, set[tuple]]
    ) -> None:
        """Ground ``rule`` over the possible atoms; with ``focus`` (j, delta) only the
        bindings where literal j matches a new atom (semi-naive).  The body is
        joined in a dynamic order: comparisons and negative literals as soon as
        their variables are bound, then the positive literal with the most bound
        positions and the fewest tuples."""
        pending: list[tuple[Binding, list, list]] = [({}, [], [])]
        todo = list(range(len(order)))
        bound: set[str] = set()
        rows_of: dict[int, set[tuple]] = {}

        def rows(j: int) -> set[tuple]:
            got = rows_of.get(j)
            if got is None:
                lit = order[j]
                if focus is not None and j == focus[0]:  # (a delta: given, or the new atoms of a round)
                    got = focus[1] if not isinstance(focus[1], dict) else self._delta_rows(lit, focus[1])
                else:
                    got = self.relation(lit)  # type: ignore[arg-type]
                rows_of[j] = got
            return got

        plan_key = (i, None if focus is None else focus[0])
        fixed = self.gr.join_orders.get(plan_key)  # the order chosen at the first call, kept
        chosen: list[int] = []
        while todo:
            if not pending:
                return
            j = fixed[len(chosen)] if fixed is not None else self._next(order, todo, bound, focus, rows)
            chosen.append(j)
            if len(chosen) == len(order) and fixed is None:
                self.gr.join_orders[plan_key] = chosen
            todo.remove(j)
            b = order[j]
            nxt: list[tuple[Binding, list, list]] = []
            if isinstance(b, Compare):
                for bind, pos, neg in pending:
                    got = self._compare(b, bind)
                    if got is not None:
                        nxt.append((got, pos, neg))
                bound |= expr_vars(b.left) | expr_vars(b.right)
            elif not b.negated:
                relation = rows(j)
                pattern = self.gr.lit_pattern[id(b)]
                intens = self._intensional(b)
                index, keyed = self._indexed(pattern, bound, relation)
                # the index matched the constant and bound positions; the others bind
                # variables (a variable repeated among them must match itself)
                free: list[tuple[int, str]] = []
                first: dict[str, int] = {}
                repeats: list[tuple[int, int]] = []
                for p, x in enumerate(pattern):
                    if isinstance(x, Var) and x.name != "_" and x.name not in bound:
                        if x.name in first:
                            repeats.append((p, first[x.name]))
                        else:
                            first[x.name] = p
                            free.append((p, x.name))
                for bind, pos, neg in pending:
                    if keyed:
                        candidates = index.get(tuple(x.value if isinstance(x, Const) else bind[x.name] for x in keyed), ())
                    else:
                        candidates = relation
                    for tup in candidates:
                        if repeats and not all(tup[p] == tup[q] and type(tup[p]) is type(tup[q]) for p, q in repeats):
                            continue
                        got = dict(bind)
                        for p, name in free:
                            got[name] = tup[p]
                        if intens:
                            atom = self.atom_of(b, tup)
                            if atom is None:
                                continue
                            nxt.append((got, pos + [(j, atom)], neg))
                        else:
                            nxt.append((got, pos, neg))
                bound |= {v for v in b.variables() if v != "_"}
            else:
                for bind, pos, neg in pending:
                    got = self._negative(b, bind)
                    if got is False:
                        continue  # the negated literal is certainly false: no instance
                    nxt.append((bind, pos, neg + [got] if got is not True else neg))
            pending = nxt
        for bind, pos, neg in pending:
            self._emit(i, rule, bind, [a for _, a in sorted(pos, key=lambda x: x[0])], neg, new)

    @staticmethod
    def _next(order: list, todo: list[int], bound: set[str], focus: tuple | None, rows) -> int:  # noqa: ANN001
        best, score = None, None
        for j in todo:
            b = order[j]
            if isinstance(b, Compare):
                left, right = expr_vars(b.left), expr_vars(b.right)
                if left | right <= bound or (b.op == "=" and (
                        (isinstance(b.left, Var) and right <= bound) or (isinstance(b.right, Var) and left <= bound))):
                    return j
            elif b.negated:
                if {v for v in b.variables() if v != "_"} <= bound:
                    return j
            elif focus is not None and j == focus[0]:
                return j
            else:
                pattern = _pattern(b)
                fixed = sum(1 for x in pattern if isinstance(x, Const) or (x.name != "_" and x.name in bound))
                mine = (-fixed if fixed else 1, len(rows(j)))
                if score is None or mine < score:
                    best, score = j, mine
        return best if best is not None else todo[0]

    def _indexed(self, pattern: Sequence[Term], bound: set[str], rows: set[tuple]) -> tuple[dict, list[Term]]:
        """``_index``, kept for the rest of this grounding while ``rows`` does not
        change (the entry holds ``rows``, so its id is not reused meanwhile)."""
        positions = tuple(i for i, x in enumerate(pattern) if isinstance(x, Const) or (x.name != "_" and x.name in bound))
        key = (id(rows), positions)
        got = self._indexes.get(key)
        if got is not None and got[0] is rows and got[1] == len(rows):
            return got[2], [pattern[i] for i in positions]
        index, keyed = _index(pattern, bound, rows)
        self._indexes[key] = (rows, len(rows), index)
        return index, keyed

    def _delta_rows(self, lit: ExtAtom, delta: dict[PredKey, set[tuple]]) -> set[tuple]:
        pred = lit.atom.key
        rows = delta.get(pred, set())
        before = self.possible[pred] - rows
        saved = self.possible[pred]
        self.possible[pred] = before
        old = self.relation(lit)
        self.possible[pred] = saved
        return self.relation(lit) - old

    def _compare(self, c: Compare, b: Binding) -> Binding | None:
        for var, other in ((c.left, c.right), (c.right, c.left)):
            if c.op == "=" and isinstance(var, Var) and var.name not in b:
                try:
                    value = _eval(other, b)
                except (_Undefined, KeyError):
                    return None
                out = dict(b)
                out[var.name] = value
                return out
        try:
            return b if _compare(c.op, _eval(c.left, b), _eval(c.right, b)) else None
        except (_Undefined, KeyError):
            return None

    def _negative(self, lit: ExtAtom, b: Binding) -> object:
        """True: the negated literal certainly holds; False: certainly not; else the
        TMS atom it negates (decided at the end against what could hold)."""
        pattern = _pattern(lit)
        tup = tuple(b.get(x.name, None) if isinstance(x, Var) else x.value for x in pattern)
        wild = any(isinstance(x, Var) and x.name == "_" for x in pattern)
        if not self._intensional(lit):
            rows = self.win.relation(lit)
            if wild:
                found = any(_unify(pattern, r, b) is not None for r in rows)
            else:
                found = tup in rows
            return not found
        if wild:
            number = self.gr.literal_ids.setdefault(lit, len(self.gr.literal_ids))
            key = ("#ex", self.ci, number, tuple(b.get(v) for v in sorted(lit.variables() - {"_"})))
            self.aux[key] = ("#ex", lit, b)
            return key
        atom = self.atom_of(lit, tup)
        return True if atom is None else ("#neg", atom)

    def _emit(self, i: int, rule: Rule, b: Binding, pos: list, neg: list, new: dict[PredKey, set[tuple]]) -> None:
        head = rule.head
        pred = self.gr.head_keys[i]
        try:
            args = tuple(b[x.name] if isinstance(x, Var) else x.value for x in head.atom.args)
            T = None if head.time is None else (b[head.time.name] if isinstance(head.time, Var) else head.time.value)
        except KeyError:
            return
        if pred in self.plan.timed:
            if T is None:
                T = self.t
            if type(T) is not int or not self.t1 <= T <= self.t:
                self._put((None, tuple(pos), tuple(neg)))  # an @-head off the timeline: no answer set
                return
            tup = args + (T,)
            hkey: tuple = (pred, tup)
            if pred in self.gr.padded and head.time is not None and not self.gr.hidden[i]:
                self._put((("#user", pred, tup), tuple(pos), tuple(neg)))
                self._put((hkey, (("#user", pred, tup),), ()))
                self._possible(pred, tup, new)
                return
        else:
            tup = args
            hkey = (pred, tup)
        self._put((hkey, tuple(pos), tuple(neg)))
        self._possible(pred, tup, new)

    def _put(self, rule: GroundRule) -> None:
        self.out[rule] = self.out.get(rule, 0) + 1

    def _possible(self, pred: PredKey, tup: tuple, new: dict[PredKey, set[tuple]]) -> None:
        if self.heads is not None:
            self.heads[(pred, tup)] = self.heads.get((pred, tup), 0) + 1
        if tup not in self.possible[pred]:
            new.setdefault(pred, set()).add(tup)

    # -------------------------------------------------------- closing

    def _could_hold(self, atom: tuple) -> bool:
        if atom[0] in ("#dia", "#box", "#ex", "#user"):
            return True
        return atom[1] in self.possible[atom[0]]

    def _finished(self, rule: GroundRule) -> GroundRule:
        """The rule as the TMS takes it: negated atoms that cannot hold dropped."""
        head, pos, neg = rule
        kept = tuple(a[1] for a in neg if a[0] == "#neg" and self._could_hold(a[1])) + tuple(
            a for a in neg if a[0] == "#ex"
        )
        return head, pos, tuple(sorted(set(kept), key=repr))

    def _finish(self) -> set[GroundRule]:
        out = {self._finished(rule) for rule in self.out}
        done: set[tuple] = set()
        while len(done) < len(self.aux):  # (an #ex over a window can add #dia atoms)
            for key in [k for k in self.aux if k not in done]:
                done.add(key)
                self._aux_rules(key, self.aux[key], out)
        return out

    def _aux_rules(self, key: tuple, info: tuple, out: set[GroundRule]) -> None:
        """The rules defining an auxiliary atom (diamond, box, `not p(_)`)."""
        kind = info[0]
        if kind == "#ex":
            _, lit, b = info
            pattern = _pattern(lit)
            for tup in self.relation(lit):
                if _unify(pattern, tup, b) is not None:
                    atom = self.atom_of(lit, tup)
                    if atom is not None:
                        out.add((key, (atom,), ()))
            return
        _, pred, lo, args = info
        times = [T for T in range(lo, self.t + 1) if args + (T,) in self.possible[pred]]
        if kind == "#dia":
            for T in times:
                out.add((key, ((pred, args + (T,)),), ()))
        elif len(times) == self.t - lo + 1:
            out.add((key, tuple((pred, args + (T,)) for T in times), ()))


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

    def inherit(self, previous: TmsEngine, begin: int) -> None:
        """After a replay from ``begin``: the labels before it are the previous engine's."""
        self.history = {t: labels for t, labels in previous.history.items() if t < begin} | self.history
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
        and the history of labels as changes per time point (what replays follow)."""
        changes = []
        before: frozenset = frozenset()
        for t in sorted(self.history):
            now = self.history[t]
            if now is not before:
                changes.append([t, [_key_data(k) for k in sorted(now - before, key=repr)],
                                [_key_data(k) for k in sorted(before - now, key=repr)]])
            before = now
        return {"t": self.t, "consistent": self.consistent, "in": sorted((_key_data(k) for k in self.tms.model()), key=repr),
                "history": changes, "first": min(self.history, default=None)}

    @staticmethod
    def labels_history(data: dict[str, Any]) -> dict[int, frozenset]:
        """``export_labels``'s history back as labels per time point."""
        out: dict[int, frozenset] = {}
        first, last = data.get("first"), data.get("t")
        if first is None or last is None:
            return out
        changes = {int(t): (added, removed) for t, added, removed in data.get("history", [])}
        labels: frozenset = frozenset()
        for t in range(int(first), int(last) + 1):
            if t in changes:
                added, removed = changes[t]
                labels = (labels - {_key_from(x) for x in removed}) | {_key_from(x) for x in added}
            out[t] = labels
        return out

    def import_labels(self, data: dict[str, Any]) -> bool:
        """Continue with a checkpoint's labels if they are an answer set of the rules
        grounded here at the same time point (True); else keep this engine's.  (The
        reasoner rebuilt this engine following the checkpoint's history, so they
        normally agree already.)"""
        self.guide = None  # (the rebuild that followed the checkpoint's history is over)
        if data.get("t") != self.t or not data.get("consistent") or not self.consistent:
            return False
        keys = [_key_from(x) for x in data["in"]]
        if not self.tms.adopt(keys):
            return False
        self._now, self._timed = self._answer_now(self.t) if self.t is not None else (set(), set())
        self.history.update(self.labels_history(data))
        return True


def _tally(counts: dict, changes: dict, sign: int) -> set:
    """Add ``sign`` times each count of ``changes`` to ``counts`` (dropping zeros); the keys touched."""
    for key, n in changes.items():
        left = counts.get(key, 0) + sign * n
        if left:
            counts[key] = left
        else:
            del counts[key]
    return set(changes)


def _by_pred(added: set, removed: set, split: Any) -> dict[PredKey, tuple[list, list]]:
    """Changes grouped per predicate; ``split`` maps one to (pred, args)."""
    out: dict[PredKey, tuple[list, list]] = {}
    for sign, atoms in ((0, added), (1, removed)):
        for x in atoms:
            p, args = split(x)
            out.setdefault(p, ([], []))[sign].append(args)
    return out


def _key_data(key: object) -> Any:
    """A TMS atom key as JSON data: tuples become lists tagged so they come back as tuples."""
    if type(key) is tuple:
        return {"tuple": [_key_data(x) for x in key]}
    return key


def _key_from(data: Any) -> Any:
    if isinstance(data, dict):
        if "tuple" in data:
            return tuple(_key_from(x) for x in data["tuple"])
        raise ValueError("unknown key encoding")
    return data
