from .grow import grow

grow()


def probe(x: int) -> int:
    return x
