import os
import re

TOO_FAR = frozenset(chr(i) for i in range(0x110001))
FILTERED = [x for x in (1, 2) if os.getpid()]
NESTED = [x for x in (1, 2) for y in (3, 4)]
UNKNOWN = [x for x in os.environ]
NAME = os.name
FORMATTED = re.compile(f"{NAME!r}")
SPEC = f"{1:>10}"


class Error(ValueError):
    pass


Error.__module__ = 1
Error.__name__ = "Other"


def probe(x: int) -> int:
    return x
