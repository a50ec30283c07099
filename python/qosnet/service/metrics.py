"""`GET /metrics`: the service's counters in the Prometheus text format.

- `qosnet_http_requests_total{method, route, status}` and the latency histogram
  `qosnet_http_request_duration_seconds{method, route}`: `route` is the matched route's
  template (`/v1/jobs/{job_id}`), never the raw path, so neither ids nor scanners' junk
  paths become series (an unmatched path counts as `unmatched`);
- `qosnet_admission_decisions_total{outcome, reason}`: `admitted`, `replayed` (an
  Idempotency-Key retry) or `refused` with the refusal's reason;
- `qosnet_database_errors_total{kind}`: `unavailable` (the database did not answer,
  503), `conflict` (a concurrent write, 409), `data` (a value the database refused);
- `qosnet_cluster_loaded`: 1, or 0 while the service runs without a cluster.

No token is needed, as for /health: the numbers name no tenant, job or token, and a
scraper holding an admin token (the only role that could otherwise read them) would be
a credential far stronger than the job needs. Expose the port only where it should be
read. Each app has its own registry (no process-wide state: two apps in one process, as
the tests run them, count apart).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable

from fastapi import APIRouter, Request, Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from starlette.routing import compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["MetricsMiddleware", "ServiceMetrics", "metrics_router"]


class ServiceMetrics:
    """The service's metrics, in a registry of their own."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "qosnet_http_requests",
            "HTTP requests answered, by method, route template and status.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "qosnet_http_request_duration_seconds",
            "Time from a request's arrival to the end of its response, by route.",
            ["method", "route"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
            registry=self.registry,
        )
        self.decisions = Counter(
            "qosnet_admission_decisions",
            "Job submissions decided: admitted, replayed (Idempotency-Key) or refused.",
            ["outcome", "reason"],
            registry=self.registry,
        )
        self.database_errors = Counter(
            "qosnet_database_errors",
            "Database errors answered: unavailable (503), conflict (409), data (422).",
            ["kind"],
            registry=self.registry,
        )
        self.cluster_loaded = Gauge(
            "qosnet_cluster_loaded",
            "1 if a cluster is loaded, 0 if the service runs without one (see /health).",
            registry=self.registry,
        )
        for outcome in ("admitted", "replayed"):
            self.decisions.labels(outcome, "")
        for kind in ("unavailable", "conflict", "data"):
            self.database_errors.labels(kind)

    def watch_cluster(self, loaded: Callable[[], bool]) -> None:
        self.cluster_loaded.set_function(lambda: 1.0 if loaded() else 0.0)

    def decision(self, outcome: str, reason: str = "") -> None:
        self.decisions.labels(outcome, reason).inc()

    def database_error(self, kind: str) -> None:
        self.database_errors.labels(kind).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)


class MetricsMiddleware:
    """Counts every HTTP request by its route template and status, and times it.

    `templates` lists the app's path templates (`/v1/jobs/{job_id}`, `/assets/{path:path}`);
    called once, at the first request, when every route is in place."""

    def __init__(
        self, app: ASGIApp, metrics: ServiceMetrics, templates: Callable[[], Iterable[str]]
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.templates = templates
        self._compiled: list[tuple[re.Pattern[str], str]] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        # matched before the app runs: routing rewrites the scope (a mount's root_path),
        # and a request refused by a middleware never reaches the router at all
        route = self._match(scope)
        status = 500  # if the app fails before it answers

        async def watched(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, watched)
        finally:
            method = scope["method"]
            self.metrics.requests.labels(method, route, str(status)).inc()
            self.metrics.latency.labels(method, route).observe(time.perf_counter() - start)

    def _match(self, scope: Scope) -> str:
        # Matched against the templates, not the app's route objects: how FastAPI nests
        # included routers differs between its versions; a path template does not.
        if self._compiled is None:
            self._compiled = []
            for template in self.templates():
                regex, shown, _ = compile_path(template)
                self._compiled.append((regex, shown))
        path = scope["path"]
        for regex, shown in self._compiled:
            if regex.match(path):
                return shown
        return "unmatched"


def metrics_router() -> APIRouter:
    router = APIRouter(tags=["service"])

    @router.get(
        "/metrics",
        response_class=Response,
        responses={200: {"content": {CONTENT_TYPE_LATEST: {}}, "description": "Metrics."}},
    )
    def metrics(request: Request) -> Response:
        """The service's metrics in the Prometheus text format (no token needed)."""
        registry: ServiceMetrics = request.app.state.metrics
        return Response(registry.render(), media_type=CONTENT_TYPE_LATEST)

    return router
