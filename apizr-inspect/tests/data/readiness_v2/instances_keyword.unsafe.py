class Point:
    def __init__(self, x, y=0):
        self.x = x
        self.y = y


# TypeError: unexpected keyword argument 'z'.
ORIGIN = Point(0, z=1)


def probe(x: int) -> int:
    return x
