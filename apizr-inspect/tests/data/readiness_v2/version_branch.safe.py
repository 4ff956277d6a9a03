import sys
if sys.version_info >= (3, 9):
    TEXT = str
else:
    TEXT = bytes
if sys.platform.startswith("win"):
    SEP = "\\"
elif sys.platform == "darwin":
    SEP = "/"
else:
    SEP = "/"
PY2 = sys.version_info[0] == 2


def probe(x: int) -> int:
    return x
