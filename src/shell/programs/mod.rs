//! The walk from simple commands to findings: each command's wrappers are looked through
//! (`wrappers`: `sudo`, `env`, `nohup`, `timeout`, `bash -c`, `pwsh -c`, `find -exec`, …), what
//! it leaves for later commands is remembered (a file it wrote, a variable it exported), and
//! `command` hands each remote program to the grammar the catalog names for it: `ssh`,
//! `session` (sessions and host lists), `copy`, `ansible`, `windows` (winrs, psexec,
//! smbclient), `hypervisors` (govc, virsh), `vmrun`, `xe`, `deploy` (Kamal, Capistrano),
//! `cmdlets` (PowerShell) and `fleet`. A
//! program no grammar reads still has what it runs among its arguments read, and asks when it
//! names a machine rewind protects.

#![expect(
    clippy::unnecessary_wraps,
    reason = "every grammar has the one signature `command` dispatches to"
)]

use std::cell::OnceCell;

use super::catalog::{Grammar, Program, ShellCatalog};
use super::dialect::Dialect;
use super::types::{Arg, Class, Cmd, Finding, Stdin, Target, TargetKind, Unknown, clip};
use super::walk::Walk;
use super::wrappers::{Next, cron_table, join, lower_base, may_reach_without_a_program, unwrap};
use super::{net, posix, remote, runners};
use crate::inventory::Inventory;

mod ansible;
mod cloud;
mod cmdlets;
mod copy;
mod database;
mod deploy;
mod dotnet;
mod exec;
mod fleet;
mod flow;
mod hypervisors;
mod interpreted;
mod session;
mod ssh;
mod unread;
mod variables;
mod vmrun;
mod windows;
mod world;
mod xe;

pub(crate) use self::database::reads_remotely;
pub(crate) use self::ssh::proxy_end;
use self::unread::{dynamic_program, protected_net, unread_program};
use self::variables::{assigned_once, set_by};
pub(crate) use self::variables::{assigned_values, bind_values};

/// What one analysis carries through nested texts.
pub(crate) struct Ctx<'a> {
    pub(crate) catalog: &'a ShellCatalog,
    /// The protected-VM net: a program no grammar reads that names one of these asks.
    pub(crate) known: &'a Inventory,
    /// The whole command, which [`Ctx::named`] and [`Ctx::names_a_machine`] read the first
    /// time a rare case asks (most commands never do).
    whole: &'a str,
    named: OnceCell<bool>,
    /// Variables the text assigns exactly once, to a literal value (`x=ss; ${x}h …`).
    vars: Vec<(String, String)>,
    /// Variables the text sets to a value only known when it runs, or more than once
    /// (`export PGHOST=$(…)`, `read PGHOST`).
    unknown_env: Vec<String>,
    names_a_machine: OnceCell<bool>,
    /// Files an earlier command of the text wrote, with what it wrote when the text fixes
    /// it (`echo 'ssh web01 reboot' > /tmp/r.sh; bash /tmp/r.sh`).
    written: Vec<(String, Option<String>)>,
    /// A protected machine an earlier command put in the environment (`export T=web01`).
    exported: Option<String>,
    /// Every file an earlier command of the text wrote, by any means (`tee`, `cp`, `dd`).
    touched: Vec<String>,
    /// An earlier command changed where names go (`… >> /etc/hosts`, `~/.ssh/config`).
    world: Option<world::World>,
    /// PowerShell's location was set to a UNC path: relative writes land on that machine.
    pub(crate) unc_location: Option<String>,
    /// Drives an earlier command mapped to a share (`New-PSDrive X … -Root \\win01\c$`,
    /// `net use Z: \\win01\share`): the drive's name, lower-case, and its root.
    drives: Vec<(String, Arg)>,
    /// Paths an earlier command made a remote program under another name (`ln -s
    /// /usr/bin/ssh /tmp/x`, `cp $(which ssh) ./x`): the path, without a leading `./`, and
    /// the program.
    aliases: Vec<(String, String)>,
    /// An ssh earlier in the text forwards ports of this machine to this one's side: a later
    /// client's connection to this machine may reach it.
    pub(crate) forwarded: Option<Target>,
    /// What PowerShell's variables and pipes hold where the walk is.
    pub(crate) flow: flow::Flow,
    pub(crate) walk: &'a mut Walk,
    pub(crate) findings: &'a mut Vec<Finding>,
}

impl Ctx<'_> {
    /// Whether the whole command names a remote program: a program word only known when the
    /// command runs (`x=ssh; $x web01`, `"${argv[@]}"`) may then be that program.
    pub(crate) fn named(&self) -> bool {
        *self.named.get_or_init(|| {
            self.catalog.names_a_program(self.whole).is_some()
                || self.catalog.may_hide_a_program(self.whole)
        })
    }

    /// Whether any word of the whole command could name another machine (a UNC path, a
    /// protected VM): objects a pipeline hands on may then come from there.
    pub(crate) fn names_a_machine(&self) -> bool {
        *self.names_a_machine.get_or_init(|| {
            self.whole
                .split(net::is_separator)
                .any(|w| w.starts_with("\\\\") || net::protected(w, self.known).is_some())
        })
    }

    /// `path` written through a drive an earlier command mapped to a share (`X:\app` after
    /// `New-PSDrive X … -Root \\win01\c$`): the same path under the share's root; none for
    /// any other path.
    pub(crate) fn through_drive(&self, path: &Arg) -> Option<Arg> {
        let (drive, rest) = path.raw.trim_matches(['"', '\'']).split_once(':')?;
        let (_, root) = self
            .drives
            .iter()
            .rev()
            .find(|(name, _)| name.eq_ignore_ascii_case(drive))?;
        let rest = rest.trim_start_matches(['\\', '/']);
        let under = |root: &str| format!("{}\\{rest}", root.trim_end_matches(['\\', '/']));
        Some(Arg {
            raw: under(&root.raw),
            value: root
                .value
                .as_deref()
                .filter(|_| path.value.is_some())
                .map(under),
        })
    }

    /// What judging a remote command needs of this analysis.
    fn judge(&mut self) -> remote::Judge<'_> {
        remote::Judge {
            catalog: self.catalog,
            walk: self.walk,
        }
    }

    /// The value the text gave `name` (`export DOCKER_HOST=…; docker …`), if it fixes one.
    pub(crate) fn bound(&self, name: &str) -> Option<String> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }

    /// The value a program started by `cmd` finds in the environment variable `name`: the
    /// command's own `NAME=value`, else what the text set it to; a value only known when
    /// the command runs (`$NAME`, no value) when the text sets it so. None when the text
    /// leaves it alone.
    pub(crate) fn env(&self, cmd: &Cmd, name: &str) -> Option<Arg> {
        let own = cmd
            .assignments
            .iter()
            .rev()
            .find_map(|a| a.strip_prefix(name)?.strip_prefix('='));
        if let Some(value) = own {
            return Some(if value.contains(['$', '`']) {
                Arg {
                    raw: value.to_owned(),
                    value: None,
                }
            } else {
                Arg::literal(value.to_owned())
            });
        }
        if let Some(value) = self.bound(name) {
            return Some(Arg::literal(value));
        }
        self.unknown_env.iter().any(|n| n == name).then(|| Arg {
            raw: format!("${name}"),
            value: None,
        })
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
        whole: text,
        named: OnceCell::new(),
        vars: Vec::new(),
        unknown_env: Vec::new(),
        written: Vec::new(),
        exported: None,
        touched: Vec::new(),
        world: None,
        unc_location: None,
        drives: Vec::new(),
        aliases: Vec::new(),
        forwarded: None,
        flow: flow::Flow::default(),
        names_a_machine: OnceCell::new(),
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
    let outer_unknown = ctx.unknown_env.len();
    if dialect == Dialect::Posix {
        let (fixed, unknown) = assigned_once(&commands);
        ctx.vars.extend(fixed);
        ctx.unknown_env.extend(unknown);
    }
    ctx.walk.enter()?;
    let result = match dialect {
        Dialect::Posix => commands
            .iter()
            .try_for_each(|cmd| command(ctx, cmd, dialect)),
        Dialect::PowerShell => {
            let around = ctx.flow.enter();
            let result = flow::walk(ctx, &commands);
            ctx.flow.leave(around);
            result
        }
    };
    ctx.walk.leave();
    ctx.vars.truncate(outer);
    ctx.unknown_env.truncate(outer_unknown);
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

/// The command `words` run on a remote host, judged: its text (the words as written when part
/// of it is only known when it runs, which makes it mutating), its class and why.
fn judge_remote(ctx: &mut Ctx<'_>, words: &[Arg], cmd: &Cmd) -> (String, Class, String) {
    let remote = join(words);
    let (class, why) = match &remote.value {
        Some(text) => {
            exec::follow_ssh(ctx, text);
            remote::classify(&mut ctx.judge(), text, &cmd.stdin)
        }
        None => (
            Class::Mutating,
            String::from("the remote command holds text expanded on this machine first"),
        ),
    };
    (remote.value.unwrap_or(remote.raw), class, why)
}

/// Analyses one simple command of the agent's machine, in the world the command's earlier
/// parts (and its own redirections and environment) leave.
fn command(ctx: &mut Ctx<'_>, cmd: &Cmd, dialect: Dialect) -> Result<(), Unknown> {
    for (path, content) in world::note(ctx, cmd) {
        scheduled(ctx, &path, content)?;
    }
    let from = ctx.findings.len();
    let result = simple_command(ctx, cmd, dialect);
    world::apply(ctx, from);
    result
}

/// A file the system runs later, written by the command: a cron table (`/etc/cron.d/job`,
/// `/etc/crontab`, with a user field; `/var/spool/cron/…`) or a periodic script
/// (`/etc/cron.daily/x`). What it runs is judged now when the text fixes it, and asked about,
/// as a script not read is, when it does not and the command could reach another machine.
fn scheduled(ctx: &mut Ctx<'_>, path: &str, content: Option<String>) -> Result<(), Unknown> {
    let path = path.trim_matches(['"', '\'']);
    let system = path == "/etc/crontab" || path.starts_with("/etc/cron.d/");
    let table = system || path.starts_with("/var/spool/cron/");
    let script = [
        "/etc/cron.hourly/",
        "/etc/cron.daily/",
        "/etc/cron.weekly/",
        "/etc/cron.monthly/",
    ]
    .iter()
    .any(|dir| path.starts_with(dir));
    if !table && !script {
        return Ok(());
    }
    match content {
        Some(text) if table => code(
            ctx,
            path,
            &cron_table(&Arg::literal(text), system),
            Dialect::Posix,
        ),
        Some(text) => text_in(ctx, &text, Dialect::Posix),
        None if ctx.named() || ctx.names_a_machine() => Err(Unknown(format!(
            "the command writes {path}, which the system runs later, with text not known here"
        ))),
        None => Ok(()),
    }
}

/// [`command`], in the world as it is.
fn simple_command(ctx: &mut Ctx<'_>, cmd: &Cmd, dialect: Dialect) -> Result<(), Unknown> {
    let fixed;
    let cmd = if dialect == Dialect::Posix && cmd.words.iter().any(|w| w.value.is_none()) {
        fixed = with_bound_values(ctx, cmd);
        &fixed
    } else {
        cmd
    };
    // `PGHOST=db01 bash -c "psql …"`: the command's own assignments are the environment of
    // whatever it runs in turn.
    let (vars, unknown) = (ctx.vars.len(), ctx.unknown_env.len());
    if dialect == Dialect::Posix && !cmd.words.is_empty() {
        for (name, value) in cmd.assignments.iter().filter_map(|a| a.split_once('=')) {
            if value.contains(['$', '`']) {
                ctx.unknown_env.push(name.to_owned());
            } else {
                ctx.vars.push((name.to_owned(), value.to_owned()));
            }
        }
    }
    let result = bound_command(ctx, cmd, dialect);
    ctx.vars.truncate(vars);
    ctx.unknown_env.truncate(unknown);
    result
}

/// [`simple_command`], with its words' bound values and its environment in place.
fn bound_command(ctx: &mut Ctx<'_>, cmd: &Cmd, dialect: Dialect) -> Result<(), Unknown> {
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
    if dialect == Dialect::PowerShell
        && let Some(done) = powershell_call(ctx, cmd, first)
    {
        return done;
    }
    // `ln -s /usr/bin/ssh /tmp/x && /tmp/x web01 reboot`: the program under its new name.
    if let Some(name) = first.value.as_deref()
        && let Some((_, program)) = ctx
            .aliases
            .iter()
            .rev()
            .find(|(path, _)| path == name.trim_start_matches("./"))
    {
        let mut renamed = cmd.clone();
        renamed.words[0] = Arg::literal(program.clone());
        return command(ctx, &renamed, dialect);
    }
    let name = match first.value.as_deref() {
        Some(name) if dialect == Dialect::PowerShell || !posix::expands_when_run(&first.raw) => {
            name
        }
        _ => return dynamic_program(ctx, cmd, dialect),
    };
    run_code(ctx, name, runners::code_of(&lower_base(name), cmd))?;
    unread::deploy_entry(name, cmd)?;
    git_hooks(ctx, name, cmd)?;
    if let Some(script) = script_of(&lower_base(name), cmd)
        && let Some(content) = written_file(ctx, &script).cloned()
    {
        return match content {
            Some(table) if lower_base(name) == "crontab" => code(
                ctx,
                name,
                &cron_table(&Arg::literal(table), false),
                Dialect::Posix,
            ),
            Some(text) => text_in(ctx, &text, Dialect::Posix),
            None => Err(Unknown(format!(
                "`{name}` runs {script}, which the command wrote with text not known here"
            ))),
        };
    }
    match unwrap(ctx.catalog, &cmd.words, &cmd.stdin) {
        Next::No => {}
        next => return wrapped(ctx, cmd, name, next, dialect),
    }
    let program = ctx.catalog.program_in(name, Some(dialect)).cloned();
    if dialect == Dialect::PowerShell {
        // Script blocks handed to other commands (`ForEach-Object { … }`, `foreach (…) { … }`)
        // run here; those of the remoting and VM cmdlets are judged as remote commands.
        let remote_blocks = program
            .as_ref()
            .is_some_and(|p| matches!(p.grammar, Grammar::PsRemoting | Grammar::PsVm));
        if !remote_blocks {
            // `… | ForEach-Object { $_.Stop() }`: `$_` is each object piped in.
            flow::each_item(ctx, cmd, |ctx| {
                cmd.words[1..]
                    .iter()
                    .filter(|a| a.raw.starts_with('{'))
                    .filter_map(|block| block.value.as_deref())
                    .try_for_each(|inner| text_in(ctx, inner, Dialect::PowerShell))
            })?;
        }
    }
    let Some(mut program) = program else {
        if dialect == Dialect::PowerShell
            && let Some(next) = cmdlets::start_process(name, &cmd.words[1..])
        {
            return code(ctx, name, &next, Dialect::Posix);
        }
        // `f() { …; }; f`: the body was judged where the text defines it.
        if dialect == Dialect::Posix && ctx.walk.functions.iter().any(|f| f == name) {
            return Ok(());
        }
        return unread_program(ctx, name, cmd);
    };
    // A fleet entry of several programs (`pskill`, `psshutdown`) speaks of the one run: the
    // fleet grammar names its program by the entry's first name.
    if program.grammar == Grammar::Fleet {
        let base = lower_base(name);
        let base = base.strip_suffix(".exe").unwrap_or(&base);
        if let Some(at) = program
            .names
            .iter()
            .position(|n| n.eq_ignore_ascii_case(base))
        {
            program.names.swap(0, at);
        }
    }
    read(ctx, &program, name, cmd)
}

/// PowerShell's ways to run what no program name says: `& { … }` and `. { … }` run the block
/// here; `& ('Restart-' + 'Computer') …` and `. ('s','s','h' -join '') …` run the name built
/// from literals.
fn powershell_call(ctx: &mut Ctx<'_>, cmd: &Cmd, first: &Arg) -> Option<Result<(), Unknown>> {
    let block = if first.raw.starts_with('{') {
        Some(first)
    } else if first.raw == "." || first.raw == "&" {
        cmd.words.get(1).filter(|b| b.raw.starts_with('{'))
    } else {
        None
    };
    if let Some(block) = block {
        return Some(code(ctx, "&", block, Dialect::PowerShell));
    }
    if cmd.call
        && first.value.is_none()
        && let Some(name) = dotnet::literal_string(&first.raw)
    {
        let mut built = cmd.clone();
        built.words[0] = Arg::literal(name);
        return Some(command(ctx, &built, Dialect::PowerShell));
    }
    None
}

/// Which grammar reads a program the catalog names.
fn read(ctx: &mut Ctx<'_>, program: &Program, name: &str, cmd: &Cmd) -> Result<(), Unknown> {
    let args = &cmd.words[1..];
    match program.grammar {
        Grammar::Ssh => ssh::ssh(ctx, program, args, cmd),
        Grammar::Copy => copy::copy(ctx, program, name, args, cmd),
        Grammar::Ansible => ansible::ansible(ctx, program, args, cmd),
        Grammar::AnsiblePlaybook => ansible::ansible_playbook(ctx, program, args, cmd),
        Grammar::Winrs => windows::winrs(ctx, args),
        Grammar::Psexec => windows::psexec(ctx, program, args),
        Grammar::Smbclient => windows::smbclient(ctx, program, args, cmd),
        Grammar::Govc => hypervisors::govc(ctx, program, args),
        Grammar::Virsh => hypervisors::virsh(ctx, program, args),
        Grammar::PsRemoting => cmdlets::ps_remoting(ctx, program, name, args),
        Grammar::PsComputer => cmdlets::ps_computer(ctx, program, args, cmd),
        Grammar::PsVm => cmdlets::ps_vm(ctx, program, name, args, cmd),
        Grammar::PsObjects => cmdlets::ps_objects(ctx, program, args),
        Grammar::Session => session::session(ctx, program, name, cmd),
        Grammar::HostList => session::host_list(ctx, program, args, cmd),
        Grammar::Fleet => fleet::fleet(ctx, program, args, cmd),
        Grammar::Cloud => cloud::cloud(ctx, program, args, cmd),
        Grammar::Database => database::database(ctx, program, args, cmd),
        Grammar::UncWrite => fleet::unc_write(ctx, program, args, cmd),
        Grammar::Vmrun => vmrun::vmrun(ctx, program, args),
        Grammar::Xe => xe::xe(ctx, program, args),
        Grammar::Kamal => deploy::kamal(ctx, program, args),
        Grammar::Capistrano => deploy::capistrano(ctx, program, args, cmd),
    }
}

/// What a wrapper runs (`sudo …`, `bash -c …`, `… | sh`), read as the commands it is.
fn wrapped(
    ctx: &mut Ctx<'_>,
    cmd: &Cmd,
    name: &str,
    next: Next,
    dialect: Dialect,
) -> Result<(), Unknown> {
    match next {
        Next::No => Ok(()),
        // `python3 deploy.py web01`, `bash deploy.sh db01`: a script not read, naming a
        // protected machine.
        Next::Nothing => protected_net(ctx, name, cmd),
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
            inner_command(ctx, &inner, words, dialect)
        }
        Next::Commands(commands) => {
            for words in commands {
                inner_command(ctx, cmd, words, dialect)?;
            }
            Ok(())
        }
        Next::Text(text, inner_dialect) => {
            // `vagrant ssh db01 -c …`: the development VM's own name meets the net.
            if lower_base(name) == "vagrant" {
                let own: Vec<Arg> = cmd
                    .words
                    .iter()
                    .filter(|w| w.raw != text.raw)
                    .cloned()
                    .collect();
                protected_net(
                    ctx,
                    name,
                    &Cmd {
                        words: own,
                        ..Cmd::default()
                    },
                )?;
            }
            code(ctx, name, &text, inner_dialect)
        }
        Next::Texts(texts, inner_dialect) => {
            for text in texts {
                code(ctx, name, &text, inner_dialect)?;
            }
            Ok(())
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
            match &cmd.piped {
                // `echo '@reboot ssh db01 reboot' | crontab -`: the table's commands.
                Some(table) if cmd.stdin == Stdin::Pipe && lower_base(name) == "crontab" => {
                    code(ctx, name, &cron_table(table, false), consumer)
                }
                Some(text) if cmd.stdin == Stdin::Pipe => code(ctx, name, text, consumer),
                // A table built when the command runs (`crontab -l | grep -v x | crontab -`)
                // is, like a script not read, asked about when the command could reach
                // another machine.
                _ if lower_base(name) == "crontab" && !ctx.named() && !ctx.names_a_machine() => {
                    Ok(())
                }
                _ => Err(Unknown(reason)),
            }
        }
        Next::Opaque(reason) | Next::Ask(reason) => Err(Unknown(reason)),
        Next::Code(handed) => interpreted::interpreted(ctx, cmd, name, &handed),
    }
}

/// The script file a shell runs: `bash FILE`, `sh < FILE`, `source FILE`, `. FILE`; the
/// table `crontab FILE` installs and the job `at -f FILE` runs later.
fn script_of(base: &str, cmd: &Cmd) -> Option<String> {
    if base == "crontab" {
        let at = super::wrappers::skip_options(&cmd.words, 1, &["-u", "-c"]);
        return match (cmd.words.get(at), &cmd.stdin) {
            (Some(file), _) if file.text() != "-" => file.value.clone(),
            (_, Stdin::File(Some(path))) => Some(path.clone()),
            _ => None,
        };
    }
    // `at -f FILE now`: the job's commands.
    if matches!(base, "at" | "batch") {
        let at = cmd.words.iter().position(|w| w.text() == "-f")?;
        return cmd.words.get(at + 1).and_then(|w| w.value.clone());
    }
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
        if dialect == Dialect::Posix
            && let Some(host) = posix::socket_host(path)
        {
            if host.is_empty() || host.contains(['$', '`', '(']) {
                return Err(Unknown(format!(
                    "sends to `{path}`, whose machine is only known when it runs"
                )));
            }
            ctx.findings.push(Finding {
                program: String::from("redirection"),
                targets: vec![Target {
                    name: host.to_owned(),
                    kind: TargetKind::Host,
                }],
                unknown: None,
                remote: None,
                class: Class::Mutating,
                why: format!("sends data to {host} through {path}"),
            });
        }
        // `Get-Date > X:\log` after `New-PSDrive X … -Root \\win01\c$`: a write there.
        let mapped = (dialect == Dialect::PowerShell)
            .then(|| ctx.through_drive(&Arg::literal(path.clone())))
            .flatten();
        let path = mapped.map_or_else(|| path.clone(), |m| m.value.unwrap_or(m.raw));
        if dialect == Dialect::PowerShell && (path.starts_with("\\\\") || path.starts_with("//")) {
            let host = net::hosts_in(&path)
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
    let set = set_by(cmd).into_iter().filter_map(|(_, value)| value);
    for value in cmd
        .assignments
        .iter()
        .filter_map(|a| Some(a.split_once('=')?.1.to_owned()))
        .chain(set)
    {
        if let Some(host) = net::protected(&value, ctx.known) {
            ctx.exported = Some(host.to_owned());
        }
    }
    if let Some(drive) = cmdlets::mapped_drive(&cmd.words) {
        ctx.drives.push(drive);
    }
    if let Some(alias) = renamed_program(ctx.catalog, cmd) {
        ctx.aliases.push(alias);
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

/// A remote program put under another name: `ln [-s] SRC DEST`, `cp SRC DEST`, `install
/// SRC DEST` or `mv SRC DEST` whose source names one (`/usr/bin/ssh`, `$(which ssh)`). The
/// destination, without a leading `./`, and the program's name.
fn renamed_program(catalog: &ShellCatalog, cmd: &Cmd) -> Option<(String, String)> {
    let (first, rest) = cmd.words.split_first()?;
    if !matches!(
        lower_base(first.value.as_deref()?).as_str(),
        "ln" | "cp" | "install" | "mv"
    ) {
        return None;
    }
    let operands: Vec<&Arg> = rest.iter().filter(|a| !a.text().starts_with('-')).collect();
    let [source, .., destination] = operands.as_slice() else {
        return None;
    };
    let program = catalog.names_a_program(&source.raw)?;
    let destination = destination.value.as_deref()?;
    Some((
        destination.trim_start_matches("./").to_owned(),
        program.to_owned(),
    ))
}

/// `echo 'ssh web01 reboot' > .git/hooks/pre-commit && … && git commit -m x`: a git command
/// that fires hooks (commit, merge, push, checkout and the like) runs the hooks an earlier
/// command of the same command wrote, judged as the shell text they are; one written with
/// text not known here asks when the command could reach another machine.
fn git_hooks(ctx: &mut Ctx<'_>, name: &str, cmd: &Cmd) -> Result<(), Unknown> {
    const FIRING: &[&str] = &[
        "commit",
        "merge",
        "push",
        "checkout",
        "switch",
        "rebase",
        "am",
        "pull",
        "cherry-pick",
        "revert",
        "gc",
        "worktree",
        "clone",
        "fetch",
        "reset",
        "restore",
        "apply",
        "stash",
    ];
    if lower_base(name) != "git" || !cmd.words.iter().skip(1).any(|w| FIRING.contains(&w.text())) {
        return Ok(());
    }
    let hooks: Vec<(String, Option<String>)> = ctx
        .written
        .iter()
        .filter(|(path, _)| {
            let path = path.trim_matches(['"', '\'']);
            path.starts_with(".git/hooks/") || path.contains("/.git/hooks/")
        })
        .cloned()
        .collect();
    for (path, content) in hooks {
        match content {
            Some(text) => text_in(ctx, &text, Dialect::Posix)?,
            None if ctx.named() || ctx.names_a_machine() => {
                return Err(Unknown(format!(
                    "`git` runs the hook {path}, which the command wrote with text not known here"
                )));
            }
            None => {}
        }
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
            runners::Code::Unread(why) if ctx.named() || ctx.names_a_machine() => {
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
            clip(name),
            clip(&text.raw)
        ))),
    }
}

/// The command with every word that only expands variables the text binds (a literal `for`
/// list, a `NAME=value` assigned once) replaced by its value.
fn with_bound_values(ctx: &Ctx<'_>, cmd: &Cmd) -> Cmd {
    bind_values(cmd, &ctx.vars)
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

#[cfg(test)]
mod tests;
