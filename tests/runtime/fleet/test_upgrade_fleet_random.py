"""``chronolog upgrade`` of real fleets (``chronolog up`` on the bundled broker) for seeded
random program pairs of every dialect — the rule pools of ``tests/runtime/test_upgrade.py``'s
property tests — not only the hand-picked pairs of the other fleet tests: a random stream,
the upgrade at a random T in the past (a restatement), in some cases the reasoner killed with
SIGKILL while it applies it, then late events and retractions on both sides of T.  The answer
topic must mean what ``chronolog run OLD --input S --upgrade T=NEW`` prints on the whole
stream (``lars-at``: a new LARS program with @-heads, also the naive evaluator's splice per
evaluated point).  Fixed seeds keep CI deterministic."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from dialect_programs import LARS_AT_RULES, LARS_RULES, MTL_RULES, RTEC_NEW, RTEC_OLD
from hosted_fleet import answers_until, fleet_up, lines
from hosted_fleet import applying as _applying
from hosted_fleet import chronolog as _chronolog
from meaning import meaning, sampled_meaning
from reference import reference_splice
from test_rtec import meaning as rtec_meaning

from chronolog.cli.fleet import publish_file
from chronolog.dialects.lars.changes import per_stratum_refusal
from chronolog.dialects.lars.hooks import lars_dates_back, lars_plan
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.partition import partition_key

pytestmark = pytest.mark.fleet

HI = 14  # every stream ends with a heartbeat at HI


# with negation of derived predicates: programs of one to three strata (``lars-layout``: a pair whose
# number of strata differs, so that the per-stratum fleet starts an added stratum's reasoner or
# has a removed one withdraw its answers from T on)
LAYOUT_RULES = [*LARS_RULES, "u(X) :- p(X), not s(X).", "u(X) :- r(X) [2], not q(X).", "v(X) :- u(X), not q(X)."]


def _plan(text: str):
    return lars_plan(parse_lars(text))


def _lars_pair(rng: random.Random, strata: bool, layout: bool = False, at_heads: bool = False) -> tuple[str, str]:
    """A random (old, new) pair of LARS programs; ``strata``: one a per-stratum fleet can switch to;
    ``layout``: with another number of strata; ``at_heads``: the new one with @-heads."""
    pool = LAYOUT_RULES if layout else [*LARS_RULES, *LARS_AT_RULES] if at_heads else LARS_RULES
    while True:
        old, new = ("\n".join(rng.sample(pool, rng.randint(1, 4 if layout else 3))) + "\n" for _ in range(2))
        if old == new or layout and _plan(old).fleet_strata == _plan(new).fleet_strata:
            continue
        if at_heads and not lars_dates_back(parse_lars(new)):
            continue
        if not strata or per_stratum_refusal(_plan(old), _plan(new)) is None:
            return old, new


def _point_events(rng: random.Random, preds: list[str], args: list[str], n: int, lo: int, hi: int) -> list[dict]:
    return [{"t": rng.randint(lo, hi), "pred": rng.choice(preds), "args": [rng.choice(args)]} for _ in range(n)]


def _late(rng: random.Random, first: list[dict], fresh: list[dict]) -> list[dict]:
    """Late events plus retractions of published ones, mixed (the fresh ones fall on both sides of T)."""
    facts = [e for e in first if "pred" in e]
    gone = [{**e, "op": "retract"} for e in rng.sample(facts, min(3, len(facts)))]
    out = fresh + gone
    rng.shuffle(out)
    return [*out, {"t": HI}]


def _case(dialect: str, seed: int) -> dict:
    rng = random.Random(seed)
    if dialect in ("lars-chain", "lars-strata", "lars-layout", "lars-at"):
        old, new = _lars_pair(rng, dialect not in ("lars-chain", "lars-at"), dialect == "lars-layout",
                              dialect == "lars-at")
        first = [{"t": 0}, *sorted(_point_events(rng, ["p", "r"], ["a", "b"], 10, 0, 8), key=lambda e: e["t"]), {"t": 8}]
        second = _late(rng, first, _point_events(rng, ["p", "r"], ["a", "b"], 6, 0, 12))
        at = str(rng.randint(2, 7))
        if dialect in ("lars-chain", "lars-at"):
            key = partition_key(_plan(old))[0]  # partitioned where the new program keeps the fleet's key
            parts = 3 if key is not None and partition_key(_plan(new))[0] == key else 1
            options: tuple[str, ...] = ("--chain", "--partitions", str(parts))
        else:
            options = ()
        return {"ext": "lars", "old": old, "new": new, "first": first, "second": second, "at": at, "options": options,
                "meaning": lambda out: meaning([json.loads(x) for x in out if x.strip()], (0, HI))}
    if dialect == "mtl":
        old, new = ("\n".join(rng.sample(MTL_RULES, rng.randint(1, 3))) + "\n" for _ in range(2))

        def interval(lo: int, hi: int) -> dict:
            start = rng.randint(lo, hi)
            return {"interval": f"[{start},{start + rng.randint(0, 2)}]", "pred": rng.choice(["P", "R"]),
                    "args": [rng.choice(["a", "b"])]}
        first = [{"t": 0}, *(interval(0, 7) for _ in range(8)), {"t": 9}]
        second = _late(rng, first, [interval(0, 11) for _ in range(5)])
        return {"ext": "mtl", "old": old, "new": new, "first": first, "second": second, "at": str(rng.randint(2, 7)),
                "options": ("--partitions", "3", "--input-partitions", "3"),
                "meaning": lambda out: sampled_meaning([json.loads(x) for x in out if x.strip()], HI)}
    old, new = (RTEC_OLD, RTEC_NEW) if rng.random() < 0.5 else (RTEC_NEW, RTEC_OLD)
    preds = ["opened", "closed", "locked"]
    first = sorted(_point_events(rng, preds, ["d1", "d2"], 10, 0, 9), key=lambda e: e["t"]) + [{"t": 10}]
    second = _late(rng, first, _point_events(rng, preds, ["d1", "d2"], 6, 0, 13))
    parts = str(1 + 2 * (seed % 2))
    return {"ext": "prolog", "old": old, "new": new, "first": first, "second": second, "at": str(rng.randint(2, 8)),
            "options": ("--partitions", parts, "--input-partitions", parts),
            "meaning": lambda out: rtec_meaning([json.loads(x) for x in out if x.strip()], horizon=HI + 2)}


CASES = [("lars-chain", 6, True), ("lars-chain", 1, False), ("lars-strata", 8, True),
         ("lars-layout", 1, True), ("lars-layout", 3, True), ("lars-layout", 19, False),
         ("mtl", 4, True), ("mtl", 5, False), ("rtec", 6, True), ("rtec", 11, True),
         ("lars-at", 24, True), ("lars-at", 36, True)]  # @-heads: 24 dates atoms before T, 36 has 3 partitions


@pytest.mark.parametrize(("dialect", "seed", "kill"), CASES, ids=[f"{d}-{s}{'-sigkill' * k}" for d, s, k in CASES])
def test_random_pair_upgrade_of_a_fleet_means_run_upgrade(tmp_path: Path, dialect: str, seed: int, kill: bool):
    case = _case(dialect, seed)
    mean: Callable[[list[str]], object] = case["meaning"]
    old, new = tmp_path / f"old.{case['ext']}", tmp_path / f"new.{case['ext']}"
    old.write_text(case["old"])
    new.write_text(case["new"])
    stream = tmp_path / "all.jsonl"
    stream.write_bytes(lines(case["first"] + case["second"]))
    run = _chronolog("run", str(old), "--input", str(stream), "--upgrade", f"{case['at']}={new}")
    assert run.returncode == 0, run.stderr
    want = mean(run.stdout.splitlines())
    plain = _chronolog("run", str(old), "--input", str(stream))
    assert want != mean(plain.stdout.splitlines())  # (the seeds are picked so that the upgrade changes answers)
    if dialect == "lars-at":  # the version chosen by the time point evaluated, by the naive evaluator per point
        assert want == reference_splice([(None, case["old"]), (int(case["at"]), case["new"])],
                                        case["first"] + case["second"])
    state = tmp_path / "state"
    with fleet_up(old, state, case["options"]) as (info, deadline):
        bootstrap = info["bootstrap"]
        (tmp_path / "first.jsonl").write_bytes(lines(case["first"]))
        publish_file(str(tmp_path / "first.jsonl"), bootstrap, "chronolog")
        time.sleep(2.0)  # evaluated and committed: the upgrade restates [T, ...)
        upgrade = subprocess.Popen([sys.executable, "-m", "chronolog", "upgrade", str(new), "--at", case["at"],
                                    "--state-dir", str(state), "--timeout", "90"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if kill:
            chains = [s for s in info["services"] if s["name"] == "chain"]
            if chains:  # killed once its log says it applies the request (before or after its commit)
                log = state / "run" / "chain-p0.log"
                until = time.monotonic() + 60
                while _applying(log) == 0 and upgrade.poll() is None and time.monotonic() < until:
                    time.sleep(0.002)
                os.kill(chains[0]["pid"], signal.SIGKILL)
            else:  # a reasoner of the per-stratum fleet: the request on its way or being applied
                time.sleep(0.3)
                os.kill(next(s["pid"] for s in info["services"] if s["name"].startswith("reasoner"))
                        if not any(s["name"] == "reasoner-2" for s in info["services"])
                        else next(s["pid"] for s in info["services"] if s["name"] == "reasoner-2"), signal.SIGKILL)
        out, err = upgrade.communicate(timeout=120)
        assert upgrade.returncode == 0, err
        assert f"from T={case['at']}" in out, out
        (tmp_path / "second.jsonl").write_bytes(lines(case["second"]))
        publish_file(str(tmp_path / "second.jsonl"), bootstrap, "chronolog")
        assert answers_until(bootstrap, mean, want, deadline + 90) == want
