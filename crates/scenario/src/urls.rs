//! siege's urls file (`siege -f urls.txt`), read into a [`Scenario`]: one request per line, in order.
//!
//! ```text
//! # comments and blank lines are skipped
//! HOST=http://127.0.0.1:8080        # NAME=value defines a variable
//! $(HOST)/index.html                 # $(NAME) or ${NAME} uses one
//! $(HOST)/login POST user=alice&pw=x # a POST with a form body
//! $(HOST)/upload POST <data.json     # a POST whose body is a file (relative to the urls file)
//! ```
//!
//! Every URL must be on one server, over http:// or https://, and sendable as written (no space, no broken `%`
//! escape). POST bodies go out as `application/x-www-form-urlencoded`, as siege sends them (`.json` files as
//! `application/json`).

use std::path::Path;

use crate::template::Template;
use crate::validate::{bad_in_target, origin, FileError};
use crate::{Expect, Request, Scenario};

/// Reads a urls file. `dir` is where `<file` bodies are looked up; `base` (a URL given on the command line)
/// overrides the server of the URLs, keeping their paths.
pub fn parse_urls(text: &str, file: &str, dir: &Path, base: Option<&str>) -> Result<Scenario, FileError> {
    let error =
        |line: usize, column: usize, message: String| FileError { file: file.to_string(), line, column, message };
    let mut variables: Vec<(String, String)> = Vec::new();
    let mut requests = Vec::new();
    let mut origin: Option<String> = None;
    for (index, raw_line) in text.lines().enumerate() {
        let number = index + 1;
        let line = raw_line.split(" #").next().unwrap_or("").trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let expanded = expand(line, &variables).map_err(|(column, message)| error(number, column, message))?;
        let mut words = expanded.splitn(3, char::is_whitespace);
        let first = words.next().unwrap_or("");
        if let Some((name, value)) = first.split_once('=').filter(|(n, _)| is_name(n)) {
            variables.push((name.to_string(), value.to_string()));
            continue;
        }
        let method = words.next().map(str::to_ascii_uppercase);
        let body = words.next().map(str::trim).unwrap_or("");
        let (server, path) = split_url(first).map_err(|m| error(number, 1, format!("'{first}' {m}")))?;
        if let Some((offset, message)) = bad_in_target(&path) {
            return Err(error(number, first.len() - path.len() + offset + 1, format!("'{first}': {message}")));
        }
        match &origin {
            Some(seen) if *seen != server => {
                return Err(error(
                    number,
                    1,
                    format!("'{first}' is not on {seen}: every URL of a run goes to one server"),
                ));
            }
            _ => origin = Some(server),
        }
        let (method, body, content_type) = match method.as_deref() {
            None => ("GET".to_string(), String::new(), None),
            Some("POST" | "PUT" | "PATCH") => {
                let body = match body.strip_prefix('<') {
                    Some(name) => std::fs::read_to_string(dir.join(name.trim())).map_err(|e| {
                        error(
                            number,
                            1,
                            format!(
                                "cannot read the body file '{}' ({e}); paths are relative to {}",
                                name.trim(),
                                dir.display()
                            ),
                        )
                    })?,
                    None => body.to_string(),
                };
                let kind = if body.trim_start().starts_with('{') {
                    "application/json"
                } else {
                    "application/x-www-form-urlencoded"
                };
                (method.unwrap_or_default(), body, Some(kind))
            }
            Some("GET" | "HEAD" | "DELETE") => (method.unwrap_or_default(), String::new(), None),
            Some(other) => {
                return Err(error(
                    number,
                    first.len() + 2,
                    format!("'{other}' is not a method siege knows: use GET, POST or PUT"),
                ));
            }
        };
        requests.push(Request {
            name: format!("{method} {path}"),
            method,
            target: Template::literal(&path),
            headers: content_type.map(|t| ("Content-Type".to_string(), Template::literal(t))).into_iter().collect(),
            body: Template::literal(&body),
            weight: 1.0,
            expect: Expect::default(),
            extract: Vec::new(),
            follow_redirects: true,
        });
    }
    let base = match (base, origin) {
        (Some(url), _) => {
            split_url(url).map(|(server, _)| server).map_err(|m| error(0, 0, format!("the URL '{url}' {m}")))?
        }
        (None, Some(server)) => server,
        (None, None) => return Err(error(text.lines().count().max(1), 1, "no URLs in the file".to_string())),
    };
    Ok(Scenario {
        requests,
        sessions: Vec::new(),
        phases: Vec::new(),
        variables: Vec::new(),
        initial: Vec::new(),
        base,
    })
}

/// The longest a line may grow by its variables: far above any URL, far below what a file of variables that each
/// double the last could otherwise make (2 to the power of its lines).
const MOST_EXPANDED: usize = 1 << 20;

/// Replaces each `$(NAME)` and `${NAME}` of `line` by the value last given to NAME; an unknown name, or a line
/// growing past [`MOST_EXPANDED`], is an error: the column of the variable and what to do.
fn expand(line: &str, variables: &[(String, String)]) -> Result<String, (usize, String)> {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = [rest.find("$("), rest.find("${")].into_iter().flatten().min() {
        let close = if rest[start + 1..].starts_with('(') { ')' } else { '}' };
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find(close).unwrap_or(after.len());
        let name = &after[..end];
        let column = line.len() - rest.len() + start + 1;
        let value = variables.iter().rev().find(|(n, _)| n == name).ok_or_else(|| {
            (column, format!("unknown variable '{name}': define it on an earlier line as {name}=value"))
        })?;
        if out.len() + value.1.len() > MOST_EXPANDED {
            return Err((
                column,
                format!("with '{name}' the line grows longer than {MOST_EXPANDED} bytes: give its value directly"),
            ));
        }
        out.push_str(&value.1);
        rest = after.get(end + 1..).unwrap_or("");
    }
    out.push_str(rest);
    Ok(out)
}

fn is_name(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// `http://host:port/path?q` (or https://) into (`http://host:port`, `/path?q`), the path as written.
fn split_url(url: &str) -> Result<(String, String), &'static str> {
    let server = origin(url)?;
    let rest = url.split_once("://").map_or("", |(_, rest)| rest);
    let path = rest.find('/').map_or("/", |slash| &rest[slash..]);
    Ok((server, path.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_siege_lines() {
        let dir = std::env::temp_dir();
        std::fs::write(dir.join("shootout-urls-body.json"), "{\"a\":1}").unwrap();
        let text = "# a comment\nHOST=http://127.0.0.1:8080\n\n$(HOST)/index.html\n${HOST}/login POST user=alice&pw=x\n$(HOST)/api PUT <shootout-urls-body.json\n";
        let s = parse_urls(text, "urls.txt", &dir, None).unwrap();
        assert_eq!(s.base, "http://127.0.0.1:8080");
        assert_eq!(s.requests.len(), 3);
        assert_eq!(s.requests[0].name, "GET /index.html");
        assert_eq!(
            (s.requests[1].method.as_str(), s.requests[1].body.clone()),
            ("POST", Template::literal("user=alice&pw=x"))
        );
        assert_eq!(s.requests[2].body, Template::literal("{\"a\":1}"));
        assert_eq!(s.requests[2].headers[0].1, Template::literal("application/json"));
    }

    #[test]
    fn errors_name_the_line() {
        let dir = std::env::temp_dir();
        let unknown = parse_urls("http://a:1/\n$(NOPE)/x\n", "u.txt", &dir, None).unwrap_err().to_string();
        assert!(unknown.starts_with("u.txt:2:1: unknown variable 'NOPE'"), "{unknown}");
        let two = parse_urls("http://a:1/\nhttp://b:2/\n", "u.txt", &dir, None).unwrap_err().to_string();
        assert!(two.starts_with("u.txt:2:1: 'http://b:2/' is not on http://a:1"), "{two}");
        let method = parse_urls("http://a:1/x FETCH\n", "u.txt", &dir, None).unwrap_err().to_string();
        assert!(method.starts_with("u.txt:1:14: 'FETCH' is not a method"), "{method}");
        assert!(parse_urls("# nothing\n", "u.txt", &dir, None).is_err());
        let escape = parse_urls("http://a:1/50%\n", "u.txt", &dir, None).unwrap_err().to_string();
        assert!(escape.starts_with("u.txt:1:14: 'http://a:1/50%': '%' must begin an escape"), "{escape}");
        let ftp = parse_urls("ftp://a:1/\n", "u.txt", &dir, None).unwrap_err().to_string();
        assert!(ftp.starts_with("u.txt:1:1: 'ftp://a:1/' is not http:// or https://"), "{ftp}");
    }

    #[test]
    fn an_https_server_keeps_its_scheme() {
        let s =
            parse_urls("https://127.0.0.1:8443/a?b=1\nhttps://127.0.0.1:8443\n", "u.txt", &std::env::temp_dir(), None)
                .unwrap();
        assert_eq!(s.base, "https://127.0.0.1:8443");
        assert_eq!((s.requests[0].name.as_str(), s.requests[1].name.as_str()), ("GET /a?b=1", "GET /"));
    }

    #[test]
    fn both_forms_of_variable_expand_in_the_order_written() {
        let s = parse_urls("H=http://a:1\nP=x\n${H}/$(P)/${P}\n", "u.txt", &std::env::temp_dir(), None).unwrap();
        assert_eq!(s.requests[0].name, "GET /x/x");
    }

    #[test]
    fn variables_that_double_each_line_stop_at_a_limit_instead_of_filling_memory() {
        let mut text = String::from("V0=0123456789abcdef\n");
        for i in 1..40 {
            text.push_str(&format!("V{i}=${{V{}}}${{V{}}}\n", i - 1, i - 1));
        }
        text.push_str("http://a:1/${V39}\n");
        let error = parse_urls(&text, "u.txt", &std::env::temp_dir(), None).unwrap_err().to_string();
        assert!(error.starts_with("u.txt:"), "{error}");
        assert!(error.contains("longer than"), "{error}");
    }
}
