"""Topic names and service roles come from one place (contract/topics.py)."""

from __future__ import annotations

import pytest

from chronolog.contract.topics import SERVICE_ROLES, TopicNames
from chronolog.dialects.lars.layout import lars_layout
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.plan import plan_program
from chronolog.runtime.fleet.topology import build_topology

PROGRAM = "slow(R) :- speed(R, V) [3], V < 30.\nstuck(R) :- slow(R) always [2].\nalert(R) :- stuck(R), not ok(R).\n"


def test_an_unknown_role_is_an_error_not_a_topic_name():
    with pytest.raises(AttributeError):
        TopicNames().facs  # noqa: B018 (the typo is the point)


def test_names_follow_the_prefix():
    names = TopicNames("acme")
    assert (names.facts, names.answers, names.stratum(2), names.changelog("reasoner-2")) == (
        "acme.facts", "acme.answers", "acme.stratum.2", "acme.reasoner-2.changelog")


@pytest.mark.parametrize("chain", [False, True])
def test_every_topic_and_service_of_a_topology_is_named_by_the_contract(chain):
    plan = plan_program(parse_lars(PROGRAM))
    topology = build_topology(lars_layout(plan), 2, 1, chain=chain)
    names = TopicNames()
    services = [s.name for s in topology.services]
    known = {names.facts, names.answers, names.dlq, names.late, names.ingested, names.grounded, names.control}
    known |= {names.stratum(k) for k in range(1, len(plan.strata) + 1)}
    known |= {names.changelog(s) for s in services}
    assert {t.name for t in topology.topics} <= known
    assert {s.name.split("-")[0] for s in topology.services} <= set(SERVICE_ROLES)
    assert all(s.state == names.changelog(s.name) for s in topology.services)
