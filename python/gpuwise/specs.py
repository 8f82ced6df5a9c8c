"""A spec as the entry points take it: a path, YAML text, or a dict (the YAML as JSON)."""

import json
import os

from . import _native


# A dict goes to the library as one line of JSON under its path plus this mark, so that errors
# about it (at parse or plan time) are told apart: their file and line would point nowhere.
DICT_MARK = "#dict"


def dict_error(fields):
    """A native error's fields, with a dict spec's file and line replaced by what the field path says."""
    kind, file, line, field, message, text = fields
    if not (file and file.endswith(DICT_MARK)):
        return fields
    prefix = f"{file}:{line}: " if line else f"{file}: "
    return (kind, None, None, field, message, text.replace(prefix, "the spec dict: ", 1))


def to_native(spec, path=None):
    """A _native.Spec. Relative trace and config paths resolve against the spec file's folder;
    for text or a dict, against `path`'s folder (default: the working directory)."""
    if isinstance(spec, _native.Spec):
        return spec
    if isinstance(spec, os.PathLike):
        spec = os.fspath(spec)
    if isinstance(spec, dict):
        return _native.Spec.parse(json.dumps(spec), (path or "spec.yaml") + DICT_MARK)
    if not isinstance(spec, str):
        raise TypeError(f"a spec is a path, YAML text or a dict, not {type(spec).__name__}")
    if "\n" not in spec and not spec.lstrip().startswith("{") and (os.path.exists(spec) or ":" not in spec):
        return _native.Spec.load(spec)
    return _native.Spec.parse(spec, path or "spec.yaml")


def to_dict(spec):
    """The spec as a dict (a copy a program may change) and the path its relative paths resolve from."""
    if isinstance(spec, dict):
        return json.loads(json.dumps(spec)), "spec.yaml"
    spec = os.fspath(spec)
    if "\n" not in spec and os.path.exists(spec):
        with open(spec, encoding="utf-8") as f:
            return json.loads(_native.yaml_to_json(f.read(), spec)), spec
    return json.loads(_native.yaml_to_json(spec, "spec.yaml")), "spec.yaml"


def set_path(document, dotted, value):
    """Sets "services.0.deployment.max_batch" in a spec dict (list items by index or by name)."""
    keys = dotted.split(".")
    node = document
    for i, key in enumerate(keys):
        last = i == len(keys) - 1
        if isinstance(node, list):
            if key.isdigit():
                index = int(key)
            else:
                names = [item.get("name") if isinstance(item, dict) else None for item in node]
                if key not in names:
                    raise KeyError(f"{dotted}: no item named '{key}' (names: {', '.join(str(n) for n in names)})")
                index = names.index(key)
            if index >= len(node):
                raise KeyError(f"{dotted}: index {index} past the {len(node)} items")
            if last:
                node[index] = value
            else:
                node = node[index]
        else:
            if last:
                node[key] = value
            else:
                node = node.setdefault(key, {})
    return document
