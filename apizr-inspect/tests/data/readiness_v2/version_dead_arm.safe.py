# Arms behind a `sys.version_info` test that is false on every Python 3 never run.
import sys

if sys.version_info < (3,):
    text_type = unicode  # noqa: F821 (Python 2 only)
    import urlparse
else:
    text_type = str
if sys.version_info[0] == 2:
    range_ = xrange  # noqa: F821
elif sys.version_info >= (3,):
    range_ = range
else:
    range_ = xrange  # noqa: F821
if (4,) <= sys.version_info:
    broken = undefined_name  # noqa: F821
ALIAS = text_type
RANGE = range_


def probe(x: int) -> int:
    return x
