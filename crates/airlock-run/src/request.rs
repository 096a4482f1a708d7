//! One way from a run as a face asks for it ([`RunSpec`], the wire type every face shares) to the library's
//! [`RunRequest`]: the CLI on this machine, a server for its own sandboxes and a runner for a claimed job all call
//! [`build`], with the settings of the machine that runs it ([`Context`]). The defaults live in `airlock-protocol`.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use airlock_protocol::{
    RunSpec, CPUS, DEFAULT_TASK, DEFAULT_TIMEOUT_SECS, DISK_MB, MAX_TIMEOUT_SECS, MEMORY_MB, PIDS,
};
use airlock_source::SourceSpec;

use crate::{Invocation, RunRequest};

/// Why a request cannot be carried out as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RequestError {
    /// A stable code (`bad_mode`, `bad_limit`, `net_refused`, ...).
    pub code: &'static str,
    /// The machine's settings refuse it (a host it does not let runs reach), rather than the request being wrong.
    pub refused: bool,
    pub message: String,
}

impl RequestError {
    pub fn bad(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            refused: false,
            message: message.into(),
        }
    }
}

/// What a run's request is built with besides the spec: the settings of the machine that runs it.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// Hosts a run may ask to reach: `None` for any (the user's own machine), else the server's list.
    pub allow_net: Option<Vec<String>>,
    /// The egress every run gets (upstream proxy, trusted names, mirrors, an extra CA; on the user's machine also
    /// what its flags allow), which the spec's hosts join.
    pub egress: Option<airlock_egress::EgressConfig>,
    pub retention: Duration,
    /// The executable that starts the sandbox; the running program when `None`.
    pub helper: Option<PathBuf>,
    /// The operator's policy: the most any skill gets.
    pub policy: Option<airlock_types::policy::SourcedPolicy>,
    pub host_opt: bool,
    /// Package index and registry mirrors for the install phase.
    pub pip_index_url: Option<String>,
    pub npm_registry: Option<String>,
    /// The install phase's limits on this machine.
    pub install_limits: crate::environment::InstallLimits,
    /// Hold a request's limits to the bounds a shared machine sets (`airlock-protocol`'s); on the user's own
    /// machine any limit goes.
    pub bounded: bool,
}

/// The library's request for `spec`, checked (invocation, limits, hosts) and with its source (and target) parsed by
/// the caller's `parse`, whose errors are the caller's own, under `run_id` when given.
pub fn build<E: From<RequestError>>(
    spec: &RunSpec,
    ctx: &Context,
    run_id: Option<&str>,
    cancel: Option<Arc<AtomicBool>>,
    parse: &dyn Fn(&str) -> Result<SourceSpec, E>,
) -> Result<RunRequest, E> {
    let source = parse(&spec.source)?;
    if spec.target != "blank" {
        parse(&spec.target)?;
    }
    let invocation = match (&spec.script, &spec.agent) {
        (Some(_), Some(_)) => {
            return Err(RequestError::bad("bad_request", "give a script or an agent, not both").into())
        }
        (Some(path), None) => Invocation::Script {
            path: path.clone(),
            args: spec.args.clone(),
        },
        (None, Some(agent)) => Invocation::Agent {
            agent: agent.clone(),
            task: spec.task.clone().unwrap_or_else(|| DEFAULT_TASK.into()),
        },
        (None, None) => Invocation::Plan,
    };
    let limits = limits(spec, ctx.bounded)?;
    let egress = egress(spec, ctx)?;
    Ok(RunRequest {
        source,
        mode: spec.mode,
        target: spec.target.clone(),
        invocation,
        force: spec.force,
        limits,
        egress,
        retention: ctx.retention,
        run_id: run_id.map(str::to_owned),
        cancel,
        helper: ctx.helper.clone(),
        host_opt: ctx.host_opt,
        environment: crate::environment::EnvOptions {
            install: spec.install,
            pip_index_url: ctx.pip_index_url.clone(),
            npm_registry: ctx.npm_registry.clone(),
            limits: ctx.install_limits,
            ..Default::default()
        },
        policy: crate::policy::PolicyOptions {
            operator: ctx.policy.clone(),
            accept: spec.accept_policy,
            given: spec.given(),
        },
        source_name: None,
        detonation: None,
    })
}

/// The spec's limits, each within its bounds (only above zero when not `bounded`), the defaults for the rest.
fn limits(spec: &RunSpec, bounded: bool) -> Result<airlock_sandbox::Limits, RequestError> {
    let within = |value: Option<u64>, range: std::ops::RangeInclusive<u64>, name: &str| {
        let range = if bounded { range } else { 1..=u64::MAX };
        match value {
            Some(v) if !range.contains(&v) => Err(RequestError::bad(
                "bad_limit",
                format!("{name} is {} to {}", range.start(), range.end()),
            )),
            v => Ok(v),
        }
    };
    let defaults = airlock_sandbox::Limits::default();
    let timeout =
        within(spec.timeout_secs, 1..=MAX_TIMEOUT_SECS, "timeout_secs")?.unwrap_or(DEFAULT_TIMEOUT_SECS);
    Ok(airlock_sandbox::Limits {
        timeout: Duration::from_secs(timeout),
        memory_bytes: within(spec.memory_mb, MEMORY_MB, "memory_mb")?
            .map_or(defaults.memory_bytes, |m| m << 20),
        disk_bytes: within(spec.disk_mb, DISK_MB, "disk_mb")?.map_or(defaults.disk_bytes, |m| m << 20),
        pids: within(spec.pids, PIDS, "pids")?.unwrap_or(defaults.pids),
        cpus: within(
            spec.cpus.map(u64::from),
            u64::from(*CPUS.start())..=u64::from(*CPUS.end()),
            "cpus",
        )?
        .map_or(defaults.cpus, |c| u32::try_from(c).unwrap_or(u32::MAX)),
        open_files: defaults.open_files,
    })
}

/// The machine's egress with the spec's hosts joined (each one the machine lets runs reach); `None` keeps the run
/// on loopback.
fn egress(spec: &RunSpec, ctx: &Context) -> Result<Option<airlock_egress::EgressConfig>, RequestError> {
    let mut config = ctx.egress.clone().unwrap_or_default();
    for host in &spec.allow_net {
        if let Some(allowed) = &ctx.allow_net {
            if !allowed.iter().any(|a| a == host) {
                return Err(RequestError {
                    code: "net_refused",
                    refused: true,
                    message: format!(
                        "this server does not let runs reach {}",
                        airlock_types::display::line(host)
                    ),
                });
            }
        }
        let rule =
            airlock_egress::Rule::parse(host).map_err(|e| RequestError::bad("bad_net", e.to_string()))?;
        if !config.policy.allow.iter().any(|r| r.text == rule.text) {
            config.policy.allow.push(rule);
        }
    }
    let policy = &config.policy;
    let settings = policy.upstream.is_some() || !policy.mirrors.is_empty() || !policy.trusted.is_empty();
    Ok((policy.is_open() || settings || !config.extra_ca.is_empty()).then_some(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(input: &str) -> Result<SourceSpec, RequestError> {
        SourceSpec::parse(input).map_err(|e| RequestError::bad("bad_source", e.to_string()))
    }

    #[test]
    fn one_spec_gives_one_request_with_the_defaults_in_one_place() {
        let spec = RunSpec::new("https://github.com/o/skill");
        let r = build(&spec, &Context::default(), Some("r1"), None, &parse).unwrap();
        assert_eq!(r.invocation, Invocation::Plan);
        assert_eq!(r.limits.timeout, Duration::from_secs(DEFAULT_TIMEOUT_SECS));
        assert!(r.egress.is_none());
        assert!(r.policy.given.is_empty());

        let mut agent = spec.clone();
        agent.agent = Some("claude".into());
        let r = build(&agent, &Context::default(), None, None, &parse).unwrap();
        assert_eq!(
            r.invocation,
            Invocation::Agent {
                agent: "claude".into(),
                task: DEFAULT_TASK.into()
            }
        );

        let mut limited = spec.clone();
        limited.memory_mb = Some(1024);
        limited.pids = Some(64);
        let r = build(&limited, &Context::default(), None, None, &parse).unwrap();
        assert_eq!((r.limits.memory_bytes, r.limits.pids), (1 << 30, 64));
        assert_eq!(r.policy.given, ["memory", "pids"]);
        // A shared machine holds a request to its bounds; the user's own takes any limit above zero.
        let shared = Context {
            bounded: true,
            ..Context::default()
        };
        limited.timeout_secs = Some(2 * 3600);
        assert_eq!(
            build(&limited, &shared, None, None, &parse).unwrap_err().code,
            "bad_limit"
        );
        assert!(build(&limited, &Context::default(), None, None, &parse).is_ok());
        limited.timeout_secs = Some(0);
        assert_eq!(
            build(&limited, &Context::default(), None, None, &parse)
                .unwrap_err()
                .code,
            "bad_limit"
        );
    }

    #[test]
    fn a_host_joins_the_machines_egress_only_where_the_machine_allows_it() {
        let mut spec = RunSpec::new("https://github.com/o/skill");
        spec.allow_net = vec!["api.github.com".into()];
        let anywhere = build(&spec, &Context::default(), None, None, &parse).unwrap();
        assert!(
            anywhere
                .egress
                .unwrap()
                .policy
                .check_name("api.github.com", 443)
                .allowed
        );
        let server = Context {
            allow_net: Some(vec!["pypi.org".into()]),
            ..Context::default()
        };
        let refused = build(&spec, &server, None, None, &parse).unwrap_err();
        assert_eq!((refused.code, refused.refused), ("net_refused", true));
    }
}
