//! The files a configuration names, all read through one resolver.
//!
//! A configuration may name files: a real fabric's report and its forwarding tables
//! (`topology.file`, `topology.routes`, a directory), pattern files
//! (`traffic[i].pattern.file`), video traces (`traffic[i].process.traces[j]`) and an IBA CC
//! table (`endpoint.agent.cct.path`). Each such key has the type [`FilePath`], whose name
//! nothing but [`Files`] turns into bytes, so a key added later cannot skip the checks
//! (`tests/suite/file_keys.rs` enumerates them and tries each against the resolver).
//!
//! Two scopes:
//! - **local** (the operator's own configuration: CLI, Python API): a relative name is taken
//!   from the configuration's directory (or the working directory), an absolute one as it is;
//! - **confined** (a configuration uploaded to the service, `PUT /v1/cluster`): names must be
//!   relative, without `..`, and still inside the root once symbolic links are followed; an
//!   upload that names `/proc/self/environ` or a link to `/etc` is refused before anything is
//!   opened.
//!
//! In both: regular files only (a device such as `/dev/zero`, a FIFO or a directory where a
//! file is expected is refused without reading, and opening never blocks), at most
//! [`MAX_FILE_BYTES`] each, UTF-8 text. Errors name the field and the file, never its
//! contents; in the confined scope a parser's message about the contents (which may quote a
//! line) is cut to the file's name and line number ([`Files::about_contents`]).

use crate::error::{clip, ConfigError};
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// Largest file a configuration may name, bytes (the largest real inputs: an
/// `ibnetdiscover` report of a few thousand nodes, a video trace of hours, are a few MB).
pub const MAX_FILE_BYTES: u64 = 64 << 20;
/// Most entries a named directory (`topology.routes`, a forwarding table per switch) may hold.
pub const MAX_DIR_ENTRIES: usize = 65_536;
/// Most bytes read from a named directory's files together.
pub const MAX_DIR_BYTES: u64 = 4 * MAX_FILE_BYTES;

/// A file's name as a configuration writes it. Only [`Files`] reads what it names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct FilePath(PathBuf);

impl FilePath {
    pub fn new(p: impl Into<PathBuf>) -> FilePath {
        FilePath(p.into())
    }

    /// The name as written, for messages (clipped: a name may be a megabyte long).
    pub fn shown(&self) -> String {
        clip(&self.0.to_string_lossy()).into_owned()
    }

    /// The name's extension (a video trace's format is inferred from it).
    pub fn extension(&self) -> Option<&str> {
        self.0.extension().and_then(|e| e.to_str())
    }
}

/// Where the files a configuration names may be read from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FileScope {
    /// Anywhere the process may read; relative names from the base directory.
    #[default]
    Local,
    /// Only inside the base directory (which must then be given).
    Confined,
}

/// A file read: its name as messages show it, and its text.
#[derive(Clone, Debug)]
pub struct FileText {
    pub shown: String,
    pub text: String,
}

/// The one resolver: reads what a [`FilePath`] names under a scope.
#[derive(Clone, Copy, Debug)]
pub struct Files<'a> {
    base: Option<&'a Path>,
    scope: FileScope,
}

impl<'a> Files<'a> {
    /// The operator's own files: relative names from `base` (None: the working directory).
    pub fn local(base: Option<&'a Path>) -> Files<'a> {
        Files { base, scope: FileScope::Local }
    }

    /// Files inside `root` only.
    pub fn confined(root: &'a Path) -> Files<'a> {
        Files { base: Some(root), scope: FileScope::Confined }
    }

    pub fn new(base: Option<&'a Path>, scope: FileScope) -> Files<'a> {
        Files { base, scope }
    }

    pub fn is_confined(&self) -> bool {
        self.scope == FileScope::Confined
    }

    /// The text of the regular file `file` names (field `field`).
    pub fn read(&self, field: &str, file: &FilePath) -> Result<FileText, ConfigError> {
        let shown = file.shown();
        let path = self.resolve(field, file, &shown)?;
        let text = read_regular(&path, MAX_FILE_BYTES)
            .map_err(|why| ConfigError::new(field, format!("{shown}: {why}")))?;
        Ok(FileText { shown, text })
    }

    /// The texts of the regular files in the directory `dir` names, by name; other entries
    /// (subdirectories, devices) are passed over.
    pub fn read_dir(&self, field: &str, dir: &FilePath) -> Result<Vec<FileText>, ConfigError> {
        let shown = dir.shown();
        let path = self.resolve(field, dir, &shown)?;
        let mut out = Vec::new();
        let mut total = 0u64;
        for (entry_shown, target) in self.dir_files(field, &path, &shown)? {
            let text = read_regular(&target, MAX_FILE_BYTES)
                .map_err(|why| ConfigError::new(field, format!("{entry_shown}: {why}")))?;
            total += text.len() as u64;
            if total > MAX_DIR_BYTES {
                return Err(ConfigError::new(
                    field,
                    format!("{shown}: its files hold more than {MAX_DIR_BYTES} bytes together"),
                ));
            }
            out.push(FileText { shown: entry_shown, text });
        }
        Ok(out)
    }

    /// The regular files in the directory at `path` (resolved), by name: (name to show,
    /// where it leads). In the confined scope an entry leading out is refused.
    fn dir_files(
        &self,
        field: &str,
        path: &Path,
        shown: &str,
    ) -> Result<Vec<(String, PathBuf)>, ConfigError> {
        let err = |why: String| ConfigError::new(field, format!("{shown}: {why}"));
        let meta = std::fs::metadata(path).map_err(|e| err(format!("cannot read: {e}")))?;
        if !meta.is_dir() {
            return Err(err("is not a directory".into()));
        }
        let mut entries = Vec::new();
        for e in std::fs::read_dir(path).map_err(|e| err(format!("cannot read the directory: {e}")))? {
            let e = e.map_err(|e| err(format!("cannot read the directory: {e}")))?;
            entries.push(e.path());
            if entries.len() > MAX_DIR_ENTRIES {
                return Err(err(format!("holds more than {MAX_DIR_ENTRIES} entries")));
            }
        }
        entries.sort();
        let root = self.root(field)?;
        let mut out = Vec::new();
        for entry in entries {
            let name = entry.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let entry_shown = format!("{shown}/{}", clip(&name));
            let target = match (root.as_ref(), entry.canonicalize()) {
                (Some(root), Ok(t)) if !t.starts_with(root) => {
                    return Err(ConfigError::new(
                        field,
                        format!("{entry_shown} leads outside the cluster directory"),
                    ))
                }
                (_, Ok(t)) => t,
                (_, Err(_)) => continue, // a dangling link: no file to read
            };
            if std::fs::metadata(&target).is_ok_and(|m| m.is_file()) {
                out.push((entry_shown, target));
            }
        }
        Ok(out)
    }

    /// An error about a file's contents. Locally it stands as it is; in the confined scope a
    /// parser's message may quote the file (issue: an upload's `cct` naming
    /// `/proc/self/environ` came back quoted in the 422), so only the file's name, the line
    /// the message names and what the file should be are kept.
    pub fn about_contents(&self, e: ConfigError, shown: &str, what: &str) -> ConfigError {
        if !self.is_confined() {
            return e;
        }
        let line = line_number(&e.message).map(|n| format!(" line {n}")).unwrap_or_default();
        ConfigError::new(
            e.path,
            format!(
                "{shown}{line}: not a usable {what} (the service does not quote its files; `qosnet \
                 validate` on the file shows the whole message)"
            ),
        )
    }

    /// The root, canonical, in the confined scope.
    fn root(&self, field: &str) -> Result<Option<PathBuf>, ConfigError> {
        if !self.is_confined() {
            return Ok(None);
        }
        let Some(base) = self.base else {
            return Err(ConfigError::new(
                field,
                "names a file, but files may be named only inside a directory the operator offers \
                 (`qosnet serve --cluster-dir DIR`), and none is",
            ));
        };
        base.canonicalize()
            .map(Some)
            .map_err(|e| ConfigError::new(field, format!("the cluster directory cannot be read: {e}")))
    }

    /// Where `file` leads, checked against the scope.
    fn resolve(&self, field: &str, file: &FilePath, shown: &str) -> Result<PathBuf, ConfigError> {
        let p = &file.0;
        if p.as_os_str().is_empty() {
            return Err(ConfigError::new(field, "must name a file, got an empty name"));
        }
        let Some(root) = self.root(field)? else {
            return Ok(match self.base {
                Some(base) if p.is_relative() => base.join(p),
                _ => p.clone(),
            });
        };
        // One answer for every name that does not stay inside, whether what it leads to
        // exists or not, and without the name: an upload learns nothing of the host from it.
        let outside = || ConfigError::new(field, OUTSIDE);
        if !p.components().all(|c| matches!(c, Component::Normal(_) | Component::CurDir)) {
            return Err(outside());
        }
        let full = match root.join(p).canonicalize() {
            Ok(full) => full,
            // (a missing file reached through a link is a link leading out, not a missing file)
            Err(_) if through_link(&root, p) => return Err(outside()),
            Err(_) => {
                return Err(ConfigError::new(
                    field,
                    format!("{shown} does not exist in the cluster directory"),
                ))
            }
        };
        if !full.starts_with(&root) {
            return Err(outside());
        }
        Ok(full)
    }
}

/// A file a configuration names: its key (`traffic[2].pattern.file`), the name, and
/// whether it is a directory.
#[derive(Clone, Debug)]
pub struct NamedFile<'a> {
    pub field: String,
    pub file: &'a FilePath,
    pub directory: bool,
}

impl crate::config::Config {
    /// Every file this configuration names, with its key. Every key of type [`FilePath`]
    /// must be listed here (`tests/suite/file_keys.rs` counts them in the configuration's source).
    pub fn named_files(&self) -> Vec<NamedFile<'_>> {
        use crate::config::{AgentConfig, CctConfig, PatternConfig, Process, TopologyConfig};
        let mut out = Vec::new();
        let mut add = |field: String, file, directory| out.push(NamedFile { field, file, directory });
        match &self.topology {
            TopologyConfig::IbFabric { file, routes, .. } => {
                add("topology.file".into(), file, false);
                if let Some(r) = routes {
                    add("topology.routes".into(), r, true);
                }
            }
            TopologyConfig::Anynet { file } => add("topology.file".into(), file, false),
            _ => {}
        }
        for (i, t) in self.traffic.iter().enumerate() {
            if let PatternConfig::Permutation { file } | PatternConfig::Matrix { file } = &t.pattern {
                add(format!("traffic[{i}].pattern.file"), file, false);
            }
            if let Process::Video { traces, .. } = &t.process {
                for (j, f) in traces.iter().enumerate() {
                    add(format!("traffic[{i}].process.traces[{j}]"), f, false);
                }
            }
        }
        if let Some(AgentConfig::IbaCc { cct: CctConfig::File { path, .. }, .. }) = &self.endpoint.agent {
            add("endpoint.agent.cct.path".into(), path, false);
        }
        out
    }
}

impl Files<'_> {
    /// The bytes `named` holds (a directory: its regular files together), checked against
    /// the scope as a read would be, without reading: what a service's size limit needs
    /// before it lets the engine read anything.
    pub fn size(&self, named: &NamedFile) -> Result<u64, ConfigError> {
        let (field, shown) = (named.field.as_str(), named.file.shown());
        let path = self.resolve(field, named.file, &shown)?;
        let err = |why: String| ConfigError::new(field, format!("{shown}: {why}"));
        if !named.directory {
            return regular(&path).map(|m| m.len()).map_err(err);
        }
        let mut total = 0u64;
        for (_, target) in self.dir_files(field, &path, &shown)? {
            total = total.saturating_add(std::fs::metadata(&target).map_or(0, |m| m.len()));
        }
        Ok(total)
    }
}

/// The refusal of a name that leaves the confined root.
const OUTSIDE: &str = "must name a file inside the service's cluster directory (a relative name, \
                       without `..`, that stays inside once symbolic links are followed)";

/// Whether `p` (relative, normal components) passes through a symbolic link under `root`.
fn through_link(root: &Path, p: &Path) -> bool {
    let mut at = root.to_path_buf();
    p.components().any(|c| {
        at.push(c);
        std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink())
    })
}

const NOT_REGULAR: &str = "is not a regular file (a device, FIFO or socket is not read)";

/// The metadata of the regular file at `path` (links followed), or why it is not one; the
/// one check of a file's kind before it is sized or opened.
fn regular(path: &Path) -> Result<std::fs::Metadata, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    if meta.is_dir() {
        return Err("is a directory, not a file".into());
    }
    if !meta.is_file() {
        return Err(NOT_REGULAR.into());
    }
    Ok(meta)
}

/// A regular file's text, at most `limit` bytes. Its kind is checked before it is opened
/// (a device or FIFO is never opened), and again on the opened file, which is opened
/// without blocking in case it was swapped for a FIFO in between.
fn read_regular(path: &Path, limit: u64) -> Result<String, String> {
    regular(path)?;
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let f = opts.open(path).map_err(|e| format!("cannot read: {e}"))?;
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return Err(NOT_REGULAR.into());
    }
    let mut bytes = Vec::new();
    f.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(format!("is larger than {limit} bytes, the most a named file may hold"));
    }
    String::from_utf8(bytes).map_err(|e| format!("is not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))
}

/// The number in a message's first " line N", if any.
fn line_number(message: &str) -> Option<u64> {
    let at = message.find(" line ")?;
    let digits: String = message[at + 6..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("qosnet_files_{name}_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn local_names_resolve_from_the_base_and_anywhere() {
        let d = scratch("local");
        std::fs::write(d.join("a.txt"), "1 2\n").unwrap();
        let f = Files::local(Some(&d));
        assert_eq!(f.read("x", &FilePath::new("a.txt")).unwrap().text, "1 2\n");
        let abs = FilePath::new(d.join("a.txt"));
        assert_eq!(Files::local(None).read("x", &abs).unwrap().text, "1 2\n");
    }

    #[test]
    fn confined_names_stay_inside_the_root() {
        let d = scratch("confined");
        let root = d.join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/ok.txt"), "fine").unwrap();
        std::fs::write(d.join("secret"), "SHELL=/bin/bash").unwrap();
        std::os::unix::fs::symlink(d.join("secret"), root.join("link")).unwrap();
        let f = Files::confined(&root);
        assert_eq!(f.read("k", &FilePath::new("sub/ok.txt")).unwrap().text, "fine");
        assert_eq!(f.read("k", &FilePath::new("./sub/ok.txt")).unwrap().text, "fine");
        std::os::unix::fs::symlink(d.join("gone"), root.join("dangling")).unwrap();
        for (name, says) in [
            ("/etc/hostname", OUTSIDE),
            ("../secret", OUTSIDE),
            ("sub/../../secret", OUTSIDE),
            ("link", OUTSIDE),
            ("dangling", OUTSIDE),
            ("missing", "missing does not exist"),
        ] {
            let e = f.read("endpoint.agent.cct.path", &FilePath::new(name)).unwrap_err();
            assert_eq!(e.path, "endpoint.agent.cct.path");
            assert!(e.message.contains(says), "{name}: {}", e.message);
            assert!(!e.message.contains("SHELL"), "{}", e.message);
        }
    }

    #[test]
    fn only_regular_files_are_read_and_never_a_device() {
        let d = scratch("kinds");
        let f = Files::local(Some(&d));
        let e = f.read("k", &FilePath::new("/dev/zero")).unwrap_err();
        assert!(e.message.contains("not a regular file"), "{}", e.message);
        let e = f.read("k", &FilePath::new(".")).unwrap_err();
        assert!(e.message.contains("is a directory"), "{}", e.message);
        // A FIFO is refused without opening it (opening would block until a writer came).
        let fifo = d.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = f.read("k", &FilePath::new("fifo")).unwrap_err();
            assert!(e.message.contains("not a regular file"), "{}", e.message);
        }
    }

    #[test]
    fn sizes_and_encodings_are_bounded() {
        let d = scratch("size");
        std::fs::write(d.join("big"), vec![b'1'; 100]).unwrap();
        assert!(read_regular(&d.join("big"), 99).unwrap_err().contains("larger than 99 bytes"));
        assert_eq!(read_regular(&d.join("big"), 100).unwrap().len(), 100);
        std::fs::write(d.join("bin"), [b'a', 0xff, 0xfe]).unwrap();
        let e = Files::local(Some(&d)).read("k", &FilePath::new("bin")).unwrap_err();
        assert!(e.message.contains("not UTF-8 text (byte 1)"), "{}", e.message);
    }

    #[test]
    fn a_confined_directory_keeps_its_entries_inside() {
        let d = scratch("dir");
        let root = d.join("root");
        std::fs::create_dir_all(root.join("routes/nested")).unwrap();
        std::fs::write(root.join("routes/b"), "B").unwrap();
        std::fs::write(root.join("routes/a"), "A").unwrap();
        let f = Files::confined(&root);
        let got = f.read_dir("topology.routes", &FilePath::new("routes")).unwrap();
        let names: Vec<_> = got.iter().map(|t| (t.shown.as_str(), t.text.as_str())).collect();
        assert_eq!(names, [("routes/a", "A"), ("routes/b", "B")]);
        std::os::unix::fs::symlink("/etc/hostname", root.join("routes/c")).unwrap();
        let e = f.read_dir("topology.routes", &FilePath::new("routes")).unwrap_err();
        assert!(e.message.contains("routes/c leads outside"), "{}", e.message);
        let e = f.read_dir("topology.routes", &FilePath::new("routes/a")).unwrap_err();
        assert!(e.message.contains("is not a directory"), "{}", e.message);
    }

    #[test]
    fn confined_messages_about_contents_keep_the_name_and_line_only() {
        let root = scratch("redact");
        let e = ConfigError::new("k", "t.txt line 3: entry 0: got \"SHELL=/bin/bash\"");
        let cut = Files::confined(&root).about_contents(e.clone(), "t.txt", "table");
        assert_eq!(cut.path, "k");
        assert!(cut.message.starts_with("t.txt line 3: not a usable table"), "{}", cut.message);
        assert!(!cut.message.contains("SHELL"));
        assert_eq!(Files::local(None).about_contents(e.clone(), "t.txt", "table"), e);
        let f = Files::new(None, FileScope::Confined);
        assert!(f.read("k", &FilePath::new("x")).unwrap_err().message.contains("--cluster-dir"));
    }
}
