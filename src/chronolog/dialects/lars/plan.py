"""Program analysis: predicates, safety, components, strata and reach.

Everything the evaluators and the runtimes need to know about a program
before the first event arrives is computed here, once:

* which predicates are extensional (fed by the stream), intensional
  (derived), *timed* (derived at other time points through ``@``-heads,
  stored with an explicit time column) or *now* (derived only at the
  evaluation time, stored without one);
* the components (strongly connected components of the dependency graph)
  in evaluation order, and whether the program is stratified;
* how far back in time the answers at ``t`` can depend on the input
  (``state_reach``) and how far back an evaluation can derive atoms
  (``output_reach``), which bound replays of delayed events.

Two rewrites make the engine uniform: program facts of an intensional
predicate and stream facts of an intensional predicate become ordinary
``@``-rules over hidden extensional predicates.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from chronolog.core.errors import ProgramError
from chronolog.core.graph import strongly_connected as _tarjan
from chronolog.core.records import field, record
from chronolog.dialects.lars.ir import (
    Atom,
    Compare,
    Const,
    ExtAtom,
    Head,
    Op,
    Program,
    Rule,
    TimeWindow,
    TupleWindow,
    Var,
    expr_vars,
)

PredKey = tuple[str, int]
TICK: PredKey = ("#tick", 0)  # holds at every time point of the timeline
INPUT_SUFFIX = "#in"  # stream facts of an intensional predicate p arrive as p#in


@record
class Component:
    """A strongly connected set of intensional predicates and their rules."""

    preds: list[PredKey]
    rules: list[Rule]
    recursive: bool
    stratified: bool  # no negation inside the component
    stratum: int = 0

    @property
    def reads(self) -> set[PredKey]:
        """The predicates its rules' bodies read (its own too, where it is recursive)."""
        return {b.atom.key for r in self.rules for b in r.body if isinstance(b, ExtAtom)}


_BY_REFERENCE: dict[str, Plan] = {}


def _plan_named(name: str) -> Plan:
    return _BY_REFERENCE[name]


@contextlib.contextmanager
def plan_by_reference(plan: Plan, name: str = "plan") -> Iterator[None]:
    """Pickle ``plan`` as a reference to ``name`` (and unpickle that name as ``plan``).

    The plan is static and large (the whole program IR): state snapshots and
    engine clones leave it out and the restoring process supplies its own.
    """
    saved = _BY_REFERENCE.get(name)
    _BY_REFERENCE[name] = plan
    try:
        yield
    finally:
        if saved is None:
            del _BY_REFERENCE[name]
        else:
            _BY_REFERENCE[name] = saved


@record
class Plan:
    program: Program
    rules: list[Rule]  # after rewrites, without program facts of extensional predicates
    extensional: set[PredKey]
    intensional: set[PredKey]
    timed: set[PredKey]  # intensional predicates with an explicit time column
    background: dict[PredKey, list[tuple]]  # program facts of extensional predicates
    output: set[PredKey]
    components: list[Component]  # in evaluation order
    stratified: bool
    state_reach: int | None  # None: unbounded (replay from the first time point)
    tuple_reach: int  # largest tuple window
    output_reach: int | None  # how far back an evaluation derives atoms; None: unbounded
    input_routes: dict[PredKey, PredKey] = field(default_factory=dict)
    # Rules added by the rewrites.  An atom they derive at an earlier time is
    # background or input, not an answer "derived through an @-head": it is
    # output only at its own time point.
    hidden_rules: list[Rule] = field(default_factory=list)
    # How a program that is not stratified is evaluated: "tms" (incremental truth
    # maintenance, engine/tms_engine.py) or "oneshot" (clingo per time point);
    # a trailing "!" applies the mode to a stratified program too (cross-checks);
    # the TMS's choice seed; which answer set one-shot takes (``--models``: one
    # reasoner per model k, each taking clingo's k-th, or its last if fewer).
    solver: str = "tms"
    seed: int = 0
    model: int = 0

    def __reduce_ex__(self, protocol: object) -> object:
        for name, plan in _BY_REFERENCE.items():
            if plan is self:
                return (_plan_named, (name,))
        return object.__reduce_ex__(self, protocol)  # type: ignore[arg-type]

    def is_hidden(self, rule: Rule) -> bool:
        return any(rule is h for h in self.hidden_rules)

    @property
    def padded(self) -> set[PredKey]:
        """Timed predicates some hidden rule derives."""
        return {r.head.atom.key for r in self.hidden_rules if r.head.time is not None}

    @property
    def output_preds(self) -> set[str]:
        return {p for p, _ in self.output}

    @property
    def strata(self) -> list[list[str]]:
        """Predicate names per stratum, lowest first (hidden helpers omitted)."""
        n = max((c.stratum for c in self.components), default=-1) + 1
        out: list[list[str]] = [[] for _ in range(n)]
        for c in self.components:
            out[c.stratum].extend(f"{p}/{k}" for p, k in c.preds if "#" not in p)
        return [sorted(s) for s in out]

    @property
    def fleet_strata(self) -> int:
        """How many reasoner services the fleet runs: one per stratum, or one
        for a program that is not stratified (clingo evaluates it whole)."""
        if not self.stratified:
            return 1
        return max((c.stratum for c in self.components), default=0) + 1


def plan_program(program: Program) -> Plan:
    """Analyse ``program``; raise ProgramError for unsafe or unsupported rules."""
    program = Program(tuple(_name_anonymous(r) for r in program.rules), program.dialect)
    for rule in program.rules:
        _check_rule(rule)
    heads = {r.head.atom.key for r in program.rules if r.body or r.head.time is not None}
    output = {r.head.atom.key for r in program.rules if r.body}
    intensional = set(heads)
    body_preds = {b.atom.key for r in program.rules for b in r.body if isinstance(b, ExtAtom)}
    extensional = (body_preds - intensional) | {TICK}
    for rule in program.rules:
        for b in rule.body:
            if isinstance(b, ExtAtom) and isinstance(b.window, TupleWindow) and b.atom.key in intensional:
                raise ProgramError(
                    f"tuple window over intensional predicate {b.atom.pred}/{len(b.atom.args)}: "
                    "tuple windows count stream facts only",
                    b.loc or rule.loc,
                )
    reads = _max_windows(program.rules)
    rules: list[Rule] = []
    hidden: list[Rule] = []
    background: dict[PredKey, list[tuple]] = {}
    for rule in program.rules:
        key = rule.head.atom.key
        if rule.body or rule.head.time is not None:
            rules.append(rule)
        elif key in intensional:
            hidden.append(_holds_when(rule.head.atom, Atom(TICK[0]), reads.get(key, 0), rule))
        else:
            background.setdefault(key, []).append(tuple(a.value for a in rule.head.atom.args))  # type: ignore[union-attr]
    input_routes: dict[PredKey, PredKey] = {}
    for key in sorted(intensional):
        route = (key[0] + INPUT_SUFFIX, key[1])
        input_routes[key] = route
        extensional.add(route)
        args = tuple(Var(f"X{i}") for i in range(key[1]))
        hidden.append(_holds_when(Atom(key[0], args), Atom(route[0], args), reads.get(key, 0), None))
    rules += hidden
    timed = {r.head.atom.key for r in rules if r.head.time is not None}
    components = _components(rules, intensional)
    stratified = all(c.stratified for c in components)
    return Plan(
        program=program,
        rules=rules,
        extensional=extensional,
        intensional=intensional,
        timed=timed,
        background=background,
        output=output,
        components=components,
        stratified=stratified,
        state_reach=_state_reach(rules, intensional),
        tuple_reach=max(
            (b.window.size for r in rules for b in r.body if isinstance(b, ExtAtom) and isinstance(b.window, TupleWindow)),
            default=0,
        ),
        output_reach=_output_reach(rules),
        input_routes=input_routes,
        hidden_rules=hidden,
    )


# ---------------------------------------------------------------- safety

ANONYMOUS = "_"


def _name_anonymous(rule: Rule) -> Rule:
    """Give each ``_`` of a positive atom a fresh name; ``_`` in a negated atom
    stays anonymous (``not p(_)``: no p at all), as in ASP."""
    counter = 0

    def rename(lit: ExtAtom) -> ExtAtom:
        nonlocal counter
        if lit.negated or not any(isinstance(a, Var) and a.name == ANONYMOUS for a in lit.atom.args):
            return lit
        args = []
        for a in lit.atom.args:
            if isinstance(a, Var) and a.name == ANONYMOUS:
                counter += 1
                a = Var(f"_{counter}")
            args.append(a)
        return ExtAtom(Atom(lit.atom.pred, tuple(args)), lit.op, lit.window, lit.time, lit.negated, lit.loc)

    body = tuple(rename(b) if isinstance(b, ExtAtom) else b for b in rule.body)
    return rule if body == rule.body else Rule(rule.head, body, rule.loc)



def _check_rule(rule: Rule) -> None:
    bound: set[str] = set()
    for b in rule.body:
        if isinstance(b, ExtAtom) and not b.negated:
            bound |= b.variables()
    assigns = [b for b in rule.body if isinstance(b, Compare) and b.op == "="]
    changed = True
    while changed:
        changed = False
        for c in assigns:
            for side, other in ((c.left, c.right), (c.right, c.left)):
                if isinstance(side, Var) and side.name not in bound and expr_vars(other) <= bound:
                    bound.add(side.name)
                    changed = True
    for b in rule.body:
        if isinstance(b, ExtAtom):
            if b.op is Op.AT and b.time is None:
                raise ProgramError("'at' needs a time", b.loc or rule.loc)
            if b.op in (Op.DIAMOND, Op.BOX) and b.window is None:
                raise ProgramError(f"'{b.op.value}' needs a window", b.loc or rule.loc)
            if b.window is not None and b.window.size < (1 if isinstance(b.window, TupleWindow) else 0):
                raise ProgramError(f"bad window size {b.window.size}", b.loc or rule.loc)
        missing = sorted(b.variables() - bound - {ANONYMOUS})
        if isinstance(b, Compare) and ANONYMOUS in b.variables():
            missing.append(ANONYMOUS)
        if missing:
            raise ProgramError(
                f"unsafe variable {', '.join(missing)} in '{b}': every variable must occur in a "
                "positive body atom or be assigned with '='",
                b.loc or rule.loc,
            )
    head_vars = rule.head.atom.variables() | (
        {rule.head.time.name} if isinstance(rule.head.time, Var) else set()
    )
    missing = sorted(head_vars - bound)
    if missing:
        raise ProgramError(
            f"unsafe variable {', '.join(missing)} in the head '{rule.head}': it must occur in a positive body atom",
            rule.loc,
        )


# ---------------------------------------------------------------- rewrites


def _max_windows(rules: list[Rule] | tuple[Rule, ...]) -> dict[PredKey, int | None]:
    """Per predicate, how far back any rule looks at it (None: the whole timeline)."""
    out: dict[PredKey, int | None] = {}
    for r in rules:
        for b in r.body:
            if not isinstance(b, ExtAtom):
                continue
            k = b.atom.key
            w: int | None
            if b.op is Op.NOW:
                w = 0
            elif b.window is None:
                w = None
            elif isinstance(b.window, TimeWindow):
                w = b.window.size
            else:
                w = None
            prev = out.get(k, 0)
            out[k] = None if (prev is None or w is None) else max(prev, w)
    return out


def _holds_when(head: Atom, source: Atom, reach: int | None, rule: Rule | None) -> Rule:
    """``head`` holds whenever the hidden extensional ``source`` does.

    Used for program facts of a derived predicate (source: the timeline) and
    stream facts of a derived predicate (source: its hidden input).  When the
    program only reads ``head`` at the current time a plain rule suffices;
    otherwise it derives ``head`` at every point the program looks back at.
    """
    loc = rule.loc if rule else None
    if reach == 0:
        return Rule(Head(head), (ExtAtom(source),), loc)
    window = None if reach is None else TimeWindow(reach)
    return Rule(Head(head, Var("T")), (ExtAtom(source, Op.AT, window, Var("T")),), loc)


# ---------------------------------------------------------------- components


def _components(rules: list[Rule], intensional: set[PredKey]) -> list[Component]:
    deps: dict[PredKey, set[tuple[PredKey, bool]]] = {p: set() for p in intensional}
    for r in rules:
        h = r.head.atom.key
        for b in r.body:
            if isinstance(b, ExtAtom) and b.atom.key in intensional:
                deps[h].add((b.atom.key, b.negated))
    sccs = _tarjan(sorted(intensional), {p: {q for q, _ in d} for p, d in deps.items()})
    comp_of = {p: i for i, scc in enumerate(sccs) for p in scc}
    comps: list[Component] = []
    for i, scc in enumerate(sccs):  # Tarjan yields dependencies first
        members = set(scc)
        crules = [r for r in rules if r.head.atom.key in members]
        inner = [(q, neg) for p in scc for q, neg in deps[p] if q in members]
        recursive = bool(inner)
        stratified = not any(neg for _, neg in inner)
        stratum = 0
        for p in scc:
            for q, neg in deps[p]:
                if comp_of[q] != i:
                    stratum = max(stratum, comps[comp_of[q]].stratum + (1 if neg else 0))
        comps.append(Component(sorted(scc), crules, recursive, stratified, stratum))
    return comps


# ---------------------------------------------------------------- reach


def _state_reach(rules: list[Rule], intensional: set[PredKey]) -> int | None:
    """How far back from t the evaluation at t reads the stream (None: unbounded).

    Every evaluation derives everything afresh from windows relative to the
    same t, so only windows over stream predicates matter, and they do not
    add up: the bound is the largest of them (a windowless ``at`` over a
    stream predicate reads the whole timeline).  Tuple windows count facts,
    not time points: see ``Plan.tuple_reach``.
    """
    reach = 0
    for r in rules:
        for b in r.body:
            if not isinstance(b, ExtAtom) or b.atom.key in intensional:
                continue
            if b.op is Op.AT and b.window is None:
                return None
            if isinstance(b.window, TimeWindow):
                reach = max(reach, b.window.size)
    return reach


def _rule_reach(r: Rule) -> int | None:
    """How far before t the rule's head atoms can lie at an evaluation at t
    (0 for a head at t; None: unbounded).  An ``@ T`` head reaches back as
    far as the narrowest positive ``at T [n]`` literal binding T allows."""
    ht = r.head.time
    if ht is None:
        return 0
    if isinstance(ht, Const):
        return None
    w = None
    for b in r.body:
        if (
            isinstance(b, ExtAtom)
            and not b.negated
            and b.op is Op.AT
            and b.time == ht
            and isinstance(b.window, TimeWindow)
        ):
            w = b.window.size if w is None else min(w, b.window.size)
    return w


def _output_reach(rules: list[Rule]) -> int | None:
    """How far before t an evaluation at t can derive atoms (None: unbounded)."""
    reach = 0
    for r in rules:
        w = _rule_reach(r)
        if w is None:
            return None
        reach = max(reach, w)
    return reach


def plan_back(plan: Plan) -> int | None:
    """How far back a plan's answers at a time read input, for whether the retained input
    covers an upgrade (None: unbounded, or a tuple window, which counts facts rather than
    time; ``versions.retention_back`` of ``hooks.lars_reach``)."""
    if plan.state_reach is None or plan.output_reach is None or plan.tuple_reach:
        return None
    return int(plan.state_reach)


def time_reach(plan: Plan) -> dict[PredKey, int | None]:
    """Per timed predicate, how far before t the atoms derived at t can lie
    (None: unbounded).  A window over the predicate at least that wide sees
    all of it."""
    out: dict[PredKey, int | None] = {}
    for r in plan.rules:
        key = r.head.atom.key
        if key not in plan.timed:
            continue
        w = _rule_reach(r)
        prev = out.get(key, 0)
        out[key] = None if prev is None or w is None else max(prev, w)
    return out


def trim_stream(events: list[tuple[int, object, tuple]], t: int, plan: Plan) -> None:
    """Drop from ``events`` (time-ordered stream facts) those no window of ``plan`` can
    see at ``t`` or later: older than its ``state_reach``, beyond the last facts its
    tuple windows count (the per-point engines that keep the stream: clingo, TMS)."""
    reach = plan.state_reach
    if reach is None:
        return
    cut = 0
    while cut < len(events) and events[cut][0] < t - reach:
        cut += 1
    cut = min(cut, max(0, len(events) - plan.tuple_reach))
    del events[:cut]
