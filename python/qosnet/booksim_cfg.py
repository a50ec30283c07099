"""BookSim2 configuration files, read as they are (issue 39).

A BookSim2 user's input (`topology = mesh; k = 8; ...`) becomes a qosnet configuration (a
dict, as a TOML file would give) with the same meaning, for BookSim2's input-queued `iq`
router on a mesh, a torus, a fat tree, a dragonfly, a flattened butterfly, a concentrated
mesh, a k-ary n-fly or an anynet graph:
`configs/validation/README.md` is how each of that router's parameters is matched, and
`docs/booksim2.md` lists every BookSim2 key and what becomes of it. Keys a file leaves out
take BookSim2's defaults, not qosnet's: the file means what it means to BookSim2.

Every BookSim2 key is in exactly one of four tables here:
- `_MAPPED`: translated into qosnet's configuration;
- `_FIXED`: qosnet models only BookSim2's default value (a file setting another is refused,
  naming the key, the value and what qosnet supports);
- `_INERT`: read by BookSim2 only in a mode qosnet refuses anyway (batch traffic, read/write
  transactions, other topologies), so in an accepted file they change nothing;
- `_IGNORED`: no effect on what is simulated (output files, power model, stopping rules that
  qosnet replaces with a fixed window); listed with the reason in `qosnet convert`'s output.
A key in none of them is not a BookSim2 key, and is refused as BookSim2 itself would.

The syntax is BookSim2's (its `config.l`/`config.y`): statements `name = value;`, `//`
comments to the end of a line, values that are integers, decimals (with exponents), bare
words (`mesh`, `dim_order`, `-`) or brace lists (`{uniform,transpose}`, one per traffic
class).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import tomli_w

from qosnet._core import ConfigError
from qosnet.config_errors import config_error

__all__ = [
    "BooksimValue",
    "Conversion",
    "convert",
    "is_booksim",
    "looks_like_booksim",
    "parse",
    "to_toml",
]

BooksimValue = int | float | str

#: One token of BookSim2's syntax. Words may hold `-`, `/`, `.`, `+`, parentheses and
#: braces after their first character (hotspot({0,5},{1,1}) is one word to BookSim2).
_TOKEN = re.compile(
    r"""
    (?P<space>[ \t\r\n]+)
  | (?P<comment>//[^\n]*)
  | (?P<list>\{[A-Za-z0-9_\-.(){},]+\})
  | (?P<float>-?(?:[0-9]*\.)?[0-9]+[eE][+-]?[0-9]+|-?[0-9]*\.[0-9]+)
  | (?P<int>-?[0-9]+)
  | (?P<word>[A-Za-z_\-/.][A-Za-z0-9_\-/.+(){},]*)
  | (?P<punct>[=;])
    """,
    re.VERBOSE,
)


#: The longest number read (Python refuses to convert integers past 4300 digits; no
#: BookSim2 parameter needs more than a few).
_MAX_DIGITS = 100


def _error(key: str, message: str) -> ConfigError:
    return config_error([(key, message)])


def parse(text: str, where: str = "<text>") -> dict[str, BooksimValue]:
    """The assignments of a BookSim2 configuration, in file order (a key given twice keeps
    its last value, as in BookSim2). Raises ConfigError naming the line of a syntax error."""
    tokens: list[tuple[str, str, int]] = []
    line, pos = 1, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise _error("<root>", f"{where}, line {line}: unexpected {text[pos]!r}")
        kind = m.lastgroup or ""
        if kind not in ("space", "comment"):
            tokens.append((kind, m.group(), line))
        line += m.group().count("\n")
        pos = m.end()
    values: dict[str, BooksimValue] = {}
    i = 0
    while i < len(tokens):
        statement = tokens[i : i + 4]
        kinds = [t[0] for t in statement]
        at = statement[0][2]
        if (
            len(statement) < 4
            or kinds[0] != "word"
            or statement[1][1] != "="
            or kinds[2] not in ("int", "float", "word", "list")
            or statement[3][1] != ";"
        ):
            shown = " ".join(t[1] for t in statement)
            raise _error(
                "<root>",
                f"{where}, line {at}: expected `name = value;`, got {shown!r}",
            )
        name, raw = statement[0][1], statement[2][1]
        value: BooksimValue
        if kinds[2] in ("int", "float") and len(raw) > _MAX_DIGITS:
            raise _error(name, f"{where}, line {at}: a number of {len(raw)} characters")
        if kinds[2] == "int":
            value = int(raw)
        elif kinds[2] == "float":
            value = float(raw)
        else:
            value = raw
        values.pop(name, None)
        values[name] = value
        i += 4
    return values


_STATEMENTS = re.compile(r"^(\s*[A-Za-z_][A-Za-z0-9_]*\s*=\s*[^;=\n]+;)+\s*(//.*)?$")


def looks_like_booksim(text: str) -> bool:
    """Whether `text` reads as a BookSim2 configuration rather than TOML: every line that is
    not blank or a `//` comment holds `name = value;` statements, and there is one at least.
    (A TOML file never ends a line in `;` nor starts a comment with `//`.)"""
    statements = 0
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("//"):
            continue
        if not _STATEMENTS.match(raw):
            return False
        statements += 1
    return statements > 0


def is_booksim(name: str, text: str) -> bool:
    """Whether a file is read as BookSim2's: named `*.cfg`, or reading as one."""
    return name.endswith(".cfg") or looks_like_booksim(text)


# ---------------------------------------------------------------------------------------
# BookSim2's keys, and what becomes of each. Defaults are BookSim2's (booksim_config.cpp).

#: Translated into qosnet's configuration (see `convert`): key -> BookSim2's default.
_MAPPED: dict[str, BooksimValue] = {
    "topology": "torus",
    "k": 8,
    "n": 2,
    "routing_function": "none",
    "use_noc_latency": 1,
    # (an anynet's file: `_topology`)
    "network_file": "",
    # (a flatfly's or cmesh's concentration and its routers' and nodes' placement:
    # `_flatfly`, `_cmesh`)
    "c": 1,
    "x": 8,
    "y": 8,
    "xr": 1,
    "yr": 1,
    "router": "iq",
    "num_vcs": 16,
    "vc_buf_size": 8,
    "wait_for_tail_credit": 0,
    "vc_allocator": "islip",
    "sw_allocator": "islip",
    "arb_type": "round_robin",
    "alloc_iters": 1,
    "routing_delay": 1,
    "vc_alloc_delay": 1,
    "sw_alloc_delay": 1,
    "st_prepare_delay": 0,
    "st_final_delay": 1,
    "credit_delay": 0,
    "input_speedup": 1,
    "output_speedup": 1,
    "internal_speedup": 1.0,
    "traffic": "uniform",
    # (randperm's seed: `_randperm`)
    "perm_seed": 0,
    "injection_process": "bernoulli",
    # (on_off's: `_on_off`)
    "burst_alpha": 0.5,
    "burst_beta": 0.5,
    "burst_r1": -1.0,
    "injection_rate": 0.1,
    "injection_rate_uses_flits": 0,
    "packet_size": 1,
    "sim_type": "latency",
    "warmup_periods": 3,
    "sample_period": 1000,
    "max_samples": 10,
    "seed": 0,
}

#: qosnet models only BookSim2's default of these: key -> (default, what it means).
_FIXED: dict[str, tuple[BooksimValue, str]] = {
    "subnets": (1, "one network (qosnet has no parallel subnetworks)"),
    "link_failures": (0, "no failed links"),
    "output_buffer_size": (
        -1,
        "BookSim2's unbounded output queue, bounded by the downstream credits (qosnet's "
        "output VC buffers: a flit each, or vc_buf_size flits under output or internal "
        "speedup)",
    ),
    "noq": (0, "no next-hop output queueing"),
    "speculative": (0, "non-speculative switch allocation"),
    "buf_size": (-1, "a buffer of vc_buf_size flits per VC"),
    "buffer_policy": ("private", "a private buffer per VC"),
    "vc_busy_when_full": (0, "a full VC stays allocatable"),
    "vc_prioritize_empty": (0, "no preference for empty VCs"),
    "vc_priority_donation": (0, "no priority donation"),
    "vc_shuffle_requests": (0, "VC requests in port order"),
    "hold_switch_for_packet": (0, "the switch allocated flit by flit"),
    "vct": (0, "wormhole flow control (no virtual cut-through)"),
    "classes": (1, "one traffic class"),
    "priority": ("none", "no message priorities"),
    "use_read_write": (0, "plain packets (no read/write transactions)"),
    "measure_stats": (1, "statistics measured for the traffic"),
    "include_queuing": (1, "latency counted from creation (source queueing included)"),
    "sim_count": (1, "one simulation a run"),
}

#: Read by BookSim2 only in a mode that qosnet refuses when it is selected (the key that
#: selects it is in `_FIXED` or `_MAPPED`): key -> that mode.
_INERT: dict[str, str] = {
    **{k: "topologies other than mesh and torus" for k in ("in_ports", "out_ports")},
    "channel_file": "topology = anynet",
    "fail_seed": "link_failures > 0",
    **{
        k: "speculative = 1"
        for k in ("spec_check_elig", "spec_check_cred", "spec_mask_by_reqs", "spec_sw_allocator")
    },
    **{
        k: "buffer_policy other than private"
        for k in (
            "private_bufs",
            "private_buf_size",
            "private_buf_start_vc",
            "private_buf_end_vc",
            "max_held_slots",
            "feedback_aging_scale",
            "feedback_offset",
        )
    },
    "class_priority": "classes > 1",
    "packet_size_rate": "several packet sizes (packet_size = {...})",
    **{k: "sim_type = batch" for k in ("batch_size", "batch_count", "max_outstanding_requests")},
    **{
        f"{kind}_{part}": "use_read_write = 1"
        for kind in ("read_request", "write_request", "read_reply", "write_reply")
        for part in ("begin_vc", "end_vc", "subnet", "size")
    },
    "write_fraction": "use_read_write = 1",
    # (only warm-up by convergence, warmup_periods = 0, which is refused, reads these)
    "warmup_thres": "warmup_periods = 0",
    "acc_warmup_thres": "warmup_periods = 0",
}

_POWER_KEYS = (
    "H_INVD2 W_INVD2 H_DFQD1 W_DFQD1 H_ND2D1 W_ND2D1 H_SRAM W_SRAM Vdd R IoffSRAM IoffP IoffN "
    "Cg_pwr Cd_pwr Cgdl Cg Cd LAMBDA MetalPitch Rw Cw_gnd Cw_cpl wire_length"
).split()

_OUTPUT_FILES = (
    "watch_file watch_flits watch_packets watch_transactions watch_out stats_out "
    "injected_flits_out received_flits_out stored_flits_out sent_flits_out "
    "outstanding_credits_out ejected_flits_out active_packets_out used_credits_out "
    "free_credits_out max_credits_out sent_packets_out"
).split()

#: No effect on what is simulated: key -> why it can be left aside.
_IGNORED: dict[str, str] = {
    **{k: "an output or tracing file of BookSim2's" for k in _OUTPUT_FILES},
    "print_activity": "printing only",
    "print_csv_results": "printing only",
    "pair_stats": "extra statistics printed, not simulated behaviour",
    "viewer_trace": "printing only",
    "deadlock_warn_timeout": "a warning only (qosnet's watchdog detects deadlock)",
    "output_delay": "not read by BookSim2's iq router",
    **{k: "power model, not simulated behaviour" for k in _POWER_KEYS},
    "sim_power": "power model, not simulated behaviour",
    "power_output_file": "power model, not simulated behaviour",
    "tech_file": "power model, not simulated behaviour",
    "channel_width": "power model, not simulated behaviour",
    "channel_sweep": "power model, not simulated behaviour",
    "latency_thres": (
        "BookSim2 abandons a run past it; qosnet runs the window and flags saturation"
    ),
    "stopping_thres": (
        "BookSim2 may end a run early once latency converges; qosnet measures every sample"
    ),
    "acc_stopping_thres": (
        "BookSim2 may end a run early once throughput converges; qosnet measures every sample"
    ),
}

_KNOWN = set(_MAPPED) | set(_FIXED) | set(_INERT) | set(_IGNORED)

#: BookSim2's `traffic` names -> qosnet's pattern kinds (same definitions on a k-ary n-cube).
TRAFFIC = {
    "uniform": "uniform",
    "transpose": "transpose",
    "bitcomp": "bit_complement",
    "bitrev": "bit_reversal",
    "shuffle": "perfect_shuffle",
    "tornado": "tornado",
    "neighbor": "neighbour",
    # (BookSim2's random patterns by their definitions: traffic/booksim_patterns.rs)
    "diagonal": "diagonal",
    "asymmetric": "asymmetric",
    "taper64": "taper64",
    # (a dragonfly's only: `_bad_dragon` reads it)
    "bad_dragon": "next_group",
    # (a k x k grid's only: `_badperm_yarc` reads it)
    "badperm_yarc": "badperm_yarc",
}

#: BookSim2's `sw_allocator` names -> qosnet's `router.allocator.kind`.
SW_ALLOCATORS = {
    "islip": "islip",
    "separable_input_first": "separable_input_first",
    "wavefront": "wavefront",
}

#: BookSim2's VC allocators, qosnet's `router.vc_allocator` of the same name: the same
#: allocators over the same input and output VCs (configs/validation/README.md).
VC_ALLOCATORS = ("islip", "separable_input_first")

#: Topologies qosnet runs and BookSim2's routing functions on each -> qosnet's routing
#: kind. BookSim2 looks a function up as `<name>_<topology>`: `dor_torus` does not exist.
ROUTING = {
    # (BookSim2's min_adapt_torus puts adaptive traffic on VC 3 alone, qosnet's on every VC
    # above the dateline pair: not the same routing, so a torus file's min_adapt is refused)
    # (valiant_mesh: a random intermediate router, then the destination, each phase on half
    # of the VCs; xy_yx_mesh: O1TURN, XY or YX per packet on half of the VCs each)
    "mesh": {
        "dim_order": "dor",
        "dor": "dor",
        "min_adapt": "min_adapt",
        "valiant": "valiant",
        "xy_yx": "xy_yx",
        # (adaptive_xy_yx_mesh: O1TURN's order by the first hops' used credits at the source)
        "adaptive_xy_yx": "adaptive_xy_yx",
    },
    # (valiant_torus: a random intermediate router, then the destination, each phase in
    # dimension order on the dateline pair: four VC classes)
    "torus": {"dim_order": "dor_dateline", "valiant": "valiant"},
    # (ugal_dragonflynew: a random intermediate router, the queues weighed 1 and 2, the
    # VC as the phase; qosnet's `ugal_router`, its `ugal` being Kim et al.'s)
    "dragonflynew": {"min": "min", "ugal": "ugal_router"},
    # BookSim2's ran_min_flatfly (`min_flatfly`) takes, despite its name, the lowest
    # differing dimension first at every router, over all VCs: qosnet's flatfly `dor`; its
    # valiant_flatfly and ugal_flatfly (`ugal_flatfly_onchip`) as qosnet's, two VC halves
    # (xyyx_flatfly and adaptive_xyyx_flatfly: O1TURN, dimensions up or down, the order
    # drawn or chosen by the first hops' used credits at the source, half of the VCs each;
    # ugal_xyyx_flatfly: UGAL-L in an order drawn at the source, a quarter of the VCs for
    # each order's two phases)
    "flatfly": {
        "ran_min": "dor",
        "valiant": "valiant",
        "ugal": "ugal",
        "ugal_xyyx": "ugal_xy_yx",
        "xyyx": "xy_yx",
        "adaptive_xyyx": "adaptive_xy_yx",
    },
    # BookSim2's min_anynet: a shortest path per destination, as qosnet's routes on a
    # network read from a file (minimal hops, ties spread by destination)
    "anynet": {"min": "auto"},
    # BookSim2's nca_fattree: up through a port drawn uniformly at each level, then down;
    # its anca_fattree: the less loaded (credits in use) of two ports drawn at each level
    "fattree": {"nca": "nca", "anca": "anca"},
    # BookSim2's cmesh.cpp: dor_no_express_cmesh goes x then y over the mesh channels,
    # dor_cmesh over the edges' express channels too (qosnet's `dor_express`)
    # (xy_yx_no_express and xy_yx: O1TURN, x-then-y or y-then-x drawn per packet, each on
    # half of the VCs, over the mesh channels or the express ones too)
    "cmesh": {
        "dor_no_express": "dor",
        "dor": "dor_express",
        "xy_yx_no_express": "xy_yx",
        "xy_yx": "xy_yx_express",
    },
    # dest_tag_fly: stage s takes the destination's base-k digit n-1-s
    "fly": {"dest_tag": "dest_tag"},
}


#: A flatfly's and a cmesh's placement keys: read only there (BookSim2's flatfly_onchip.cpp,
#: cmesh.cpp).
FLATFLY_PLACEMENT = ("c", "x", "y", "xr", "yr")
PLACED = ("flatfly", "cmesh")

#: BookSim2's dragonflynew gives its local channels 10 cycles and its global channels 100,
#: flits and credits alike (DRAGON_LATENCY, compiled in).
DRAGONFLY_LATENCY = (10, 100)


@dataclass
class Conversion:
    """A BookSim2 file as qosnet's configuration, and the keys it set that change nothing
    in qosnet's run (key, value, why)."""

    config: dict[str, Any]
    ignored: list[tuple[str, BooksimValue, str]] = field(default_factory=list)


def _choices(items: Any) -> str:
    return ", ".join(str(i) for i in items)


class _Reader:
    """The file's values over BookSim2's defaults, and the refusals collected on the way
    (every problem is reported at once, as the engine does)."""

    def __init__(self, given: dict[str, BooksimValue]) -> None:
        self.given = given
        self.errors: list[tuple[str, str]] = []

    def refuse(self, key: str, message: str) -> None:
        self.errors.append((key, message))

    def value(self, key: str) -> BooksimValue:
        return self.given.get(key, _MAPPED[key])

    def word(self, key: str) -> str:
        v = self.value(key)
        if isinstance(v, str) and v.startswith("{"):
            self.refuse(key, f"{v}: one value per traffic class; qosnet reads one class")
            return str(_MAPPED[key])
        return str(v)

    def integer(self, key: str, low: int = 0) -> int:
        v = self.value(key)
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            self.refuse(key, f"must be an integer >= {low}, got {v}")
            return max(low, int(_MAPPED[key]) if isinstance(_MAPPED[key], int) else low)
        return v

    def number(self, key: str) -> float:
        v = self.value(key)
        if isinstance(v, str):
            if v.startswith("{"):
                self.refuse(key, f"{v}: one value per traffic class; qosnet reads one class")
            else:
                self.refuse(key, f"must be a number, got {v}")
            return float(_MAPPED[key])
        return float(v)


def convert(text: str, source: str = "<text>") -> Conversion:
    """The qosnet configuration with the meaning of BookSim2 configuration `text`. Raises
    ConfigError listing every key that qosnet cannot honour (key: value, what it supports)."""
    given = parse(text, source)
    r = _Reader(given)
    ignored: list[tuple[str, BooksimValue, str]] = []
    for key, value in given.items():
        if key not in _KNOWN:
            r.refuse(key, "not a BookSim2 configuration key")
        elif key == "hold_switch_for_packet" and value != 0 and r.value("packet_size") == 1:
            # (BookSim2's iq router sets the hold after a flit that is not its packet's tail)
            ignored.append(
                (
                    key,
                    value,
                    "no effect with 1-flit packets: BookSim2 holds the switch from a "
                    "packet's head flit to its tail, and here the head is the tail",
                )
            )
        elif key in _FIXED:
            default, meaning = _FIXED[key]
            if value != default and not (isinstance(default, int) and value == float(default)):
                r.refuse(
                    key,
                    f"{value} is not supported: qosnet models only {key} = {default} ({meaning})",
                )
        elif key in _IGNORED:
            ignored.append((key, value, _IGNORED[key]))
        elif key in _INERT:
            ignored.append((key, value, f"used by BookSim2 only with {_INERT[key]}"))
        elif key in FLATFLY_PLACEMENT and given.get("topology", _MAPPED["topology"]) not in PLACED:
            ignored.append((key, value, "used by BookSim2 only with topology = flatfly or cmesh"))
        elif key in _BURST and not str(given.get("injection_process", "")).startswith("on_off"):
            ignored.append((key, value, "used by BookSim2 only with injection_process = on_off"))
        elif key == "perm_seed" and not str(given.get("traffic", "")).startswith("randperm"):
            ignored.append((key, value, "used by BookSim2 only with traffic = randperm"))
        elif key == "network_file" and given.get("topology", _MAPPED["topology"]) != "anynet":
            ignored.append((key, value, "used by BookSim2 only with topology = anynet"))
        elif key in ("k", "n") and given.get("topology") == "anynet":
            ignored.append((key, value, "not used by BookSim2's anynet (its file gives the shape)"))

    config: dict[str, Any] = {
        "simulation": _simulation(r),
        "topology": {},
        "routing": {},
        "router": {},
        # (its node starts a packet only on a VC neither in use nor full: vc_needs_credit)
        "endpoint": {"link_latency": 1, "output_stage": 1, "vc_needs_credit": True},
        "traffic": [_traffic(r)],
    }
    hop_latency = _topology(r, config)
    config["router"] = _router(r, hop_latency)
    if r.errors:
        raise config_error(r.errors)
    return Conversion(config, ignored)


def _simulation(r: _Reader) -> dict[str, Any]:
    sim_type = r.word("sim_type")
    if sim_type != "latency":
        r.refuse(
            "sim_type",
            f"{sim_type} is not supported: qosnet runs sim_type = latency (a warm-up, a "
            "measured window, then the measured packets drained)",
        )
    warmup = r.integer("warmup_periods")
    if warmup == 0 and "warmup_periods" in r.given:
        r.refuse(
            "warmup_periods",
            "0 (warm-up until converged) is not supported: qosnet warms up for a fixed "
            "number of cycles; give warmup_periods >= 1",
        )
    warmup = max(warmup, 1)
    period = r.integer("sample_period", 1)
    samples = r.integer("max_samples", 1)
    if samples <= warmup:
        r.refuse(
            "max_samples",
            f"{samples} leaves no measured sample after warmup_periods = {warmup}: "
            "BookSim2 counts the warm-up among max_samples",
        )
    seed = r.value("seed")
    if not isinstance(seed, int) or seed < 0:
        r.refuse("seed", f"{seed} is not supported: give a number >= 0 (runs are reproducible)")
        seed = 0
    # BookSim2 warms up for warmup_periods samples, then measures until latency converges
    # or max_samples (warm-up included) have run: qosnet measures all of them.
    return {
        "seed": seed,
        "warmup": warmup * period,
        "measure": max(samples - warmup, 1) * period,
    }


def dragonfly_shape(k: int) -> dict[str, Any]:
    """BookSim2's dragonflynew of parameter k as qosnet's dragonfly: k terminals and k
    global channels per router, 2k routers a group (a balanced dragonfly, Kim et al. §3.1)."""
    return {"kind": "dragonfly", "a": 2 * k, "p": k, "h": k}


def nodes(topology: dict[str, Any]) -> int:
    """Terminal nodes of a `[topology]` this module writes (mesh, torus, fat tree, fly,
    dragonfly, flatfly, cmesh, star)."""
    kind = topology["kind"]
    if kind == "dragonfly":
        a, p, h = topology["a"], topology["p"], topology["h"]
        return (a * h + 1) * a * p
    if kind == "cmesh":
        return 4 * topology["k"] ** 2
    if kind == "star":
        return int(topology["ports"])
    return topology["k"] ** topology["n"] * topology.get("c", 1)


def _topology(r: _Reader, config: dict[str, Any]) -> int:
    """Fills `topology` and `routing`; returns a channel's latency in cycles."""
    topology = r.word("topology")
    k, n = r.integer("k", 2), r.integer("n", 1)
    routing = r.word("routing_function")
    if topology not in ROUTING:
        r.refuse(
            "topology",
            f"{topology} is not supported yet: qosnet reads mesh, torus, fattree (k, n), "
            "dragonflynew (k), flatfly (k, n, c), cmesh (k, c, xr, yr), fly (k, n) and "
            "anynet (network_file) from a BookSim2 file",
        )
        return 1
    if topology == "dragonflynew":
        # BookSim2's dragonflynew: k terminals and k global channels per router, 2k
        # routers a group, 2k^2 + 1 groups; one dimension within a group (n = 1).
        if n != 1:
            r.refuse("n", f"{n} is not supported on a dragonflynew: BookSim2 builds n = 1 only")
        config["topology"] = dragonfly_shape(k) | {"global_latency": DRAGONFLY_LATENCY[1]}
    elif topology == "flatfly":
        config["topology"] = _flatfly(r, k, n)
    elif topology == "cmesh":
        config["topology"] = _cmesh(r, k, n, routing)
    elif topology == "fly":
        config["topology"] = _fly(r, k, n)
    elif topology == "anynet":
        # (read beside the .cfg file, where BookSim2's example keeps it: qosnet resolves a
        # configuration's files against its directory, BookSim2 against the working one)
        network = r.value("network_file")
        if not isinstance(network, str) or not network:
            r.refuse("network_file", "an anynet needs its network file (network_file = NAME;)")
        config["topology"] = {"kind": "anynet", "file": str(network)}
    elif topology == "fattree":
        # BookSim2's k-ary n-tree: its leaves at level n-1 serve nodes k at a time in
        # order, as qosnet's level-0 switches do, so every pattern reaches the same node
        config["topology"] = {"kind": "fat_tree", "k": k, "n": n}
    else:
        config["topology"] = {"kind": topology, "k": k, "n": n}
    functions = ROUTING[topology]
    if topology == "cmesh" and routing == "xy_yx" and k != 4:
        r.refuse(
            "routing_function",
            f"xy_yx on a cmesh with k = {k} is not supported: BookSim2's cmesh_xy takes an "
            "edge's express channel wherever two or more routers remain, qosnet's where more "
            "than k/2 - 1 do (as BookSim2's dor): the same for k = 4 only",
        )
    elif routing not in functions:
        r.refuse(
            "routing_function",
            f"{routing} is not supported on a {topology}: qosnet supports "
            f"{_choices(functions)} there",
        )
    else:
        config["routing"] = {"kind": functions[routing]}
        if routing == "min_adapt":
            # BookSim2's min_adapt as it ships: its output set (a std::set ordered by
            # priority alone) keeps the lowest dimension still to cross of the minimal
            # directions (qosnet's routing.min_adapt); its iSLIP VC allocator asks for the
            # escape VC beside the others, as qosnet's router.vc_allocator = "islip" does
            config["routing"]["min_adapt"] = {"directions": "first"}
        if topology == "torus":
            # BookSim2's dor_next_torus breaks a tie (k even, half a ring to go) by a draw
            # as the packet turns into the dimension; qosnet's default, by the coordinate's
            # parity, carried the 8x8 torus's uniform traffic 1-1.5% further
            # (results/crosscheck/FINDINGS.md, session 34)
            config["routing"]["torus_ties"] = "random"
    # A folded torus's channels span two routers' pitch: BookSim2 gives them (and their
    # credit channels) 2 cycles under use_noc_latency, a mesh's 1.
    # A cmesh's router channels span a router's two nodes: 2 cycles (cmesh.cpp's cX, cY).
    noc = r.integer("use_noc_latency")
    if topology == "dragonflynew":
        return DRAGONFLY_LATENCY[0]
    return 2 if topology in ("torus", "cmesh") and noc == 1 else 1


def _flatfly(r: _Reader, k: int, n: int) -> dict[str, Any]:
    """BookSim2's flatfly (flatfly_onchip.cpp) as qosnet's `flatfly` topology, refusing
    (naming the key) what qosnet's one does not model."""
    c, x, y, xr, yr = (r.integer(key, 1) for key in FLATFLY_PLACEMENT)
    if not 1 <= n <= 4:
        r.refuse("n", f"{n} is not supported on a flatfly: BookSim2 builds n = 1 to 4")
    # (BookSim2 asserts these; a file breaking them does not run there either)
    if x != y:
        r.refuse("y", f"{y} is not supported: BookSim2's flatfly needs y = x (x = {x})")
    if c != xr * yr:
        r.refuse("c", f"{c} is not supported: BookSim2's flatfly needs c = xr * yr ({xr * yr})")
    # With use_noc_latency (BookSim2's default) a channel between routers takes as many
    # cycles as its two routers lie apart on the x-column layout, xr cycles a column and yr a
    # row: qosnet's `placement`. BookSim2's terminal channels then take a cycle for a node
    # within a tile of 3 by 3 of its router, more beyond: qosnet's take one latency.
    topology: dict[str, Any] = {"kind": "flatfly", "k": k, "n": n, "c": c}
    if r.integer("use_noc_latency") != 0:
        topology["placement"] = {"columns": x, "tile": [xr, yr]}
        for key, size in (("xr", xr), ("yr", yr)):
            if size > 3:
                r.refuse(
                    key,
                    f"{size} is not supported with use_noc_latency = 1: BookSim2 then gives a "
                    "terminal more than a node from its router a longer channel, qosnet's "
                    "terminal links take one latency; give xr, yr <= 3 (or use_noc_latency = 0)",
                )
    # BookSim2 numbers a concentrated flatfly's nodes by their place on a 2-D grid
    # (`flatfly_transformation`), qosnet router by router (node r*c + j): the same nodes under
    # uniform traffic, other nodes under a permutation. With c = 1 the two agree.
    pattern = r.value("traffic")  # (a list of several is refused by `_traffic`)
    if c > 1 and pattern != "uniform":
        r.refuse(
            "traffic",
            f"{pattern} is not supported on a flatfly with c = {c}: BookSim2 numbers its "
            "nodes by their place on the x-by-y grid, qosnet router by router, so only "
            "uniform traffic reaches the same destinations (or give c = 1)",
        )
    # BookSim2's tornado and neighbor step each of the n base-k digits of a node; qosnet's
    # act on mesh and torus coordinates, and a flatfly's nodes are one row to them.
    elif pattern in ("tornado", "neighbor") and n > 1:
        r.refuse(
            "traffic",
            f"{pattern} is not supported on a flatfly with n = {n}: qosnet's {pattern} steps "
            "mesh and torus coordinates, BookSim2's each digit of the flatfly's routers "
            "(give n = 1, or a bit permutation: transpose, bitcomp, bitrev, shuffle)",
        )
    # (and that numbering is a k-by-k plane of routers)
    if c > 1 and n != 2:
        r.refuse("n", f"{n} is not supported on a flatfly with c = {c}: give n = 2 (or c = 1)")
    elif c > 1 and x != k:
        r.refuse("x", f"{x} is not supported on a flatfly with c = {c}: give x = k = {k}")
    return topology


def _cmesh(r: _Reader, k: int, n: int, routing: str) -> dict[str, Any]:
    """BookSim2's cmesh (cmesh.cpp) as qosnet's `cmesh` topology. BookSim2 asserts n <= 2,
    c = 4, x = y, xr = yr and c = xr * yr (a file breaking them does not run there) and
    reads x and y no further; with n = 1 it wires channels past the ones it allocates,
    refused here."""
    c, x, y, xr, yr = (r.integer(key, 1) for key in FLATFLY_PLACEMENT)
    if n != 2:
        r.refuse("n", f"{n} is not supported on a cmesh: BookSim2 builds a 2-D one (n = 2)")
    if c != 4:
        r.refuse("c", f"{c} is not supported: BookSim2's cmesh needs c = 4 (2 x 2 nodes a router)")
    if (xr, yr) != (2, 2):
        r.refuse(
            "xr",
            f"xr = {xr}, yr = {yr} is not supported: BookSim2's cmesh needs xr = yr with "
            "c = xr * yr = 4: give xr = 2; yr = 2;",
        )
    if x != y:
        r.refuse("y", f"{y} is not supported: BookSim2's cmesh needs y = x (x = {x})")
    topology: dict[str, Any] = {"kind": "cmesh", "k": k}
    if routing == "dor" and k % 2 != 0:
        r.refuse(
            "k",
            f"{k} is not supported with routing_function = dor on a cmesh: its express "
            "channels join edge routers k/2 apart, one to one for an even k only (BookSim2 "
            "wires an odd k's inconsistently); give an even k or dor_no_express",
        )
    # With use_noc_latency (BookSim2's default) the express channels take cY * k/2 = k
    # cycles, the mesh channels 2 (`_topology`), injection and ejection 1; without it all 1.
    if r.integer("use_noc_latency") == 1 and k % 2 == 0:
        topology["express_latency"] = k
    return topology


def _fly(r: _Reader, k: int, n: int) -> dict[str, Any]:
    """BookSim2's k-ary n-fly (fly.cpp) as qosnet's `fly`: n stages of k^(n-1) k x k
    routers wired as fly.cpp wires them, node i injecting at stage 0's router i div k and
    ejecting from the last stage's, every channel 1 cycle."""
    if not 2 <= k <= 32:
        r.refuse("k", f"{k} is not supported on a fly: qosnet's fly routers have 2k ports, 4 to 64")
    if not 1 <= n <= 8:
        r.refuse("n", f"{n} is not supported on a fly: qosnet builds 1 to 8 stages")
    return {"kind": "fly", "k": k, "n": n}


def _router(r: _Reader, hop_latency: int) -> dict[str, Any]:
    router = r.word("router")
    if router != "iq":
        r.refuse("router", f"{router} is not supported: qosnet models BookSim2's iq router")
    vcs = r.integer("num_vcs", 1)
    buffer = r.integer("vc_buf_size", 1)
    tail_credit = r.integer("wait_for_tail_credit")
    sw = r.word("sw_allocator")
    if sw not in SW_ALLOCATORS:
        r.refuse(
            "sw_allocator", f"{sw} is not supported: qosnet supports {_choices(SW_ALLOCATORS)}"
        )
    vc = r.word("vc_allocator")
    if vc not in VC_ALLOCATORS:
        r.refuse(
            "vc_allocator", f"{vc} is not supported: qosnet supports {_choices(VC_ALLOCATORS)}"
        )
    arb = r.word("arb_type")
    if arb != "round_robin":
        r.refuse("arb_type", f"{arb} is not supported: qosnet's arbiters are round_robin")
    iterations = r.integer("alloc_iters", 1)
    speedups = (r.integer("input_speedup", 1), r.integer("output_speedup", 1))
    internal = r.number("internal_speedup")
    if internal < 1.0 or internal != int(internal):
        r.refuse(
            "internal_speedup",
            f"{internal} is not supported: qosnet's router.internal_speedup runs whole "
            "passes a cycle (1.0, 2.0, ...)",
        )
    passes = max(int(internal), 1)
    # BookSim2's hop, in its internal steps (internal_speedup of them a cycle): routing,
    # VC allocation and switch allocation, each taking its delay in steps and the next
    # starting a step after, then the crossbar (st_prepare + st_final), into the output
    # queue, which the channel drains at the end of the cycle. qosnet's stages: routing,
    # vc_alloc, crossbar (switch allocation and traversal, at least a cycle), output.
    switch = r.integer("sw_alloc_delay") + r.integer("st_prepare_delay")
    final = r.integer("st_final_delay")
    routing, vc_alloc = r.integer("routing_delay"), r.integer("vc_alloc_delay")
    if switch == 0:
        if final == 0:
            r.refuse(
                "st_final_delay",
                "0 with sw_alloc_delay = st_prepare_delay = 0 is not supported: qosnet's "
                "crossbar stage takes a cycle at least",
            )
        switch, final = 1, max(final - 1, 0)
    if passes > 1:
        # The step (from the flit's arrival, counted from 0) in which a body flit, and a
        # header, reaches the output queue, leaves in that step's cycle: qosnet's delays
        # are those cycles, split with the crossbar's one cycle first.
        body = (switch + final - 1) // passes + 1
        header = (routing + vc_alloc + switch + final - 1) // passes + 1
        routing = routing // passes
        switch, final, vc_alloc = 1, body - 1, header - body - routing
    allocator: dict[str, Any] = {"kind": SW_ALLOCATORS.get(sw, "islip")}
    if allocator["kind"] != "wavefront":
        allocator["iterations"] = iterations
    # BookSim2's separable input-first allocator: each input arbiter rotates over the
    # outputs its VCs request (one request an output, the VC by round robin), qosnet's
    # input_choice = "output"; qosnet has it without the expanded crossbar's speedups
    if allocator["kind"] == "separable_input_first" and speedups == (1, 1):
        allocator["input_choice"] = "output"
    speedup: dict[str, Any] = {}
    for key, value in (
        ("input_speedup", speedups[0]),
        ("output_speedup", speedups[1]),
        ("internal_speedup", passes),
    ):
        if value > 1:
            speedup[key] = value
    # An output port that takes more flits a cycle than its link sends queues them: in
    # BookSim2's output queue (output_buffer_size = -1: unbounded), which its credits bound
    # to the downstream VC's vc_buf_size flits, as its switch allocator sends a flit only
    # with a credit, which it takes; in qosnet's output VC buffers, sized so, with the
    # credit taken at the crossbar (credit_at = "crossbar"). Taken at the output instead,
    # the output buffers added vc_buf_size flits a VC to the downstream ones, and
    # dragonflyconfig saturated 4-8% above BookSim2.
    queues = speedups[1] > 1 or passes > 1
    return {
        "vcs": vcs,
        "input_buffer": buffer,
        # (else BookSim2's credits count the downstream input buffer only; the output
        # stage's one-flit register a VC holds a flit already out of it)
        "output_buffer": buffer if queues else 1,
        **({"credit_at": "crossbar"} if queues else {}),
        "pipeline": {
            "sync": 0,
            "routing": routing,
            "vc_alloc": vc_alloc,
            "crossbar": switch,
            "output": final,
        },
        "link_latency": hop_latency,
        # (BookSim2 holds a received credit credit_delay cycles before it counts)
        "credit_latency": hop_latency + r.integer("credit_delay"),
        **speedup,
        "vc_release": "tail_credit" if tail_credit else "tail_sent",
        "allocator": allocator,
        # (BookSim2's separable VC allocator makes one pass whatever alloc_iters says)
        "vc_allocator": (
            {"kind": "islip", "iterations": iterations} if vc == "islip" else {"kind": vc}
        ),
        "crossbar_scheduler": {"kind": "round_robin"},
        "output_scheduler": {"kind": "round_robin"},
    }


#: The most hot-spot nodes a BookSim2 `hotspot` may list, its rates counted (each node is
#: repeated rate times in qosnet's `hot_spot` list).
MAX_HOTSPOT_WEIGHT = 4096


def _hotspot(r: _Reader, pattern: str) -> dict[str, Any] | None:
    """BookSim2's `hotspot({n1,n2,...},{r1,r2,...})` (traffic.cpp: every packet to one of the
    nodes, chosen in proportion to its integer rate, the last rate repeated for the nodes
    beyond the list) as qosnet's `hot_spot` with fraction 1, each node listed rate times.
    None (refused) when it cannot be read or names no node."""
    m = re.fullmatch(r"hotspot(?:\((.*)\))?", pattern)
    if m is None:
        return None
    params = re.findall(r"\{[^}]*\}|[^,{}]+", m.group(1) or "")
    ints = [[int(x) for x in re.findall(r"-?\d+", p)] for p in params]
    nodes = ints[0] if ints else []
    rates = (ints[1] if len(ints) > 1 else []) or [1]
    if not nodes or any(n < 0 for n in nodes):
        r.refuse(
            "traffic",
            f"{pattern} is not supported: BookSim2 then draws a random hot spot; name the "
            "nodes, hotspot({n1,n2}) or hotspot({n1,n2},{rate1,rate2})",
        )
        return None
    rates = (rates + [rates[-1]] * len(nodes))[: len(nodes)]
    if any(w < 1 for w in rates) or sum(rates) > MAX_HOTSPOT_WEIGHT:
        r.refuse(
            "traffic",
            f"{pattern}: the rates must be whole numbers >= 1 summing to at most "
            f"{MAX_HOTSPOT_WEIGHT}, got {rates}",
        )
        return None
    return {
        "kind": "hot_spot",
        "fraction": 1.0,
        "nodes": [n for n, w in zip(nodes, rates, strict=True) for _ in range(w)],
    }


#: on_off's keys (`_on_off`).
_BURST = ("burst_alpha", "burst_beta", "burst_r1")

#: The cycle of a converted file: qosnet's default [physical] (128-bit flits at 1.6 Gb/s),
#: which a converted file keeps (a test checks it against the engine's).
CYCLE_NS = 80.0


def _cycles(c: float) -> str:
    """A mean length of `c` cycles as a qosnet duration: whole cycles where it is one,
    else nanoseconds at `CYCLE_NS` (a cycle count must be whole)."""
    if abs(c - round(c)) <= 1e-9 * c:
        return f"{round(c)} cycles"
    return f"{c * CYCLE_NS:.12g} ns"


def _on_off(r: _Reader, word: str) -> dict[str, Any]:
    """BookSim2's `on_off` injection (a Markov-modulated Bernoulli process: each cycle OFF
    turns ON with probability burst_alpha and ON turns OFF with burst_beta, and an ON
    cycle injects with burst_r1) as qosnet's `markov_on_off`, whose ON and OFF periods
    have means 1/burst_beta and 1/burst_alpha cycles. `on_off(alpha, beta)` in the value
    gives them in place of the keys."""
    inline = re.fullmatch(r"on_off\(([^)]*)\)", word)
    if word != "on_off" and inline is None:
        r.refuse("injection_process", f"{word}: expected on_off or on_off(alpha, beta)")
        return {"kind": "markov_on_off", "on": "2 cycles", "off": "2 cycles"}
    args = [a.strip() for a in inline.group(1).split(",")] if inline else []
    values: dict[str, float] = {}
    for i, key in enumerate(_BURST):
        if i < len(args) and args[i]:
            try:
                values[key] = float(args[i])
            except ValueError:
                r.refuse("injection_process", f"{word}: {args[i]!r} is not a number")
                values[key] = float(_MAPPED[key])  # type: ignore[arg-type]
        else:
            values[key] = r.number(key)
    if len(args) > 3:
        r.refuse(
            "injection_process",
            f"{word}: each node's initial state is not supported (qosnet starts each "
            "source in the chain's stationary state)",
        )
    alpha, beta, r1 = values["burst_alpha"], values["burst_beta"], values["burst_r1"]
    if r1 >= 0:
        r.refuse(
            "burst_r1",
            f"{r1}: a fixed injection rate while ON (BookSim2 then derives burst_alpha or "
            "burst_beta from the load) is not supported: qosnet keeps the mean ON and OFF "
            "lengths fixed; give burst_alpha and burst_beta",
        )
    for key, v in (("burst_alpha", alpha), ("burst_beta", beta)):
        if not 0 < v <= 1:
            r.refuse(key, f"must be in (0, 1] (a probability per cycle), got {v}")
    alpha, beta = (v if 0 < v <= 1 else 0.5 for v in (alpha, beta))
    return {"kind": "markov_on_off", "on": _cycles(1 / beta), "off": _cycles(1 / alpha)}


def _randperm(r: _Reader, pattern: str) -> dict[str, Any] | None:
    """BookSim2's `randperm` (or `randperm(seed)`; else its `perm_seed`): a random permutation
    of the nodes, qosnet's `random_permutation` of that seed (the same distribution of
    permutations, drawn by another generator: not BookSim2's permutation for the seed)."""
    m = re.fullmatch(r"randperm(?:\((\d+)\))?", pattern)
    if m is None:
        r.refuse("traffic", f"{pattern}: give randperm or randperm(seed), seed a whole number")
        return None
    seed: BooksimValue = int(m.group(1)) if m.group(1) else r.value("perm_seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        r.refuse(
            "perm_seed",
            f"{seed} is not supported: give a whole number >= 0 (runs are reproducible)",
        )
        return None
    return {"kind": "random_permutation", "seed": seed}


def _bad_dragon(r: _Reader, pattern: str) -> dict[str, Any] | None:
    """BookSim2's `bad_dragon` or `bad_dragon(k,n)` (every packet to a node of the next
    group, groups of 2k routers of k nodes) as qosnet's `next_group`, on the dragonflynew
    whose groups those are. None (refused) otherwise."""
    m = re.fullmatch(r"bad_dragon(?:\((-?\d+)(?:,(-?\d+))?\))?", pattern)
    topology = r.word("topology")
    if m is None:
        r.refuse("traffic", f"{pattern}: expected bad_dragon or bad_dragon(k,n)")
    elif topology != "dragonflynew":
        r.refuse(
            "traffic",
            f"{pattern} on topology = {topology} is not supported: qosnet's next_group takes "
            "a dragonfly's groups (topology = dragonflynew)",
        )
    elif m.group(1) is not None and int(m.group(1)) != r.integer("k", 1):
        r.refuse(
            "traffic",
            f"{pattern}: groups of another dragonfly's size (k = {m.group(1)}) than this "
            f"one's (k = {r.value('k')}) are not supported",
        )
    else:
        return {"kind": "next_group"}
    return None


def _badperm_yarc(r: _Reader, pattern: str) -> dict[str, Any] | None:
    """BookSim2's `badperm_yarc` (a source of row s / w to a node of column s / w of the
    w-by-w grid of node numbers, w = xr k) as qosnet's, whose w is the square root of the
    node count: the same grid where the nodes are k x k, one to a router (n = 2, c = 1).
    None (refused) otherwise."""
    topology, n = r.word("topology"), r.integer("n", 1)
    concentration = r.integer("c", 1) if topology in PLACED else 1
    # (BookSim2 reads xr for this pattern on any topology)
    xr = r.integer("xr", 1)
    if topology not in ("mesh", "torus", "flatfly") or n != 2 or concentration != 1 or xr != 1:
        r.refuse(
            "traffic",
            f"{pattern} on topology = {topology} with n = {n}, xr = {xr} is not supported: "
            "qosnet's badperm_yarc takes the square root of the node count as BookSim2's "
            "xr k, the same only with k x k nodes, one a router (a mesh, torus or flatfly, "
            "n = 2, c = 1, xr = 1)",
        )
        return None
    return {"kind": "badperm_yarc"}


def _background(r: _Reader, pattern: str) -> dict[str, Any] | None:
    """BookSim2's `background({n1,n2,...})` (uniform over every node but those) as qosnet's
    `uniform_except`. None (refused) without a node list (BookSim2 then fails)."""
    m = re.fullmatch(r"background\(\{([-\d,]*)\}\)", pattern)
    nodes = [int(x) for x in m.group(1).split(",") if x] if m else []
    if not nodes or any(n < 0 for n in nodes):
        r.refuse("traffic", f"{pattern}: expected background({{n1,n2,...}}), the nodes left out")
        return None
    return {"kind": "uniform_except", "nodes": nodes}


#: BookSim2 patterns with parameters: name -> reader (None: refused).
_PATTERN_READERS = {
    "hotspot": _hotspot,
    "randperm": _randperm,
    "bad_dragon": _bad_dragon,
    "badperm_yarc": _badperm_yarc,
    "background": _background,
}


def _traffic(r: _Reader) -> dict[str, Any]:
    pattern = r.word("traffic")
    reader = _PATTERN_READERS.get(re.split(r"\(", pattern, maxsplit=1)[0])
    hot = reader(r, pattern) if reader else None
    if reader is None and pattern not in TRAFFIC:
        r.refuse(
            "traffic",
            f"{pattern} is not supported: qosnet supports {_choices(TRAFFIC)}, "
            "hotspot({nodes},{rates}), randperm, bad_dragon and background({nodes})",
        )
    process_word = r.word("injection_process")
    process: str | dict[str, Any] = "bernoulli"
    if process_word.startswith("on_off"):
        process = _on_off(r, process_word)
    elif process_word != "bernoulli":
        r.refuse(
            "injection_process",
            f"{process_word} is not supported: qosnet supports bernoulli and on_off "
            "from a BookSim2 file",
        )
    size_value = r.value("packet_size")
    if isinstance(size_value, str):
        r.refuse("packet_size", f"{size_value}: qosnet reads one packet size")
        size = 1
    else:
        size = r.integer("packet_size", 1)
    rate = r.number("injection_rate")
    # BookSim2's rate is in packets a node a cycle unless injection_rate_uses_flits
    load = rate if r.integer("injection_rate_uses_flits") else rate * size
    if not 0 <= load <= 1:
        r.refuse(
            "injection_rate",
            f"{rate} is {load:g} flits/node/cycle: must be between 0 and 1 (a channel's capacity)",
        )
    return {
        "process": process,
        "load": load,
        "message_flits": size,
        "packet_flits": size,
        # BookSim2's uniform traffic may pick the source; its permutations' fixed points
        # send to themselves
        "self_traffic": True,
        "pattern": hot or {"kind": TRAFFIC.get(pattern, "uniform")},
    }


def to_toml(conversion: Conversion, source: str) -> str:
    """The configuration as a TOML file naming its source and the keys left aside."""
    head = [
        f"# qosnet configuration converted from the BookSim2 file {source}",
        "# (`qosnet convert`; docs/booksim2.md says how each BookSim2 key is mapped).",
    ]
    if conversion.ignored:
        head.append("# BookSim2 keys that change nothing in this run:")
        head += [f"#   {k} = {v}: {why}" for k, v, why in conversion.ignored]
    return "\n".join(head) + "\n\n" + tomli_w.dumps(conversion.config)
