import logging

log = logging.getLogger(__name__)
KINDS = ("a", "b")


class Base:
    """A plain base class, proved in this module."""


def kinds() -> list[str]:
    return list(KINDS)
