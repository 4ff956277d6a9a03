# `re.escape` of a known string is a known string: patterns built with it are checked.
import re
import string

PUNCTUATION = r"[" + re.escape(string.punctuation) + r"]"
PARAGRAPH = r"(?:^[^\s\d" + re.escape(string.punctuation) + r"][^\n]*\n)+"
PARAGRAPH_RE = re.compile(PARAGRAPH)
DOTTED = re.compile(re.escape("a.b*c (d)") + "$")


def probe(x: int) -> int:
    return x
