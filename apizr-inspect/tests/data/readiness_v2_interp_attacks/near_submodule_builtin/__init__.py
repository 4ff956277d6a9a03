from .len import X  # binds `len` in this package too


def f():
    return len([])


Y = f()


def probe(x: int) -> int:
    return x
