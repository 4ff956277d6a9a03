def util():
    return 1


from .util import X


def f():
    return util()


Y = f()


def probe(x: int) -> int:
    return x
