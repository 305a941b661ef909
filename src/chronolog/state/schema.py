"""The schema of stored state: every stored kind a tagged msgspec Struct with its own version.

A stage's snapshot is stored as ``{"kind": <stable name>, "version": N,
"stage": {...}}``.  The kind is a stable name (``Stage.kind``: "reasoner"),
never a class name, so renaming a class cannot break a restore; each kind
carries its own version, so one kind can change its layout without touching
the others; and each version has a migration from the one before, so state
written by an earlier build restores after an upgrade.  Decoding validates
the record against the kind's Struct (types of every field, no missing
ones), which replaces the stages' hand-written checks; what a stage keeps
of a dialect (the LARS reasoner's and answer writer's state, an evaluator's
``export_state``) stays plain data, checked by its owner's ``import_state``.

Versions:

* 1: state format 1 (main before this module): ``{"format": 1, "kind":
  <class name>, "stage": {...}}``, one version for every kind.
* 2: the stable kind name and a version per kind; an evaluator stage's
  input log is journaled (``inputs`` entries per time point) instead of
  being in its snapshot.

Journal entries (the growing parts of a state, ``state.journal``) are stored
by journal name; ``journal_codec`` says how each is written and read back.
Unknown kinds, versions newer than this build's and records that do not fit
their Struct are a ``StateError`` naming what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from chronolog.evaluator import StateError
from chronolog.state import journal
from chronolog.state.codec import decode, encode, inflate

Args = list[str | int]


class IngestState(msgspec.Struct, forbid_unknown_fields=True):
    latest_by_input: list[tuple[int, int]]
    first: int | None
    now: int | None
    dead_letters: int
    too_late: int
    quiet: bool = True


class GroundingState(msgspec.Struct, forbid_unknown_fields=True):
    first: int | None
    latest: int | None
    closed: int | None
    pending: list[tuple[int, list[tuple[str | None, Args, bool]]]]
    last_input: float
    quiet: bool | None = None  # no input since the last idle closing (None: a state from before the flag)


class ReasonerState(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    lower: list[tuple[int, int | None]]  # [stratum, its latest time received]
    reasoner: dict[str, Any]  # Reasoner.export_state (the program it started with; before the first upgrade's T)
    closed: int | None
    outbox: list[str]  # stratum records not sent yet
    # the program upgrades applied (``chronolog upgrade``): {"id", "version", "at"} each, oldest first
    upgrades: list[dict[str, Any]] = []
    program: list[list[str]] | None = None  # the files of the program in force ([name, text]; None: the first)
    # the stratum's later program versions, oldest first: {"sources", "start", "reasoner", "log"} each
    versions: list[dict[str, Any]] = []
    # the program version the state was made by, before any upgrade (stages/program.py; None: not recorded)
    base_version: str | None = None
    # the oldest version kept, once the ones before it were dropped (a finite retention):
    # {"sources", "start"}, its reasoner's state in ``reasoner``; None: the program it started with
    first: dict[str, Any] | None = None
    # a stratum an upgrade added, starting from the lower strata's seeds, and the seeds it sends
    # (dialects/lars/seeds.py): {"stash", "joining", "seeding"}; None: none about (at an epoch's end)
    seeds: dict[str, Any] | None = None


class OutputState(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    lower: list[tuple[int, int | None]]
    reasoner: dict[str, Any]
    writer: dict[str, Any]  # AnswerWriter.export_state
    # the program version the state was made by, and what of it the output depends on (its
    # strata and answer predicates: ``OutputStage.program_refusal``); None: not recorded
    base_version: str | None = None
    layout: str | None = None
    # the predicates it imported ("p/1"), so that one restarted to serve an upgrade's added
    # predicates re-evaluates where their stored content begins; None: not recorded
    known: list[str] | None = None
    # how far back its evaluations' answer atoms may lie (``Reasoner.output_reach``, widened by
    # a later program version's @-heads: ``OutputStage.widen``); None: unbounded, or not recorded
    reach: int | None = None
    # whether a later program version sends a predicate in another shape (``Reasoner.shaped``)
    reshape: bool = False


class ChainState(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    ingest: IngestState | None
    grounding: GroundingState
    closed: int | None
    reasoner: dict[str, Any]  # empty once upgraded: the program versions hold it (``versions``)
    writer: dict[str, Any]
    # the program upgrades applied (``chronolog upgrade``): {"id", "version", "at"} each, oldest first
    upgrades: list[dict[str, Any]] = []
    # once upgraded: the program versions' ``Versions.export_state`` (whole, no journals)
    versions: dict[str, Any] | None = None
    # the program version the state was made by, before any upgrade (stages/program.py; None: not recorded)
    base_version: str | None = None


class EvaluatorState(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True):
    latest: str | None  # times as ``evaluator.time_text`` writes them ("7/2")
    done: str | None
    dirty: bool
    dead_letters: int
    # the evaluator's export_state, without its input log; once upgraded, the program versions'
    # (``Versions.export_head``): the newest version's row without its log, each older one
    # ``{"journal": i}``, its row the ``versions`` journal's entry i (a state written before
    # holds every row whole)
    evaluator: dict[str, Any]
    # the input log items not in the ``inputs`` journal: only a record migrated
    # from version 1 has any (the next commit journals them)
    inputs: list[list[Any]] = []
    # the program upgrades applied (``chronolog upgrade``): {"id", "version", "at"} each, oldest first
    upgrades: list[dict[str, Any]] = []
    # the program version the state was made by, before any upgrade (stages/program.py; None: not recorded)
    base_version: str | None = None


Migration = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Kind:
    """One stored kind: its current Struct (the ``stage`` part of a snapshot),
    its version, and the migration from each earlier version to the next."""

    name: str
    struct: type[msgspec.Struct]
    version: int
    migrations: dict[int, Migration] = field(default_factory=dict)
    record: type[msgspec.Struct] = field(init=False)

    def __post_init__(self) -> None:
        record = msgspec.defstruct(f"{self.struct.__name__}Record", [("version", int), ("stage", self.struct)],
                                   tag=self.name, tag_field="kind", forbid_unknown_fields=True)
        object.__setattr__(self, "record", record)


# format 1 stored each stage under its class name
V1_NAMES = {"IngestStage": "ingest", "GroundingStage": "grounding", "ReasonerStage": "reasoner",
            "OutputStage": "output", "ChainStage": "chain", "EvaluatorStage": "evaluator"}


def _from_v1(data: dict[str, Any]) -> dict[str, Any]:
    """Format 1 -> version 2: the stable kind name, a version of its own, no global format."""
    return {"kind": V1_NAMES[data["kind"]], "version": 2, "stage": data["stage"]}


def _evaluator_from_v1(data: dict[str, Any]) -> dict[str, Any]:
    """As ``_from_v1``; the evaluator's input log leaves its state for ``inputs``
    (version 2 journals it: the next commit writes it as journal entries)."""
    out = _from_v1(data)
    stage = dict(out["stage"])
    evaluator = dict(stage["evaluator"])
    stage["inputs"] = evaluator.pop("inputs", [])
    stage["evaluator"] = evaluator
    out["stage"] = stage
    return out


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("ingest", IngestState, 2, {1: _from_v1}),
    Kind("grounding", GroundingState, 2, {1: _from_v1}),
    Kind("reasoner", ReasonerState, 2, {1: _from_v1}),
    Kind("output", OutputState, 2, {1: _from_v1}),
    Kind("chain", ChainState, 2, {1: _from_v1}),
    Kind("evaluator", EvaluatorState, 2, {1: _evaluator_from_v1}),
)}


class _Head(msgspec.Struct):
    """What says which kind and version a snapshot is (other fields ignored)."""

    kind: str = ""
    version: int | None = None
    format: Any = None  # format 1 had no version of its own


def snapshot_bytes(stage: Any) -> bytes:
    """``stage``'s snapshot: its ``export_state`` Struct under its stable kind."""
    kind = KINDS[stage.kind]
    return encode(kind.record(kind.version, stage.export_state()))


def read_snapshot(blob: bytes, expect: str) -> msgspec.Struct:
    """The ``stage`` Struct of a snapshot of kind ``expect``, migrated to this
    build's version; ``StateError`` for anything else."""
    raw = inflate(blob)
    try:
        head = msgspec.json.decode(raw, type=_Head)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
        decode(raw)  # says why, if it is not JSON at all
        raise StateError(f"state is not a snapshot object ({exc})") from None
    version, name = head.version, head.kind
    if version is None:  # format 1
        if head.format != 1:
            raise StateError(f"unknown state format version {head.format!r} (this build reads format 1 "
                             f"and versioned kinds)")
        version, name = 1, V1_NAMES.get(name, name)
    kind = KINDS.get(name)
    if kind is None:
        raise StateError(f"state of an unknown kind {head.kind!r} (this build reads {', '.join(KINDS)})")
    if name != expect:
        raise StateError(f"state of a {name!r} stage, not of a {expect!r}")
    if not 1 <= version <= kind.version:
        raise StateError(f"state of kind {name!r} version {version} (this build reads versions 1 to {kind.version})")
    try:
        if version == kind.version:
            got = msgspec.json.decode(raw, type=kind.record)
        else:
            data = decode(raw)
            for v in range(version, kind.version):
                data = kind.migrations[v](data)
            got = msgspec.convert(data, kind.record)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as exc:
        raise StateError(f"{name} state version {version}: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a migration met a malformed record
        raise StateError(f"{name} state version {version} does not migrate ({type(exc).__name__}: {exc})") from None
    return got.stage  # type: ignore[attr-defined]


# ---------------------------------------------------------------- journals


def _rows(value: object) -> list:
    """An evaluator's input log items: lists, checked further by its ``import_state``."""
    if type(value) is not list or any(type(item) is not list for item in value):
        raise TypeError("an input log entry is not a list of lists")
    return value


def _version_row(value: object) -> dict:
    """An older program version's row (``Versions.export_row``): an object, checked further by
    ``versions.restore``."""
    if type(value) is not dict:
        raise TypeError("a program version entry is not an object")
    return value


# An evaluator's input log and its older program versions (EvaluatorStage) are every
# dialect's; the LARS stages register their own journals' codecs (dialects/lars/stages.py).
journal.register_journal_codecs({"inputs": (list, _rows), "versions": (dict, _version_row)})


def journal_codec(name: str) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """(to data, from data) for the entries of the journal ``name``; ``StateError`` for a journal
    no stage registered."""
    try:
        return journal.journal_codec(name)
    except ValueError:
        raise StateError(f"journal entry of unknown journal {name!r}") from None
