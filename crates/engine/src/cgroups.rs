//! The machine's cgroup hierarchies, in one place: where they are mounted (`/proc/self/mounts`), the cgroup v2
//! directory of a process, and making a cgroup of shootout's own. Both versions matter: a server's cgroup, which
//! holds its whole tree and kills it at once, is made under v2 wherever v2 is mounted, even with no controller
//! (as on this project's machine, where v2 is mounted at /sys/fs/cgroup/unified beside v1's); a CPU quota is set
//! under v2 where its root hands the `cpu` controller down, else under v1's `cpu` hierarchy.
//!
//! Read by the quota ([`crate::quota`]), by the harness's cgroup per server and its reaper, and by the tests that
//! hold a server or the client to a quota.

use std::path::PathBuf;

/// One line of `/proc/self/mounts`: where, what file system, with which options.
struct Mount {
    path: PathBuf,
    kind: String,
    options: String,
}

/// The mounts this process sees.
fn mounts() -> Vec<Mount> {
    let text = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace().skip(1);
            let (path, kind, options) = (fields.next()?, fields.next()?, fields.next()?);
            Some(Mount { path: PathBuf::from(path), kind: kind.to_string(), options: options.to_string() })
        })
        .collect()
}

/// Where the cgroup v2 (unified) hierarchy is mounted, if it is.
pub fn v2_mount() -> Option<PathBuf> {
    mounts().into_iter().find(|m| m.kind == "cgroup2").map(|m| m.path)
}

/// Where the cgroup v1 hierarchy of `controller` (`cpu`) is mounted, if it is.
pub fn v1_mount(controller: &str) -> Option<PathBuf> {
    let holds = |m: &Mount| m.kind == "cgroup" && m.options.split(',').any(|o| o == controller);
    mounts().into_iter().find(holds).map(|m| m.path)
}

/// The directory of process `pid`'s cgroup v2 (the mount itself for the root cgroup); none without v2.
pub fn v2_dir(pid: i32) -> Option<PathBuf> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let path = text.lines().find_map(|line| line.strip_prefix("0::"))?;
    Some(v2_mount()?.join(path.trim_start_matches('/')))
}

/// Makes the cgroup `name` at the root of the hierarchy and gives its directory; none where it cannot be made.
/// Without a quota, under v2. With a quota of `cpus`, under v2 where its root hands the `cpu` controller down,
/// else under v1's `cpu` hierarchy. Its maker moves processes into it (`cgroup.procs`) and removes it when they are
/// gone.
pub fn make(name: &str, quota_cpus: Option<f64>) -> Option<PathBuf> {
    const PERIOD_US: u64 = 100_000;
    let v2 = v2_mount();
    let Some(cpus) = quota_cpus else {
        let dir = v2?.join(name);
        return std::fs::create_dir(&dir).ok().map(|()| dir);
    };
    let quota_us = (cpus * PERIOD_US as f64).round() as u64;
    let delegates =
        |root: &PathBuf| std::fs::read_to_string(root.join("cgroup.subtree_control")).is_ok_and(|c| c.contains("cpu"));
    let (dir, file, value) = match v2.filter(delegates) {
        Some(root) => (root.join(name), "cpu.max", format!("{quota_us} {PERIOD_US}")),
        None => (v1_mount("cpu")?.join(name), "cpu.cfs_quota_us", quota_us.to_string()),
    };
    std::fs::create_dir(&dir).ok()?;
    if std::fs::write(dir.join(file), value).is_err() {
        let _ = std::fs::remove_dir(&dir);
        return None;
    }
    Some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_found_in_its_v2_cgroup_and_a_cgroup_is_made_and_removed() {
        let Some(mount) = v2_mount() else {
            assert!(std::env::var_os("CI").is_none(), "under CI cgroup v2 must be mounted");
            return;
        };
        let mine = v2_dir(std::process::id() as i32).expect("a process is in some v2 cgroup");
        assert!(mine.starts_with(&mount) && mine.is_dir(), "{mine:?} under {mount:?}");
        let name = format!("shootout-test-cgroups-{}", std::process::id());
        let Some(made) = make(&name, None) else {
            assert!(std::env::var_os("CI").is_none(), "under CI a cgroup can be made under {mount:?}");
            return;
        };
        assert_eq!(made, mount.join(&name));
        assert!(made.join("cgroup.procs").exists());
        std::fs::remove_dir(&made).unwrap();
        assert_eq!(make(&name, Some(0.5)).map(|d| std::fs::remove_dir(&d).is_ok()), Some(true), "with a quota");
    }
}
