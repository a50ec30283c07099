"""What the clients of a running service (`qosnet job`, `qosnet flow`) share: the --url and
--token options, and `service_client`, a `qosnet.client.Client` whose errors become a
message on stderr and an exit status (3 for a refused admission, else 1). httpx is
imported only when a command runs."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from qosnet.cli.common import err

__all__ = [
    "DEFAULT_URL",
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
        err(f"refused ({e.reason}): {e.detail.removeprefix('refused: ')}")
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
