"""Readiness v2 input types, called for real: each function fails (execution_failed) unless
the worker handed it instances of the module's own classes."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Literal, NamedTuple, Optional, TypeAlias

if TYPE_CHECKING:
    Score = int | float


class Color(Enum):
    RED = "red"
    GREEN = "green"
    ANSWER = 42


class Size(str, Enum):
    SMALL = "s"
    LARGE = "l"


@dataclass(frozen=True)
class Point:
    x: int
    y: int = 0
    label: Optional[str] = field(default=None)


class Pair(NamedTuple):
    left: str
    right: float = 1.5


@dataclass
class Shape:
    color: Color
    corners: list[Point] = field(default_factory=list)
    size: Optional[Size] = None


def paint(shape: Shape, mode: Literal["fill", "line", 1]) -> Point:
    if type(shape) is not Shape or type(shape.color) is not Color:
        raise TypeError("not converted")
    if not all(type(c) is Point for c in shape.corners):
        raise TypeError("corners not converted")
    if shape.size is not None and type(shape.size) is not Size:
        raise TypeError("size not converted")
    label = "%s/%s/%s" % (shape.color.name, mode, shape.size.name if shape.size else "-")
    return Point(x=len(shape.corners), y=sum(c.x for c in shape.corners), label=label)


def pick(color: Color, pair: Pair) -> Color:
    if type(color) is not Color or type(pair) is not Pair:
        raise TypeError("not converted")
    return Color.ANSWER if pair.right > 2 else Color.GREEN


def walk(points: list[Point], size: Optional[Size] = None) -> Pair:
    if not all(type(p) is Point for p in points) or (size is not None and type(size) is not Size):
        raise TypeError("not converted")
    return Pair(left=",".join("%d:%d" % (p.x, p.y) for p in points), right=float(len(points)))


Corners: TypeAlias = list[Point]


def outline(corners: Corners, score: Score = 0) -> Optional[Corners]:
    if not all(type(c) is Point for c in corners):
        raise TypeError("not converted")
    return [Point(x=c.x + int(score), y=c.y) for c in corners] or None
