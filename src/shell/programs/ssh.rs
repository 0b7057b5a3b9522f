//! ssh and what runs it (`ssh`, `mosh`, `plink`, `ssh-copy-id`, as the catalog lists them): its
//! options (`-o HostName=`, `ProxyCommand`, `RemoteCommand`, `-F`), the destination, and the
//! command it runs there, judged as a remote command.

use super::{Ctx, finding, host_of, judge_remote, not_fixed, text_in, unknown_finding, world};
use crate::shell::catalog::{Grammar, Program};
use crate::shell::dialect::Dialect;
use crate::shell::types::{Arg, Class, Cmd, Stdin, Target, TargetKind, Unknown};
use crate::shell::wrappers::{join, lower_base};
use crate::shell::{remote, runners};

/// What ssh's options say about the connection and what runs on either side.
#[derive(Default)]
pub(super) struct SshOptions {
    pub(super) config: Option<String>,
    /// The remote user `-l` or `-o User=` names, which a `Match user` block reads.
    pub(super) user: Option<String>,
    remote_command: Option<String>,
    hostname: Option<String>,
    /// Where a `ProxyCommand` really connects: a literal end point, or why it is not known.
    proxy_end: Option<Result<String, String>>,
    no_command: bool,
    /// How many `-L`/`-D`/`LocalForward`/`DynamicForward`: ports here that reach the host's
    /// side.
    forwards_here: usize,
    /// The first `-L`/`LocalForward` whose far end is another machine than the host
    /// (`-L 2222:web01:22`): a port here then reaches that machine.
    forwards_to: Option<String>,
    local_only: bool,
    subsystem: bool,
    local_texts: Vec<String>,
    /// A variable that makes a program run code, set or sent for the remote command
    /// (`-o SetEnv=PAGER=…`, `-o SendEnv=LESSOPEN`).
    code_env: Option<String>,
}

/// Reads OpenSSH options from `args[i..]`; returns the index of the first operand.
fn ssh_options(program: &Program, args: &[Arg], mut i: usize, o: &mut SshOptions) -> usize {
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        if text == "--" {
            return i + 1;
        }
        if !text.starts_with('-') || text.len() < 2 {
            return i;
        }
        let long_single = text.len() > 2
            && program
                .value_options
                .iter()
                .any(|o| !o.starts_with("--") && o.len() > 2);
        if text.starts_with("--") || long_single {
            // A long option (mosh's `--ssh=…`, `--predict always`, plink's `-pw`; OpenSSH has
            // none): read whole, never letter by letter, and never one of ssh's own.
            let takes_next = !text.contains('=') && program.takes_value(text);
            // mosh's `--ssh='ssh -o HostName=…'`: the ssh it runs, with its options.
            if let Some(rsh) = text.strip_prefix("--ssh=") {
                read_rsh(rsh, o);
            } else if text == "--ssh" {
                read_rsh(args.get(i + 1).map_or("", Arg::text), o);
            }
            i += if takes_next { 2 } else { 1 };
            continue;
        }
        let chars: Vec<char> = text[1..].chars().collect();
        let mut consumed_next = false;
        for (k, c) in chars.iter().enumerate() {
            let option = format!("-{c}");
            if program.takes_value(&option) {
                let attached: String = chars[k + 1..].iter().collect();
                let (value, dynamic) = if attached.is_empty() {
                    consumed_next = true;
                    args.get(i + 1).map_or((String::new(), false), |a| {
                        (a.text().to_owned(), a.value.is_none())
                    })
                } else {
                    (attached, arg.value.is_none())
                };
                if dynamic {
                    dynamic_option(*c, &value, o);
                }
                ssh_option(*c, &value, o);
                break;
            }
            match c {
                'N' => o.no_command = true,
                'G' | 'V' => o.local_only = true,
                's' => o.subsystem = true,
                _ => {}
            }
        }
        i += if consumed_next { 2 } else { 1 };
    }
    i
}

impl SshOptions {
    /// How a target reached through these options resolves: by the ssh configuration, with
    /// the `-F` file and the user (`user@` in `destination` first) a `Match user` reads.
    pub(super) fn target_kind(&self, destination: &str) -> TargetKind {
        TargetKind::Ssh {
            config: self.config.clone(),
            user: user_of(destination).or_else(|| self.user.clone()),
        }
    }

    /// The machine the connection reaches for `destination` (its host part): a ProxyCommand's
    /// end point, else the first `HostName` (`%h` is the destination), else the destination.
    pub(super) fn endpoint(&self, destination: &str) -> Result<String, String> {
        match &self.proxy_end {
            Some(Ok(end)) => Ok(end.replace("%h", destination)),
            Some(Err(why)) => Err(why.clone()),
            None => Ok(self
                .hostname
                .as_deref()
                .map_or_else(|| destination.to_owned(), |h| h.replace("%h", destination))),
        }
    }
}

/// The user a destination names: `admin` in `admin@web01`, `ssh://admin@web01:22/`,
/// `admin@web01:/srv/x`.
pub(super) fn user_of(destination: &str) -> Option<String> {
    let rest = ["ssh://", "sftp://", "scp://", "rsync://"]
        .iter()
        .find_map(|scheme| destination.strip_prefix(scheme));
    let authority = match rest {
        Some(rest) => rest.split('/').next().unwrap_or(rest),
        None => destination.split(':').next().unwrap_or(destination),
    };
    let (user, _) = authority.rsplit_once('@')?;
    let user = user.split(';').next().unwrap_or(user);
    (!user.is_empty()).then(|| user.to_owned())
}

/// Where a `ProxyCommand` connects: `None` when it connects to the destination itself (`%h`,
/// `ssh -W %h:%p bastion`), the end point when it is written (`nc 10.0.0.31 22`, `ssh -W
/// 10.0.0.31:22 bastion`, `socat - TCP:10.0.0.31:22`), and why not when it cannot be read.
pub(crate) fn proxy_end(command: &str) -> Option<Result<String, String>> {
    let words = shlex::split(command).unwrap_or_default();
    let program = words.first().map(|w| lower_base(w)).unwrap_or_default();
    let end = match program.as_str() {
        "nc" | "ncat" | "netcat" | "connect" | "connect-proxy" | "corkscrew" => words[1..]
            .iter()
            .filter(|w| !w.starts_with('-'))
            .rev()
            .nth(1)
            .cloned(),
        "ssh" => words
            .iter()
            .position(|w| w == "-W")
            .and_then(|at| words.get(at + 1))
            .map(|hp| {
                let host = hp.rsplit_once(':').map_or(hp.as_str(), |(h, _)| h);
                host.trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_owned()
            }),
        "socat" => words[1..]
            .iter()
            .find_map(|w| super::session::socat_host(w)),
        _ => None,
    };
    match end {
        Some(end) if end == "%h" => None,
        Some(end) if end.contains(['%', '$', '`']) => Some(Err(format!(
            "the ProxyCommand connects to `{end}`, which is only known when it runs"
        ))),
        Some(end) => Some(Ok(end)),
        None if command.contains("%h") => None,
        None => Some(Err(String::from(
            "the ProxyCommand's end point is not read, so the machine it reaches is not known",
        ))),
    }
}

/// Programs a `ProxyCommand` runs to carry the connection to its end point.
const RELAYS: &[&str] = &[
    "nc",
    "ncat",
    "netcat",
    "socat",
    "connect",
    "connect-proxy",
    "corkscrew",
];

/// Variables a `SendEnv` pattern may send that make the remote command run code: those a
/// pattern such as `LESS*` or `*` would match.
const CODE_VARIABLES_SENT: &[&str] = &[
    "LESSOPEN",
    "LESSCLOSE",
    "PAGER",
    "GIT_PAGER",
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH_COMMAND",
    "EDITOR",
    "VISUAL",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "PS4",
    "SHELLOPTS",
];

/// An option whose value is only known when the command runs (`-F "$CFG"`, `-o
/// "HostName=${TARGET:-10.0.0.31}"`): when it can send the connection elsewhere, where it
/// ends is not known.
fn dynamic_option(option: char, raw: &str, o: &mut SshOptions) {
    let text = raw.trim_matches(['"', '\'']);
    let key = text
        .split(|c: char| c == '=' || c.is_whitespace())
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let moves = match option {
        'F' => true,
        'o' => {
            matches!(
                key.as_str(),
                "hostname" | "proxycommand" | "include" | "hostkeyalias"
            ) && !(key == "hostname" && o.hostname.is_some())
        }
        _ => false,
    };
    if moves && o.proxy_end.is_none() {
        o.proxy_end = Some(Err(format!(
            "the ssh option `-{option} {}` is only known when the command runs, so the machine it reaches is not known",
            super::clip(raw)
        )));
    }
}

pub(super) fn ssh_option(option: char, value: &str, o: &mut SshOptions) {
    match option {
        'F' => o.config = Some(value.to_owned()),
        'l' => {
            o.user.get_or_insert_with(|| value.to_owned());
        }
        'L' => {
            o.forwards_here += 1;
            if o.forwards_to.is_none() {
                o.forwards_to = forward_end(value);
            }
        }
        'D' => o.forwards_here += 1,
        // `-W host:port` carries another ssh connection (a jump): it runs nothing here.
        'O' | 'Q' | 'W' => o.local_only = true,
        'o' => {
            let (key, val) = value
                .split_once(|c: char| c == '=' || c.is_whitespace())
                .map_or((value, ""), |(k, v)| {
                    (k, v.trim_start_matches(['=', ' ', '\t']))
                });
            // OpenSSH keeps the first value it obtains for each option.
            match key.to_ascii_lowercase().as_str() {
                "remotecommand" => {
                    o.remote_command.get_or_insert_with(|| val.to_owned());
                }
                "hostname" => {
                    o.hostname.get_or_insert_with(|| val.to_owned());
                }
                "user" => {
                    o.user.get_or_insert_with(|| val.to_owned());
                }
                "proxycommand" if !val.eq_ignore_ascii_case("none") => {
                    if o.proxy_end.is_none() {
                        o.proxy_end = proxy_end(val);
                    }
                    // `nc 10.0.0.31 22` only carries this connection, whose end point is
                    // judged as ssh's; anything more is a command run here.
                    let relay = val
                        .split_whitespace()
                        .next()
                        .is_some_and(|first| RELAYS.contains(&lower_base(first).as_str()));
                    if !relay || val.contains([';', '&', '|', '`', '$', '(', '<', '>', '\n']) {
                        o.local_texts.push(val.to_owned());
                    }
                }
                "localcommand" | "knownhostscommand" if !val.eq_ignore_ascii_case("none") => {
                    o.local_texts.push(val.to_owned());
                }
                "sessiontype" if val.eq_ignore_ascii_case("none") => o.no_command = true,
                "localforward" => {
                    o.forwards_here += 1;
                    if o.forwards_to.is_none() {
                        o.forwards_to = forward_end(val);
                    }
                }
                "dynamicforward" => o.forwards_here += 1,
                // `SetEnv NAME=value …`, `SendEnv NAME PATTERN*`.
                "setenv" | "sendenv" => {
                    let named = val.split_whitespace().find(|item| {
                        let name = item.split_once('=').map_or(*item, |(n, _)| n);
                        if name.contains(['*', '?']) {
                            CODE_VARIABLES_SENT
                                .iter()
                                .any(|v| crate::glob::glob_match(name, v))
                        } else {
                            runners::runs_code(name)
                        }
                    });
                    if let Some(name) = named {
                        o.code_env.get_or_insert_with(|| name.to_owned());
                    }
                }
                _ => {}
            }
        }
        _ => {}
    }
}

pub(super) fn ssh(
    ctx: &mut Ctx<'_>,
    program: &Program,
    args: &[Arg],
    cmd: &Cmd,
) -> Result<(), Unknown> {
    let mut o = SshOptions::default();
    let at = ssh_options(program, args, 0, &mut o);
    let Some(destination) = args.get(at) else {
        // No destination: ssh prints its usage and runs nothing (or -G/-V/-Q).
        return local_texts(ctx, &o);
    };
    // OpenSSH reads options after the destination too, up to the command.
    let command_at = ssh_options(program, args, at + 1, &mut o);
    local_texts(ctx, &o)?;
    if o.local_only {
        return Ok(());
    }
    // `printf 'Host web01\n HostName db01' > cfg && ssh -F cfg web01 …`: the hook would read
    // the file as it was before the command wrote it.
    if let Some(config) = o.config.as_deref().filter(|c| world::wrote(ctx, c)) {
        ctx.findings.push(unknown_finding(
            program,
            format!("the command writes {config} before ssh reads it, so the machine it reaches is not known"),
        ));
        return Ok(());
    }
    let words = &args[command_at.min(args.len())..];
    let Some(dest) = destination.value.as_deref() else {
        // Which machine is not known; when the command there only reads, that is no matter.
        if !words.is_empty() && !o.subsystem {
            let (text, class, why) = judge_remote(ctx, words, cmd);
            if class == Class::ReadOnly {
                let mut f = finding(program, Vec::new(), class, why);
                f.remote = Some(text);
                ctx.findings.push(f);
                return Ok(());
            }
        }
        ctx.findings
            .push(not_fixed(program, "the destination", &destination.raw));
        return Ok(());
    };
    let name = match o.endpoint(&host_of(dest)) {
        Ok(name) => name,
        Err(why) => {
            ctx.findings.push(unknown_finding(program, why));
            return Ok(());
        }
    };
    // `ssh web01 ssh db01 '…'`: web01 only relays to db01, whose command is judged.
    if let Some(first) = words.first().and_then(|w| w.value.as_deref())
        && ctx
            .catalog
            .program(first)
            .is_some_and(|p| p.grammar == Grammar::Ssh)
        && let Some(relayed) = join(words).value
        && !relayed.contains([';', '&', '|', '\n', '`', '$', '(', '<', '>'])
    {
        text_in(ctx, &relayed, Dialect::Posix)?;
        ctx.findings.push(finding(
            program,
            vec![Target {
                name,
                kind: o.target_kind(dest),
            }],
            Class::ReadOnly,
            format!("relays to another machine through `{first}`"),
        ));
        return Ok(());
    }
    // `ssh -p 2222 localhost …` after `ssh -fNL 2222:web01:22 build07`: this machine's port
    // reaches the forward's far end.
    let name = match &ctx.forwarded {
        Some(forwarded) if crate::inventory::is_loopback(&name) => forwarded.name.clone(),
        _ => name,
    };
    let target = Target {
        name,
        kind: o.target_kind(dest),
    };
    // Later in the same text, a connection to this machine may go through the forward: to
    // the host, or to the machine the host forwards it to.
    if let Some(end) = &o.forwards_to {
        ctx.forwarded = Some(Target {
            name: end.clone(),
            kind: TargetKind::Host,
        });
    } else if o.forwards_here > 0 {
        ctx.forwarded = Some(target.clone());
    }
    let (remote_text, class, why) = what_runs(ctx, &o, words, cmd);
    // ssh-copy-id runs no command of the caller's: it appends a key to authorized_keys.
    let (class, why) = if program.names[0] == "ssh-copy-id" {
        (
            Class::Mutating,
            String::from("installs a public key on the host"),
        )
    } else if let Some(name) = o
        .code_env
        .as_ref()
        .filter(|_| class == Class::ReadOnly && !o.no_command)
    {
        (
            Class::Mutating,
            format!("sets `{name}` for the remote command, which can make it run a program"),
        )
    } else {
        (class, why)
    };
    let mut f = finding(program, vec![target], class, why);
    f.remote = remote_text;
    ctx.findings.push(f);
    Ok(())
}

/// What an ssh call runs on its host: the remote command (its words, `-o RemoteCommand`, a
/// subsystem, the script on standard input) with its class and why; nothing for `-N` or an
/// interactive session.
fn what_runs(
    ctx: &mut Ctx<'_>,
    o: &SshOptions,
    words: &[Arg],
    cmd: &Cmd,
) -> (Option<String>, Class, String) {
    if !words.is_empty() && !o.subsystem {
        let (text, class, why) = judge_remote(ctx, words, cmd);
        (Some(text), class, why)
    } else if o.subsystem {
        (
            Some(join(words).raw),
            Class::Mutating,
            String::from("starts a subsystem on the host"),
        )
    } else if let Some(text) = &o.remote_command {
        let (class, why) = remote::classify(&mut ctx.judge(), text, &cmd.stdin);
        (Some(text.clone()), class, why)
    } else if o.no_command {
        // `-N`: a port forward runs nothing on the host and reads nothing from it; what later
        // goes through the forward is a command of its own.
        (
            None,
            Class::ReadOnly,
            String::from("runs no command on the host (-N): it only forwards ports"),
        )
    } else {
        match &cmd.stdin {
            Stdin::Text(script) => {
                let (class, why) = match &script.value {
                    Some(text) => remote::classify(&mut ctx.judge(), text, &Stdin::Inherited),
                    None => (
                        Class::Mutating,
                        String::from(
                            "the script on standard input is expanded on this machine first",
                        ),
                    ),
                };
                (Some(script.raw.clone()), class, why)
            }
            Stdin::Inherited => (
                None,
                Class::Mutating,
                String::from("opens an interactive session on the host"),
            ),
            Stdin::Pipe | Stdin::File(_) => (
                None,
                Class::Mutating,
                String::from("runs the script it reads from standard input, which is not seen"),
            ),
        }
    }
}

pub(super) fn local_texts(ctx: &mut Ctx<'_>, o: &SshOptions) -> Result<(), Unknown> {
    for text in &o.local_texts {
        text_in(ctx, text, Dialect::Posix)?;
    }
    Ok(())
}

/// `rsync -e 'ssh -o HostName=… -F cfg'`: the ssh options of the remote shell rsync runs.
pub(super) fn read_rsh(command: &str, o: &mut SshOptions) {
    let words = shlex::split(command).unwrap_or_default();
    let mut i = 1;
    while let Some(word) = words.get(i) {
        if let Some(value) = word.strip_prefix("-o") {
            let value = if value.is_empty() {
                i += 1;
                words.get(i).cloned().unwrap_or_default()
            } else {
                value.to_owned()
            };
            ssh_option('o', &value, o);
        } else if word == "-F" {
            i += 1;
            if let Some(file) = words.get(i) {
                o.config.get_or_insert_with(|| file.clone());
            }
        }
        i += 1;
    }
}

/// The far end of a local forward, `[bind:]port:host:hostport` (`[v6]` bracketed), when it
/// is another machine than the ssh host itself (not loopback); `None` for a socket path.
fn forward_end(spec: &str) -> Option<String> {
    let spec = spec.trim();
    let mut fields = Vec::new();
    let mut text = spec;
    while !text.is_empty() {
        if let Some(inner) = text.strip_prefix('[') {
            let (host, after) = inner.split_once(']').unwrap_or((inner, ""));
            fields.push(host);
            text = after.strip_prefix(':').unwrap_or(after);
        } else {
            let (field, after) = text.split_once([':', ' ']).unwrap_or((text, ""));
            fields.push(field);
            text = after.trim_start();
        }
    }
    if fields.len() < 3 {
        return None;
    }
    let host = fields[fields.len() - 2];
    (!host.is_empty() && !host.contains('/') && !crate::inventory::is_loopback(host))
        .then(|| host.to_owned())
}
