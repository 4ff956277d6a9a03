"""Fixture for REST parity vectors: one function per argument/result shape."""
from typing import Literal, Optional, Union


def add(a: int, b: int = 2) -> int:
    """Add two numbers."""
    return a + b


def scale(x: float, factor: float = 1e-07) -> float:
    return x * factor


def shout(text: str, /, times: int = 1, *, sep: str = " ") -> str:
    return sep.join([text.upper()] * times)


def flags(on: bool, maybe: Optional[int] = None) -> list:
    return [on, maybe]


def totals(prices: list[float], extra: dict[str, int]) -> dict[str, float]:
    return {"sum": sum(prices) + sum(extra.values())}


def span(pair: tuple[int, str], rest: tuple[int, ...] = ()) -> tuple:
    return (pair[1], pair[0], len(rest))


def uniq(items: set[int]) -> int:
    return len(items)


def pick(mode: Literal["a", "b", 1, 2.5, True]) -> str:
    return repr(mode)


def either(v: Union[int, str, None]) -> str:
    return type(v).__name__


def fail(n: int) -> int:
    raise RuntimeError("boom")


def sets_out(n: int) -> list:
    return sorted({n, n + 1})


def bad_result(n: int) -> float:
    return float("nan")


def anything(v) -> object:
    return v
