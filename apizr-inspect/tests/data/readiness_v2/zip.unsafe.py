# Near misses: a list key is unhashable; a set of pairs is not proved; zip of an unknown.
_keys = [["0"], "b"]
_values = ["\0", "\b"]
TABLE = dict(zip(_keys, _values))
PAIRS = set(zip(_values, _values))
MORE = dict(zip(_values, len))


def probe(x: int) -> int:
    return x
