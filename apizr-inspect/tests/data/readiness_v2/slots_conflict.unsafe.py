class Point:
    __slots__ = ("x", "y")
    # ValueError: 'x' in __slots__ conflicts with class variable.
    x = 0


def probe(x: int) -> int:
    return x
