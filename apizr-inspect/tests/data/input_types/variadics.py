"""Variadic signatures: under readiness v2 `*args`/`**kwargs` are parameters of the contract."""


def total(first: int, *rest: int) -> int:
    """Each item of `rest` is an int (the annotation is the item type)."""
    return first + sum(rest)


def tag(name: str, /, **attributes: str) -> dict:
    """`name` is positional-only: a key `name` always binds it, never an attribute."""
    return {"name": name, "attributes": attributes}


def spread(a, b=2, /, c=3, *args, d, **kwargs) -> list:
    """Unannotated variadics are Any (READY-007 stays a ready note)."""
    return [a, b, c, list(args), d, kwargs]


def view(*chunks: memoryview) -> int:
    """An item type v2 cannot build keeps READY-013 on the variadic parameter."""
    return len(chunks)
