"""Classes v2 cannot use as JSON types: each parameter keeps READY-013 naming why."""
from dataclasses import dataclass, field
from enum import Enum, auto
from typing import NamedTuple

Blob = memoryview
Twice = int
Twice = str


class Auto(str, Enum):
    A = auto()


class Base:
    x: int


@dataclass
class Derived(Base):
    y: int


@dataclass
class Root:
    x: int
    label: str = "r"


@dataclass
class Late(Root):
    w: int


@dataclass(frozen=True)
class Ice:
    x: int


@dataclass
class Thawed(Ice):
    y: int = 1


@dataclass
class Hidden:
    x: int
    secret: int = field(init=False, default=0)


class Opaque(NamedTuple):
    payload: memoryview


def uses_auto(a: Auto) -> int:
    return 1


def uses_derived(d: Derived) -> int:
    return 1


def uses_late(l: Late, t: Thawed) -> int:
    return 1


def uses_hidden(h: Hidden) -> int:
    return 1


def uses_opaque(o: Opaque) -> int:
    return 1


def uses_alias(b: Blob, t: Twice) -> int:
    return 1
