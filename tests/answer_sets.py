"""Every answer set of a LARS program at one time point, by clingo (test oracle).

``engine/asp.py`` translates the program for the evaluation at ``t`` exactly as
the one-shot mode does; here clingo enumerates all answer sets of that
translation, projected on the answer (the output atoms), so a test can check
that what another mode answered at ``t`` is one of them.
"""

from __future__ import annotations

from collections.abc import Sequence

import clingo

from chronolog.dialects.lars.engine.asp import AtomAt, _Translator
from chronolog.dialects.lars.ir import Program


def all_answers(program: Program, events: Sequence[tuple[int, str, tuple]], t1: int, t: int) -> list[frozenset[AtomAt]]:
    tr = _Translator(program, events, t1, t)
    text = tr.translate()
    ctl = clingo.Control(["0", "--project", "--warn=none"])
    ctl.add("base", [], text)
    ctl.ground([("base", [])])
    out: list[frozenset[AtomAt]] = []
    ctl.solve(on_model=lambda m: out.append(frozenset(tr.decode(m.symbols(shown=True)))))
    return out
