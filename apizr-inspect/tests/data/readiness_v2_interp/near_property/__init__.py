class Box:
    def __init__(self):
        self.size = self.computed

    @property
    def computed(self):
        return self._missing


box = Box()


def probe(x: int) -> int:
    return x
