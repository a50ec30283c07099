"""`qosnet profile`: the profiler (document 001 §3.1-3.2), application models run on the
engine over node counts and per-flow bandwidths, written as a profile the middleware reads
(`qosnet.profiler`)."""

from pathlib import Path
from typing import Annotated

import typer

from qosnet.cli.common import err, user_errors

__all__ = ["profile"]


def profile(
    applications: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="APPLICATION",
            help="Application models to profile: ray_tracing, polygon_rendering, is "
            "(default: all).",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o", help="Profile file: .json (a whole store) or .csv (points only)."
        ),
    ] = Path("profile.json"),
    cluster: Annotated[
        Path | None,
        typer.Option(
            "--cluster",
            help="Cluster description (TOML network; default: document 001's testbed, 16 "
            "nodes on 8-port switches, 210 MB/s bi-directional links).",
            show_default=False,
        ),
    ] = None,
    quick: Annotated[
        bool,
        typer.Option("--quick", help="Four bandwidths per curve (1, 5, 15, 35 MB/s): a smoke run."),
    ] = False,
    nodes: Annotated[
        list[int] | None,
        typer.Option(
            "--nodes",
            min=1,
            help="Node counts (repeatable; default: the model's).",
            show_default=False,
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", "-j", min=1, help="Parallel runs (default: one per core).", show_default=False
        ),
    ] = None,
) -> None:
    """Profile application models on the engine: execution time against bandwidth per flow,
    one curve per parameter combination and node count (knee points: 5%, §3.3)."""
    from qosnet.middleware.profile_io import to_csv, to_json
    from qosnet.middleware.profiles import knee
    from qosnet.profiler import BANDWIDTHS, BANDWIDTHS_QUICK
    from qosnet.profiler import profile as run_profile

    if output.suffix not in (".json", ".csv"):
        raise typer.BadParameter(
            f"must end in .json or .csv, got {output.name!r}", param_hint="--output"
        )
    with user_errors(cluster):
        kwargs = {}
        if cluster is not None:
            kwargs["cluster"] = cluster.read_text(encoding="utf-8")
        try:
            store = run_profile(
                applications or ["ray_tracing", "polygon_rendering", "is"],
                bandwidths=BANDWIDTHS_QUICK if quick else BANDWIDTHS,
                node_counts=nodes,
                jobs=jobs,
                **kwargs,
            )
        except ValueError as e:
            err(str(e))
            raise typer.Exit(1) from None
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(
            to_json(store) if output.suffix == ".json" else to_csv(store), encoding="utf-8"
        )
    for c in store.curves:
        k = knee(c)
        typer.echo(
            f"{c.label}: {len(c.points)} points, knee {k.bandwidth / 1e6:g} MB/s ({k.time:.3g} s)"
        )
    typer.echo(f"wrote {output}")
