import time

COUNTER = {"n": 0}


def bump() -> int:
    COUNTER["n"] += 1
    return COUNTER["n"]


def nap(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def boom() -> int:
    raise ValueError("no")


def pair(a: int) -> tuple[int, int]:
    return (a, a)


def unique(items: list[int]) -> set[int]:
    return set(items)
