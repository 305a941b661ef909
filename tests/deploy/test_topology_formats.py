"""Deployments follow the program: `chronolog topology --format compose|helm-values`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
TRAFFIC = ROOT / "src" / "chronolog" / "examples" / "traffic.lars"
THREE = """\
a(X) :- p(X) [2].
b(X) :- p(X) [3], not a(X).
c(X) :- p(X) [2], not b(X).
"""


def topology(*args: str) -> str:
    got = subprocess.run([sys.executable, "-m", "chronolog", "topology", *args], capture_output=True, text=True,
                         timeout=60)
    assert got.returncode == 0, got.stderr
    return got.stdout


def test_checked_in_compose_file_is_the_generated_one():
    want = topology(str(TRAFFIC.relative_to(ROOT)), "--format", "compose", "--mount", "./src/chronolog/examples")
    assert (ROOT / "docker-compose.yml").read_text() == want, (
        "docker-compose.yml is stale: chronolog topology src/chronolog/examples/traffic.lars --format compose "
        "--mount ./src/chronolog/examples > docker-compose.yml")


def test_compose_services_follow_the_strata(tmp_path):
    prog = tmp_path / "three.lars"
    prog.write_text(THREE)
    doc = yaml.safe_load(topology(str(prog), "--format", "compose"))
    services = doc["services"]
    reasoners = sorted(s for s in services if s.startswith("reasoner-"))
    assert reasoners == ["reasoner-1", "reasoner-2", "reasoner-3"]
    assert services["reasoner-3"]["command"] == [
        "service", "reasoner", "/programs/three.lars", "--stratum", "3", "--bootstrap", "kafka:9092"]
    assert {f"{s}-state" for s in reasoners} <= set(doc["volumes"])
    assert services["create-topics"]["command"][:2] == ["create-topics", "/programs/three.lars"]


def test_helm_values_carry_the_program_and_its_strata(tmp_path):
    from helm_python import Chart

    prog = tmp_path / "three.lars"
    prog.write_text(THREE)
    values = yaml.safe_load(topology(str(prog), "--format", "helm-values", "--partitions", "2"))
    assert values["strata"] == 3 and values["partitions"] == 2 and values["layout"] == "perStratum"
    assert values["program"]["files"] == {"traffic.lars": None, "three.lars": THREE}
    with Chart.load(ROOT / "helm" / "chronolog") as chart:
        rendered = chart.render(values, name="demo", namespace="ns")
    docs = [d for path, text in rendered.items() if not path.endswith("NOTES.txt")
            for d in yaml.safe_load_all(text) if d]
    sets = sorted(d["metadata"]["name"] for d in docs if d["kind"] == "StatefulSet")
    assert [n for n in sets if "reasoner" in n] == [f"demo-chronolog-reasoner-{k}" for k in (1, 2, 3)]


# a program that is not stratified (two answer sets at every point): --mode and --seed are its options
CHOICE = """\
a(X) :- p(X) [2], not b(X).
b(X) :- p(X) [2], not a(X).
"""
OPTIONS = ["--mode", "oneshot", "--seed", "3", "--mark-no-answer-set"]


def started(command: list[str], files: dict[str, Path]) -> tuple[object, object]:
    """The parsed arguments and the stage of the service ``command`` starts (deployed program
    paths mapped to ``files``; nothing connects)."""
    from chronolog.cli.fleet import service_config
    from chronolog.cli.main import build_parser
    from chronolog.runtime.fleet.config import make_stage

    args = build_parser().parse_args([str(files.get(w, w)) for w in command])
    return args, make_stage(service_config(args))


def test_compose_services_take_ups_evaluation_options(tmp_path):
    prog = tmp_path / "choice.lars"
    prog.write_text(CHOICE)
    files = {"/programs/choice.lars": prog}
    services = yaml.safe_load(topology(str(prog), "--format", "compose", *OPTIONS))["services"]
    fleet = {name: s["command"] for name, s in services.items() if s.get("command", [None])[0] == "service"}
    assert sorted(fleet) == ["grounding", "ingest", "output", "reasoner-1"]
    for name, command in fleet.items():
        args, stage = started(command, files)
        assert (args.mode, args.seed, args.mark_no_answer_set) == ("oneshot", 3, True), name
    _, reasoner = started(fleet["reasoner-1"], files)
    assert (reasoner.reasoner.plan.solver, reasoner.reasoner.plan.seed) == ("oneshot", 3)
    assert "--mode" not in services["create-topics"]["command"]  # (create-topics takes no evaluation options)
    # without them: the defaults, as `chronolog up` without them
    plain = yaml.safe_load(topology(str(prog), "--format", "compose"))["services"]
    _, reasoner = started(plain["reasoner-1"]["command"], files)
    assert (reasoner.reasoner.plan.solver, reasoner.reasoner.plan.seed) == ("tms", 0)


def test_helm_values_carry_ups_evaluation_options(tmp_path):
    prog = tmp_path / "choice.lars"
    prog.write_text(CHOICE)
    values = yaml.safe_load(topology(str(prog), "--format", "helm-values", *OPTIONS))
    assert (values["mode"], values["seed"], values["markNoAnswerSet"]) == ("oneshot", 3, True)
    plain = yaml.safe_load(topology(str(prog), "--format", "helm-values"))
    assert not {"mode", "seed", "markNoAnswerSet"} & set(plain)


def test_topology_refuses_the_options_up_refuses(tmp_path):
    prog = tmp_path / "q.mtl"
    prog.write_text("Q(X):-Diamondminus[0,3]P(X)\n")
    for options in (["--mode", "oneshot"], ["--seed", "3"]):
        _refused_as_up(tmp_path, prog, options, "is for LARS")


def _refused_as_up(tmp_path, prog, options, says):
    """topology (helm-values and text) refuses ``options`` as ``up`` does: exit code and stderr."""
    up = subprocess.run([sys.executable, "-m", "chronolog", "up", str(prog), *options, "--bootstrap",
                         "127.0.0.1:1", "--state-dir", str(tmp_path / "state")],
                        capture_output=True, text=True, timeout=60)
    for fmt in ("helm-values", "text"):
        got = subprocess.run([sys.executable, "-m", "chronolog", "topology", str(prog), "--format", fmt, *options],
                             capture_output=True, text=True, timeout=60)
        assert got.returncode == up.returncode != 0 and got.stdout == "", options
        assert got.stderr == up.stderr and says in got.stderr, (options, got.stderr)


# an RTEC program: --window and --step (its windowed mode) are its options
RTEC = """\
initiatedAt(open(D)=true, T) :- happensAt(opened(D), T).
terminatedAt(open(D)=true, T) :- happensAt(closed(D), T).
door(d1).
grounding(open(D)=true) :- door(D).
"""


def test_helm_values_carry_ups_window_and_step(tmp_path):
    prog = tmp_path / "doors.prolog"
    prog.write_text(RTEC)
    text = topology(str(prog), "--format", "helm-values", "--window", "10", "--step", "5")
    values = yaml.safe_load(text)
    assert (values["window"], values["step"]) == (10, 5)
    assert text.splitlines()[1].endswith(" --window 10 --step 5")  # (the command the file came from)
    plain = topology(str(prog), "--format", "helm-values")
    assert not {"window", "step"} & set(yaml.safe_load(plain))
    assert plain == topology(str(prog), "--format", "helm-values", "--seed", "0")  # (no option: no change)


def test_topology_refuses_window_and_step_as_up_does(tmp_path):
    rtec = tmp_path / "doors.prolog"
    rtec.write_text(RTEC)
    lars = tmp_path / "choice.lars"
    lars.write_text(CHOICE)
    for prog, options, says in ((lars, ["--window", "10"], "is for RTEC"), (rtec, ["--step", "5"], "goes with --window"),
                                (rtec, ["--window", "0"], "must be positive")):
        _refused_as_up(tmp_path, prog, options, says)
