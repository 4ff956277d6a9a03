from enum import IntEnum

class Level(IntEnum):
    LOW = "low"


def probe(x: int) -> int:
    return x
