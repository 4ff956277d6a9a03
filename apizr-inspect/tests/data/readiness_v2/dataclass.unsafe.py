from dataclasses import dataclass

@dataclass
class Point:
    x: int = 0
    y: int


def probe(x: int) -> int:
    return x
