//! The command line of `readygate-cluster`, the second binary: the commands that run beside a
//! cluster rather than in every pod (`inject`, `webhook`, `doctor`). Apart so that the binary every pod
//! carries links none of their code (YAML, the admission server).

use clap::{Parser, Subcommand};

use super::help;
use super::{CompletionsArgs, DoctorArgs, InjectArgs, LogArgs, WebhookArgs};

#[derive(Debug, Parser)]
#[command(
    name = "readygate-cluster",
    version = crate::cli::version::VERSION,
    about = "readygate's cluster-side commands: add the gate and sidecars to manifests (inject) \
             or at admission (webhook); tell whether a cluster can run built-in sidecars (doctor).",
    disable_help_flag = true,
    max_term_width = 100,
)]
pub struct ClusterCli {
    #[command(flatten)]
    pub log: LogArgs,
    #[command(subcommand)]
    pub command: ClusterCommand,
}

/// The cluster-side commands.
#[derive(Debug, Subcommand)]
pub enum ClusterCommand {
    /// Add readygate's gate and a sidecar to manifests (files or stdin), written to stdout.
    ///
    /// Acts on the readygate.dev/ annotations of each pod and template; see docs/cli.md.
    #[command(after_long_help = help::INJECT_EXAMPLES)]
    Inject(InjectArgs),
    /// Serve a mutating admission webhook that injects pods as `inject` does, over TLS.
    ///
    /// admission.k8s.io/v1 at /mutate (a JSONPatch for Pod CREATE); /healthz, /readyz and
    /// /metrics. The certificate and key are read again when their files change.
    #[command(after_long_help = help::WEBHOOK_EXAMPLES)]
    Webhook(WebhookArgs),
    /// Tell whether a cluster can run built-in sidecars, and how to run them where it cannot.
    ///
    /// Asks the API server (its version and feature gate), every node (the kubelet's version
    /// and gate, through the node proxy) and admission (a dry-run pod CREATE), then gives a
    /// verdict with the fix. Exit 0: fine; 1: a problem found; 3: a check failed.
    #[command(after_long_help = help::DOCTOR_EXAMPLES)]
    Doctor(DoctorArgs),
    /// Print a shell completion script (bash, zsh or fish) to stdout.
    #[command(after_help = "Install: readygate-cluster completions bash > \
                      /etc/bash_completion.d/readygate-cluster")]
    Completions(CompletionsArgs),
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        ClusterCli::command().debug_assert();
    }
}
