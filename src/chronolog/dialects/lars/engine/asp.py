"""One-shot evaluation of a LARS program at one time point by translation to ASP.

This is the evaluator for programs that the incremental engine cannot handle
(negation cycles, i.e. several or no answer sets: Ticker's "clingo"
strategy), and the oracle the tests compare the incremental engine against.
It implements ../../../shared/spec/LARS.md literally: the program is
evaluated on the timeline ``[t1, t]`` with the stream facts up to ``t`` and
clingo returns one answer set.

Encoding (``to_asp`` shows it; every name below is an ASP predicate):

* a user predicate ``p/k`` becomes ``h_p/k+1`` whose last argument is the time
  point (``x_<hex>`` for names that are not ASP identifiers); all auxiliary
  names start differently, so nothing clashes with user names or ASP keywords;
* stream facts are facts ``h_p(c..., T).``; program facts hold at every point:
  ``h_p(c..., T) :- tl(T).``, ``tl`` covering the part of the timeline that
  some window can see (points no window reaches influence nothing);
* the facts selected by a tuple window ``[n #]`` are facts ``wn_h_p(c..., T).``
  (tuple windows are only allowed on stream predicates); its range starts at
  ``t'`` (time of the n-th last fact, ``t1`` if fewer), computed here;
* ``p(X)`` (now) is ``h_p(X, t)``; diamond, box and ``at`` become auxiliary
  predicates over the variables of the atom, defined by rules with explicit
  integer bounds.  Box is a positive chain over consecutive points
  (``run(X, lo) ... run(X, t)``), so it stays monotone: a positive cycle through
  a box is not self-supporting (as with the minimal-model semantics);
* plain heads derive at ``t``; ``h at T`` heads derive ``ath_h_p(..., T)``,
  copied into ``h_p``, and a constraint removes every answer set with such an
  atom off ``[t1, t]`` (so in a program with several answer sets the rule acts
  as a constraint; in a stratified one there is no answer set at all);
* shown: ``h_p(..., t)`` of output predicates and the ``ath_`` atoms;
* comparisons: ``=``/``!=`` are clingo's; ``L < R`` is written ``(L)-(R) < 0``,
  so that it is false unless both sides are integers (clingo's subtraction is
  undefined on strings, which makes the literal false), the same for
  ``<= > >=``; undefined arithmetic (strings, division by zero) makes any
  comparison false, as in clingo.  ``/`` and ``\\`` (mod) truncate toward zero
  in clingo, as the IR prescribes.

Integers must fit clingo's 32-bit numbers.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence

import clingo

from chronolog.dialects.lars.ir import (
    Atom,
    BinOp,
    Compare,
    Expr,
    ExtAtom,
    Op,
    Program,
    Rule,
    Term,
    TimeWindow,
    TupleWindow,
    Value,
    Var,
    Window,
)

__all__ = ["solve_time_point", "to_asp", "AtomAt"]

AtomAt = tuple[str, tuple, int]
"""An output atom: (pred, args, time point)."""

_log = logging.getLogger(__name__)

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_IDENT = re.compile(r"[A-Za-z0-9_]+")


def solve_time_point(
    program: Program,
    events: Sequence[tuple[int, str, tuple]],
    t1: int,
    t: int,
    model: int = 0,
) -> set[AtomAt] | None:
    """Evaluate ``program`` at time ``t`` on the timeline ``[t1, t]``.

    ``model``: which answer set, in clingo's (deterministic) order; if there are
    fewer, the last one.

    ``events`` are stream facts ``(time, pred, args)`` in time order (arrival
    order within a time point); facts outside ``[t1, t]`` are ignored.  The
    caller may pass only a suffix of the stream that covers the program's
    windows (the last n facts for a tuple window ``[n #]``, the points
    ``t-n .. t`` for ``[n]``, everything for a windowless ``at``).

    Returns the output of one answer set (CONTRACT section 3): the atoms
    ``(pred, args, time)`` of the output predicates (heads of rules with a
    non-empty body) that hold at ``t``, and those derived through @-heads at
    their times; or None if the program has no answer set at ``t``.  Atoms at
    earlier points that stream or program facts give are not repeated (they
    are the output of the evaluation at their own time).  The same input
    always gives the same answer.  Raises ValueError on an unsafe program.
    """
    tr = _Translator(program, events, t1, t)
    text = tr.translate()
    messages: list[str] = []

    def logger(code: clingo.MessageCode, message: str) -> None:
        # Info messages ('atom does not occur in any rule head', 'operation
        # undefined' for arithmetic on strings) are expected and dropped;
        # errors (e.g. unsafe variables) are kept for the exception.
        _log.debug("clingo: %s", message.strip())
        if code is clingo.MessageCode.RuntimeError:
            messages.append(message.strip())

    options = ["--models=1"] if model == 0 else [f"--models={model + 1}", "--project"]  # distinct answers
    ctl = clingo.Control([*options, "--warn=none"], logger=logger, message_limit=20)
    try:
        ctl.add("base", [], text)
        ctl.ground([("base", [])])
    except RuntimeError as err:
        detail = "\n".join(messages) or str(err)
        raise ValueError(f"clingo rejected the translated program (unsafe rule?):\n{detail}") from err
    found: list[set[AtomAt]] = []

    def on_model(model: clingo.Model) -> None:
        found.append(tr.decode(model.symbols(shown=True)))

    ctl.solve(on_model=on_model)
    return found[min(model, len(found) - 1)] if found else None


def to_asp(program: Program, events: Sequence[tuple[int, str, tuple]], t1: int, t: int) -> str:
    """The ASP program ``solve_time_point`` hands to clingo (for debugging)."""
    return _Translator(program, events, t1, t).translate()


# --------------------------------------------------------------------------
# translation


def _const(v: Value) -> str:
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise ValueError(f"unsupported constant {v!r}: only str and int")
    if isinstance(v, int):
        if not _INT_MIN <= v <= _INT_MAX:
            raise ValueError(f"integer {v} does not fit clingo's 32-bit numbers")
        return str(v)
    escaped = v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _var(name: str) -> str:
    if name == "_":
        return "_"
    if _IDENT.fullmatch(name):
        return "V" + name
    return "W" + name.encode().hex()


def _term(term: Term) -> str:
    return _var(term.name) if isinstance(term, Var) else _const(term.value)


_ASP_OP = {"+": "+", "-": "-", "*": "*", "/": "/", "mod": "\\"}


def _expr(e: Expr) -> str:
    if isinstance(e, BinOp):
        if e.op not in _ASP_OP:
            raise ValueError(f"unknown arithmetic operator {e.op!r}")
        return f"({_expr(e.left)} {_ASP_OP[e.op]} {_expr(e.right)})"
    return _term(e)


def _compare(c: Compare) -> str:
    left, right = _expr(c.left), _expr(c.right)
    if c.op in ("=", "!="):
        return f"{left} {c.op} {right}"
    if c.op in ("<", "<=", ">", ">="):
        # Subtraction is undefined unless both sides are integers, which
        # makes the literal false: the order comparisons only hold on ints.
        return f"({left}) - ({right}) {c.op} 0"
    raise ValueError(f"unknown comparison {c.op!r}")


def _lit(name: str, args: Iterable[str]) -> str:
    args = list(args)
    return f"{name}({','.join(args)})" if args else name


class _Translator:
    def __init__(self, program: Program, events: Sequence[tuple[int, str, tuple]], t1: int, t: int):
        if t < t1:
            raise ValueError(f"evaluation time {t} lies before the first time point {t1}")
        self.program = program
        self.t1, self.t = t1, t
        self.events = [(int(e[0]), e[1], tuple(e[2])) for e in events if t1 <= e[0] <= t]
        self.lines: list[str] = []
        self.aux = 0
        self.names: dict[tuple[str, int], str] = {}
        self.outputs: dict[tuple[str, int], str] = {}  # (asp name, asp arity) -> pred
        self.tuple_sel: dict[int, tuple[int, list[tuple[int, str, tuple]]]] = {}
        self.tuple_used: set[tuple[int, tuple[str, int]]] = set()

    # names ---------------------------------------------------------------
    def pred(self, pred: str, arity: int) -> str:
        key = (pred, arity)
        if key not in self.names:
            self.names[key] = ("h_" + pred) if _IDENT.fullmatch(pred) else "x_" + pred.encode().hex()
        return self.names[key]

    def fresh(self, kind: str) -> str:
        self.aux += 1
        return f"{kind}{self.aux}"

    # windows -------------------------------------------------------------
    def tuple_window(self, n: int) -> tuple[int, list[tuple[int, str, tuple]]]:
        """(t', selected facts) of the tuple window ``[n #]`` at t."""
        if n not in self.tuple_sel:
            sel = self.events[-n:] if n > 0 else []
            lo = sel[0][0] if len(sel) >= n and sel else self.t1
            self.tuple_sel[n] = (lo, sel)
        return self.tuple_sel[n]

    def source(self, atom: Atom, window: Window | None) -> tuple[str, int]:
        """ASP name holding the atom's facts visible to ``window``, and the range start."""
        name = self.pred(atom.pred, len(atom.args))
        if isinstance(window, TupleWindow):
            if window.size < 1:
                raise ValueError(f"tuple window size must be positive: {window}")
            lo, _ = self.tuple_window(window.size)
            self.tuple_used.add((window.size, atom.key))
            return f"w{window.size}_{name}", lo
        if isinstance(window, TimeWindow):
            if window.size < 0:
                raise ValueError(f"window size must not be negative: {window}")
            return name, max(self.t1, self.t - window.size)
        return name, self.t1  # windowless: the whole timeline

    # extended atoms ------------------------------------------------------
    def ext(self, e: ExtAtom) -> str:
        src, lo = self.source(e.atom, e.window)
        t = self.t
        neg = "not " if e.negated else ""
        # anonymous variables become named ones inside auxiliary rules (a box
        # needs the same value at every point); the auxiliary head drops them
        args: list[str] = []
        named: set[str] = set()
        for a in e.atom.args:
            if isinstance(a, Var) and a.name == "_":
                args.append(f"A{len(args)}")
                named.add(args[-1])
            else:
                args.append(_term(a))
                if isinstance(a, Var):
                    named.add(args[-1])
        head_vars = sorted({_var(a.name) for a in e.atom.args if isinstance(a, Var) and a.name != "_"})

        if e.op is Op.NOW:
            if e.window is None:
                return neg + _lit(src, [_term(a) for a in e.atom.args] + [str(t)])
            # a window on a plain atom: the atom at t among the window's facts
            aux = self.fresh("now")
            self.lines.append(f"{_lit(aux, head_vars)} :- {_lit(src, args + [str(t)])}.")
            return neg + _lit(aux, head_vars)

        if e.op is Op.DIAMOND:
            aux = self.fresh("dia")
            tv = f"T{self.aux}"
            self.lines.append(f"{_lit(aux, head_vars)} :- {_lit(src, args + [tv])}, {tv} >= {lo}, {tv} <= {t}.")
            return neg + _lit(aux, head_vars)

        if e.op is Op.BOX:
            aux = self.fresh("box")
            run = f"run{self.aux}"
            tv = f"T{self.aux}"
            run_vars = sorted(named)
            self.lines.append(f"{_lit(run, run_vars + [str(lo)])} :- {_lit(src, args + [str(lo)])}.")
            self.lines.append(
                f"{_lit(run, run_vars + [f'{tv}+1'])} :- {_lit(run, run_vars + [tv])}, "
                f"{_lit(src, args + [f'{tv}+1'])}, {tv} < {t}."
            )
            self.lines.append(f"{_lit(aux, head_vars)} :- {_lit(run, run_vars + [str(t)])}.")
            return neg + _lit(aux, head_vars)

        if e.op is Op.AT:
            if e.time is None:
                raise ValueError(f"'at' without a time: {e}")
            aux = self.fresh("at")
            if isinstance(e.time, Var) and e.time.name == "_":
                tv = f"T{self.aux}"
            else:
                tv = _term(e.time)
            vars_ = set(head_vars)
            if isinstance(e.time, Var) and e.time.name != "_":
                vars_.add(tv)
            self.lines.append(f"{_lit(aux, sorted(vars_))} :- {_lit(src, args + [tv])}, {tv} >= {lo}, {tv} <= {t}.")
            return neg + _lit(aux, sorted(vars_))

        raise ValueError(f"unknown operator {e.op!r}")

    # rules ---------------------------------------------------------------
    def rule(self, r: Rule) -> None:
        head = r.head
        name = self.pred(head.atom.pred, len(head.atom.args))
        if head.time is not None:
            name = "ath_" + name  # @-derived; copied into h_... below
        if r.is_fact:
            free = head.atom.variables() | ({head.time.name} if isinstance(head.time, Var) else set())
            if free:
                raise ValueError(f"unsafe fact (variables {', '.join(sorted(free))}): {r}")
            args = [_term(a) for a in head.atom.args]
            if head.time is None:
                self.lines.append(f"{_lit(name, args + ['T'])} :- tl(T).")
            else:
                self.lines.append(f"{_lit(name, args + [_term(head.time)])}.")
            return
        body = [self.ext(b) if isinstance(b, ExtAtom) else _compare(b) for b in r.body]
        time = str(self.t) if head.time is None else _term(head.time)
        self.lines.append(f"{_lit(name, [_term(a) for a in head.atom.args] + [time])} :- {', '.join(body)}.")

    def horizon(self) -> int:
        """Earliest time point any extended atom of the program can look at."""
        lo = self.t
        for r in self.program.rules:
            for b in r.body:
                if isinstance(b, ExtAtom):
                    if b.op is Op.NOW and b.window is None:
                        continue
                    lo = min(lo, self.source(b.atom, b.window)[1])
        return lo

    def translate(self) -> str:
        t1, t = self.t1, self.t
        rules = self.program.rules
        out: list[str] = [f"% LARS program at t={t} on the timeline [{t1},{t}]"]

        self.lines = []
        for r in rules:
            self.rule(r)
        rule_lines = self.lines

        mentioned: set[tuple[str, int]] = set()
        for r in rules:
            mentioned.add(r.head.atom.key)
            for b in r.body:
                if isinstance(b, ExtAtom):
                    mentioned.add(b.atom.key)

        out.append(f"tl({self.horizon()}..{t}).")
        out.append("% stream facts")
        seen: set[str] = set()
        for time, pred, args in self.events:
            if (pred, len(args)) in mentioned:
                fact = _lit(self.pred(pred, len(args)), [_const(a) for a in args] + [str(time)]) + "."
                if fact not in seen:
                    seen.add(fact)
                    out.append(fact)
        for n in sorted({n for n, _ in self.tuple_used}):
            lo, sel = self.tuple_window(n)
            out.append(f"% tuple window [{n} #]: {len(sel)} facts, range [{lo},{t}]")
            seen = set()
            for time, pred, args in sel:
                if (n, (pred, len(args))) in self.tuple_used:
                    fact = _lit(f"w{n}_{self.pred(pred, len(args))}", [_const(a) for a in args] + [str(time)]) + "."
                    if fact not in seen:
                        seen.add(fact)
                        out.append(fact)
        out.append("% rules")
        out.extend(rule_lines)

        at_heads = sorted({r.head.atom.key for r in rules if r.head.time is not None})
        if at_heads:
            out.append("% @-heads: on the timeline [t1,t], else no answer set")
        for key in at_heads:
            vs = [f"X{i}" for i in range(key[1])] + ["T"]
            name = self.pred(*key)
            out.append(f"{_lit(name, vs)} :- {_lit('ath_' + name, vs)}.")
            out.append(f":- {_lit('ath_' + name, vs)}, T < {t1}.")
            out.append(f":- {_lit('ath_' + name, vs)}, T > {t}.")

        # output: atoms of output predicates at t, and those @-heads derive
        self.outputs = {}
        for r in rules:
            if not r.is_fact:
                key = r.head.atom.key
                self.outputs[(self.pred(*key), key[1] + 1)] = key[0]
                if key in at_heads:
                    self.outputs[("ath_" + self.pred(*key), key[1] + 1)] = key[0]
        for name, arity in sorted(self.outputs):
            if name.startswith("ath_"):
                out.append(f"#show {name}/{arity}.")
            else:
                vs = ",".join([f"X{i}" for i in range(arity - 1)] + [str(t)])
                out.append(f"#show {name}({vs}) : {name}({vs}).")
        out.append("#show.")
        return "\n".join(out) + "\n"

    # answers -------------------------------------------------------------
    def decode(self, symbols: Sequence[clingo.Symbol]) -> set[AtomAt]:
        result: set[AtomAt] = set()
        for s in symbols:
            pred = self.outputs.get((s.name, len(s.arguments)))
            if pred is None:
                continue
            *args, time = (_value(a) for a in s.arguments)
            if time != self.t and not s.name.startswith("ath_"):
                continue
            result.add((pred, tuple(args), time))
        return result


def _value(s: clingo.Symbol) -> Value:
    if s.type is clingo.SymbolType.Number:
        return s.number
    if s.type is clingo.SymbolType.String:
        return s.string
    raise ValueError(f"unexpected symbol in an answer: {s}")
