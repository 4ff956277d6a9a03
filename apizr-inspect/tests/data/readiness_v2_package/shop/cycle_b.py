from .cycle_a import A

B = 2


def b(x: int) -> int:
    return x + A + B
