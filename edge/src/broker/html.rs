//! Text out of an HTML page, for the model: scripts, styles and tags
//! dropped, common entities decoded, whitespace collapsed.

pub fn to_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let lower = html.to_ascii_lowercase();
    let mut i = 0;
    while i < html.len() {
        if lower[i..].starts_with("<script") || lower[i..].starts_with("<style") {
            let close = if lower[i..].starts_with("<script") {
                "</script>"
            } else {
                "</style>"
            };
            i = lower[i..]
                .find(close)
                .map_or(html.len(), |j| i + j + close.len());
            continue;
        }
        if html[i..].starts_with('<') {
            let end = html[i..].find('>').map_or(html.len(), |j| i + j + 1);
            let tag = &lower[i..end];
            if [
                "<br", "<p", "</p", "<div", "</div", "<li", "<h", "</h", "<tr",
            ]
            .iter()
            .any(|t| tag.starts_with(t))
            {
                out.push('\n');
            }
            i = end;
            continue;
        }
        let ch = html[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    let decoded = out
        .replace("&nbsp;", " ")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    decoded
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_the_words_drops_the_markup() {
        let html = "<html><head><style>p{}</style><script>alert(1)</script></head><body><h1>Title</h1><p>One &amp; two</p>tail</body></html>";
        assert_eq!(super::to_text(html), "Title\nOne & two\ntail");
    }
}
