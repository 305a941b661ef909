"""``chronolog explain`` on an upgraded LARS fleet, without a broker: the fleet's input topic
(its records, an upgrade request among them, and the upgrade's outcome on the control topic)
is handed to the command in place of reading Kafka.  ``--why`` and ``--why-not`` explain
against the program version in force at T, and ``--changes`` names the upgrade that
restated an answer; checked against ``chronolog run --upgrade T=NEW`` on the same input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dialect_programs import LARS_DATED_EVENTS, LARS_DATED_NEW, LARS_DATED_OLD

from chronolog.cli import explain as cli_explain
from chronolog.cli.main import main
from chronolog.dialects.load import load_program
from chronolog.dialects.registry import lookup
from chronolog.runtime.explain import parse_query
from chronolog.versions import UPGRADE_KEY, UpgradeRequest, version_id

OLD = "q(X) :- p(X).\n"
NEW = "q(X) :- p(X) [2].\n"
EVENTS = [{"t": 0}, {"t": 1, "pred": "p", "args": ["a"]}, {"t": 4, "pred": "p", "args": ["a"]},
          {"t": 6, "pred": "p", "args": ["a"]}, {"t": 9}]
AT = 5  # the upgrade's time; its request arrives after time 9 (so it restates 5..9)


def _topics(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old_text: str, new_text: str, events: list[dict],
            at: int) -> Path:
    """A fleet started with ``old_text`` and upgraded to ``new_text`` from ``at`` on (its request
    after the events): its program files, and its topics as the command would read them."""
    old = tmp_path / "old.lars"
    old.write_text(old_text)
    (tmp_path / "new.lars").write_text(new_text)
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    request = UpgradeRequest("r1", version_id((("new.lars", new_text),)), "lars", str(at), (("new.lars", new_text),))
    records = [("chronolog.facts", 0, k, json.dumps(e).encode(), 0.0) for k, e in enumerate(events)]
    records.append(("chronolog.facts", 0, len(events), request.encode(), 0.0))
    outcomes = {"r1": {"upgrade": "r1", "service": "reasoner.1", "at": str(at), "version": request.version}}

    def fleet_input(args, text):  # noqa: ANN001, ANN202 (cli.explain._fleet_input, its topics given)
        program = load_program([str(old)], None)
        row = lookup(program.dialect)
        return program, row, parse_query(text, True), list(records), outcomes, None, None, False

    monkeypatch.setattr(cli_explain, "_fleet_input", fleet_input)
    return tmp_path


@pytest.fixture
def fleet(tmp_path, monkeypatch):
    """The fleet's program file, and its topics as the command would read them."""
    return _topics(tmp_path, monkeypatch, OLD, NEW, EVENTS, AT)


def _cli(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    return code, capsys.readouterr().out


def _run_upgraded(capsys, tmp: Path) -> list[dict]:
    code, out = _cli(capsys, "run", str(tmp / "old.lars"), "--input", str(tmp / "in.jsonl"),
                     "--upgrade", f"{AT}={tmp / 'new.lars'}")
    assert code == 0
    return [json.loads(line) for line in out.splitlines()]


def _holds(lines: list[dict], t: int) -> int:
    """How often q(a) holds at t by the lines (read here: point or interval lines)."""
    total = 0
    for line in lines:
        if line["args"] != ["a"]:
            continue
        if "t" in line:
            inside = line["t"] == t
        else:
            lo, hi = line["interval"][1:-1].split(",")
            inside = int(lo) <= t and (hi == "inf" or t < int(hi) + (line["interval"][-1] == "]"))
        total += line.get("diff", 1) if inside else 0
    return total


def test_why_on_an_upgraded_lars_fleet_uses_the_program_in_force(fleet, capsys):
    assert _holds(_run_upgraded(capsys, fleet), 7) == 1  # the new program's answer (the old one's is not)
    code, out = _cli(capsys, "explain", "--why", "q(a)@7", "--as", "json", "--state-dir", str(fleet))
    assert code == 0
    got = json.loads(out)
    assert got["rule"] == {"file": "new.lars", "line": 1, "text": "q(X) :- p(X) [2]."}
    assert [p["source"] for p in got["premises"][0]["premises"]] == ["chronolog.facts[0] offset 3"]
    # before the upgrade's time the program the fleet started with is in force
    code, out = _cli(capsys, "explain", "--why-not", "q(a)@3", "--as", "json", "--state-dir", str(fleet))
    assert code == 0 and json.loads(out)["why_not"][0]["rule"]["file"].endswith("old.lars")
    assert _holds(_run_upgraded(capsys, fleet), 3) == 0


def test_a_malformed_upgrade_record_on_the_topic_is_passed_over(tmp_path, monkeypatch, capsys):
    """A record that starts as an upgrade request but is none (the fleet refused it) does not
    stop an explanation: --why, --why-not and --changes read past it, as the services did."""
    events = [*EVENTS[:-1], {"t": 9}]
    _topics(tmp_path, monkeypatch, OLD, NEW, events, AT)
    records = cli_explain._fleet_input(None, "q(a)@7")[3]
    records.insert(2, ("chronolog.facts", 0, 99, UPGRADE_KEY + b"not json", 0.0))
    fleet_input = cli_explain._fleet_input
    monkeypatch.setattr(cli_explain, "_fleet_input",
                        lambda args, text: (*fleet_input(args, text)[:3], records, *fleet_input(args, text)[4:]))
    code, out = _cli(capsys, "explain", "--why", "q(a)@7", "--as", "json", "--state-dir", str(tmp_path))
    assert code == 0 and json.loads(out)["rule"]["file"] == "new.lars"
    code, out = _cli(capsys, "explain", "--changes", "q(a)@5", "--as", "json", "--state-dir", str(tmp_path))
    assert code == 0 and any(c["kind"] == "upgrade" for c in json.loads(out)["changes"])


def test_changes_on_an_upgraded_lars_fleet_name_the_upgrade(fleet, capsys):
    """q(a) at 5 holds by the new program only: the upgrade's restatement gives it (at 7 the old
    program's open line, written before the upgrade, already says what the new one does: the
    restatement writes only the points where the two differ)."""
    code, out = _cli(capsys, "explain", "--changes", "q(a)@5", "--as", "json", "--state-dir", str(fleet))
    assert code == 0
    got = json.loads(out)["changes"]
    assert sum(c["answer"].get("diff", 1) for c in got) == _holds(_run_upgraded(capsys, fleet), 5) == 1
    upgrades = [c for c in got if c["kind"] == "upgrade"]
    assert upgrades and all(c["upgrade"].startswith("the upgrade to program version ") and "from T=5" in c["upgrade"]
                            and "chronolog.facts[0] offset 5" in c["upgrade"] for c in upgrades)


def test_an_atom_a_later_version_dates_back_is_explained_by_it_on_a_fleet(tmp_path, monkeypatch, capsys):
    """P0, P1 (an @-head) from 3, P2 from 6, each request on two input partitions: P1's
    evaluation at 3 dates r(a)@1 (an answer of run --upgrade), its evaluation at 7 would date
    r(d)@5 but 7 is P2's (not an answer), as embedded (test_explain_upgrade.py)."""
    texts = ["q(X) :- p(X).\n", "r(X) at U :- p(X) at U [2], c.\n", "q(X) :- p(X).\n"]
    events = [{"t": 0}, {"t": 1, "pred": "p", "args": ["a"]}, {"t": 3, "pred": "c", "args": []},
              {"t": 5, "pred": "p", "args": ["d"]}, {"t": 7, "pred": "c", "args": []}, {"t": 8}]
    (tmp_path / "p0.lars").write_text(texts[0])
    records = [("chronolog.facts", 0, k, json.dumps(e).encode(), 0.0) for k, e in enumerate(events)]
    outcomes = {}
    for i, at in ((1, 3), (2, 6)):
        request = UpgradeRequest(f"r{i}", version_id(((f"p{i}.lars", texts[i]),)), "lars", str(at),
                                 ((f"p{i}.lars", texts[i]),))
        records += [("chronolog.facts", part, 10 + i, request.encode(), 0.0) for part in (0, 1)]
        outcomes[f"r{i}"] = {"upgrade": f"r{i}", "service": "chain", "at": str(at), "version": request.version}

    def fleet_input(args, text):  # noqa: ANN001, ANN202
        program = load_program([str(tmp_path / "p0.lars")], None)
        return program, lookup(program.dialect), parse_query(text, True), list(records), outcomes, None, None, False

    monkeypatch.setattr(cli_explain, "_fleet_input", fleet_input)
    code, out = _cli(capsys, "explain", "--why", "r(a)@1", "--as", "json")
    assert code == 0 and json.loads(out)["rule"]["file"] == "p1.lars", out
    code, _ = _cli(capsys, "explain", "--why", "r(d)@5")
    assert code == 1
    code, out = _cli(capsys, "explain", "--why", "q(a)@1", "--as", "json")
    assert code == 0 and json.loads(out)["rule"]["file"].endswith("p0.lars"), out


def test_an_at_head_dated_before_t_on_a_fleet_is_explained_with_the_version_that_derived_it(tmp_path, monkeypatch,
                                                                                           capsys):
    """The hand case of tests/runtime/test_explain_upgrade_at.py on a fleet upgraded from 4:
    late(x) at 3 is the new version's (its evaluation of 5, b(x) at 5), late(y) at 3 only the
    old version's evaluation of 6 would derive (not an answer)."""
    tmp = _topics(tmp_path, monkeypatch, LARS_DATED_OLD, LARS_DATED_NEW, LARS_DATED_EVENTS, 4)
    code, out = _cli(capsys, "run", str(tmp / "old.lars"), "--input", str(tmp / "in.jsonl"),
                     "--upgrade", f"4={tmp / 'new.lars'}")
    assert code == 0 and [json.loads(x) for x in out.splitlines() if '"late"' in x and '"x"' in x] == \
        [{"t": 3, "pred": "late", "args": ["x"]}]
    code, out = _cli(capsys, "explain", "--why", "late(x)@3", "--as", "json", "--state-dir", str(tmp))
    assert code == 0
    got = json.loads(out)
    assert got["text"] == "late(x) at 3 (derived by the evaluation of 5)" and got["rule"]["file"] == "new.lars"
    assert sorted(n["source"] for n in _nodes(got) if n["kind"] == "event") == \
        ["chronolog.facts[0] offset 2", "chronolog.facts[0] offset 5"]
    code, _ = _cli(capsys, "explain", "--why", "late(y)@3", "--state-dir", str(tmp))
    assert code == 1
    code, out = _cli(capsys, "explain", "--why-not", "late(y)@3", "--as", "json", "--state-dir", str(tmp))
    assert code == 0
    assert [e["rule"]["file"] for e in json.loads(out)["why_not"]] == [str(tmp / "old.lars"), "new.lars"]
    code, out = _cli(capsys, "explain", "--changes", "late(x)@3", "--as", "json", "--state-dir", str(tmp))
    got = json.loads(out)["changes"]
    # the old version's evaluation of 6 wrote it; the upgrade (its request after 8) takes that
    # evaluation's atoms back and the new version's evaluation of 5 answers it: it changes
    # hands in one restatement, so no line is written for it (no -1 and +1 that cancel)
    assert code == 0 and [(c["kind"], c["answer"].get("diff", 1)) for c in got] == [("advance", 1)]
    assert [(c["pred"], c["args"]) for c in got[0]["causes"]] == [("a", ["x"]), ("a", ["y"])]


def _nodes(node: dict) -> list[dict]:
    return [node, *(n for child in node.get("premises", []) for n in _nodes(child))]
