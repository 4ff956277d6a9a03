from .decorating import deprecated


# TypeError: deprecated() takes 1 positional argument but 2 were given.
@deprecated("use bad_decorating", 2)
def old(x: int) -> int:
    return x


def bad_decorating(x: int) -> int:
    return x
