# Near misses: escaping leaves `[` unbalanced; the escaped value is not a known string.
import re

BROKEN = re.compile("[" + re.escape("a"))
UNKNOWN = re.escape(bytes(3))


def probe(x: int) -> int:
    return x
