//! The memory estimate (`Config::estimate_memory`, checked by `validate`) against what runs
//! really take: each configuration is built and run for a few thousand cycles in a child
//! process of its own (this test binary, re-run with `QOSNET_MEMORY_CHILD` set), whose
//! growth in peak resident memory (VmHWM, after less before) must stay under the estimate.
//!
//! The small configurations run in every `cargo test`; `QOSNET_MEMORY_LARGE=1` adds the
//! large ones (a 128x128 mesh, deep buffers; about 2 GB and a minute).

use qosnet_sim::{Config, Simulation};
use std::process::Command;

/// VmHWM of this process, bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

const MESH: &str = "[simulation]\nwarmup = 1000\nmeasure = 4000\ndrain_limit = 20000\n";

fn configs(large: bool) -> Vec<(&'static str, String)> {
    let mut v = vec![
        ("8x8 mesh, load 0.3", format!("{MESH}[topology]\nkind = \"mesh\"\nk = 8\nn = 2\n[[traffic]]\nload = 0.3\n")),
        (
            "8x8 mesh, saturated",
            format!("{MESH}[topology]\nkind = \"mesh\"\nk = 8\nn = 2\n[[traffic]]\nload = 0.9\nmessage_flits = 4\npacket_flits = 4\n"),
        ),
        (
            "16x16 torus, VirtualClock, via NIC",
            format!("{MESH}[topology]\nkind = \"torus\"\nk = 16\nn = 2\n[router]\nkind = \"non_preemptive\"\n[endpoint]\nmodel = \"via\"\n[[traffic]]\nload = 0.2\n"),
        ),
        (
            "16x16 torus, VirtualClock, via NIC, 3 threads",
            format!("{}[topology]\nkind = \"torus\"\nk = 16\nn = 2\n[router]\nkind = \"non_preemptive\"\n[endpoint]\nmodel = \"via\"\n[[traffic]]\nload = 0.2\n", MESH.replace("[simulation]\n", "[simulation]\nthreads = 3\n")),
        ),
        (
            "4-ary 4-tree, preemptive",
            format!("{MESH}[topology]\nkind = \"fat_tree\"\nk = 4\nn = 4\n[router]\nkind = \"preemptive\"\n[[traffic]]\nload = 0.2\n"),
        ),
        (
            "8x8 mesh, output_buffer 4096",
            format!("{MESH}[topology]\nkind = \"mesh\"\nk = 8\nn = 2\n[router]\noutput_buffer = 4096\n[[traffic]]\nload = 0.3\n"),
        ),
    ];
    if large {
        v.push((
            "128x128 mesh",
            format!("{MESH}[topology]\nkind = \"mesh\"\nk = 128\nn = 2\n[[traffic]]\nload = 0.05\n"),
        ));
        v.push((
            "4096-node ring",
            format!("{MESH}[topology]\nkind = \"torus\"\nk = 4096\nn = 1\n[[traffic]]\nload = 0.05\n"),
        ));
        v.push((
            "8x8 mesh, output_buffer 65533, saturated",
            format!("{MESH}[topology]\nkind = \"mesh\"\nk = 8\nn = 2\n[router]\noutput_buffer = 65533\n[[traffic]]\nload = 0.9\n"),
        ));
    }
    v
}

/// In the child: build and run `QOSNET_MEMORY_CHILD`'s configuration, print the growth of
/// the peak resident memory.
#[test]
fn child() {
    let Ok(text) = std::env::var("QOSNET_MEMORY_CHILD") else { return };
    let before = peak_rss();
    let mut sim = Simulation::from_toml(&text, None).expect("a valid configuration");
    sim.run().expect("the run completes");
    println!("QOSNET_PEAK_GROWTH={}", peak_rss().saturating_sub(before));
}

#[test]
fn the_estimate_is_above_what_runs_take() {
    if std::env::var("QOSNET_MEMORY_CHILD").is_ok() || !cfg!(target_os = "linux") {
        return;
    }
    let large = std::env::var("QOSNET_MEMORY_LARGE").is_ok();
    let mut rows = Vec::new();
    for (name, text) in configs(large) {
        let estimate = Config::from_toml_str(&text).unwrap().estimate_memory().unwrap().total;
        // The test's name inside the suite binary: its module path without the crate's name.
        let child = format!("{}::child", module_path!().split_once("::").unwrap().1);
        let out = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &child, "--nocapture", "--test-threads=1"])
            .env("QOSNET_MEMORY_CHILD", &text)
            .output()
            .expect("run the child");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let growth: u64 = stdout
            .lines()
            .find_map(|l| l.split("QOSNET_PEAK_GROWTH=").nth(1))
            .unwrap_or_else(|| {
                panic!("{name}: the child said\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr))
            })
            .parse()
            .unwrap();
        rows.push(format!(
            "{name:45} estimate {:>12} measured {:>12} ({:.2}x)",
            estimate,
            growth,
            estimate as f64 / growth.max(1) as f64
        ));
        assert!(
            growth <= estimate,
            "{name}: the run grew by {growth} bytes, over its estimate of {estimate}"
        );
    }
    println!("{}", rows.join("\n"));
}
