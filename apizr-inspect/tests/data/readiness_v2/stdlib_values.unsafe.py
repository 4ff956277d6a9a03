import gettext
import io
import logging
import operator
import re
import struct

FORMAT = "P"
STANDARD = struct.calcsize("<P")
VARIABLE = struct.calcsize(FORMAT)
LESS = operator.lt(1, 2)
INT = type(1, 2)
FILE = gettext.NullTranslations(None)
UNEQUAL = re.compile(r"(?<=a|bc)x")


class Both(io.RawIOBase, logging.Handler):
    pass


def probe(x: int) -> int:
    return x
