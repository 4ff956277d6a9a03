import os

os.environ["SHOP_MODE"] = "1"


class Mode:
    """Proved by itself; its module is not."""


def mode(x: int) -> int:
    return x
