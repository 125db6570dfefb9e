//! Writing HTML by hand, safely: every text that comes from the database or a request goes
//! through [`escape`] (or [`url_component`] inside a link) before it reaches a page, and
//! every page has the one layout of [`page`], with its CSS inline (no external asset; the
//! one script, of a job's page, is served by this server).

use std::fmt::Write as _;

/// `s` with the five characters that mean something in HTML (text or a quoted attribute)
/// replaced by entities.
pub(super) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `s` percent-encoded for one path segment or query value: every byte but the unreserved
/// ones of RFC 3986 (`A-Z a-z 0-9 - . _ ~`) as `%XX`, so that a `/`, `?`, `#` or `&` in an
/// experiment's name stays inside its segment.
pub(super) fn url_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The page's style: readable tables, the best cell marked, two columns for a comparison,
/// a form's message in red beside its field.
const STYLE: &str = "
body { font-family: sans-serif; margin: 1.5em; color: #222; }
nav a { margin-right: 1.2em; }
table { border-collapse: collapse; margin: 0.8em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; }
td:first-child, th:first-child { text-align: left; }
td strong { color: #0a5; }
.side-by-side { display: grid; grid-template-columns: 1fr 1fr; gap: 2em; }
.side-by-side > section { overflow-x: auto; }
figure { display: inline-block; margin: 0.5em; }
figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
.note { color: #555; }
.error { color: #b00; margin-left: 0.5em; }
form.fields label, form.fields .label { display: inline-block; min-width: 6em; }
form.fields div.checks label { min-width: 0; margin-right: 0.8em; }
progress { width: 24em; }
#failures pre, #log { white-space: pre-wrap; font-size: 0.9em; }
form.fields div { margin: 0.3em 0; }
";

/// A whole page: `title` (plain text, escaped here) and `body` (HTML).
pub(super) fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{} – transputation</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <nav><a href=\"/\">Experiments</a><a href=\"/compare\">Compare</a>\
         <a href=\"/simulate\">Simulate</a><a href=\"/run\">Run</a>\
         <a href=\"/programs\">Programs</a></nav>\n{body}\n</body>\n</html>\n",
        escape(title)
    )
}

/// A table of `headers` (plain text, escaped here) over `rows` (HTML, escaped by the
/// caller), with an `id` for tests and links.
pub(super) fn table(id: &str, headers: &[String], rows: &[Vec<String>]) -> String {
    let mut s = format!("<table id=\"{}\">\n<thead><tr>", escape(id));
    for h in headers {
        let _ = write!(s, "<th>{}</th>", escape(h));
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        s.push_str("<tr>");
        for cell in row {
            let _ = write!(s, "<td>{cell}</td>");
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody>\n</table>\n");
    s
}

/// The messages about `field` among a form's `errors`, each in a `<span class="error">`
/// whose id is `ID-error`, for the page to put beside the field.
pub(super) fn messages_beside(errors: &[(&'static str, String)], field: &str, id: &str) -> String {
    errors
        .iter()
        .filter(|(f, _)| *f == field)
        .map(|(_, m)| {
            format!(
                "<span class=\"error\" id=\"{id}-error\">{}</span>",
                escape(m)
            )
        })
        .collect()
}

/// A paragraph of plain text.
pub(super) fn para(text: &str) -> String {
    format!("<p>{}</p>\n", escape(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_from_the_database_cannot_open_a_tag_or_leave_an_attribute() {
        assert_eq!(
            escape(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
        let t = table("t", &["<b>".into()], &[vec!["1".into()]]);
        assert!(
            t.contains("<th>&lt;b&gt;</th>") && t.contains("<td>1</td>"),
            "{t}"
        );
        assert!(page("a<b", "").contains("<title>a&lt;b – transputation</title>"));
    }

    #[test]
    fn a_name_stays_in_its_segment() {
        assert_eq!(
            url_component("wan/100ms?x=1&y#z"),
            "wan%2F100ms%3Fx%3D1%26y%23z"
        );
        assert_eq!(url_component("paper-table4_v1.2~"), "paper-table4_v1.2~");
        assert_eq!(url_component("é "), "%C3%A9%20");
    }
}
