//! [`Template`]: text with `${name}` references to variables, split once into pieces.

/// Part of a template.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Piece {
    /// Literal text.
    Text(String),
    /// The value of a variable, by id.
    Variable(usize),
}

/// Text with variable references, ready to render.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Template {
    /// The pieces, in order.
    pub pieces: Vec<Piece>,
}

/// A reference that could not be resolved: the name and its byte offset in the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownVariable {
    /// The name inside `${…}` (or the unterminated rest of the text).
    pub name: String,
    /// Byte offset of the `$`.
    pub offset: usize,
}

impl Template {
    /// Splits `text` into pieces; `id_of` maps a variable name to its id.
    pub fn parse(text: &str, id_of: impl Fn(&str) -> Option<usize>) -> Result<Template, UnknownVariable> {
        let mut pieces = Vec::new();
        let mut rest = text;
        let mut offset = 0;
        while let Some(start) = rest.find("${") {
            if start > 0 {
                pieces.push(Piece::Text(rest[..start].to_string()));
            }
            let after = &rest[start + 2..];
            let end =
                after.find('}').ok_or_else(|| UnknownVariable { name: after.to_string(), offset: offset + start })?;
            let name = &after[..end];
            let id = id_of(name).ok_or_else(|| UnknownVariable { name: name.to_string(), offset: offset + start })?;
            pieces.push(Piece::Variable(id));
            let used = start + 2 + end + 1;
            offset += used;
            rest = &rest[used..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Text(rest.to_string()));
        }
        Ok(Template { pieces })
    }

    /// A template of plain text.
    pub fn literal(text: &str) -> Template {
        Template { pieces: if text.is_empty() { vec![] } else { vec![Piece::Text(text.to_string())] } }
    }

    /// True when the template uses no variables.
    pub fn is_static(&self) -> bool {
        self.pieces.iter().all(|p| matches!(p, Piece::Text(_)))
    }

    /// True when it begins with a variable: rendered, it may be a whole URL (checked when used).
    pub fn starts_with_variable(&self) -> bool {
        matches!(self.pieces.first(), Some(Piece::Variable(_)))
    }

    /// Appends the rendered text to `out`, taking variable values from `values` (by id).
    pub fn render_into(&self, values: &[String], out: &mut Vec<u8>) {
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => out.extend_from_slice(text.as_bytes()),
                Piece::Variable(id) => out.extend_from_slice(values.get(*id).map_or("", String::as_str).as_bytes()),
            }
        }
    }

    /// Appends the rendered text of a request line's target or a header's value to `out`: a variable's CR, LF and
    /// NUL bytes are left out, so that a value taken from a response (a body's text may hold a line break) can never
    /// end the line and start a header of its own.
    pub fn render_line_into(&self, values: &[String], out: &mut Vec<u8>) {
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => out.extend_from_slice(text.as_bytes()),
                Piece::Variable(id) => {
                    let value = values.get(*id).map_or("", String::as_str);
                    out.extend(value.bytes().filter(|b| !matches!(b, b'\r' | b'\n' | 0)));
                }
            }
        }
    }

    /// Length of the rendered text.
    pub fn rendered_len(&self, values: &[String]) -> usize {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Text(text) => text.len(),
                Piece::Variable(id) => values.get(*id).map_or(0, String::len),
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(name: &str) -> Option<usize> {
        ["token", "id"].iter().position(|n| *n == name)
    }

    #[test]
    fn splits_and_renders() {
        let t = Template::parse("/items/${id}?t=${token}&x", ids).unwrap();
        assert_eq!(t.pieces.len(), 5);
        let mut out = Vec::new();
        t.render_into(&["abc".into(), "42".into()], &mut out);
        assert_eq!(out, b"/items/42?t=abc&x");
        assert_eq!(t.rendered_len(&["abc".into(), "42".into()]), out.len());
        assert!(Template::parse("/plain", ids).unwrap().is_static());
    }

    #[test]
    fn a_value_in_a_line_cannot_break_it() {
        let t = Template::parse("a ${token} b", ids).unwrap();
        let mut out = Vec::new();
        t.render_line_into(&["x\r\nX-Injected: 1\0".into()], &mut out);
        assert_eq!(out, b"a xX-Injected: 1 b");
    }

    #[test]
    fn unknown_and_unterminated_references() {
        assert_eq!(Template::parse("/a/${nope}", ids), Err(UnknownVariable { name: "nope".into(), offset: 3 }));
        assert!(Template::parse("/a/${id", ids).is_err());
    }
}
