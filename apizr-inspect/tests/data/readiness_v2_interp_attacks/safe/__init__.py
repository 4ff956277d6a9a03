class Base:
    def __init__(self, name):
        self.name = name


class Leaf(Base):
    pass


def build():
    a = Leaf("a")
    b = Leaf("b")
    if a is b or a is not a:
        return [][0]
    if not isinstance(a, Base) or isinstance(a, str):
        return [][0]
    try:
        issubclass(1, Base)
    except TypeError:
        pass
    try:
        {}["k"]
    except (ValueError, LookupError):
        pass
    return a.__class__.__name__


LEAF = build()


def probe(x: int) -> int:
    return x


class Other:
    pass


def distinct_classes():
    if Base is Other or Base is not Base:
        return [][0]
    return 1


DISTINCT = distinct_classes()
