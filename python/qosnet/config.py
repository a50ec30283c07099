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
import tomllib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from qosnet import _core, nesting
from qosnet._core import ConfigError
from qosnet.config_errors import clip, config_error

__all__ = [
    "LoadedConfig",
    "MemoryEstimate",
    "MemoryPart",
    "OverrideError",
    "estimate_memory",
    "format_bytes",
    "load_config",
    "parse_override",
    "set_path",
    "simulation",
    "validate",
]

Key = str | int


class OverrideError(ConfigError):
    """An override could not be applied; `.errors` is `[(override, message)]`."""


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
    overrides: Iterable[str] | str = (),
    *,
    base_dir: str | os.PathLike[str] | None = None,
) -> LoadedConfig:
    """Read a configuration and apply overrides like `traffic[0].load=0.5`.

    `source` is a path (TOML, JSON when it ends in `.json`, a BookSim2 configuration when
    it ends in `.cfg` or reads as one), TOML or BookSim2 text (a string holding a newline or
    an `=` that is not an existing file), a dict, or a LoadedConfig. Relative
    file paths in the configuration resolve against `base_dir`, by default the directory of
    the file. Raises OSError for an unreadable file, ConfigError for text that does not
    parse, OverrideError naming the first override that cannot be applied.

    `overrides` is an iterable of `path=value` strings; a single string is one override
    (not a sequence of one-character overrides). Anything else raises TypeError.
    """
    overrides = _override_list(overrides)
    if isinstance(source, LoadedConfig):
        data, found_dir = copy.deepcopy(source.data), source.base_dir
    elif isinstance(source, Mapping):
        _not_too_deep(lambda: nesting.check_object(source), "<dict>")
        data, found_dir = copy.deepcopy(dict(source)), None
    elif isinstance(source, str) and _looks_like_text(source):
        data, found_dir = _parse_text(source, "<text>"), None
    else:
        path = Path(source)
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".json":
            data = _parse_json(text, str(path))
        else:
            data = _parse_text(text, str(path))
        found_dir = path.resolve().parent
    for override in overrides:
        keys, value = parse_override(override)
        try:
            set_path(data, keys, value)
        except ValueError as e:
            raise config_error([(override, str(e))], OverrideError) from None
    chosen = Path(base_dir).resolve() if base_dir is not None else found_dir
    return LoadedConfig(data, chosen)


def _override_list(overrides: Iterable[str] | str) -> list[str]:
    """The overrides as a list; a bare string is one override."""
    if isinstance(overrides, str):
        return [overrides]
    if isinstance(overrides, bytes | bytearray) or not isinstance(overrides, Iterable):
        raise TypeError(f"overrides: expected path=value strings, got {type(overrides).__name__}")
    items = list(overrides)
    for item in items:
        if not isinstance(item, str):
            raise TypeError(
                f"overrides: each override must be a path=value string, "
                f"got {type(item).__name__} {clip(repr(item))}"
            )
    return items


def _looks_like_text(s: str) -> bool:
    return ("\n" in s or "=" in s) and not os.path.isfile(s)


def _not_too_deep(check: Callable[[], None], where: str) -> None:
    """`check`'s `TooDeep` as a ConfigError naming `where`: deep input is refused before a
    recursive parser meets it (`nesting.py`)."""
    try:
        check()
    except nesting.TooDeep as e:
        raise config_error([("<root>", f"{where}: {e}")]) from None


def _parse_text(text: str, where: str) -> dict[str, Any]:
    """TOML, or a BookSim2 configuration (named `*.cfg`, or recognised by its
    `name = value;` statements) converted to qosnet's (`booksim_cfg`)."""
    from qosnet import booksim_cfg

    if booksim_cfg.is_booksim(where, text):
        return booksim_cfg.convert(text, where).config
    return _parse_toml(text, where)


def _parse_toml(text: str, where: str) -> dict[str, Any]:
    _not_too_deep(lambda: nesting.check_text(text), where)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        duplicate = _duplicate_key(text, str(e))
        if duplicate is not None:
            raise config_error([duplicate]) from None
        raise config_error([("<root>", f"{where} is not valid TOML: {e}")]) from None


_TOML_AT = re.compile(r"\(at line (\d+), column (\d+)\)$")
_TOML_HEADER = re.compile(r"\[(\[?)\s*([^\[\]]+?)\s*\]\]?")


def _duplicate_key(text: str, message: str) -> tuple[str, str] | None:
    """A repeated key as (its path, message), read from tomllib's error ("Cannot overwrite
    a value (at line 3, column 8)" names no key): the key on that line, in the table the
    headers above it open. None for any other error."""
    at = _TOML_AT.search(message)
    if at is None:
        return None
    line, column = int(at.group(1)), int(at.group(2))
    table, arrays = "", dict[str, int]()
    lines = text.splitlines()
    for raw in lines[: line - 1]:
        header = _TOML_HEADER.fullmatch(raw.split("#", 1)[0].strip())
        if header is None:
            continue
        name = header.group(2)
        if header.group(1):  # [[name]]: the next entry of a list of tables
            arrays[name] = arrays.get(name, -1) + 1
            table = f"{name}[{arrays[name]}]"
        else:
            table = name
    here = lines[line - 1] if 0 < line <= len(lines) else ""
    where = f"(line {line}, column {column})"
    if message.startswith("Cannot declare"):
        header = _TOML_HEADER.match(here.strip())
        name = header.group(2) if header else table
        return name, f"duplicate table: it is declared twice {where}"
    inline = re.match(r"Duplicate inline table key '([^']*)'", message)
    key = here[: column - 1].rsplit("=", 1)[0]
    key = re.split(r"[{,]", key)[-1].strip() if inline is None else inline.group(1)
    known = message.startswith(("Cannot overwrite a value", "Duplicate inline table key"))
    if not known or not key:
        return None
    if inline is not None:
        outer = here.split("=", 1)[0].strip()
        table = f"{table}.{outer}" if table else outer
    # (tomllib's column is past the value; the key's own, as the engine gives it)
    where = f"(line {line}, column {here.rfind(key, 0, column) + 1})"
    return (f"{table}.{key}" if table else key), f"duplicate key: it is given twice {where}"


def _parse_json(text: str, where: str) -> dict[str, Any]:
    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                # (json keeps the last value silently; a repeated key is a mistake)
                raise config_error([(key, f"duplicate key: it is given twice in {where}")])
            seen[key] = value
        return seen

    _not_too_deep(lambda: nesting.check_text(text), where)
    try:
        data = json.loads(text, object_pairs_hook=no_duplicates)
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
    if not isinstance(override, str):
        raise TypeError(f"an override is a path=value string, got {type(override).__name__}")
    path, sep, raw = override.partition("=")
    if not sep:
        raise config_error([(override, "expected path=value, e.g. router.vcs=8")], OverrideError)
    keys: list[Key] = []
    for segment in path.strip().split("."):
        m = _SEGMENT.fullmatch(segment)
        if m is None:
            message = (
                f"bad path {clip(repr(path.strip()))}: expected names and [index], "
                "e.g. traffic[0].load"
            )
            raise config_error([(override, message)], OverrideError)
        keys.append(m.group(1))
        keys.extend(int(i) for i in re.findall(r"\[(\d+)\]", m.group(2)))
    try:
        nesting.check_text(raw)  # (tomllib recurses: refuse deep values first)
    except nesting.TooDeep as e:
        raise config_error([(override, f"the value: {e}")], OverrideError) from None
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
        where = clip(_format_path(keys[:depth])) or "the configuration"
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
                here = clip(_format_path(keys[: depth + 1]))
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
    overrides: Iterable[str] | str = (),
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


class MemoryPart(NamedTuple):
    """One part of a memory estimate: what, how many bytes, and what it grows with."""

    name: str
    bytes: int
    drivers: str


class MemoryEstimate(NamedTuple):
    """The memory a run needs when it is built (bytes, by part) and the limit `validate`
    holds it to (None: unlimited), with where that limit comes from
    (`simulation.memory_limit`, `QOSNET_MEMORY_LIMIT` or the machine's available memory)."""

    total: int
    limit: int | None
    limit_source: str
    parts: tuple[MemoryPart, ...]

    def __str__(self) -> str:
        limit = "unlimited" if self.limit is None else format_bytes(self.limit)
        return f"about {format_bytes(self.total)} (limit {limit}: {self.limit_source})"


class Cost(NamedTuple):
    """What a run costs, estimated by `check` before it runs (`build/cost.rs`): cycles of
    warm-up and measurement (the drain may add up to `drain_cycles`), the flit-hops in
    them at the offered load, and wall-clock seconds on this machine from the engine's
    calibrated cost per flit-hop (a rough figure: within about 2x below saturation)."""

    cycles: int
    drain_cycles: int
    offered_flits_per_cycle: float
    mean_hops: float
    flit_hops: float
    seconds: float
    seconds_with_drain: float

    def __str__(self) -> str:
        return (
            f"{self.cycles:,} cycles (the drain at most {self.drain_cycles:,} more), "
            f"about {self.flit_hops:.3g} flit-hops ({self.offered_flits_per_cycle:.3g} "
            f"flits/cycle offered over {self.mean_hops:.3g} hops): about "
            f"{_duration(self.seconds)} on this machine, at most about "
            f"{_duration(self.seconds_with_drain)} with the drain"
        )


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.2g} s"
    if seconds < 7200:
        return f"{seconds / 60:.3g} min"
    return f"{seconds / 3600:.3g} h"


class Checked(NamedTuple):
    """A configuration checked once: its problems, or the memory and cost of a run."""

    errors: list[tuple[str, str]]
    memory: MemoryEstimate | None
    cost: Cost | None


def check(
    source: str | os.PathLike[str] | Mapping[str, Any] | LoadedConfig,
    overrides: Iterable[str] | str = (),
) -> Checked:
    """Validate `source` once (as `validate`) and, when it is valid, estimate the memory
    and the cost of a run of it. An unreadable file raises OSError."""
    try:
        config = load_config(source, overrides)
        text = config.to_json()
    except ConfigError as e:
        return Checked(list(e.errors), None, None)
    base = str(config.base_dir) if config.base_dir is not None else None
    raw = _core.check(text, "json", base)
    errors = _clean(raw["errors"])
    if errors or raw["memory"] is None or raw["cost"] is None:
        return Checked(errors, None, None)
    m = raw["memory"]
    memory = MemoryEstimate(
        m["total"], m["limit"], m["limit_source"], tuple(MemoryPart(*p) for p in m["parts"])
    )
    return Checked([], memory, Cost(**raw["cost"]))


def format_bytes(n: int) -> str:
    """Decimal units, three significant digits, as the engine writes them: "12.1 GB"."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            v = n / size
            digits = 0 if v >= 100 else 1 if v >= 10 else 2
            return f"{v:.{digits}f} {unit}"
    return f"{n} B"


def estimate_memory(
    source: str | os.PathLike[str] | Mapping[str, Any] | LoadedConfig,
    overrides: Iterable[str] | str = (),
) -> MemoryEstimate:
    """The memory a run of `source` (with `overrides`) needs when built, without running or
    fully validating it; `validate` refuses a configuration whose estimate is over the limit.
    Raises ConfigError when the configuration does not parse."""
    config = load_config(source, overrides)
    base = str(config.base_dir) if config.base_dir is not None else None
    try:
        raw = _core.estimate_memory(config.to_json(), "json", base)
    except ConfigError as e:
        raise config_error(_clean(e.errors)) from None
    parts = tuple(MemoryPart(*p) for p in raw["parts"])
    return MemoryEstimate(raw["total"], raw["limit"], raw["limit_source"], parts)
