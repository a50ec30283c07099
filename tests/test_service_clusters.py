"""Issue 21, the service's cluster: files only from the operator's cluster directory, errors
that never quote them, a size limit checked before loading, and a stored cluster that no
longer loads leaving the service up ("degraded") instead of killing it at every start."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from qosnet.service.testing import (
    RunningService,
)

# ------------------------------------------------------------------------------------
# fixtures


def ibsim(hcas: int) -> str:
    """An ibsim net file: one switch, `hcas` HCAs on its ports 1..hcas."""
    lines = [f'Switch\t{hcas} "S1"'] + [f'[{i}]\t"H{i}"[1]' for i in range(1, hcas + 1)]
    for i in range(1, hcas + 1):
        lines += ["", f'Hca\t1 "H{i}"', f'[1]\t"S1"[{i}]']
    return "\n".join(lines) + "\n"


def fabric(file: str, routes: str | None = None) -> str:
    text = f'[topology]\nkind = "ib_fabric"\nfile = "{file}"\n'
    return text + (f'routes = "{routes}"\n' if routes else "")


@pytest.fixture
def cluster_dir(tmp_path: Path) -> Path:
    """The operator's directory: a good fabric, a broken one with a secret in it, and a
    routes directory; beside it (outside), a secret file."""
    d = tmp_path / "clusters"
    (d / "routes").mkdir(parents=True)
    (d / "four.net").write_text(ibsim(4))
    (d / "broken.net").write_text('Switch 8 "S1"\n[1] "H1"[1]\nTOPSECRET-hunter2 here\n')
    (d / "routes" / "lft-1").write_text("not an ibroute dump\n")
    (tmp_path / "secret.txt").write_text("TOPSECRET-hunter2\n")
    return d


def put(service: RunningService, toml: str, name: str = "c") -> Any:
    return service.http("root").put("/v1/cluster", json={"name": name, "toml": toml})


# ------------------------------------------------------------------------------------
# files only from the cluster directory


def test_without_a_cluster_dir_uploads_naming_files_are_refused(
    make_service: Callable[..., RunningService], sqlite_url: str, cluster_dir: Path
) -> None:
    service = make_service(sqlite_url)
    r = put(service, fabric(str(cluster_dir / "four.net")))
    assert r.status_code == 422, r.text
    assert r.headers["content-type"] == "application/problem+json"
    assert "--cluster-dir" in r.json()["detail"]
    assert r.json()["errors"][0]["field"] == "toml: topology.file"
    # a synthetic network names no file and still installs
    assert put(service, '[topology]\nkind = "star"\nports = 8\n').status_code == 200


def test_files_inside_the_cluster_dir_install(
    make_service: Callable[..., RunningService], db_url: str, cluster_dir: Path
) -> None:
    service = make_service(db_url, cluster_dir=cluster_dir)
    r = put(service, fabric("four.net"), "four")
    assert r.status_code == 200, r.text
    assert r.json()["nodes"] == 4
    # an absolute name is refused even inside the directory: names are relative to it
    r = put(service, fabric(str(cluster_dir / "four.net")))
    assert r.status_code == 422 and "inside the service's cluster directory" in r.text
    # and a restart (another working directory) reads it from the directory again
    first_tokens, clock = service.tokens, service.clock
    service.stop()
    again = make_service(db_url, tokens=first_tokens, clock=clock, cluster_dir=cluster_dir)
    assert again.alice.cluster().nodes == 4


def _same_refusal(a: Any, b: Any) -> None:
    assert a.status_code == b.status_code == 422, (a.text, b.text)
    assert a.json() == b.json()


def test_files_outside_are_refused_alike_whether_they_exist_or_not(
    make_service: Callable[..., RunningService], sqlite_url: str, cluster_dir: Path
) -> None:
    service = make_service(sqlite_url, cluster_dir=cluster_dir)
    os.symlink(cluster_dir.parent / "secret.txt", cluster_dir / "link.net")
    os.symlink(cluster_dir.parent / "missing.txt", cluster_dir / "dangling.net")
    refusals = [
        put(service, fabric(name))
        for name in (
            "/etc/passwd",
            "/etc/no-such-file",
            "../secret.txt",
            "../missing.txt",
            "routes/../../secret.txt",
            "link.net",
            "dangling.net",
        )
    ]
    for r in refusals:
        _same_refusal(refusals[0], r)
        assert "inside the service's cluster directory" in r.json()["detail"]
        assert "TOPSECRET" not in r.text and "root:" not in r.text
    # `routes` likewise: a directory outside, or one inside holding a link out
    r = put(service, fabric("four.net", "/etc"))
    assert r.status_code == 422 and "inside the service's cluster directory" in r.text
    os.symlink(cluster_dir.parent / "secret.txt", cluster_dir / "routes" / "lft-2")
    r = put(service, fabric("four.net", "routes"))
    assert r.status_code == 422, r.text
    assert "routes/lft-2 leads outside the cluster directory" in r.json()["detail"]
    assert "TOPSECRET" not in r.text
    # nothing was installed
    assert service.alice.cluster().name == "document-001"


def test_parse_errors_name_the_file_and_line_only(
    make_service: Callable[..., RunningService], db_url: str, cluster_dir: Path
) -> None:
    service = make_service(db_url, cluster_dir=cluster_dir)
    r = put(service, fabric("broken.net"))
    assert r.status_code == 422, r.text
    assert "TOPSECRET" not in r.text and "hunter2" not in r.text
    assert r.json()["errors"] == [
        {
            "field": "toml: topology.file",
            "message": "broken.net line 3: not a usable fabric description (the service "
            "does not quote its files; `qosnet validate` on the file shows the whole message)",
        }
    ]
    r = put(service, fabric("routes", None))
    assert r.status_code == 422 and "routes: is a directory, not a file" in r.text
    r = put(service, fabric("missing.net"))
    assert r.status_code == 422 and "missing.net does not exist in the cluster directory" in r.text


def test_uploads_describe_a_cluster_only(
    make_service: Callable[..., RunningService], sqlite_url: str, cluster_dir: Path
) -> None:
    """`[[traffic]]` names pattern and trace files: not part of a cluster."""
    service = make_service(sqlite_url, cluster_dir=cluster_dir)
    toml = (
        '[topology]\nkind = "star"\nports = 8\n[[traffic]]\n'
        'pattern = { kind = "permutation", file = "/etc/passwd" }\n'
    )
    r = put(service, toml)
    assert r.status_code == 422, r.text
    assert r.json()["errors"][0]["field"] == "toml: traffic"
    for bad in ('file = "a\\u0000b"', "file = 3"):
        r = put(service, f'[topology]\nkind = "ib_fabric"\n{bad}\n')
        assert r.status_code == 422 and "topology.file" in r.text, r.text
    r = put(service, "[topology\nkind = 1")
    assert r.status_code == 422 and "is not valid TOML" in r.text
    r = service.http("root").put("/v1/cluster", content=b"[topology]\x00\n")
    assert r.status_code == 422 and "NUL" in r.text


def test_every_key_naming_a_file_is_confined(
    make_service: Callable[..., RunningService], sqlite_url: str, cluster_dir: Path
) -> None:
    """Not only `[topology]`: an IBA CC agent's table file (`[endpoint] agent.cct`) once
    read `/proc/self/environ` into a 422 and `/dev/zero` until the service ran out of
    memory. Every key naming a file goes through the engine's one resolver."""
    service = make_service(sqlite_url, cluster_dir=cluster_dir)
    (cluster_dir / "cct.conf").write_text("cc_cct TOPSECRET-hunter2\n")

    def cct(path: str) -> str:
        return (
            '[topology]\nkind = "star"\nports = 4\n[router]\n'
            'marking = { kind = "iba_cc", threshold = 8 }\n[endpoint]\n'
            'agent = { kind = "iba_cc", ccti_increase = 1, ccti_timer = "20 us", '
            f'cct = {{ kind = "file", path = "{path}", unit = 1 }} }}\n'
        )

    for name in ("/proc/self/environ", "/etc/shadow", "../secret.txt", "/dev/zero"):
        r = put(service, cct(name))
        assert r.status_code == 422, r.text
        assert r.json()["errors"][0]["field"] == "toml: endpoint.agent.cct.path"
        assert "inside the service's cluster directory" in r.json()["detail"]
        assert "SHELL" not in r.text and "TOPSECRET" not in r.text and "root:" not in r.text
    # inside, a bad table is named with its file, never quoted
    r = put(service, cct("cct.conf"))
    assert r.status_code == 422, r.text
    assert "cct.conf: not a usable congestion control table" in r.text
    assert "TOPSECRET" not in r.text and "hunter2" not in r.text
    # a device inside the directory is not read either
    os.symlink("/dev/zero", cluster_dir / "zero")
    r = put(service, cct("zero"))
    assert r.status_code == 422 and "inside the service's cluster directory" in r.text
    assert service.http("root").get("/health").status_code == 200


def test_deep_or_huge_bodies_are_clean_4xx_and_the_connection_goes_on(
    make_service: Callable[..., RunningService], sqlite_url: str
) -> None:
    service = make_service(sqlite_url)
    root = service.http("root")
    bodies = [
        ("/v1/cluster", "text/plain", "x = " + "[" * 600 + "]" * 600),
        ("/v1/cluster", "text/plain", "x = " + "{a = " * 1100 + "1" + "}" * 1100),
        ("/v1/profiles", "application/json", '{"a":' * 5000 + "1" + "}" * 5000),
        ("/v1/profiles", "application/json", "[" * 100_000),
        ("/v1/profiles", "application/json", '{"a": ' + "9" * 100_000 + "}"),
    ]
    for path, kind, body in bodies:
        r = root.put(path, content=body.encode(), headers={"content-type": kind})
        assert r.status_code == 422, (path, r.status_code, r.text[:200])
        assert r.headers["content-type"] == "application/problem+json"
        assert "levels deep" in r.text or "digits" in r.text
        # the same connection answers the next request
        assert r.headers.get("connection", "").lower() != "close"
        assert root.get("/health").status_code == 200


# ------------------------------------------------------------------------------------
# size


def test_an_oversized_cluster_is_refused_before_it_is_built(
    make_service: Callable[..., RunningService], db_url: str
) -> None:
    service = make_service(db_url)
    start = time.monotonic()
    r = put(service, '[topology]\nkind = "mesh"\nk = 1024\nn = 2\n', "huge")
    assert time.monotonic() - start < 5  # the engine took 19 s and 3.3 GB to build it
    assert r.status_code == 422, r.text
    problem = r.json()
    assert problem["type"] == "/problems/cluster-too-large"
    assert "a mesh with 1048576 nodes exceeds this service's limit of 2048" in problem["detail"]
    for toml in (
        '[topology]\nkind = "star"\nports = 100000\n',
        '[topology]\nkind = "torus"\ndims = [64, 64, 2]\n',
        '[topology]\nkind = "fat_tree"\nk = 1000\nn = 1000000000\n',
        '[topology]\nkind = "dragonfly"\na = 16\np = 8\nh = 8\n',
        '[topology]\nkind = "flatfly"\nk = 16\nn = 3\nc = 4\n',
        '[topology]\nkind = "cmesh"\nk = 64\n',
    ):
        r = put(service, toml)
        assert r.status_code == 422 and "exceeds" in r.text, (toml, r.text)
    assert service.alice.cluster().name == "document-001"  # nothing saved


def test_the_limit_is_configurable_and_counts_a_fabric_once_built(
    make_service: Callable[..., RunningService], sqlite_url: str, cluster_dir: Path
) -> None:
    (cluster_dir / "twenty.net").write_text(ibsim(20))
    service = make_service(sqlite_url, cluster_dir=cluster_dir, max_cluster_nodes=16)
    assert put(service, '[topology]\nkind = "mesh"\nk = 4\nn = 2\n').status_code == 200
    r = put(service, '[topology]\nkind = "mesh"\ndims = [4, 5]\n')
    assert r.status_code == 422 and "20 nodes exceeds" in r.text
    r = put(service, fabric("twenty.net"))  # a fabric's size is known once read
    assert r.status_code == 422 and "a network with 20 nodes exceeds" in r.text
    assert put(service, fabric("four.net")).status_code == 200
    # fabric files past 16 KiB per allowed node are not even read
    (cluster_dir / "big.net").write_text(ibsim(4) + "#" * (16 * 16 * 1024) + "\n")
    r = put(service, fabric("big.net"))
    assert r.status_code == 422 and "fabric files of" in r.text


# ------------------------------------------------------------------------------------
# a stored cluster that does not load


def test_a_stored_cluster_that_does_not_load_leaves_the_service_degraded(
    make_service: Callable[..., RunningService], db_url: str, cluster_dir: Path
) -> None:
    first = make_service(db_url, cluster_dir=cluster_dir)
    assert put(first, fabric("four.net"), "four").status_code == 200
    job = first.alice.submit("polygon_rendering", nodes=4)
    tokens, clock = first.tokens, first.clock
    first.stop()
    (cluster_dir / "four.net").unlink()  # its file is gone: the engine cannot read it

    second = make_service(db_url, tokens=tokens, clock=clock, cluster_dir=cluster_dir)
    health = second.http().get("/health").json()
    assert health["status"] == "degraded" and health["cluster"] is None
    assert "the stored cluster 'four' does not load" in health["cluster_error"]
    assert "four.net" in health["cluster_error"]
    metrics = second.http().get("/metrics").text
    assert "qosnet_cluster_loaded 0.0" in metrics

    alice = second.http("alice")
    for method, path in (("POST", "/v1/jobs"), ("GET", "/v1/utilisation"), ("GET", "/v1/cluster")):
        body = {"application": "polygon_rendering", "nodes": 4} if method == "POST" else None
        r = alice.request(method, path, json=body)
        assert r.status_code == 503, (path, r.text)
        assert r.json()["type"] == "/problems/cluster-unavailable"
    # what needs no cluster still works: jobs, tokens, profiles
    assert second.alice.job(job.id).state == "active"
    assert second.root.tokens()
    assert second.alice.applications()
    # an admin releases the job and installs another cluster: back to normal
    r = put(second, '[topology]\nkind = "star"\nports = 8\n', "star")
    assert r.status_code == 409  # the job still holds its reservation
    assert second.alice.release(job.id).state == "released"
    assert put(second, '[topology]\nkind = "star"\nports = 8\n', "star").status_code == 200
    assert second.http().get("/health").json() == {
        "status": "ok",
        "database": second.handler.dialect,
        "revision": second.handler.revision(),
        "cluster": "star",
        "cluster_error": None,
    }
    assert second.alice.submit("polygon_rendering", nodes=4).state == "active"


def test_a_lowered_limit_keeps_a_big_stored_cluster_from_loading(
    make_service: Callable[..., RunningService], sqlite_url: str
) -> None:
    """The 1024x1024 mesh that killed the service at every restart, in small: a stored
    cluster over the limit is refused before the engine builds it, at start too."""
    first = make_service(sqlite_url)
    assert put(first, '[topology]\nkind = "mesh"\nk = 8\nn = 2\n', "mesh64").status_code == 200
    tokens, clock = first.tokens, first.clock
    first.stop()
    second = make_service(sqlite_url, tokens=tokens, clock=clock, max_cluster_nodes=16)
    health = second.http().get("/health").json()
    assert health["status"] == "degraded"
    assert "a mesh with 64 nodes exceeds this service's limit of 16" in health["cluster_error"]
