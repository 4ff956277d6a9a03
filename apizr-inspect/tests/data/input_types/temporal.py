"""`datetime` classes as inputs (readiness v2): strict RFC 3339 strings for date, datetime and
time (naive without an offset, aware with one), seconds for timedelta. Each function returns
the repr of what it received, so a served call can be compared with the same call in CPython."""
import datetime
import datetime as dt
from datetime import date, time, timedelta
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from datetime import datetime as Moment


def stamp(value: dt.datetime) -> str:
    return repr(value)


def day(value: date) -> str:
    return repr(value)


def clock(value: time) -> str:
    return repr(value)


def span(value: timedelta) -> str:
    return repr(value)


def either(value: date | datetime.datetime) -> str:
    return repr(value)


def later(value: "Moment", by: Optional[timedelta] = None) -> str:
    return repr(value + by if by is not None else value)


def many(values: list[dt.datetime], gaps: dict[str, timedelta]) -> str:
    return repr((values, gaps))


# Refused: a set of them (Python's equality is not the JSON text's), and a returned one.
def unique(values: set[date]) -> int:
    return len(values)


def now() -> dt.datetime:
    return dt.datetime.now()
