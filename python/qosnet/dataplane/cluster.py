"""A small cluster on one machine: network namespaces as hosts, a bridge as the switch,
veth pairs as links, `tc` token buckets as the links' rates.

```
host h0 (ns) eth0 ──veth── p0 ┐
host h1 (ns) eth0 ──veth── p1 ├─ br0, in the switch's own namespace
host h2 (ns) eth0 ──veth── p2 ┘
```

Each host's `eth0` is rate-limited on egress (its NIC's link into the switch) and so is each
switch port `p<i>` (the switch's output port towards host i), both at `link_bps`: flows from
two sources to one destination share the switch port `p<dest>`, as in document 004 §5.4
(Fig. 12c).

With `priority` (the default) every such port is set up as an operator sets up a switch for
reserved traffic: packets marked DSCP EF (46; the agents mark reserved flows) are served
strictly first, the rest get what is left (`tc` HTB: a class of rate 99% for EF at priority
0 and one of 1% for the rest at priority 1, both may borrow up to the link rate; a u32
filter on the DSCP). Without it each port is a plain token bucket (`tbf`), FIFO, as a
switch with no QoS configured. The queue at each port is about 10 ms of the link's rate
either way. Everything lives in namespaces this process creates and deletes (the root
namespace is not touched); the addresses are 10.201.0.0/24 inside them, reached by no one
else. Needs root (`ip netns`); `available()` says whether it can run here.

`Cluster.host(i)` starts host i's agent process (`qosnet.dataplane.host`) and returns a
handle that sends it commands.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

__all__ = ["Cluster", "HostProcess", "available"]

SUBNET = "10.201.0"
#: The code point the agents mark reserved flows with (Expedited Forwarding).
DSCP_EF = 46


def _run(*argv: str) -> None:
    r = subprocess.run(argv, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {r.stderr.strip() or r.stdout.strip()}")


def available() -> tuple[bool, str]:
    """(True, "") if namespaces can be built here, else (False, why not)."""
    if os.geteuid() != 0:
        return False, "network namespaces need root"
    name = f"qnprobe{os.getpid()}"
    try:
        _run("ip", "netns", "add", name)
    except (RuntimeError, FileNotFoundError) as e:
        return False, f"ip netns is not permitted here: {e}"
    _run("ip", "netns", "del", name)
    return True, ""


class HostProcess:
    """A host's agent process inside its namespace, driven over its stdin/stdout."""

    def __init__(self, netns: str | None, options: dict[str, Any]) -> None:
        argv = [sys.executable, "-m", "qosnet.dataplane.host", json.dumps(options)]
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", netns, *argv] if netns else argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        first = self._read()
        self.endpoint: str = first["endpoint"]

    @classmethod
    def local(cls, options: dict[str, Any]) -> HostProcess:
        """A host process on this machine's loopback (no namespace)."""
        return cls(None, {"listen": "127.0.0.1:0", **options})

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"host process exited (status {self.proc.poll()})")
        out: dict[str, Any] = json.loads(line)
        return out

    def request(self, op: str, **args: Any) -> None:
        """Send a command without waiting for its answer (`reply` reads it)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.proc.stdin.flush()

    def reply(self) -> dict[str, Any]:
        out = self._read()
        if "error" in out:
            raise RuntimeError(out["error"])
        return out

    def call(self, op: str, **args: Any) -> dict[str, Any]:
        self.request(op, **args)
        return self.reply()

    def kill(self) -> None:
        """Kill the agent at once (a failure test's crash)."""
        self.proc.kill()
        self.proc.wait()

    def close(self) -> None:
        """Ask the host to quit (kill it if it does not within 10 s); close the pipes."""
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass  # a broken pipe to a killed host


@dataclass
class Cluster:
    """`hosts` namespaces on one switch, every link at `link_bps` bits per second. Use as
    a context manager: leaving it kills the hosts and deletes the namespaces."""

    hosts: int
    link_bps: float = 100e6
    priority: bool = True
    prefix: str = field(default_factory=lambda: f"qn{os.getpid()}")
    processes: list[HostProcess] = field(default_factory=list)
    _made: list[str] = field(default_factory=list)

    def ns(self, i: int) -> str:
        return f"{self.prefix}h{i}"

    @property
    def switch(self) -> str:
        return f"{self.prefix}sw"

    def address(self, i: int) -> str:
        return f"{SUBNET}.{i + 1}"

    def __enter__(self) -> Cluster:
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        t: type[BaseException] | None,
        v: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _shape(self, ns: str, dev: str) -> None:
        # Burst of a few packets and a queue of ~10 ms: a switch port's buffering, not a
        # bufferbloat that would hide the sharing.
        rate = int(self.link_bps)
        tc = ("ip", "netns", "exec", ns, "tc")
        if not self.priority:
            _run(*tc, "qdisc", "add", "dev", dev, "root", "tbf",
                 "rate", f"{rate}bit", "burst", "32kb", "latency", "10ms")  # fmt: skip
            return
        queue = max(int(self.link_bps / 8 * 0.010), 32 * 1024)
        _run(*tc, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "20")
        _run(*tc, "class", "add", "dev", dev, "parent", "1:", "classid", "1:1", "htb",
             "rate", f"{rate}bit", "ceil", f"{rate}bit", "burst", "32kb")  # fmt: skip
        # Reserved traffic (EF) at priority 0 with 99% guaranteed, the rest at priority 1
        # with 1%: HTB serves the lower priority number first whenever both may send.
        for cls, share, prio in (("1:10", 0.99, "0"), ("1:20", 0.01, "1")):
            _run(*tc, "class", "add", "dev", dev, "parent", "1:1", "classid", cls, "htb",
                 "rate", f"{int(rate * share)}bit", "ceil", f"{rate}bit", "prio", prio,
                 "burst", "32kb")  # fmt: skip
            _run(*tc, "qdisc", "add", "dev", dev, "parent", cls, "bfifo", "limit", str(queue))
        tos = f"{DSCP_EF << 2:#x}"
        _run(*tc, "filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1",
             "u32", "match", "ip", "tos", tos, "0xfc", "flowid", "1:10")  # fmt: skip

    def _build(self) -> None:
        sw = self.switch
        _run("ip", "netns", "add", sw)
        self._made.append(sw)
        _run("ip", "-n", sw, "link", "add", "br0", "type", "bridge")
        _run("ip", "-n", sw, "link", "set", "br0", "up")
        for i in range(self.hosts):
            h = self.ns(i)
            _run("ip", "netns", "add", h)
            self._made.append(h)
            _run("ip", "-n", h, "link", "set", "lo", "up")
            veth = ("eth0", "type", "veth", "peer", "name", f"p{i}", "netns", sw)
            _run("ip", "-n", h, "link", "add", *veth)
            _run("ip", "-n", h, "addr", "add", f"{self.address(i)}/24", "dev", "eth0")
            _run("ip", "-n", h, "link", "set", "eth0", "up")
            _run("ip", "-n", sw, "link", "set", f"p{i}", "master", "br0")
            _run("ip", "-n", sw, "link", "set", f"p{i}", "up")
            self._shape(h, "eth0")
            self._shape(sw, f"p{i}")

    def host(self, i: int, **options: Any) -> HostProcess:
        """Start host i's agent, listening on its address (port chosen by the kernel)."""
        p = HostProcess(self.ns(i), {"listen": f"{self.address(i)}:0", **options})
        self.processes.append(p)
        return p

    def daemon(self, i: int, socket: str, **options: Any) -> HostProcess:
        """Start host i's agent daemon (`Daemon`), serving applications at `socket` (a path
        inside the host's namespace's view of the file system: the machine's)."""
        listen = f"{self.address(i)}:0"
        p = HostProcess(self.ns(i), {"daemon": {"socket": socket, "listen": listen, **options}})
        self.processes.append(p)
        return p

    def application(self, i: int, socket: str) -> HostProcess:
        """Start an application on host i that reaches the network only through its
        daemon at `socket` (one handle: `Agent.connect`)."""
        p = HostProcess(self.ns(i), {"socket": socket})
        self.processes.append(p)
        return p

    def close(self) -> None:
        for p in self.processes:
            p.close()
        self.processes.clear()
        for ns in reversed(self._made):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)
        self._made.clear()
