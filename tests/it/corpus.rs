//! The shell analysis against commands nobody here wrote: `tests/corpus/remote.toml` (remote
//! access and fleet commands from tldr-pages, PowerShell-Docs, the Windows command reference,
//! Ansible, Salt, pyinfra, Fabric and govc docs) and `tests/corpus/dev.toml` (what a coding
//! agent runs all day), each labelled by hand before the analyser first read it;
//! `tests/corpus/attacks.toml`, an attacker's pass written against it; and a third corpus,
//! `tests/corpus/world.toml` and `world-dev.toml`, from sources the first two did not use
//! (hypervisor consoles, deploy tools, cloud run-command channels, database clients, PsTools,
//! PowerShell data flow), also labelled before the analyser read it.
//!
//! The targets: no remote change passes undecided, no machine the command changes left out
//! of its checkpoint, over-asks at most 3 % of the remote corpus and 1 % of the development
//! commands; in the third, at most 5 % of its read-only and local commands and 1 % of its
//! development commands are asked about. Every decision is snapshotted, so a change in any
//! one of them is reviewed.

use std::fmt::Write as _;

use rewind::inventory::Inventory;
use rewind::shell::{Dialect, ShellCatalog, Verdict, analyse};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Corpus {
    case: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    command: String,
    dialect: Dialect,
    expect: Expect,
    #[serde(default)]
    targets: Vec<String>,
    source: String,
    why: String,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "kebab-case")]
enum Expect {
    None,
    Checkpoint,
    Ask,
}

/// The machines the corpus's placeholders were replaced with: all protected.
const PROTECTED: &[&str] = &[
    "web01",
    "web02",
    "db01",
    "win01",
    "win02",
    "10.0.0.5",
    "web01.corp.example",
];

#[derive(Default)]
struct Score {
    total: usize,
    /// Cases labelled `none`: local work, or remote work that only reads.
    labelled_none: usize,
    right: usize,
    /// A remote change let through with no checkpoint and no question.
    missed: Vec<String>,
    /// A machine the command changes left out of its checkpoint.
    wrong_host: Vec<String>,
    /// A question where none was needed.
    over_asked: Vec<String>,
    /// A question where a checkpoint was possible: safe, but a human is bothered.
    asked_for_checkpoint: usize,
    /// A checkpoint where none was needed, where the labeller expected a question, or of
    /// more machines than the command changes.
    extra_checkpoint: usize,
}

fn run(file: &str) -> (Score, String) {
    let path = format!("{}/tests/corpus/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let corpus: Corpus = toml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    let catalog = ShellCatalog::builtin().expect("the shipped shell catalog loads");
    let known = Inventory::of(PROTECTED);
    let mut score = Score::default();
    let mut table = String::new();
    for case in &corpus.case {
        assert!(
            !case.source.is_empty() && !case.why.is_empty(),
            "{}",
            case.command
        );
        let verdict = analyse(&case.command, case.dialect, &catalog, &known, None).verdict;
        let got = match &verdict {
            Verdict::Local | Verdict::ReadOnly => String::from("none"),
            Verdict::Unknown { .. } => String::from("ask"),
            Verdict::Mutating(targets) => {
                let mut names: Vec<String> = targets
                    .iter()
                    .map(|t| t.name.to_ascii_lowercase())
                    .collect();
                names.sort();
                names.dedup();
                format!("checkpoint {}", names.join(","))
            }
        };
        let shown: String = case.command.replace('\n', "⏎").chars().take(160).collect();
        let line = format!("{:?} {shown}", case.dialect);
        score.total += 1;
        score.labelled_none += usize::from(case.expect == Expect::None);
        let mut expected: Vec<String> = case
            .targets
            .iter()
            .map(|t| t.to_ascii_lowercase())
            .collect();
        expected.sort();
        match (case.expect, &verdict) {
            (Expect::None, Verdict::Local | Verdict::ReadOnly)
            | (Expect::Ask, Verdict::Unknown { .. }) => score.right += 1,
            (Expect::Checkpoint, Verdict::Mutating(_))
                if got == format!("checkpoint {}", expected.join(",")) =>
            {
                score.right += 1;
            }
            (Expect::Checkpoint | Expect::Ask, Verdict::Local | Verdict::ReadOnly) => {
                score.missed.push(format!("{line} → {got}"));
            }
            // Every machine the command changes is checkpointed, and more besides.
            (Expect::Checkpoint, Verdict::Mutating(targets))
                if expected
                    .iter()
                    .all(|e| targets.iter().any(|t| t.name.eq_ignore_ascii_case(e))) =>
            {
                score.extra_checkpoint += 1;
            }
            (Expect::Checkpoint, Verdict::Mutating(_)) => {
                score
                    .wrong_host
                    .push(format!("{line} → {got}, want {}", expected.join(",")));
            }
            (Expect::None, Verdict::Unknown { .. }) => {
                score.over_asked.push(format!("{line} → {got}"));
            }
            (Expect::Checkpoint, Verdict::Unknown { .. }) => score.asked_for_checkpoint += 1,
            (Expect::None | Expect::Ask, Verdict::Mutating(_)) => score.extra_checkpoint += 1,
        }
        let want = match case.expect {
            Expect::None => String::from("none"),
            Expect::Ask => String::from("ask"),
            Expect::Checkpoint => format!("checkpoint {}", expected.join(",")),
        };
        let mark = if want == got { "  " } else { "≠ " };
        writeln!(table, "{mark}{line}\n     want {want}, got {got}").expect("write");
    }
    (score, table)
}

fn summary(score: &Score) -> String {
    format!(
        "{} cases: {} as labelled; missed {}, wrong host {}, over-asked {}, asked where a checkpoint was possible {}, checkpointed beyond the label {}",
        score.total,
        score.right,
        score.missed.len(),
        score.wrong_host.len(),
        score.over_asked.len(),
        score.asked_for_checkpoint,
        score.extra_checkpoint,
    )
}

fn check(file: &str, over_ask_percent: usize) {
    let (score, table) = run(file);
    check_score(file, &score, &table);
    assert!(
        score.over_asked.len() * 100 <= score.total * over_ask_percent,
        "{file}: {} over-asks of {} (limit {over_ask_percent} %):\n{}",
        score.over_asked.len(),
        score.total,
        score.over_asked.join("\n")
    );
}

/// As [`check`], with the over-asks counted against the read-only and local cases alone: of
/// the work that changes nothing, how much a human is asked about.
fn check_read_only(file: &str, over_ask_percent: usize) {
    let (score, table) = run(file);
    check_score(file, &score, &table);
    assert!(
        score.over_asked.len() * 100 <= score.labelled_none * over_ask_percent,
        "{file}: {} over-asks of {} read-only or local commands (limit {over_ask_percent} %):\n{}",
        score.over_asked.len(),
        score.labelled_none,
        score.over_asked.join("\n")
    );
}

/// The snapshot of every decision, and the targets every corpus holds to: no remote change
/// undecided, no checkpoint that leaves out a changed machine.
fn check_score(file: &str, score: &Score, table: &str) {
    insta::assert_snapshot!(file, format!("{}\n\n{table}", summary(score)));
    assert!(
        score.missed.is_empty(),
        "{file}: remote changes let through:\n{}",
        score.missed.join("\n")
    );
    assert!(
        score.wrong_host.is_empty(),
        "{file}: checkpoints of the wrong machine:\n{}",
        score.wrong_host.join("\n")
    );
}

#[test]
fn the_remote_corpus_misses_nothing_and_names_the_right_machines() {
    check("remote.toml", 3);
}

#[test]
fn development_commands_are_left_alone() {
    check("dev.toml", 1);
}

/// An attacker's pass (`attacks.toml`): names built at run time, code fed to shells,
/// wrappers, option bundles, programs that run their arguments, remote commands that only
/// look read-only, PowerShell, deep nesting. A question is always an acceptable answer
/// there; no decision or a checkpoint that leaves out the changed machine never is.
#[test]
fn an_attackers_commands_never_pass_undecided() {
    check("attacks.toml", 100);
}

/// The third corpus (`tests/corpus/world.toml`): hypervisor consoles, deploy tools, cloud
/// run-command channels, database clients, PsTools and PowerShell data flow, from sources the
/// first two did not use, labelled before the analyser read it. Of the read-only diagnostics
/// and local work in it, at most 5 % are asked about.
#[test]
fn the_world_corpus_misses_nothing_and_rarely_asks_about_reading() {
    check_read_only("world.toml", 5);
}

/// The third corpus's development commands (`tests/corpus/world-dev.toml`).
#[test]
fn the_world_corpus_development_commands_are_left_alone() {
    check_read_only("world-dev.toml", 1);
}

/// A second attacker's pass (`tests/corpus/attacks-2.toml`), labelled before the analyser
/// read it, in classes the first did not try: options as each program's parser reads them,
/// environment set by any builtin, clients steered by their environment or a context file,
/// remote-management HTTP APIs, hosts fed through pipes and loops, functions and sourced
/// files, containers as launchpads, cmd.exe's syntax, PowerShell beyond .NET, and read-only
/// diagnostics a careless guard would ask about.
#[test]
fn a_second_attackers_pass_never_passes_undecided() {
    check_read_only("attacks-2.toml", 10);
}
