from pkg import core
from pkg.core import *


def helper():
    return core
