"""The explicit encoding of service state: plain JSON values, checked on the way in.

Everything a service keeps is written as JSON (msgspec: exact for integers of
any size, strings stay strings) and read back by decoders that check every
value's shape and type.  Nothing stored is ever unpickled or evaluated, so a
forged record can at worst be rejected: a decoder raises ``StateError``
saying what is wrong, never another exception.

Values and their JSON form:

* args: an array of constants (string, integer, float, bool, null) or nested
  arrays; read back as tuples (arrays are never a constant themselves);
* a predicate key ``(pred, arity)``: ``[pred, arity]``; the answers of a
  padded predicate ``("#answers", (pred, arity))``: ``["#answers", [pred, arity]]``;
* facts of the input log (one time point): ``[[pred, arity, [args, ...]], ...]``,
  consecutive facts of one predicate grouped, arrival order kept;
* atoms (a stratum's content): ``[[key, args], ...]``;
* ``Imported``: ``[consistent, atoms]``.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import msgspec

from chronolog.engine.core import ANSWERS, Imported
from chronolog.evaluator import StateError
from chronolog.events import OnePredicate

FORMAT = 1  # version of the service state encoding; bump on any incompatible change

_CONSTANTS = (str, int, float, bool, type(None))
_encoder = msgspec.json.Encoder()


def dumps(value: Any) -> bytes:
    """JSON of plain data (tuples and sets are written as arrays)."""
    return _encoder.encode(value)


def loads(data: bytes | memoryview) -> Any:
    """JSON to plain data; ``StateError`` for anything that is not JSON."""
    try:
        return msgspec.json.decode(data)
    except (msgspec.DecodeError, UnicodeDecodeError, ValueError, TypeError, RecursionError) as exc:
        raise StateError(f"not JSON: {exc}") from None


# ---------------------------------------------------------------- checked scalars


def fail(what: str, value: Any) -> StateError:
    shown = repr(value)
    return StateError(f"expected {what}, got {shown[:60]}{'...' if len(shown) > 60 else ''}")


def integer(v: Any) -> int:
    if type(v) is not int:
        raise fail("an integer", v)
    return v


def opt_integer(v: Any) -> int | None:
    return None if v is None else integer(v)


def flag(v: Any) -> bool:
    if type(v) is not bool:
        raise fail("true or false", v)
    return v


def text(v: Any) -> str:
    if type(v) is not str:
        raise fail("a string", v)
    return v


def array(v: Any, length: int | None = None) -> list:
    if type(v) is not list or (length is not None and len(v) != length):
        raise fail("an array" if length is None else f"an array of {length}", v)
    return v


def obj(v: Any, *required: str) -> dict:
    """A JSON object holding at least the ``required`` fields."""
    if type(v) is not dict:
        raise fail("an object", v)
    missing = [k for k in required if k not in v]
    if missing:
        raise StateError(f"missing field(s) {', '.join(missing)}")
    return v


def pairs(v: Any, key: Callable[[Any], Any], value: Callable[[Any], Any]) -> dict:
    """A dict stored as ``[[key, value], ...]`` (JSON object keys are strings only)."""
    return {key(k): value(x) for k, x in (array(p, 2) for p in array(v))}


def items(d: dict) -> list[list]:
    return [[k, v] for k, v in d.items()]


# ---------------------------------------------------------------- values


MAX_DEPTH = 64  # nesting of tuples in arguments (deeper is rejected, never a recursion error)


def args(v: Any, depth: int = 0) -> tuple:
    """Arguments (or any tuple value): arrays become tuples, nested up to MAX_DEPTH."""
    if type(v) is not list:
        raise fail("an array of arguments", v)
    if depth > MAX_DEPTH:
        raise StateError(f"arguments nested deeper than {MAX_DEPTH}")
    out = []
    for a in v:
        if type(a) is list:
            out.append(args(a, depth + 1))
        elif isinstance(a, _CONSTANTS):
            out.append(a)
        else:  # pragma: no cover - JSON has no other values
            raise fail("a constant", a)
    return tuple(out)


def pred_key(v: Any) -> tuple[str, int]:
    p, n = array(v, 2)
    n = integer(n)
    if n < 0:
        raise fail("an arity", n)
    return text(p), n


def atom_key(v: Any) -> tuple:
    """``[pred, arity]`` or ``["#answers", [pred, arity]]``."""
    head, rest = array(v, 2)
    if head == ANSWERS:
        return ANSWERS, pred_key(rest)
    return pred_key(v)


def encode_facts(facts: Iterable[tuple[tuple[str, int], tuple]]) -> list:
    if type(facts) is OnePredicate:
        (p, n) = facts.key
        return [[p, n, facts.args]]
    out: list = []
    last = None
    for key, a in facts:
        if key != last:
            out.append([key[0], key[1], []])
            last = key
        out[-1][2].append(a)
    return out


def decode_facts(v: Any) -> list[tuple[tuple[str, int], tuple]]:
    out = []
    for group in array(v):
        p, n, rows = array(group, 3)
        key = pred_key([p, n])
        out.extend((key, args(a)) for a in array(rows))
    return out


def decode_atoms(v: Any) -> frozenset:
    return frozenset((atom_key(k), args(a)) for k, a in (array(x, 2) for x in array(v)))


def encode_atoms(atoms: frozenset) -> frozenset:
    return atoms  # tuples and sets are written as arrays


def encode_imported(imp: Imported | None) -> list | None:
    return None if imp is None else [imp.consistent, imp.content]


def decode_imported(v: Any) -> Imported | None:
    if v is None:
        return None
    ok, content = array(v, 2)
    return Imported(flag(ok), decode_atoms(content))


# ---------------------------------------------------------------- journal values


class ValueCodec(msgspec.Struct, frozen=True):
    """How one journal's values are written and read back."""

    encode: Callable[[Any], Any]
    decode: Callable[[Any], Any]


FACTS = ValueCodec(encode_facts, decode_facts)
IMPORTED = ValueCodec(encode_imported, decode_imported)
ATOMS = ValueCodec(encode_atoms, decode_atoms)
FLAG = ValueCodec(lambda v: v, flag)


def journal_codec(name: str) -> ValueCodec:
    """The codec of a journal by its name in ``Stage.journals()``: ``log``,
    ``imports``, ``lower<j>``, ``lower<j>_ok``, ``sent``, ``sent_ok``."""
    if name == "log":
        return FACTS
    if name == "imports":
        return IMPORTED
    if name.endswith("_ok") and (name == "sent_ok" or name.startswith("lower")):
        return FLAG
    if name == "sent" or (name.startswith("lower") and name[5:].isdigit()):
        return ATOMS
    raise StateError(f"unknown journal {name[:40]!r}")
