"""A host of the data plane driven over a pipe: `python -m qosnet.dataplane.host [agent
options as JSON]` starts an agent (or, with options `{"socket": PATH, "port": N}`, connects
to the host's daemon as an application; with `{"daemon": {daemon options}}`, runs the
host's daemon), prints `{"endpoint": ...}` on stdout, then answers one JSON command per
stdin line with one JSON line:

- `{"op": "reserve", "dst": E, "bps": R, "priority": P, "lease": S|null, "port": N}` (`port`:
  a daemon's local port)
- `{"op": "release", "dst": E, "priority": P}`
- `{"op": "admit", "src": E, "port": N, "priority": P, "lease": S|null}`: admit the incoming
  flow from E (a closed agent refuses the others)
- `{"op": "stream", "dst": E, "size": N, "priority": P}`: send N-byte messages to E until
  `stop` (in a thread; its error, if any, shows in `stats`)
- `{"op": "stop"}`: stop the streams
- `{"op": "stats"}`: the agent's counters, and each stream's error
- `{"op": "ping_pong", "dst": E, "size": N, "count": K}`: K round trips with an echoing
  peer, each one's seconds
- `{"op": "pump", "dst": E, "size": N, "count": K}`: send K messages, return the monotonic
  start time (seconds)
- `{"op": "received", "src": E}`: bytes arrived from E so far
- `{"op": "expect", "src": E, "bytes": B}`: wait until B bytes in all have arrived from E,
  return the monotonic time they had (the clock is the machine's, shared by namespaces)
- `{"op": "cpu"}`: CPU seconds of the agent's dispatcher thread(s) (`schedstat`, to the
  nanosecond) and of the process (`process_time`)
- `{"op": "quit"}`

It is how a test or `qosnet reproduce seed004-real` runs a host inside a network namespace
(`ip netns exec`), where a Python object cannot reach. End of stdin ends the process, so a
crashed driver leaves nothing running.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from qosnet._core import Agent, Daemon


def _received(agent: Agent, src: str) -> int:
    return sum(r["bytes"] for r in agent.stats()["received"] if r["src"] == src)


def _expect(agent: Agent, src: str, goal: int, timeout: float) -> float:
    """Poll (every 0.1 ms) until `goal` bytes in all have arrived from `src`; the time then.
    The goal is absolute: this command may be read after the first bytes arrived."""
    deadline = time.monotonic() + timeout
    while _received(agent, src) < goal:
        if time.monotonic() > deadline:
            raise TimeoutError(f"expect: {goal} bytes from {src} did not arrive in {timeout} s")
        time.sleep(1e-4)
    return time.monotonic()


#: The agent's scheduling threads: the dispatcher, and the drain thread that finishes the
#: packets of full sockets (the rate control's own work, beside the application's sends).
AGENT_THREADS = ("qosnet-dispatch", "qosnet-drain")


def thread_cpu() -> dict[str, float]:
    """CPU seconds of this process's agent threads (`AGENT_THREADS`, under "dispatch") and
    of the whole process (`process_time`). A thread's is the scheduler's own account of its
    run time (`schedstat`, nanoseconds), or where that is missing its user and system time
    in the kernel's 10 ms ticks, too coarse for a short transfer."""
    tick = os.sysconf("SC_CLK_TCK")
    dispatch = 0.0
    for task in Path("/proc/self/task").iterdir():
        try:
            if (task / "comm").read_text().strip() not in AGENT_THREADS:
                continue
            try:
                dispatch += int((task / "schedstat").read_text().split()[0]) / 1e9
                continue
            except (OSError, IndexError, ValueError):
                pass
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        dispatch += (int(fields[11]) + int(fields[12])) / tick
    return {"dispatch": dispatch, "process": time.process_time()}


def main() -> None:
    options: dict[str, Any] = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    agent: Any
    if "daemon" in options:
        agent = Daemon(**options["daemon"])
    elif "socket" in options:
        agent = Agent.connect(options["socket"], options.get("port"))
    else:
        agent = Agent(**options)
    stop = threading.Event()
    streams: list[threading.Thread] = []
    errors: dict[str, str] = {}

    def stream(dst: str, size: int, priority: int) -> None:
        try:
            while not stop.is_set():
                agent.send_many(dst, size, 16, priority)
        except Exception as e:  # noqa: BLE001 - reported through stats
            errors[f"{dst}/{priority}"] = str(e)

    def reply(obj: Any) -> None:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    reply({"endpoint": agent.endpoint})
    for line in sys.stdin:
        cmd = json.loads(line)
        op = cmd.get("op")
        try:
            if op == "reserve":
                port = {"port": cmd["port"]} if "port" in cmd else {}
                agent.reserve(
                    cmd["dst"], cmd["bps"], cmd.get("priority", 0), cmd.get("lease"), **port
                )
                reply({"ok": True})
            elif op == "release":
                reply({"ok": agent.release(cmd["dst"], cmd.get("priority", 0))})
            elif op == "admit":
                agent.admit(
                    cmd["src"], cmd.get("port", 0), cmd.get("priority", 0), cmd.get("lease")
                )
                reply({"ok": True})
            elif op == "stream":
                t = threading.Thread(
                    target=stream, args=(cmd["dst"], cmd["size"], cmd.get("priority", 0))
                )
                t.daemon = True
                t.start()
                streams.append(t)
                reply({"ok": True})
            elif op == "stop":
                stop.set()
                reply({"ok": True})
            elif op == "stats":
                reply({**agent.stats(), "stream_errors": errors})
            elif op == "ping_pong":
                reply({"rtt": agent.ping_pong(cmd["dst"], cmd["size"], cmd["count"])})
            elif op == "pump":
                t0 = time.monotonic()
                agent.send_many(cmd["dst"], cmd["size"], cmd["count"], cmd.get("priority", 0))
                reply({"start": t0})
            elif op == "received":
                reply({"bytes": _received(agent, cmd["src"])})
            elif op == "expect":
                reply({"end": _expect(agent, cmd["src"], cmd["bytes"], cmd.get("timeout", 120))})
            elif op == "cpu":
                reply(thread_cpu())
            elif op == "quit":
                break
            else:
                ops = "reserve, release, admit, stream, stop, stats, ping_pong, pump, received, "
                ops += "expect, "
                ops += "cpu, quit"
                reply({"error": f"op: must be one of {ops}, got {op!r}"})
        except Exception as e:  # noqa: BLE001 - the driver gets the message
            reply({"error": str(e)})
    stop.set()
    agent.close()
    # The streams' threads return once the agent is closed; let them, before the
    # interpreter finalizes: a thread coming back from Rust into a finalizing interpreter
    # is killed mid-unwind ("FATAL: exception not rethrown") and aborts the process.
    for t in streams:
        t.join(timeout=10)


if __name__ == "__main__":
    main()
