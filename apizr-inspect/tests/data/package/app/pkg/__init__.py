from .core import Core

__version__ = "1.0"
