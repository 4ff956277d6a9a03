"""Imports nothing of the directory, which declares no requirements: served alone, ready."""


def clamp(x: int) -> int:
    return max(0, x)
