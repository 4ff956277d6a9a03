from .cycle_b import B

A = 1


def a(x: int) -> int:
    return x + A + B
