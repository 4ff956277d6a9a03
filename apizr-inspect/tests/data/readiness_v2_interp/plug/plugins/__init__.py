from importlib import import_module

_plugins = {
    "strike": "plug.plugins.strike.strike",
    "table": "plug.plugins.table.table",
}
_cached = {}


def import_plugin(name):
    if name in _cached:
        return _cached[name]
    if callable(name):
        return name
    if name in _plugins:
        module_path, func_name = _plugins[name].rsplit(".", 1)
    else:
        module_path, func_name = name.rsplit(".", 1)
    module = import_module(module_path)
    plugin = getattr(module, func_name)
    _cached[name] = plugin
    return plugin
