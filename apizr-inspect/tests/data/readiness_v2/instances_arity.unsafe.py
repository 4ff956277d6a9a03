from typing import NamedTuple


class Item(NamedTuple):
    pattern: str
    builder: str
    tags: str = ""


# TypeError: missing a required argument: 'builder'.
ITEM = Item("a+")


def probe(x: int) -> int:
    return x
