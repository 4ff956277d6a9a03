"""Pure functions its siblings call at import (`shop.uses_tools`, `shop.bad_tools`)."""

SEP = "-"


def pair(a: str, b: str) -> tuple:
    """Both, as a tuple."""
    return a, b


def joined(a: str, b: str) -> str:
    both = a + SEP + b
    return both


def bump(n: int) -> int:
    return n + 1


def tools(x: int) -> int:
    return x
