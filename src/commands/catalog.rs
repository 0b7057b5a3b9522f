//! `rewind check` and `rewind catalog lint|list|add`.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context as _, bail};

use super::{clean, say, warn_config};
use crate::catalog::{self, Catalog, Class, Classification, ToolName};
use crate::cli::{CatalogAddArgs, CheckArgs, ToolClassArg};
use crate::config::Config;
use crate::hook;
use crate::host::{self, Event, Host, ToolCall};
use crate::lockfile;

/// `rewind check <tool> [--input JSON]` or `rewind check --payload FILE`: how the hook would
/// decide on a call, without Zerto. The same classification code as the hook decides.
pub fn check(config_path: Option<&Path>, args: &CheckArgs) -> anyhow::Result<()> {
    let config = Config::discover(config_path)?;
    warn_config(&config);
    let call = match (&args.payload, &args.tool) {
        (Some(path), _) => {
            let bytes = if path == Path::new("-") {
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes)
                    .context("cannot read the payload from stdin")?;
                bytes
            } else {
                std::fs::read(path)
                    .with_context(|| format!("cannot read payload {}", path.display()))?
            };
            match host::read(args.host, &bytes) {
                Ok(call) => call,
                Err((_, why)) => {
                    say(format!("decision: block (exit 2): {why}"));
                    return Ok(());
                }
            }
        }
        (None, Some(tool)) => {
            let input: serde_json::Value = match &args.input {
                Some(text) => serde_json::from_str(text).context("--input is not a JSON object")?,
                None => serde_json::json!({}),
            };
            ToolCall {
                host: args.host.unwrap_or(Host::ClaudeCode),
                session: None,
                change: None,
                tool: tool.clone(),
                server: None,
                input,
                event: Event::BeforeTool,
            }
        }
        (None, None) => bail!("name a tool or give --payload"),
    };
    let name = ToolName::parse(&call.tool, call.server.as_deref());
    say(match &name {
        ToolName::Mcp { server, tool } => format!(
            "tool:     {} (MCP server {server:?}, tool {tool:?})",
            clean(&call.tool)
        ),
        ToolName::Host(tool) => format!("tool:     {} (a host tool)", clean(tool)),
    });
    // What the catalogs say, for the reader; the decision below comes from the hook's code.
    if call.event == Event::BeforeTool
        && let Ok(catalog) = Catalog::load(config.hook.builtin_catalogs, &config.hook.catalogs)
    {
        explain(&catalog.classify(&name, &call.input));
    }
    let mut facts = hook::Facts::default();
    match hook::plan(&call, &config, &mut facts) {
        hook::Plan::Decided(decision) => say(format!(
            "decision: {}{}",
            decision.label(),
            decision
                .text()
                .map(|t| format!(": {}", clean(t)))
                .unwrap_or_default()
        )),
        hook::Plan::Guard(targets) => {
            let source = targets
                .first()
                .map(|t| t.source.clone())
                .unwrap_or_default();
            let refs: Vec<String> = targets.iter().map(|t| clean(&t.reference)).collect();
            say(format!(
                "{:<10}{} (argument {source})",
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
        Classification::Shell => {
            say("class:    shell (remote targets in commands are not parsed yet)");
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
