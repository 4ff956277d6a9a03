LIMIT = UNDEFINED + 1


def probe(x: int) -> int:
    return x
