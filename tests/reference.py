"""A deliberately naive reference evaluator for stratified LARS programs.

Written for obviousness, not speed: for every time point t of the stream it
evaluates the program from scratch on the timeline [t1, t] with the whole
history (../shared/spec/LARS.md), stratum by stratum, each stratum by a naive
fixpoint over timed atoms (pred, args, T).  No clingo, no incrementality.
Tests compare the real engines against it.

Only in-order streams without retractions (the caller sorts and filters).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import replace

from chronolog.core.events import Event, withdrawn
from chronolog.dialects.lars.hooks import lars_parse
from chronolog.dialects.lars.ir import (
    Atom,
    BinOp,
    Compare,
    Const,
    Expr,
    ExtAtom,
    Op,
    Program,
    Rule,
    Term,
    TimeWindow,
    TupleWindow,
    Var,
)

TimedAtom = tuple[str, tuple, int]  # (pred, args, time)
Env = dict[str, object]


class NotStratified(ValueError):
    pass


class Unsafe(ValueError):
    pass


# ---------------------------------------------------------------- public


def reference_answers(program: Program, events: Iterable, until: int | None = None) -> set[TimedAtom]:
    """Union over every t in [t1, last (or until)] of the output atoms at t
    (see ``answer_at``).

    ``events``: chronolog.core.events.Event objects (time markers allowed) or
    ``(t, pred, args)`` tuples, in time order.
    """
    facts, times = _normalise(events)
    if not times:
        return set()
    t1 = min(times)
    last = max(times) if until is None else until
    result: set[TimedAtom] = set()
    for t in range(t1, last + 1):
        result |= answer_at(program, [f for f in facts if f[2] <= t], t1, t)
    return result


def answer_at(program: Program, facts: list[TimedAtom], t1: int, t: int) -> set[TimedAtom]:
    """Output atoms of the (unique) answer set at t; empty if there is none.

    The output atoms: atoms of output predicates (heads of rules with a
    non-empty body) that hold at t, and those derived at other times through
    @-heads.

    ``facts``: the stream facts (pred, args, time) with time <= t, in stream order.
    """
    rules = [_rename_anonymous(r) for r in program.rules]
    timeline = range(t1, t + 1)
    db: set[TimedAtom] = {f for f in facts if f[2] in timeline}
    ctx = _Context(t1=t1, t=t, facts=[f for f in facts if f[2] in timeline])

    at_derived: set[TimedAtom] = set()  # atoms derived by @-heads

    # program facts: at every point of the timeline (an @-fact at its time)
    for r in rules:
        if r.is_fact:
            for atom in _heads(r, {}, ctx):
                if atom is None:
                    return set()  # @-time off the timeline: no answer set
                db.add(atom)
                if r.head.time is not None:
                    at_derived.add(atom)

    for stratum in stratify(program):
        stratum_rules = [r for r in rules if not r.is_fact and r.head.atom.key in stratum]
        while True:  # naive fixpoint
            new: set[TimedAtom] = set()
            for r in stratum_rules:
                for env in _body_matches(r.body, db, ctx):
                    for atom in _heads(r, env, ctx):
                        if atom is None:
                            return set()
                        new.add(atom)
                        if r.head.time is not None:
                            at_derived.add(atom)
            if new <= db:
                break
            db |= new

    # the output at t (CONTRACT section 3): atoms of output predicates holding
    # at t, and those derived through @-heads, with their times
    outputs = {r.head.atom.key for r in program.rules if not r.is_fact}
    return {a for a in db if (a[0], len(a[1])) in outputs and (a[2] == t or a in at_derived)}


def stratify(program: Program) -> list[set[tuple[str, int]]]:
    """Intensional predicates grouped into strata, lowest first.

    A predicate's stratum is >= those of its positive body predicates and >
    those of its negated ones; raises NotStratified on a negative cycle.
    """
    heads = {r.head.atom.key for r in program.rules}
    level = {k: 0 for k in heads}
    changed = True
    while changed:
        changed = False
        for r in program.rules:
            h = r.head.atom.key
            for b in r.body:
                if isinstance(b, ExtAtom) and b.atom.key in heads:
                    need = level[b.atom.key] + (1 if b.negated else 0)
                    if level[h] < need:
                        level[h] = need
                        changed = True
                        if need > len(heads):
                            raise NotStratified(f"negation cycle through {h[0]}/{h[1]}")
    return [{k for k in heads if level[k] == i} for i in range(max(level.values(), default=-1) + 1)]


# ---------------------------------------------------------------- internals


class _Context:
    def __init__(self, t1: int, t: int, facts: list[TimedAtom]):
        self.t1, self.t, self.facts = t1, t, facts

    def window(self, window, db: set[TimedAtom]) -> tuple[range, set[TimedAtom]]:
        """(range of time points, atoms visible) of a window at t."""
        if isinstance(window, TupleWindow):
            n = window.size
            selected = self.facts[-n:]  # every fact event counts, duplicates too
            start = selected[0][2] if len(selected) >= n else self.t1
            return range(start, self.t + 1), set(selected)
        if isinstance(window, TimeWindow):
            return range(max(self.t1, self.t - window.size), self.t + 1), db
        return range(self.t1, self.t + 1), db  # no window: the whole timeline


def _normalise(events: Iterable) -> tuple[list[TimedAtom], list[int]]:
    facts: list[TimedAtom] = []
    times: list[int] = []
    for e in events:
        if isinstance(e, Event):
            if e.retract:
                raise ValueError("the reference evaluator takes no retractions")
            times.append(e.t)
            if e.is_fact:
                facts.append((e.pred, tuple(e.args), e.t))
        else:
            t, pred, args = e
            times.append(t)
            facts.append((pred, tuple(args), t))
    if any(a[2] > b[2] for a, b in zip(facts, facts[1:])):
        raise ValueError("the reference evaluator takes events in time order")
    return facts, times


_fresh = itertools.count()


def _rename_anonymous(rule: Rule) -> Rule:
    """Each ``_`` becomes a distinct variable (bound and forgotten)."""

    def term(x: Term) -> Term:
        return Var(f"_anon{next(_fresh)}") if isinstance(x, Var) and x.name == "_" else x

    body = []
    for b in rule.body:
        if isinstance(b, ExtAtom):
            atom = Atom(b.atom.pred, tuple(term(a) for a in b.atom.args))
            b = replace(b, atom=atom, time=term(b.time) if b.time is not None else None)
        body.append(b)
    return replace(rule, body=tuple(body))


def _unify(terms: tuple[Term, ...], values: tuple, env: Env) -> Env | None:
    if len(terms) != len(values):
        return None
    env = dict(env)
    for term, value in zip(terms, values):
        if isinstance(term, Const):
            if not _same(term.value, value):
                return None
        elif term.name in env:
            if not _same(env[term.name], value):
                return None
        else:
            env[term.name] = value
    return env


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b


def _ext_matches(e: ExtAtom, env: Env, db: set[TimedAtom], ctx: _Context) -> Iterator[Env]:
    """Every extension of env under which the extended atom (un-negated) holds."""
    points, visible = ctx.window(e.window, db)
    pred, arity = e.atom.key
    candidates = [a for a in visible if a[0] == pred and len(a[1]) == arity]
    if e.op is Op.NOW:
        for _, args, time in candidates:
            if time == ctx.t:
                env2 = _unify(e.atom.args, args, env)
                if env2 is not None:
                    yield env2
    elif e.op is Op.DIAMOND:
        for _, args, time in candidates:
            if time in points:
                env2 = _unify(e.atom.args, args, env)
                if env2 is not None:
                    yield env2
    elif e.op is Op.BOX:
        holding = {(args, time) for _, args, time in candidates}
        for args in {args for args, _ in holding}:
            if all((args, T) in holding for T in points):
                env2 = _unify(e.atom.args, args, env)
                if env2 is not None:
                    yield env2
    elif e.op is Op.AT:
        for _, args, time in candidates:
            if time in points:
                env2 = _unify(e.atom.args + (e.time,), args + (time,), env)
                if env2 is not None:
                    yield env2
    else:
        raise ValueError(e.op)


def _eval(e: Expr, env: Env):
    """Value of an expression, or None if undefined (arithmetic on non-ints, x/0)."""
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Var):
        return env[e.name]
    a, b = _eval(e.left, env), _eval(e.right, env)
    if type(a) is not int or type(b) is not int:
        return None
    if e.op == "+":
        return a + b
    if e.op == "-":
        return a - b
    if e.op == "*":
        return a * b
    if b == 0:
        return None
    q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # toward zero
    return q if e.op == "/" else a - b * q


def _compare(c: Compare, env: Env) -> bool:
    a, b = _eval(c.left, env), _eval(c.right, env)
    if a is None or b is None:
        return False
    if c.op == "=":
        return _same(a, b)
    if c.op == "!=":
        return not _same(a, b)
    if type(a) is not int or type(b) is not int:
        return False
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[c.op]


def _bound(e: Expr, env: Env) -> bool:
    if isinstance(e, Var):
        return e.name in env
    if isinstance(e, BinOp):
        return _bound(e.left, env) and _bound(e.right, env)
    return True


def _body_matches(body, db: set[TimedAtom], ctx: _Context) -> Iterator[Env]:
    """Every variable assignment satisfying the body: positive extended atoms
    first (they bind), then comparisons (``X = e`` assigns an unbound X),
    then negated extended atoms (which must find no match)."""
    positive = [b for b in body if isinstance(b, ExtAtom) and not b.negated]
    negative = [b for b in body if isinstance(b, ExtAtom) and b.negated]
    compares = [b for b in body if isinstance(b, Compare)]

    envs: list[Env] = [{}]
    for e in positive:
        envs = [env2 for env in envs for env2 in _ext_matches(e, env, db, ctx)]

    for env in envs:
        todo = list(compares)
        ok = True
        while todo and ok:
            for c in todo:
                if _bound(c.left, env) and _bound(c.right, env):
                    ok = _compare(c, env)
                elif c.op == "=" and isinstance(c.left, Var) and _bound(c.right, env):
                    value = _eval(c.right, env)
                    ok = value is not None
                    env = {**env, c.left.name: value}
                elif c.op == "=" and isinstance(c.right, Var) and _bound(c.left, env):
                    value = _eval(c.left, env)
                    ok = value is not None
                    env = {**env, c.right.name: value}
                else:
                    continue
                todo.remove(c)
                break
            else:
                raise Unsafe(f"comparisons with unbound variables: {', '.join(map(str, todo))}")
        if not ok:
            continue
        if all(not any(True for _ in _ext_matches(e, env, db, ctx)) for e in negative):
            yield env


def _value(term: Term, env: Env):
    if isinstance(term, Const):
        return term.value
    if term.name not in env:
        raise Unsafe(f"unbound variable {term.name} in a head")
    return env[term.name]


def _heads(rule: Rule, env: Env, ctx: _Context) -> list[TimedAtom | None]:
    """The head atoms of a rule instance; None for an @-time off the timeline."""
    head = rule.head
    args = tuple(_value(a, env) for a in head.atom.args)
    if head.time is None:
        times = range(ctx.t1, ctx.t + 1) if rule.is_fact else [ctx.t]
        return [(head.atom.pred, args, T) for T in times]
    T = _value(head.time, env)
    if type(T) is not int or not ctx.t1 <= T <= ctx.t:
        return [None]
    return [(head.atom.pred, args, T)]


def final_stream(events: list[dict]) -> list[TimedAtom]:
    """The facts of a stream of input records (CONTRACT §2) after its retractions (each
    withdraws the latest earlier equal event), in time order then arrival order."""
    by_time: dict[int, list[tuple[str, tuple]]] = {}
    for e in events:
        if "pred" not in e:
            continue
        fact = (e["pred"], tuple(e["args"]))
        kept = by_time.setdefault(e["t"], [])
        if e.get("op") == "retract":
            i = withdrawn(kept, fact)
            if i is not None:
                del kept[i]
        else:
            kept.append(fact)
    return [(pred, args, t) for t in sorted(by_time) for pred, args in by_time[t]]


def reference_splice(versions: list[tuple[int | None, str]], events: list[dict]) -> set[TimedAtom]:
    """A program upgraded at times T (``versions``: (T, program text), the first with None):
    the union over every evaluated point e of the output atoms that the program in force at
    e (the last one whose T is <= e) derives at e, dated anywhere (docs/reference/contract.md
    §6).  The points: from the stream's first time to its last."""
    facts = final_stream(events)
    times = [e["t"] for e in events]
    t1, last = min(times), max(times)
    programs = [(start, lars_parse([("p.lars", text)])) for start, text in versions]
    out: set[TimedAtom] = set()
    for e in range(t1, last + 1):
        program = [prog for start, prog in programs if start is None or start <= e][-1]
        out |= answer_at(program, [f for f in facts if f[2] <= e], t1, e)
    return out
