from enum import Enum

class Color(Enum):
    RED = 1

class More(Color):
    BLUE = 2


def probe(x: int) -> int:
    return x
