"""A package whose functions take classes declared in its other modules."""
