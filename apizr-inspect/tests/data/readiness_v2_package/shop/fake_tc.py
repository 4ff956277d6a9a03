# Not typing's TYPE_CHECKING: the import runs (and `shop.unsafe` writes os.environ).
TYPE_CHECKING = True
if TYPE_CHECKING:
    from . import unsafe


def faked(x: int) -> int:
    return x
