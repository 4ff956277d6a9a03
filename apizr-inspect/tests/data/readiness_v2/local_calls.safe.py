from typing import List, Tuple


def _seg_0() -> List[Tuple[int, str]]:
    """A generated data table, one segment per function."""
    return [(0x0, "3"), (0x1, "V")]


def _seg_1():
    return [(0x2, "X")] + _seg_0()


TABLE = tuple(_seg_0() + _seg_1())
NAMES = list("abc")
PAIRS = list(NAMES)
LETTERS = frozenset("abc")
BACKSLASH = chr(92)


class _Missing:
    def __repr__(self) -> str:
        return "no value"

    def __eq__(self, other: object) -> bool:
        return False


class _Sub(_Missing):
    pass


_missing = _Missing()
_other = _Sub()


def probe(x: int) -> int:
    return x
