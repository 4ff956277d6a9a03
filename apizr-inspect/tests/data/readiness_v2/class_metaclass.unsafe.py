class Meta(type):
    pass

class Thing(metaclass=Meta):
    pass


def probe(x: int) -> int:
    return x
