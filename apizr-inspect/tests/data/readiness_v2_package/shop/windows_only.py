import sys

# Never runs on a worker (Linux): the import of the unproved module never happens.
if sys.platform == "win32":
    from . import unsafe


def windows_only(x: int) -> int:
    return x
