//! Every key of the configuration that names a file goes through the one resolver
//! (`config/files.rs`): each is listed here with a configuration that sets it, the list is
//! checked against the configuration's source (a new key of type `FilePath` fails this test
//! until it is added), and each is tried against the resolver's rules: confined names stay
//! inside the root, devices are never read. And no other engine code opens a file.

use qosnet_sim::config::{FileScope, Files};
use qosnet_sim::{Config, ConfigErrors};
use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// (the key as errors name it, a configuration naming `{F}` there, the `FilePath`
/// declarations of `config/` it covers).
fn keys() -> Vec<(&'static str, String, usize)> {
    let mesh = "[topology]\nkind = \"mesh\"\nk = 4\nn = 2\n";
    let marking = "[router]\nmarking = { kind = \"iba_cc\", threshold = 8 }\n";
    vec![
        ("topology.file", "[topology]\nkind = \"ib_fabric\"\nfile = \"{F}\"\n[[traffic]]\nload = 0.1\n".into(), 1),
        ("topology.file", "[topology]\nkind = \"anynet\"\nfile = \"{F}\"\n[[traffic]]\nload = 0.1\n".into(), 1),
        (
            "topology.routes",
            "[topology]\nkind = \"ib_fabric\"\nfile = \"report.txt\"\nroutes = \"{F}\"\n[[traffic]]\nload = 0.1\n".into(),
            1,
        ),
        ("traffic[0].pattern.file", format!("{mesh}[[traffic]]\nload = 0.1\npattern = {{ kind = \"matrix\", file = \"{{F}}\" }}\n"), 1),
        ("traffic[0].pattern.file", format!("{mesh}[[traffic]]\nload = 0.1\npattern = {{ kind = \"permutation\", file = \"{{F}}\" }}\n"), 1),
        (
            "traffic[0].process.traces[0]",
            format!("{mesh}[[traffic]]\nclass = \"real_time\"\nload = 0.1\nprocess = {{ kind = \"video\", traces = [\"{{F}}\"] }}\n"),
            1,
        ),
        (
            "endpoint.agent.cct.path",
            format!(
                "{mesh}[[traffic]]\nload = 0.1\n{marking}[endpoint]\nagent = {{ kind = \"iba_cc\", ccti_increase = 1, \
                 ccti_timer = \"20 us\", cct = {{ kind = \"file\", path = \"{{F}}\", unit = 1 }} }}\n"
            ),
            1,
        ),
    ]
}

/// The non-test part of a source file (before its `#[cfg(test)]` module).
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    text.split("#[cfg(test)]").next().unwrap().to_string()
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_file_key_is_listed() {
    let mut files = Vec::new();
    sources(&Path::new(SRC).join("config"), &mut files);
    let declared: usize = files
        .iter()
        .filter(|p| !p.ends_with("files.rs"))
        .map(|p| code(p).lines().filter(|l| l.contains("FilePath") && l.trim_end().ends_with(',')).count())
        .sum();
    let listed: usize = keys().iter().map(|k| k.2).sum();
    assert_eq!(
        declared, listed,
        "config/ declares {declared} keys of type FilePath, this test lists {listed}: add the new key to \
         `keys()` and to `Config::named_files`"
    );
}

#[test]
fn every_file_key_is_named_and_confined() {
    let root = std::env::temp_dir().join(format!("qosnet_file_keys_{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let ok = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/ib-topologies/ibsim-net-example.net");
    std::fs::copy(&ok, root.join("ok.net")).unwrap();
    let report = "../../data/ib-topologies/netloc-avakas/ib-subnet-fe80_0000_0000_0000.txt";
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join(report), root.join("report.txt")).unwrap();
    for (key, template, _) in keys() {
        let text = |f: &str| template.replace("{F}", f);
        // named, with its key
        let cfg = Config::from_toml_str(&text("x")).unwrap();
        let named: Vec<String> = cfg.named_files().into_iter().map(|n| n.field).collect();
        assert!(named.iter().any(|n| n == key), "{key}: named_files gives {named:?}");
        // confined: an absolute name, or one leading up, is refused before any reading
        for outside in ["/etc/passwd", "../../etc/passwd", "/proc/self/environ"] {
            let mut cfg = Config::from_toml_str(&text(outside)).unwrap();
            cfg.base_dir = Some(root.clone());
            cfg.file_scope = FileScope::Confined;
            let Err(ConfigErrors(errs)) = qosnet_sim::build::validate(&cfg) else {
                panic!("{key} = {outside:?}: accepted in the confined scope")
            };
            let hit = errs.iter().find(|e| e.path == key).unwrap_or_else(|| panic!("{key}: {errs:?}"));
            assert!(
                hit.message.contains("inside the service's cluster directory"),
                "{key} = {outside:?}: {}",
                hit.message
            );
            assert!(!errs.iter().any(|e| e.message.contains("root:")), "{key}: quoted /etc/passwd: {errs:?}");
        }
        // a device is never read, in either scope
        let mut cfg = Config::from_toml_str(&text("/dev/zero")).unwrap();
        cfg.base_dir = Some(root.clone());
        let Err(ConfigErrors(errs)) = qosnet_sim::build::validate(&cfg) else { panic!("{key}: /dev/zero") };
        let hit = errs.iter().find(|e| e.path == key).unwrap_or_else(|| panic!("{key}: {errs:?}"));
        let want = if key == "topology.routes" { "not a directory" } else { "not a regular file" };
        assert!(hit.message.contains(want), "{key} = /dev/zero: {}", hit.message);
        // and the resolver sizes it as it would read it
        let mut cfg = Config::from_toml_str(&text("ok.net")).unwrap();
        cfg.base_dir = Some(root.clone());
        let files = Files::confined(&root);
        for n in cfg.named_files().iter().filter(|n| n.field == key && !n.directory) {
            assert_eq!(files.size(n).unwrap(), std::fs::metadata(&ok).unwrap().len(), "{key}");
        }
    }
    std::fs::remove_dir_all(&root).ok();
}

#[test]
fn no_engine_code_but_the_resolver_opens_a_file() {
    // (the host's own memory limits are read by the memory estimate, and the configuration
    // file itself by `Config::from_file`: neither is a file a configuration names)
    let allowed = ["config/files.rs", "build/validate/memory.rs"];
    let allowed_lines = [("config/mod.rs", "std::fs::read_to_string(path)")];
    let mut files = Vec::new();
    sources(Path::new(SRC), &mut files);
    let opens = ["fs::read", "File::open", "OpenOptions"];
    let mut found = Vec::new();
    for p in files {
        let rel = p.strip_prefix(SRC).unwrap().to_string_lossy().replace('\\', "/");
        if allowed.contains(&rel.as_str()) {
            continue;
        }
        for (i, l) in code(&p).lines().enumerate() {
            let excused = allowed_lines.iter().any(|(f, text)| *f == rel && l.contains(text));
            if opens.iter().any(|o| l.contains(o)) && !l.trim_start().starts_with("//") && !excused {
                found.push(format!("{rel}:{}: {}", i + 1, l.trim()));
            }
        }
    }
    assert!(found.is_empty(), "files opened outside config/files.rs:\n{}", found.join("\n"));
}
