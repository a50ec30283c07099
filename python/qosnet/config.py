"""Load a configuration and apply `path=value` overrides before the engine sees it.

The engine owns the schema, the defaults and the validation (crates/qosnet-sim/src/config).
This module only turns "a file, some TOML text or a dict, plus overrides" into one plain
dict, which travels to the engine as JSON: the engine then reports every problem with its
own paths (`traffic[0].load`, `router.vcs`), exactly as it would for the TOML file.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, under its old name
    import tomli as tomllib

from qosnet import _core
from qosnet._core import ConfigError

__all__ = [
    "LoadedConfig",
    "OverrideError",
    "load_config",
    "parse_override",
    "set_path",
    "simulation",
    "validate",
]

Key = str | int


class OverrideError(ConfigError):
    """An override could not be applied; `.errors` is `[(override, message)]`."""


def config_error(
    errors: list[tuple[str, str]], cls: type[ConfigError] = ConfigError
) -> ConfigError:
    """A ConfigError shaped like the engine's: message `path: message` per line, `.errors`."""
    err = cls("\n".join(f"{p}: {m}" for p, m in errors))
    err.errors = errors
    return err


class LoadedConfig(NamedTuple):
    """A configuration as a plain dict (overrides applied, defaults not yet filled in) and
    the directory its relative file paths (pattern files) resolve against."""

    data: dict[str, Any]
    base_dir: Path | None

    def to_json(self) -> str:
        """The JSON text handed to the engine."""
        bad = _non_finite(self.data, "")
        if bad is not None:
            raise config_error([(bad, "must be a finite number (JSON has no NaN or inf)")])
        return json.dumps(self.data, default=_json_default)


def load_config(
    source: str | os.PathLike[str] | Mapping[str, Any] | LoadedConfig,
    overrides: Iterable[str] = (),
    *,
    base_dir: str | os.PathLike[str] | None = None,
) -> LoadedConfig:
    """Read a configuration and apply overrides like `traffic[0].load=0.5`.

    `source` is a path (TOML, or JSON when it ends in `.json`), TOML text (a string holding
    a newline or an `=` that is not an existing file), a dict, or a LoadedConfig. Relative
    file paths in the configuration resolve against `base_dir`, by default the directory of
    the file. Raises OSError for an unreadable file, ConfigError for text that does not
    parse, OverrideError naming the first override that cannot be applied.
    """
    if isinstance(source, LoadedConfig):
        data, found_dir = copy.deepcopy(source.data), source.base_dir
    elif isinstance(source, Mapping):
        data, found_dir = copy.deepcopy(dict(source)), None
    elif isinstance(source, str) and _looks_like_text(source):
        data, found_dir = _parse_toml(source, "<text>"), None
    else:
        path = Path(source)
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".json":
            data = _parse_json(text, str(path))
        else:
            data = _parse_toml(text, str(path))
        found_dir = path.resolve().parent
    for override in overrides:
        keys, value = parse_override(override)
        try:
            set_path(data, keys, value)
        except ValueError as e:
            raise config_error([(override, str(e))], OverrideError) from None
    chosen = Path(base_dir).resolve() if base_dir is not None else found_dir
    return LoadedConfig(data, chosen)


def _looks_like_text(s: str) -> bool:
    return ("\n" in s or "=" in s) and not os.path.isfile(s)


def _parse_toml(text: str, where: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise config_error([("<root>", f"{where} is not valid TOML: {e}")]) from None


def _parse_json(text: str, where: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise config_error([("<root>", f"{where} is not valid JSON: {e}")]) from None
    if not isinstance(data, dict):
        raise config_error([("<root>", f"{where} must hold a JSON object")])
    return data


_SEGMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)((?:\[\d+\])*)")


def parse_override(override: str) -> tuple[list[Key], Any]:
    """Split `path=value` into path keys and a value.

    The path is dotted, with list indices (`traffic[0].pattern.kind`). The value is read as
    a TOML value (`8`, `0.5`, `true`, `[1, 2]`, `{ kind = "uniform" }`, `"8"`) and, when it
    is not one, kept as a plain string (`torus`, `1.6 Gb/s`).
    """
    path, sep, raw = override.partition("=")
    if not sep:
        raise config_error([(override, "expected path=value, e.g. router.vcs=8")], OverrideError)
    keys: list[Key] = []
    for segment in path.strip().split("."):
        m = _SEGMENT.fullmatch(segment)
        if m is None:
            message = f"bad path {path.strip()!r}: expected names and [index], e.g. traffic[0].load"
            raise config_error([(override, message)], OverrideError)
        keys.append(m.group(1))
        keys.extend(int(i) for i in re.findall(r"\[(\d+)\]", m.group(2)))
    return keys, parse_value(raw.strip())


def parse_value(text: str) -> Any:
    """A TOML value, or the text itself when it is not one."""
    try:
        doc = tomllib.loads(f"v = {text}")
    except tomllib.TOMLDecodeError:
        return text
    return doc["v"] if list(doc) == ["v"] else text


def set_path(data: dict[str, Any], keys: str | list[Key], value: Any) -> None:
    """Set `value` at `keys` (a list, or a dotted path without indices), creating missing
    tables on the way. Raises ValueError for an index out of range or a path that runs
    through something that is not a table (or not a list, for an index)."""
    if isinstance(keys, str):
        keys = list(keys.split("."))
    node: Any = data
    for depth, key in enumerate(keys):
        where = _format_path(keys[:depth]) or "the configuration"
        last = depth == len(keys) - 1
        if isinstance(key, int):
            if not isinstance(node, list):
                raise ValueError(f"{where} is not a list, so it has no [{key}]")
            if key >= len(node):
                n = len(node)
                raise ValueError(
                    f"index {key} is out of range: {where} has {n} entr{'y' if n == 1 else 'ies'}"
                )
        elif not isinstance(node, dict):
            raise ValueError(f"{where} is not a table, so it has no key {key!r}")
        elif not last and key not in node:
            if isinstance(keys[depth + 1], int):
                here = _format_path(keys[: depth + 1])
                raise ValueError(f"{here} does not exist, so it has no [{keys[depth + 1]}]")
            node[key] = {}
        if last:
            node[key] = value
        else:
            node = node[key]


def _format_path(keys: list[Key]) -> str:
    out = ""
    for k in keys:
        out += f"[{k}]" if isinstance(k, int) else (f".{k}" if out else k)
    return out


def _non_finite(node: Any, path: str) -> str | None:
    if isinstance(node, float) and not math.isfinite(node):
        return path or "<root>"
    items: Iterable[tuple[str, Any]] = ()
    if isinstance(node, dict):
        items = ((f"{path}.{k}" if path else str(k), v) for k, v in node.items())
    elif isinstance(node, list):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(node))
    for sub_path, v in items:
        found = _non_finite(v, sub_path)
        if found is not None:
            return found
    return None


def _json_default(obj: Any) -> Any:
    # TOML dates and times: hand them over as text and let the engine say what it expected.
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    raise TypeError(f"{type(obj).__name__} is not a configuration value")


# The engine parses the JSON we generate; its positions ("at line 1 column 153") point into
# that text, which the user never saw, so they are dropped.
_JSON_POSITION = re.compile(r" at line \d+ column \d+$")


def _clean(errors: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(p, _JSON_POSITION.sub("", m)) for p, m in errors]


def simulation(config: LoadedConfig) -> _core.Simulation:
    """Build the engine's Simulation; raises ConfigError listing every problem."""
    base = str(config.base_dir) if config.base_dir is not None else None
    try:
        return _core.Simulation(config.to_json(), "json", base)
    except ConfigError as e:
        raise config_error(_clean(e.errors)) from None


def validate(
    source: str | os.PathLike[str] | Mapping[str, Any] | LoadedConfig,
    overrides: Iterable[str] = (),
) -> list[tuple[str, str]]:
    """Every problem in a configuration as (path, message); empty when it is valid.

    A bad override or unparsable text is reported the same way; an unreadable file still
    raises OSError.
    """
    try:
        config = load_config(source, overrides)
        text = config.to_json()
    except ConfigError as e:
        return list(e.errors)
    base = str(config.base_dir) if config.base_dir is not None else None
    return _clean(_core.validate(text, "json", base))
