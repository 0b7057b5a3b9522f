//! Compiles the shipped catalogs (`catalogs/*.toml`) for the hook: each becomes
//! `$OUT_DIR/catalogs/<name>.json`, the same document as JSON (which the hook reads several
//! times faster than TOML on every tool call), and `<name>.servers`, the server names and
//! patterns it spells out, each once, one a line (to tell which files a call's server needs
//! without reading any), and `<name>.entries`, an index of its entries by server and tool
//! pattern (see `entry_index`). The TOML files stay the source, shown and linted as they are;
//! a test holds each compiled file equal to its source. The shell catalog also gets
//! `shell.names.rs`, its program names (see `shell_names`). An optimised build for Linux links
//! `rewind-hook` with its code layout (see `hook_layout`).

use std::path::Path;

fn main() {
    hook_layout();
    let sources = Path::new("catalogs");
    let out = Path::new(&std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("catalogs");
    std::fs::create_dir_all(&out).expect("OUT_DIR is writable");
    println!("cargo:rerun-if-changed=catalogs");
    let mut names: Vec<_> = std::fs::read_dir(sources)
        .expect("catalogs/ is readable")
        .map(|entry| entry.expect("catalogs/ is readable").path())
        .filter(|path| path.extension().is_some_and(|e| e == "toml"))
        .collect();
    names.sort();
    for path in names {
        println!("cargo:rerun-if-changed={}", path.display());
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let document: toml::Table =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let json =
            serde_json::to_string(&document).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let stem = path.file_stem().expect("a file name");
        let mut servers = String::new();
        for (section, key) in [
            ("mutating", "server"),
            ("read_only", "server"),
            ("server", "name"),
        ] {
            let tables = document.get(section).and_then(toml::Value::as_array);
            for table in tables.into_iter().flatten() {
                if let Some(name) = table.get(key).and_then(toml::Value::as_str)
                    && !servers.lines().any(|listed| listed == name)
                {
                    servers.push_str(name);
                    servers.push('\n');
                }
            }
        }
        let write = |extension: &str, bytes: &str| {
            let target = out.join(stem).with_extension(extension);
            std::fs::write(&target, bytes).unwrap_or_else(|e| panic!("{}: {e}", target.display()));
        };
        write("json", &json);
        write("servers", &servers);
        write("entries", &entry_index(&document));
        if stem == "shell" {
            write("names.rs", &shell_names(&document));
        }
    }
}

/// Hands the linker `src/bin/rewind-hook.ld` for `rewind-hook` in an optimised build for
/// Linux: the functions the hook runs on its common calls go first in `.text`, together, so
/// that a call faults in a few windows of code instead of most of the binary's (the script
/// says how it is made). Both linkers a Linux build uses read it (lld puts them at the start
/// of its one `.text`; GNU ld makes them a second `.text`); a debug build, where the cost does
/// not matter, links as it would without it.
fn hook_layout() {
    const SCRIPT: &str = "src/bin/rewind-hook.ld";
    println!("cargo:rerun-if-changed={SCRIPT}");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("PROFILE") != "release" {
        return;
    }
    let script = Path::new(&var("CARGO_MANIFEST_DIR")).join(SCRIPT);
    // `-Xlinker` passes the argument whole, whatever the path holds (`-Wl,` splits at commas).
    println!("cargo:rustc-link-arg-bin=rewind-hook=-Xlinker");
    println!(
        "cargo:rustc-link-arg-bin=rewind-hook=--script={}",
        script.display()
    );
}

/// `<name>.entries`: each `[[mutating]]` then each `[[read_only]]` entry on a line of its own,
/// as `<section>\t<server pattern>\t<tool pattern>\t<length>\t<the entry as JSON>`, so that
/// the hook deserializes only the entries whose patterns match a call's server and tool, and
/// steps over the others' JSON by its length (in bytes) instead of reading it. A file the
/// index cannot stand for line by line (a `[[server]]` binding, which may read a file, or a
/// server or tool that is not a plain word) is the single line `whole`: the hook then reads
/// that file whole.
fn entry_index(document: &toml::Table) -> String {
    const WHOLE: &str = "whole\n";
    if document.contains_key("server") {
        return String::from(WHOLE);
    }
    let mut index = String::new();
    for section in ["mutating", "read_only"] {
        let Some(value) = document.get(section) else {
            continue;
        };
        let Some(entries) = value.as_array() else {
            return String::from(WHOLE);
        };
        for entry in entries {
            let word = |key: &str| {
                entry
                    .get(key)
                    .and_then(toml::Value::as_str)
                    .filter(|word| !word.is_empty() && !word.contains(char::is_whitespace))
            };
            let (Some(server), Some(tool)) = (word("server"), word("tool")) else {
                return String::from(WHOLE);
            };
            let json = serde_json::to_string(entry).expect("a TOML value is JSON");
            let length = json.len().to_string();
            for part in [
                section, "\t", server, "\t", tool, "\t", &length, "\t", &json, "\n",
            ] {
                index.push_str(part);
            }
        }
    }
    index
}

/// The shell catalog's program names as Rust: `BUILTIN_NAMES`, `(key, lower, dialect)` sorted
/// by `key` (the name ASCII-lower-cased, as a command is matched to it; `lower` is the name
/// lower-cased, as a text is searched for it; `dialect` is the one its program is kept to),
/// and `BUILTIN_MENTIONS`, `(lower, key)` of the names kept to no dialect, sorted by `lower`:
/// the hook tells whether a word or a text can name a built-in program without reading the
/// catalog. Anything the catalog's own checks would refuse is kept as it is, to be met by
/// those checks when the catalog is read; a dialect this file does not know counts as none.
fn shell_names(document: &toml::Table) -> String {
    let programs = document.get("program").and_then(toml::Value::as_array);
    let mut names: Vec<(String, String, &str)> = Vec::new();
    for program in programs.into_iter().flatten() {
        let dialect = match program.get("dialect").and_then(toml::Value::as_str) {
            Some("posix") => "Some(Dialect::Posix)",
            Some("powershell") => "Some(Dialect::PowerShell)",
            _ => "None",
        };
        let listed = program.get("names").and_then(toml::Value::as_array);
        for name in listed.into_iter().flatten().filter_map(toml::Value::as_str) {
            names.push((name.to_ascii_lowercase(), name.to_lowercase(), dialect));
        }
    }
    names.sort();
    let mut mentions: Vec<(&String, &String)> = names
        .iter()
        .filter(|(_, _, dialect)| *dialect == "None")
        .map(|(key, lower, _)| (lower, key))
        .collect();
    mentions.sort();
    let names = names
        .iter()
        .map(|(key, lower, dialect)| format!("    ({key:?}, {lower:?}, {dialect}),\n"));
    let mentions = mentions
        .iter()
        .map(|(lower, key)| format!("    ({lower:?}, {key:?}),\n"));
    format!(
        "const BUILTIN_NAMES: &[(&str, &str, Option<Dialect>)] = &[\n{}];\n\
         const BUILTIN_MENTIONS: &[(&str, &str)] = &[\n{}];\n",
        names.collect::<String>(),
        mentions.collect::<String>()
    )
}
