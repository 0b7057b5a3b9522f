use super::*;

/// What the build compiled is the shipped TOML: the same checked catalog either way.
#[test]
fn the_compiled_catalog_is_its_source() {
    let compiled = ShellCatalog::builtin().expect("compiled shell catalog loads");
    let source = ShellCatalog::parse(BUILTIN.1, BUILTIN.0).expect("shell.toml parses");
    assert_eq!(format!("{compiled:?}"), format!("{source:?}"));
}

#[test]
fn the_shipped_catalog_loads() {
    let catalog = ShellCatalog::load(true, &[] as &[&Path]).expect("shell.toml loads");
    assert_eq!(
        catalog.program("/usr/bin/ssh").map(|p| p.grammar),
        Some(Grammar::Ssh)
    );
    assert_eq!(
        catalog.program("invoke-command").map(|p| p.grammar),
        Some(Grammar::PsRemoting)
    );
    assert!(catalog.program("git").is_none());
}

#[test]
fn a_user_file_replaces_a_program_by_name_and_adds_others() {
    let mut catalog = ShellCatalog::builtin().expect("shipped");
    catalog
        .extend(
            "[[program]]\nnames = [\"ssh\", \"mssh\"]\ngrammar = \"ssh\"\nvalue_options = [\"-p\"]\n",
            "user.toml",
        )
        .expect("user file loads");
    let ssh = catalog.program("ssh").expect("ssh");
    assert_eq!(ssh.origin, "user.toml");
    assert!(!ssh.takes_value("-i"));
    assert_eq!(
        catalog.program("mssh").map(|p| &p.origin),
        Some(&ssh.origin)
    );
    assert!(catalog.program("autossh").is_some(), "the other name stays");
}

#[test]
fn errors_name_the_file_and_the_entry() {
    let unknown_key = ShellCatalog::parse(
        "[[program]]\nnames = [\"ssh\"]\ngrammar = \"ssh\"\nhosts = []\n",
        "mine.toml",
    )
    .expect_err("unknown key");
    insta::assert_snapshot!(format!("{unknown_key:#}"), @r#"
    shell catalog mine.toml: TOML parse error at line 4, column 1
      |
    4 | hosts = []
      | ^^^^^
    unknown field `hosts`, expected one of `names`, `grammar`, `value_options`, `read_only`, `mutating`, `host_options`, `other_host_options`, `host_operand`, `host_env`, `other_host_env`, `mutating_options`, `without_host`, `windows_flags`, `request_items`, `dialect`, `scope`, `ask_actions`, `remote_command`, `exec`, `exec_kwargs`, `vm_options`, `vm_operand`, `method_options`
    "#);
    let bad_grammar = ShellCatalog::parse(
        "[[program]]\nnames = [\"x\"]\ngrammar = \"telnet\"\n",
        "g.toml",
    )
    .expect_err("unknown grammar");
    assert!(
        format!("{bad_grammar:#}").contains("shell catalog g.toml")
            && format!("{bad_grammar:#}").contains("telnet"),
        "{bad_grammar:#}"
    );
    let bad_option = ShellCatalog::parse(
        "[[program]]\nnames = [\"ssh\"]\ngrammar = \"ssh\"\nvalue_options = [\"p\"]\n",
        "o.toml",
    )
    .expect_err("not an option");
    insta::assert_snapshot!(format!("{bad_option:#}"), @r#"shell catalog o.toml: [[program]] #1 (ssh): value_options "p" is not an option (it must start with -)"#);
    let empty_rule = ShellCatalog::parse("[[remote.rule]]\ncommand = \"cat\"\n", "r.toml")
        .expect_err("rule without conditions");
    insta::assert_snapshot!(format!("{empty_rule:#}"), @r#"shell catalog r.toml: [[remote.rule]] #1 (command "cat"): a rule needs subcommands, unless, unless_short, unless_text, operands_max, only_options or action_at; list a command without conditions in [remote] read_only"#);
}

#[test]
fn the_fast_path_sees_through_quotes_and_escapes() {
    let catalog = ShellCatalog::builtin().expect("shipped");
    assert!(!catalog.mentions_a_program("cd /src && cargo test --workspace"));
    assert!(catalog.mentions_a_program("s\\sh web01 reboot"));
    assert!(catalog.mentions_a_program("'s'\"s\"h web01 reboot"));
    assert!(catalog.mentions_a_program("INVOKE-COMMAND -cn a {x}"));
}

/// The build's list of built-in program names is the catalog's: what tells a word that
/// may name a built-in program from one that cannot, without reading the catalog.
#[test]
fn the_compiled_names_are_the_catalogs() {
    let catalog = ShellCatalog::builtin().expect("shipped");
    let mut names: Vec<(String, String, Option<Dialect>)> = catalog
        .programs()
        .iter()
        .flat_map(|p| {
            p.names
                .iter()
                .map(|n| (n.to_ascii_lowercase(), n.to_lowercase(), p.dialect))
        })
        .collect();
    names.sort_by(|a, b| a.0.cmp(&b.0));
    let compiled: Vec<(String, String, Option<Dialect>)> = BUILTIN_NAMES
        .iter()
        .map(|(key, lower, dialect, _)| (key.text().to_owned(), lower.text().to_owned(), *dialect))
        .collect();
    assert_eq!(compiled, names);
}

/// Each part the build compiled is the whole catalog's: every name leads to its own
/// program, each program and rule read alone is the one read with the rest, and the
/// remote and Windows lists are the catalog's.
#[test]
fn each_compiled_part_is_the_whole_catalogs() {
    let whole = ShellCatalog::builtin().expect("shipped");
    let entries = whole.builtin_entries().expect("read");
    let parts = Lazy::new(COMPILED);
    let none = Entries::default();
    assert_eq!(parts.programs.len(), entries.programs.len());
    for (place, program) in entries.programs.iter().enumerate() {
        assert_eq!(parts.program(place, &none), Some(program));
    }
    for (key, _, _, place) in BUILTIN_NAMES {
        let key = key.text();
        assert!(
            entries.programs[place]
                .names
                .iter()
                .any(|n| n.eq_ignore_ascii_case(key)),
            "{key}"
        );
    }
    assert_eq!(parts.rules.len(), entries.remote_rules.len());
    for rule in &entries.remote_rules {
        assert_eq!(parts.rule(&rule.command, &none), Some(rule));
    }
    assert!(parts.rule("no-such-command", &none).is_none());
    let remote: BTreeSet<String> = COMPILED
        .remote_read_only
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(remote, entries.remote_read_only);
    let windows: Vec<&str> = COMPILED.windows_read_only.lines().collect();
    assert_eq!(windows, entries.windows_read_only);
    assert!(parts.error.get().is_none());
}

/// A command that names no built-in program is judged without reading the built-in
/// catalog; one that names a built-in program (or runs a remote command) reads it.
#[test]
fn only_a_command_naming_a_builtin_program_reads_the_builtin_catalog() {
    use crate::inventory::Inventory;
    use crate::shell::{Verdict, analyse};
    let local: &[(Dialect, &str)] = &[
        (
            Dialect::Posix,
            "cd /home/dev/src/rewind && RUST_BACKTRACE=1 cargo test --locked --workspace --all-features -- --test-threads=2 shell:: 2>&1 | tail -n 40 && git status --short && git diff --stat",
        ),
        (Dialect::Posix, "make -j2 && ./run.sh --fast > out.log"),
        (
            Dialect::PowerShell,
            "Get-ChildItem -Recurse | Select-Object -First 5",
        ),
    ];
    for (dialect, command) in local {
        let catalog = ShellCatalog::load(true, &[] as &[&Path]).expect("loads");
        let analysis = analyse(command, *dialect, &catalog, &Inventory::default(), None);
        assert_eq!(analysis.verdict, Verdict::Local, "{command}");
        assert!(
            !catalog.builtin_is_read(),
            "{command} read the built-in catalog"
        );
    }
    let remote: &[(Dialect, &str, Verdict)] = &[
        (Dialect::Posix, "ssh web01 uptime", Verdict::ReadOnly),
        (
            Dialect::Posix,
            "cd /src && /usr/bin/SSH.exe web01 uptime",
            Verdict::ReadOnly,
        ),
        (
            Dialect::PowerShell,
            "icm web01 { Get-Process }",
            Verdict::ReadOnly,
        ),
    ];
    for (dialect, command, verdict) in remote {
        let catalog = ShellCatalog::load(true, &[] as &[&Path]).expect("loads");
        let analysis = analyse(command, *dialect, &catalog, &Inventory::default(), None);
        assert_eq!(&analysis.verdict, verdict, "{command}");
        assert!(catalog.builtin_is_read(), "{command}");
    }
    let catalog = ShellCatalog::load(true, &[] as &[&Path]).expect("loads");
    let analysis = analyse(
        "ssh web01 reboot",
        Dialect::Posix,
        &catalog,
        &Inventory::default(),
        None,
    );
    assert!(
        matches!(&analysis.verdict, Verdict::Mutating(t) if t.iter().map(|t| t.name.as_str()).eq(["web01"])),
        "{:?}",
        analysis.verdict
    );
    // `cp` is a built-in program in PowerShell text only: a POSIX `cp` does not read it.
    let catalog = ShellCatalog::load(true, &[] as &[&Path]).expect("loads");
    assert!(catalog.program("cp").is_none());
    assert!(!catalog.builtin_is_read());
    assert!(
        catalog
            .program_in("cp", Some(Dialect::PowerShell))
            .is_some()
    );
    assert!(catalog.builtin_is_read());
}

/// User files over a built-in catalog read later are the same catalog as all of them read
/// in order at once: replaced names and rules, added lists, the fast path's names.
#[test]
fn user_files_over_the_lazy_builtin_catalog_are_the_catalog_read_at_once() {
    let files = [
        (
            "a.toml",
            "[[program]]\nnames = [\"SSH\", \"mssh\"]\ngrammar = \"ssh\"\ndialect = \"powershell\"\n\n[[program]]\nnames = [\"deployer\"]\ngrammar = \"ssh\"\n\n[remote]\nread_only = [\"mytool\"]\n\n[[remote.rule]]\ncommand = \"date\"\noperands_max = 0\n\n[windows]\nread_only = [\"Get-Mine\"]\n",
        ),
        (
            "b.toml",
            "[[program]]\nnames = [\"mssh\"]\ngrammar = \"session\"\n",
        ),
    ];
    let mut at_once = ShellCatalog::parse(BUILTIN.1, BUILTIN.0).expect("shell.toml");
    let mut before = ShellCatalog::load(true, &[] as &[&Path]).expect("loads");
    let mut after = ShellCatalog::builtin().expect("shipped");
    for (origin, text) in files {
        at_once.extend(text, origin).expect("user file");
        before.extend(text, origin).expect("user file");
        after.extend(text, origin).expect("user file");
    }
    // Asked before the built-in catalog is read.
    assert!(!before.mentions_a_program("ssh web01 reboot"));
    assert!(before.mentions_a_program("mssh web01"));
    assert!(before.program("mssh").is_some());
    assert_eq!(
        before.remote_rule("date").map(|r| r.operands_max),
        Some(Some(0))
    );
    assert!(!before.builtin_is_read());
    // `ssh` is now a PowerShell program alone: POSIX text names none.
    assert!(before.program("ssh").is_none());
    assert!(
        before
            .program_in("ssh", Some(Dialect::PowerShell))
            .is_some()
    );
    assert_eq!(format!("{before:?}"), format!("{at_once:?}"));
    assert_eq!(format!("{after:?}"), format!("{at_once:?}"));
    assert!(before.program("autossh").is_some());
    assert!(before.remote_read_only("mytool") && before.remote_read_only("cat"));
    assert!(before.windows_read_only("get-mine") && before.windows_read_only("Get-Process"));
    // Every lookup through the parts finds what the catalog read at once finds, whether
    // the parts were read before the user files came or after.
    let mut words: Vec<String> = BUILTIN_NAMES
        .iter()
        .map(|(key, ..)| key.text().to_owned())
        .collect();
    words.extend(at_once.user.remote_rules.iter().map(|r| r.command.clone()));
    words.extend(at_once.user.remote_read_only.iter().cloned());
    words.extend(at_once.user.windows_read_only.iter().cloned());
    words.extend(["SSH", "ssh.exe", "/usr/bin/SSH.EXE", "mssh", "nothing"].map(String::from));
    let dialects = [None, Some(Dialect::Posix), Some(Dialect::PowerShell)];
    let mut read_first = ShellCatalog::load(true, &[] as &[&Path]).expect("loads");
    for word in &words {
        for dialect in dialects {
            read_first.program_in(word, dialect);
        }
        read_first.remote_rule(word);
    }
    let mut fresh = ShellCatalog::load(true, &[] as &[&Path]).expect("loads");
    for (origin, text) in files {
        read_first.extend(text, origin).expect("user file");
        fresh.extend(text, origin).expect("user file");
    }
    for (lazy, word) in [&read_first, &fresh]
        .into_iter()
        .flat_map(|lazy| words.iter().map(move |word| (lazy, word)))
    {
        for dialect in dialects {
            assert_eq!(
                format!("{:?}", lazy.program_in(word, dialect)),
                format!("{:?}", at_once.program_in(word, dialect)),
                "{word} {dialect:?}"
            );
        }
        assert_eq!(lazy.remote_rule(word), at_once.remote_rule(word), "{word}");
        assert_eq!(
            lazy.remote_read_only(word),
            at_once.remote_read_only(word),
            "{word}"
        );
        assert_eq!(
            lazy.windows_read_only(word),
            at_once.windows_read_only(word),
            "{word}"
        );
        assert!(lazy.builtin_error().is_ok());
    }
}

/// A compiled built-in catalog met broken on first use (it never is, see above) panics
/// nowhere: lookups find nothing and the error is the one loading it gave before.
#[test]
fn a_broken_builtin_catalog_is_an_error_not_a_panic() {
    // Every program and rule the build compiled, read as one without a grammar or
    // conditions.
    let program = "{\"names\": [\"ssh\"]}\n";
    let places = BUILTIN_PROGRAM_AT.len() - 1;
    let program_at: Vec<usize> = (0..=places).map(|i| i * program.len()).collect();
    let rule = "{\"command\": \"date\"}";
    let broken = Compiled {
        json: "{\"program\": [{\"names\": [\"ssh\"]}]}",
        programs: program.repeat(places).leak(),
        program_at: program_at.leak(),
        rules: format!("date\t{}\t{rule}\n", rule.len()).leak(),
        rule_count: 1,
        remote_read_only: "",
        windows_read_only: "",
    };
    let catalog = ShellCatalog {
        builtin: Some(Lazy::new(broken)),
        ..ShellCatalog::default()
    };
    assert!(catalog.builtin_error().is_ok(), "not read yet");
    assert!(catalog.program("git").is_none());
    assert!(
        catalog.builtin_error().is_ok(),
        "`git` names no built-in program"
    );
    assert!(catalog.program("ssh").is_none());
    let error = catalog.builtin_error().expect_err("read and broken");
    insta::assert_snapshot!(format!("{error:#}"), @"shell catalog builtin:shell.toml: [[program]] #1 (as compiled): missing field `grammar` at line 1 column 18");
    assert!(!catalog.remote_read_only("cat"));
    assert!(!catalog.windows_read_only("Get-Process"));
    let catalog = ShellCatalog {
        builtin: Some(Lazy::new(broken)),
        ..ShellCatalog::default()
    };
    assert!(catalog.remote_rule("date").is_none());
    let error = catalog.builtin_error().expect_err("read and broken");
    insta::assert_snapshot!(format!("{error:#}"), @r#"shell catalog builtin:shell.toml: [[remote.rule]] #1 (command "date"): a rule needs subcommands, unless, unless_short, unless_text, operands_max, only_options or action_at; list a command without conditions in [remote] read_only"#);
    assert!(catalog.programs().is_empty());
    let error = catalog.builtin_error().expect_err("read and broken");
    insta::assert_snapshot!(format!("{error:#}"), @"shell catalog builtin:shell.toml (as compiled): missing field `grammar` at line 1 column 31");
}

/// The fast path's look-up of names by the text's bytes finds what searching the text for
/// every name finds: whether there is one, and the first (longest where several start
/// at the same place), with and without a user file's names.
#[test]
fn the_fast_path_finds_what_a_search_for_every_name_finds() {
    let shipped = ShellCatalog::load(true, &[] as &[&Path]).expect("loads");
    let mut with_user = ShellCatalog::load(true, &[] as &[&Path]).expect("loads");
    with_user
        .extend(
            "[[program]]\nnames = [\"pssh\", \"ssh\"]\ngrammar = \"ssh\"\ndialect = \"powershell\"\n\n[[program]]\nnames = [\"Über-Tool\"]\ngrammar = \"ssh\"\n",
            "u.toml",
        )
        .expect("user file");
    let texts = [
        "",
        "cd /src && cargo test --workspace",
        "echo parallel-ssh; pssh -h hosts uptime",
        "x=1; ÜBER-TOOL web01 && s\\sh web01",
        "ls ~/.ssh && dbclient web01",
        "CURL https://web01/ | AWS ec2 reboot-instances",
        "ss$(true)h web01 reboot",
        "é€ssh",
        "x sc",
        "ssh",
        "exec $SHELL -l; pytest --capture=no",
        "echo \"unterminated && git status",
        "c$(true)ap production deploy",
        "echo exec; x$(true)e vm-start vm=web01",
        "& (\"ss\" + \"h\") web01",
    ];
    for catalog in [&shipped, &with_user] {
        let names: Vec<&str> = catalog.mentions().collect();
        let search = |folded: &str, accept: &dyn Fn(usize, usize) -> bool| {
            names
                .iter()
                .filter_map(|name| {
                    folded
                        .match_indices(name)
                        .find(|(at, _)| accept(*at, name.len()))
                        .map(|(at, _)| (at, *name))
                })
                .min_by_key(|(at, name)| (*at, usize::MAX - name.len()))
                .map(|(_, name)| name.to_owned())
        };
        for text in texts {
            let words = folded(text);
            let as_word = |at, len| is_word_at(&words, at, len);
            assert_eq!(
                catalog.first_mention(text).map(str::to_owned),
                search(&words, &as_word),
                "{text}"
            );
            assert_eq!(
                catalog.mentions_a_program(text),
                search(&words, &as_word).is_some()
            );
            let (stripped, origin) = without_expansions(text);
            let chars: Vec<char> = text.chars().collect();
            assert_eq!(
                catalog.may_hide_a_program(text),
                search(&stripped, &|at, len| hidden_or_a_word(
                    &chars, &origin, at, len
                ))
                .is_some(),
                "{text}"
            );
        }

        assert!(!catalog.builtin_is_read());
    }
    // Names inside other words are none; names split by what the shell removes are.
    assert!(!shipped.may_hide_a_program("exec $SHELL -l; pytest --capture=no"));
    assert!(!shipped.may_hide_a_program("echo \"unterminated && git status"));
    assert!(shipped.may_hide_a_program("c$(true)ap production deploy"));
    assert!(shipped.may_hide_a_program("echo exec; x$(true)e vm-start vm=web01"));
    assert!(shipped.may_hide_a_program("& (\"ss\" + \"h\") web01"));
    assert!(shipped.may_hide_a_program("IFS=x; c=sshxweb01xreboot; $c"));
    assert_eq!(
        with_user.first_mention("echo parallel-ssh; pssh x"),
        Some("parallel-ssh")
    );
    assert_eq!(with_user.first_mention("pssh x; ssh y"), None);
    assert_eq!(
        with_user.first_mention("run über-tool now"),
        Some("über-tool")
    );
}
