from . import records
from .records import Item as Pattern
from .records import LookupDict, Plugin

PATTERNS = [Pattern("a+", "double"), records.Item(pattern="b", builder="single")]
codes = LookupDict(name="status_codes")


class Strong(Plugin):
    PATTERNS = [Pattern("c", "x")]


class Table(records.Plugin, dict):
    pass


def uses_records(x: int) -> int:
    return x + len(PATTERNS) + len(codes)
