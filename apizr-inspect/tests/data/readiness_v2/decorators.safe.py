import functools
from typing import overload

@functools.lru_cache(maxsize=128)
def cached(n: int) -> int:
    return n

@functools.cache
def cached2(n: int) -> int:
    return n


def probe(x: int) -> int:
    return x
