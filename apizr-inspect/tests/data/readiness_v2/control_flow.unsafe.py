for i in range(3):
    pass


def probe(x: int) -> int:
    return x
