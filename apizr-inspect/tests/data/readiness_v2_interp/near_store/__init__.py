_table = {"k": 1}
_table["k"] = "s"


def bump():
    return _table["k"] + 1


bumped = bump()


def probe(x: int) -> int:
    return x
