from typing import NamedTuple

class Pair(NamedTuple):
    _left: int


def probe(x: int) -> int:
    return x
