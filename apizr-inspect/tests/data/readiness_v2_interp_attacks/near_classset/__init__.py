class Other:
    pass


class C:
    def __init__(self):
        self.__class__ = Other


def f():
    if isinstance(C(), Other):
        return [][0]
    return 1


Y = f()


def probe(x: int) -> int:
    return x
