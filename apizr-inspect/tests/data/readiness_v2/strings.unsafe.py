import re

PATTERN = "(" + "%s"
OPEN = re.compile(PATTERN % "a")
TWO = "%s %s" % ("a",)
NUMBER = "%d" % "1"
if PATTERN:
    SEP = "("
else:
    SEP = ")"
JOINED = re.compile(SEP + "x")


def probe(x: int) -> int:
    return x
