"""Event contracts of the Kafka topics, as pydantic models.

These models are the documentation and the validation of what flows on
``chronolog.facts``, ``chronolog.answers``, the internal time-advance markers
and the dead-letter topic.  The JSON Schema files in the repository's
``schemas/`` folder are generated from them (``chronolog schemas --write DIR``)
and a test keeps them in sync.  The embedded reader (``io/formats.py``) parses
the same input format without pydantic on its hot path; a test checks both
accept and reject the same lines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, StrictInt, StrictStr, create_model, model_validator

from chronolog.contract.events import FACT_EVENT, FACT_EVENT_DOC, OPS

Value = StrictStr | StrictInt


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _fact_event() -> type[_Strict]:
    """``FactEvent`` built from the one statement of the contract (chronolog.contract.events)."""
    def field(kind: str, default: object, doc: str) -> tuple:
        if kind == "time":
            return (StrictInt, Field(description=doc))
        if kind == "pred":
            return (StrictStr | None, Field(default=None, min_length=1, description=doc))
        if kind == "args":
            return (list[Value], Field(default_factory=list, description=doc))
        return (Literal[OPS] | None, Field(default=None, description=doc))

    model = create_model("FactEvent", __base__=_Strict, __module__=__name__,
                         **{name: field(*spec) for name, spec in FACT_EVENT.items()})  # type: ignore[call-overload]
    model.__doc__ = FACT_EVENT_DOC
    return model


FactEvent = _fact_event()


class AnswerLine(_Strict):
    """One line on ``chronolog.answers`` (CONTRACT §3): a point or an interval, with an optional
    diff.  Nothing else is on the stream by default; ``--mark-no-answer-set`` adds LARS's
    ``NoAnswerSetLine`` (docs/formats.md)."""

    t: StrictInt | None = Field(default=None, description="the time point (or use interval)")
    interval: StrictStr | None = Field(
        default=None, pattern=r"^[\[(]-?\d+,(-?\d+|inf)[\])]$", description='e.g. "[5,inf)" or "[3,8]"'
    )
    pred: StrictStr = Field(description="the predicate")
    args: list[Value] = Field(default_factory=list)
    diff: Literal[1, -1] = Field(default=1, description="-1 withdraws an earlier answer")

    @model_validator(mode="after")
    def _a_point_or_an_interval(self) -> AnswerLine:
        if (self.t is None) == (self.interval is None):
            raise ValueError("exactly one of t and interval")
        return self


class NoAnswerSetLine(_Strict):
    """Opt-in (``run``/``up``/``service --mark-no-answer-set``): ``{"t": T, "no_answer_set": true}``
    among the answer lines, where a LARS program has no answer set at T (an odd loop, a
    constraint, an ``@``-head dating an atom outside the timeline; docs/tms.md).  It carries no
    atom.  By default the stream holds no such line: ``run`` warns on stderr, the fleet logs
    the point and counts it in ``chronolog_no_answer_sets_total``."""

    t: StrictInt = Field(description="the time point without an answer set")
    no_answer_set: Literal[True]


class TimeMarker(_Strict):
    """Internal (``chronolog.ingested``): the stream has reached ``t``; ingest sends it to
    every partition whenever the stream's latest or first time changes (a watermark)."""

    t: StrictInt


class IngestedBatch(_Strict):
    """Internal (``chronolog.ingested``): several ingested records of one partition
    (facts and time markers), in order, as one Kafka record: what ingest made of
    one consumed batch for that partition."""

    # FactEvent is built at import from the contract's one statement of the
    # fact event (chronolog.contract.events), so type checkers cannot see its fields
    batch: list[TimeMarker | FactEvent] = Field(min_length=1)  # type: ignore[valid-type]


Item = tuple[StrictStr, list[Value], bool]  # pred, args, retract


class GroundedBatch(_Strict):
    """Internal (``chronolog.grounded``): every time point up to ``upto`` is closed; the
    facts of the closed points, in arrival order, as one batch each.  Records written before
    ``idle`` existed read as closed by a later time."""

    upto: StrictInt
    first: StrictInt = Field(description="the stream's first time point")
    points: list[tuple[StrictInt, list[Item]]]
    idle: Literal[True] | None = Field(default=None, description="closed because the input went quiet (an idle "
                                       "flush): ``upto`` is the latest time point, which no later time has closed "
                                       "yet; a record without it closes ``upto`` again once one does (a program "
                                       "with choices evaluates an idle-closed point provisionally, docs/tms.md)")


class LateEvents(_Strict):
    """Internal (``chronolog.grounded``): events for time points already closed (delayed
    events and retractions; ``pred`` null for a time marker before the first point)."""

    late: list[tuple[StrictInt, StrictStr | None, list[Value], bool]]


class StratumRecord(_Strict):
    """Internal (``chronolog.stratum.k``): the content of stratum k at evaluation ``t``, as
    a diff against what the receiver holds for t, or else for t-1.  Atoms come
    grouped by predicate: ``[[pred, arity], [args, ...]]`` (args end with the time
    for ``@``-head predicates) or ``[["#answers", [pred, arity]], [args, ...]]`` for
    the answers of padded predicates."""

    t: StrictInt
    t1: StrictInt = Field(description="the stream's first time point")
    ok: bool = Field(description="false: no answer set at t")
    add: list[list]
    del_: list[list] = Field(alias="del")


class StratumSeed(_Strict):
    """Internal (``chronolog.stratum.k``): what stratum k sends, when it applies an upgrade
    that adds strata above it, to their reasoners — its content from ``T − reach − 1`` on, and
    the lowest stratum also its input from ``T − reach`` on — so that they start there instead
    of reading the topics from their start (``dialects/lars/seeds.py``, docs/fleet/upgrade.md).
    Several records, the last with ``end``; the other readers skip them."""

    seed: StrictStr = Field(description="the upgrade's id")
    log: list[list] = Field(description="the lowest stratum's input: [t, [[pred, args], ...]] per time point")
    points: list[list] = Field(description="[t, ok, add, del] per time point, each a diff against the point "
                                           "before it in the seed (the first against nothing)")
    end: bool | None = Field(default=None, description="the seed's last record")
    t1: StrictInt | None = Field(default=None, description="the lowest stratum's: the stream's first time point")
    latest: StrictInt | None = None
    closed: StrictInt | None = Field(default=None, description="the lowest stratum's: the last time point closed")
    known: list[list[StrictInt]] | None = Field(default=None, description="the lowest stratum's: [stratum (0-based), "
                                                "the first time its reasoner holds input of] for each stratum an "
                                                "earlier upgrade added from seeds")


class Barrier(_Strict):
    """Internal (``chronolog.ingested``, ``chronolog.grounded``, ``chronolog.stratum.k``):
    epoch ``barrier`` of the fleet ends here.  Ingest writes one into every partition
    it feeds at each commit; a service forwards it once every input partition it
    reads has delivered it (``runtime/fleet/epochs.py``, docs/design/one-transaction.md)."""

    barrier: StrictInt = Field(ge=0)


class Idle(_Strict):
    """Internal (``chronolog.ingested``): ingest's input has been quiet for the idle
    flush; grounding closes the latest time point (``IngestStage.idle_flush``)."""

    idle: Literal[True]


class Replay(_Strict):
    """Internal (``chronolog.grounded``, ``chronolog.stratum.k``): a relay restarted
    from its state of epoch ``replay`` (-1: none) and sends again what follows; a
    reader drops the unfinished epoch before it and the epochs it has passed
    (``runtime/fleet/epochs.py``, docs/fleet/exactly-once.md)."""

    replay: StrictInt = Field(ge=-1)


class Committed(_Strict):
    """Internal (``chronolog.control``, key ``output-P``): output partition P committed
    every epoch up to ``committed`` in the transaction that wrote this record.  The
    least over the output partitions is the epoch the whole fleet could go back to
    (docs/design/one-transaction.md); nothing reads it yet."""

    committed: StrictInt = Field(ge=0)
    partition: StrictInt = Field(ge=0)


class UpgradeSpec(_Strict):
    id: StrictStr = Field(description="the request: one record per input partition, applied once")
    version: StrictStr = Field(description="the new program version: 12 hex digits of the SHA-256 of its texts")
    dialect: StrictStr
    at: StrictStr | None = Field(description="the upgrade time as input times are written; null: the first time "
                                             "the service has not evaluated yet")
    sources: list[tuple[StrictStr, StrictStr]] = Field(description="the new program's files: [name, text]")
    retained: StrictStr | None = Field(default=None, description="set by the ingest of a LARS fleet with a finite "
                                       "retention: the time from which every service still holds the input "
                                       "(\"start\": all of it), so that every service decides alike whether the "
                                       "new program's input reaches back far enough")


class UpgradeRequest(_Strict):
    """On ``chronolog.facts`` (``chronolog upgrade``): change the program from a time on; the
    service reading the topic applies it in order with the data (docs/fleet/upgrade.md).  In
    a LARS fleet ingest forwards it on ``chronolog.ingested`` (setting ``at`` when null, and
    ``retained`` with a finite retention) and grounding on ``chronolog.grounded``, for the
    chains or reasoners that apply it."""

    upgrade: UpgradeSpec


class UpgradeOutcome(_Strict):
    """Internal (``chronolog.control``, key ``upgrade-ID``, or ``upgrade-ID.SERVICE`` for each
    chain partition and reasoner of a LARS fleet: ``chain.1``, ``reasoner.2``): what a service
    did with an upgrade request: applied (``version`` and ``at``) or ``refused`` with the reason.
    A reasoner of a LARS fleet of one service per stratum also names the new program's number of
    strata and its files: what ``chronolog up``'s supervisor reads to start the reasoners of added
    strata (docs/fleet/upgrade.md)."""

    upgrade: StrictStr | None
    service: StrictStr
    version: StrictStr | None = None
    at: StrictStr | None = None
    refused: StrictStr | None = None
    strata: list[list[StrictStr]] | None = Field(default=None, description="the new program's strata, lowest "
                                                 "first: the predicates (\"p/1\") each one's reasoner evaluates")
    sources: list[list[StrictStr]] | None = Field(default=None, description="the new program's files: [name, text]")
    kept: list[StrictStr] | None = Field(default=None, description="a service that keeps unchanged strata "
                                         "(DatalogMTL, RTEC): the answer predicates (\"p/1\") it kept with their "
                                         "state; [] where it evaluated the new program whole on the retained input "
                                         "(the same answers: the plan's \"keeps its state\" did not hold at that "
                                         "moment); absent: no stratum to keep")


class RuleRef(_Strict):
    file: StrictStr
    line: StrictInt
    text: StrictStr


class DerivedAtom(_Strict):
    """The atom at a time a nested why-not entry's missing event derives (not the query's), or,
    for a negated metric literal's entry, no longer holds with it."""

    pred: StrictStr
    args: list[StrictStr | StrictInt]
    time: StrictInt | StrictStr
    evaluation: StrictInt | None = Field(default=None, description="LARS: an @-head's atom dated back, the time "
                                                                   "point whose evaluation derives it with the event "
                                                                   "(the one the entry is about; absent: the atom "
                                                                   "holds at its time)")


class MissingEvent(_Strict):
    """The one input event whose absence a why-not entry blames: with it added (in time order,
    the input evaluated to T) the rule derives the atom — checked by evaluating, never guessed."""

    pred: StrictStr
    args: list[StrictStr | StrictInt]
    time: StrictInt | StrictStr = Field(description="a time point (7/2: a rational time); an interval's left end")
    interval: StrictStr | None = Field(default=None, description="DatalogMTL, an RTEC collectIntervals fluent: the "
                                                                 "interval it holds on, where not a point")
    text: StrictStr = Field(description="as the text form names it: speed(a1, 20) at 4, P(a) on [1,2]")
    derives: DerivedAtom | None = Field(default=None, description="a nested entry (a negated literal's why-not, one "
                                                                   "below the top): the atom and time it derives; "
                                                                   "absent: the queried atom")
    blocks: DerivedAtom | None = Field(default=None, description="a negated metric literal's why-not (DatalogMTL: "
                                                                  "not A Since B, not Diamondminus...): with the event "
                                                                  "its operand holds, and this atom at this time no "
                                                                  "longer does")


class WhyNotEntry(_Strict):
    """Why an atom does not hold, one rule whose head matches it: the rule, the bindings the
    atom fixes (variables the head leaves open read as "some value"), the first body literal
    in textual order that fails (none when the body holds but the answer set chose otherwise)
    and why it fails; the input that makes it fail, where one does (``premises``)."""

    text: StrictStr = Field(description="the entry as the text form prints it")
    rule: RuleRef
    bindings: dict[str, StrictStr | StrictInt]
    literal: StrictStr | None = Field(default=None, description="the failing body literal, as the program writes it")
    reason: StrictStr
    missing: MissingEvent | None = Field(default=None, description="the single input event that, added, derives "
                                                                   "the atom (only where that was checked)")
    premises: list[ExplanationNode] | None = None
    why_not: list[WhyNotEntry] | None = Field(default=None, description="why the failing literal's atom does not hold")


class ExplanationNode(_Strict):
    """One node of ``chronolog explain --why / --why-not --as json`` (docs/explain.md): an atom
    derived by a rule instance, a literal and how it was met, an input event, a negated
    literal and why it does not hold, or (``--why-not``) the atom that does not hold.
    ``kind`` "alternatives" (``--all``, below the top) holds the derivations of one atom as
    its premises, any one of which derives it."""

    kind: StrictStr
    text: StrictStr = Field(description="the node as the text form prints it")
    atom: StrictStr | None = None
    time: StrictInt | StrictStr | None = Field(default=None, description="a time point (7/2: a rational time)")
    interval: StrictStr | None = Field(default=None, description="as answer lines write it")
    rule: RuleRef | None = None
    bindings: dict[str, StrictStr | StrictInt] | None = None
    window: StrictStr | None = Field(default=None, description="the window or metric range a literal was read over")
    reason: StrictStr | None = Field(default=None, description="why a negated literal holds")
    literal: StrictStr | None = Field(default=None, description="a why-not's failing condition where no rule's "
                                                                "literal names it (RTEC: terminated at t1)")
    negated: Literal[True] | None = Field(default=None, description="a negated literal (its why_not says why)")
    operand: Literal["left", "right"] | None = Field(
        default=None, description="a premise of a Since/Until literal (DatalogMTL): the right operand at the witness "
                                  "time (its `time`) or the left operand throughout the open stretch between it and "
                                  "the literal's time (its `window`)")
    source: StrictStr | None = Field(default=None, description="an input event's file:line, or topic offset")
    late: Literal[True] | None = Field(default=None, description="an input event that arrived after the stream "
                                                                 "had passed its time (a delayed event)")
    premises: list[ExplanationNode] | None = None
    why_not: list[WhyNotEntry] | None = Field(
        default=None, description="a negated literal, or --why-not's atom: each rule whose head matches it, and why "
                                  "it does not derive it (empty: no rule does)")


class Explanation(RootModel[ExplanationNode | list[ExplanationNode]]):
    """``chronolog explain --why Q / --why-not Q --as json``: the tree's top node, the atom
    asked about; with ``--all``, a list of them (every derivation)."""


class DeadLetter(_Strict):
    """A rejected input event on the dead-letter topic, with the reason."""

    topic: StrictStr
    partition: StrictInt
    offset: StrictInt
    value: StrictStr = Field(description="the raw event, as received")
    reason: StrictStr
    service: StrictStr


MODELS: dict[str, type[BaseModel]] = {
    "fact-event": FactEvent,
    "answer-line": AnswerLine,
    "no-answer-set-line": NoAnswerSetLine,
    "time-marker": TimeMarker,
    "ingested-batch": IngestedBatch,
    "grounded-batch": GroundedBatch,
    "late-events": LateEvents,
    "stratum-record": StratumRecord,
    "stratum-seed": StratumSeed,
    "barrier": Barrier,
    "idle": Idle,
    "replay": Replay,
    "committed": Committed,
    "dead-letter": DeadLetter,
    "upgrade-request": UpgradeRequest,
    "upgrade-outcome": UpgradeOutcome,
    "explanation": Explanation,
}


def json_schemas() -> dict[str, str]:
    """File name -> JSON Schema text for every model."""
    return {
        f"{name}.schema.json": json.dumps(model.model_json_schema(), indent=2, sort_keys=True) + "\n"
        for name, model in MODELS.items()
    }


def write_schemas(directory: str | Path) -> list[Path]:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in json_schemas().items():
        path = directory / name
        path.write_text(text)
        written.append(path)
    return written
