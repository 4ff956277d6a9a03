import re

from .texts import OPEN

# Near miss: the imported `OPEN` is "(", so the pattern is unbalanced (`re.error`).
BAD = re.compile(OPEN + "x")


def patterns_bad(x: int) -> int:
    return x
