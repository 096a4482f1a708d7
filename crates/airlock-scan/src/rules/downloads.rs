//! Downloads that code runs: a file a download writes that a later line makes executable, runs, or names in a tool's
//! setting that runs it; and where a download comes from.

re!(
    DOWNLOAD_TO,
    r#"(?i)\b(curl|wget|iwr|Invoke-WebRequest)\b[^\n]*?(\s-[a-z]*o\s+|--output\s+|--output-document[= ]|-OutFile\s+|>\s*)['"]?([\w./~${}-]+)"#
);

re!(
    /// `urlretrieve(URL, NAME)`: a download into the file a name holds.
    PY_DOWNLOAD_TO,
    r"\burlretrieve\(\s*[^,]+,\s*([A-Za-z_][\w.]*)\s*\)"
);

re!(
    RELEASE_HOST,
    r"(?i)https://(github\.com/[\w.-]+/[\w.-]+/releases/|raw\.githubusercontent\.com/[\w.-]+/[\w.-]+/|objects\.githubusercontent\.com/|gitlab\.com/[\w./-]+/-/releases/|gitlab\.com/[\w.-]+/[\w.-]+/(-/)?raw/|dl\.google\.com/|storage\.googleapis\.com/|releases\.hashicorp\.com/|bootstrap\.pypa\.io/|get\.helm\.sh/|dl\.k8s\.io/|nodejs\.org/dist/|www\.python\.org/ftp/|static\.rust-lang\.org/)"
);

/// Whether a download comes from a project's release page or repository on a well-known host (how many tools are
/// installed).
pub(super) fn from_release_host(line: &str) -> bool {
    RELEASE_HOST.is_match(line)
}

re!(
    PY_RUN_CALL,
    r"\b(?:os\.chmod\(|(?:subprocess\.\w+|os\.exec\w*|os\.spawn\w*)\(\s*\[?|os\.system\()\s*"
);

re!(
    /// A script handed to a shell in the foreground, the whole line: `sh setup.sh`, `sudo bash ./install.sh --yes`.
    SHELL_RUNS_SCRIPT,
    r"^\s*(?:\$\s+)?(?:sudo\s+(?:-E\s+)?)?(?:ba|z|da)?sh\s+[\w./~${}-]+\.sh(?:\s+[\w=./-]+)*\s*$"
);

/// Whether a line runs a downloaded script with a shell, in the foreground and nothing else.
pub(super) fn script_run_by_shell(line: &str) -> bool {
    SHELL_RUNS_SCRIPT.is_match(line)
}

re!(
    /// A tool's setting that names a file it runs: as the tool itself (Yarn's `yarnPath`), or with every install or
    /// command (a pnpmfile, npm's `init-module`, `script-shell`, `onload-script`).
    RUNS_AS_SET,
    r"\byarnPath\b|\bpnpmfile\b|\binit[.-]module\b|\bscript-shell\b|\bonload-script\b"
);

/// A download to a file that a later line of the same code makes executable or runs: (download line, run line).
pub(super) fn download_then_run(code: &str, first_line: u32) -> Option<(u32, u32)> {
    let lines: Vec<&str> = code.lines().collect();
    let at = |i: usize| first_line + u32::try_from(i).unwrap_or(0);
    // Python: `urlretrieve(URL, path)`, then the same name made executable or started.
    for (i, line) in lines.iter().enumerate() {
        let Some(c) = PY_DOWNLOAD_TO.captures(line) else {
            continue;
        };
        let name = &c[1];
        // The name as the first argument of a call that makes a file executable or starts it.
        let runs = |line: &str| {
            PY_RUN_CALL.find_iter(line).any(|m| {
                line[m.end()..]
                    .strip_prefix(name)
                    .is_some_and(|rest| !rest.starts_with(|ch: char| ch.is_alphanumeric() || ch == '_'))
            })
        };
        if let Some(j) = (i..lines.len().min(i + 40)).find(|j| runs(lines[*j])) {
            return Some((at(i), at(j)));
        }
    }
    for (i, line) in lines.iter().enumerate() {
        let Some(c) = DOWNLOAD_TO.captures(line) else {
            continue;
        };
        let file = c[3].trim_end_matches(['"', '\'']).to_owned();
        let name = file.rsplit('/').next().unwrap_or(&file).to_owned();
        // Output thrown away (`command -v curl &>/dev/null`) is no download.
        // Nor is standard output (`-o -`).
        if name.is_empty() || name == "-" || file.starts_with("/dev/") {
            continue;
        }
        // The same line after the download (`curl -o /tmp/p URL && sh /tmp/p`), then the lines after it.
        let rest = c.get(0).map_or("", |m| &line[m.end()..]);
        for (j, later) in
            std::iter::once((i, rest)).chain(lines.iter().copied().enumerate().skip(i + 1).take(30))
        {
            // A setting that has a tool run the file as itself or with every command (Yarn's `yarnPath`, a
            // pnpmfile, npm's `init-module`) runs it.
            let registered = RUNS_AS_SET.is_match(later) && later.contains(name.as_str());
            let runs = registered
                || later.contains(&format!("chmod +x {file}"))
                || later.contains(&format!("chmod 755 {file}"))
                || later.contains(&format!("chmod 777 {file}"))
                || later.contains(&format!("chmod u+x {file}"))
                || later.split([';', '&', '|']).any(|cmd| {
                    // Quotes around a path change nothing of what runs (`source "$T/env.sh"`).
                    // `command .` and `builtin source` are the same source.
                    let mut words = cmd
                        .split_whitespace()
                        .map(|w| w.trim_matches(['"', '\'']))
                        .skip_while(|w| matches!(*w, "command" | "builtin"));
                    let first = words.next().unwrap_or_default();
                    let second = words.next().unwrap_or_default();
                    // A download's address continued on the next line is not a run of it.
                    first == file
                        || first.ends_with(&format!("/{name}")) && !first.contains("://")
                        || (matches!(
                            first,
                            "bash" | "sh" | "zsh" | "python" | "python3" | "node" | "source" | "."
                        ) && (second == file || second.ends_with(&format!("/{name}"))))
                });
            if runs {
                return Some((
                    first_line + u32::try_from(i).unwrap_or(0),
                    first_line + u32::try_from(j).unwrap_or(0),
                ));
            }
        }
    }
    None
}
