//! What one simple command writes, removes or unpacks on this machine: the one table of the
//! programs that change files. The shell analysis reads it for the files a command changes
//! before a later part of it (`world`: an ssh configuration, `/etc/hosts`); the self-guard
//! reads it for rewind's own files and the hosts' hook settings. Paths are as written (a
//! word's value, or its text when it expands): each reader resolves them itself.
//!
//! Every form a program has counts: a redirection; `tee`, `truncate`, `touch`, `chmod` and
//! their kin; `cp`/`mv`/`install`/`ln`/`rsync` with the destination last, after `-t`,
//! `--target-directory[=]` or `-Destination`; `dd of=`; `sed -i` and `perl -i` with the flag
//! glued behind others (`-Ei.orig`, `-pi`); `awk -i inplace`; archives unpacked into a
//! directory (`tar -C DIR -x`, `--directory`, `unzip -d DIR`, `7z x -oDIR`, `cpio -i`);
//! `find … -delete` and `find … -exec rm {} ;` under the places `find` starts from; git's
//! commands that rewrite a work tree (`checkout`, `restore`, `clean`, `stash`, `reset --hard`,
//! …) in the repository `-C` names; and PowerShell's file cmdlets.

use super::types::{Arg, Cmd};
use super::wrappers::lower_base;

/// What a command does to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    /// The file is written or edited.
    Write,
    /// The path, and whatever is under it, is removed, moved away or has its mode changed.
    Remove,
    /// Files the command does not name are written somewhere under this directory (an
    /// archive unpacked, a work tree checked out).
    Into,
}

/// One path a command changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    pub(crate) path: String,
    pub(crate) effect: Effect,
    /// `find`'s name tests (`-name`, `-iname`, `-path`): only what one of them matches is
    /// changed. Empty: anything under the path may be.
    pub(crate) names: Vec<String>,
}

impl Change {
    fn new(path: &str, effect: Effect) -> Change {
        Change {
            path: path.to_owned(),
            effect,
            names: Vec::new(),
        }
    }
}

/// Programs that remove or move away each of their operands.
const REMOVERS: &[&str] = &[
    "rm",
    "rmdir",
    "unlink",
    "shred",
    "srm",
    "wipe",
    "del",
    "erase",
    "rd",
    "ri",
    "remove-item",
    "trash",
    "trash-put",
    "gio",
];

/// Programs that write, empty or change the mode or owner of each of their operands.
const EDITORS: &[&str] = &[
    "tee",
    "truncate",
    "touch",
    "sponge",
    "set-content",
    "sc",
    "add-content",
    "ac",
    "out-file",
    "clear-content",
    "clc",
    "new-item",
    "ni",
    "set-acl",
    "tee-object",
    "export-csv",
    "export-clixml",
];

/// Editors that write the files they are given, scripted (`vim -c '%d|wq' F`, `ex -sc … F`,
/// `ed -s F <<< …`, `emacs --batch F -f save-buffer`) or not. `view` and `vim -R` only read.
const TEXT_EDITORS: &[&str] = &[
    "vi", "vim", "nvim", "ex", "ed", "nano", "pico", "emacs", "micro", "joe", "mcedit",
];

/// Programs that change a file's mode, owner or attributes: a file no one may read or run
/// is as gone as a removed one.
const MODE_CHANGERS: &[&str] = &["chmod", "chown", "chgrp", "chattr", "setfacl", "icacls"];

/// Programs that copy or move their sources to a destination.
const COPIERS: &[&str] = &[
    "cp",
    "mv",
    "install",
    "ln",
    "rsync",
    "scp",
    "copy",
    "move",
    "xcopy",
    "robocopy",
    "copy-item",
    "cpi",
    "move-item",
    "mi",
    "rename-item",
    "rni",
    "ren",
];

/// Whether `base` (a program's lower-case name) copies or moves its sources to a destination.
pub(crate) fn is_copier(base: &str) -> bool {
    COPIERS.contains(&base)
}

/// Every path `cmd` changes, as written: its output redirection and what its program writes,
/// removes or unpacks. A copy's destination directory also gets each source's name
/// (`cp hosts /etc/` writes `/etc/hosts`).
pub(crate) fn changes(cmd: &Cmd) -> Vec<Change> {
    let mut found: Vec<Change> = cmd
        .writes
        .iter()
        .map(|p| Change::new(p, Effect::Write))
        .collect();
    let Some(name) = cmd.words.first().and_then(|w| w.value.as_deref()) else {
        return found;
    };
    let base = lower_base(name);
    let base = base.strip_suffix(".exe").unwrap_or(&base);
    let args: Vec<&str> = cmd.words[1..].iter().map(Arg::text).collect();
    let operands = || args.iter().filter(|a| !a.starts_with('-')).copied();
    let each = |effect| operands().map(move |p| Change::new(p, effect));
    match base {
        _ if REMOVERS.contains(&base) => found.extend(each(Effect::Remove)),
        _ if MODE_CHANGERS.contains(&base) => found.extend(each(Effect::Remove)),
        _ if EDITORS.contains(&base) => {
            found.extend(each(Effect::Write));
            found.extend(powershell_paths(&args).map(|p| Change::new(p, Effect::Write)));
        }
        _ if COPIERS.contains(&base) => copy(base, &args, &mut found),
        _ if TEXT_EDITORS.contains(&base) && !args.iter().any(|a| matches!(*a, "-R" | "-M")) => {
            found.extend(each(Effect::Write));
        }
        "dd" => found.extend(
            args.iter()
                .filter_map(|a| a.strip_prefix("of="))
                .map(|p| Change::new(p, Effect::Write)),
        ),
        "sed" | "gsed" if args.iter().any(|a| in_place(a, "EnrsuzbsE", "efl")) => {
            found.extend(script_operands(
                &args,
                &["-e", "-f", "--expression", "--file"],
            ));
        }
        "perl"
            if args
                .iter()
                .any(|a| in_place(a, "pnlwsaTtWX0", "eEIMmxdDCF")) =>
        {
            found.extend(script_operands(&args, &["-e", "-E", "-I", "-M", "-m"]));
        }
        "ruby" if args.iter().any(|a| in_place(a, "pnlwsaW", "eErIC")) => {
            found.extend(script_operands(&args, &["-e", "-r", "-I", "-C"]));
        }
        "awk" | "gawk" if awk_in_place(&args) => {
            found.extend(script_operands(
                &args,
                &["-f", "-v", "-i", "--include", "-e"],
            ));
        }
        "tar" | "bsdtar" | "gtar" => tar(&args, &mut found),
        "unzip"
            if !args
                .iter()
                .any(|a| matches!(*a, "-l" | "-t" | "-p" | "-v" | "-Z")) =>
        {
            let dir = value_of(&args, "-d", None).unwrap_or(".");
            found.push(Change::new(dir, Effect::Into));
        }
        "7z" | "7za" | "7zr" if matches!(operands().next(), Some("x" | "e")) => {
            let dir = args
                .iter()
                .find_map(|a| a.strip_prefix("-o"))
                .unwrap_or(".");
            found.push(Change::new(dir, Effect::Into));
        }
        "cpio"
            if args
                .iter()
                .any(|a| a.starts_with("-i") || *a == "--extract") =>
        {
            let dir = value_of(&args, "-D", Some("--directory")).unwrap_or(".");
            found.push(Change::new(dir, Effect::Into));
        }
        "expand-archive" => {
            let dir = powershell_value(&args, &["-destinationpath"]).unwrap_or(".");
            found.push(Change::new(dir, Effect::Into));
        }
        "find" => find(cmd, &args, &mut found),
        "git" => git(&args, &mut found),
        // Any other PowerShell cmdlet that sets or removes what a path names.
        _ if base.contains('-')
            && ["set-", "remove-", "clear-", "rename-", "move-"]
                .iter()
                .any(|verb| base.starts_with(verb)) =>
        {
            found.extend(each(Effect::Write));
            found.extend(powershell_paths(&args).map(|p| Change::new(p, Effect::Write)));
        }
        _ => {}
    }
    found
}

/// `-Path F`, `-LiteralPath F`, `-FilePath F`: PowerShell's path parameters.
fn powershell_paths<'a>(args: &'a [&'a str]) -> impl Iterator<Item = &'a str> + 'a {
    args.windows(2)
        .filter(|pair| {
            matches!(
                pair[0].to_ascii_lowercase().as_str(),
                "-path" | "-filepath" | "-literalpath" | "-lp" | "-destination"
            )
        })
        .map(|pair| pair[1])
}

/// The value of one of PowerShell's named parameters (any case).
fn powershell_value<'a>(args: &[&'a str], names: &[&str]) -> Option<&'a str> {
    args.windows(2)
        .find(|pair| names.contains(&pair[0].to_ascii_lowercase().as_str()))
        .map(|pair| pair[1])
}

/// The value of the short option `short` (`-d DIR`, `-dDIR`) or the long option `long`
/// (`--directory DIR`, `--directory=DIR`), the last one given.
fn value_of<'a>(args: &[&'a str], short: &str, long: Option<&str>) -> Option<&'a str> {
    let mut value = None;
    for (i, arg) in args.iter().enumerate() {
        if *arg == short || Some(*arg) == long {
            value = args.get(i + 1).copied().or(value);
        } else if let Some(long) = long
            && let Some(v) = arg.strip_prefix(long).and_then(|v| v.strip_prefix('='))
        {
            value = Some(v);
        } else if let Some(v) = arg.strip_prefix(short).filter(|v| !v.is_empty())
            && !arg.starts_with("--")
        {
            value = Some(v);
        }
    }
    value
}

/// Whether the option word `arg` turns on editing in place: `--in-place[=…]`, or `-i` in a
/// bundle of short options after flags among `flags` (`-Ei.orig`, `-pi`, `-ni`) and before
/// any letter among `takes_value`, whose value would be the rest of the word.
fn in_place(arg: &str, flags: &str, takes_value: &str) -> bool {
    if arg == "--in-place" || arg.starts_with("--in-place=") {
        return true;
    }
    let Some(letters) = arg.strip_prefix('-').filter(|l| !l.starts_with('-')) else {
        return false;
    };
    for c in letters.chars() {
        if c == 'i' {
            return true;
        }
        if takes_value.contains(c) || !flags.contains(c) {
            return false;
        }
    }
    false
}

/// gawk's `-i inplace`, `-iinplace`, `--include=inplace`, `--include inplace`.
fn awk_in_place(args: &[&str]) -> bool {
    args.iter().enumerate().any(|(i, a)| {
        let next = || args.get(i + 1).is_some_and(|n| n.starts_with("inplace"));
        (matches!(*a, "-i" | "--include") && next())
            || a.strip_prefix("-i")
                .is_some_and(|v| v.starts_with("inplace"))
            || a.strip_prefix("--include=")
                .is_some_and(|v| v.starts_with("inplace"))
    })
}

/// The files a script-taking program edits in place: its operands, less the script itself
/// when no option (`-e`, `-f`) gave it. An option in `value_options` takes the next word.
fn script_operands(args: &[&str], value_options: &[&str]) -> Vec<Change> {
    let mut operands = Vec::new();
    let mut script_given = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if value_options.contains(arg) {
            script_given |= matches!(*arg, "-e" | "-E" | "-f" | "--expression" | "--file");
            i += 1;
        } else if arg.starts_with('-') && arg.len() > 1 {
            // `-e'…'` glued, `-pe` (perl's code is the next word).
            script_given |= arg.starts_with("--expression") || arg.starts_with("--file");
            let letters = arg.trim_start_matches('-');
            if !arg.starts_with("--") && letters.ends_with(['e', 'E']) {
                script_given = true;
                i += 1;
            } else if !arg.starts_with("--") && letters.contains(['e', 'E', 'f']) {
                script_given = true;
            }
        } else {
            operands.push(*arg);
        }
    }
    let files = if script_given {
        &operands[..]
    } else {
        operands.get(1..).unwrap_or_default()
    };
    files
        .iter()
        .map(|p| Change::new(p, Effect::Write))
        .collect()
}

/// A copy's or move's destination, with each source's name under it; what a move takes away.
fn copy(base: &str, args: &[&str], found: &mut Vec<Change>) {
    let named = args.iter().enumerate().find_map(|(i, a)| {
        let lower = a.to_ascii_lowercase();
        if matches!(lower.as_str(), "-t" | "--target-directory" | "-destination") {
            args.get(i + 1).copied()
        } else {
            a.strip_prefix("--target-directory=").or_else(|| {
                a.strip_prefix("-t")
                    .filter(|v| !v.is_empty() && !a.starts_with("--"))
            })
        }
    });
    let options_end = args.iter().position(|a| *a == "--");
    let mut operands: Vec<&str> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| options_end.is_some_and(|end| *i > end) || !a.starts_with('-'))
        .map(|(_, a)| *a)
        .filter(|a| Some(*a) != named)
        .collect();
    // PowerShell's `-Destination X` / `-NewName X` were read as operands too.
    if let Some(dest) = powershell_value(args, &["-destination", "-newname"]) {
        operands.retain(|a| *a != dest);
        operands.push(dest);
    }
    let (sources, dest) = match (named, operands.split_last()) {
        (Some(dir), _) => (operands.clone(), dir),
        (None, Some((last, rest))) => (rest.to_vec(), *last),
        (None, None) => return,
    };
    let moves = matches!(
        base,
        "mv" | "move" | "move-item" | "mi" | "rename-item" | "rni" | "ren"
    );
    if moves {
        found.extend(sources.iter().map(|s| Change::new(s, Effect::Remove)));
    }
    found.push(Change::new(dest, Effect::Write));
    let recursive = base == "rsync"
        || args.iter().any(|a| {
            matches!(*a, "-r" | "-R" | "-a" | "--recursive" | "--archive" | "-T")
                || (a.starts_with('-') && !a.starts_with("--") && a.contains(['r', 'R', 'a']))
        });
    // `cp -rT dir ~/.claude`: the destination is the directory itself.
    if args
        .iter()
        .any(|a| matches!(*a, "-T" | "--no-target-directory"))
    {
        found.push(Change::new(dest, Effect::Into));
    }
    for source in sources {
        // `cp -r dotfiles/. ~`, `rsync -a backup/ ~/`: the directory's contents, whatever
        // they are, land in the destination.
        if recursive && (source.ends_with('/') || source.ends_with("/.") || source.ends_with("/*"))
        {
            found.push(Change::new(dest, Effect::Into));
        }
        let file = source
            .trim_end_matches(['/', '\\'])
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(source);
        if !file.is_empty() {
            found.push(Change::new(
                &format!("{}/{file}", dest.trim_end_matches(['/', '\\'])),
                Effect::Write,
            ));
        }
    }
}

/// An archive unpacked (`-x`, `x` as the first word, `--extract`, `--get`) into its `-C`
/// or `--directory` directory, else the current one; one created into the file `-f` names.
fn tar(args: &[&str], found: &mut Vec<Change>) {
    let first = args.first().copied().unwrap_or_default();
    let bundle = |a: &str| {
        !a.starts_with("--") && a.trim_start_matches('-').chars().all(char::is_alphanumeric)
    };
    let mode = |letter: char| {
        (!first.starts_with('-') && first.contains(letter))
            || args
                .iter()
                .any(|a| a.starts_with('-') && bundle(a) && a[1..].contains(letter))
    };
    let extract = mode('x') || args.iter().any(|a| matches!(*a, "--extract" | "--get"));
    if extract {
        let dir = value_of(args, "-C", Some("--directory")).unwrap_or(".");
        found.push(Change::new(dir, Effect::Into));
    } else if mode('c') || mode('r') || mode('u') {
        // The archive named by the bundle's `f` (its value the next word) or `--file`.
        let file = args.iter().enumerate().find_map(|(i, a)| {
            if let Some(v) = a.strip_prefix("--file=") {
                return Some(v);
            }
            ((*a == "--file") || (bundle(a) && a.ends_with('f') && (i > 0 || !a.starts_with("--"))))
                .then(|| args.get(i + 1).copied())
                .flatten()
        });
        found.extend(file.map(|f| Change::new(f, Effect::Write)));
    }
}

/// The places `find` starts from, when it deletes (`-delete`) or runs a program that changes
/// the names it finds (`-exec rm {} ;`, `-exec sh -c …`), with its name tests.
fn find(cmd: &Cmd, args: &[&str], found: &mut Vec<Change>) {
    let starts: Vec<&str> = args
        .iter()
        .take_while(|a| !a.starts_with('-') && !matches!(**a, "(" | "!" | "\\(" | "\\!"))
        .copied()
        .collect();
    let mut changes = args.contains(&"-delete");
    let mut i = 0;
    while let Some(at) = args[i..]
        .iter()
        .position(|a| matches!(*a, "-exec" | "-execdir" | "-ok" | "-okdir"))
    {
        let start = i + at + 1;
        let end = args[start..]
            .iter()
            .position(|a| matches!(*a, ";" | "+"))
            .map_or(args.len(), |e| start + e);
        let words: Vec<Arg> = cmd.words[(1 + start)..=end].to_vec();
        let program = words
            .first()
            .map(|w| lower_base(w.text()))
            .unwrap_or_default();
        let inner = Cmd {
            words,
            ..Cmd::default()
        };
        changes |= super::code::family(&program).is_some()
            || matches!(
                program.as_str(),
                "sh" | "bash" | "zsh" | "dash" | "xargs" | "sudo"
            )
            || changes_of_found(&inner);
        i = end.min(args.len());
    }
    if !changes {
        return;
    }
    let names: Vec<String> = args
        .windows(2)
        .filter(|pair| {
            matches!(
                pair[0],
                "-name" | "-iname" | "-path" | "-ipath" | "-wholename" | "-iwholename"
            )
        })
        .map(|pair| pair[1].rsplit('/').next().unwrap_or(pair[1]).to_owned())
        .collect();
    let starts = if starts.is_empty() { vec!["."] } else { starts };
    for start in starts {
        found.push(Change {
            path: start.to_owned(),
            effect: Effect::Remove,
            names: names.clone(),
        });
    }
}

/// Whether a command `find` runs changes the names it finds (`{}`).
fn changes_of_found(inner: &Cmd) -> bool {
    changes(inner).iter().any(|c| c.path.contains("{}"))
}

/// git's commands that rewrite files of the work tree: the work tree (`-C DIR`,
/// `--work-tree`, else the current directory), and any path they name.
fn git(args: &[&str], found: &mut Vec<Change>) {
    let mut dir: Option<&str> = None;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match *arg {
            "-C" | "--work-tree" | "--git-dir" => {
                if *arg != "--git-dir" {
                    dir = args.get(i + 1).copied();
                }
                i += 2;
            }
            "-c" | "--namespace" | "--exec-path" => i += 2,
            _ if arg.starts_with("--work-tree=") => {
                dir = arg.strip_prefix("--work-tree=");
                i += 1;
            }
            _ if arg.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let Some(sub) = args.get(i) else {
        return;
    };
    let rest = &args[i + 1..];
    let rewrites = match *sub {
        "checkout" | "restore" | "clean" | "switch" | "rm" | "mv" | "apply" | "am" | "pull"
        | "merge" | "rebase" | "cherry-pick" | "revert" | "read-tree" | "checkout-index" => true,
        "stash" => !matches!(rest.first().copied(), Some("list" | "show")),
        "reset" => rest
            .iter()
            .any(|a| matches!(*a, "--hard" | "--merge" | "--keep")),
        _ => false,
    };
    if !rewrites {
        return;
    }
    let dir = dir.unwrap_or(".");
    found.push(Change::new(dir, Effect::Into));
    let joined = |p: &str| {
        if dir == "." || p.starts_with(['/', '~', '$']) {
            p.to_owned()
        } else {
            format!("{}/{p}", dir.trim_end_matches('/'))
        }
    };
    for path in rest.iter().filter(|a| !a.starts_with('-')) {
        found.push(Change::new(&joined(path), Effect::Remove));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(words: &[&str]) -> Vec<(String, Effect)> {
        let cmd = Cmd {
            words: words
                .iter()
                .map(|w| Arg::literal((*w).to_owned()))
                .collect(),
            ..Cmd::default()
        };
        changes(&cmd)
            .into_iter()
            .map(|c| (c.path, c.effect))
            .collect()
    }

    fn has(words: &[&str], path: &str, effect: Effect) {
        let found = of(words);
        assert!(
            found.iter().any(|(p, e)| p == path && *e == effect),
            "{words:?}: {found:?}"
        );
    }

    #[test]
    fn every_form_of_a_write_names_its_file() {
        has(
            &["sed", "-Ei.orig", "s/a/b/", "f.json"],
            "f.json",
            Effect::Write,
        );
        has(
            &["sed", "-i", "-e", "s/a/b/", "f.json"],
            "f.json",
            Effect::Write,
        );
        has(
            &["perl", "-pi", "-e", "s/a/b/", "f.json"],
            "f.json",
            Effect::Write,
        );
        has(
            &["awk", "-i", "inplace", "{print}", "f.json"],
            "f.json",
            Effect::Write,
        );
        has(
            &["gawk", "--include=inplace", "{print}", "f.json"],
            "f.json",
            Effect::Write,
        );
        has(&["tar", "-C", "/h", "-xf", "x.tar"], "/h", Effect::Into);
        has(
            &["tar", "xzf", "x.tgz", "--directory=/h"],
            "/h",
            Effect::Into,
        );
        has(&["tar", "-xf", "x.tar"], ".", Effect::Into);
        has(&["unzip", "-o", "x.zip", "-d", "/h"], "/h", Effect::Into);
        has(&["7z", "x", "a.7z", "-o/h"], "/h", Effect::Into);
        has(
            &["cp", "--target-directory=/h/.c", "s.json"],
            "/h/.c/s.json",
            Effect::Write,
        );
        has(
            &["cp", "-t", "/h/.c", "s.json"],
            "/h/.c/s.json",
            Effect::Write,
        );
        has(&["cp", "-r", "dots/.", "/h"], "/h", Effect::Into);
        has(&["mv", "a", "b"], "a", Effect::Remove);
        has(&["dd", "if=/dev/zero", "of=/x"], "/x", Effect::Write);
        has(&["chmod", "000", "/b/rewind"], "/b/rewind", Effect::Remove);
        has(
            &["find", "/h/.c", "-name", "s.json", "-delete"],
            "/h/.c",
            Effect::Remove,
        );
        has(
            &["find", "/h", "-exec", "rm", "{}", ";"],
            "/h",
            Effect::Remove,
        );
        has(
            &["git", "checkout", "--", ".c/s.json"],
            ".c/s.json",
            Effect::Remove,
        );
        has(&["git", "-C", "/h", "stash"], "/h", Effect::Into);
        has(&["git", "reset", "--hard"], ".", Effect::Into);
        has(
            &["vim", "-c", "%d|wq", "/h/s.json"],
            "/h/s.json",
            Effect::Write,
        );
        has(&["ed", "-s", "/h/s.json"], "/h/s.json", Effect::Write);
        has(
            &["Remove-Item", "-Path", "/h/s.json"],
            "/h/s.json",
            Effect::Remove,
        );
        has(
            &["Set-Content", "-Path", "/h/s.json", "-Value", "x"],
            "/h/s.json",
            Effect::Write,
        );
    }

    #[test]
    fn reading_changes_nothing() {
        for words in [
            &["sed", "-n", "1p", "f.json"][..],
            &["sed", "-e", "s/i/x/", "f.json"],
            &["perl", "-ne", "print", "f.json"],
            &["awk", "{print}", "f.json"],
            &["tar", "-tf", "x.tar"],
            &["tar", "-czf", "out.tgz", "src"],
            &["unzip", "-l", "x.zip"],
            &["vim", "-R", "f.json"],
            &["find", "/h", "-name", "*.json"],
            &["find", "/h", "-exec", "cat", "{}", ";"],
            &["git", "status"],
            &["git", "stash", "list"],
            &["git", "reset", "HEAD~1"],
            &["git", "diff", "--", "f.json"],
        ] {
            let found = of(words);
            assert!(
                found.iter().all(|(p, _)| p == "out.tgz"),
                "{words:?}: {found:?}"
            );
        }
    }
}
