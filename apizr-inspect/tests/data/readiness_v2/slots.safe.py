class Point:
    __slots__ = ("x", "y")

    def norm(self) -> int:
        return 0


class Tagged(Point):
    __slots__ = "tag"


class Pair(tuple):
    __slots__ = ()


class Named(str):
    __slots__ = ["label"]


def probe(x: int) -> int:
    return x
