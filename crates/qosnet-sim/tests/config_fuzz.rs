//! Configuration fuzzing (issue 21): configurations generated over the schema, and the shipped
//! configurations (`configs/**/*.toml`) mutated, must never make the engine panic or hang.
//!
//! Properties, for every case:
//! - parsing (TOML, and JSON when the tree has no NaN or infinity) and `validate` return a
//!   configuration or errors, never panic;
//! - a configuration that validates, and whose memory estimate is small, builds and runs for
//!   a few thousand cycles to completion or to an error, never a panic; a watchdog thread
//!   ends the process, naming the case, if one case takes longer than a minute.
//!
//! `cargo test` runs 96 generated and 96 mutated cases (well under a second);
//! `QOSNET_FUZZ_CASES=N cargo test -p qosnet-sim --test config_fuzz` runs N of each (30,000
//! take three minutes). A failure is shrunk and printed with its configuration as TOML.
//! `QOSNET_FUZZ_SHOW=1` prints each case's first error, or that it validated (about a third
//! of the generated cases do), to see what the generator reaches.

use proptest::prelude::*;
use proptest::sample::Index;
use qosnet_sim::config::value::{self, Value};
use qosnet_sim::{Config, Simulation};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::Duration;

fn cases() -> u32 {
    std::env::var("QOSNET_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(96)
}

// ---------------------------------------------------------------- writing trees as text

fn string(s: &str) -> String {
    // JSON's escapes are TOML's basic string escapes (\uXXXX for control characters).
    serde_json::to_string(s).unwrap()
}

fn float_toml(f: f64) -> String {
    if f.is_nan() {
        "nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{f:?}")
    }
}

/// The tree as TOML, every table inline (valid for any tree without nulls).
fn to_toml(v: &Value) -> String {
    match v {
        Value::Table(t) => t.iter().map(|(k, v)| format!("{} = {}\n", string(k), inline(v))).collect(),
        other => format!("value = {}\n", inline(other)),
    }
}

fn inline(v: &Value) -> String {
    match v {
        Value::Null => "\"null\"".into(),
        Value::Bool(b) => b.to_string(),
        Value::Integer(i) => (*i).clamp(i64::MIN as i128, i64::MAX as i128).to_string(),
        Value::Float(f) => float_toml(*f),
        Value::String(s) => string(s),
        Value::Array(a) => format!("[{}]", a.iter().map(inline).collect::<Vec<_>>().join(", ")),
        Value::Table(t) => format!(
            "{{ {} }}",
            t.iter().map(|(k, v)| format!("{} = {}", string(k), inline(v))).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// The tree as JSON, or None if it holds a number JSON cannot write.
fn to_json(v: &Value) -> Option<String> {
    Some(match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) if f.is_finite() => format!("{f:?}"),
        Value::Float(_) => return None,
        Value::String(s) => string(s),
        Value::Array(a) => format!("[{}]", a.iter().map(to_json).collect::<Option<Vec<_>>>()?.join(",")),
        Value::Table(t) => format!(
            "{{{}}}",
            t.iter()
                .map(|(k, v)| Some(format!("{}:{}", string(k), to_json(v)?)))
                .collect::<Option<Vec<_>>>()?
                .join(",")
        ),
    })
}

// ---------------------------------------------------------------- the property

/// A case taking longer than this is a hang.
const HANG: Duration = Duration::from_secs(60);

/// Cycles a valid configuration is run for.
const RUN_CYCLES: u64 = 3000;

/// Runs are skipped above this estimate (the fuzzer looks for panics, not big networks).
const RUN_MEMORY: u64 = 256 << 20;

/// The watchdog: each case sends its text before it starts; no message for `HANG` ends
/// the process with that text.
fn watchdog() -> &'static std::sync::Mutex<mpsc::Sender<String>> {
    static TX: OnceLock<std::sync::Mutex<mpsc::Sender<String>>> = OnceLock::new();
    TX.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<String>();
        std::thread::spawn(move || {
            let mut current = String::new();
            loop {
                match rx.recv_timeout(HANG) {
                    Ok(case) => current = case,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        eprintln!("config_fuzz: a case ran for more than {HANG:?}:\n{current}");
                        std::process::exit(101);
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => return,
                }
            }
        });
        std::sync::Mutex::new(tx)
    })
}

/// Parse, validate and (if valid and small) run `tree`; Err names the stage that panicked.
fn check(tree: &Value, base_dir: Option<&Path>) -> Result<(), String> {
    let toml = to_toml(tree);
    let _ = watchdog().lock().unwrap().send(toml.clone());
    let stage = |name: &str, f: &mut dyn FnMut()| {
        catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            format!("{name} panicked: {what}\n--- configuration ---\n{toml}")
        })
    };
    if let Some(json) = to_json(tree) {
        stage("parsing JSON", &mut || drop(Config::from_json_str(&json)))?;
    }
    let mut parsed = None;
    stage("parsing TOML", &mut || parsed = Some(Config::from_toml_str(&toml)))?;
    if std::env::var("QOSNET_FUZZ_SHOW").is_ok() {
        match &parsed {
            Some(Err(e)) => eprintln!("PARSE {}", e.0[0]),
            _ => eprintln!("PARSED"),
        }
    }
    let Some(Ok(mut cfg)) = parsed else { return Ok(()) };
    cfg.base_dir = base_dir.map(Path::to_path_buf);
    let mut valid = None;
    stage("validate", &mut || valid = Some(qosnet_sim::build::validate(&cfg).map(|v| v.memory.total)))?;
    if std::env::var("QOSNET_FUZZ_SHOW").is_ok() {
        match &valid {
            Some(Err(e)) => eprintln!("INVALID {}", e.0[0]),
            _ => eprintln!("VALID"),
        }
    }
    match valid {
        Some(Ok(total)) if total <= RUN_MEMORY => {}
        _ => return Ok(()),
    }
    stage("the run", &mut || {
        let Ok(mut sim) = Simulation::new(cfg.clone()) else { panic!("validated, then refused to build") };
        let _ = sim.advance(RUN_CYCLES);
    })
}

// ---------------------------------------------------------------- values

fn t(entries: Vec<(&str, Value)>) -> Value {
    Value::Table(entries.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn s(x: &str) -> Value {
    Value::String(x.to_string())
}

fn i(x: i128) -> Value {
    Value::Integer(x)
}

/// Any value at all, leaning to the edges and to the schema's words.
fn junk() -> impl Strategy<Value = Value> {
    let words = prop::sample::select(vec![
        "",
        "all",
        "auto",
        "none",
        "unlimited",
        "kind",
        "mesh",
        "torus",
        "star",
        "fat_tree",
        "cmesh",
        "dor_express",
        "ib_fabric",
        "uniform",
        "hot_spot",
        "fixed",
        "transpose",
        "matrix",
        "permutation",
        "poisson",
        "periodic",
        "on_off",
        "video",
        "fcfs",
        "wrr",
        "vl_arbitration",
        "virtual_clock",
        "fair_queueing",
        "round_robin",
        "preemptive",
        "real_time",
        "control",
        "best_effort",
        "via",
        "hca",
        "rate_control",
        "window",
        "1.6 Gb/s",
        "0 b/s",
        "1e30 b/s",
        "-3 Mb/s",
        "10 us",
        "1e30 s",
        "0 s",
        "-1 cycles",
        "2.5 cycles",
        "33.3 ms",
        "4 GB",
        "1 B",
        "nan",
        "1e400 s",
        "x\u{0}y",
    ]);
    let leaf = prop_oneof![
        any::<bool>().prop_map(Value::Bool),
        prop::sample::select(vec![
            0i128,
            1,
            2,
            3,
            -1,
            -4,
            7,
            16,
            33,
            64,
            65,
            255,
            256,
            65533,
            65535,
            65536,
            1 << 20,
            u32::MAX as i128,
            u32::MAX as i128 + 1,
            i64::MAX as i128,
            i64::MIN as i128,
        ])
        .prop_map(Value::Integer),
        (-100i128..100).prop_map(Value::Integer),
        prop::sample::select(vec![0.0f64, -0.0, 0.5, 1.0, 1.5, -0.1, 1e-300, 1e30, f64::NAN, f64::INFINITY])
            .prop_map(Value::Float),
        words.prop_map(s),
    ];
    leaf.prop_recursive(2, 8, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{1,8}", inner), 0..3).prop_map(Value::Table),
        ]
    })
}

fn duration() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0i128..3000).prop_map(i),
        prop::sample::select(vec!["10 us", "1 ms", "5000 cycles", "80 ns"]).prop_map(s)
    ]
}

// ---------------------------------------------------------------- the schema generator

fn scheduler(vcs: i128) -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(vec!["fcfs", "round_robin", "fair_queueing", "virtual_clock"]).prop_map(s),
        prop::sample::select(vec![0i128, 4, 16])
            .prop_map(|b| t(vec![("kind", s("virtual_clock")), ("counter_bits", i(b))])),
        prop::collection::vec(1i128..4, 0..=vcs as usize).prop_map(|w| t(vec![
            ("kind", s("wrr")),
            ("weights", Value::Array(w.into_iter().map(i).collect()))
        ])),
        (
            prop::collection::vec((0..vcs, 0i128..8), 0..4),
            prop::collection::vec((0..vcs, 0i128..8), 1..4),
            0i128..=255
        )
            .prop_map(|(h, l, lim)| {
                let entries = |e: Vec<(i128, i128)>| {
                    Value::Array(e.into_iter().map(|(a, b)| Value::Array(vec![i(a), i(b)])).collect())
                };
                t(vec![
                    ("kind", s("vl_arbitration")),
                    ("high", entries(h)),
                    ("low", entries(l)),
                    ("limit_of_high_priority", i(lim)),
                ])
            }),
    ]
}

fn topology() -> impl Strategy<Value = Value> {
    prop_oneof![
        (2i128..10).prop_map(|p| t(vec![("kind", s("star")), ("ports", i(p))])),
        (prop::sample::select(vec!["mesh", "torus"]), 2i128..6, 1i128..3).prop_map(|(kind, k, n)| t(vec![
            ("kind", s(kind)),
            ("k", i(k)),
            ("n", i(n))
        ])),
        prop::collection::vec(2i128..5, 1..4).prop_map(|d| t(vec![
            ("kind", s("mesh")),
            ("dims", Value::Array(d.into_iter().map(i).collect()))
        ])),
        (2i128..5, 1i128..4).prop_map(|(k, n)| t(vec![("kind", s("fat_tree")), ("k", i(k)), ("n", i(n))])),
        (1i128..6, 3i128..6, 0i128..6).prop_map(|(k, c, latency)| t(vec![
            ("kind", s("cmesh")),
            ("k", i(k)),
            ("c", i(c)),
            ("express_latency", i(latency))
        ])),
    ]
}

fn router() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec!["traditional", "non_preemptive", "preemptive"]),
        1i128..17,
        (1i128..6, 1i128..6, 1i128..4, 1i128..3, 1i128..3),
        (0i128..3, 1i128..3, 0i128..2),
        any::<bool>(),
        prop::sample::select(vec!["lowest_free", "round_robin"]),
        (1i128..4, any::<bool>()),
    )
        .prop_flat_map(
            |(kind, vcs, (ib, ob, link, credit, speedup), (sync, xbar, out), auto, sel, (extra, accel))| {
                let vcs = if kind == "preemptive" { vcs.min(16) } else { vcs };
                (scheduler(vcs), scheduler(vcs), 1i128..4).prop_map(move |(xs, os, block)| {
                    let mut r = vec![
                        ("kind", s(kind)),
                        ("vcs", i(vcs)),
                        ("input_buffer", i(ib)),
                        ("output_buffer", i(ob)),
                        ("link_latency", i(link)),
                        ("credit_latency", i(credit)),
                        ("speedup", i(speedup)),
                        (
                            "pipeline",
                            t(vec![
                                ("sync", i(sync)),
                                ("routing", i(1)),
                                ("vc_alloc", i(1)),
                                ("crossbar", i(xbar)),
                                ("output", i(out)),
                            ]),
                        ),
                        ("crossbar_scheduler", xs),
                        ("output_scheduler", os),
                        ("block_size", i(block)),
                        ("vc_selection", s(sel)),
                        (
                            "preemption",
                            t(vec![("extra_buffer", i(extra)), ("acceleration", Value::Bool(accel))]),
                        ),
                    ];
                    if !auto {
                        r.push((
                            "vc_classes",
                            t(vec![
                                ("control", i(1)),
                                ("real_time", i((vcs - 1) / 2)),
                                ("best_effort", i(vcs - 1 - (vcs - 1) / 2)),
                            ]),
                        ));
                    }
                    t(r)
                })
            },
        )
}

fn endpoint() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec!["ideal", "ideal", "via", "hca"]),
        prop::sample::select(vec![
            "fifo",
            "per_class",
            "round_robin",
            "interleaved",
            "rate_control",
            "per_vc",
        ]),
        (
            any::<bool>(),
            prop::sample::select(vec!["per_vc", "shared"]),
            prop::sample::select(vec!["flit", "message"]),
        ),
        1i128..4,
        prop::option::of(scheduler(4)),
        prop::option::of(1i128..5),
    )
        .prop_map(|(model, queues, (skip, buffer, injection), concurrent, sched, window)| {
            let nic = model != "ideal";
            let mut e = vec![
                ("model", s(model)),
                ("skip_blocked", Value::Bool(skip)),
                ("concurrent_packets", i(concurrent)),
            ];
            // (per-VC queues: without an agent; with a NIC, on a per-VC buffer)
            let per_vc = queues == "per_vc" && window.is_none() && (!nic || buffer == "per_vc");
            if per_vc || (queues != "per_vc" && (nic || matches!(queues, "fifo" | "per_class"))) {
                e.push(("queues", s(queues)));
            }
            if nic {
                e.push(("buffer", s(buffer)));
                e.push(("injection", s(injection)));
                e.push(("dma", t(vec![("setup", s("0.2 us")), ("bandwidth", s("528 MB/s"))])));
            }
            if let Some(sc) = sched {
                e.push(("scheduler", sc));
            }
            if let Some(w) = window {
                e.push(("agent", t(vec![("kind", s("window")), ("messages", i(w))])));
            }
            t(e)
        })
}

fn traffic_entry() -> impl Strategy<Value = Value> {
    let process = prop_oneof![
        prop::sample::select(vec!["poisson", "bernoulli"]).prop_map(s),
        duration().prop_map(|p| t(vec![("kind", s("periodic")), ("period", p)])),
        (duration(), duration(), any::<bool>()).prop_map(|(on, off, e)| t(vec![
            ("kind", s("on_off")),
            ("on", on),
            ("off", off),
            ("exponential", Value::Bool(e))
        ])),
        (duration(), duration()).prop_map(|(on, off)| t(vec![
            ("kind", s("markov_on_off")),
            ("on", on),
            ("off", off)
        ])),
        (1i128..3).prop_map(|n| t(vec![("kind", s("video")), ("mean_rate", s("4 Mb/s")), ("streams", i(n))])),
    ];
    let pattern = prop_oneof![
        prop::sample::select(vec![
            "uniform",
            "transpose",
            "bit_complement",
            "bit_reversal",
            "perfect_shuffle",
            "butterfly",
            "tornado",
            "neighbour",
            "diagonal",
            "asymmetric",
            "taper64",
            "next_group"
        ])
        .prop_map(s),
        (0i128..3).prop_map(|n| t(vec![("kind", s("uniform_except")), ("nodes", Value::Array(vec![i(n)]))])),
        (0i128..2).prop_map(|d| t(vec![("kind", s("fixed")), ("destination", i(d))])),
        (0i128..2).prop_map(|n| t(vec![
            ("kind", s("hot_spot")),
            ("fraction", Value::Float(0.3)),
            ("nodes", Value::Array(vec![i(n)]))
        ])),
    ];
    (
        process,
        prop::sample::select(vec!["best_effort", "real_time", "control"]),
        prop_oneof![
            (1u32..100).prop_map(|l| ("load", Value::Float(l as f64 / 100.0))),
            Just(("rate", s("100 Mb/s")))
        ],
        (1i128..20, 1i128..20),
        pattern,
        prop::option::of(prop::collection::vec(0i128..2, 1..2)),
        prop::option::weighted(
            0.2,
            prop_oneof![Just(("idt", Value::Float(2.0))), Just(("reserve", s("50 Mb/s")))],
        ),
    )
        .prop_map(|(process, class, (lk, lv), (mf, pf), pattern, sources, reserve)| {
            // (a periodic source's rate is its period; a video source's, its streams)
            let own_rate =
                matches!(&process, Value::Table(t) if t[0].1 == s("periodic") || t[0].1 == s("video"));
            let mut e = vec![
                ("process", process),
                ("class", s(class)),
                ("message_flits", i(mf)),
                ("packet_flits", i(pf)),
            ];
            if !own_rate {
                e.push((lk, lv));
            }
            match reserve {
                // a reserved flow: one destination per source, from node 0
                Some((k, v)) => {
                    e.push(("pattern", t(vec![("kind", s("fixed")), ("destination", i(1))])));
                    e.push(("sources", Value::Array(vec![i(0)])));
                    e.push((k, v));
                }
                None => {
                    e.push(("pattern", pattern));
                    if let Some(src) = sources {
                        e.push(("sources", Value::Array(src.into_iter().map(i).collect())));
                    }
                }
            }
            t(e)
        })
}

fn config() -> impl Strategy<Value = Value> {
    (
        (0i128..1000, 0i128..500, 1i128..1500, 0i128..3000, 200i128..5000, any::<bool>()),
        topology(),
        router(),
        prop::sample::select(vec![
            "auto",
            "auto",
            "auto",
            "auto",
            "dor",
            "dor_dateline",
            "d_mod_k",
            "direct",
        ]),
        endpoint(),
        prop::collection::vec(traffic_entry(), 1..3),
        prop::option::of((1u32..100, prop::collection::vec((duration(), 0u32..5, 0u32..5), 1..4))),
    )
        .prop_map(
            |(
                (seed, warmup, measure, drain, watchdog, record),
                topo,
                router,
                routing,
                mut endpoint,
                traffic,
                mix,
            )| {
                let reserved = traffic.iter().any(
                    |e| matches!(e, Value::Table(t) if t.iter().any(|(k, _)| k == "idt" || k == "reserve")),
                );
                if reserved {
                    // reserved flows need NIC rate control
                    if let Value::Table(e) = &mut endpoint {
                        e.retain(|(k, _)| {
                            !matches!(k.as_str(), "model" | "queues" | "buffer" | "injection" | "dma")
                        });
                        e.push(("model".into(), s("via")));
                        e.push(("queues".into(), s("rate_control")));
                    }
                }
                let mut c = vec![
                    (
                        "simulation",
                        t(vec![
                            ("seed", i(seed)),
                            ("warmup", i(warmup)),
                            ("measure", i(measure)),
                            ("drain_limit", i(drain)),
                            ("watchdog", i(watchdog)),
                            ("record_messages", Value::Bool(record)),
                        ]),
                    ),
                    ("topology", topo),
                    ("router", router),
                    ("routing", t(vec![("kind", s(routing))])),
                    ("endpoint", endpoint),
                    ("traffic", Value::Array(traffic)),
                ];
                if let Some((load, phases)) = mix {
                    let phases = phases
                        .into_iter()
                        .map(|(d, rt, be)| {
                            t(vec![
                                ("duration", d),
                                ("real_time", i(rt as i128)),
                                ("best_effort", i(be as i128)),
                            ])
                        })
                        .collect();
                    c.push((
                        "mix",
                        t(vec![
                            ("load", Value::Float(load as f64 / 100.0)),
                            ("phases", Value::Array(phases)),
                        ]),
                    ));
                }
                t(c)
            },
        )
}

// ---------------------------------------------------------------- mutation

/// Every node's path in the tree (as indices into each table or list), the root first.
fn paths(v: &Value, here: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    out.push(here.clone());
    let children: Vec<&Value> = match v {
        Value::Table(t) => t.iter().map(|(_, v)| v).collect(),
        Value::Array(a) => a.iter().collect(),
        _ => return,
    };
    for (i, c) in children.into_iter().enumerate() {
        here.push(i);
        paths(c, here, out);
        here.pop();
    }
}

fn at<'a>(v: &'a mut Value, path: &[usize]) -> &'a mut Value {
    match (v, path.split_first()) {
        (v, None) => v,
        (Value::Table(t), Some((&i, rest))) => at(&mut t[i].1, rest),
        (Value::Array(a), Some((&i, rest))) => at(&mut a[i], rest),
        _ => unreachable!("paths() gave it"),
    }
}

/// One mutation: replace a node with junk, remove it from its table or list, add an
/// unknown key beside it, or repeat it in its list.
#[derive(Clone, Debug)]
struct Mutation {
    node: Index,
    op: u8,
    junk: Value,
}

fn mutation() -> impl Strategy<Value = Mutation> {
    (any::<Index>(), 0u8..4, junk()).prop_map(|(node, op, junk)| Mutation { node, op, junk })
}

fn mutate(tree: &mut Value, m: &Mutation) {
    let mut all = Vec::new();
    paths(tree, &mut Vec::new(), &mut all);
    let path = all[m.node.index(all.len())].clone();
    if path.is_empty() {
        if m.op == 0 {
            *tree = m.junk.clone();
        }
        return;
    }
    let (last, parent) = path.split_last().unwrap();
    match (m.op, at(tree, parent)) {
        (1, Value::Table(t)) => drop(t.remove(*last)),
        (1, Value::Array(a)) => drop(a.remove(*last)),
        (2, Value::Table(t)) => t.push(("unknown_key".into(), m.junk.clone())),
        (3, Value::Array(a)) => {
            let copy = a[*last].clone();
            a.push(copy);
        }
        _ => *at(tree, &path) = m.junk.clone(),
    }
}

/// The shipped configurations, as trees with their directories.
fn shipped() -> &'static Vec<(PathBuf, Value)> {
    static ALL: OnceLock<Vec<(PathBuf, Value)>> = OnceLock::new();
    ALL.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
        let mut files = Vec::new();
        let mut dirs = vec![root];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "toml")
                    // (the crosscheck's list of cases, not a simulation's configuration)
                    && !p.ends_with("validation/cases.toml")
                {
                    files.push(p);
                }
            }
        }
        files.sort();
        files
            .into_iter()
            .filter_map(|p| {
                let text = std::fs::read_to_string(&p).ok()?;
                // (a simulation's configuration has a topology; other TOML under configs/,
                // such as the cross-check's cases, is not one)
                if !text.lines().any(|l| l.trim() == "[topology]") {
                    return None;
                }
                let tree = value::from_toml(&text).ok()?;
                // short runs: the fuzzer looks for panics
                Some((p.parent()?.to_path_buf(), tree))
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    /// Configurations over the schema, mostly valid, some mutated.
    #[test]
    fn generated_configurations_never_panic(mut tree in config(), ms in prop::collection::vec(mutation(), 0..3), mutated in prop::bool::weighted(0.3)) {
        let ms = if mutated { ms } else { Vec::new() };
        for m in &ms {
            mutate(&mut tree, m);
        }
        if let Err(e) = check(&tree, None) {
            prop_assert!(false, "{}", e);
        }
    }

    /// The shipped configurations with one to three mutations each.
    #[test]
    fn mutated_shipped_configurations_never_panic(which in any::<Index>(), ms in prop::collection::vec(mutation(), 1..4)) {
        let all = shipped();
        prop_assume!(!all.is_empty());
        let (dir, tree) = &all[which.index(all.len())];
        let mut tree = tree.clone();
        for m in &ms {
            mutate(&mut tree, m);
        }
        if let Err(e) = check(&tree, Some(dir)) {
            prop_assert!(false, "{}", e);
        }
    }
}

/// Every shipped configuration parses, and its resolved form parses back to the same
/// resolved form (what a run directory's config.toml holds can be run again).
#[test]
fn shipped_configurations_round_trip() {
    assert!(shipped().len() >= 15, "found the shipped configurations");
    for (dir, tree) in shipped() {
        let cfg = Config::from_toml_str(&to_toml(tree)).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let again =
            Config::from_toml_str(&cfg.to_toml()).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        assert_eq!(cfg.to_toml(), again.to_toml());
    }
}
