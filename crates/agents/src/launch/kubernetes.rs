//! `--agents k8s:N`: an Indexed Job of N pods (`completionMode: Indexed`, each pod's `JOB_COMPLETION_INDEX` its
//! agent index, `backoffLimit: 0` so a failed agent is not silently replaced), spread over the cluster's nodes,
//! and a Secret holding the run's secret. `kubectl apply` creates both in the current context's namespace; each
//! pod dials back to the coordinator ([`super::dial`]), which must therefore be reachable from the pods
//! (`--agent-address`). Both are deleted at the end, however the run ends. `shootout agents manifest` prints
//! the same manifest, to read or keep.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use super::dial::{Door, SECRET_VARIABLE};
use super::{Cleanup, Crew, LastWords, LaunchError, Launcher};

/// What an agents' manifest is made of.
#[derive(Debug, Clone)]
pub struct JobSpec<'a> {
    /// The name of the Job and of its Secret.
    pub name: &'a str,
    /// How many agents (pods).
    pub agents: u32,
    /// The container image with shootout in it.
    pub image: &'a str,
    /// The command that runs shootout in the image, in words (no shell): `shootout`, `/usr/local/bin/shootout`.
    pub command: &'a str,
    /// The `HOST:PORT` the pods dial.
    pub address: &'a str,
    /// The run's secret.
    pub secret: &'a str,
}

/// The manifest: a `List` of the Secret and the Indexed Job, as JSON (which kubectl and any YAML reader take).
pub fn manifest(job: &JobSpec<'_>) -> Value {
    let labels = json!({ "app.kubernetes.io/name": "shootout-agent", "app.kubernetes.io/instance": job.name });
    let mut command: Vec<String> = job.command.split_whitespace().map(str::to_string).collect();
    command.extend(["agent", "--dial", job.address, "--of"].map(str::to_string));
    command.push(job.agents.to_string());
    json!({
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": { "name": job.name, "labels": labels },
                "type": "Opaque",
                "stringData": { "secret": job.secret },
            },
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": { "name": job.name, "labels": labels },
                "spec": {
                    "completionMode": "Indexed",
                    "completions": job.agents,
                    "parallelism": job.agents,
                    "backoffLimit": 0,
                    "ttlSecondsAfterFinished": 600,
                    "template": {
                        "metadata": { "labels": labels },
                        "spec": {
                            "restartPolicy": "Never",
                            "topologySpreadConstraints": [{
                                "maxSkew": 1,
                                "topologyKey": "kubernetes.io/hostname",
                                "whenUnsatisfiable": "ScheduleAnyway",
                                "labelSelector": { "matchLabels": labels },
                            }],
                            "containers": [{
                                "name": "agent",
                                "image": job.image,
                                "command": command,
                                "env": [{
                                    "name": SECRET_VARIABLE,
                                    "valueFrom": { "secretKeyRef": { "name": job.name, "key": "secret" } },
                                }],
                            }],
                        },
                    },
                },
            },
        ],
    })
}

/// A fresh name for a run's Job: `shootout-agents-` and ten hex digits.
pub fn job_name() -> String {
    let random = super::dial::new_secret().unwrap_or_else(|_| format!("{:x}", std::process::id()));
    format!("shootout-agents-{}", &random[..10.min(random.len())])
}

/// Applies the manifest of `n` agents with kubectl and waits for them to dial back; deletes it at the end.
pub(super) fn start(launcher: &Launcher, n: u32) -> Result<Crew, LaunchError> {
    let who = format!("--agents k8s:{n}");
    let failed = |why: String, fix: &str| LaunchError { peer: who.clone(), why, fix: fix.to_string() };
    let image = launcher.settings.image.as_deref().ok_or_else(|| {
        failed("no container image given".into(), "add --agent-image IMAGE, an image with shootout in it")
    })?;
    let door = Door::open(&launcher.dial_back(), &who)?;
    let name = job_name();
    let spec = JobSpec {
        name: &name,
        agents: n,
        image,
        command: launcher.remote_command(),
        address: &door.address,
        secret: &door.secret,
    };
    let text = manifest(&spec).to_string();
    let (applied, said) = kubectl(&["apply", "-f", "-"], &text)
        .map_err(|e| failed(format!("kubectl: {e}"), "install kubectl and point it at your cluster"))?;
    let cleanup: Cleanup = Box::new(move || {
        let _ = kubectl(&["delete", "--ignore-not-found", "--wait=false", "-f", "-"], &text);
    });
    if !applied {
        cleanup();
        return Err(failed(
            format!("kubectl apply: {said}"),
            "check kubectl's context and your rights in its namespace",
        ));
    }
    match door.gather(n, "k8s", launcher.timeout, &mut || None, &LastWords::default()) {
        Ok(links) => Ok(Crew::new(links, Vec::new(), Some(cleanup))),
        Err(mut e) => {
            e.fix = format!(
                "{}; `kubectl describe job {name}` and `kubectl logs job/{name}` say why (the Job is deleted when shootout ends: raise --agent-timeout to look in time)",
                e.fix
            );
            cleanup();
            Err(e)
        }
    }
}

/// Runs kubectl with `input` on its stdin; whether it succeeded, and the last line it wrote.
fn kubectl(arguments: &[&str], input: &str) -> std::io::Result<(bool, String)> {
    let mut child = Command::new("kubectl")
        .args(arguments)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input.as_bytes())?;
    }
    let output = child.wait_with_output()?;
    let said = String::from_utf8_lossy(if output.status.success() { &output.stdout } else { &output.stderr });
    let last = said.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim().to_string();
    Ok((output.status.success(), last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_job_is_indexed_never_retried_and_carries_the_secret_by_reference() {
        let spec = JobSpec {
            name: "shootout-agents-abc",
            agents: 3,
            image: "registry.example/shootout:1",
            command: "/usr/local/bin/shootout",
            address: "10.0.0.5:7070",
            secret: "s3cret",
        };
        let manifest = manifest(&spec);
        let job = &manifest["items"][1];
        assert_eq!(job["spec"]["completionMode"], "Indexed");
        assert_eq!((job["spec"]["completions"].as_u64(), job["spec"]["backoffLimit"].as_u64()), (Some(3), Some(0)));
        let container = &job["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(
            container["command"],
            json!(["/usr/local/bin/shootout", "agent", "--dial", "10.0.0.5:7070", "--of", "3"])
        );
        assert_eq!(container["env"][0]["valueFrom"]["secretKeyRef"]["name"], "shootout-agents-abc");
        assert_eq!(manifest["items"][0]["stringData"]["secret"], "s3cret");
        assert!(!job.to_string().contains("s3cret"), "the secret is in the Secret only");
    }
}
