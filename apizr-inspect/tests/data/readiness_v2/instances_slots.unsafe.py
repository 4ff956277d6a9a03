class Slotted:
    __slots__ = ("x",)

    def __init__(self, y):
        self.y = y


# AttributeError: 'Slotted' object has no attribute 'y'.
ONE = Slotted(1)


def probe(x: int) -> int:
    return x
