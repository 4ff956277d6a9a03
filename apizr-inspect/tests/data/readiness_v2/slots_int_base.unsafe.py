class Code(int):
    # TypeError: nonempty __slots__ not supported for subtype of 'int'.
    __slots__ = ("name",)


def probe(x: int) -> int:
    return x
