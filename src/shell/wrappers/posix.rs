//! POSIX wrappers and shells: `sudo`, `env`, `nohup`, `timeout`, `nice`, `exec`, `command`,
//! `xargs`, `find -exec`, `eval`, `watch`, `su`, `bash -c` and the like: each says which words
//! or which text it runs.

use super::{
    Next, command_option, join, lower_base, mentions, option_flags, rest_of, short_letter,
    skip_options,
};
use crate::shell::catalog::ShellCatalog;
use crate::shell::dialect::Dialect;
use crate::shell::types::{Arg, Stdin};

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
pub(super) fn shell(args: &[Arg], stdin: &Stdin) -> Next {
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

/// `wrapper [options] COMMAND…`: the command after the options, `values` taking a value.
pub(super) fn after_options(args: &[Arg], values: &[&str]) -> Next {
    rest_of(args, skip_options(args, 1, values))
}

/// sudo and doas: the command after the options; `-e`, `-l`, `-v` run none, and `-i`/`-s`
/// with no command open a shell that reads its input.
pub(super) fn sudo(args: &[Arg]) -> Next {
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
    rest_of(args, i)
}

/// `env [options] [NAME=value…] COMMAND…`, and `env -S TEXT`, which splits TEXT into a command.
pub(super) fn env(args: &[Arg]) -> Next {
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
    rest_of(args, i)
}

/// The value options of `busybox`, `firejail`, `setpriv`, `unshare` and `with-lock-ex`.
pub(super) const SETPRIV_VALUES: &[&str] = &[
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
];

pub(super) const TORSOCKS_VALUES: &[&str] = &[
    "-u",
    "-p",
    "-a",
    "-P",
    "--user",
    "--pass",
    "--address",
    "--port",
];

pub(super) const RLWRAP_VALUES: &[&str] = &[
    "-b", "-C", "-D", "-e", "-f", "-F", "-g", "-H", "-l", "-O", "-P", "-q", "-s", "-S", "-t", "-w",
    "-z",
];

pub(super) const CHPST_VALUES: &[&str] = &[
    "-u", "-U", "-b", "-e", "-/", "-C", "-n", "-l", "-L", "-m", "-d", "-o", "-p", "-f", "-c",
];

pub(super) const NSENTER_VALUES: &[&str] = &["-t", "--target", "-S", "--setuid", "-G", "--setgid"];

pub(super) const CPULIMIT_VALUES: &[&str] =
    &["-l", "--limit", "-e", "--exe", "-p", "--pid", "-c", "--cpu"];

pub(super) const STRACE_VALUES: &[&str] = &[
    "-o", "-e", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-P", "-S", "-X",
];

pub(super) const NICE_VALUES: &[&str] = &[
    "-n",
    "--adjustment",
    "-c",
    "--class",
    "-p",
    "-i",
    "-o",
    "-e",
    "--pid",
];

/// faketime [-f] [-m] [-p PID] TIMESTAMP COMMAND…; chrt [options] PRIORITY COMMAND…;
/// taskset [options] MASK COMMAND… (`-p` acts on a running process instead).
pub(super) fn before_an_operand(base: &str, args: &[Arg]) -> Next {
    let i = skip_options(args, 1, &["-p", "--pid"]);
    if args[1..i]
        .iter()
        .any(|a| matches!(a.text(), "-p" | "--pid") || a.text().starts_with("-p"))
        && base != "faketime"
    {
        return Next::Nothing;
    }
    rest_of(args, i + 1)
}

/// The value options of `systemd-run`.
const SYSTEMD_RUN_VALUES: &[&str] = &[
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

/// `systemd-run [options] COMMAND…`; `--host` runs the command on another machine over ssh.
pub(super) fn systemd_run(args: &[Arg]) -> Next {
    let i = skip_options(args, 1, SYSTEMD_RUN_VALUES);
    if args[1..i].iter().any(|a| {
        let text = a.text();
        text == "--host" || text.starts_with("--host=") || short_letter(text, 'H')
    }) {
        return Next::Ask(String::from(
            "`systemd-run --host` runs the command on another machine",
        ));
    }
    rest_of(args, i)
}

/// ip netns exec NAME COMMAND…, ip vrf exec NAME COMMAND…
pub(super) fn ip(args: &[Arg]) -> Next {
    let words: Vec<&str> = args[1..].iter().map(Arg::text).collect();
    match words.iter().position(|w| *w == "exec") {
        Some(at)
            if at >= 1
                && matches!(words[at - 1], "netns" | "vrf" | "netn" | "net" | "vr")
                && !words[..at - 1].iter().any(|w| !w.starts_with('-')) =>
        {
            rest_of(args, at + 3)
        }
        _ => Next::No,
    }
}

/// dtach -n|-N|-A|-c SOCKET [options] COMMAND… (abduco -c|-n|-A NAME COMMAND… is read in the
/// table).
pub(super) fn dtach(args: &[Arg]) -> Next {
    if !matches!(args.get(1).map(Arg::text), Some("-n" | "-N" | "-A" | "-c")) {
        return Next::Nothing;
    }
    rest_of(args, skip_options(args, 3, &["-e", "-r"]))
}

/// sg [-] GROUP [-c] COMMAND: the command is one string.
pub(super) fn sg(args: &[Arg]) -> Next {
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

/// `runuser -c CMD`, or `runuser -u USER COMMAND…`.
pub(super) fn runuser(args: &[Arg]) -> Next {
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
        rest_of(args, i)
    } else {
        Next::Nothing
    }
}

/// `at` and `batch`: the commands they read, from a here-document or a pipe.
pub(super) fn at(name: &str, args: &[Arg], stdin: &Stdin) -> Next {
    match stdin {
        Stdin::Text(body)
            if !args[1..].iter().any(|a| a.text().starts_with("-f"))
                || args.iter().any(|a| matches!(a.text(), "/dev/stdin" | "-")) =>
        {
            Next::Text(body.clone(), Dialect::Posix)
        }
        Stdin::Pipe => Next::Piped(format!("`{name}` runs commands read from a pipe")),
        _ => Next::Nothing,
    }
}

/// `vagrant ssh [NAME] -c COMMAND` (`winrm` and `powershell` the same with PowerShell):
/// COMMAND runs in the development VM, and what it reaches from there (`ssh db01 …`) is read
/// as if typed here. The VM's own name is left to the protected-VM net, as for the rest of
/// vagrant.
pub(super) fn vagrant(args: &[Arg]) -> Next {
    let dialect = match args.get(1).map(Arg::text) {
        Some("ssh") => Dialect::Posix,
        Some("winrm" | "powershell") => Dialect::PowerShell,
        _ => return Next::Nothing,
    };
    let command = args
        .iter()
        .enumerate()
        .skip(2)
        .find_map(|(at, a)| match a.text() {
            "-c" | "--command" => args.get(at + 1).cloned(),
            text => text
                .strip_prefix("--command=")
                .map(|_| super::attached(a, 10)),
        });
    command.map_or(Next::Nothing, |text| Next::Text(text, dialect))
}

/// `crontab [-u USER] [FILE | -]`: the table it installs runs later, so its commands are
/// judged now. A table on standard input is read (a here-document here, a pipe by the
/// caller); a file the same command writes is read by the caller; a file already on disk is,
/// like a script the agent runs (`bash deploy.sh`), not read; `<(…)` is only known when it
/// runs. Listing, removing and the editor (`-l`, `-r`, `-e`; the editor's variable is read as
/// code) install nothing here: those, and a file on disk, are crontab itself (`Next::No`),
/// which a remote command's read-only list judges.
pub(super) fn crontab(args: &[Arg], stdin: &Stdin) -> Next {
    let at = skip_options(args, 1, &["-u", "-c"]);
    if args[1..at.min(args.len())]
        .iter()
        .any(|a| a.text().starts_with(['-']) && a.text()[1..].contains(['l', 'r', 'e', 'T', 'V']))
    {
        return Next::No;
    }
    match args.get(at) {
        Some(file) if file.raw == "<(…)" || file.value.is_none() => Next::Piped(format!(
            "`crontab` installs `{}`, whose content is only known when the command runs",
            file.raw
        )),
        Some(file) if file.text() != "-" => Next::No,
        _ => match stdin {
            Stdin::Text(body) => Next::Text(cron_table(body, false), Dialect::Posix),
            Stdin::Pipe => Next::Piped(String::from(
                "`crontab` installs a table read from a pipe, which is not seen",
            )),
            Stdin::File(_) | Stdin::Inherited => Next::No,
        },
    }
}

/// The commands a crontab runs, one a line: each entry's command after its five time fields
/// or its `@reboot`-style word (and the user field of a system table, `system`), up to cron's
/// first unescaped `%`, which starts the command's input. Comments, blank lines and
/// variable settings run nothing.
pub(crate) fn cron_table(table: &Arg, system: bool) -> Arg {
    let read = |text: &str| {
        let mut commands = Vec::new();
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let first = line.split_whitespace().next().unwrap_or_default();
            if !first.starts_with('@') && first.contains('=') {
                continue;
            }
            let fields = usize::from(system) + if first.starts_with('@') { 1 } else { 5 };
            let mut rest = line;
            for _ in 0..fields {
                rest = rest.trim_start();
                rest = rest.find(char::is_whitespace).map_or("", |at| &rest[at..]);
            }
            let mut command = String::new();
            let mut escaped = false;
            for c in rest.trim().chars() {
                if c == '%' && !escaped {
                    break;
                }
                escaped = c == '\\' && !escaped;
                command.push(c);
            }
            commands.push(command.replace("\\%", "%"));
        }
        commands.join("\n")
    };
    Arg {
        raw: read(&table.raw),
        value: table.value.as_deref().map(read),
    }
}

/// `source FILE`, `. FILE`: a file only known at run time, or the standard input.
pub(super) fn source(name: &str, args: &[Arg], stdin: &Stdin) -> Next {
    match args.get(1) {
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
    }
}

/// An alias that runs a remote program is used later under another name.
pub(super) fn alias(catalog: &ShellCatalog, name: &str, args: &[Arg]) -> Next {
    if mentions(catalog, &args[1..]) {
        Next::Opaque(format!(
            "`{name}` gives a remote program another name, which the analysis does not follow"
        ))
    } else {
        Next::Nothing
    }
}

/// timeout [options] DURATION COMMAND…
pub(super) fn timeout(args: &[Arg]) -> Next {
    let i = skip_options(args, 1, &["-s", "--signal", "-k", "--kill-after"]);
    rest_of(args, i + 1)
}

/// `command COMMAND…`; `command -v`/`-V` only looks the name up.
pub(super) fn command(args: &[Arg]) -> Next {
    let i = skip_options(args, 1, &[]);
    if args[1..i].iter().any(|a| matches!(a.text(), "-v" | "-V")) {
        return Next::Nothing;
    }
    rest_of(args, i)
}

/// GNU parallel: `--sshlogin` runs the jobs on other machines; otherwise read as `xargs` is.
pub(super) fn parallel(catalog: &ShellCatalog, name: &str, args: &[Arg]) -> Next {
    if args[1..].iter().any(|a| {
        let text = a.text();
        matches!(text, "--sshlogin" | "--sshloginfile" | "--slf")
            || text.starts_with("--sshlogin=")
            || text.starts_with("--slf=")
            || short_letter(text, 'S')
    }) {
        return Next::Ask(String::from(
            "`parallel --sshlogin` runs the jobs on other machines, which are not read",
        ));
    }
    xargs(catalog, name, args)
}

/// wsl [-d DISTRO] [-u USER] [--cd DIR] [-e | --] COMMAND…: a command in a Linux distro.
pub(super) fn wsl(args: &[Arg]) -> Next {
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
    rest_of(args, i)
}

/// `xargs` (and `parallel` without `--sshlogin`): a command that runs with arguments read
/// from the input.
pub(super) fn xargs(catalog: &ShellCatalog, name: &str, args: &[Arg]) -> Next {
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
        after_options(
            args,
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
        )
    } else {
        Next::Nothing
    }
}

/// `eval WORDS…`: the words joined run as a command.
pub(super) fn eval(args: &[Arg]) -> Next {
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

/// `watch [options] COMMAND…`: the words joined run as a command.
pub(super) fn watch(args: &[Arg]) -> Next {
    let i = skip_options(args, 1, &["-n", "--interval", "-q", "--equexit"]);
    if i < args.len() {
        Next::Text(join(&args[i..]), Dialect::Posix)
    } else {
        Next::Nothing
    }
}

/// flock FILE -c STRING, or flock FILE COMMAND…
pub(super) fn flock(args: &[Arg]) -> Next {
    let i = skip_options(args, 1, &["-w", "--timeout", "-E", "--conflict-exit-code"]);
    match args.get(i + 1).map(Arg::text) {
        Some("-c" | "--command") => args
            .get(i + 2)
            .map_or(Next::Nothing, |a| Next::Text(a.clone(), Dialect::Posix)),
        _ => rest_of(args, i + 1),
    }
}

/// `su -c CMD`; `su` with no command opens a shell that reads its input (`su <<< '…'`).
pub(super) fn su(args: &[Arg]) -> Next {
    command_option(args).map_or_else(
        || Next::Argv(vec![Arg::literal(String::from("sh"))]),
        |text| Next::Text(text, Dialect::Posix),
    )
}

/// find … -exec COMMAND {} ; — `{}` stands for names found at run time. Every -exec,
/// -execdir, -ok and -okdir runs its own command.
pub(super) fn find(args: &[Arg]) -> Next {
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
