"""The request handler of document 001's QoS middleware (§3.1) as an HTTP service.

- `app.create_app(settings)`: the FastAPI application (`qosnet serve` runs it).
- `handler.RequestHandler`: translate, allocate and persist; release, renew, expire.
- `db`: the SQLAlchemy models (SQLite by default, PostgreSQL by URL).
- `schemas`: request and response bodies; `settings.Settings`: how it runs.

`qosnet.client.Client` talks to it over HTTP.
"""

from qosnet.service.settings import Settings

__all__ = ["Settings", "create_app"]


def create_app(*args, **kwargs):  # type: ignore[no-untyped-def]
    """`qosnet.service.app.create_app`, imported on first use (FastAPI is heavy)."""
    from qosnet.service.app import create_app as create

    return create(*args, **kwargs)
