REG = {}


class A:
    REG["a"] = 1


def f():
    if "a" in REG:
        return [][0]
    return 1


Y = f()


def probe(x: int) -> int:
    return x
