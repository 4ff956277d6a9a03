"""Settings read from a file at import: not proved; `a` and `b` both import it."""
SETTINGS = open(__file__).read()
