from typing import TypedDict

class Movie(TypedDict, total=False):
    title: str
    year: int

class Rated(Movie):
    stars: float


def probe(x: int) -> int:
    return x
