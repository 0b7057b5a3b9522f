//! Writes `src/bin/rewind-hook.ld`: where the linker puts the code `rewind-hook` runs on its
//! common calls. A process pays a page fault (a few microseconds, and its share of the exit)
//! for each 64 KiB window of code it first touches; laid out as the compiler leaves it, a
//! read-only call touched nearly every window of the hook's 2.4 MB of code, so the functions a
//! call runs go first in `.text`, together, before the rest.
//!
//! Method: build `rewind-hook` with the `profiling` profile (the release build with its
//! symbols); run it under callgrind on every hook payload among the test fixtures that needs
//! no ZVM (`tests/fixtures/hook/*.json` without a `.toml` beside it, each host's samples in
//! `tests/fixtures/hosts`), with stdout to a file as a host's pipe takes it; order the
//! functions those runs execute by how many runs execute them, then as the runs first execute
//! them, the calls a host sends most (a local tool, a read-only MCP tool, local and `ssh`
//! shell commands) first; write one input-section line per function, its symbol
//! with the parts that change from build to build replaced by `*`: the hash of a legacy
//! name, a v0 name's crate disambiguators and back-references, LTO's numbered suffix.
//!
//! `cargo run --manifest-path benches/layout/Cargo.toml --target-dir target/layout` from the
//! repository, with valgrind installed. Run it again when the hook's path changes much. A
//! stale layout costs speed, never behaviour: a line that matches no function places nothing,
//! and every function is linked either way.

#![expect(
    clippy::disallowed_macros,
    reason = "a maintainer's tool, run from a terminal, reports there"
)]

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

/// The script the build hands the linker for `rewind-hook` (see `build.rs`).
const SCRIPT: &str = "src/bin/rewind-hook.ld";

fn main() -> ExitCode {
    match run() {
        Ok(summary) => {
            println!("{summary}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("layout: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<String, String> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let repo = repo
        .canonicalize()
        .map_err(|e| format!("{}: {e}", repo.display()))?;
    let binary = build(&repo)?;
    let scratch = std::env::temp_dir().join(format!("rewind-layout-{}", std::process::id()));
    let result = profile_all(&repo, &binary, &scratch);
    let _ = fs::remove_dir_all(&scratch);
    let runs = result?;
    let functions = ordered(&runs);
    let symbols = symbols(&binary)?;
    let script = script(&functions, &symbols);
    let path = repo.join(SCRIPT);
    fs::write(&path, &script).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(format!(
        "{}: {} lines from {} functions over {} runs",
        SCRIPT,
        script
            .lines()
            .filter(|l| l.trim_start().starts_with("*("))
            .count(),
        functions.len(),
        runs.len()
    ))
}

/// Builds the hook with its symbols; its path.
fn build(repo: &Path) -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "build",
            "--locked",
            "--profile",
            "profiling",
            "--bin",
            "rewind-hook",
        ])
        .current_dir(repo)
        .status()
        .map_err(|e| format!("cargo: {e}"))?;
    if !status.success() {
        return Err(String::from("the profiling build of rewind-hook failed"));
    }
    Ok(repo.join("target/profiling/rewind-hook"))
}

/// One training call: the payload and the host that sends it (`None`: the hook tells).
struct Call {
    payload: PathBuf,
    host: Option<String>,
}

/// The calls a host sends most, first: their functions go first, each call's own after those
/// of the calls before it, so that each of them touches a few windows next to each other.
const COMMON: &[&str] = &[
    "local-tool.json",
    "read-only.json",
    "bash-local.json",
    "bash-ssh-read-only.json",
    "bash-ssh-change.json",
];

/// The fixtures' payloads that need no ZVM: the common calls, the hook's other fixtures, then
/// each host's samples.
fn calls(repo: &Path) -> Result<Vec<Call>, String> {
    let mut calls = Vec::new();
    for (dir, by_name) in [
        ("tests/fixtures/hook", false),
        ("tests/fixtures/hosts", true),
    ] {
        let dir = repo.join(dir);
        let mut paths: Vec<PathBuf> = fs::read_dir(&dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
            .filter(|path| !path.with_extension("toml").exists())
            .collect();
        paths.sort_by_key(|path| {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            let rank = COMMON.iter().position(|common| *common == name);
            (rank.unwrap_or(COMMON.len()), path.clone())
        });
        for payload in paths {
            // `codex-0.171.0-shell.json`: the host is the name before its version.
            let host = by_name.then(|| host_of(&payload)).flatten();
            calls.push(Call { payload, host });
        }
    }
    Ok(calls)
}

fn host_of(payload: &Path) -> Option<String> {
    let name = payload.file_stem()?.to_str()?;
    let end = name.find(|c: char| c.is_ascii_digit())?;
    Some(name[..end].trim_end_matches('-').to_owned())
}

/// Runs the hook under callgrind on every call; the functions of the hook each run executed,
/// in the order the profile lists them.
fn profile_all(repo: &Path, binary: &Path, scratch: &Path) -> Result<Vec<Vec<String>>, String> {
    let home = scratch.join("home");
    fs::create_dir_all(&home).map_err(|e| format!("{}: {e}", home.display()))?;
    let config = scratch.join("config.toml");
    fs::write(&config, "[hook]\nbudget_secs = 150\n").map_err(|e| e.to_string())?;
    let mut runs = Vec::new();
    for (n, call) in calls(repo)?.iter().enumerate() {
        let out = scratch.join(format!("callgrind.{n}"));
        let stdin = fs::File::open(&call.payload)
            .map_err(|e| format!("{}: {e}", call.payload.display()))?;
        let stdout = fs::File::create(scratch.join("stdout")).map_err(|e| e.to_string())?;
        let mut command = Command::new("valgrind");
        command
            .arg("--tool=callgrind")
            .arg("--demangle=no")
            .arg("--compress-strings=no")
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg(binary)
            .arg("--config")
            .arg(&config)
            .arg("hook");
        if let Some(host) = &call.host {
            command.args(["--host", host]);
        }
        command
            .env("HOME", &home)
            .stdin(stdin)
            .stdout(stdout)
            .stderr(Stdio::null());
        command
            .status()
            .map_err(|e| format!("valgrind (is it installed?): {e}"))?;
        let profile = fs::read_to_string(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        runs.push(functions_of(&profile, binary));
    }
    Ok(runs)
}

/// The functions of `binary` a callgrind profile (uncompressed names) lists, first seen first.
fn functions_of(profile: &str, binary: &Path) -> Vec<String> {
    let binary = binary.to_string_lossy();
    let mut in_binary = false;
    let mut seen = Vec::new();
    for line in profile.lines() {
        if let Some(object) = line.strip_prefix("ob=") {
            in_binary = object == binary;
        } else if let Some(name) = line.strip_prefix("fn=")
            && in_binary
        {
            // `'2`: callgrind's mark for a recursive call's cycle, not part of the name.
            let name = name.split('\'').next().unwrap_or(name);
            if !seen.iter().any(|s| s == name) {
                seen.push(name.to_owned());
            }
        }
    }
    seen
}

/// Every function any run executed: those more runs execute first, and among those that as
/// many runs execute, in the order the runs first execute them. What nearly every call runs
/// (the start, the configuration, the host's dialect, the audit line) is then packed at the
/// head instead of spread between the first call's own functions, and each call's own come
/// after it, near those of the calls like it.
fn ordered(runs: &[Vec<String>]) -> Vec<String> {
    let mut first: HashMap<&str, usize> = HashMap::new();
    let mut count: HashMap<&str, usize> = HashMap::new();
    for run in runs {
        let mut in_run: HashSet<&str> = HashSet::new();
        for name in run {
            let next = first.len();
            first.entry(name).or_insert(next);
            if in_run.insert(name) {
                *count.entry(name).or_default() += 1;
            }
        }
    }
    let mut order: Vec<&str> = first.keys().copied().collect();
    order.sort_by_key(|name| (std::cmp::Reverse(count[name]), first[name]));
    order.into_iter().map(str::to_owned).collect()
}

/// The code symbols of `binary` (`nm`), with their sizes, sorted by name.
fn symbols(binary: &Path) -> Result<Vec<(String, u64)>, String> {
    let output = Command::new("nm")
        .args(["--defined-only", "--print-size"])
        .arg(binary)
        .output()
        .map_err(|e| format!("nm: {e}"))?;
    let mut symbols: Vec<(String, u64)> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [_, size, "t" | "T", name] = fields[..] else {
                return None;
            };
            Some((name.to_owned(), u64::from_str_radix(size, 16).ok()?))
        })
        .collect();
    symbols.sort();
    Ok(symbols)
}

/// The linker script: the output section `.text` where the linker puts it anyway (right after
/// `.eh_frame`), the C runtime's start (`crt1.o`'s plain `.text`) then the patterns' functions
/// first, in order; every other function follows in it as it would without the script. A
/// section of another name would hide these functions from profilers that read symbols in
/// `.text` only (valgrind). A pattern that also matches other functions many times the size
/// of those the runs executed (the instances of a generic function, whose legacy names differ
/// only in their hash) goes last, so as not to spread the others.
fn script(functions: &[String], symbols: &[(String, u64)]) -> String {
    // Each pattern once, first met first, with the size of the executed functions it covers.
    let mut patterns: Vec<(String, u64)> = Vec::new();
    for name in functions {
        let Some(pattern) = pattern(name) else {
            continue;
        };
        let size = symbols
            .binary_search_by(|(symbol, _)| symbol.as_str().cmp(name))
            .map_or(0, |at| symbols[at].1);
        match patterns.iter_mut().find(|(known, _)| *known == pattern) {
            Some((_, executed)) => *executed += size,
            None => patterns.push((pattern, size)),
        }
    }
    let (close, spread): (Vec<_>, Vec<_>) = patterns
        .iter()
        .map(|(pattern, executed)| (pattern, matching_size(pattern, symbols), *executed))
        .partition(|(_, matched, executed)| *matched <= 2 * (*executed).max(1024));
    let mut lines = String::new();
    for (pattern, _, _) in close.iter().chain(&spread) {
        let _ = writeln!(lines, "    *(.text.{pattern} .text.unlikely.{pattern})");
    }
    format!(
        "/* rewind-hook's code layout, written by benches/layout (see its src/main.rs): the\n   \
         functions the hook runs on its common calls, first in `.text`. */\n\
         SECTIONS\n{{\n  .text :\n  {{\n    *(.text)\n{lines}  }}\n}}\nINSERT AFTER .eh_frame;\n"
    )
}

/// The total size of the symbols a pattern (`*` its only wildcard) matches.
fn matching_size(pattern: &str, symbols: &[(String, u64)]) -> u64 {
    let prefix = pattern.split('*').next().unwrap_or_default();
    let start = symbols.partition_point(|(name, _)| name.as_str() < prefix);
    symbols[start..]
        .iter()
        .take_while(|(name, _)| name.starts_with(prefix))
        .filter(|(name, _)| glob(pattern, name))
        .map(|(_, size)| size)
        .sum()
}

/// Whether `text` matches `pattern`, whose only wildcard is `*`.
fn glob(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// A symbol name with what changes between builds as `*`; `None` for what is no symbol of
/// the code (callgrind's `(below main)`) or would not be one word of a linker script.
fn pattern(name: &str) -> Option<String> {
    let stem = strip_numbered_suffix(name);
    if stem.is_empty()
        || !stem
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.'))
    {
        return None;
    }
    let mut pattern = if stem.starts_with("_ZN") {
        legacy(stem)
    } else if stem.starts_with("_R") {
        v0(stem)
    } else {
        stem.to_owned()
    };
    if stem.len() < name.len() {
        pattern.push('*');
    }
    Some(pattern)
}

/// `name.123` or `name.llvm.456` (LTO's names for functions it made local): `name`.
fn strip_numbered_suffix(name: &str) -> &str {
    let mut rest = name;
    while let Some((head, tail)) = rest.rsplit_once('.') {
        if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) {
            rest = head.strip_suffix(".llvm").unwrap_or(head);
        } else {
            break;
        }
    }
    rest
}

/// A legacy name's `17h<16 hex digits>E` hash as `17h*E`.
fn legacy(name: &str) -> String {
    match name.rfind("17h") {
        Some(at)
            if name.len() == at + 3 + 16 + 1
                && name.ends_with('E')
                && name[at + 3..name.len() - 1]
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit()) =>
        {
            format!("{}17h*E", &name[..at])
        }
        _ => name.to_owned(),
    }
}

/// A v0 name's crate disambiguators (`Cs<base-62>_`) and back-references (`B<base-62>_`,
/// offsets that move when a disambiguator's length does) as `Cs*_` and `B*_`. Either letter
/// inside an identifier is matched by the `*` the same way, so the pattern still matches
/// the name it came from.
fn v0(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while !rest.is_empty() {
        let marker = ["Cs", "B"].into_iter().find(|m| rest.starts_with(m));
        if let Some(marker) = marker {
            let after = &rest[marker.len()..];
            let digits = after.bytes().take_while(u8::is_ascii_alphanumeric).count();
            if after[digits..].starts_with('_') {
                out.push_str(marker);
                out.push_str("*_");
                rest = &after[digits + 1..];
                continue;
            }
        }
        let mut chars = rest.chars();
        out.extend(chars.next());
        rest = chars.as_str();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_keep_what_names_a_function_and_drop_what_a_build_changes() {
        assert_eq!(
            pattern("_ZN6rewind4hook3run17hb54eebcbe347615eE").as_deref(),
            Some("_ZN6rewind4hook3run17h*E")
        );
        assert_eq!(
            pattern("_RNvXs_NtNtCsgEmfK2I1SDS_4core3str7patternNtB4_12CharSearcherNtB4_8Searcher10next_match.350")
                .as_deref(),
            Some("_RNvXs_NtNtCs*_4core3str7patternNtB*_12CharSearcherNtB*_8Searcher10next_match*")
        );
        assert_eq!(
            pattern("_ZN4core3ptr4read17h0123456789abcdefE.llvm.1234").as_deref(),
            Some("_ZN4core3ptr4read17h*E*")
        );
        assert_eq!(pattern("(below main)"), None);
        assert!(glob(
            "_ZN4core3ptr4read17h*E",
            "_ZN4core3ptr4read17h0123456789abcdefE"
        ));
        assert!(glob("a*b*c", "abc") && glob("a*b*c", "axxbyyc") && !glob("a*b*c", "acb"));
        assert!(!glob(
            "_ZN4core3ptr4read17h*E",
            "_ZN4core3ptr5write17h0123456789abcdefE"
        ));
        assert_eq!(pattern("main").as_deref(), Some("main"));
    }

    /// A pattern that matches far more code than the runs executed (the other instances of
    /// a generic function) goes after the others, which keep their order.
    #[test]
    fn a_pattern_that_matches_much_more_than_ran_goes_last() {
        let functions = [
            "_ZN1x1f17h0000000000000000E",
            "_ZN1x1g17h0000000000000000E",
            "_ZN1x1h17h0000000000000000E",
        ]
        .map(String::from);
        let mut symbols = vec![
            (functions[0].clone(), 2000),
            (String::from("_ZN1x1f17h1111111111111111E"), 50_000),
            (functions[1].clone(), 3000),
            (functions[2].clone(), 100),
            (String::from("_ZN1x1h17h1111111111111111E"), 100),
        ];
        symbols.sort();
        let lines: Vec<String> = script(&functions, &symbols)
            .lines()
            .filter_map(|line| line.trim().strip_prefix("*(.text._ZN1x1"))
            .map(|rest| rest[..1].to_owned())
            .collect();
        assert_eq!(lines, ["g", "h", "f"]);
    }

    #[test]
    fn each_run_adds_its_own_functions_after_those_before_it() {
        let runs = vec![
            vec![String::from("a"), String::from("b")],
            vec![String::from("c"), String::from("b"), String::from("a")],
        ];
        assert_eq!(ordered(&runs), ["a", "b", "c"]);
    }
}
