//! A catalogue of bad configurations: each must be rejected (never panic) with an error
//! that names the offending field and says what is allowed or what was wrong.

use qosnet_sim::{ConfigError, ConfigErrors, Simulation};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

/// A valid 4x4 mesh (16 nodes, a power of two with an even number of index bits).
const MESH: &str = "[topology]\nkind = \"mesh\"\nk = 4\nn = 2\n";
/// A valid traffic source.
const TRAFFIC: &str = "[[traffic]]\nload = 0.1\n";
/// A full pipeline table (every stage must be given once the table is present).
const PIPELINE_OK: &str = "sync = 1\nrouting = 1\nvc_alloc = 1\noutput = 1\n";

/// A valid ibsim net file (the shape of `data/ib-topologies/ibsim-net-example.net`):
/// line 1 is `Switch 8 "Switch1"`, line 7 `Switch 8 "Switch2"`, line 11 `Hca 2 "Hca1"`.
const IBSIM_NET: &str = "Switch 8 \"Switch1\"
[1] \"Hca1\"[1]
[2] \"Hca2\"[2]
[3] \"Switch2\"[3]
[4] \"Switch2\"[4]

Switch 8 \"Switch2\"
[3] \"Switch1\"[3]
[4] \"Switch1\"[4]

Hca 2 \"Hca1\"
[1] \"Switch1\"[1]

Hca 2 \"Hca2\"
[2] \"Switch1\"[2]
";

/// `[topology]` for the ibsim net file `file`, with `extra` keys.
fn ibsim(file: &std::path::Path, extra: &str) -> String {
    topo(&format!("kind = \"ib_fabric\"\nfile = {}\n{extra}", toml_path(file)), "")
}

/// A valid IBA CC agent (it needs `[router] marking` beside it).
const IBA_CC: &str = "agent = { kind = \"iba_cc\", ccti_increase = 1, ccti_timer = \"20 us\", \
                      cct = { kind = \"linear\", entries = 32, step = 20 } }";

/// `MESH` + `TRAFFIC` + an `[[application]]` with `body`, and one phase with `phase`.
fn app(body: &str, phase: &str) -> String {
    format!("{MESH}{TRAFFIC}[[application]]\n{body}[[application.phases]]\n{phase}")
}

/// One bad configuration and what the error must say about it.
struct Case {
    name: &'static str,
    toml: String,
    /// The exact `ConfigError::path` some error must have.
    path: &'static str,
    /// A substring that error's message must contain.
    contains: &'static str,
}

fn case(name: &'static str, toml: impl Into<String>, path: &'static str, contains: &'static str) -> Case {
    Case { name, toml: toml.into(), path, contains }
}

/// `MESH` + `TRAFFIC` + `extra` (a section placed after the traffic source).
fn with(extra: &str) -> String {
    format!("{MESH}{TRAFFIC}{extra}")
}

/// `MESH` + one traffic source with the given body.
fn traffic(body: &str) -> String {
    format!("{MESH}[[traffic]]\n{body}")
}

/// A 6x6 mesh (36 nodes, not a power of two) with one source using pattern `kind`.
fn mesh6(kind: &str) -> String {
    format!("[topology]\nkind = \"mesh\"\nk = 6\nn = 2\n[[traffic]]\nload = 0.1\npattern = {{ kind = \"{kind}\" }}\n")
}

/// A topology table + `TRAFFIC` + `extra`.
fn topo(topology: &str, extra: &str) -> String {
    format!("[topology]\n{topology}{TRAFFIC}{extra}")
}

/// A file under the system temp directory with a name unique to this process and `tag`.
fn temp_file(tag: &str, contents: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("qosnet_bad_configs_{}_{tag}.txt", std::process::id()));
    std::fs::write(&path, contents).expect("write temp file");
    path
}

fn toml_path(p: &std::path::Path) -> String {
    // TOML literal strings take the path verbatim (no escaping of `\` on Windows).
    format!("'{}'", p.display())
}

fn catalogue(tmp: &Tmp) -> Vec<Case> {
    vec![
        // ---- checked by `validate` as by `run` (hardening: these passed `validate`) ----
        case("admission effective factor 1.5", with("[endpoint]\nadmission = { effective_factor = 1.5 }\n"), "endpoint.admission.effective_factor", "must be in [0, 1]"),
        case("admission limit 0", with("[endpoint]\nadmission = { limit = 0 }\n"), "endpoint.admission.limit", "must be in (0, 1]"),
        case("admission limit 2", with("[endpoint]\nadmission = { limit = 2 }\n"), "endpoint.admission.limit", "must be in (0, 1]"),
        case("admission signal flits 0", with("[endpoint]\nadmission = { signal_flits = 0 }\n"), "endpoint.admission.signal_flits", "must be a whole number >= 1"),
        case("credit best effort above M with admission", with("[endpoint]\nadmission = {}\nagent = { kind = \"credit\", hca_messages = 4, best_effort = 5 }\n"), "endpoint.agent.best_effort", "C_b = 5 exceeds M = 4"),
        case("self-tuned decrement below 0", with("[endpoint]\nagent = { kind = \"self_tuned\", decrement = -0.1 }\n"), "endpoint.agent.decrement", "must be in [0, 1]"),
        case("self-tuned initial 5", with("[endpoint]\nagent = { kind = \"self_tuned\", initial = 5 }\n"), "endpoint.agent.initial", "must be in [0, 1]"),
        case("application with no nodes", app("nodes = []\n", "pattern = \"ring\"\nbytes = 160\n"), "application[0].nodes", "at least one node"),
        case("application node out of range", app("nodes = [0, 99]\n", "pattern = \"ring\"\nbytes = 160\n"), "application[0].nodes[1]", "must be a node of the network, 0..=15, got 99"),
        case("application node repeated", app("nodes = [3, 3]\n", "pattern = \"ring\"\nbytes = 160\n"), "application[0].nodes[1]", "listed twice"),
        case("application iterations 0", app("nodes = [0, 1]\niterations = 0\n", "pattern = \"ring\"\nbytes = 160\n"), "application[0].iterations", "must be >= 1"),
        case("application packet flits 0", app("nodes = [0, 1]\npacket_flits = 0\n", "pattern = \"ring\"\nbytes = 160\n"), "application[0].packet_flits", "must be 1..=65535"),
        case("application reserve without rate control", app("nodes = [0, 1]\nreserve = \"100 Mb/s\"\n", "pattern = \"ring\"\nbytes = 160\n"), "application[0].reserve", "needs NIC rate control"),
        case("application binary swap on 3 nodes", app("nodes = [0, 1, 2]\n", "pattern = \"binary_swap\"\nbytes = 160\n"), "application[0].phases[0].pattern", "power-of-two"),
        case("application bytes 2^62", app("nodes = [0, 1]\n", "pattern = \"ring\"\nbytes = 4611686018427387904\n"), "application[0].phases[0].bytes", "a message of at most 16777216 flits"),
        case("trace link series 0 us", with("[trace]\nlink_series = \"0 us\"\n"), "trace.link_series", "must be at least one cycle"),
        case("trace watched flow out of range", with("[trace]\nwatch_flows = [999999]\n"), "trace.watch_flows", "got 999999"),
        case("iba cc agent without marking", with(&format!("[endpoint]\n{IBA_CC}\n")), "endpoint.agent", "no switch marks"),
        case("iba cc increase 0", with(&format!("[router]\nmarking = {{ kind = \"iba_cc\", threshold = 8 }}\n[endpoint]\n{}\n", IBA_CC.replace("ccti_increase = 1", "ccti_increase = 0"))), "endpoint.agent.ccti_increase", "must be >= 1"),
        // ---- bounded construction: LID path tables are counted and their work capped ----
        case("LID paths on an 8x4000 mesh", "[topology]\nkind = \"mesh\"\ndims = [8, 4000]\n[routing]\nlmc = 2\n[router]\nvcs = 3\n[[traffic]]\nload = 0.1\n", "routing.lmc", "routing.lmc"),
        case("an escape VC without LIDs", "[topology]\nkind = \"mesh\"\nk = 3\nn = 2\n[routing]\nlid_vcs = \"escape\"\n[[traffic]]\nload = 0.1\n", "routing.lid_vcs", "set routing.lmc"),
        case("an escape VC in the preemptive router", "[topology]\nkind = \"mesh\"\nk = 3\nn = 2\n[routing]\nlmc = 1\nlid_vcs = \"escape\"\n[router]\nkind = \"preemptive\"\nvcs = 4\n[[traffic]]\nload = 0.1\n", "routing.lid_vcs", "preemptive"),
        case("an escape VC on a torus with 2 VCs", "[topology]\nkind = \"torus\"\nk = 4\nn = 2\n[routing]\nlmc = 1\nlid_vcs = \"escape\"\n[router]\nvcs = 2\n[[traffic]]\nload = 0.1\n", "router.vc_classes", "3 per class"),
        case("min_adapt in the preemptive router", "[topology]\nkind = \"mesh\"\nk = 3\nn = 2\n[routing]\nkind = \"min_adapt\"\n[router]\nkind = \"preemptive\"\nvcs = 4\n[[traffic]]\nload = 0.1\n", "routing.kind", "preemptive"),
        case("min_adapt with admission control", "[topology]\nkind = \"mesh\"\nk = 3\nn = 2\n[routing]\nkind = \"min_adapt\"\n[router]\nvcs = 4\n[endpoint]\nadmission = {}\n[[traffic]]\nload = 0.1\n", "routing.kind", "admission"),
        case("min_adapt with a reserved flow", "[topology]\nkind = \"mesh\"\nk = 3\nn = 2\n[routing]\nkind = \"min_adapt\"\n[router]\nvcs = 4\n[[traffic]]\nload = 0.1\nreserve = \"10 Mb/s\"\npattern = { kind = \"fixed\", destination = 3 }\n", "routing.kind", "reserved flow"),
        case("ugal_xy_yx on a flatfly with 2 VCs", "[topology]\nkind = \"flatfly\"\nk = 4\nn = 2\nc = 1\n[routing]\nkind = \"ugal_xy_yx\"\n[router]\nvcs = 2\n[[traffic]]\nload = 0.1\n", "router.vc_classes", "on a flatfly, where routing.kind = \"ugal_xy_yx\" needs a VC per layer, 4 per class"),
        case("xy_yx on a flatfly with 1 VC", "[topology]\nkind = \"flatfly\"\nk = 4\nn = 2\nc = 1\n[routing]\nkind = \"xy_yx\"\n[router]\nvcs = 1\n[[traffic]]\nload = 0.1\n", "router.vc_classes", "on a flatfly, where routing.kind = \"xy_yx\" needs a VC per layer, 2 per class"),
        case("xy_yx on a cmesh with 1 VC", "[topology]\nkind = \"cmesh\"\nk = 2\n[routing]\nkind = \"xy_yx\"\n[router]\nvcs = 1\n[[traffic]]\nload = 0.1\n", "router.vc_classes", "on a cmesh, where routing.kind = \"xy_yx\" needs a VC per layer, 2 per class"),
        case("min_adapt on a torus with 2 VCs", "[topology]\nkind = \"torus\"\nk = 4\nn = 2\n[routing]\nkind = \"min_adapt\"\n[router]\nvcs = 2\n[[traffic]]\nload = 0.1\n", "router.vc_classes", "2 escape VC(s) and one adaptive"),
        case("min_adapt on a fat tree", "[topology]\nkind = \"fat_tree\"\nk = 2\nn = 2\n[routing]\nkind = \"min_adapt\"\n[[traffic]]\nload = 0.1\n", "routing.kind", "d_mod_k"),
        case("drawn torus ties on a mesh", "[topology]\nkind = \"mesh\"\nk = 3\nn = 2\n[routing]\ntorus_ties = \"random\"\n[[traffic]]\nload = 0.1\n", "routing.torus_ties", "applies to a torus"),
        case("drawn torus ties with valiant past 16 bits", "[topology]\nkind = \"torus\"\nk = 64\nn = 2\n[routing]\nkind = \"valiant\"\ntorus_ties = \"random\"\n[[traffic]]\nload = 0.1\n", "routing.torus_ties", "at most 4095 routers, got 4096"),
        case("torus ties unknown", "[topology]\nkind = \"torus\"\nk = 4\nn = 2\n[routing]\ntorus_ties = \"coin\"\n[[traffic]]\nload = 0.1\n", "routing.torus_ties", "parity"),
        case("min_adapt's options with dimension order", "[topology]\nkind = \"mesh\"\nk = 3\nn = 2\n[routing]\nkind = \"dor\"\nmin_adapt = { directions = \"first\" }\n[[traffic]]\nload = 0.1\n", "routing.min_adapt", "applies to routing.kind = \"min_adapt\" alone"),
        case("min_adapt's escape alongside every direction", "[topology]\nkind = \"mesh\"\nk = 3\nn = 2\n[routing]\nkind = \"min_adapt\"\nmin_adapt = { escape = \"alongside\" }\n[router]\nvcs = 4\n[[traffic]]\nload = 0.1\n", "routing.min_adapt.escape", "needs directions = \"first\""),
        case("min_adapt's unknown directions", "[topology]\nkind = \"mesh\"\nk = 3\nn = 2\n[routing]\nkind = \"min_adapt\"\nmin_adapt = { directions = \"some\" }\n[router]\nvcs = 4\n[[traffic]]\nload = 0.1\n", "routing.min_adapt.directions", "first"),
        case("iSLIP VC allocator in the preemptive router", "[topology]\nkind = \"mesh\"\nk = 3\nn = 2\n[router]\nkind = \"preemptive\"\nvcs = 4\nvc_allocator = { kind = \"islip\" }\n[[traffic]]\nload = 0.1\n", "router.vc_allocator.kind", "traditional and non_preemptive routers"),
        case("iSLIP VC allocator with no rounds", with("[router]\nvc_allocator = { kind = \"islip\", iterations = 0 }\n"), "router.vc_allocator.iterations", "must be in 1..=16, got 0"),
        case("rounds for the output-port VC allocator", with("[router]\nvc_allocator = { iterations = 2 }\n"), "router.vc_allocator.iterations", "the output_port VC allocator makes one pass"),
        case("VC selection with the iSLIP VC allocator", with("[router]\nvc_allocator = { kind = \"islip\" }\nvc_selection = \"round_robin\"\n"), "router.vc_selection", "has no effect with router.vc_allocator.kind = \"islip\""),
        case("rounds for the separable VC allocator", with("[router]\nvc_allocator = { kind = \"separable_input_first\", iterations = 2 }\n"), "router.vc_allocator.iterations", "the separable_input_first VC allocator makes one pass"),
        case("a credited VC at a NIC model", with("[endpoint]\nmodel = \"via\"\nvc_needs_credit = true\n"), "endpoint.vc_needs_credit", "ideal endpoint"),
        case("a credited VC in the preemptive router", "[topology]\nkind = \"mesh\"\nk = 3\nn = 2\n[router]\nkind = \"preemptive\"\nvcs = 4\n[endpoint]\nvc_needs_credit = true\n[[traffic]]\nload = 0.1\n", "endpoint.vc_needs_credit", "non-preemptive routers"),
        case("an unknown VC allocator", with("[router]\nvc_allocator = { kind = \"pim\" }\n"), "router.vc_allocator.kind", "islip"),
        case("an unknown lid_vcs", "[topology]\nkind = \"mesh\"\nk = 3\nn = 2\n[routing]\nlmc = 1\nlid_vcs = \"duato\"\n[[traffic]]\nload = 0.1\n", "routing.lid_vcs", "escape"),
        case("LID paths on an 8x1000 mesh", "[topology]\nkind = \"mesh\"\ndims = [8, 1000]\n[routing]\nlmc = 2\n[router]\nvcs = 3\n[[traffic]]\nload = 0.1\n", "routing.lmc", "alternative paths to search"),
        case("time limit in cycles", with("[simulation]\ntime_limit = 1000\n"), "simulation.time_limit", "is wall-clock time"),
        case("time limit negative", with("[simulation]\ntime_limit = \"-5 s\"\n"), "simulation.time_limit", ""),
        case("no threads", with("[simulation]\nthreads = 0\n"), "simulation.threads", "must be in 1..=256, got 0"),
        case("more threads than routers", with("[simulation]\nthreads = 17\n"), "simulation.threads", "at most the number of routers (16), got 17"),
        case("threads with marking", with("[simulation]\nthreads = 2\n[router]\nmarking = { kind = \"threshold\", flits = 4 }\n"), "simulation.threads", "must be 1 with [router] marking"),
        case("threads with Valiant's draws behind a tail", with("[simulation]\nthreads = 2\n[routing]\nkind = \"valiant\"\n[router]\nvcs = 2\nvc_release = \"tail_sent\"\n"), "simulation.threads", "with a routing that draws a way at the source"),
        case("recording a long run's messages beyond memory", with("[simulation]\nmemory_limit = \"1 GB\"\nmeasure = \"100 s\"\nrecord_messages = true\n"), "simulation.record_messages", "recorded messages"),
        // ---- the files a configuration names (config/files.rs) ----
        case("cct file a device", with(&format!("[router]\nmarking = {{ kind = \"iba_cc\", threshold = 8 }}\n[endpoint]\n{}\n", IBA_CC.replace("cct = { kind = \"linear\", entries = 32, step = 20 }", "cct = { kind = \"file\", path = \"/dev/zero\", unit = 1 }"))), "endpoint.agent.cct.path", "not a regular file"),
        case("cct file a directory", with(&format!("[router]\nmarking = {{ kind = \"iba_cc\", threshold = 8 }}\n[endpoint]\n{}\n", IBA_CC.replace("cct = { kind = \"linear\", entries = 32, step = 20 }", "cct = { kind = \"file\", path = \"/\", unit = 1 }"))), "endpoint.agent.cct.path", "is a directory"),
        case("pattern file a device", traffic("load = 0.1\npattern = { kind = \"matrix\", file = \"/dev/null\" }\n"), "traffic[0].pattern.file", "not a regular file"),
        case("video trace a FIFO-like device", traffic("class = \"real_time\"\nload = 0.1\nprocess = { kind = \"video\", traces = [\"/dev/zero\"] }\n"), "traffic[0].process.traces[0]", "not a regular file"),
        case("fabric file a device", topo("kind = \"ib_fabric\"\nfile = \"/dev/zero\"\n", ""), "topology.file", "not a regular file"),
        case("a misspelt key is suggested", with("[simulation]\nmesure = 5000\n"), "simulation.mesure", "did you mean `measure`?"),
        case("a misspelt kind is suggested", with("[router]\nkind = \"premptive\"\n"), "router.kind", "did you mean `preemptive`?"),
        // ---- QoS router (document 003 §3) ----
        case("unknown router kind", with("[router]\nkind = \"mediaworm\"\n"), "router.kind", "expected one of `traditional`, `non_preemptive`, `preemptive`"),
        case("vc classes not summing to vcs", with("[router]\nvcs = 4\nvc_classes = { control = 1, real_time = 1, best_effort = 1 }\n"), "router.vc_classes", "= 3 must equal router.vcs = 4"),
        case("vc classes misspelt", with("[router]\nvc_classes = \"automatic\"\n"), "router.vc_classes", "must be \"auto\" or a table"),
        case("vc classes unknown class", with("[router]\nvc_classes = { video = 4 }\n"), "router.vc_classes.video", "unknown field `video`"),
        case("a class with traffic but no VC", format!("{MESH}[[traffic]]\nload = 0.1\nclass = \"control\"\n[[traffic]]\nload = 0.1\n[router]\nvcs = 2\nvc_classes = {{ control = 0, real_time = 1, best_effort = 1 }}\n"), "router.vc_classes", "class control has traffic but no VC"),
        case("a class with one VC on a torus", "[topology]\nkind = \"torus\"\nk = 4\nn = 2\n[router]\nvcs = 4\nvc_classes = { control = 1, real_time = 0, best_effort = 3 }\n[[traffic]]\nload = 0.1\nclass = \"control\"\n[[traffic]]\nload = 0.1\n".to_string(), "router.vc_classes", "class control has 1 VC(s) on a torus, where dateline routing needs two per class"),
        // ("auto" gives control two VCs on a torus, leaving best effort one of three)
        case("too few VCs on a torus for auto's split", "[topology]\nkind = \"torus\"\nk = 4\nn = 2\n[router]\nvcs = 3\n[[traffic]]\nload = 0.1\nclass = \"control\"\n[[traffic]]\nload = 0.1\n".to_string(), "router.vc_classes", "class best_effort has 1 VC(s) on a torus"),
        case("unknown control VC sharing", with("[router]\nkind = \"preemptive\"\npreemption = { control_vc = \"mine\" }\n"), "router.preemption.control_vc", "unknown variant `mine`, expected `shared` or `exclusive`"),
        case("trace watch limit zero", with("[trace]\nwatch_flows = [0]\nwatch_limit = 0\n"), "trace.watch_limit", "must be >= 1"),
        case("trace watch limit beyond memory", with("[simulation]\nmemory_limit = \"1 GB\"\n[trace]\nwatch_flows = [0]\nwatch_limit = 4000000000\n"), "trace.watch_limit", "more than the limit of 1"),
        case("vc release tail_sent on the preemptive router", with("[router]\nkind = \"preemptive\"\nvc_release = \"tail_sent\"\n"), "router.vc_release", "the preemptive router needs \"tail_credit\""),
        case("virtual clock state misspelt", with("[router]\nkind = \"preemptive\"\nvirtual_clock = { state = \"flow\" }\n"), "router.virtual_clock.state", "unknown variant `flow`, expected `message` or `stream`"),
        case("first deadline misspelt", format!("{MESH}[[traffic]]\nclass = \"real_time\"\nload = 0.1\nprocess = {{ kind = \"video\", mean_rate = \"4 Mb/s\", first_deadline = \"sent\" }}\n"), "traffic[0].process.first_deadline", "unknown variant `sent`, expected `created` or `arrival`"),
        case("vc release misspelt", with("[router]\nvc_release = \"tail\"\n"), "router.vc_release", "expected `tail_credit` or `tail_sent`"),
        case("allocator iterations 0", with("[router]\nallocator = { iterations = 0 }\n"), "router.allocator.iterations", "must be"),
        case("allocator iterations 17", with("[router]\nallocator = { kind = \"islip\", iterations = 17 }\n"), "router.allocator.iterations", "must be in 1..=16"),
        case("wavefront with iterations", with("[router]\ncrossbar_scheduler = \"fcfs\"\nallocator = { kind = \"wavefront\", iterations = 2 }\n"), "router.allocator.iterations", "takes no iterations"),
        case("wavefront with VirtualClock keys", with("[router]\nkind = \"non_preemptive\"\nallocator = { kind = \"wavefront\" }\n"), "router.allocator.kind", "rate keys"),
        case("islip with speedup", with("[router]\nspeedup = 2\nallocator = { kind = \"islip\" }\n"), "router.allocator.kind", "separable_input_first"),
        case("output first with islip", with("[router]\nallocator = { kind = \"islip\", input_choice = \"output\" }\n"), "router.allocator.input_choice", "give kind = \"separable_input_first\""),
        case("output first with speedup", with("[router]\nspeedup = 2\nallocator = { input_choice = \"output\" }\n"), "router.allocator.input_choice", "without router.speedup"),
        case("input choice misspelt", with("[router]\nallocator = { input_choice = \"outputs\" }\n"), "router.allocator.input_choice", "vc"),
        case("allocator misspelt", with("[router]\nallocator = { kind = \"slip\" }\n"), "router.allocator.kind", "islip"),
        case("endpoint link latency zero", with("[endpoint]\nlink_latency = 0\n"), "endpoint.link_latency", "must be in 1..=10000, got 0"),
        case("endpoint output stage too long", with("[endpoint]\noutput_stage = 10001\n"), "endpoint.output_stage", "must be in 0..=10000, got 10001"),
        case("block size 0", with("[router]\nblock_size = 0\n"), "router.block_size", "must be in 1..=65535, got 0"),
        case("virtual clock counter too narrow", with("[router]\ncrossbar_scheduler = { kind = \"virtual_clock\", counter_bits = 2 }\n"), "router.crossbar_scheduler.counter_bits", "must be 0 (unbounded) or in 4..=63, got 2"),
        case("virtual clock unknown parameter", with("[router]\ncrossbar_scheduler = { kind = \"virtual_clock\", bits = 16 }\n"), "router.crossbar_scheduler.bits", "unknown field `bits`"),
        case("wrr more weights than vcs", with("[router]\nvcs = 2\noutput_scheduler = { kind = \"wrr\", weights = [1, 2, 3] }\n"), "router.output_scheduler.weights", "gives 3 weights for 2 VCs"),
        case("wrr all weights zero", with("[router]\nvcs = 2\ncrossbar_scheduler = { kind = \"wrr\", weights = [0, 0] }\n"), "router.crossbar_scheduler.weights", "at least one weight must be > 0"),
        case("vl arbitration VL out of range", with("[router]\nvcs = 4\ncrossbar_scheduler = { kind = \"vl_arbitration\", high = [[7, 1]] }\n"), "router.crossbar_scheduler.high[0]", "VL 7 does not exist (VLs are 0..3)"),
        case("vl arbitration weight over 255", with("[router]\ncrossbar_scheduler = { kind = \"vl_arbitration\", low = [[0, 300]] }\n"), "router.crossbar_scheduler.low[0] weight", "must be in 0..=255, got 300"),
        case("vl arbitration empty tables", with("[router]\ncrossbar_scheduler = { kind = \"vl_arbitration\" }\n"), "router.crossbar_scheduler", "needs at least one high or low entry"),
        case("vl arbitration limit over 255", with("[router]\ncrossbar_scheduler = { kind = \"vl_arbitration\", low = [[0, 1]], limit_of_high_priority = 256 }\n"), "router.crossbar_scheduler.limit_of_high_priority", "must be in 0..=255, got 256"),
        case("vl arbitration management VL missing", with("[router]\nvcs = 8\ncrossbar_scheduler = { kind = \"vl_arbitration\", low = [[0, 1]], management_vl = 15 }\n"), "router.crossbar_scheduler.management_vl", "VL 15 does not exist"),
        case("preemptive router with 32 VCs", with("[router]\nkind = \"preemptive\"\nvcs = 32\n"), "router.vcs", "at most 16 VCs"),
        case("preemption extra buffer 0", with("[router]\nkind = \"preemptive\"\npreemption = { extra_buffer = 0 }\n"), "router.preemption.extra_buffer", "must be in 1..=65533, got 0"),
        case("input buffer too deep", with("[router]\ninput_buffer = 70000\n"), "router.input_buffer", "must be in 1..=65533, got 70000"),
        case("preemption unknown key", with("[router]\npreemption = { stack = 2 }\n"), "router.preemption.stack", "unknown field `stack`"),
        // ---- QoS endpoint and traffic ----
        case("concurrent packets over the VCs", with("[router]\nvcs = 4\n[endpoint]\nconcurrent_packets = 5\n"), "endpoint.concurrent_packets", "must be in 1..=4, got 5"),
        case("unknown source queues", with("[endpoint]\nqueues = \"lifo\"\n"), "endpoint.queues", "expected one of `fifo`, `per_class`, `round_robin`, `interleaved`, `rate_control`, `per_vc`"),
        case("unknown NIC model", with("[endpoint]\nmodel = \"myrinet\"\n"), "endpoint.model", "expected one of `ideal`, `via`, `hca`"),
        case("flow queues without a NIC", with("[endpoint]\nqueues = \"interleaved\"\n"), "endpoint.queues", "needs a NIC model"),
        case("per-VC queues with a shared NIC buffer", with("[endpoint]\nmodel = \"via\"\nqueues = \"per_vc\"\nbuffer = \"shared\"\n"), "endpoint.buffer", "must be \"per_vc\" with endpoint.queues = \"per_vc\""),
        case("per-VC queues with an agent", with("[endpoint]\nqueues = \"per_vc\"\nagent = { kind = \"window\", messages = 2 }\n"), "endpoint.agent", "not available with endpoint.queues = \"per_vc\""),
        case("message injection without a NIC", with("[endpoint]\ninjection = \"message\"\n"), "endpoint.injection", "needs a NIC model"),
        case("NIC buffer below a packet per VC", with("[endpoint]\nmodel = \"via\"\nbuffer_flits = 100\n"), "endpoint.buffer_flits", "room for a longest packet"),
        case("NIC shared buffer below a packet", traffic("load = 0.1\nmessage_flits = 40\n[endpoint]\nmodel = \"via\"\nbuffer = \"shared\"\nbuffer_flits = 39\n"), "endpoint.buffer_flits", "at least 40"),
        case("DMA bandwidth zero", with("[endpoint]\nmodel = \"hca\"\ndma = { bandwidth = \"0 MB/s\" }\n"), "endpoint.dma.bandwidth", "must be a positive bandwidth"),
        case("DMA unknown field", with("[endpoint]\nmodel = \"hca\"\ndma = { speed = \"1 GB/s\" }\n"), "endpoint.dma.speed", "unknown field `speed`, expected one of `setup`, `bandwidth`, `descriptor_bytes`"),
        case("DMA set-up absurd", with("[endpoint]\nmodel = \"via\"\ndma = { setup = \"10 s\" }\n"), "endpoint.dma.setup", "at most 1000000 cycles"),
        case("rate period zero", with("[endpoint]\nmodel = \"via\"\nqueues = \"rate_control\"\nrate_period = 0\n"), "endpoint.rate_period", "between 1 cycle"),
        case("reservation without rate control", traffic("load = 0.1\npattern = { kind = \"fixed\", destination = 3 }\nsources = [0]\nreserve = \"100 Mb/s\"\n"), "traffic[0].reserve", "endpoint.queues = \"rate_control\""),
        case("reservation and idt both", traffic("load = 0.1\npattern = { kind = \"fixed\", destination = 3 }\nsources = [0]\nreserve = \"100 Mb/s\"\nidt = 2\n[endpoint]\nmodel = \"via\"\nqueues = \"rate_control\"\n"), "traffic[0].idt", "not both"),
        case("idt not positive", traffic("load = 0.1\npattern = { kind = \"fixed\", destination = 3 }\nsources = [0]\nidt = -1\n[endpoint]\nmodel = \"via\"\nqueues = \"rate_control\"\n"), "traffic[0].idt", "must be in (0, 1e9]"),
        case("reservation with random destinations", traffic("load = 0.1\nsources = [0]\nreserve = \"100 Mb/s\"\n[endpoint]\nmodel = \"via\"\nqueues = \"rate_control\"\n"), "traffic[0].pattern", "one destination per source"),
        case("reservation refused by call admission", traffic("load = 0.1\npattern = { kind = \"fixed\", destination = 3 }\nsources = [0, 1]\nreserve = \"1 Gb/s\"\n[endpoint]\nmodel = \"via\"\nqueues = \"rate_control\"\n"), "traffic[0].reserve", "call admission refuses the flow from node 1 to node 3"),
        case("fixed destination out of range", traffic("load = 0.1\npattern = { kind = \"fixed\", destination = 16 }\n"), "traffic[0].pattern.destination", "node 16 does not exist"),
        case("endpoint scheduler bad parameter", with("[endpoint]\nscheduler = { kind = \"wrr\", weights = [0] }\n"), "endpoint.scheduler.weights", "at least one weight must be > 0"),
        case("vtick zero", traffic("load = 0.1\nvtick = 0\n"), "traffic[0].vtick", "must be 1..="),
        case("vtick faster than the link", traffic("load = 0.1\nvtick = \"3.2 Gb/s\"\n"), "traffic[0].vtick", "must be 1..="),
        case("periodic with a load", traffic("load = 0.1\nprocess = { kind = \"periodic\", period = \"33.3 ms\" }\n"), "traffic[0]", "a periodic source's rate is its period"),
        case("periodic without a period", traffic("process = \"periodic\"\n"), "traffic[0].process", "missing field `period`"),
        case("unknown process", traffic("load = 0.1\nprocess = \"selfsimilar\"\n"), "traffic[0].process", "unknown variant `selfsimilar`"),
        case("mix load over 1", format!("{MESH}[[traffic]]\nclass = \"real_time\"\n[mix]\nload = 1.5\nphases = [{{ duration = 100, real_time = 1, best_effort = 1 }}]\n"), "mix.load", "must be in (0, 1]"),
        case("mix without phases", format!("{MESH}[[traffic]]\nclass = \"real_time\"\n[mix]\nload = 0.5\nphases = []\n"), "mix.phases", "at least one phase is required"),
        case("mix phase 0:0", format!("{MESH}[[traffic]]\nclass = \"real_time\"\n[mix]\nload = 0.5\nphases = [{{ duration = 100, real_time = 0, best_effort = 0 }}]\n"), "mix.phases[0]", "must be >= 0 and not both 0"),
        case("mix phase negative", format!("{MESH}[[traffic]]\nclass = \"real_time\"\n[mix]\nload = 0.5\nphases = [{{ duration = 100, real_time = -1, best_effort = 2 }}]\n"), "mix.phases[0]", "must be >= 0"),
        case("mix phase unknown key", format!("{MESH}[[traffic]]\nclass = \"real_time\"\n[mix]\nload = 0.5\nphases = [{{ duration = 100, video = 1 }}]\n"), "mix.phases[0].video", "unknown field `video`"),
        case("control entry without load under a mix", format!("{MESH}[[traffic]]\nclass = \"control\"\n[mix]\nload = 0.5\nphases = [{{ duration = 100, real_time = 1, best_effort = 1 }}]\n"), "traffic[0]", "give exactly one of `load`"),
        // ---- router ----
        case("zero vcs", with("[router]\nvcs = 0\n"), "router.vcs", "must be in 1..=32, got 0"),
        case("33 vcs", with("[router]\nvcs = 33\n"), "router.vcs", "must be in 1..=32, got 33"),
        case("zero input buffer", with("[router]\ninput_buffer = 0\n"), "router.input_buffer", "got 0"),
        case("zero output buffer", with("[router]\noutput_buffer = 0\n"), "router.output_buffer", "got 0"),
        case("speedup 0", with("[router]\nspeedup = 0\n"), "router.speedup", "must be in 1..=16, got 0"),
        case("speedup 17", with("[router]\nspeedup = 17\n"), "router.speedup", "must be in 1..=16, got 17"),
        case("input speedup 0", with("[router]\ninput_speedup = 0\n"), "router.input_speedup", "must be in 1..=16, got 0"),
        case("output speedup 17", with("[router]\noutput_speedup = 17\n"), "router.output_speedup", "must be in 1..=16, got 17"),
        case("internal speedup 0", with("[router]\ninternal_speedup = 0\n"), "router.internal_speedup", "must be in 1..=16, got 0"),
        case("internal speedup fractional", with("[router]\ninternal_speedup = 1.5\n"), "router.internal_speedup", "whole number"),
        case("booksim speedup beside qosnet's", with("[router]\nspeedup = 2\ninput_speedup = 2\n"), "router.input_speedup", "set router.speedup = 1"),
        case("booksim speedup on the preemptive router", with("[router]\nkind = \"preemptive\"\ninternal_speedup = 2\n"), "router.internal_speedup", "must be 1 with the preemptive router"),
        case("credit at the crossbar on the preemptive router", with("[router]\nkind = \"preemptive\"\ncredit_at = \"crossbar\"\n"), "router.credit_at", "must be \"output\" with the preemptive router"),
        case("credit at nowhere", with("[router]\ncredit_at = \"switch\"\n"), "router.credit_at", "output"),
        case("expanded crossbar beyond 64 ports", format!("[topology]\nkind = \"star\"\nports = 40\n{TRAFFIC}[router]\noutput_speedup = 2\n"), "router.output_speedup", "80 crossbar ports, at most 64: give at most 1"),
        case("link latency 0", with("[router]\nlink_latency = 0\n"), "router.link_latency", "got 0"),
        case("credit latency 0", with("[router]\ncredit_latency = 0\n"), "router.credit_latency", "got 0"),
        case("vcs is a string", with("[router]\nvcs = \"many\"\n"), "router.vcs", "\"many\""),
        case("negative vcs", with("[router]\nvcs = -1\n"), "router.vcs", "-1"),
        case("unknown key in router", with("[router]\nvc = 4\n"), "router.vc", "unknown field `vc`, expected one of `kind`, `vcs`"),
        case(
            "misspelled pipeline stage",
            with(&format!("[router.pipeline]\n{PIPELINE_OK}crosbar = 1\n")),
            "router.pipeline.crosbar",
            "unknown field `crosbar`, expected one of `sync`, `routing`, `vc_alloc`, `crossbar`, `output`",
        ),
        case(
            "crossbar stage delay 0",
            with(&format!("[router.pipeline]\n{PIPELINE_OK}crossbar = 0\n")),
            "router.pipeline.crossbar",
            "must be in 1..=10000, got 0",
        ),
        case(
            "unknown crossbar scheduler",
            with("[router]\ncrossbar_scheduler = { kind = \"wfq\" }\n"),
            "router.crossbar_scheduler.kind",
            "unknown variant `wfq`, expected one of `fcfs`, `round_robin`, `virtual_clock`, `fair_queueing`, `wrr`, `vl_arbitration`",
        ),
        case(
            "unknown output scheduler",
            with("[router]\noutput_scheduler = { kind = \"edf\" }\n"),
            "router.output_scheduler.kind",
            "unknown variant `edf`, expected one of `fcfs`, `round_robin`, `virtual_clock`, `fair_queueing`, `wrr`, `vl_arbitration`",
        ),
        case(
            "scheduler as an unknown bare kind",
            with("[router]\ncrossbar_scheduler = \"lifo\"\n"),
            "router.crossbar_scheduler",
            "unknown variant `lifo`, expected one of `fcfs`, `round_robin`, `virtual_clock`, `fair_queueing`, `wrr`, `vl_arbitration`",
        ),
        case(
            "unknown router vc_selection",
            with("[router]\nvc_selection = \"random\"\n"),
            "router.vc_selection",
            "`lowest_free`",
        ),
        case(
            "unknown endpoint vc_selection",
            with("[endpoint]\nvc_selection = \"random\"\n"),
            "endpoint.vc_selection",
            "`lowest_free`",
        ),
        // ---- top level ----
        case("unknown top-level key", with("[routers]\nvcs = 4\n"), "routers", "unknown field `routers`, expected one of `simulation`"),
        case("no traffic", MESH, "traffic", "at least one [[traffic]]"),
        case("traffic as a table", format!("{MESH}[traffic]\nload = 0.1\n"), "traffic", "must be a list, got a table"),
        case("no topology", TRAFFIC, "<root>", "missing field `topology`"),
        case("toml syntax error", with("[router\nvcs = 4\n"), "<root>", "invalid table header"),
        case("duplicate key", with("[router]\nvcs = 4\nvcs = 8\n"), "router.vcs", "duplicate key: it is given twice (line 9, column 1)"),
        // ---- physical ----
        case("flit_bits 0", with("[physical]\nflit_bits = 0\n"), "physical.flit_bits", "got 0"),
        case(
            "link bandwidth wrong unit",
            with("[physical]\nlink_bandwidth = \"1.6 Gb\"\n"),
            "physical.link_bandwidth",
            "Gb/s",
        ),
        case(
            "negative link bandwidth",
            with("[physical]\nlink_bandwidth = \"-1.6 Gb/s\"\n"),
            "physical.link_bandwidth",
            "positive",
        ),
        case(
            "infinite link bandwidth",
            with("[physical]\nlink_bandwidth = \"1e400 b/s\"\n"),
            "physical.link_bandwidth",
            "1e400 b/s",
        ),
        case(
            "link bandwidth as a bare number",
            with("[physical]\nlink_bandwidth = 1600000000\n"),
            "physical.link_bandwidth",
            "string",
        ),
        // ---- simulation ----
        case(
            "warmup unknown time unit",
            with("[simulation]\nwarmup = \"10 parsecs\"\n"),
            "simulation.warmup",
            "\"parsecs\"",
        ),
        case(
            "warmup fractional bare cycles",
            with("[simulation]\nwarmup = 1.5\n"),
            "simulation.warmup",
            "must be whole, got 1.5",
        ),
        case(
            "warmup negative bare cycles",
            with("[simulation]\nwarmup = -5\n"),
            "simulation.warmup",
            "got -5",
        ),
        case(
            "warmup fractional cycles string",
            with("[simulation]\nwarmup = \"2.5 cycles\"\n"),
            "simulation.warmup",
            "whole number",
        ),
        case("measure 0", with("[simulation]\nmeasure = 0\n"), "simulation.measure", "at least one cycle"),
        case(
            "measure 0 us",
            with("[simulation]\nmeasure = \"0 us\"\n"),
            "simulation.measure",
            "at least one cycle",
        ),
        case("watchdog 0", with("[simulation]\nwatchdog = 0\n"), "simulation.watchdog", "longer than the longest"),
        case(
            "watchdog shorter than a link",
            with("[simulation]\nwatchdog = 5\n[router]\nlink_latency = 20\n"),
            "simulation.watchdog",
            "(21 cycles), got 5 cycles",
        ),
        case(
            "warmup 1e30 s",
            with("[simulation]\nwarmup = \"1e30 s\"\n"),
            "simulation.warmup",
            "must be at most",
        ),
        case(
            "measure i64::MAX cycles",
            with("[simulation]\nmeasure = 9223372036854775807\n"),
            "simulation.measure",
            "must be at most",
        ),
        case(
            "unknown key in simulation",
            with("[simulation]\nwarm_up = 100\n"),
            "simulation.warm_up",
            "unknown field `warm_up`, expected one of `seed`, `warmup`",
        ),
        case("negative seed", with("[simulation]\nseed = -1\n"), "simulation.seed", "-1"),
        // ---- traffic: load / rate ----
        case("negative load", traffic("load = -0.1\n"), "traffic[0].load", "got -0.1"),
        case("load above 1", traffic("load = 1.5\n"), "traffic[0].load", "must be in (0, 1]"),
        case("load 0", traffic("load = 0.0\n"), "traffic[0].load", "got 0"),
        case("load nan", traffic("load = nan\n"), "traffic[0].load", "got NaN"),
        case("load as a string", traffic("load = \"0.1\"\n"), "traffic[0].load", "must be a number, got the string \"0.1\""),
        case(
            "load and rate both",
            traffic("load = 0.1\nrate = \"100 Mb/s\"\n"),
            "traffic[0]",
            "exactly one of `load`",
        ),
        case("neither load nor rate", traffic("class = \"control\"\n"), "traffic[0]", "exactly one of `load`"),
        case("rate unknown unit", traffic("rate = \"1.6 GB\"\n"), "traffic[0].rate", "allowed: b/s"),
        case(
            "rate above link bandwidth",
            traffic("rate = \"2 Gb/s\"\n"),
            "traffic[0].rate",
            "exceeds the link bandwidth 1.6 Gb/s",
        ),
        case("rate as a bare number", traffic("rate = 400\n"), "traffic[0].rate", "string"),
        case("rate 0", traffic("rate = \"0 Mb/s\"\n"), "traffic[0].rate", "positive bandwidth, got \"0 Mb/s\""),
        case("second source bad", format!("{MESH}{TRAFFIC}[[traffic]]\nload = 7\n"), "traffic[1].load", "got 7"),
        case("unknown key in traffic", traffic("loads = 0.1\n"), "traffic[0].loads", "unknown field `loads`"),
        // ---- traffic: other fields ----
        case("unknown traffic class", traffic("load = 0.1\nclass = \"bulk\"\n"), "traffic[0].class", "`real_time`"),
        case("unknown process", traffic("load = 0.1\nprocess = \"mmpp\"\n"), "traffic[0].process", "`poisson`"),
        case("packet_flits 0", traffic("load = 0.1\npacket_flits = 0\n"), "traffic[0].packet_flits", "got 0"),
        case("message_flits 0", traffic("load = 0.1\nmessage_flits = 0\n"), "traffic[0].message_flits", "got 0"),
        case(
            "packet_flits too large",
            traffic("load = 0.1\npacket_flits = 70000\n"),
            "traffic[0].packet_flits",
            "must be in 1..=65535, got 70000",
        ),
        case(
            "sources node out of range",
            traffic("load = 0.1\nsources = [0, 16]\n"),
            "traffic[0].sources",
            "node 16 does not exist (nodes are 0..15)",
        ),
        case(
            "sources duplicate",
            traffic("load = 0.1\nsources = [3, 5, 3]\n"),
            "traffic[0].sources",
            "node 3 is listed twice",
        ),
        case("sources empty", traffic("load = 0.1\nsources = []\n"), "traffic[0].sources", "non-empty list"),
        case(
            "sources bad word",
            traffic("load = 0.1\nsources = \"some\"\n"),
            "traffic[0].sources",
            "must be \"all\" or a list of node numbers",
        ),
        // ---- traffic: patterns ----
        case(
            "bit_complement on 6x6",
            mesh6("bit_complement"),
            "traffic[0].pattern.kind",
            "power-of-two node count, this topology has 36 nodes",
        ),
        case(
            "transpose on 6x6",
            mesh6("transpose"),
            "traffic[0].pattern.kind",
            "36 nodes",
        ),
        case(
            "butterfly on 6x6",
            mesh6("butterfly"),
            "traffic[0].pattern.kind",
            "36 nodes",
        ),
        case(
            "bit_reversal on 6x6",
            mesh6("bit_reversal"),
            "traffic[0].pattern.kind",
            "36 nodes",
        ),
        case(
            "perfect_shuffle on 6x6",
            mesh6("perfect_shuffle"),
            "traffic[0].pattern.kind",
            "36 nodes",
        ),
        case(
            "transpose on 8 nodes",
            "[topology]\nkind = \"star\"\nports = 8\n[[traffic]]\nload = 0.1\npattern = { kind = \"transpose\" }\n",
            "traffic[0].pattern.kind",
            "even number of index bits",
        ),
        case(
            "diagonal without self traffic",
            traffic("load = 0.1\npattern = { kind = \"diagonal\" }\n"),
            "traffic[0].self_traffic",
            "sends some messages to the source itself",
        ),
        case(
            "taper64 on 16 nodes",
            traffic("load = 0.1\nself_traffic = true\npattern = { kind = \"taper64\" }\n"),
            "traffic[0].pattern.kind",
            "exactly 64 nodes, got 16",
        ),
        case(
            "badperm_yarc on 8 nodes",
            "[topology]\nkind = \"star\"\nports = 8\n[[traffic]]\nload = 0.1\nself_traffic = true\npattern = { kind = \"badperm_yarc\" }\n",
            "traffic[0].pattern.kind",
            "needs a square node count",
        ),
        case(
            "badperm_yarc without self traffic",
            traffic("load = 0.1\npattern = { kind = \"badperm_yarc\" }\n"),
            "traffic[0].self_traffic",
            "sends some messages to the source itself",
        ),
        case(
            "next_group on a mesh",
            traffic("load = 0.1\npattern = { kind = \"next_group\" }\n"),
            "traffic[0].pattern.kind",
            "needs a dragonfly topology",
        ),
        case(
            "uniform_except leaving one node",
            "[topology]\nkind = \"star\"\nports = 3\n[[traffic]]\nload = 0.1\npattern = { kind = \"uniform_except\", nodes = [0, 1] }\n",
            "traffic[0].pattern.nodes",
            "at least two must stay destinations",
        ),
        case(
            "hot_spot fraction 1.5",
            traffic("load = 0.1\npattern = { kind = \"hot_spot\", fraction = 1.5, nodes = [0] }\n"),
            "traffic[0].pattern.fraction",
            "must be in [0, 1], got 1.5",
        ),
        case(
            "hot_spot fraction nan",
            traffic("load = 0.1\npattern = { kind = \"hot_spot\", fraction = nan, nodes = [0] }\n"),
            "traffic[0].pattern.fraction",
            "got NaN",
        ),
        case(
            "hot_spot node out of range",
            traffic("load = 0.1\npattern = { kind = \"hot_spot\", fraction = 0.2, nodes = [3, 99] }\n"),
            "traffic[0].pattern.nodes",
            "node 99 does not exist",
        ),
        case(
            "hot_spot empty nodes",
            traffic("load = 0.1\npattern = { kind = \"hot_spot\", fraction = 0.2, nodes = [] }\n"),
            "traffic[0].pattern.nodes",
            "at least one hot-spot node",
        ),
        case(
            "hot_spot missing nodes",
            traffic("load = 0.1\npattern = { kind = \"hot_spot\", fraction = 0.2 }\n"),
            "traffic[0].pattern",
            "missing field `nodes`",
        ),
        case(
            "unknown pattern",
            traffic("load = 0.1\npattern = { kind = \"zipf\" }\n"),
            "traffic[0].pattern.kind",
            "unknown variant `zipf`, expected one of `uniform`",
        ),
        case(
            "pattern as a bare kind that needs parameters",
            traffic("load = 0.1\npattern = \"hot_spot\"\n"),
            "traffic[0].pattern",
            "missing field `fraction`: kind \"hot_spot\" takes parameters, written as a table { kind = \"hot_spot\", fraction = ..., nodes = ... }",
        ),
        case(
            "permutation file missing",
            traffic(&format!("load = 0.1\npattern = {{ kind = \"permutation\", file = {} }}\n", toml_path(&tmp.missing))),
            "traffic[0].pattern.file",
            "cannot read",
        ),
        case(
            "matrix wrong shape",
            traffic(&format!("load = 0.1\npattern = {{ kind = \"matrix\", file = {} }}\n", toml_path(&tmp.matrix_3x3))),
            "traffic[0].pattern.file",
            "expected a 16x16 matrix",
        ),
        case(
            "permutation wrong length",
            traffic(&format!("load = 0.1\npattern = {{ kind = \"permutation\", file = {} }}\n", toml_path(&tmp.perm_short))),
            "traffic[0].pattern.file",
            "expected 16 lines",
        ),
        case(
            "permutation node out of range",
            traffic(&format!("load = 0.1\npattern = {{ kind = \"permutation\", file = {} }}\n", toml_path(&tmp.perm_range))),
            "traffic[0].pattern.file",
            "node 40 is not in 0..15",
        ),
        case(
            "matrix negative weight",
            traffic(&format!("load = 0.1\npattern = {{ kind = \"matrix\", file = {} }}\n", toml_path(&tmp.matrix_neg))),
            "traffic[0].pattern.file",
            ">= 0",
        ),
        // ---- topology ----
        case("unknown topology kind", topo("kind = \"ring\"\nk = 4\n", ""), "topology.kind", "unknown variant `ring`, expected one of `star`, `mesh`, `torus`, `fat_tree`"),
        case("topology without kind", topo("k = 4\nn = 2\n", ""), "topology", "missing field `kind`"),
        case(
            "topology kind wrong case",
            topo("kind = \"Mesh\"\nk = 4\nn = 2\n", ""),
            "topology.kind",
            "unknown variant `Mesh`, expected one of `star`, `mesh`",
        ),
        case("mesh k=1", topo("kind = \"mesh\"\nk = 1\nn = 2\n", ""), "topology.k", "must be >= 2, got 1"),
        case(
            "mesh k/n and dims",
            topo("kind = \"mesh\"\nk = 4\nn = 2\ndims = [4, 4]\n", ""),
            "topology",
            "or only `dims`",
        ),
        case("mesh only k", topo("kind = \"mesh\"\nk = 4\n", ""), "topology", "`n`"),
        case("mesh n=0", topo("kind = \"mesh\"\nk = 4\nn = 0\n", ""), "topology.n", "must be in 1..=8, got 0"),
        case("mesh n=9", topo("kind = \"mesh\"\nk = 2\nn = 9\n", ""), "topology.n", "must be in 1..=8, got 9"),
        case("mesh empty dims", topo("kind = \"mesh\"\ndims = []\n", ""), "topology.dims", "got 0"),
        case(
            "mesh 9 dims",
            topo("kind = \"mesh\"\ndims = [2, 2, 2, 2, 2, 2, 2, 2, 2]\n", ""),
            "topology.dims",
            "must list 1 to 8 side lengths, got 9",
        ),
        case("mesh dims side 1", topo("kind = \"mesh\"\ndims = [4, 1]\n", ""), "topology.dims[1]", "got 1"),
        case(
            "mesh too many routers",
            topo("kind = \"mesh\"\nk = 2048\nn = 2\n", ""),
            "topology",
            "4194304 routers",
        ),
        case(
            "unknown key in mesh",
            topo("kind = \"mesh\"\nk = 4\nn = 2\nports = 4\n", ""),
            "topology.ports",
            "unknown field `ports`, expected one of `k`, `n`, `dims`",
        ),
        case(
            "torus with 1 vc",
            topo("kind = \"torus\"\nk = 4\nn = 2\n", "[router]\nvcs = 1\n"),
            "router.vcs",
            "needs >= 2 VCs",
        ),
        case("star 1 port", topo("kind = \"star\"\nports = 1\n", ""), "topology.ports", "must be in 2..=64, got 1"),
        case("star 65 ports", topo("kind = \"star\"\nports = 65\n", ""), "topology.ports", "must be in 2..=64, got 65"),
        case("star missing ports", topo("kind = \"star\"\n", ""), "topology", "missing field `ports`"),
        case("fat tree k=1", topo("kind = \"fat_tree\"\nk = 1\nn = 2\n", ""), "topology.k", "must be in 2..=32, got 1"),
        case("fat tree n=0", topo("kind = \"fat_tree\"\nk = 4\nn = 0\n", ""), "topology.n", "must be in 1..=8, got 0"),
        case("fat tree k=33", topo("kind = \"fat_tree\"\nk = 33\nn = 1\n", ""), "topology.k", "must be in 2..=32, got 33"),
        case(
            "fat tree too many nodes",
            topo("kind = \"fat_tree\"\nk = 32\nn = 5\n", ""),
            "topology",
            "32-ary 5-tree has too many nodes",
        ),
        case("cmesh k=1", topo("kind = \"cmesh\"\nk = 1\n", ""), "topology.k", "must be >= 2, got 1"),
        case("cmesh c=2", topo("kind = \"cmesh\"\nk = 4\nc = 2\n", ""), "topology.c", "must be 4 (a 2 x 2 block of nodes a router"),
        case("cmesh too many routers", topo("kind = \"cmesh\"\nk = 1025\n", ""), "topology.k", "1025 x 1025 routers is more than"),
        case("cmesh express latency 0", topo("kind = \"cmesh\"\nk = 4\nexpress_latency = 0\n", ""), "topology.express_latency", "in 1..=10000, got 0"),
        case("cmesh express on odd k", topo("kind = \"cmesh\"\nk = 3\n", "[routing]\nkind = \"dor_express\"\n"), "routing.kind", "give an even topology.k, got 3"),
        case("cmesh min_adapt", topo("kind = \"cmesh\"\nk = 4\n", "[routing]\nkind = \"min_adapt\"\n"), "routing.kind", "use \"auto\" or \"dor\", \"dor_express\", \"xy_yx\" or \"xy_yx_express\""),
        case("dor_express on a mesh", with("[routing]\nkind = \"dor_express\"\n"), "routing.kind", "does not apply to a mesh"),
        // ---- ib_fabric from an ibsim net file (topology/ib_fabric/ibsim.rs) ----
        case("ibsim mismatched peer port", ibsim(&tmp.ibsim_mismatch, ""), "topology.file", "line 4: mismatched link: this line joins \"Switch1\"[3] to \"Switch2\"[3], but line 8 joins \"Switch2\"[3] to \"Switch1\"[4]"),
        case("ibsim unknown remote id", ibsim(&tmp.ibsim_unknown, ""), "topology.file", "line 3: unknown remote id \"Hca3\""),
        case("ibsim port beyond the header", ibsim(&tmp.ibsim_beyond, ""), "topology.file", "line 9: port 4 is beyond the 3 ports \"Switch2\" declares on line 7"),
        case("ibsim bad width", ibsim(&tmp.ibsim_width, ""), "topology.file", "line 2: bad width `w=3`: must be w=1, w=4 or w=12"),
        case("ibsim dangling link", ibsim(&tmp.ibsim_dangling, ""), "topology.file", "line 2: dangling link: the record of \"Hca1\" (line 11) has no line for its port 1"),
        case("ibsim with routes", ibsim(&tmp.ibsim_ok, "format = \"ibsim\"\nroutes = \"/tmp\"\n"), "topology.routes", "read as an ibsim net file, which has no LIDs"),
        case("ibsim with routes, format inferred", ibsim(&tmp.ibsim_ok, "routes = \"/tmp\"\n"), "topology.routes", "(inferred from its first record)"),
        case("ib_fabric unknown format", ibsim(&tmp.ibsim_ok, "format = \"opensm\"\n"), "topology.format", "must be \"ibnetdiscover\" or \"ibsim\", got \"opensm\""),
        case("ibsim read as a ports report", ibsim(&tmp.ibsim_ok, "format = \"ibnetdiscover\"\n"), "topology.file", "no switch-to-HCA links found (read as an `ibnetdiscover -p` ports report)"),
        // ---- routing ----
        // The message spells the kind as the Rust variant (`Dor`, `DModK`), not as written (`dor`, `d_mod_k`).
        case(
            "dor on fat tree",
            topo("kind = \"fat_tree\"\nk = 4\nn = 2\n", "[routing]\nkind = \"dor\"\n"),
            "routing.kind",
            "\"d_mod_k\"",
        ),
        case(
            "d_mod_k on mesh",
            with("[routing]\nkind = \"d_mod_k\"\n"),
            "routing.kind",
            "\"dor\"",
        ),
        case(
            "dor on star",
            topo("kind = \"star\"\nports = 8\n", "[routing]\nkind = \"dor\"\n"),
            "routing.kind",
            "\"direct\"",
        ),
        case("unknown routing kind", with("[routing]\nkind = \"adaptive\"\n"), "routing.kind", "`dor_dateline`"),
        // ---- issue 21: values that panicked, validated then exhausted memory, or were ignored ----
        case(
            "reserved flow from a node out of range",
            traffic("pattern = { kind = \"fixed\", destination = 3 }\nsources = [16]\nidt = 2\nload = 0.1\n[endpoint]\nmodel = \"via\"\nqueues = \"rate_control\"\n"),
            "traffic[0].sources",
            "node 16 does not exist (nodes are 0..15)",
        ),
        case("parameter to fair_queueing", with("[router]\ncrossbar_scheduler = { kind = \"fair_queueing\", weights = [1, 2] }\n"), "router.crossbar_scheduler.weights", "unknown field `weights`: kind \"fair_queueing\" takes no parameters"),
        case("parameter to fcfs", with("[router]\noutput_scheduler = { kind = \"fcfs\", counter_bits = 8 }\n"), "router.output_scheduler.counter_bits", "kind \"fcfs\" takes no parameters"),
        case("parameter to round_robin", with("[endpoint]\nscheduler = { kind = \"round_robin\", weights = [1] }\n"), "endpoint.scheduler.weights", "kind \"round_robin\" takes no parameters"),
        case("parameter to poisson", traffic("load = 0.1\nprocess = { kind = \"poisson\", period = 100 }\n"), "traffic[0].process.period", "unknown field `period`: kind \"poisson\" takes no parameters"),
        case("parameter to bernoulli", traffic("load = 0.1\nprocess = { kind = \"bernoulli\", on = 100 }\n"), "traffic[0].process.on", "kind \"bernoulli\" takes no parameters"),
        case("parameter to uniform", traffic("load = 0.1\npattern = { kind = \"uniform\", nodes = [1] }\n"), "traffic[0].pattern.nodes", "kind \"uniform\" takes no parameters"),
        case("parameter to transpose", traffic("load = 0.1\npattern = { kind = \"transpose\", fraction = 0.5 }\n"), "traffic[0].pattern.fraction", "kind \"transpose\" takes no parameters"),
        case("unknown parameter of a window agent", with("[endpoint]\nagent = { kind = \"window\", messages = 4, timeout = 9 }\n"), "endpoint.agent.timeout", "unknown field `timeout`, expected `messages`"),
        case("simulation as a positional list", format!("[simulation]\n{MESH}{TRAFFIC}").replace("[simulation]\n", "simulation = [3, 0, 200]\n"), "simulation", "must be a table with named keys, got a list of 3 values (values by position are not accepted)"),
        case("router as a positional list", format!("router = [16, 40]\n{MESH}{TRAFFIC}"), "router", "values by position are not accepted"),
        case("a traffic entry as a positional list", format!("traffic = [[0.1, 40]]\n{MESH}"), "traffic[0]", "values by position are not accepted"),
        case("pipeline as a positional list", with("[router]\npipeline = [1, 1, 1, 1, 1]\n"), "router.pipeline", "values by position are not accepted"),
        case("mix phase of 1e30 s", format!("{MESH}[[traffic]]\nclass = \"real_time\"\n[mix]\nload = 0.5\nphases = [{{ duration = \"1e30 s\", real_time = 1, best_effort = 1 }}]\n"), "mix.phases[0].duration", "must be at most 1000000000000000 cycles, got 1e30 s"),
        case("periodic period of 1e30 s", traffic("process = { kind = \"periodic\", period = \"1e30 s\" }\nclass = \"control\"\n"), "traffic[0].process.period", "must be at most"),
        case("on/off period of 1e30 s", traffic("load = 0.1\nprocess = { kind = \"on_off\", on = \"1e30 s\", off = 100 }\n"), "traffic[0].process.on", "must be at most"),
        case("mesh k negative", topo("kind = \"mesh\"\nk = -4\nn = 2\n", ""), "topology.k", "must be a whole number >= 1, got -4"),
        case("fat tree k a string", topo("kind = \"fat_tree\"\nk = \"four\"\nn = 2\n", ""), "topology.k", "must be a whole number >= 1, got the string \"four\""),
        case("mesh dims entry fractional", topo("kind = \"mesh\"\ndims = [4, 2.5]\n", ""), "topology.dims[1]", "must be a whole number >= 1, got 2.5"),
        case("negative wrr weight", with("[router]\nvcs = 2\ncrossbar_scheduler = { kind = \"wrr\", weights = [1, -1] }\n"), "router.crossbar_scheduler.weights[1]", "must be a whole number >= 0, got -1"),
        case("vl arbitration entry of 3 values", with("[router]\noutput_scheduler = { kind = \"vl_arbitration\", high = [[0, 1], [1, 2, 3]] }\n"), "router.output_scheduler.high[1]", "must be a list of 2 values, got a list of 3 values"),
        case("video traces not a list", traffic("load = 0.1\nclass = \"real_time\"\nprocess = { kind = \"video\", traces = \"a.st\" }\n"), "traffic[0].process.traces", "must be a list, got the string \"a.st\""),
        case("video scale unknown", traffic("load = 0.1\nclass = \"real_time\"\nprocess = { kind = \"video\", mean_rate = \"4 Mb/s\", scale = \"trace\" }\n"), "traffic[0].process.scale", "expected one of `each`, `own`, `common`"),
        case("video scale own with a mean rate", traffic("load = 0.1\nclass = \"real_time\"\nprocess = { kind = \"video\", mean_rate = \"4 Mb/s\", scale = \"own\", traces = [\"a.st\"] }\n"), "traffic[0].process.mean_rate", "is not used with scale = \"own\""),
        case("video scale common without a mean rate", traffic("load = 0.1\nclass = \"real_time\"\nprocess = { kind = \"video\", scale = \"common\", traces = [\"a.st\"] }\n"), "traffic[0].process.mean_rate", "scale = \"common\" needs the streams' average rate"),
        case("video scale own of a plain trace", traffic("load = 0.1\nclass = \"real_time\"\nprocess = { kind = \"video\", scale = \"own\", traces = [\"a.st\", \"b.txt\"] }\n"), "traffic[0].process.traces[1]", "units are not stated, has no rate of its own"),
        case("video scale own without traces", traffic("load = 0.1\nclass = \"real_time\"\nprocess = { kind = \"video\", scale = \"own\" }\n"), "traffic[0].process.scale", "needs `traces`"),
        case("seed too large", with("[simulation]\nseed = 1e3\n"), "simulation.seed", "must be a whole number >= 0, got 1000.0"),
        case("record_messages not a bool", with("[simulation]\nrecord_messages = \"yes\"\n"), "simulation.record_messages", "must be true or false, got the string \"yes\""),
        case("vcs beyond u32", with("[router]\nvcs = 5000000000\n"), "router.vcs", "must be a whole number >= 1 and at most 4294967295, got 5000000000"),
        case("kind not a string", with("[router]\ncrossbar_scheduler = { kind = 7 }\n"), "router.crossbar_scheduler.kind", "must be a kind name (a string), got 7"),
        case("scheduler as a number", with("[router]\ncrossbar_scheduler = 7\n"), "router.crossbar_scheduler", "must be a kind name, or a table with `kind` and its parameters, got 7"),
        case("unit enum as a table", with("[router]\nkind = { preemptive = true }\n"), "router.kind", "must be one of `traditional`, `non_preemptive`, `preemptive`, got a table"),
        case("vtick neither a number nor a rate", traffic("load = 0.1\nvtick = true\n"), "traffic[0].vtick", "must be cycles per flit (a number) or a rate like \"4 Mb/s\", got true"),
        case("a huge value is cut", with(&format!("[router]\nkind = \"{}\"\n", "x".repeat(5000))), "router.kind", "…(5000 chars)`, expected one of"),
        case("extra buffer too deep on a traditional router", with("[router]\npreemption = { extra_buffer = 4000000000 }\n"), "router.preemption.extra_buffer", "must be in 0..=65533, got 4000000000"),
        // ---- memory (issue 21: each validated, then asked for gigabytes) ----
        case("a 1000x1000 mesh", "[simulation]\nmemory_limit = \"64 GB\"\n[topology]\nkind = \"mesh\"\nk = 1000\nn = 2\n[[traffic]]\nload = 0.1\n", "topology", "the run needs about 12"),
        case("a 65,533-node ring", "[simulation]\nmemory_limit = \"4 GB\"\n[topology]\nkind = \"torus\"\nk = 65533\nn = 1\n[[traffic]]\nload = 0.1\n", "topology", "more than the limit of 4.00 GB (simulation.memory_limit)"),
        case("output_buffer 65533 on an 8x8 mesh", "[simulation]\nmemory_limit = \"4 GB\"\n[topology]\nkind = \"mesh\"\nk = 8\nn = 2\n[router]\noutput_buffer = 65533\n[[traffic]]\nload = 0.1\n", "router.output_buffer", "router output buffers 5.7"),
        case("video streams beyond memory", "[simulation]\nmemory_limit = \"100 MB\"\n[topology]\nkind = \"mesh\"\nk = 16\nn = 2\n[[traffic]]\nclass = \"real_time\"\nprocess = { kind = \"video\", mean_rate = \"1 Mb/s\", streams = 4096 }\n", "traffic", "MB (sources (nodes x streams)"),
        case("memory limit with an unknown unit", with("[simulation]\nmemory_limit = \"4 GW\"\n"), "simulation.memory_limit", "unknown size unit \"GW\""),
        case("memory limit 0", with("[simulation]\nmemory_limit = 0\n"), "simulation.memory_limit", "at least 1 byte"),
    ]
}

/// Temporary pattern files; removed on drop.
struct Tmp {
    missing: PathBuf,
    matrix_3x3: PathBuf,
    perm_short: PathBuf,
    perm_range: PathBuf,
    matrix_neg: PathBuf,
    ibsim_ok: PathBuf,
    ibsim_mismatch: PathBuf,
    ibsim_unknown: PathBuf,
    ibsim_beyond: PathBuf,
    ibsim_width: PathBuf,
    ibsim_dangling: PathBuf,
}

impl Tmp {
    fn new() -> Tmp {
        let missing =
            std::env::temp_dir().join(format!("qosnet_bad_configs_{}_missing.txt", std::process::id()));
        let _ = std::fs::remove_file(&missing);
        let neg = (0..16)
            .map(|r| (0..16).map(|c| if r == 2 && c == 5 { "-1" } else { "1" }).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join("\n");
        Tmp {
            missing,
            matrix_3x3: temp_file("matrix_3x3", "0 1 1\n1 0 1\n1 1 0\n"),
            perm_short: temp_file("perm_short", "1\n2\n3\n0\n"),
            perm_range: temp_file("perm_range", "0 40\n1 2\n"),
            matrix_neg: temp_file("matrix_neg", &neg),
            ibsim_ok: temp_file("ibsim_ok", IBSIM_NET),
            ibsim_mismatch: temp_file(
                "ibsim_mismatch",
                &IBSIM_NET.replace("[3] \"Switch1\"[3]", "[3] \"Switch1\"[4]"),
            ),
            ibsim_unknown: temp_file("ibsim_unknown", &IBSIM_NET.replace("\"Hca2\"[2]", "\"Hca3\"[2]")),
            ibsim_beyond: temp_file(
                "ibsim_beyond",
                &IBSIM_NET.replace("Switch 8 \"Switch2\"", "Switch 3 \"Switch2\""),
            ),
            ibsim_width: temp_file(
                "ibsim_width",
                &IBSIM_NET.replace("[1] \"Hca1\"[1]", "[1] \"Hca1\"[1] w=3"),
            ),
            ibsim_dangling: temp_file("ibsim_dangling", &IBSIM_NET.replace("[1] \"Switch1\"[1]\n", "")),
        }
    }
}

impl Drop for Tmp {
    fn drop(&mut self) {
        for p in [
            &self.matrix_3x3,
            &self.perm_short,
            &self.perm_range,
            &self.matrix_neg,
            &self.ibsim_ok,
            &self.ibsim_mismatch,
            &self.ibsim_unknown,
            &self.ibsim_beyond,
            &self.ibsim_width,
            &self.ibsim_dangling,
        ] {
            let _ = std::fs::remove_file(p);
        }
    }
}

fn build(text: &str) -> std::thread::Result<Result<Simulation, ConfigErrors>> {
    catch_unwind(AssertUnwindSafe(|| Simulation::from_toml(text, None)))
}

fn show(errs: &[ConfigError]) -> String {
    errs.iter().map(|e| format!("  {:?}: {:?}", e.path, e.message)).collect::<Vec<_>>().join("\n")
}

#[test]
fn every_bad_config_is_rejected_with_path_and_reason() {
    let tmp = Tmp::new();
    let cases = catalogue(&tmp);
    let mut failures = Vec::new();
    for c in &cases {
        match build(&c.toml) {
            Err(_) => failures.push(format!("[{}] panicked", c.name)),
            Ok(Ok(_)) => failures.push(format!("[{}] was accepted", c.name)),
            Ok(Err(ConfigErrors(errs))) => {
                let hit = errs.iter().any(|e| e.path == c.path && e.message.contains(c.contains));
                // One validation path: what `run` refuses, `validate` refuses, at the same key.
                if let Ok(cfg) = qosnet_sim::Config::from_toml_str(&c.toml) {
                    match qosnet_sim::build::validate(&cfg) {
                        Ok(_) => failures.push(format!("[{}] validate said ok; building refused it", c.name)),
                        Err(ConfigErrors(v)) if !v.iter().any(|e| e.path == c.path) => failures
                            .push(format!("[{}] validate names no {:?}; got:\n{}", c.name, c.path, show(&v))),
                        Err(_) => {}
                    }
                }
                if !hit {
                    failures.push(format!(
                        "[{}] no error with path {:?} containing {:?}; got:\n{}",
                        c.name,
                        c.path,
                        c.contains,
                        show(&errs)
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn independent_semantic_errors_are_all_reported() {
    let text = format!("{MESH}[[traffic]]\nload = 2\n[router]\nvcs = 0\ninput_buffer = 0\n");
    let errs = match build(&text) {
        Err(_) => panic!("building panicked"),
        Ok(Ok(_)) => panic!("accepted a configuration with three errors"),
        Ok(Err(ConfigErrors(errs))) => errs,
    };
    let expected = [
        ("router.vcs", "must be in 1..=32, got 0"),
        ("router.input_buffer", "must be in 1..=65533, got 0"),
        ("traffic[0].load", "got 2"),
    ];
    for (path, text) in expected {
        assert!(
            errs.iter().any(|e| e.path == path && e.message.contains(text)),
            "missing {path:?} ({text:?}); got:\n{}",
            show(&errs)
        );
    }
    assert_eq!(errs.len(), expected.len(), "unexpected extra errors:\n{}", show(&errs));
}

/// Huge durations must not overflow `warmup + measure + drain_limit` when the simulation is
/// built. Either an error or a working simulation is acceptable; a panic is not.
#[test]
fn huge_durations_do_not_panic() {
    let cases = [
        ("warmup 1e30 s", with("[simulation]\nwarmup = \"1e30 s\"\n")),
        ("measure 1e30 s", with("[simulation]\nmeasure = \"1e30 s\"\n")),
        ("drain_limit 1e30 s", with("[simulation]\ndrain_limit = \"1e30 s\"\n")),
        (
            "all three i64::MAX cycles",
            with(
                "[simulation]\nwarmup = 9223372036854775807\nmeasure = 9223372036854775807\n\
                 drain_limit = 9223372036854775807\n",
            ),
        ),
    ];
    let panicked: Vec<&str> = cases.iter().filter(|(_, t)| build(t).is_err()).map(|(n, _)| *n).collect();
    assert!(panicked.is_empty(), "building panicked for: {panicked:?}");
}

/// Parse errors are reported together, each at its own key, as validation's are.
#[test]
fn every_parse_error_in_one_pass() {
    let text = "[topology]\nkind = \"mesh\"\nk = -4\nn = 2\n[router]\nvcs = \"x\"\nbuffers = 4\n\
                crossbar_scheduler = { kind = \"fair_queueing\", weights = [1] }\n\
                [[traffic]]\nload = \"a\"\npattern = { kind = \"hot_spot\", fraction = 0.1, nodes = [-1] }\n";
    let errs = match build(text) {
        Err(_) => panic!("building panicked"),
        Ok(Ok(_)) => panic!("accepted a configuration with six errors"),
        Ok(Err(ConfigErrors(errs))) => errs,
    };
    let paths: Vec<&str> = errs.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "topology.k",
            "router.vcs",
            "router.buffers",
            "router.crossbar_scheduler.weights",
            "traffic[0].load",
            "traffic[0].pattern.nodes[0]"
        ],
        "{}",
        show(&errs)
    );
}
