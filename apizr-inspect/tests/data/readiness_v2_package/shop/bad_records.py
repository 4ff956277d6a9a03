from .records import Item

# TypeError: missing a required argument: 'builder'.
ITEM = Item("a+")


def bad_records(x: int) -> int:
    return x
