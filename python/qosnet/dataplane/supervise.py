"""The agent daemon as an operator runs it (`qosnet agent`): what it does when the control
plane goes away, when it is told to stop, and how it says it is ready.

- **The service unreachable** (at start or later): the daemon keeps every reservation and
  admission already installed until its lease ends (`control.ServiceLink`: the service's
  own lease of the job or flow), logs the failure once per attempt, and retries with
  exponential back-off (1 s doubling to 30 s, `Backoff`); it never exits for it. When the
  service answers again the next sync installs, renews and removes as usual.
- **SIGTERM or SIGINT**: the daemon drains, then stops. Draining: it keeps sending what
  applications have already queued, for at most `drain` seconds (default 5), while new
  sends are still taken; then it drops whatever is left, prints the final flow table and
  removes its socket, exit status 0. A second signal while draining drops at once.
- **Readiness**: under systemd (`Type=notify`, `NOTIFY_SOCKET` set) it sends `READY=1`
  once its socket is bound and it listens, `STOPPING=1` when it starts draining
  (`configs/systemd/qosnet-agent.service`).
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

__all__ = ["Backoff", "Supervisor", "notify"]


@dataclass
class Backoff:
    """Delays between failed attempts: `first`, doubling, at most `most` seconds; `reset`
    after a success."""

    first: float = 1.0
    most: float = 30.0
    _next: float = field(default=0.0, init=False)

    def delay(self) -> float:
        self._next = self.first if self._next == 0.0 else min(self._next * 2, self.most)
        return self._next

    def reset(self) -> None:
        self._next = 0.0


def notify(state: str) -> bool:
    """Tell systemd `state` (e.g. "READY=1") if it asked to be told (`NOTIFY_SOCKET`);
    whether it was sent."""
    path = os.environ.get("NOTIFY_SOCKET")
    if not path:
        return False
    addr = "\0" + path[1:] if path.startswith("@") else path
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        try:
            s.sendto(state.encode(), addr)
        except OSError:
            return False
    return True


def _short(e: BaseException) -> str:
    """An exception as one line: its type and message, no traceback."""
    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


class Supervisor:
    """Runs `daemon` (a `Daemon`) until a signal or `duration`, following the service
    through `link` (a `ServiceLink`, or None) and logging through `log`."""

    def __init__(
        self,
        daemon: Any,
        link: Any,
        log: Callable[[str], None],
        *,
        status_every: float = 5.0,
        drain: float = 5.0,
        duration: float | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        self.daemon = daemon
        self.link = link
        self.log = log
        self.status_every = status_every
        self.drain = drain
        self.duration = duration
        self.backoff = backoff or Backoff()
        self.stop = threading.Event()
        self.drop = threading.Event()
        self.signal: str | None = None
        #: The service link's state, for the metrics: the last sync's outcome (None before
        #: the first), failures.
        self.service_up: bool | None = None
        self.failures = 0

    def link_state(self) -> dict[str, Any]:
        return {"up": bool(self.service_up), "failures": self.failures}

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        del frame
        if self.stop.is_set():
            self.drop.set()
        self.signal = signal.Signals(signum).name
        self.stop.set()

    def install_signals(self) -> None:
        """SIGTERM and SIGINT stop the daemon (the main thread only may install them)."""
        for s in (signal.SIGTERM, signal.SIGINT):
            signal.signal(s, self._on_signal)

    def sync(self) -> float:
        """One sync with the service; seconds until the next."""
        assert self.link is not None
        try:
            changed = self.link.sync()
        except Exception as e:  # the service's or the network's: never fatal here
            self.failures += 1
            delay = self.backoff.delay()
            kept = len([f for f in self.daemon.stats()["flows"] if f["reserved_bps"]])
            self.log(
                f"service unreachable ({_short(e)}): keeping {kept} installed reservation(s) "
                f"until their leases end; retrying in {delay:g} s"
            )
            self.service_up = False
            return delay
        if self.service_up is False:
            self.log("service reachable again: reservations synced")
        self.service_up = True
        self.backoff.reset()
        for what in ("installed", "removed", "admitted", "revoked"):
            if changed.get(what):
                self.log(f"{what}: {', '.join(changed[what])}")
        return float(self.link.interval)

    def status(self, elapsed: float) -> None:
        s = self.daemon.stats()
        sent = sum(f["bytes_sent"] for f in s["flows"])
        got = sum(r["bytes"] for r in s["received"])
        d = s["daemon"]
        self.log(
            f"{elapsed:8.1f} s  clients {d['clients']}  flows {len(s['flows'])}  "
            f"sent {sent / 1e6:.1f} MB  received {got / 1e6:.1f} MB  "
            f"malformed {s['malformed_frames']}+{d['malformed_requests']}"
        )

    def run(self) -> None:
        """Until stopped: sync, status lines; then drain (module docstring)."""
        t0 = time.monotonic()
        next_sync = t0
        next_status = t0 + self.status_every
        notify("READY=1")
        while not self.stop.is_set():
            now = time.monotonic()
            if self.duration is not None and now - t0 >= self.duration:
                break
            if self.link is not None and now >= next_sync:
                next_sync = time.monotonic() + self.sync()
            if now >= next_status:
                self.status(now - t0)
                next_status = now + self.status_every
            wake = min(next_status, next_sync if self.link is not None else next_status)
            if self.duration is not None:
                wake = min(wake, t0 + self.duration)
            self.stop.wait(max(0.01, wake - time.monotonic()))
        notify("STOPPING=1")
        self.drain_queues()

    def drain_queues(self) -> None:
        """Let the queued messages go for at most `drain` seconds (or until a second
        signal), saying what is dropped."""
        deadline = time.monotonic() + self.drain
        queued = self._queued()
        if queued and self.signal:
            self.log(
                f"{self.signal}: draining {queued} queued bytes for at most {self.drain:g} s "
                "(a second signal drops them)"
            )
        while queued and time.monotonic() < deadline and not self.drop.is_set():
            self.drop.wait(0.05)
            queued = self._queued()
        if queued:
            self.log(f"dropping {queued} queued bytes")

    def _queued(self) -> int:
        return sum(f["queued_bytes"] for f in self.daemon.stats()["flows"] if not f["failed"])
