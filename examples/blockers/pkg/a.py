"""Waits for `pkg/__init__.py` (its parent) and for `config` (imported)."""
from . import config


def total(x: int) -> int:
    return x + len(config.SETTINGS)


def double(x: int) -> int:
    return 2 * x
