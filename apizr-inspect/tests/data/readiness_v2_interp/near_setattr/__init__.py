class Frozen:
    def __init__(self, value):
        self.value = value

    def __setattr__(self, name, value):
        raise AttributeError("frozen")


frozen = Frozen(1)


def probe(x: int) -> int:
    return x
