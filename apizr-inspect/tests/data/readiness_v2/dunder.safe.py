__all__ = ["probe"]
__all__ += ["other"]
__version__ = "1.2.3"
__author__ = "me"


def probe(x: int) -> int:
    return x
