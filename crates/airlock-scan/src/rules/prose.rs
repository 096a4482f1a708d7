//! How markdown is read: SKILL.md's body and the markdown it points to, segment by segment (code blocks, prose
//! lines, comments), with what a prose line's label, list or order before it makes of the lines after it, and each
//! prose line also read joined with the line that continues its sentence and through its formatting.

use super::*;

/// The prose line that continues a line's sentence, with its inline code spans.
type Continuation = (String, Vec<(usize, usize)>);

/// Whether `next` continues the sentence of `line` (a wrapped paragraph or list item), rather than starting a new
/// item, a heading, a table row or a paragraph.
fn continues(line: &str, next: &str) -> bool {
    let t = next.trim_start();
    !line.trim().is_empty()
        && !line.trim_start().starts_with(['#', '|'])
        && !t.is_empty()
        && !line.trim_end().ends_with([':', '|'])
        && !LIST_ITEM.is_match(next)
        && !t.starts_with(['#', '|', '>', '<'])
}

re!(
    /// A markdown list item, or a line of a block quote (what a label introduces the same way: `A typical lure
    /// reads:` then `> Prerequisite: …`).
    pub(super) LIST_ITEM, r"^\s*([-*+]|\d+[.)]|>)\s");

re!(
    /// Prose that orders what follows it done: `do the setup below`, `Run each line of the list below`, `Execute the
    /// following steps`.
    ORDER_BELOW,
    r"(?i)\b(?:run|execute|do|perform|complete|follow|apply|paste|type|carry\s+out)\b[^.:;]{0,60}?\b(?:below|following|each\s+(?:line|row|step|item|command))\b"
);

/// The `description` of SKILL.md's front matter (`yaml` starts at line 2) as text, with the line it starts on: a
/// plain, quoted or block (`|`, `>`) value, its lines kept apart.
pub(super) fn description_of(yaml: &str) -> Option<(u32, String)> {
    let lines: Vec<&str> = yaml.lines().collect();
    let at = lines.iter().position(|l| l.starts_with("description:"))?;
    let first = lines[at]["description:".len()..].trim();
    let block = first.is_empty() || first.starts_with(['|', '>']);
    let mut text = if block { String::new() } else { first.to_owned() };
    for l in &lines[at + 1..] {
        // The value goes on over indented lines; the next key ends it.
        if !l.starts_with([' ', '\t']) && !l.trim().is_empty() {
            break;
        }
        text.push('\n');
        text.push_str(l.trim());
    }
    let text = text.trim_matches(|c: char| c == '\'' || c == '"' || c.is_whitespace());
    let first_line = u32::try_from(at).ok()? + 2 + u32::from(block);
    (!text.is_empty()).then(|| (first_line, text.to_owned()))
}

impl FileScan<'_> {
    /// A prose line, then the same line read through its formatting (`Ignore all *previous* instructions`,
    /// `Do&nbsp;not tell the user`): what the formatting hid from a rule is added.
    fn prose_line(&mut self, line: u32, text: &str, inline_code: &[(usize, usize)]) {
        let start = self.out.len();
        self.line(line, text, Place::ProseLine, inline_code);
        let Some((plain, spans)) = crate::markdown::plain_prose(text, inline_code) else {
            return;
        };
        let raw = self.out.len();
        self.line(line, &plain, Place::ProseLine, &spans);
        let added: Vec<Finding> = self.out.drain(raw..).collect();
        for f in added {
            // A rule the line matched as written was weighed there, with its cues (`**Credential access.**
            // Scripts that open …` names a kind of behaviour): only what the formatting hid from a rule is added.
            if !(start..raw).any(|i| self.out[i].rule == f.rule && self.out[i].line == f.line) {
                self.out.push(f);
            }
        }
    }

    /// Reads a prose line joined with the line that continues it, keeping only what neither line matches alone
    /// (a phrase split by the wrap), cited at the first line.
    fn across_lines(
        &mut self,
        line: u32,
        text: &str,
        code: &[(usize, usize)],
        next: &str,
        next_code: &[(usize, usize)],
    ) {
        let compiled = &*COMPILED;
        let joined = format!("{} {}", text.trim_end(), next.trim_start());
        let matched = compiled.set.matches(&joined);
        // Most joined lines match nothing: the two lines alone are matched again only when they do.
        if !matched.matched_any() {
            return;
        }
        let alone: HashSet<usize> = compiled
            .set
            .matches(text)
            .iter()
            .chain(compiled.set.matches(next).iter())
            .collect();
        if !matched.iter().any(|i| !alone.contains(&i)) {
            return;
        }
        let head = text.trim_end().len();
        let lead = next.len() - next.trim_start().len();
        let mut spans: Vec<(usize, usize)> = code.iter().copied().filter(|(_, e)| *e <= head).collect();
        spans.extend(
            next_code
                .iter()
                .filter(|(s, _)| *s >= lead)
                .map(|(s, e)| (s - lead + head + 1, e - lead + head + 1)),
        );
        let start = self.out.len();
        self.line(line, &joined, Place::ProseLine, &spans);
        let ids: HashSet<&str> = alone.iter().map(|i| RULES[*i].id).collect();
        let mut kept = self.out.split_off(start);
        kept.retain(|f| !ids.contains(f.rule.as_str()));
        self.out.extend(kept);
    }

    pub(super) fn markdown(&mut self, body: &str, first_line: u32, facts: &mut Facts) {
        let all = segments(body, first_line);
        // For each code block, whether one of the two prose lines after it asks to run what it shows (`Run the
        // commands above`): that undoes what its labels say.
        let asked_after: Vec<bool> = (0..all.len())
            .map(|i| {
                matches!(all[i], Segment::Code { .. })
                    && all[i + 1..]
                        .iter()
                        .filter_map(|s| match s {
                            Segment::Prose { text, .. } if !text.trim().is_empty() => Some(text.as_str()),
                            _ => None,
                        })
                        .take(2)
                        .any(|t| RUN_SHOWN.is_match(t))
            })
            .collect();
        // For each prose line, the line that continues its sentence when the text is wrapped (the next line of the
        // same paragraph or list item): a line break costs a hostile skill nothing, so a phrase split over two lines
        // is read whole.
        let continued: Vec<Option<Continuation>> = (0..all.len())
            .map(|i| match (&all[i], all.get(i + 1)) {
                (
                    Segment::Prose { line, text, .. },
                    Some(Segment::Prose {
                        line: next_line,
                        text: next,
                        inline_code,
                    }),
                ) if *next_line == line + 1 && continues(text, next) => {
                    Some((next.clone(), inline_code.clone()))
                }
                _ => None,
            })
            .collect();
        // The last two lines of prose before a code block: the last, when it ends in `:`, is its label
        // (`Attackers extract credentials via:`); both say what it is written into.
        // A sentence wrapped over several lines of one paragraph is one line of the lead: a line break costs
        // nothing, so `A stealer` / `typically does something like:` is the label it reads as.
        let mut lead: Vec<String> = Vec::new();
        // Whether the last line of the lead joins lines of a wrapped paragraph, and whether the line before the
        // one being read continues into it.
        let mut lead_joined = false;
        let mut previous_continues = false;
        let mut previous_text = String::new();
        for ((segment, asked), continued) in all.into_iter().zip(asked_after).zip(continued) {
            match segment {
                Segment::Code { lang, line, text } => {
                    let lead = std::mem::take(&mut lead);
                    let joined = std::mem::take(&mut lead_joined);
                    previous_continues = false;
                    self.shown_then_asked = asked;
                    self.described_block = lead
                        .last()
                        .map(|l| {
                            if joined {
                                context::last_sentence(l)
                            } else {
                                l.as_str()
                            }
                        })
                        .filter(|l| l.ends_with(':') && describing_lead_in(l) && !self.ordered_below)
                        .map(|l| {
                            // The label's last sentence is what is shown, when the label is long.
                            let shown = if l.chars().count() > 80 {
                                context::last_sentence(l)
                            } else {
                                l
                            };
                            visible(shown, 80)
                        });
                    let grammar = Grammar::for_language(&lang).or_else(|| guess_shell(&lang, &text));
                    let agent_config = grammar.is_none() && crate::inventory::agent_config_text(&text);
                    let planted = planted::target(&lead, &text)
                        .filter(|_| self.planted.is_none() && grammar.is_none() && !agent_config);
                    if let Some(file) = planted {
                        // Instructions the agent is to write into its own files: read as the agent will read them.
                        self.out.push(Finding {
                            rule: "intent/agent-instructions".to_owned(),
                            severity: Severity::Medium,
                            file: self.file.to_owned(),
                            line,
                            evidence: visible(text.trim(), 160),
                            message: format!(
                                "Has the agent write `{file}`, which it reads as instructions in every later \
                                 session: what it says is scanned as instructions."
                            ),
                            context: FindingContext::Instruction,
                        });
                        self.planted = Some(file);
                        self.markdown(&text, line, facts);
                        self.planted = None;
                    } else if agent_config
                        || grammar.is_none() && (planted::tool_call(&text) || self.ordered_below)
                    {
                        // An agent's hooks or permissions shown to be installed: its commands are commands; so is
                        // a block of no known kind below an order to run what follows.
                        self.code(None, &text, line, facts);
                    } else if grammar.is_some() {
                        if grammar == Some(Grammar::Shell) {
                            facts.shell_block(self.file);
                        }
                        let outer = self.example;
                        let text = strip_prompts(&text);
                        let (code, commands) = match grammar {
                            Some(g) => blocks::shell_lines(g, &text),
                            None => (text, Vec::new()),
                        };
                        self.example = outer || grammar != Some(Grammar::Shell);
                        self.code(grammar, &code, line, facts);
                        self.example = outer;
                        for (offset, command) in commands {
                            self.code(Some(Grammar::Shell), &command, line + offset, facts);
                        }
                    } else {
                        self.lines(line, &text, Place::Comment);
                    }
                    self.described_block = None;
                    self.shown_then_asked = false;
                }
                Segment::Prose {
                    line,
                    text,
                    inline_code,
                } => {
                    let trimmed = text.trim().trim_end_matches('*').trim_end();
                    // A fence line an indented block leaves as prose (in a list item) is not a label.
                    let fence = trimmed.starts_with("```") || trimmed.starts_with("~~~");
                    if !trimmed.is_empty() && !fence {
                        match lead.last_mut() {
                            Some(last) if previous_continues && !LIST_ITEM.is_match(&text) => {
                                last.push(' ');
                                last.push_str(trimmed.trim_start());
                                lead_joined = true;
                            }
                            _ => {
                                if lead.len() == 2 {
                                    lead.remove(0);
                                }
                                lead.push(trimmed.to_owned());
                                lead_joined = false;
                            }
                        }
                    }
                    self.sentence_before = previous_continues.then(|| previous_text.clone());
                    self.sentence_after = continued.as_ref().map(|(next, _)| next.clone());
                    previous_continues = continued.is_some();
                    previous_text.clone_from(&text);
                    self.prose_line(line, &text, &inline_code);
                    self.sentence_before = None;
                    self.sentence_after = None;
                    if let Some((next, next_code)) = continued {
                        self.across_lines(line, &text, &inline_code, &next, &next_code);
                    }
                    // A line ending in `:` that describes (`**Blocks**:`, `Look for:`) makes the list after it a
                    // list of things described; any line that is not an item of that list ends it.
                    let item = LIST_ITEM.is_match(&text) || trimmed.starts_with('|');
                    // A heading between the order and what it orders costs nothing either.
                    if !item && !trimmed.is_empty() && !trimmed.starts_with('#') {
                        let orders = ORDER_BELOW.is_match(trimmed) && !context::NEGATION.is_match(trimmed);
                        // A label right after the order keeps it (`Red flags:` costs nothing).
                        self.ordered_below = orders || self.ordered_below && trimmed.ends_with(':');
                    }
                    if trimmed.ends_with(':') && !LIST_ITEM.is_match(&text) {
                        // The sentence the label ends, when it is wrapped over lines of one paragraph.
                        let label = match lead.last() {
                            // The lead's last line is this one, joined to the lines it continues.
                            Some(l) if lead_joined => context::last_sentence(l),
                            _ => trimmed,
                        };
                        self.describing_list =
                            (describing_label(label) || describing_lead_in(label)) && !self.ordered_below;
                        self.instructing_list = !self.describing_list
                            && MAKES.is_match(label)
                            && !context::NEGATION.is_match(label);
                    } else if !LIST_ITEM.is_match(&text) && !text.trim().is_empty() {
                        self.describing_list = false;
                        self.instructing_list = false;
                    }
                }
                Segment::HtmlComment { line, text } => {
                    let inner = match text.trim_start().strip_prefix("<!--") {
                        Some(rest) => rest.trim_end().trim_end_matches("-->").trim(),
                        // `[//]: # (…)`: what the parentheses or quotes hold.
                        None => text.split_once(':').map_or("", |(_, r)| {
                            r.trim()
                                .trim_start_matches(['#', '<', '>'])
                                .trim()
                                .trim_matches(['(', ')', '"', '\''])
                                .trim()
                        }),
                    };
                    if !inner.is_empty() {
                        self.out.push(Finding {
                            rule: "prompt/html-comment".to_owned(),
                            severity: Severity::Low,
                            file: self.file.to_owned(),
                            line,
                            evidence: visible(inner, 160),
                            message:
                                "A comment (HTML, or Markdown's `[//]: # (…)`): invisible when the page is \
                                      rendered, but an agent reads it."
                                    .to_owned(),
                            context: FindingContext::Instruction,
                        });
                        for (i, l) in text.lines().enumerate() {
                            self.line(line + u32::try_from(i).unwrap_or(0), l, Place::Hidden, &[]);
                        }
                    }
                }
            }
        }
    }
}
