_table = {"k": 1}


class Fill:
    _table["k"] = "s"  # a class body stores into the module's dict (v2/dicts.rs)


def bump():
    return _table["k"] + 1


bumped = bump()


def probe(x: int) -> int:
    return x
