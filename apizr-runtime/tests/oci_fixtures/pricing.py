def total(prices: list[float], *, tax: float = 0.2) -> float:
    """Sum prices with tax."""
    return sum(prices) * (1 + tax)


async def greet(name: str, /, punct: str = "!") -> str:
    return f"Hello {name}{punct}"
