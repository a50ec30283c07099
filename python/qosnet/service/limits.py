"""The request body cap, enforced while the body streams in (413 above it).

A body announced larger than the cap (`Content-Length`) is refused before a byte of it is
read; one that arrives in chunks (`Transfer-Encoding: chunked`, or a Content-Length that
lies) is counted as it is received and refused as soon as it passes the cap, so the
service never holds more than the cap of it (issue 21: a 300 MB body was read whole).
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from qosnet.service.problems import problem_response

__all__ = ["BodyLimitMiddleware", "BodyTooLarge"]


class BodyTooLarge(HTTPException):
    """Raised from `receive` when the body passes the cap. An HTTPException, because
    FastAPI passes those through from body reading (any other exception there becomes a
    400), and the app's HTTPException handler answers it as a problem (`app`)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"body: must be at most {limit} bytes")


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_bytes
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0  # the server rejects a malformed Content-Length itself
                if declared > limit:
                    await _too_large(limit)(scope, receive, send)
                    return
        received = 0
        started = False

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except BodyTooLarge:
            # Raised where no handler caught it (outside the routes): answer it here.
            if started:
                raise
            await _too_large(limit)(scope, receive, send)


def _too_large(limit: int) -> ASGIApp:
    return problem_response(
        "body-too-large",
        f"body: must be at most {limit} bytes",
        headers={"Connection": "close"},
    )
