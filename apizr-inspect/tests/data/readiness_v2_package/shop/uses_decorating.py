from .decorating import deprecated


# A sibling's decorator factory: its closure, run in `shop.decorating`'s globals, returns a
# function wrapped with `functools.wraps`.
@deprecated("use uses_decorating")
def old(x: int) -> int:
    return x


def uses_decorating(x: int) -> int:
    return x
