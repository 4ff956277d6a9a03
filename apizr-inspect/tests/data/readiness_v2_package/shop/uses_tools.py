from . import tools
from .tools import joined, pair as PAIR

# Calls of a proved sibling's pure functions, proved in its globals (`SEP`).
PAIRS = (PAIR("a", "b"), tools.pair(1, 2))
NAME = joined("a", "b")
POWERS = [10**x for x in (3, 6, 100)]


def uses_tools(x: int) -> int:
    return x
