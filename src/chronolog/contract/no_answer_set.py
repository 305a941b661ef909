"""The ``{"t": T, "no_answer_set": true}`` line: a LARS time point without an answer set.

The LARS answer writer puts it among its answer lines, because what reads those lines
inside chronolog needs it: ``explain`` (runtime/consistency.py), an upgrade's restatement
(versions.py), a provisional evaluation taken back.  The answer stream a user reads holds
only CONTRACT §3 lines (``t`` or ``interval``, ``pred``, ``args``, ``diff``) unless asked
otherwise, so the edges that write that stream (``run``'s output, the fleet's answer
topic) take the line out with ``split``; the point is a diagnostic (the reasoner's warning,
``message``; ``run``'s count, the fleet's ``chronolog_no_answer_sets_total``), and
``--mark-no-answer-set`` keeps the line in the stream (docs/formats.md).
"""

from __future__ import annotations

import re

MARK = b'"no_answer_set":true}'  # how every such line ends (a cheap test of a whole batch)
# the writer's line exactly, with the ``"model": k`` tag of ``run --models`` when there is one;
# an answer line cannot match it (its ``pred`` follows ``t``)
_LINE = re.compile(rb'^\{(?:"model":(\d+),)?"t":(-?\d+),"no_answer_set":true\}(?:\r?\n|$)', re.MULTILINE)

Unanswered = tuple[int, "int | None"]  # (the time point, the model of ``run --models``, else None)


def split(data: bytes) -> tuple[bytes, list[Unanswered]]:
    """``data`` (whole answer lines) without its no_answer_set lines, and their points in order."""
    if MARK not in data:
        return data, []
    found: list[Unanswered] = []

    def drop(m: re.Match[bytes]) -> bytes:
        found.append((int(m[2]), None if m[1] is None else int(m[1])))
        return b""

    return _LINE.sub(drop, data), found


def is_line(raw: bytes) -> bool:
    """Whether one line (without its line break) is a no_answer_set line."""
    return raw.endswith(MARK) and _LINE.fullmatch(raw) is not None


def message(t: int, reason: str | None = None) -> str:
    """The diagnostic that stands for the line: ``no answer set at t=12``, with the reason if known."""
    return f"no answer set at t={t}" + ("" if reason is None else f" ({reason})")
