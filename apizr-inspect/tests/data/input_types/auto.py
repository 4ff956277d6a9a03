"""Enum members valued by `auto()`: v2 knows the value where the stdlib fixes it."""
from enum import Enum, IntEnum, StrEnum, auto


class Level(IntEnum):
    LOW = auto()
    MID = 5
    HIGH = auto()


class Mode(StrEnum):
    FAST = auto()
    Slow_Path = auto()


class Plain(Enum):
    A = auto()
    B = auto()


class Mixed(str, Enum):
    A = auto()


class Down(Enum):
    A = 5
    B = 1
    C = auto()


def tune(level: Level, mode: Mode, plain: Plain) -> Mode:
    return mode


def mixed(m: Mixed) -> int:
    return 1


def down(d: Down) -> int:
    return 1
