"""Near miss: `total_ordering` over an enum that defines no ordering method raises
`ValueError` when the class is made, so the enum is no input type."""
from enum import Enum
from functools import total_ordering


@total_ordering
class Unit(Enum):
    SECONDS = 0
    MINUTES = 1


def coarser(unit: Unit) -> int:
    return 1
