"""Why an Event Calculus fluent holds at T, or why not (``chronolog explain --why / --why-not``),
read from its maximal intervals — the answers ``run`` writes — and the input around their ends.

A simple fluent F=V holds on ``[s, e)``: it was initiated at ``s − tick`` (the clock tick)
and not terminated in ``(s − tick, T]``; the explanation names the ``initiatedAt`` rules of
F=V and the input events at ``s − tick`` whose event those rules read (``happensAt``), with
their input lines.  Why not: never initiated, first initiated after T, or initiated at
``s − tick`` and terminated at ``e − tick ≤ T`` (the events there that ``terminatedAt`` rules of
F=V, or ``initiatedAt`` rules of another value of F, read).  This is what the intervals and
the rules' events show; the conditions of a rule body (``holdsAt``, background predicates)
and the interval operations of statically determined fluents are not unfolded yet.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chronolog.core import intervals as I
from chronolog.core.events import Event
from chronolog.core.explanation import Node
from chronolog.dialects.rtec.parser import RtecProgram
from chronolog.dialects.rtec.terms import Slot
from chronolog.evaluator import atom_text

Atom = tuple[str, tuple]


def _fluent(term: Any) -> tuple[str, int] | None:
    """The name and arity of a fluent term (``open(D)`` or ``alarm``)."""
    if isinstance(term, tuple) and term and isinstance(term[0], str):
        return term[0], len(term) - 1
    return (term, 0) if isinstance(term, str) else None


class Rules:
    """The program's rules about a fluent-value pair, and the events their bodies read."""

    def __init__(self, program: RtecProgram) -> None:
        self.program = program
        self.tick = program.clock_tick

    def about(self, kind: str, atom: Atom, same_value: bool = True) -> list[Any]:
        """The rules of ``kind`` (initiatedAt, terminatedAt, holdsFor) whose head is the fluent of
        ``atom`` with its value (``same_value``) or with another one."""
        out = []
        for head_kind, rule in self.program.rules:
            head = rule.head
            if head_kind != kind or not isinstance(head, tuple) or len(head) < 2:
                continue
            pair = head[1]
            if not (isinstance(pair, tuple) and len(pair) == 3 and pair[0] == "="):
                continue
            name = _fluent(pair[1])
            value = pair[2]
            if name is None or name[0] != atom[0] or len(atom[1]) not in (name[1], name[1] + 1):
                continue
            wanted = atom[1][name[1]] if len(atom[1]) == name[1] + 1 else "true"
            fixed = isinstance(value, (str, int))
            if fixed and (value == wanted) != same_value:
                continue
            out.append(rule)
        return out

    @staticmethod
    def events_read(rules: list[Any], atom: Atom) -> list[tuple[str, dict[int, Any]]]:
        """The events the rules' ``happensAt`` goals read for ``atom``: each event's name and the
        values its arguments must have (those the rule shares with the fluent's, or constants)."""
        out = []
        for rule in rules:
            fluent = rule.head[1][1]
            shared = {}  # variable number -> the atom's value at that position of the fluent
            if isinstance(fluent, tuple):
                for k, term in enumerate(fluent[1:]):
                    if isinstance(term, Slot) and k < len(atom[1]):
                        shared[term.i] = atom[1][k]
            for goal in rule.body:
                if not (isinstance(goal, tuple) and goal and goal[0] == "happensAt" and len(goal) > 1):
                    continue
                name = _fluent(goal[1])
                if name is None:
                    continue
                needs = {}
                for j, term in enumerate(goal[1][1:] if isinstance(goal[1], tuple) else ()):
                    if isinstance(term, Slot) and term.i in shared:
                        needs[j] = shared[term.i]
                    elif isinstance(term, (str, int)):
                        needs[j] = term
                out.append((name[0], needs))
        return out


def _where(rule: Any) -> str:
    loc = rule.loc
    return f"{loc.file}:{loc.line}" if loc is not None else "?"


def _events_at(events: list[Event], t: Any, reads: list[tuple[str, dict[int, Any]]]) -> list[Node]:
    """The input events at ``t`` that one of ``reads`` matches."""
    def read(ev: Event) -> bool:
        return any(ev.pred == name and all(j < len(ev.args) and ev.args[j] == v for j, v in needs.items())
                   for name, needs in reads)

    return [Node("event", f"input {atom_text(ev.pred, tuple(ev.args))} at {t}", where=str(ev.loc) if ev.loc else "",
                 atom=atom_text(ev.pred, tuple(ev.args)), time=t)
            for ev in events if ev.t == t and ev.pred is not None and not ev.retract and read(ev)]


def _rule_nodes(rules: list[Any], kind: str) -> list[Node]:
    article = "an" if kind[0] in "aeiou" else "a"
    return [Node("rule", f"{article} {kind} rule of it", rule=f"{_where(r)}: {kind} rule") for r in rules]


def why(rules: Rules, events: list[Event], answers: dict[Atom, list[I.Iv]], atom: Atom, t: Any) -> Node:
    held = next(iv for iv in answers.get(atom, []) if I.contains(iv, t))
    shown = I.text(held)
    sdf = rules.about("holdsFor", atom)
    if sdf:
        return Node("atom", f"{atom_text(*atom)} on {shown}: statically determined (holdsFor); its interval "
                            "operations are not unfolded yet", atom=atom_text(*atom), time=t, interval=shown,
                    children=_rule_nodes(sdf, "holdsFor"))
    start = held[0]
    inits = rules.about("initiatedAt", atom)
    t0 = start - rules.tick
    cited = _events_at(events, t0, rules.events_read(inits, atom))
    if not cited and start == 0 and rules.program.initially:
        return Node("atom", f"{atom_text(*atom)} on {shown}: holds from the start (initially)", atom=atom_text(*atom),
                    time=t, interval=shown)
    return Node("rule", f"{atom_text(*atom)} on {shown}: initiated at {t0}, not terminated in ({t0},{t}]",
                atom=atom_text(*atom), time=t, interval=shown,
                rule=f"{_where(inits[0])}: initiatedAt rule" if inits else "",
                children=[*cited, Node("test", f"not terminated in ({t0},{t}]: it holds on {shown}",
                                       window=f"({t0},{t}]")])


def why_not(rules: Rules, events: list[Event], answers: dict[Atom, list[I.Iv]], atom: Atom, t: Any) -> Node:
    held = answers.get(atom, [])
    name = atom_text(*atom)
    inits = rules.about("initiatedAt", atom)
    if not held:
        text = f"{name} never holds: never initiated" if inits or not rules.about("holdsFor", atom) else \
            f"{name} never holds (statically determined: its holdsFor rules give no interval)"
        return Node("why-not", text, atom=name, time=t, children=_rule_nodes(inits, "initiatedAt"))
    before = [iv for iv in held if iv[2] <= t]
    if not before:
        t0 = held[0][0] - rules.tick
        return Node("why-not", f"{name} does not hold at {t}: first initiated at {t0}, after {t}", atom=name, time=t,
                    children=_events_at(events, t0, rules.events_read(inits, atom)))
    last = before[-1]
    t0, t1 = last[0] - rules.tick, last[2] - rules.tick
    ends = rules.about("terminatedAt", atom) + rules.about("initiatedAt", atom, same_value=False)
    cited = _events_at(events, t1, rules.events_read(ends, atom))
    return Node("why-not", f"{name} does not hold at {t}: initiated at {t0}, terminated at {t1}", atom=name, time=t,
                interval=I.text(last), literal=f"terminated at {t1}",
                reason=f"held on {I.text(last)}, then terminated at {t1} <= {t}", children=cited)


def explainer(program: RtecProgram) -> Callable[..., Any]:
    """``chronolog explain --why / --why-not`` of an RTEC event description (``Dialect.explain``)."""
    rules = Rules(program)

    def explain(events: Any, lines: Any, atom: Any, t: Any, mode: str, every: bool, depth: int | None) -> Any:
        seen, answers = list(events), I.answers(lines)
        return why(rules, seen, answers, atom, t) if mode == "why" else why_not(rules, seen, answers, atom, t)

    return explain
