"""A host of the data plane driven over a pipe: `python -m qosnet.dataplane.host [agent
options as JSON]` starts an agent, prints `{"endpoint": ...}` on stdout, then answers one
JSON command per stdin line with one JSON line:

- `{"op": "reserve", "dst": E, "bps": R, "priority": P, "lease": S|null}`
- `{"op": "release", "dst": E, "priority": P}`
- `{"op": "stream", "dst": E, "size": N, "priority": P}`: send N-byte messages to E until
  `stop` (in a thread; its error, if any, shows in `stats`)
- `{"op": "stop"}`: stop the streams
- `{"op": "stats"}`: the agent's counters, and each stream's error
- `{"op": "quit"}`

It is how a test or `qosnet reproduce seed004-real` runs a host inside a network namespace
(`ip netns exec`), where a Python object cannot reach. End of stdin ends the process, so a
crashed driver leaves nothing running.
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

from qosnet._core import Agent


def main() -> None:
    options: dict[str, Any] = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
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
                agent.reserve(cmd["dst"], cmd["bps"], cmd.get("priority", 0), cmd.get("lease"))
                reply({"ok": True})
            elif op == "release":
                reply({"ok": agent.release(cmd["dst"], cmd.get("priority", 0))})
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
            elif op == "quit":
                break
            else:
                reply({"error": f"op: must be one of reserve, release, stream, stop, stats, quit, got {op!r}"})
        except Exception as e:  # noqa: BLE001 - the driver gets the message
            reply({"error": str(e)})
    stop.set()
    agent.close()


if __name__ == "__main__":
    main()
