"""Why a LARS answer holds at T, or why not (``chronolog explain --why / --why-not``).

The answer at T is the program's answer at the evaluation of T alone (Ticker's Def. 4): the
stream facts in each literal's window and the intensional atoms of the answer set at T.
Both are at hand when asked — the input, and the answers ``run`` writes — so an explanation
needs no record kept while running.  The stream literals' relations come from the TMS
grounder's ``_Window`` (engine/tms_relations.py), which computes exactly what a rule body
reads at T; the intensional atoms are the answer at T (a truth-maintained or clingo answer
set as ``run`` chose it), so a derivation is relative to that answer set, as a justification
in a TMS is.

``why`` finds every rule instance that derives an atom of the answer at T, gives each atom
the size of its smallest derivation (fewest rule applications, a fixpoint over the instances,
so cycles never justify anything) and unfolds the smallest one (``all``: every instance)
down to input events.  ``why_not`` names, for each rule whose head matches, the first body
literal in textual order that no value of the variables the head leaves open satisfies.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from chronolog.core.events import Event, withdrawn
from chronolog.core.explanation import Node
from chronolog.core.source import Loc
from chronolog.dialects.lars.engine.rules import _Undefined, compare
from chronolog.dialects.lars.engine.tms_relations import _eval, _index, _pattern, _unify, _Window
from chronolog.dialects.lars.ir import Atom as IrAtom
from chronolog.dialects.lars.ir import Compare, Const, ExtAtom, Op, Program, Rule, TupleWindow, Var
from chronolog.dialects.lars.plan import Plan, PredKey, plan_program
from chronolog.evaluator import atom_text

Atom = tuple[str, tuple]
Binding = dict[str, Any]


def at_head_predicates(program: Program, plan: Plan | None = None) -> set[PredKey]:
    """The predicates the program dates through ``@``-heads, dated facts (``c at 3.``) included:
    their atoms carry their time (the plan's ``timed`` also holds the helpers its rewrites add
    for windows over derived atoms).  A plain head of such a predicate dates its atom at T.  In
    a stratified program, also a derived predicate with program facts that a window reads: its
    facts hold at every point of the window (the plan's hidden rules), its rules' atoms at T."""
    dated = {r.head.atom.key for r in program.rules if r.head.time is not None}
    facts = {r.head.atom.key for r in program.rules if not r.body and r.head.time is None}
    if not facts & {r.head.atom.key for r in program.rules if r.body}:
        return dated
    plan = plan or plan_program(program)
    return dated | (facts & plan.padded & plan.intensional) if plan.stratified else dated


def answer_at(lines: Iterable[dict], t: int) -> set[Atom]:
    """The atoms the answer lines (CONTRACT §3) hold at the time point ``t``: their diffs sum to 1."""
    total: dict[Atom, int] = {}
    for line in lines:
        if "pred" not in line:
            continue
        if "interval" in line:
            text = line["interval"]
            lo, hi = text[1:-1].split(",")
            a = int(lo) + (text[0] == "(")
            inside = a <= t and (hi == "inf" or t <= int(hi) - (text[-1] == ")"))
        else:
            inside = line["t"] == t
        if inside:
            key = (line["pred"], tuple(line.get("args", ())))
            total[key] = total.get(key, 0) + line.get("diff", 1)
    return {atom for atom, n in total.items() if n == 1}


class Scene:
    """What the evaluation of T reads: the stream up to T (time order, arrival order within a
    time, retractions applied) with each fact's input line, and the answer at T."""

    def __init__(self, program: Program, plan: Plan, events: Iterable[Event], answer: set[Atom], t: int) -> None:
        self.program, self.plan, self.t = program, plan, t
        self._indexes: dict[tuple[int, frozenset[str]], tuple[Any, ExtAtom, dict, list]] = {}  # (``matches``)
        self._times: dict[PredKey, tuple[frozenset, dict[tuple, list[int]]]] = {}  # (``times_of``)
        self.timed = at_head_predicates(program, plan)
        self.citing = 0  # how many blockers' derivations deep an explanation is (``_blockers``)
        self.deriving: list[Atom] = []  # the atoms whose derivations are being built, outermost first
        facts: dict[int, list[tuple[PredKey, tuple, Loc | None]]] = {}
        t1: int | None = None
        for ev in events:
            if ev.t > t:
                continue
            if t1 is None or (ev.t < t1 and not ev.retract):
                t1 = ev.t
            if ev.pred is None:
                continue
            entries = facts.setdefault(ev.t, [])
            key = ((ev.pred, len(ev.args)), tuple(ev.args))
            if ev.retract:
                i = withdrawn([e[:2] for e in entries], key)
                if i is not None:
                    del entries[i]
                continue
            entries.append((*key, ev.loc))
        self.t1 = t if t1 is None else t1
        self.stream = [(at, key, args, loc) for at in sorted(facts) for key, args, loc in facts[at]]
        self.program_facts: dict[PredKey, dict[tuple, Rule]] = {}
        self.dated_facts: dict[PredKey, dict[tuple, Rule]] = {}  # (``a(1) at 0.``: args, time last)
        for rule in program.rules:
            if not rule.body and all(isinstance(a, Const) for a in rule.head.atom.args):
                args = tuple(a.value for a in rule.head.atom.args)  # type: ignore[union-attr]
                if rule.head.time is None:
                    self.program_facts.setdefault(rule.head.atom.key, {})[args] = rule
                elif isinstance(rule.head.time, Const):
                    self.dated_facts.setdefault(rule.head.atom.key, {})[(*args, rule.head.time.value)] = rule
        lower: dict[PredKey, set[tuple]] = {key: set() for key in plan.intensional}
        for pred, args in answer:
            if (pred, len(args)) not in self.timed:
                lower.setdefault((pred, len(args)), set()).add(args)
        for key, rows in self.program_facts.items():
            if key in lower and key not in self.timed:
                lower[key] |= set(rows)
        self.answer = {key: frozenset(rows) for key, rows in lower.items()}
        self._facts = [(at, key, args) for at, key, args, _ in self.stream]
        self.window = _Window(plan, self.t1, t, self._facts, lower=self.answer, lower_timed=frozenset(self.timed))
        if self.timed:
            self._timed_atoms()

    def _timed_atoms(self) -> None:
        """The atoms of ``@``-head predicates the evaluation of T derives (their time last), to a
        fixpoint of the ``@``-head rules over what T reads (the run's answer has only their union
        over every evaluation)."""
        facts: dict[PredKey, set[tuple]] = {key: set() for key in self.timed}
        for key in self.timed:  # a plain fact at every point, a dated one at its time
            facts[key] |= {(*args, u) for args in self.program_facts.get(key, {}) for u in range(self.t1, self.t + 1)}
            facts[key] |= {row for row in self.dated_facts.get(key, {}) if self.t1 <= row[-1] <= self.t}
        for _ in range(len(self.program.rules) + 1):
            derived: dict[PredKey, set[tuple]] = {key: set(rows) for key, rows in facts.items()}
            for rule in self.program.rules:
                if rule.head.atom.key not in self.timed or not rule.body:
                    continue
                for b in solutions(self, rule, {}):
                    try:
                        row = tuple(_eval(a, b) for a in rule.head.atom.args) + (
                            self.t if rule.head.time is None else _eval(rule.head.time, b),)
                    except (KeyError, _Undefined):
                        continue
                    if type(row[-1]) is int and self.t1 <= row[-1] <= self.t:
                        derived[rule.head.atom.key].add(row)
            if all(self.answer.get(k, frozenset()) == rows for k, rows in derived.items()):
                return
            self.answer = {**self.answer, **{k: frozenset(rows) for k, rows in derived.items()}}
            self.window = _Window(self.plan, self.t1, self.t, self._facts, lower=self.answer,
                                  lower_timed=frozenset(self.timed))

    def intensional(self, key: PredKey) -> bool:
        return key in self.answer

    def fact_of(self, atom: Atom) -> Rule | None:
        """The program fact that holds ``atom`` (an ``@``-head predicate's with its time last)."""
        key = self.key_of(atom)
        if key in self.timed:
            return self.program_facts.get(key, {}).get(atom[1][:-1]) or self.dated_facts.get(key, {}).get(atom[1])
        return self.program_facts.get(key, {}).get(atom[1])

    def head_time(self, atom: Atom) -> int | None:
        """The evaluated point a plain head of ``atom``'s predicate dates it at: T for an
        ``@``-head predicate (its atoms carry their time), else None (no time column)."""
        return self.t if self.key_of(atom) in self.timed else None

    def key_of(self, atom: Atom) -> PredKey:
        """The predicate of an atom (an ``@``-head predicate's atoms carry their time last)."""
        timed = (atom[0], len(atom[1]) - 1)
        return timed if timed in self.timed else (atom[0], len(atom[1]))

    def times_of(self, key: PredKey, args: tuple) -> list[int]:
        """The times of an ``@``-head predicate's atoms with ``args`` in the answer, in order."""
        by_args = self._times.get(key)
        if by_args is None or by_args[0] is not self.answer.get(key):
            rows = self.answer.get(key, frozenset())
            grouped: dict[tuple, list[int]] = {}
            for row in rows:
                grouped.setdefault(row[:-1], []).append(row[-1])
            by_args = self._times[key] = (rows, {a: sorted(ts) for a, ts in grouped.items()})
        return by_args[1].get(args, [])

    def holds(self, atom: Atom) -> bool:
        rows = self.answer.get(self.key_of(atom), frozenset())
        if any(v is ANYTHING for v in atom[1]):  # (``not a(_)``: some row with the other values)
            return any(all(v is ANYTHING or v == w for v, w in zip(atom[1], row, strict=True)) for row in rows)
        return atom[1] in rows

    # -- one literal ---------------------------------------------------------------------
    def matches(self, lit: ExtAtom, env: Binding) -> list[Binding]:
        """``env`` extended by every way the (positive reading of the) literal holds at T: the
        rows its relation has at the values ``env`` binds (``_index``, kept per literal and
        bound variables, as the grounder does), not a scan of them all for each binding."""
        pattern = _pattern(lit)
        bound = frozenset(x.name for x in pattern if isinstance(x, Var) and x.name in env)
        got = self._indexes.get((id(lit), bound))
        if got is None or got[0] is not self.window:
            got = (self.window, lit, *_index(pattern, bound, self.window.relation(lit)))
            self._indexes[(id(lit), bound)] = got
        _, _, index, keyed = got
        rows = index.get(tuple(x.value if isinstance(x, Const) else env[x.name] for x in keyed), ()) if keyed \
            else self.window.relation(lit)
        out = []
        for row in rows:
            unified = _unify(pattern, row, env)
            if unified is not None:
                out.append(unified)
        return out

    def span(self, lit: ExtAtom) -> tuple[int, int]:
        """The time points of the literal's window (a tuple window: from its oldest fact)."""
        if isinstance(lit.window, TupleWindow):
            sel = self.stream[-lit.window.size:] if lit.window.size else []
            lo = sel[0][0] if len(sel) >= lit.window.size and sel else self.t1
            return lo, self.t
        return self.window.span(lit.window, lit.op), self.t

    def witnesses(self, lit: ExtAtom, env: Binding) -> list[tuple[int, tuple, Loc | None]]:
        """The stream facts that make a (bound) extensional literal hold: time, args, input line."""
        key = lit.atom.key
        lo, hi = self.span(lit)
        facts = self.stream[-lit.window.size:] if isinstance(lit.window, TupleWindow) else self.stream
        out = []
        for at, k, args, loc in facts:
            if k != key or not lo <= at <= hi:
                continue
            if lit.op is Op.NOW and at != self.t:
                continue
            row = args + (at,) if lit.op is Op.AT else args
            if _unify(_pattern(lit), row, env) is not None:
                out.append((at, args, loc))
        return out


def _compare(c: Compare, env: Binding) -> list[Binding] | None:
    """The bindings a comparison leaves (an ``X = expr`` or ``expr = X`` with X unbound assigns
    X); None when a variable it reads is not bound yet."""
    left, right = c.left, c.right
    if c.op == "=" and isinstance(right, Var) and right.name not in env and not (
            isinstance(left, Var) and left.name not in env):
        left, right = right, left
    if c.op == "=" and isinstance(left, Var) and left.name not in env:
        try:
            return [{**env, left.name: _eval(right, env)}]
        except KeyError:
            return None
        except _Undefined:
            return []
    try:
        x, y = _eval(left, env), _eval(right, env)
    except KeyError:
        return None
    except _Undefined:
        return []
    return [env] if compare(c.op, x, y) else []  # (as run reads it: order on integers only)


def _order(body: tuple) -> list[tuple[int, Any]]:
    """The body elements in an order that binds before it tests: positive atoms first (in
    textual order), then comparisons and negations."""
    first = [(i, e) for i, e in enumerate(body) if isinstance(e, ExtAtom) and not e.negated]
    return first + [(i, e) for i, e in enumerate(body) if not (isinstance(e, ExtAtom) and not e.negated)]


def solutions(scene: Scene, rule: Rule, env: Binding, upto: int | None = None) -> list[Binding]:
    """Every binding under which the rule's body (its first ``upto`` elements in textual
    order) holds at T; a comparison or negation whose variables the considered part does not
    bind counts as satisfiable ("some value")."""
    envs = [env]
    for i, elem in _order(rule.body):
        if upto is not None and i >= upto:
            continue
        nxt: list[Binding] = []
        for b in envs:
            if isinstance(elem, Compare):
                got = _compare(elem, b)
                nxt += [b] if got is None else got
            elif elem.negated:
                if not elem.variables() - {"_"} <= set(b) or not scene.matches(elem, b):  # (``_``: any value)
                    nxt.append(b)
            else:
                nxt += scene.matches(elem, b)
        envs = nxt
        if not envs:
            break
    return envs


class _Anything:
    """The value of a negated literal's ``_`` (``not b(_)``: no b at all): it matches every head
    term and binds nothing, so a rule's variable there is read as "some value"."""

    def __str__(self) -> str:
        return "_"

    __repr__ = __str__


ANYTHING = _Anything()


def _literal_args(lit: ExtAtom, b: Binding) -> tuple:
    """A (bound) literal's argument values, ``ANYTHING`` for its ``_``."""
    return tuple(ANYTHING if isinstance(a, Var) and a.name == "_" else _eval(a, b) for a in lit.atom.args)


def head_binding(rule: Rule, atom: Atom, at: int | None = None) -> Binding | None:
    """The binding under which the rule's head is ``atom`` (an ``@``-head's atom with its time
    last; ``ANYTHING`` left open).  ``at``: the atom's predicate is an ``@``-head one, and a
    plain head dates its atom at ``at`` (the evaluated point)."""
    head = rule.head.atom
    terms = head.args if rule.head.time is None else (*head.args, rule.head.time)
    if at is not None and rule.head.time is None:
        terms = (*head.args, Const(at))
    if head.pred != atom[0] or len(terms) != len(atom[1]):
        return None
    pairs = [(term, v) for term, v in zip(terms, atom[1], strict=True) if v is not ANYTHING]
    return _unify([term for term, _ in pairs], tuple(v for _, v in pairs), {})


# ------------------------------------------------------------------------------ --why


def _instances(scene: Scene) -> dict[Atom, list[tuple[Rule, Binding, list[Atom]]]]:
    """Every rule instance that derives an atom of the answer at T, with the intensional atoms
    its positive literals read (the answer's atoms they matched)."""
    out: dict[Atom, list[tuple[Rule, Binding, list[Atom]]]] = {}
    for rule in scene.program.rules:
        if not rule.body:
            continue
        for b in solutions(scene, rule, {}):
            try:
                args = tuple(_eval(a, b) for a in rule.head.atom.args)
                if rule.head.time is not None:
                    args += (_eval(rule.head.time, b),)
                elif rule.head.atom.key in scene.timed:  # a plain head of an @-head predicate: at T
                    args += (scene.t,)
            except (KeyError, _Undefined):
                continue
            atom = (rule.head.atom.pred, args)
            if not scene.holds(atom):
                continue
            reads = []
            for elem in rule.body:
                if isinstance(elem, ExtAtom) and not elem.negated and scene.intensional(elem.atom.key):
                    reads += _reads(scene, elem, b, atom)
            out.setdefault(atom, []).append((rule, b, reads))
    return out


def _reads(scene: Scene, lit: ExtAtom, b: Binding, head: Atom) -> list[Atom]:
    """The atoms of the answer at T a positive intensional literal reads under ``b``: the atom
    at T, or (an ``@``-head predicate) its atoms at the times of the window it needs — the
    latest for a diamond (other than the rule instance's own ``head``: ``a(X) :- a(X) [2]``
    reads an earlier a(X), not itself), every one for a box, the one an ``at`` names.  A ``_``
    reads one atom of the answer that has some value there (the first in a fixed order that is
    not the head)."""
    args, key = _literal_args(lit, b), lit.atom.key
    open_args = any(v is ANYTHING for v in args)
    if key not in scene.timed:
        if open_args:
            rows = sorted((row for row in scene.answer.get(key, ()) if _fits(args, row)),
                          key=lambda row: ((lit.atom.pred, row) == head, repr(row)))  # (not the head itself)
            return [(lit.atom.pred, rows[0])] if rows else []
        return [(lit.atom.pred, args)]
    lo, hi = scene.span(lit)
    at_args: dict[int, tuple] = {}  # per time in the window: the atom's arguments there
    if open_args:
        for row in sorted(scene.answer.get(key, ()), key=lambda row: ((lit.atom.pred, row) == head, repr(row))):
            if lo <= row[-1] <= hi and _fits(args, row):
                at_args.setdefault(row[-1], row[:-1])
    else:
        at_args = {x: args for x in scene.times_of(key, args) if lo <= x <= hi}
    times = sorted(at_args)
    if lit.op is Op.AT and isinstance(lit.time, Var | Const) and not (isinstance(lit.time, Var) and lit.time.name == "_"):
        at = _eval(lit.time, b)
        times = [x for x in times if x == at]
    elif lit.op is Op.NOW:
        times = [x for x in times if x == scene.t]
    elif lit.op is Op.DIAMOND:
        times = [x for x in times if (lit.atom.pred, (*at_args[x], x)) != head][-1:] or times[-1:]
    return [(lit.atom.pred, (*at_args[x], x)) for x in times]


def _fits(args: tuple, row: tuple) -> bool:
    """Whether an answer row (an ``@``-head predicate's with its time last) has ``args``, ``ANYTHING`` any value."""
    return all(v is ANYTHING or v == w for v, w in zip(args, row, strict=False))


def _sizes(scene: Scene, inst: dict[Atom, list[tuple[Rule, Binding, list[Atom]]]]) -> dict[Atom, int]:
    """The fewest rule applications that derive each atom (program facts: 0); atoms only a
    cycle supports get none."""
    size: dict[Atom, int] = {(key[0], args): 0 for key, rows in scene.program_facts.items() for args in rows}
    size |= {read: 0 for options in inst.values() for _, _, reads in options for read in reads
             if scene.fact_of(read) is not None}
    changed = True
    while changed:
        changed = False
        for atom, options in inst.items():
            for _, _, reads in options:
                if all(r in size for r in reads):
                    got = 1 + sum(size[r] for r in reads)
                    if got < size.get(atom, got + 1):
                        size[atom] = got
                        changed = True
    return size


def why(scene: Scene, atom: Atom, every: bool = False, depth: int | None = None) -> Node:
    inst = _instances(scene)
    sizes = _sizes(scene, inst)
    return _derive(scene, atom, inst, sizes, every, depth, set())


def _rule_text(rule: Rule) -> str:
    return f"{rule.loc.file}:{rule.loc.line}: {rule}" if rule.loc is not None else str(rule)


def _derive(scene: Scene, atom: Atom, inst: dict, sizes: dict[Atom, int], every: bool, depth: int | None,
            path: set[Atom]) -> Node:
    scene.deriving.append(atom)  # (a blocker a why-not cites is not one being derived: ``_blockers``)
    try:
        return _derive_atom(scene, atom, inst, sizes, every, depth, path)
    finally:
        scene.deriving.pop()


def _derive_atom(scene: Scene, atom: Atom, inst: dict, sizes: dict[Atom, int], every: bool, depth: int | None,
                 path: set[Atom]) -> Node:
    t = scene.t
    fact = scene.fact_of(atom)
    if fact is not None:
        about = _about(scene, atom)
        return Node("fact", f"{about['atom']} at {about['time']}: a program fact", rule=_rule_text(fact), **about)
    if scene.key_of(atom) in scene.timed:  # an @-head's atom: its own time, derived by evaluating T
        name = f"{atom_text(atom[0], atom[1][:-1])} at {atom[1][-1]}"
        return _derived_by(_unfold(scene, atom, name, f"{name} (derived by the evaluation of {t})", inst, sizes,
                                   every, depth, path), t)
    return _unfold(scene, atom, f"{atom_text(*atom)} at {t}", "", inst, sizes, every, depth, path)


def _derived_by(node: Node, t: int) -> Node:
    """An @-head atom's derivations (its rule instances, one or ``--all``'s) marked with the
    point whose evaluation derived them (``runtime.consistency`` reads it)."""
    if node.kind == "alternatives":
        return replace(node, children=[_derived_by(c, t) for c in node.children])
    return replace(node, derived_by=t) if node.kind == "rule" else node


def _unfold(scene: Scene, atom: Atom, name: str, title: str, inst: dict, sizes: dict[Atom, int], every: bool,
            depth: int | None, path: set[Atom]) -> Node:
    t = scene.t
    options = [o for o in inst.get(atom, []) if all(r in sizes for r in o[2]) and not set(o[2]) & path]
    options.sort(key=lambda o: 1 + sum(sizes[r] for r in o[2]))
    if not options:
        return Node("atom", f"{name}: in the answer at {t}, with no derivation outside a cycle", **_about(scene, atom))
    if depth is not None and depth <= 0:
        return Node("atom", f"{name} (cut at --depth)", **_about(scene, atom))
    chosen = options if every else options[:1]
    nodes = [_instance(scene, atom, o, inst, sizes, every, None if depth is None else depth - 1, path | {atom},
                       title or name) for o in chosen]
    if len(nodes) == 1:
        return nodes[0]
    return Node("alternatives", f"{name}: {len(nodes)} derivations", children=nodes, **_about(scene, atom))


def _about(scene: Scene, atom: Atom) -> dict[str, Any]:
    """The ``atom`` and ``time`` fields of a node about ``atom`` (an @-head's atom: its own time)."""
    if scene.key_of(atom) in scene.timed:
        return {"atom": atom_text(atom[0], atom[1][:-1]), "time": atom[1][-1]}
    return {"atom": atom_text(*atom), "time": scene.t}


def _instance(scene: Scene, atom: Atom, option: tuple, inst: dict, sizes: dict[Atom, int], every: bool,
              depth: int | None, path: set[Atom], title: str) -> Node:
    rule, b, _ = option
    children = []
    for elem in rule.body:
        if isinstance(elem, Compare):
            children.append(Node("test", f"{elem} holds" + _values(elem.variables(), b), atom=str(elem)))
            continue
        shown = _literal_text(scene, elem, b)
        if elem.negated:
            children.append(_negated(scene, elem, b, shown))
            continue
        if scene.intensional(elem.atom.key):
            reads = [_derive(scene, read, inst, sizes, every, depth, path) for read in _reads(scene, elem, b, atom)]
            if elem.atom.key in scene.timed:
                lo, hi = scene.span(elem)
                children.append(Node("literal", f"{shown}: in window [{lo},{hi}]", children=reads, atom=shown,
                                     window=f"[{lo},{hi}]"))
            else:
                children += reads
            continue
        seen = scene.witnesses(elem, b)
        if isinstance(elem.window, TupleWindow) and elem.op is Op.BOX:
            leaves = _tuples(scene, elem)  # (the window's oldest tuple sets the span the box covers)
        else:
            leaves = [Node("event", f"input {atom_text(elem.atom.pred, args)} at {at}", where=str(loc) if loc else "",
                           atom=atom_text(elem.atom.pred, args), time=at)
                      for at, args, loc in _witness_cut(elem, seen)]
        if not seen:  # a program fact (background knowledge, at every time point)
            args = _literal_args(elem, b)
            facts = scene.program_facts.get(elem.atom.key, {})
            fact = (next((f for row, f in facts.items() if _fits(args, row)), None) if ANYTHING in args
                    else facts.get(args))  # (``a(_)``: any of a's facts)
            if fact is not None:
                children.append(Node("fact", f"{shown}: a program fact", rule=_rule_text(fact), atom=shown))
                continue
        children.append(Node("literal", f"{shown}: {_met(scene, elem, seen)}", children=leaves, atom=shown,
                             window=_window_text(scene, elem)))
    binding = _shown(b)
    return Node("rule", title, rule=_rule_text(rule), bindings=binding, children=children, **_about(scene, atom))


def _values(names: set[str], b: Binding) -> str:
    shown = ", ".join(f"{n}={b[n]}" for n in sorted(names) if n in b)
    return f" ({shown})" if shown else ""


def _literal_text(scene: Scene, lit: ExtAtom, b: Binding) -> str:
    """The literal as the program writes it, its bound variables replaced by their values."""
    def term(t: Any) -> Any:
        return Const(b[t.name]) if isinstance(t, Var) and t.name in b else t

    atom = IrAtom(lit.atom.pred, tuple(term(a) for a in lit.atom.args))
    return str(ExtAtom(atom, lit.op, lit.window, None if lit.time is None else term(lit.time), lit.negated))


def _window_text(scene: Scene, lit: ExtAtom) -> str:
    lo, hi = scene.span(lit)
    if isinstance(lit.window, TupleWindow):
        return f"the last {lit.window.size} facts (from time {lo})"
    if lit.op is Op.NOW:
        return f"at {hi}"
    return f"window [{lo},{hi}]"


def _met(scene: Scene, lit: ExtAtom, seen: list) -> str:
    where = _window_text(scene, lit)
    if lit.op is Op.BOX:
        return f"at every point of {where}"
    if lit.op is Op.DIAMOND:
        first = max((at for at, _, _ in seen), default=None)
        return f"met at {first} in {where}" if first is not None else f"holds in {where} (background)"
    return f"holds ({where})"


def _witness_cut(lit: ExtAtom, seen: list) -> list:
    """The facts shown for a literal: a diamond's latest one, every one for a box, an ``at`` or
    a tuple window."""
    if lit.op is Op.DIAMOND and seen:
        return [max(seen, key=lambda s: s[0])]
    return seen


def _negated(scene: Scene, lit: ExtAtom, b: Binding, shown: str) -> Node:
    """A negated literal that holds: why its atom does not (``why_not``: each rule whose head
    matches, with its first failing literal, for an atom of the answer at T; a negated tuple
    window cites the facts that fill the window, which keep the atom out)."""
    reason = _negation(scene, lit, b)
    node = Node("negated", f"{shown}: {reason}", atom=shown, negated=True, window=_window_text(scene, lit),
                reason=reason)
    args = _literal_args(lit, b)
    if scene.intensional(lit.atom.key) and lit.op is Op.NOW and lit.atom.key not in scene.timed:
        node.why_not = _rule_failures(scene, (lit.atom.pred, args), cite=True)
    elif scene.intensional(lit.atom.key) and lit.op in (Op.DIAMOND, Op.BOX) and lit.atom.key not in scene.timed \
            and not isinstance(lit.window, TupleWindow):
        node.why_not = _window_failures(scene, lit, (lit.atom.pred, args))
    elif scene.intensional(lit.atom.key) and not isinstance(lit.window, TupleWindow):  # an @-head's, at its times
        node.why_not = _timed_failures(scene, (lit.atom.pred, args), _points(scene, lit, b), cite=True)
    elif not scene.intensional(lit.atom.key):  # an input predicate: no rule derives it
        node.why_not = []
    if isinstance(lit.window, TupleWindow):
        node.children = _tuples(scene, lit)
    return node


def _tuples(scene: Scene, lit: ExtAtom) -> list[Node]:
    """The facts that fill a tuple window at T (every predicate's), as input leaves: what a
    negated tuple window keeps out, and what a box over one spans (its oldest sets the
    window's first point: with fewer facts the box would reach back to the stream's start)."""
    assert isinstance(lit.window, TupleWindow)
    return [Node("event", f"input {atom_text(key[0], row)} at {at}", where=str(loc) if loc else "",
                 atom=atom_text(key[0], row), time=at)
            for at, key, row, loc in (scene.stream[-lit.window.size:] if lit.window.size else [])]


def _shown(b: Binding) -> dict:
    """A rule's variable bindings as an explanation shows them (without the planner's ``_`` ones)."""
    return {n: v for n, v in b.items() if not n.startswith("_")}


def _window_failures(scene: Scene, lit: ExtAtom, atom: Atom) -> list[Node]:
    """Why a derived atom a negated window reads does not hold where the literal needs it not
    to, in the evaluation of T: a window over a derived atom sees only what that evaluation
    derives (LARS.md: atoms of earlier evaluations are not carried over), and no ``@``-head
    derives this one, so at the points before T nothing does; at T each rule whose head
    matches, with its first failing literal.  A ``□`` fails at its first point, before T
    unless its window is T alone."""
    lo, hi = scene.span(lit)
    out: list[Node] = []
    if lo < scene.t:
        upto = lo if lit.op is Op.BOX else scene.t - 1
        points = str(lo) if upto == lo else f"{lo}..{upto}"
        reason = (f"not derived by the evaluation of {scene.t}, which derives this rule's head at {scene.t} only "
                  "(atoms of earlier evaluations are not carried over)")
        for rule in scene.program.rules:
            if rule.body and (env := head_binding(rule, atom, scene.head_time(atom))) is not None:
                out.append(Node("rule", f"{atom_text(*atom)} at {points}: {reason}",
                                rule=_rule_text(rule), bindings=_shown(env),
                                reason=reason))
        if lit.op is Op.BOX:
            return out
    if hi >= scene.t and not scene.holds(atom):
        for entry in _rule_failures(scene, atom, cite=True):
            entry.text = f"{atom_text(*atom)} at {scene.t}: {entry.text}"
            out.append(entry)
    return out


def _negation(scene: Scene, lit: ExtAtom, b: Binding) -> str:
    if scene.intensional(lit.atom.key):
        return f"not in the answer at {scene.t}"
    where = _window_text(scene, lit)
    return f"no such fact {where}" if lit.op is Op.NOW else f"no such fact in {where}"


# ------------------------------------------------------------------------------ --why-not


def why_not(scene: Scene, atom: Atom) -> Node:
    rules = _rule_failures(scene, atom, nested=False)
    if scene.key_of(atom) in scene.timed:  # an @-head's atom, its time last
        name, when = atom_text(atom[0], atom[1][:-1]), f"{atom[1][-1]} (the evaluation of {scene.t})"
    else:
        name, when = atom_text(*atom), str(scene.t)
    if not rules:
        return Node("none", f"{name} at {when}: no rule has a head that matches it", **_about(scene, atom))
    return Node("why-not", f"{name} does not hold at {when}", why_not=rules, **_about(scene, atom))


NESTED = 3  # how many atoms deep a why-not follows failing intensional literals


def _rule_failures(scene: Scene, atom: Atom, seen: frozenset[Atom] = frozenset(), nested: bool = True,
                   cite: bool = False) -> list[Node]:
    """For each rule whose head matches the atom, its first failing body literal; where that
    literal is an atom of the program at T (ground), why that atom does not hold in turn.  Each
    entry proposes the input events that might each make it derive the atom (``missing_events``;
    the runtime names one only once checked), ``nested``: for the atom at the scene's time
    (its ``goal``), else for the query; in a ``--why-not`` tree (not ``cite``) also those of
    the entries below it, as MTL's do: an event that derives the failing literal's atom may
    derive this one too (``run`` decides; a ``--why`` does not pay for these checks)."""
    at = scene.head_time(atom)
    matching = [(rule, env) for rule in scene.program.rules
                if rule.body and (env := head_binding(rule, atom, at)) is not None]
    out = [_first_failure(scene, rule, env, seen | {atom}, cite) for rule, env in matching]
    # (an @-head's atom carries its own time last: the goal is the atom at that time, derived
    # by the evaluation of the scene's point, not by another point's)
    goal = (atom[0], atom[1][:-1], atom[1][-1], scene.t) if scene.key_of(atom) in scene.timed \
        else (atom[0], atom[1], scene.t)
    for entry, (rule, env) in zip(out, matching, strict=True):
        entry.candidates = missing_events(scene, rule, env)
        if not cite:
            entry.candidates += [ev for inner in entry.entries for ev in inner.candidates if ev not in entry.candidates]
        entry.goal = goal if nested else None
    return out


POINTS = 8  # the latest points of a window whose @-head atoms a why-not follows, or where it proposes an event


def _points(scene: Scene, lit: ExtAtom, b: Binding) -> list[int]:
    """The points at which an ``@``-head predicate's atom, missing from the evaluation of T,
    keeps the (positive reading of the) literal from holding, latest first: T for one without
    a window, the time an ``at`` names, else every point of the window where it is missing
    (a box: those; a diamond: all), at most ``POINTS`` of them."""
    lo, hi = scene.span(lit)
    args = _literal_args(lit, b)
    if lit.op is Op.NOW:
        points = [scene.t]
    elif lit.op is Op.AT and lit.time is not None and (isinstance(lit.time, Const) or lit.time.name in b):
        at = _eval(lit.time, b)
        points = [at] if type(at) is int and lo <= at <= hi else []
    else:
        points = list(range(hi, lo - 1, -1))
    return [u for u in points if not scene.holds((lit.atom.pred, (*args, u)))][:POINTS]


def _timed_failures(scene: Scene, atom: Atom, points: list[int], seen: frozenset[Atom] = frozenset(),
                    cite: bool = False) -> list[Node]:
    """Why the evaluation of T derives an ``@``-head predicate's atom at none of ``points``:
    each point's rule failures, named by the atom and its time (each its own goal)."""
    out = []
    for u in points:
        timed = (atom[0], (*atom[1], u))
        if timed in seen:
            continue
        for entry in _rule_failures(scene, timed, seen, cite=cite):
            entry.text = f"{atom_text(*atom)} at {u}: {entry.text}"
            out.append(entry)
    return out


def _first_failure(scene: Scene, rule: Rule, env: Binding, seen: frozenset[Atom] = frozenset(),
                   cite: bool = False) -> Node:
    """The rule's first body element that fails for ``env``, with why (and, nested, why its
    atom fails in turn); ``cite``: with the input that makes it fail as its premises, so that
    the events a ``--why`` cites re-derive the atom on their own (``_blockers``)."""
    for k in range(1, len(rule.body) + 1):
        if solutions(scene, rule, env, k):
            continue
        before = solutions(scene, rule, env, k - 1) or [env]
        elem = rule.body[k - 1]
        reason = _failure(scene, elem, before, env)
        node = Node("rule", f"fails at body element {k}: {reason}", rule=_rule_text(rule),
                    bindings=_shown(env),
                    literal=str(elem), reason=reason)
        below = _failing_atom(scene, elem, before)
        if below is not None and len(seen) < NESTED:
            if (below[0], len(below[1])) in scene.timed:  # an @-head's, at the window's points
                node.why_not = _timed_failures(scene, below, _points(scene, elem, before[0]), seen, cite)
            elif below not in seen:
                node.why_not = _rule_failures(scene, below, seen, cite=cite)
        if cite:
            node.children = _blockers(scene, elem, before, seen)
        return node
    return Node("rule", "its body holds, but the answer set at this time does not contain the head "
                        "(another choice of the answer set)", rule=_rule_text(rule),
                bindings=_shown(env))


BLOCKED = 4  # the bindings of a failing literal whose blockers a why-not entry cites


def _blockers(scene: Scene, elem: Any, envs: list[Binding], seen: frozenset[Atom]) -> list[Node]:
    """What keeps a failing body element from holding, as premises whose input events go
    with the explanation (issue 38, item 6: the events a ``--why`` cites, on their own,
    re-derive its atom, so a negated literal's why-not cites what blocks its rules): for a
    failing negation, the fact that holds (an input predicate's latest in the window) or the
    derivation of the atom that holds, for each binding the part before it leaves; for a
    tuple window, the facts that fill it (they keep the needed one out).  A failing positive
    time window or comparison needs nothing: fewer events give no more facts."""
    if not isinstance(elem, ExtAtom):
        return []
    if not elem.negated:
        return _tuples(scene, elem) if isinstance(elem.window, TupleWindow) else []
    positive = ExtAtom(elem.atom, elem.op, elem.window, elem.time)
    box = elem.op is Op.BOX  # (a box holds by every point: all of them, else the latest one)
    out: list[Node] = _tuples(scene, elem) if box and isinstance(elem.window, TupleWindow) else []
    for b in envs[:BLOCKED]:
        if not scene.intensional(elem.atom.key):
            seen_facts = scene.witnesses(positive, b)
            out += [Node("event", f"input {atom_text(elem.atom.pred, args)} at {at}", where=str(loc) if loc else "",
                         atom=atom_text(elem.atom.pred, args), time=at)
                    for at, args, loc in (seen_facts if box else seen_facts[-1:])]
            continue
        try:
            args = tuple(_eval(a, b) for a in elem.atom.args)
        except (KeyError, _Undefined):
            continue
        if elem.atom.key in scene.timed:  # an @-head's atoms at the points where they hold
            lo, hi = scene.span(elem)
            times = [u for u in scene.times_of(elem.atom.key, args) if lo <= u <= hi]
            atoms = [(elem.atom.pred, (*args, u)) for u in (times if box else times[-1:])]
        else:
            atoms = [(elem.atom.pred, args)] if scene.holds((elem.atom.pred, args)) else []
        for atom in atoms:
            # (a blocker's own derivation may cite others: bounded, and never one being derived,
            # which only a program that is not stratified has: its answer set is a choice)
            if atom not in seen and atom not in scene.deriving and scene.citing < NESTED:
                scene.citing += 1
                try:
                    out.append(why(scene, atom))
                finally:
                    scene.citing -= 1
    return out


def missing_events(scene: Scene, rule: Rule, env: Binding) -> list[Event]:
    """The input events that might, each alone, make the rule derive the atom at T: where its
    first failing literal is a positive input literal (in a time window) that one event
    satisfies, that event, its variables the body leaves open read from the values the
    stream and the body have — at T for one without a window; for a diamond at each point of
    its window, T first and then earlier ones (an event at T may also meet a literal that
    keeps the atom out, as ``not p(X)`` beside ``p(X) [2]``: one at T−1 does not); at the time
    an ``at`` names (else its window's, latest first); for a box, at the one point of its
    window that lacks the fact (none where more do); for a tuple window at T, the newest fact,
    which the window always holds (it may shift another literal's tuple window: the check
    decides) — under ``always``, only where the facts it keeps give the atom at every
    earlier point the box then covers (``_fills``).  At most ``POINTS`` points, the open
    values' groundings at one time before those at the next.  Only candidates: the runtime
    names one only after evaluating the input with it (other literals, negations a new event
    blocks), so nothing here needs to be exact."""
    for k in range(1, len(rule.body) + 1):
        if not solutions(scene, rule, env, k):
            break
    else:
        return []
    elem = rule.body[k - 1]
    if not isinstance(elem, ExtAtom) or elem.negated or scene.intensional(elem.atom.key):
        return []
    lo, hi = scene.span(elem)
    bounds = {c.value + d for e in rule.body if isinstance(e, Compare) for c in (e.left, e.right)
              if isinstance(c, Const) and type(c.value) is int for d in (-1, 0, 1)}
    values = sorted({a for _, key, args, _ in scene.stream if key[0] == elem.atom.pred for a in args}
                    | set(env.values()) | bounds, key=lambda v: (type(v) is str, v))
    tests = [e for e in rule.body if isinstance(e, Compare)]
    rows: list[tuple[int, int, Event]] = []  # (the rank of its time, of its grounding, the event)
    ground = [(b, args, grounded) for b in (solutions(scene, rule, env, k - 1) or [env])[:3]
              for args, grounded in _groundings(elem.atom.args, b, values)
              if all(_compare(c, grounded) != [] for c in tests)]  # (a comparison it leaves open: maybe)
    for n, (b, args, grounded) in enumerate(ground):
        rows += [(rank, n, Event(at, elem.atom.pred, args))
                 for rank, at in enumerate(_event_times(scene, elem, b, grounded, lo, hi))]
    return [ev for _, _, ev in sorted(rows, key=lambda row: row[:2])]


def _event_times(scene: Scene, elem: ExtAtom, b: Binding, grounded: Binding, lo: int, hi: int) -> list[int]:
    """The times at which one event of the (ground) input literal ``elem`` would make it
    hold at T, in the order they are tried (``missing_events``), at most ``POINTS``."""
    if elem.op is Op.NOW:
        return [scene.t]
    if isinstance(elem.window, TupleWindow):  # the newest fact, which its window always holds
        if elem.op is Op.BOX and not _fills(scene, elem, grounded):
            return []
        return [scene.t] if elem.op is not Op.AT or scene.t in _at_times(elem, b, scene.t, scene.t) else []
    if elem.op is Op.AT:
        return _at_times(elem, b, lo, hi)[:POINTS]
    if elem.op is Op.DIAMOND:
        return list(range(hi, lo - 1, -1))[:POINTS]
    met = {at for at, _, _ in scene.witnesses(elem, grounded)}  # a box: the one point without it
    lacking = [u for u in range(hi, lo - 1, -1) if u not in met]
    return lacking if len(lacking) == 1 else []


def _fills(scene: Scene, elem: ExtAtom, grounded: Binding) -> bool:
    """Whether one fact of a box over a tuple window (``p(X) always [n #]``), the newest at T,
    makes it hold: the window then selects it and the n−1 facts before it, and the box covers
    every point from the oldest one's time (the stream's first time where there are fewer) to
    T, each of which but T those facts must give the atom at (else the check would be spent on
    an event that cannot do it)."""
    size = elem.window.size
    if size < 1:
        return False
    kept = scene.stream[len(scene.stream) - (size - 1):] if size > 1 else []
    lo = (kept[0][0] if kept else scene.t) if len(kept) == size - 1 else scene.t1
    key, pattern = elem.atom.key, _pattern(elem)
    met = {at for at, k, args, _ in kept if k == key and _unify(pattern, args, grounded) is not None}
    return all(u in met for u in range(lo, scene.t))


def _at_times(elem: ExtAtom, b: Binding, lo: int, hi: int) -> list[int]:
    """The times an ``at`` literal's event may have: the one it names, else its window's, latest first."""
    if isinstance(elem.time, Const) or (isinstance(elem.time, Var) and elem.time.name in b):
        at = elem.time.value if isinstance(elem.time, Const) else b[elem.time.name]
        return [at] if type(at) is int and lo <= at <= hi else []
    return list(range(hi, lo - 1, -1))


def _groundings(terms: tuple, b: Binding, values: list[Any]) -> list[tuple[tuple, Binding]]:
    """The literal's arguments under ``b``, each open variable given each value of ``values``."""
    rows: list[tuple[tuple, Binding]] = [((), b)]
    for term in terms:
        nxt = []
        for row, env in rows:
            if isinstance(term, Var) and term.name not in env:
                nxt += [((*row, v), {**env, term.name: v}) for v in values]
            else:
                try:
                    nxt.append(((*row, _eval(term, env)), env))
                except (KeyError, _Undefined):
                    continue
        rows = nxt
    return rows


def _failing_atom(scene: Scene, elem: Any, envs: list[Binding]) -> Atom | None:
    """The atom a failing positive literal asks for, when it is one atom the part before binds
    (an ``@``-head predicate's: without its time, which ``_points`` gives).  A window over any
    other derived predicate sees what the evaluation of T derives, at T only (LARS.md), so a
    diamond (and an ``at`` or a box whose window is T alone) asks for the atom at T."""
    if not isinstance(elem, ExtAtom) or elem.negated or len(envs) != 1 or isinstance(elem.window, TupleWindow):
        return None
    if not scene.intensional(elem.atom.key):
        return None
    if elem.atom.key not in scene.timed and elem.op is not Op.NOW:
        if elem.op is Op.BOX and scene.span(elem)[0] < scene.t:
            return None  # it needs the atom before T, which the evaluation of T never derives
        if elem.op is Op.AT and elem.time is not None and not (isinstance(elem.time, Var) and elem.time.name not in envs[0]):
            try:
                if _eval(elem.time, envs[0]) != scene.t:
                    return None
            except (KeyError, _Undefined):
                return None
    try:
        return elem.atom.pred, tuple(_eval(a, envs[0]) for a in elem.atom.args)
    except (KeyError, _Undefined):
        return None


def _failure(scene: Scene, elem: Any, envs: list[Binding], head: Binding) -> str:
    b = envs[0] if len(envs) == 1 else head  # several ways the part before it holds: the head's values only
    if isinstance(elem, Compare):
        return f"{elem} is false" + _values(elem.variables(), b)
    shown = _literal_text(scene, elem, b)
    if elem.negated:
        positive = ExtAtom(elem.atom, elem.op, elem.window, elem.time)
        if scene.intensional(elem.atom.key):
            return f"{shown} fails: {_literal_text(scene, positive, b)} holds at {scene.t} (in the answer)"
        seen = scene.witnesses(positive, b)
        where = ", ".join(f"at {at}" + (f" from {loc}" if loc else "") for at, _, loc in seen[:3])
        return f"{shown} fails: {_literal_text(scene, positive, b)} holds ({where})"
    if scene.intensional(elem.atom.key):
        inside = "" if elem.op is Op.NOW else f" ({_window_text(scene, elem)})"
        return f"{shown} fails: no such atom in the answer at {scene.t}{inside}"
    if elem.op is Op.BOX and not isinstance(elem.window, TupleWindow) and elem.variables() <= set(b):
        met = {at for at, _, _ in scene.witnesses(elem, b)}
        lo, hi = scene.span(elem)
        lacking = [u for u in range(lo, hi + 1) if u not in met]
        if met and lacking:  # (some points have it: say which do not)
            at = ", ".join(map(str, lacking[:POINTS])) + (", ..." if len(lacking) > POINTS else "")
            return f"{shown} fails: no matching fact at {at} ({_window_text(scene, elem)})"
    return f"{shown} fails: no matching fact {'' if elem.op is Op.NOW else 'in '}{_window_text(scene, elem)}"


def explainer(program: Any) -> Callable[..., Any]:
    """``chronolog explain --why / --why-not`` of a LARS program (``Dialect.explain``).
    ``versions``: every program version (from T or None, program, its own answer lines on the
    input) of an upgraded run, whose answers ``lines`` are: each evaluation is explained with
    the version in force at the point it evaluates, against that version's answers (contract
    section 6), so an ``@``-head's atom dated before T that an evaluation from T on derives is
    explained with the new version, one an evaluation before T derives with the old."""
    plans = {id(program): plan_program(program)}

    def explain(events: Any, lines: Any, atom: Any, t: Any, mode: str, every: bool, depth: int | None,
                evaluator: Any = None, versions: Any = None) -> Any:
        events = list(events)
        chain = versions or [(None, program, list(lines))]
        scenes: dict[int, Scene] = {}

        def plan_of(version: Any) -> Plan:
            plan = plans.get(id(version))
            if plan is None:
                plan = plans[id(version)] = plan_program(version)
            return plan

        def scene(at: int) -> Scene:
            """The evaluation of ``at``, by the version in force there, against its answers
            (made once: the search for the deriving evaluation and the why-not read the same)."""
            got = scenes.get(at)
            if got is None:
                _, version, answers = [v for v in chain if v[0] is None or v[0] <= at][-1]
                got = scenes[at] = Scene(version, plan_of(version), events, answer_at(answers, at), at)
            return got

        key = (atom[0], len(atom[1]))
        if all(key not in at_head_predicates(p) for _, p, _ in chain):
            here = scene(t)
            return why(here, atom, every, depth) if mode == "why" else why_not(here, atom)
        # an @-head's atom at t: derived by the evaluation of t or of a later point (its rule's window)
        timed = (atom[0], (*atom[1], t))
        last = max((e.t for e in events), default=t)
        for at in range(t, last + 1):
            got = scene(at)
            asked = timed if key in got.timed else atom if at == t else None  # (a plain head derives at its point only)
            if asked is not None and got.holds(asked):
                return why(got, asked, every, depth) if mode == "why" else why_not(got, asked)
        here = scene(t)
        node = why_not(here, timed if key in here.timed else atom)
        starts = {since for since, _, _ in chain[1:] if t < since <= last}
        reaches = [plan_of(p).output_reach for _, p, _ in chain]
        ahead = POINTS if None in reaches else max(r for r in reaches if r is not None)
        times = sorted({*range(t + 1, min(last, t + ahead) + 1), *starts})
        return _later_evaluations(node, timed, key, (scene(at) for at in times), starts)

    return explain


def _later_evaluations(node: Node, timed: Atom, key: PredKey, scenes: Iterable[Scene], starts: set[int]) -> Node:
    """A why-not of an ``@``-head's atom (at the evaluation of its time) with why the later
    evaluations that could still date it back (within their rules' reach; ``POINTS`` of
    them where a reach is unbounded) do not derive it either: the first evaluation of each
    later program version (``starts``) in full, and each other evaluation's rules whose
    first failing literal is not the one that failed at the evaluation before (the same
    literal failing again says nothing new)."""
    failed = {entry.rule: entry.literal for entry in node.entries}
    for later in scenes:
        back = later.plan.output_reach
        if key not in later.timed or (back is not None and later.t - back > timed[1][-1]):
            continue
        first = later.t in starts
        entries = []
        for entry in _rule_failures(later, timed, nested=False):
            if first or failed.get(entry.rule) != entry.literal:
                version = f" (the program version from {later.t})" if first else ""
                entry.text = f"at the evaluation of {later.t}{version}: {entry.text}"
                entries.append(entry)
            failed[entry.rule] = entry.literal
        if entries:
            node.why_not = [*node.entries, *entries]
            if node.kind == "none":
                node.kind, node.text = "why-not", f"{atom_text(timed[0], timed[1][:-1])} does not hold at {timed[1][-1]}"
    return node
