from .records import Registered


# TypeError from `Registered.__init_subclass__`: no `name`.
class Anonymous(Registered):
    pass


def bad_hooks(x: int) -> int:
    return x
