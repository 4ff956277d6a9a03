def util():
    return 1


from .util import X

Y = util()


def probe(x: int) -> int:
    return x
