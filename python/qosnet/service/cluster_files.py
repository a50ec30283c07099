"""The files a cluster description names: which it may name, and what errors may say.

A cluster's `[topology]` may name files the engine reads: an `ib_fabric`'s `file` (an
`ibnetdiscover -p` report or an ibsim net file) and `routes` (a directory of `ibroute`
dumps, every file in it read). Uploaded by an admin over HTTP (`PUT /v1/cluster`), those
names must not reach files the operator did not offer (issue 21: `/etc/shadow` echoed in
an error, `routes=/etc` reading a whole directory). So, for an upload:

- only the sections that describe a cluster are accepted (`[[traffic]]` and `[mix]` name
  pattern and trace files and mean nothing to the control plane);
- every named file is resolved, symlinks followed, and must lie inside the operator's
  `Settings.cluster_dir`; a `routes` directory's entries too. Outside it, whether the file
  exists or not, the answer is the same;
- the engine's messages about these files may quote a line of them: they are replaced by
  the file's name relative to the cluster directory and the line number only.

The operator's own `--cluster` file is trusted: its names resolve relative to itself,
anywhere (`resolve`), and its errors reach only the operator's terminal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qosnet.service.errors import Invalid
from qosnet.service.schemas import FieldError

__all__ = ["CLUSTER_SECTIONS", "NamedFile", "check_sections", "confine", "named", "redact"]

#: The sections of a qosnet configuration that describe a cluster.
CLUSTER_SECTIONS = ("simulation", "physical", "topology", "routing", "router", "endpoint")

#: `[topology]` keys naming a file (False) or a directory (True).
_FILE_KEYS = {"file": False, "routes": True}


@dataclass(frozen=True)
class NamedFile:
    """A file a description names: the key, the name as written, and where it leads."""

    key: str
    written: str
    path: Path
    directory: bool

    def shown(self, root: Path | None) -> str:
        """The name to show a client: relative to the cluster directory if inside it."""
        if root is not None and self.path.is_relative_to(root):
            return str(self.path.relative_to(root))
        return self.written


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


def named(doc: dict[str, Any], base: Path | None) -> list[NamedFile]:
    """The files `[topology]` names, relative names taken from `base` (None: the working
    directory, as the engine does), resolved with symlinks followed."""
    topology = doc.get("topology")
    if not isinstance(topology, dict):
        return []
    out: list[NamedFile] = []
    for key, directory in _FILE_KEYS.items():
        value = topology.get(key)
        if value is None:
            continue
        where = f"toml: topology.{key}"
        if not isinstance(value, str) or not value:
            raise Invalid.field(where, "must be a file name")
        try:
            raw = Path(value)
            path = (raw if raw.is_absolute() or base is None else base / raw).resolve()
        except (ValueError, OSError):  # a NUL byte, a symlink loop
            raise Invalid.field(where, "is not a usable file name") from None
        out.append(NamedFile(f"topology.{key}", value, path, directory))
    return out


def confine(files: Iterable[NamedFile], root: Path | None) -> None:
    """Every file (and every entry of a `routes` directory) lies inside `root`."""
    for f in files:
        where = f"toml: {f.key}"
        if root is None:
            raise Invalid.field(
                where,
                "names a file, but this service takes no cluster files: its operator can "
                "offer a directory of them (`qosnet serve --cluster-dir DIR`)",
            )
        outside = "must name a file inside the service's cluster directory"
        if not f.path.is_relative_to(root):
            raise Invalid.field(where, outside)
        shown = f.shown(root)
        if not f.path.exists():
            raise Invalid.field(where, f"{shown} does not exist in the cluster directory")
        if f.directory != f.path.is_dir():
            kind = "a directory" if f.directory else "a file"
            raise Invalid.field(where, f"{shown} is not {kind}")
        if f.directory:
            for entry in sorted(f.path.iterdir()):
                try:
                    inside = entry.resolve().is_relative_to(root)
                except (ValueError, OSError):
                    inside = False
                if not inside:
                    raise Invalid.field(
                        where, f"{shown}/{entry.name} leads outside the cluster directory"
                    )


# The engine names a file as written in the description, then a line: "{name} line 12: ...".
_LINE = re.compile(r" line (\d+)\b")


def redact(
    errors: Sequence[tuple[str, str]], files: Sequence[NamedFile], root: Path | None
) -> list[tuple[str, str]]:
    """The engine's (path, message) errors with every message about a named file cut to
    the file's name and line number: the engine may quote the line it could not read."""
    by_key = {f.key: f for f in files}
    out: list[tuple[str, str]] = []
    for path, message in errors:
        f = by_key.get(path)
        if f is None:
            out.append((path, message))
            continue
        line = _LINE.search(message)
        at = f" line {line.group(1)}" if line else ""
        what = "forwarding tables" if f.directory else "fabric description"
        out.append(
            (
                path,
                f"{f.shown(root)}{at}: not a usable {what} (the service does not quote "
                "its files; `qosnet validate` on the file shows the whole message)",
            )
        )
    return out
