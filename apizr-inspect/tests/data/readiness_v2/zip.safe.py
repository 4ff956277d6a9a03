# `dict(zip(keys, values))` of lists of hashable keys, `list(zip(...))`.
_escapes = ["0", "b", "n", '"']
_escaped = ["\0", "\b", "\n", '"']
TABLE = dict(zip(_escapes, _escaped))
PAIRS = list(zip(_escapes, (1, 2, 3, 4)))
BY_NUMBER = dict(zip((1, 2), ["one", "two"]))


def probe(x: int) -> int:
    return x
