"""RTEC event descriptions: Prolog clauses sorted into rules, declarations and background knowledge.

Rules are the clauses with an Event Calculus head (``initiatedAt/2``,
``terminatedAt/2``, ``initiates/3``, ``terminates/3``, ``holdsFor/2``,
``happensAt/2``); declarations say which entities are input, how they are
grounded and what the clock tick is (``points/1``, ``buildFromPoints/1``,
``collectIntervals/1``, ``grounding/1``, ``dynamicDomain/1``, ``initially/1``,
``fi/3``, ``clock_tick/1``); every other clause is background knowledge for
the solver.  Anything the solver cannot run (``assertz``, RTEC's engine
internals) is refused here with the file:line:column of the goal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chronolog.core.errors import ProgramError
from chronolog.core.source import Loc
from chronolog.dialects.rtec.prolog import Clause, PVar, read_clauses, term_text
from chronolog.dialects.rtec.solve import CONTROL
from chronolog.dialects.rtec.terms import Rule, compile_clause, compile_term
from chronolog.dialects.rtec.unground import NO_GROUNDING, NO_GROUNDING_FACT, Ungrounded

RULE_HEADS = {("initiatedAt", 2), ("terminatedAt", 2), ("initiates", 3), ("terminates", 3), ("holdsFor", 2),
              ("happensAt", 2)}
DECLARATIONS = {("points", 1), ("buildFromPoints", 1), ("collectIntervals", 1), ("dynamicDomain", 1),
                ("initially", 1), ("fi", 3), ("clock_tick", 1), ("p", 1), ("maxDuration", 3)}
EC_BUILTINS = {("happensAt", 2), ("holdsAt", 2), ("holdsFor", 2), ("union_all", 2), ("intersect_all", 2),
               ("relative_complement_all", 3), ("complement_all", 2)}
# what RTEC's own engine offers but an event description cannot rely on here
UNSUPPORTED = {
    "assertz": "changes the database while it is queried", "asserta": "changes the database while it is queried",
    "assert": "changes the database while it is queried", "retract": "changes the database while it is queried",
    "retractall": "changes the database while it is queried", "setof": "is not supported (use findall/3)",
    "bagof": "is not supported (use findall/3)", "iePList": "is an RTEC engine internal",
    "holdsAtIE": "is an RTEC engine internal", "makeIntervalsFromAllPoints": "is an RTEC engine internal",
    "preProcessing": "is an RTEC engine hook", "holdsForSDFluent": "is an RTEC engine internal",
}


@dataclass
class Entity:
    """A fluent-value pattern of a declaration, e.g. ``coord(_,_,_)=true``."""

    name: str
    arity: int
    value: Any  # a term; a PVar-free pattern where ``_`` became None
    loc: Loc


@dataclass
class RtecProgram:
    """An event description, ready for ``chronolog.dialects.rtec.evaluator``."""

    rules: list[tuple[str, Rule]] = field(default_factory=list)  # (kind, compiled clause with the EC head)
    background: dict[tuple[str, int], list[Rule]] = field(default_factory=dict)
    initially: list[Rule] = field(default_factory=list)
    deadlines: list[Rule] = field(default_factory=list)  # fi(F=V, F=V2, D) facts
    points: list[Entity] = field(default_factory=list)
    build_from_points: list[Entity] = field(default_factory=list)
    collect_intervals: list[Entity] = field(default_factory=list)
    dynamic_domain: set[tuple[str, int]] = field(default_factory=set)
    clock_tick: int = 1
    files: list[str] = field(default_factory=list)
    calls: list[tuple[tuple[str, int], Loc]] = field(default_factory=list)  # every goal of a body, for check_calls
    dialect: str = "rtec"


def _entity(term: Any, loc: Loc, what: str) -> Entity:
    if not (isinstance(term, tuple) and term[0] == "=" and len(term) == 3):
        raise ProgramError(f"{what} expects a fluent-value pair F=V, not {term_text(term)}", loc)
    f, v = term[1], term[2]
    if isinstance(f, tuple):
        return Entity(f[0], len(f) - 1, None if isinstance(v, PVar) else v, loc)
    if isinstance(f, str):
        return Entity(f, 0, None if isinstance(v, PVar) else v, loc)
    raise ProgramError(f"{what}: the fluent must be an atom or a compound term, not {term_text(f)}", loc)


def _head_key(term: Any) -> tuple[str, int]:
    head = term[1] if isinstance(term, tuple) and term[0] == ":-" and len(term) == 3 else term
    if isinstance(head, tuple):
        return head[0], len(head) - 1
    if isinstance(head, str):
        return head, 0
    return "", -1


def _goals(term: Any, loc: Loc):
    """Every goal called by a body, with the location of its top-level goal."""
    if isinstance(term, PVar):
        return
    if isinstance(term, tuple):
        name, n = term[0], len(term) - 1
        if (name, n) in ((",", 2), (";", 2), ("->", 2)):
            yield from _goals(term[1], loc)
            yield from _goals(term[2], loc)
            return
        if (name, n) in (("\\+", 1), ("not", 1)):
            yield from _goals(term[1], loc)
            return
        if (name, n) == ("findall", 3):
            yield from _goals(term[2], loc)
    yield term, loc


def parse_rtec(text: str, filename: str, program: RtecProgram | None = None) -> RtecProgram:
    """Add one file's clauses to ``program`` (a new one if None)."""
    program = program or RtecProgram()
    program.files.append(filename)
    for clause in read_clauses(text, filename):
        _add(program, clause)
    return program


def _add(program: RtecProgram, clause: Clause) -> None:
    term, loc = clause.term, clause.loc
    if isinstance(term, tuple) and term[0] == ":-" and len(term) == 2:
        raise ProgramError(f"directive ':- {term_text(term[1])}' is not supported", loc)
    if isinstance(term, tuple) and term[0] == "-->":
        raise ProgramError("grammar rules (-->) are not supported", loc)
    key = _head_key(term)
    if key == ("", -1) or isinstance(term, PVar):
        raise ProgramError(f"a clause head must be an atom or a compound term, not {term_text(term)}", loc)
    body = term[2] if isinstance(term, tuple) and term[0] == ":-" and len(term) == 3 else None
    if body is not None:
        locs = clause.goal_locs
        goals = []
        b = body
        while isinstance(b, tuple) and b[0] == "," and len(b) == 3:
            goals.append(b[1])
            b = b[2]
        goals.append(b)
        for i, g in enumerate(goals):
            for goal, where in _goals(g, locs[i] if i < len(locs) else loc):
                _check_goal(goal, where)
                if isinstance(goal, tuple | str):
                    program.calls.append((_head_key(goal), where))
    if key in RULE_HEADS:
        head = term[1] if body is not None else term
        if key in (("initiates", 3), ("terminates", 3)):
            kind = "initiatedAt" if key[0] == "initiates" else "terminatedAt"
            event, fv, t = head[1], head[2], head[3]
            new_body: Any = ("happensAt", event, t)
            if body is not None:
                new_body = (",", new_body, body)
            term = (":-", (kind, fv, t), new_body)
            key = (kind, 2)
            head = term[1]
        if key != ("happensAt", 2):
            _entity(head[1], loc, f"{key[0]}/{key[1]}")
        program.rules.append((key[0], compile_clause(term, loc)))
        return
    if key in DECLARATIONS:
        if body is not None and key not in (("dynamicDomain", 1),):
            raise ProgramError(f"declaration {key[0]}/{key[1]} must be a fact", loc)
        arg = term[1] if body is None else term[1][1]
        if key == ("points", 1):
            program.points.append(_entity(arg, loc, "points/1"))
        elif key == ("buildFromPoints", 1):
            program.build_from_points.append(_entity(arg, loc, "buildFromPoints/1"))
        elif key == ("collectIntervals", 1):
            program.collect_intervals.append(_entity(arg, loc, "collectIntervals/1"))
        elif key == ("dynamicDomain", 1):
            if not isinstance(arg, tuple | str):
                raise ProgramError("dynamicDomain/1 expects a predicate pattern such as id(_)", loc)
            program.dynamic_domain.add((arg, 0) if isinstance(arg, str) else (arg[0], len(arg) - 1))
        elif key == ("initially", 1):
            _entity(arg, loc, "initially/1")
            program.initially.append(compile_clause(term, loc))
        elif key == ("fi", 3):
            _entity(term[1], loc, "fi/3")
            _entity(term[2], loc, "fi/3")
            program.deadlines.append(compile_clause(term, loc))
        elif key == ("clock_tick", 1):
            if not isinstance(arg, int) or isinstance(arg, bool) or arg <= 0:
                raise ProgramError("clock_tick/1 expects a positive integer", loc)
            program.clock_tick = arg
        else:
            raise ProgramError(f"declaration {key[0]}/{key[1]} is not supported", loc)
        return
    program.background.setdefault(key, []).append(compile_clause(term, loc))


def _check_goal(goal: Any, loc: Loc) -> None:
    if isinstance(goal, PVar):
        raise ProgramError("a goal that is a variable (call/N) is not supported", loc)
    if isinstance(goal, (int, float)):
        raise ProgramError(f"{goal} is not a goal", loc)
    name = goal[0] if isinstance(goal, tuple) else goal
    arity = len(goal) - 1 if isinstance(goal, tuple) else 0
    if name in UNSUPPORTED:
        raise ProgramError(f"{name}/{arity} {UNSUPPORTED[name]}: not supported in chronolog's rtec dialect", loc)


def check_calls(program: RtecProgram) -> None:
    """Every called predicate is defined (background, declaration-made domain, built-in)."""
    known = set(program.background) | program.dynamic_domain | EC_BUILTINS | CONTROL
    for key, where in program.calls:
        if key not in known:
            raise ProgramError(f"unknown predicate {key[0]}/{key[1]} (not defined in the program files)", where)


def finish_program(program: RtecProgram) -> RtecProgram:
    """Check the calls, then read what RTEC never computes as RTEC reads it (``unground.py``)."""
    check_calls(program)
    ung = Ungrounded(program.rules, program.background.get(("grounding", 1), []))
    if not (ung.fluents or ung.events):
        return program
    rules = [(kind, ung.rule(rule)) for kind, rule in program.rules]
    background = {k: rs if k == ("grounding", 1) else [ung.rule(r) for r in rs] for k, rs in program.background.items()}
    changed = any(a is not b for (_, a), (_, b) in zip(rules, program.rules, strict=True)) or any(
        a is not b for k, rs in background.items() for a, b in zip(rs, program.background[k], strict=True))
    if changed:
        if (NO_GROUNDING, 1) in program.background:
            raise ProgramError(f"{NO_GROUNDING}/1 is chronolog's own (a read of an entity without grounding/1)",
                               program.background[(NO_GROUNDING, 1)][0].loc)
        program.rules = rules
        program.background = {**background, (NO_GROUNDING, 1): [NO_GROUNDING_FACT]}
    return program


def pattern(entity: Entity) -> Any:
    """The declaration's pattern as a compiled term (for matching)."""
    return compile_term(entity.value, {}) if entity.value is not None else None
