//! What the data plane's integration tests share: the test cluster's key file.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::OnceLock;

/// A cluster key file (mode 600) for this test process's agents.
pub fn key_file() -> PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        // (under Cargo's scratch directory for integration tests, not the system's /tmp,
        // where one file a test process would pile up)
        let f = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("qosnet-test-key-{}", std::process::id()));
        std::fs::write(&f, "0123456789abcdef0123456789abcdef-test-cluster\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        f
    })
    .clone()
}
