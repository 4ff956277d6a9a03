class Code(int):
    def __init__(self, name=None):
        self.name = name


# TypeError: 'name' is an invalid keyword argument for int().
OK = Code(name="ok")


def probe(x: int) -> int:
    return x
