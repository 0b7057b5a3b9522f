//! Terminals and session tools that run a program or type text into a shell: `screen`, `tmux`
//! (and `byobu`), `zellij`, `script` and `expect`.

use super::{Next, command_option, join, rest_of, skip_options, takes_next_word};
use crate::shell::dialect::Dialect;
use crate::shell::types::{Arg, Stdin};

/// `screen [options] COMMAND…`, and `screen -X stuff TEXT`, which types TEXT into a session.
pub(super) fn screen(args: &[Arg]) -> Next {
    let values = ["-S", "-c", "-e", "-h", "-p", "-t", "-T", "-Logfile", "-s"];
    let mut i = 1;
    while let Some(arg) = args.get(i) {
        let text = arg.text();
        if text == "-X" {
            // -X COMMAND…: a screen command sent to a running session.
            return match args.get(i + 1).map(Arg::text) {
                Some("stuff") => Next::Text(typed(&args[i + 2..]), Dialect::Posix),
                Some("screen") => rest_of(args, i + 2),
                // `exec [fdpat] COMMAND…`: runs COMMAND in the window, its streams joined as
                // the pattern (`.!.`, `!..|`) says.
                Some("exec") => {
                    let fdpat = args.get(i + 2).is_some_and(|a| {
                        !a.text().is_empty()
                            && a.text().chars().all(|c| matches!(c, '.' | '!' | ':' | '|'))
                    });
                    rest_of(args, i + 2 + usize::from(fdpat))
                }
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
/// `pipe-pane`), `send-keys`, whose keys are typed into a pane's shell, and what runs later:
/// a hook's or a key's command (`set-hook`, `bind-key`) and `default-command`. Commands are
/// split on `;` words; `tmux -c CMD` runs CMD as a shell would.
pub(super) fn tmux(args: &[Arg]) -> Next {
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
            // `set-hook [-agpRuw] [-t target] hook COMMAND`, `bind-key [-nr] [-N note] [-T
            // table] key COMMAND…`: a tmux command run later, when the hook fires or the key
            // is pressed, read as tmux would.
            "set-hook" | "bind-key" | "bind" => {
                let at = skip_options(rest, 0, &["-t", "-T", "-N"]);
                let Some(command) = rest.get(at + 1..).filter(|c| !c.is_empty()) else {
                    continue;
                };
                // One word is a tmux command line; several are its words, as quoted here.
                let line = if let [one] = command {
                    one.clone()
                } else {
                    let raw = command.iter().map(|a| a.raw.as_str()).collect::<Vec<_>>();
                    let raw = raw.join(" ");
                    Arg {
                        value: command
                            .iter()
                            .all(|a| a.value.is_some())
                            .then(|| raw.clone()),
                        raw,
                    }
                };
                texts.push(Arg {
                    raw: format!("tmux {}", line.raw),
                    value: line.value.map(|v| format!("tmux {v}")),
                });
                continue;
            }
            // `set-option -g default-command 'ssh db01'`: the command each new window runs.
            "set-option" | "set" | "set-window-option" | "setw" => {
                let at = skip_options(rest, 0, &["-t"]);
                if let [option, value, ..] = &rest[at.min(rest.len())..]
                    && matches!(option.text(), "default-command" | "default-shell")
                {
                    texts.push(value.clone());
                }
                continue;
            }
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
pub(super) fn zellij(args: &[Arg]) -> Next {
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
pub(super) fn script(args: &[Arg]) -> Next {
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
pub(super) fn expect(args: &[Arg], stdin: &Stdin) -> Next {
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
