"""The lifecycle routes of a lease kind, made from its description (`qosnet.lease_kinds`,
`service.leases`): under `/v1/<plural>`, list (GET), show (GET `/{<noun>_id}`), renew
(POST `.../renew`), release (POST `.../release`, and DELETE). The kind's module adds its
create route (`jobs.submit_job`, `flows.reserve_flow`) to the router made here.

The endpoints are made with their signature (`lease_kinds.function`), since FastAPI reads
the path parameter's name (`job_id`, as the OpenAPI document shows it) and the
dependencies from it; each calls the handler's one lifecycle with the kind.
"""

from __future__ import annotations

from inspect import Parameter
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from qosnet.lease_kinds import function
from qosnet.service.auth import Caller
from qosnet.service.leases import LeaseKind
from qosnet.service.routes.common import AUTH_ERRORS, JOB_ERRORS, Handler, OwnerFilter
from qosnet.service.schemas import PRINTABLE, JobState, RenewJob

__all__ = ["lease_routes"]


def _arg(name: str, annotation: Any, default: Any = Parameter.empty) -> Parameter:
    return Parameter(name, Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


def lease_routes(kind: LeaseKind) -> APIRouter:
    """A router for `/<plural>` with `kind`'s show, list, renew and release routes."""
    api = kind.api
    out, listing = api.models()
    router = APIRouter(prefix=f"/{api.plural}", tags=[api.plural])
    lease_id = _arg(
        api.id_name,
        Annotated[
            str,
            # Ids are a prefix and 16 hex digits; any printable id may be asked for (404 if
            # it is not one), nothing longer than the column or with control characters (422).
            Path(
                min_length=1, max_length=40, pattern=PRINTABLE, description=f"A {api.title}'s id."
            ),
        ],
    )
    who, h = _arg("who", Caller), _arg("h", Handler)

    def one(op: str, doc: str | None, run: Any, *extra: Parameter) -> Any:
        return function(
            f"{op}_{api.noun}",
            [lease_id, who, h, *extra],
            lambda h, who, **kw: run(h, who, kw.pop(api.id_name), **kw),
            doc,
            out,
        )

    def show(h: Any, who: Any, i: str) -> Any:
        return h.show_lease(kind, who, i)

    def release(h: Any, who: Any, i: str) -> Any:
        return h.release_lease(kind, who, i)

    def renew(h: Any, who: Any, i: str, body: RenewJob | None) -> Any:
        return h.renew_lease(kind, who, i, body.lease_seconds if body else None)

    def list_all(h: Any, who: Any, **filters: Any) -> Any:
        return listing(**{api.plural: h.list_leases(kind, who, **filters)})

    state = Annotated[JobState | None, Query(description=f"Only {api.plural} in this state.")]
    filters = [_arg("state", state, None)]
    if api.owners:
        filters.append(_arg("owner", OwnerFilter, None))
    filters.append(_arg("limit", Annotated[int, Query(ge=1, le=10_000)], 1000))
    router.get("", responses=AUTH_ERRORS)(
        function(
            f"list_{api.plural}",
            [who, h, *filters],
            list_all,
            f"{api.heading}, newest first: a tenant's own, or everyone's for an admin.",
            listing,
        )
    )
    path = f"/{{{api.id_name}}}"
    router.get(path, responses=JOB_ERRORS)(one("get", None, show))
    released = f"Release the {api.noun}'s reservation now."
    router.post(f"{path}/release", responses=JOB_ERRORS)(one("release", released, release))
    same = f"Same as POST {api.path}/{{{api.id_name}}}/release."
    router.delete(path, responses=JOB_ERRORS)(one("delete", same, release))
    renewed = "Extend the lease: it now ends `lease_seconds` (default: the service's) from now."
    router.post(f"{path}/renew", responses=JOB_ERRORS)(
        one("renew", renewed, renew, _arg("body", RenewJob | None, None))
    )
    return router
