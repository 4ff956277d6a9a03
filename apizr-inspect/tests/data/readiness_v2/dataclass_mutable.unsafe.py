from dataclasses import dataclass

@dataclass
class Bag:
    items: list = []


def probe(x: int) -> int:
    return x
