//! Wrappers looked through: the program a simple command really runs behind `sudo`, `env`,
//! `nohup`, `timeout`, a terminal multiplexer, a shell or an interpreter (`bash -c`, `pwsh -c`,
//! `python3 -c`), or why that cannot be seen. [`unwrap`] is the table of wrappers; `posix`,
//! `terminals`, `interpreters` and `powershell` read their arguments.

mod interpreters;
mod posix;
mod powershell;
mod terminals;

pub(crate) use self::interpreters::may_reach_without_a_program;
pub(crate) use self::posix::cron_table;
use crate::shell::catalog::ShellCatalog;
use crate::shell::code::{self, Handed};
use crate::shell::dialect::Dialect;
use crate::shell::types::{Arg, Stdin};

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
    /// It reaches another machine by means no grammar reads (`systemd-run --host`): always
    /// unknown.
    Ask(String),
    /// It runs code of a language (`python3 -c '…'`, `perl -e`, code on standard input).
    Code(Handed),
}

/// Looks through one wrapper. `args[0]` is the wrapper's name. Each arm says which reading
/// the wrapper gets; the readings are in `posix`, `terminals`, `interpreters` and
/// `powershell`.
pub(crate) fn unwrap(catalog: &ShellCatalog, args: &[Arg], stdin: &Stdin) -> Next {
    let Some(name) = args.first().and_then(|a| a.value.as_deref()) else {
        return Next::No;
    };
    let base = lower_base(name);
    match base.as_str() {
        "sudo" | "doas" => posix::sudo(args),
        "env" => posix::env(args),
        // Wrappers whose options never take a separate value.
        "nohup" | "setsid" | "chronic" | "unbuffer" | "builtin" | "catchsegv" | "caffeinate"
        | "dbus-run-session" | "tsocks" | "nocache" | "eatmydata" | "linux32" | "linux64"
        | "i386" | "x86_64" => posix::after_options(args, &[]),
        // setarch ARCH [options] COMMAND…
        "setarch" => rest_of(args, skip_options(args, 2, &[])),
        "busybox" | "firejail" | "setpriv" | "unshare" | "with-lock-ex" => {
            posix::after_options(args, posix::SETPRIV_VALUES)
        }
        "pkexec" => posix::after_options(args, &["--user", "-u"]),
        "proxychains" | "proxychains4" => posix::after_options(args, &["-f"]),
        "torsocks" => posix::after_options(args, posix::TORSOCKS_VALUES),
        "rlwrap" => posix::after_options(args, posix::RLWRAP_VALUES),
        "fakeroot" => posix::after_options(args, &["-l", "--lib", "--faked", "-s", "-i", "-b"]),
        "ssh-agent" => posix::after_options(args, &["-a", "-E", "-O", "-P", "-t"]),
        "chpst" => posix::after_options(args, posix::CHPST_VALUES),
        "nsenter" => posix::after_options(args, posix::NSENTER_VALUES),
        "cpulimit" => posix::after_options(args, posix::CPULIMIT_VALUES),
        "trickle" => posix::after_options(args, &["-d", "-u", "-w", "-t", "-l", "-n"]),
        "tsp" => posix::after_options(args, &["-L", "-D", "-W", "-N"]),
        "faketime" | "chrt" | "taskset" => posix::before_an_operand(&base, args),
        "systemd-run" => posix::systemd_run(args),
        "ip" => posix::ip(args),
        "dtach" => posix::dtach(args),
        "abduco" => rest_of(args, skip_options(args, 1, &["-e"]) + 1),
        "sg" => posix::sg(args),
        "runuser" => posix::runuser(args),
        "screen" => terminals::screen(args),
        "tmux" | "byobu" => terminals::tmux(args),
        "zellij" => terminals::zellij(args),
        "script" => terminals::script(args),
        "expect" => terminals::expect(args, stdin),
        "at" | "batch" => posix::at(name, args, stdin),
        "crontab" => posix::crontab(args, stdin),
        "vagrant" => posix::vagrant(args),
        "source" | "." => posix::source(name, args, stdin),
        // sshpass [-p PASSWORD | -f FILE | -d FD | -e] [-P PROMPT] [-v] COMMAND…
        "sshpass" => posix::after_options(args, &["-p", "-f", "-d", "-P"]),
        // chroot [--userspec=…] [--groups=…] NEWROOT [COMMAND…]
        "chroot" => rest_of(args, skip_options(args, 1, &[]) + 1),
        "strace" | "ltrace" => posix::after_options(args, posix::STRACE_VALUES),
        "alias" | "set-alias" | "new-alias" | "sal" | "nal" => posix::alias(catalog, name, args),
        "timeout" | "gtimeout" => posix::timeout(args),
        "nice" | "ionice" | "stdbuf" => posix::after_options(args, posix::NICE_VALUES),
        "time" => posix::after_options(args, &["-f", "--format", "-o", "--output"]),
        "exec" => posix::after_options(args, &["-a"]),
        "command" => posix::command(args),
        "parallel" => posix::parallel(catalog, name, args),
        "wsl" | "wsl.exe" => posix::wsl(args),
        "xargs" => posix::xargs(catalog, name, args),
        "eval" => posix::eval(args),
        "invoke-expression" | "iex" => powershell::invoke_expression(name, args, stdin),
        "watch" => posix::watch(args),
        "flock" => posix::flock(args),
        "su" => posix::su(args),
        "bash" | "sh" | "zsh" | "dash" | "ksh" | "ash" | "mksh" | "fish" => {
            posix::shell(args, stdin)
        }
        "pwsh" | "pwsh.exe" | "powershell" | "powershell.exe" => {
            powershell::powershell(args, stdin)
        }
        "cmd" | "cmd.exe" => powershell::cmd(args),
        "find" => posix::find(args),
        // Ruby's `bundle exec COMMAND…` runs the command with the bundle's gems.
        "bundle" if args.get(1).is_some_and(|a| a.text() == "exec") => {
            rest_of(args, skip_options(args, 2, &["--gemfile"]))
        }
        // Interpreters and other programs that run code (`python3.12 -c`, `gdb -ex`).
        _ => code::family(&base).map_or(Next::No, |family| {
            interpreters::interpreter(family, args, stdin)
        }),
    }
}

pub(crate) fn lower_base(name: &str) -> String {
    name.rsplit(['/', '\\'])
        .next()
        .unwrap_or(name)
        .to_ascii_lowercase()
}

fn mentions(catalog: &ShellCatalog, args: &[Arg]) -> bool {
    args.iter()
        .any(|a| catalog.mentions_a_program(&a.raw) || catalog.may_hide_a_program(&a.raw))
}

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
pub(crate) fn skip_options(args: &[Arg], mut i: usize, value_options: &[&str]) -> usize {
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

fn rest_of(args: &[Arg], i: usize) -> Next {
    if i < args.len() {
        Next::Argv(args[i..].to_vec())
    } else {
        Next::Nothing
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
pub(crate) fn attached(arg: &Arg, at: usize) -> Arg {
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

/// Words joined by spaces, as `ssh`, `eval` and `watch` join them; dynamic if any is.
pub(crate) fn join(args: &[Arg]) -> Arg {
    let raw: Vec<&str> = args.iter().map(|a| a.raw.as_str()).collect();
    let values: Option<Vec<&str>> = args.iter().map(|a| a.value.as_deref()).collect();
    Arg {
        raw: raw.join(" "),
        value: values.map(|v| v.join(" ")),
    }
}
