def parse_table(parser, m):
    return m


def table(md):
    md.parser.register("table", r"\|", parse_table, before="paragraph")
    md.hooks.append(parse_table)
    count = 0
    for rule in md.parser.rules:
        if isinstance(rule, str) and rule.startswith("t"):
            count += 1
    md.tables = count
