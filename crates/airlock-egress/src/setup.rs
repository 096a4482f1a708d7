//! What the sandbox is given so that programs inside work with the egress settings unchanged: package managers'
//! configuration pointing at the operator's mirrors, and a CA bundle with the operator's extra CAs for programs
//! that check TLS themselves.

use std::path::{Path, PathBuf};

use crate::{Ecosystem, EgressConfig, EgressError};

/// The host's CA bundle (Debian's and Ubuntu's path; the sandbox sees `/etc/ssl` read-only).
const HOST_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";
/// Where the sandbox's own configuration goes (the sandbox's `/etc` is airlock's, on its private tmpfs).
pub const SANDBOX_ETC: &str = "/etc/airlock";

/// What a file given to the sandbox holds.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FileContent {
    Text(String),
    /// The host files one after another (read when the sandbox is set up, so a large CA bundle is not carried
    /// in the sandbox's configuration); a missing one counts as empty.
    Concat(Vec<PathBuf>),
}

impl FileContent {
    /// The bytes, read now.
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Self::Text(t) => t.clone().into_bytes(),
            Self::Concat(paths) => {
                let mut out = Vec::new();
                for p in paths {
                    out.extend(fs_err::read(p).unwrap_or_default());
                    if !out.is_empty() && !out.ends_with(b"\n") {
                        out.push(b'\n');
                    }
                }
                out
            }
        }
    }
}

/// Environment variables and files (at sandbox paths) for a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxSetup {
    pub env: Vec<(String, String)>,
    pub files: Vec<(PathBuf, FileContent)>,
}

impl SandboxSetup {
    fn var(&mut self, k: &str, v: &str) {
        self.env.push((k.to_owned(), v.to_owned()));
    }

    fn file(&mut self, path: impl Into<PathBuf>, text: impl Into<String>) {
        self.files.push((path.into(), FileContent::Text(text.into())));
    }
}

impl EgressConfig {
    /// The configuration the sandbox gets for these settings; `home` is the sandbox user's home folder.
    pub fn sandbox_setup(&self, home: &Path) -> Result<SandboxSetup, EgressError> {
        let mut s = SandboxSetup::default();
        let policy = &self.policy;
        if let Some(m) = policy.mirror(Ecosystem::Pypi) {
            let mut conf = format!("[global]\nindex-url = {}\n", m.url);
            s.var("PIP_INDEX_URL", &m.url);
            s.var("UV_DEFAULT_INDEX", &m.url);
            s.var("UV_INDEX_URL", &m.url);
            if m.url.starts_with("http://") {
                conf.push_str(&format!("trusted-host = {}\n", m.host));
                s.var("PIP_TRUSTED_HOST", &m.host);
                s.var("UV_INSECURE_HOST", &m.host);
            }
            s.file("/etc/pip.conf", conf);
        }
        if let Some(m) = policy.mirror(Ecosystem::Npm) {
            s.var("npm_config_registry", &m.url);
            s.var("YARN_REGISTRY", &m.url);
            s.var("YARN_NPM_REGISTRY_SERVER", &m.url);
            s.file(home.join(".npmrc"), format!("registry={}\n", m.url));
        }
        if let Some(m) = policy.mirror(Ecosystem::Cargo) {
            let mut url = m.url.clone();
            if !url.ends_with('/') {
                url.push('/');
            }
            if !url.starts_with("sparse+") {
                url = format!("sparse+{url}");
            }
            s.file(
                home.join(".cargo/config.toml"),
                format!(
                    "[source.crates-io]\nreplace-with = \"airlock-mirror\"\n\n[source.airlock-mirror]\nregistry = \"{url}\"\n"
                ),
            );
        }
        if let Some(m) = policy.mirror(Ecosystem::Apt) {
            let codename = fs_err::read_to_string("/etc/os-release")
                .ok()
                .and_then(|t| {
                    t.lines()
                        .find_map(|l| l.strip_prefix("VERSION_CODENAME="))
                        .map(|c| c.trim_matches('"').to_owned())
                })
                .filter(|c| !c.is_empty() && c.bytes().all(|b| b.is_ascii_alphanumeric()))
                .unwrap_or_else(|| "stable".to_owned());
            s.file(
                format!("{SANDBOX_ETC}/apt/sources.list"),
                format!("deb {} {codename} main\n", m.url),
            );
            s.file(
                format!("{SANDBOX_ETC}/apt/apt.conf"),
                format!(
                    "Dir::Etc::SourceList \"{SANDBOX_ETC}/apt/sources.list\";\nDir::Etc::SourceParts \"{SANDBOX_ETC}/apt/sources.list.d\";\n"
                ),
            );
            s.file(format!("{SANDBOX_ETC}/apt/sources.list.d/.keep"), "");
            s.var("APT_CONFIG", &format!("{SANDBOX_ETC}/apt/apt.conf"));
        }
        if !self.extra_ca.is_empty() {
            for path in &self.extra_ca {
                let pem = fs_err::read_to_string(path)
                    .map_err(|e| EgressError::Ca(path.display().to_string(), e.to_string()))?;
                if !pem.contains("-----BEGIN CERTIFICATE-----") {
                    return Err(EgressError::Ca(
                        path.display().to_string(),
                        "no certificate in it".into(),
                    ));
                }
            }
            let bundle_path = format!("{SANDBOX_ETC}/ca-bundle.pem");
            let extra_path = format!("{SANDBOX_ETC}/extra-ca.pem");
            let mut all = vec![PathBuf::from(HOST_BUNDLE)];
            all.extend(self.extra_ca.iter().cloned());
            s.files
                .push((bundle_path.clone().into(), FileContent::Concat(all)));
            s.files.push((
                extra_path.clone().into(),
                FileContent::Concat(self.extra_ca.clone()),
            ));
            for k in [
                "SSL_CERT_FILE",
                "REQUESTS_CA_BUNDLE",
                "CURL_CA_BUNDLE",
                "PIP_CERT",
                "GIT_SSL_CAINFO",
                "CARGO_HTTP_CAINFO",
            ] {
                s.var(k, &bundle_path);
            }
            s.var("NODE_EXTRA_CA_CERTS", &extra_path);
        } else if Path::new(HOST_BUNDLE).is_file() {
            // Node trusts only the roots it ships, where pip, curl and git trust the system's store (with a CA the
            // user's network adds to it): npm is given the same store.
            s.var("NODE_EXTRA_CA_CERTS", HOST_BUNDLE);
        }
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Policy;

    #[test]
    fn mirrors_point_each_ecosystem_at_its_mirror() {
        let mut policy = Policy::default();
        policy
            .add_mirror(Ecosystem::Pypi, "http://pypi.corp:8080/simple/")
            .unwrap();
        policy.add_mirror(Ecosystem::Npm, "https://npm.corp/").unwrap();
        policy
            .add_mirror(Ecosystem::Cargo, "https://crates.corp/index")
            .unwrap();
        policy
            .add_mirror(Ecosystem::Apt, "http://apt.corp/debian")
            .unwrap();
        let config = EgressConfig {
            policy,
            ..EgressConfig::default()
        };
        let s = config.sandbox_setup(Path::new("/home/sandbox")).unwrap();
        let file = |p: &str| {
            s.files
                .iter()
                .find(|(path, _)| path == Path::new(p))
                .map(|(_, t)| String::from_utf8_lossy(&t.bytes()).into_owned())
                .unwrap_or_else(|| panic!("{p} missing: {s:?}"))
        };
        assert!(file("/etc/pip.conf").contains("index-url = http://pypi.corp:8080/simple/"));
        assert!(file("/etc/pip.conf").contains("trusted-host = pypi.corp"));
        assert_eq!(file("/home/sandbox/.npmrc"), "registry=https://npm.corp/\n");
        assert!(file("/home/sandbox/.cargo/config.toml")
            .contains("registry = \"sparse+https://crates.corp/index/\""));
        assert!(file("/etc/airlock/apt/sources.list").starts_with("deb http://apt.corp/debian "));
        assert!(s
            .env
            .contains(&("PIP_INDEX_URL".into(), "http://pypi.corp:8080/simple/".into())));
        assert!(s
            .env
            .contains(&("npm_config_registry".into(), "https://npm.corp/".into())));
        // The mirrors' hosts are trusted, and allowed where the package registries are.
        assert!(!config.policy.check_name("pypi.corp", 8080).allowed);
        let mut with_preset = config.policy.clone();
        with_preset.add_preset("package-registries").unwrap();
        assert!(with_preset.check_name("pypi.corp", 8080).allowed);
        assert!(!with_preset.check_name("pypi.corp", 443).allowed);
        assert!(config.policy.is_trusted("apt.corp"));
        assert!(
            config
                .policy
                .check_resolved("npm.corp", "10.1.2.3".parse().unwrap(), 443, false)
                .allowed
        );
    }

    #[test]
    fn mirror_urls_with_credentials_or_odd_schemes_are_refused() {
        let mut policy = Policy::default();
        for bad in [
            "https://user:token@pypi.corp/simple",
            "ftp://pypi.corp/",
            "pypi.corp",
            "http://pypi.corp/a b",
        ] {
            let e = policy.add_mirror(Ecosystem::Pypi, bad).unwrap_err().to_string();
            assert!(e.contains("invalid pypi mirror"), "{e}");
        }
        assert!(policy.mirrors.is_empty() && policy.trusted.is_empty());
    }

    #[test]
    fn an_extra_ca_joins_the_hosts_bundle() {
        let tmp = tempfile_dir();
        let ca = tmp.join("corp.pem");
        fs_err::write(
            &ca,
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let config = EgressConfig {
            extra_ca: vec![ca.clone()],
            ..EgressConfig::default()
        };
        let s = config.sandbox_setup(Path::new("/home/sandbox")).unwrap();
        let bundle = &s
            .files
            .iter()
            .find(|(p, _)| p.ends_with("ca-bundle.pem"))
            .unwrap()
            .1
            .bytes();
        assert!(String::from_utf8_lossy(bundle).ends_with("MIIB\n-----END CERTIFICATE-----\n"));
        assert!(s
            .env
            .contains(&("SSL_CERT_FILE".into(), "/etc/airlock/ca-bundle.pem".into())));
        fs_err::write(&ca, "not a certificate").unwrap();
        assert!(config.sandbox_setup(Path::new("/home/sandbox")).is_err());
        let _ = fs_err::remove_dir_all(tmp);
    }

    /// Without an extra CA, node is pointed at the system's store, as the other programs use it.
    #[test]
    fn node_trusts_the_systems_store() {
        let s = EgressConfig::default()
            .sandbox_setup(Path::new("/home/sandbox"))
            .unwrap();
        let node = s.env.iter().find(|(k, _)| k == "NODE_EXTRA_CA_CERTS");
        if Path::new(HOST_BUNDLE).is_file() {
            assert_eq!(node.map(|(_, v)| v.as_str()), Some(HOST_BUNDLE));
        } else {
            assert!(node.is_none(), "{node:?}");
        }
    }

    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("airlock-egress-setup-{}", std::process::id()));
        fs_err::create_dir_all(&dir).unwrap();
        dir
    }
}
