"""A stage's program upgrade (``chronolog upgrade``, docs/fleet/upgrade.md), for every stage
that hosts a whole program as one ``Evaluator``: DatalogMTL's and RTEC's ``EvaluatorStage``
and LARS's ``ChainStage`` alike.

``apply_upgrade`` takes the upgrade record a stage read in order with its data, decides
its time T, makes the new program's evaluator through the stage's ``Upgrader`` and hands
the switch to ``versions.switch``; the stage keeps only what is its own (where its
evaluator lives, its journals).  The outcome goes to the control topic, applied or
refused, in the same transaction as the data and the state.
"""

from __future__ import annotations

import logging
from typing import Any

import orjson

from chronolog.core.errors import ChronologError
from chronolog.core.records import record
from chronolog.evaluator import Evaluator, KeepsStrata, Time, time_text
from chronolog.stages.interface import Out, Upgrader
from chronolog.versions import UpgradeRequest, Version, Versions, retained_from, retention_refusal, switch

log = logging.getLogger("chronolog.service")


@record
class Upgraded:
    """What an upgrade record did: the evaluator to go on with (None: unchanged — refused,
    or a request already applied), the control records and the restating answer lines."""

    evaluator: Any
    said: list[Out]
    lines: list[bytes]


def apply_upgrade(value: bytes, evaluator: Evaluator, upgrader: Upgrader | None, applied: list[dict[str, Any]],
                  latest: Time | None, done: Time | None, service: str) -> Upgraded:
    """The upgrade record ``value`` applied to ``evaluator``, which was given input up to
    ``latest`` and evaluated up to ``done``; ``applied``: the upgrades applied so far (the
    new one is appended; a request already among them changes nothing: the same record is
    on every input partition)."""
    try:
        request = UpgradeRequest.decode(value)
    except ValueError as exc:
        said = {"upgrade": None, "refused": f"not an upgrade record: {exc}", "service": service}
        return Upgraded(None, [Out("control", 0, orjson.dumps(said), b"upgrade-?")], [])
    if any(done_["id"] == request.id for done_ in applied):
        return Upgraded(None, [], [])
    # in the service's log: an upgrade under way (applied at the commit that follows; a
    # service killed before it applies the request again after its restart)
    log.info("upgrade %s: applying version %s from T=%s", request.id, request.version, request.at)
    try:
        versions, lines, at = _switch(request, evaluator, upgrader, latest, done)
    except ChronologError as exc:
        said = {"upgrade": request.id, "refused": str(exc), "service": service}
        return Upgraded(None, [Out("control", 0, orjson.dumps(said), outcome_key(request, service))], [])
    row: dict[str, Any] = {"id": request.id, "version": request.version, "at": None if at is None else time_text(at)}
    applied.append(row)
    outcome: dict[str, Any] = {"upgrade": request.id, "version": request.version, "at": row["at"],
                               "service": service}
    planned, kept = versions.kept or (frozenset(), frozenset())
    if planned and isinstance(versions.newest.evaluator, KeepsStrata):  # (the plan's unchanged strata, or none)
        outcome["kept"] = sorted(kept)
        if kept != planned:
            log.info("upgrade %s: the unchanged strata were evaluated again on the retained input (the running "
                     "version could not hand its state over now: docs/fleet/upgrade.md)", request.id)
    return Upgraded(versions, [Out("control", 0, orjson.dumps(outcome), outcome_key(request, service))], lines)


def outcome_key(request: UpgradeRequest, service: str) -> bytes:
    """The control topic's key of a service's outcome: ``upgrade-ID``, and ``.SERVICE`` after
    it for each partition's chain of a partitioned fleet (``chain.1``), so that the compacted
    topic keeps every partition's outcome."""
    return request.key if service == "chain" else request.key + b"." + service.encode()


def refused_upgrade(value: bytes, reason: str, service: str) -> Out:
    """The control record refusing the upgrade record ``value`` (a service that cannot apply it)."""
    try:
        request: UpgradeRequest | None = UpgradeRequest.decode(value)
    except ValueError:
        request = None
    said = {"upgrade": None if request is None else request.id, "refused": reason, "service": service}
    return Out("control", 0, orjson.dumps(said), b"upgrade-?" if request is None else request.key)


def _switch(request: UpgradeRequest, evaluator: Evaluator, up: Upgrader | None, latest: Time | None,
            done: Time | None) -> tuple[Versions, list[bytes], Time | None]:
    if up is None:
        raise ChronologError("error: this service's evaluator cannot change its program while running")
    if not hasattr(evaluator, "retained"):
        raise ChronologError("error: this evaluator mode (RTEC's --window) cannot change its program while running")
    if request.dialect not in up.dialects:
        raise ChronologError(f"error: a {request.dialect} program cannot replace this {up.dialects[0]} program "
                             "(an upgrade keeps the language)")
    at = request.time(up.integral)
    if at is None and latest is not None:  # the first time not evaluated yet
        at = latest if done is None else (done + 1 if up.integral else done)
    if at is not None and request.retained is not None:  # the input every partition holds (ingest's stamp)
        refused = retention_refusal(at, up.back(request.sources), retained_from(request, up.integral))
        if refused is not None:
            raise ChronologError(refused)
    versions, lines = switch_to(up, evaluator, request, at, done)
    return versions, lines, at


def switch_to(up: Upgrader, evaluator: Evaluator, request: UpgradeRequest, at: Time | None,
              done: Time | None) -> tuple[Versions, list[bytes]]:
    """``evaluator``, evaluated up to ``done``, upgraded to the request's program from ``at`` on
    (None: nothing read yet, the new program from the start), and the lines that restate what
    changes: as a service applies it, and as ``explain`` replays a fleet's history."""
    new = up.make(request.sources)
    if at is None:
        return Versions([Version(new, None, None, request.sources, up.causal(request.sources))], up.discrete), []
    running = evaluator.newest.sources if isinstance(evaluator, Versions) else None
    return switch(evaluator, new, request.sources, at, done, up.causal, up.discrete, up.back(request.sources),
                  up.kept(running, request.sources), up.dated, up.make)
