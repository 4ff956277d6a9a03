class Fake:
    __class__ = str


def f():
    if isinstance(Fake(), str):
        return [][0]
    return 1


Y = f()


def probe(x: int) -> int:
    return x
