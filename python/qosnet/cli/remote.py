"""What the clients of a running service (`qosnet job`, `qosnet flow`) share: the --url and
--token options, `service_client`, a `qosnet.client.Client` whose errors become a message
on stderr and an exit status (3 for a refused admission, else 1), and the commands of the
one lease lifecycle of a job or a single flow (`lease_app`, `add_lease_commands`: show,
renew, release, list; from `qosnet.lease_kinds`). httpx is imported only when a command runs."""

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from inspect import Parameter
from typing import Annotated, Any

import typer

from qosnet.cli.common import JsonOption, err, when
from qosnet.lease_kinds import STATES, LeaseApi, function

__all__ = [
    "DEFAULT_URL",
    "LeaseOption",
    "add_lease_commands",
    "lease_app",
    "print_one",
    "StateOption",
    "TokenOption",
    "UrlOption",
    "check_state",
    "service_client",
]

DEFAULT_URL = "http://127.0.0.1:8000"

UrlOption = Annotated[
    str, typer.Option("--url", envvar="QOSNET_URL", help="The service (`qosnet serve`).")
]
TokenOption = Annotated[
    str | None,
    typer.Option("--token", envvar="QOSNET_TOKEN", help="API token.", show_default=False),
]

LeaseOption = Annotated[
    float | None,
    typer.Option(
        "--lease", metavar="SECONDS", min=0.001, help="Lease to ask for.", show_default=False
    ),
]
IdArgument = Annotated[str, typer.Argument(metavar="ID")]

OwnerOption = Annotated[
    str | None, typer.Option("--owner", help="Only this owner's (admin).", show_default=False)
]
StateOption = Annotated[
    str | None,
    typer.Option("--state", help="active, released or expired.", show_default=False),
]


def check_state(state: str | None) -> None:
    """--state names one of `STATES` (or is absent)."""
    if state is not None and state not in STATES:
        raise typer.BadParameter(
            f"must be active, released or expired, got {state!r}", param_hint="--state"
        )


@contextmanager
def service_client(url: str, token: str | None) -> Iterator[Any]:
    """A Client, its errors turned into messages (exit 3 for a refused admission, else 1)."""
    import httpx

    from qosnet.client import ApiError, Client, Invalid, Refused, Unauthorized

    try:
        with Client(url, token) as client:
            yield client
    except Refused as e:
        # The reason once: the service's detail may open with it too.
        detail = e.detail.removeprefix("refused: ").removeprefix(f"{e.reason}: ")
        err(f"refused ({e.reason}): {detail}")
        raise typer.Exit(3) from None
    except Invalid as e:
        err(f"error: invalid request: {e.detail}")
        raise typer.Exit(1) from None
    except Unauthorized as e:
        hint = "" if token else " (give --token or set QOSNET_TOKEN)"
        err(f"error: {e.detail}{hint}")
        raise typer.Exit(1) from None
    except ApiError as e:
        err(f"error: {e.status}: {e.detail}")
        raise typer.Exit(1) from None
    except httpx.HTTPError as e:
        err(f"error: cannot reach {url}: {e}")
        raise typer.Exit(1) from None


def print_one(
    item: Any, json_out: bool, show: Callable[[Any], None], id_only: bool = False
) -> None:
    """A job or flow as JSON (--json), its id alone (--id) or as `show` prints it."""
    if id_only:
        typer.echo(item.id)
    elif json_out:
        typer.echo(item.model_dump_json(indent=2))
    else:
        show(item)


def lease_app(kind: LeaseApi) -> typer.Typer:
    """The sub-command group of a lease kind (`qosnet job`, `qosnet flow`); the kind's
    module adds its create command, then `add_lease_commands` the rest."""
    return typer.Typer(
        help=f"{kind.heading} on a running service: {kind.create}, renew, release, list.",
        no_args_is_help=True,
    )


def add_lease_commands(
    app: typer.Typer,
    kind: LeaseApi,
    *,
    show: Callable[[Any], None],
    show_help: str,
    table: Callable[[list[Any]], None],
) -> None:
    """Register `show`, `renew`, `release` and `list` on `app` for a lease kind
    (`qosnet.lease_kinds`), calling the `Client` methods it names: `show` prints one,
    `table` a list."""

    def show_command(
        lease_id: IdArgument,
        url: UrlOption = DEFAULT_URL,
        token: TokenOption = None,
        json_out: JsonOption = False,
    ) -> None:
        with service_client(url, token) as client:
            item = getattr(client, kind.method("show"))(lease_id)
        print_one(item, json_out, show)

    def renew_command(
        lease_id: IdArgument,
        lease: LeaseOption = None,
        url: UrlOption = DEFAULT_URL,
        token: TokenOption = None,
    ) -> None:
        with service_client(url, token) as client:
            item = getattr(client, kind.method("renew"))(lease_id, lease)
        typer.echo(f"{item.id} lease expires {when(item.lease_expires)} UTC")

    def release_command(
        lease_id: IdArgument, url: UrlOption = DEFAULT_URL, token: TokenOption = None
    ) -> None:
        with service_client(url, token) as client:
            item = getattr(client, kind.method("release"))(lease_id)
        typer.echo(f"{item.id} {item.state}")

    def list_command(url: str, token: str | None, json_out: bool, **filters: Any) -> None:
        check_state(filters["state"])
        with service_client(url, token) as client:
            items = getattr(client, kind.method("list"))(**filters)
        if json_out:
            typer.echo(json.dumps([i.model_dump(mode="json") for i in items], indent=2))
        else:
            table(items)

    def option(name: str, annotation: Any, default: Any) -> Parameter:
        return Parameter(name, Parameter.KEYWORD_ONLY, annotation=annotation, default=default)

    # The list's options: its filters (as the service's), then the service's.
    listed = [option("state", StateOption, None)]
    if kind.owners:
        listed.append(option("owner", OwnerOption, None))
    listed += [
        option("url", UrlOption, DEFAULT_URL),
        option("token", TokenOption, None),
        option("json_out", JsonOption, False),
    ]
    show_command.__doc__ = show_help
    renew_command.__doc__ = (
        f"Extend a {kind.noun}'s lease (from now; default: the service's lease)."
    )
    release_command.__doc__ = f"Release a {kind.noun}'s reservation now."
    app.command("show")(show_command)
    app.command("renew")(renew_command)
    app.command("release")(release_command)
    app.command("list")(
        function(
            f"{kind.noun}_list",
            listed,
            list_command,
            f"List {kind.title}s, newest first (a tenant sees its own).",
        )
    )
