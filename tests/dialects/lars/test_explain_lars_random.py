"""``chronolog explain`` over random stratified LARS programs (tests/strategies.py: comparisons,
assignments, tuple windows, ``@`` with constant and variable times, ``@``-heads, program facts,
negation) on random streams with late events: ``--why`` exactly for ``run``'s answers, sound
(the cited events alone re-derive the atom), every rule node an answer of ``run``; ``--why-not``
exactly for the others, every entry naming a failing literal."""

from __future__ import annotations

import json
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
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    if any(x.get("no_answer_set") for x in lines):
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
            assert entry.get("literal") or "no rule" in entry["text"] or entry["text"], entry
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
