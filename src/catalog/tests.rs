use super::*;
use serde_json::json;

fn builtin() -> Catalog {
    Catalog::load(true, &[] as &[&Path]).expect("shipped catalogs load")
}

#[test]
fn splits_mcp_names_with_and_without_the_host_hint() {
    assert_eq!(
        ToolName::parse("mcp__ssh__exec", None),
        ToolName::Mcp {
            server: "ssh".into(),
            tool: "exec".into()
        }
    );
    assert_eq!(
        ToolName::parse("mcp__a__b__run", Some("a__b")),
        ToolName::Mcp {
            server: "a__b".into(),
            tool: "run".into()
        }
    );
    assert_eq!(ToolName::parse("Read", None), ToolName::Host("Read".into()));
}

#[test]
fn globs() {
    assert!(glob_match("write_*", "write_file"));
    assert!(glob_match("*", "anything"));
    assert!(glob_match("r?n", "run"));
    assert!(!glob_match("write_*", "read_file"));
    assert!(!glob_match("exec", "exec2"));
    assert!(glob_match("*_file", "put_file"));
    // A pattern against another pattern's text (lint compares entries this way).
    assert!(glob_match("*", "*command*"));
    assert!(glob_match("run*", "run*"));
}

/// The plain backtracking matcher over collected characters, as it stood before matching
/// went character by character: the reference the iterator matcher must agree with.
fn reference_glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

fn reference_normalise(name: &str) -> String {
    name.chars().map(normalise_server_char).collect()
}

proptest::proptest! {
    /// Globs, server globs and server equality agree with matching on collected strings,
    /// over names made of the characters that matter (wildcards, separators, case, é).
    #[test]
    fn matching_without_buffers_agrees_with_the_reference(
        pattern in "[ab*?_.é-]{0,8}",
        text in "[abAB*?_.é-]{0,10}",
    ) {
        proptest::prop_assert_eq!(glob_match(&pattern, &text), reference_glob(&pattern, &text));
        proptest::prop_assert_eq!(
            server_match(&pattern, &text),
            reference_glob(&reference_normalise(&pattern), &reference_normalise(&text))
        );
        proptest::prop_assert_eq!(
            same_server(&pattern, &text),
            reference_normalise(&pattern) == reference_normalise(&text)
        );
    }
}

#[test]
fn shipped_catalogs_classify_common_shapes() {
    let cat = builtin();
    let exec = ToolName::parse("mcp__ssh__exec", None);
    let Classification::Mutating { targets, .. } =
        cat.classify(&exec, &json!({"host": "jp-ubuntu", "command": "reboot"}))
    else {
        panic!("ssh exec is mutating");
    };
    assert_eq!(
        targets,
        Targets::exact([String::from("jp-ubuntu")], "`host`")
    );
    assert!(matches!(
        cat.classify(&ToolName::parse("mcp__ssh__read_file", None), &json!({})),
        Classification::ReadOnly(_)
    ));
    assert!(matches!(
        cat.classify(
            &ToolName::parse("mcp__winrm__run_command", None),
            &json!({"computer_name": "win2019-1"})
        ),
        Classification::Mutating {
            targets: Targets::Exact(_),
            ..
        }
    ));
    assert_eq!(
        cat.classify(&ToolName::parse("Edit", None), &json!({})),
        Classification::Local
    );
    assert_eq!(
        cat.classify(&ToolName::parse("mcp__weather__forecast", None), &json!({})),
        Classification::Unlisted
    );
}

#[test]
fn later_entries_win_and_pointers_reach_nested_arguments() {
    let mut cat = Catalog::parse(
        "[[mutating]]\nserver = \"*\"\ntool = \"write_*\"\nvm_arg = [\"/target/host\", \"host\"]\n",
        "a.toml",
    )
    .expect("a");
    cat.entries.extend(
        Catalog::parse(
            "[[read_only]]\nserver = \"fs\"\ntool = \"write_log\"\n",
            "b.toml",
        )
        .expect("b")
        .entries,
    );
    let log = cat.classify(&ToolName::parse("mcp__fs__write_log", None), &json!({}));
    assert!(
        matches!(log, Classification::ReadOnly(ref e) if e.origin == "b.toml"),
        "{log:?}"
    );
    let Classification::Mutating { targets, .. } = cat.classify(
        &ToolName::parse("mcp__fs__write_file", None),
        &json!({"target": {"host": "db01"}, "host": "web01"}),
    ) else {
        panic!("mutating");
    };
    let Targets::Exact(refs) = targets else {
        panic!("exact targets");
    };
    let named: Vec<(&str, &str)> = refs
        .iter()
        .map(|r| (r.reference.as_str(), r.source.as_str()))
        .collect();
    assert_eq!(named, [("db01", "`/target/host`"), ("web01", "`host`")]);
}

#[test]
fn within_a_file_the_most_specific_entry_wins_and_ties_go_to_mutating() {
    let cat = Catalog::parse(
        r#"
        [[mutating]]
        server = "vm*"
        tool = "restart_*"
        vm_arg = ["vm"]

        [[read_only]]
        server = "vm*"
        tool = "*"

        [[read_only]]
        server = "vm*"
        tool = "restart_status"

        [[read_only]]
        server = "ops"
        tool = "*_status"

        [[mutating]]
        server = "ops"
        tool = "restart*"
        vm_arg = ["vm"]
        "#,
        "one.toml",
    )
    .expect("parses");
    let class = |name: &str| cat.classify(&ToolName::parse(name, None), &json!({"vm": "x"}));
    assert!(matches!(
        class("mcp__vmware__restart_vm"),
        Classification::Mutating { .. }
    ));
    assert!(matches!(
        class("mcp__vmware__list_vms"),
        Classification::ReadOnly(_)
    ));
    assert!(matches!(
        class("mcp__vmware__restart_status"),
        Classification::ReadOnly(_)
    ));
    assert!(
        matches!(
            class("mcp__ops__restart_status"),
            Classification::Mutating { .. }
        ),
        "a tie fails safe"
    );
}

#[test]
fn several_targets_are_seen_as_several() {
    let cat = builtin();
    let play = ToolName::parse("mcp__ansible__run_playbook", None);
    for input in [
        json!({"limit": "web01,db01"}),
        json!({"limit": "web01:db01"}),
        json!({"hosts": ["web01", "db01"]}),
    ] {
        let Classification::Mutating {
            targets: Targets::Exact(list),
            ..
        } = cat.classify(&play, &input)
        else {
            panic!("mutating with exact targets: {input}");
        };
        let refs: Vec<&str> = list.iter().map(|t| t.reference.as_str()).collect();
        assert_eq!(refs, ["web01", "db01"], "{input}");
    }
}

#[test]
fn mutating_call_without_the_vm_argument_has_no_vm() {
    let cat = builtin();
    let Classification::Mutating { targets, .. } = cat.classify(
        &ToolName::parse("mcp__ssh__exec", None),
        &json!({"command": "ls"}),
    ) else {
        panic!("mutating");
    };
    assert!(matches!(targets, Targets::Missing { .. }), "{targets:?}");
}

#[test]
fn bad_catalogs_are_loud_and_name_file_and_entry() {
    let cases = [
        (
            "[[mutating]]\nserver = \"ssh\"\ntool = \"exec\"\nvm_args = [\"host\"]\n",
            "unknown field `vm_args`",
        ),
        (
            "[[mutating]]\nserver = \"ssh\"\ntool = \"exec\"\nvm_args = [\"host\"]\n",
            "did you mean `vm_arg`?",
        ),
        (
            "[[mutating]]\nserver = \"ssh\"\ntool = \"exec\"\n",
            "needs vm_arg",
        ),
        (
            "[[read_only]]\nserver = \"\"\ntool = \"x\"\n",
            "can never match",
        ),
        (
            "[[read_only]]\nserver = \"ssh\"\ntool = \"a b\"\n",
            "white space",
        ),
        (
            "[[read_only]]\nserver = \"ssh\"\ntool = \"x\"\n[[read_only]]\nserver = \"ssh\"\ntool = \"x\"\n",
            "listed twice",
        ),
        (
            "[[writes]]\nserver = \"ssh\"\ntool = \"x\"\n",
            "unknown field `writes`",
        ),
        ("[[mutating]\n", "catalog bad.toml"),
        (
            "[[server]]\nname = \"ssh-mcp\"\n",
            "say which VM the server is started for",
        ),
        (
            "[[server]]\nname = \"ssh-mcp\"\nssh_mcp_config = \"/nonexistent/ssh-mcp/config.toml\"\n",
            "cannot read ssh_mcp_config /nonexistent/ssh-mcp/config.toml",
        ),
    ];
    for (text, expected) in cases {
        let err = format!("{:#}", Catalog::parse(text, "bad.toml").expect_err(text));
        assert!(err.contains("bad.toml"), "{err}");
        assert!(err.contains(expected), "{text:?}: {err}");
    }
}

/// What the build compiled from each shipped catalog is its source: the same entries and
/// bindings as parsing the TOML, and exactly the server patterns the parser reads.
#[test]
fn each_compiled_catalog_is_its_source() {
    for shipped in BUILTIN {
        let name = shipped.origin;
        let parsed = Catalog::parse(shipped.toml, name).expect("shipped catalog parses");
        let (entries, servers) = shipped.load().expect("compiled catalog loads");
        assert_eq!(
            format!("{:?}", parsed.entries),
            format!("{entries:?}"),
            "{name}"
        );
        assert_eq!(
            format!("{:?}", parsed.servers),
            format!("{servers:?}"),
            "{name}"
        );
        let mut from_parser: Vec<&str> = parsed
            .entries()
            .iter()
            .map(|e| e.server.as_str())
            .chain(parsed.servers().iter().map(|b| b.name.as_str()))
            .collect();
        let mut compiled: Vec<&str> = shipped.servers().collect();
        from_parser.sort_unstable();
        from_parser.dedup();
        compiled.sort_unstable();
        compiled.dedup();
        assert_eq!(compiled, from_parser, "{name}");
    }
}

/// Loading only what a call needs classifies every shipped (server, tool) and
/// some unknown ones exactly as loading everything does, precedence included.
#[test]
fn loading_for_one_call_classifies_as_loading_all() {
    let none: &[&str] = &[];
    let all = Catalog::load(true, none).expect("all");
    let mut calls: Vec<(String, String)> = all
        .entries()
        .iter()
        .map(|e| (e.server.replace('*', "x"), e.tool.replace(['*', '?'], "x")))
        .collect();
    calls.extend(
        [
            ("ssh", "exec"),
            ("SSH_Manager", "ssh_execute"),
            ("weather", "forecast"),
            ("x", "y"),
        ]
        .map(|(a, b)| (a.to_owned(), b.to_owned())),
    );
    let input = json!({"host": "web01", "hosts": ["a", "b"], "command": "uptime"});
    for (server, tool) in calls {
        let name = ToolName::Mcp {
            server: server.clone(),
            tool: tool.clone(),
        };
        let some = Catalog::load_for(&name, true, none).expect("some");
        assert_eq!(
            format!("{:?}", some.classify(&name, &input)),
            format!("{:?}", all.classify(&name, &input)),
            "{server} {tool}"
        );
    }
    let host = Catalog::load_for(&ToolName::Host("Read".into()), true, none).expect("host tools");
    assert!(
        host.entries().is_empty(),
        "a host tool parses no shipped file"
    );
}

/// The build's index of each shipped catalog holds every entry of the compiled file, in
/// its order, with the server and tool patterns the entry has; a file it cannot stand for
/// is read whole (one that binds servers).
#[test]
fn each_index_holds_its_catalogs_entries_in_order() {
    for shipped in BUILTIN {
        let (entries, servers) = shipped.load().expect("compiled catalog loads");
        let Some(indexed) =
            load::indexed_entries(shipped.entries, shipped.origin, |_| true, |_| true)
        else {
            assert!(!servers.is_empty(), "{} is read whole", shipped.origin);
            continue;
        };
        let indexed = indexed.expect("every indexed entry reads");
        assert_eq!(
            format!("{indexed:?}"),
            format!("{entries:?}"),
            "{}",
            shipped.origin
        );
        for (line, entry) in shipped.entries.lines().zip(&entries) {
            let fields: Vec<&str> = line.splitn(5, '\t').collect();
            assert_eq!(fields[1..3], [entry.server.as_str(), entry.tool.as_str()]);
            assert_eq!(fields[3], fields[4].len().to_string(), "{line}");
        }
    }
}

/// Under user files (which load after the shipped ones and win), loading for one call
/// classifies, binds and opens sessions exactly as loading everything does, for every tool
/// every catalog names, under several spellings of each server (case, `_` for `-`) and for
/// tools and servers no catalog names.
#[test]
fn loading_for_one_call_under_user_files_decides_as_loading_all() {
    let dir = std::env::temp_dir().join(format!("rewind-load-for-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let user = dir.join("user.toml");
    std::fs::write(
        &user,
        "[[read_only]]\nserver = \"ssh*\"\ntool = \"exec\"\n\n\
         [[mutating]]\nserver = \"ssh\"\ntool = \"read_file\"\nvm_arg = [\"host\"]\n\n\
         [[mutating]]\nserver = \"ssh-mcp\"\ntool = \"open\"\nvm_arg = [\"host\"]\nopens_session = \"name\"\n\n\
         [[server]]\nname = \"SSH_Manager\"\nvm = \"db01\"\n",
    )
    .expect("user catalog");
    let files = [&user];
    let all = Catalog::load(true, &files).expect("all");
    let mut calls: Vec<(String, String)> = Vec::new();
    for entry in all.entries() {
        let server = entry.server.replace(['*', '?'], "x");
        let tool = entry.tool.replace(['*', '?'], "x");
        for spelling in [
            server.clone(),
            server.to_ascii_uppercase(),
            server.replace('-', "_"),
            format!("{server}2"),
        ] {
            calls.push((spelling, tool.clone()));
            calls.push((server.clone(), format!("{tool}_other")));
        }
    }
    for server in [
        "ssh",
        "SSH",
        "ssh_manager",
        "weather",
        "x",
        "rewind",
        "shell",
    ] {
        for tool in ["exec", "read_file", "open", "forecast", "run_command"] {
            calls.push((server.to_owned(), tool.to_owned()));
        }
    }
    let inputs = [
        json!({"host": "web01", "hosts": ["a", "b"], "command": "uptime", "name": "s1"}),
        json!({"sessionName": "s1", "command": "ls"}),
        json!({}),
    ];
    for (server, tool) in calls {
        let name = ToolName::Mcp {
            server: server.clone(),
            tool: tool.clone(),
        };
        let some = Catalog::load_for(&name, true, &files).expect("some");
        for input in &inputs {
            let (from_some, from_all) = (some.classify(&name, input), all.classify(&name, input));
            assert_eq!(
                format!("{from_some:?}"),
                format!("{from_all:?}"),
                "{server} {tool} {input}"
            );
            if let Classification::Mutating { entry, .. } | Classification::ReadOnly(entry) =
                &from_all
            {
                let recall = |_: &str| Some(String::from("remembered"));
                assert_eq!(
                    some.bound_target(&server, entry, input, &recall),
                    all.bound_target(&server, entry, input, &recall),
                    "{server} {tool} {input}"
                );
                assert_eq!(
                    some.session_opened(&server, entry, input),
                    all.session_opened(&server, entry, input),
                    "{server} {tool} {input}"
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).expect("temp dir removed");
}
