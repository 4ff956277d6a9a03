NAMES = ["a", "b"]
