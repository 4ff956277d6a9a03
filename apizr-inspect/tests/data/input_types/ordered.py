"""Enums under `functools.total_ordering` (humanize.time.Unit's shape): the decorator only adds
comparison methods when the body defines one, so the enum is still a literal of its values."""
import functools
from enum import Enum
from functools import total_ordering


@total_ordering
class Unit(Enum):
    SECONDS = 0
    MINUTES = 1
    HOURS = 2

    def __lt__(self, other):
        if self.__class__ is other.__class__:
            return self.value < other.value
        return NotImplemented


@functools.total_ordering
class Size(Enum):
    SMALL = "s"
    LARGE = "l"

    def __ge__(self, other):
        return self.value >= other.value


def coarser(unit: Unit, size: Size) -> Unit:
    return max(unit, Unit.MINUTES)
