//! The docs agree with the code: every page a message points to exists, every link between pages lands on a file
//! and a heading, every key the suite and scenario parsers read is in their reference, the CLI reference is the
//! one the binary generates, every test the reliability table names exists, and the README stays a front page.

use std::path::{Path, PathBuf};

use crate::support::shootout;

/// The repository's root folder.
fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every file under `dir` whose name ends with `.{extension}`, at any depth (build output left out).
fn files(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut paths = vec![dir.to_path_buf()];
    while let Some(path) = paths.pop() {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if path.is_dir() && name != "target" && !name.starts_with('.') {
            paths.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else if path.extension().is_some_and(|e| e == extension) {
            found.push(path);
        }
    }
    found
}

/// The project's own pages: the front ones and docs/ (the results of example runs hold tables, not links to
/// check, but their links are checked too).
fn pages(root: &Path) -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> =
        ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"].iter().map(|p| root.join(p)).collect();
    pages.extend(files(&root.join("docs"), "md"));
    pages
}

/// A heading's anchor as the pages' links write it: lower case, letters, digits, `-` and `_` kept, spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a page's headings (outside code blocks).
fn anchors(text: &str) -> Vec<String> {
    let mut in_code = false;
    let mut found = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        } else if !in_code && line.starts_with('#') {
            found.push(anchor(line.trim_start_matches('#')));
        }
    }
    found
}

#[test]
fn every_page_a_message_points_to_exists() {
    // Messages, --help and comments say `see docs/guide/profiles.md` or `every key: docs/reference/suite.md`.
    let root = repository();
    let mut pointers = Vec::new();
    for path in files(&root.join("crates"), "rs") {
        if !path.components().any(|c| c.as_os_str() == "src") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for piece in text.split("docs/").skip(1) {
            let page: String =
                piece.chars().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.')).collect();
            if let Some(page) = page.strip_suffix('.').or(Some(&page)).filter(|p| p.ends_with(".md")) {
                pointers.push((path.display().to_string(), format!("docs/{page}")));
            }
        }
    }
    let named: Vec<&str> = pointers.iter().map(|(_, p)| p.as_str()).collect();
    for expected in ["docs/reference/suite.md", "docs/reference/scenario.md", "docs/guide/many-machines.md"] {
        assert!(named.contains(&expected), "the scan finds the pointer to {expected}: {pointers:?}");
    }
    for (file, page) in &pointers {
        assert!(root.join(page).is_file(), "{file} points to {page}, which is not a page of the repository");
    }
}

#[test]
fn every_link_between_pages_lands_on_a_file_and_a_heading() {
    let root = repository();
    let mut checked = 0;
    for page in pages(&root) {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut in_code = false;
        for line in text.lines() {
            if line.starts_with("```") {
                in_code = !in_code;
            }
            if in_code {
                continue;
            }
            for piece in line.split("](").skip(1) {
                let Some((target, _)) = piece.split_once(')') else { continue };
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (file, fragment) = target.split_once('#').unwrap_or((target, ""));
                let landing = if file.is_empty() { page.clone() } else { page.parent().unwrap().join(file) };
                assert!(landing.exists(), "{}: the link to {target} lands on nothing", page.display());
                if !fragment.is_empty() {
                    let headings = anchors(&std::fs::read_to_string(&landing).unwrap());
                    assert!(
                        headings.iter().any(|h| h == fragment),
                        "{}: the link to {target} names no heading of {} ({headings:?})",
                        page.display(),
                        landing.display()
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 60, "the scan finds the pages' links: {checked}");
}

/// The keys serde reads into each `struct` of a parser's source: its fields, renamed where it says, those it
/// skips left out.
fn keys_of(source: &str, name: &str) -> Vec<String> {
    let start = source.find(&format!("struct {name} {{")).unwrap_or_else(|| panic!("struct {name} is in the source"));
    let body = &source[start..];
    let body = &body[..body.find("\n}").unwrap()];
    let mut keys = Vec::new();
    let mut attributes = String::new();
    for line in body.lines().skip(1).map(str::trim) {
        if line.starts_with("#[") {
            attributes.push_str(line);
        } else if let Some(field) = line.strip_prefix("pub(crate) ").or_else(|| line.strip_prefix("pub ")) {
            let field = field.split(':').next().unwrap().trim();
            if !attributes.contains("skip") {
                let renamed = attributes.split("rename = \"").nth(1).and_then(|r| r.split('"').next());
                keys.push(renamed.unwrap_or(field).to_string());
            }
            attributes.clear();
        }
    }
    assert!(!keys.is_empty(), "struct {name} has keys");
    keys
}

/// The text of a page's section under `heading`, to the next heading of the same or a higher level.
fn section<'a>(page: &'a str, heading: &str) -> &'a str {
    let start = page.find(&format!("\n## {heading}\n")).unwrap_or_else(|| panic!("a section '## {heading}'"));
    let rest = &page[start + heading.len() + 5..];
    &rest[..rest.find("\n## ").unwrap_or(rest.len())]
}

/// Every key of each (struct, section) pair is written in that section: as `` `key` `` for a table's own keys, or
/// as a word for the keys of an inline table described in its parent's row (`{ path, status, timeout }`).
fn every_key_is_in(reference: &str, sources: &[&str], tables: &[(&str, &str)]) {
    let root = repository();
    let page = std::fs::read_to_string(root.join(reference)).unwrap();
    let source: String = sources.iter().map(|s| std::fs::read_to_string(root.join(s)).unwrap()).collect();
    for (name, heading) in tables {
        let text = section(&page, heading);
        for key in keys_of(&source, name) {
            let quoted = text.contains(&format!("`{key}`"));
            let word = text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).any(|w| w == key);
            assert!(quoted || word, "{reference}, section '{heading}', lacks the key `{key}` of {name}");
        }
    }
}

#[test]
fn every_suite_key_is_in_the_suite_reference() {
    every_key_is_in(
        "docs/reference/suite.md",
        &["crates/suite/src/raw.rs", "crates/suite/src/lib.rs"],
        &[
            ("SuiteFile", "Top level"),
            ("FullDef", "`[full]`"),
            ("SearchDef", "`search = { … }`"),
            ("ProfileDef", "`[profile]`"),
            ("Requires", "`[requires]`"),
            ("LoadDef", "`[load]`"),
            ("AgentsDef", "`[agents]`"),
            ("HostsDef", "`[hosts]`"),
            ("ServerDef", "`[[server]]`"),
            ("ReadyDef", "`[[server]]`"),
            ("VerifyDef", "`[[server]]`"),
            ("StopDef", "`[[server]]`"),
            ("ContainerDef", "`container = { … }`"),
            ("ServiceDef", "`[[service]]`"),
            ("ServiceReadyDef", "`[[service]]`"),
        ],
    );
}

#[test]
fn every_scenario_key_is_in_the_scenario_reference() {
    every_key_is_in(
        "docs/reference/scenario.md",
        &["crates/scenario/src/raw.rs"],
        &[
            ("File", "Top level"),
            ("RequestDef", "`[[request]]`"),
            ("ExpectDef", "`expect = { … }`"),
            ("ExtractDef", "`extract = [{ … }]`"),
            ("SessionDef", "`[[session]]`"),
            ("StepDef", "`steps = [{ … }]`"),
            ("PhaseDef", "`[[phase]]`"),
        ],
    );
}

#[test]
fn the_readme_is_a_front_page() {
    let readme = std::fs::read_to_string(repository().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 250, "README.md has {lines} lines: at most 250, the rest belongs in docs/");
}

#[test]
fn every_test_the_reliability_table_names_is_a_test_of_the_repository() {
    // docs/reliability.md names the test that shows each behaviour as `module::test`: the module is a file
    // `module.rs` under crates/ (an e2e area, or a unit test's module), and it holds `fn test(`.
    let root = repository();
    let table = std::fs::read_to_string(root.join("docs/reliability.md")).unwrap();
    let sources = files(&root.join("crates"), "rs");
    let named: Vec<(&str, &str)> = table
        .split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|quoted| quoted.split_once("::"))
        .filter(|(module, test)| {
            let word =
                |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            word(module) && word(test)
        })
        .collect();
    assert!(named.len() >= 50, "the scan finds the table's tests: {named:?}");
    for (module, test) in named {
        let found = sources
            .iter()
            .filter(|p| p.file_stem().is_some_and(|s| s == module))
            .any(|p| std::fs::read_to_string(p).unwrap().contains(&format!("fn {test}(")));
        assert!(found, "docs/reliability.md names {module}::{test}, which no {module}.rs under crates/ holds");
    }
}

#[test]
fn the_cli_reference_is_the_one_the_binary_generates() {
    let output = shootout().args(["generate", "reference"]).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let generated = String::from_utf8(output.stdout).unwrap();
    for flag in
        ["## shootout load", "`-c, --connections <CONNECTIONS>`", "## shootout agents manifest", "--max-regression"]
    {
        assert!(generated.contains(flag), "the reference holds {flag}");
    }
    let committed = std::fs::read_to_string(repository().join("docs/reference/cli.md")).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/reference/cli.md differs from what the binary generates: run \
         `cargo run --release -- generate reference > docs/reference/cli.md` and commit it"
    );
}

#[test]
fn the_man_pages_render_and_the_completions_load() {
    let dir = crate::support::workdir("docs", "man");
    let output = shootout().args(["generate", "man"]).arg(&dir).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    for page in ["shootout.1", "shootout-load.1", "shootout-run.1", "shootout-compare.1"] {
        assert!(dir.join(page).is_file(), "generate man wrote {page}");
    }
    // man renders the page as a reader sees it: its name, its synopsis, its flags.
    let rendered = std::process::Command::new("man")
        .args(["-P", "cat", "-l"])
        .arg(dir.join("shootout-load.1"))
        .env("MANWIDTH", "100")
        .output()
        .expect("man is installed (man-db)");
    assert!(rendered.status.success(), "man -l: {}", String::from_utf8_lossy(&rendered.stderr));
    let text = String::from_utf8_lossy(&rendered.stdout);
    for part in ["SYNOPSIS", "shootout-load", "--connections", "--rate"] {
        assert!(text.contains(part), "man -l shootout-load.1 shows {part}: {text}");
    }
    let top = std::process::Command::new("man").args(["-P", "cat", "-l"]).arg(dir.join("shootout.1")).output().unwrap();
    assert!(String::from_utf8_lossy(&top.stdout).contains("shootout-run"), "shootout.1 names its commands");
    std::fs::remove_dir_all(&dir).unwrap();

    // bash loads its script and completes `shootout`; every shell's script names the commands.
    let loaded = std::process::Command::new("bash")
        .args(["-c", "source <(\"$0\" generate completions bash) && complete -p shootout"])
        .arg(env!("CARGO_BIN_EXE_shootout"))
        .output()
        .unwrap();
    assert!(loaded.status.success(), "bash loads the completions: {}", String::from_utf8_lossy(&loaded.stderr));
    assert!(String::from_utf8_lossy(&loaded.stdout).contains("shootout"), "complete -p names shootout");
    for shell in ["bash", "zsh", "fish"] {
        let script = shootout().args(["generate", "completions", shell]).output().unwrap();
        let text = String::from_utf8_lossy(&script.stdout);
        assert!(script.status.success() && text.contains("load") && text.contains("compare"), "{shell}: {text}");
    }
    let wrong = shootout().args(["generate", "completions", "tcsh"]).output().unwrap();
    assert_eq!(wrong.status.code(), Some(2), "an unknown shell is bad input");
}
