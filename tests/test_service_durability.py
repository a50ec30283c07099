"""`qosnet serve` as an operator runs it: a subprocess on a SQLite file, killed with
SIGKILL and restarted; its jobs and reservations are still there and their capacity still
taken. Then the `qosnet job` and `qosnet token` commands against it."""

from __future__ import annotations

import json
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from qosnet.cli import app as cli
from qosnet.client import Client, Refused
from qosnet.service.testing import free_port

EXAMPLE = {"interleaving": 0}  # document 001's worked example, with t2 = 1 s


class Served:
    """`qosnet serve` in a subprocess; `kill()` sends SIGKILL."""

    def __init__(self, db: Path, port: int, *args: str) -> None:
        self.url = f"http://127.0.0.1:{port}"
        command = [sys.executable, "-m", "qosnet", "serve", "--db", str(db), "--port", str(port)]
        self.proc = subprocess.Popen(
            [*command, "--log-level", "warning", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"qosnet serve exited: {self.proc.stderr.read()}")  # type: ignore[union-attr]
            try:
                if httpx.get(f"{self.url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("qosnet serve did not start")
            time.sleep(0.05)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def admin_token(self) -> str:
        line = self.lines.get(timeout=10)
        assert line.startswith("admin token (shown once): "), line
        return line.split(": ", 1)[1].strip()

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        assert self.proc.returncode == -signal.SIGKILL

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def serve(tmp_path: Path, worked_example: tuple[Path, Path]) -> Iterator[Any]:
    started: list[Served] = []

    def start(*args: str, port: int | None = None) -> Served:
        if not started:  # the first start installs document 001's worked example
            cluster, profiles = worked_example
            args = (*args, "--cluster", str(cluster), "--profiles", str(profiles))
        served = Served(tmp_path / "qosnet.db", port or free_port(), *args)
        started.append(served)
        return served

    yield start
    for served in started:
        served.stop()


runner = CliRunner()


def qosnet(*args: str, env: dict[str, str] | None = None) -> Any:
    result = runner.invoke(cli, list(args), env=env)
    assert "Traceback" not in result.output, result.output
    return result


def test_reservations_survive_kill_9(serve: Any, tmp_path: Path) -> None:
    first = serve("--init-admin", "--lease", "300")
    admin = Client(first.url, first.admin_token())
    tenant_token = admin.create_token("alice", "tenant").token
    alice = Client(first.url, tenant_token)
    job = alice.submit("ray_tracing", EXAMPLE, t2=1.0, idempotency_key="frame-1")
    assert job.node_count == 16 and job.bandwidth == 40e6
    before = alice.utilisation()
    first.kill()  # no shutdown, no chance to write anything more

    db = tmp_path / "qosnet.db"
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"

    second = serve("--init-admin", port=int(first.url.rsplit(":", 1)[1]))
    assert second.lines.empty() or "admin token" not in second.lines.get(timeout=1)
    again = alice.job(job.id)
    assert again == job
    after = alice.utilisation()
    assert after.active_jobs == 1 and after.free_nodes == []
    assert [link.reserved for link in after.links] == [link.reserved for link in before.links]
    with pytest.raises(Refused) as refused:  # the capacity is still taken
        alice.submit("polygon_rendering", t2=5.0)
    assert refused.value.reason == "not_enough_nodes"
    # a retry of the submit from before the crash returns the same job
    assert alice.submit("ray_tracing", EXAMPLE, t2=1.0, idempotency_key="frame-1").id == job.id

    assert alice.release(job.id).state == "released"
    small = alice.submit("polygon_rendering", {"image_size": 512}, nodes=4)
    second.kill()

    third = serve()
    with Client(third.url, tenant_token) as client:
        assert client.job(job.id).state == "released"
        assert client.job(small.id).state == "active"
        use = client.utilisation()
    assert use.active_jobs == 1 and len(use.free_nodes) == 12
    for client in (admin, alice):
        client.close()


def test_cli_against_a_running_service(serve: Any, tmp_path: Path) -> None:
    # (document 001's worked example admits raw link capacity: idt 5.25 at --payload-fraction
    # 1; the CLI's default leaves room for the data plane's headers, 0.9347 of each link)
    served = serve("--init-admin", "--payload-fraction", "1")
    served.admin_token()
    db = str(tmp_path / "qosnet.db")

    # `qosnet token create` works on the database of a running service
    created = qosnet("token", "create", "--name", "alice", "--role", "tenant", "--db", db)
    assert created.exit_code == 0, created.output
    token = created.stdout.strip().splitlines()[-1]
    assert token.startswith("qosnet_")
    listed = qosnet("token", "list", "--db", db)
    assert "alice" in listed.stdout and token not in listed.stdout
    bad_role = qosnet("token", "create", "--name", "x", "--role", "root", "--db", db)
    assert bad_role.exit_code == 2 and "--role" in bad_role.output

    env = {"QOSNET_URL": served.url, "QOSNET_TOKEN": token}
    submitted = qosnet(
        "job", "submit", "ray_tracing", "-p", "interleaving=0", "--t2", "1", "--json", env=env
    )
    assert submitted.exit_code == 0, submitted.output
    job = json.loads(submitted.stdout)
    assert job["node_count"] == 16 and job["flows"][0]["idt"] == pytest.approx(5.25)

    shown = qosnet("job", "show", job["id"], env=env)
    assert shown.exit_code == 0 and "IDT" in shown.stdout and "40 MB/s" in shown.stdout
    listed = qosnet("job", "list", env=env)
    assert listed.exit_code == 0 and job["id"] in listed.stdout
    usage = qosnet("job", "utilisation", env=env)
    assert usage.exit_code == 0 and "1 active job, 0/16 nodes free" in usage.stdout

    refused = qosnet("job", "submit", "polygon_rendering", "--t2", "5", env=env)
    assert refused.exit_code == 3 and "refused (not_enough_nodes)" in refused.stderr

    renewed = qosnet("job", "renew", job["id"], "--lease", "60", env=env)
    assert renewed.exit_code == 0 and "lease expires" in renewed.stdout
    released = qosnet("job", "release", job["id"], env=env)
    assert released.exit_code == 0 and f"{job['id']} released" in released.stdout
    again = qosnet("job", "release", job["id"], env=env)
    assert again.exit_code == 1 and "already released" in again.stderr

    invalid = qosnet("job", "submit", "ray_tracing", "--t2", "-1", env=env)
    assert invalid.exit_code == 1 and "t2: must be > 0" in invalid.stderr
    bad_param = qosnet("job", "submit", "ray_tracing", "-p", "image_size", env=env)
    assert bad_param.exit_code == 2 and "NAME=VALUE" in bad_param.output
    unknown = qosnet("job", "show", "job-nope", env=env)
    assert unknown.exit_code == 1 and "404" in unknown.stderr
    anonymous = qosnet("job", "list", env={"QOSNET_URL": served.url, "QOSNET_TOKEN": ""})
    assert anonymous.exit_code == 1 and "QOSNET_TOKEN" in anonymous.stderr
    nowhere = qosnet("job", "list", "--url", f"http://127.0.0.1:{free_port()}", env=env)
    assert nowhere.exit_code == 1 and "cannot reach" in nowhere.stderr


def test_serve_reports_bad_settings(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[topology]\nkind = 'moebius'\n")
    result = qosnet("serve", "--db", str(tmp_path / "x.db"), "--cluster", str(bad))
    assert result.exit_code == 1 and "topology.kind" in result.stderr
    result = qosnet("serve", "--db", "mysql://nobody@nowhere/db")
    assert result.exit_code == 1 and "sqlite:// or postgresql://" in result.stderr
