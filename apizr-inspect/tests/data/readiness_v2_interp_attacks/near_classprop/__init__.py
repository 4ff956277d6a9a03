class Fake:
    @property
    def __class__(self):
        return str


def f():
    x = Fake()
    if isinstance(x, str):
        return [][0]
    return 1


Y = f()


def probe(x: int) -> int:
    return x
