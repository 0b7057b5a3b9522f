//! The shell catalog's TOML as written (`Raw*`, unknown keys rejected) and the checks that
//! turn it into [`Program`]s and [`RemoteRule`]s, each error naming the file and the entry.

use anyhow::bail;
use serde::Deserialize;

use super::{Grammar, Program, RemoteRule, names_a_cmdlet};
use crate::shell::dialect::Dialect;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawShellCatalog {
    #[serde(default)]
    pub(super) program: Vec<RawProgram>,
    pub(super) remote: Option<RawRemote>,
    pub(super) windows: Option<RawWindows>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawProgram {
    names: Vec<String>,
    grammar: Grammar,
    #[serde(default)]
    value_options: Vec<String>,
    #[serde(default)]
    read_only: Vec<String>,
    #[serde(default)]
    mutating: Vec<String>,
    #[serde(default)]
    host_options: Vec<String>,
    #[serde(default)]
    other_host_options: Vec<String>,
    host_operand: Option<String>,
    #[serde(default)]
    host_env: Vec<String>,
    #[serde(default)]
    other_host_env: Vec<String>,
    #[serde(default)]
    mutating_options: Vec<String>,
    without_host: Option<WithoutHost>,
    #[serde(default)]
    windows_flags: bool,
    #[serde(default)]
    request_items: bool,
    dialect: Option<Dialect>,
    #[serde(default)]
    scope: Vec<String>,
    #[serde(default)]
    ask_actions: Vec<String>,
    remote_command: Option<Dialect>,
    #[serde(default)]
    exec: Vec<String>,
    #[serde(default)]
    exec_kwargs: Vec<String>,
    #[serde(default)]
    vm_options: Vec<String>,
    vm_operand: Option<usize>,
    #[serde(default)]
    method_options: Vec<String>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
enum WithoutHost {
    Local,
    Ask,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRemote {
    #[serde(default)]
    pub(super) read_only: Vec<String>,
    #[serde(default)]
    pub(super) rule: Vec<RawRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRule {
    command: String,
    #[serde(default)]
    subcommands: Vec<String>,
    #[serde(default)]
    unless: Vec<String>,
    #[serde(default)]
    unless_short: String,
    #[serde(default)]
    unless_text: Vec<String>,
    operands_max: Option<usize>,
    #[serde(default)]
    value_options: Vec<String>,
    only_options: Option<Vec<String>>,
    #[serde(default)]
    global_options: Vec<String>,
    action_at: Option<usize>,
    #[serde(default)]
    actions: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawWindows {
    #[serde(default)]
    pub(super) read_only: Vec<String>,
}

/// Checks one program; `entry` (where it is) is only put into words for an error: the hook
/// loads the user shell catalogs on every command it judges, the built-in one on many.
/// `read_only` and `mutating`: only for the grammars that read them, each entry a word
/// (Kamal's a subcommand path, words one space apart).
fn check_lists(raw: &RawProgram, fleet: bool, at: &dyn Fn() -> String) -> anyhow::Result<()> {
    let lists_allowed = fleet
        || matches!(
            raw.grammar,
            Grammar::Database
                | Grammar::Ansible
                | Grammar::AnsiblePlaybook
                | Grammar::Smbclient
                | Grammar::Govc
                | Grammar::Virsh
                | Grammar::Vmrun
                | Grammar::Xe
                | Grammar::Kamal
                | Grammar::Capistrano
                | Grammar::PsVm
        );
    if !lists_allowed && (!raw.read_only.is_empty() || !raw.mutating.is_empty()) {
        bail!(
            "{}: read_only and mutating are only read for the ansible, ansible-playbook, smbclient, govc, virsh, vmrun, xe, kamal, capistrano, database, ps-vm and fleet grammars",
            at()
        );
    }
    if !raw.mutating.is_empty() && !matches!(raw.grammar, Grammar::Govc | Grammar::Cloud) {
        bail!(
            "{}: mutating is only read for the govc and cloud grammars",
            at()
        );
    }
    // In the fleet grammar `""` in read_only stands for "no action at all".
    for item in raw
        .read_only
        .iter()
        .chain(&raw.mutating)
        .filter(|item| !(fleet && item.is_empty()))
    {
        // Subcommands of subcommands (Kamal's `app logs`, bolt's `file download`), one space
        // apart.
        if raw.grammar == Grammar::Kamal || fleet {
            for word in item.split(' ') {
                check_word(word, || format!("{}: read_only {item:?}", at()))?;
            }
        } else {
            check_word(item, || format!("{}: read_only/mutating", at()))?;
        }
    }
    Ok(())
}

pub(super) fn check_program(
    raw: RawProgram,
    entry: &dyn Fn() -> String,
    origin: &str,
) -> anyhow::Result<Program> {
    if raw.names.is_empty() {
        bail!("{}: names is empty, so the entry can never match", entry());
    }
    for name in &raw.names {
        check_word(name, || format!("{}: names", entry()))?;
    }
    let at = || format!("{} ({})", entry(), raw.names[0]);
    for option in &raw.value_options {
        let flag = option.starts_with('-') || (raw.windows_flags && option.starts_with('/'));
        if !flag || option.len() < 2 || option.contains(char::is_whitespace) {
            bail!(
                "{}: value_options {option:?} is not an option (it must start with -)",
                at()
            );
        }
    }
    let fleet = matches!(
        raw.grammar,
        Grammar::Fleet | Grammar::UncWrite | Grammar::Cloud
    );
    let objects = raw.grammar == Grammar::PsObjects;
    check_lists(&raw, fleet, &at)?;
    check_fleet_keys(&raw, fleet, &at)?;
    check_vm_keys(&raw, &at)?;
    let host_list = matches!(raw.grammar, Grammar::HostList) || objects;
    if matches!(raw.grammar, Grammar::HostList) && raw.host_options.is_empty() {
        bail!(
            "{}: the host-list grammar needs host_options, the options that list hosts",
            at()
        );
    }
    let database = raw.grammar == Grammar::Database;
    if !host_list
        && !fleet
        && !database
        && (!raw.host_options.is_empty() || !raw.other_host_options.is_empty())
    {
        bail!(
            "{}: host_options and other_host_options are only read for the host-list, fleet, database and ps-objects grammars",
            at()
        );
    }
    let flag_start = |o: &str| o.starts_with('-') || (raw.windows_flags && o.starts_with('/'));
    for option in raw.host_options.iter().chain(&raw.other_host_options) {
        if !flag_start(option) || option.len() < 2 || option.contains(char::is_whitespace) {
            bail!(
                "{}: option {option:?} is not an option (it must start with -)",
                at()
            );
        }
    }
    let cmdlet = matches!(
        raw.grammar,
        Grammar::PsRemoting | Grammar::PsComputer | Grammar::PsVm | Grammar::PsObjects
    ) || ((raw.windows_flags || raw.dialect == Some(Dialect::PowerShell))
        && names_a_cmdlet(&raw.names));
    Ok(Program {
        cmdlet,
        names: raw.names,
        grammar: raw.grammar,
        value_options: raw.value_options,
        read_only: raw.read_only,
        mutating: raw.mutating,
        host_options: raw.host_options,
        other_host_options: raw.other_host_options,
        host_operand: raw.host_operand,
        host_env: raw.host_env,
        other_host_env: raw.other_host_env,
        mutating_options: raw.mutating_options,
        without_host_asks: raw.without_host == Some(WithoutHost::Ask),
        windows_flags: raw.windows_flags,
        request_items: raw.request_items,
        dialect: raw.dialect,
        scope: raw.scope,
        ask_actions: raw.ask_actions,
        method_options: raw.method_options,
        remote_command: raw.remote_command,
        exec: raw.exec,
        exec_kwargs: raw.exec_kwargs,
        vm_options: raw.vm_options,
        vm_operand: raw.vm_operand,
        origin: origin.to_owned(),
    })
}

/// Checks one remote rule; `at` (where it is) is only put into words for an error.
pub(super) fn check_rule(rule: RawRule, at: &dyn Fn() -> String) -> anyhow::Result<RemoteRule> {
    check_word(&rule.command, || format!("{}: command", at()))?;
    if rule.subcommands.is_empty()
        && rule.unless.is_empty()
        && rule.unless_short.is_empty()
        && rule.unless_text.is_empty()
        && rule.operands_max.is_none()
        && rule.only_options.is_none()
        && rule.action_at.is_none()
    {
        bail!(
            "{} (command {:?}): a rule needs subcommands, unless, unless_short, unless_text, operands_max, only_options or action_at; list a command without conditions in [remote] read_only",
            at(),
            rule.command
        );
    }
    if rule.action_at.is_some() == rule.actions.is_empty() {
        bail!(
            "{} (command {:?}): action_at and actions go together",
            at(),
            rule.command
        );
    }
    Ok(RemoteRule {
        command: rule.command,
        subcommands: rule.subcommands,
        unless: rule.unless,
        unless_short: rule.unless_short,
        unless_text: rule.unless_text,
        operands_max: rule.operands_max,
        value_options: rule.value_options,
        only_options: rule.only_options,
        global_options: rule.global_options,
        action_at: rule.action_at,
        actions: rule.actions,
    })
}

/// The keys only the fleet and unc-write grammars read, refused elsewhere (ps-objects reads
/// `host_operand` too).
fn check_fleet_keys(raw: &RawProgram, fleet: bool, at: &dyn Fn() -> String) -> anyhow::Result<()> {
    let operand_read = fleet || raw.grammar == Grammar::PsObjects;
    if (!operand_read && raw.host_operand.is_some())
        || !fleet
            && (!raw.host_env.is_empty()
                || !raw.other_host_env.is_empty()
                || (!raw.mutating_options.is_empty() && raw.grammar != Grammar::Database)
                || raw.without_host.is_some()
                || raw.windows_flags
                || raw.request_items
                || !raw.scope.is_empty()
                || !raw.ask_actions.is_empty()
                || !raw.method_options.is_empty()
                || raw.remote_command.is_some()
                || !raw.exec.is_empty()
                || !raw.exec_kwargs.is_empty())
    {
        bail!(
            "{}: host_operand, host_env, other_host_env, mutating_options, without_host, windows_flags, request_items, scope, ask_actions, method_options, remote_command, exec and exec_kwargs are only read for the fleet grammar (host_operand for ps-objects too)",
            at()
        );
    }
    if let Some(operand) = &raw.host_operand
        && !matches!(operand.as_str(), "all" | "unc" | "url")
        && operand.parse::<usize>().is_err()
    {
        bail!(
            "{}: host_operand {operand:?} is not one of \"1\", \"2\", …, \"all\", \"unc\", \"url\"",
            at()
        );
    }
    Ok(())
}

/// The keys only the ps-vm and ps-objects grammars read, refused elsewhere; a VM parameter
/// is a parameter, and positions count from 1.
fn check_vm_keys(raw: &RawProgram, at: &dyn Fn() -> String) -> anyhow::Result<()> {
    let vm = matches!(raw.grammar, Grammar::PsVm | Grammar::PsObjects);
    if !vm && (!raw.vm_options.is_empty() || raw.vm_operand.is_some()) {
        bail!(
            "{}: vm_options and vm_operand are only read for the ps-vm and ps-objects grammars",
            at()
        );
    }
    if raw.vm_operand == Some(0) {
        bail!("{}: vm_operand counts from 1", at());
    }
    for option in &raw.vm_options {
        if !option.starts_with('-') || option.len() < 2 || option.contains(char::is_whitespace) {
            bail!(
                "{}: vm_options {option:?} is not a parameter (it must start with -)",
                at()
            );
        }
    }
    Ok(())
}

/// Refuses an empty word or one with white space; `at` (where it was found) is only put
/// into words for an error: the hook loads the user shell catalogs on every command it
/// judges, the built-in one on many.
pub(super) fn check_word(word: &str, at: impl FnOnce() -> String) -> anyhow::Result<()> {
    if word.trim().is_empty() {
        bail!("{}: an entry is empty", at());
    }
    if word.chars().any(char::is_whitespace) {
        bail!("{}: {word:?} contains white space", at());
    }
    Ok(())
}
