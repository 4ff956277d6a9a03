__all__ = ["probe"]
__all__.append("other")


def probe(x: int) -> int:
    return x
