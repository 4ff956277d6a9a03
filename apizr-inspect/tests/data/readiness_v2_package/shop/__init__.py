from .models import Item

__version__ = "1.0"
__all__ = ["Item"]
