//! Servers in containers (`container = { image, port }`) against a real Docker daemon from Debian's `docker.io`,
//! started by the test in a folder of its own (its data, its socket: nothing of a daemon the machine may run), with
//! an image made here without a registry: this very binary and the libraries it loads, imported. The container is
//! sampled through its own cgroup (its CPU, its processes' PSS), and nothing of it is left after the run, after a
//! SIGTERM of the runner, or after a run that died (the next one removes it by its label).
//!
//! Needs root and `dockerd`; without them the test says why and passes, except under CI (CI set).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use shootout_model::run::TrialRecord;

use crate::support::{describe, results, shootout, start_run, workdir};

/// Held by each test's daemon while it lives: two daemons would fight over the one `docker0` bridge and its
/// firewall rules, so the tests take turns.
static ONE_DAEMON: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A Docker daemon of the test's own, stopped and cleaned away when dropped.
struct TestDocker {
    dir: PathBuf,
    daemon: Child,
    host: String,
    _turn: std::sync::MutexGuard<'static, ()>,
}

impl TestDocker {
    fn start() -> Option<TestDocker> {
        let skip = |why: &str| {
            assert!(std::env::var_os("CI").is_none(), "under CI the containers test must run, but {why}");
            eprintln!("skipping the containers test: {why}");
            None
        };
        use std::os::unix::fs::MetadataExt;
        if std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(1) != 0 {
            return skip("it needs root (a Docker daemon)");
        }
        if !Path::new("/usr/sbin/dockerd").exists() {
            return skip("/usr/sbin/dockerd is missing (apt-get install docker.io)");
        }
        let turn = ONE_DAEMON.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let dir = std::env::temp_dir().join(format!("shootout-docker-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let host = format!("unix://{}", dir.join("docker.sock").display());
        let log = std::fs::File::create(dir.join("dockerd.log")).unwrap();
        let daemon = Command::new("/usr/sbin/dockerd")
            .arg("--data-root")
            .arg(dir.join("data"))
            .arg("--exec-root")
            .arg(dir.join("exec"))
            .arg("--pidfile")
            .arg(dir.join("dockerd.pid"))
            .args(["-H", &host, "--userland-proxy=false"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        let docker = TestDocker { dir, daemon, host, _turn: turn };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !docker.docker(&["version"]).status.success() {
            let log = std::fs::read_to_string(docker.dir.join("dockerd.log")).unwrap_or_default();
            assert!(Instant::now() < deadline, "dockerd did not answer: {log}");
            std::thread::sleep(Duration::from_millis(200));
        }
        Some(docker)
    }

    /// `docker ARGS` against this daemon.
    fn docker(&self, args: &[&str]) -> Output {
        Command::new("docker").args(args).env("DOCKER_HOST", &self.host).output().unwrap()
    }

    /// An image of this binary and the libraries it loads, `shootout-test/target:1`.
    fn image(&self) -> &'static str {
        let root = self.dir.join("rootfs");
        let binary = env!("CARGO_BIN_EXE_shootout");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::copy(binary, root.join("shootout")).unwrap();
        let libraries = Command::new("ldd").arg(binary).output().unwrap();
        for library in String::from_utf8_lossy(&libraries.stdout).split_whitespace().filter(|w| w.starts_with('/')) {
            let inside = root.join(library.trim_start_matches('/'));
            std::fs::create_dir_all(inside.parent().unwrap()).unwrap();
            std::fs::copy(library, inside).unwrap();
        }
        let tar = self.dir.join("rootfs.tar");
        assert!(Command::new("tar").arg("-C").arg(&root).arg("-cf").arg(&tar).arg(".").status().unwrap().success());
        let imported = self.docker(&["import", tar.to_str().unwrap(), "shootout-test/target:1"]);
        assert!(imported.status.success(), "{}", describe(&imported));
        "shootout-test/target:1"
    }

    /// `shootout run` of `dir/suite.toml` against this daemon, its results under `dir/results`, to its end.
    fn run(&self, dir: &Path) -> Output {
        let mut command = shootout();
        command.env("DOCKER_HOST", &self.host).arg("run").arg(dir.join("suite.toml"));
        command.arg("--results").arg(dir.join("results")).output().unwrap()
    }

    /// The containers of shootout runs this daemon has, running or not.
    fn labelled(&self) -> String {
        let listed = self.docker(&["ps", "-a", "--filter", "label=shootout.run", "--format", "{{.Names}}"]);
        String::from_utf8_lossy(&listed.stdout).trim().to_string()
    }
}

impl Drop for TestDocker {
    /// Removes every container, stops the daemon, and takes away what it leaves: its mounts, its bridge, its folder.
    fn drop(&mut self) {
        let all = self.docker(&["ps", "-aq"]);
        for id in String::from_utf8_lossy(&all.stdout).split_whitespace() {
            let _ = self.docker(&["rm", "-f", id]);
        }
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.daemon.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        let _ = self.daemon.wait();
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        let mut under: Vec<&str> = mounts
            .lines()
            .filter_map(|l| l.split_whitespace().nth(1))
            .filter(|m| m.starts_with(self.dir.to_str().unwrap()))
            .collect();
        under.sort_by_key(|m| std::cmp::Reverse(m.len()));
        for mount in under {
            let _ = Command::new("umount").arg("-l").arg(mount).status();
        }
        let _ = Command::new("ip").args(["link", "del", "docker0"]).output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A suite of one server in a container of `image` and one beside it here.
fn suite(image: &str, duration: &str) -> String {
    format!(
        "name = \"containers\"\nrepeats = 1\nduration = \"{duration}\"\nwarmup = \"300ms\"\nsample_every = \"100ms\"\n\
         connections = [2]\n[load]\npath = \"/hello\"\n\
         [[server]]\nname = \"boxed\"\ncommand = \"/shootout target --host 0.0.0.0 --port {{port}} --threads 1\"\n\
         container = {{ image = \"{image}\", port = 8080, engine = \"docker\" }}\nstop = {{ signal = \"INT\", grace = \"3s\" }}\n"
    )
}

#[test]
fn a_container_is_sampled_by_its_cgroup_and_nothing_of_it_is_left() {
    let Some(docker) = TestDocker::start() else { return };
    let image = docker.image();
    let dir = workdir("containers", "sampled");
    // Profiled too: perf on the container's processes by the PIDs this machine sees.
    let profiled = "[profile]\nduration = \"1s\"\nprofiler = \"perf\"\n";
    std::fs::write(dir.join("suite.toml"), suite(image, "1s") + profiled).unwrap();
    // A container of a run that died: the next run removes it, and says so.
    let dead = docker.docker(&[
        "create",
        "--label",
        "shootout.run=999999-1",
        "--name",
        "left-by-a-dead-run",
        image,
        "/shootout",
    ]);
    assert!(dead.status.success(), "{}", describe(&dead));
    let output = docker.run(&dir);
    assert!(output.status.success(), "{}", describe(&output));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("docker container left-by-a-dead-run"),
        "{}",
        describe(&output)
    );
    let trial: TrialRecord =
        serde_json::from_slice(&std::fs::read(results(&dir).join("trials/boxed/2-r1.json")).unwrap()).unwrap();
    assert!(trial.result.requests.ok > 100, "{:?}", trial.result.requests);
    // Its cgroup's CPU, and its processes' memory: docker-init and the target inside.
    assert!(trial.usage.cpu_s > 0.0 && trial.usage.pss_max_bytes > 1 << 20, "{:?}", trial.usage);
    assert!(trial.usage.processes_max >= 1, "{:?}", trial.usage);
    let log = std::fs::read_to_string(results(&dir).join("logs/boxed-r1.log")).unwrap();
    assert!(log.contains("listening on http://0.0.0.0:8080/"), "its log came back: {log}");
    let folded = std::fs::read_to_string(results(&dir).join("profiles/boxed-2.folded")).unwrap();
    let stacks = shootout_profile::Stacks::parse(&folded).unwrap();
    assert!(
        stacks.share_with(|frame| frame.starts_with("shootout_target_server::")) > 0.0,
        "the target's frames: {folded}"
    );
    assert_eq!(docker.labelled(), "", "no container is left");

    // SIGTERM of the runner mid-trial: the container is stopped and removed, and the run says how to resume.
    let dir = workdir("containers", "sigterm");
    std::fs::write(dir.join("suite.toml"), suite(image, "20s")).unwrap();
    let mut command = shootout();
    command.env("DOCKER_HOST", &docker.host);
    let runner = start_run(command, &dir);
    let deadline = Instant::now() + Duration::from_secs(30);
    while docker.labelled().is_empty() {
        assert!(Instant::now() < deadline, "the container never started");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(800));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(runner.id() as i32), nix::sys::signal::Signal::SIGTERM).unwrap();
    let output = runner.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(143), "{}", describe(&output));
    assert_eq!(docker.labelled(), "", "no container is left after SIGTERM");
}

/// Issue 50: a missing image read docker's `Run 'docker run --help'`; a container that exited at once read `No
/// public port`, its output lost; a failed `docker run` left a Created container; `command = ""` was needed for the
/// image's own; the options given were recorded only in the copied suite; a server listening on 127.0.0.1 inside
/// waited out its whole ready timeout.
#[test]
fn a_containers_faults_are_said_with_their_reasons_and_its_options_are_recorded() {
    let Some(docker) = TestDocker::start() else { return };
    let image = docker.image();
    // The same files with a command of their own: the image's CMD.
    let tar = docker.dir.join("rootfs.tar");
    let own = "shootout-test/target:2";
    let change = "CMD [\"/shootout\", \"target\", \"--host\", \"0.0.0.0\", \"--port\", \"8080\"]";
    let imported = docker.docker(&["import", "--change", change, tar.to_str().unwrap(), own]);
    assert!(imported.status.success(), "{}", describe(&imported));
    let run = |name: &str, server: &str| {
        let dir = workdir("containers", name);
        let suite = format!(
            "name = \"faults\"\nrepeats = 1\nduration = \"300ms\"\nwarmup = \"100ms\"\nconnections = [1]\n\
             [load]\npath = \"/hello\"\n[[server]]\nname = \"boxed\"\nready = {{ timeout = \"30s\" }}\n{server}"
        );
        std::fs::write(dir.join("suite.toml"), suite).unwrap();
        let started = Instant::now();
        let output = docker.run(&dir);
        (dir, output, started.elapsed())
    };
    let boxed = |image: &str, command: &str| {
        format!("command = \"{command}\"\ncontainer = {{ image = \"{image}\", port = 8080, engine = \"docker\" }}\n")
    };

    let (_, output, _) = run("exits", &boxed(image, "/shootout no-such-command"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Its end is seen by `docker run`'s checks or, when the container outlives them, by the wait for its answer.
    let exited = |status: &str| {
        stderr.contains(&format!("it exited before it was ready ({status})"))
            || stderr.contains(&format!("exited ({status}) before it answered"))
    };
    assert!(exited("exit status 2"), "{}", describe(&output));
    assert!(stderr.contains("no-such-command"), "its own words, from its log: {stderr}");

    let (_, output, _) = run("not-in-image", &boxed(image, "/no-such-binary"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("it exited before it was ready (exit status 127)"), "{}", describe(&output));
    assert!(stderr.contains("exec /no-such-binary failed"), "{stderr}");

    // Created, then refused at its start: docker's own reason, and the created container removed.
    let server =
        "container = { image = \"IMAGE\", port = 8080, engine = \"docker\", options = [\"--cpuset-cpus\", \"63\"] }\n\
                  command = \"/shootout target --host 0.0.0.0 --port {port}\"\n";
    let (_, output, _) = run("unstartable", &server.replace("IMAGE", image));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("docker run: ") && stderr.contains("rror"), "{}", describe(&output));
    assert!(!stderr.contains("--help"), "docker's own reason, not its usage line: {stderr}");
    assert_eq!(docker.labelled(), "", "the container the failed run created is gone");

    // An image that is not here (and is not pulled: there is no registry).
    let server = "container = { image = \"shootout-test/none:1\", port = 8080, engine = \"docker\", options = [\"--pull\", \"never\"] }\n";
    let (_, output, _) = run("no-image", server);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("docker run: ") && stderr.contains("No such image: shootout-test/none:1"),
        "{}",
        describe(&output)
    );

    let (_, output, took) = run("loopback", &boxed(image, "/shootout target --port {port}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("listens on 127.0.0.1:8080 inside its container, which its published port cannot reach"),
        "{}",
        describe(&output)
    );
    assert!(took < Duration::from_secs(20), "told before its 30 s ready timeout: {took:?}");

    let server = format!(
        "container = {{ image = \"{own}\", port = 8080, engine = \"docker\", options = [\"--memory\", \"256m\"] }}\n"
    );
    let (dir, output, _) = run("own-command", &server);
    assert!(output.status.success(), "the image's own command runs: {}", describe(&output));
    let environment: serde_json::Value =
        serde_json::from_slice(&std::fs::read(results(&dir).join("environment.json")).unwrap()).unwrap();
    let container = &environment["containers"][0];
    assert_eq!(container["image"], own, "{environment}");
    assert_eq!(container["options"], serde_json::json!(["--memory", "256m"]), "{environment}");
    let markdown = std::fs::read_to_string(results(&dir).join("report.md")).unwrap();
    assert!(
        markdown.contains("boxed ran in a container of shootout-test/target:2 (docker, options: --memory 256m)"),
        "{markdown}"
    );
    assert_eq!(docker.labelled(), "", "no container is left");
}
