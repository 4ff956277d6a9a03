class Box:
    pass


def f():
    b = Box()
    b.missing.attr: int
    return 1


Y = f()


def probe(x: int) -> int:
    return x
