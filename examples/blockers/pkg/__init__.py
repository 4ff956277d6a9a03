"""A package whose `__init__` reads the environment at import (a `KeyError` when the variable
is not set): v2 does not prove it, and every submodule that runs inside the package waits for
it."""
import os

MODE = os.environ["PKG_MODE"]
