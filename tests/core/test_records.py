"""``@record`` (chronolog/core/records.py) behaves as the ``@dataclass(slots=True)`` it replaces."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from chronolog.core.records import field, record


class Dc:
    @dataclasses.dataclass(slots=True)
    class Node:
        name: str
        size: int = 0
        tags: tuple = dataclasses.field(default_factory=tuple)
        loc: object = dataclasses.field(default=None, compare=False)

    @dataclasses.dataclass(frozen=True, slots=True)
    class Frozen:
        name: str
        size: int = 0
        tags: tuple = dataclasses.field(default_factory=tuple)
        loc: object = dataclasses.field(default=None, compare=False)


class Rec:
    @record
    class Node:
        name: str
        size: int = 0
        tags: tuple = field(default_factory=tuple)
        loc: object = field(default=None, compare=False)

    @record(frozen=True)
    class Frozen:
        name: str
        size: int = 0
        tags: tuple = field(default_factory=tuple)
        loc: object = field(default=None, compare=False)


@pytest.mark.parametrize("kind", ["Node", "Frozen"])
def test_same_methods_and_values(kind: str) -> None:
    dc, rec = getattr(Dc, kind), getattr(Rec, kind)
    for args, kwargs in [(("a",), {}), (("a", 3), {"loc": "x"}), ((), {"name": "b", "tags": (1,)})]:
        d, r = dc(*args, **kwargs), rec(*args, **kwargs)
        assert repr(d).replace("Dc.", "") == repr(r).replace("Rec.", "")
        assert r == rec(*args, **kwargs)
        assert r == dataclasses.replace(r, loc="other")
        assert r != dataclasses.replace(r, size=9)
        assert r.__eq__(d) is NotImplemented
        assert pickle.loads(pickle.dumps(r)) == r
        assert dataclasses.asdict(d) == dataclasses.asdict(r)
    assert rec.__slots__ == dc.__slots__
    assert rec.__match_args__ == dc.__match_args__
    assert [(f.name, f.compare) for f in dataclasses.fields(rec)] == [(f.name, f.compare) for f in dataclasses.fields(dc)]
    assert dataclasses.is_dataclass(rec("a"))
    with pytest.raises(TypeError) as exc:
        rec()
    with pytest.raises(TypeError) as exc2:
        dc()
    assert str(exc.value) == str(exc2.value).replace("Dc.", "Rec.")


def test_frozen() -> None:
    d, r = Dc.Frozen("a", 1, loc="x"), Rec.Frozen("a", 1, loc="x")
    assert hash(d) == hash(r) == hash(Rec.Frozen("a", 1, loc="y"))
    assert d.__getstate__() == r.__getstate__()
    for obj in (d, r):
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'size'"):
            obj.size = 2  # type: ignore[misc]
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'size'"):
            del obj.size  # type: ignore[misc]


def test_mutable() -> None:
    r = Rec.Node("a")
    r.size = 5
    assert r.size == 5
    assert Rec.Node.__hash__ is None
    with pytest.raises(AttributeError):
        r.other = 1  # type: ignore[attr-defined]
