from .unsafe import mode


def double(x: int) -> int:
    return mode(x) * 2
