# Near misses: a test on the minor version may hold, and a name `version_info` is not
# `sys.version_info`.
import sys

if sys.version_info < (3, 9):
    text_type = unicode  # noqa: F821
else:
    text_type = str
version_info = (2, 7)
if version_info < (3,):
    broken = undefined_name  # noqa: F821


def probe(x: int) -> int:
    return x
