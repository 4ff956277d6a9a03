from typing import Optional
Broken = Optional[int, str]


def probe(x: int) -> int:
    return x
