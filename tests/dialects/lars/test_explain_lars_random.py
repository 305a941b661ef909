"""``chronolog explain`` over random stratified LARS programs (tests/strategies.py: comparisons,
assignments, tuple windows, ``@`` with constant and variable times, ``@``-heads, program facts,
negation) on random streams with late events: ``--why`` exactly for ``run``'s answers, sound
(the cited events alone re-derive the atom), every rule node an answer of ``run``; ``--why-not``
exactly for the others, every entry naming a failing literal."""

from __future__ import annotations

import json
import re
from pathlib import Path

from explaining import explain, files, walk
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from meaning import meaning
from strategies import programs, streams

from chronolog.cli.main import main
from chronolog.contract.models import Explanation

ATOMS = [("a", 1), ("b", 1), ("c", 0)]
VALUES = [1, 2, 3, "a", "b"]


def _text(pred: str, args: tuple) -> str:
    return f"{pred}({','.join(map(str, args))})" if args else pred


def _answers(capsys, prog: str, stream: str, last: int) -> set | None:  # noqa: ANN001
    capsys.readouterr()
    assert main(["run", prog, "--input", stream]) == 0
    got = capsys.readouterr()
    lines = [json.loads(x) for x in got.out.splitlines()]
    if "warning: no answer set at t=" in got.err:
        return None  # (an @-time off the timeline: no answer set at some point, nothing to explain there)
    return meaning(lines, (0, last))


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(program=programs(stratified=True), events=streams(), late=st.booleans(), pick=st.integers(0, 999),
       atom=st.sampled_from(ATOMS), value=st.sampled_from(VALUES), t=st.integers(0, 7), answer=st.booleans())
def test_why_and_why_not_of_random_programs(tmp_path_factory, capsys, program, events, late, pick, atom, value, t,
                                            answer):
    tmp = tmp_path_factory.mktemp("random")
    records = [{"t": e.t, "pred": e.pred, "args": list(e.args)} if e.pred else {"t": e.t} for e in events]
    if late and len(records) > 2:  # the second event arrives last
        records.append(records.pop(1))
    first = min(r["t"] for r in records)
    records = [{"t": first}, *records, {"t": 7}]
    prog, stream = files(tmp, "p.lars", str(program), records)
    answers = _answers(capsys, prog, stream, 7)
    if answers is None:
        event("no answer set")
        return
    outputs = sorted(answers, key=repr)
    if answer and outputs:
        pred, args, t = outputs[pick % len(outputs)]
    else:
        pred, args = atom[0], (value,) * atom[1]
    t = max(t, first)
    holds = (pred, args, t) in answers
    query = f"{_text(pred, args)}@{t}"
    note(f"program:\n{program}\nevents: {json.dumps(records)}\nquery: {query} (holds: {holds})")
    code, got, err = explain(capsys, prog, stream, "why" if holds else "why-not", query)
    assert code == 0, (str(program), query, err)
    event(f"holds={holds} cited={'source' in json.dumps(got)} negated={'negated' in json.dumps(got)}")
    Explanation.model_validate(got)
    if not holds:
        for entry in got.get("why_not", []):
            _fails_first(tmp, capsys, str(program), records, entry, t, first)
        return
    for node in walk(got):
        if node["kind"] == "rule" and "time" in node:
            name = node["atom"]
            assert any(_text(p, a) == name and at == node["time"] for p, a, at in answers), (str(program), query, node)
    texts = Path(stream).read_text().splitlines()
    cited = sorted({int(n["source"].split(":")[-2]) for n in walk(got) if n["kind"] == "event"})
    points = [t] + [int(n["text"].split("(derived by the evaluation of ")[1].split(")")[0]) for n in walk(got)
                    if "(derived by the evaluation of " in n["text"]]
    alone = [{"t": first}, *(json.loads(texts[n - 1]) for n in cited), {"t": max(points)}]
    (tmp / "alone.jsonl").write_text("".join(json.dumps(e) + "\n" for e in alone))
    capsys.readouterr()
    assert main(["run", prog, "--input", str(tmp / "alone.jsonl")]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert (pred, args, t) in meaning(lines, (first, max(points))), (str(program), query, cited, records, got)


def _body(rule: str) -> list[str]:
    """A rule's body literals as written (split at the commas outside parentheses)."""
    body = rule.split(" :- ", 1)[1].strip().rstrip(".")
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        depth += ch in "([" and 1 or ch in ")]" and -1 or 0
        if ch == "," and depth == 0:
            parts.append(body[start:i].strip())
            start = i + 1
    return [*parts, body[start:].strip()]


def _fails_first(tmp: Path, capsys, program: str, records: list, entry: dict, t: int, first: int) -> None:  # noqa: ANN001
    """A why-not entry's literal fails at ``t`` for the query's bindings after the literals
    before it, by ``run`` alone: a rule of those literals and it (the bindings put in) derives
    no probe atom at ``t``; and it is the first, where no negation comes before it (one whose
    variable a later literal binds is read on its own, "for some value": ``not p(X) at Y
    [1 #], Y = X \\ 2`` passes the negation for some Y), the literals before it deriving one."""
    match = re.match(r"fails at body element (\d+): ", entry["text"])
    rule = entry.get("rule", {}).get("text", "")
    if match is None or " :- " not in rule or " at " in rule.split(" :- ")[0]:
        event("why-not entry not probed")  # (a fact, no rule, or an @-head's later evaluations)
        return
    k = int(match.group(1))
    bindings = {str(k_): str(v) for k_, v in entry.get("bindings", {}).items()}
    body = [re.sub(r"\b[A-Z][A-Za-z0-9_]*\b", lambda m: bindings.get(m.group(0), m.group(0)), lit) for lit in _body(rule)]
    assert _body(rule)[k - 1] == entry["literal"], (rule, entry)
    first_too = k > 1 and not any(lit.startswith("not ") for lit in body[:k - 1])
    probes = ["zzall :- " + ", ".join(body[:k]) + "."] + (["zzpre :- " + ", ".join(body[:k - 1]) + "."] if first_too else [])
    prog, stream = files(tmp, "probe.lars", program + "\n" + "\n".join(probes) + "\n", records)
    capsys.readouterr()
    if main(["run", prog, "--input", stream]) != 0:
        capsys.readouterr()
        event("why-not probe not safe")  # (a prefix whose variables a later literal binds)
        return
    derived = meaning([json.loads(x) for x in capsys.readouterr().out.splitlines()], (first, 7))
    assert ("zzall", (), t) not in derived, (program, records, entry)
    if first_too:
        assert ("zzpre", (), t) in derived, (program, records, entry)
    event("why-not entry probed")
