from __future__ import annotations

def helper(x: Later) -> None:
    pass

class Later:
    pass


def probe(x: int) -> int:
    return x
