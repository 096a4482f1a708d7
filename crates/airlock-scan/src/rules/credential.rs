//! Where a request carries its credential: a header (`headers=…`, `-H "Authorization: Bearer $T"`), an `auth=`
//! argument, a `user:token` pair (`curl -u`, `https://user:$T@host`), a `?key=` parameter, a field named as a key
//! (`{"api_key": key}`), or a key an SSH client signs in with (`scp -i "$KEY"`). A secret that stands there is how
//! an API is called; the same secret anywhere else in what is sent (a body, a path, a host name) leaves. Only the
//! secret's own place counts: a credential construct elsewhere on the line (`headers={}` beside `data=token`) says
//! nothing of the secret, so it lowers nothing.

use std::ops::Range;

re!(
    /// A construct whose value that follows is the request's credential: `headers=`, `headers:`, `auth=`,
    /// `'key':`, `params.append('token', …)`.
    VALUE_OF,
    r#"(?i)headers\s*[=:]|auth\s*=|auth:\s|'key'\s*:|\.(?:append|set)\(\s*['"](?:secret|token|key|api_?key|apikey|auth|password|client_secret|access_token)['"]\s*,"#
);
re!(
    /// A credential named inside text: a header's name or scheme (`Authorization: Bearer …`, `X-Api-Key: …`), or a
    /// header given to a client whose name says it carries a token or key (`-H "Circle-Token: $T"`, `--header
    /// "PRIVATE-TOKEN: $T"`).
    IN_TEXT,
    r#"(?i)authorization|bearer|x-api-key|api-key\s*:|(?:\s-H|--header)\s*['"]?[\w-]*(?:token|key|auth|secret)[\w-]*\s*:"#
);
re!(
    /// A `user:secret` pair handed to a client (`curl -u user:$T`, `--user user:$T`): the word after.
    USER_PAIR,
    r"-[a-z]*u\s+\S+:|--user\s"
);
re!(
    /// A key handed to an SSH client as its identity (`scp -i "$KEY"`, `IdentityFile $K`): it signs the login; it is
    /// not sent. The word after the option.
    IDENTITY,
    r#"(?:\b(?:ssh|scp|sftp|rsync|autossh|ssh-add)\b[^\n|;&]*?\s(?:-i|--identity(?:-file)?|--key-file|--private-key(?:-file)?)(?:\s+|=)|\bIdentityFile[=\s]+|\bkey_filename\s*=\s*)()"#
);
re!(
    /// An address's own credential: `https://user:$TOKEN@host`.
    USERINFO,
    r#"://[^/\s:@'"]+:\$\{?[A-Za-z_]\w*\}?@"#
);
re!(
    /// A query parameter named as a credential (`?key=`, `&access_token=`), a format field for one (`token={`,
    /// `apikey=`), or a bot token in its service's address (`api.telegram.org/bot$T`).
    PARAM,
    r"(?i)[?&](?:key|api_?key|apikey|api-key|appid|app_?id|secret|token|access_token|client_secret|auth)=|token=\{|apikey=|api\.telegram\.org/bot[$\{]"
);
re!(
    /// A credential handed to a client's constructor as a shorthand property (`new Stitch({ apiKey })`,
    /// `new Client({ baseUrl, token })`); the same name in any other object (a body) is not one.
    SHORTHAND,
    r"\bnew\s+[A-Z][\w.]*\(\s*\{(?:[^}]*?,)?\s*((?i:api_?key|access_?token|auth_?token|token|secret|password|credentials?))\s*[,}]"
);
re!(
    FIELD,
    r#"(?i)(key|token|auth|secret|appid|app_id|client_id|password|passwd|credential|signature|connection_?string|dsn|database_?url|db_?url)\w*['"]?\s*[:=]\s*f?['"`]?\s*(Bearer\s+)?(\$\{|\{|\$)?\s*([A-Za-z_][A-Za-z0-9_]*)"#
);

/// Whether `var` is the value of a field named as a credential (`params={"appid": key}`, `api_key=key`,
/// `"token": f"{tok}"`).
pub(super) fn in_field(line: &str, var: &str) -> bool {
    FIELD.captures_iter(line).any(|c| &c[4] == var)
}

/// The parts of `line` that are a request's credential.
pub(super) fn places(line: &str) -> Vec<Range<usize>> {
    // JSON written inside a shell string (`-d "{\"password\":\"$P\"}"`) is read as the JSON it sends; each `\"`
    // becomes a quote and a space, so every place found is at the same offsets of `line`.
    let unescaped = line.replace("\\\"", "\" ");
    let line = unescaped.as_str();
    let mut out = Vec::new();
    for m in VALUE_OF.find_iter(line) {
        out.push(m.start()..expression_end(line, m.end()));
    }
    for m in IN_TEXT.find_iter(line) {
        out.push(m.start()..text_end(line, m.end()));
    }
    for m in USER_PAIR.find_iter(line) {
        out.push(m.start()..word_end(line, m.end()));
    }
    for c in IDENTITY.captures_iter(line) {
        let at = c.get(1).map_or(line.len(), |m| m.start());
        out.push(at..word_end(line, at));
    }
    // A field named as a credential (`client_secret: process.env.CLIENT_SECRET` in an OAuth token request,
    // `api_key=key`): its value.
    // Only a field of an object or an argument of a call (after `{`, `(` or `,`), not an assignment to a name.
    for m in FIELD.find_iter(line) {
        // The key's own start (`client_` of `client_secret`), then spaces and its quote.
        let before = line[..m.start()]
            .trim_end_matches(|c: char| c.is_alphanumeric() || c == '_')
            .trim_end_matches([' ', '\t', '\'', '"']);
        if before.ends_with(['{', '(', ',']) {
            // The value is read from its own start: a match can end inside the value's quotes (`Key='k'`), and a
            // quote read as opening there would make the rest of the line the credential's.
            let value = m.as_str().find([':', '=']).map_or(m.end(), |i| m.start() + i + 1);
            out.push(m.start()..expression_end(line, value));
        }
    }
    for c in SHORTHAND.captures_iter(line) {
        if let Some(name) = c.get(1) {
            out.push(name.range());
        }
    }
    for m in USERINFO.find_iter(line) {
        out.push(m.range());
    }
    for m in PARAM.find_iter(line) {
        let end = line[m.end()..]
            .find(|c: char| c == '&' || c == '#' || c.is_whitespace() || "'\"`".contains(c))
            .map_or(line.len(), |i| m.end() + i);
        out.push(m.start()..end);
    }
    out
}

/// Whether the text at `at` lies inside one of `places`.
pub(super) fn inside(places: &[Range<usize>], at: &Range<usize>) -> bool {
    places.iter().any(|p| p.start <= at.start && at.end <= p.end)
}

/// Whether the name `var` is on the line, and only where the request's credential goes.
pub(super) fn only_as_credential(line: &str, var: &str) -> bool {
    let places = places(line);
    let mut uses = line
        .match_indices(var)
        .filter(|(at, _)| super::flow::whole_word(line, *at, var.len()))
        .peekable();
    uses.peek().is_some() && uses.all(|(at, _)| inside(&places, &(at..at + var.len())))
}

/// Where the expression that starts at `from` ends: a `,` or `;` outside brackets and quotes, a bracket that
/// closes one opened before `from`, or the line's end.
fn expression_end(line: &str, from: usize) -> usize {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    for (i, c) in line[from..].char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => {
                depth -= 1;
                if depth < 0 {
                    return from + i;
                }
            }
            (None, ',' | ';') if depth == 0 => return from + i,
            _ => {}
        }
    }
    line.len()
}

/// Where a credential named in text ends. A mapping's key (`"Authorization": value`) is followed by its value; a
/// header written as text (`"Authorization: Bearer $T"`) runs to the end of its quotes, or of the line.
fn text_end(line: &str, from: usize) -> usize {
    let rest = &line[from..];
    let after_quote = rest.strip_prefix(['\'', '"', '`']).unwrap_or(rest);
    let trimmed = after_quote.trim_start();
    if after_quote.len() < rest.len() {
        if let Some(value) = trimmed.strip_prefix([':', '=', ',']) {
            let at = line.len() - value.len();
            return expression_end(line, at);
        }
    }
    // A command substituted inside the header (`"Authorization: Basic $(printf '%s:%s' "$ID" "$SECRET" | base64)"`)
    // is part of its value: its own quotes do not end the header.
    let mut depth = 0usize;
    let mut chars = rest.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '$' if chars.peek().is_some_and(|(_, n)| *n == '(') => {
                chars.next();
                depth += 1;
            }
            '(' if depth > 0 => depth += 1,
            ')' if depth > 0 => depth -= 1,
            '\'' | '"' | '`' if depth == 0 => return from + i,
            _ => {}
        }
    }
    line.len()
}

/// Where the word (a run without white space) that starts at or after `from` ends.
fn word_end(line: &str, from: usize) -> usize {
    let rest = &line[from..];
    let start = rest.len() - rest.trim_start().len();
    rest[start..]
        .find(char::is_whitespace)
        .map_or(line.len(), |i| from + start + i)
}
