"""The kinds of lease the service grants, each described once: a job (document 001 §3.1: its
nodes and their flows) and a single flow (document 004's data plane, one flow outside any
job).

Everything leased has one lifecycle: created (admitted, with a lease), shown, listed,
renewed, released by its owner or an admin, or expired when the lease passes. A `LeaseApi`
names what differs between kinds as the outside sees it (the resource's path, its id, its
models, its list filters, its words in help texts, its method names), and the three front
ends derive their lifecycle from it instead of writing it per kind:

- the HTTP routes: `service.routes.leases.lease_routes` (show, list, renew, release and
  DELETE under `/v1/<plural>`);
- the client's methods: `client.Client` (`Client.job`, `.jobs`, `.renew`, `.release`;
  `.flow`, `.flows`, `.renew_flow`, `.release_flow`), made by `client_methods`;
- the `qosnet job` / `qosnet flow` commands: `cli.remote.add_lease_commands`.

The service keeps what it stores per kind (table, how capacity goes back) in
`service.leases.LeaseKind`, which holds one of these. Only creation is written per kind
(a job's request goes through the translator and is idempotent, a flow names its two ends
and a rate): its route, client method and command, which this description names
(`create`, `method`) so the others and the tests find them. So a third kind is a
`LeaseApi` here and a `LeaseKind` in the service, plus its create route, client method and
command and how the CLI prints one.

Imports nothing heavy: the CLI reads it to build its commands, so the models are named here
and imported where a request is made (`models`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["FLOW", "JOB", "KINDS", "OPERATIONS", "STATES", "LeaseApi", "function"]

#: A lease's states (`schemas.JobState`).
STATES = ("active", "released", "expired")

#: The lifecycle's operations on one lease kind, each a route, a client method and a
#: command (`create` is the kind's own).
OPERATIONS = ("create", "show", "list", "renew", "release")


@dataclass(frozen=True)
class LeaseApi:
    """One kind of lease as the API, the client and the CLI show it."""

    #: The name in messages, help and the id's parameter (`{noun}_id`): "job", "flow".
    noun: str
    #: The collection: its path (`/v1/{plural}`), its OpenAPI tag, the list body's field.
    plural: str
    #: What one is called in help: "job", "flow reservation".
    title: str
    #: The list's heading ("Jobs", "Single-flow reservations").
    heading: str
    #: The verb that makes one: the create command's name, "<create> it again".
    create: str
    #: Appended to the client's (and handler's) renew and release methods, and to `create`
    #: for the client's create method: "" for jobs (the client's first kind), "_flow".
    suffix: str
    #: The response models in `qosnet.service.schemas`: one, and the list's.
    out: str
    listing: str
    #: Whether its list may be filtered by owner (admin).
    owners: bool

    @property
    def path(self) -> str:
        return f"/v1/{self.plural}"

    @property
    def id_name(self) -> str:
        return f"{self.noun}_id"

    def method(self, op: str) -> str:
        """The client's method for operation `op` (the request handler's too, but for
        creation, whose handler method returns more than the client's)."""
        return {
            "create": self.create + self.suffix,
            "show": self.noun,
            "list": self.plural,
            "renew": "renew" + self.suffix,
            "release": "release" + self.suffix,
        }[op]

    def filters(self) -> tuple[str, ...]:
        """The list's query parameters, in the client's positional order."""
        return ("state", "owner", "limit") if self.owners else ("state", "limit")

    def models(self) -> tuple[Any, Any]:
        """The response models: one, and the list (`{plural}`: [one, ...])."""
        from qosnet.service import schemas

        return getattr(schemas, self.out), getattr(schemas, self.listing)


JOB = LeaseApi(
    noun="job",
    plural="jobs",
    title="job",
    heading="Jobs",
    create="submit",
    suffix="",
    out="JobOut",
    listing="JobList",
    owners=True,
)
FLOW = LeaseApi(
    noun="flow",
    plural="flows",
    title="flow reservation",
    heading="Single-flow reservations",
    create="reserve",
    suffix="_flow",
    out="FlowReservationOut",
    listing="FlowReservationList",
    owners=False,
)
KINDS = (JOB, FLOW)


def function(
    name: str,
    params: Sequence[inspect.Parameter],
    run: Callable[..., Any],
    doc: str | None = None,
    returns: Any = inspect.Signature.empty,
) -> Callable[..., Any]:
    """A function called `name` with signature `params` that calls `run` with every
    argument by name (defaults filled in). What is made from a `LeaseApi` needs its own
    parameter names, since they show: a route's path parameter (`job_id`, in the OpenAPI
    document) and FastAPI's dependencies are read from the signature, and a client method's
    from `help()`."""
    signature = inspect.Signature(list(params), return_annotation=returns)

    def call(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return run(**bound.arguments)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = doc
    call.__signature__ = signature  # type: ignore[attr-defined]
    return call
