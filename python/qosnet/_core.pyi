"""Type stubs for the Rust engine bindings (checked by `mypy.stubtest` in CI)."""

import os
from typing import Any, final

__all__ = [
    "AdmissionRefused",
    "Agent",
    "CallAdmission",
    "ConfigError",
    "Daemon",
    "DeadlockError",
    "FlowNotAdmitted",
    "InternalError",
    "NetError",
    "QosnetError",
    "Simulation",
    "SimulationError",
    "check",
    "config_schema",
    "estimate_memory",
    "named_files",
    "parse_bandwidth",
    "validate",
    "__version__",
]
__version__: str

class QosnetError(Exception):
    """Base of every qosnet engine error."""

class ConfigError(QosnetError, ValueError):
    """A configuration is invalid; `.errors` lists (path, message) pairs."""

    errors: list[tuple[str, str]]

class NetError(QosnetError):
    """A data-plane error: a failed flow or peer, an unreachable endpoint, a socket error."""

class FlowNotAdmitted(NetError):
    """A send on a flow with no reservation, on an agent that is not open."""

class SimulationError(QosnetError):
    """A valid configuration failed while running."""

class DeadlockError(SimulationError):
    """No flit moved for the watchdog period; `.stuck` names the occupied VCs and
    `.waits_for` a cycle of them, each waiting for the next (empty if there is none);
    `.stuck_vcs` and `.waits_for_vcs` give them as (router, input port, VC)."""

    stuck: list[str]
    waits_for: list[str]
    stuck_vcs: list[tuple[int, int, int]]
    waits_for_vcs: list[tuple[int, int, int]]

class InternalError(QosnetError):
    """A bug in qosnet: the engine panicked. The message says where; please report it."""

class AdmissionRefused(QosnetError):
    """Call admission refused a flow; `.refusal`: `criterion`, `message`, the numbers."""

    refusal: dict[str, Any]

@final
class CallAdmission:
    """Reserved bandwidth over a cluster described by configuration text (`[physical]`,
    `[topology]`, `[routing]`, `[router]`, `[endpoint]`; `[[traffic]]` is not needed).
    Bandwidths are in bits per second."""

    def __new__(
        cls, text: str, fmt: str = "toml", base_dir: str | None = None, confined: bool = False
    ) -> CallAdmission: ...
    @property
    def nodes(self) -> int: ...
    @property
    def routers(self) -> int: ...
    @property
    def node_names(self) -> list[str]: ...
    def path(self, src: int, dst: int) -> list[tuple[int, int]]: ...
    def hop_counts(self) -> list[list[int]]: ...
    def check(self, src: int, dst: int, bps: float) -> dict[str, Any] | None: ...
    def admit(self, src: int, dst: int, bps: float) -> int: ...
    def admit_all(self, flows: list[tuple[int, int, float]]) -> list[int]: ...
    def release(self, id: int) -> bool: ...
    def set_port_capacity(self, router: int, port: int, bps: float) -> None: ...
    def set_node_capacity(self, node: int, bps: float) -> None: ...
    def node(self, node: int) -> tuple[float, float, float]: ...
    def grantable(self, flows: list[tuple[int, int]]) -> float: ...
    def idt(self, src: int, bps: float) -> float: ...
    def ports(self) -> dict[str, list[Any]]: ...

@final
class Simulation:
    """A simulation built from a configuration (TOML or JSON text)."""

    def __new__(cls, text: str, fmt: str = "toml", base_dir: str | None = None) -> Simulation: ...
    @property
    def now(self) -> int: ...
    @property
    def time_limit(self) -> float | None: ...
    @property
    def window_end(self) -> int: ...
    @property
    def finished(self) -> bool: ...
    @property
    def flit_counts(self) -> tuple[int, int, int]: ...
    def advance(self, max_cycles: int) -> bool: ...
    def run(self) -> None: ...
    def check_invariants(self) -> None: ...
    def resolved_config(self) -> str: ...
    def result(self) -> dict[str, Any]: ...

def validate(
    text: str, fmt: str = "toml", base_dir: str | None = None
) -> list[tuple[str, str]]: ...
def check(text: str, fmt: str = "toml", base_dir: str | None = None) -> dict[str, Any]: ...
def named_files(
    text: str, fmt: str = "toml", base_dir: str | None = None, confined: bool = False
) -> list[tuple[str, str, bool, int]]: ...
def config_schema() -> str: ...
def estimate_memory(
    text: str, fmt: str = "toml", base_dir: str | None = None
) -> dict[str, Any]: ...
def parse_bandwidth(text: str) -> float: ...

@final
class Agent:
    """A host's rate-control agent (document 004's NIC firmware, in user space or through the
    kernel's socket pacing): reserved flows paced by IDT/NDT, others refused unless `open`.
    `Agent(...)` runs one in this process (library mode); `Agent.connect(socket)` is an
    application's handle on its host's daemon (`Daemon`, `qosnet agent`), with the same
    methods."""

    def __new__(
        cls,
        listen: str = "127.0.0.1:0",
        backend: str = "agent",
        packet_bytes: int = 4096,
        open: bool = False,
        max_message_bytes: int = ...,
        queue_bytes: int = ...,
        peer_timeout: float = 10.0,
        echo: bool = False,
        deliver: bool = True,
        send_buffer: int = 0,
        hello_timeout: float = 2.0,
        key_file: str | os.PathLike[str] | None = None,
        link_bps: float | None = None,
        mtu: int = 1500,
        dscp: int | None = ...,
    ) -> Agent: ...
    @staticmethod
    def connect(socket: str | os.PathLike[str], port: int | None = None) -> Agent: ...
    @property
    def endpoint(self) -> str: ...
    def reserve(
        self, dst: str, bits_per_second: float, priority: int = 0, lease: float | None = None
    ) -> None: ...
    def release(self, dst: str, priority: int = 0) -> bool: ...
    def admit(
        self, src: str, port: int = 0, priority: int = 0, lease: float | None = None
    ) -> None: ...
    def revoke(self, src: str, port: int = 0, priority: int = 0) -> bool: ...
    def send(self, dst: str, data: bytes, priority: int = 0) -> None: ...
    def send_many(self, dst: str, size: int, count: int, priority: int = 0) -> None: ...
    def flush(self, dst: str, priority: int = 0, timeout: float = 60.0) -> None: ...
    def recv(self, timeout: float | None = None) -> tuple[str, int, bytes]: ...
    def ping_pong(
        self, dst: str, size: int, count: int, priority: int = 0, timeout: float = 30.0
    ) -> list[float]: ...
    def stats(self) -> dict[str, Any]: ...
    def close(self) -> None: ...
    def __enter__(self) -> Agent: ...
    def __exit__(self, t: object, v: object, tb: object) -> None: ...

@final
class Daemon:
    """A host's agent as a daemon (document 004's trusted NIC firmware): it owns the host's
    sockets to peers and its one scheduler, and local applications reach it through the Unix
    socket `socket` (`Agent.connect`). Who may connect is the socket file's `mode`; only root,
    the daemon's user and `trusted_uids` may reserve or release through it (the control
    plane's reservations are installed with `reserve` here)."""

    def __new__(
        cls,
        socket: str | os.PathLike[str],
        listen: str = "0.0.0.0:7400",
        backend: str = "agent",
        packet_bytes: int = 4096,
        open: bool = False,
        max_message_bytes: int = ...,
        queue_bytes: int = ...,
        peer_timeout: float = 10.0,
        send_buffer: int = 0,
        inbox_bytes: int = ...,
        mode: int = 0o660,
        max_clients: int = 256,
        max_clients_per_uid: int = 64,
        max_request_bytes: int = ...,
        trusted_uids: list[int] = ...,
        hello_timeout: float = 2.0,
        key_file: str | os.PathLike[str] | None = None,
        link_bps: float | None = None,
        mtu: int = 1500,
        dscp: int | None = ...,
    ) -> Daemon: ...
    @property
    def endpoint(self) -> str: ...
    @property
    def socket(self) -> str: ...
    def reserve(
        self,
        dst: str,
        bits_per_second: float,
        priority: int = 0,
        lease: float | None = None,
        port: int = 0,
    ) -> None: ...
    def release(self, dst: str, priority: int = 0, port: int = 0) -> bool: ...
    def admit(
        self, src: str, port: int = 0, priority: int = 0, lease: float | None = None
    ) -> None: ...
    def revoke(self, src: str, port: int = 0, priority: int = 0) -> bool: ...
    def stats(self) -> dict[str, Any]: ...
    def close(self) -> None: ...
    def __enter__(self) -> Daemon: ...
    def __exit__(self, t: object, v: object, tb: object) -> None: ...
