"""``core.intervals``: reading answer-line intervals and what a stream of answer lines means."""

from fractions import Fraction
from math import inf

import pytest

from chronolog.core import intervals as I


def test_parse_reads_what_text_writes():
    assert I.parse("[3,7)") == (3, True, 7, False)
    assert I.parse("(2,7/2]") == (2, False, Fraction(7, 2), True)
    assert I.parse("[5,inf)") == (5, True, inf, False)
    assert I.parse("(-inf,4/2]") == (-inf, False, 2, True) and type(I.parse("[4/2,3)")[0]) is int
    for iv in [(3, True, 7, False), (Fraction(1, 3), False, inf, False), (0, True, 0, True)]:
        assert I.parse(I.text(iv)) == iv


@pytest.mark.parametrize("bad", ["", "3,7", "[3,7", "[3;7)", "[a,7)", "[1/0,2)", "[1,2,3)"])
def test_parse_refuses_what_is_no_interval(bad):
    with pytest.raises(ValueError):
        I.parse(bad)


def test_answers_sum_the_diffs_per_atom_in_any_order():
    lines = [{"pred": "p", "args": [1], "interval": "[3,inf)"},
             {"pred": "p", "args": [1], "interval": "[3,inf)", "diff": -1},
             {"pred": "p", "args": [1], "interval": "[3,9)"},
             {"pred": "q", "t": "7/2"}, {"pred": "q", "t": 4}, {"no_answer_set": True}]
    want = {("p", (1,)): [(3, True, 9, False)], ("q", ()): [I.point(Fraction(7, 2)), I.point(4)]}
    assert I.answers(lines) == want
    assert I.answers(reversed(lines)) == want  # a -1 before its +1 still cancels it
