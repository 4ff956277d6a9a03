import sys
if sys.version_info >= (3, 9):
    TEXT = str
print(TEXT)


def probe(x: int) -> int:
    return x
