"""The `qosnet` command (`app`, the console script's entry point): one module per job.

- `simulate`: `run` and `validate` a configuration;
- `config`: the configuration's reference and JSON Schema;
- `convert`: a BookSim2 configuration file as qosnet's TOML;
- `bench`: the simulator's speed, beside BookSim2's, or admission decisions' speed;
- `crosscheck`: zero-load latency and saturation beside BookSim2's on matched configurations;
- `reproduce`: a document's experiments, tables, figures and report;
- `profile`: the middleware's profiler, application models run on the engine;
- `report`: a run's or sweep's HTML page;
- `sweep`: parameter sweeps on local processes or a Dask cluster, saturation search;
- `service`: `serve` the QoS middleware's request handler, and its API `token`s;
- `jobs`: `job`, jobs on a running service; `flows`: `flow`, its single-flow reservations;
- `remote`: what those clients of the service share (options, errors);
- `net`: `agent`, a host's rate-control agent, and `net send/recv/bench`, the data plane;
- `common`: options, error messages and exit statuses, progress bar, console.

Only typer, rich and the engine's bindings are imported to build the command; each command
imports what it needs when it runs, so `qosnet validate` and `qosnet --help` start quickly.
"""

from typing import Annotated

import typer

from qosnet import __version__
from qosnet.cli import (
    bench,
    config,
    convert,
    crosscheck,
    flows,
    jobs,
    net,
    profile,
    report,
    reproduce,
    service,
    simulate,
    sweep,
)

__all__ = ["app"]

app = typer.Typer(
    name="qosnet",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"qosnet {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Flit-level simulator of QoS-capable cluster interconnects.

    Exit status: 0 ok; 1 invalid configuration, missing file, failed simulation or an
    error from the service; 2 usage error; 3 job or flow refused; 130 interrupted.
    """


# Registered in the order `qosnet --help` lists them.
app.command()(simulate.run)
app.command()(simulate.validate)
app.add_typer(config.config_app, name="config")
app.command()(convert.convert)
app.command()(bench.bench)
app.command()(crosscheck.crosscheck)
app.command()(reproduce.reproduce)
app.command()(profile.profile)
app.command()(sweep.sweep)
app.command()(report.report)
app.command()(service.serve)
app.add_typer(service.token_app, name="token")
app.add_typer(jobs.job_app, name="job")
app.add_typer(flows.flow_app, name="flow")
app.command()(net.agent)
app.add_typer(net.net_app, name="net")
