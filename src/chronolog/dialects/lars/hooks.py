"""What the registry's rows of LARS and Laser call (``dialects/registry.py``): parsing either
syntax into one ``Program``, its plan, its evaluators, its readers and what ``check`` prints.
The registry loads this module when a LARS or Laser program is first used."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import IO, Any

from chronolog.core.errors import ChronologError
from chronolog.core.events import Event
from chronolog.core.reach import Reach
from chronolog.dialects.lars.evaluator import LarsEvaluator, LarsModels
from chronolog.dialects.lars.ir import Program
from chronolog.dialects.lars.parser import parse_lars
from chronolog.dialects.lars.plan import plan_program
from chronolog.io.formats import EventReader


def lars_parse(files: list[tuple[str, str]]) -> Any:
    return Program(tuple(r for name, text in files for r in parse_lars(text, name).rules), "lars")


def lars_plan(program: Any, options: Any = None) -> Any:
    """The program's plan (its errors: safety, windows), evaluated as ``--mode``/``--seed`` say."""
    plan = plan_program(program)
    if options is None:  # (``check``, the fleet, the backfill: the defaults of RunOptions)
        plan.solver, plan.seed = "tms", 0
    else:
        plan.solver = options.mode or ("oneshot" if options.models > 1 else "tms")
        plan.seed = options.seed
    return plan


def lars_retention(retention: Any) -> int | None:
    return None if retention is None or retention == float("inf") else int(retention)


def lars_evaluator(program: Any, options: Any, warn: Callable[[str], None]) -> Any:
    models = options.models
    if models < 1:
        raise ChronologError(f"error: --models must be at least 1, not {models}")
    if models > 1 and options.mode == "tms":
        raise ChronologError("error: --models enumerates answer sets with clingo: use it with --mode oneshot")
    plan = lars_plan(program, options)
    retention = lars_retention(options.retention)
    if models > 1:
        return LarsModels(plan, models, answers=options.answers, retention=retention, warn=warn)
    return LarsEvaluator(plan, answers=options.answers, retention=retention, warn=warn, eager=True)


def lars_read(program: Any, stream: IO[str], name: str, fmt: str, on_error: str,
              report: Callable[[str], None]) -> Iterator[Event]:
    return iter(EventReader(stream, name, fmt, on_error=on_error, report=report))


def lars_bulk_read(program: Any, stream: IO[str], name: str, fmt: str, on_error: str,
                   report: Callable[[str], None]) -> Iterator[Any]:
    """Blocks of facts of one time point (``FactBatch``), cut from the file's bytes when
    ``stream`` is a file not read yet (else from its lines)."""
    raw = getattr(stream, "buffer", None)
    return EventReader(stream, name, fmt, on_error=on_error, report=report, raw=raw).batches()


def lars_describe(program: Any) -> list[str]:
    plan = lars_plan(program)
    lines = [f"stratum {i}: {', '.join(stratum)}" for i, stratum in enumerate(plan.strata, 1)]
    lines.append(f"output predicates: {', '.join(sorted(f'{p}/{k}' for p, k in plan.output)) or '(none)'}")
    inputs = sorted(f"{p}/{k}" for p, k in plan.extensional if "#" not in p)
    lines.append(f"input predicates: {', '.join(inputs) or '(none)'}")
    lines.append("stratified: evaluated incrementally" if plan.stratified else
                 "non-stratified: evaluated by truth maintenance (--mode tms, the default) or clingo per time "
                 "point (--mode oneshot)")
    return lines


def lars_stream(program: Any) -> Any:
    return LarsEvaluator(lars_plan(program))  # the stage decides when to advance


def lars_replay(program: Any, warn: Callable[[str], None]) -> Any:
    return LarsEvaluator(lars_plan(program), warn=warn)


def lars_reach(program: Any) -> Reach | None:
    """The plan's reach: its largest time window over stream predicates and largest tuple
    window, and how far back an ``@``-head derives; unbounded if either is."""
    plan = lars_plan(program)
    if plan.state_reach is None or plan.output_reach is None:
        return None
    return Reach(plan.state_reach, plan.tuple_reach, plan.output_reach)


def lars_keeps_choices(program: Any) -> bool:
    """Not stratified: the answer set at t keeps the choices of earlier times (the TMS's
    labels), so the answers at t are not a function of the input in the reach alone."""
    return not lars_plan(program).stratified


def lars_causal(program: Any) -> bool:
    """Always: the evaluation at t reads the timeline [t1, t] only, and an ``@``-head dates its
    atom on that timeline (back, never ahead); an ``@``-head of an evaluation from an upgrade's
    T on belongs to the new program (the version is chosen by the time point evaluated)."""
    return True


def lars_retaining(program: Any, retention: Any) -> Any:
    return LarsEvaluator(lars_plan(program), retention=lars_retention(retention))


def lars_dates_back(program: Any) -> bool:
    """An ``@``-head of an output predicate: its evaluation at t may derive atoms before t.  A
    dated fact (``a(1) at 0.``) of a predicate some rule derives counts too: every evaluation
    from its time on holds its atom at that earlier time (LARS.md: facts hold at every point)."""
    output = {rule.head.atom.key for rule in program.rules if rule.body}
    return any(rule.head.time is not None and (rule.body or rule.head.atom.key in output) for rule in program.rules)


def lars_evaluations(program: Any, evaluator: Any, first: int | None, last: int | None) -> int | float | None:
    """A program with ``@``-heads answers only what its evaluations at points in [first, last]
    derive (``LarsEvaluator.evaluations``); how far back they date atoms (inf: anywhere on the
    timeline).  Without them each evaluation answers at its own point only, and cutting its
    lines to a part of time is the same: None, nothing set."""
    if not lars_dates_back(program):
        return None
    if evaluator is not None:  # (None: only asked how far back)
        evaluator.evaluations(first, last)
    back = lars_plan(program).output_reach
    return float("inf") if back is None else back
