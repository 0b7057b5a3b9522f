//! `rewind check` and `rewind catalog lint|list|add|scan`.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context as _, bail};

use super::{say, warn_config};
use crate::catalog::{self, Catalog, Classification, ToolClass, ToolName};
use crate::classify::{self, Plan};
use crate::cli::{CatalogAddArgs, CatalogScanArgs, CheckArgs, ToolClassArg};
use crate::config::Config;
use crate::hook;
use crate::host::{self, Event, Host, ToolCall};
use crate::lockfile;
use crate::scan;
use crate::shell::{self, Dialect, Outcome};

/// The call `rewind check TOOL --input JSON` describes, run from this directory.
fn named_call(args: &CheckArgs, tool: &str) -> anyhow::Result<ToolCall> {
    let input: serde_json::Value = match &args.input {
        Some(text) => serde_json::from_str(text).context("--input is not a JSON object")?,
        None => serde_json::json!({}),
    };
    Ok(ToolCall {
        host: args.host.unwrap_or(Host::ClaudeCode),
        session: None,
        change: None,
        tool: tool.to_owned(),
        server: None,
        input,
        event: Event::BeforeTool,
        cwd: std::env::current_dir().ok(),
        server_hint: None,
    })
}

/// `rewind check <tool> [--input JSON]` or `rewind check --payload FILE`: how the hook would
/// decide on a call, without Zerto. The same classifier as the hook's decides, reading the
/// same files; nothing is written (a session the call opens is not remembered).
pub fn check(config_path: Option<&Path>, args: &CheckArgs) -> anyhow::Result<()> {
    let config = Config::discover(config_path)?;
    warn_config(&config);
    if let Some(command) = &args.command {
        let dialect = if args.powershell {
            Dialect::PowerShell
        } else {
            Dialect::Posix
        };
        return check_command(&config, command, dialect);
    }
    let call = match (&args.payload, &args.tool) {
        (Some(path), _) => match payload_call(&config, args, path)? {
            Some(call) => call,
            None => return Ok(()),
        },
        (None, Some(tool)) => named_call(args, tool)?,
        (None, None) => bail!("name a tool or give --payload"),
    };
    let name = ToolName::parse(&call.tool, call.server.as_deref());
    if args.json {
        return check_json(&call, &name, &config);
    }
    say(match &name {
        ToolName::Mcp { server, tool } => format!(
            "tool:     {} (MCP server {server:?}, tool {tool:?})",
            call.tool
        ),
        ToolName::Host(tool) => format!("tool:     {tool} (a host tool)"),
    });
    // What the catalogs say, for the reader; the decision below comes from the hook's code.
    if call.event == Event::BeforeTool
        && let Ok(catalog) = Catalog::load(config.hook.builtin_catalogs, &config.hook.catalogs)
    {
        explain(&catalog.classify(&name, &call.input));
    }
    match classify::plan(&call, &config, &hook::LocalFiles::new(&config)).plan {
        Plan::Decided(decision) => say(format!(
            "decision: {}{}",
            decision.label(),
            decision
                .text()
                .map(|t| format!(": {t}"))
                .unwrap_or_default()
        )),
        Plan::Guard(targets) => {
            let source = targets
                .first()
                .map(|t| t.source.clone())
                .unwrap_or_default();
            let refs: Vec<String> = targets.iter().map(|t| t.reference.clone()).collect();
            // `key` for an argument; a binding names itself (`[[server]] prod-ssh`).
            let from = if source.starts_with('`') {
                format!("argument {source}")
            } else {
                source
            };
            say(format!(
                "{:<10}{} ({from})",
                if refs.len() == 1 { "VM:" } else { "VMs:" },
                refs.join(", ")
            ));
            say(
                "decision: checkpoint every VPG of every VM named in Zerto first; deny if that fails, ask if Zerto does not know a VM",
            );
        }
    }
    Ok(())
}

/// The call a `--payload` file holds, read and its server named as the hook does; `None` when
/// that alone decides (unreadable input, a server that cannot be told), the decision said.
fn payload_call(
    config: &Config,
    args: &CheckArgs,
    path: &Path,
) -> anyhow::Result<Option<ToolCall>> {
    let bytes = if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes)
            .context("cannot read the payload from stdin")?;
        bytes
    } else {
        std::fs::read(path).with_context(|| format!("cannot read payload {}", path.display()))?
    };
    let (tool, label, reason) = match host::read(args.host, &bytes) {
        Ok(mut call) => match hook::name_server(&mut call, config) {
            None => return Ok(Some(call)),
            Some(decision) => (
                Some(call.tool.clone()),
                decision.label(),
                decision.text().unwrap_or_default().to_owned(),
            ),
        },
        Err((_, why)) => (None, "block (exit 2)", why.to_string()),
    };
    if args.json {
        let decision = label.split(' ').next().unwrap_or(label);
        super::print_json(&serde_json::json!({
            "tool": tool, "class": null, "entry": null,
            "decision": decision, "reason": reason, "targets": [],
        }))?;
    } else {
        say(format!("decision: {label}: {reason}"));
    }
    Ok(None)
}

/// `rewind check --json`: the same facts as one document.
fn check_json(call: &ToolCall, name: &ToolName, config: &Config) -> anyhow::Result<()> {
    let (class, entry) = if call.event == Event::BeforeTool
        && let Ok(catalog) = Catalog::load(config.hook.builtin_catalogs, &config.hook.catalogs)
    {
        let entry_json = |e: &catalog::Entry| serde_json::json!({"class": e.class.to_string(), "server": e.server, "tool": e.tool, "from": e.origin});
        match catalog.classify(name, &call.input) {
            Classification::Local => ("local", None),
            Classification::Shell { entry, .. } => ("shell", entry.as_ref().map(entry_json)),
            Classification::ReadOnly(e) => ("read-only", Some(entry_json(&e))),
            Classification::Unlisted => ("unlisted", None),
            Classification::Mutating { entry, .. } => ("mutating", Some(entry_json(&entry))),
        }
    } else {
        ("unknown", None)
    };
    let (decision, reason, targets) =
        match classify::plan(call, config, &hook::LocalFiles::new(config)).plan {
        Plan::Decided(decision) => (
            decision.label().to_owned(),
            decision.text().map(str::to_owned),
            Vec::new(),
        ),
        Plan::Guard(targets) => (
            String::from("checkpoint"),
            None,
            targets
                .iter()
                // Data, not prose: the argument's name without the Markdown quotes of messages.
                .map(|t| serde_json::json!({"vm": t.reference, "argument": t.source.replace('`', "")}))
                .collect(),
        ),
    };
    super::print_json(&serde_json::json!({
        "tool": call.tool,
        "class": class,
        "entry": entry,
        "decision": decision,
        "reason": reason,
        "targets": targets,
    }))
}

/// The class and entry lines of `rewind check`.
fn explain(class: &Classification) {
    let entry_line = |e: &catalog::Entry| {
        let note = e
            .note
            .as_deref()
            .map(|n| format!(": {n}"))
            .unwrap_or_default();
        format!(
            "entry:    [[{}]] server {:?} tool {:?} in {}{note}",
            e.class, e.server, e.tool, e.origin
        )
    };
    match class {
        Classification::Local => say("class:    local (touches only this machine)"),
        Classification::Shell { entry, .. } => {
            if let Some(entry) = entry {
                say(entry_line(entry));
            }
            say("class:    runs a command: the command decides (see `rewind check --command`)");
        }
        Classification::ReadOnly(entry) => {
            say("class:    read-only");
            say(entry_line(entry));
        }
        Classification::Unlisted => say("class:    unlisted (in no catalog)"),
        Classification::Mutating { entry, .. } => {
            say("class:    mutating");
            say(entry_line(entry));
        }
    }
}

/// `rewind check --command`: the hook's own analysis of a command, targets resolved
/// (the ssh configuration, the inventory), Zerto not called.
fn check_command(config: &Config, command: &str, dialect: Dialect) -> anyhow::Result<()> {
    let until = std::time::Instant::now() + config.hook.budget;
    let cwd = std::env::current_dir().ok();
    // The hook's shell tool meets the self-guard before the shell analysis, and so does this.
    let protected = crate::selfguard::Protected::new(config);
    if let Some(why) = crate::selfguard::command(command, dialect, cwd.as_deref(), &protected) {
        say(format!("decision: ask ({why})"));
        return Ok(());
    }
    let judgement = shell::judge(command, dialect, config, cwd.as_deref(), false, until)?;
    for line in judgement.analysis.to_string().lines() {
        say(line);
    }
    say(match &judgement.outcome {
        Outcome::NoDecision => {
            String::from("decision: none; the command runs under the host's own rules")
        }
        Outcome::Ask { part, why } => format!("decision: ask (`{part}`: {why})"),
        Outcome::Checkpoint(vms) => format!(
            "decision: checkpoint every VPG of {} in Zerto before the command runs; deny if that fails, ask if Zerto does not know a VM",
            vms.join(", ")
        ),
    });
    Ok(())
}

/// `rewind catalog lint`: every catalog loads, or the errors are listed.
pub fn lint(config_path: Option<&Path>) -> anyhow::Result<()> {
    let config = Config::discover(config_path)?;
    warn_config(&config);
    let mut failed = 0;
    if config.hook.builtin_catalogs {
        for shipped in catalog::BUILTIN {
            failed += report(shipped.origin, Catalog::parse(shipped.toml, shipped.origin));
        }
    }
    for file in &config.hook.catalogs {
        let result = Catalog::load(false, std::slice::from_ref(file));
        failed += report(&file.display().to_string(), result);
    }
    let shell_files = config
        .hook
        .builtin_catalogs
        .then_some(None)
        .into_iter()
        .chain(config.shell.catalogs.iter().map(Some));
    for file in shell_files {
        let (name, result) = match file {
            None => (
                shell::catalog::BUILTIN.0.to_owned(),
                shell::ShellCatalog::builtin(),
            ),
            Some(path) => (
                path.display().to_string(),
                shell::ShellCatalog::load(false, std::slice::from_ref(path)),
            ),
        };
        match result {
            Ok(catalog) => say(format!(
                "ok    {name} ({} programs)",
                catalog.programs().len()
            )),
            Err(e) => {
                say(format!("error {e:#}"));
                failed += 1;
            }
        }
    }
    if failed > 0 {
        bail!("{failed} catalog(s) have errors");
    }
    let catalog = Catalog::load(config.hook.builtin_catalogs, &config.hook.catalogs)?;
    for shadow in catalog.shadows() {
        say(format!("warn  {}", shadow.describe()));
    }
    Ok(())
}

/// `doctor`'s catalog findings beyond loading: user entries that switch guarding off for
/// shipped mutating tools, and configured MCP servers whose tools no catalog covers, from
/// the last `catalog scan` (doctor starts no server). `(true, …)` passes, `(false, …)` warns.
pub fn doctor_findings(catalog: &Catalog) -> Vec<(bool, String, String)> {
    let mut findings: Vec<(bool, String, String)> = catalog
        .shadows()
        .iter()
        .map(|shadow| (false, String::from("catalog guard off"), shadow.describe()))
        .collect();
    let servers = match configured_servers(&[], None) {
        Ok(servers) => servers,
        Err(e) => {
            findings.push((false, String::from("mcp servers"), format!("{e:#}")));
            return findings;
        }
    };
    if servers.is_empty() {
        return findings;
    }
    let cache = match crate::config::cache_dir() {
        Ok(dir) => dir,
        Err(e) => {
            findings.push((false, String::from("mcp servers"), format!("{e:#}")));
            return findings;
        }
    };
    let reports = scan::scan(
        &servers,
        catalog,
        scan::Source::Cache(scan::CACHE_TTL),
        &cache,
    );
    let mut covered = 0;
    for report in &reports {
        let what = format!("mcp server {}", report.name);
        match &report.tools {
            Err(e) => findings.push((
                false,
                what,
                format!("tools unknown: {e}; run `rewind catalog scan`"),
            )),
            Ok(tools) => {
                let uncovered = report.uncovered();
                if uncovered.is_empty() {
                    covered += 1;
                    continue;
                }
                let names: Vec<String> = uncovered.iter().take(5).map(|t| t.name.clone()).collect();
                findings.push((
                    false,
                    what,
                    format!(
                        "{} of its {} tools are in no catalog, so the hook asks before each ({}{}); run `rewind catalog scan`",
                        uncovered.len(),
                        tools.len(),
                        names.join(", "),
                        if uncovered.len() > names.len() { ", ..." } else { "" }
                    ),
                ));
            }
        }
    }
    if covered > 0 {
        findings.push((
            true,
            String::from("mcp servers"),
            format!(
                "{covered} of {} configured servers have every tool in a catalog",
                reports.len()
            ),
        ));
    }
    findings
}

fn report(name: &str, result: anyhow::Result<Catalog>) -> usize {
    match result {
        Ok(catalog) => {
            let count = catalog.entries().len();
            let noun = if count == 1 { "entry" } else { "entries" };
            say(format!("ok    {name} ({count} {noun})"));
            0
        }
        Err(e) => {
            say(format!("error {e:#}"));
            1
        }
    }
}

/// `rewind catalog list`: every entry, in load order (later ones win).
pub fn list(config_path: Option<&Path>, json: bool) -> anyhow::Result<()> {
    let config = Config::discover(config_path)?;
    warn_config(&config);
    let catalog = Catalog::load(config.hook.builtin_catalogs, &config.hook.catalogs)?;
    if json {
        return super::print_json(&serde_json::json!({
            "entries": catalog.entries().iter().map(|e| serde_json::json!({
                "class": e.class.to_string(),
                "server": e.server,
                "tool": e.tool,
                "vm_arg": e.vm_arg,
                "note": e.note,
                "from": e.origin,
            })).collect::<Vec<_>>(),
        }));
    }
    say(format!(
        "{:<10} {:<14} {:<16} {:<40} FROM",
        "CLASS", "SERVER", "TOOL", "VM_ARG"
    ));
    for e in catalog.entries() {
        say(format!(
            "{:<10} {:<14} {:<16} {:<40} {}",
            e.class.to_string(),
            e.server,
            e.tool,
            e.vm_arg.join(","),
            e.origin
        ));
    }
    Ok(())
}

/// `rewind catalog add`: appends an entry to the user's catalog, checked before writing.
pub fn add(config_path: Option<&Path>, args: &CatalogAddArgs) -> anyhow::Result<()> {
    let config = Config::discover(config_path)?;
    warn_config(&config);
    let path = config
        .hook
        .user_catalog()
        .context("no home directory and no [hook] catalogs: nowhere to write")?;
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::from(
            "# Your own tool catalog (written by `rewind catalog add`; edit freely).\n",
        ),
        Err(e) => bail!("cannot read {}: {e}", path.display()),
    };
    let class = match args.class {
        ToolClassArg::Mutating => ToolClass::Mutating,
        ToolClassArg::ReadOnly => ToolClass::ReadOnly,
    };
    if class == ToolClass::Mutating && args.vm_arg.is_empty() {
        bail!(
            "`rewind catalog add mutating` needs --vm-arg KEY: the argument of the tool that names the VM (e.g. --vm-arg host); nothing was written"
        );
    }
    if let Ok(current) = Catalog::parse(&existing, &path.display().to_string())
        && let Some(same) = current
            .entries()
            .iter()
            .find(|e| e.server == args.server && e.tool == args.tool)
    {
        bail!(
            "server {:?} tool {:?} is already in {} as [[{}]]; edit that file to change it; nothing was written",
            args.server,
            args.tool,
            path.display(),
            same.class
        );
    }
    let mut entry = format!(
        "\n[[{class}]]\nserver = {}\ntool = {}\n",
        toml_string(&args.server),
        toml_string(&args.tool)
    );
    if !args.vm_arg.is_empty() {
        let keys: Vec<String> = args.vm_arg.iter().map(|k| toml_string(k)).collect();
        let _ = writeln!(entry, "vm_arg = [{}]", keys.join(", "));
    }
    if let Some(note) = &args.note {
        let _ = writeln!(entry, "note = {}", toml_string(note));
    }
    let updated = format!(
        "{}{entry}",
        existing.trim_end_matches('\n').to_owned() + "\n"
    );
    Catalog::parse(&updated, &path.display().to_string())?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    lockfile::write_private_atomic(&path, updated.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    say(format!(
        "added [[{class}]] server {:?} tool {:?} to {}",
        args.server,
        args.tool,
        path.display()
    ));
    Ok(())
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

/// The MCP servers to scan: the files named with `--mcp-config`, else the host's own
/// configuration for the project.
pub fn configured_servers(
    mcp_config: &[std::path::PathBuf],
    project: Option<&Path>,
) -> anyhow::Result<Vec<scan::servers::Server>> {
    if !mcp_config.is_empty() {
        let mut servers = Vec::new();
        for file in mcp_config {
            servers.extend(scan::servers::from_file(file)?);
        }
        return Ok(servers);
    }
    let project = match project {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir().context("cannot tell the current directory")?,
    };
    scan::servers::claude_code(crate::config::home_dir().as_deref(), &project)
}

/// `rewind catalog scan`: every configured server's tools, the entry covering each, and a
/// proposal for the rest; with `--write`, the proposals go into the user's catalog.
pub fn scan(config_path: Option<&Path>, args: &CatalogScanArgs) -> anyhow::Result<()> {
    let config = Config::discover(config_path)?;
    warn_config(&config);
    let catalog = Catalog::load(config.hook.builtin_catalogs, &config.hook.catalogs)?;
    let servers = configured_servers(&args.mcp_config, args.project.as_deref())?;
    if servers.is_empty() {
        say("no MCP servers are configured (looked in ~/.claude.json and ./.mcp.json)");
        return Ok(());
    }
    let reports = scan::scan(
        &servers,
        &catalog,
        scan::Source::Servers(std::time::Duration::from_secs(args.timeout.max(1))),
        &crate::config::cache_dir()?,
    );
    for server in &reports {
        say(format!(
            "server {} ({}) from {}",
            server.name, server.transport, server.origin
        ));
        let tools = match &server.tools {
            Ok(tools) => tools,
            Err(e) => {
                say(format!("  not scanned: {e}"));
                continue;
            }
        };
        for tool in tools {
            say(tool_line(tool));
        }
    }
    let uncovered: usize = reports.iter().map(|r| r.uncovered().len()).sum();
    let failed = reports.iter().filter(|r| r.tools.is_err()).count();
    say(format!(
        "{} server(s), {uncovered} tool(s) in no catalog, {failed} server(s) not scanned",
        reports.len()
    ));
    let flagged: usize = reports
        .iter()
        .filter_map(|r| r.tools.as_ref().ok())
        .flatten()
        .filter(|t| t.review.is_some())
        .count();
    if flagged > 0 {
        say(format!(
            "{flagged} catalog entr{} to review: read-only for a tool its server annotates destructive",
            if flagged == 1 { "y" } else { "ies" }
        ));
    }
    let stamp = crate::time::format_utc_millis(std::time::SystemTime::now());
    let proposals = scan::proposals_toml(&reports, &stamp);
    if !args.write {
        if !proposals.is_empty() {
            say("run again with --write to add the proposals to your catalog");
        }
    } else if proposals.is_empty() {
        say("nothing to write");
    } else {
        write_proposals(&config, &proposals)?;
    }
    // A server left unscanned may hide mutating tools no catalog covers: not a success.
    let unscanned: Vec<&str> = reports
        .iter()
        .filter(|r| r.tools.is_err())
        .map(|r| r.name.as_str())
        .collect();
    if !unscanned.is_empty() {
        bail!(
            "{} server(s) could not be scanned ({}); any of their tools no catalog lists makes the hook ask",
            unscanned.len(),
            unscanned.join(", ")
        );
    }
    Ok(())
}

fn tool_line(tool: &scan::ToolReport) -> String {
    let name = &tool.name;
    if let (Some(class), Some(entry)) = (tool.class, &tool.entry) {
        let mut line = format!("  {name:<28} {:<10} {entry}", class.to_string());
        if let Some(review) = &tool.review {
            let _ = write!(line, "\n  {:<28} REVIEW: {review}", "");
        }
        return line;
    }
    let Some(proposal) = &tool.proposal else {
        return format!("  {name:<28} unlisted");
    };
    let mut line = match proposal.class {
        Some(class) => format!("  {name:<28} unlisted   propose [[{class}]]"),
        None => format!("  {name:<28} unlisted   no proposal"),
    };
    if proposal.class == Some(ToolClass::Mutating) {
        if !proposal.vm_arg.is_empty() {
            let _ = write!(line, " vm_arg {}", proposal.vm_arg.join(", "));
        } else if !proposal.session_arg.is_empty() {
            let _ = write!(line, " session_arg {}", proposal.session_arg.join(", "));
        } else {
            line.push_str(" (no argument names a VM: it would ask)");
        }
    }
    let _ = write!(line, " ({})", proposal.because);
    if let Some(review) = &proposal.review {
        let _ = write!(line, "\n  {:<28} REVIEW: {review}", "");
    }
    line
}

/// Appends the proposals to the user's catalog, after a timestamped backup of it, and
/// checks the result loads before replacing the file.
fn write_proposals(config: &Config, proposals: &str) -> anyhow::Result<()> {
    let path = config
        .hook
        .user_catalog()
        .context("no home directory and no [hook] catalogs: nowhere to write")?;
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => {
            let backup = super::keep_backup(&path, &text)?;
            say(format!("backup: {}", backup.display()));
            text
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::from(
            "# Your own tool catalog (written by `rewind catalog add` and `rewind catalog scan`; edit freely).\n",
        ),
        Err(e) => bail!("cannot read {}: {e}", path.display()),
    };
    let updated = format!("{}\n{proposals}", existing.trim_end_matches('\n'));
    Catalog::parse(&updated, &path.display().to_string()).context(
        "the proposals do not fit your catalog (an entry for one of these tools is there already?)",
    )?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    lockfile::write_private_atomic(&path, updated.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    say(format!("wrote the proposals to {}", path.display()));
    Ok(())
}
