"""Pricing functions the example calls from Rust."""

import socket


def total(prices: list[float], tax: float = 0.0) -> float:
    """The sum of the prices, taxed."""
    return round(sum(prices) * (1.0 + tax), 2)


def fetch_rate(port: int) -> str:
    """Ask a rate server on this host (a network attempt)."""
    with socket.create_connection(("127.0.0.1", port), timeout=2):
        return "connected"
