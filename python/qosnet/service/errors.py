"""The errors the request handler raises, each with its HTTP status and problem type.

The handler speaks in these (not in HTTP); `app` turns them into problem documents
(`problems`). `detail` is one line naming what is wrong; `errors` lists the fields of an
invalid request.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from qosnet.middleware.errors import InvalidData
from qosnet.service.schemas import FieldError

__all__ = [
    "ClusterUnavailable",
    "Conflict",
    "Forbidden",
    "Invalid",
    "NotFound",
    "Refused",
    "ServiceError",
    "Unauthorized",
]


class ServiceError(Exception):
    """An error the API reports with `status`, its problem `kind` and a message."""

    status = 500
    kind = "internal-error"

    def __init__(self, detail: str, errors: Sequence[FieldError] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = list(errors) if errors else None

    def extensions(self) -> dict[str, Any]:
        """Members beyond `type`, `title`, `status` and `detail`."""
        if self.errors:
            return {"errors": [e.model_dump() for e in self.errors]}
        return {}

    def body(self) -> dict[str, Any]:
        """`detail` and the extensions (the body clients read before problem details)."""
        return {"detail": self.detail, **self.extensions()}


class Unauthorized(ServiceError):
    status = 401
    kind = "unauthorized"


class Forbidden(ServiceError):
    status = 403
    kind = "forbidden"


class NotFound(ServiceError):
    status = 404
    kind = "not-found"


class Conflict(ServiceError):
    status = 409
    kind = "conflict"


class Invalid(ServiceError):
    status = 422
    kind = "invalid-request"

    @classmethod
    def field(cls, field: str, message: str) -> Invalid:
        """One field is wrong: `detail` is `field: message`."""
        return cls(f"{field}: {message}", [FieldError(field=field, message=message)])

    @classmethod
    def from_data(cls, error: InvalidData, prefix: str = "") -> Invalid:
        errors = [
            FieldError(field=f"{prefix}{i.path}" if i.path else prefix.rstrip("."), message=str(i))
            for i in error.issues
        ]
        return cls("; ".join(str(i) for i in error.issues), errors)


class Refused(ServiceError):
    """Admission refused (document 001 §3.4 scenario 1, or no profile fits)."""

    status = 409
    kind = "admission-refused"

    def __init__(self, reason: str, detail: str, retryable: bool) -> None:
        super().__init__(f"refused: {detail}")
        self.reason = reason
        self.retryable = retryable

    def extensions(self) -> dict[str, Any]:
        return {"reason": self.reason, "retryable": self.retryable}


class ClusterUnavailable(ServiceError):
    """The stored cluster failed to load: the service runs without one until an admin
    installs another (see `RequestHandler.cluster_error`)."""

    status = 503
    kind = "cluster-unavailable"
