"""A self-contained HTML page: figures embedded as `data:` PNGs, the style inline, no script
or font from the network, so the file opens anywhere, offline, as it was written.

The page's one script counts the figures that decoded (`data-figures-ok` on `<body>`) for
the browser test and for a reader whose viewer blocked images.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from qosnet.tables import write_text

__all__ = ["Figure", "Section", "markdown_page", "page", "png_data_uri"]

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; max-width: 1100px; margin: 2em auto;
       padding: 0 1em; color: #1d1d1f; }
h1 { font-size: 1.6em; } h2 { margin-top: 1.8em; border-bottom: 1px solid #ddd; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
td, th { border: 1px solid #ccc; padding: 2px 8px; text-align: right; }
th { background: #f4f4f4; } td:first-child, th:first-child { text-align: left; }
.warn { background: #fff0e0; border-left: 4px solid #e67e22; padding: 0.5em 1em; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; }
"""

SCRIPT = """
window.addEventListener('load', function () {
  var imgs = document.querySelectorAll('figure img');
  var ok = 0;
  imgs.forEach(function (i) { if (i.complete && i.naturalWidth > 0) ok++; });
  document.body.setAttribute('data-figures', imgs.length);
  document.body.setAttribute('data-figures-ok', ok);
});
"""


@dataclass(frozen=True)
class Figure:
    """A PNG and what it shows."""

    png: bytes
    caption: str


@dataclass(frozen=True)
class Section:
    title: str
    html: str = ""
    figures: Sequence[Figure] = ()


def png_data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _figure(f: Figure) -> str:
    caption = html.escape(f.caption)
    return (
        f'<figure><img src="{png_data_uri(f.png)}" alt="{caption}">'
        f"<figcaption>{caption}</figcaption></figure>"
    )


def page(title: str, sections: Sequence[Section], intro: str = "") -> str:
    """The whole page's HTML."""
    body = [f"<h1>{html.escape(title)}</h1>", intro]
    for s in sections:
        body.append(f"<section><h2>{html.escape(s.title)}</h2>{s.html}")
        body.extend(_figure(f) for f in s.figures)
        body.append("</section>")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style>"
        f"<script>{SCRIPT}</script></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def markdown_page(markdown_path: Path) -> Path:
    """`report.html` beside a reproduction's `report.md`: the same text, its tables, and its
    figures (PNG files beside it) embedded."""
    from markdown_it import MarkdownIt

    directory = markdown_path.parent
    text = markdown_path.read_text(encoding="utf-8")
    rendered = MarkdownIt("commonmark").enable("table").render(text)

    def embed(m: re.Match[str]) -> str:
        src, alt = html.unescape(m.group(1)), m.group(2)
        path = directory / src
        if path.suffix.lower() != ".png" or not path.is_file():
            return m.group(0)
        return f'<figure><img src="{png_data_uri(path.read_bytes())}" alt="{alt}"></figure>'

    body = re.sub(r'<img src="([^"]+)" alt="([^"]*)"\s*/?>', embed, rendered)
    title_match = re.search(r"^# (.+)$", text, re.M)
    title = title_match.group(1) if title_match else directory.name
    doc = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{STYLE}</style>"
        f"<script>{SCRIPT}</script></head>\n<body>\n{body}</body></html>\n"
    )
    return write_text(directory / "report.html", doc)
