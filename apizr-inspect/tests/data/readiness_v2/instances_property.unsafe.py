class Named:
    @property
    def name(self):
        return "fixed"

    def __init__(self, name):
        self.name = name


# AttributeError: the property has no setter.
ROOT = Named("root")


def probe(x: int) -> int:
    return x
