import atexit

@atexit.register
def goodbye() -> None:
    pass


def probe(x: int) -> int:
    return x
