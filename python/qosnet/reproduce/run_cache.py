"""Finished runs kept on disk, so a reproduction that stops part way resumes where it was.

Document 003's deadline experiments run ten simulated seconds each (issue 40: about 90 s of
one core per run), so the full set takes longer than one sitting on a small machine. Every
run that finishes is written at once to `OUT/runs/KEY.json` (its summary and the tables the
set keeps); `qosnet reproduce NAME --resume` reads those back instead of running them again,
and runs only what is missing.

A run's key is a hash of what decides its result: the configuration file's text and the
overrides (the seed is one). Not in the key: the files the configuration names (traces) and
the engine's code, so after changing either, run without `--resume` (or delete `runs/`).
The files are JSON (text), each table as the CSV text the reproduction writes of it, so
a table read back has the types a table read from the reproduction's CSV files has.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from qosnet.tables import write_text

__all__ = ["RunCache", "run_key"]


def run_key(config: Path, overrides: Sequence[str]) -> str:
    """The hash naming a run's file: its configuration's text and its overrides, in order."""
    h = hashlib.sha256()
    h.update(Path(config).read_bytes())
    for o in overrides:
        h.update(b"\0")
        h.update(o.encode())
    return h.hexdigest()[:20]


@dataclass(frozen=True)
class RunCache:
    """`directory`/KEY.json per finished run; `tables`: the tables kept (the others are
    dropped from every run, cached or not, so a resumed set writes the same files as a
    fresh one); `reuse`: whether finished runs are read back (`--resume`); `reuse_keys`:
    runs read back even without it (`--where`: the runs not asked for this time)."""

    directory: Path
    tables: tuple[str, ...]
    reuse: bool = False
    reuse_keys: frozenset[str] = frozenset()

    def path(self, config: Path, overrides: Sequence[str]) -> Path:
        return self.directory / f"{run_key(config, overrides)}.json"

    def load(
        self, config: Path, overrides: Sequence[str]
    ) -> tuple[dict[str, Any], dict[str, pd.DataFrame]] | None:
        """The run's summary and tables if it finished before and `reuse` is on."""
        path = self.path(config, overrides)
        if not (self.reuse or path.stem in self.reuse_keys) or not path.is_file():
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        tables = {name: pd.read_csv(io.StringIO(t)) for name, t in data["tables"].items()}
        return data["summary"], tables

    def keep(self, tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
        """The kept tables of a run just finished, as they will read back: through their
        CSV text, so fresh and read-back runs concatenate with one set of types (the
        engine's unsigned counts beside CSV's signed ones would turn both into floats)."""
        return {
            k: pd.read_csv(io.StringIO(v.to_csv(index=False)))
            for k, v in tables.items()
            if k in self.tables
        }

    def store(
        self,
        config: Path,
        overrides: Sequence[str],
        label: dict[str, Any],
        summary: dict[str, Any],
        tables: dict[str, pd.DataFrame],
    ) -> Path:
        """Write a finished run (its label and overrides too, for a reader of the file)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        data = {
            "label": label,
            "config": Path(config).name,
            "overrides": list(overrides),
            "summary": summary,
            "tables": {k: v.to_csv(index=False) for k, v in tables.items() if k in self.tables},
        }
        return write_text(
            self.path(config, overrides), json.dumps(data, indent=1, default=_plain) + "\n"
        )


def _plain(x: Any) -> Any:
    # numpy scalars in a summary (the engine's values come through pandas)
    if hasattr(x, "item"):
        return x.item()
    raise TypeError(f"not JSON: {type(x).__name__}")
