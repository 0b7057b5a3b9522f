//! Compiles the shipped catalogs (`catalogs/*.toml`) for the hook: each becomes
//! `$OUT_DIR/catalogs/<name>.json`, the same document as JSON (which the hook reads several
//! times faster than TOML on every tool call), and `<name>.servers`, the server names and
//! patterns it spells out, each once, one a line (to tell which files a call's server needs
//! without reading any), and `<name>.entries`, an index of its entries by server and tool
//! pattern (see `entry_index`). The TOML files stay the source, shown and linted as they are;
//! a test holds each compiled file equal to its source. The shell catalog also gets
//! `shell.parts.rs`, its program names and each part a lookup reads on its own (see
//! `shell_parts`).

use std::fmt::Write as _;
use std::path::Path;

fn main() {
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
            write("parts.rs", &shell_parts(&document));
        }
    }
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

/// The shell catalog's parts as Rust, so that the hook reads of it only what a command needs:
///
/// - `BUILTIN_NAMES`, `(key, lower, dialect, program)` sorted by `key` (the name
///   ASCII-lower-cased, as a command is matched to it; `lower` is the name lower-cased, as a
///   text is searched for it; `dialect` is the one its program is kept to; `program` is its
///   program's place in the file), and `BUILTIN_MENTIONS`, `(lower, key)` of the names kept
///   to no dialect, sorted by `lower`: whether a word or a text can name a built-in program is
///   told without reading any. The names are `Span`s of `NAME_TEXT`, which holds each text
///   once, so the tables hold no pointers;
/// - `BUILTIN_PROGRAMS`, each `[[program]]` as JSON, one a line, and `BUILTIN_PROGRAM_AT`, where
///   each starts (and, last, where the text ends);
/// - `BUILTIN_RULES`, each `[[remote.rule]]` as `<command>\t<length>\t<JSON>` a line, and
///   `BUILTIN_RULE_COUNT`;
/// - `BUILTIN_REMOTE_READ_ONLY` and `BUILTIN_WINDOWS_READ_ONLY`, those lists one word a line.
///
/// The texts and offsets hold no pointers, so the loader relocates nothing in them. Anything
/// the catalog's own checks would refuse is kept as it is, to be met by those checks when the
/// part is read (a word with white space, which cannot stand on a line of its own, stops the
/// build); a dialect this file does not know counts as none.
fn shell_parts(document: &toml::Table) -> String {
    let mut names: Vec<(String, String, &str, usize)> = Vec::new();
    let mut programs = String::new();
    let mut program_at = Vec::new();
    for (index, program) in toml_array(document, "program").iter().enumerate() {
        let dialect = match program.get("dialect").and_then(toml::Value::as_str) {
            Some("posix") => "Some(Dialect::Posix)",
            Some("powershell") => "Some(Dialect::PowerShell)",
            _ => "None",
        };
        let listed = program.get("names").and_then(toml::Value::as_array);
        for name in listed.into_iter().flatten().filter_map(toml::Value::as_str) {
            names.push((
                name.to_ascii_lowercase(),
                name.to_lowercase(),
                dialect,
                index,
            ));
        }
        program_at.push(programs.len());
        programs.push_str(&serde_json::to_string(program).expect("a TOML value is JSON"));
        programs.push('\n');
    }
    program_at.push(programs.len());
    let mut rules = String::new();
    let mut rule_count = 0usize;
    let mut remote_read_only = String::new();
    if let Some(remote) = document.get("remote").and_then(toml::Value::as_table) {
        for rule in toml_array(remote, "rule") {
            let command = rule
                .get("command")
                .and_then(toml::Value::as_str)
                .unwrap_or("");
            let json = serde_json::to_string(&rule).expect("a TOML value is JSON");
            let command = one_word(command, "[[remote.rule]] command");
            writeln!(rules, "{command}\t{}\t{json}", json.len()).expect("a String takes text");
            rule_count += 1;
        }
        remote_read_only = word_lines(remote, "[remote] read_only");
    }
    let windows_read_only = document
        .get("windows")
        .and_then(toml::Value::as_table)
        .map(|windows| word_lines(windows, "[windows] read_only"))
        .unwrap_or_default();
    format!(
        "{}\
         const BUILTIN_PROGRAMS: &str = {programs:?};\n\
         const BUILTIN_PROGRAM_AT: [usize; {}] = {program_at:?};\n\
         const BUILTIN_RULES: &str = {rules:?};\n\
         const BUILTIN_RULE_COUNT: usize = {rule_count};\n\
         const BUILTIN_REMOTE_READ_ONLY: &str = {remote_read_only:?};\n\
         const BUILTIN_WINDOWS_READ_ONLY: &str = {windows_read_only:?};\n",
        name_tables(names),
        program_at.len(),
    )
}

/// `NAME_TEXT`, `BUILTIN_NAMES` and `BUILTIN_MENTIONS` (see `shell_parts`) from each name's
/// `(key, lower, dialect, program)`.
fn name_tables(mut names: Vec<(String, String, &str, usize)>) -> String {
    names.sort();
    let mut mentions: Vec<(&String, &String)> = names
        .iter()
        .filter(|(_, _, dialect, _)| *dialect == "None")
        .map(|(key, lower, _, _)| (lower, key))
        .collect();
    mentions.sort();
    let mut name_text = String::new();
    let mut spans: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();
    let mut span = |text: &str| -> String {
        spans
            .entry(text.to_owned())
            .or_insert_with(|| {
                let start = name_text.len();
                name_text.push_str(text);
                format!("Span({start}, {})", name_text.len())
            })
            .clone()
    };
    let mut out = String::new();
    for (key, lower, dialect, index) in &names {
        let (key, lower) = (span(key), span(lower));
        writeln!(out, "    ({key}, {lower}, {dialect}, {index}),").expect("a String takes text");
    }
    let names_out = std::mem::take(&mut out);
    for (lower, key) in &mentions {
        let (lower, key) = (span(lower), span(key));
        writeln!(out, "    ({lower}, {key}),").expect("a String takes text");
    }
    format!(
        "const NAME_TEXT: &str = {name_text:?};\n\
         #[allow(clippy::large_const_arrays, reason = \"its size follows the shipped catalog; a const, so MENTION_STARTS is built from it at compile time\")]\n\
         const BUILTIN_NAMES: [(Span, Span, Option<Dialect>, usize); {}] = [\n{names_out}];\n\
         const BUILTIN_MENTIONS: [(Span, Span); {}] = [\n{out}];\n",
        names.len(),
        mentions.len(),
    )
}

/// A table's array, or none.
fn toml_array(table: &toml::Table, key: &str) -> Vec<toml::Value> {
    table
        .get(key)
        .and_then(toml::Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// A word the compiled text puts on a line of its own: one with white space stops the build.
fn one_word(word: &str, what: &str) -> String {
    assert!(
        !word.contains(char::is_whitespace),
        "catalogs/shell.toml: {what} {word:?} holds white space"
    );
    word.to_owned()
}

/// The words of `table`'s `read_only` list, one a line.
fn word_lines(table: &toml::Table, what: &str) -> String {
    let mut lines = String::new();
    for word in toml_array(table, "read_only") {
        lines.push_str(&one_word(word.as_str().unwrap_or(""), what));
        lines.push('\n');
    }
    lines
}
