from .core import Renderer
from .markdown import Markdown
from .plugins import import_plugin


def create(escape: bool = True, plugins=None) -> Markdown:
    renderer = Renderer(escape=escape)
    if plugins is not None:
        plugins = [import_plugin(n) for n in plugins]
    return Markdown(renderer=renderer, plugins=plugins)


html = create(escape=False, plugins=["strike", "table"])


def rules_count(extra: int) -> int:
    return len(html.parser.rules) + html.renderer.registered() + html.tables + extra
