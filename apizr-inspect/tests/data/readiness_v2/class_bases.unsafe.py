# Near misses: an MRO Python cannot linearise; two bases that each bring a layout.
class A:
    pass


class B(A):
    pass


class Bad(A, B):
    pass


class D(dict):
    pass


class L(list):
    pass


class Layouts(D, L):
    pass


class S1:
    __slots__ = ("a",)


class S2:
    __slots__ = ("b",)


class Slots(S1, S2):
    pass


def probe(x: int) -> int:
    return x
