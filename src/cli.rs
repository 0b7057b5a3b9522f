//! The command line. Doc comments here are the `--help` text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub use crate::host::Host;

/// Pin a Zerto tagged checkpoint before an AI agent changes a VM, and pull files back from it.
#[derive(Debug, Parser)]
#[command(
    name = "rewind",
    version,
    about,
    max_term_width = 100,
    after_help = "Configuration: the first found of --config FILE, $REWIND_CONFIG, ./.rewind.toml (not read by the hook), ~/.config/rewind/config.toml, /etc/rewind/config.toml.\n\nExit codes: 0 success, 1 other failure, 2 usage error, 3 restore-vm refused, 4 restore-vm rolled back, 5 configuration unusable, 6 ZVM unreachable or not trusted, 7 VM, checkpoint or path not found, 8 refused by Zerto or the broker (the hook exits only 0 or 2).\n\nExamples:\n  rewind demo                           # the whole story, no configuration\n  rewind sim --background --port 0      # a simulated ZVM, configured for you\n  rewind vms\n  rewind install --host claude-code\n  rewind doctor"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Command,
}

/// The options every command takes.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Configuration file [default: $REWIND_CONFIG, ./.rewind.toml, ~/.config/rewind/config.toml,
    /// /etc/rewind/config.toml]
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decide on one tool call: the host's pre-tool-use JSON on stdin, the decision on stdout.
    #[command(
        after_help = "Examples:\n  rewind install --host claude-code     # the host then runs the hook on every tool call\n  rewind hook --host claude-code < call.json\n  rewind check --payload call.json      # the same decision, explained, without Zerto"
    )]
    Hook(HookArgs),
    /// Explain how a tool call would be classified, without calling Zerto.
    #[command(
        after_help = "Examples:\n  rewind check --command 'ssh web01 sudo reboot'\n  rewind check --command 'Restart-Computer -ComputerName web01' --powershell\n  rewind check mcp__ssh__exec --input '{\"host\": \"web01\", \"command\": \"reboot\"}'\n  rewind check --payload call.json --json"
    )]
    Check(CheckArgs),
    /// Show the VM a reference resolves to and every VPG that protects it.
    #[command(
        after_help = "Examples:\n  rewind find jp-ubuntu\n  rewind find 10.0.0.11\n  rewind find admin@db01.corp.example --json"
    )]
    Find(VmArgs),
    /// List every VM Zerto protects, with its guest IPs and VPGs.
    #[command(after_help = "Examples:\n  rewind vms\n  rewind vms --json")]
    Vms(VmsArgs),
    /// List the checkpoints of every VPG that protects a VM.
    #[command(
        after_help = "Examples:\n  rewind checkpoints jp-ubuntu\n  rewind checkpoints db01 --change toolu_01ABC\n  rewind checkpoints db01 --limit 5 --json"
    )]
    Checkpoints(CheckpointsArgs),
    /// Insert a tagged checkpoint on every VPG of a VM now and wait until it is listed.
    #[command(
        after_help = "Examples:\n  rewind guard --vm jp-ubuntu\n  rewind guard --vm db01 --action 'upgrade postgres' --change upgrade-42"
    )]
    Guard(GuardArgs),
    /// Restore a guest file from a checkpoint with Zerto File Level Restore.
    #[command(
        after_help = "Examples:\n  rewind recover --vm jp-ubuntu --change upgrade-42 --path /etc/app.conf\n  rewind recover --vm jp-ubuntu --before 2h --path /etc/hostname --out /tmp --yes\n  rewind recover --vm win2019-1 --checkpoint 1054 --path 'C:\\Users\\admin\\notes.txt'"
    )]
    Recover(RecoverArgs),
    /// Put a whole VM back to the checkpoint before a change: preview it in a failover test,
    /// or restore it from the journal, verify, and commit or roll back.
    #[command(
        after_help = "Examples:\n  rewind restore-vm jp-ubuntu --change upgrade-42 --preview --hold 5m\n  rewind restore-vm jp-ubuntu --change upgrade-42 --verify 'ssh jp-ubuntu systemctl is-active app'"
    )]
    RestoreVm(RestoreVmArgs),
    /// File Level Restore sessions: list them, or end one a crash left mounted.
    #[command(subcommand)]
    #[command(after_help = "Examples:\n  rewind flr list\n  rewind flr end 7a1c…")]
    Flr(FlrCommand),
    /// Serve the checkpoint and restore tools to an agent over MCP (stdio).
    #[command(
        after_help = "Examples:\n  claude mcp add rewind -- rewind mcp\n  rewind mcp --plan-ttl 30m"
    )]
    Mcp(McpArgs),
    /// Add the hook to an agent host's settings (idempotent, keeps a backup).
    #[command(
        after_help = "Examples:\n  rewind install --host claude-code\n  rewind install --host codex --scope project\n  sudo rewind install --host claude-code --scope managed --lock"
    )]
    Install(InstallArgs),
    /// Remove exactly rewind's entries from an agent host's settings (keeps a backup; a file left with nothing else is removed).

    #[command(
        after_help = "Examples:\n  rewind uninstall --host claude-code\n  rewind uninstall --host cursor --scope project"
    )]
    Uninstall(InstallArgs),
    /// Check configuration, catalogs, the ZVM connection and the installed hook.
    #[command(
        after_help = "Examples:\n  rewind doctor\n  rewind doctor --host codex\n  rewind doctor --json"
    )]
    Doctor(DoctorArgs),
    /// Show the certificate a ZVM presents and pin it in the configuration.
    #[command(
        after_help = "Examples:\n  rewind trust\n  rewind trust https://zvm.example:443 --yes"
    )]
    Trust(TrustArgs),
    /// Lint, list or extend the tool catalogs.
    #[command(subcommand)]
    #[command(after_help = "Examples:\n  rewind catalog lint\n  rewind catalog scan --write")]
    Catalog(CatalogCommand),
    /// Show the audit trail of hook decisions.
    #[command(
        after_help = "Examples:\n  rewind log --since 2h\n  rewind log --vm jp-ubuntu --decision deny\n  rewind log --verify"
    )]
    Log(LogArgs),
    /// Run the whole loop once against the configured ZVM (first contact with an appliance).
    #[command(
        after_help = "Examples:\n  rewind selftest --vm test-vm01 --path /etc/hostname\n  rewind selftest --vm test-vm01 --capture shapes.json"
    )]
    Selftest(SelftestArgs),
    /// Serve the built-in ZVM simulator over HTTPS.
    #[command(
        after_help = "Examples:\n  rewind sim --background --port 0     # writes ~/.config/rewind/config.toml for itself\n  rewind sim stop\n  rewind sim --port 9443 --time-scale 100 --write-config lab.toml\n  rewind sim --appliance browse-pages --appliance download-zip"
    )]
    Sim(SimArgs),
    /// Serve the hook and the operators over a Unix socket, holding the ZVM credentials, the
    /// token cache and the audit trail under this account (run it as its own user).
    #[command(
        after_help = "Examples:\n  sudo -u rewind rewind --config /etc/rewind/config.toml broker --socket /run/rewind/broker.sock"
    )]
    Broker(BrokerArgs),
    /// Run the whole story against an in-process simulator: no configuration, no network.
    #[command(after_help = "Examples:\n  rewind demo\n  rewind demo --time-scale 100")]
    Demo(DemoArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    #[command(
        after_help = "Examples:\n  rewind completions bash > ~/.local/share/bash-completion/completions/rewind\n  rewind completions zsh > ~/.zfunc/_rewind"
    )]
    Completions(CompletionsArgs),
    /// The guard of `rewind-hook`: one guard request on stdin (a socket), its answer there.
    #[command(hide = true)]
    HookGuard(HookGuardArgs),
    /// Write the man pages (rewind and each of its commands, rewind-hook, rewind-mcp) into a
    /// directory: what a package installs under /usr/share/man/man1.
    #[command(hide = true)]
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// The directory to write the pages into (created when missing).
    #[arg(value_name = "DIR")]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub struct HookGuardArgs {
    /// The configuration is a managed hook entry's (root's alone).
    #[arg(long)]
    pub managed: bool,
}

#[derive(Debug, Args)]
pub struct HookArgs {
    /// The agent host calling the hook [default: recognised from the payload; refused when
    /// it cannot be told].
    #[arg(long, value_enum)]
    pub host: Option<Host>,
    /// Run from a managed (administrator) entry: read only the configuration given by
    /// --config, and deny every call when anyone but root can change it.
    #[arg(long)]
    pub managed: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Tool name as the host sends it, e.g. `mcp__ssh__exec`.
    #[arg(required_unless_present_any = ["payload", "command"])]
    pub tool: Option<String>,
    /// The tool's arguments as a JSON object.
    #[arg(long, value_name = "JSON", conflicts_with = "payload")]
    pub input: Option<String>,
    /// A whole hook payload, as the host writes it on the hook's stdin (`-` for stdin).
    #[arg(long, value_name = "FILE", conflicts_with = "tool")]
    pub payload: Option<PathBuf>,
    /// The host whose dialect the payload or tool name is in [default: recognised from the
    /// payload; claude-code for a tool name].
    #[arg(long, value_enum)]
    pub host: Option<Host>,
    /// Print one JSON document (shape in docs/commands.md) instead of text.
    #[arg(long)]
    pub json: bool,
    /// A shell command as an agent would type it (`ssh web01 'sudo reboot'`): which remote
    /// programs it runs, on which VMs, and whether that can change them.
    #[arg(long, value_name = "COMMAND", conflicts_with_all = ["tool", "input", "payload", "json"])]
    pub command: Option<String>,
    /// Read `--command` as PowerShell instead of bash.
    #[arg(long, requires = "command")]
    pub powershell: bool,
}

#[derive(Debug, Args)]
pub struct VmArgs {
    /// VM name, vmIdentifier, guest IP, user@host, host:port or FQDN.
    pub vm: String,
    /// Print one JSON document (shape in docs/commands.md) instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CheckpointsArgs {
    /// VM name, vmIdentifier, guest IP, user@host, host:port or FQDN.
    pub vm: String,
    /// Only checkpoints tagged for this change (the host's tool_use_id).
    #[arg(long, value_name = "ID")]
    pub change: Option<String>,
    /// Show the newest N checkpoints of each VPG.
    #[arg(long, value_name = "N", default_value_t = 20, conflicts_with = "all", value_parser = at_least_one)]
    pub limit: usize,
    /// Show every checkpoint.
    #[arg(long)]
    pub all: bool,
    /// Print one JSON document (shape in docs/commands.md) instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct GuardArgs {
    /// VM name, vmIdentifier, guest IP, user@host, host:port or FQDN.
    #[arg(long)]
    pub vm: String,
    /// What is about to happen, recorded in the tag.
    #[arg(long, default_value = "manual")]
    pub action: String,
    /// Change id recorded in the tag [default: a fresh one].
    #[arg(long, value_name = "ID")]
    pub change: Option<String>,
    /// Seconds to wait for every VPG's checkpoint, more than 0 and at most 3600 [default:
    /// the configured hook budget].
    #[arg(long, value_name = "SECS", value_parser = budget_secs)]
    pub budget: Option<f64>,
    /// Print one JSON document (shape in docs/commands.md) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Which point to restore from is required: clap refuses the command line (exit 2) without
/// one of `--change`, `--checkpoint` or `--before`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("point").required(true).multiple(false)))]
pub struct RecoverArgs {
    /// VM name, vmIdentifier, guest IP, user@host, host:port or FQDN.
    #[arg(long)]
    pub vm: String,
    /// Guest path of the file, e.g. /etc/app.conf or C:\Users\x\y.txt.
    #[arg(long)]
    pub path: String,
    /// Use the checkpoint tagged for this change (the host's tool_use_id).
    #[arg(long, value_name = "ID", group = "point")]
    pub change: Option<String>,
    /// Use this checkpoint id.
    #[arg(long, value_name = "ID", group = "point")]
    pub checkpoint: Option<String>,
    /// Use the newest checkpoint before this UTC time (ISO-8601) or this long ago (`2h`).
    #[arg(long, value_name = "TIME", group = "point")]
    pub before: Option<String>,
    /// The VPG to restore from when the VM is in several.
    #[arg(long, value_name = "NAME")]
    pub vpg: Option<String>,
    /// The FLR volume label to read the file from (e.g. Volume2-NTFS), when the path is on
    /// several volumes of the checkpoint.
    #[arg(long, value_name = "LABEL")]
    pub volume: Option<String>,
    /// Directory to write the file into.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out: PathBuf,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub yes: bool,
    /// Overwrite an existing destination file.
    #[arg(long)]
    pub force: bool,
}

/// The point to restore to is required: clap refuses the command line (exit 2) without one
/// of `--change` and `--checkpoint`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("point").required(true).multiple(false)))]
pub struct RestoreVmArgs {
    /// VM name, vmIdentifier, guest IP, user@host, host:port or FQDN.
    pub vm: String,
    /// Restore to the checkpoint pinned for this change (the host's tool_use_id).
    #[arg(long, value_name = "ID", group = "point")]
    pub change: Option<String>,
    /// Restore to this checkpoint id.
    #[arg(long, value_name = "ID", group = "point")]
    pub checkpoint: Option<String>,
    /// The VPG whose journal to restore from, when the VM is in several [default: the first
    /// recorded for the change].
    #[arg(long, value_name = "NAME")]
    pub vpg: Option<String>,
    /// Only preview: bring the VM up from the checkpoint in a failover test on the test
    /// network, wait, and stop the test; the VM itself is not touched.
    #[arg(long)]
    pub preview: bool,
    /// With --preview: keep the test up this long instead of waiting for Enter.
    #[arg(long, value_name = "DURATION", requires = "preview")]
    pub hold: Option<humantime::Duration>,
    /// A command run by the shell once the VM is ready for commit (e.g. an ssh health
    /// check): a non-zero exit rolls the restore back.
    #[arg(long, value_name = "COMMAND", conflicts_with = "preview")]
    pub verify: Option<String>,
    /// How long Zerto keeps a restore that nobody commits before rolling it back by itself
    /// (so that a crashed rewind leaves nothing half-done), from 5 minutes to 24 hours.
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = rollback_after)]
    pub rollback_after: humantime::Duration,
    /// What Zerto does with the running VM when the restore starts.
    #[arg(long, value_enum, default_value_t = ShutdownArg::Force)]
    pub shutdown: ShutdownArg,
    /// Answer yes to starting the restore and to committing it (for scripts).
    #[arg(long)]
    pub yes: bool,
    /// Print one JSON document (shape in the docs) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// What Zerto does with the running VM when a restore starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShutdownArg {
    /// Shut the guest down gracefully, then power it off after Zerto's wait.
    Force,
    /// Shut the guest down gracefully (fails without the guest tools).
    Graceful,
    /// Leave it running.
    None,
}

pub(crate) fn rollback_after(text: &str) -> Result<humantime::Duration, String> {
    let wait: humantime::Duration = text.parse().map_err(|e| format!("{e}"))?;
    let secs = wait.as_secs();
    if (300..=86_400).contains(&secs) {
        Ok(wait)
    } else {
        Err(String::from("must be from 5m to 24h"))
    }
}

#[derive(Debug, Subcommand)]
pub enum FlrCommand {
    /// List File Level Restore sessions.
    #[command(after_help = "Examples:\n  rewind flr list\n  rewind flr list --vm jp-ubuntu --json")]
    List {
        /// Only sessions of this VM.
        #[arg(long)]
        vm: Option<String>,
        /// Print one JSON document (shape in docs/commands.md) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Unmount a File Level Restore session.
    #[command(after_help = "Examples:\n  rewind flr end 7a1c…   # an id from `rewind flr list`")]
    End {
        /// The session id (FlrSessionIdentifier).
        id: String,
    },
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// How long a plan from `recover_plan` stays valid for `recover_file`.
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    pub plan_ttl: humantime::Duration,
}

/// Where `rewind install` writes the hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scope {
    /// The host's per-user file (~/.claude/settings.json, ~/.codex/hooks.json, …)
    User,
    /// The project's file (./.claude/settings.json, ./.codex/hooks.json, …), shared with
    /// everyone who clones the project: the entries name `rewind` on PATH and pin no config
    /// (refused when rewind is not on PATH)
    Project,
    /// ./.claude/settings.local.json, this machine only (Claude Code only)
    Local,
    /// The host's administrator file (/etc/claude-code/managed-settings.json, …), which only
    /// root can change: the entries name this binary and pin /etc/rewind/config.toml
    Managed,
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The agent host whose settings to change (install into, or take rewind out of).
    #[arg(long, value_enum, default_value_t = Host::ClaudeCode)]
    pub host: Host,
    /// Which settings file to change.
    #[arg(long, value_enum, default_value_t = Scope::User)]
    pub scope: Scope,
    /// With --scope managed: also set the host's setting that keeps users' own hooks and
    /// kill switches from switching the managed entry off (Claude Code
    /// allowManagedHooksOnly, Codex CLI allow_managed_hooks_only, Gemini CLI
    /// hooksConfig.enabled).
    #[arg(long)]
    pub lock: bool,
    /// With --scope managed: the root the system paths are under [default: /], for a machine
    /// image being built; the entries still name the paths as the running system sees them.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// With --host claude-code --scope managed: write nothing; print the settings an MDM
    /// delivers instead (macOS preference domain com.anthropic.claudecode, Windows
    /// HKLM\SOFTWARE\Policies\ClaudeCode value Settings) on stdout, and where each OS reads
    /// them on stderr.
    #[arg(long)]
    pub print_mdm: bool,
}

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The ZVM's URL [default: the configured ZVM].
    pub url: Option<String>,
    /// Write the pin into the configuration without asking.
    #[arg(long)]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The agent host whose hook to check [default: every host with a rewind entry].
    #[arg(long, value_enum)]
    pub host: Option<Host>,
    /// Settings file of the host to inspect [default: the host's user, project and local
    /// files].
    #[arg(long, value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// Print one JSON document (shape in docs/commands.md) instead of text.
    #[arg(long)]
    pub json: bool,
    /// The root the hosts' administrator files are under [default: /], for a machine image.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Load every catalog and report errors.
    #[command(after_help = "Examples:\n  rewind catalog lint")]
    Lint,
    /// List every entry with the file it comes from.
    #[command(after_help = "Examples:\n  rewind catalog list\n  rewind catalog list --json")]
    List {
        /// Print one JSON document (shape in docs/commands.md) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Remember a tool in your own catalog.
    #[command(
        after_help = "Examples:\n  rewind catalog add mutating --server ssh --tool exec --vm-arg host\n  rewind catalog add read-only --server ssh --tool 'list_*'"
    )]
    Add(CatalogAddArgs),
    /// Ask your MCP servers for their tools: which catalog covers each, and a proposal for the rest.
    #[command(
        after_help = "Examples:\n  rewind catalog scan\n  rewind catalog scan --write --mcp-config .mcp.json"
    )]
    Scan(CatalogScanArgs),
}

#[derive(Debug, Args)]
pub struct CatalogScanArgs {
    /// Append the proposals to your catalog (a timestamped backup is kept).
    #[arg(long)]
    pub write: bool,
    /// Seconds each server has to start and list its tools.
    #[arg(long, default_value_t = 20, value_name = "SECS")]
    pub timeout: u64,
    /// The project whose servers to scan [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Scan the servers in this file (shaped like .mcp.json) instead of the host's.
    #[arg(long = "mcp-config", value_name = "FILE")]
    pub mcp_config: Vec<PathBuf>,
}

/// The class `rewind catalog add` records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ToolClassArg {
    Mutating,
    ReadOnly,
}

#[derive(Debug, Args)]
pub struct CatalogAddArgs {
    /// `mutating` or `read-only`.
    #[arg(value_enum)]
    pub class: ToolClassArg,
    /// MCP server name ("*" for any).
    #[arg(long)]
    pub server: String,
    /// Tool name or glob.
    #[arg(long)]
    pub tool: String,
    /// Argument keys (or /json/pointers) naming the VM, for mutating tools.
    #[arg(long = "vm-arg", value_name = "KEY")]
    pub vm_arg: Vec<String>,
    /// Free text recorded with the entry.
    #[arg(long)]
    pub note: Option<String>,
}

#[derive(Debug, Args)]
pub struct LogArgs {
    /// Only decisions about this VM.
    #[arg(long)]
    pub vm: Option<String>,
    /// Only this change (tool_use_id).
    #[arg(long)]
    pub change: Option<String>,
    /// Only this decision.
    #[arg(long, value_enum)]
    pub decision: Option<crate::audit::Ending>,
    /// Only entries from this host session (its session id, or the start of it).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// Only entries since this UTC time (ISO-8601) or this long ago (e.g. 2h, 30m, 1d).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Print the raw JSON lines.
    #[arg(long)]
    pub json: bool,
    /// Check the trail's hash chain instead: name the first line that was edited, deleted
    /// after or moved; exit 1 when the chain breaks.
    #[arg(long, conflicts_with_all = ["vm", "change", "decision", "session", "since", "json"])]
    pub verify: bool,
    /// Prove that record N (its line in the trail, from 1) was written for the call whose
    /// input is in `--input`: the trail keeps only a digest of each call's input, keyed with
    /// a key beside it, so the input can be checked by whoever holds it and the key, and
    /// guessed by nobody. Exit 1 when it was not.
    #[arg(long, value_name = "N", requires = "input",
          conflicts_with_all = ["vm", "change", "decision", "session", "since", "json", "verify"])]
    pub prove: Option<u64>,
    /// The call's input for `--prove`: the tool's input as JSON (`{"command": "…"}`), or the
    /// hook's whole stdin as the agent host sent it.
    #[arg(long, value_name = "FILE", requires = "prove")]
    pub input: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct BrokerArgs {
    /// The Unix socket to serve (its directory must belong to this account or root and be
    /// writable by nobody else), e.g. /run/rewind/broker.sock.
    #[arg(long, value_name = "PATH")]
    pub socket: PathBuf,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SimArgs {
    #[command(subcommand)]
    pub action: Option<SimAction>,
    /// Return once the simulator serves and leave it running in the background (its pid and
    /// port recorded in rewind's state directory, its output in `sim.log` there); `rewind sim
    /// stop` ends it.
    #[arg(long, visible_alias = "detach")]
    pub background: bool,
    /// Write the configuration for this simulator to FILE [default: --config, else
    /// $REWIND_CONFIG, else ~/.config/rewind/config.toml]. The file is written only when it
    /// does not exist or `rewind sim` wrote it (its first line says so), and rewritten on each
    /// start, so that another port keeps it right; a file of your own is never changed.
    #[arg(long, value_name = "FILE")]
    pub write_config: Option<PathBuf>,
    /// Write no configuration file.
    #[arg(long, conflicts_with = "write_config")]
    pub no_config: bool,
    /// Scenario file [default: the shipped lab scenario].
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 9443)]
    pub port: u16,
    /// Simulated seconds per real second (100 runs the real cadences 100x faster).
    #[arg(long, default_value_t = 1.0)]
    pub time_scale: f64,
    /// Directory for the generated certificate (PEM); by default `sim-<port>` in rewind's
    /// private cache directory, kept between runs.
    #[arg(long, value_name = "DIR")]
    pub cert_dir: Option<PathBuf>,
    /// The shape of certificate to present, as ZVMs do.
    #[arg(long, value_enum, default_value_t = SimCertificateArg::CaSigned)]
    pub certificate: SimCertificateArg,
    /// Present this certificate (PEM, the server's first, then any chain) instead of a
    /// generated one, e.g. what `openssl req -x509` made for a ZVM; needs --key.
    #[arg(long, value_name = "FILE", requires = "key", conflicts_with_all = ["certificate", "cert_dir"])]
    pub cert: Option<PathBuf>,
    /// The private key (PEM) of --cert.
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub key: Option<PathBuf>,
    /// Answer as some real appliances do (repeatable), to try rewind against them.
    #[arg(long, value_enum, value_name = "BEHAVIOUR")]
    pub appliance: Vec<ApplianceArg>,
}

/// What `rewind sim` can do besides serving.
#[derive(Debug, Clone, Copy, Subcommand)]
pub enum SimAction {
    /// Stop the simulator `rewind sim --background` started (its record is in rewind's state
    /// directory).
    #[command(after_help = "Examples:\n  rewind sim stop")]
    Stop,
}

/// Ways real ZVMs answer that `rewind sim --appliance` imitates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ApplianceArg {
    /// 9.x session login only with the ZVM host's Windows account (AuthenticationMethod 0).
    SessionWindows,
    /// FLR browse in pages of 2 items.
    BrowsePages,
    /// FLR browse refuses the paging fields (an older appliance).
    BrowseRefusesPaging,
    /// Download URLs relative, without a leading slash.
    DownloadUrlRelative,
    /// Download URLs absolute on another name of the ZVM (localhost).
    DownloadUrlOtherHost,
    /// Downloads packed in a zip archive.
    DownloadZip,
    /// `/v1/vms` lists a VM being deleted with null names.
    NullNameRows,
    /// A finished task answers 401.
    #[value(name = "task-gone-401")]
    TaskGone401,
    /// Every 4th request is answered 429 with Retry-After: 2.
    RetryAfter,
    /// Checkpoint names listed cut to 40 characters.
    NamesCut,
    /// A journal VM restore's task waits in WaitingForUserInput until commit or rollback.
    RestoreWaitsForCommit,
    /// Journal VM restores fail with a reason.
    RestoreFails,
    /// Journal VM restore requests answer HTTP 500 with a message.
    Restore500,
    /// RestoreCommit and RestoreRollback accept only an empty body.
    RestoreDecisionNoBody,
    /// Stopping a failover test re-tags the tested checkpoint "Tested at …".
    RetagOnTestStop,
}

/// Certificate shapes `rewind sim` can present.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SimCertificateArg {
    /// A leaf for localhost and 127.0.0.1 signed by a generated CA (trust the CA).
    CaSigned,
    /// One self-signed CA:TRUE certificate, as `openssl req -x509` makes.
    SelfSignedCa,
    /// A self-signed certificate for zvm.example only, not the address used.
    OtherName,
}

#[derive(Debug, Args)]
pub struct VmsArgs {
    /// Print one JSON document (`{"vms": [{"name", "id", "ips", "vpgs"}]}`) instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SelftestArgs {
    /// A VM to test with (a tagged checkpoint is inserted on each of its VPGs).
    #[arg(long)]
    pub vm: String,
    /// A small guest file to restore into a temporary directory and hash, e.g. /etc/hostname.
    #[arg(long)]
    pub path: Option<String>,
    /// Write the shape of every answer (field names and JSON types, no values) to FILE.
    #[arg(long, value_name = "FILE")]
    pub capture: Option<PathBuf>,
    /// Also run a failover test of the VM from the tagged checkpoint and stop it (the VM
    /// itself is not touched; a test VM comes up on the VPG's test network for a moment),
    /// so that --capture records its answers too.
    #[arg(long)]
    pub failover_test: bool,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Simulated seconds per real second.
    #[arg(long, default_value_t = 20.0)]
    pub time_scale: f64,
}

/// A count of one or more: `--limit 0` would show nothing and look like an empty VPG.
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err(String::from("must be 1 or more (--all shows every one)")),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// `guard --budget`: seconds, more than 0 and at most an hour (a usage error otherwise).
fn budget_secs(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs > 0.0 && secs <= 3600.0 => Ok(secs),
        Ok(_) => Err(String::from("give seconds more than 0 and at most 3600")),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    #[test]
    fn command_line_is_consistent() {
        super::Cli::command().debug_assert();
    }

    /// Every command a person can see has examples in its help, and the top-level help says
    /// where the configuration is looked for.
    #[test]
    fn every_visible_command_has_examples() {
        fn walk(command: &mut clap::Command, path: &str, missing: &mut Vec<String>) {
            for sub in command.get_subcommands_mut() {
                if sub.is_hide_set() || sub.get_name() == "help" {
                    continue;
                }
                let path = format!("{path} {}", sub.get_name());
                if !sub.render_help().to_string().contains("\nExamples:\n  ") {
                    missing.push(path.clone());
                }
                walk(sub, &path, missing);
            }
        }
        let mut cli = super::Cli::command();
        let top = cli.render_help().to_string();
        assert!(top.contains("/etc/rewind/config.toml") && top.contains("$REWIND_CONFIG"));
        let mut missing = Vec::new();
        walk(&mut cli, "rewind", &mut missing);
        assert!(missing.is_empty(), "no Examples: {missing:?}");
    }

    #[test]
    fn checkpoints_limit_zero_is_a_usage_error() {
        let parse = |n: &str| {
            <super::Cli as clap::Parser>::try_parse_from([
                "rewind",
                "checkpoints",
                "db01",
                "--limit",
                n,
            ])
        };
        let err = parse("0").expect_err("--limit 0 shows nothing");
        assert_eq!(err.exit_code(), i32::from(crate::exit::BLOCKED));
        assert!(err.to_string().contains("--all"), "{err}");
        assert!(parse("1").is_ok());
    }

    #[test]
    fn recover_without_a_restore_point_is_a_usage_error() {
        let err = <super::Cli as clap::Parser>::try_parse_from([
            "rewind", "recover", "--vm", "db01", "--path", "/etc/a",
        ])
        .expect_err("a restore point is required");
        assert_eq!(err.kind(), clap::error::ErrorKind::MissingRequiredArgument);
        assert_eq!(err.exit_code(), i32::from(crate::exit::BLOCKED));
        for point in [["--change", "toolu_1"], ["--checkpoint", "17"]] {
            let mut args = vec!["rewind", "recover", "--vm", "db01", "--path", "/etc/a"];
            args.extend(point);
            assert!(<super::Cli as clap::Parser>::try_parse_from(args).is_ok());
        }
    }
}
