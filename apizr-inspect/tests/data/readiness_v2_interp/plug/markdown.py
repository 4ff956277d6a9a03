from .core import Parser


class Markdown:
    def __init__(self, renderer=None, parser=None, plugins=None):
        if parser is None:
            parser = Parser()
        self.renderer = renderer
        self.parser = parser
        self.hooks = []
        if plugins:
            for plugin in plugins:
                plugin(self)
