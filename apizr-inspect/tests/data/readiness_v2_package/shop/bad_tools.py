from .tools import bump

# TypeError: can only concatenate str (not "int") to str.
N = bump("a")


def bad_tools(x: int) -> int:
    return x
