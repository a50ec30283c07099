"""`/docs` (Swagger UI) and `/redoc` (ReDoc), served with no CDN.

FastAPI's own pages load their scripts, styles, favicon and fonts from public CDNs, so on
a cluster's management network (often without Internet) they stay blank. The assets come
instead from the `fastapi-offline` package (pinned in pyproject.toml), which ships Swagger
UI 5 and ReDoc 2 builds; they are served from `/docs-assets`.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

__all__ = ["ASSETS_URL", "DOC_TEMPLATES", "install_docs"]

ASSETS_URL = "/docs-assets"
#: The paths served here, as templates (for the metrics).
DOC_TEMPLATES = ("/docs", "/docs/oauth2-redirect", "/redoc", f"{ASSETS_URL}/{{path:path}}")


def _assets() -> Path:
    return Path(str(files("fastapi_offline") / "static"))


def install_docs(app: FastAPI, *, docs_url: str = "/docs", redoc_url: str = "/redoc") -> None:
    """Serve the two documentation pages; the app must be made with `docs_url=None` and
    `redoc_url=None` so FastAPI's CDN pages are not served instead."""
    app.mount(ASSETS_URL, StaticFiles(directory=_assets()), name="docs-assets")
    router = APIRouter(include_in_schema=False)
    redirect_url = app.swagger_ui_oauth2_redirect_url or f"{docs_url}/oauth2-redirect"

    @router.get(docs_url)
    def swagger(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title} - Swagger UI",
            oauth2_redirect_url=f"{root}{redirect_url}",
            swagger_js_url=f"{root}{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
            swagger_ui_parameters=app.swagger_ui_parameters,
        )

    @router.get(redirect_url)
    def oauth2_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @router.get(redoc_url)
    def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_redoc_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{root}{ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS_URL}/favicon.png",
            with_google_fonts=False,
        )

    app.include_router(router)
