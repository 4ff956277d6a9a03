from . import names

# An attribute of a submodule bound by `from . import names`: read once it has run.
LABELS = names.LABELS
