# A Windows-only module imported where the failure is handled, or where it never runs.
import sys

try:
    import msvcrt
except ImportError:
    msvcrt = None
if sys.platform == "win32":
    import winreg


def probe(x: int) -> int:
    return x
