class Table(dict):
    def __init__(self, name=None):
        self.name = name
        super().__init__()


super = None
# TypeError: 'NoneType' object is not callable (`super` is the module's global now).
CODES = Table(name="codes")


def probe(x: int) -> int:
    return x
