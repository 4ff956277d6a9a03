from typing import TypeVar
T = TypeVar("T", int)


def probe(x: int) -> int:
    return x
