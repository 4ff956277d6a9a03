import re
BAD = re.compile(r"(unclosed")


def probe(x: int) -> int:
    return x
