# Workers run CPython 3 on Linux: arms behind a test false there never run.
import os
import sys

WIN = sys.platform.startswith("win")
if sys.platform == "win32":
    import msvcrt

    GETCH = msvcrt.getch
elif sys.platform.startswith(("darwin", "cygwin")) or os.name == "nt":
    GETCH = undefined_name  # noqa: F821
else:
    GETCH = None
if WIN:
    CONSOLE = undefined_name  # noqa: F821
if not sys.platform.startswith("linux"):
    OTHER = undefined_name  # noqa: F821


def probe(x: int) -> int:
    return x
