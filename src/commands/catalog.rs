//! `rewind check` and `rewind catalog lint|list|add`.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context as _, bail};

use super::{clean, say, warn_config};
use crate::catalog::{self, Catalog, Class, Classification, ToolName};
use crate::cli::{CatalogAddArgs, CheckArgs, ToolClassArg};
use crate::config::Config;
use crate::lockfile;
use crate::shell::{self, Dialect, Outcome};

/// `rewind check <tool> [--input JSON]`: how the hook would classify a call, without Zerto.
pub fn check(config_path: Option<&Path>, args: &CheckArgs) -> anyhow::Result<()> {
    let config = Config::discover(config_path)?;
    warn_config(&config);
    if let Some(command) = &args.command {
        let dialect = if args.powershell {
            Dialect::PowerShell
        } else {
            Dialect::Posix
        };
        return check_command(&config, command, dialect, "the command");
    }
    let tool = args.tool.as_deref().unwrap_or_default();
    let catalog = Catalog::load(config.hook.builtin_catalogs, &config.hook.catalogs)?;
    let input: serde_json::Value = match &args.input {
        Some(text) => serde_json::from_str(text).context("--input is not a JSON object")?,
        None => serde_json::json!({}),
    };
    let name = ToolName::parse(tool, None);
    say(match &name {
        ToolName::Mcp { server, tool } => format!(
            "tool:     {} (MCP server {server:?}, tool {tool:?})",
            args.tool.as_deref().unwrap_or_default()
        ),
        ToolName::Host(tool) => format!("tool:     {tool} (a host tool)"),
    });
    let class = catalog.classify(&name, &input);
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
    match &class {
        Classification::Local => {
            say("class:    local (touches only this machine)");
            say("decision: none; the host's own rules apply");
        }
        Classification::Shell {
            command,
            dialect,
            entry,
        } => {
            if let Some(entry) = entry {
                say(entry_line(entry));
            }
            if let Some(command) = command {
                say("class:    runs a command, which decides:");
                return check_command(&config, command, *dialect, "the call");
            }
            say("class:    runs a command, but its argument is missing or not a string");
            say("decision: ask");
        }
        Classification::ReadOnly(entry) => {
            say("class:    read-only");
            say(entry_line(entry));
            say("decision: none; the host's own rules apply");
        }
        Classification::Unlisted => {
            say("class:    unlisted (in no catalog)");
            say("decision: ask; record it with `rewind catalog add`");
        }
        Classification::Mutating { entry, vm } => {
            say("class:    mutating");
            say(entry_line(entry));
            if let Some(vm) = vm {
                say(format!(
                    "VM:       {} (argument `{}`)",
                    clean(&vm.value),
                    vm.key
                ));
                say(
                    "decision: checkpoint every VPG of that VM in Zerto first; deny if that fails, ask if Zerto does not know the VM",
                );
            } else {
                say(format!(
                    "VM:       none found (looked for {})",
                    entry.vm_arg.join(", ")
                ));
                say("decision: ask");
            }
        }
    }
    Ok(())
}

/// `rewind check --command`: the hook's own analysis of a command, targets resolved
/// (`ssh -G`, the inventory), Zerto not called.
fn check_command(
    config: &Config,
    command: &str,
    dialect: Dialect,
    what: &str,
) -> anyhow::Result<()> {
    let until = std::time::Instant::now() + config.hook.budget;
    let cwd = std::env::current_dir().ok();
    let judgement = shell::judge(command, dialect, config, cwd.as_deref(), until)?;
    for line in judgement.analysis.to_string().lines() {
        say(clean(line));
    }
    say(match &judgement.outcome {
        Outcome::NoDecision => format!("decision: none; {what} runs under the host's own rules"),
        Outcome::Ask { part, why } => format!("decision: ask (`{}`: {})", clean(part), clean(why)),
        Outcome::Checkpoint(vms) => format!(
            "decision: checkpoint every VPG of {} in Zerto before {what} runs; deny if that fails, ask if Zerto does not know a VM",
            clean(&vms.join(", "))
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
        for (name, text) in catalog::BUILTIN {
            failed += report(name, Catalog::parse(text, name));
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
    Ok(())
}

fn report(name: &str, result: anyhow::Result<Catalog>) -> usize {
    match result {
        Ok(catalog) => {
            say(format!(
                "ok    {name} ({} entries)",
                catalog.entries().len()
            ));
            0
        }
        Err(e) => {
            say(format!("error {e:#}"));
            1
        }
    }
}

/// `rewind catalog list`: every entry, in load order (later ones win).
pub fn list(config_path: Option<&Path>) -> anyhow::Result<()> {
    let config = Config::discover(config_path)?;
    warn_config(&config);
    let catalog = Catalog::load(config.hook.builtin_catalogs, &config.hook.catalogs)?;
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
        ToolClassArg::Mutating => Class::Mutating,
        ToolClassArg::ReadOnly => Class::ReadOnly,
    };
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
