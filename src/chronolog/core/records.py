"""``@record``: the ``@dataclass(slots=True)`` of the classes ``chronolog run`` imports.

Why not ``dataclasses``: creating a dataclass costs about 0.7 ms (six
functions compiled one by one, ``inspect.signature`` for a missing
docstring, the class built twice for its slots), over 15 ms of start-up for
the classes on the run path.  A record compiles only its ``__init__`` (the
other methods are closures) and has the methods of the dataclass it replaces,
with the same semantics: ``__init__`` (defaults, ``default_factory``),
``__repr__``, ``__eq__`` over the compared fields, ``__match_args__`` and
``__slots__``; with ``frozen=True`` also ``__hash__`` (the same values),
assignments raising ``dataclasses.FrozenInstanceError`` and the dataclass's
pickle state.  ``dataclasses.fields``, ``replace``, ``asdict`` and
``is_dataclass`` work too: ``__dataclass_fields__`` is built on first use.

Supported: fields declared by annotations in the class body (no inheritance
of fields, no ``ClassVar``/``InitVar``), ``field(default=..., default_factory=...,
compare=...)``; the class defines none of the generated methods itself.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T", bound=type)

_MISSING: Any = object()
_GENERATED = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__", "__slots__")


class _Field:
    """What ``field()`` declares (the subset of ``dataclasses.field`` records support)."""

    __slots__ = ("default", "default_factory", "compare")

    def __init__(self, default: Any, default_factory: Callable[[], Any] | None, compare: bool) -> None:
        self.default = default
        self.default_factory = default_factory
        self.compare = compare


def field(*, default: Any = _MISSING, default_factory: Callable[[], Any] | None = None, compare: bool = True) -> Any:
    """Like ``dataclasses.field``: a default, a default factory, or a field left out of ``__eq__``/``__hash__``."""
    if default is not _MISSING and default_factory is not None:
        raise ValueError("cannot specify both default and default_factory")
    return _Field(default, default_factory, compare)


@dataclass_transform(field_specifiers=(field,))  # type checkers read a record as a dataclass
def record(cls: T | None = None, /, *, frozen: bool = False) -> Any:
    """Class decorator: ``@record`` for ``@dataclass(slots=True)``, ``@record(frozen=True)``
    for ``@dataclass(frozen=True, slots=True)``."""

    def wrap(cls: T) -> T:
        return _build(cls, frozen)

    return wrap if cls is None else wrap(cls)


def _build(cls: T, frozen: bool) -> T:
    ns = dict(cls.__dict__)
    names = tuple(ns.get("__annotations__", {}))
    for name in _GENERATED:
        if name in ns and not (name == "__hash__" and ns[name] is None):
            raise TypeError(f"{cls.__name__} defines {name}")
    specs = {name: _spec(ns.pop(name, _MISSING)) for name in names}
    compared = [name for name in names if specs[name].compare]

    env: dict[str, Any] = {"_object_setattr": object.__setattr__, "_MISSING": _MISSING}
    params = []
    body = []
    has_default = False
    for name in names:
        spec = specs[name]
        if spec.default_factory is not None:
            env[f"_factory_{name}"] = spec.default_factory
            params.append(f"{name}=_MISSING")
            has_default = True
            value = f"_factory_{name}() if {name} is _MISSING else {name}"
        else:
            if spec.default is not _MISSING:
                env[f"_default_{name}"] = spec.default
                params.append(f"{name}=_default_{name}")
                has_default = True
            elif has_default:
                raise TypeError(f"non-default argument {name!r} follows default argument")
            else:
                params.append(name)
            value = name
        body.append(f"_object_setattr(self, {name!r}, {value})" if frozen else f"self.{name} = {value}")
    source = [f"def __init__(self, {', '.join(params)}):", *(f"    {line}" for line in body or ["pass"])]
    exec("\n".join(source), env)  # noqa: S102 (generated from the class's own field names)
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    key = _key(compared)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    def __repr__(self: Any) -> str:
        return f"{self.__class__.__qualname__}({', '.join(f'{name}={getattr(self, name)!r}' for name in names)})"

    methods: dict[str, Any] = {"__init__": init, "__repr__": reprlib.recursive_repr()(__repr__), "__eq__": __eq__}
    if frozen:

        def __hash__(self: Any) -> int:
            return hash(key(self))

        methods.update(__hash__=__hash__, __setattr__=_frozen_setattr, __delattr__=_frozen_delattr,
                       __getstate__=_frozen_getstate, __setstate__=_frozen_setstate)
    else:
        methods["__hash__"] = None  # mutable: unhashable, as a dataclass with eq and without frozen
    for method_name in ("__repr__", "__eq__", "__hash__"):
        if methods[method_name] is not None:
            methods[method_name].__qualname__ = f"{cls.__qualname__}.{method_name}"
    ns.update(methods)
    ns["__slots__"] = names
    ns["__match_args__"] = names
    ns["__dataclass_fields__"] = _LazyFields({name: specs[name] for name in names}, frozen)
    ns.pop("__dict__", None)
    ns.pop("__weakref__", None)
    new = type(cls)(cls.__name__, cls.__bases__, ns)
    new.__qualname__ = cls.__qualname__
    return new


def _key(names: list[str]) -> Callable[[Any], tuple]:
    """The tuple of the compared fields' values, as a dataclass's ``__eq__`` and ``__hash__`` build it."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        get = attrgetter(names[0])
        return lambda obj: (get(obj),)
    return lambda obj: ()


def _spec(value: Any) -> _Field:
    return value if isinstance(value, _Field) else _Field(value, None, True)


def _frozen_setattr(self: object, name: str, value: object) -> None:
    import dataclasses  # noqa: PLC0415 (start-up: dataclasses only when asked (_LazyFields))

    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: object, name: str) -> None:
    import dataclasses  # noqa: PLC0415 (start-up: dataclasses only when asked (_LazyFields))

    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _frozen_getstate(self: Any) -> list:
    """The state a frozen slots dataclass pickles: its field values in order."""
    return [getattr(self, name) for name in self.__slots__]


def _frozen_setstate(self: Any, state: list) -> None:
    for name, value in zip(self.__slots__, state):
        object.__setattr__(self, name, value)


class _LazyFields:
    """``__dataclass_fields__``, built (with ``dataclasses``) on first use and then cached on the class."""

    def __init__(self, specs: dict[str, _Field], frozen: bool) -> None:
        self.specs = specs
        self.frozen = frozen

    def __get__(self, obj: object, cls: type) -> dict:
        import dataclasses  # noqa: PLC0415 (start-up: dataclasses only when asked (_LazyFields))

        def as_field(spec: _Field) -> Any:
            if spec.default_factory is not None:
                return dataclasses.field(default_factory=spec.default_factory, compare=spec.compare)
            if spec.default is not _MISSING:
                return dataclasses.field(default=spec.default, compare=spec.compare)
            return dataclasses.field(compare=spec.compare)

        annotations = cls.__dict__.get("__annotations__", {})
        shadow = dataclasses.make_dataclass(
            cls.__name__,
            [(name, annotations.get(name, Any), as_field(spec)) for name, spec in self.specs.items()],
            frozen=self.frozen,
        )
        fields = shadow.__dataclass_fields__  # type: ignore[attr-defined]
        type.__setattr__(cls, "__dataclass_fields__", fields)
        return fields
