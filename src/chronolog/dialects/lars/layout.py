"""A LARS program's fleet layout: its strata, its partition key, and the stages of each service.

Per stratum, the fleet runs ingest, grounding, one reasoner per stratum and
output (``dialects/lars/stages.py``); chained, grounding, every stratum and
output of a partition in one ``chain`` service.  Partitioning by a key is
possible when every rule joins all its atoms on one variable standing at the
same argument position of each predicate (an entity id); tuple windows count
facts across all keys and rule it out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chronolog.core.errors import ChronologError
from chronolog.core.retention import lars_retention
from chronolog.dialects.lars.evaluator import LarsEvaluator
from chronolog.dialects.lars.hooks import lars_causal, lars_dates_back, lars_evaluations, lars_parse, lars_plan
from chronolog.dialects.lars.keeping import kept_answers
from chronolog.dialects.lars.laser import laser_program
from chronolog.dialects.lars.partition import partition_key
from chronolog.dialects.lars.plan import Plan, plan_back, plan_program
from chronolog.dialects.lars.stages import ChainStage, GroundingStage, OutputStage, ReasonerStage, fleet_strata, horizon, serving
from chronolog.stages.ingest import IngestStage
from chronolog.stages.interface import FleetLayout, Stage, StageSpec, Upgrader


def lars_layout(plan: Plan) -> FleetLayout:
    """The fleet of ``plan``: per stratum or chained, partitioned by key when the rules allow it."""
    strata = fleet_strata(plan)
    key, reason = partition_key(plan)

    def chain_note(n: int) -> str:
        what = "ingest, " if n == 1 else ""
        return f"chained: {what}grounding, {len(strata)} stratum reasoner(s) and output in one service per partition"

    def stage(spec: StageSpec) -> Stage:
        return _stage(plan, key, spec)

    return FleetLayout(tuple(tuple(s) for s in strata), True, key, reason, chain_note, stage)


def _stage(plan: Plan, key: dict[str, int] | None, spec: StageSpec) -> Stage:
    """The stage of one service; its stratum and partition are checked by the runtime."""
    retention = lars_retention(spec.retention)  # --retention inf: LARS's default, unlimited
    if spec.role == "ingest":
        return IngestStage(key, spec.partitions if key is not None else 1, spec.input_partitions, retention,
                           idle_flush=spec.idle_flush)
    if spec.role == "grounding":  # closes the latest point on ingest's idle record (IngestStage.idle_flush)
        return GroundingStage(idle_flush=None)
    if spec.role == "reasoner":
        assert spec.stratum is not None
        name = f"reasoner.{spec.stratum}" + ("" if spec.partitions == 1 else f".{spec.partition}")
        return ReasonerStage(plan, spec.stratum - 1, warn=spec.warn, retention=retention,
                             plan_of=new_plan_of(plan, key, spec), name=name, version=spec.version)
    if spec.role == "output":  # every program version's answers, over the most strata any has
        later = [new_plan_of(plan, key, spec)(v) for v in spec.versions]
        strata = max(p.fleet_strata for p in [plan, *later])
        return OutputStage(serving(plan, later), strata, warn=spec.warn, retention=retention, version=spec.version,
                           mark=spec.mark_no_answer_set)
    if spec.role == "chain":
        ingest = IngestStage(key, 1, spec.input_partitions, retention) if spec.chained_ingest else None
        name = "chain" if spec.partitions == 1 else f"chain.{spec.partition}"
        return ChainStage(plan, ingest, idle_flush=spec.idle_flush, warn=spec.warn, retention=retention,
                          upgrader=lars_upgrader(plan, key, spec), name=name, version=spec.version,
                          mark=spec.mark_no_answer_set)
    raise ChronologError(f"error: a LARS fleet has no service {spec.role!r}")


def lars_upgrader(plan: Plan, key: dict[str, int] | None, spec: StageSpec) -> Upgrader:
    """How a chain service makes the evaluator of a new program version (``chronolog
    upgrade``): the program's plan (``new_plan_of``), with the service's retention."""
    plan_of = new_plan_of(plan, key, spec)

    def make(sources: Any) -> LarsEvaluator:
        return LarsEvaluator(plan_of(sources), retention=horizon(lars_retention(spec.retention)), warn=spec.warn)

    def back(sources: Any) -> int | None:
        return plan_back(plan_of(sources))

    def causal(sources: Any) -> bool:
        return lars_causal(plan_of(sources).program)

    def dated(sources: Any, evaluator: Any, first: Any, last: Any) -> Any:
        return lars_evaluations(plan_of(sources).program, evaluator, first, last)

    def kept(old: Any, new: Any) -> frozenset[str]:
        return kept_answers(plan_of(old), plan_of(new))

    return Upgrader(make, back, causal, True, True, (plan.program.dialect,), kept, dated)


def new_plan_of(plan: Plan, key: dict[str, int] | None, spec: StageSpec) -> Callable[[Any], Plan]:
    """The plan of a new program version given by its files (None: the service's own):
    parsed in the program's syntax, planned with the service's ``--mode`` and ``--seed``.
    Refused: ``@``-heads in a program that is not stratified (its evaluations from T on
    cannot be taken apart from those before: its answer sets keep earlier choices), and,
    where the fleet is partitioned, a program that would partition the facts otherwise
    (ingest routes them by the old key)."""
    parse = laser_program if plan.program.dialect == "laser" else lars_parse

    def plan_of(sources: Any) -> Plan:
        if sources is None:
            return plan
        program = parse(list(sources))
        new = plan_program(program)
        if lars_dates_back(program) and not new.stratified:
            raise ChronologError("error: the new program has @-heads and is not stratified: its answer sets "
                                 "follow the choices of earlier time points, so its evaluations from T on cannot "
                                 "be taken apart from those before (upgrades take @-heads in stratified programs only)")
        new.solver, new.seed = plan.solver, plan.seed
        if spec.partitions > 1 and not _same_routes(key, partition_key(new)[0], new):
            raise ChronologError(f"error: the new program is not partitioned by the fleet's key ({key}): its "
                                 f"{spec.partitions} partitions would hold the wrong facts (restart the fleet "
                                 "with the new program, or run it with one partition)")
        return new

    return plan_of


def _same_routes(key: dict[str, int] | None, new_key: dict[str, int] | None, new: Plan) -> bool:
    """Whether the facts ingest routes by ``key`` are where ``new`` needs them: every predicate
    both keys name on the same argument, and the new key's others derived (an added stratum's)."""
    if key is None or new_key is None:
        return key == new_key
    derived = {f"{p}/{n}" for p, n in new.intensional}
    return all(key[k] == i if k in key else k in derived for k, i in new_key.items())


def program_layout(program: Any, options: Any) -> FleetLayout:
    """The registry's ``layout`` of a LARS program: its plan's strata, per stratum or chained,
    partitioned by key when every rule joins on one; ``--mode``/``--seed`` as ``up`` gives them.
    Here rather than in ``hooks.py``: the stages it imports are the fleet's, which ``chronolog
    run`` does not load."""
    return lars_layout(lars_plan(program, options))
