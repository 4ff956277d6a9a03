from typing import Generic, NewType, ParamSpec, TypeVar
T = TypeVar("T")
N = TypeVar("N", int, float)
B = TypeVar("B", bound="Base", covariant=True)
P = ParamSpec("P")
UserId = NewType("UserId", int)

class Box(Generic[T]):
    def get(self) -> T:
        return self.value


def probe(x: int) -> int:
    return x
