PATTERN = r"~~" + r"(?=\S)"


def parse_strike(parser, m):
    return m


def render_strike(renderer, text):
    return "<del>" + text + "</del>"


def strike(md):
    md.parser.register("strike", PATTERN, parse_strike, before="b")
    if md.renderer and md.renderer.NAME == "html":
        md.renderer.register("strike", render_strike)
