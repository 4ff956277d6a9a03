from .unsafe import Mode


# A base class from a module v2 does not prove: importing it wrote `os.environ`.
class Doubled(Mode):
    pass


def unsafe_base(x: int) -> int:
    return x
