def f():
    try:
        {}["k"]
    except len:
        return 1
    except KeyError:
        return 2
    return 3


Y = f()


def probe(x: int) -> int:
    return x
