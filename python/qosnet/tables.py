"""Tables as qosnet writes them: a DataFrame to a Parquet or CSV file, or into a report as
Markdown.

One writer for run directories (`RunResult.write`) and every reproduction's tables, so
that all are written alike: no index column, `\\n` line ends on every platform, Parquet
through Arrow. The same frame gives the same bytes, which is what lets two runs of one
configuration compare equal with `cmp`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["FORMATS", "markdown", "preformatted", "write", "write_text"]

#: File formats `write` knows, by file suffix.
FORMATS = ("parquet", "csv")

#: How a Markdown cell shows a value: (column name, value) -> text.
Cell = Callable[[str, Any], str]


def write(frame: pd.DataFrame, path: Path) -> Path:
    """Write `frame` to `path` as Parquet or CSV, chosen by the suffix; return `path`."""
    fmt = path.suffix.removeprefix(".")
    if fmt == "parquet":
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    elif fmt == "csv":
        frame.to_csv(path, index=False, lineterminator="\n")
    else:
        raise ValueError(f"{path}: a table is written as .{' or .'.join(FORMATS)}")
    return path


def write_text(path: Path, text: str) -> Path:
    """Write `text` as UTF-8 with `\\n` line ends (not the platform's); return `path`."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return path


def _plain(column: str, value: Any) -> str:
    return str(value)


def markdown(
    frame: pd.DataFrame, cell: Cell = _plain, headings: Mapping[str, str] | None = None
) -> str:
    """A Markdown table of `frame` without its index: a column's heading is its name or
    `headings[name]`, each value the text `cell(name, value)` gives it."""
    names = [str(c) for c in frame.columns]
    head = [(headings or {}).get(c, c) for c in names]
    rows = [
        [cell(c, v) for c, v in zip(names, row, strict=True)]
        for row in frame.itertuples(index=False)
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def preformatted(frame: pd.DataFrame) -> str:
    """`frame` as pandas prints it, without its index, in a fenced code block: aligned
    columns with pandas' own number formats, for long tables read as text."""
    return "```\n" + frame.to_string(index=False) + "\n```"
