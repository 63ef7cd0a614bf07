//! `--agents k8s:N` and `shootout agents manifest` (issue 11). No cluster can run on the test machine, so:
//! - the manifest is checked against the Kubernetes API's schema, as the `kubernetes` Python package's models
//!   carry it (`tests/fixtures/check-k8s-manifest.py`; scripts/test.sh makes a virtualenv with the package and
//!   names its python in `SHOOTOUT_TEST_PYTHON`);
//! - the launcher runs against a stand-in for kubectl and the cluster (`tests/fixtures/kubectl`), which starts
//!   each pod's command as a process here with the environment an Indexed Job gives it, so the whole path is the
//!   real one: the manifest applied, the agents dialling back with the run's secret, the merge, and the Job
//!   deleted at the end.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::support::{describe, shootout, Target};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// The python with the `kubernetes` package, or None (said, and allowed only outside CI).
fn python_with_kubernetes() -> Option<PathBuf> {
    let python = std::env::var_os("SHOOTOUT_TEST_PYTHON").map_or_else(|| PathBuf::from("python3"), PathBuf::from);
    let found = Command::new(&python).args(["-c", "import kubernetes"]).output().is_ok_and(|o| o.status.success());
    if found {
        return Some(python);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "under CI the manifest must be checked, but {} has no `kubernetes` package (scripts/test.sh makes one)",
        python.display()
    );
    eprintln!("skipping the manifest's schema check: no python with the `kubernetes` package (SHOOTOUT_TEST_PYTHON)");
    None
}

fn check_manifest(python: &Path, manifest: &[u8]) -> Output {
    let mut checker = Command::new(python)
        .arg(Path::new(FIXTURES).join("check-k8s-manifest.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    checker.stdin.take().unwrap().write_all(manifest).unwrap();
    checker.wait_with_output().unwrap()
}

#[test]
fn the_printed_manifest_is_valid_against_the_kubernetes_schema() {
    let printed = shootout()
        .args(["agents", "manifest", "--count", "3", "--image", "registry.example/shootout:0.1"])
        .args(["--agent-address", "coordinator.example:7070"])
        .output()
        .unwrap();
    assert!(printed.status.success(), "{}", describe(&printed));
    let manifest: serde_json::Value = serde_json::from_slice(&printed.stdout).unwrap();
    let job = &manifest["items"][1];
    assert_eq!((job["kind"].as_str(), job["spec"]["completionMode"].as_str()), (Some("Job"), Some("Indexed")));
    let Some(python) = python_with_kubernetes() else { return };
    let checked = check_manifest(&python, &printed.stdout);
    assert!(checked.status.success(), "the manifest is not valid Kubernetes: {}", describe(&checked));
    // The check can fail: a field the API does not know, and a required one missing, are both found.
    let mut broken = manifest.clone();
    broken["items"][1]["spec"]["completionsMode"] = "Indexed".into();
    broken["items"][1]["spec"]["template"]["spec"]["containers"][0].as_object_mut().unwrap().remove("image");
    broken["items"][1]["spec"]["template"]["spec"]["containers"][0].as_object_mut().unwrap().remove("name");
    let checked = check_manifest(&python, broken.to_string().as_bytes());
    let said = String::from_utf8_lossy(&checked.stdout);
    assert!(!checked.status.success(), "{}", describe(&checked));
    assert!(said.contains("items[1].spec.completionsMode: not a field of V1JobSpec"), "{said}");
    assert!(said.contains("`name`, must not be `None`"), "{said}");
}

/// `shootout load --agents k8s:N …` with the stand-in kubectl first on the PATH and its state in `state`.
fn with_standin(state: &Path) -> Command {
    let mut command = shootout();
    let path = format!("{FIXTURES}:{}", std::env::var("PATH").unwrap_or_default());
    command.env("PATH", path).env("KUBECTL_STANDIN_STATE", state);
    command
}

#[test]
fn kubernetes_agents_dial_back_share_the_load_and_their_job_is_deleted() {
    let state = tempfile::tempdir().unwrap();
    let target = Target::start();
    let output = with_standin(state.path())
        .args(["load", "--agents", "k8s:3", "--agent-image", "test/shootout", "--json"])
        .args(["--agent-command", env!("CARGO_BIN_EXE_shootout"), "--agent-listen", "127.0.0.1:0"])
        .args(["-c", "6", "-n", "3000", &target.url("/hello")])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", describe(&output));
    let result: shootout_model::LoadResult = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!((result.requests.total, result.requests.ok), (3000, 3000));
    assert_eq!(target.served(), 3000, "the server saw exactly what the merged result says");
    let shares: Vec<u64> = result.agents.iter().map(|a| a.measured.as_ref().unwrap().requests.total).collect();
    assert_eq!(shares, vec![1000, 1000, 1000], "each pod ran its index's share");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("agent 2 (k8s, 127.0.0.1)"), "agents are named by launcher and address: {stderr}");
    // The Job was applied once, and deleted at the end; its pods are gone.
    let files: Vec<String> =
        std::fs::read_dir(state.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into()).collect();
    let job = files.iter().find_map(|f| f.strip_suffix(".pids")).expect("a Job was applied");
    assert!(job.starts_with("shootout-agents-"), "{job}");
    assert!(files.contains(&format!("{job}.deleted")), "the Job is deleted at the end: {files:?}");
    let pids = std::fs::read_to_string(state.path().join(format!("{job}.pids"))).unwrap();
    for pid in pids.split_whitespace() {
        assert!(gone(pid), "pod process {pid} is left running");
    }
    // The secret reached the pods through the Secret, never their command line.
    let applied = std::fs::read_to_string(state.path().join(format!("{job}.json"))).unwrap();
    let applied: serde_json::Value = serde_json::from_str(&applied).unwrap();
    let secret = applied["items"][0]["stringData"]["secret"].as_str().unwrap();
    assert_eq!(secret.len(), 32);
    assert!(!applied["items"][1].to_string().contains(secret));
}

/// Whether process `pid` has ended (a zombie no one reaps has ended too).
fn gone(pid: &str) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit_once(") ").map(|(_, rest)| rest.chars().next());
        if matches!(state, None | Some(Some('Z'))) {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn a_cluster_that_refuses_the_job_is_one_line_and_a_missing_image_a_usage_error() {
    let state = tempfile::tempdir().unwrap();
    let target = Target::start();
    let refused = with_standin(state.path())
        .env("KUBECTL_STANDIN_REFUSE", "1")
        .args(["load", "--agents", "k8s:2", "--agent-image", "test/shootout", "-n", "10", &target.url("/")])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1), "{}", describe(&refused));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("kubectl apply: error: You must be logged in to the server (Unauthorized)"), "{stderr}");
    assert_eq!(target.served(), 0);
    let no_image =
        with_standin(state.path()).args(["load", "--agents", "k8s:2", "-n", "10", &target.url("/")]).output();
    let no_image = no_image.unwrap();
    assert_eq!(no_image.status.code(), Some(2), "{}", describe(&no_image));
    assert!(String::from_utf8_lossy(&no_image.stderr).contains("--agent-image"), "{}", describe(&no_image));
}
