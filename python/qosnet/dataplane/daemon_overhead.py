"""The daemon's own overhead against library mode, beside rate control's against none: the
same measurements as `overhead` (document 004 §5.2's ping-pong round trips and streaming
bandwidth), on the loopback, with three configurations of the sending host:

- `none`: a library-mode agent in the application's process, flows unreserved (open);
- `library`: the same agent with the flows reserved above the path's capacity (the IDT/NDT
  path runs on every packet without throttling, as in `overhead`);
- `daemon`: the host's daemon in its own process, the application reaching it over the Unix
  socket (`Agent.connect`), the flows reserved in the daemon the same way.

The receiver is the same library-mode agent in all three (an echoing one for ping-pong, a
counting sink for streaming), so differences are the sending host's. Each repetition runs
the three on fresh processes in a rotated order (none-library-daemon, library-daemon-none,
...), and the overheads are paired per repetition: `library` against `none` (rate
control's), `daemon` against `library` (the daemon's own: the local socket's copy and
round trip) and `daemon` against `none`; rows give medians and quartiles over repetitions.

The machine is shared and noisy, so the sending host's CPU is reported too, which the
neighbours' load disturbs less than elapsed time: CPU microseconds per round trip and CPU
seconds per Gb streamed, of the application's process and (daemon) the daemon's, measured
with `process_time` (nanosecond clock). Nothing here is asserted: a benchmark's numbers
(`qosnet net bench --daemon`).
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qosnet.dataplane.cluster import HostProcess
from qosnet.dataplane.overhead import BW_SIZES, PING_SIZES, TARGET, _quantiles

__all__ = ["COMPARISONS", "CONFIGS", "report", "run", "verdicts"]

CONFIGS = ("none", "library", "daemon")
#: (name, configuration, baseline): each repetition's paired relative difference.
COMPARISONS = (
    ("rate control (library vs none)", "library", "none"),
    ("daemon vs library", "daemon", "library"),
    ("daemon vs none", "daemon", "none"),
)
#: "Above the path's capacity" on the loopback, as `overhead.local_pair`.
PEAK_BPS = 100e9


@dataclass
class Sender:
    """The sending application's handle, the receiver, and the processes whose CPU counts."""

    tx: HostProcess
    rx: HostProcess
    cpu: list[HostProcess]


@contextmanager
def sender(config: str, echo: bool) -> Iterator[Sender]:
    opts = {"open": True, "send_buffer": 0}
    procs: list[HostProcess] = []
    tmp = Path(tempfile.mkdtemp(prefix="qosnet-bench-"))
    try:
        rx = HostProcess.local({**opts, "echo": echo, "deliver": echo})
        procs.append(rx)
        if config == "daemon":
            sock = tmp / "agent.sock"
            daemon = HostProcess(
                None, {"daemon": {"socket": str(sock), "listen": "127.0.0.1:0", **opts}}
            )
            procs.append(daemon)
            tx = HostProcess.local({"socket": str(sock), "port": 1})
            procs.append(tx)
            daemon.call("reserve", dst=rx.endpoint, bps=PEAK_BPS, port=1)
            cpu = [tx, daemon]
        else:
            tx = HostProcess.local(opts)
            procs.append(tx)
            if config == "library":
                tx.call("reserve", dst=rx.endpoint, bps=PEAK_BPS)
            cpu = [tx]
        if echo and config != "none":
            rx.call("reserve", dst=tx.endpoint, bps=PEAK_BPS)
        yield Sender(tx, rx, cpu)
    finally:
        for p in reversed(procs):
            p.close()
        shutil.rmtree(tmp, ignore_errors=True)


def _cpu(s: Sender) -> float:
    return sum(float(p.call("cpu")["process"]) for p in s.cpu)


def ping_pong(s: Sender, size: int, count: int) -> dict[str, float]:
    """Median round trip (s, after a warm-up tenth) and the sending host's CPU per round
    trip (s)."""
    c0 = _cpu(s)
    rtts = s.tx.call("ping_pong", dst=s.rx.endpoint, size=size, count=count)["rtt"]
    c1 = _cpu(s)
    return {"value": float(statistics.median(rtts[count // 10 :])), "cpu": (c1 - c0) / count}


def bandwidth(s: Sender, size: int, total_bytes: int) -> dict[str, float]:
    """Payload bits/s pumping `total_bytes` in `size`-byte messages, and the sending host's
    CPU seconds per Gb."""
    count = max(1, total_bytes // size)
    c0 = _cpu(s)
    base = s.rx.call("received", src=s.tx.endpoint)["bytes"]
    s.rx.request("expect", src=s.tx.endpoint, bytes=base + count * size)
    start = s.tx.call("pump", dst=s.rx.endpoint, size=size, count=count)["start"]
    end = s.rx.reply()["end"]
    c1 = _cpu(s)
    bits = count * size * 8
    return {"value": bits / (end - start), "cpu": (c1 - c0) / (bits / 1e9)}


def run(
    quick: bool = False,
    reps: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Rows per test, size and comparison (see the module's doc)."""
    reps = reps or (3 if quick else 11)
    pings = 200 if quick else 1000
    total = (16 if quick else 64) * (1 << 20)
    got: dict[tuple[str, int, str], list[dict[str, float]]] = {}
    for rep in range(reps):
        order = CONFIGS[rep % 3 :] + CONFIGS[: rep % 3]
        for config in order:
            if progress:
                progress(f"{config}, repetition {rep + 1}/{reps}")
            with sender(config, echo=True) as s:
                for size in PING_SIZES:
                    got.setdefault(("rtt", size, config), []).append(ping_pong(s, size, pings))
            with sender(config, echo=False) as s:
                for size in BW_SIZES:
                    got.setdefault(("bw", size, config), []).append(bandwidth(s, size, total))
    rows: list[dict[str, Any]] = []
    for test, sizes in (("rtt", PING_SIZES), ("bw", BW_SIZES)):
        for size in sizes:
            per = {c: got[(test, size, c)] for c in CONFIGS}
            row: dict[str, Any] = {
                "test": "ping-pong RTT (us)" if test == "rtt" else "bandwidth (Gb/s)",
                "size": size,
                "reps": reps,
            }
            scale = 1e6 if test == "rtt" else 1e-9
            for c in CONFIGS:
                row[c] = statistics.median(r["value"] for r in per[c]) * scale
                # CPU: microseconds per round trip, or seconds per Gb
                cpu = [r["cpu"] * (1e6 if test == "rtt" else 1.0) for r in per[c]]
                row[f"cpu_{c}"] = statistics.median(cpu)
                q = _quantiles([r["value"] for r in per[c]])
                row[f"noise_{c}"] = (q[2] - q[0]) / q[1] if q[1] else 0.0
            for name, a, b in COMPARISONS:
                paired = [
                    # latency overhead (a - b) / b; bandwidth loss (b - a) / b
                    ((x["value"] - y["value"]) if test == "rtt" else (y["value"] - x["value"]))
                    / y["value"]
                    for x, y in zip(per[a], per[b], strict=True)
                ]
                cpu_paired = [
                    (x["cpu"] - y["cpu"]) / y["cpu"] for x, y in zip(per[a], per[b], strict=True)
                ]
                p25, med, p75 = _quantiles(paired)
                c25, cmed, c75 = _quantiles(cpu_paired)
                row[name] = {"median": med, "p25": p25, "p75": p75,
                             "cpu_median": cmed, "cpu_p25": c25, "cpu_p75": c75}  # fmt: skip
            rows.append(row)
    return rows


def verdicts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per test and comparison: the mean over sizes of the median paired overheads, the
    means of their quartiles, the worst size, the mean CPU overhead, and a verdict against
    document 004's 1% (`overhead.TARGET`) that says "unresolved" when the quartiles straddle
    it."""
    out = []
    for test in dict.fromkeys(r["test"] for r in rows):
        rs = [r for r in rows if r["test"] == test]
        for name, _, _ in COMPARISONS:
            meds = [r[name]["median"] for r in rs]
            lo = statistics.fmean(r[name]["p25"] for r in rs)
            hi = statistics.fmean(r[name]["p75"] for r in rs)
            worst = max(rs, key=lambda r, n=name: r[n]["median"])  # type: ignore[misc]
            if hi < TARGET:
                verdict = "under 1%"
            elif lo > TARGET:
                verdict = "over 1%"
            else:
                verdict = "unresolved at this noise"
            out.append({
                "test": test, "comparison": name, "mean": statistics.fmean(meds),
                "mean_p25": lo, "mean_p75": hi, "worst": worst[name]["median"],
                "worst_size": worst["size"],
                "cpu_mean": statistics.fmean(r[name]["cpu_median"] for r in rs),
                "cpu_mean_p25": statistics.fmean(r[name]["cpu_p25"] for r in rs),
                "cpu_mean_p75": statistics.fmean(r[name]["cpu_p75"] for r in rs),
                "verdict": verdict,
            })  # fmt: skip
    return out


def report(rows: list[dict[str, Any]], summary: list[dict[str, Any]], machine: str) -> str:
    """The measurement as Markdown: per size, the three configurations' medians, the paired
    overheads' medians and quartiles, and the sending host's CPU; then the means over sizes
    with their verdicts against document 004's 1%."""
    pct = "{:+.1%}".format
    out = [
        "# The daemon's overhead against library mode (loopback)",
        "",
        f"{rows[0]['reps']} repetitions, each running the three configurations on fresh "
        "processes in a rotated order; overheads are paired per repetition (median, and "
        f"quartiles in brackets). {machine}",
        "",
        "CPU is the sending host's (the application's process, and the daemon's): "
        "microseconds per round trip, seconds per Gb streamed.",
        "",
        "| test | size B | none | library | daemon | library vs none | daemon vs library "
        "| daemon vs none | CPU none / library / daemon | CPU daemon vs library |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        cmp = [r[name] for name, _, _ in COMPARISONS]
        cells = [f"{pct(c['median'])} ({pct(c['p25'])}..{pct(c['p75'])})" for c in cmp]
        dl = r["daemon vs library"]
        out.append(
            f"| {r['test']} | {r['size']} | {r['none']:.3f} | {r['library']:.3f} | "
            f"{r['daemon']:.3f} | {' | '.join(cells)} | "
            f"{r['cpu_none']:.3g} / {r['cpu_library']:.3g} / {r['cpu_daemon']:.3g} | "
            f"{pct(dl['cpu_median'])} ({pct(dl['cpu_p25'])}..{pct(dl['cpu_p75'])}) |"
        )
    out += [
        "",
        "## Means over sizes",
        "",
        "| test | comparison | mean of medians | mean quartiles | worst size | CPU (mean) "
        "| verdict against 1% |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for v in summary:
        out.append(
            f"| {v['test']} | {v['comparison']} | {pct(v['mean'])} | "
            f"{pct(v['mean_p25'])}..{pct(v['mean_p75'])} | {pct(v['worst'])} at "
            f"{v['worst_size']} | {pct(v['cpu_mean'])} ({pct(v['cpu_mean_p25'])}.."
            f"{pct(v['cpu_mean_p75'])}) | {v['verdict']} |"
        )
    return "\n".join(out) + "\n"
