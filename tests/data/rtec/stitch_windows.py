"""Turn RTEC's windowed results file into one chronolog answer (JSONL), for the fixtures.

RTEC's ``continuousQueries`` writes, for each query time Q (one block per window, blocks
separated by an empty line), ``recognitions(predictions, F, [Args, V], L).`` where L is
F=V's list of maximal intervals clipped to (Q-WM+1, Q+1).  The stitched answer gives every
time point the verdict of the last window that covers it: window i replaces (Qi-WM, Qi].
An interval reaching the last window's Q+1 is still holding: it becomes ``[a,inf)``.  The
conversion to answer lines is the one of ``README.md`` (half-open RTEC interval (Ts,Te) ->
closed ``[Ts, Te-tick]``; V appended unless it is ``true``).

    python stitch_windows.py RESULTS WINDOW STEP START TICK > expected-windowed.jsonl

(This is chronolog's own conversion; RTEC itself is not part of the repository.)
"""

from __future__ import annotations

import json
import re
import sys

INF = float("inf")
_TOKEN = re.compile(r"\s*(?:(-?\d+)|('(?:[^'\\]|\\.)*')|([a-z][A-Za-z0-9_]*)|([A-Z_][A-Za-z0-9_]*)|(.))")


def parse_term(text: str):
    """A Prolog term as written by write/1: numbers, atoms, compounds, lists, (a,b) tuples."""
    toks = [m for m in _TOKEN.finditer(text) if m.group(0).strip()]
    pos = 0

    def peek() -> str | None:
        return toks[pos].group(0).strip() if pos < len(toks) else None

    def take() -> re.Match:
        nonlocal pos
        pos += 1
        return toks[pos - 1]

    def term():
        m = take()
        if m.group(1) is not None:
            return int(m.group(1))
        if m.group(2) is not None or m.group(3) is not None:
            name = m.group(3) if m.group(3) is not None else m.group(2)[1:-1]
            if peek() == "(" and toks[pos].start() == m.end():
                take()
                args = seq(")")
                return (name, *args)
            return name
        sym = m.group(5)
        if sym == "[":
            return list(seq("]"))
        if sym == "(":
            return ("tuple", *seq(")"))
        raise ValueError(f"unexpected {m.group(0)!r} in {text!r}")

    def seq(close: str) -> list:
        out = []
        if peek() == close:
            take()
            return out
        while True:
            out.append(term())
            sep = take().group(0).strip()
            if sep == close:
                return out
            if sep != ",":
                raise ValueError(f"expected , or {close} in {text!r}")

    return term()


def text_of(t) -> str | int:
    """An argument as the answer JSON writes it: numbers and atoms as they are, compounds as text."""
    if isinstance(t, tuple):
        return f"{t[0]}({','.join(str(text_of(a)) for a in t[1:])})"
    return t


def subtract(ivs: list, lo: float, hi: float) -> list:
    out = []
    for a, b in ivs:
        if b <= lo or a >= hi:
            out.append((a, b))
            continue
        if a < lo:
            out.append((a, lo))
        if b > hi:
            out.append((hi, b))
    return out


def coalesce(ivs: list) -> list:
    out: list = []
    for a, b in sorted(ivs):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def stitch(path: str, window: int, step: int, start: int, tick: int) -> dict:
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n\n")
    blocks = []
    for chunk in lines:
        got = {}
        for line in chunk.splitlines():
            if line.strip():
                _, _, name, (args, value), ivs = parse_term(line.strip().rstrip("."))
                got[(name, tuple(text_of(a) for a in args), text_of(value))] = [
                    (a, INF if b == "inf" else b) for _, a, b in ivs]
        blocks.append(got)
    while blocks and not blocks[-1]:
        blocks.pop()  # the file ends with the last window's empty line
    answer: dict[tuple, list] = {}
    q = start
    last_q = start + step * len(blocks)
    for block in blocks:
        q += step
        lo, hi = q - window + 1, q + 1  # the part printRecognitions shows
        for key in set(answer) | set(block):
            kept = subtract(answer.get(key, []), lo, hi)
            answer[key] = coalesce(kept + block.get(key, []))
    out = {}
    for key, ivs in answer.items():
        fixed = [(a, INF if b >= last_q + 1 else b) for a, b in ivs]
        if fixed:
            out[key] = fixed
    return out


def answer_lines(answer: dict, tick: int) -> list[str]:
    rows = []
    for (name, args, value), ivs in answer.items():
        jargs = list(args) + ([] if value == "true" else [value])
        for a, b in ivs:
            # an interval's ends are grid points, except a clip at Q-WM+1 (tick > 1): its first grid point
            a = -(-a // tick) * tick
            hi = "inf)" if b == INF else f"{-(-b // tick) * tick - tick}]"
            if b != INF and -(-b // tick) * tick - tick < a:
                continue
            rows.append((name, json.dumps(jargs), a, json.dumps({"interval": f"[{a},{hi}", "pred": name,
                                                                  "args": jargs})))
    return [r[3] for r in sorted(rows)]


if __name__ == "__main__":
    results, window, step, start, tick = sys.argv[1], *map(int, sys.argv[2:6])
    for line in answer_lines(stitch(results, window, step, start, tick), tick):
        print(line)
