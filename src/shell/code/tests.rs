//! The families, the forms code is handed in, and what a scan finds.

use proptest::strategy::Strategy as _;

use super::*;

fn words(command: &[&str]) -> Vec<Arg> {
    command
        .iter()
        .map(|w| Arg::literal((*w).to_owned()))
        .collect()
}

/// The code texts of `command` (split as the shell would), with `stdin`.
fn code_of(command: &[&str], stdin: &Stdin) -> Vec<String> {
    let args = words(command);
    let family = family(command[0]).expect("a family");
    handed(family, &args, stdin)
        .texts
        .iter()
        .map(|t| t.text().to_owned())
        .collect()
}

#[test]
fn versioned_names_are_the_family_and_look_alikes_are_not() {
    for (name, lang) in [
        ("python3.12", Lang::Python),
        ("pypy3", Lang::Python),
        ("perl5.36", Lang::Perl),
        ("ruby3.2", Lang::Ruby),
        ("php8.2", Lang::Php),
        ("node20", Lang::JavaScript),
        ("nodejs", Lang::JavaScript),
        ("lua5.4", Lang::Lua),
        ("luajit", Lang::Lua),
        ("tclsh8.6", Lang::Tcl),
        ("rscript", Lang::R),
        ("r", Lang::R),
        ("julia", Lang::Julia),
        ("elixir", Lang::Elixir),
        ("erl", Lang::Erlang),
        ("deno", Lang::JavaScript),
        ("bun", Lang::JavaScript),
        ("gdb", Lang::Gdb),
        ("sqlite3", Lang::Sqlite),
        ("emacs", Lang::Lisp),
        ("gawk", Lang::Awk),
        ("python.exe", Lang::Python),
    ] {
        assert_eq!(family(name).map(|f| f.lang), Some(lang), "{name}");
    }
    for name in [
        "r2",
        "pythonista",
        "perldoc",
        "node-gyp",
        "python3-config",
        "rustc",
        "rake",
    ] {
        assert!(family(name).is_none(), "{name}");
    }
}

#[test]
fn code_is_found_in_every_form() {
    let none = Stdin::Inherited;
    let cases: &[(&[&str], &str)] = &[
        (&["python3", "-c", "X"], "X"),
        (&["python3", "-cX"], "X"),
        (&["python3", "-Ic", "X"], "X"),
        (&["python3", "-W", "ignore", "-c", "X"], "X"),
        (&["perl", "-e", "X"], "X"),
        (&["perl", "-lne", "X", "file"], "X"),
        (&["perl", "-eX"], "X"),
        (&["perl", "-MIO::Socket::INET", "-e", "X"], "X"),
        (&["ruby", "-rsocket", "-e", "X"], "X"),
        (&["node", "--eval=X"], "X"),
        (&["node", "--eval", "X"], "X"),
        (&["node", "-pe", "X"], "X"),
        (&["php", "-r", "X"], "X"),
        (&["lua", "-eX"], "X"),
        (&["julia", "--eval", "X"], "X"),
        (&["r", "--vanilla", "-e", "X"], "X"),
        (&["elixir", "-e", "X"], "X"),
        (&["erl", "-noshell", "-eval", "X"], "X"),
        (&["deno", "eval", "--print", "X"], "X"),
        (&["gdb", "-batch", "-ex", "X"], "X"),
        (&["gdb", "--eval-command=X", "./app"], "X"),
        (&["emacs", "--batch", "--eval", "X"], "X"),
        (&["emacs", "--eval=X"], "X"),
        (&["osascript", "-e", "X"], "X"),
        (&["awk", "-F:", "X", "file"], "X"),
        (&["gawk", "-v", "a=1", "X"], "X"),
    ];
    for (command, code) in cases {
        assert_eq!(
            code_of(command, &none),
            vec![(*code).to_owned()],
            "{command:?}"
        );
    }
    assert_eq!(
        code_of(&["sqlite3", ":memory:", ".tables", "X"], &none),
        vec![".tables", "X"]
    );
}

#[test]
fn standard_input_is_code_only_when_no_script_or_code_is_named() {
    let body = Stdin::Text(Arg::literal(String::from("BODY")));
    assert_eq!(code_of(&["python3"], &body), vec!["BODY"]);
    assert_eq!(code_of(&["python3", "-"], &body), vec!["BODY"]);
    assert_eq!(code_of(&["tclsh8.6"], &body), vec!["BODY"]);
    // The script's or the code's data, not code.
    assert!(code_of(&["python3", "script.py"], &body).is_empty());
    assert!(code_of(&["python3", "-m", "json.tool"], &body).is_empty());
    assert_eq!(code_of(&["perl", "-ne", "X"], &body), vec!["X"]);
    let args = words(&["python3"]);
    let piped = handed(family("python3").expect("python"), &args, &Stdin::Pipe);
    assert!(piped.from_pipe && piped.texts.is_empty());
}

fn runs(lang: Lang, code: &str) -> Vec<Run> {
    scan(lang, code).runs
}

fn command(text: &str) -> Run {
    Run::Command(text.to_owned())
}

/// (language, code, the command it starts).
const STARTS: &[(Lang, &str, &str)] = &[
    (
        Lang::Python,
        "import os; os.system(\"ssh web01 reboot\")",
        "ssh web01 reboot",
    ),
    (
        Lang::Python,
        "import subprocess; subprocess.run(['ssh', 'web01', 'sudo reboot'], check=True)",
        "ssh web01 'sudo reboot'",
    ),
    (
        Lang::Python,
        "subprocess.check_output('ssh web01 uptime', shell=True)",
        "ssh web01 uptime",
    ),
    (
        Lang::Python,
        "os.execlp('ssh', 'ssh', 'web01', 'reboot')",
        "ssh web01 reboot",
    ),
    (
        Lang::Perl,
        "system(\"ssh web01 reboot\")",
        "ssh web01 reboot",
    ),
    (
        Lang::Perl,
        "exec \"ssh\", \"web01\", \"reboot\"",
        "ssh web01 reboot",
    ),
    (
        Lang::Perl,
        "my $x = qx{ssh web01 reboot};",
        "ssh web01 reboot",
    ),
    (
        Lang::Perl,
        "open(F, \"ssh web01 reboot |\")",
        "ssh web01 reboot",
    ),
    (Lang::Ruby, "`ssh web01 reboot`", "ssh web01 reboot"),
    (
        Lang::Ruby,
        "system 'ssh', 'web01', 'reboot'",
        "ssh web01 reboot",
    ),
    (Lang::Ruby, "%x(ssh web01 reboot)", "ssh web01 reboot"),
    (
        Lang::JavaScript,
        "require('child_process').spawn('ssh', ['web01', 'reboot'], {stdio: 'inherit'})",
        "ssh web01 reboot",
    ),
    (
        Lang::Php,
        "echo shell_exec('ssh web01 reboot');",
        "ssh web01 reboot",
    ),
    (
        Lang::Lua,
        "io.popen(\"ssh web01 reboot\", \"r\")",
        "ssh web01 reboot",
    ),
    (Lang::Tcl, "exec ssh web01 reboot", "ssh web01 reboot"),
    (
        Lang::R,
        "system2('ssh', c('web01', 'reboot'))",
        "ssh web01 reboot",
    ),
    (Lang::Julia, "run(`ssh web01 reboot`)", "ssh web01 reboot"),
    (
        Lang::Elixir,
        ":os.cmd('ssh web01 reboot')",
        "ssh web01 reboot",
    ),
    (
        Lang::Erlang,
        "os:cmd(\"ssh web01 reboot\")",
        "ssh web01 reboot",
    ),
    (
        Lang::Lisp,
        "(call-process \"ssh\" nil nil nil \"web01\" \"reboot\")",
        "ssh web01 reboot",
    ),
    (
        Lang::AppleScript,
        "do shell script \"ssh web01 reboot\"",
        "ssh web01 reboot",
    ),
    (Lang::Gdb, "shell ssh web01 reboot", "ssh web01 reboot"),
    (Lang::Gdb, "!ssh web01 reboot", "ssh web01 reboot"),
    (Lang::Sqlite, ".system ssh web01 reboot", "ssh web01 reboot"),
    (
        Lang::Sqlite,
        ".once '|ssh web01 tee /etc/motd'",
        "ssh web01 tee /etc/motd",
    ),
];

#[test]
fn the_commands_code_starts_are_read() {
    for (lang, code, want) in STARTS {
        assert_eq!(runs(*lang, code), vec![command(want)], "{lang:?} {code}");
    }
}

#[test]
fn code_built_when_it_runs_is_not_taken_for_a_command() {
    let cases: &[(Lang, &str)] = &[
        (Lang::Python, "os.system('ssh ' + host + ' reboot')"),
        (Lang::Python, "os.system(f'ssh {host} reboot')"),
        (Lang::Python, "os.system('ssh %s reboot' % host)"),
        (Lang::Python, "subprocess.run(['ssh', host, 'reboot'])"),
        (Lang::Python, "subprocess.run(argv)"),
        (Lang::Python, "__import__('subprocess').run(x)"),
        (Lang::Python, "exec(base64.b64decode('aW1wb3J0IG9z'))"),
        (Lang::Perl, "system(\"ssh $host reboot\")"),
        (Lang::Perl, "system $cmd"),
        (Lang::Ruby, "`ssh #{host} reboot`"),
        (
            Lang::JavaScript,
            "require('child_process').execSync(`ssh ${host} reboot`)",
        ),
        (Lang::Tcl, "exec ssh $host reboot"),
        (Lang::Lisp, "(shell-command cmd)"),
    ];
    for (lang, code) in cases {
        let found = runs(*lang, code);
        assert!(
            !found.is_empty() && found.iter().all(|r| matches!(r, Run::Dynamic(_))),
            "{lang:?} {code}: {found:?}"
        );
    }
}

#[test]
fn code_that_starts_nothing_runs_nothing() {
    let cases: &[(Lang, &str)] = &[
        (Lang::Python, "print(1)"),
        (
            Lang::Python,
            "import json,sys; print(json.load(sys.stdin)['x'])",
        ),
        (Lang::Python, "import os; print(os.getcwd())"),
        (Lang::Python, "# os.system('ssh web01 reboot')\nprint(2)"),
        (Lang::JavaScript, "console.log(process.version)"),
        (Lang::JavaScript, "console.log(/a/.exec('abc'))"),
        (Lang::Perl, "print if /x/"),
        (Lang::Python, "x = 'filesystem(1)'; print(x)"),
    ];
    for (lang, code) in cases {
        assert_eq!(runs(*lang, code), Vec::new(), "{lang:?} {code}");
    }
}

#[test]
fn nested_code_is_read_as_its_language() {
    assert_eq!(
        runs(
            Lang::Python,
            "exec(\"import os; os.system('ssh web01 reboot')\")"
        ),
        vec![Run::Code(
            Lang::Python,
            String::from("import os; os.system('ssh web01 reboot')")
        )]
    );
    assert_eq!(
        runs(Lang::Gdb, "python import os; os.system('x')"),
        vec![Run::Code(
            Lang::Python,
            String::from("import os; os.system('x')")
        )]
    );
}

#[test]
fn connections_and_the_machines_their_strings_name() {
    let cases: &[(Lang, &str, &str, &[&str])] = &[
        (
            Lang::Python,
            "import socket; s=socket.create_connection((\"10.0.0.11\",6379))",
            "socket",
            &["10.0.0.11"],
        ),
        (
            Lang::Python,
            "import pymysql; pymysql.connect(host=\"db01\").cursor().execute(\"DROP DATABASE app\")",
            "pymysql",
            &["db01"],
        ),
        (
            Lang::Python,
            "import pyodbc; pyodbc.connect('Driver=x;Server=db01;Database=app')",
            "pyodbc",
            &["db01"],
        ),
        (
            Lang::Python,
            "import requests; requests.post('http://web01:8080/restart')",
            "requests",
            &["web01"],
        ),
        (
            Lang::Perl,
            "use IO::Socket::INET; IO::Socket::INET->new(PeerAddr => 'db01:6379')",
            "io::socket",
            &["db01"],
        ),
        (
            Lang::Ruby,
            "require 'socket'; TCPSocket.new('10.0.0.21', 3389)",
            "tcpsocket",
            &["10.0.0.21"],
        ),
        (
            Lang::JavaScript,
            "require('net').connect(6379, '10.0.0.31')",
            "require('net')",
            &["10.0.0.31"],
        ),
        (
            Lang::Php,
            "$f = fsockopen('web01', 80);",
            "fsockopen",
            &["web01"],
        ),
        (
            Lang::Awk,
            "BEGIN { s=\"/inet/tcp/0/10.0.0.11/6379\"; print \"x\" |& s }",
            "/inet",
            &["10.0.0.11"],
        ),
        (
            Lang::Gdb,
            "target remote web01:1234",
            "target remote",
            &["web01"],
        ),
    ];
    for (lang, code, call, hosts) in cases {
        let found = scan(*lang, code);
        assert_eq!(found.reach, Some(Reach::Connect(call)), "{code}");
        for host in *hosts {
            assert!(
                found.hosts.iter().any(|h| h == host),
                "{code}: {:?}",
                found.hosts
            );
        }
    }
    let shell = scan(
        Lang::Python,
        "import paramiko; paramiko.SSHClient().connect('web01')",
    );
    assert_eq!(shell.reach, Some(Reach::RemoteShell("paramiko")));
    let tramp = scan(Lang::Lisp, "(find-file \"/ssh:admin@web01:/etc/hosts\")");
    assert_eq!(tramp.reach, Some(Reach::RemoteShell("/ssh:")));
    assert!(
        tramp.hosts.iter().any(|h| h == "web01"),
        "{:?}",
        tramp.hosts
    );
    // A command's machine is the command's: its string is not counted again.
    assert!(
        scan(Lang::Python, "os.system('ssh web01 uptime')")
            .hosts
            .is_empty()
    );
    assert!(scan(Lang::Python, "urlopen('https://pypi.org/simple')").names_a_host);
    assert!(!scan(Lang::Python, "import socket; socket.socket()").names_a_host);
}

#[test]
fn no_text_makes_a_scan_panic() {
    for lang in [
        Lang::Python,
        Lang::Perl,
        Lang::Ruby,
        Lang::JavaScript,
        Lang::Lisp,
        Lang::Tcl,
        Lang::Gdb,
        Lang::Sqlite,
        Lang::Awk,
    ] {
        for code in [
            "",
            "\"",
            "'''",
            "os.system(",
            "system \"é",
            "qx{",
            "%x(",
            "subprocess.run([\"a\", é",
            "`",
            "exec",
            "(call-process",
            "é'ü\"",
            "os.system(\"a\" + ",
            "c(",
            "\\",
        ] {
            let _ = scan(lang, code);
        }
    }
}

/// (command name, code option, code that reboots web01 over ssh, code that only prints).
const INTERPRETERS: &[(&str, &str, &str, &str)] = &[
    (
        "python",
        "-c",
        "import os; os.system(\"ssh web01 sudo reboot\")",
        "print(1)",
    ),
    (
        "pypy",
        "-c",
        "import os; os.system(\"ssh web01 sudo reboot\")",
        "print(2)",
    ),
    ("perl", "-e", "system(\"ssh web01 sudo reboot\")", "print 1"),
    ("ruby", "-e", "system(\"ssh web01 sudo reboot\")", "puts 1"),
    (
        "node",
        "-e",
        "require(\"child_process\").execSync(\"ssh web01 sudo reboot\")",
        "console.log(1)",
    ),
    ("php", "-r", "system(\"ssh web01 sudo reboot\");", "echo 1;"),
    (
        "lua",
        "-e",
        "os.execute(\"ssh web01 sudo reboot\")",
        "print(1)",
    ),
];

/// `text` quoted as one shell word: single quotes, double quotes, or ANSI-C quotes.
fn quoted(text: &str, how: u8) -> String {
    match how % 3 {
        0 => format!("'{}'", text.replace('\'', "'\\''")),
        1 => format!(
            "\"{}\"",
            text.replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('$', "\\$")
                .replace('`', "\\`")
        ),
        _ => format!("$'{}'", text.replace('\\', "\\\\").replace('\'', "\\'")),
    }
}

/// `name` handed `code` in one of the forms an agent writes.
fn handing(name: &str, option: &str, code: &str, form: u8, how: u8) -> String {
    let word = quoted(code, how);
    match form % 6 {
        0 => format!("{name} {option} {word}"),
        1 => format!("{name} {option}{word}"),
        2 => format!("{name} <<< {word}"),
        3 => format!("{name} - <<'EOF'\n{code}\nEOF"),
        4 => format!("echo {word} | {name}"),
        _ if name.starts_with("node") => format!("{name} --eval={word}"),
        _ => format!("/usr/bin/{name} {option} {word}"),
    }
}

proptest::proptest! {
    /// Any version of an interpreter, any form the code is handed in, any quoting: code
    /// that runs `ssh web01 sudo reboot` checkpoints web01, and code that prints decides
    /// nothing.
    #[test]
    fn interpreter_versions_forms_and_quoting(
        which in 0..INTERPRETERS.len(),
        version in proptest::option::of((1u8..40, proptest::option::of(0u8..40))),
        form in 0u8..6,
        how in 0u8..3,
    ) {
        use crate::inventory::Inventory;
        use crate::shell::{Dialect, ShellCatalog, Verdict, analyse};
        let (family, option, reboot, prints) = INTERPRETERS[which];
        let name = match version {
            None => family.to_owned(),
            Some((major, None)) => format!("{family}{major}"),
            Some((major, Some(minor))) => format!("{family}{major}.{minor}"),
        };
        let catalog = ShellCatalog::builtin().expect("catalog");
        let known = Inventory::of(["web01"]);
        let command = handing(&name, option, reboot, form, how);
        let verdict = analyse(&command, Dialect::Posix, &catalog, &known, None).verdict;
        proptest::prop_assert!(
            matches!(&verdict, Verdict::Mutating(t) if t.len() == 1 && t[0].name == "web01"),
            "{command}: {verdict:?}"
        );
        let command = handing(&name, option, prints, form, how);
        let verdict = analyse(&command, Dialect::Posix, &catalog, &known, None).verdict;
        proptest::prop_assert!(
            matches!(verdict, Verdict::Local | Verdict::ReadOnly),
            "{command}: {verdict:?}"
        );
    }
}

/// Pieces code is made of: quotes, brackets, escapes, the calls a scan looks for, and
/// characters of more than one byte.
const PIECES: &[&str] = &[
    "\"",
    "'",
    "`",
    "'''",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ";",
    "\n",
    "\\",
    " ",
    "+",
    ".",
    "=",
    "$",
    "#",
    "//",
    "--",
    "%",
    "qx{",
    "%x(",
    "os.system",
    "subprocess.run",
    "system",
    "exec",
    "eval",
    "execSync",
    "child_process",
    "call-process",
    "shell-command",
    "os:cmd",
    "do shell script",
    "shell ",
    "!",
    ".shell ",
    "/inet/tcp/0/",
    "ssh",
    "web01",
    "é",
    "ü",
    "\u{1F600}",
    "f\"",
    "${",
    "#{",
    "c(",
    "nil",
    "shell=True",
];

fn code_text() -> impl proptest::strategy::Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(PIECES), 0..24).prop_map(|p| p.concat())
}

proptest::proptest! {
    /// Whatever the text, a scan in any language ends without a panic, and so does finding
    /// the code in any words.
    #[test]
    fn scans_never_panic(code in code_text(), words in proptest::collection::vec(code_text(), 0..6)) {
        for lang in [
            Lang::Python, Lang::Perl, Lang::Ruby, Lang::JavaScript, Lang::Php, Lang::Lua,
            Lang::Tcl, Lang::R, Lang::Julia, Lang::Elixir, Lang::Erlang, Lang::Lisp,
            Lang::AppleScript, Lang::Gdb, Lang::Sqlite, Lang::Awk,
        ] {
            let _ = scan(lang, &code);
        }
        for family in FAMILIES {
            let mut args = vec![Arg::literal(String::from(family.names[0]))];
            args.extend(words.iter().map(|w| Arg::literal(w.clone())));
            let _ = handed(family, &args, &Stdin::Text(Arg::literal(code.clone())));
        }
    }
}
