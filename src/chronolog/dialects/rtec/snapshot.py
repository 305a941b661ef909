"""The RTEC evaluator's state as JSON data: ``export_state`` and ``import_state``.

What a checkpoint of an RTEC stream holds: the input log (events, points with
their multiplicities, intervals with their counts), the derived fluents and
events, the dynamic domains, what was published, and the window bookkeeping.
Derived lists of input fluents are not stored but rebuilt from the input.
Kept apart from the evaluator because it is a codec (terms to JSON and back,
``inf`` as a string); the evaluator's ``export_state``/``import_state`` call
these.  The layout is the stored schema (``chronolog.state``): change it only
with a migration.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from chronolog.core.events import Event
from chronolog.dialects.rtec import intervals as IV
from chronolog.dialects.rtec.admitted import set_hidden, split_old_store
from chronolog.dialects.rtec.intervals import INF
from chronolog.dialects.rtec.store import _Store
from chronolog.evaluator import StateError, check_state_header
from chronolog.state.codec import reading, versioned

if TYPE_CHECKING:
    from chronolog.dialects.rtec.evaluator import RtecEvaluator

NEG_INF = -INF


def log_bucket(item: list) -> int:
    """The time point an ``inputs`` item of ``export_state`` belongs to (an
    event's or a point's time, an interval's start): a fleet service journals
    the input log per point, so a commit writes the points whose input
    changed (chronolog/stages/evaluator.py)."""
    return int(item[3] if item[0] == "e" else item[4])


def retained(ev: RtecEvaluator) -> tuple[Any, list[Event]]:
    """The input the evaluator keeps as events in time order (``RtecEvaluator.retained``):
    input events, input fluents' points (as often as given) and intervals, framed by the
    stream's first and latest times; complete from ``floor`` once a retention forgot
    something (RTEC's answers then need what it forgot: inertia has no bound)."""
    if ev.first is None:
        return None, []
    rows: list[tuple[Any, int, Event]] = []
    for key, by_t in ev.store.events.items():
        if ("event", key) in ev.h.kind:
            continue  # derived, not input
        for t, arglist in by_t.items():
            rows += [(t, 0, Event(t, key[0], tuple(args))) for args in arglist]
    for key, by_t in ev.store.points.items():
        for t, items in by_t.items():
            for fargs, value in items:
                event = Event(t, key[0], _with_value(fargs, value))
                rows += [(t, 0, event)] * ev.point_dups.get((key, fargs, value, t), 1)
    for (key, fargs, value, a, b), n in ev.interval_counts.items():
        rows += [(a, 0, Event(a, key[0], _with_value(fargs, value), span=(a, b)))] * n
    rows.sort(key=lambda row: row[0])
    events = [Event(ev.first), *(event for _, _, event in rows), Event(ev.latest)]
    return (None if ev.floor == NEG_INF else ev.floor), events


def _with_value(fargs: tuple, value: Any) -> tuple:
    """An input fluent's event arguments (the data README): the value last unless it is true."""
    return tuple(fargs) if value == "true" else (*fargs, value)


def export_state(ev: RtecEvaluator) -> dict[str, Any]:
    """The evaluator's state as JSON data (``RtecEvaluator.export_state``)."""
    inputs = []
    for key, by_t in ev.store.events.items():
        if ("event", key) in ev.h.kind:
            continue
        for t, arglist in by_t.items():
            for args in arglist:
                inputs.append(["e", key[0], [_jv(a) for a in args], t])
    for key, by_t in ev.store.points.items():
        for t, items in by_t.items():
            for fargs, value in items:
                n = ev.point_dups.get((key, fargs, value, t), 1)
                inputs.append(["p", key[0], [_jv(a) for a in fargs], _jv(value), t, n])
    for (key, fargs, value, a, b), n in ev.interval_counts.items():
        inputs.append(["i", key[0], [_jv(x) for x in fargs], _jv(value), a, _jt(b), n])
    derived = []
    for key, by_args in ev.store.fluents.items():
        if key[0] in ev.point_decl or key[0] in ev.interval_decl:
            continue
        for args, vals in by_args.items():
            for v, ivs in vals.items():
                derived.append([key[0], [_jv(a) for a in args], _jv(v), [[a, _jt(b)] for a, b in ivs]])
    events = []
    for key, by_t in ev.store.events.items():
        if ("event", key) in ev.h.kind:
            for t, arglist in by_t.items():
                for args in arglist:
                    events.append([key[0], [_jv(a) for a in args], t])
    return versioned({
        "dialect": ev.dialect, "inputs": inputs, "fluents": derived, "derived_events": events,
        "domain": [[k[0], [[_jv(a) for a in tup] for tup in tups]] for k, tups in ev.domain.items()],
        "published": [[k[0], [_jv(a) for a in args], _jv(v), [[a, _jt(b)] for a, b in ivs]]
                      for (k, args, v), ivs in ev.published.items()],
        "initialised": [[k[0], [_jv(a) for a in args], _jv(v)] for k, args, v in ev.initialised],
        "sdf_known": [[k[0], [_jv(a) for a in args], _jv(v)] for k, args, v in ev.sdf_known],
        "lo": _jt(ev.lo), "done": _jt(ev.done), "first": ev.first, "latest": ev.latest,
        "counters": [ev.delayed, ev.unmatched_retractions, ev.time_points], "regrow": ev.regrow,
        "forgotten": [_jt(ev.floor), _jt(ev.pruned_at), ev.too_late],
        "deadline_points": [[k[0], [_jv(a) for a in args], _jv(v), ev.fi_inits.get((k, args, v), []),
                             ev.fi_terms.get((k, args, v), [])]
                            for (k, args, v) in set(ev.fi_inits) | set(ev.fi_terms)],
        "partial": [[e[1][0], e[1][1], _jv(e[2]), _jt(lo)] for e, lo in ev.partial.items()],
        "hidden": [[key[0], [_jv(a) for a in args], _jv(v), [[a, _jt(b)] for a, b in ivs]]
                   for key, by_args in ev.hidden.items() for args, vals in by_args.items() for v, ivs in vals.items()],
        # the instances each entity left out (``admitted.py``): an entity not listed is not known
        "rejected": [[e[0], e[1][0], e[1][1], [[[_jv(a) for a in x[0]], _jv(x[1])] if e[0] == "fluent"
                                               else [_jv(a) for a in x] for x in items]]
                     for e, items in ev.rejected.items()],
    })


def import_state(ev: RtecEvaluator, data: dict[str, Any]) -> None:
    """Restore what ``export_state`` gave into a new evaluator of the same program."""
    check_state_header(data, ev.dialect)
    with reading("RTEC evaluator state"):
        ev.store = _Store()
        ev.point_dups, ev.interval_counts = {}, {}
        for item in data["inputs"]:
            if item[0] == "e":
                _, name, args, t = item
                ev.store.add_event((name, len(args)), int(t), tuple(_pv(a) for a in args))
            elif item[0] == "p":
                _, name, args, value, t, n = item
                fargs, v = tuple(_pv(a) for a in args), _pv(value)
                key = (name, len(fargs))
                if int(n) > 1:
                    ev.point_dups[(key, fargs, v, int(t))] = int(n)
                ev.store.add_point(key, int(t), (fargs, v))
            else:
                _, name, args, value, a, b, n = item
                fargs = tuple(_pv(x) for x in args)
                ev.interval_counts[((name, len(fargs)), fargs, _pv(value), int(a), _pt(b))] = int(n)
        tick = ev.tick
        for key, by_t in ev.store.points.items():
            per: dict = defaultdict(list)
            for t, items in by_t.items():
                for fargs, v in items:
                    per[(fargs, v)].append((t, t + tick))
            for (fargs, v), pairs in per.items():
                ev.store.set_list(key, fargs, v, IV.coalesce(pairs))
        for k in {(k[0], k[1], k[2]) for k in ev.interval_counts}:
            ev._rebuild_intervals(*k)
        for name, args, value, ivs in data["fluents"]:
            fargs = tuple(_pv(a) for a in args)
            ev.store.set_list((name, len(fargs)), fargs, _pv(value), [(int(a), _pt(b)) for a, b in ivs])
        for name, args, t in data["derived_events"]:
            ev.store.add_event((name, len(args)), int(t), tuple(_pv(a) for a in args))
        for name, tups in data["domain"]:
            for tup in tups:
                ev.domain.setdefault((name, len(tup)), set()).add(tuple(_pv(a) for a in tup))
        ev.published = {((name, len(args)), tuple(_pv(a) for a in args), _pv(v)):
                          [(int(a), _pt(b)) for a, b in ivs] for name, args, v, ivs in data["published"]}
        ev.open_published = {i for i, ivs in ev.published.items() if ivs and ivs[-1][1] == INF}
        ev.initialised = {((n, len(a)), tuple(_pv(x) for x in a), _pv(v)) for n, a, v in data["initialised"]}
        ev.sdf_known = {((n, len(a)), tuple(_pv(x) for x in a), _pv(v)) for n, a, v in data["sdf_known"]}
        ev.lo, ev.done = _pt(data["lo"]), _pt(data["done"])
        ev.first, ev.latest = data["first"], data["latest"]
        ev.delayed, ev.unmatched_retractions, ev.time_points = map(int, data["counters"])
        ev.regrow = bool(data["regrow"])
        floor, pruned_at, too_late = data.get("forgotten", ["-inf", "-inf", 0])
        ev.floor, ev.pruned_at, ev.too_late = _pt(floor), _pt(pruned_at), int(too_late)
        ev.fi_inits, ev.fi_terms = {}, {}
        for name, args, v, inits, terms in data["deadline_points"]:
            ident = ((name, len(args)), tuple(_pv(a) for a in args), _pv(v))
            if inits:
                ev.fi_inits[ident] = [int(x) for x in inits]
            if terms:
                ev.fi_terms[ident] = [int(x) for x in terms]
        ev.partial = {("fluent", (str(name), int(n)), _pv(v)): _pt(lo) for name, n, v, lo in data.get("partial", [])}
        ev.hidden = {}
        for name, args, value, ivs in data.get("hidden", []):
            fargs = tuple(_pv(a) for a in args)
            set_hidden(ev.hidden, ((name, len(fargs)), fargs, _pv(value)), [(int(a), _pt(b)) for a, b in ivs])
        ev.rejected = {}
        for kind, name, n, items in data.get("rejected", []):
            ent = ("event", (str(name), int(n))) if kind == "event" else ("fluent", (str(name), int(n)), None)
            ev.rejected[ent] = ({tuple(_pv(a) for a in x) for x in items} if kind == "event"
                                else {(tuple(_pv(a) for a in args), _pv(v)) for args, v in items})
        if ev.lo is None:
            raise StateError("RTEC evaluator state: lo is missing")
        if "rejected" not in data:  # written before admission was followed
            split_old_store(ev)


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
