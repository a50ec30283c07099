"""The configuration reference, rendered from the configuration's JSON Schema.

The schema is generated from the engine's configuration types (`qosnet._core.config_schema`,
`crates/qosnet-sim/src/config/schema.rs`), so neither it nor this reference can drift from
what `qosnet run` reads. `docs/configuration.md` and `docs/qosnet-config.schema.json` are this
module's output (`qosnet config reference -o docs/configuration.md`, `qosnet config schema -o
docs/qosnet-config.schema.json`; a test checks they are current). `qosnet config reference KEY`
prints one section's or key's entry in the terminal.

Every key gets a heading with its type, default, units or allowed values and its
description (the type's doc comment, which names the document section it models); a
mechanism chosen by `kind` gets one sub-heading per kind with that kind's parameters.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

__all__ = ["Entry", "entries", "render", "render_markdown", "schema"]

Schema = dict[str, Any]


@cache
def _schema_text() -> str:
    from qosnet import _core

    return _core.config_schema()


def schema() -> Schema:
    """The configuration's JSON Schema (a fresh copy)."""
    out: Schema = json.loads(_schema_text())
    return out


@dataclass
class Entry:
    """One key (or section, or kind of a mechanism) of the reference."""

    path: str  # `router.vcs`, `traffic[].pattern`, `[router]`, `traffic[].pattern = "hot_spot"`
    level: int  # heading depth below the page title
    type: str = ""
    default: str = ""
    allowed: str = ""
    description: str = ""
    required: bool = False
    example: str = ""
    values: list[tuple[str, str]] = field(default_factory=list)  # (value, what it means)
    children: list[Entry] = field(default_factory=list)


def _resolve(root: Schema, s: Schema) -> Schema:
    """`s` with its `$ref` followed (keys beside the `$ref`, e.g. a description, kept)."""
    while "$ref" in s:
        name = s["$ref"].rsplit("/", 1)[-1]
        rest = {k: v for k, v in s.items() if k != "$ref"}
        s = {**root["$defs"][name], **rest}
    return s


def _without_null(root: Schema, s: Schema) -> Schema:
    """An optional value's schema without its `null` alternative (TOML has no null)."""
    s = _resolve(root, s)
    t = s.get("type")
    if isinstance(t, list) and "null" in t:
        rest = [x for x in t if x != "null"]
        s = {**s, "type": rest[0] if len(rest) == 1 else rest}
    for key in ("anyOf", "oneOf"):
        alts = s.get(key)
        if alts:
            kept = [a for a in alts if _resolve(root, a).get("type") != "null"]
            if len(kept) == 1 and len(alts) == 2:
                merged = {k: v for k, v in s.items() if k != key}
                return {**_resolve(root, kept[0]), **merged}
            if len(kept) != len(alts):
                s = {**s, key: kept}
    return s


def _toml(value: Any) -> str:
    """A value as TOML writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    return str(value)


def _kinds(root: Schema, s: Schema) -> list[tuple[str, Schema, bool]] | None:
    """A mechanism chosen by `kind`: (kind, its table schema, may be written bare)."""
    alts = s.get("anyOf")
    if not alts:
        return None
    bare = {a["const"] for a in alts if "const" in a and isinstance(a["const"], str)}
    tables = [
        a
        for a in (_resolve(root, x) for x in alts)
        if a.get("type") == "object" and "const" in a.get("properties", {}).get("kind", {})
    ]
    if not tables:
        return None
    names = [t["properties"]["kind"]["const"] for t in tables]
    return [(name, t, name in bare) for name, t in zip(names, tables, strict=True)]


#: Quantities written with units (`units.rs`), by their schema's name, as the reference
#: calls them; their schema's description lists the units.
QUANTITIES = {"Duration": "duration", "Bandwidth": "bandwidth", "ByteSize": "size"}


def _quantity(root: Schema, s: Schema) -> tuple[str, str] | None:
    """A quantity's (name, units), however it is wrapped (an option's `anyOf` with null)."""
    name = _ref_name(s)
    if name not in QUANTITIES:
        return None
    units = root["$defs"][name]["description"].rstrip(".")
    return QUANTITIES[name], units[:1].lower() + units[1:]


def _type_of(root: Schema, s: Schema) -> tuple[str, str]:
    """(type, allowed values or units) of a value, in the reference's words."""
    quantity = _quantity(root, s)
    if quantity is not None:
        return quantity
    s = _without_null(root, s)
    kinds = _kinds(root, s)
    if kinds is not None:
        names = ", ".join(f"`{k}`" for k, _, _ in kinds)
        return "a kind, or a table with `kind` and its parameters", f"kinds: {names}"
    if "enum" in s:
        return "string", "one of " + ", ".join(f"`{_toml(v)}`" for v in s["enum"])
    alts = s.get("oneOf") or s.get("anyOf")
    if alts and all("const" in _resolve(root, a) for a in alts):
        return "string", "one of " + ", ".join(
            f"`{_toml(_resolve(root, a)['const'])}`" for a in alts
        )
    if alts:
        parts = [_type_of(root, a) for a in alts]
        return " or ".join(p[0] for p in parts), "; ".join(p[1] for p in parts if p[1])
    if "const" in s:
        return "string", f"`{_toml(s['const'])}`"
    t = s.get("type")
    if t == "array":
        item_type, item_allowed = _type_of(root, s.get("items", {}))
        n = ""
        if s.get("minItems") is not None and s.get("minItems") == s.get("maxItems"):
            n = f" of {s['minItems']}"
        return f"array{n} of {item_type}", item_allowed
    if t == "object":
        return "table", ""
    if isinstance(t, list):
        return " or ".join(t), ""
    bounds = []
    if "minimum" in s and not (s["minimum"] == 0 and str(s.get("format", "")).startswith("uint")):
        bounds.append(f">= {s['minimum']}")
    if "maximum" in s:
        bounds.append(f"<= {s['maximum']}")
    allowed = ", ".join(bounds)
    return str(t or "value"), allowed


def _values(root: Schema, s: Schema) -> list[tuple[str, str]]:
    """An enumeration's values with their descriptions, when they have any."""
    alts = s.get("oneOf") or s.get("anyOf") or []
    out = []
    for a in (_resolve(root, x) for x in alts):
        if "const" in a:
            out.append((_toml(a["const"]), a.get("description", "")))
        elif "enum" in a:
            out.extend((_toml(v), a.get("description", "")) for v in a["enum"])
    return out if any(d for _, d in out) else []


def _example(root: Schema, s: Schema) -> str:
    s = _without_null(root, s)
    ex = s.get("examples")
    return _toml(ex[0]) if ex else ""


def _keys(
    root: Schema, obj: Schema, prefix: str, level: int, seen: dict[str, str]
) -> Iterator[Entry]:
    """The entries of a table's keys."""
    obj = _resolve(root, obj)
    required = set(obj.get("required", []))
    for name, prop in obj.get("properties", {}).items():
        path = f"{prefix}.{name}" if prefix else name
        yield _entry(root, prop, path, level, name in required, seen)


def _ref_name(s: Schema) -> str:
    """The name of the definition `s` refers to, however it is wrapped (an option's
    `anyOf` with null); "" when it refers to none."""
    for alt in [s, *s.get("anyOf", [])]:
        if "$ref" in alt:
            return str(alt["$ref"]).rsplit("/", 1)[-1]
    return ""


def _entry(
    root: Schema, prop: Schema, path: str, level: int, required: bool, seen: dict[str, str]
) -> Entry:
    """The entry of one key; `seen` maps a mechanism's schema already written out to the
    key it is under, so the schedulers' kinds are listed once and referred to after."""
    raw = prop
    type_, allowed = _type_of(root, prop)
    prop = _without_null(root, prop)
    description = raw.get("description", "")
    if not description and _quantity(root, raw) is None:
        description = prop.get("description", "")
    is_table = prop.get("type") == "object" or prop.get("type") == "array"
    entry = Entry(
        values=_values(root, prop),
        path=path,
        level=level,
        type=type_,
        allowed=allowed,
        description=description,
        required=required,
        default=_toml(raw["default"]) if "default" in raw and not is_table else "",
        example=_example(root, prop),
    )
    kinds = _kinds(root, prop)
    if kinds is not None:
        ref = _ref_name(raw)
        if ref and ref in seen:
            first = seen[ref]
            entry.description = (
                entry.description + f"\n\nIts kinds and their parameters: as [`{first}`]"
                f"(#{_anchor(first)})."
            ).strip()
            return entry
        if ref:
            seen[ref] = path
        for kind, table, bare in kinds:
            child = Entry(
                path=f'{path} = "{kind}"' if bare else f'{path} = {{ kind = "{kind}", ... }}',
                level=level + 1,
                description=table.get("description", ""),
                type="",
            )
            params = {k: v for k, v in table.get("properties", {}).items() if k != "kind"}
            table_req = set(table.get("required", [])) - {"kind"}
            for pname, pschema in params.items():
                child.children.append(
                    _entry(root, pschema, f"{path}.{pname}", level + 2, pname in table_req, seen)
                )
            entry.children.append(child)
        return entry
    target = prop
    if prop.get("type") == "array":
        target = _without_null(root, prop.get("items", {}))
    if target.get("type") == "object" and target.get("properties"):
        sub = f"{path}[]" if prop.get("type") == "array" else path
        entry.children.extend(_keys(root, target, sub, level + 1, seen))
    return entry


def entries(s: Schema | None = None) -> list[Entry]:
    """The reference's entries: one per section, with its keys below it."""
    root = s if s is not None else schema()
    out = []
    seen: dict[str, str] = {}
    for name, prop in root["properties"].items():
        e = _entry(root, prop, name, 1, name in root.get("required", []), seen)
        items = _without_null(root, prop)
        e.path = f"[[{name}]]" if items.get("type") == "array" else f"[{name}]"
        out.append(e)
    return out


def _walk(es: list[Entry]) -> Iterator[Entry]:
    for e in es:
        yield e
        yield from _walk(e.children)


def _lines(e: Entry) -> list[str]:
    hashes = "#" * min(e.level + 1, 6)
    out = [f"{hashes} `{e.path}`", ""]
    if e.description:
        out += [e.description.strip(), ""]
    facts = []
    if e.type:
        facts.append(f"- type: {e.type}" + (" (required)" if e.required else ""))
    if e.values:
        facts.append("- allowed:")
        for value, what in e.values:
            what = " ".join(what.split())
            facts.append(f"  - `{value}`" + (f": {what}" if what else ""))
    elif e.allowed:
        facts.append(f"- allowed: {e.allowed}")
    if e.default:
        facts.append(f"- default: `{e.default}`")
    if e.example and not e.default:
        facts.append(f"- example: `{e.example}`")
    if facts:
        out += [*facts, ""]
    return out


INTRO = """\
# Configuration reference

Generated from the engine's configuration types by `qosnet config reference` (do not edit:
`tests/test_config_reference.py` checks it is current). In the terminal, `qosnet config
reference KEY` prints one entry (`qosnet config reference router.vcs`).

A configuration is TOML (or JSON); every table refuses keys it does not know, naming the
ones it does. Physical quantities are written with their units (`"1.6 Gb/s"`, `"10 us"`,
`"4 GB"`) or, for durations, as whole cycles; they are converted once, in
`crates/qosnet-sim/src/units.rs`. A mechanism chosen by `kind` is written bare when it takes
no parameters, or whose parameters all have defaults (`pattern = "uniform"`), or as a table
(`pattern = { kind = "hot_spot", fraction = 0.2, nodes = [0] }`).

Editors complete and check keys with the JSON Schema beside this page,
[`qosnet-config.schema.json`](qosnet-config.schema.json) (`qosnet config schema`): with
Taplo or VS Code's Even Better TOML, put `#:schema ../docs/qosnet-config.schema.json` (a
path from the file, or a URL) on a configuration's first line.

"""


def render_markdown(s: Schema | None = None) -> str:
    """The whole reference, as Markdown (`docs/configuration.md`)."""
    es = entries(s)
    toc = ["## Sections", ""] + [f"- [`{e.path}`](#{_anchor(e.path)})" for e in es] + [""]
    body: list[str] = []
    for e in _walk(es):
        body += _lines(e)
    return INTRO + "\n".join(toc + body).rstrip() + "\n"


def _anchor(path: str) -> str:
    """GitHub's anchor for a heading `` `path` ``."""
    return "".join(c for c in path.lower() if c.isalnum() or c in "-_ ").replace(" ", "-")


def render(key: str, s: Schema | None = None) -> str:
    """One section's or key's entry (and what is below it), as Markdown; `KeyError` naming
    the keys there are when `key` is none of them."""
    wanted = key.strip().strip("[]").replace("[]", "")
    es = list(_walk(entries(s)))
    for e in es:
        plain = e.path.strip("[]").replace("[]", "")
        if plain == wanted or plain.split(" = ", 1)[0] == wanted:
            lines: list[str] = []
            for sub in _walk([e]):
                lines += _lines(sub)
            return "\n".join(lines).rstrip() + "\n"
    known = sorted({e.path.strip("[]").replace("[]", "").split(" = ", 1)[0] for e in es})
    close = difflib.get_close_matches(wanted, known, n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    raise KeyError(f"no key {key!r} in the configuration{hint}")
