from typing import Protocol, runtime_checkable

@runtime_checkable
class Closer(Protocol):
    def close(self) -> None:
        ...


def probe(x: int) -> int:
    return x
