from .compat import WIN

# `WIN` is false on every worker, also when read from another module: `msvcrt` (which the
# Linux workers do not have) is never imported.
if WIN:
    import msvcrt


def uses_compat(x: int) -> int:
    return x
