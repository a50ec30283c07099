"""`qosnet bench`: the simulator's speed (optionally beside BookSim2's), or with --admission
the speed of admission decisions. The measuring is `qosnet.bench` and
`qosnet.middleware.bench`; this module parses the options and prints the tables."""

import json
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from qosnet.cli.common import (
    JsonOption,
    SetOption,
    booksim_program,
    err,
    stdout_console,
    user_errors,
)

__all__ = ["bench"]


def _si(v: float) -> str:
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{v / scale:.3g}{suffix}"
    return f"{v:.3g}"


def bench(
    configs: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="CONFIG",
            help="Configurations to benchmark (default: every *.toml in --dir).",
            show_default=False,
        ),
    ] = None,
    cycles: Annotated[
        int | None,
        typer.Option(
            "--cycles",
            min=1,
            metavar="N",
            help="Stop each run after N cycles (default: warm-up, window and drain, as `run`).",
            show_default=False,
        ),
    ] = None,
    directory: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            help="Directory of benchmark configurations (default: configs/bench under the "
            "working directory, else under the repository holding this package).",
            show_default=False,
        ),
    ] = None,
    admission: Annotated[
        bool,
        typer.Option(
            "--admission",
            help="Measure admission decisions instead: CONFIG files are cluster descriptions "
            "(default: configs/clusters/avakas.toml, 281 nodes) loaded with --reservations "
            "random flows; reports decisions/s and p50/p99 latency.",
        ),
    ] = False,
    reservations: Annotated[
        int,
        typer.Option("--reservations", min=0, metavar="N", help="With --admission: flows held."),
    ] = 1000,
    booksim: Annotated[
        Path | None,
        typer.Option(
            "--booksim",
            metavar="PATH",
            help="A BookSim2 binary (built by you; not shipped): after each configuration with a "
            "BookSim2 input beside it (booksim2/NAME.cfg), run BookSim2 on the same network and "
            "report its speed and qosnet's multiple of it (of its cycles/s: on the same network "
            "and load both deliver the same flits per cycle, which the flits/s columns show).",
            show_default=False,
        ),
    ] = None,
    rounds: Annotated[
        int,
        typer.Option(
            "--rounds",
            min=1,
            metavar="N",
            help="Run each configuration N times (with --booksim, BookSim2 after each) and "
            "report the run of median speed and the median of the rounds' multiples of "
            "BookSim2, with their range.",
        ),
    ] = 1,
    sets: SetOption = None,
    json_out: JsonOption = False,
) -> None:
    """Measure simulated cycles/s, delivered flits/s, flit-hops/s (hops/s) and peak memory,
    or with --admission the speed of admission decisions.

    Each configuration runs in a process of its own, so peak memory is its own. With
    --booksim, BookSim2 runs right after it, so both are measured in the same minutes, and
    --set may change only simulation.* (e.g. simulation.measure=300000). This machine's
    speed drifts from hour to hour: --rounds 3 or more gives a steadier multiple.
    """
    from qosnet.bench import compare, default_configs

    if configs and directory is not None:
        raise typer.BadParameter("give CONFIG files or --dir, not both", param_hint="--dir")
    if booksim is not None:
        booksim = booksim_program(booksim)
    if booksim is not None and any(not s.startswith("simulation.") for s in sets or ()):
        raise typer.BadParameter(
            "with --booksim only simulation.* may be overridden (BookSim2's inputs are fixed: "
            "the same network and load on both sides)",
            param_hint="--set",
        )
    if admission and sets:
        raise typer.BadParameter("--admission takes no --set", param_hint="--set")
    if admission:
        _bench_admission(configs or [], directory, reservations, json_out)
        return
    with user_errors():
        paths = list(configs) if configs else default_configs(directory)
        if not paths:
            err(f"error: no *.toml configurations in {directory or 'configs/bench'}")
            raise typer.Exit(1)
    status = Console(stderr=True)
    quiet = not status.is_terminal or json_out
    compared = []
    for path in paths:
        with user_errors(path), nullcontext() if quiet else status.status("") as spinner:
            step = None if spinner is None else spinner.update
            compared.append(compare(path, rounds, cycles, sets or (), booksim, on_step=step))
    if json_out:
        typer.echo(json.dumps([c.to_dict() for c in compared], indent=2))
        return
    title = "qosnet bench" + (f" (median of {rounds} rounds)" if rounds > 1 else "")
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("config", no_wrap=True)
    columns = ["cycles", "wall s", "cycles/s", "flits/s", "hops/s", "peak MiB"]
    if booksim is not None:
        columns += ["BookSim2 cycles/s", "BookSim2 flits/s", "× BookSim2"]
    for name in columns:
        table.add_column(name, justify="right", no_wrap=True)
    for c in compared:
        r, b, m = c.run, c.rival, c.multiples
        row = [
            Path(r.config).stem,
            str(r.cycles),
            f"{r.wall_seconds:.3f}",
            _si(r.cycles_per_second),
            _si(r.flits_per_second),
            _si(r.flit_hops_per_second),
            f"{r.peak_rss_bytes / 2**20:.0f}",
        ]
        if booksim is not None:
            spread = f" ({min(m):.1f}-{max(m):.1f})" if m and len(m) > 1 else ""
            row += (
                [_si(b.cycles_per_second), _si(b.flits_per_second), f"{c.multiple:.1f}×{spread}"]
                if b and m
                else ["—"] * 3
            )
        table.add_row(*row)
    stdout_console().print(table)


def _bench_admission(
    configs: list[Path], directory: Path | None, reservations: int, json_out: bool
) -> None:
    from qosnet.bench import find_bench_dir
    from qosnet.middleware.bench import bench_admission
    from qosnet.middleware.cluster import Cluster

    if not configs:
        bench_dir = find_bench_dir()
        found = bench_dir.parent / "clusters" / "avakas.toml" if bench_dir else None
        if directory is not None or found is None or not found.is_file():
            err("error: name the clusters to benchmark (no configs/clusters/avakas.toml)")
            raise typer.Exit(1)
        configs = [found]
    status = Console(stderr=True)
    rows = []
    for path in configs:
        with user_errors(path):
            cluster = Cluster.from_file(path)
            try:
                if status.is_terminal and not json_out:
                    with status.status(f"benchmarking admission on {path.name}"):
                        rows += bench_admission(cluster, reservations=reservations)
                else:
                    rows += bench_admission(cluster, reservations=reservations)
            except ValueError as e:
                raise typer.BadParameter(str(e), param_hint="--reservations") from None
    if json_out:
        typer.echo(json.dumps([r.to_dict() for r in rows], indent=2))
        return
    table = Table(title="qosnet bench --admission", box=box.SIMPLE_HEAD, pad_edge=False)
    for name in ("cluster", "decision"):
        table.add_column(name, no_wrap=True)
    for name in ("nodes", "held", "count", "admitted", "p50 µs", "p99 µs", "decisions/s"):
        table.add_column(name, justify="right", no_wrap=True)
    for r in rows:
        table.add_row(
            r.cluster,
            r.decision,
            str(r.nodes),
            str(r.reservations),
            str(r.count),
            str(r.admitted),
            f"{r.p50_us:.3g}",
            f"{r.p99_us:.3g}",
            _si(r.per_second),
        )
    stdout_console().print(table)
