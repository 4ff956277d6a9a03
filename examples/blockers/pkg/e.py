"""Waits for `pkg/__init__.py` only (`helpers` is proved)."""
from . import helpers


def scaled(x: int) -> int:
    return helpers.clamp(x) * 10
