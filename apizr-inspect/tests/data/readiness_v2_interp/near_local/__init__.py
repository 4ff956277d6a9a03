x = 1


def helper(v):
    return v + 1


def build(x):
    y = helper(x)
    return y


result = build("s")


def probe(x: int) -> int:
    return x
