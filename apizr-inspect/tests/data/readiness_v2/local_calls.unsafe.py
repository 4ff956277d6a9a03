import os
from abc import ABC


def _home():
    return os.environ["HOME"]


def _table(n):
    # Called with an int: `1 + "x"` raises TypeError.
    return [n + "x"]


def _later():
    return LATER


def _loop():
    return _loop()


def _limit():
    return LIMIT  # called in K's body: LIMIT is K's name, not a global (NameError)


class _Counted:
    def __init__(self):
        # Runs code beyond stores: `int("one")` raises ValueError.
        self.n = int("one")


class _Abstract(ABC):
    pass


HOME = _home()
T = _table(1)
EARLY = _later()
LATER = 1
L = _loop()
C = _Counted()
A = _Abstract()
B = chr(0x110000)
NESTED = [[1]]
S = set(NESTED)


class K:
    LIMIT = 1
    v = _limit()


def probe(x: int) -> int:
    return x
