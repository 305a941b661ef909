"""Why a DatalogMTL fact holds at T, or why not (``chronolog explain --why / --why-not``).

The facts are the input's (retractions applied) and the answers ``run`` writes, as maximal
intervals over rational time; a rule body's literals are read over them by the
materialiser's own ``_instances`` (the metric operators as the evaluator applies them).  A
derivation of P at T is a rule instance whose body holds at a time s with T in what its head
puts P on (s itself, or s ± ρ under a head's Boxminus/Boxplus), each premise with the
interval it holds on and the operator's range that applied (a Box's operand over its whole
range, a Since/Until's witness: its right operand at a time s in the range and its left one
throughout the stretch between s and T, a derived operand over a range by derivations whose
cited input derives it all along, ``_cover``), down to input facts with their input lines; of
several derivations (a Diamond's or a Since/Until's witness times among them), one with the
fewest rule applications.  A why-not entry proposes the input facts that might, each alone, derive its
atom (``missing_events``), and follows a failing literal over a derived atom down to why that
atom does not hold where it is read (``_nested``); a negated metric literal's why-not proposes
the input fact that makes it hold (``_blocking``).  The runtime names only what ``run``
confirms.  For an interval answer the explanation covers the maximal interval that
contains T.  Recursion is cut where a premise leads back to a fact and time already on the
path (recursion through time terminates because premises lie at other times).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from math import inf
from typing import Any, cast

from chronolog.core import intervals as I
from chronolog.core.events import Event, withdraw_counted
from chronolog.core.explanation import Node
from chronolog.dialects.mtl.intervals import diamond_minus, diamond_plus
from chronolog.dialects.mtl.materialise import Materialiser, facts_db
from chronolog.dialects.mtl.syntax import Atom, Binary, Literal, MtlProgram, Negated, Rule, Unary, Var, head_atom
from chronolog.evaluator import Time, atom_text, time_text

Fact = tuple[str, tuple]
Db = dict[tuple[str, int], dict[tuple, list[I.Iv]]]


class Facts:
    """The input facts (with their input lines) and the answers, as maximal intervals."""

    def __init__(self, program: MtlProgram, events: Iterable[Event], answers: dict[Fact, list[I.Iv]]) -> None:
        self.program = program
        counts: dict[tuple[str, tuple, I.Iv], int] = {}
        self.lines: dict[tuple[str, tuple, I.Iv], list[str]] = {}
        lo, hi = None, None
        for ev in events:
            iv = I.of_span(ev.span) if ev.span is not None else I.point(ev.t)
            ends = [ev.t] + ([iv[2]] if ev.pred is not None and iv[2] != inf else [])
            lo = min([*ends, lo]) if lo is not None else min(ends)
            hi = max([*ends, hi]) if hi is not None else max(ends)
            if ev.pred is None:
                continue
            key = (ev.pred, tuple(ev.args), iv)
            if ev.retract:
                if withdraw_counted(counts, key):
                    self.lines[key].pop()
                continue
            counts[key] = counts.get(key, 0) + 1
            self.lines.setdefault(key, []).append("" if ev.loc is None else str(ev.loc))
        self.span: I.Iv = (lo if lo is not None else 0, True, hi if hi is not None else 0, True)
        db: Db = {}
        for (pred, args, iv), n in counts.items():
            if n > 0:
                slot = db.setdefault((pred, len(args)), {})
                slot[args] = I.coalesce([*slot.get(args, []), iv])
        for fact in program.facts:
            slot = db.setdefault((fact.pred, len(fact.args)), {})
            slot[tuple(fact.args)] = I.coalesce([*slot.get(tuple(fact.args), []), fact.interval])
        self.heads = {head_atom(r.head).key for r in program.rules}
        for (pred, args), ivs in answers.items():
            slot = db.setdefault((pred, len(args)), {})
            slot[args] = I.coalesce([*slot.get(args, []), *ivs])
        self.db = db
        self.mat = Materialiser(program)
        self.mat.span = self.span
        self.memo: dict[tuple, Node] = {}  # why's nodes of this query
        # an input fact by how an event leaf names it (its atom and interval)
        self.leaf = {(atom_text(pred, args), I.text(iv)): (pred, args, iv) for pred, args, iv in counts}
        self.derived: dict[frozenset, Db] = {}  # ``derives``' materialisations of this query
        # every time an interval of the input or the answers starts or ends: between two of them
        # the same facts hold (a Diamond's witness is tried at them)
        self.ends = sorted({x for rows in db.values() for ivs in rows.values() for iv in ivs
                            for x in (iv[0], iv[2]) if x not in (inf, -inf)})

    def holding(self, fact: Fact, t: Any) -> I.Iv | None:
        """The maximal interval of ``fact`` that contains ``t``."""
        for iv in self.db.get((fact[0], len(fact[1])), {}).get(fact[1], []):
            if I.contains(iv, t):
                return iv
        return None

    def inputs(self, fact: Fact, within: I.Iv) -> list[tuple[I.Iv, str]]:
        """The input facts of ``fact`` meeting ``within``, with their input lines."""
        out = []
        for (pred, args, iv), lines in self.lines.items():
            if (pred, args) == fact and lines and I.intersect(iv, within) is not None:
                out += [(iv, line) for line in lines]
        for f in self.program.facts:
            if (f.pred, tuple(f.args)) == fact and I.intersect(f.interval, within) is not None:
                out.append((f.interval, "" if f.loc is None else f"{f.loc} (a program fact)"))
        return out

    def cited(self, node: Node) -> frozenset[tuple[str, tuple, I.Iv]]:
        """The input facts ``node``'s derivation cites (its event leaves)."""
        return frozenset(self.leaf[(n.atom, n.interval)] for n in _walk(node)
                         if n.kind == "event" and (n.atom, n.interval) in self.leaf)

    def derives(self, cited: frozenset[tuple[str, tuple, I.Iv]]) -> Db:
        """What the program derives from the input facts ``cited`` alone (and its own facts),
        over the input's span: the meaning ``run`` gives them (memoised)."""
        if cited not in self.derived:
            db = facts_db([*cited, *((f.pred, tuple(f.args), f.interval) for f in self.program.facts)])
            self.derived[cited] = Materialiser(self.program).run(db, self.span)
        return self.derived[cited]

    def instances(self, lit: Literal, binding: dict) -> list[tuple[dict, list[I.Iv]]]:
        return list(self.mat._instances(lit, self.db, binding, None))


def _ground(atom: Atom, b: dict) -> tuple:
    return tuple(b[t.name] if isinstance(t, Var) else t for t in atom.args)


def _rule_text(rule: Rule) -> str:
    where = f"{rule.loc.file}:{rule.loc.line}: " if rule.loc is not None else ""
    return where + f"{_lit_text(rule.head, {})} :- " + ", ".join(_lit_text(x, {}) for x in rule.body)


def _lit_text(lit: Literal, b: dict) -> str:
    if isinstance(lit, Atom):
        args = [str(b[t.name]) if isinstance(t, Var) and t.name in b else str(t) for t in lit.args]
        return lit.pred + (f"({','.join(args)})" if args else "")
    if isinstance(lit, Unary):
        return f"{lit.op}{I.text(lit.rho)}{_lit_text(lit.operand, b)}"
    if isinstance(lit, Binary):
        return f"{_lit_text(lit.left, b)} {lit.op}{I.text(lit.rho)} {_lit_text(lit.right, b)}"
    return f"not {_lit_text(lit.operand, b)}"


def _head_times(rule: Rule, t: Any) -> I.Iv:
    """The times s where a body that holds puts the head's atom at ``t``: s = t, or the
    pre-image of t under the head's Boxminus/Boxplus."""
    pre: I.Iv | None = I.point(t)
    head: Literal = rule.head
    while isinstance(head, Unary) and pre is not None:
        pre = diamond_plus(pre, head.rho) if head.op == "Boxplus" else diamond_minus(pre, head.rho)
        head = head.operand
    return pre if pre is not None else I.point(t)


def _body(facts: Facts, rule: Rule, b: dict, within: list[I.Iv],
          upto: int | None = None) -> list[tuple[dict, list[I.Iv], list]]:
    """(binding, the times the body — its first ``upto`` literals — holds within ``within``, and
    per literal its intervals) for each ground instance consistent with ``b``."""
    partial: list[tuple[dict, list[I.Iv], list]] = [(b, within, [])]
    order = sorted(range(len(rule.body)), key=lambda i: isinstance(rule.body[i], Negated))
    for i in order:
        if upto is not None and i >= upto:
            continue
        nxt = []
        for binding, ivs, used in partial:
            for got, lit_ivs in facts.instances(rule.body[i], binding):
                both = I.intersect_sets(ivs, lit_ivs)
                if both:
                    nxt.append((got, both, [*used, (i, lit_ivs)]))
        partial = nxt
        if not partial:
            break
    return [(binding, ivs, sorted(used)) for binding, ivs, used in partial]


def why(facts: Facts, fact: Fact, t: Any, every: bool = False, depth: int | None = None,
        path: frozenset = frozenset(), early: bool = False) -> Node:
    """The derivation of ``fact`` at ``t``: an input fact that holds it where there is one, else
    a smallest rule instance (fewest rule applications below, ``size``; ``every``: all of them).
    ``early``: a Diamond's witness the earliest of the smallest, not the latest (``_cover``).
    Memoised per query (``Facts.memo``): premises recur across the alternatives compared."""
    key = (fact, t, every, depth, path, early)
    if key not in facts.memo:
        facts.memo[key] = _why(facts, fact, t, every, depth, path, early)
    return facts.memo[key]


CYCLE = " (derived above: a cycle through time ends here)"


def size(node: Node) -> float:
    """The rule applications of a derivation (negated literals' why-not subtrees not counted);
    infinite where it ends in a cycle, which derives nothing, or leaves a stretch uncovered."""
    if node.kind == "atom" and (node.text.endswith(CYCLE) or node.text.endswith(UNCOVERED)):
        return inf  # (a stretch left uncovered: the facts cited may not derive it all along)
    return (node.kind == "rule") + sum(size(child) for child in node.children)


def _why(facts: Facts, fact: Fact, t: Any, every: bool, depth: int | None, path: frozenset, early: bool) -> Node:
    held = facts.holding(fact, t)
    name = f"{atom_text(*fact)} on {I.text(held)}" if held else f"{atom_text(*fact)} at {time_text(t)}"
    about = {"atom": atom_text(*fact), "time": t, "interval": I.text(held) if held else ""}
    key = (fact[0], len(fact[1]))
    if (fact, held) in path:
        return Node("atom", name + CYCLE, **about)
    if depth is not None and depth < 0:
        return Node("atom", f"{name} (cut at --depth)", **about)
    leaves = [Node("event", f"input {atom_text(*fact)} on {I.text(iv)}", where=line, atom=atom_text(*fact), interval=I.text(iv))
              for iv, line in facts.inputs(fact, I.point(t))]
    if key not in facts.heads:
        return Node("input", name, children=leaves, **about) if leaves else Node("input", f"{name}: no input fact holds it",
                                                                                   **about)
    options = []
    for rule in facts.program.rules:
        atom = head_atom(rule.head)
        if atom.key != key:
            continue
        b = _bind(atom, fact[1])
        if b is None:
            continue
        for binding, ivs, used in _body(facts, rule, b, [_head_times(rule, t)]):
            options.append((rule, binding, ivs, used))
    nodes = list(leaves)
    below = path | {(fact, held)}
    if every:
        nodes += [_instance(facts, rule, binding, ivs, used, t, every, None if depth is None else depth - 1, below,
                            name, about, early) for rule, binding, ivs, used in options]
    elif options and not leaves:
        # the first of the smallest (the rules' textual order), sized uncut: --depth only cuts the tree shown
        whole = [_instance(facts, *option, t, False, None, below, name, about, early) for option in options]
        k = min(range(len(whole)), key=lambda i: size(whole[i]))
        nodes.append(whole[k] if depth is None
                     else _instance(facts, *options[k], t, False, depth - 1, below, name, about, early))
    if not nodes:
        return Node("atom", f"{name}: in the answers, with no derivation found at {time_text(t)}", **about)
    if len(nodes) == 1:
        node = nodes[0]
        return node if node.kind == "rule" else Node("input", name, children=nodes, **about)
    return Node("alternatives", f"{name}: {len(nodes)} derivations", children=nodes, **about)


def _bind(atom: Atom, args: tuple) -> dict | None:
    b: dict = {}
    for term, v in zip(atom.args, args, strict=True):
        if isinstance(term, Var):
            if b.setdefault(term.name, v) != v:
                return None
        elif term != v:
            return None
    return b


def _instance(facts: Facts, rule: Rule, b: dict, ivs: list[I.Iv], used: list, t: Any, every: bool,
              depth: int | None, path: frozenset, name: str, about: dict[str, Any], early: bool = False) -> Node:
    head = (head_atom(rule.head).pred, _ground(head_atom(rule.head), b), t)  # the atom it derives, at t
    at = max(I.intersect(iv, _head_times(rule, t)) or iv for iv in ivs)  # where the body puts the head at t
    s = cast(Time, at[2] if at[2] != inf else at[0])
    children = []
    for i, lit_ivs in used:
        lit = rule.body[i]
        shown = _lit_text(lit, b)
        on = next((iv for iv in lit_ivs if I.contains(iv, s)), lit_ivs[0])
        if isinstance(lit, Negated):
            negated = Node("negated", f"{shown}: holds on {I.text(on)} (the operand does not)", atom=shown,
                           interval=I.text(on), negated=True)
            if isinstance(lit.operand, Atom):  # why the atom does not hold at s, rule by rule
                operand = (lit.operand.pred, _ground(lit.operand, b))
                negated.why_not = why_not(facts, operand, s).entries
                for entry in negated.why_not:  # a missing event must derive the operand at s
                    entry.goal = (*operand, s)
            else:  # a metric operand (a Since/Until, a Diamond, a Box): why it does not hold at s
                negated.why_not = [_blocking(facts, rule, b, lit.operand, s, head)]
            children.append(negated)
            continue
        children.append(_literal(facts, lit, b, s, on, every, depth, path, early))
    where = f"at {time_text(s)}" if at[0] == at[2] else f"on {I.text(at)}"
    return Node("rule", f"{name}: at {time_text(t)} by a rule whose body holds {where}", rule=_rule_text(rule), **about,
                bindings={k: v for k, v in b.items()}, children=children)


def _literal(facts: Facts, lit: Literal, b: dict, s: Any, on: I.Iv, every: bool, depth: int | None,
             path: frozenset, early: bool = False) -> Node:
    """How a positive body literal holds at ``s`` (on ``on``): a plain atom's or a Diamond's
    derivation at the time it was met, a Box's over its whole range, a Since/Until's witness."""
    shown = _lit_text(lit, b)
    if isinstance(lit, Binary):
        return _through(facts, lit, b, s, on, every, depth, path)
    node = Node("literal", f"{shown} holds on {I.text(on)}" + _range(lit, s), atom=shown, interval=I.text(on),
                window=_range(lit, s).strip(" ()"))
    premise = _premise(lit, b)
    if premise is None:
        return node
    fact, _ = premise
    if isinstance(lit, Unary) and lit.op.startswith("Box") and isinstance(lit.operand, Atom):
        node.children = _cover(facts, fact, _window(lit, s), every, depth, path)
        return node
    points = _witness_times(facts, fact, lit, s, early)
    if not every:  # the witness whose derivation is smallest (the latest of those, or earliest), sized uncut
        best = min(points, key=lambda p: size(why(facts, fact, p, False, None, path, early)), default=None)
        node.children += [] if best is None else [why(facts, fact, best, every, depth, path, early)]
        return node
    seen: dict[tuple, Node] = {}  # --all: each different smallest derivation over the witness times
    for p in points:  # (each smallest below: all of them at every level would multiply)
        got = why(facts, fact, p, False, depth, path)
        seen.setdefault((facts.cited(got), frozenset(n.rule for n in _walk(got))), got)
    if len(seen) > 1:
        node.children.append(Node("alternatives", f"{atom_text(*fact)}: {len(seen)} derivations within the window",
                                  children=list(seen.values()), atom=atom_text(*fact)))
    else:
        node.children += list(seen.values())
    return node


def _window(lit: Unary, s: Any) -> I.Iv:
    """The times a one-place operator at ``s`` reads: ``s`` minus its range (``...minus``), or plus it."""
    return _reach(lit.rho, s, lit.op.endswith("minus"))


def _reach(rho: I.Iv, s: Any, past: bool) -> I.Iv:
    """``s`` minus the range ``rho`` (``past``), or plus it."""
    lo, lc, hi, hc = rho
    return (s - hi, hc, s - lo, lc) if past else (s + lo, lc, s + hi, hc)


def _cover(facts: Facts, fact: Fact, span: I.Iv, every: bool, depth: int | None, path: frozenset) -> list[Node]:
    """Derivations of ``fact`` throughout ``span`` (a Box's range, a Since/Until's left stretch):
    a base predicate's input facts that meet it; a derived one's derivations, each at a time of
    ``span`` the input facts cited so far do not yet derive it on (the latest such time first),
    until they do throughout: what they derive is the program materialised on them alone
    (``Facts.derives``), so the cited facts derive ``fact`` over all of ``span`` by
    construction, not only at sample points.  At most ``COVER`` derivations (a guard: a stretch
    they do not cover says so)."""
    name = atom_text(*fact)
    if (fact[0], len(fact[1])) not in facts.heads:
        return [Node("event", f"input {name} on {I.text(iv)}", where=line, atom=name, interval=I.text(iv))
                for iv, line in facts.inputs(fact, span)]
    out: list[tuple[Any, Node]] = []
    cited: frozenset[tuple[str, tuple, I.Iv]] = frozenset()
    for _ in range(COVER):
        gaps = I.subtract([span], facts.derives(cited).get((fact[0], len(fact[1])), {}).get(fact[1], []))
        if not gaps:
            return _latest_first(out)
        point = _latest(gaps[-1], facts.ends)
        whole = why(facts, fact, point, every, None, path, True)  # (--depth only cuts the tree shown)
        mine = cited | facts.cited(whole)
        if mine == cited:  # it cites nothing new (a cycle): what is left is not covered
            break
        out.append((point, whole if depth is None else why(facts, fact, point, every, depth, path, True)))
        cited = mine
    return _latest_first(out) + [Node("atom", f"{name} throughout {I.text(span)}{UNCOVERED}", atom=name,
                                      interval=I.text(span))]


def _latest_first(nodes: list[tuple[Any, Node]]) -> list[Node]:
    return [node for _, node in sorted(nodes, key=lambda pair: pair[0], reverse=True)]


def _latest(iv: I.Iv, ends: list[Any]) -> Any:
    """A point of ``iv`` in its latest stretch: its right end where closed, else half-way to it
    from the latest of ``ends`` (where an interval starts or ends) before it in ``iv``."""
    if iv[3] or iv[2] == inf:
        return _inside(iv)
    k = bisect_left(ends, iv[2])
    before = ends[k - 1] if k > 0 and I.contains(iv, ends[k - 1]) else iv[0]
    if before == -inf:
        return iv[2] - 1
    return Fraction(before + iv[2]) / 2


def _inside(iv: I.Iv) -> Any:
    """The latest point of ``iv``: its right end where closed, else its middle (its only point)."""
    if iv[3] and iv[2] != inf:
        return iv[2]
    if iv[2] == inf:
        return iv[0] + 1 if iv[0] != -inf else 0
    return Fraction(iv[0] + iv[2]) / 2 if iv[0] != -inf else iv[2] - 1


COVER = 64  # at most the derivations that cover a stretch of a derived premise (a guard)
UNCOVERED = f": not covered by the derivations above (past {COVER}, or through a cycle)"


def _walk(node: Node) -> list[Node]:
    return [node, *(n for child in node.children for n in _walk(child))]


def _through(facts: Facts, lit: Binary, b: dict, t: Any, on: I.Iv, every: bool, depth: int | None,
             path: frozenset) -> Node:
    """A Since/Until literal at ``t`` with its witness: the right operand at a time s with
    ±(t − s) in the operator's range, and the left operand throughout the open stretch between
    s and t — of the witness times tried (``through_witnesses``: the nearest first), the one
    whose derivation is smallest (the nearest on a tie: the shortest stretch); ``every``: each
    different one, the smallest below it, as alternatives."""
    shown = _lit_text(lit, b)
    right = facts.mat._value(lit.right, facts.db, b)
    left = facts.mat._value(lit.left, facts.db, b)
    options = through_witnesses(left, right, lit.rho, t, lit.op == "Since", facts.ends)
    window = f"{lit.op} within {I.text(lit.rho)}"
    if not options:
        return Node("literal", f"{shown} holds on {I.text(on)} ({window})", atom=shown, interval=I.text(on),
                    window=window)
    if not every:  # sized uncut: --depth only cuts the tree shown
        whole = [_witnessed(facts, lit, b, t, on, option, False, None, path) for option in options]
        k = min(range(len(whole)), key=lambda i: size(whole[i]))
        return whole[k] if depth is None else _witnessed(facts, lit, b, t, on, options[k], False, depth, path)
    seen: dict[tuple, Node] = {}  # --all: each different smallest derivation over the witness times
    for option in options:
        got = _witnessed(facts, lit, b, t, on, option, False, depth, path)
        seen.setdefault((facts.cited(got), frozenset(n.rule for n in _walk(got))), got)
    if len(seen) == 1:
        return _witnessed(facts, lit, b, t, on, options[0], True, depth, path)
    return Node("literal", f"{shown} holds on {I.text(on)} ({window}: {len(seen)} witnesses)", atom=shown,
                interval=I.text(on), window=window,
                children=[Node("alternatives", f"{shown}: {len(seen)} derivations within the range",
                               children=list(seen.values()), atom=shown)])


def _witnessed(facts: Facts, lit: Binary, b: dict, t: Any, on: I.Iv, witness: tuple[Any, I.Iv, I.Iv | None],
               every: bool, depth: int | None, path: frozenset) -> Node:
    """A Since/Until literal at ``t`` by one witness (s, the right operand's interval there, the
    left operand's over the stretch)."""
    shown = _lit_text(lit, b)
    window = f"{lit.op} within {I.text(lit.rho)}"
    s, k, j = witness
    stretch: I.Iv = (s, False, t, False) if s <= t else (t, False, s, False)
    gap = abs(t - s)
    text = (f"{shown} holds on {I.text(on)} ({window}: {_lit_text(lit.right, b)} at {time_text(s)}, "
            f"{time_text(gap)} {'before' if s <= t else 'after'} {time_text(t)}"
            + ("" if s == t else f", {_lit_text(lit.left, b)} throughout {I.text(stretch)}") + ")")
    node = Node("literal", text, atom=shown, interval=I.text(on), window=window)
    first = _literal(facts, lit.right, b, s, k, every, depth, path)
    first.operand, first.time = "right", s
    first.text = first.text.replace(" holds on ", f" holds at {time_text(s)}, on ", 1)
    node.children.append(first)
    if s != t and j is not None:
        inner = _lit_text(lit.left, b)
        second = Node("literal", f"{inner} holds throughout {I.text(stretch)} (on {I.text(j)})", atom=inner,
                      interval=I.text(j), window=I.text(stretch), operand="left")
        if isinstance(lit.left, Atom):
            second.children = _cover(facts, (lit.left.pred, _ground(lit.left, b)), stretch, every, depth, path)
        node.children.append(second)
    return node


def through_witness(left: list[I.Iv], right: list[I.Iv], rho: I.Iv, t: Any,
                    past: bool) -> tuple[Any, I.Iv, I.Iv | None] | None:
    """(s, the right operand's interval holding s, the left operand's interval holding the open
    stretch between s and t; None: s = t) for ``left Since/Until[rho] right`` at ``t`` (Since:
    ``past``), s the nearest such time to t, or None where it does not hold at t (the
    semantics of ``mtl.intervals.since``)."""
    options = through_witnesses(left, right, rho, t, past)
    return options[0] if options else None


def through_witnesses(left: list[I.Iv], right: list[I.Iv], rho: I.Iv, t: Any, past: bool,
                      ends: Sequence[Any] = ()) -> list[tuple[Any, I.Iv, I.Iv | None]]:
    """The witnesses of ``left Since/Until[rho] right`` at ``t`` (as ``through_witness``), the
    nearest to t first: t itself where the right operand holds there and 0 is in the range;
    in each stretch of times s that would do, its end nearest t (just inside where open), each
    of ``ends`` (where an interval of the facts starts or ends: between two of them the same
    facts hold) inside it and a point between each two; at most ``WITNESSES``."""
    reach = _reach(rho, t, past)
    found: dict[Any, tuple[Any, I.Iv, I.Iv | None]] = {}
    for k in right:
        if I.contains(k, t) and I.contains(rho, 0):
            found.setdefault(t, (t, k, None))
        for j in left:
            # t within j's closure, s in k, in reach and in j's closure: (s, t) lies in j
            if not I.contains((j[0], True, j[2], True), t):
                continue
            part = I.intersect(k, reach)
            got = None if part is None else I.intersect(part, (j[0], True, j[2], True))
            if got is None:
                continue
            end, closed = (got[2], got[3]) if past else (got[0], got[1])
            near = end if closed else (got[0] + got[2]) / 2 if got[0] != got[2] else None
            for x in [near, *sorted(_stretch_points(got, ends), key=lambda x: abs(t - x))]:
                if x is not None and I.contains(got, x) and (x != t or I.contains(rho, 0)):
                    found.setdefault(x, (x, k, j if x != t else None))
    return sorted(found.values(), key=lambda w: abs(t - w[0]))[:WITNESSES]


def _premise(lit: Literal, b: dict) -> tuple[Fact, Literal] | None:
    """The atom a (unary or plain) literal reads, ground."""
    inner = lit
    while isinstance(inner, Unary):
        inner = inner.operand
    if isinstance(inner, Atom):
        return (inner.pred, _ground(inner, b)), lit
    if isinstance(inner, Binary) and isinstance(inner.right, Atom):
        return (inner.right.pred, _ground(inner.right, b)), lit
    return None


def _range(lit: Literal, s: Any) -> str:
    if isinstance(lit, Unary):
        window = _window(lit, s)
        kind = "some point" if lit.op.startswith("Diamond") else "every point"
        return f" ({kind} of {I.text(window)} at {time_text(s)}, range {I.text(lit.rho)})"
    if isinstance(lit, Binary):
        return f" ({lit.op} within {I.text(lit.rho)})"
    return ""


def _witness_times(facts: Facts, fact: Fact, lit: Literal, s: Any, early: bool = False) -> list[Any]:
    """The times where the premise ``fact`` holds for ``lit`` at ``s``, latest first: s itself
    for a plain atom; for a diamond, in each stretch of its window where the premise holds
    (latest first), the latest point, every time an interval starts or ends inside it and a
    point between each two (the same facts hold along one), at most ``WITNESSES``; ``early``:
    earliest first, from the earliest stretches."""
    if isinstance(lit, Atom):
        return [s]
    if not isinstance(lit, Unary):
        return []
    window = _window(lit, s)
    out: list[Any] = []
    held = facts.db.get((fact[0], len(fact[1])), {}).get(fact[1], [])
    for iv in held if early else reversed(held):
        part = I.intersect(iv, window)
        if part is None:
            continue
        points = {_inside(part), *_stretch_points(part, facts.ends)}
        out += sorted((x for x in points if I.contains(part, x)), reverse=not early)
        if len(out) >= WITNESSES:
            break
    return out[:WITNESSES]


WITNESSES = 16  # at most the witness times of a diamond tried for the smallest derivation


def _stretch_points(part: I.Iv, ends: Sequence[Any]) -> set[Any]:
    """Candidate witness times in ``part``: each of ``ends`` (where an interval of the facts
    starts or ends) inside it and a point between each two — between two of them the same
    facts hold, so one time stands for the stretch (the caller keeps those ``part`` contains)."""
    inside = [x for x in ends[bisect_left(ends, part[0]):bisect_right(ends, part[2])] if I.contains(part, x)]
    cuts = sorted({part[0], *inside, part[2]} - {inf, -inf})
    return {*inside, *(Fraction(a + b) / 2 for a, b in zip(cuts, cuts[1:], strict=False))}


def why_not(facts: Facts, fact: Fact, t: Any, nest: int = 2, path: frozenset = frozenset()) -> Node:
    """For each rule whose head matches ``fact``, its first body literal that fails for the
    fact's bindings at ``t``, with the input facts that might, each alone, derive it
    (``missing_events``) and, ``nest`` levels deep, why a derived atom that literal reads does
    not hold at the point it is read (``_nested``: its own entries, each to derive that atom)."""
    key = (fact[0], len(fact[1]))
    rules = []
    for rule in facts.program.rules:
        atom = head_atom(rule.head)
        b = _bind(atom, fact[1]) if atom.key == key else None
        if b is None:
            continue
        times = [_head_times(rule, t)]
        for k in range(1, len(rule.body) + 1):
            if _body(facts, rule, b, times, k):
                continue
            lit = rule.body[k - 1]
            reason = f"{_lit_text(lit, b)} does not hold at {_times(times[0])}"
            entry = Node("rule", f"fails at body element {k}: {reason}", rule=_rule_text(rule), bindings=dict(b),
                         literal=_lit_text(lit, {}), reason=reason, candidates=missing_events(facts, rule, b, times[0], k))
            if nest > 0 and times[0][0] == times[0][2]:
                ground = _body(facts, rule, b, times, k - 1) or [(b, [], [])]
                entry.why_not = _nested(facts, lit, [got for got, _, _ in ground], times[0][0], nest - 1,
                                        path | {(fact, t)}) or None
                # (an event that derives that atom there may derive this one too: ``run`` decides)
                entry.candidates += _lifted(entry.entries)
            rules.append(entry)
            break
        else:
            rules.append(Node("rule", "its body holds, yet the fact is not entailed there", rule=_rule_text(rule)))
    if not rules:
        if key not in facts.heads:
            return Node("none", f"{atom_text(*fact)} at {time_text(t)}: no input fact holds it, and no rule derives it")
        return Node("none", f"{atom_text(*fact)} at {time_text(t)}: no rule has a head that matches it")
    return Node("why-not", f"{atom_text(*fact)} does not hold at {time_text(t)}", why_not=rules, atom=atom_text(*fact),
                time=t)


FOLLOWED = 3  # the ground atoms (of the earlier literals' groundings) a nested why-not follows
GAPS = 2  # the stretches of a Box's range without its derived atom (the latest first) it follows


def _nested(facts: Facts, lit: Literal, bindings: list[dict], s: Any, nest: int, path: frozenset) -> list[Node]:
    """Why the derived atom a failing positive literal reads at ``s`` does not hold at the
    points it is read (``_read_points``), rule by rule, for each of ``bindings`` (the ways the
    literals before it hold: the first ``FOLLOWED`` different atoms) — each entry's missing
    event to derive that atom there (``Node.goal``, checked by ``run`` at any time: an interval
    dialect's answers are exact at every time).  None for an atom not ground, one that holds
    there already (a Since's left operand failing), or one on the path (a cycle).  Where more
    than one atom or point is followed, or a Box's point was chosen, each entry's text starts
    with the atom and the time it is about."""
    if isinstance(lit, Negated):
        return []
    inner: Literal = lit.operand if isinstance(lit, Unary) else lit.right if isinstance(lit, Binary) else lit
    if not isinstance(inner, Atom) or inner.key not in facts.heads:
        return []
    reads: list[tuple[Fact, Any]] = []
    atoms: list[Fact] = []
    for b in bindings:
        if any(isinstance(term, Var) and term.name not in b for term in inner.args):
            continue
        fact = (inner.pred, _ground(inner, b))
        if fact in atoms:
            continue
        atoms.append(fact)
        reads += [(fact, p) for p in _read_points(facts, lit, fact, s)
                  if (fact, p) not in path and facts.holding(fact, p) is None]
        if len(atoms) == FOLLOWED:
            break
    box = isinstance(lit, Unary) and lit.op.startswith("Box")
    named = len(reads) > 1 or box
    out = []
    for fact, p in reads:
        for entry in why_not(facts, fact, p, nest, path).entries:
            entry.goal = (*fact, p)
            if named:
                entry.text = f"{atom_text(*fact)} at {time_text(p)}: {entry.text}"
            if box:
                entry.above = _filling(facts, cast(Unary, lit), fact, s, p, entry.candidates)
            out.append(entry)
    return out


def _lifted(entries: list[Node]) -> list[Event]:
    """The events nested entries offer the entry above them: each one's ``above`` where it has
    one (a Box's gaps filled), else its candidates, each once."""
    out: list[Event] = []
    for inner in entries:
        out += [ev for ev in (inner.candidates if inner.above is None else inner.above) if ev not in out]
    return out


def _filling(facts: Facts, lit: Unary, fact: Fact, s: Any, p: Any, candidates: list[Event]) -> list[Event]:
    """What fills a Box's range where its derived atom ``fact`` lacks: each candidate that
    derives it at the point ``p`` (of a gap), stretched to derive it over the hull of every gap
    in the range (from the earliest gap's start to the latest's end, as the candidate's own
    ends sit around ``p``) — one fact, where a point derives the atom at one point only.  The
    same candidate where the gaps are that one point; ``run`` decides either way."""
    window = _window(lit, s)
    held = facts.db.get((fact[0], len(fact[1])), {}).get(fact[1], [])
    gaps = I.subtract([window], held)
    if not gaps:
        return list(candidates)
    lo, lc, hi, hc = gaps[0][0], gaps[0][1], gaps[-1][2], gaps[-1][3]
    out = []
    for ev in candidates:
        a, ac, b, bc = I.of_span(ev.span) if ev.span is not None else I.point(ev.t)
        span = I.make(a + lo - p, ac and lc, b + hi - p, bc and hc)
        if span is None:
            continue
        out.append(ev if span == (a, ac, b, bc) else Event(cast(Time, span[0]), ev.pred, ev.args, span=span))
    return out


def _read_points(facts: Facts, lit: Literal, fact: Fact, s: Any) -> list[Any]:
    """The points where a literal at ``s`` reads its derived atom ``fact`` that a why-not
    follows: where one fact would be proposed for it (``_read_at``: a plain atom at s, a
    Diamond's latest closed end, a Since/Until's right operand at the range's point nearest
    s); for a Box, a point in each stretch of its range where the atom does not hold, the
    latest stretches first (``_latest``: a stretch of one point is that point), at most ``GAPS``."""
    if isinstance(lit, Unary) and lit.op.startswith("Box"):
        window = _window(lit, s)
        if window[0] == -inf or window[2] == inf:
            return []
        held = facts.db.get((fact[0], len(fact[1])), {}).get(fact[1], [])
        return [_latest(gap, facts.ends) for gap in reversed(I.subtract([window], held))][:GAPS]
    at = _read_at(lit, s)
    return [at[0]] if at is not None and at[0] == at[2] else []


def _blocking(facts: Facts, rule: Rule, b: dict, lit: Literal, s: Any, head: tuple) -> Node:
    """Why the metric operand ``lit`` of a negated body literal does not hold at ``s`` (the
    negation's why-not), with the single input facts that, each added, would make it hold
    there (checked on the facts: its right operand, or its Diamond's or Box's, added) — so
    this rule instance would no longer derive ``head`` (pred, args, t): the runtime names
    one only where ``run`` then no longer holds that atom (``Node.blocks``)."""
    shown = _lit_text(lit, b)
    if isinstance(lit, Binary):
        reason = (f"{shown} does not hold at {time_text(s)}: no {_lit_text(lit.right, b)} at a time within "
                  f"{I.text(lit.rho)} {'before' if lit.op == 'Since' else 'after'} it with {_lit_text(lit.left, b)} "
                  f"throughout the stretch between")
    else:
        reason = f"{shown} does not hold at {time_text(s)}"
    proposed = [ev for ev in _proposals(facts, lit, [b], s) if _holds_with(facts, lit, b, s, ev)]
    # a derived operand: why it does not hold where it is read, each entry's event to derive it
    # there — which, as this entry's candidate too, may end the head's holding (``run`` decides)
    nested = _nested(facts, lit, [b], s, 1, frozenset())
    proposed += _lifted(nested)
    return Node("rule", reason, rule=_rule_text(rule), bindings=dict(b), literal=_lit_text(lit, {}), reason=reason,
                candidates=proposed, goal=head, blocks=True, why_not=nested or None)


def _holds_with(facts: Facts, lit: Literal, b: dict, s: Any, ev: Event) -> bool:
    """Whether ``lit`` holds at ``s`` over the facts with the input fact ``ev`` added (an input
    predicate's: the answers derived from it are not re-derived here; ``run`` confirms)."""
    key = (cast(str, ev.pred), len(ev.args))
    db = dict(facts.db)
    db[key] = dict(db.get(key, {}))
    args = next((a for a in db[key] if tuple(map(str, a)) == tuple(ev.args)), tuple(ev.args))  # (as the input has them)
    db[key][args] = I.coalesce([*db[key].get(args, []), I.of_span(ev.span)])
    return any(I.contains(iv, s) for iv in facts.mat._value(lit, db, b))


def missing_events(facts: Facts, rule: Rule, b: dict, times: I.Iv, k: int) -> list[Event]:
    """The input facts that might, each alone, make the rule derive the fact at ``times`` (a
    point): where its ``k``-th literal fails (``_proposals``), the variables the body leaves
    open read from the values the input has.  Only candidates: the runtime names one after
    evaluating the input with it."""
    if times[0] != times[2]:
        return []
    ground: list[tuple[dict, list[I.Iv], list]] = _body(facts, rule, b, [times], k - 1) or [(b, [], [])]
    return _proposals(facts, rule.body[k - 1], [got for got, _, _ in ground[:3]], times[0])


def _proposals(facts: Facts, lit: Literal, bindings: list[dict], s: Any) -> list[Event]:
    """The input facts that might, each alone, make ``lit`` hold at ``s`` where it is a base
    predicate's atom, plain or under a Diamond (a fact at one point of its window), a Box (a
    fact on its window) or as a Since/Until's right operand (at the range's point nearest
    ``s``: the shortest stretch of the left operand), for each of ``bindings``."""
    inner: Literal = lit.operand if isinstance(lit, Unary) else lit.right if isinstance(lit, Binary) else lit
    window = _read_at(lit, s)
    if not isinstance(inner, Atom) or inner.key in facts.heads or window is None:
        return []
    values = sorted({a for (pred, _), rows in facts.db.items() if pred == inner.pred for args in rows for a in args}
                    | {str(v) for got in bindings for v in got.values()})
    out: list[Event] = []
    for got in bindings:
        rows: list[tuple] = [()]
        for term in inner.args:
            if isinstance(term, Var) and term.name not in got:
                rows = [(*row, v) for row in rows for v in values]
            else:
                rows = [(*row, got[term.name] if isinstance(term, Var) else term) for row in rows]
        out += [Event(cast(Time, window[0]), inner.pred, tuple(str(a) for a in row), span=window) for row in rows]
    return out


def _read_at(lit: Literal, s: Any) -> I.Iv | None:
    """Where one fact of the atom ``lit`` reads would make it hold at ``s``: a plain atom at s; a
    Diamond's at one point of its window (its right end where closed, else its left where
    closed, else its middle); a Box's over its window; a Since/Until's right operand at the
    range's point nearest ``s`` (the shortest stretch of the left operand; just inside an open
    end, half-way to the other or one tick).  None: an unbounded window, another operator."""
    if isinstance(lit, Binary):
        lo, lc, hi, hc = lit.rho
        at = s - lo if lit.op == "Since" else s + lo
        if not lc:
            mid = (lo + min(hi, lo + 1)) * Fraction(1, 2)
            at = s - mid if lit.op == "Since" else s + mid
        return I.point(at)
    if isinstance(lit, Unary):
        if lit.op not in ("Diamondminus", "Diamondplus", "Boxminus", "Boxplus"):
            return None
        window = _window(lit, s)
        if window[0] == -inf or window[2] == inf:
            return None
        if lit.op.startswith("Diamond"):
            near = (window[2], True, window[2], True) if window[3] else (window[0], True, window[0], True)
            window = near if near[1] == (window[3] or window[1]) else I.point(Fraction(window[0] + window[2]) / 2)
        return window
    return I.point(s)


def _times(iv: I.Iv) -> str:
    return time_text(cast(Time, iv[0])) if iv[0] == iv[2] else f"any time of {I.text(iv)}"


def explainer(program: Any) -> Callable[..., Any]:
    """``chronolog explain --why / --why-not`` of a DatalogMTL program (``Dialect.explain``)."""

    def explain(events: Any, lines: Any, atom: Any, t: Any, mode: str, every: bool, depth: int | None,
                evaluator: Any = None) -> Any:
        facts = Facts(program, events, I.answers(lines))
        return why(facts, atom, t, every, depth) if mode == "why" else why_not(facts, atom, t)

    return explain
