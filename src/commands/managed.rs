//! `rewind install --scope managed` and `rewind uninstall --scope managed`: rewind's entries
//! in a host's administrator file, which only root can change and users' own settings cannot
//! switch off (Claude Code's managed settings, Gemini CLI's system settings, Cursor's
//! enterprise hooks, Copilot CLI's policy directory, Codex CLI's `requirements.toml`).
//!
//! The entries name this binary by its absolute path and pin the system configuration
//! (`/etc/rewind/config.toml`, or an absolute `--config`) with `hook --managed`: such a hook
//! reads only that file, and denies every call when anyone but root can change it. `--lock`
//! also sets the host's setting that keeps users' own hooks and kill switches from switching
//! the entries off. `--root` puts the files under another root (a machine image being
//! built); the entries still name the paths as the running system sees them.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

use super::install::{
    budget_secs, describe_entries, read_existing, read_settings, rewind_entries, say_backup,
    write_with_backup,
};
use super::say;
use crate::cli::InstallArgs;
use crate::config::{Config, SYSTEM_CONFIG};
use crate::host::settings::{Invocation, Layout, hook_binary, parse, render};
use crate::lockfile::{is_root, only_root_can_change};

/// Mode of a managed file: every user's host must read it, only root write it.
const MANAGED_MODE: u32 = 0o644;

/// `path` (as the running system sees it) under `root`.
pub fn under(root: &Path, path: &Path) -> PathBuf {
    root.join(path.strip_prefix("/").unwrap_or(path))
}

/// The root the system paths are under, refusing anyone but root on a running system.
fn system_root(args: &InstallArgs, what: &str) -> anyhow::Result<PathBuf> {
    let layout = args.host.settings();
    if layout.managed.path().is_empty() {
        bail!(
            "{} documents no administrator file on this system ({} elsewhere), so --scope managed has nowhere to write; an MDM or group policy delivers its settings here",
            layout.title,
            layout.managed.paths().join(", ")
        );
    }
    match &args.root {
        Some(root) => Ok(root.clone()),
        None if is_root() => Ok(PathBuf::from("/")),
        None => bail!(
            "--scope managed {what} {}, which only root may change: run it as root (sudo rewind {} --host {} --scope managed)",
            layout.managed.path(),
            if what == "writes" {
                "install"
            } else {
                "uninstall"
            },
            args.host.name()
        ),
    }
}

/// `rewind install --host <host> --scope managed [--lock] [--root DIR]`.
pub fn install(config_path: Option<&Path>, args: &InstallArgs) -> anyhow::Result<()> {
    if args.print_mdm {
        print_mdm(config_path, args)
    } else {
        write(config_path, args)
    }
}

/// `install` without `--print-mdm`: writes the administrator file (or rewind's drop-in).
fn write(config_path: Option<&Path>, args: &InstallArgs) -> anyhow::Result<()> {
    let layout = args.host.settings();
    let managed = &layout.managed;
    let root = system_root(args, "writes")?;
    if args.lock && managed.lock.is_empty() {
        bail!(
            "{} has no setting that keeps users' own hooks from switching the managed entry off, so there is nothing to --lock ({}); install without --lock",
            layout.title,
            managed.still_off
        );
    }
    let mut warnings = Vec::new();
    let (pinned, config) = pinned_config(&root, config_path, &mut warnings)?;
    let binary = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map(|rewind| hook_binary(&rewind))
        .context("cannot tell where the rewind binary is")?;
    if let Err(why) = only_root_can_change(&binary) {
        warnings.push(format!(
            "the rewind binary {} can be changed by others than root ({why}): whoever can change it can switch the guard off. Install it where only root can write (such as /usr/local/bin) and run that copy",
            binary.display()
        ));
    }
    let run = Invocation::managed(&binary, &pinned, args.host);
    let timeout = layout.before_timeout(budget_secs(&config));
    let path = managed.target_under(&root);
    let original = read_existing(&path)?;
    let text = if is_toml(&path) {
        merge_toml(
            layout,
            original.as_deref().unwrap_or_default(),
            &path,
            &run,
            timeout,
            args.lock,
        )?
    } else {
        let (_, mut value) = read_settings(&path)?;
        layout.merge(&mut value, &run, timeout)?;
        if args.lock {
            lock_json(&mut value, managed.lock, &path)?;
        }
        render(&value)?
    };
    if original.as_deref() == Some(text.as_str()) {
        say(format!(
            "the rewind hook in {} is already up to date",
            path.display()
        ));
    } else {
        let backup = write_with_backup(&path, original.as_deref(), &text)?;
        set_managed_mode(&path)?;
        if managed.drop_in.is_empty() {
            say(format!(
                "installed the rewind hook for {} in its administrator file {}",
                layout.title,
                path.display()
            ));
        } else {
            say(format!(
                "installed the rewind hook for {} in its own drop-in {}, merged over {} (which is left as it is)",
                layout.title,
                path.display(),
                managed.under(&root).display()
            ));
        }
        describe_entries(layout, &run, timeout);
        say(format!(
            "  each run reads only {} and denies every call when anyone but root can change it",
            pinned.display()
        ));
        if args.lock {
            say(format!(
                "  locked: {} set to true",
                managed.lock.join(" and ")
            ));
        }
        say_backup(backup.as_deref());
    }
    move_out_of_the_administrator_file(layout, &root)?;
    if args.lock {
        warnings.push(format!("--lock also switches off {}", managed.lock_also));
    } else if !managed.lock.is_empty() {
        warnings.push(format!(
            "without --lock: {}; --lock would set {}",
            managed.still_off,
            managed.lock.join(" and ")
        ));
    } else {
        say(format!("  {}", managed.still_off));
    }
    for warning in warnings {
        crate::console::err(format!("warning: {warning}"));
    }
    Ok(())
}

/// `rewind install --host claude-code --scope managed --print-mdm [--lock]`: the settings
/// document an MDM delivers (the same entries as the drop-in, naming this binary and the
/// pinned configuration) on stdout, where each OS reads it on stderr. Writes nothing, so it
/// needs no root.
fn print_mdm(config_path: Option<&Path>, args: &InstallArgs) -> anyhow::Result<()> {
    use crate::host::claude_code::mdm;
    let layout = args.host.settings();
    if args.host != crate::host::Host::ClaudeCode {
        bail!(
            "--print-mdm: {} documents no settings an MDM delivers; install its administrator file with --scope managed",
            layout.title
        );
    }
    let root = args.root.clone().unwrap_or_else(|| PathBuf::from("/"));
    let mut warnings = Vec::new();
    let (pinned, config) = pinned_config(&root, config_path, &mut warnings)?;
    let binary = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map(|rewind| hook_binary(&rewind))
        .context("cannot tell where the rewind binary is")?;
    let run = Invocation::managed(&binary, &pinned, args.host);
    let mut value = json!({});
    layout.merge(
        &mut value,
        &run,
        layout.before_timeout(budget_secs(&config)),
    )?;
    if args.lock {
        lock_json(
            &mut value,
            layout.managed.lock,
            Path::new("the MDM settings"),
        )?;
    }
    crate::console::write_line(render(&value)?.trim_end())?;
    for line in [
        format!(
            "where an MDM delivers these settings (the entries name {} and pin {}: install both at these paths on each machine):",
            binary.display(),
            pinned.display()
        ),
        format!(
            "  macOS: a configuration profile for the preference domain {}, these keys at its top level; Claude Code reads /Library/Managed Preferences/{}.plist (and the per-user one before it). plutil -convert xml1 turns this JSON into the plist",
            mdm::DOMAIN,
            mdm::DOMAIN
        ),
        format!(
            r"  Windows: this JSON as one line, the string value {} (REG_SZ) of HKLM\{} (Group Policy or Intune)",
            mdm::POLICY_VALUE,
            mdm::POLICY_KEY
        ),
        String::from(
            "  Linux: no MDM source; `rewind install --host claude-code --scope managed` writes /etc/claude-code/managed-settings.d/50-rewind.json",
        ),
        String::from(
            "  settings an MDM delivers take precedence over managed-settings.json and its drop-ins: Claude Code applies only the highest managed source that holds settings, unless that one sets \"managedSourcesBehavior\": \"merge\"",
        ),
    ] {
        crate::console::err(line);
    }
    for warning in warnings {
        crate::console::err(format!("warning: {warning}"));
    }
    Ok(())
}

/// `rewind uninstall --host <host> --scope managed [--root DIR]`: takes rewind's entries out
/// of the administrator file. A lock setting stays: it may be the organisation's own policy.
pub fn uninstall(args: &InstallArgs) -> anyhow::Result<()> {
    let layout = args.host.settings();
    let root = system_root(args, "changes")?;
    if !layout.managed.drop_in.is_empty() {
        remove_drop_in(layout, &root)?;
        // An older install wrote into the administrator file itself.
        move_out_of_the_administrator_file(layout, &root)?;
        return Ok(());
    }
    let path = layout.managed.under(&root);
    let Some(original) = read_existing(&path)? else {
        say(format!(
            "no rewind entry in {}: nothing changed",
            path.display()
        ));
        return Ok(());
    };
    let (text, removed) = if is_toml(&path) {
        layout.remove_toml(&original, &path)?
    } else {
        let mut value = parse(&original, &path)?;
        let removed = layout.remove(&mut value);
        (render(&value)?, removed)
    };
    if removed == 0 {
        say(format!(
            "no rewind entry in {}: nothing changed",
            path.display()
        ));
        return Ok(());
    }
    let backup = write_with_backup(&path, Some(&original), &text)?;
    say(format!(
        "removed {} from {}",
        rewind_entries(removed),
        path.display()
    ));
    say_backup(backup.as_deref());
    if !layout.managed.lock.is_empty() {
        say(format!(
            "  {} stay{} as {} {}: remove {} by hand if only rewind needed {}",
            layout.managed.lock.join(" and "),
            if layout.managed.lock.len() == 1 {
                "s"
            } else {
                ""
            },
            if layout.managed.lock.len() == 1 {
                "it is"
            } else {
                "they are"
            },
            "(it may be the organisation's own policy)",
            if layout.managed.lock.len() == 1 {
                "it"
            } else {
                "them"
            },
            if layout.managed.lock.len() == 1 {
                "it"
            } else {
                "them"
            },
        ));
    }
    Ok(())
}

/// Where the host reads a drop-in of rewind's own: takes the rewind entries an older install
/// left in the organisation's administrator file out of it (with a backup), nothing else.
/// Returns whether that file held any.
fn move_out_of_the_administrator_file(layout: &Layout, root: &Path) -> anyhow::Result<bool> {
    if layout.managed.drop_in.is_empty() {
        return Ok(false);
    }
    let path = layout.managed.under(root);
    let Some(original) = read_existing(&path)? else {
        return Ok(false);
    };
    let mut value = parse(&original, &path)?;
    let removed = layout.remove(&mut value);
    if removed == 0 {
        return Ok(false);
    }
    let backup = write_with_backup(&path, Some(&original), &render(&value)?)?;
    say(format!(
        "took the {} an older install wrote out of {} (the organisation's own settings there are kept)",
        rewind_entries(removed),
        path.display()
    ));
    say_backup(backup.as_deref());
    if !layout.managed.lock.is_empty()
        && layout.managed.lock.iter().any(|key| original.contains(key))
    {
        say(format!(
            "  {} there stays (it may be the organisation's own policy)",
            layout.managed.lock.join(" and ")
        ));
    }
    Ok(true)
}

/// `uninstall` where rewind has a drop-in of its own: its entries and its lock go; the file
/// goes with them unless someone added settings of their own to it, which are kept.
fn remove_drop_in(layout: &Layout, root: &Path) -> anyhow::Result<()> {
    let path = layout.managed.target_under(root);
    let Some(original) = read_existing(&path)? else {
        say(format!("no {}: nothing to remove", path.display()));
        return Ok(());
    };
    let mut value = parse(&original, &path)?;
    let removed = layout.remove(&mut value);
    if let Some(map) = value.as_object_mut() {
        for key in layout.managed.lock {
            map.remove(*key);
        }
    }
    if value.as_object().is_some_and(serde_json::Map::is_empty) {
        std::fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
        say(format!(
            "removed rewind's drop-in {} ({removed} entr{})",
            path.display(),
            if removed == 1 { "y" } else { "ies" }
        ));
    } else {
        let backup = write_with_backup(&path, Some(&original), &render(&value)?)?;
        say(format!(
            "removed {} from {}; the settings someone else added there are kept",
            rewind_entries(removed),
            path.display()
        ));
        say_backup(backup.as_deref());
    }
    Ok(())
}

/// The configuration the entries pin, as the running system sees it, and what it says
/// (defaults, with a warning, while it does not exist yet). One that others than root can
/// change is refused: every managed hook would deny.
fn pinned_config(
    root: &Path,
    config_path: Option<&Path>,
    warnings: &mut Vec<String>,
) -> anyhow::Result<(PathBuf, Config)> {
    let pinned = match config_path {
        Some(path) if path.is_absolute() => path.to_path_buf(),
        Some(path) => bail!(
            "--config {} is relative: a managed entry pins its configuration by the absolute path every user's hook reads (such as {SYSTEM_CONFIG})",
            path.display()
        ),
        None => PathBuf::from(SYSTEM_CONFIG),
    };
    let pinned_here = under(root, &pinned);
    let config = if pinned_here.is_file() {
        only_root_can_change(&pinned_here).map_err(|why| {
            anyhow::anyhow!(
                "{} can be changed by others than root ({why}): the managed hook would deny every call. Run: chown root:root {0} && chmod 644 {0}",
                pinned_here.display()
            )
        })?;
        Config::load(&pinned_here)?
    } else {
        warnings.push(format!(
            "{} does not exist yet: until it does (owned by root, writable only by root), the managed hook denies every call",
            pinned.display()
        ));
        Config::defaults()
    };
    Ok((pinned, config))
}

fn is_toml(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "toml")
}

/// Sets a managed file's mode (a no-op on Windows, where the file keeps the ACL of
/// `C:\Program Files`, which only administrators can change).
fn set_managed_mode(path: &Path) -> anyhow::Result<()> {
    crate::platform::set_mode(path, MANAGED_MODE)
        .with_context(|| format!("cannot set the mode of {}", path.display()))
}

/// Sets each dotted key of `keys` to `true` in parsed settings.
fn lock_json(settings: &mut Value, keys: &[&str], path: &Path) -> anyhow::Result<()> {
    for key in keys {
        let mut at = &mut *settings;
        let parts: Vec<&str> = key.split('.').collect();
        for (i, part) in parts.iter().enumerate() {
            let map = at.as_object_mut().with_context(|| {
                format!(
                    "{}: cannot set {key}: {} is not an object",
                    path.display(),
                    parts[..i].join(".")
                )
            })?;
            if i + 1 == parts.len() {
                map.insert((*part).to_owned(), json!(true));
                break;
            }
            at = map
                .entry(*part)
                .or_insert_with(|| Value::Object(serde_json::Map::new()));
        }
    }
    Ok(())
}

/// Codex CLI's `requirements.toml`: rewind's groups under `[hooks]` (the schema of inline
/// hooks in `config.toml`), every other line, comment and format kept, and with `lock` each
/// lock key set to `true`.
fn merge_toml(
    layout: &Layout,
    text: &str,
    path: &Path,
    run: &Invocation,
    timeout: u64,
    lock: bool,
) -> anyhow::Result<String> {
    let (text, _) = layout.remove_toml(text, path)?;
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .with_context(|| format!("{} is not valid TOML; not touching it", path.display()))?;
    // The lock first: rewind's tables then always come last, so that a second install
    // writes the same text.
    if lock {
        for key in layout.managed.lock {
            let parts: Vec<&str> = key.split('.').collect();
            let (last, tables) = parts.split_last().context("empty lock key")?;
            let mut table = doc.as_table_mut();
            for part in tables {
                table = table
                    .entry(part)
                    .or_insert_with(toml_edit::table)
                    .as_table_mut()
                    .with_context(|| format!("{part} in {} is not a table", path.display()))?;
            }
            table.insert(last, toml_edit::value(true));
        }
    }
    let mut ours = json!({});
    layout.merge(&mut ours, run, timeout)?;
    let fragment: toml_edit::DocumentMut = toml::to_string(&ours)
        .context("cannot write the hook entries as TOML")?
        .parse()
        .context("cannot read back the hook entries as TOML")?;
    let had_text = !doc.to_string().trim().is_empty();
    let hooks = doc
        .entry("hooks")
        .or_insert_with(toml_edit::table)
        .as_table_mut()
        .with_context(|| format!("[hooks] in {} is not a table", path.display()))?;
    hooks.set_implicit(true);
    if let Some(new) = fragment.get("hooks").and_then(toml_edit::Item::as_table) {
        for (i, (event, item)) in new.iter().enumerate() {
            let mut item = item.clone();
            // A blank line between the file's own text and rewind's first table.
            if i == 0
                && had_text
                && let Some(first) = item.as_array_of_tables_mut().and_then(|l| l.get_mut(0))
            {
                first.decor_mut().set_prefix("\n");
            }
            let item = &item;
            match (hooks.get_mut(event), item) {
                (
                    Some(toml_edit::Item::ArrayOfTables(list)),
                    toml_edit::Item::ArrayOfTables(add),
                ) => {
                    for table in add {
                        list.push(table.clone());
                    }
                }
                (Some(_), _) => bail!(
                    "hooks.{event} in {} is not a list of tables; not touching it",
                    path.display()
                ),
                (None, item) => {
                    hooks.insert(event, item.clone());
                }
            }
        }
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Host;

    #[test]
    fn a_lock_key_is_set_inside_existing_objects() {
        let mut settings = json!({"hooksConfig": {"notifications": false}});
        lock_json(
            &mut settings,
            &["hooksConfig.enabled", "allowManagedHooksOnly"],
            Path::new("s.json"),
        )
        .expect("lock");
        assert_eq!(
            settings,
            json!({"hooksConfig": {"notifications": false, "enabled": true}, "allowManagedHooksOnly": true})
        );
    }

    #[test]
    fn codex_requirements_keep_their_policy_and_get_one_set_of_entries() {
        let layout = Host::Codex.settings();
        let run = Invocation::managed(
            Path::new("/usr/local/bin/rewind"),
            Path::new(SYSTEM_CONFIG),
            Host::Codex,
        );
        let text = "# org policy\nallowed_sandbox_modes = [\"read-only\"]\n";
        let once = merge_toml(layout, text, Path::new("r.toml"), &run, 180, true).expect("merge");
        let twice = merge_toml(layout, &once, Path::new("r.toml"), &run, 180, true).expect("again");
        assert_eq!(once, twice, "a second install changes nothing");
        assert!(once.starts_with("# org policy\n"), "{once}");
        let value: toml::Table = toml::from_str(&once).expect("valid TOML");
        assert_eq!(value["allow_managed_hooks_only"].as_bool(), Some(true));
        assert_eq!(value["features"]["hooks"].as_bool(), Some(true));
        let installed = layout.inspect(
            Path::new("r.toml"),
            &serde_json::to_value(&value).expect("json"),
        );
        assert_eq!(installed.len(), 2, "{once}");
        assert!(
            installed
                .iter()
                .all(|h| h.args.ends_with(&[String::from("--managed")]))
        );
        let (removed, count) = layout
            .remove_toml(&once, Path::new("r.toml"))
            .expect("remove");
        assert_eq!(count, 2);
        assert!(!removed.contains("rewind"), "{removed}");
    }
}
