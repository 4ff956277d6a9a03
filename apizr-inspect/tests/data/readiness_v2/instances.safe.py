"""Instances of the module's classes at import, where instantiating runs only stores."""
from typing import NamedTuple


class Item(NamedTuple):
    pattern: str
    builder: str
    tags: str = ""


class LookupDict(dict):
    """requests' status-code table: a dict subclass that stores its name."""

    def __init__(self, name=None):
        self.name = name
        super().__init__()


class Point:
    def __init__(self, x, y=0, *, label="p"):
        """Stores only."""
        self.x = x
        self.y = y
        self.label = label
        self.kind = "point"


class Marker:
    pass


class Weekday:
    """dateutil's `weekday`: stores only into its slots."""

    __slots__ = ["weekday", "n"]

    def __init__(self, weekday, n=None):
        self.weekday = weekday
        self.n = n


ITEMS = [Item("a+", "double", "strong,em"), Item(pattern="b", builder="single")]
codes = LookupDict(name="status_codes")
ORIGIN = Point(0, label="origin")
MARK = Marker()
MONDAY = Weekday(0)


class Processor:
    PATTERNS = [Item("c", "x"), Point(1, 2)]


def probe(x: int) -> int:
    return x
