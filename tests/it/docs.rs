//! The documentation: a README a newcomer reads to the end, and a guide in `docs/` whose links
//! lead somewhere.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The README and every page of the guide.
fn documents() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|entry| entry.expect("docs/ is readable").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    files.extend(pages);
    files
}

/// The lines of a Markdown text outside fenced code blocks.
fn prose(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut fenced = false;
    text.lines().enumerate().filter(move |(_, line)| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

/// The anchors GitHub gives a page's headings: lower-cased, every character but letters,
/// digits, `-`, `_` and spaces dropped, spaces made `-`; a repeated one gets `-1`, `-2`, ….
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for (_, line) in prose(text) {
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let slug: String = heading
            .trim()
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut anchor = slug.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{slug}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

#[test]
fn the_readme_is_at_most_300_lines() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines: move the detail into docs/"
    );
}

#[test]
fn the_guide_has_a_page_for_each_topic() {
    let guide = std::fs::read_to_string(root().join("docs/README.md")).expect("docs/README.md");
    for page in documents().iter().skip(1) {
        let name = page.file_name().and_then(|n| n.to_str()).expect("a name");
        if name != "README.md" {
            assert!(
                guide.contains(&format!("]({name})")),
                "docs/README.md does not list {name}"
            );
        }
    }
}

/// Every relative link of the README and the guide names a file that exists, and a heading
/// of it when it names one: a page moved or a heading renamed breaks no link unseen.
#[test]
fn every_relative_link_leads_to_a_file_and_heading_that_exist() {
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").expect("regex");
    let mut broken = Vec::new();
    let mut checked = 0;
    for document in documents() {
        let text = std::fs::read_to_string(&document).expect("a page");
        let dir = document.parent().expect("a directory");
        let shown = document
            .strip_prefix(root())
            .expect("under the root")
            .display();
        for (number, line) in prose(&text) {
            for found in link.captures_iter(line) {
                let target = &found[1];
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
                let file = if path.is_empty() {
                    document.clone()
                } else {
                    dir.join(path)
                };
                let place = format!("{shown}:{}: {target}", number + 1);
                if !file.exists() {
                    broken.push(format!("{place}: no such file"));
                    continue;
                }
                if anchor.is_empty() {
                    continue;
                }
                if file.extension().is_none_or(|e| e != "md") {
                    broken.push(format!("{place}: an anchor in a file that is not Markdown"));
                    continue;
                }
                let target_text = std::fs::read_to_string(&file).expect("a page");
                if !anchors(&target_text).contains(anchor) {
                    broken.push(format!("{place}: no such heading"));
                }
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: is the pattern right?"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_are_made_as_github_makes_them() {
    let page = "# The broker: credentials out of the agent's reach\n\
                ## `--json`\n\
                ```sh\n# not a heading\n```\n\
                ## Trusting the ZVM's certificate\n## Notes\n## Notes\n";
    let made = anchors(page);
    let expected: BTreeSet<String> = [
        "the-broker-credentials-out-of-the-agents-reach",
        "--json",
        "trusting-the-zvms-certificate",
        "notes",
        "notes-1",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(made, expected);
}
