import re

STX = "\u0002"
ETX = "\u0003"
PREFIX = STX + "klzzwxh:"
PLACEHOLDER = PREFIX + "%s" + ETX
PLACEHOLDER_RE = re.compile(PLACEHOLDER % r"([0-9]+)")
AUTHOR = "someone"
COPYRIGHT = "2014 %s, 100%%" % AUTHOR
TABS = re.compile(r"^( {0,3})\t", flags=re.M)
SPLIT = re.compile(PREFIX + r"\s*")


def probe(x: int) -> int:
    return x
