"""The ground normal program of a LARS plan at one time point, for the TMS.

``LarsGrounder`` holds what is worked out once per plan (each rule's body
order, its components and whether a component can be grounded by its change
alone, ``_deltable``) and the previous grounding of each component;
``_Grounding`` is one grounding pass at ``t``: bottom-up and semi-naive over
the atoms that could hold, stream literals decided against the window
(``tms_relations.py``), auxiliary atoms for diamonds, boxes and ``not p(_)``,
and the change of each component's ground rules since ``t-1`` (what enters
and leaves the TMS).  Kept apart from ``tms_engine.py``, which drives the
TMS with these changes, because grounding is a function of the window
contents alone: a restarted engine grounds exactly the same rules.
"""

from __future__ import annotations

from collections.abc import Sequence

from chronolog.dialects.lars.engine.rules import _Undefined, compare
from chronolog.dialects.lars.engine.tms_relations import (
    Binding,
    GroundRule,
    _eval,
    _index,
    _pattern,
    _unify,
    _Window,
    derived_relation,
)
from chronolog.dialects.lars.ir import Compare, Const, ExtAtom, Op, Rule, Term, Var, expr_vars
from chronolog.dialects.lars.plan import Plan, PredKey


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
            return b if compare(c.op, _eval(c.left, b), _eval(c.right, b)) else None
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


def _tally(counts: dict, changes: dict, sign: int) -> set:
    """Add ``sign`` times each count of ``changes`` to ``counts`` (dropping zeros); the keys touched."""
    for key, n in changes.items():
        left = counts.get(key, 0) + sign * n
        if left:
            counts[key] = left
        else:
            del counts[key]
    return set(changes)
