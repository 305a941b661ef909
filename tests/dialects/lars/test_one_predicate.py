"""``OnePredicate``: a time point's facts of one predicate, as the readers give them."""

from __future__ import annotations

import io
import pickle

from chronolog.core.events import Event, OnePredicate
from chronolog.dialects.lars.answers import AnswerWriter
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.plan import plan_program
from chronolog.dialects.lars.reasoner import Reasoner


def test_reads_as_the_list_of_facts_it_stands_for():
    facts = OnePredicate(("p", 1), [(1,), (2,), (1,)])
    as_list = [(("p", 1), (1,)), (("p", 1), (2,)), (("p", 1), (1,))]
    assert list(facts) == as_list and facts == as_list
    assert len(facts) == 3 and facts[1] == as_list[1]
    assert pickle.loads(pickle.dumps(facts)) == facts


def _answers(program: str, pushes) -> str:  # noqa: ANN001
    plan = plan_program(parse_lars(program))
    out = io.StringIO()
    reasoner = Reasoner(plan, AnswerWriter(out, plan))
    for push in pushes:
        push(reasoner)
    reasoner.finish()
    return out.getvalue()


def test_events_that_change_a_time_point_given_as_one_predicate():
    """A retraction and a late fact of the same time point as a batch given as
    ``OnePredicate`` mean what the same events one by one mean."""
    program = "q(X) :- p(X) [1].\nr :- p(3), p(1).\n"
    batch = [(1,), (2,)]
    as_batch = [
        lambda r: r.push_facts(0, OnePredicate(("p", 1), list(batch))),
        lambda r: r.push(Event(0, "p", (2,), retract=True)),
        lambda r: r.push(Event(0, "p", (3,))),
        lambda r: r.push_facts(1, OnePredicate(("p", 1), [(5,)])),
        lambda r: r.push(Event(0, "p", (1,), retract=True)),  # late: a replay
        lambda r: r.push(Event(2)),
    ]
    one_by_one = [
        lambda r: r.push(Event(0, "p", (1,))),
        lambda r: r.push(Event(0, "p", (2,))),
        lambda r: r.push(Event(0, "p", (2,), retract=True)),
        lambda r: r.push(Event(0, "p", (3,))),
        lambda r: r.push(Event(1, "p", (5,))),
        lambda r: r.push(Event(0, "p", (1,), retract=True)),
        lambda r: r.push(Event(2)),
    ]
    got = _answers(program, as_batch)
    assert got == _answers(program, one_by_one)
    assert '"pred":"r"' in got  # r held at 0 (p(3) and p(1)) before the late retraction
