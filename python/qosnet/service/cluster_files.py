"""The files a cluster description names: which it may name, and what errors may say.

A cluster may name files the engine reads: an `ib_fabric`'s `file` and `routes` (a
directory of `ibroute` dumps), an IBA CC agent's `cct` file, and so on. Uploaded by an
admin over HTTP (`PUT /v1/cluster`), those names must not reach files the operator did not
offer (`/etc/shadow` echoed in an error, `/dev/zero` read until the service ran out of
memory). The engine's one resolver (`crates/qosnet-sim/src/config/files.rs`) decides every
name, for every key that names a file; here:

- only the sections that describe a cluster are accepted (`[[traffic]]` and `[mix]` mean
  nothing to the control plane);
- `named` asks the engine, in its confined scope (relative names inside the operator's
  `Settings.cluster_dir`, symlinks followed, regular files only), for every named file and
  its size, without reading any, so that the size limit is checked before anything is read;
- the engine's messages about a file's contents are cut to the file's name and line there
  too; `redact` keeps a message about a stored cluster's files to that as well.

The operator's own `--cluster` file is trusted: its names resolve relative to itself,
anywhere, and its errors reach only the operator's terminal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qosnet import _core
from qosnet.service.errors import Invalid
from qosnet.service.schemas import FieldError

__all__ = ["CLUSTER_SECTIONS", "NamedFile", "check_sections", "named", "redact"]

#: The sections of a qosnet configuration that describe a cluster.
CLUSTER_SECTIONS = ("simulation", "physical", "topology", "routing", "router", "endpoint")


@dataclass(frozen=True)
class NamedFile:
    """A file a description names: its key, the name as written, whether it is a
    directory, and its size in bytes (a directory's: its files' together)."""

    key: str
    shown: str
    directory: bool
    size: int


def check_sections(doc: dict[str, Any]) -> None:
    """Refuse sections that do not describe a cluster (they could name other files)."""
    extra = [k for k in doc if k not in CLUSTER_SECTIONS]
    if extra:
        allowed = ", ".join(f"[{s}]" for s in CLUSTER_SECTIONS)
        errors = [
            FieldError(field=f"toml: {k}", message=f"is not part of a cluster ({allowed})")
            for k in extra
        ]
        raise Invalid(f"toml: {errors[0].field[6:]}: {errors[0].message}", errors)


def named(text: str, base: Path | None, *, confined: bool) -> list[NamedFile]:
    """Every file `text` names, as the engine's resolver finds it (relative names from
    `base`; `confined`: inside `base` only), or `Invalid` naming each that may not or
    cannot be read. A text the engine cannot parse names no file here (the engine then
    reports it whole)."""
    try:
        found = _core.named_files(
            text, "toml", None if base is None else str(base), confined=confined
        )
    except _core.ConfigError as e:
        pairs: list[tuple[str, str]] = list(getattr(e, "errors", []))
        if not confined or any(not _is_file_key(p) for p, _ in pairs):
            return []  # not about files: the engine's own run reports it
        errors = [FieldError(field=f"toml: {p}", message=m) for p, m in pairs]
        raise Invalid(f"toml: {pairs[0][0]}: {pairs[0][1]}", errors) from None
    return [NamedFile(k, shown, d, size) for k, shown, d, size in found]


def _is_file_key(path: str) -> bool:
    return path.startswith(("topology.", "traffic[", "endpoint.agent."))


# The engine names a file as written in the description, then a line: "{name} line 12: ...".
_LINE = re.compile(r" line (\d+)\b")


def redact(errors: Sequence[tuple[str, str]], files: Sequence[NamedFile]) -> list[tuple[str, str]]:
    """The engine's (path, message) errors with every message about a named file cut to
    the file's name and line number, whatever scope the engine read it in (a stored
    cluster's errors are shown by `GET /health`)."""
    by_key = {f.key: f for f in files}
    out: list[tuple[str, str]] = []
    for path, message in errors:
        f = by_key.get(path)
        if f is None:
            out.append((path, message))
            continue
        line = _LINE.search(message)
        at = f" line {line.group(1)}" if line else ""
        if "not a usable" in message:  # already cut by the engine's resolver
            out.append((path, message))
            continue
        out.append(
            (
                path,
                f"{f.shown}{at}: not a usable file here (the service does not quote "
                "its files; `qosnet validate` on the file shows the whole message)",
            )
        )
    return out
