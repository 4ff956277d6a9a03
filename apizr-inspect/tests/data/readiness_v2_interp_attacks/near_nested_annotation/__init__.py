def f():
    def inner(x: missing_name):
        return x
    return 1


Y = f()


def probe(x: int) -> int:
    return x
