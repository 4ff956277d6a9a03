import sys

WIN = sys.platform.startswith("win")
