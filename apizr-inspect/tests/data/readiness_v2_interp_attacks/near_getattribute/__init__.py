class Other:
    pass


class Fake:
    def __getattribute__(self, name):
        raise RuntimeError("hook ran")


def f():
    if isinstance(Fake(), Other):
        return 1
    return 2


Y = f()


def probe(x: int) -> int:
    return x
