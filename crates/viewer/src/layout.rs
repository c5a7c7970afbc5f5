//! The frame every page shares, and HTML escaping. No inline script or style: the
//! Content-Security-Policy allows only the viewer's own files.

/// `text` safe inside HTML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
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

/// `value` as one query-string value.
pub fn query_value(value: &str) -> String {
    form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// A command line as a shell reads it back: each word quoted where it needs to be.
pub fn command_line(words: &[String]) -> String {
    words.iter().map(|w| shell_word(w)).collect::<Vec<_>>().join(" ")
}

fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=,:#@%+".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// What a page is made of besides its body.
pub struct Frame<'a> {
    pub title: &'a str,
    /// The command lines that print the same in a terminal (the first is the page's own).
    pub commands: Vec<String>,
    /// The report downloads' query (`side=..&baseline=..`), if the page has any.
    pub downloads: Option<String>,
}

/// The page: header and navigation, the terminal's command, the body, the downloads.
pub fn page(frame: &Frame, body: &str) -> String {
    let mut html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><title>{title} - iomatrix</title>\
         <link rel=\"stylesheet\" href=\"/assets/viewer.css\"/><link rel=\"stylesheet\" href=\"/assets/uPlot.min.css\"/>\
         <script src=\"/assets/uPlot.iife.min.js\" defer></script><script src=\"/assets/viewer.js\" defer></script>\
         </head><body>\n<header><a href=\"/runs\" class=\"home\">iomatrix</a> <nav><a href=\"/runs\">runs</a></nav>\
         <h1>{title}</h1></header>\n<main>\n",
        title = escape(frame.title)
    );
    if let Some((first, others)) = frame.commands.split_first() {
        html += &format!(
            "<p class=\"cli\">In a terminal: <code id=\"cli\">{}</code>{}</p>\n",
            escape(first),
            others.iter().map(|c| format!(" · <code class=\"cli-more\">{}</code>", escape(c))).collect::<String>()
        );
    }
    html += body;
    if let Some(query) = &frame.downloads {
        html += "<p class=\"downloads\">Report (as <code>iomatrix report</code> writes it):";
        for ext in ["html", "xlsx", "csv", "md", "json"] {
            html += &format!(" <a class=\"download\" href=\"/download/report.{ext}?{}\">.{ext}</a>", escape(query));
        }
        html += "</p>\n";
    }
    html + "</main>\n</body></html>\n"
}

/// A `<pre>` of a command's output, with its id.
pub fn pre(id: &str, text: &str) -> String {
    format!("<pre id=\"{id}\">{}</pre>\n", escape(text))
}

#[cfg(test)]
mod tests {
    #[test]
    fn text_and_command_lines_are_escaped() {
        assert_eq!(super::escape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
        let words: Vec<String> = ["iomatrix", "--db", "/tmp/my db.sqlite", "compare", "server=a b", "it's"]
            .iter()
            .map(|s| (*s).to_string())
            .collect();
        assert_eq!(super::command_line(&words), r"iomatrix --db '/tmp/my db.sqlite' compare 'server=a b' 'it'\''s'");
    }
}
