"""Input readers (io/formats.py): valid events, and every bad line with its exact location."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chronolog.core.errors import InputError
from chronolog.core.events import Event
from chronolog.core.source import Loc
from chronolog.io.formats import EventReader, read_events


def events(text: str, fmt: str = "jsonl", **kw) -> list[Event]:
    return list(read_events(io.StringIO(text), "in.jsonl", fmt, **kw))


def error(text: str, fmt: str = "jsonl") -> InputError:
    with pytest.raises(InputError) as info:
        events(text, fmt)
    return info.value


def plain(evs: list[Event]) -> list[tuple]:
    return [(e.t, e.pred, e.args, e.retract) for e in evs]


# ---------------------------------------------------------------- JSONL: valid


def test_facts_time_advances_and_retractions():
    text = (
        '{"t": 5, "pred": "p", "args": ["a", 3]}\n'
        '{"t": 9}\n'
        '{"t": 5, "pred": "p", "args": ["a", 3], "op": "retract"}\n'
        '{"t": 10, "pred": "q"}\n'
        '{"t": 11, "pred": "q", "args": [], "op": "assert"}\n'
    )
    assert plain(events(text)) == [
        (5, "p", ("a", 3), False),
        (9, None, (), False),
        (5, "p", ("a", 3), True),
        (10, "q", (), False),
        (11, "q", (), False),
    ]


def test_strings_and_integers_stay_apart():
    (ev,) = events('{"t": 0, "pred": "p", "args": ["3", 3, -7, "", "ä b"]}\n')
    assert ev.args == ("3", 3, -7, "", "ä b")
    assert [type(a) for a in ev.args] == [str, int, int, str, str]


def test_blank_lines_crlf_bom_and_whitespace():
    text = '\ufeff{"t": 0, "pred": "p"}\r\n\n   \n  {"t":1}  \r\n{ "t" : 2 , "pred" : "q" , "args" : [ 1 ] }'
    assert plain(events(text)) == [(0, "p", (), False), (1, None, (), False), (2, "q", (1,), False)]


def test_time_advance_tolerates_empty_args_and_null_pred():
    assert plain(events('{"t": 3, "args": []}\n{"t": 4, "pred": null}\n')) == [(3, None, (), False), (4, None, (), False)]


def test_any_non_empty_predicate_name_and_negative_time():
    assert plain(events('{"t": -2, "pred": "Pos-1/x"}\n')) == [(-2, "Pos-1/x", (), False)]


def test_retractions_and_delayed_events_carry_their_line():
    text = '{"t": 4, "pred": "p"}\n{"t": 5, "pred": "p"}\n{"t": 2, "pred": "p"}\n{"t": 5, "pred": "p", "op": "retract"}\n'
    evs = events(text)
    assert [e.loc for e in evs] == [None, None, Loc("in.jsonl", 3, 1), Loc("in.jsonl", 4, 1)]


def test_reader_counts_lines():
    reader = EventReader(io.StringIO('{"t": 0}\n\n{"t": 1}\n'), "in.jsonl")
    assert len(list(reader)) == 2
    assert reader.lines == 3 and reader.skipped == 0


# ---------------------------------------------------------------- JSONL: invalid, exact locations


@pytest.mark.parametrize(
    "line,col,message",
    [
        ('{"t": 1, "pred": "p", x}', 23, "invalid JSON"),
        ("not json", 1, "invalid JSON"),
        ('{"t": 1,}', 8, "invalid JSON"),
        ("# a comment", 1, "comments are not allowed"),
        ("[1, 2]", 1, "must be a JSON object, not an array"),
        ('"p"', 1, "must be a JSON object, not a string"),
        ('{"pred": "p"}', 1, 'missing time "t"'),
        ('{"t": 5.0, "pred": "p"}', 7, '"t" must be an integer time point, not 5.0'),
        ('{"t": true}', 7, '"t" must be an integer time point, not true'),
        ('{"t": "5", "pred": "p"}', 7, 'not "5"'),
        ('{"t": null}', 7, "not null"),
        ('{"pred": "t", "t": "x"}', 20, '"t" must be an integer'),
        ('{"t": 99999999999999999999999}', 7, "out of range"),
        ('{"t": 1, "pred": ""}', 18, '"pred" must be a non-empty string'),
        ('{"t": 1, "pred": 7}', 18, '"pred" must be a non-empty string, not 7'),
        ('{"t": 1, "pred": "p", "args": "a"}', 31, '"args" must be a list'),
        ('{"t": 1, "pred": "p", "args": null}', 31, '"args" must be a list'),
        ('{"t": 1, "pred": "p", "args": ["a", 1.5]}', 37, "argument 2 must be a string or an integer, not 1.5"),
        ('{"t": 1, "pred": "p", "args": [true]}', 32, "argument 1 must be a string or an integer, not true"),
        ('{"t": 1, "pred": "p", "args": [null]}', 32, "not null"),
        ('{"t": 1, "pred": "p", "args": ["a", ["b", 1]]}', 37, 'not ["b", 1]'),
        ('{"t": 1, "pred": "p", "args": [{"x": 1}]}', 32, 'not {"x": 1}'),
        ('{"t": 1, "pred": "p", "args": [3.0]}', 32, "not 3.0"),
        ('{"t": 1, "pred": "p", "args": [1e400]}', 32, "invalid JSON"),
        ('{"t": 1, "pred": "p", "arg": []}', 23, "unknown key \"arg\""),
        ('{"t": 1, "pred": "p", "diff": 1}', 23, "unknown key \"diff\""),
        ('{"interval": "[2,7)", "pred": "Pos", "args": ["v1"]}', 14, "interval facts need the mtl dialect"),
        ('{"t": 1, "pred": "p", "op": "delete"}', 29, '"op" must be "retract" or "assert", not "delete"'),
        ('{"t": 1, "op": "retract"}', 10, 'a retraction needs "pred"'),
        ('{"t": 1, "args": ["a"]}', 10, 'an event with "args" needs "pred"'),
        ('   {"t": 2.5}', 10, '"t" must be an integer'),
        ('{"t": 1, "pred": "ä\\"x", "args": [false]}', 35, "argument 1"),
    ],
)
def test_bad_jsonl_lines(line, col, message):
    err = error('{"t": 0}\n' + line + "\n")
    assert err.loc == Loc("in.jsonl", 2, col), str(err)
    assert message in err.message
    assert str(err).startswith(f"in.jsonl:2:{col}: error: ")


def test_repeated_key_points_at_the_value_orjson_keeps():
    err = error('{"t": 1, "t": 2.5}\n')
    assert err.loc.col == 15


def test_undecodable_bytes_are_reported_at_their_column():
    # The CLI reads input with errors="surrogateescape": a bad byte reaches the reader as a surrogate.
    raw = b'{"t": 1, "pred": "p", "args": ["\xff"]}\n'.decode("utf-8", errors="surrogateescape")
    err = error(raw)
    assert err.loc == Loc("in.jsonl", 1, 33) and "not valid UTF-8" in err.message


def test_unsupported_formats_are_rejected_clearly():
    for fmt in ("meteor", "rtec"):
        with pytest.raises(InputError, match=f"input format '{fmt}' is not supported yet"):
            EventReader(io.StringIO(""), "x", fmt)
    with pytest.raises(InputError, match="unknown input format 'csv'"):
        EventReader(io.StringIO(""), "x", "csv")


# ---------------------------------------------------------------- skip mode


def test_skip_mode_reports_counts_and_continues():
    text = '{"t": 0, "pred": "p"}\n{"t": "x"}\nnope\n\n{"t": 2, "pred": "q", "args": [1]}\n{"t": 3, "pred": "r", "bad": 1}\n'
    reports: list[str] = []
    reader = EventReader(io.StringIO(text), "in.jsonl", on_error="skip", report=reports.append)
    assert plain(list(reader)) == [(0, "p", (), False), (2, "q", (1,), False)]
    assert reader.skipped == 3 and reader.lines == 6
    assert reports == [
        'in.jsonl:2:7: skipped: "t" must be an integer time point, not "x"',
        "in.jsonl:3:1: skipped: invalid JSON: invalid literal, expected 'null'",
        'in.jsonl:6:23: skipped: unknown key "bad" (allowed: t, pred, args, op)',
    ]


def test_skip_mode_without_report_still_counts():
    reader = EventReader(io.StringIO("x\ny\n5 p\n"), "in.txt", "lines", on_error="skip")
    assert plain(list(reader)) == [(5, "p", (), False)]
    assert reader.skipped == 2


def test_fail_mode_stops_at_the_first_bad_line():
    reader = EventReader(io.StringIO('{"t": 0}\n{"t": 1}\nbad\n{"t": 3}\n'), "in.jsonl")
    seen = []
    with pytest.raises(InputError) as info:
        for ev in reader:
            seen.append(ev.t)
    assert seen == [0, 1] and info.value.loc == Loc("in.jsonl", 3, 1) and reader.lines == 3


# ---------------------------------------------------------------- lines format


def test_lines_format():
    text = "# header\n0 p a 3\n\n1\n  2 speed a1 -20 x7 07\n3 q\n"
    assert plain(events(text, "lines")) == [
        (0, "p", ("a", 3), False),
        (1, None, (), False),
        (2, "speed", ("a1", -20, "x7", 7), False),
        (3, "q", (), False),
    ]


def test_lines_format_comment_after_a_fact_or_a_time():
    # CONTRACT §1: "#" comments; one after a fact is not three more arguments
    text = "0 p a # seen at the gate\n1 # a tick\n2 q b#c #\n"
    assert plain(events(text, "lines")) == [(0, "p", ("a",), False), (1, None, (), False), (2, "q", ("b#c",), False)]


def test_lines_format_only_plain_ascii_integers_become_ints():
    (ev,) = events("0 p +3 1_0 \u0663 - -x 12\n", "lines")
    assert ev.args == ("+3", "1_0", "\u0663", "-", "-x", 12)


@pytest.mark.parametrize(
    "line,col,message",
    [
        ("x p a", 1, "expected an integer time point, got 'x'"),
        ("   1.5 p", 4, "got '1.5'"),
        ('{"t": 0}', 1, "use --format jsonl"),
        ("+1 p", 1, "got '+1'"),
    ],
)
def test_bad_lines(line, col, message):
    err = error("0 p\n" + line + "\n", "lines")
    assert err.loc == Loc("in.jsonl", 2, col) and message in err.message


def test_lines_delayed_events_carry_their_line():
    evs = events("3 p\n1 p\n", "lines")
    assert [e.loc for e in evs] == [None, Loc("in.jsonl", 2, 1)]


# ---------------------------------------------------------------- round trip (property)

_ints = st.integers(min_value=-(2**63), max_value=2**63 - 1)
_event = st.tuples(
    _ints,
    st.one_of(st.none(), st.text(min_size=1, max_size=8)),
    st.lists(st.one_of(_ints, st.text(max_size=6)), max_size=4),
    st.booleans(),
)


@given(st.lists(_event, max_size=20), st.sampled_from([(",", ":"), (", ", ": ")]))
def test_jsonl_round_trip(evs, separators):
    lines = []
    expected = []
    for t, pred, args, retract in evs:
        if pred is None:
            lines.append(json.dumps({"t": t}, separators=separators))
            expected.append((t, None, (), False))
            continue
        rec = {"t": t, "pred": pred, "args": args}
        if retract:
            rec["op"] = "retract"
        lines.append(json.dumps(rec, separators=separators, ensure_ascii=False))
        expected.append((t, pred, tuple(args), retract))
    assert plain(events("\n".join(lines) + "\n")) == expected


# ---------------------------------------------------------------- batch path = per-line path (property)

from chronolog.io import formats, readahead  # noqa: E402
from chronolog.io.batches import FactBatch, flatten  # noqa: E402

_good_line = st.builds(
    lambda t, pred, args, op: json.dumps(
        {"t": t, **({} if pred is None else {"pred": pred, "args": args}), **({"op": op} if op and pred else {})},
        ensure_ascii=False,
    ),
    st.integers(-3, 8),
    st.one_of(st.none(), st.sampled_from(["p", "q", "ä"])),
    st.lists(st.one_of(st.integers(-2, 2), st.sampled_from(["a", "b", "", "\u2028"])), max_size=2),
    st.sampled_from([None, None, None, "assert", "retract"]),
)
_odd_line = st.sampled_from([
    "", "   ", "not json", '{"t": 1.0}', '{"t": true}', '{"t": 18446744073709551615, "pred": "p"}',
    '{"t": 99999999999999999999}', '{"t": 1, "pred": ""}', '{"t": 1, "pred": "p", "args": [1.5]}',
    '{"t": 1, "x": 2}', '{"t": 1, "args": ["a"]}', '{"t": 1, "op": "retract"}', '{"t": 1, "op": null}',
    '{"t": 2, "pred": null, "args": []}', '{"t": 1, "t": 3, "pred": "p"}', '\ufeff{"t": 0}',
    '{"t": 1, "pred": "p", "args": ["\\ud800"]}', '{"t": 1, "pred": "p", "op": "assert", "args": [-0]}',
    '{"t": 9223372036854775808, "pred": "p"}', '{"t": 1, "pred": "p", "args": [9223372036854775808]}',
    '# c', '[1]', '{"t": 4}\r', '{"interval": "[1,2]", "pred": "p"}', '{"t": 1} {"t": 2}', '{"t": 1},{"t": 2}',
    '{"t": 1}\r{"t": 2}', ',', '{"t": 1},', '{"t": 1}]', '[{"t": 1}', '{"t": 2, "pred": "p", "\\u006fp": "retract"}',
])


def _outcome(make, on_error):
    reports: list[str] = []
    reader = EventReader(io.StringIO(make), "in.jsonl", on_error=on_error, report=reports.append)
    return reader, reports


def _run(text: str, on_error: str, batched: bool, binary: bool = False, ahead: bool = False):
    reports: list[str] = []
    if binary:  # as the CLI opens a file: UTF-8, undecodable bytes escaped, universal newlines
        data = text.encode("utf-8", "surrogateescape")
        stream = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="surrogateescape")
        reader = EventReader(stream, "in.jsonl", on_error=on_error, report=reports.append, raw=stream.buffer)
    else:
        reader = EventReader(io.StringIO(text), "in.jsonl", on_error=on_error, report=reports.append)
    got: list[tuple] = []
    try:
        if ahead:  # decoded by a child process (chronolog run on a large file)
            source = flatten(readahead.read_ahead(reader))
        else:
            source = flatten(reader.batches()) if batched else iter(reader)
        for ev in source:
            got.append((ev.t, ev.pred, ev.args, ev.retract, ev.loc))
    except InputError as exc:
        got.append(("error", str(exc)))
    return got, reports, reader.lines, reader.skipped


@given(
    st.lists(st.one_of(_good_line, _good_line, _good_line, _odd_line), max_size=30),
    st.sampled_from(["fail", "skip"]),
    st.sampled_from([1, 2, 3, 7, 4096]),
    st.sampled_from(["\n", "\r\n"]),
)
def test_batch_reader_equals_line_reader(lines, on_error, block, newline):
    text = newline.join(lines) + (newline if lines else "")
    old = formats._BLOCK
    formats._BLOCK = block
    try:
        assert _run(text, on_error, True) == _run(text, on_error, False)
    finally:
        formats._BLOCK = old


_raw_piece = st.sampled_from(["\n", "\r\n", "\r", " ", "\n\n", "\ufeff", "\udcff", "ä", ",", "}"])


@given(
    st.lists(st.one_of(_good_line, _good_line, _odd_line, _raw_piece), max_size=40),
    st.sampled_from(["fail", "skip"]),
    st.sampled_from([1, 5, 16, 64, 1 << 18]),
    st.sampled_from(["\n", "\r\n", ""]),
    st.booleans(),
)
def test_binary_batch_reader_equals_text_line_reader(pieces, on_error, chunk, newline, final):
    """Blocks cut from the bytes of a file mean what its text lines mean, whatever
    the line breaks (CR, LF, CRLF), undecodable bytes, BOM or last line without a break."""
    text = newline.join(pieces) + (newline if final else "")
    old = formats._CHUNK
    formats._CHUNK = chunk
    try:
        assert _run(text, on_error, True, binary=True) == _run(text, on_error, False, binary=True)
    finally:
        formats._CHUNK = old


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.one_of(_good_line, _good_line, _odd_line, _raw_piece), max_size=40),
    st.sampled_from(["fail", "skip"]),
    st.sampled_from([1, 16, 1 << 18]),
    st.sampled_from(["\n", "\r\n"]),
)
def test_read_ahead_equals_the_reader(pieces, on_error, chunk, newline):
    """The child process's items, messages, errors and counters are the reader's own."""
    text = newline.join(pieces) + newline
    old = formats._CHUNK
    formats._CHUNK = chunk
    try:
        assert _run(text, on_error, True, binary=True, ahead=True) == _run(text, on_error, False, binary=True)
    finally:
        formats._CHUNK = old


def test_read_ahead_parent_may_stop_early():
    data = b"".join(b'{"t": %d, "pred": "p", "args": ["a%d"]}\n' % (i // 100, i) for i in range(200_000))
    stream = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="surrogateescape")
    items = readahead.read_ahead(EventReader(stream, "in.jsonl", raw=stream.buffer))
    assert next(items).t == 0
    items.close()  # the child, blocked on a full pipe, ends; the parent reaps it


def test_read_ahead_is_used_only_where_it_pays(tmp_path, monkeypatch):
    small = tmp_path / "small.jsonl"
    small.write_text('{"t": 0}\n')
    assert not readahead.usable(str(small))
    monkeypatch.setattr(readahead, "MIN_BYTES", 1)
    monkeypatch.setattr(readahead.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(readahead.os, "getloadavg", lambda: (0.5, 0.5, 0.5), raising=False)
    assert readahead.usable(str(small)) == (readahead.sys.modules.get("threading") is None
                                           or readahead.sys.modules["threading"].active_count() == 1)
    monkeypatch.setattr(readahead.os, "getloadavg", lambda: (1.9, 1.0, 1.0), raising=False)
    assert not readahead.usable(str(small))  # the other core is busy
    monkeypatch.setenv("CHRONOLOG_READ_AHEAD", "1")
    assert readahead.usable(str(small)) == (readahead.sys.modules.get("threading") is None
                                           or readahead.sys.modules["threading"].active_count() == 1)
    monkeypatch.setenv("CHRONOLOG_READ_AHEAD", "0")
    assert not readahead.usable(str(small))
    assert not readahead.usable(str(tmp_path / "missing.jsonl"))


def test_batches_group_facts_of_a_time_point():
    text = "".join(
        [
            '{"t": 0, "pred": "p", "args": ["a"]}\n',
            '{"t": 0, "pred": "q", "args": [1, "b"]}\n',
            '{"t": 1}\n',
            '{"t": 2, "pred": "p", "args": ["a"]}\n',
            '{"t": 2, "pred": "p", "args": ["a"], "op": "retract"}\n',
            '{"t": 0, "pred": "p", "args": ["c"]}\n',
        ]
    )
    items = list(EventReader(io.StringIO(text), "in.jsonl").batches())
    assert items[0] == FactBatch(0, [(("p", 1), ("a",)), (("q", 2), (1, "b"))], "in.jsonl", 1, 2)
    assert items[1] == FactBatch(1, [], "in.jsonl", 3, 1)
    assert items[2] == FactBatch(2, [(("p", 1), ("a",))], "in.jsonl", 4, 1)
    assert items[3] == Event(2, "p", ("a",), True, Loc("in.jsonl", 5, 1))
    assert items[4] == FactBatch(0, [(("p", 1), ("c",))], "in.jsonl", 6, 1)
    assert items[4].locs() == [Loc("in.jsonl", 6, 1)]


def test_binary_batches_cut_blocks_from_the_bytes():
    data = b"".join(b'{"t": %d, "pred": "p", "args": ["a%d"]}\n' % (i // 3, i) for i in range(9)) + b'{"t": 3}'
    stream = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="surrogateescape")
    reader = EventReader(stream, "in.jsonl", raw=stream.buffer)
    items = list(reader.batches())
    assert [type(i) for i in items] == [FactBatch] * 4
    assert [(b.t, len(b.facts), b.line) for b in items] == [(0, 3, 1), (1, 3, 4), (2, 3, 7), (3, 0, 10)]
    assert reader.lines == 10
