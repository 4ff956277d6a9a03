class Port:
    def __init__(self, number):
        self.number = int(number)


# ValueError: invalid literal for int() with base 10: 'http'.
HTTP = Port("http")


def probe(x: int) -> int:
    return x
