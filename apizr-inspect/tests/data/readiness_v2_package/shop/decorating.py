"""A decorator factory its siblings use (`shop.uses_decorating`, `shop.bad_decorating`)."""

import functools


def deprecated(message: str):
    def wrapper(func):
        @functools.wraps(func)
        def deprecated_func(*args, **kwargs):
            return func(*args, **kwargs)

        return deprecated_func

    return wrapper


def decorating(x: int) -> int:
    return x
