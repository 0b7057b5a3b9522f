//! One command, one world: the hook looks names up (`ssh -G`, Zerto's VM names) before the
//! command runs, so a command that first changes where a name goes — it writes an ssh
//! configuration, `/etc/hosts` or the resolver's configuration, or sets `HOSTALIASES` — and
//! then changes a machine by name is asked about: the machine reached is the one the written
//! world names, not the one the hook would look up. An address is no name and is judged as
//! it is. Every write form counts: a redirection, `tee [-a]`, `cp`, `mv`, `install`, `ln`,
//! `dd of=`, `sed -i`, PowerShell's `Set-Content`, `Add-Content` and `Out-File`.

use super::super::posix;
use super::super::types::{Class, Cmd, Stdin, TargetKind};
use super::super::wrappers::lower_base;
use super::super::writes;
use super::Ctx;

/// What an earlier part of the command changed about where names go.
pub(crate) struct World {
    /// Why later names may reach other machines (`the command writes /etc/hosts`).
    why: String,
    /// Only ssh's own destinations are changed (an ssh configuration), not every name.
    ssh_only: bool,
}

/// Notes what `cmd` writes (every form) and whether that changes where later names go.
/// Returns the files the command writes text of its own into (a redirection, `tee`), each
/// with that text when the command fixes it.
pub(super) fn note(ctx: &mut Ctx<'_>, cmd: &Cmd) -> Vec<(String, Option<String>)> {
    let written = files_written(cmd);
    for path in &written {
        if let Some(ssh_only) = changes_names(path) {
            set(ctx, format!("the command writes {path} first"), ssh_only);
        }
        if !ctx.touched.contains(path) {
            ctx.touched.push(path.clone());
        }
    }
    let exported = cmd.words.first().and_then(|w| w.value.as_deref()) == Some("export");
    let names = cmd.assignments.iter().cloned().chain(
        cmd.words
            .iter()
            .skip(1)
            .filter(|_| exported)
            .map(|w| w.value.clone().unwrap_or_else(|| w.raw.clone())),
    );
    for assignment in names {
        if assignment
            .split_once('=')
            .map_or(assignment.as_str(), |(n, _)| n)
            == "HOSTALIASES"
        {
            set(
                ctx,
                String::from("the command sets HOSTALIASES first"),
                false,
            );
        }
    }
    let redirected = posix::output_of(cmd).and_then(|a| a.value);
    let teed = match &cmd.stdin {
        Stdin::Pipe => cmd.piped.as_ref().and_then(|a| a.value.clone()),
        Stdin::Text(text) => text.value.clone(),
        _ => None,
    };
    let tee = cmd
        .words
        .first()
        .is_some_and(|w| lower_base(w.text()) == "tee");
    // A file copied from disk (`cp job /etc/cron.d/`) is, like a script run from disk, not
    // read: only text the command itself writes is returned.
    written
        .into_iter()
        .filter_map(|path| {
            if cmd.writes.as_ref() == Some(&path) {
                Some((path, redirected.clone()))
            } else if tee {
                Some((path, teed.clone()))
            } else {
                None
            }
        })
        .collect()
}

fn set(ctx: &mut Ctx<'_>, why: String, ssh_only: bool) {
    // A change of every name outweighs one of ssh's alone.
    if ctx.world.as_ref().is_none_or(|w| w.ssh_only) {
        ctx.world = Some(World { why, ssh_only });
    }
}

/// Whether an earlier part of the command wrote `path` (as written, `./` aside).
pub(super) fn wrote(ctx: &Ctx<'_>, path: &str) -> bool {
    let bare = |p: &str| p.trim_start_matches("./").to_owned();
    ctx.touched.iter().any(|p| bare(p) == bare(path))
}

/// Turns the changes found since `from` that reach a machine by a name the written world may
/// send elsewhere into questions.
pub(super) fn apply(ctx: &mut Ctx<'_>, from: usize) {
    let Some(world) = &ctx.world else {
        return;
    };
    for finding in ctx.findings.iter_mut().skip(from) {
        if finding.class != Class::Mutating || finding.unknown.is_some() {
            continue;
        }
        let moved = finding.targets.iter().find(|t| {
            let by_name = crate::inventory::address(&t.name).is_none();
            by_name
                && match t.kind {
                    TargetKind::Ssh { .. } => true,
                    TargetKind::Host | TargetKind::Ansible { .. } | TargetKind::Deploy { .. } => {
                        !world.ssh_only
                    }
                    TargetKind::Vm => false,
                }
        });
        if let Some(target) = moved {
            finding.unknown = Some(format!(
                "{}, so {} may reach another machine than the one looked up now",
                world.why, target.name
            ));
        }
    }
}

/// Whether writing `path` changes where names go: `Some(true)` for an ssh configuration
/// (ssh's destinations only), `Some(false)` for the resolver's files (every name).
fn changes_names(path: &str) -> Option<bool> {
    let path = path
        .trim_matches(['"', '\''])
        .replace('\\', "/")
        .to_ascii_lowercase();
    // Another machine's file (`\\win02\c$\…\etc\hosts`) changes that machine's names.
    if path.starts_with("//") {
        return None;
    }
    let resolver = [
        "/etc/hosts",
        "/etc/resolv.conf",
        "/etc/nsswitch.conf",
        "/etc/host.conf",
    ];
    if resolver.iter().any(|f| path == *f || path.ends_with(f))
        || path.ends_with("drivers/etc/hosts")
    {
        return Some(false);
    }
    let ssh = path.ends_with(".ssh/config")
        || path.contains(".ssh/config.d/")
        || path.contains(".ssh/conf.d/")
        || path.starts_with("/etc/ssh/ssh_config");
    ssh.then_some(true)
}

/// Every file `cmd` writes, as written, by the one table of what programs write
/// (`shell::writes`): its output redirection, `tee -a F`, `cp SRC DEST` (and `DEST/SRC`),
/// `dd of=F`, `sed -i … F`, `Set-Content -Path F` and the rest.
fn files_written(cmd: &Cmd) -> Vec<String> {
    writes::changes(cmd)
        .into_iter()
        .filter(|c| c.effect == writes::Effect::Write)
        .map(|c| c.path)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_that_change_where_names_go() {
        for (path, ssh_only) in [
            ("/etc/hosts", false),
            ("/private/etc/hosts", false),
            ("C:\\Windows\\System32\\drivers\\etc\\hosts", false),
            ("/etc/resolv.conf", false),
            ("~/.ssh/config", true),
            ("$HOME/.ssh/config", true),
            ("/root/.ssh/config.d/lab.conf", true),
            ("/etc/ssh/ssh_config.d/10-lab.conf", true),
        ] {
            assert_eq!(changes_names(path), Some(ssh_only), "{path}");
        }
        for path in [
            "~/.ssh/known_hosts",
            "/etc/hostname",
            "hosts.txt",
            "/etc/ssh/sshd_config",
            "\\\\win02\\c$\\Windows\\System32\\drivers\\etc\\hosts",
        ] {
            assert_eq!(changes_names(path), None, "{path}");
        }
    }
}
