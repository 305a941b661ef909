"""``chronolog backfill`` and ``archive`` user errors that are caught before Spark or Kafka start."""

from __future__ import annotations

import pytest

from chronolog.cli.main import main


@pytest.fixture
def files(tmp_path):
    (tmp_path / "p.lars").write_text("q(X) :- p(X) [2].\n")
    (tmp_path / "h.jsonl").write_text('{"t": 0, "pred": "p", "args": ["a"]}\n')
    return tmp_path


@pytest.mark.parametrize("extra, message", [
    (["--from", "5", "--to", "2"], "error: --from 5 is after --to 2"),
    (["--from", "0", "--to", "2", "--segment", "0"], "error: --segment must be positive"),
    (["--from", "0", "--to", "2", "--publish"], "error: --publish needs --bootstrap"),
    (["--from", "0", "--to", "2", "--answers", "missing.jsonl"], "missing.jsonl: error: no such file or directory"),
    (["--from", "0", "--to", "2", "--answers", "kafka"], "error: reading chronolog.answers from Kafka needs --bootstrap"),
    (["--from", "1/2", "--to", "2"], "error: --from 1/2 is not an integer time point (lars time is discrete)"),
    (["--from", "0", "--to", "2", "--segment", "2.5"], "error: --segment 5/2 is not an integer time point"),
])
def test_backfill_option_errors(files, monkeypatch, capsys, extra, message):
    monkeypatch.chdir(files)
    assert main(["backfill", "p.lars", "--history", "h.jsonl", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_backfill_program_and_output_errors(files, monkeypatch, capsys):
    monkeypatch.chdir(files)
    (files / "bad.lars").write_text("q(X) :- p(X) [2.\n")
    assert main(["backfill", "bad.lars", "--history", "h.jsonl", "--from", "0", "--to", "1"]) == 2
    assert capsys.readouterr().err.startswith("bad.lars:1:")
    assert main(["backfill", "p.lars", "--history", "h.jsonl", "--from", "0", "--to", "1", "--output", "h.jsonl"]) == 2
    assert "h.jsonl: error: cannot write the output: it is an input file" in capsys.readouterr().err
    assert main(["backfill", "p.lars", "--history", "nope", "--from", "0", "--to", "1"]) == 2
    assert "nope: error: no such file or directory" in capsys.readouterr().err


@pytest.mark.parametrize("program, extra", [
    ("heat.mtl", ["--mode", "tms"]),
    ("heat.mtl", ["--seed", "3"]),
    ("doors.prolog", ["--mode", "oneshot"]),
])
def test_lars_run_options_are_refused_for_the_other_dialects(files, monkeypatch, capsys, program, extra):
    """--mode and --seed are LARS's run options (the evaluator the backfill replays is
    run's): another dialect's backfill refuses them with a reason before Spark starts."""
    monkeypatch.chdir(files)
    (files / "heat.mtl").write_text("Alarm(X):-Boxminus[0,2]Hot(X)\n")
    (files / "doors.prolog").write_text("initiatedAt(open(D)=true, T) :- happensAt(push(D), T).\n")
    assert main(["backfill", program, "--history", "h.jsonl", "--from", "0", "--to", "2", *extra]) == 2
    err = capsys.readouterr().err
    assert "is for LARS programs" in err and "Traceback" not in err


def test_backfill_times_that_are_not_numbers(files, monkeypatch, capsys):
    monkeypatch.chdir(files)
    with pytest.raises(SystemExit) as exc:
        main(["backfill", "p.lars", "--history", "h.jsonl", "--from", "x", "--to", "2"])
    assert exc.value.code == 2
    assert "argument --from: 'x' is not a time (an integer, or a rational such as 7/2)" in capsys.readouterr().err


def test_a_lars_stream_evaluator_answers_as_chronolog_run():
    """Every dialect has a registry row, LARS too: its stream evaluator (``Dialect.stream``,
    what the fleet's evaluator stage would run) gives the lines ``chronolog run`` prints."""
    import io

    from chronolog.core.events import Event
    from chronolog.dialects.load import program_from_sources
    from chronolog.dialects.registry import lookup
    from chronolog.runtime.embedded import run_embedded

    program = program_from_sources([("p.lars", "q(X) :- p(X) [2].")], "lars")
    events = [Event(0, "p", ("a",)), Event(3, "p", ("b",)), Event(1, "p", ("c",)), Event(6)]
    want = io.StringIO()
    run_embedded(program, events, want, warn=lambda m: None)
    evaluator = lookup("lars").stream(program)
    got, latest = b"", None
    for ev in events:
        if latest is not None and ev.t > latest:
            got += evaluator.advance(ev.t - 1).lines()  # a stage evaluates up to what every input reached
        latest = ev.t if latest is None or ev.t > latest else latest
        evaluator.push(ev)
    got += evaluator.finish().lines()
    assert got.decode() == want.getvalue()


def test_an_unknown_dialect_is_a_program_error_naming_the_choices():
    from chronolog.core.errors import ProgramError
    from chronolog.dialects.registry import lookup

    with pytest.raises(ProgramError, match="unknown dialect 'prolog' \\(choose from lars, laser, mtl, rtec\\)"):
        lookup("prolog")


def test_archive_needs_a_topic(files, capsys):
    assert main(["archive", "--bootstrap", "127.0.0.1:1", "--out", str(files / "a"), "--topics", ","]) == 2
    assert "--topics names no topic" in capsys.readouterr().err


def test_corrections_as_parquet_keep_every_line(tmp_path):
    import orjson
    import pyarrow.parquet as pq

    from chronolog.cli.backfill import write_parquet

    lines = [
        {"interval": "[3,7]", "pred": "hot", "args": ["s1"]},
        {"t": 9, "pred": "low", "args": ["a", 2], "diff": -1},
        {"interval": "[4,inf)", "pred": "z", "args": [], "diff": -1},
    ]
    path = tmp_path / "fix.parquet"
    write_parquet(lines, str(path))
    back = []
    for row in pq.read_table(path).to_pylist():
        rec = {"t": row["t"]} if row["t"] is not None else {"interval": row["interval"]}
        rec.update(pred=row["pred"], args=orjson.loads(row["args"]))
        if row["diff"] != 1:
            rec["diff"] = row["diff"]
        back.append(rec)
    assert back == lines
