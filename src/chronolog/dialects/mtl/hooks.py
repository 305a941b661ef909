"""What the registry's DatalogMTL row calls (``dialects/registry.py``): parsing, the
evaluators, the reader and what ``check`` prints.  The registry loads this module when a
DatalogMTL program is first used."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import IO, Any

from chronolog.core.events import Event
from chronolog.core.reach import Reach
from chronolog.core.strata import Definitions
from chronolog.core.strata import strata as content_strata
from chronolog.dialects.mtl.evaluator import MtlEvaluator, _num, horizon, input_reach, not_forward_propagating, reach, reach_retention
from chronolog.dialects.mtl.materialise import check_program, strata
from chronolog.dialects.mtl.parser import parse_mtl
from chronolog.dialects.mtl.reader import read_mtl_events
from chronolog.dialects.mtl.syntax import MtlProgram, atoms_of, head_atom
from chronolog.evaluator import time_text


def mtl_parse(files: list[tuple[str, str]]) -> Any:
    rules: list = []
    facts: list = []
    for name, text in files:
        parsed = parse_mtl(text, name)
        rules.extend(parsed.rules)
        facts.extend(getattr(parsed, "facts", ()))
    return MtlProgram(tuple(rules), tuple(facts))


def mtl_evaluator(program: Any, options: Any, warn: Callable[[str], None]) -> Any:
    return MtlEvaluator(program, options.mode, warn=warn, retention=horizon(program, options.retention))


def mtl_read(program: Any, stream: IO[str], name: str, fmt: str, on_error: str,
              report: Callable[[str], None]) -> Iterator[Event]:
    return read_mtl_events(stream, name, fmt, on_error, report)


def mtl_describe(program: Any) -> list[str]:
    check_program(program)

    def name(atom: Any) -> str:
        return f"{atom.pred}/{len(atom.args)}"

    heads = sorted({name(head_atom(r.head)) for r in program.rules})
    inputs = sorted({name(a) for r in program.rules for lit in r.body for a in atoms_of(lit)} - set(heads))
    levels = strata(program)  # by negation: a predicate read under `not` is complete in a lower stratum
    lines = [f"stratum {i}: {', '.join(sorted({name(head_atom(r.head)) for r in rules}))}"
             for i, rules in enumerate(levels, 1)]
    lines += [f"rules: {len(program.rules)}, facts in the program: {len(program.facts)}",
              f"output predicates: {', '.join(heads) or '(none)'}",
              f"input predicates: {', '.join(inputs) or '(none)'}",
              "negation: " + (f"stratified, {len(levels)} strata" if len(levels) > 1 else "none (one stratum)")]
    blocker = not_forward_propagating(program)
    if blocker is None:
        bound = reach_retention(program)
        lines.append(f"forward-propagating: evaluated as a stream (window reach {time_text(_num(reach(program)))}); "
                     f"every late event applied" + ("" if bound is None else
                                                     f" (--retention {time_text(bound)} makes memory flat)"))
        lines.append("fleet: one chain service hosting the evaluator, one partition; partition key: none "
                     "(the evaluator is not split by key)")
    else:
        lines.append(f"not forward-propagating ({blocker[0]}: {blocker[1]}): evaluated in batch mode")
        lines.append("fleet: not available (batch only: chronolog run); partition key: none")
    bound = input_reach(program)
    lines.append(f"backfill: {'one segment (no bounded input reach)' if bound is None else f'segments, input reach {bound}'}")
    return lines


def mtl_stream(program: Any) -> Any:
    return MtlEvaluator(program, "stream")  # a fleet never reaches the end of its input: no batch mode


def mtl_replay(program: Any, warn: Callable[[str], None]) -> Any:
    return MtlEvaluator(program, warn=warn)  # streaming if the program allows it, else batch


def mtl_reach(program: Any) -> Reach | None:
    back = input_reach(program)
    return None if back is None else Reach(back)


def mtl_causal(program: Any) -> bool:
    """No future operator (``Diamondplus``, ``Boxplus``, ``Until``) in a body and no head
    operator but ``Boxplus`` (a ``Boxminus`` head dates a conclusion back before its premises):
    then the answers at t follow from the input up to t."""
    return not_forward_propagating(program) is None


def mtl_retaining(program: Any, retention: Any) -> Any:
    return MtlEvaluator(program, "stream", retention=horizon(program, retention))


def mtl_strata(program: Any) -> Any:
    """The program's strata identified by content (``core.strata``): a derived predicate is
    defined by its rules and program facts (a predicate given facts in the program counts as
    defined: another fact changes what reads it), and reads the predicates of its bodies."""
    defs = mtl_definitions(program)
    return content_strata(defs)


def mtl_definitions(program: MtlProgram) -> Definitions:
    texts: dict[str, list[str]] = {}
    reads: dict[str, set[str]] = {}
    heads: set[str] = set()

    def name(key: tuple[str, int]) -> str:
        return f"{key[0]}/{key[1]}"

    for rule in program.rules:
        head = name(head_atom(rule.head).key)
        heads.add(head)
        texts.setdefault(head, []).append(content_text(rule))
        reads.setdefault(head, set()).update(name(a.key) for lit in rule.body for a in atoms_of(lit))
    for fact in program.facts:
        texts.setdefault(f"{fact.pred}/{len(fact.args)}", []).append(content_text(fact))
    return Definitions({k: k for k in texts}, {k: frozenset([k]) if k in heads else frozenset() for k in texts},
                       {k: tuple(v) for k, v in texts.items()}, {k: frozenset(v) for k, v in reads.items()})


def content_text(x: Any) -> str:
    """A rule's (or fact's) content as text: its syntax tree without source locations (the
    same rule moved to another line or file is the same rule)."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        inner = ",".join(content_text(getattr(x, f.name)) for f in dataclasses.fields(x) if f.name != "loc")
        return f"{type(x).__name__}({inner})"
    if isinstance(x, tuple):
        return "(" + ",".join(content_text(y) for y in x) + ")"
    return repr(x)
