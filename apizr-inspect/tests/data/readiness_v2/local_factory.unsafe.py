# Near misses: a local read before its assignment, arguments that do not fit, an import in
# the body.
total = 1


def _reads_before_assign(x):
    y = total
    total = x
    return y


A = _reads_before_assign(1)


def _two(a, b):
    return a


B = _two(1)
C = _two(1, 2, 3)
D = _two(1, c=2)


def _imports():
    import json

    return json


E = _imports()


def probe(x: int) -> int:
    return x
