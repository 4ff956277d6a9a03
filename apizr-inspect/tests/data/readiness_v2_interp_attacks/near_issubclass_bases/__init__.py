class Fake:
    __bases__ = ()


class C:
    pass


def f():
    try:
        issubclass(Fake(), C)
    except TypeError:
        return 1
    return [][0]


Y = f()


def probe(x: int) -> int:
    return x
