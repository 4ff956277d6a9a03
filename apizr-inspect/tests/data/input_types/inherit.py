"""Dataclasses inheriting from a proved dataclass of the module."""
from dataclasses import dataclass


@dataclass
class Base:
    x: int
    label: str = "b"


@dataclass
class Derived(Base):
    label: str = "d"
    z: float = 0.0


@dataclass(frozen=True)
class Frozen:
    x: int


@dataclass(frozen=True)
class FrozenToo(Frozen):
    y: int = 1


def grow(d: Derived, f: FrozenToo) -> Derived:
    return d

