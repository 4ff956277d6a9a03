def depth(n):
    return depth(n + 1)


deepest = depth(0)


def probe(x: int) -> int:
    return x
