//! [`Quota`]: the CPU quota over a process, the tightest of its cgroup's and its parents' (a container's
//! `--cpus`, a systemd unit's `CPUQuota`, a Kubernetes limit), under cgroup v2 or v1, and how often it ran out
//! ([`QuotaCount`], from each cgroup's `cpu.stat`). The client judges its own busy share against it, and the
//! suite runner reads the servers'.

use std::path::{Path, PathBuf};

use crate::cgroups;

/// A quota's periods and throttled periods, counted so far, and the quota in CPUs.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct QuotaCount {
    /// Periods in which the cgroup ran.
    pub periods: u64,
    /// Periods in which it ran out of its quota.
    pub throttled: u64,
    /// The quota, in CPUs (0: none).
    pub cpus: f64,
}

impl QuotaCount {
    /// What was counted since `before`, with the quota now; nothing when the quota changed meanwhile.
    pub fn since(self, before: QuotaCount) -> QuotaCount {
        if self.cpus != before.cpus {
            return QuotaCount { cpus: self.cpus, ..QuotaCount::default() };
        }
        QuotaCount {
            periods: self.periods.saturating_sub(before.periods),
            throttled: self.throttled.saturating_sub(before.throttled),
            cpus: self.cpus,
        }
    }

    /// The share of the periods in which the quota ran out (0 without one).
    pub fn throttled_share(&self) -> f64 {
        if self.periods > 0 {
            self.throttled as f64 / self.periods as f64
        } else {
            0.0
        }
    }
}

/// The CPU quota over a process: the tightest of its cgroup's and its parents'.
#[derive(Debug, Clone)]
pub struct Quota {
    /// The cgroup directories from the process's own up to the root of its hierarchy, each with its version.
    chain: Vec<(PathBuf, Version)>,
}

/// Which cgroup hierarchy a directory is in.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Version {
    V1,
    V2,
}

impl Quota {
    /// The quotas over the processes `pids` (a tree whose wrapper stayed outside the cgroup its server joined).
    pub fn over(pids: impl IntoIterator<Item = i32>) -> Quota {
        let mut chain: Vec<(PathBuf, Version)> = Vec::new();
        for pid in pids {
            for link in Quota::of(pid).chain {
                if !chain.contains(&link) {
                    chain.push(link);
                }
            }
        }
        Quota { chain }
    }

    /// The quota over process `pid`: its cgroup's `cpu` controller, under v2 where it is enabled there, else v1.
    pub fn of(pid: i32) -> Quota {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/cgroup")) else {
            return Quota { chain: Vec::new() };
        };
        let (v2, v1) = (cgroups::v2_mount(), cgroups::v1_mount("cpu"));
        let mut chain = Vec::new();
        for line in text.lines() {
            let mut parts = line.splitn(3, ':');
            let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next()) else { continue };
            let mount = if controllers.is_empty() {
                v2.clone().map(|path| (path, Version::V2))
            } else if controllers.split(',').any(|c| c == "cpu") {
                v1.clone().map(|path| (path, Version::V1))
            } else {
                None
            };
            let Some((mount, version)) = mount else { continue };
            let mut dir = mount.join(path.trim_start_matches('/'));
            while dir.starts_with(&mount) {
                if dir.join("cpu.stat").exists() && (version == Version::V1 || dir.join("cpu.max").exists()) {
                    chain.push((dir.clone(), version));
                }
                if !dir.pop() {
                    break;
                }
            }
        }
        Quota { chain }
    }

    /// The counts of the tightest quota over the process now (the one with the fewest CPUs); none without one.
    pub fn count(&self) -> QuotaCount {
        self.chain
            .iter()
            .filter_map(|(dir, version)| {
                let cpus = quota_cpus(dir, *version)?;
                let stat = std::fs::read_to_string(dir.join("cpu.stat")).ok()?;
                let field = |name: &str| {
                    stat.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse::<u64>().ok())
                };
                Some(QuotaCount { periods: field("nr_periods")?, throttled: field("nr_throttled")?, cpus })
            })
            .min_by(|a, b| a.cpus.total_cmp(&b.cpus))
            .unwrap_or_default()
    }
}

/// The quota set on one cgroup directory, in CPUs; none when it has none.
fn quota_cpus(dir: &Path, version: Version) -> Option<f64> {
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    let (quota, period) = match version {
        Version::V2 => {
            let text = read("cpu.max")?;
            let mut parts = text.split_whitespace();
            (parts.next()?.parse::<f64>().ok()?, parts.next()?.parse::<f64>().ok()?)
        }
        Version::V1 => {
            (read("cpu.cfs_quota_us")?.trim().parse().ok()?, read("cpu.cfs_period_us")?.trim().parse().ok()?)
        }
    };
    (quota > 0.0 && period > 0.0).then(|| quota / period)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_quota_counts_nothing_and_the_chain_reaches_a_quota_set_on_a_cgroup() {
        assert_eq!(Quota::of(i32::MAX).count(), QuotaCount::default(), "no such process");
        let dir = std::env::temp_dir().join(format!("shootout-quota-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("cpu.max"), "50000 100000\n").unwrap();
        std::fs::write(dir.join("cpu.stat"), "usage_usec 10\nnr_periods 88\nnr_throttled 80\nthrottled_usec 9\n")
            .unwrap();
        let quota = Quota { chain: vec![(dir.clone(), Version::V2)] };
        assert_eq!(quota.count(), QuotaCount { periods: 88, throttled: 80, cpus: 0.5 });
        std::fs::write(dir.join("cpu.max"), "max 100000\n").unwrap();
        assert_eq!(quota.count(), QuotaCount::default(), "no quota set");
        std::fs::write(dir.join("cpu.cfs_quota_us"), "25000\n").unwrap();
        std::fs::write(dir.join("cpu.cfs_period_us"), "100000\n").unwrap();
        let v1 = Quota { chain: vec![(dir.clone(), Version::V1)] };
        assert_eq!(v1.count().cpus, 0.25);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_process_under_a_quota_is_throttled_by_it() {
        let Some(dir) = cgroups::make(&format!("shootout-test-quota-{}", std::process::id()), Some(0.5)) else {
            let why = "no cgroup with a cpu controller can be made here: nothing to throttle";
            assert!(std::env::var_os("CI").is_none(), "under CI this test must run, but {why}");
            eprintln!("{why}");
            return;
        };
        // A busy loop moved into the cgroup, which ends by itself after 3 s: half a CPU, throttled in almost every
        // period.
        let burn = "import time\nend = time.time() + 3\nwhile time.time() < end: pass";
        let script = format!("echo $$ > {}/cgroup.procs && exec python3 -c '{burn}'", dir.display());
        let mut child = std::process::Command::new("sh").args(["-c", &script]).spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        let quota = Quota::of(child.id() as i32);
        let before = quota.count();
        std::thread::sleep(std::time::Duration::from_millis(1000));
        let after = quota.count();
        let _ = child.kill();
        let _ = child.wait();
        let _ = std::fs::remove_dir(&dir);
        assert_eq!(after.cpus, 0.5, "{quota:?}");
        let (periods, throttled) = (after.periods - before.periods, after.throttled - before.throttled);
        assert!(periods >= 5 && throttled * 10 >= periods * 8, "{throttled} of {periods} periods throttled");
    }
}
