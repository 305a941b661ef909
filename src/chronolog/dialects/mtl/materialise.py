"""Materialisation of a DatalogMTL program over intervals: the least model, clipped to a span.

Facts are kept per predicate as ``{args: coalesced intervals}``.  Rule
bodies are evaluated by joining their literals (a metric literal's ground
instances carry the interval set where it holds); the body's interval set
is the intersection along the join, and the head's the result of its
operators.  Rounds are semi-naive at the level of ground atoms: after the
first round, a rule is only evaluated with one of its literals restricted to
the ground atoms whose intervals grew in the round before.  Everything is
clipped to the span ``[lo, hi]`` (CONTRACT §3: answers up to the last time of
the input), which makes recursion through time terminate.

**Negation** is stratified: ``not L`` holds where L does not, within the span
(the complement is bounded by it), and L's predicates are all complete when
it is read, because the rules run stratum by stratum (``strata``); a program
with recursion through ``not`` is refused naming the cycle.
"""

from __future__ import annotations

from collections.abc import Iterable

from chronolog.core.errors import ProgramError
from chronolog.dialects.mtl import intervals as I
from chronolog.dialects.mtl.intervals import Iv
from chronolog.dialects.mtl.syntax import Atom, Binary, Literal, MtlProgram, Negated, Rule, Unary, Var, atoms_of, head_atom

Key = tuple[str, int]
Db = dict[Key, dict[tuple, list[Iv]]]

_UNARY = {"Diamondminus": I.diamond_minus, "Diamondplus": I.diamond_plus,
          "Boxminus": I.box_minus, "Boxplus": I.box_plus}
_HEAD = {"Boxplus": I.diamond_minus, "Boxminus": I.diamond_plus}  # head P under the operator at t: P on t ± ρ


def apply_unary(op: str, rho: Iv, ivs: list[Iv]) -> list[Iv]:
    """The operator over coalesced intervals.  Every interval moves by the same
    ρ, so the order is kept: a box only shrinks them (still coalesced), a
    diamond widens them and neighbours may merge (one linear pass)."""
    fn = _UNARY[op]
    out = [x for x in (fn(iv, rho) for iv in ivs) if x is not None]
    return I.merge_sorted(out) if op.startswith("Diamond") and len(out) > 1 else out


def _vars(lit: Literal) -> list[str]:
    """The literal's variables in order of first appearance (the left operand of
    Since/Until adds none: its variables come from the right)."""
    seen: list[str] = []
    for a in (atoms_of(lit.right) + atoms_of(lit.left) if isinstance(lit, Binary) else atoms_of(lit)):
        for t in a.args:
            if isinstance(t, Var) and t.name not in seen:
                seen.append(t.name)
    return seen


def check_program(program: MtlProgram) -> None:
    """ProgramError for what the parser cannot see in one line: Since/Until
    operands that do not share variables, recursion through ``not``."""
    strata(program)
    for rule in program.rules:
        for lit in rule.body:
            for b in _binaries(lit):
                right = {t.name for a in atoms_of(b.right) for t in a.args if isinstance(t, Var)}
                left = {t.name for a in atoms_of(b.left) for t in a.args if isinstance(t, Var)}
                if left - right:
                    raise ProgramError(f"variable {sorted(left - right)[0]} of the left operand of {b.op} must "
                                       f"also occur in its right operand", b.loc)


def _binaries(lit: Literal) -> list[Binary]:
    if isinstance(lit, Binary):
        return [lit] + _binaries(lit.left) + _binaries(lit.right)
    if isinstance(lit, (Unary, Negated)):
        return _binaries(lit.operand)
    return []


def _name(key: Key) -> str:
    return f"{key[0]}/{key[1]}"


def strata(program: MtlProgram) -> list[list[Rule]]:
    """The rules by stratum of their head predicate, lowest first: a predicate
    read under ``not`` is complete before any rule reading it runs.
    ProgramError at the ``not`` of a cycle through negation."""
    edges: dict[Key, set[tuple[Key, bool]]] = {}  # body predicate -> (head predicate, through not)
    negations: list[tuple[Key, Key, Negated]] = []
    for rule in program.rules:
        head = head_atom(rule.head).key
        for lit in rule.body:
            for atom in atoms_of(lit):
                edges.setdefault(atom.key, set()).add((head, isinstance(lit, Negated)))
                if isinstance(lit, Negated):
                    negations.append((atom.key, head, lit))
    for below, head, lit in negations:
        path = _path(edges, head, below)
        if path is not None:
            cycle = " -> ".join(_name(k) for k in [below] + path)
            raise ProgramError(f"the program is not stratified: {_name(head)} depends on 'not {_name(below)}' and "
                               f"{_name(below)} depends on {_name(head)} ({cycle}); negation through recursion has "
                               f"no single least model", lit.loc)
    level: dict[Key, int] = {}
    changed = True
    while changed:  # terminates: without a cycle through not, levels are bounded by the number of predicates
        changed = False
        for body, heads in edges.items():
            for head, negative in heads:
                want = level.get(body, 0) + (1 if negative else 0)
                if level.get(head, 0) < want:
                    level[head] = want
                    changed = True
    out: dict[int, list[Rule]] = {}
    for rule in program.rules:
        out.setdefault(level.get(head_atom(rule.head).key, 0), []).append(rule)
    return [out[k] for k in sorted(out)]


def _path(edges: dict[Key, set[tuple[Key, bool]]], start: Key, goal: Key) -> list[Key] | None:
    """Predicates from ``start`` to ``goal`` along the dependency edges (breadth first), or None."""
    back: dict[Key, Key | None] = {start: None}
    todo = [start]
    while todo:
        node = todo.pop(0)
        if node == goal:
            path = [node]
            while back[path[-1]] is not None:
                path.append(back[path[-1]])  # type: ignore[arg-type]
            return path[::-1]
        for nxt, _ in edges.get(node, ()):
            if nxt not in back:
                back[nxt] = node
                todo.append(nxt)
    return None


def _match(atom: Atom, args: tuple, binding: dict) -> dict | None:
    got = dict(binding)
    for term, value in zip(atom.args, args):
        if isinstance(term, Var):
            old = got.get(term.name)
            if old is None:
                got[term.name] = value
            elif old != value:
                return None
        elif term != value:
            return None
    return got


def _ground(atom: Atom, binding: dict) -> tuple:
    return tuple(binding[t.name] if isinstance(t, Var) else t for t in atom.args)


class Materialiser:
    def __init__(self, program: MtlProgram, fired: dict[Key, int] | None = None) -> None:
        check_program(program)
        self.rules = program.rules
        # per head predicate: how many times its rules were fired (an upgrade's evaluation work,
        # which a test reads to see that an unchanged stratum is not evaluated again)
        self.fired: dict[Key, int] = {} if fired is None else fired
        # negated literals last: their variables are bound by the positive ones (the parser checks it)
        self.strata = [[Rule(r.head, tuple(sorted(r.body, key=lambda lit: isinstance(lit, Negated))), r.loc)
                        for r in rules] for rules in strata(program)]
        self.span: Iv = (0, True, 0, True)  # the span of the running materialisation (complements)
        self._applied: dict[tuple, list[Iv]] = {}  # operator results of this round (see _instances)

    # ------------------------------------------------------------ literals

    def _instances(self, lit: Literal, db: Db, binding: dict, only: dict | None,
                   near: tuple | None = None) -> Iterable[tuple[dict, list[Iv]]]:
        """(extended binding, intervals) of each ground instance of ``lit`` consistent
        with ``binding``; ``only``: the delta, {(key, args): the atom's maximal intervals
        that grew} — a plain atom (or an operator over it) is read there only: every
        operator distributes over maximal intervals, so whatever is new comes from them;
        ``near`` (lo, hi): a plain atom's instances holding nowhere in [lo, hi] are
        of no use (the join's intervals so far lie there)."""
        if isinstance(lit, Atom):
            rel = db.get(lit.key, {})
            bound = _ground_if_bound(lit, binding)
            items = [(bound, rel[bound])] if bound is not None and bound in rel else (
                [] if bound is not None else rel.items())
            for args, ivs in items:
                if only is not None:
                    ivs = only.get((lit.key, args))  # the delta: its intervals that grew last round
                    if ivs is None:
                        continue
                if near is not None and (ivs[-1][2] < near[0] or ivs[0][0] > near[1]):
                    continue
                got = _match(lit, args, binding)
                if got is not None:
                    yield got, ivs
            return
        if isinstance(lit, Negated):
            if only is None:  # never part of a delta: its predicates belong to lower strata
                out = I.subtract([self.span], self._value(lit.operand, db, binding))
                if out:
                    yield binding, out
            return
        if isinstance(lit, Unary):
            # the same operator over the same atom recurs across rules (ShortStop's Boxminus[1,1]Pos(V)
            # is in four): computed once a round, keyed by the fact list, which stays the same object
            # all round (only lists held by db: a computed operand's list could be freed and its id reused)
            cache = self._applied if type(lit.operand) is Atom else None
            for got, ivs in self._instances(lit.operand, db, binding, only):
                k = (lit.op, lit.rho, id(ivs))
                out = None if cache is None else cache.get(k)
                if out is None:
                    out = apply_unary(lit.op, lit.rho, ivs)
                    if cache is not None:
                        cache[k] = out
                if out:
                    yield got, out
            return
        for got, right in self._instances(lit.right, db, binding, None):
            left = self._value(lit.left, db, got)
            if only is not None and not (_touches(lit.right, got, only) or _touches(lit.left, got, only)):
                continue
            fn = I.since if lit.op == "Since" else I.until
            out = fn(left, right, lit.rho)
            if out:
                yield got, out

    def _value(self, lit: Literal, db: Db, binding: dict) -> list[Iv]:
        """The intervals of a literal whose variables are all bound."""
        got = list(self._instances(lit, db, binding, None))
        return I.coalesce(iv for _, ivs in got for iv in ivs) if len(got) != 1 else got[0][1]

    # ------------------------------------------------------------ rules

    @staticmethod
    def _body_span(rule: Rule, span: Iv, derive: Iv) -> Iv | None:
        """The times where the body can put the head inside ``derive``: the
        pre-image of ``derive`` under the head's operators, within ``span``.
        Starting the join there drops at once the ground instances with
        nothing new (a streaming step derives only its latest times)."""
        if derive == span:
            return span
        pre: Iv | None = derive
        head = rule.head
        while isinstance(head, Unary) and pre is not None:
            # P on t + ρ (Boxplus) comes from t in derive − ρ; P on t − ρ from derive + ρ
            pre = I.diamond_plus(pre, head.rho) if head.op == "Boxplus" else I.diamond_minus(pre, head.rho)
            head = head.operand
        return None if pre is None else I.intersect(pre, span)

    def _fire(self, rule: Rule, db: Db, span: Iv, derive: Iv, delta: dict | None, out: Db) -> None:
        positions = [None] if delta is None else [
            i for i, lit in enumerate(rule.body) if any((a.key, None) in delta for a in atoms_of(lit))]
        start = self._body_span(rule, span, derive)
        if start is None:
            return
        for pos in positions:
            partial: list[tuple[dict, list[Iv]]] = [({}, [start])]
            for i, lit in enumerate(rule.body):
                only = delta if (pos is not None and i == pos) else None
                nxt = []
                for binding, ivs in partial:
                    near = (ivs[0][0], ivs[-1][2]) if type(lit) is Atom else None
                    for got, lit_ivs in self._instances(lit, db, binding, only, near):
                        both = I.intersect_sets(ivs, lit_ivs)
                        if both:
                            nxt.append((got, both))
                partial = nxt
                if not partial:
                    break
            for binding, ivs in partial:
                head = rule.head
                result = ivs
                ops = []
                while isinstance(head, Unary):
                    ops.append(head)
                    head = head.operand
                for op in ops:
                    result = I.coalesce(x for x in (_HEAD[op.op](iv, op.rho) for iv in result) if x is not None)
                result = I.intersect_sets(result, [derive])
                if result:
                    atom = head_atom(rule.head)
                    key = _ground(atom, binding)
                    slot = out.setdefault(atom.key, {})
                    slot[key] = I.coalesce(slot.get(key, []) + result)

    def run(self, db: Db, span: Iv, derive: Iv | None = None) -> Db:
        """Add to ``db`` (in place) everything the rules derive within ``derive``
        (default: all of ``span``) from the facts in ``span``; return it.

        A streaming step derives only the times it has not evaluated yet: the
        facts before them are in ``db`` already (exact), and deriving again
        there from a window that starts mid-stream would read the window's
        cut as the input's start (a complement or Boxminus there is wrong)."""
        self.span = span
        for rules in self.strata:
            self._stratum(rules, db, span, span if derive is None else derive)
        return db

    def _stratum(self, rules: list[Rule], db: Db, span: Iv, derive: Iv) -> None:
        delta: dict | None = None
        while True:
            new: Db = {}
            self._applied = {}  # the facts change between rounds
            for rule in rules:
                if delta is not None and not any((a.key, None) in delta for lit in rule.body for a in atoms_of(lit)):
                    continue
                key = head_atom(rule.head).key
                self.fired[key] = self.fired.get(key, 0) + 1
                self._fire(rule, db, span, derive, delta, new)
            grown: dict = {}
            for key, rel in new.items():
                slot = db.setdefault(key, {})
                for args, ivs in rel.items():
                    old = slot.get(args)
                    merged = I.coalesce((old or []) + ivs)
                    if merged != old:
                        slot[args] = merged
                        before = set(old or ())
                        grown[(key, args)] = [iv for iv in merged if iv not in before]  # grew or new
                        grown[(key, None)] = True  # the predicate changed (which rules to fire)
            if not grown:
                return
            delta = grown


def _ground_if_bound(atom: Atom, binding: dict) -> tuple | None:
    out = []
    for t in atom.args:
        if isinstance(t, Var):
            if t.name not in binding:
                return None
            out.append(binding[t.name])
        else:
            out.append(t)
    return tuple(out)


def _touches(lit: Literal, binding: dict, only: dict) -> bool:
    for a in atoms_of(lit):
        g = _ground_if_bound(a, binding)
        if g is not None and (a.key, g) in only:
            return True
    return False


def facts_db(facts: Iterable[tuple[str, tuple, Iv]]) -> Db:
    db: Db = {}
    for pred, args, iv in facts:
        slot = db.setdefault((pred, len(args)), {})
        slot[args] = I.coalesce(slot.get(args, []) + [iv])
    return db
