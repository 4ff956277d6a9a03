import re
import string
from types import MappingProxyType

ASCII_CTRL = frozenset(chr(i) for i in range(32)) | frozenset(chr(127))
ILLEGAL = ASCII_CTRL - frozenset("\t")
BARE_KEY_CHARS = frozenset(string.ascii_letters + string.digits + "-_")
SQUARES = [x for x in (1, 2, 3)]
LETTERS = tuple(c for c in "abc")
ESCAPES = MappingProxyType({"\\n": "\n", "\\t": "\t"})
_TIME = r"([01][0-9]|2[0-3]):([0-5][0-9])"
DATETIME = re.compile(
    rf"""
([0-9]{{4}})-(0[1-9]|1[0-2])  # date
(?:[Tt ]{_TIME})?
""",
    flags=re.VERBOSE,
)
ALPHABET = f"{string.ascii_letters}{string.digits}-_="


class DecodeError(ValueError):
    pass


DecodeError.__module__ = __name__


def probe(x: int) -> int:
    return x
