"""Answer lines rendered a whole group at a time equal lines rendered one by one."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from chronolog.dialects.lars.answers import render

_value = st.one_of(
    st.integers(-(2**70), 2**70),
    st.text(max_size=6),
    st.sampled_from(["],[", "a],[b", "[", "]", ",", '"],["', "\\", "é", "\u2028"]),
)


@given(st.lists(st.lists(_value, max_size=3).map(tuple), max_size=8), st.integers(0, 3))
def test_render_equals_one_line_per_row(rows, t):
    head = b'{"interval":"[%d,inf)","pred":"p","args":' % t
    tail = b"}\n"
    got = render(head, tail, rows)
    expected = b"".join(
        head + json.dumps(list(r), ensure_ascii=False, separators=(",", ":")).encode() + tail for r in rows
    )
    assert got == expected
    for line, row in zip(got.splitlines(), rows):
        assert tuple(json.loads(line)["args"]) == row
