"""The request handler service's administration (document 001's QoS middleware as a
service): `qosnet serve` runs it; `qosnet token` manages its API tokens straight in its
database, where it runs. The service itself is `qosnet.service`; the job client is
`qosnet.cli.jobs`.

`serve`'s options are where to listen, --init-admin, and one per field of the service's
`Settings` a user may choose: a new setting is a new parameter of `serve` and a keyword of
its `Settings(...)`. sqlalchemy, FastAPI and uvicorn are imported only when a command runs.
"""

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from qosnet.cli.common import err, stdout_console, user_errors, when

__all__ = ["DbOption", "serve", "token_app"]

DbOption = Annotated[
    str,
    typer.Option(
        "--db",
        envvar="QOSNET_DB",
        help="Database: a SQLite file (path or sqlite:///path.db) or a PostgreSQL URL "
        "(postgresql+psycopg://user:pass@host/db).",
    ),
]

token_app = typer.Typer(
    help="API tokens of the service, straight in its database (run where it runs).",
    no_args_is_help=True,
)


@contextmanager
def _service_errors() -> Iterator[None]:
    """The errors of the service's database and settings, as messages."""
    from sqlalchemy.exc import SQLAlchemyError

    with user_errors():
        try:
            yield
        except typer.Exit:
            raise  # a command's own exit, its message printed (typer.Exit is a RuntimeError)
        except SQLAlchemyError as e:
            err(f"error: database: {str(e).splitlines()[0]}")
            raise typer.Exit(1) from None
        except (ValueError, RuntimeError) as e:
            err(f"error: {e}")
            raise typer.Exit(1) from None


def serve(
    db: DbOption = "qosnet.db",
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port.")] = 8000,
    lease: Annotated[
        float, typer.Option("--lease", min=0.001, metavar="SECONDS", help="Default job lease.")
    ] = 300.0,
    max_lease: Annotated[
        float,
        typer.Option("--max-lease", metavar="SECONDS", help="Longest lease a request may ask."),
    ] = 86_400.0,
    payload_fraction: Annotated[
        float,
        typer.Option(
            "--payload-fraction",
            min=0.0,
            max=1.0,
            help="Share of each link's rate admission gives out as payload (admission on the "
            "wire; default 0.9347: the agents' 4 KB packets on a 1500-byte MTU); 1 admits "
            "the raw rate.",
            show_default=False,
        ),
    ] = 4096 / 4382,
    sweep: Annotated[
        float | None,
        typer.Option(
            "--sweep",
            min=0,
            metavar="SECONDS",
            help="Expiry sweeper period (default: lease/10 within 1-30 s; 0: none).",
            show_default=False,
        ),
    ] = None,
    cluster: Annotated[
        Path | None,
        typer.Option(
            "--cluster",
            help="Network to install (qosnet TOML); default: the stored one, else "
            "document 001's testbed.",
            show_default=False,
        ),
    ] = None,
    profiles: Annotated[
        Path | None,
        typer.Option(
            "--profiles",
            help="Profiles to install (JSON); default: the stored ones, else the profiler's "
            "(qosnet profile, shipped with qosnet).",
            show_default=False,
        ),
    ] = None,
    init_admin: Annotated[
        bool,
        typer.Option(
            "--init-admin", help="Create an admin token if there is none and print it once."
        ),
    ] = False,
    cluster_dir: Annotated[
        Path | None,
        typer.Option(
            "--cluster-dir",
            envvar="QOSNET_CLUSTER_DIR",
            help="The only directory an uploaded cluster may read files from (fabric dumps, "
            "routes); default: none, uploads naming files are refused.",
            show_default=False,
        ),
    ] = None,
    max_body_bytes: Annotated[
        int | None,
        typer.Option(
            "--max-body-bytes",
            min=1,
            help="Largest request body (413 above it); default 16 MiB.",
            show_default=False,
        ),
    ] = None,
    max_cluster_nodes: Annotated[
        int | None,
        typer.Option(
            "--max-cluster-nodes",
            min=1,
            metavar="N",
            help="Largest cluster, in endpoint nodes and in switches each; checked before a "
            "cluster is loaded (default 2048).",
            show_default=False,
        ),
    ] = None,
    log_level: Annotated[str, typer.Option("--log-level", help="uvicorn's log level.")] = "info",
) -> None:
    """Run the request handler service (HTTP API; OpenAPI docs at /docs)."""
    import logging

    from qosnet.service.handler import RequestHandler
    from qosnet.service.settings import DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CLUSTER_NODES, Settings

    logging.basicConfig(level=log_level.upper(), format="%(levelname)s: %(name)s: %(message)s")
    with _service_errors():
        settings = Settings(
            db_url=db,
            lease_seconds=lease,
            max_lease_seconds=max(max_lease, lease),
            payload_fraction=payload_fraction,
            sweep_seconds=sweep,
            cluster_file=cluster,
            profiles_file=profiles,
            cluster_dir=cluster_dir,
            max_body_bytes=DEFAULT_MAX_BODY_BYTES if max_body_bytes is None else max_body_bytes,
            max_cluster_nodes=(
                DEFAULT_MAX_CLUSTER_NODES if max_cluster_nodes is None else max_cluster_nodes
            ),
        )
        handler = RequestHandler(settings)
        handler.start()
        if init_admin:
            secret = handler.ensure_admin_token()
            if secret is None:
                err("an admin token exists already; `qosnet token create` makes another")
            else:
                typer.echo(f"admin token (shown once): {secret}")
        sys.stdout.flush()
        import uvicorn

        from qosnet.service.app import create_app

        uvicorn.run(
            create_app(settings, handler=handler), host=host, port=port, log_level=log_level
        )


def _handler_for(db: str) -> Any:
    from qosnet.service.handler import RequestHandler
    from qosnet.service.settings import Settings

    handler = RequestHandler(Settings(db_url=db, sweep_seconds=0))
    handler.start()
    return handler


@token_app.command("create")
def token_create(
    name: Annotated[str, typer.Option("--name", help="Who holds it (a tenant's name).")],
    role: Annotated[str, typer.Option("--role", help="admin or tenant.")] = "tenant",
    db: DbOption = "qosnet.db",
) -> None:
    """Create a token and print it (once: only its hash is stored)."""
    from pydantic import ValidationError

    from qosnet.service.schemas import TokenCreate

    try:
        TokenCreate(name=name, role=role)  # type: ignore[arg-type]
    except ValidationError as e:
        first = e.errors()[0]
        raise typer.BadParameter(first["msg"], param_hint=f"--{first['loc'][0]}") from None
    from qosnet.service.handler import ServiceError

    with _service_errors():
        try:
            out, secret = _handler_for(db).create_token(name, role)
        except ServiceError as e:
            err(f"error: {e.detail}")
            raise typer.Exit(1) from None
    err(f"token {out.id} for {name} ({role}); it is shown only now:")
    typer.echo(secret)


@token_app.command("list")
def token_list(db: DbOption = "qosnet.db") -> None:
    """List the tokens (never their secrets)."""
    with _service_errors():
        tokens = _handler_for(db).tokens()
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("id", "name", "role", "prefix", "created", "revoked"):
        table.add_column(column)
    for t in tokens:
        table.add_row(
            str(t.id), escape(t.name), t.role, t.prefix + "...", when(t.created_at), str(t.revoked)
        )
    stdout_console().print(table)


@token_app.command("revoke")
def token_revoke(
    token_id: Annotated[int, typer.Argument(metavar="ID", help="Token id (`token list`).")],
    db: DbOption = "qosnet.db",
) -> None:
    """Revoke a token."""
    from qosnet.service.handler import ServiceError

    with _service_errors():
        try:
            _handler_for(db).revoke_token(token_id)
        except ServiceError as e:
            err(f"error: {e.detail}")
            raise typer.Exit(1) from None
    typer.echo(f"revoked token {token_id}")
