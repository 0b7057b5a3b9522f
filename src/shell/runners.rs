//! Programs that run their arguments as code, and variables that make a program run code:
//! `awk 'BEGIN{system("…")}'`, `sed '1e …'`, `vim -c '!…'`, `git -c alias.x='!…'`, `tar
//! --checkpoint-action=exec=…`, `make -f - <<<…`, `LESSOPEN='|…' less f`,
//! `GIT_SSH_COMMAND=… git fetch`. The code is read as a shell command when the text fixes it
//! and asked about when it does not.

use super::types::{Arg, Cmd, Stdin, clip};

/// Variables whose value a program runs as a command (a leading `|` or `||` is LESSOPEN's
/// pipe marker).
const COMMAND_VARIABLES: &[&str] = &[
    "LESSOPEN",
    "LESSCLOSE",
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "PAGER",
    "MANPAGER",
    "EDITOR",
    "VISUAL",
    "RSYNC_RSH",
    "CVS_RSH",
    "PROMPT_COMMAND",
    "BASH_ENV",
    "ENV",
];

/// Variables that load code into the program from a file or a module (`LD_PRELOAD=./x.so`,
/// `NODE_OPTIONS=--require ./x.js`): what that code does is not read.
const LOADING_VARIABLES: &[&str] = &[
    "LD_PRELOAD",
    "LD_AUDIT",
    "PERL5OPT",
    "PYTHONSTARTUP",
    "NODE_OPTIONS",
    "RUBYOPT",
];

/// git configuration keys whose value git runs as a command.
const GIT_COMMAND_KEYS: &[&str] = &[
    "core.sshcommand",
    "core.fsmonitor",
    "core.pager",
    "core.editor",
    "core.askpass",
    "core.hookspath",
    "diff.external",
    "sequence.editor",
    "gpg.program",
    "credential.helper",
    "uploadpack.packobjectshook",
    "pager.",
    "alias.",
    "filter.",
    "diff.",
    "merge.",
];

/// Whether `name` is a variable whose code [`code_of`] reads.
pub(crate) fn reads_variable(name: &str) -> bool {
    COMMAND_VARIABLES.contains(&name)
        || LOADING_VARIABLES.contains(&name)
        || name.starts_with("BASH_FUNC_")
}

/// Variables that make a program or the shell run code, or load it, beyond those
/// [`code_of`] reads: the library path, the prompts `set -x` and an interactive shell show,
/// the shell options an environment turns on, and the pager settings that take commands.
const OTHER_CODE_VARIABLES: &[&str] = &[
    "LD_LIBRARY_PATH",
    "PS0",
    "PS1",
    "PS2",
    "PS4",
    "SHELLOPTS",
    "BASHOPTS",
    "LESS",
    "LESSEDIT",
    "LESSKEYIN",
    "SYSTEMD_PAGER",
    "SYSTEMD_PAGERSECURE",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "KUBECONFIG",
];

/// Whether setting `name` can make the command it is set for run a program or load code
/// (`LESSOPEN='|reboot %s' less f`, `LD_PRELOAD=x.so cat f`, `PS4='$(reboot)'`): a command
/// judged read-only by its name no longer is when its environment sets one.
pub(crate) fn runs_code(name: &str) -> bool {
    reads_variable(name) || OTHER_CODE_VARIABLES.contains(&name) || name.starts_with("GIT_CONFIG_")
}

/// Whether [`code_of`] reads the code in `base`'s arguments.
pub(crate) fn reads_arguments(base: &str) -> bool {
    matches!(
        base,
        "awk"
            | "gawk"
            | "mawk"
            | "nawk"
            | "sed"
            | "gsed"
            | "vim"
            | "vi"
            | "nvim"
            | "ex"
            | "view"
            | "gvim"
            | "vimdiff"
            | "git"
            | "tar"
            | "gtar"
            | "bsdtar"
            | "make"
            | "gmake"
            | "man"
            | "rpm"
    )
}

/// Code a program or its variables will run.
pub(crate) enum Code {
    /// This text runs as a shell command (its value may still be dynamic).
    Shell(Arg),
    /// Code runs from a file or a module that is not read here (`awk -f`, `LD_PRELOAD`),
    /// as a local script would: why. It asks when the command could reach another machine.
    Unread(String),
}

/// The code `cmd` (program `base`, lower case) runs besides itself: what its variables and
/// its arguments run. A command a wrapper runs (`sudo git …`) had its variables read with
/// the wrapper, and only its arguments are read.
pub(crate) fn code_of(base: &str, cmd: &Cmd) -> Vec<Code> {
    let mut code = if cmd.wrapped {
        Vec::new()
    } else {
        variable_code(base, &cmd.assignments)
    };
    argument_code(base, cmd, &mut code);
    code
}

/// What `NAME=value` assignments make `program` run.
pub(crate) fn variable_code(base: &str, assignments: &[String]) -> Vec<Code> {
    let mut code = Vec::new();
    for assignment in assignments {
        let Some((name, value)) = assignment.split_once('=') else {
            continue;
        };
        let dynamic = value.contains(['$', '`']);
        let arg = if dynamic {
            Arg::dynamic(value.to_owned())
        } else {
            Arg::literal(value.to_owned())
        };
        if COMMAND_VARIABLES.contains(&name) && !value.is_empty() {
            code.push(Code::Shell(strip_pipe(&arg)));
            if matches!(name, "GIT_SSH_COMMAND" | "GIT_SSH") {
                code.extend(moved_connection("git", value));
            }
        } else if name.starts_with("BASH_FUNC_") {
            // An exported function: `() { body; }`.
            let body = value
                .trim_start_matches("()")
                .trim()
                .trim_start_matches('{')
                .trim_end_matches('}');
            code.push(Code::Shell(if dynamic {
                Arg::dynamic(body.to_owned())
            } else {
                Arg::literal(body.to_owned())
            }));
        } else if matches!(name, "PS0" | "PS1" | "PS2" | "PS4") && value.contains(['$', '`']) {
            // A prompt's command substitutions run each time it is shown (`set -x` shows PS4).
            code.push(Code::Shell(Arg::literal(format!(": \"{value}\""))));
        } else if LOADING_VARIABLES.contains(&name) && !value.is_empty() {
            code.push(Code::Unread(format!(
                "`{name}` loads code into `{base}` that is not read here"
            )));
        }
    }
    code
}

/// The ssh command a program runs with a destination of its own added (git's
/// `GIT_SSH_COMMAND`, `core.sshCommand`): options that move the connection (`-o HostName=`,
/// `ProxyCommand`, `-F`) send it to a machine the command does not name, which is asked about.
fn moved_connection(base: &str, command: &str) -> Option<Code> {
    let words = shlex::split(command).unwrap_or_default();
    let moves = words.iter().enumerate().skip(1).any(|(at, word)| {
        let option = if word == "-o" {
            words.get(at + 1).map_or("", String::as_str)
        } else if let Some(option) = word.strip_prefix("-o") {
            option
        } else {
            return word.starts_with("-F");
        };
        let key = option
            .split(|c: char| c == '=' || c.is_whitespace())
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        matches!(key.as_str(), "hostname" | "proxycommand" | "include")
    });
    moves.then(|| {
        Code::Unread(format!(
            "`{base}` connects through `{}`, whose options send it to a machine the command does not name",
            clip(command)
        ))
    })
}

/// What the arguments of `cmd` (program `base`) make it run.
fn argument_code(base: &str, cmd: &Cmd, code: &mut Vec<Code>) {
    let args = cmd.words.get(1..).unwrap_or_default();
    match base {
        "awk" | "gawk" | "mawk" | "nawk" => awk(args, code),
        "sed" | "gsed" => sed(args, code),
        "vim" | "vi" | "nvim" | "ex" | "view" | "gvim" | "vimdiff" => vim(args, code),
        "git" => git(args, code),
        "tar" | "gtar" | "bsdtar" => tar(args, code),
        "make" | "gmake" => make(args, &cmd.stdin, code),
        "man" => option_command(args, &["-P", "--pager"], code),
        "rpm" => option_command(args, &["--pipe"], code),
        _ => {}
    }
}

/// Whether git runs the value of this configuration key.
fn is_command_key(key: &str) -> bool {
    GIT_COMMAND_KEYS
        .iter()
        .any(|k| key == *k || (k.ends_with('.') && key.starts_with(k)))
}

fn strip_bang(arg: &Arg) -> Arg {
    Arg {
        raw: arg.raw.trim_start_matches(['\'', '!']).to_owned(),
        value: arg
            .value
            .as_deref()
            .map(|v| v.trim_start_matches('!').to_owned()),
    }
}

/// `$X`, `"$X"`, `${X}`: a word that is one variable and nothing else.
fn whole_variable(raw: &str) -> bool {
    let inner = raw.trim_matches('"');
    inner.starts_with('$') && !inner[1..].contains(['$', ' ', '/', '\''])
}

fn strip_pipe(arg: &Arg) -> Arg {
    let strip = |t: &str| {
        t.trim_start_matches('|')
            .trim_end_matches("%s")
            .trim()
            .to_owned()
    };
    Arg {
        raw: strip(&arg.raw),
        value: arg.value.as_deref().map(strip),
    }
}

/// The quoted strings of awk program text that `system(…)`, `print | "…"` or
/// `"…" | getline` run; a program that runs commands from text not written asks.
fn awk(args: &[Arg], code: &mut Vec<Code>) {
    let mut program = None;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        if matches!(text, "-f" | "--file" | "-i" | "--include" | "-E" | "--exec") {
            code.push(Code::Unread(format!(
                "`awk {text}` runs a program file that is not read here"
            )));
            return;
        }
        if matches!(text, "-v" | "-F" | "--assign" | "--field-separator") {
            i += 2;
            continue;
        }
        if matches!(text, "-e" | "--source") {
            program = args.get(i + 1);
            break;
        }
        if !text.starts_with('-') {
            program = Some(arg);
            break;
        }
        i += 1;
    }
    let Some(program) = program else { return };
    let Some(text) = &program.value else {
        // `awk "{print \$$N}"` only prints; one that can run a command built at run time asks.
        if program.raw.contains("system")
            || program.raw.contains('|')
            || whole_variable(&program.raw)
        {
            code.push(Code::Shell(program.clone()));
        }
        return;
    };
    if !(text.contains("system") || text.contains('|')) {
        return;
    }
    let strings = quoted_strings(text);
    if strings.is_empty() || text.contains("system(") && !text.contains("system(\"") {
        code.push(Code::Unread(String::from(
            "the awk program runs a command built at run time",
        )));
        return;
    }
    code.extend(strings.into_iter().map(|s| Code::Shell(Arg::literal(s))));
}

/// The `"…"` strings of a program text.
fn quoted_strings(text: &str) -> Vec<String> {
    let mut strings = Vec::new();
    let mut current: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (&mut current, c) {
            (None, '"') => current = Some(String::new()),
            (Some(s), '\\') => {
                if let Some(next) = chars.next() {
                    s.push(next);
                }
            }
            (Some(_), '"') => strings.extend(current.take()),
            (Some(s), c) => s.push(c),
            (None, _) => {}
        }
    }
    strings
}

/// sed's `e COMMAND` runs COMMAND; `s///e` runs the pattern space, which is not read.
fn sed(args: &[Arg], code: &mut Vec<Code>) {
    let mut scripts: Vec<&Arg> = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match arg.text() {
            "-e" | "--expression" => {
                scripts.extend(args.get(i + 1));
                i += 2;
                continue;
            }
            "-f" | "--file" => {
                code.push(Code::Unread(String::from(
                    "`sed -f` runs a script file that is not read here",
                )));
                return;
            }
            text if !text.starts_with('-') && scripts.is_empty() => {
                scripts.push(arg);
                break;
            }
            _ => {}
        }
        i += 1;
    }
    for script in scripts {
        let Some(text) = &script.value else {
            // `sed "s/$A/$B/"` substitutes; a script that is all a variable may run anything.
            if whole_variable(&script.raw) {
                code.push(Code::Shell(script.clone()));
            }
            return;
        };
        if super::remote::sed_script_reads(text) {
            continue;
        }
        // `1e ssh web01 reboot`: the rest of the line after `e` is the command.
        let mut found = false;
        for line in text.split(['\n', ';']) {
            let body = line.trim_start_matches(|c: char| c.is_ascii_digit() || "$,/ ".contains(c));
            if let Some(command) = body.strip_prefix('e').filter(|c| c.starts_with(' ')) {
                code.push(Code::Shell(Arg::literal(command.trim().to_owned())));
                found = true;
            }
        }
        if !found {
            code.push(Code::Unread(format!(
                "the sed script `{}` can run commands or write files",
                clip(text)
            )));
        }
    }
}

/// `vim -c '!cmd'`, `vim +'!cmd'`, `--cmd`, `:!cmd`, `system(…)`.
fn vim(args: &[Arg], code: &mut Vec<Code>) {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        let command = match text {
            "-c" | "--cmd" => {
                i += 1;
                args.get(i)
            }
            _ if text.starts_with('+') && text.len() > 1 => Some(arg),
            "-S" => {
                code.push(Code::Unread(String::from(
                    "`vim -S` runs a script file that is not read here",
                )));
                return;
            }
            _ => None,
        };
        if let Some(command) = command {
            let Some(value) = &command.value else {
                code.push(Code::Shell(command.clone()));
                return;
            };
            let value = value.trim_start_matches(['+', ':']);
            if let Some(shell) = value.split_once('!').map(|(_, s)| s) {
                code.push(Code::Shell(Arg::literal(shell.to_owned())));
            } else if value.contains("system(") || value.contains("term") {
                code.push(Code::Unread(String::from(
                    "a vim command runs a program that is not read here",
                )));
            }
        }
        i += 1;
    }
}

/// The value of an option that is a command (`man -P CMD`, `rpm --pipe CMD`), as the next
/// word or attached with `=`.
fn option_command(args: &[Arg], options: &[&str], code: &mut Vec<Code>) {
    for (i, arg) in args.iter().enumerate() {
        let text = arg.text();
        if options.contains(&text) {
            code.extend(args.get(i + 1).cloned().map(Code::Shell));
        } else if let Some(value) = options
            .iter()
            .find_map(|o| text.strip_prefix(o).and_then(|v| v.strip_prefix('=')))
        {
            code.push(Code::Shell(match &arg.value {
                Some(_) => Arg::literal(value.to_owned()),
                None => Arg::dynamic(value.to_owned()),
            }));
        }
    }
}

/// `git -c key=value`: the keys whose value git runs.
/// The shell command git's ext transport runs for `ext::COMMAND`: words split at spaces,
/// `% ` a space inside a word and `%%` a `%` (other `%` tokens are git's own values).
fn ext_command(command: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match (c, c == '%') {
            (_, true) => match chars.next() {
                Some(' ') => word.push(' '),
                Some('%') => word.push('%'),
                Some(other) => {
                    word.push('%');
                    word.push(other);
                }
                None => {}
            },
            (' ', _) => words.push(std::mem::take(&mut word)),
            _ => word.push(c),
        }
    }
    words.push(word);
    words
        .iter()
        .filter(|w| !w.is_empty())
        .map(|w| shlex::try_quote(w).map_or_else(|_| w.clone(), std::borrow::Cow::into_owned))
        .collect::<Vec<_>>()
        .join(" ")
}

fn git(args: &[Arg], code: &mut Vec<Code>) {
    // `git clone 'ext::sh -c ssh% web01% reboot'`: the ext transport runs its command, `% `
    // standing for a space and `%%` for `%`.
    for arg in args {
        if let Some(command) = arg.text().strip_prefix("ext::") {
            code.push(Code::Shell(match &arg.value {
                Some(_) => Arg::literal(ext_command(command)),
                None => Arg::dynamic(command.to_owned()),
            }));
        }
    }
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        let setting = match text {
            "-c" => {
                i += 1;
                args.get(i)
            }
            "--config-env" => {
                code.push(Code::Unread(String::from(
                    "`git --config-env` takes a setting from the environment, which is not read",
                )));
                return;
            }
            // `git config alias.x '!…'`: the setting runs later, as written here.
            "config" => {
                let words: Vec<&Arg> = args[i + 1..]
                    .iter()
                    .filter(|a| !a.text().starts_with('-'))
                    .collect();
                if let [key, value, ..] = words.as_slice()
                    && let Some(key) = key.value.as_deref()
                    && is_command_key(&key.to_ascii_lowercase())
                {
                    code.push(Code::Shell(strip_bang(value)));
                    if key.eq_ignore_ascii_case("core.sshcommand") {
                        code.extend(moved_connection("git", value.text()));
                    }
                }
                break;
            }
            _ if !text.starts_with('-') => break,
            _ => None,
        };
        if let Some(setting) = setting {
            let Some(value) = &setting.value else {
                code.push(Code::Shell(setting.clone()));
                return;
            };
            if let Some((key, command)) = value.split_once('=') {
                let key = key.to_ascii_lowercase();
                if is_command_key(&key) {
                    let command = command.strip_prefix('!').unwrap_or(command);
                    code.push(Code::Shell(Arg::literal(command.to_owned())));
                    if key == "core.sshcommand" {
                        code.extend(moved_connection("git", command));
                    }
                }
            }
        }
        i += 1;
    }
}

/// tar's options that run a command, and a `host:file` archive, which tar opens over rsh.
fn tar(args: &[Arg], code: &mut Vec<Code>) {
    const RUNS: &[&str] = &[
        "--checkpoint-action=exec=",
        "--to-command=",
        "--use-compress-program=",
        "--info-script=",
        "--new-volume-script=",
        "--rsh-command=",
    ];
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        if let Some(command) = RUNS.iter().find_map(|p| text.strip_prefix(p)) {
            code.push(Code::Shell(match &arg.value {
                Some(_) => Arg::literal(command.to_owned()),
                None => Arg::dynamic(command.to_owned()),
            }));
        } else if matches!(
            text,
            "-I" | "-F" | "--to-command" | "--use-compress-program"
        ) {
            if let Some(command) = args.get(i + 1) {
                code.push(Code::Shell(command.clone()));
            }
            i += 1;
        }
        i += 1;
    }
}

/// The recipe lines of makefile text, each a shell command.
fn recipes(makefile: &str) -> Vec<Code> {
    makefile
        .lines()
        .filter_map(|line| line.strip_prefix('\t'))
        .map(|recipe| {
            Code::Shell(Arg::literal(
                recipe.trim_start_matches(['@', '-', '+']).to_owned(),
            ))
        })
        .collect()
}

/// `make -f - <<< '…'`: the recipes of a makefile given on standard input.
fn make(args: &[Arg], stdin: &Stdin, code: &mut Vec<Code>) {
    // `make --eval=TEXT`: makefile text on the command line.
    for arg in args {
        if let Some(text) = arg.text().strip_prefix("--eval=") {
            match &arg.value {
                Some(_) => code.extend(recipes(text)),
                None => code.push(Code::Shell(Arg::dynamic(text.to_owned()))),
            }
        }
    }
    // `make -f <(…)`, `make -f "$MK"`: a makefile only known when the command runs.
    let unread_file = args
        .windows(2)
        .any(|w| matches!(w[0].text(), "-f" | "--file" | "--makefile") && w[1].value.is_none())
        || args.iter().any(|a| {
            a.value.is_none()
                && ["-f", "--file=", "--makefile="]
                    .iter()
                    .any(|p| a.raw.starts_with(p) && a.raw.len() > p.len())
        });
    if unread_file {
        code.push(Code::Unread(String::from(
            "the makefile is only known when the command runs",
        )));
    }
    let from_stdin = args
        .windows(2)
        .any(|w| matches!(w[0].text(), "-f" | "--file" | "--makefile") && w[1].text() == "-");
    if !from_stdin {
        return;
    }
    match stdin {
        Stdin::Text(text) => match &text.value {
            Some(makefile) => code.extend(recipes(makefile)),
            None => code.push(Code::Unread(String::from(
                "the makefile on standard input is only known when the command runs",
            ))),
        },
        _ => code.push(Code::Unread(String::from(
            "`make -f -` runs recipes read from its input, which are not seen",
        ))),
    }
}
