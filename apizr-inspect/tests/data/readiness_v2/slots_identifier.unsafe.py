class Point:
    # TypeError: __slots__ must be identifiers.
    __slots__ = ("x y",)


def probe(x: int) -> int:
    return x
