from typing import Protocol

class Base:
    pass

class Closer(Base, Protocol):
    def close(self) -> None:
        ...


def probe(x: int) -> int:
    return x
