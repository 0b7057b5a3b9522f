//! From simple commands to findings: wrappers are looked through (`sudo`, `env`, `nohup`,
//! `timeout`, `nice`, `time`, `exec`, `command`, `bash -c`, `pwsh -c`, `find -exec`, …) and
//! each remote program is read by its grammar into targets, a remote command and a class.

#![expect(
    clippy::unnecessary_wraps,
    reason = "every grammar has the one signature `command` dispatches to"
)]
#![expect(
    clippy::too_many_lines,
    reason = "a wrapper table and grammars read best top to bottom, one case after another"
)]

use base64::Engine as _;

use super::catalog::{Grammar, Program, ShellCatalog};
use super::{Arg, Class, Cmd, Dialect, Finding, Stdin, Target, TargetKind, Unknown, Walk};
use super::{net, posix, remote, runners};
use crate::inventory::Inventory;

mod ansible;
mod cmdlets;
mod copy;
mod fleet;
mod hypervisors;
mod session;
mod ssh;
mod windows;

pub(crate) use self::ssh::proxy_end;

/// What one analysis carries through nested texts.
pub(crate) struct Ctx<'a> {
    pub(crate) catalog: &'a ShellCatalog,
    /// The protected-VM net: a program no grammar reads that names one of these asks.
    pub(crate) known: &'a Inventory,
    /// Whether the whole command names a remote program: a program word only known when the
    /// command runs (`x=ssh; $x web01`, `"${argv[@]}"`) may then be that program.
    pub(crate) named: bool,
    /// Variables the text assigns exactly once, to a literal value (`x=ss; ${x}h …`).
    vars: Vec<(String, String)>,
    /// Whether any word of the whole command could name another machine (a UNC path, a
    /// protected VM): objects a pipeline hands on may then come from there.
    pub(crate) names_a_machine: bool,
    /// Files an earlier command of the text wrote, with what it wrote when the text fixes
    /// it (`echo 'ssh web01 reboot' > /tmp/r.sh; bash /tmp/r.sh`).
    written: Vec<(String, Option<String>)>,
    /// A protected machine an earlier command put in the environment (`export T=web01`).
    exported: Option<String>,
    /// PowerShell's location was set to a UNC path: relative writes land on that machine.
    pub(crate) unc_location: Option<String>,
    pub(crate) walk: &'a mut Walk,
    pub(crate) findings: &'a mut Vec<Finding>,
}

impl Ctx<'_> {
    /// The value the text gave `name` (`export DOCKER_HOST=…; docker …`), if it fixes one.
    pub(crate) fn bound(&self, name: &str) -> Option<String> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }
}

/// Parses `text` and analyses every simple command in it.
pub(crate) fn analyse_text(
    text: &str,
    dialect: Dialect,
    catalog: &ShellCatalog,
    known: &Inventory,
    walk: &mut Walk,
    findings: &mut Vec<Finding>,
) -> Result<(), Unknown> {
    let mut ctx = Ctx {
        catalog,
        known,
        named: catalog.names_a_program(text).is_some() || catalog.may_hide_a_program(text),
        vars: Vec::new(),
        written: Vec::new(),
        exported: None,
        unc_location: None,
        names_a_machine: text
            .split(net::is_separator)
            .any(|w| w.starts_with("\\\\") || net::protected(w, known).is_some()),
        walk,
        findings,
    };
    text_in(&mut ctx, text, dialect)
}

fn text_in(ctx: &mut Ctx<'_>, text: &str, dialect: Dialect) -> Result<(), Unknown> {
    let commands = match ctx.walk.parse(text, dialect) {
        Ok(commands) => commands,
        // Text the parser cannot read (bash would refuse most of it too) can only be let
        // through when nothing in it could reach another machine.
        Err(e) if e.is_unparsed() && !could_reach(ctx, text) => return Ok(()),
        Err(e) => return Err(e),
    };
    let outer = ctx.vars.len();
    if dialect == Dialect::Posix {
        ctx.vars.extend(assigned_once(&commands));
    }
    ctx.walk.enter()?;
    let result = commands
        .iter()
        .try_for_each(|cmd| command(ctx, cmd, dialect));
    ctx.walk.leave();
    ctx.vars.truncate(outer);
    result
}

/// Whether unread text could reach another machine: it names a remote program (or hides
/// one's name), or one of its words could name a host.
fn could_reach(ctx: &Ctx<'_>, text: &str) -> bool {
    ctx.catalog.names_a_program(text).is_some()
        || ctx.catalog.may_hide_a_program(text)
        || may_reach_without_a_program(text)
        || text
            .split(net::is_separator)
            .any(|word| net::could_name_a_host(word, ctx.known))
}

/// `NAME=value` commands (no program) whose name is assigned exactly once in `commands`,
/// to a literal value: those values are what `$NAME` expands to afterwards.
fn assigned_once(commands: &[Cmd]) -> Vec<(String, String)> {
    let mut seen: Vec<(String, Option<String>)> = Vec::new();
    for cmd in commands {
        // `NAME=value` alone, or `export NAME=value`.
        let exported: Vec<String> = match cmd.words.split_first() {
            Some((first, rest)) if first.value.as_deref() == Some("export") => rest
                .iter()
                .filter(|w| !w.text().starts_with('-'))
                .map(|w| w.value.clone().unwrap_or_else(|| format!("{}$", w.raw)))
                .collect(),
            Some(_) => continue,
            None => Vec::new(),
        };
        for assignment in cmd.assignments.iter().chain(&exported) {
            let Some((name, value)) = assignment.split_once('=') else {
                continue;
            };
            // `assignments` keeps an expanding value as written: `$`/backticks mark it.
            let literal = (!value.contains(['$', '`'])).then(|| value.to_owned());
            match seen.iter_mut().find(|(n, _)| n == name) {
                Some((_, known)) => *known = None,
                None => seen.push((name.to_owned(), literal)),
            }
        }
    }
    // IFS set at all changes how every unquoted expansion splits: keep that it was set.
    seen.into_iter()
        .filter_map(|(name, value)| match value {
            Some(v) => Some((name, v)),
            None if name == "IFS" => Some((name, String::new())),
            None => None,
        })
        .collect()
}

/// What a wrapper runs.
pub(crate) enum Next {
    /// Not a wrapper.
    No,
    /// Nothing runs (`command -v ssh`, `sudo -l`).
    Nothing,
    /// These words run as a command.
    Argv(Vec<Arg>),
    /// This text is parsed again as a shell program.
    Text(Arg, Dialect),
    /// Something runs that cannot be seen (`eval "$x"`, `xargs ssh`): the reason.
    Opaque(String),
    /// Each of these texts may run as a shell program (`tmux new 'ssh web01'`, `expect`'s
    /// `spawn` lines): every one is parsed.
    Texts(Vec<Arg>, Dialect),
    /// Commands come from its standard input or a file another command writes (`… | bash`,
    /// `source <(…)`), which is not seen: unknown when the whole command names a remote
    /// program.
    Piped(String),
    /// Each of these commands runs (`find -exec … ; -exec … ;`).
    Commands(Vec<Vec<Arg>>),
    /// It reaches another machine or runs code that can, by means no grammar reads
    /// (`python3 -c '…paramiko…'`, `systemd-run --host`): always unknown.
    Ask(String),
}

fn lower_base(name: &str) -> String {
    name.rsplit(['/', '\\'])
        .next()
        .unwrap_or(name)
        .to_ascii_lowercase()
}

fn mentions(catalog: &ShellCatalog, args: &[Arg]) -> bool {
    args.iter()
        .any(|a| catalog.mentions_a_program(&a.raw) || catalog.may_hide_a_program(&a.raw))
}

/// The options of sudo and doas that take a value.
const SUDO_VALUES: &[&str] = &[
    "-u",
    "-g",
    "-h",
    "-p",
    "-r",
    "-t",
    "-U",
    "-C",
    "-D",
    "-T",
    "-R",
    "--user",
    "--group",
    "--host",
    "--prompt",
    "--role",
    "--type",
    "--other-user",
    "--close-from",
    "--chdir",
    "--command-timeout",
    "--chroot",
];

/// The option flags among `args[1..]` (options only, up to the first operand), each bundle
/// split into single letters (`-iu root` is `-i` and `-u`), never an option's value (`-p -l`
/// is a prompt of `-l`, not `-l`).
fn option_flags(args: &[Arg], value_options: &[&str]) -> Vec<String> {
    let mut flags = Vec::new();
    let mut i = 1;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        if text == "--" || !text.starts_with('-') || text == "-" {
            break;
        }
        if text.starts_with("--") {
            flags.push(text.split('=').next().unwrap_or(text).to_owned());
        } else {
            for c in text[1..].chars() {
                let flag = format!("-{c}");
                let takes_value = value_options.contains(&flag.as_str());
                flags.push(flag);
                if takes_value {
                    break;
                }
            }
        }
        i += if takes_next_word(text, value_options) {
            2
        } else {
            1
        };
    }
    flags
}

/// Skips options of a wrapper: `value_options` take the next word (or the rest of the word).
/// Returns the index of the first operand.
/// A bundle of short options (`-iu root`, `-dmS name`) takes the next word when its last
/// letter is a value option and its value is not attached (`-n5`).
fn skip_options(args: &[Arg], mut i: usize, value_options: &[&str]) -> usize {
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        if text == "--" {
            return i + 1;
        }
        if !text.starts_with('-') || text == "-" {
            return i;
        }
        i += if takes_next_word(text, value_options) {
            2
        } else {
            1
        };
    }
    i
}

/// Whether the option word `text` leaves its value to the next word.
fn takes_next_word(text: &str, value_options: &[&str]) -> bool {
    if value_options.contains(&text) {
        return true;
    }
    if text.starts_with("--") || text.contains('=') {
        return false;
    }
    // The first letter that takes a value takes the rest of the word, or the next word.
    let letters: Vec<char> = text[1..].chars().collect();
    for (k, c) in letters.iter().enumerate() {
        let option = format!("-{c}");
        if value_options.contains(&option.as_str()) {
            return k + 1 == letters.len();
        }
    }
    false
}

/// Looks through one wrapper. `args[0]` is the wrapper's name.
pub(crate) fn unwrap(catalog: &ShellCatalog, args: &[Arg], stdin: &Stdin) -> Next {
    let Some(name) = args.first().and_then(|a| a.value.as_deref()) else {
        return Next::No;
    };
    let rest = |i: usize| -> Next {
        if i < args.len() {
            Next::Argv(args[i..].to_vec())
        } else {
            Next::Nothing
        }
    };
    match lower_base(name).as_str() {
        "sudo" | "doas" => {
            let i = skip_options(args, 1, SUDO_VALUES);
            let flags = option_flags(&args[..i], SUDO_VALUES);
            // `sudo -e` edits a local file; `sudo -l` lists; `sudo -v` refreshes.
            if flags.iter().any(|f| {
                matches!(
                    f.as_str(),
                    "-e" | "--edit" | "-l" | "--list" | "-v" | "--validate"
                )
            }) {
                return Next::Nothing;
            }
            // `sudo -i`, `sudo -s`, `doas -s` with no command open a shell that reads its
            // input (`sudo -i <<< '…'`): read as that shell.
            if i >= args.len()
                && flags
                    .iter()
                    .any(|f| matches!(f.as_str(), "-i" | "-s" | "--login" | "--shell"))
            {
                return Next::Argv(vec![Arg::literal(String::from("sh"))]);
            }
            rest(i)
        }
        "env" => {
            let mut i = 1;
            while let Some(arg) = args.get(i) {
                let text = arg.text();
                if matches!(text, "-S" | "--split-string") {
                    let joined = join(&args[i + 1..]);
                    return Next::Text(joined, Dialect::Posix);
                }
                // `-S'ssh web01'`, `-iS 'ssh web01'`: the string is attached or next.
                if !text.starts_with("--")
                    && let Some(at) = text.find('S').filter(|_| text.starts_with('-'))
                {
                    let attached = &text[at + 1..];
                    let mut words = Vec::new();
                    if !attached.is_empty() {
                        words.push(Arg {
                            raw: attached.to_owned(),
                            value: arg.value.as_ref().map(|_| attached.to_owned()),
                        });
                    }
                    words.extend(args[i + 1..].iter().cloned());
                    return Next::Text(join(&words), Dialect::Posix);
                }
                if let Some(split) = text.strip_prefix("--split-string=") {
                    let mut joined = String::from(split);
                    for a in &args[i + 1..] {
                        joined.push(' ');
                        joined.push_str(a.text());
                    }
                    return Next::Text(Arg::literal(joined), Dialect::Posix);
                }
                if matches!(text, "-u" | "--unset" | "-C" | "--chdir") {
                    i += 2;
                } else if text.starts_with('-') || (text.contains('=') && !text.starts_with('=')) {
                    i += 1;
                } else {
                    break;
                }
            }
            rest(i)
        }
        // Wrappers whose options never take a separate value.
        "nohup" | "setsid" | "chronic" | "unbuffer" | "builtin" | "catchsegv" | "caffeinate"
        | "dbus-run-session" | "tsocks" | "nocache" | "eatmydata" | "linux32" | "linux64"
        | "i386" | "x86_64" => rest(skip_options(args, 1, &[])),
        // setarch ARCH [options] COMMAND…
        "setarch" => rest(skip_options(args, 2, &[])),
        "busybox" | "firejail" | "setpriv" | "unshare" | "with-lock-ex" => rest(skip_options(
            args,
            1,
            &[
                "--reuid",
                "--regid",
                "--ruid",
                "--euid",
                "--rgid",
                "--egid",
                "--groups",
                "--inh-caps",
                "--ambient-caps",
                "--bounding-set",
                "--securebits",
                "--pdeathsig",
                "--selinux-label",
                "--apparmor-profile",
                "-S",
                "--setuid",
                "-G",
                "--setgid",
                "-R",
                "--root",
                "-w",
                "--wd",
            ],
        )),
        "pkexec" => rest(skip_options(args, 1, &["--user", "-u"])),
        "proxychains" | "proxychains4" => rest(skip_options(args, 1, &["-f"])),
        "torsocks" => rest(skip_options(
            args,
            1,
            &[
                "-u",
                "-p",
                "-a",
                "-P",
                "--user",
                "--pass",
                "--address",
                "--port",
            ],
        )),
        "rlwrap" => rest(skip_options(
            args,
            1,
            &[
                "-b", "-C", "-D", "-e", "-f", "-F", "-g", "-H", "-l", "-O", "-P", "-q", "-s", "-S",
                "-t", "-w", "-z",
            ],
        )),
        "fakeroot" => rest(skip_options(
            args,
            1,
            &["-l", "--lib", "--faked", "-s", "-i", "-b"],
        )),
        "ssh-agent" => rest(skip_options(args, 1, &["-a", "-E", "-O", "-P", "-t"])),
        "chpst" => rest(skip_options(
            args,
            1,
            &[
                "-u", "-U", "-b", "-e", "-/", "-C", "-n", "-l", "-L", "-m", "-d", "-o", "-p", "-f",
                "-c",
            ],
        )),
        "nsenter" => rest(skip_options(
            args,
            1,
            &["-t", "--target", "-S", "--setuid", "-G", "--setgid"],
        )),
        "cpulimit" => rest(skip_options(
            args,
            1,
            &["-l", "--limit", "-e", "--exe", "-p", "--pid", "-c", "--cpu"],
        )),
        "trickle" => rest(skip_options(args, 1, &["-d", "-u", "-w", "-t", "-l", "-n"])),
        "tsp" => rest(skip_options(args, 1, &["-L", "-D", "-W", "-N"])),
        // faketime [-f] [-m] [-p PID] TIMESTAMP COMMAND…; chrt [options] PRIORITY COMMAND…;
        // taskset [options] MASK COMMAND… (`-p` acts on a running process instead).
        "faketime" | "chrt" | "taskset" => {
            let i = skip_options(args, 1, &["-p", "--pid"]);
            if args[1..i]
                .iter()
                .any(|a| matches!(a.text(), "-p" | "--pid") || a.text().starts_with("-p"))
                && lower_base(name) != "faketime"
            {
                return Next::Nothing;
            }
            rest(i + 1)
        }
        // systemd-run --host runs the command on another machine over ssh.
        "systemd-run" => {
            let values = [
                "-u",
                "--unit",
                "-p",
                "--property",
                "-E",
                "--setenv",
                "--description",
                "--slice",
                "--uid",
                "--gid",
                "-M",
                "--machine",
                "-H",
                "--host",
                "--working-directory",
                "--nice",
                "--on-active",
                "--on-boot",
                "--on-startup",
                "--on-unit-active",
                "--on-unit-inactive",
                "--on-calendar",
                "--timer-property",
                "--path-property",
                "--socket-property",
                "--service-type",
                "-C",
                "--capsule",
            ];
            let i = skip_options(args, 1, &values);
            if args[1..i].iter().any(|a| {
                let text = a.text();
                text == "--host" || text.starts_with("--host=") || short_letter(text, 'H')
            }) {
                return Next::Ask(String::from(
                    "`systemd-run --host` runs the command on another machine",
                ));
            }
            rest(i)
        }
        // ip netns exec NAME COMMAND…, ip vrf exec NAME COMMAND…
        "ip" => {
            let words: Vec<&str> = args[1..].iter().map(Arg::text).collect();
            match words.iter().position(|w| *w == "exec") {
                Some(at)
                    if at >= 1
                        && matches!(words[at - 1], "netns" | "vrf" | "netn" | "net" | "vr")
                        && !words[..at - 1].iter().any(|w| !w.starts_with('-')) =>
                {
                    rest(at + 3)
                }
                _ => Next::No,
            }
        }
        // dtach -n|-N|-A|-c SOCKET [options] COMMAND…; abduco -c|-n|-A NAME COMMAND….
        "dtach" => {
            if !matches!(args.get(1).map(Arg::text), Some("-n" | "-N" | "-A" | "-c")) {
                return Next::Nothing;
            }
            rest(skip_options(args, 3, &["-e", "-r"]))
        }
        "abduco" => {
            let i = skip_options(args, 1, &["-e"]);
            rest(i + 1)
        }
        "sg" => {
            // sg [-] GROUP [-c] COMMAND: the command is one string.
            let mut i = 1;
            if args.get(i).map(Arg::text) == Some("-") {
                i += 1;
            }
            i += 1;
            if args.get(i).map(Arg::text) == Some("-c") {
                i += 1;
            }
            match args.get(i) {
                Some(_) => Next::Text(join(&args[i..]), Dialect::Posix),
                None => Next::Nothing,
            }
        }
        "runuser" => {
            let values = [
                "-u",
                "--user",
                "-g",
                "--group",
                "-G",
                "--supp-group",
                "-s",
                "--shell",
                "-w",
                "--whitelist-environment",
            ];
            if let Some(text) = command_option(args) {
                return Next::Text(text, Dialect::Posix);
            }
            let i = skip_options(args, 1, &values);
            if args[1..i]
                .iter()
                .any(|a| matches!(a.text(), "-u" | "--user") || a.text().starts_with("--user="))
            {
                rest(i)
            } else {
                Next::Nothing
            }
        }
        "screen" => screen(args),
        "tmux" | "byobu" => tmux(args),
        "zellij" => zellij(args),
        "script" => script(args),
        "expect" => expect(args, stdin),
        "at" | "batch" => match stdin {
            Stdin::Text(body)
                if !args[1..].iter().any(|a| a.text().starts_with("-f"))
                    || args.iter().any(|a| matches!(a.text(), "/dev/stdin" | "-")) =>
            {
                Next::Text(body.clone(), Dialect::Posix)
            }
            Stdin::Pipe => Next::Piped(format!("`{name}` runs commands read from a pipe")),
            _ => Next::Nothing,
        },
        "source" | "." => match args.get(1) {
            Some(file) if file.value.is_none() => Next::Piped(format!(
                "`{name}` runs `{}`, whose content is only known when the command runs",
                file.raw
            )),
            Some(file) if matches!(file.text(), "/dev/stdin" | "/proc/self/fd/0" | "-") => {
                match stdin {
                    Stdin::Text(body) => Next::Text(body.clone(), Dialect::Posix),
                    _ => Next::Piped(format!("`{name}` runs commands read from its input")),
                }
            }
            _ => Next::Nothing,
        },
        // sshpass [-p PASSWORD | -f FILE | -d FD | -e] [-P PROMPT] [-v] COMMAND…
        "sshpass" => rest(skip_options(args, 1, &["-p", "-f", "-d", "-P"])),
        // chroot [--userspec=…] [--groups=…] NEWROOT [COMMAND…]
        "chroot" => rest(skip_options(args, 1, &[]) + 1),
        "strace" | "ltrace" => rest(skip_options(
            args,
            1,
            &[
                "-o", "-e", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-P", "-S", "-X",
            ],
        )),
        // An alias that runs a remote program is used later under another name.
        "alias" | "set-alias" | "new-alias" | "sal" | "nal" => {
            if mentions(catalog, &args[1..]) {
                Next::Opaque(format!(
                    "`{name}` gives a remote program another name, which the analysis does not follow"
                ))
            } else {
                Next::Nothing
            }
        }
        "timeout" | "gtimeout" => {
            let i = skip_options(args, 1, &["-s", "--signal", "-k", "--kill-after"]);
            rest(i + 1)
        }
        "nice" | "ionice" | "stdbuf" => rest(skip_options(
            args,
            1,
            &[
                "-n",
                "--adjustment",
                "-c",
                "--class",
                "-p",
                "-i",
                "-o",
                "-e",
                "--pid",
            ],
        )),
        "time" => rest(skip_options(args, 1, &["-f", "--format", "-o", "--output"])),
        "exec" => rest(skip_options(args, 1, &["-a"])),
        "command" => {
            let i = skip_options(args, 1, &[]);
            if args[1..i].iter().any(|a| matches!(a.text(), "-v" | "-V")) {
                return Next::Nothing;
            }
            rest(i)
        }
        // GNU parallel's --sshlogin runs the jobs on other machines.
        "parallel"
            if args[1..].iter().any(|a| {
                let text = a.text();
                matches!(text, "--sshlogin" | "--sshloginfile" | "--slf")
                    || text.starts_with("--sshlogin=")
                    || text.starts_with("--slf=")
                    || short_letter(text, 'S')
            }) =>
        {
            Next::Ask(String::from(
                "`parallel --sshlogin` runs the jobs on other machines, which are not read",
            ))
        }
        // wsl [-d DISTRO] [-u USER] [--cd DIR] [-e | --] COMMAND…: a command in a Linux distro.
        "wsl" | "wsl.exe" => {
            let i = skip_options(
                args,
                1,
                &[
                    "-d",
                    "--distribution",
                    "-u",
                    "--user",
                    "--cd",
                    "--shell-type",
                ],
            );
            let i = if matches!(args.get(i).map(Arg::text), Some("-e" | "--exec")) {
                i + 1
            } else {
                i
            };
            rest(i)
        }
        "xargs" | "parallel" => {
            if mentions(catalog, &args[1..]) {
                Next::Opaque(format!(
                    "`{name}` runs a remote program with arguments read from its input"
                ))
            } else if lower_base(name) == "xargs"
                && args[1..].iter().any(|a| {
                    matches!(
                        lower_base(a.text()).as_str(),
                        "sh" | "bash"
                            | "zsh"
                            | "dash"
                            | "ksh"
                            | "eval"
                            | "python"
                            | "python3"
                            | "perl"
                            | "node"
                            | "pwsh"
                            | "powershell"
                    )
                })
            {
                Next::Opaque(format!(
                    "`{name}` hands text read from its input to a shell or interpreter"
                ))
            } else if lower_base(name) == "xargs" {
                // xargs [options] COMMAND…: the command runs with more arguments (`xargs grep
                // -l x` only reads, `xargs rm` does not); alone it runs `echo`.
                rest(skip_options(
                    args,
                    1,
                    &[
                        "-a",
                        "--arg-file",
                        "-d",
                        "--delimiter",
                        "-E",
                        "-I",
                        "-L",
                        "-n",
                        "--max-args",
                        "-P",
                        "--max-procs",
                        "-s",
                        "--max-chars",
                        "--process-slot-var",
                    ],
                ))
            } else {
                Next::Nothing
            }
        }
        "eval" => {
            let joined = join(&args[1..]);
            if joined.value.is_some() {
                Next::Text(joined, Dialect::Posix)
            } else if args[1..]
                .iter()
                .all(|a| a.value.is_some() || sets_up_the_shell(&a.raw))
            {
                // `eval "$(ssh-agent -s)"`: the program only prints variable settings.
                Next::Nothing
            } else {
                Next::Opaque(String::from(
                    "`eval` runs text that is only known when the command runs",
                ))
            }
        }
        "invoke-expression" | "iex" => {
            let words: Vec<Arg> = args[1..]
                .iter()
                .filter(|a| !a.text().starts_with('-'))
                .cloned()
                .collect();
            let joined = join(&words);
            if words.is_empty() && *stdin == Stdin::Pipe {
                Next::Piped(format!("`{name}` runs the text it reads from the pipeline"))
            } else if joined.value.is_some() {
                Next::Text(joined, Dialect::PowerShell)
            } else {
                Next::Opaque(format!(
                    "`{name}` runs text that is only known when the command runs"
                ))
            }
        }
        "watch" => {
            let i = skip_options(args, 1, &["-n", "--interval", "-q", "--equexit"]);
            if i < args.len() {
                Next::Text(join(&args[i..]), Dialect::Posix)
            } else {
                Next::Nothing
            }
        }
        "flock" => {
            let i = skip_options(args, 1, &["-w", "--timeout", "-E", "--conflict-exit-code"]);
            // flock FILE -c STRING, or flock FILE COMMAND…
            match args.get(i + 1).map(Arg::text) {
                Some("-c" | "--command") => args
                    .get(i + 2)
                    .map_or(Next::Nothing, |a| Next::Text(a.clone(), Dialect::Posix)),
                _ => rest(i + 1),
            }
        }
        // `su` with no command opens a shell that reads its input (`su <<< '…'`).
        "su" => command_option(args).map_or_else(
            || Next::Argv(vec![Arg::literal(String::from("sh"))]),
            |text| Next::Text(text, Dialect::Posix),
        ),
        "bash" | "sh" | "zsh" | "dash" | "ksh" | "ash" | "mksh" | "fish" => shell(args, stdin),
        "python" | "python2" | "python3" | "pypy" | "pypy3" | "perl" | "ruby" | "node"
        | "nodejs" | "deno" | "bun" | "php" | "lua" | "tclsh" | "osascript" | "rscript" => {
            interpreter(catalog, name, args, stdin)
        }
        _ if lower_base(name).starts_with("python3.") => interpreter(catalog, name, args, stdin),
        "pwsh" | "pwsh.exe" | "powershell" | "powershell.exe" => powershell(args, stdin),
        "cmd" | "cmd.exe" => {
            let c = args.iter().position(|a| {
                a.text().eq_ignore_ascii_case("/c") || a.text().eq_ignore_ascii_case("/k")
            });
            match c {
                Some(c) if c + 1 < args.len() => {
                    Next::Text(join(&args[c + 1..]), Dialect::PowerShell)
                }
                _ => Next::Nothing,
            }
        }
        "find" => {
            // find … -exec COMMAND {} ; — `{}` stands for names found at run time. Every
            // -exec, -execdir, -ok and -okdir runs its own command.
            let mut texts = Vec::new();
            let mut at = 1;
            while let Some(start) = args[at..]
                .iter()
                .position(|a| matches!(a.text(), "-exec" | "-execdir" | "-ok" | "-okdir"))
                .map(|p| at + p + 1)
            {
                let end = args[start..]
                    .iter()
                    .position(|a| matches!(a.text(), ";" | "+"))
                    .map_or(args.len(), |e| start + e);
                let words: Vec<Arg> = args[start..end]
                    .iter()
                    .map(|a| {
                        if a.text().contains("{}") {
                            Arg::dynamic(a.raw.clone())
                        } else {
                            a.clone()
                        }
                    })
                    .collect();
                if !words.is_empty() {
                    texts.push(words);
                }
                at = end.min(args.len());
                if at < args.len() {
                    at += 1;
                }
            }
            match texts.len() {
                0 => Next::No,
                1 => Next::Argv(texts.remove(0)),
                _ => Next::Commands(texts),
            }
        }
        _ => Next::No,
    }
}

/// Programs whose output is only shell variable settings, for `eval "$(…)"`.
const SHELL_SETUP: &[&str] = &[
    "ssh-agent",
    "dircolors",
    "keychain",
    "brew shellenv",
    "pyenv init",
    "pyenv virtualenv-init",
    "rbenv init",
    "nodenv init",
    "direnv hook",
    "direnv export",
    "starship init",
    "zoxide init",
    "opam env",
    "luarocks path",
    "conda shell.",
    "mise activate",
    "fnm env",
    "gpg-agent",
    "poetry env activate",
    "poetry shell",
    "pdm venv activate",
    "micromamba shell",
    "mamba shell",
    "nvm",
    "jenv init",
    "goenv init",
    "plenv init",
    "pyenv sh-activate",
];

/// `$(ssh-agent -s)`, `"$(pyenv init -)"`, `` `dircolors` ``: one such program, alone.
fn sets_up_the_shell(raw: &str) -> bool {
    let inner = raw
        .trim_matches('"')
        .strip_prefix("$(")
        .and_then(|r| r.strip_suffix(')'))
        .or_else(|| {
            raw.trim_matches('"')
                .strip_prefix('`')
                .and_then(|r| r.strip_suffix('`'))
        });
    inner.is_some_and(|inner| {
        let inner = inner.trim();
        !inner.contains(['$', '`', ';', '|', '&', '(', ')', '<', '>'])
            && SHELL_SETUP.iter().any(|p| {
                inner == *p
                    || inner.starts_with(&format!("{p} "))
                    || (p.ends_with('.') && inner.starts_with(p))
            })
    })
}

/// `bash -c TEXT`, `bash -lc TEXT`, `bash -s <<EOF`, `bash script.sh`.
fn shell(args: &[Arg], stdin: &Stdin) -> Next {
    let mut i = 1;
    let mut reads_stdin = true;
    // `sh -s -- a b`, `bash -`: the script is the input, the words after are its arguments.
    let mut dash_s = false;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        if text == "-" {
            dash_s = true;
            break;
        }
        if text == "--" {
            i += 1;
            break;
        }
        if text.starts_with('-') && !text.starts_with("--") && text[1..].contains('s') {
            dash_s = true;
        }
        if text.starts_with('-') && !text.starts_with("--") && text.len() > 1 {
            if text[1..].contains('c') {
                return args
                    .get(i + 1)
                    .map_or(Next::Nothing, |t| Next::Text(t.clone(), Dialect::Posix));
            }
            // `-o pipefail`, `-O extglob`: the option's name is the next word.
            if text[1..].contains(['o', 'O']) {
                i += 1;
            }
            i += 1;
            continue;
        }
        if let Some(flags) = text.strip_prefix('+') {
            i += if flags.contains(['o', 'O']) { 2 } else { 1 };
            continue;
        }
        if text.starts_with("--") {
            i += if matches!(text, "--rcfile" | "--init-file") {
                2
            } else {
                1
            };
            continue;
        }
        // A script file: its content is not seen, unless another command writes it
        // (`bash <(curl …)`) or it is the standard input.
        if arg.value.is_none() {
            return Next::Piped(format!(
                "`{}` runs `{}`, whose content is only known when the command runs",
                args[0].text(),
                arg.raw
            ));
        }
        if matches!(text, "/dev/stdin" | "/proc/self/fd/0") {
            i = args.len();
            break;
        }
        reads_stdin = false;
        break;
    }
    if !dash_s && (!reads_stdin || i < args.len()) {
        return Next::Nothing;
    }
    match stdin {
        Stdin::Text(body) => Next::Text(body.clone(), Dialect::Posix),
        Stdin::Pipe => Next::Piped(format!(
            "`{}` runs the commands it reads from its input, which are not seen",
            args[0].text()
        )),
        // `bash < script.sh` runs a local file, as `bash script.sh` does.
        Stdin::File(_) | Stdin::Inherited => Next::Nothing,
    }
}

/// The command of `su -c CMD`, `su -lc CMD`, `su -cCMD`, `runuser --command=CMD`.
fn command_option(args: &[Arg]) -> Option<Arg> {
    for (i, arg) in args.iter().enumerate().skip(1) {
        let text = arg.text();
        if matches!(text, "-c" | "--command" | "--session-command") {
            return args.get(i + 1).cloned();
        }
        for long in ["--command=", "--session-command="] {
            if let Some(value) = text.strip_prefix(long) {
                return Some(attached(arg, text.len() - value.len()));
            }
        }
        if text.starts_with('-') && !text.starts_with("--") {
            let letters = &text[1..];
            if let Some(at) = letters.find('c') {
                let value_at = 1 + at + 1;
                return if value_at < text.len() {
                    Some(attached(arg, value_at))
                } else {
                    args.get(i + 1).cloned()
                };
            }
        }
    }
    None
}

/// The part of an option word after its first `at` bytes (`-cssh web01` → `ssh web01`).
fn attached(arg: &Arg, at: usize) -> Arg {
    let text = arg.text();
    let value = text.get(at..).unwrap_or_default().to_owned();
    Arg {
        raw: value.clone(),
        value: arg.value.as_ref().map(|_| value),
    }
}

/// Whether the option word `text` is the short option `-<letter>`, its value attached or not
/// (`-H`, `-Hweb01`).
fn short_letter(text: &str, letter: char) -> bool {
    !text.starts_with("--")
        && text
            .strip_prefix('-')
            .is_some_and(|t| t.starts_with(letter))
}

/// `screen [options] COMMAND…`, and `screen -X stuff TEXT`, which types TEXT into a session.
fn screen(args: &[Arg]) -> Next {
    let values = ["-S", "-c", "-e", "-h", "-p", "-t", "-T", "-Logfile", "-s"];
    let mut i = 1;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        if text == "-X" {
            // -X COMMAND…: a screen command sent to a running session.
            return match args.get(i + 1).map(Arg::text) {
                Some("stuff") => Next::Text(typed(&args[i + 2..]), Dialect::Posix),
                Some("screen") => rest_of(args, i + 2),
                _ => Next::Nothing,
            };
        }
        if !text.starts_with('-') {
            break;
        }
        i += if takes_next_word(text, &values) { 2 } else { 1 };
    }
    rest_of(args, i)
}

fn rest_of(args: &[Arg], i: usize) -> Next {
    if i < args.len() {
        Next::Argv(args[i..].to_vec())
    } else {
        Next::Nothing
    }
}

/// Text typed into a terminal (`screen -X stuff`, `tmux send-keys`, `zellij action
/// write-chars`): the words joined, with `\n`, `\r` and `^M` read as the Enter key.
fn typed(words: &[Arg]) -> Arg {
    let mut joined = join(words);
    for text in [&mut joined.raw].into_iter().chain(joined.value.as_mut()) {
        *text = text
            .replace("\\n", "\n")
            .replace("\\r", "\n")
            .replace("^M", "\n");
    }
    joined
}

/// tmux (and byobu, which runs it): the commands that start a program (`new-session`,
/// `new-window`, `split-window`, `respawn-*`, `run-shell`, `if-shell`, `display-popup`,
/// `pipe-pane`) and `send-keys`, whose keys are typed into a pane's shell. Commands are
/// split on `;` words; `tmux -c CMD` runs CMD as a shell would.
fn tmux(args: &[Arg]) -> Next {
    let mut i = 1;
    let mut texts = Vec::new();
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        if text == "-c" {
            if let Some(command) = args.get(i + 1) {
                texts.push(command.clone());
            }
            i += 2;
            continue;
        }
        if !text.starts_with('-') {
            break;
        }
        i += if takes_next_word(text, &["-f", "-L", "-S", "-T"]) {
            2
        } else {
            1
        };
    }
    for command in args[i.min(args.len())..].split(|a| matches!(a.text(), ";" | "\\;")) {
        let Some((sub, rest)) = command.split_first() else {
            continue;
        };
        let values: &[&str] = match sub.text() {
            "new-session" | "new" => &["-c", "-e", "-f", "-F", "-n", "-s", "-t", "-x", "-y"],
            "new-window" | "neww" => &["-c", "-e", "-F", "-n", "-t"],
            "split-window" | "splitw" => &["-c", "-e", "-l", "-p", "-t", "-F"],
            "respawn-pane" | "respawnp" | "respawn-window" | "respawnw" => &["-c", "-e", "-t"],
            "run-shell" | "run" => &["-c", "-d", "-t"],
            "if-shell" | "if" | "pipe-pane" | "pipep" => &["-t"],
            "display-popup" | "popup" => &[
                "-b", "-c", "-d", "-e", "-h", "-s", "-S", "-t", "-T", "-w", "-x", "-y",
            ],
            "send-keys" | "send" => {
                let at = skip_options(rest, 0, &["-N", "-t"]);
                texts.push(keys(&rest[at.min(rest.len())..]));
                continue;
            }
            _ => continue,
        };
        let at = skip_options(rest, 0, values);
        let operands = &rest[at.min(rest.len())..];
        if operands.is_empty() {
            continue;
        }
        // Several words run as one command; each word on its own may be a command too
        // (`if-shell 'test -f x' 'new-window "ssh web01"'`).
        texts.push(join(operands));
        if operands.len() > 1 {
            texts.extend(operands.iter().cloned());
        }
    }
    if texts.is_empty() {
        Next::Nothing
    } else {
        Next::Texts(texts, Dialect::Posix)
    }
}

/// The text `tmux send-keys` types: each word is a key name (`Enter`, `C-m`, `Space`) or
/// text, typed one after the other with nothing between them.
fn keys(words: &[Arg]) -> Arg {
    let mut raw = String::new();
    let mut value = Some(String::new());
    for word in words {
        let typed = match word.text() {
            "Enter" | "C-m" | "C-j" | "KPEnter" | "^M" => "\n",
            "Space" => " ",
            "Tab" | "C-i" => "\t",
            key if key.len() <= 3 && key.contains('-') => "",
            text => text,
        };
        raw.push_str(if word.value.is_some() {
            typed
        } else {
            &word.raw
        });
        match (&mut value, &word.value) {
            (Some(v), Some(_)) => v.push_str(typed),
            _ => value = None,
        }
    }
    Arg { raw, value }
}

/// `zellij run [options] -- COMMAND…` and `zellij action write-chars TEXT`.
fn zellij(args: &[Arg]) -> Next {
    let words: Vec<&str> = args.iter().map(Arg::text).collect();
    if let Some(at) = words.iter().position(|w| *w == "write-chars") {
        return Next::Text(typed(&args[at + 1..]), Dialect::Posix);
    }
    if let Some(at) = words.iter().position(|w| *w == "run") {
        return match words[at..].iter().position(|w| *w == "--") {
            Some(dash) => rest_of(args, at + dash + 1),
            None => rest_of(
                args,
                skip_options(
                    args,
                    at + 1,
                    &[
                        "-n",
                        "--name",
                        "-d",
                        "--direction",
                        "--cwd",
                        "--width",
                        "--height",
                        "-x",
                        "-y",
                    ],
                ),
            ),
        };
    }
    Next::Nothing
}

/// util-linux `script -c CMD [file]`; BSD `script [options] FILE COMMAND…`.
fn script(args: &[Arg]) -> Next {
    if let Some(text) = command_option(args) {
        return Next::Text(text, Dialect::Posix);
    }
    let i = skip_options(
        args,
        1,
        &[
            "-E",
            "--echo",
            "-I",
            "--log-in",
            "-O",
            "--log-out",
            "-B",
            "--log-io",
            "-T",
            "--log-timing",
            "-m",
            "--logging-format",
            "-o",
            "--output-limit",
            "-F",
            "-t",
        ],
    );
    // `script [file]` alone runs a shell that reads its input (`script -q /dev/null <<< …`).
    match rest_of(args, i + 1) {
        Next::Nothing => Next::Argv(vec![Arg::literal(String::from("sh"))]),
        next => next,
    }
}

/// `expect -c SCRIPT` (or a script on standard input): each `spawn` and `exec` line starts a
/// program, read here as a shell command.
fn expect(args: &[Arg], stdin: &Stdin) -> Next {
    let mut scripts: Vec<&Arg> = Vec::new();
    let mut i = 1;
    let mut file = false;
    while let Some(arg) = args.get(i) {
        match arg.text() {
            "-c" => {
                scripts.extend(args.get(i + 1));
                i += 2;
            }
            "-f" | "-b" => {
                file = args.get(i + 1).is_some_and(|f| f.text() != "-");
                i += 2;
            }
            text if text.starts_with('-') && text != "-" => i += 1,
            _ => {
                file = true;
                break;
            }
        }
    }
    if let (false, Stdin::Text(body)) = (file, stdin) {
        scripts.push(body);
    }
    let mut texts = Vec::new();
    for script in scripts {
        let Some(value) = script.value.as_deref() else {
            return Next::Piped(format!(
                "`expect` runs `{}`, which is only known when the command runs",
                script.raw
            ));
        };
        for line in value.split(['\n', ';']) {
            let line = line.trim().trim_start_matches(['{', '[']).trim_start();
            let Some(rest) = line
                .strip_prefix("spawn ")
                .or_else(|| line.strip_prefix("exec "))
            else {
                continue;
            };
            let mut words = rest.split_whitespace().peekable();
            while let Some(word) = words.peek() {
                if !word.starts_with('-') {
                    break;
                }
                let takes = matches!(*word, "-ignore" | "-leaveopen" | "-open");
                words.next();
                if takes {
                    words.next();
                }
            }
            let command: Vec<&str> = words.collect();
            // Tcl's braces quote like the shell's single quotes.
            let text = command
                .join(" ")
                .replace(['{', '}'], "'")
                .trim_end_matches(']')
                .to_owned();
            texts.push(Arg::literal(text));
        }
    }
    if texts.is_empty() {
        Next::Nothing
    } else {
        Next::Texts(texts, Dialect::Posix)
    }
}

/// Whether `text` may reach another machine by a means no catalog program names: a library
/// that code handed to an interpreter would use, or `systemd-run --host`. Part of the fast
/// test for local commands.
pub(crate) fn may_reach_without_a_program(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("systemd-run")
        || lower.contains("--sshlogin")
        || lower.contains("--slf")
        || (lower.contains("parallel") && lower.contains("-s"))
        || REMOTE_LIBRARIES[..REMOTE_LIBRARIES.len() - GENERIC_RUNNERS]
            .iter()
            .any(|l| lower.contains(l))
}

/// How many entries at the end of [`REMOTE_LIBRARIES`] only start programs, which matters
/// only when the program is a remote one.
const GENERIC_RUNNERS: usize = 5;

/// Libraries that code handed to an interpreter would use to reach another machine, then
/// the calls that start programs.
const REMOTE_LIBRARIES: &[&str] = &[
    "paramiko",
    "fabric",
    "netmiko",
    "asyncssh",
    "pexpect",
    "pxssh",
    "telnetlib",
    "winrm",
    "pypsrp",
    "pssh",
    "impacket",
    "smbprotocol",
    "libvirt",
    "pyvmomi",
    "net::ssh",
    "net::openssh",
    "net::telnet",
    "ssh2",
    "node-ssh",
    "subprocess",
    "child_process",
    "system(",
    "exec(",
    "popen",
];

/// `python3 -c CODE`, `perl -e CODE`, `node -e CODE`, or code on standard input: code that
/// names a remote program or a library that reaches other machines asks; which machine it
/// reaches is not read.
fn interpreter(catalog: &ShellCatalog, name: &str, args: &[Arg], stdin: &Stdin) -> Next {
    let mut code: Vec<&Arg> = Vec::new();
    for (i, arg) in args.iter().enumerate().skip(1) {
        let text = arg.text();
        // `-c`, `-e`, `-pe`, `-lne`, `--eval`, `--print`: the code is the next word.
        let short_code = text.starts_with('-')
            && !text.starts_with("--")
            && text.ends_with(['c', 'e', 'E', 'r', 'p']);
        if short_code || matches!(text, "--eval" | "--print") {
            code.extend(args.get(i + 1));
        }
    }
    if let Stdin::Text(body) = stdin {
        code.push(body);
    }
    // `… | python3`: the code is what the pipe carries, which is not read as that language.
    let runs_a_file = args[1..].iter().any(|a| !a.text().starts_with('-'));
    if *stdin == Stdin::Pipe && code.is_empty() && !runs_a_file {
        return Next::Ask(format!(
            "`{name}` runs code read from a pipe, which is not read here"
        ));
    }
    let reaches = |code: &Arg| {
        let lower = code.raw.to_ascii_lowercase();
        let remote_program = catalog.names_a_program(&code.raw).is_some();
        let library = REMOTE_LIBRARIES
            .iter()
            .find(|l| lower.contains(*l))
            .copied();
        let runner = REMOTE_LIBRARIES[REMOTE_LIBRARIES.len() - GENERIC_RUNNERS..]
            .iter()
            .any(|r| library == Some(*r));
        // Starting a program only matters when it is a remote one.
        if runner || library.is_none() {
            remote_program
        } else {
            true
        }
    };
    if code.iter().any(|c| reaches(c)) {
        Next::Ask(format!(
            "`{name}` runs code that can reach another machine, and which one is not read"
        ))
    } else {
        Next::Nothing
    }
}

/// `pwsh -c TEXT`, `powershell -Command …`, `-EncodedCommand BASE64`.
fn powershell(args: &[Arg], stdin: &Stdin) -> Next {
    // `-Command -`, a lone `-`, `-File /dev/stdin`: the commands are the input.
    let from_input = || match stdin {
        Stdin::Text(body) => Next::Text(body.clone(), Dialect::PowerShell),
        Stdin::Pipe => Next::Piped(String::from(
            "PowerShell runs the commands it reads from its input, which are not seen",
        )),
        _ => Next::Nothing,
    };
    let mut i = 1;
    while let Some(arg) = args.get(i) {
        let text = arg.text().to_ascii_lowercase();
        let flag = text.trim_start_matches(['-', '/']);
        if text == "-" {
            return from_input();
        }
        if !text.starts_with(['-', '/']) {
            // The first operand: a script file, or (Windows PowerShell) the command itself.
            return Next::Text(join(&args[i..]), Dialect::PowerShell);
        }
        if flag == "c" || (flag.len() >= 2 && "command".starts_with(flag)) {
            if args.get(i + 1).map(Arg::text) == Some("-") {
                return from_input();
            }
            return if i + 1 < args.len() {
                Next::Text(join(&args[i + 1..]), Dialect::PowerShell)
            } else {
                Next::Nothing
            };
        }
        if matches!(flag, "e" | "ec" | "en" | "enc")
            || (flag.len() >= 3 && "encodedcommand".starts_with(flag))
        {
            return match args
                .get(i + 1)
                .and_then(|a| a.value.as_deref())
                .and_then(decode_utf16)
            {
                Some(text) => Next::Text(Arg::literal(text), Dialect::PowerShell),
                None => Next::Opaque(String::from(
                    "`-EncodedCommand` holds text that could not be decoded",
                )),
            };
        }
        if flag == "f" || (flag.len() >= 2 && "file".starts_with(flag)) {
            if matches!(args.get(i + 1).map(Arg::text), Some("/dev/stdin" | "-")) {
                return from_input();
            }
            return Next::Nothing;
        }
        let takes_value = matches!(
            flag,
            "executionpolicy"
                | "ep"
                | "ex"
                | "workingdirectory"
                | "wd"
                | "outputformat"
                | "of"
                | "inputformat"
                | "if"
                | "configurationname"
                | "settingsfile"
                | "version"
                | "v"
                | "windowstyle"
                | "w"
                | "psconsolefile"
        );
        i += if takes_value { 2 } else { 1 };
    }
    Next::Nothing
}

fn decode_utf16(b64: &str) -> Option<String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .ok()?;
    let units: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    String::from_utf16(&units).ok()
}

/// The command `words` run on a remote host, judged: its text (the words as written when part
/// of it is only known when it runs, which makes it mutating), its class and why.
fn judge_remote(ctx: &mut Ctx<'_>, words: &[Arg], cmd: &Cmd) -> (String, Class, String) {
    let remote = join(words);
    let (class, why) = match &remote.value {
        Some(text) => remote::classify(ctx, text, &cmd.stdin),
        None => (
            Class::Mutating,
            String::from("the remote command holds text expanded on this machine first"),
        ),
    };
    (remote.value.unwrap_or(remote.raw), class, why)
}

/// The class of a command run on a host, written as `words` (none: an interactive shell).
pub(crate) fn judge_words(
    ctx: &mut Ctx<'_>,
    words: &[Arg],
    cmd: &Cmd,
    dialect: Dialect,
) -> (Class, String) {
    if words.is_empty() {
        return (Class::Mutating, String::from("opens a shell on the host"));
    }
    match dialect {
        Dialect::Posix => {
            let (_, class, why) = judge_remote(ctx, words, cmd);
            (class, why)
        }
        Dialect::PowerShell => match join(words).value {
            Some(text) => remote::classify_windows(ctx, &text),
            None => (
                Class::Mutating,
                String::from("the remote command holds text expanded on this machine first"),
            ),
        },
    }
}

/// Words joined by spaces, as `ssh`, `eval` and `watch` join them; dynamic if any is.
pub(crate) fn join(args: &[Arg]) -> Arg {
    let raw: Vec<&str> = args.iter().map(|a| a.raw.as_str()).collect();
    let values: Option<Vec<&str>> = args.iter().map(|a| a.value.as_deref()).collect();
    Arg {
        raw: raw.join(" "),
        value: values.map(|v| v.join(" ")),
    }
}

/// Analyses one simple command of the agent's machine.
fn command(ctx: &mut Ctx<'_>, cmd: &Cmd, dialect: Dialect) -> Result<(), Unknown> {
    let fixed;
    let cmd = if dialect == Dialect::Posix && cmd.words.iter().any(|w| w.value.is_none()) {
        fixed = with_bound_values(ctx, cmd);
        &fixed
    } else {
        cmd
    };
    if !cmd.wrapped {
        remember(ctx, cmd, dialect)?;
    }
    let Some(first) = cmd.words.first() else {
        // `PS4='$(…)'`, `BASH_FUNC_x%%=…`: an assignment alone can hold code that runs later.
        for code_run in runners::code_of("", cmd) {
            if let runners::Code::Shell(text) = code_run {
                code(ctx, "the shell", &text, Dialect::Posix)?;
            }
        }
        return Ok(());
    };
    // PowerShell's `& { … }` and `. { … }` run the block here.
    if dialect == Dialect::PowerShell {
        let block = if first.raw.starts_with('{') {
            Some(first)
        } else if first.raw == "." || first.raw == "&" {
            cmd.words.get(1).filter(|b| b.raw.starts_with('{'))
        } else {
            None
        };
        if let Some(block) = block {
            return code(ctx, "&", block, Dialect::PowerShell);
        }
    }
    let name = match first.value.as_deref() {
        Some(name) if dialect == Dialect::PowerShell || !posix::expands_when_run(&first.raw) => {
            name
        }
        _ => return dynamic_program(ctx, cmd, dialect),
    };
    run_code(ctx, name, runners::code_of(&lower_base(name), cmd))?;
    if let Some(script) = script_of(&lower_base(name), cmd)
        && let Some(content) = written_file(ctx, &script).cloned()
    {
        return match content {
            Some(text) => text_in(ctx, &text, Dialect::Posix),
            None => Err(Unknown(format!(
                "`{name}` runs {script}, which the command wrote with text not known here"
            ))),
        };
    }
    match unwrap(ctx.catalog, &cmd.words, &cmd.stdin) {
        Next::No => {}
        // `python3 deploy.py web01`, `bash deploy.sh db01`: a script not read, naming a
        // protected machine.
        Next::Nothing => return protected_net(ctx, name, cmd),
        Next::Argv(words) => {
            // `env DOCKER_HOST=… docker`, `env HOST=web01 ./deploy.sh`: the wrapper's own
            // words set the inner command's environment, or name a machine.
            let own = &cmd.words[..cmd.words.len().saturating_sub(words.len())];
            protected_net(
                ctx,
                name,
                &Cmd {
                    words: own.to_vec(),
                    ..Cmd::default()
                },
            )?;
            let set: Vec<String> = own
                .iter()
                .skip(1)
                .filter_map(|w| w.value.clone())
                .filter(|w| w.split_once('=').is_some_and(|(n, _)| is_name(n)))
                .collect();
            run_code(ctx, name, runners::variable_code(&lower_base(name), &set))?;
            let mut inner = cmd.clone();
            inner.assignments.extend(set);
            return inner_command(ctx, &inner, words, dialect);
        }
        Next::Commands(commands) => {
            for words in commands {
                inner_command(ctx, cmd, words, dialect)?;
            }
            return Ok(());
        }
        Next::Text(text, inner_dialect) => return code(ctx, name, &text, inner_dialect),
        Next::Texts(texts, inner_dialect) => {
            for text in texts {
                code(ctx, name, &text, inner_dialect)?;
            }
            return Ok(());
        }
        // Commands read from a pipe: read when the text fixes what the pipe carries
        // (`echo '…' | sh`, `echo <base64> | base64 -d | sh`), asked about otherwise
        // (`curl … | sh`).
        Next::Piped(reason) => {
            let consumer = if matches!(
                lower_base(name).trim_end_matches(".exe"),
                "pwsh" | "powershell"
            ) {
                Dialect::PowerShell
            } else {
                dialect
            };
            return match &cmd.piped {
                Some(text) if cmd.stdin == Stdin::Pipe => code(ctx, name, text, consumer),
                _ => Err(Unknown(reason)),
            };
        }
        Next::Opaque(reason) | Next::Ask(reason) => return Err(Unknown(reason)),
    }
    let program = ctx.catalog.program_in(name, Some(dialect)).cloned();
    if dialect == Dialect::PowerShell {
        // Script blocks handed to other commands (`ForEach-Object { … }`, `foreach (…) { … }`)
        // run here; those of the remoting and VM cmdlets are judged as remote commands.
        let remote_blocks = program
            .as_ref()
            .is_some_and(|p| matches!(p.grammar, Grammar::PsRemoting | Grammar::PsVm));
        if !remote_blocks {
            for block in cmd.words[1..].iter().filter(|a| a.raw.starts_with('{')) {
                if let Some(inner) = &block.value {
                    text_in(ctx, inner, Dialect::PowerShell)?;
                }
            }
        }
    }
    let Some(program) = program else {
        if dialect == Dialect::PowerShell
            && let Some(next) = cmdlets::start_process(name, &cmd.words[1..])
        {
            return code(ctx, name, &next, Dialect::Posix);
        }
        return unread_program(ctx, name, cmd);
    };
    let args = &cmd.words[1..];
    match program.grammar {
        Grammar::Ssh => ssh::ssh(ctx, &program, args, cmd),
        Grammar::Copy => copy::copy(ctx, &program, name, args, cmd),
        Grammar::Ansible => ansible::ansible(ctx, &program, args),
        Grammar::AnsiblePlaybook => ansible::ansible_playbook(ctx, &program, args),
        Grammar::Winrs => windows::winrs(ctx, args),
        Grammar::Psexec => windows::psexec(ctx, &program, args),
        Grammar::Smbclient => windows::smbclient(ctx, &program, args, cmd),
        Grammar::Govc => hypervisors::govc(ctx, &program, args),
        Grammar::Virsh => hypervisors::virsh(ctx, &program, args),
        Grammar::PsRemoting => cmdlets::ps_remoting(ctx, &program, name, args),
        Grammar::PsComputer => cmdlets::ps_computer(ctx, &program, args, cmd),
        Grammar::PsVm => cmdlets::ps_vm(ctx, &program, name, args, cmd),
        Grammar::Session => session::session(ctx, &program, args),
        Grammar::HostList => session::host_list(ctx, &program, args, cmd),
        Grammar::Fleet => fleet::fleet(ctx, &program, args, cmd),
        Grammar::UncWrite => fleet::unc_write(ctx, &program, args, cmd),
    }
}

/// The script file a shell runs: `bash FILE`, `sh < FILE`, `source FILE`, `. FILE`.
fn script_of(base: &str, cmd: &Cmd) -> Option<String> {
    if !matches!(
        base,
        "bash" | "sh" | "zsh" | "dash" | "ksh" | "ash" | "source" | "."
    ) {
        return None;
    }
    if let Stdin::File(Some(path)) = &cmd.stdin {
        return Some(path.clone());
    }
    cmd.words[1..]
        .iter()
        .find(|w| !w.text().starts_with('-'))
        .and_then(|w| w.value.clone())
}

/// What one command leaves for the later ones: a file it wrote (and what, when known), a
/// protected machine it exported, a UNC location; a PowerShell write to a UNC path
/// (`Get-Date > \\win01\share\x`) is a change of that machine.
fn remember(ctx: &mut Ctx<'_>, cmd: &Cmd, dialect: Dialect) -> Result<(), Unknown> {
    if let Some(path) = &cmd.writes {
        if dialect == Dialect::PowerShell && (path.starts_with("\\\\") || path.starts_with("//")) {
            let host = net::hosts_in(path)
                .into_iter()
                .next()
                .unwrap_or_default()
                .to_owned();
            if host.is_empty() || host.contains(['$', '(']) {
                return Err(Unknown(format!(
                    "writes to `{path}`, whose machine is only known when it runs"
                )));
            }
            ctx.findings.push(Finding {
                program: String::from("redirection"),
                targets: vec![Target {
                    name: host,
                    kind: TargetKind::Host,
                }],
                unknown: None,
                remote: None,
                class: Class::Mutating,
                why: format!("writes {path} through a UNC path"),
            });
        }
        let content = posix::output_of(cmd).and_then(|a| a.value);
        ctx.written.push((path.clone(), content));
    }
    for assignment in cmd.assignments.iter().chain(
        cmd.words
            .iter()
            .skip(1)
            .filter_map(|w| w.value.as_ref())
            .filter(|_| cmd.words.first().and_then(|w| w.value.as_deref()) == Some("export")),
    ) {
        if let Some((_, value)) = assignment.split_once('=')
            && let Some(host) = net::protected(value, ctx.known)
        {
            ctx.exported = Some(host.to_owned());
        }
    }
    if dialect == Dialect::PowerShell
        && let [first, path, ..] = cmd.words.as_slice()
        && matches!(
            first.text().to_ascii_lowercase().as_str(),
            "cd" | "set-location" | "sl" | "chdir" | "pushd" | "push-location"
        )
    {
        ctx.unc_location = path
            .text()
            .starts_with("\\\\")
            .then(|| path.text().to_owned());
    }
    Ok(())
}

/// The text an earlier command of the same command wrote into `path`: `Some(None)` when it
/// wrote the file with content not known here.
fn written_file<'c>(ctx: &'c Ctx<'_>, path: &str) -> Option<&'c Option<String>> {
    ctx.written
        .iter()
        .rev()
        .find(|(p, _)| p == path)
        .map(|(_, c)| c)
}

/// A shell variable name (`HOST`, `DOCKER_HOST`, `BASH_FUNC_ls%%`).
fn is_name(text: &str) -> bool {
    !text.is_empty()
        && !text.starts_with(|c: char| c.is_ascii_digit())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '%')
}

/// Reads the code a program's variables or arguments run: as commands, or asked about when
/// it is not read here and the command could reach another machine.
fn run_code(ctx: &mut Ctx<'_>, name: &str, codes: Vec<runners::Code>) -> Result<(), Unknown> {
    for code_run in codes {
        match code_run {
            runners::Code::Shell(text) => code(ctx, name, &text, Dialect::Posix)?,
            runners::Code::Unread(why) if ctx.named || ctx.names_a_machine => {
                return Err(Unknown(why));
            }
            runners::Code::Unread(_) => {}
        }
    }
    Ok(())
}

/// The command a wrapper runs, with the wrapper's input and redirections.
fn inner_command(
    ctx: &mut Ctx<'_>,
    cmd: &Cmd,
    words: Vec<Arg>,
    dialect: Dialect,
) -> Result<(), Unknown> {
    let inner = Cmd {
        words,
        wrapped: true,
        ..cmd.clone()
    };
    ctx.walk.enter()?;
    command(ctx, &inner, dialect)?;
    ctx.walk.leave();
    Ok(())
}

/// Code handed to a shell or an interpreter (`bash -c TEXT`, `eval`, `watch`, `cmd /c`): read
/// as commands when the text fixes it, asked about when it is only known at run time.
fn code(ctx: &mut Ctx<'_>, name: &str, text: &Arg, dialect: Dialect) -> Result<(), Unknown> {
    match &text.value {
        Some(value) => text_in(ctx, value, dialect),
        None => Err(Unknown(format!(
            "`{}` runs `{}`, which is only known when the command runs",
            super::clip(name),
            super::clip(&text.raw)
        ))),
    }
}

/// The command with every word that only expands variables the text binds (a literal `for`
/// list, a `NAME=value` assigned once) replaced by its value.
fn with_bound_values(ctx: &Ctx<'_>, cmd: &Cmd) -> Cmd {
    let lookup = |name: &str| -> Option<String> {
        cmd.bindings
            .iter()
            .rev()
            .chain(ctx.vars.iter().rev())
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    // An unquoted expansion is split into words on IFS; when the text sets IFS itself, the
    // split is not followed and the word stays dynamic.
    let ifs_set = ctx.bound("IFS").is_some();
    let mut words = Vec::new();
    for word in &cmd.words {
        let value = match &word.value {
            Some(_) => None,
            None if !word.raw.contains('$') => None,
            None => posix::evaluate(&word.raw, &lookup),
        };
        let Some(value) = value else {
            words.push(word.clone());
            continue;
        };
        let quoted = word.raw.contains(['"', '\'']);
        if quoted {
            words.push(Arg {
                raw: word.raw.clone(),
                value: Some(value),
            });
        } else if ifs_set {
            words.push(word.clone());
        } else {
            words.extend(value.split_whitespace().map(|part| Arg {
                raw: word.raw.clone(),
                value: Some(part.to_owned()),
            }));
        }
    }
    Cmd {
        words,
        ..cmd.clone()
    }
}

/// A program whose name is only known when the command runs (`$CC`, `${x}h`, `/usr/bin/s?h`,
/// `$(printf …)`): asked about when it could be a remote program (its text names or hides
/// one) or when anything after it could name a host (a protected VM, `user@host`,
/// `host:path`, a URL, another word only known at run time). `"$CC" -o app main.c` stays
/// undecided.
fn dynamic_program(ctx: &mut Ctx<'_>, cmd: &Cmd, dialect: Dialect) -> Result<(), Unknown> {
    let first = &cmd.words[0];
    // In PowerShell a leading `$x` is an expression, not a call (`& $x` is one); but a
    // method called on an object from a protected machine (`(Get-WmiObject -ComputerName
    // win01 …).StopService()`) acts there.
    if dialect == Dialect::PowerShell && !cmd.call {
        let lower = first.raw.to_ascii_lowercase();
        if [
            "invokescript(",
            "newscriptblock(",
            "[scriptblock]::create(",
            ".addscript(",
            ".invoke(",
        ]
        .iter()
        .any(|m| lower.contains(m))
        {
            return Err(Unknown(String::from(
                "PowerShell code built at run time is invoked, and what it does is not read",
            )));
        }
        if let Some(host) = method_on_a_machine(ctx, &first.raw) {
            return Err(Unknown(format!(
                "a method is called on an object from {host}, and what it does is not read"
            )));
        }
        return Ok(());
    }
    let hides_a_program = ctx.catalog.names_a_program(&first.raw).is_some()
        || ctx.catalog.may_hide_a_program(&first.raw)
        || ctx.named;
    let host_after = cmd.words[1..]
        .iter()
        .find(|w| {
            w.value.is_none()
                || net::could_name_a_host(w.text(), ctx.known)
                || FLEET_WORDS.contains(&w.text().to_ascii_lowercase().as_str())
        })
        .or_else(|| net::could_name_a_host(&first.raw, ctx.known).then_some(first));
    if hides_a_program || host_after.is_some() {
        return Err(Unknown(format!(
            "the program `{}` is only known when the command runs{}",
            super::clip(&first.raw),
            host_after.map_or_else(String::new, |w| format!(
                ", and `{}` after it may reach another machine",
                super::clip(&w.raw)
            ))
        )));
    }
    Ok(())
}

/// A program whose use here no grammar reads (not in the catalog, or a catalogued program
/// acting on this machine): what it runs among its arguments is read, and a protected
/// machine among them asks.
pub(crate) fn unread_program(ctx: &mut Ctx<'_>, name: &str, cmd: &Cmd) -> Result<(), Unknown> {
    runs_its_arguments(ctx, name, cmd)?;
    protected_net(ctx, name, cmd)
}

/// Words that say a program acts on a fleet of machines (`$TOOL deploy --prod`): after a
/// program only known at run time, they ask as a host name would.
const FLEET_WORDS: &[&str] = &[
    "deploy",
    "reboot",
    "shutdown",
    "poweroff",
    "halt",
    "destroy",
    "provision",
    "rollout",
    "failover",
    "decommission",
    "teardown",
    "--prod",
    "--production",
];

/// `(… -ComputerName win01 …).StopService()`: the protected machine named inside an
/// expression whose object then has a method called on it.
fn method_on_a_machine(ctx: &Ctx<'_>, raw: &str) -> Option<String> {
    let (inner, call) = raw.rsplit_once(").")?;
    if !call.contains('(') || call.to_ascii_lowercase().starts_with("get") {
        return None;
    }
    inner
        .split(net::is_separator)
        .find_map(|word| net::protected(word, ctx.known).map(str::to_owned))
}

/// The protected-VM net for a program no grammar reads: when one of its words names a
/// machine rewind protects, ask (unless the program only prints or looks names up).
fn protected_net(ctx: &Ctx<'_>, name: &str, cmd: &Cmd) -> Result<(), Unknown> {
    let base = lower_base(name);
    let base = base.strip_suffix(".exe").unwrap_or(&base);
    if net::is_inert(base) {
        return Ok(());
    }
    if let Some(host) = &ctx.exported {
        return Err(Unknown(format!(
            "`{}` runs with {host}, a machine rewind protects, in its environment, and what it does there is not read",
            super::clip(name)
        )));
    }
    let words = cmd
        .assignments
        .iter()
        .map(String::as_str)
        .chain(cmd.words.iter().map(Arg::text));
    for word in words {
        if let Some(host) = net::protected(word, ctx.known) {
            return Err(Unknown(format!(
                "`{}` names {host}, a machine rewind protects, and how `{}` reaches it is not read",
                super::clip(name),
                super::clip(base)
            )));
        }
    }
    Ok(())
}

/// Programs that never run their arguments as a command, beyond the remote read-only list:
/// a remote program's name among their arguments is a word, not a command.
const NOT_RUNNERS: &[&str] = &[
    "git",
    "vagrant",
    "man",
    "info",
    "apropos",
    "systemctl",
    "service",
    "journalctl",
    "apt",
    "apt-get",
    "apt-cache",
    "dnf",
    "yum",
    "brew",
    "pacman",
    "zypper",
    "snap",
    "pip",
    "pip3",
    "npm",
    "cargo",
    "pkill",
    "killall",
    "kill",
    "dpkg",
    "rpm",
    "ssh-keygen",
    "ssh-add",
    "ssh-keyscan",
    "mkdir",
    "touch",
    "rm",
    "cp",
    "mv",
    "chmod",
    "chown",
    "ln",
    "sed",
    "awk",
    "sort",
    "tee",
    "write-host",
    "write-output",
    "select-string",
    "get-command",
    "get-help",
    "get-process",
    "stop-process",
    "get-service",
    "restart-service",
    "stop-service",
    "start-service",
];

/// A program the catalog does not know may still run its arguments as a command
/// (`docker run img ssh web01 …`, `proxychains ssh …`, `tmux` forks, `GIT_SSH_COMMAND=…`).
/// When its words hold a remote program that would change a machine — a word that is the
/// program's name followed by what it runs, or one word that is a whole command line — the
/// answer is unknown (ask): rewind does not read how that program runs its arguments.
fn runs_its_arguments(ctx: &mut Ctx<'_>, name: &str, cmd: &Cmd) -> Result<(), Unknown> {
    let base = lower_base(name);
    let base = base.strip_suffix(".exe").unwrap_or(&base);
    // Variables and arguments `runners` reads as code were read already.
    let mut candidates: Vec<String> = cmd
        .assignments
        .iter()
        .filter_map(|a| a.split_once('='))
        .filter(|(name, _)| !runners::reads_variable(name))
        .map(|(_, v)| v.to_owned())
        .collect();
    // `foo --exec='ssh web01 reboot'`, `-o ProxyCommand=…`: a command as a value.
    let words = if runners::reads_arguments(base) {
        &[][..]
    } else {
        &cmd.words[1..]
    };
    for word in words {
        if let Some((_, value)) = word.value.as_deref().and_then(|v| v.split_once('='))
            && value
                .split_whitespace()
                .next()
                .is_some_and(|first| ctx.catalog.program(first).is_some())
        {
            candidates.push(value.to_owned());
        }
    }
    let runner = !ctx.catalog.remote_read_only.contains(base)
        && !NOT_RUNNERS.contains(&base)
        && !base.starts_with('%');
    if runner {
        let words = &cmd.words[1..];
        if let Some(at) = words.iter().position(|w| {
            w.value
                .as_deref()
                .is_some_and(|v| ctx.catalog.program(v).is_some())
        }) {
            candidates.push(join(&words[at..]).text().to_owned());
        }
        // A PowerShell script block was walked already.
        for word in words.iter().filter(|w| !w.raw.starts_with('{')) {
            if let Some(value) = &word.value
                && value.contains(char::is_whitespace)
                && value
                    .split_whitespace()
                    .next()
                    .is_some_and(|first| ctx.catalog.program(first).is_some())
            {
                candidates.push(value.clone());
            }
        }
    }
    for text in candidates {
        if !ctx.catalog.mentions_a_program(&text) {
            continue;
        }
        let saved = std::mem::take(ctx.findings);
        let result = text_in(ctx, &text, Dialect::Posix);
        let found = std::mem::replace(ctx.findings, saved);
        let changes = found
            .iter()
            .any(|f| f.class == Class::Mutating || f.unknown.is_some());
        if result.is_err() || changes {
            return Err(Unknown(format!(
                "`{}` may run `{}`, and how it runs its arguments is not read",
                super::clip(name),
                super::clip(&text)
            )));
        }
    }
    Ok(())
}

pub(crate) fn finding(
    program: &Program,
    targets: Vec<Target>,
    class: Class,
    why: String,
) -> Finding {
    Finding {
        program: program.names[0].clone(),
        targets,
        unknown: None,
        remote: None,
        class,
        why,
    }
}

pub(crate) fn unknown_finding(program: &Program, why: String) -> Finding {
    Finding {
        program: program.names[0].clone(),
        targets: Vec::new(),
        unknown: Some(why.clone()),
        remote: None,
        class: Class::Mutating,
        why,
    }
}

/// A finding that `what` (`the destination`, `-ComputerName`), written `raw`, is only known
/// when the command runs.
fn not_fixed(program: &Program, what: &str, raw: &str) -> Finding {
    unknown_finding(
        program,
        format!("{what} `{raw}` is only known when the command runs"),
    )
}

/// The value of `arg` when the command line fixes it; otherwise the finding that `what` is
/// only known when the command runs is recorded, and there is none.
fn fixed<'a>(ctx: &mut Ctx<'_>, program: &Program, arg: &'a Arg, what: &str) -> Option<&'a str> {
    let value = arg.value.as_deref();
    if value.is_none() {
        ctx.findings.push(not_fixed(program, what, &arg.raw));
    }
    value
}

/// `user@host`, `ssh://user@host:port/…` → host.
pub(crate) fn host_of(destination: &str) -> String {
    let rest = destination
        .strip_prefix("ssh://")
        .or_else(|| destination.strip_prefix("sftp://"))
        .or_else(|| destination.strip_prefix("scp://"))
        .or_else(|| destination.strip_prefix("rsync://"));
    let mut host = rest.unwrap_or(destination);
    if rest.is_some() {
        host = host.split('/').next().unwrap_or(host);
    }
    host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    if let Some(inner) = host.strip_prefix('[') {
        return inner.split(']').next().unwrap_or(inner).to_owned();
    }
    if rest.is_some() {
        host = host.split(':').next().unwrap_or(host);
    }
    // `web02:22`, `10.0.0.5:5985`: a port (an IPv6 address has more than one `:`).
    if let Some((name, port)) = host.split_once(':')
        && !port.contains(':')
        && !port.is_empty()
        && port.chars().all(|c| c.is_ascii_digit())
    {
        host = name;
    }
    host.to_owned()
}
