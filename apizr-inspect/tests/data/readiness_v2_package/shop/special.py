import shop.base

from . import base

NAMES = shop.base.KINDS


class Special(base.Base):
    """A base class read as an attribute of a proved sibling module."""


def special(x: int) -> int:
    return x + len(NAMES)
