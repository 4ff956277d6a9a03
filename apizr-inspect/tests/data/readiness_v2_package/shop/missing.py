from .base import NOPE


def m(x: int) -> int:
    return x + NOPE
