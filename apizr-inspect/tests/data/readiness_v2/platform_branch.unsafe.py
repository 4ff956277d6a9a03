# Near misses: the Linux arm runs; a constant of the module is not `sys.platform`.
import sys

if sys.platform == "linux":
    VALUE = undefined_name  # noqa: F821
PLATFORM = "win32"
if PLATFORM == "win32":
    OTHER = undefined_name  # noqa: F821


def probe(x: int) -> int:
    return x
