"""The request body's limits, enforced while the body streams in.

- **Size** (413 above the cap): a body announced larger than the cap (`Content-Length`) is
  refused before a byte of it is read; one that arrives in chunks (`Transfer-Encoding:
  chunked`, or a Content-Length that lies) is counted as it is received and refused as soon
  as it passes the cap, so the service never holds more than the cap of it (a 300 MB body
  was once read whole).
- **Nesting** (422): every body the service takes is TOML or JSON, and Python's parsers
  recurse; a body nested deeper than `nesting.MAX_DEPTH`, or with a number of more than
  `nesting.MAX_DIGITS` digits, is refused as it streams in, before any parser sees it (a
  5000-deep JSON object was a 500 and a dropped connection). The rest of the body (under
  the cap) is read and dropped, so the connection stays usable.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from qosnet.nesting import Scanner, TooDeep
from qosnet.service.problems import kind_for_status, problem_response

__all__ = ["BodyLimitMiddleware", "BodyTooDeep", "BodyTooLarge"]


class BodyTooLarge(HTTPException):
    """Raised from `receive` when the body passes the cap. An HTTPException, because
    FastAPI passes those through from body reading (any other exception there becomes a
    400), and the app's HTTPException handler answers it as a problem (`app`)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"body: must be at most {limit} bytes")


class BodyTooDeep(HTTPException):
    """Raised from `receive` when the body nests too deeply (an HTTPException for the same
    reason as `BodyTooLarge`)."""

    def __init__(self, why: TooDeep) -> None:
        super().__init__(422, f"body: {why}")


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
        scanner = Scanner()
        ended = refused = False

        async def counted() -> Message:
            nonlocal received, ended
            nonlocal refused
            message = await receive()
            if message["type"] == "http.request":
                chunk = message.get("body", b"")
                received += len(chunk)
                ended = not message.get("more_body", False)
                if received > limit:
                    raise BodyTooLarge(limit)
                try:
                    scanner.feed(chunk)
                except TooDeep as e:
                    refused = True
                    raise BodyTooDeep(e) from None
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
        except BodyTooDeep as e:
            if started:
                raise
            await _too_deep(str(e.detail))(scope, receive, send)
        # (a body refused as too deep is read to its end, under the cap, and dropped, so
        # the connection can take the next request)
        while refused and not ended and received <= limit:
            message = await receive()
            received += len(message.get("body", b""))
            ended = message["type"] != "http.request" or not message.get("more_body", False)


def _too_deep(detail: str) -> ASGIApp:
    return problem_response(kind_for_status(422), detail, status=422)


def _too_large(limit: int) -> ASGIApp:
    return problem_response(
        "body-too-large",
        f"body: must be at most {limit} bytes",
        headers={"Connection": "close"},
    )
