from .unsafe import Mode, mode


# A base class from a module v2 does not prove: importing it wrote `os.environ`.
class Doubled(Mode):
    pass


def double(x: int) -> int:
    return mode(x) * 2
