"""The RTEC evaluator behind ``chronolog.evaluator.Evaluator``.

RTEC's semantics over the clock-tick grid (seed 004; ``docs/rtec.md``): a
simple fluent F=V holds from the time point after an initiation up to and
including its termination (an initiation of F=V2 terminates F=V), by
inertia; ``initially`` makes it hold from 0; a deadline ``fi(F=V,F=V2,D)``
initiates F=V2 D ticks after F=V was initiated if it still holds.  A
statically determined fluent is the interval list its ``holdsFor`` body
builds.  ``start(F=V)`` happens at the last time point before F=V holds,
``end(F=V)`` at the last one at which it holds.

Evaluation is RTEC's, over one *window* at a time: every entity is computed
in hierarchy order (the dependency graph's strongly connected components)
for the times from the window's start ``lo`` on, on top of what is stored
for the times before it.  A stream advances with windows ``(done, until]``
(``step`` ticks at least); a delayed event or a retraction only moves the
next window's start back to the earliest time it affects (RTECinc's repair:
nothing before that time is derived again).  Events at a time ``t`` need the
input up to ``t + tick`` (``end`` of a point fluent), so a window only
derives the events up to ``until - tick``; ``finish`` derives the rest, and
the deadlines that fall after the last event.

Answers are the maximal intervals of the output entities (fluent-value pairs
defined by rules and admitted by ``grounding/1``), as changes of the
published lists: an interval still holding at the evaluated time is
published open, ``[a,inf)``, and corrected when it ends.
"""

from __future__ import annotations

import gc
import heapq
from bisect import bisect_left, bisect_right, insort
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from operator import itemgetter
from typing import Any, ClassVar

from chronolog.core.errors import ChronologError, ProgramError
from chronolog.evaluator import AnswerChange, Changes, Span, StateError, Time, check_state_header
from chronolog.core.events import Event, TimeRows
from chronolog.core.graph import strongly_connected
from chronolog.dialects.rtec.prolog import term_text
from chronolog.dialects.rtec.parser import RtecProgram
from chronolog.dialects.rtec import intervals as IV
from chronolog.dialects.rtec.inline import inline_goal
from chronolog.dialects.rtec.local import local_runner
from chronolog.dialects.rtec.sdf import compile_sdf, run_sdf
from chronolog.dialects.rtec.intervals import INF
from chronolog.dialects.rtec.solve import (
    _FLOAT,
    inst,
    has_slot,
    Ivs,
    Rule,
    Slot,
    SolveError,
    Solver,
    Var,
    deref,
    from_list,
    is_ground,
    ivs_term,
    resolve,
)
from chronolog.state.codec import reading, versioned

Key = tuple[str, int]  # a fluent's or event's functor and arity
NEG_INF = -INF
_ONE = (None,)  # one solution, no bindings (chronolog.dialects.rtec.solve's convention)
_NONE = object()  # no (further) solution
_START = itemgetter(0)
_END = itemgetter(1)
ANY = object()  # the value of a termination whose value is left free: whatever holds


class _Deferred(Exception):
    pass


def _fv(term: Any) -> tuple[Key, tuple, Any] | None:
    """(key, args, value) of a resolved ``F=V`` term (None if it is not one)."""
    term = deref(term)
    if type(term) is not tuple or term[0] != "=" or len(term) != 3:
        return None
    f = deref(term[1])
    if type(f) is tuple:
        return (f[0], len(f) - 1), f[1:], term[2]
    if type(f) is str:
        return (f, 0), (), term[2]
    return None


def _grounding_key(term: Any) -> Key | None:
    """The functor of F in a grounding/1 argument F=V (of the event E in E); None if unbound."""
    term = deref(term)
    if type(term) is tuple and term[0] == "=" and len(term) == 3:
        term = deref(term[1])
    if type(term) is Slot or type(term) is Var:
        return None
    return _key(term)


def _key(term: Any) -> Key | None:
    term = deref(term)
    if type(term) is tuple:
        return term[0], len(term) - 1
    if type(term) is str:
        return term, 0
    return None


def _fterm(key: Key, args: tuple) -> Any:
    return (key[0], *args) if key[1] else key[0]


def _fv_node(fv: Any) -> tuple | None:
    """("fluent", key, value or None) of an F=V pattern in a rule."""
    if isinstance(fv, tuple) and fv[0] == "=" and len(fv) == 3 and isinstance(fv[1], tuple | str):
        v = fv[2]
        return ("fluent", _key(fv[1]), None if isinstance(v, Slot) or (isinstance(v, tuple) and has_slot(v)) else v)
    return None


def _uses(goal: Any, out: list[tuple]) -> None:
    """The entities a rule's body goal depends on: ("event", key) or ("fluent", key, value|None)."""
    if isinstance(goal, Slot) or not isinstance(goal, tuple):
        return
    name, n = goal[0], len(goal) - 1
    if (name, n) in ((",", 2), (";", 2), ("->", 2)):
        _uses(goal[1], out)
        _uses(goal[2], out)
    elif (name, n) in (("\\+", 1), ("not", 1)):
        _uses(goal[1], out)
    elif (name, n) == ("findall", 3):
        _uses(goal[2], out)
    elif (name, n) == ("happensAt", 2):
        e = goal[1]
        if isinstance(e, tuple) and e[0] in ("start", "end") and len(e) == 2:
            node = _fv_node(e[1])
            if node is not None:
                out.append(node)
        elif isinstance(e, tuple | str):
            out.append(("event", _key(e)))
    elif (name, n) in (("holdsAt", 2), ("holdsFor", 2)):
        node = _fv_node(goal[1])
        if node is not None:
            out.append(node)


def _head_entity(kind: str, rule: Rule) -> tuple:
    head = rule.head
    if kind == "happensAt":
        k = _key(head[1])
        if k is None:
            raise ProgramError("happensAt/2 head: the event must be an atom or a compound term", rule.loc)
        return ("event", k)
    node = _fv_node(head[1])
    assert node is not None
    return node if kind == "holdsFor" else ("fluent", node[1], None)


def _sccs(nodes: list, edges: dict) -> list[list]:
    """Strongly connected components, dependencies first (the planner's Tarjan, over names)."""
    name = {repr(n): n for n in nodes}
    got = strongly_connected(sorted(name), {repr(n): {repr(d) for d in edges.get(n, ())} for n in nodes})
    return [[name[x] for x in comp] for comp in got]


class Hierarchy:
    """What each derived entity is and the order to compute them in.

    An entity is an event ("event", key), a simple fluent ("fluent", key, None)
    (all its values together: initiating one value terminates the others) or
    a statically determined fluent-value pair ("fluent", key, value)."""

    def __init__(self, program: RtecProgram) -> None:
        self.kind: dict[tuple, str] = {}  # entity -> "simple" | "sdf" | "event"
        self.rules: dict[tuple, list[tuple[str, Rule]]] = defaultdict(list)
        self.sdf_values: dict[Key, set] = defaultdict(set)  # values of a fluent defined by holdsFor
        for kind, rule in program.rules:
            ent = _head_entity(kind, rule)
            what = {"initiatedAt": "simple", "terminatedAt": "simple", "holdsFor": "sdf", "happensAt": "event"}[kind]
            if self.kind.setdefault(ent, what) != what:
                raise ProgramError(f"{ent[1][0]}/{ent[1][1]} is defined both as a simple and as a statically "
                                   f"determined fluent", rule.loc)
            if what == "sdf":
                if ent[2] is None:
                    raise ProgramError("a holdsFor/2 head needs a ground value (F=V)", rule.loc)
                self.sdf_values[ent[1]].add(ent[2])
            self.rules[ent].append((kind, rule))
        edges: dict = {}
        for ent, rules in self.rules.items():
            deps: list = []
            for _, rule in rules:
                for g in rule.body:
                    _uses(g, deps)
            edges[ent] = sorted({n for d in deps for n in self.nodes(d)}, key=repr)
        self.order = _sccs(list(self.rules), edges)
        self.level: dict = {}
        for comp in self.order:
            lvl = 1 + max((self.level[d] for e in comp for d in edges[e] if d not in comp), default=0)
            for e in comp:
                self.level[e] = lvl
            cyclic = len(comp) > 1 or comp[0] in edges[comp[0]]
            if cyclic and any(self.kind[e] != "simple" for e in comp):
                bad = next(e for e in comp if self.kind[e] != "simple")
                loc = self.rules[bad][0][1].loc
                raise ProgramError(f"{bad[1][0]}/{bad[1][1]} is in a cycle of definitions; only simple fluents "
                                   f"may depend on each other cyclically", loc)
        self.edges = edges

    def nodes(self, dep: tuple) -> list[tuple]:
        """The defined entities a body reference stands for (none for input entities)."""
        if dep[0] == "event":
            return [dep] if dep in self.kind else []
        if dep[2] is not None and dep in self.kind:
            return [dep]  # a statically determined value (also beside a simple fluent's values)
        simple = ("fluent", dep[1], None)
        if dep[2] is not None:
            return [simple] if simple in self.kind else []
        return [e for e in self.kind if e[0] == "fluent" and e[1] == dep[1]]


def _add_timed(by_t: dict[int, list], times: list[int], t: int, item: Any) -> None:
    """``item`` at ``t`` in a time -> items map whose sorted times are ``times``."""
    got = by_t.get(t)
    if got is None:
        by_t[t] = [item]
        if not times or times[-1] < t:
            times.append(t)
        else:
            insort(times, t)
    else:
        got.append(item)


_META = {"call", "findall", "bagof", "setof", "aggregate_all", "forall", "\\+", "not", ",", ";", "->", "once",
         "ignore"}


def _names_read(t: Any, named: set[str]) -> bool:
    """Add to ``named`` the functors of the fluents ``t`` (a goal, or any term in it) may read
    through ``holdsFor``, or of an ``initially``/deadline's fluent; False if any fluent may be
    read (a variable fluent or goal, ``call/N``)."""
    if type(t) is not tuple:
        return type(t) is not Slot
    name = t[0]
    if name in ("holdsFor", "initially", "fi") and len(t) >= 2:
        fv = t[1]
        f = fv[1] if type(fv) is tuple and fv[0] == "=" and len(fv) == 3 else None
        f = f[0] if type(f) is tuple else f
        if type(f) is not str:
            return False
        named.add(f)
    if name == "call":
        return False
    for a in t[1:]:
        if type(a) is Slot:
            if name in _META:
                return False
        elif not _names_read(a, named):
            return False
    return True


def _as_slice(positions: tuple[int, ...]) -> slice | None:
    """The slice of a tuple's items at ``positions`` if they are consecutive and in order."""
    first = positions[0] if positions else 0
    consecutive = positions == tuple(range(first, first + len(positions)))
    return slice(first, first + len(positions)) if consecutive else None


class _Store:
    """Input and derived entities: events by time, fluent interval lists by instance."""

    def __init__(self) -> None:
        self.events: dict[Key, dict[int, list[tuple]]] = defaultdict(dict)
        self.event_times: dict[Key, list[int]] = defaultdict(list)  # sorted
        self.fluents: dict[Key, dict[tuple, dict[Any, list]]] = defaultdict(dict)  # key -> args -> value -> list
        self.points: dict[Key, dict[int, list[tuple]]] = defaultdict(dict)  # point fluents: key -> t -> [(args, v)]
        self.indexes: dict[Key, dict[int, dict[Any, dict[tuple, None]]]] = {}  # key -> position -> value -> instances
        self.point_times: dict[Key, list[int]] = defaultdict(list)  # sorted times of self.points[key]

    def add_point(self, key: Key, t: int, item: tuple) -> None:
        _add_timed(self.points[key], self.point_times[key], t, item)

    def remove_point(self, key: Key, t: int, item: tuple) -> None:
        at = self.points[key]
        at[t].remove(item)
        if not at[t]:
            del at[t]
            times = self.point_times[key]
            times.pop(bisect_left(times, t))

    def add_event(self, key: Key, t: int, args: tuple) -> None:
        _add_timed(self.events[key], self.event_times[key], t, args)

    def remove_event(self, key: Key, t: int, args: tuple) -> bool:
        got = self.events.get(key, {}).get(t)
        if not got or args not in got:
            return False
        got.remove(args)
        if not got:
            del self.events[key][t]
            times = self.event_times[key]
            times.pop(bisect_left(times, t))
        return True

    def drop_events_from(self, key: Key, lo: float) -> None:
        times = self.event_times.get(key)
        if not times:
            return
        i = bisect_left(times, lo)
        for t in times[i:]:
            del self.events[key][t]
        del times[i:]

    def fluent_list(self, key: Key, args: tuple, value: Any) -> list:
        by_args = self.fluents.get(key)
        vals = by_args.get(args) if by_args is not None else None
        got = vals.get(value) if vals is not None else None
        return [] if got is None else got

    def set_list(self, key: Key, args: tuple, value: Any, ivs: list) -> None:
        by_args = self.fluents[key]
        vals = by_args.get(args)
        if ivs:
            if vals is None:
                vals = by_args[args] = {}
                for pos, index in self.indexes.get(key, {}).items():
                    index.setdefault(args[pos], {})[args] = None
            vals[value] = ivs
        elif vals is not None:
            vals.pop(value, None)
            if not vals:
                self.drop_instance(key, args)

    def drop_instance(self, key: Key, args: tuple) -> None:
        del self.fluents[key][args]
        for pos, index in self.indexes.get(key, {}).items():
            same = index[args[pos]]
            del same[args]
            if not same:
                del index[args[pos]]

    def with_arg(self, key: Key, pos: int, value: Any) -> list[tuple]:
        """The instances of a fluent whose argument ``pos`` is ``value`` (in the store's order):
        ``holdsAt(voted(V,M)=aye, T)`` with M bound reads M's voters, not every vote."""
        by_pos = self.indexes.setdefault(key, {})
        index = by_pos.get(pos)
        if index is None:
            index = by_pos[pos] = {}
            for args in self.fluents.get(key, {}):
                index.setdefault(args[pos], {})[args] = None
        return list(index.get(value, ()))


class RtecEvaluator:
    dialect: ClassVar[str] = "rtec"

    def __init__(self, program: RtecProgram, step: int | None = None,
                 warn: Callable[[str], None] = lambda m: None, retention: int | None = None) -> None:
        self.program = program
        self.retention = retention  # repair late events up to this far back; forget what is older
        self.tick = program.clock_tick
        self.step = step if step is not None else 1000 * self.tick
        self.warn = warn
        self.h = Hierarchy(program)
        self.store = _Store()
        self.domain: dict[Key, set[tuple]] = {k: set() for k in program.dynamic_domain}
        # input functor -> [(the domain's set, arguments needed, argument positions, the same as a
        # slice if they are consecutive)], each once
        self._domain_feeds = {pred: [(self.domain[k], max(pos, default=-1) + 1, pos, _as_slice(pos)) for k, pos in
                                     dict.fromkeys((k, tuple(pos)) for k, pos in feeds)]
                              for pred, feeds in self._feeds().items()}
        self.point_decl: dict[str, int] = {}  # point fluent name -> arity of F
        for e in program.points + program.build_from_points:
            self.point_decl[e.name] = e.arity
        self.interval_decl: dict[str, int] = {e.name: e.arity for e in program.collect_intervals}
        self.unread_points = self._unread_points()  # point fluents whose interval lists are not built
        self.point_dups: dict[tuple, int] = {}  # (key, args, value, t) -> times given, for points given twice or more
        self.interval_counts: dict[tuple, int] = {}
        self.deadlines = program.deadlines
        self.fi_values: dict[Key, set] = defaultdict(set)  # fluent -> values with a deadline
        for rule in program.deadlines:
            fv = rule.head[1]
            if isinstance(fv, tuple) and not has_slot(fv[2]):
                self.fi_values[_key(fv[1])].add(fv[2])  # type: ignore[index]
        self.fi_inits: dict[tuple, list] = {}  # (key, args, value) -> its initiation times (fluents with fi)
        self.fi_terms: dict[tuple, list] = {}  # ... and its termination times
        builtins = {("happensAt", 2): self._happens, ("holdsAt", 2): self._holds_at,
                    ("holdsFor", 2): self._holds_for, ("union_all", 2): self._union,
                    ("intersect_all", 2): self._intersect, ("relative_complement_all", 3): self._rel_complement,
                    ("complement_all", 2): self._complement, ("\\+", 1): self._not}
        for key in program.dynamic_domain:
            builtins[key] = self._domain_goal(key)
        self.solver = Solver(program.background, builtins)
        self.solver.inline = lambda g, src, consts: inline_goal(self, g, src, consts)
        self.grounding_rules = program.background.get(("grounding", 1), [])
        self._grounded: dict[Any, bool] = {}
        self._grounding_rules: dict[Any, list[Rule]] = {}  # functor of the grounded term -> the clauses for it
        # non-ground head -> its groundings, an SDF entity -> its ground heads (while the domain stays)
        self._expansions: dict[Any, Any] = {}
        self.outputs = self._output_entities()
        self.needed = self._needed()
        self.domain_wide = self._domain_wide()
        self.regrow = False  # the domain grew since the last window
        self.recompute = False  # corrections re-derive from the start (a baseline for chronolog bench rtec)
        self.values = self._known_values()
        # evaluation state
        self.lo: float = NEG_INF  # the next window derives events from here on (values after it)
        self.done: float | None = None  # time evaluated up to (values final up to it)
        self.first: int | None = None
        self.latest: int | None = None
        self.win_lo: float = NEG_INF
        self.win_hi: float = NEG_INF  # the event horizon of the window being evaluated
        self.deferring: set[Key] = set()
        self.deferred: list[tuple[bool, Any]] = []
        self.sweep_open: dict = {}
        self.initialised: set = set()  # fluent-value instances whose `initially` has been applied
        self.sdf_known: set = set()  # SDF instances computed since time 0
        self._bounds: dict[tuple, Any] = {}  # point fluent boundaries of this window
        self._sdf_rules: dict[tuple, list | None] = {}  # SDF entity -> its compiled rules (rtec/sdf.py), None: generic
        self._routes: dict[str, tuple] = {}  # input functor -> how push_block stores it (_route)
        self._locals: dict[int, tuple[list, Any]] = {}  # id(body) -> (body, its local runner or None)
        self.published: dict[tuple[str, tuple], list] = {}
        self.open_published: set = set()  # published instances whose last interval is open
        self.delayed = 0
        self.unmatched_retractions = 0
        self.time_points = 0
        self.too_late = 0  # events older than the retention: ignored
        self.floor: float = NEG_INF  # times before it are forgotten (retention): no window starts earlier
        self.pruned_at: float = NEG_INF

    # ------------------------------------------------------------ declarations

    def _feeds(self) -> dict[str, list[tuple[Key, list[int]]]]:
        """Input functor -> [(domain predicate, argument positions)]: dynamicDomain facts come
        from the arguments of input entities, as their grounding/1 clauses say."""
        feeds: dict[str, list[tuple[Key, list[int]]]] = defaultdict(list)
        for rule in self.program.background.get(("grounding", 1), []):
            head = rule.head[1]
            if isinstance(head, tuple) and head[0] == "=" and len(head) == 3:
                head = head[1]
            if not isinstance(head, tuple):
                continue
            pos = {a.i: i for i, a in enumerate(head[1:]) if isinstance(a, Slot)}
            for g in rule.body:
                if isinstance(g, tuple) and (g[0], len(g) - 1) in self.program.dynamic_domain:
                    if all(isinstance(a, Slot) and a.i in pos for a in g[1:]):
                        feeds[head[0]].append(((g[0], len(g) - 1), [pos[a.i] for a in g[1:]]))
        return feeds

    def _unread_points(self) -> set[str]:
        """The point fluents whose interval lists nothing reads: no ``holdsFor`` names them,
        no rule, ``initially`` or deadline defines them (``holdsAt`` and ``start``/``end`` of a
        point fluent read its points).  Their points are stored, their lists not built (caviar's
        ``coord``: a new instance almost every row).  None at all if a goal could name any
        fluent: a variable goal or ``call/N``."""
        named: set[str] = set()
        clauses = [r for _, r in self.program.rules] + self.program.initially + self.program.deadlines
        clauses += [r for rules in self.program.background.values() for r in rules]
        for rule in clauses:
            if not all(_names_read(g, named) for g in (rule.head, *rule.body)):
                return set()
        defined = {ent[1][0] for ent in self.h.kind if ent[0] == "fluent"}
        return {name for name in self.point_decl if name not in named and name not in defined}

    def _domain_goal(self, key: Key) -> Callable:
        """A dynamicDomain predicate answers from the instances the input has shown so far, as
        in RTEC (which collects them per window): clauses of the same predicate in the program
        (ctm's vehicles.prolog) do not add instances no input names."""

        def goal(solver: Solver, g: tuple) -> Iterator[None]:
            known = self.domain.get(key, ())
            if is_ground(g):
                if tuple(resolve(a) for a in g[1:]) in known:
                    yield
                return
            mark = len(solver.trail)
            for tup in list(known):
                if solver.unify(g, (key[0], *tup)):
                    yield
                solver.undo(mark)
        return goal

    def _output_entities(self) -> set[tuple[Key, Any]]:
        out = set()
        for rule in self.grounding_rules:
            head = rule.head[1]
            if isinstance(head, tuple) and head[0] == "=" and len(head) == 3:
                k = _key(head[1])
                if k is not None and not isinstance(head[2], Slot) and self.h.nodes(("fluent", k, head[2])):
                    out.add((k, head[2]))
        return out

    def _known_values(self) -> dict[Key, set]:
        """The values of each simple fluent the event description names (ground in a rule head,
        ``initially``, ``fi`` or ``grounding``).  As in RTEC, only these are fluent-value pairs:
        initiating another value (one that only the data names, e.g. ctm's
        internal_temperature=warm) neither holds nor terminates the named ones."""
        out: dict[Key, set] = defaultdict(set)

        def note(fv: Any) -> None:
            if isinstance(fv, tuple) and fv[0] == "=" and len(fv) == 3 and not has_slot(fv[2]):
                k = _key(fv[1])
                if k is not None and ("fluent", k, None) in self.h.kind:
                    out[k].add(fv[2])

        for kind, rule in self.program.rules:
            if kind in ("initiatedAt", "terminatedAt"):
                note(rule.head[1])
        for rule in self.program.initially + self.grounding_rules:
            note(rule.head[1])
        for rule in self.deadlines:
            note(rule.head[1])
            note(rule.head[2])
        return out

    def _needed(self) -> set[tuple]:
        """The entities worth computing: outputs and what they depend on (RTEC computes no
        statically determined fluent without a grounding, unless another entity uses it)."""
        todo = [e for e in self.h.kind if e[0] == "event" or self.h.kind[e] == "simple"
                or (e[1], e[2]) in self.outputs or any(k == e[1] for k, _ in self.outputs)]
        seen = set(todo)
        while todo:
            e = todo.pop()
            for d in self.h.edges.get(e, ()):
                if d not in seen:
                    seen.add(d)
                    todo.append(d)
        return seen

    def grounded(self, fv: Any) -> bool:
        """Does grounding/1 admit this ground term?"""
        got = self._grounded.get(fv)
        if got is None:
            mark = len(self.solver.trail)
            got = False
            for _ in self._grounding(fv):
                got = True
                break
            self.solver.undo(mark)
            self._grounded[fv] = got
        return got

    def groundings(self, pattern: Any) -> list:
        """The ground terms grounding/1 gives for a pattern (a term with variables)."""
        out = []
        mark = len(self.solver.trail)
        for _ in self._grounding(pattern):
            t = resolve(pattern)
            if is_ground(t):
                out.append(t)
        self.solver.undo(mark)
        return out

    def _grounding(self, term: Any) -> Iterator[None]:
        """grounding(term) against the clauses whose head can match it: those for its fluent's
        (or event's) functor, and those with a variable there (voting has twenty clauses, and a
        publication asks once per instance)."""
        mark = len(self.solver.trail)
        key = _grounding_key(term)
        rules = self._grounding_rules.get(key)
        if rules is None:
            rules = self._grounding_rules[key] = [r for r in self.grounding_rules
                                                  if key is None or _grounding_key(r.head[1]) in (key, None)]
        yield from self.solver.solve_rules(rules, ("grounding", term))
        self.solver.undo(mark)

    # ------------------------------------------------------------ input

    def push(self, event: Event) -> None:
        if event.pred is None:
            self._saw(event.t)
            return
        pred, args, t = event.pred, event.args, event.t
        if type(args) is not tuple:
            args = tuple(args)
        span = event.span
        if self.retention is not None and self.done is not None and t < self.done - self.retention:
            self.too_late += 1  # its repair would read what is forgotten
            return
        if span is not None and pred not in self.interval_decl:
            where = f"{event.loc}: " if event.loc else ""
            raise ChronologError(f"{where}error: {pred} is not declared collectIntervals/1: it cannot be given "
                                 f"as an interval")
        if pred in self.interval_decl and span is not None:
            lo = self._interval_input(pred, args, span, event.retract, event)
        elif pred in self.point_decl:
            lo = self._point_input(pred, args, t, event.retract, event)
        else:
            lo = self._event_input(pred, args, t, event.retract, event)
        if lo is None:
            return
        if self.latest is None or not self.first <= t <= self.latest:
            self._saw(t)
        if self.done is not None and lo < self.done - self.tick + 1:
            self.delayed += 1
            if self.recompute:
                lo = NEG_INF  # the benchmark's baseline: derive everything again
        if lo < self.lo:
            self.lo = lo
        if pred in self._domain_feeds:
            self._feed_domain(pred, args)

    def push_block(self, rows: TimeRows) -> None:
        """``push`` of every row of a block (facts asserted at one time, ``TimeRows``)
        without an ``Event`` and a call each: new points and events are stored here, as
        ``_point_input`` and ``_event_input`` store them; anything else (a point with the
        wrong number of arguments, a row past the retention) goes through ``push``."""
        t = rows.t
        if self.retention is not None and self.done is not None and t < self.done - self.retention:
            for event in rows.unpacked():
                self.push(event)
            return
        routes = self._routes
        store = self.store
        all_points, point_times, fluents = store.points, store.point_times, store.fluents
        events, event_times = store.events, store.event_times
        tick = self.tick
        end = t + tick
        new_points = new_events = 0
        for i, row in enumerate(rows.facts):
            pred, args = row.pred, row.args
            route = routes.get(pred)
            if route is None:
                route = routes[pred] = self._route(pred)
            arity, key, feed, lists = route
            if arity is None:  # an event (_event_input)
                key = (pred, len(args))
                by_t = events[key]
                got = by_t.get(t)
                if got is None:
                    _add_timed(by_t, event_times[key], t, args)
                else:
                    got.append(args)
                new_events += 1
            else:  # a point of a point fluent (_point_input)
                if len(args) == arity:
                    fargs, value = args, "true"
                elif len(args) == arity + 1:
                    fargs, value = args[:-1], args[-1]
                else:
                    self.push(rows.event(i))  # its error
                    continue
                item = (fargs, value)
                points = all_points.get(key)
                at_t = points.get(t) if points is not None else None
                if at_t is None:  # (_Store.add_point)
                    if points is None:
                        points = all_points[key]
                    points[t] = [item]
                    times = point_times[key]
                    if not times or times[-1] < t:
                        times.append(t)
                    else:
                        insort(times, t)
                elif item in at_t:
                    ck = (key, fargs, value, t)
                    self.point_dups[ck] = self.point_dups.get(ck, 1) + 1
                    continue  # the same point again: nothing changes
                else:
                    at_t.append(item)
                if lists:
                    by_args = fluents.get(key)
                    vals = by_args.get(fargs) if by_args is not None else None
                    old = vals.get(value) if vals is not None else None
                    if old and old[-1][1] == t:
                        old[-1] = (old[-1][0], end)
                    elif old and old[-1][1] < t:
                        old.append((t, end))
                    else:
                        store.set_list(key, fargs, value, IV.insert(old or [], t, end))
                new_points += 1
            if feed is not None:  # (_feed_domain)
                for known, need, positions, part in feed:
                    if need <= len(args):
                        tup = args[part] if part is not None else tuple([args[p] for p in positions])
                        if tup not in known:
                            self._grow_domain(known, tup)
        if not new_points and not new_events:
            return
        # what push does after each new row (the same time: once, or counted)
        if self.latest is None or not self.first <= t <= self.latest:  # type: ignore[operator]
            self._saw(t)
        lo = t - tick if new_points else t
        done = self.done
        if done is not None:
            late = (new_points if t - tick < done - tick + 1 else 0) + (new_events if t < done - tick + 1 else 0)
            if late:
                self.delayed += late
                if self.recompute:
                    lo = NEG_INF
        if lo < self.lo:
            self.lo = lo

    def _route(self, pred: str) -> tuple[int | None, Key | None, list | None, bool]:
        """How ``push_block`` stores a row of ``pred``: the arity of its point fluent (None for an
        event), the point fluent's key, its domain feeds (None if none), whether its interval
        lists are built."""
        arity = self.point_decl.get(pred)
        key = None if arity is None else (pred, arity)
        return arity, key, self._domain_feeds.get(pred), pred not in self.unread_points

    def _saw(self, t: int) -> None:
        if self.first is None or t < self.first:
            self.first = t
        if self.latest is None or t > self.latest:
            self.latest = t

    def _split(self, pred: str, args: tuple, arity: int, event: Event) -> tuple[tuple, Any]:
        if len(args) == arity:
            return args, "true"
        if len(args) == arity + 1:
            return args[:-1], args[-1]
        raise ChronologError(f"{event.loc}: error: {pred} is a fluent of arity {arity}: it needs {arity} "
                             f"arguments (value true) or {arity + 1} (the value last), not {len(args)}")

    def _unmatched(self, event: Event) -> None:
        self.unmatched_retractions += 1
        where = f"{event.loc}: " if event.loc else ""
        self.warn(f"{where}warning: retraction of {event.pred}{list(event.args)}@{event.t} matches no earlier event; "
                  f"ignored")

    def _event_input(self, pred: str, args: tuple, t: int, retract: bool, event: Event) -> float | None:
        key = (pred, len(args))
        if retract:
            if not self.store.remove_event(key, t, args):
                self._unmatched(event)
                return None
        else:
            self.store.add_event(key, t, args)
        return t

    def _point_input(self, pred: str, args: tuple, t: int, retract: bool, event: Event) -> float | None:
        arity = self.point_decl[pred]
        if len(args) == arity:
            fargs, value = args, "true"
        else:
            fargs, value = self._split(pred, args, arity, event)
        key = (pred, arity)
        item = (fargs, value)
        points = self.store.points.get(key)
        at_t = points.get(t) if points is not None else None
        present = at_t is not None and item in at_t
        tick = self.tick
        if retract:
            if not present:
                self._unmatched(event)
                return None
            ck = (key, fargs, value, t)
            n = self.point_dups.pop(ck, 1)
            if n > 2:
                self.point_dups[ck] = n - 1
            if n == 1:
                self.store.remove_point(key, t, item)
                if pred not in self.unread_points:
                    old = self.store.fluent_list(key, fargs, value)
                    self.store.set_list(key, fargs, value, IV.subtract(old, [(t, t + tick)]))
            return t - tick
        if present:
            ck = (key, fargs, value, t)
            self.point_dups[ck] = self.point_dups.get(ck, 1) + 1
            return None  # the same point again: nothing changes
        if at_t is not None:
            at_t.append(item)  # a time already known: no new time in the index
        else:
            self.store.add_point(key, t, item)
        if pred in self.unread_points:
            return t - tick
        old = self.store.fluent_list(key, fargs, value)
        if old and old[-1][1] == t:
            old[-1] = (old[-1][0], t + tick)
        elif old and old[-1][1] < t:
            old.append((t, t + tick))
        else:
            self.store.set_list(key, fargs, value, IV.insert(old, t, t + tick))
        return t - tick

    def _interval_input(self, pred: str, args: tuple, span: Any, retract: bool, event: Event) -> float | None:
        fargs, value = self._split(pred, args, self.interval_decl[pred], event)
        key = (pred, len(fargs))
        a, b = span[0], span[1]
        ck = (key, fargs, value, a, b)
        n = self.interval_counts.get(ck, 0)
        if retract:
            if not n:
                self._unmatched(event)
                return None
            self.interval_counts[ck] = n - 1
            if n == 1:
                del self.interval_counts[ck]
            self._rebuild_intervals(key, fargs, value)
            return a - self.tick
        self.interval_counts[ck] = n + 1
        self.store.set_list(key, fargs, value, IV.insert(self.store.fluent_list(key, fargs, value), a, b))
        return a - self.tick

    def _rebuild_intervals(self, key: Key, fargs: tuple, value: Any) -> None:
        pairs = [(k[3], k[4]) for k in self.interval_counts if k[:3] == (key, fargs, value)]
        self.store.set_list(key, fargs, value, IV.coalesce(pairs))

    def _feed_domain(self, pred: str, args: tuple) -> None:
        feeds = self._domain_feeds.get(pred)
        if not feeds:
            return
        n = len(args)
        for known, need, positions, part in feeds:
            if need <= n:
                tup = args[part] if part is not None else tuple([args[i] for i in positions])
                if tup not in known:
                    self._grow_domain(known, tup)

    def _grow_domain(self, known: set[tuple], tup: tuple) -> None:
        known.add(tup)
        self._expansions.clear()
        self._grounded.clear()
        if self.done is not None:
            self.regrow = True

    # ------------------------------------------------------------ EC built-ins

    def _happens(self, solver: Solver, g: tuple) -> Iterable[None]:
        e, t = deref(g[1]), deref(g[2])
        if type(e) is tuple and e[0] in ("start", "end") and len(e) == 2:
            return self._boundary(solver, e[0] == "start", e[1], t)
        return self._occurs(solver, e, t)

    def _occurs(self, solver: Solver, e: Any, t: Any) -> Iterator[None]:
        key = _key(e)
        if key is None:
            raise SolveError("error: happensAt/2 of an unbound event")
        by_t = self.store.events.get(key)
        if not by_t:
            return
        mark = len(solver.trail)
        if type(t) is int:
            for args in by_t.get(t, ()):
                if solver.unify(e, _fterm(key, args)):
                    yield
                solver.undo(mark)
            return
        if type(t) is not Var:
            return
        times = self.store.event_times[key]
        i = bisect_left(times, self.win_lo)
        j = bisect_right(times, self.win_hi)
        for tt in times[i:j]:
            for args in by_t.get(tt, ()):
                if solver.unify(e, _fterm(key, args)) and solver.unify(t, tt):
                    yield
                solver.undo(mark)

    def _boundary(self, solver: Solver, start: bool, fv: Any, t: Any) -> Iterable[None]:
        """start(F=V) at the last time point before each interval, end(F=V) at its last one."""
        got = _fv(fv)
        if got is None:
            raise SolveError("error: start/end of something that is not F=V")
        key = got[0]
        if type(t) is int and key[0] in self.point_decl and key in self.store.points and is_ground(fv):
            item = (tuple([resolve(a) for a in got[1]]), resolve(got[2]))
            return _ONE if item in self._point_bounds(key, start, t)[1] else ()
        return self._boundaries(solver, start, got, deref(t), fv)

    def _boundaries(self, solver: Solver, start: bool, got: tuple, t: Any, fv: Any) -> Iterator[None]:
        key, fargs, value = got
        tick = self.tick
        mark = len(solver.trail)
        t = deref(t)
        if key[0] in self.point_decl and key in self.store.points:
            if type(t) is int:
                times: Any = (t,)
            else:
                all_times = self.store.point_times[key]
                shift = tick if start else 0
                i = bisect_left(all_times, self.win_lo + shift)
                j = bisect_right(all_times, self.win_hi + shift)
                times = [x - shift for x in all_times[i:j]]
            pattern = (fargs, value)
            for tt in times:
                for item in self._point_bounds(key, start, tt)[0]:
                    if _match(solver, pattern, item) and (type(t) is int or solver.unify(t, tt)):
                        yield
                    solver.undo(mark)
            return
        lo, hi = (t, t) if type(t) is int else (self.win_lo, self.win_hi)
        pos = 0 if start else 1
        for args, vals in self._instances(key, fargs):
            for v, ivs in list(vals.items()):
                # the intervals whose start (end) is in [lo + tick, hi + tick]: a binary search
                i = bisect_left(ivs, lo + tick, key=_START if start else _END)
                for p in ivs[i:]:
                    tt = p[pos] - tick
                    if tt > hi or tt == INF:
                        break
                    if _match(solver, (fargs, value), (args, v)) and (type(t) is int or solver.unify(t, tt)):
                        yield
                    solver.undo(mark)

    def _point_bounds(self, key: Key, start: bool, t: int) -> tuple[list, set, list]:
        """The (args, value) of the point fluent instances starting (or ending) at t, as a list,
        a set and (None, args, value) triples (for compiled bodies, ``rtec/local.py``); computed
        once per window (the rules of a window ask for them again and again)."""
        ck = (key, start, t)
        got = self._bounds.get(ck)
        if got is None:
            at = self.store.points[key]
            inside = at.get(t + self.tick if start else t, ())
            if inside:
                outside = set(at.get(t if start else t + self.tick, ()))
                items = [x for x in inside if x not in outside]
            else:
                items = []
            got = self._bounds[ck] = (items, set(items), [(None, *x) for x in items])
        return got

    def _points_at(self, key: Key, t: int) -> list:
        """(None, args, value) of a point fluent's points at t, once per window (``rtec/local.py``)."""
        ck = (key, t)
        got = self._bounds.get(ck)
        if got is None:
            got = self._bounds[ck] = [(None, *x) for x in self.store.points[key].get(t, ())]
        return got

    def _window_bounds(self, key: Key, start: bool) -> list[tuple[int, tuple, Any]]:
        """(time, args, value) of every start (end) of a point fluent's instances in the window
        [win_lo, win_hi], in time order: what ``_boundaries`` enumerates for a free time, built
        once per window and component."""
        ck = (key, start, self.win_lo, self.win_hi)
        got = self._bounds.get(ck)
        if got is None:
            shift = self.tick if start else 0
            all_times = self.store.point_times[key]
            i = bisect_left(all_times, self.win_lo + shift)
            j = bisect_right(all_times, self.win_hi + shift)
            got = self._bounds[ck] = [(x - shift, *item) for x in all_times[i:j]
                                      for item in self._point_bounds(key, start, x - shift)[0]]
        return got

    def _instances(self, key: Key, fargs: tuple) -> Iterator[tuple[tuple, dict]]:
        by_args = self.store.fluents.get(key)
        if not by_args:
            return
        if all(is_ground(a) for a in fargs):
            ground = tuple(resolve(a) for a in fargs)
            vals = by_args.get(ground)
            if vals:
                yield ground, vals
            return
        for pos, a in enumerate(fargs):
            a = deref(a)
            if type(a) is not Var and is_ground(a):
                got = resolve(a)
                for args in self.store.with_arg(key, pos, got):
                    yield args, by_args[args]
                return
        yield from list(by_args.items())

    def _holds_at(self, solver: Solver, g: tuple) -> Iterator[None]:
        fv, t = deref(g[1]), deref(g[2])
        got = _fv(fv)
        if got is None:
            raise SolveError("error: holdsAt/2 of something that is not F=V")
        if type(t) is not int:
            raise SolveError("error: holdsAt/2 needs a bound time")
        key, fargs, value = got
        if key in self.deferring:
            self.deferred.append((True, fv))
            yield
            self.deferred.pop()
            return
        mark = len(solver.trail)
        if key[0] in self.point_decl and key in self.store.points:
            pattern = (fargs, value)
            for item in self.store.points[key].get(t, ()):
                if _match(solver, pattern, item):
                    yield
                solver.undo(mark)
            return
        for args, vals in self._instances(key, fargs):
            for v, ivs in list(vals.items()):
                if IV.contains(ivs, t) and _match(solver, (fargs, value), (args, v)):
                    yield
                solver.undo(mark)

    def _not(self, solver: Solver, g: tuple) -> Iterable[None]:
        """``\\+``; on a holdsAt of the cycle being swept it is a condition checked in the sweep."""
        inner = deref(g[1])
        if self.deferring and type(inner) is tuple and inner[0] == "holdsAt" and len(inner) == 3:
            got = _fv(inner[1])
            if got is not None and got[0] in self.deferring:
                return self._deferred_not(inner[1])
        return solver._neg(g, 0)

    def _deferred_not(self, fv: Any) -> Iterator[None]:
        self.deferred.append((False, fv))
        yield
        self.deferred.pop()

    def _holds_for(self, solver: Solver, g: tuple) -> Iterator[None]:
        fv = deref(g[1])
        got = _fv(fv)
        if got is None:
            raise SolveError("error: holdsFor/2 of something that is not F=V")
        key, fargs, value = got
        mark = len(solver.trail)
        if is_ground(fv):  # the usual call (a statically determined fluent's body): one list, [] if none
            ivs = self.store.fluent_list(key, tuple([resolve(a) for a in fargs]), resolve(value))
            if solver.unify(g[2], ivs_term(IV.clip(ivs, self.clip_lo))):
                yield
            solver.undo(mark)
            return
        pattern = (fargs, value)
        for args, vals in self._instances(key, fargs):
            for v, ivs in list(vals.items()):
                if not _match(solver, pattern, (args, v)):  # matched first: most values are not asked for
                    solver.undo(mark)
                    continue
                part = IV.clip(ivs, self.clip_lo)
                if part:
                    if solver.unify(g[2], ivs_term(part)):
                        yield
                solver.undo(mark)

    clip_lo: float = NEG_INF
    # a statically determined instance computed for the first time gets its whole past (RTEC's
    # one-window meaning); RTEC's windowed mode computes it in the window only
    past_from_start: ClassVar[bool] = True

    def _lists(self, t: Any) -> list[list]:
        items = from_list(t)
        if items is None:
            raise SolveError("error: an interval built-in needs a list of interval lists")
        out = []
        for x in items:
            x = deref(x)
            if type(x) is Ivs:
                out.append(x.pairs)
            elif x == "[]":
                out.append([])
            else:
                raise SolveError(f"error: {term_text(resolve(x))} is not an interval list")
        return out

    def _union(self, solver: Solver, g: tuple) -> Iterator[None]:
        mark = len(solver.trail)
        if solver.unify(g[2], ivs_term(IV.union_all(self._lists(g[1])))):
            yield
        solver.undo(mark)

    def _intersect(self, solver: Solver, g: tuple) -> Iterator[None]:
        mark = len(solver.trail)
        if solver.unify(g[2], ivs_term(IV.intersect_all(self._lists(g[1])))):
            yield
        solver.undo(mark)

    def _rel_complement(self, solver: Solver, g: tuple) -> Iterator[None]:
        mark = len(solver.trail)
        base = self._lists((".", g[1], "[]"))[0]
        if solver.unify(g[3], ivs_term(IV.relative_complement_all(base, self._lists(g[2])))):
            yield
        solver.undo(mark)

    def _complement(self, solver: Solver, g: tuple) -> Iterator[None]:
        mark = len(solver.trail)
        lo = max(0, self.clip_lo)
        if solver.unify(g[2], ivs_term(IV.complement(IV.union_all(self._lists(g[1])), lo))):
            yield
        solver.undo(mark)

    # ------------------------------------------------------------ one window

    def _window(self, lo: float, hi: float) -> set[tuple[Key, tuple, Any]]:
        """Derive every entity's events in [lo, hi] and values after lo; the changed fluent instances.

        A component is derived again from the start (-inf) when the domain has grown and its
        rules stand for every instance of a domain (a head argument no body goal binds, a
        non-ground ``initially``), and so is everything that depends on it."""
        self.win_hi = hi
        self._bounds = {}  # input points change between windows only
        changed: set = set()
        lowered: set = set()
        try:
            for comp in self.h.order:
                c_lo = self._component_lo(comp, lo)
                if self.regrow and any(e in self.domain_wide for e in comp):
                    c_lo = self.floor
                if any(d in lowered for e in comp for d in self.h.edges[e]):
                    c_lo = self.floor
                if c_lo < lo:
                    lowered.update(comp)
                self.win_lo = c_lo
                kinds = {self.h.kind[e] for e in comp}
                if kinds == {"event"}:
                    for ent in comp:
                        self._derive_events(ent[1], c_lo, hi)
                elif kinds == {"sdf"}:
                    for ent in comp:
                        if ent in self.needed:
                            self._derive_sdf(ent, c_lo, changed)
                else:
                    self._sweep([e[1] for e in comp], c_lo, hi, changed)
        except SolveError as exc:
            raise ChronologError(str(exc)) from None
        except RecursionError:
            raise ChronologError("error: background predicates recurse too deeply") from None
        self.regrow = False
        return changed

    def _component_lo(self, comp: list, lo: float) -> float:
        """Where a component's window starts (a hook: RTEC's windowed mode, ``rtec/windowed.py``,
        starts events, statically determined and simple fluents at different edges)."""
        return lo

    def _domain_wide(self) -> set[tuple]:
        """Simple fluents whose rules stand for every instance of a dynamic domain (see
        ``_window``): a head argument no body goal binds, which grounding/1 ranges over a
        dynamic domain; or a non-ground ``initially``."""
        dependent = set(self.program.dynamic_domain)  # predicates whose answers grow with the domain
        grew = True
        while grew:
            grew = False
            for key, rules in self.program.background.items():
                if key not in dependent and any(isinstance(g, tuple) and _key(g) in dependent
                                                for r in rules for g in r.body):
                    dependent.add(key)
                    grew = True
        ranged: dict[Key, set[int]] = defaultdict(set)  # fluent -> argument positions grounding ranges over a domain
        for rule in self.grounding_rules:
            head = rule.head[1]
            if not (isinstance(head, tuple) and head[0] == "=" and isinstance(head[1], tuple)):
                continue
            k = _key(head[1])
            for g in rule.body:
                if isinstance(g, tuple) and _key(g) in dependent:
                    vs = set(_slots(g, []))
                    ranged[k].update(i for i, a in enumerate(head[1][1:]) if isinstance(a, Slot) and a.i in vs)
        used: dict[Key, set] = defaultdict(set)  # values of a fluent some body reads (None: any)
        for _, rule in self.program.rules:
            deps: list = []
            for g in rule.body:
                _uses(g, deps)
            for d in deps:
                if d[0] == "fluent":
                    used[d[1]].add(d[2])
        out = set()
        for ent, rules in self.h.rules.items():
            if self.h.kind[ent] != "simple":
                continue
            for kind, rule in rules:
                fv = rule.head[1]
                if _enumerates_domain(rule, dependent):
                    out.add(ent)  # the body enumerates a domain: new instances in the past
                if kind != "initiatedAt" or not isinstance(fv[1], tuple):
                    continue  # a termination for an instance no earlier initiation made holds changes nothing
                value = None if has_slot(fv[2]) else fv[2]
                if value is not None and (ent[1], value) not in self.outputs and not (
                        used[ent[1]] & {None, value}):
                    continue  # a value nobody reads or reports only terminates the others (as above)
                body_vars = {i for g in rule.body if not (isinstance(g, tuple) and g[0] in TESTS)
                             for i in _slots(g, [])}
                free = [i for i, a in enumerate(fv[1][1:]) if set(_slots(a, [])) - body_vars]
                if set(free) & ranged.get(ent[1], set()):
                    out.add(ent)
        for rule in self.program.initially:
            fv = rule.head[1]
            if isinstance(fv, tuple) and has_slot(fv[1]):
                k = _key(fv[1])
                if k is not None:
                    out.add(("fluent", k, None))
        return out

    def _solutions(self, rules: list[Rule], goal: Any) -> Iterator[None]:
        mark = len(self.solver.trail)
        yield from self.solver.solve_rules(rules, goal)
        self.solver.undo(mark)

    def _derive_events(self, key: Key, lo: float, hi: float) -> None:
        self.store.drop_events_from(key, lo)
        rules = [r for _, r in self.h.rules[("event", key)]]
        e, t = Var(), Var()
        found = set()
        for _ in self._solutions(rules, ("happensAt", e, t)):
            ev, tt = resolve(e), deref(t)
            if type(tt) is not int or not lo <= tt <= hi:
                continue
            if not is_ground(ev):
                raise ChronologError(f"{rules[0].loc}: error: a derived event must be ground: "
                                     f"{term_text(ev)}")
            found.add((tt, ev[1:] if type(ev) is tuple else ()))
        for tt, args in sorted(found, key=repr):
            self.store.add_event(key, tt, args)

    def _derive_sdf(self, ent: tuple, lo: float, changed: set) -> None:
        key = ent[1]
        rules = [r for _, r in self.h.rules[ent]]
        # the ground heads, as grounding/1 gives them: kept while the domain stays (as _expand's)
        heads: dict[Any, None] | None = self._expansions.get(ent)
        if heads is None:
            heads = {}
            for r in rules:
                vs = [Var() for _ in range(r.nvars)]
                for g in self.groundings(inst(r.head[1], vs)):
                    heads.setdefault(g, None)
            self._expansions[ent] = heads
        results: dict[tuple, dict[Any, list]] = {}
        at = lo + 1 if lo != NEG_INF else NEG_INF
        if heads or self._has_grounding(key):
            compiled = self._sdf_rules.get(ent, ())
            if compiled == ():
                each = [compile_sdf(r) for r in rules]
                compiled = self._sdf_rules[ent] = None if None in each else each  # type: ignore[assignment]
            fluents = self.store.fluents
            for fv in heads:
                _, fargs, value = _fv(fv)  # type: ignore[misc]
                ident = (key, fargs, value)
                fresh = self.past_from_start and ident not in self.sdf_known
                self.clip_lo = NEG_INF if fresh else at
                got = None
                if compiled is not None:
                    got = run_sdf(compiled, fluents, fargs, self.clip_lo)
                else:
                    i = Var()
                    for _ in self._solutions(rules, ("holdsFor", fv, i)):
                        val = deref(i)
                        got = val.pairs if type(val) is Ivs else []
                        break
                self.sdf_known.add(ident)
                results.setdefault(fargs, {})[value] = (got or [], fresh)
        else:
            self.clip_lo = at
            fv, i = Var(), Var()
            for _ in self._solutions(rules, ("holdsFor", fv, i)):
                got = _fv(resolve(fv))
                val = deref(i)
                if got is None or not is_ground(resolve(fv)):
                    raise ChronologError(f"{rules[0].loc}: error: holdsFor/2 gives a non-ground fluent "
                                         f"{term_text(resolve(fv))}: declare grounding/1 for it")
                slot = results.setdefault(got[1], {})
                prev = slot.get(got[2], ([], False))[0]
                slot[got[2]] = (IV.union_all([prev, val.pairs if type(val) is Ivs else []]), False)
        self.clip_lo = NEG_INF
        # splice: instances computed now, and stored ones (of this key) that now give nothing
        stored = self.store.fluents.get(key, {})
        for args in list(stored):
            for v in list(stored[args]):
                if (ent[2] is None or v == ent[2]) and v not in results.get(args, {}):
                    results.setdefault(args, {})[v] = ([], False)
        for args, vals in results.items():
            for v, (ivs, fresh) in vals.items():
                old = self.store.fluent_list(key, args, v)
                new = ivs if fresh or at == NEG_INF else IV.splice(old, ivs, at)
                if new != old:
                    self.store.set_list(key, args, v, new)
                    changed.add((key, args, v))

    def _has_grounding(self, key: Key) -> bool:
        return any(k == key for k, _ in self.outputs)

    def _sweep(self, keys: list[Key], lo: float, hi: float, changed: set) -> None:
        """Simple fluents of one component, in time order (cycles through holdsAt allowed)."""
        tick = self.tick
        keyset = set(keys)
        cyclic = len(keys) > 1 or any(("fluent", k, None) in self.h.edges[("fluent", k, None)] for k in keys)
        self.deferring = keyset if cyclic else set()
        changes: dict[int, list] = defaultdict(list)  # t -> [(init?, key, args, value, conds)]
        try:
            for key in keys:
                known = self.values.get(key, ())
                for kind, rule in self.h.rules[("fluent", key, None)]:
                    main, post = _plan(rule)
                    vs = [Var() for _ in range(rule.nvars)]
                    head = inst(rule.head, vs)
                    goals = [inst(g, vs) for g in main]
                    checks = [inst(g, vs) for g in post]
                    fv, t = head[1], head[2]
                    solver = self.solver
                    start = len(solver.trail)
                    run, check = self._local(main) or solver.runner(main), solver.runner(post)
                    negs = _negated_calls(solver, checks)
                    for _ in (run(vs, 0) if run is not None else solver.body(goals, 0, [False], 0)):
                        tt = deref(t)
                        if type(tt) is not int or not lo <= tt <= hi:
                            continue
                        got = _fv(resolve(fv))
                        conds = [(pos, resolve(c)) for pos, c in self.deferred]
                        assert got is not None
                        quick = _free_answers(solver, negs, got[1]) if negs else None
                        for args, value in self._expand(got, rule, kind == "initiatedAt"):
                            if kind == "initiatedAt" and known and value not in known:
                                continue  # a value the event description does not name
                            if quick is not None and _all_atomic(args, quick):  # nothing to bind
                                if any(_answers_with(found, args[p]) for p, found in quick):
                                    continue
                            elif checks:
                                mark = len(solver.trail)
                                ok = all(map(solver.unify, got[1], args))  # the head's arguments, one by one
                                if ok:
                                    sols = check(vs, 0) if check is not None else solver.body(checks, 0, [False], 0)
                                    ok = next(iter(sols), _NONE) is not _NONE
                                solver.undo(mark)
                                if not ok:
                                    continue
                            changes[tt].append((kind == "initiatedAt", key, args, value, conds))
                    solver.undo(start)
        finally:
            self.deferring = set()
        # the state at lo: what holds there, from the stored lists (or `initially` at the start)
        # events from lo on change the values from lo + tick on; what holds then by earlier events is open
        open_: dict[tuple, int] = {}  # (key, args, value) -> start of its interval
        stale: set[tuple] = set()
        at = lo + tick if lo != NEG_INF else NEG_INF
        probe = at - 1
        for key in keys:
            sdf = self.h.sdf_values.get(key, ())
            for args, vals in self.store.fluents.get(key, {}).items():
                for v, ivs in vals.items():
                    if v not in sdf and ivs and ivs[-1][1] > at:
                        stale.add((key, args, v))  # derived from the events being derived again
                    if v not in sdf and lo != NEG_INF and IV.contains(ivs, probe):
                        a = next(p[0] for p in ivs if p[0] <= probe < p[1])
                        open_[(key, args, v)] = a
        fresh = set()
        for ident in self._initially(keyset):
            if ident not in self.initialised or lo == NEG_INF:
                self.initialised.add(ident)
                fresh.add(ident)
                open_.setdefault(ident, 0)
        by_ka: dict[tuple, dict] = defaultdict(dict)  # (key, args) -> value -> start, what holds now
        for (key, args, v), a in open_.items():
            by_ka[(key, args)][v] = a
        heap: list[int] = list(changes)
        # deadlines (fi/3): every initiation of F=V at Ts initiates F=V2 at Ts + D unless F=V is
        # terminated in between (RTEC: even an initiation that gives no interval counts)
        deadlines: dict[int, list] = defaultdict(list)
        last_term: dict[tuple, float] = {}
        for key in keys:
            for ident, inits in self.fi_inits.items():
                if ident[0] != key:
                    continue
                terms = self.fi_terms.get(ident, [])
                before = terms[:bisect_left(terms, lo)]
                if before:
                    last_term[ident] = before[-1]
                for ts in inits[:bisect_left(inits, lo)]:
                    if last_term.get(ident, NEG_INF) <= ts:
                        heap += self._schedule(ident, ts, deadlines, lo)
        new_inits: dict[tuple, list] = defaultdict(list)
        new_terms: dict[tuple, list] = defaultdict(list)
        heapq.heapify(heap)
        result: dict[tuple, list] = defaultdict(list)
        touched = set(open_) | stale
        last = None
        while heap:
            t = heapq.heappop(heap)
            if t == last:
                continue
            last = t
            if t > hi:
                break
            inits: dict[tuple, set] = defaultdict(set)
            terms: dict[tuple, set] = defaultdict(set)
            for init, key, args, v, conds in changes.get(t, ()):
                if all(_holds_now(by_ka, c, t) == pos for pos, c in conds):
                    (inits if init else terms)[(key, args)].add(v)
            for ident, ts, v2 in deadlines.pop(t, ()):
                if last_term.get(ident, NEG_INF) <= ts:
                    inits[(ident[0], ident[1])].add(v2)
            for ka in set(inits) | set(terms):
                ivs = inits.get(ka, ())
                tvs = terms.get(ka, ())
                for v in self.fi_values.get(ka[0], ()):
                    if v in tvs or ANY in tvs or any(w != v for w in ivs):
                        last_term[(ka[0], ka[1], v)] = t
                        new_terms[(ka[0], ka[1], v)].append(t)
                    if v in ivs:
                        new_inits[(ka[0], ka[1], v)].append(t)
                        for d in self._schedule((ka[0], ka[1], v), t, deadlines, lo):
                            heapq.heappush(heap, d)
                holding = by_ka.get(ka)
                if holding:
                    for v in list(holding):
                        if v in tvs or ANY in tvs or any(w != v for w in ivs):
                            result[(ka[0], ka[1], v)].append((holding.pop(v), t + tick))
                for v in ivs:
                    ident = (ka[0], ka[1], v)
                    touched.add(ident)
                    if v in tvs or ANY in tvs or any(w != v for w in ivs):
                        continue  # terminated at the time it is initiated: RTEC keeps the empty interval out
                    slot = by_ka[ka]
                    if v not in slot:
                        slot[v] = t + tick
        for ka, vals in by_ka.items():
            for v, a in vals.items():
                result[(ka[0], ka[1], v)].append((a, INF))
        for store, new in ((self.fi_inits, new_inits), (self.fi_terms, new_terms)):
            for ident in [i for i in store if i[0] in keyset] + list(new):
                kept = store.get(ident, [])
                kept = kept[:bisect_left(kept, lo)] + new.get(ident, [])
                if kept:
                    store[ident] = kept
                else:
                    store.pop(ident, None)
        for ident in touched | set(result):
            key, args, v = ident
            old = self.store.fluent_list(key, args, v)
            ivs = IV.coalesce(result.get(ident, []))
            new = ivs if at == NEG_INF or ident in fresh else IV.splice(old, ivs, at)
            if new != old:
                self.store.set_list(key, args, v, new)
                changed.add(ident)

    def _local(self, main: list) -> Callable | None:
        """A simple fluent's body compiled to loops over locals (``rtec/local.py``), once."""
        got = self._locals.get(id(main))
        if got is None or got[0] is not main:
            got = self._locals[id(main)] = (main, local_runner(self, main))
        return got[1]

    def _schedule(self, ident: tuple, ts: float, deadlines: dict, lo: float) -> list[int]:
        """The deadlines fi(F=V, F=V2, D) of an initiation of F=V at ``ts``: F=V2 at ts + D."""
        out = []
        key, args, v = ident
        fv = ("=", _fterm(key, args), v)
        for rule in self.deadlines:
            vs = [Var() for _ in range(rule.nvars)]
            h = inst(rule.head, vs)
            mark = len(self.solver.trail)
            if self.solver.unify(h[1], fv):
                got, d = _fv(resolve(h[2])), deref(h[3])
                if got is not None and type(d) is int and got[0] == key and got[1] == args and is_ground(got[2]):
                    at = int(ts + d)
                    if at >= lo:
                        deadlines[at].append((ident, ts, got[2]))
                        out.append(at)
            self.solver.undo(mark)
        return out

    def _initially(self, keys: set[Key]) -> list[tuple]:
        out = []
        for rule in self.program.initially:
            vs = [Var() for _ in range(rule.nvars)]
            from chronolog.dialects.rtec.solve import inst
            fv = inst(rule.head, vs)[1]
            got = _fv(fv)
            if got is None or got[0] not in keys:
                continue
            if is_ground(fv):
                out.append((got[0], tuple(resolve(a) for a in got[1]), resolve(got[2])))
                continue
            for g in self.groundings(fv):
                k, args, v = _fv(g)  # type: ignore[misc]
                out.append((k, args, v))
        return out

    def _expand(self, got: tuple[Key, tuple, Any], rule: Rule, init: bool) -> list[tuple[tuple, Any]]:
        """The ground (args, value) of a rule's head F=V: a head with free arguments stands for
        every instance grounding/1 gives (for any value of F); a termination with a free value
        terminates whatever value holds (ANY)."""
        key, fargs, value = got
        if not is_ground(value):
            if init:
                raise ChronologError(f"{rule.loc}: error: the value of an initiated fluent must be bound by the "
                                     f"rule body")
            value = ANY
        else:
            value = resolve(value)
        parts: list | None = ["args"]
        names: dict[int, int] = {}
        # _canonical's key, built inline for atomic arguments and variables (the arguments
        # are resolved: a Var is unbound); calling _canonical here cost caviar 7% of its CPU
        for a in fargs:
            ta = type(a)
            if ta is Var:
                parts.append(("$VAR", names.setdefault(id(a), len(names))))  # type: ignore[union-attr]
            elif ta is tuple:
                parts = None
                break
            else:
                parts.append((_FLOAT, a) if ta is float else a)  # type: ignore[union-attr]
        if parts is not None and not names:
            return [(tuple(fargs), value)]
        if parts is None:
            if all(is_ground(a) for a in fargs):
                return [(tuple(resolve(a) for a in fargs), value)]
            from chronolog.dialects.rtec.solve import _canonical

            memo_key = (key, _canonical(tuple(["args", *fargs])))
        else:
            memo_key = (key, tuple(parts))
        found = self._expansions.get(memo_key)
        if found is None:
            renamed: dict[int, Var] = {}  # one fresh variable per variable: f(X, X) stays diagonal
            pattern = ("=", _fterm(key, tuple(_fresh(a, renamed) for a in fargs)), Var())
            found = list(dict.fromkeys(_fv(g)[1] for g in self.groundings(pattern)))  # type: ignore[index]
            self._expansions[memo_key] = found
        return [(args, value) for args in found]

    # ------------------------------------------------------------ the Evaluator interface

    def advance(self, until: Time) -> Changes:
        return Changes(self._advance(until))

    def finish(self, until: Time | None = None) -> Changes:
        return Changes(self._finish(until))

    def _advance(self, until: Time) -> list[AnswerChange]:
        until = int(until)
        if self.first is None:
            return []
        if self.done is not None and until - self.done < self.step:
            # corrections wait for the next window too (one repair for all of them), unless the
            # caller asks again for a time already evaluated (a fleet stage flushing them)
            if not (until <= self.done and self.lo < self.done - self.tick + 1):
                return []
        return self._evaluate(until - self.tick, until)

    def _finish(self, until: Time | None = None) -> list[AnswerChange]:
        if self.first is None:
            return []
        if until is not None:
            return self._evaluate(int(until) - self.tick, int(until))
        return self._evaluate(INF, INF)

    def _evaluate(self, hi: float, horizon: float) -> list[AnswerChange]:
        lo = self.lo
        # a window allocates millions of short-lived terms and no reference cycles: the cyclic
        # collector would only walk the stored history again and again (15% of caviar's time)
        collecting = gc.isenabled()
        gc.disable()
        try:
            changed = self._window(lo, hi)
        finally:
            if collecting:
                gc.freeze()  # the stored history (no cycles: freed by reference counts) is not walked again
                gc.enable()
        self.time_points += 1
        self.done = horizon
        self.lo = hi + 1 if hi != INF else INF
        out = self._publish(changed, horizon)
        if self.retention is not None and horizon != INF and horizon - self.pruned_at >= max(self.step, self.retention // 4):
            self._forget(horizon)
        return out

    def _forget(self, horizon: int) -> None:
        """Drop what no repair within the retention can read (RTEC forgets what is before its
        window): a late event is at least ``horizon - retention``, its window starts a tick
        before it and reads the state one tick earlier, and a deadline ``fi`` reaches back its
        delay.  Events, input points and intervals, derived intervals (stored and published) that
        end before that are dropped, and no later window starts before it (``floor``)."""
        self.pruned_at = horizon
        reach = max((d for d in self._deadline_delays()), default=0)
        floor = horizon - self.retention - reach - 2 * self.tick  # type: ignore[operator]
        if floor <= self.floor:
            return
        self.floor = floor
        cut = floor - self.tick
        store = self.store
        for by_key, times_of in ((store.events, store.event_times), (store.points, store.point_times)):
            for key, times in times_of.items():
                i = bisect_left(times, cut)
                if i:
                    by_t = by_key[key]
                    for t in times[:i]:
                        del by_t[t]
                    del times[:i]
        self.point_dups = {k: n for k, n in self.point_dups.items() if k[3] >= cut}
        self.interval_counts = {k: n for k, n in self.interval_counts.items() if k[4] >= cut}
        for key, by_args in store.fluents.items():
            for args in list(by_args):
                vals = by_args[args]
                for v in list(vals):
                    kept = _after(vals[v], cut)
                    if kept:
                        vals[v] = kept
                    else:
                        del vals[v]
                if not vals:
                    store.drop_instance(key, args)
        for ident in list(self.published):
            kept = _after(self.published[ident], cut)
            if kept:
                self.published[ident] = kept
            else:
                del self.published[ident]
        for lists, keep_last in ((self.fi_inits, False), (self.fi_terms, True)):
            for ident in list(lists):
                times = lists[ident]
                i = bisect_left(times, cut)
                if keep_last and i:
                    i -= 1  # the last termination before: it cancels older initiations' deadlines
                if i:
                    kept = times[i:]
                    if kept:
                        lists[ident] = kept
                    else:
                        del lists[ident]

    def _deadline_delays(self) -> Iterator[int]:
        for rule in self.deadlines:
            d = rule.head[3] if isinstance(rule.head, tuple) and len(rule.head) == 4 else None
            if type(d) is int:
                yield d

    def _publish(self, changed: set, horizon: float) -> list[AnswerChange]:
        out: list[AnswerChange] = []
        todo = {(k, a, v) for (k, a, v) in changed if (k, v) in self.outputs}
        todo |= self.open_published  # intervals published open: the horizon may have passed their end
        for ident in sorted(todo, key=repr):
            key, args, v = ident
            if not self.grounded(("=", _fterm(key, args), v)):
                continue
            ivs = self.store.fluent_list(key, args, v)
            if horizon != INF and ivs and ivs[-1][1] > horizon:
                ivs = ivs[:-1] + [(ivs[-1][0], INF)]
            old = self.published.get(ident, [])
            if old == ivs:
                continue
            name, jargs = _answer_atom(key, args, v)
            # lists change at their end: compare past the common prefix only
            k = len(old) - 1
            if k > 0 and old[:k] == ivs[:k]:
                old_tail, new_tail = old[k:], ivs[k:]
            else:
                old_tail, new_tail = old, ivs
            for a, b in IV.subtract(new_tail, old_tail):
                out.append((name, jargs, _span(a, b), 1))
            for a, b in IV.subtract(old_tail, new_tail):
                out.append((name, jargs, _span(a, b), -1))
            if ivs:
                self.published[ident] = ivs
            else:
                self.published.pop(ident, None)
            if ivs and ivs[-1][1] == INF:
                self.open_published.add(ident)
            else:
                self.open_published.discard(ident)
        return out

    # ------------------------------------------------------------ state

    def export_state(self) -> dict[str, Any]:
        inputs = []
        for key, by_t in self.store.events.items():
            if ("event", key) in self.h.kind:
                continue
            for t, arglist in by_t.items():
                for args in arglist:
                    inputs.append(["e", key[0], [_jv(a) for a in args], t])
        for key, by_t in self.store.points.items():
            for t, items in by_t.items():
                for fargs, value in items:
                    n = self.point_dups.get((key, fargs, value, t), 1)
                    inputs.append(["p", key[0], [_jv(a) for a in fargs], _jv(value), t, n])
        for (key, fargs, value, a, b), n in self.interval_counts.items():
            inputs.append(["i", key[0], [_jv(x) for x in fargs], _jv(value), a, _jt(b), n])
        derived = []
        for key, by_args in self.store.fluents.items():
            if key[0] in self.point_decl or key[0] in self.interval_decl:
                continue
            for args, vals in by_args.items():
                for v, ivs in vals.items():
                    derived.append([key[0], [_jv(a) for a in args], _jv(v), [[a, _jt(b)] for a, b in ivs]])
        events = []
        for key, by_t in self.store.events.items():
            if ("event", key) in self.h.kind:
                for t, arglist in by_t.items():
                    for args in arglist:
                        events.append([key[0], [_jv(a) for a in args], t])
        return versioned({
            "dialect": self.dialect, "inputs": inputs, "fluents": derived, "derived_events": events,
            "domain": [[k[0], [[_jv(a) for a in tup] for tup in tups]] for k, tups in self.domain.items()],
            "published": [[k[0], [_jv(a) for a in args], _jv(v), [[a, _jt(b)] for a, b in ivs]]
                          for (k, args, v), ivs in self.published.items()],
            "initialised": [[k[0], [_jv(a) for a in args], _jv(v)] for k, args, v in self.initialised],
            "sdf_known": [[k[0], [_jv(a) for a in args], _jv(v)] for k, args, v in self.sdf_known],
            "lo": _jt(self.lo), "done": _jt(self.done), "first": self.first, "latest": self.latest,
            "counters": [self.delayed, self.unmatched_retractions, self.time_points], "regrow": self.regrow,
            "forgotten": [_jt(self.floor), _jt(self.pruned_at), self.too_late],
            "deadline_points": [[k[0], [_jv(a) for a in args], _jv(v), self.fi_inits.get((k, args, v), []),
                                 self.fi_terms.get((k, args, v), [])]
                                for (k, args, v) in set(self.fi_inits) | set(self.fi_terms)],
        })

    def import_state(self, data: dict[str, Any]) -> None:
        check_state_header(data, self.dialect)
        with reading("RTEC evaluator state"):
            self.store = _Store()
            self.point_dups, self.interval_counts = {}, {}
            for item in data["inputs"]:
                if item[0] == "e":
                    _, name, args, t = item
                    self.store.add_event((name, len(args)), int(t), tuple(_pv(a) for a in args))
                elif item[0] == "p":
                    _, name, args, value, t, n = item
                    fargs, v = tuple(_pv(a) for a in args), _pv(value)
                    key = (name, len(fargs))
                    if int(n) > 1:
                        self.point_dups[(key, fargs, v, int(t))] = int(n)
                    self.store.add_point(key, int(t), (fargs, v))
                else:
                    _, name, args, value, a, b, n = item
                    fargs = tuple(_pv(x) for x in args)
                    self.interval_counts[((name, len(fargs)), fargs, _pv(value), int(a), _pt(b))] = int(n)
            tick = self.tick
            for key, by_t in self.store.points.items():
                per: dict = defaultdict(list)
                for t, items in by_t.items():
                    for fargs, v in items:
                        per[(fargs, v)].append((t, t + tick))
                for (fargs, v), pairs in per.items():
                    self.store.set_list(key, fargs, v, IV.coalesce(pairs))
            for k in {(k[0], k[1], k[2]) for k in self.interval_counts}:
                self._rebuild_intervals(*k)
            for name, args, value, ivs in data["fluents"]:
                fargs = tuple(_pv(a) for a in args)
                self.store.set_list((name, len(fargs)), fargs, _pv(value), [(int(a), _pt(b)) for a, b in ivs])
            for name, args, t in data["derived_events"]:
                self.store.add_event((name, len(args)), int(t), tuple(_pv(a) for a in args))
            for name, tups in data["domain"]:
                for tup in tups:
                    self.domain.setdefault((name, len(tup)), set()).add(tuple(_pv(a) for a in tup))
            self.published = {((name, len(args)), tuple(_pv(a) for a in args), _pv(v)):
                              [(int(a), _pt(b)) for a, b in ivs] for name, args, v, ivs in data["published"]}
            self.open_published = {i for i, ivs in self.published.items() if ivs and ivs[-1][1] == INF}
            self.initialised = {((n, len(a)), tuple(_pv(x) for x in a), _pv(v)) for n, a, v in data["initialised"]}
            self.sdf_known = {((n, len(a)), tuple(_pv(x) for x in a), _pv(v)) for n, a, v in data["sdf_known"]}
            self.lo, self.done = _pt(data["lo"]), _pt(data["done"])
            self.first, self.latest = data["first"], data["latest"]
            self.delayed, self.unmatched_retractions, self.time_points = map(int, data["counters"])
            self.regrow = bool(data["regrow"])
            floor, pruned_at, too_late = data.get("forgotten", ["-inf", "-inf", 0])
            self.floor, self.pruned_at, self.too_late = _pt(floor), _pt(pruned_at), int(too_late)
            self.fi_inits, self.fi_terms = {}, {}
            for name, args, v, inits, terms in data["deadline_points"]:
                ident = ((name, len(args)), tuple(_pv(a) for a in args), _pv(v))
                if inits:
                    self.fi_inits[ident] = [int(x) for x in inits]
                if terms:
                    self.fi_terms[ident] = [int(x) for x in terms]
            if self.lo is None:
                raise StateError("RTEC evaluator state: lo is missing")


TESTS = {"@<", "@>", "@=<", "@>=", "==", "\\==", "\\=", "<", ">", "=<", ">=", "=:=", "=\\=", "\\+", "not"}


def _slots(t: Any, out: list) -> list:
    if isinstance(t, Slot):
        out.append(t.i)
    elif isinstance(t, tuple):
        for a in t[1:]:
            _slots(a, out)
    return out


def _plan(rule: Rule) -> tuple[list, list]:
    """The body in an order where each test (comparison, \\+) runs once its variables are bound,
    as when RTEC runs it with a ground head; tests on head variables no generator binds run
    after the head is grounded (``post``)."""
    got = getattr(rule, "_plan", None)
    if got is not None:
        return got
    count: dict[int, int] = defaultdict(int)
    for i in _slots(rule.head, []) + [i for g in rule.body for i in _slots(g, [])]:
        count[i] += 1
    bound: set[int] = set()
    main: list = []
    pending: list = []

    def needs(g: Any) -> set[int]:
        vs = _slots(g, [])
        if isinstance(g, tuple) and g[0] in ("\\+", "not"):
            return {i for i in vs if count[i] > vs.count(i)}  # variables local to a negation are its own
        return set(vs)

    for g in rule.body:
        if g == "!" or not (isinstance(g, tuple) and g[0] in TESTS):
            main.append(g)
            bound.update(_slots(g, []))
            ready = [p for p in pending if needs(p) <= bound]
            pending = [p for p in pending if p not in ready]
            main.extend(ready)
        elif needs(g) <= bound:
            main.append(g)
        else:
            pending.append(g)
    rule._plan = (main, pending)  # type: ignore[attr-defined]
    return main, pending


def _enumerates_domain(rule: Rule, dependent: set) -> bool:
    """Does the body (in the order it runs) call a domain-dependent predicate with an argument
    no earlier goal binds?  A call whose arguments are bound only checks instances the input has
    already shown."""
    main, post = _plan(rule)
    bound: set[int] = set()
    for g in main + post:
        if isinstance(g, tuple) and (g[0], len(g) - 1) in dependent and not g[0] in TESTS:
            if set(_slots(g, [])) - bound:
                return True
        bound.update(_slots(g, []))
    return False


def _negated_calls(solver: Solver, checks: list) -> list | None:
    """The checks when each is ``\\+ p(...)`` of a pure background predicate (memoised), else None."""
    out = []
    for g in checks:
        if not (type(g) is tuple and g[0] in ("\\+", "not") and len(g) == 2):
            return None
        inner = g[1]
        if type(inner) is not tuple or len(inner) < 2:
            return None
        pred = (inner[0], len(inner) - 1)
        if pred not in solver.pure:
            return None
        out.append((pred, inner))
    return out


def _free_answers(solver: Solver, negs: list, head_args: tuple) -> list | None:
    """For checks ``\\+ p(X1..Xn, H)`` whose last argument is a head variable the expansion
    binds (at one place of the head) and the others bound to atoms or integers: (that place,
    the answers of the call with H free), so that each expansion reads them instead of solving
    the check; the memo answers a bound last argument the same way.  Only for a head whose
    free arguments are distinct variables (every expansion unifies with it, so nothing needs
    binding).  None: solve the checks."""
    free = [id(a) for a in head_args if type(a) is Var]
    if len(set(free)) != len(free) or any(type(a) is tuple and not is_ground(a) for a in head_args):
        return None  # an expansion might not unify with the head: the checks decide that too
    out = []
    for pred, inner in negs:
        last = deref(inner[-1])
        if type(last) is not Var:
            return None
        places = [i for i, a in enumerate(head_args) if a is last]
        if len(places) != 1:
            return None
        found = solver.free_answers(pred, inner)
        if found is None:
            return None
        out.append((places[0], found))
    return out


def _all_atomic(args: tuple, quick: list) -> bool:
    """Are the expansion's values at the checked places atoms or integers?  (A float or a
    compound term is left to the solver's unification: ``==`` takes 1.0 for 1 inside a tuple.)"""
    for p, _ in quick:
        t = type(args[p])
        if t is not str and t is not int:
            return False
    return True


def _answers_with(found: list, v: Any) -> bool:
    """Does an answer have ``v`` as its last argument (1 and 1.0 differ, as in unification)?"""
    tv = type(v)
    for a in found:
        x = a[-1]
        if x == v and type(x) is tv:
            return True
    return False


def _holds_now(by_ka: dict, cond: Any, t: int) -> bool:
    """Does a deferred holdsAt condition (a ground F=V of the component) hold at t?"""
    got = _fv(cond)
    if got is None or not is_ground(cond):
        raise ChronologError(f"error: holdsAt/2 on a fluent of the same cycle needs a ground F=V, not "
                             f"{term_text(cond)}")
    a = by_ka.get((got[0], got[1]), {}).get(got[2])
    return a is not None and a <= t


def _after(ivs: list, cut: float) -> list:
    """The intervals of a list that end at ``cut`` or later."""
    i = bisect_left(ivs, cut, key=_END)
    return ivs[i:] if i else ivs


def _match(solver: Solver, pattern: tuple, item: tuple) -> bool:
    """Unify (args pattern, value pattern) with a ground (args, value): F=V without building it."""
    return solver.unify_args(pattern[0], item[0]) and solver.unify(pattern[1], item[1])


def _fresh(a: Any, renamed: dict[int, Var]) -> Any:
    """``a`` resolved, each unbound variable replaced by its own fresh one (the same for
    every occurrence: ``renamed``)."""
    a = deref(a)
    if type(a) is Var:
        got = renamed.get(id(a))
        if got is None:
            got = renamed[id(a)] = Var()
        return got
    if type(a) is tuple:
        return tuple([a[0], *[_fresh(x, renamed) for x in a[1:]]])
    return a


def _answer_atom(key: Key, args: tuple, value: Any) -> tuple[str, tuple]:
    """The JSON atom of F=V (README: V appended as the last argument unless it is true)."""
    out = [a if type(a) in (int, str) else term_text(a) for a in args]
    if value != "true":
        out.append(value if type(value) in (int, str) else term_text(value))
    return key[0], tuple(out)


def _span(a: float, b: float) -> Span:
    return Span(int(a), None if b == INF else int(b), True, False)


def _jv(v: Any) -> Any:
    """A term as JSON: atoms and numbers as they are, compounds as ["f", args...]."""
    if type(v) is tuple:
        return [_jv(x) for x in v]
    return v


def _pv(v: Any) -> Any:
    if type(v) is list:
        if not v or type(v[0]) is not str:
            raise StateError("RTEC evaluator state: a compound term without a functor")
        return tuple([v[0], *[_pv(x) for x in v[1:]]])
    if type(v) not in (str, int, float):
        raise StateError(f"RTEC evaluator state: {v!r} is not a term")
    return v


def _jt(t: float | None) -> Any:
    if t is None:
        return None
    if t == INF:
        return "inf"
    if t == NEG_INF:
        return "-inf"
    return int(t)


def _pt(t: Any) -> Any:
    if t is None:
        return None
    if t == "inf":
        return INF
    if t == "-inf":
        return NEG_INF
    if type(t) is not int:
        raise StateError(f"RTEC evaluator state: {t!r} is not a time")
    return t
