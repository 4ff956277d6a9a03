LIMIT = 10 * 60
NAME = "a" + "b"
FLAGS = (1, 2) + (3,)
ALIAS = LIMIT
X, Y = 1, 2
COUNT = 0
COUNT += 1
del Y


def probe(x: int) -> int:
    return x
