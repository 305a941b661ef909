"""Which evaluator the fleet's chain service hosts for a program's dialect.

LARS programs (``lars``, ``laser``) run on the LARS stages (per-stratum
services, or the chain with its fast path).  Any other dialect's evaluator
(``chronolog.evaluator.Evaluator``) is hosted by ``EvaluatorStage`` as one
stratum: its module registers a factory here, ``EVALUATORS["mtl"] =
make_mtl_evaluator``, taking the parsed program.
"""

from __future__ import annotations

from typing import Callable

from chronolog.evaluator import Evaluator
from chronolog.ir import Program
from chronolog.lang import LARS_DIALECTS

EVALUATORS: dict[str, Callable[[Program], Evaluator]] = {}


def hosted_evaluator(program: Program) -> Evaluator | None:
    """The evaluator to host for ``program``; None for LARS (its own stages)."""
    dialect = getattr(program, "dialect", "lars")
    if dialect in LARS_DIALECTS:
        return None
    factory = EVALUATORS.get(dialect)
    if factory is None:
        from chronolog.errors import ChronologError

        raise ChronologError(f"error: the fleet cannot host dialect {dialect!r} yet (no evaluator registered)")
    return factory(program)
