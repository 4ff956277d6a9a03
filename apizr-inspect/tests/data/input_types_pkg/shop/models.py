from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple


class Color(str, Enum):
    RED = "red"
    GREEN = "green"


@dataclass
class Point:
    x: int
    y: int = 0


class Pair(NamedTuple):
    left: str
    right: float = 0.0


@dataclass
class Tagged:
    point: Point
    color: Color


class Loose:
    pass


@dataclass
class Holder:
    payload: object
