from ..base import kinds


def leaf(x: int) -> int:
    return x + len(kinds())
