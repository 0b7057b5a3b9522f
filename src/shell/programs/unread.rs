//! Programs no grammar reads: a program whose name is only known when the command runs, and one
//! the catalog does not know (or a catalogued one acting on this machine). What such a program
//! runs among its arguments is read, and a machine rewind protects among its words asks.

use super::flow::{self, Held};
use super::{Ctx, text_in};
use crate::shell::dialect::Dialect;
use crate::shell::types::{Arg, Class, Cmd, Unknown, clip};
use crate::shell::wrappers::{join, lower_base};
use crate::shell::{net, runners};

/// A program whose name is only known when the command runs (`$CC`, `${x}h`, `/usr/bin/s?h`,
/// `$(printf …)`): asked about when it could be a remote program (its text names or hides
/// one) or when anything after it could name a host (a protected VM, `user@host`,
/// `host:path`, a URL, another word only known at run time). `"$CC" -o app main.c` stays
/// undecided.
pub(super) fn dynamic_program(
    ctx: &mut Ctx<'_>,
    cmd: &Cmd,
    dialect: Dialect,
) -> Result<(), Unknown> {
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
        if flow::method_call(ctx, &first.raw)? {
            return Ok(());
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
        || ctx.named();
    let host_after = cmd.words[1..]
        .iter()
        .find(|w| {
            w.value.is_none()
                || net::could_name_a_host(w.text(), ctx.known)
                || FLEET_WORDS.contains(&w.text().to_ascii_lowercase().as_str())
                || (dialect == Dialect::PowerShell && names_a_machine_parameter(w.text()))
        })
        .or_else(|| net::could_name_a_host(&first.raw, ctx.known).then_some(first));
    if hides_a_program || host_after.is_some() {
        return Err(Unknown(format!(
            "the program `{}` is only known when the command runs{}",
            clip(&first.raw),
            host_after.map_or_else(String::new, |w| format!(
                ", and `{}` after it may reach another machine",
                clip(&w.raw)
            ))
        )));
    }
    Ok(())
}

/// A PowerShell parameter that names the machine a cmdlet acts on (`-ComputerName`, `-Cn`,
/// `-Session`, `-VMName`, `-HostName`), abbreviated or not: after a program only known at
/// run time it asks as a host name would.
fn names_a_machine_parameter(word: &str) -> bool {
    let Some(name) = word.strip_prefix('-') else {
        return false;
    };
    let name = name
        .split(':')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    name == "cn"
        || (name.len() >= 3
            && [
                "computername",
                "session",
                "cimsession",
                "vmname",
                "hostname",
            ]
            .iter()
            .any(|p| p.starts_with(&name)))
}

/// A program whose use here no grammar reads (not in the catalog, or a catalogued program
/// acting on this machine): what it runs among its arguments is read, and a protected
/// machine among them asks.
pub(super) fn unread_program(ctx: &mut Ctx<'_>, name: &str, cmd: &Cmd) -> Result<(), Unknown> {
    runs_its_arguments(ctx, name, cmd)?;
    protected_net(ctx, name, cmd)
}

/// Task runners whose operands are targets or scripts of the project's own.
const TASK_RUNNERS: &[&str] = &[
    "make", "gmake", "just", "task", "rake", "mage", "yarn", "gradle", "gradlew", "mvn", "mvnw",
];
/// Package managers that run a script of the project's own with `run`.
const SCRIPT_RUNNERS: &[&str] = &["npm", "pnpm", "yarn", "bun"];

/// A project's own deploy entry point (`./scripts/deploy.sh`, `bin/deploy`, `make deploy`,
/// `npm run deploy:prod`): it reaches the machines its code names, which are not read here.
pub(super) fn deploy_entry(name: &str, cmd: &Cmd) -> Result<(), Unknown> {
    let base = lower_base(name);
    let operands: Vec<&str> = cmd
        .words
        .iter()
        .skip(1)
        .map(Arg::text)
        .filter(|w| !w.starts_with('-'))
        .collect();
    let is_deploy = |word: &str| word.to_ascii_lowercase().starts_with("deploy");
    // `./scripts/deploy.sh`, or `bash scripts/deploy.sh`, `python3 deploy.py`.
    // `bash -n deploy.sh` only checks its syntax.
    let checks_only = cmd.words[1..].iter().any(|w| {
        w.text().starts_with('-') && !w.text().starts_with("--") && w.text().contains('n')
    }) && SHELLS.contains(&base.as_str());
    let script = (name.contains(['/', '\\']) && is_deploy(&base))
        || (runs_scripts(&base)
            && !checks_only
            && operands.first().is_some_and(|s| is_deploy(&lower_base(s))));
    // `make -C infra deploy`, `./gradlew clean deploy`: any target.
    let target = TASK_RUNNERS.contains(&base.as_str())
        && operands.iter().any(|t| !t.contains('=') && is_deploy(t));
    // `npm --prefix app run deploy`: the script after `run`.
    let run_script = SCRIPT_RUNNERS.contains(&base.as_str())
        && operands
            .windows(2)
            .any(|w| matches!(w[0], "run" | "run-script") && is_deploy(w[1]));
    if script || target || run_script {
        return Err(Unknown(format!(
            "`{}` runs the project's deploy entry point, and the machines it reaches are not read",
            clip(
                &cmd.words
                    .iter()
                    .map(Arg::text)
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        )));
    }
    Ok(())
}

/// The shells, which run the script file they are given.
const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash", "ksh", "ash", "fish"];

/// Whether a program runs the script file it is given: a shell, or an interpreter under any
/// version's name (`python3.12`, `node20`, `perl5.36`).
fn runs_scripts(base: &str) -> bool {
    const FAMILIES: &[&str] = &[
        "python",
        "pypy",
        "node",
        "nodejs",
        "ruby",
        "perl",
        "php",
        "pwsh",
        "powershell",
        "lua",
        "tclsh",
        "deno",
        "bun",
    ];
    SHELLS.contains(&base)
        || FAMILIES.iter().any(|family| {
            base.strip_prefix(family)
                .is_some_and(|version| version.chars().all(|c| c.is_ascii_digit() || c == '.'))
        })
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
pub(super) fn protected_net(ctx: &Ctx<'_>, name: &str, cmd: &Cmd) -> Result<(), Unknown> {
    let base = lower_base(name);
    let base = base.strip_suffix(".exe").unwrap_or(&base);
    if net::is_inert(base) || reads_the_repository(base, cmd) || only_reads_there(base, cmd) {
        return Ok(());
    }
    if let Some(host) = &ctx.exported {
        return Err(Unknown(format!(
            "`{}` runs with {host}, a machine rewind protects, in its environment, and what it does there is not read",
            clip(name)
        )));
    }
    named_in_words(ctx, name, cmd)
}

/// The protected-VM net over a command's own words (and what a PowerShell pipe hands it),
/// whatever its environment holds: a catalogued client whose grammar found no server still
/// asks when a word names a protected machine (`psql --hosx=db01 …`).
pub(super) fn named_in_words(ctx: &Ctx<'_>, name: &str, cmd: &Cmd) -> Result<(), Unknown> {
    let base = lower_base(name);
    let base = base.strip_suffix(".exe").unwrap_or(&base);
    if net::is_inert(base) {
        return Ok(());
    }
    let words = cmd
        .assignments
        .iter()
        .map(String::as_str)
        .chain(cmd.words.iter().map(Arg::text));
    // `'win01' | ./deploy.ps1`: what a PowerShell pipe hands it (a loop's block is read
    // with each item).
    let piped = match &ctx.flow.piped {
        Some(Held::Text(text)) if !flow::reads_each_item(cmd) => text.value.as_deref(),
        _ => None,
    };
    for word in words.chain(piped) {
        if let Some(host) = net::protected(word, ctx.known) {
            return Err(Unknown(format!(
                "`{}` names {host}, a machine rewind protects, and how `{}` reaches it is not read",
                clip(name),
                clip(base)
            )));
        }
    }
    Ok(())
}

/// `git grep web01`, `git log --grep=db01`: git subcommands that only read the local
/// repository, whose words are text to look for, not machines; and those that only read a
/// remote one (`git clone deploy@web01:/srv/app.git`), unless told which program to run
/// there (`--upload-pack`, `clone -u`).
fn reads_the_repository(base: &str, cmd: &Cmd) -> bool {
    const READING: &[&str] = &[
        "grep",
        "log",
        "show",
        "diff",
        "blame",
        "status",
        "shortlog",
        "ls-files",
        "describe",
        "clone",
        "fetch",
        "ls-remote",
        "pull",
        // `git archive --remote=web01:/srv/app.git HEAD`: the remote only serves the tree.
        "archive",
    ];
    if base != "git" {
        return false;
    }
    let words: Vec<&str> = cmd.words.iter().skip(1).map(Arg::text).collect();
    let runs_remotely = words
        .iter()
        .any(|w| w.starts_with("--upload-pack") || w.starts_with("--exec") || *w == "-u");
    // The subcommand, past git's own options (`-C DIR` and `-c NAME=VALUE` take a value).
    let mut rest = words.iter();
    let mut sub = None;
    while let Some(word) = rest.next() {
        match *word {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" => {
                rest.next();
            }
            w if w.starts_with('-') => {}
            w => {
                sub = Some(w);
                break;
            }
        }
    }
    !runs_remotely && sub.is_some_and(|sub| READING.contains(&sub))
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
    "pipx",
    "gem",
    "go",
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
    // A runner: not a program known never to run its arguments. The remote read-only list
    // (which reads the built-in catalog) is only asked once a word names a remote program.
    if !NOT_RUNNERS.contains(&base) && !base.starts_with('%') {
        let words = &cmd.words[1..];
        let mut run = Vec::new();
        if let Some(at) = words.iter().position(|w| {
            w.value
                .as_deref()
                .is_some_and(|v| ctx.catalog.program(v).is_some())
        }) {
            run.push(join(&words[at..]).text().to_owned());
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
                run.push(value.clone());
            }
        }
        if !run.is_empty() && !ctx.catalog.remote_read_only(base) {
            candidates.extend(run);
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
                clip(name),
                clip(&text)
            )));
        }
    }
    Ok(())
}

/// pip's options that take a value, the same for `pip` and `pip3`.
const PIP_VALUE_OPTIONS: &[&str] = &[
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "--trusted-host",
    "--proxy",
    "-d",
    "--dest",
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-t",
    "--target",
];

/// Programs whose action, by their own subcommand, only reads the machine a word of theirs
/// names, or changes only this machine with what it fetched from there: the program, the
/// options that take a separate value (so a value is never taken for the subcommand), and
/// the globs over the operands joined by spaces (`sdr list`, `get *`) that keep it so.
/// Anything else (`ipmitool … power off`, `etcdctl put`, `consul kv delete`) still meets the
/// net.
const READING_ACTIONS: &[(&str, &[&str], &[&str])] = &[
    (
        "ipmitool",
        &[
            "-I", "-H", "-U", "-P", "-p", "-L", "-A", "-C", "-y", "-k", "-K", "-f", "-t", "-b",
            "-T", "-B", "-R", "-N", "-O", "-Y", "-z", "-m", "-l", "-e", "-o",
        ],
        &[
            "sdr",
            "sdr list*",
            "sdr elist*",
            "sdr type*",
            "sdr get*",
            "sdr info",
            "sensor",
            "sensor list*",
            "sensor get*",
            "chassis status",
            "chassis power status",
            "power status",
            "fru",
            "fru print*",
            "sel",
            "sel list*",
            "sel elist*",
            "sel info",
            "mc info",
            "lan print*",
            "user list*",
        ],
    ),
    (
        "etcdctl",
        &[
            "--endpoints",
            "--user",
            "--password",
            "--cacert",
            "--cert",
            "--key",
            "-w",
            "--write-out",
            "--dial-timeout",
            "--command-timeout",
        ],
        &[
            "get *",
            "member list*",
            "endpoint health*",
            "endpoint status*",
            "version",
            "watch *",
        ],
    ),
    (
        "consul",
        &[
            "-http-addr",
            "-token",
            "-datacenter",
            "-ca-file",
            "-client-cert",
            "-client-key",
        ],
        &[
            "members*",
            "info*",
            "version",
            "catalog *",
            "kv get *",
            "kv export*",
            "monitor*",
            "operator raft list-peers*",
        ],
    ),
    // The package comes from the named host and is installed here.
    (
        "pip",
        PIP_VALUE_OPTIONS,
        &["install*", "download*", "wheel*"],
    ),
    (
        "pip3",
        PIP_VALUE_OPTIONS,
        &["install*", "download*", "wheel*"],
    ),
    (
        "cargo",
        &[
            "--git",
            "--branch",
            "--tag",
            "--rev",
            "--root",
            "--index",
            "--registry",
            "-p",
            "--package",
            "-F",
            "--features",
            "-j",
            "--jobs",
            "--target",
            "--manifest-path",
            "--bin",
            "--test",
        ],
        &[
            "install*", "fetch*", "build*", "check*", "test*", "doc*", "tree*", "search *",
        ],
    ),
    // These change this machine: the host named is where states, playbooks and inventory
    // come from, or a host the inventory only prints.
    (
        "salt-call",
        &[
            "--master",
            "-l",
            "--log-level",
            "-c",
            "--config-dir",
            "--id",
        ],
        &["*"],
    ),
    (
        "ansible-pull",
        &[
            "-U",
            "--url",
            "-i",
            "--inventory",
            "-C",
            "--checkout",
            "-d",
            "--directory",
            "-e",
            "--extra-vars",
            "-t",
            "--tags",
            "-l",
            "--limit",
            "--vault-password-file",
            "--private-key",
            "-m",
            "--module-name",
            "--accept-host-key",
        ],
        &["*"],
    ),
    (
        "ansible-inventory",
        &[
            "-i",
            "--inventory",
            "--host",
            "--vault-password-file",
            "--output",
        ],
        &["*"],
    ),
    (
        "ldapsearch",
        &[
            "-H", "-h", "-D", "-w", "-b", "-s", "-y", "-p", "-o", "-f", "-l", "-z", "-T",
        ],
        &["*"],
    ),
    (
        "nmap",
        &["-p", "-oN", "-oX", "-oG", "-oA", "-iL", "--top-ports", "-T"],
        &["*"],
    ),
];

/// Whether a program of [`READING_ACTIONS`] is given an action that only reads there (an
/// nmap script may write: `--script` keeps the net).
fn only_reads_there(base: &str, cmd: &Cmd) -> bool {
    let Some((_, values, reading)) = READING_ACTIONS.iter().find(|(name, _, _)| *name == base)
    else {
        return false;
    };
    let mut operands = Vec::new();
    let mut words = cmd.words.iter().skip(1).map(Arg::text);
    while let Some(word) = words.next() {
        if base == "nmap" && (word.starts_with("--script") || word == "-A" || word == "-sC") {
            return false;
        }
        if word.starts_with('-') {
            if values.contains(&word) {
                words.next();
            }
        } else {
            operands.push(word);
        }
    }
    let phrase = operands.join(" ");
    reading.iter().any(|r| crate::glob::glob_match(r, &phrase))
}
