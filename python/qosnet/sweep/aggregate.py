"""Repetitions aggregated: a sweep run with several seeds gets, beside its tidy table (one
row per run and class), a table with one row per point and class over the seeds: for every
measured quantity its mean, standard deviation and 95% interval (Student's t, the same
interval the reproductions' verdicts use: `qosnet.reproduce.scoring`), and how many seeds
measured it. OMNeT++'s scavetool and SST's statistics output aggregate repetitions the same
way; `qosnet report` draws the intervals as error bars.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from qosnet.reproduce.scoring import interval

__all__ = ["STATISTICS", "aggregate"]

#: The columns each measured quantity gets: QUANTITY_mean, _sd, _ci_low, _ci_high.
STATISTICS = ("mean", "sd", "ci_low", "ci_high")

#: Columns that identify a run rather than measure it.
IDENTITY = ("seed", "point", "run")


def aggregate(table: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """One row per value of `keys` (the axes and the class): `seeds`, the number of runs
    over which it is aggregated, then STATISTICS of every numeric column."""
    keys = [k for k in keys if k in table.columns]
    skip = {*keys, *IDENTITY}
    metrics = [
        c
        for c in table.columns
        # (a flag such as run_saturated aggregates to the fraction of seeds it is true in)
        if c not in skip and pd.api.types.is_numeric_dtype(table[c])
    ]
    rows = []
    for values, group in table.groupby(keys, sort=False, dropna=False):
        values = values if isinstance(values, tuple) else (values,)
        row: dict[str, object] = dict(zip(keys, values, strict=True))
        row["seeds"] = len(group)
        for m in metrics:
            col = group[m].astype(float)
            i = interval(list(col))
            row[f"{m}_mean"] = i.mean
            row[f"{m}_sd"] = float(col.std(ddof=1)) if i.n > 1 else float("nan")
            row[f"{m}_ci_low"] = i.low
            row[f"{m}_ci_high"] = i.high
        rows.append(row)
    return pd.DataFrame(rows)
