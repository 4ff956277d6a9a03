"""Readiness v2 input types: Enum (by value), dataclass, NamedTuple, Literal."""
from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, ClassVar, Literal, NamedTuple, Optional, TypeAlias

if TYPE_CHECKING:
    Score = int | float


class Color(Enum):
    """A plain enum: its JSON form is the member values."""

    RED = "red"
    GREEN = "green"
    ANSWER = 42


class Size(str, enum.Enum):
    SMALL = "s"
    LARGE = "l"


@dataclass(frozen=True)
class Point:
    x: int
    y: int = 0
    label: Optional[str] = field(default=None)
    unit: ClassVar[str] = "px"

    def norm(self) -> int:
        return abs(self.x) + abs(self.y)


class Pair(NamedTuple):
    left: str
    right: float = 1.5


@dataclasses.dataclass
class Shape:
    color: Color
    corners: list[Point] = dataclasses.field(default_factory=list)
    size: Optional[Size] = None


def paint(shape: Shape, mode: Literal["fill", "line", 1]) -> Point:
    """Uses every kind."""
    return Point(x=len(shape.corners), y=1 if mode == "fill" else 0)


def pick(color: Color, pair: Pair) -> Color:
    return color


def walk(points: list[Point], size: Optional[Size] = None) -> Pair:
    return Pair(left=str(len(points)))


Corners: TypeAlias = list[Point]
Mode = Literal["fill", "line"]


def outline(corners: Corners, mode: Mode, score: Score = 0) -> Optional[Corners]:
    """Aliases (one only for type checkers) stand for their value."""
    return corners
