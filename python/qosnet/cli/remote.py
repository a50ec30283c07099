"""What the clients of a running service (`qosnet job`, `qosnet flow`) share: the --url and
--token options, `service_client`, a `qosnet.client.Client` whose errors become a message
on stderr and an exit status (3 for a refused admission, else 1), and the commands of the
one lease lifecycle of a job or a single flow (`add_lease_commands`: show, renew,
release). httpx is imported only when a command runs."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from qosnet.cli.common import JsonOption, err, when

__all__ = [
    "DEFAULT_URL",
    "LeaseOption",
    "add_lease_commands",
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

StateOption = Annotated[
    str | None,
    typer.Option("--state", help="active, released or expired.", show_default=False),
]

#: A reservation's states (a job's or a single flow's lease).
STATES = ("active", "released", "expired")


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


def add_lease_commands(
    app: typer.Typer,
    noun: str,
    *,
    get: str,
    renew: str,
    release: str,
    show: Callable[[Any], None],
    show_help: str,
) -> None:
    """Register `show`, `renew` and `release` on `app` for a leased `noun` ("job", "flow"):
    `get`, `renew` and `release` name the `Client` methods, `show` prints one."""

    def show_command(
        lease_id: IdArgument,
        url: UrlOption = DEFAULT_URL,
        token: TokenOption = None,
        json_out: JsonOption = False,
    ) -> None:
        with service_client(url, token) as client:
            item = getattr(client, get)(lease_id)
        print_one(item, json_out, show)

    def renew_command(
        lease_id: IdArgument,
        lease: LeaseOption = None,
        url: UrlOption = DEFAULT_URL,
        token: TokenOption = None,
    ) -> None:
        with service_client(url, token) as client:
            item = getattr(client, renew)(lease_id, lease)
        typer.echo(f"{item.id} lease expires {when(item.lease_expires)} UTC")

    def release_command(
        lease_id: IdArgument, url: UrlOption = DEFAULT_URL, token: TokenOption = None
    ) -> None:
        with service_client(url, token) as client:
            item = getattr(client, release)(lease_id)
        typer.echo(f"{item.id} {item.state}")

    show_command.__doc__ = show_help
    renew_command.__doc__ = f"Extend a {noun}'s lease (from now; default: the service's lease)."
    release_command.__doc__ = f"Release a {noun}'s reservation now."
    app.command("show")(show_command)
    app.command("renew")(renew_command)
    app.command("release")(release_command)
