import re

_LINE = re.compile(r"\n")


class Parser:
    SPEC = {"a": r"a+", "b": r"b+"}
    RULES = ("a", "b")

    def __init__(self):
        self.spec = self.SPEC.copy()
        self.rules = list(self.RULES)
        self.__cache = {}
        self.methods = {name: getattr(self, "parse_" + name) for name in self.spec}

    def parse_a(self, m):
        return m

    def parse_b(self, m):
        return m

    def register(self, name, pattern, func, before=None):
        self.methods[name] = lambda m: func(self, m)
        if pattern:
            self.spec[name] = pattern
        if name not in self.rules:
            self.insert_rule(self.rules, name, before=before)

    @staticmethod
    def insert_rule(rules, name, before=None):
        if before:
            try:
                index = rules.index(before)
                rules.insert(index, name)
            except ValueError:
                rules.append(name)
        else:
            rules.append(name)


class BaseRenderer(object):
    NAME = "base"

    def __init__(self):
        self.__methods = {}

    def register(self, name, method):
        self.__methods[name] = lambda *a, **k: method(self, *a, **k)

    def registered(self):
        return len(self.__methods)


class Renderer(BaseRenderer):
    NAME = "html"

    def __init__(self, escape=True):
        super().__init__()
        self.escape = escape
