"""The Python half of the example: served next to native Rust endpoints."""


def total(prices: list[float], tax: float = 0.0) -> float:
    """The sum of the prices, taxed."""
    return round(sum(prices) * (1.0 + tax), 2)
