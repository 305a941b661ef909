"""The partition key ``chronolog check``/``topology`` print for an event description: found
where every rule relates one key (ctm: the vehicle), refused with the reason otherwise; and the
key is right: the input split by it, each part run alone, gives together the whole run's answer."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest
from rtec_expected import DATA, rtec_meaning
from test_rtec import program

from chronolog.cli.main import main
from chronolog.dialects.rtec.partition import describe_key, partition_key

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "rtec"
needs_data = pytest.mark.skipif(not SHARED.is_dir(), reason="the shared RTEC data is not beside the repository")

KEYED = """
initiatedAt(on(X)=true, T) :- happensAt(switch_on(X), T).
terminatedAt(on(X)=true, T) :- happensAt(switch_off(X), T).
holdsFor(dark(X)=true, I) :- holdsFor(on(X)=true, A), complement_all([A], I).
dynamicDomain(lamp(_)).
grounding(switch_on(X)) :- lamp(X). grounding(switch_off(X)) :- lamp(X).
grounding(on(X)=true) :- lamp(X). grounding(dark(X)=true) :- lamp(X).
"""


def test_a_keyed_event_description() -> None:
    key, why = partition_key(program(KEYED))
    assert why == "" and key == {("on", 1): 0, ("dark", 1): 0, ("switch_on", 1): 0, ("switch_off", 1): 0}


@pytest.mark.parametrize("text, reason", [
    # the instances come from program facts: every partition would answer dark(a), dark(b)
    (KEYED.replace("dynamicDomain(lamp(_)).", "lamp(a). lamp(b)."), "grounding/1 of"),
    # a rule relating two keys
    (KEYED + "initiatedAt(pair(X,Y)=true, T) :- happensAt(switch_on(X), T), holdsAt(on(Y)=true, T).\n"
             "grounding(pair(X,Y)=true) :- lamp(X), lamp(Y).\n", "a rule relates two keys"),
    # counting across instances
    (KEYED + "initiatedAt(busy(X)=true, T) :- happensAt(switch_on(X), T), "
             "findall(Y, happensAt(switch_on(Y), T), L), length(L, N), N > 1.\n"
             "grounding(busy(X)=true) :- lamp(X).\n", "findall/3"),
    # an entity without arguments
    (KEYED + "initiatedAt(any=true, T) :- happensAt(switch_on(_), T).\ngrounding(any=true).\n", "no arguments"),
])
def test_no_key_and_why(text: str, reason: str) -> None:
    line = describe_key(program(text))
    assert line.startswith("partition key: none (") and reason in line


@needs_data
def test_check_prints_the_key_of_ctm_and_why_none_for_caviar_and_voting(capsys) -> None:
    files = {"ctm": ["rules", "vehicles"], "caviar": ["rules", "pre-processing-portable"],
             "voting": ["rules", "voting_static_generator"]}
    got = {}
    for app, names in files.items():
        assert main(["check", *(str(SHARED / app / f"{n}.prolog") for n in names + ["settings"])]) == 0
        got[app] = [x for x in capsys.readouterr().out.splitlines() if x.startswith("partition key")][0]
    assert "stop_enter/4 argument 1" in got["ctm"] and "punctuality/2 argument 1" in got["ctm"]
    assert "a rule relates two keys" in got["caviar"]
    assert "findall/3" in got["voting"]
    assert main(["topology", *(str(SHARED / "ctm" / f"{n}.prolog") for n in ["rules", "vehicles", "settings"])]) == 0
    assert "partition key: abrupt_acceleration/2 argument 1" in capsys.readouterr().out


@needs_data
def test_ctm_split_by_its_key_gives_the_whole_answer(tmp_path: Path) -> None:
    files = [str(SHARED / "ctm" / f"{n}.prolog") for n in ("rules", "vehicles", "settings")]
    rows = (DATA / "ctm" / "stream-cut10.jsonl").read_text().splitlines()
    parts: dict[int, list[str]] = {}
    for line in rows:
        vehicle = json.loads(line)["args"][0]  # argument 1 of every input entity: the key
        parts.setdefault(zlib.crc32(str(vehicle).encode()) % 3, []).append(line)
    assert len(parts) == 3

    def run(lines: list[str], name: str) -> list[str]:
        (tmp_path / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
        out = tmp_path / f"{name}.out"
        assert main(["run", *files, "--input", str(tmp_path / f"{name}.jsonl"), "--output", str(out)]) == 0
        return out.read_text().splitlines()

    whole = rtec_meaning(run(rows, "whole"), "ctm")
    together = [line for k, lines in parts.items() for line in run(lines, f"part{k}")]
    assert rtec_meaning(together, "ctm") == whole
