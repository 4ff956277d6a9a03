def later(x: int) -> int:
    from .unsafe import mode

    return mode(x)


def fine(x: int) -> int:
    from .base import kinds

    return x + len(kinds())
