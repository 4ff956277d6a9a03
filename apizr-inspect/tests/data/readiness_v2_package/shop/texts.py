# Strings and a tuple of strings that importers build regular expressions from.
PREVENT_BACKSLASH = r"(?<!\\)(?:\\\\)*"
TAGS = ("pre", "script", "style")
OPEN = "("


def texts(x: int) -> int:
    return x
