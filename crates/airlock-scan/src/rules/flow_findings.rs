//! The flows found in a piece of code, made findings: a secret that reaches a send, fetched or unpacked code that
//! is run, a harvest of secrets, each citing both ends.

use super::*;

impl FileScan<'_> {
    /// Secrets that reach a network send, and downloads run later, in one piece of code.
    pub(super) fn flows(&mut self, code: &str, first_line: u32, text: &str) {
        let line_text = |n: u32| {
            text.lines()
                .nth(n.saturating_sub(first_line) as usize)
                .unwrap_or_default()
                .trim()
                .to_owned()
        };
        // A critical finding at the line `to` that joins the line `from` in its evidence.
        let joined = |rule: &str, from: u32, to: u32, message: String| Finding {
            rule: rule.to_owned(),
            severity: Severity::Critical,
            file: self.file.to_owned(),
            line: to,
            evidence: visible(
                &format!("{} <- line {from}: {}", line_text(to), line_text(from)),
                240,
            ),
            message,
            context: FindingContext::Code,
        };
        // The code's statements, split once for every flow below.
        let statements = flow::statements(code);
        let mut found: Vec<Finding> = flow::secret_flows_in(&statements, first_line)
            .into_iter()
            .map(|(from, what, to)| {
                joined(
                    "flow/secret-to-network",
                    from,
                    to,
                    format!("Reads {what} (line {from}) and sends it over the network (line {to})."),
                )
            })
            .collect();
        if let Some((from, to)) = fetched::fetched_and_run(&statements, first_line) {
            found.push(joined(
                "exec/remote-code",
                from,
                to,
                format!(
                    "Runs code it fetched from the network (fetched at line {from}, run at line {to}): whoever \
                     serves that address decides what runs."
                ),
            ));
        }
        if let Some((from, to)) = fetched::unpacked_and_run(&statements, first_line) {
            found.push(joined(
                "obfusc/encoded-exec",
                from,
                to,
                format!(
                    "Runs code it unpacked from compressed or encoded bytes (unpacked at line {from}, run at line \
                     {to}): what runs is on no line to read."
                ),
            ));
        }
        if let Some((from, to, names)) = flow::harvest(code, first_line) {
            found.push(joined(
                "secrets/harvest",
                from,
                to,
                format!(
                    "Collects the secrets of several services ({}) from the environment into one payload and \
                     serializes it (line {to}): a harvest.",
                    names.join(", ")
                ),
            ));
        }
        self.out.extend(found);
        if let Some((named, written)) = flow::startup_writes_in(&statements, first_line)
            .into_iter()
            .next()
        {
            // A launch agent or a user service written is installed in plain sight (`persist/scheduler`'s `high`);
            // one that fetches is `persist/scheduled-fetch`.
            // A job on a timer, or a service file the skill ships copied into place (`cp scripts/x.plist
            // ~/Library/LaunchAgents/`): what runs later is in plain sight, reviewed with the skill.
            let scheduled = (flow::scheduled(&line_text(named))
                || flow::copies_own_service(&line_text(written)))
                && !signs::FETCHES.is_match(&line_text(written));
            self.out.push(Finding {
                rule: "persist/startup-write".to_owned(),
                severity: if scheduled { Severity::High } else { Severity::Critical },
                file: self.file.to_owned(),
                line: written,
                evidence: visible(&format!("{} <- line {named}: {}", line_text(written), line_text(named)), 240),
                message: format!(
                    "Writes to a file that runs later (a shell start-up file, a git hook, a launch agent, a user \
                     service or a crontab), named on line {named}."
                ),
                context: FindingContext::Code,
            });
        }
        if let Some((download, run)) = flow::download_then_run(code, first_line) {
            // A project's own release page is how many tools are installed: a binary from it is reviewed, not a lure.
            // The download's whole command, over the lines it continues on (`curl -fL -o ocb \` then the URL).
            let mut command = line_text(download);
            let mut next = download;
            while command.ends_with('\\') && next < download + 10 {
                next += 1;
                command = format!("{} {}", command.trim_end_matches('\\'), line_text(next));
            }
            let release = flow::from_release_host(&command);
            // A script handed to a shell in the foreground (`curl -o setup.sh URL` then `sh setup.sh`) is what
            // `curl URL | sh` does in one line: `high`, as `install/pipe-to-shell` is.
            let by_shell = flow::script_run_by_shell(&line_text(run));
            self.out.push(Finding {
                rule: "campaign/download-and-run".to_owned(),
                severity: if release || by_shell {
                    Severity::High
                } else {
                    Severity::Critical
                },
                file: self.file.to_owned(),
                line: download,
                evidence: visible(
                    &format!("{} -> line {run}: {}", line_text(download), line_text(run)),
                    240,
                ),
                message: if by_shell {
                    format!(
                        "Downloads a script (line {download}) that line {run} runs with a shell: the same act as \
                         piping it into one; review the script first."
                    )
                } else {
                    format!("Downloads a file (line {download}) that line {run} makes executable or runs.")
                },
                context: FindingContext::Code,
            });
        }
    }
}
