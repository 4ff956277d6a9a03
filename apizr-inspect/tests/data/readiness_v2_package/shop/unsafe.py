import os

os.environ["SHOP_MODE"] = "1"


def mode(x: int) -> int:
    return x
