//! The secrets a detonation plants: tokens in the environment (the usual ones, and each secret variable the skill
//! names), credential files in the home folder, the project's `.env`; each with a value made for this detonation,
//! and where it may go without being stolen.

use std::path::PathBuf;

use airlock_egress::Canary;

/// The secrets planted in one detonation, each with a value made for it.
#[derive(Debug, Clone)]
pub struct Canaries {
    /// Environment variables the skill's processes get.
    pub env: Vec<(String, String)>,
    /// Files in the sandbox user's home: the sandbox path and the content.
    pub home: Vec<(PathBuf, String)>,
    /// The target project's `.env`.
    pub project_env: String,
    needles: Vec<Canary>,
    /// What the sinkhole's shell probe echoes and the code it serves runs.
    pub marker: String,
    /// The hosts each canary belongs to, by name: a token sent to its own service is its use, not a theft.
    homes: Vec<Home>,
    /// Planted files by sandbox path, and the canary each holds.
    paths: Vec<(String, String)>,
}

/// Letters and digits from the kernel's random generator.
fn alnum(n: usize) -> String {
    const SET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let hex = airlock_sandbox::random_hex(n);
    hex.as_bytes()
        .chunks(2)
        .map(|pair| {
            let b = u8::from_str_radix(std::str::from_utf8(pair).unwrap_or("00"), 16).unwrap_or(0);
            char::from(SET[usize::from(b) % SET.len()])
        })
        .collect()
}

fn upper(n: usize) -> String {
    alnum(n * 2)
        .chars()
        .filter(char::is_ascii_alphabetic)
        .map(|c| c.to_ascii_uppercase())
        .chain(std::iter::repeat('Q'))
        .take(n)
        .collect()
}

impl Canaries {
    /// New canaries, with values no one has seen; `named` are further secret variables the skill's text names
    /// ([`secret_variables`]), each planted in the environment too.
    pub fn plant(named: &[String]) -> Self {
        let home = airlock_sandbox::SANDBOX_HOME;
        let mut c = Self {
            env: Vec::new(),
            home: Vec::new(),
            project_env: String::new(),
            needles: Vec::new(),
            marker: format!("airlock-fetched-{}", airlock_sandbox::random_hex(8)),
            homes: Vec::new(),
            paths: Vec::new(),
        };
        for (var, value) in [
            ("AWS_ACCESS_KEY_ID", format!("AKIA{}", upper(16))),
            ("AWS_SECRET_ACCESS_KEY", alnum(40)),
            ("GITHUB_TOKEN", format!("ghp_{}", alnum(36))),
            ("OPENAI_API_KEY", format!("sk-proj-{}", alnum(48))),
            ("ANTHROPIC_API_KEY", format!("sk-ant-api03-{}", alnum(64))),
            ("NPM_TOKEN", format!("npm_{}", alnum(36))),
        ] {
            let name = format!("{var} (environment)");
            c.needle(&name, &value);
            c.homes.push(Home {
                canary: name,
                suffixes: home_of(var).iter().map(|h| (*h).to_owned()).collect(),
                words: Vec::new(),
            });
            c.env.push((var.to_owned(), value));
        }
        for var in named {
            if c.env.iter().any(|(k, _)| k == var) {
                continue;
            }
            let value = alnum(40);
            let name = format!("{var} (environment)");
            c.needle(&name, &value);
            c.homes.push(Home {
                canary: name,
                suffixes: Vec::new(),
                words: var
                    .split('_')
                    .map(str::to_ascii_lowercase)
                    .filter(|w| w.len() >= 3 && !GENERIC_WORDS.contains(&w.as_str()))
                    .collect(),
            });
            c.env.push((var.clone(), value));
        }
        let key_body = alnum(64);
        let aws_key = format!("AKIA{}", upper(16));
        let aws_secret = alnum(40);
        let git_token = format!("ghp_{}", alnum(36));
        let gh_token = format!("gho_{}", alnum(36));
        let claude = format!("sk-ant-oat01-{}", alnum(64));
        let browser = alnum(32);
        let files = [
            (
                ".ssh/id_ed25519",
                "~/.ssh/id_ed25519",
                key_body.clone(),
                format!(
                    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA{key_body}\n-----END OPENSSH PRIVATE KEY-----\n"
                ),
            ),
            (
                ".aws/credentials",
                "~/.aws/credentials",
                aws_secret.clone(),
                format!(
                    "[default]\naws_access_key_id = {aws_key}\naws_secret_access_key = {aws_secret}\n"
                ),
            ),
            (
                ".git-credentials",
                "~/.git-credentials",
                git_token.clone(),
                format!("https://dev:{git_token}@github.com\n"),
            ),
            (
                ".config/gh/hosts.yml",
                "~/.config/gh/hosts.yml",
                gh_token.clone(),
                format!("github.com:\n    oauth_token: {gh_token}\n    user: dev\n"),
            ),
            (
                ".claude/.credentials.json",
                "~/.claude/.credentials.json",
                claude.clone(),
                format!("{{\"claudeAiOauth\":{{\"accessToken\":\"{claude}\"}}}}\n"),
            ),
            (
                ".config/google-chrome/Default/Login Data",
                "the browser's saved passwords",
                browser.clone(),
                format!("https://bank.example\tdev\t{browser}\n"),
            ),
        ];
        for (rel, name, needle, content) in files {
            c.needle(name, &needle);
            c.paths.push((format!("{home}/{rel}"), name.to_owned()));
            c.home.push((PathBuf::from(format!("{home}/{rel}")), content));
        }
        c.needle(&format!("{} (AWS key id)", "~/.aws/credentials"), &aws_key);
        let project_key = format!("sk_live_{}", alnum(32));
        let db = alnum(24);
        c.needle("the project's .env", &project_key);
        c.needle("the project's .env (database password)", &db);
        c.project_env = format!(
            "STRIPE_SECRET_KEY={project_key}\nDATABASE_URL=postgres://app:{db}@db.internal:5432/app\n"
        );
        c.paths
            .push((format!("{}/.env", crate::WORKSPACE), "the project's .env".into()));
        c
    }

    fn needle(&mut self, name: &str, value: &str) {
        self.needles.push(Canary {
            name: name.to_owned(),
            value: value.to_owned(),
        });
    }

    /// Every planted value, by name.
    pub fn needles(&self) -> &[Canary] {
        &self.needles
    }

    /// The canaries of `names` that `host` is not the home of.
    pub(super) fn stolen<'n>(&self, names: &'n [String], host: &str) -> Vec<&'n String> {
        names
            .iter()
            .filter(|n| !self.homes.iter().any(|home| home.canary == **n && home.of(host)))
            .collect()
    }

    /// The canary planted at this sandbox path, if any.
    pub(super) fn planted_at(&self, path: &str) -> Option<&str> {
        self.paths
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, n)| n.as_str())
    }
}

/// Where a token may go without being stolen: host suffixes, or (for a variable the skill names) the words of its
/// name that a host's own name may be (`STRIPE_API_KEY` to `api.stripe.com`).
#[derive(Debug, Clone)]
struct Home {
    canary: String,
    suffixes: Vec<String>,
    words: Vec<String>,
}

impl Home {
    fn of(&self, host: &str) -> bool {
        if self
            .suffixes
            .iter()
            .any(|h| host == h || host.ends_with(&format!(".{h}")))
        {
            return true;
        }
        // The label before the last (`stripe` in `api.stripe.com`), as a word of the variable's name.
        let labels: Vec<&str> = host.split('.').collect();
        labels.len() >= 2 && self.words.iter().any(|w| w == labels[labels.len() - 2])
    }
}

/// Words of a variable's name that say what it is, not whose it is.
const GENERIC_WORDS: &[&str] = &[
    "api",
    "app",
    "key",
    "keys",
    "token",
    "tokens",
    "secret",
    "secrets",
    "password",
    "pass",
    "passwd",
    "pwd",
    "credential",
    "credentials",
    "auth",
    "access",
    "private",
    "session",
    "cookie",
    "id",
    "client",
    "service",
    "account",
    "my",
    "the",
    "url",
    "webhook",
    "dsn",
    "bot",
    "user",
    "admin",
    "prod",
    "dev",
    "test",
    "env",
    "default",
];

/// Names of secret-looking environment variables in a skill's text (`GCP_SERVICE_ACCOUNT_KEY`, `SLACK_BOT_TOKEN`):
/// a detonation plants a value for each, so code that reads one has something to send.
pub fn secret_variables(text: &str) -> Vec<String> {
    static NAME: std::sync::LazyLock<Option<regex::Regex>> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b").ok());
    const SECRET: &[&str] = &[
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PWD",
        "CREDENTIALS",
        "CREDENTIAL",
        "AUTH",
        "PAT",
        "DSN",
        "WEBHOOK",
        "COOKIE",
        "SESSION",
    ];
    let Some(re) = NAME.as_ref() else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for m in re.find_iter(text) {
        let name = m.as_str();
        if name.len() > 64 || out.iter().any(|o| o == name) {
            continue;
        }
        if name.split('_').any(|w| SECRET.contains(&w)) {
            out.push(name.to_owned());
        }
        if out.len() >= 40 {
            break;
        }
    }
    out
}

/// The services an environment token is made for.
fn home_of(var: &str) -> &'static [&'static str] {
    match var {
        "AWS_ACCESS_KEY_ID" | "AWS_SECRET_ACCESS_KEY" => &["amazonaws.com"],
        "GITHUB_TOKEN" => &["github.com", "githubusercontent.com"],
        "OPENAI_API_KEY" => &["openai.com"],
        "ANTHROPIC_API_KEY" => &["anthropic.com"],
        "NPM_TOKEN" => &["npmjs.org", "npmjs.com"],
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_variables_a_skill_names_get_canaries_whose_home_is_their_service() {
        let named = secret_variables(
            "export STRIPE_API_KEY=...\nos.environ['GCP_SERVICE_ACCOUNT_KEY']\nMAX_RETRIES=3\n$SLACK_BOT_TOKEN",
        );
        assert_eq!(
            named,
            ["STRIPE_API_KEY", "GCP_SERVICE_ACCOUNT_KEY", "SLACK_BOT_TOKEN"]
        );
        let c = Canaries::plant(&named);
        assert!(c.env.iter().any(|(k, _)| k == "GCP_SERVICE_ACCOUNT_KEY"));
        let stripe = vec!["STRIPE_API_KEY (environment)".to_owned()];
        assert!(c.stolen(&stripe, "api.stripe.com").is_empty());
        assert_eq!(c.stolen(&stripe, "stripe.evil.test").len(), 1);
        assert_eq!(c.stolen(&stripe, "api.stripe-metrics.test").len(), 1);
        let github = vec!["GITHUB_TOKEN (environment)".to_owned()];
        assert!(c.stolen(&github, "api.github.com").is_empty());
        assert_eq!(c.stolen(&github, "github.com.evil.test").len(), 1);
    }
}
