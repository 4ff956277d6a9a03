# Near miss: `msvcrt` is in the stdlib allowlist but not on the Linux workers.
import msvcrt

GETCH = msvcrt.getch


def probe(x: int) -> int:
    return x
