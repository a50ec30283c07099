"""The request handler of document 001's QoS middleware (§3.1) as an HTTP service.

- `app.create_app(settings)`: the FastAPI application (`qosnet serve` runs it), its
  middleware and error handlers; `routes`: the API, a module per resource.
- `handler.RequestHandler`: translate, allocate and persist; release, renew, expire;
  `tokens`: API tokens; `profile_edits`: changes to the profile store; `job_view`: a job
  as the API shows it.
- `cluster_loader`: a cluster description checked (`cluster_files`: which files it may
  name; `cluster_size`: how big it may be) and loaded.
- `auth`, `limits`, `metrics`, `docs`: token check before the body, body cap, /metrics,
  /docs and /redoc without a CDN; `problems` and `errors`: errors as RFC 9457 problems.
- `db`: the SQLAlchemy models (SQLite by default, PostgreSQL by URL) and the write lock.
- `schemas`: request and response bodies; `settings.Settings`: how it runs;
  `testing`: a throwaway PostgreSQL and the service in a thread, for tests.

`qosnet.client.Client` talks to it over HTTP.
"""

from qosnet.service.settings import Settings

__all__ = ["Settings", "create_app"]


def create_app(*args, **kwargs):  # type: ignore[no-untyped-def]
    """`qosnet.service.app.create_app`, imported on first use (FastAPI is heavy)."""
    from qosnet.service.app import create_app as create

    return create(*args, **kwargs)
