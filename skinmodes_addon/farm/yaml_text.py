"""YAML text of a job template: Blender's Python has no YAML library, and the template needs only a few forms.

Mappings and sequences in block style; every string double-quoted with
JSON's escapes (a YAML double-quoted scalar), so no name, path or
``{{Param.X}}`` reference is ever read back as another type.
"""

from __future__ import annotations

import json
from collections.abc import Iterator


def yaml_text(value: object) -> str:
    """``value`` (dicts with string keys, lists, strings, numbers, booleans, None) as a YAML document."""
    return "\n".join(_lines(value, 0)) + "\n"


def _scalar(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (dict, list)) and not value:
        return "{}" if isinstance(value, dict) else "[]"
    raise TypeError(f"no YAML form for {type(value).__name__}")


def _nested(value: object) -> bool:
    return isinstance(value, (dict, list)) and bool(value)


def _lines(value: object, indent: int) -> Iterator[str]:
    pad = "  " * indent
    if isinstance(value, dict) and value:
        for key, item in value.items():
            if _nested(item):
                yield f"{pad}{key}:"
                yield from _lines(item, indent + 1)
            else:
                yield f"{pad}{key}: {_scalar(item)}"
    elif isinstance(value, list) and value:
        for item in value:
            if _nested(item):
                # "- " takes the place of one level of indentation on the item's first line.
                first, *rest = _lines(item, indent + 1)
                yield f"{pad}- {first.lstrip()}"
                yield from rest
            else:
                yield f"{pad}- {_scalar(item)}"
    else:
        yield pad + _scalar(value)
