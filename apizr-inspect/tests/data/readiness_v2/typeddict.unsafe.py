from typing import TypedDict

class Movie(TypedDict):
    title: str

    def show(self) -> None:
        pass


def probe(x: int) -> int:
    return x
