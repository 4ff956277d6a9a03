class Hook:
    """Instantiating it runs nothing; storing it in a class body runs `__set_name__`."""

    def __set_name__(self, owner, name):
        raise ValueError(name)


HOOK = Hook()


class Model:
    # The class statement calls HOOK.__set_name__(Model, "field"): it raises.
    field = HOOK


def probe(x: int) -> int:
    return x
