"""Loading a cluster description: checks first, then the engine, then the exact size.

One path for the three ways a cluster arrives:

- an upload (`PUT /v1/cluster`, `Origin.UPLOAD`): only cluster sections, files only from
  the operator's cluster directory (the engine's resolver in its confined scope, for every
  key that names a file), errors about files cut to name and line;
- the stored cluster, at start or when another process installed one (`Origin.STORED`):
  checked for size again (the limit may have been lowered after a bad one was saved), and
  its errors cut too, since they are shown by `GET /health`;
- the operator's `--cluster` file (`Origin.OPERATOR`): its names anywhere, relative to
  itself, and the engine's whole message, which only the operator's terminal shows.

Nothing is kept or saved unless all of it passed: the size estimate, the engine, the exact
size and the description (`LoadedCluster.description`, computed once here because
`Cluster.to_dict` has the engine read the files again).
"""

from __future__ import annotations

import enum
import logging
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qosnet import ConfigError, nesting
from qosnet.middleware.cluster import Cluster
from qosnet.service.cluster_files import check_sections, named, redact
from qosnet.service.cluster_size import check_built, check_estimate
from qosnet.service.errors import Invalid
from qosnet.service.schemas import FieldError

__all__ = ["LoadedCluster", "Origin", "load_cluster"]

log = logging.getLogger("qosnet.service")


class Origin(enum.Enum):
    UPLOAD = "upload"
    STORED = "stored"
    OPERATOR = "operator"


@dataclass(frozen=True)
class LoadedCluster:
    cluster: Cluster
    description: dict[str, Any]


def load_cluster(
    text: str,
    name: str,
    *,
    origin: Origin,
    base_dir: Path | None,
    max_nodes: int,
    cluster_dir: Path | None = None,
) -> LoadedCluster:
    """The cluster `text` describes, or `Invalid` (422) naming what is wrong.

    `base_dir`: where relative file names are read from (an upload's is `cluster_dir`).
    """
    try:
        nesting.check_text(text)  # (tomllib recurses: refuse deep input first)
        doc = tomllib.loads(text)
    except nesting.TooDeep as e:
        raise Invalid.field("toml", str(e)) from None
    except tomllib.TOMLDecodeError as e:
        raise Invalid.field("toml", f"is not valid TOML: {e}") from None
    # (a stored cluster whose names are the cluster directory's came from an upload, or
    # lives there: read again in the same confined scope, so a link changed since cannot
    # lead it out)
    confined = origin is Origin.UPLOAD or (
        origin is Origin.STORED
        and cluster_dir is not None
        and base_dir is not None
        and base_dir.resolve() == cluster_dir.resolve()
    )
    if origin is Origin.UPLOAD:
        check_sections(doc)
        base_dir = cluster_dir  # (None: the engine refuses any file named, saying why)
    files = named(text, base_dir, confined=confined)
    check_estimate(doc, files, max_nodes)
    try:
        cluster = Cluster.from_toml(text, name, base_dir=base_dir, confined=confined)
        check_built(cluster.nodes, cluster.switches, max_nodes)
        description = cluster.to_dict()
    except ConfigError as e:
        errors = list(getattr(e, "errors", None) or [("<root>", str(e))])
        if origin is not Origin.OPERATOR:
            log.warning("cluster %r refused by the engine: %s", name, e)
            errors = redact(errors, files)
        raise Invalid(
            f"toml: not a valid qosnet network: {errors[0][0]}: {errors[0][1]}",
            [FieldError(field=f"toml: {p}", message=m) for p, m in errors],
        ) from None
    except Invalid:
        raise
    except BaseException as e:
        # An engine bug (a Rust panic arrives as pyo3's PanicException, a BaseException)
        # must not take the service down, nor show a client what the engine was reading.
        if not _is_engine_failure(e):
            raise
        log.exception("the engine failed on cluster %r", name)
        raise Invalid.field(
            "toml", "the engine failed on this description (an internal error, logged)"
        ) from None
    return LoadedCluster(cluster, description)


def _is_engine_failure(e: BaseException) -> bool:
    if isinstance(e, Exception):
        return True
    return type(e).__name__ == "PanicException"
