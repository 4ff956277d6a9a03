from ..util import helper
from ... import beyond
from .nothing import x
