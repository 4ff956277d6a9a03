from . import fake_sys as sys

# `sys` is a module of the package whose `platform` is "win32": the index files the import
# as never run (by its spelling), the prover does not (the arm runs), and it is refused.
if sys.platform == "win32":
    from . import unsafe


def fake_platform(x: int) -> int:
    return x
