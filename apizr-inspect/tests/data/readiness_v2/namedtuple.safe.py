import collections
from typing import NamedTuple

class Pair(NamedTuple):
    left: int
    right: str = ""

    def swap(self) -> "Pair":
        return self

Version = collections.namedtuple("Version", "major minor patch")


def probe(x: int) -> int:
    return x
