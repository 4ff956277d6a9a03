# Near misses: calling a builtin function, a string method v2 does not know, a prefix test
# of a name that is not bound, an `os` attribute that is not a known constant.
import os
import sys

LENGTH = len("abc")
NAME = sys.platform.upper()
WIN = PLATFORM.startswith("win")  # noqa: F821
HOME = os.path.expanduser


def probe(x: int) -> int:
    return x
