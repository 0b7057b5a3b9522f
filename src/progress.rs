//! A running guard's progress for a person or an MCP client: one line per VPG each time its
//! phase changes ([`Lines`]), or, on a terminal, one row per VPG redrawn every second
//! ([`Live`]). Both are [`Watch`]es the guard reports to; the hook uses neither (its stdout
//! is the decision, and it starts no thread to show anything).
//!
//! A line reads `VPG <name>: <phase> (<elapsed>)`, where elapsed counts from the start of the
//! guard's budget, and the wait for the listing adds when the VPG's journal cadence predicts
//! it (a vSphere VPG lists a tag seconds after the insert, an AWS one about two minutes).

use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::guard::{Phase, Progress, Watch};

/// Widest row the live display draws (a wrapped row would break the redraw); `COLUMNS`
/// narrows it.
const LIVE_WIDTH: usize = 120;
/// How often the live display redraws when nothing happens.
const LIVE_TICK: Duration = Duration::from_secs(1);

/// What a phase means, without the time: `VPG vpg-linux: waiting for Zerto task t-1`.
pub(crate) fn describe(event: &Progress<'_>) -> String {
    // Zerto's names and reasons as they are: every writer sanitises (`crate::console`).
    let vpg = &event.vpg.name;
    let what = match event.phase {
        Phase::Inserting => String::from("inserting a tagged checkpoint"),
        Phase::Task { task_id } => format!("waiting for Zerto task {task_id}"),
        Phase::Listing { task_id, .. } => {
            format!("task {task_id} completed; waiting until Zerto lists the checkpoint")
        }
        Phase::Confirmed { checkpoint_id } => {
            format!("confirmed: checkpoint {checkpoint_id} is listed")
        }
        Phase::Failed { refusal } => format!("failed: {refusal}"),
    };
    format!("VPG {vpg}: {what}")
}

/// The expectation a phase carries: `expected at about 34 s (60 s journal cadence)`.
fn expectation(phase: &Phase<'_>) -> Option<String> {
    match phase {
        Phase::Listing {
            cadence, expected, ..
        } => Some(format!(
            "expected at about {}, from a {} journal cadence",
            human(*expected, true),
            human(*cadence, true)
        )),
        _ => None,
    }
}

/// The line for one event: what, when, and what is expected.
pub(crate) fn line(event: &Progress<'_>) -> String {
    let elapsed = human(event.elapsed, false);
    match expectation(&event.phase) {
        Some(expected) => format!("{} ({elapsed}; {expected})", describe(event)),
        None => format!("{} ({elapsed})", describe(event)),
    }
}

/// `4 s`, `2 min 8 s`, `1 h 5 min`: whole seconds, rounded or cut.
fn human(duration: Duration, round: bool) -> String {
    let secs = if round {
        duration.as_secs() + u64::from(duration.subsec_millis() >= 500)
    } else {
        duration.as_secs()
    };
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 if secs % 60 == 0 => format!("{} min", secs / 60),
        60..3600 => format!("{} min {} s", secs / 60, secs % 60),
        _ => format!("{} h {} min", secs / 3600, secs % 3600 / 60),
    }
}

/// One line per VPG phase change, handed to `sink` (stderr, or an MCP progress
/// notification), and a cancel flag the guard looks at.
pub(crate) struct Lines<'a> {
    sink: &'a (dyn Fn(String) + Sync),
    cancel: Option<&'a AtomicBool>,
    /// The last phase said for each VPG, so a repeat is not said again.
    said: Mutex<Vec<(String, String)>>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(sink: &'a (dyn Fn(String) + Sync)) -> Self {
        Self {
            sink,
            cancel: None,
            said: Mutex::new(Vec::new()),
        }
    }

    /// The guard stops waiting once `flag` is set.
    #[must_use]
    pub(crate) fn cancelled_by(mut self, flag: &'a AtomicBool) -> Self {
        self.cancel = Some(flag);
        self
    }
}

impl Watch for Lines<'_> {
    fn progress(&self, event: &Progress<'_>) {
        let what = describe(event);
        {
            let mut said = self.said.lock().unwrap_or_else(PoisonError::into_inner);
            match said.iter_mut().find(|(id, _)| *id == event.vpg.id) {
                Some((_, last)) if *last == what => return,
                Some((_, last)) => last.clone_from(&what),
                None => said.push((event.vpg.id.clone(), what)),
            }
        }
        (self.sink)(line(event));
    }

    fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|flag| flag.load(Ordering::SeqCst))
    }

    fn step(&self, text: &str) {
        (self.sink)(text.to_owned());
    }
}

/// One row per VPG on a terminal, each with its phase and the seconds spent, redrawn in place
/// every second by a thread of its own until [`Live::finish`].
pub(crate) struct Live {
    shared: Arc<(Mutex<Board>, Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

struct Board {
    started: Instant,
    rows: Vec<Row>,
    /// How many rows the last frame drew (the cursor is below them).
    drawn: usize,
    done: bool,
    width: usize,
}

struct Row {
    vpg_id: String,
    what: String,
    expected: Option<String>,
    /// The elapsed time at the end, for a VPG that has its answer.
    ended: Option<Duration>,
}

impl Live {
    /// Starts the display; elapsed times count from `started` (the guard deadline's start).
    pub(crate) fn start(started: Instant) -> Live {
        let width = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|c| *c >= 20)
            .map_or(LIVE_WIDTH, |c| c.min(LIVE_WIDTH) - 1);
        let shared = Arc::new((
            Mutex::new(Board {
                started,
                rows: Vec::new(),
                drawn: 0,
                done: false,
                width,
            }),
            Condvar::new(),
        ));
        let ticker = Arc::clone(&shared);
        let thread = std::thread::spawn(move || {
            let (board, wake) = &*ticker;
            let mut board = board.lock().unwrap_or_else(PoisonError::into_inner);
            while !board.done {
                board.draw();
                board = wake
                    .wait_timeout(board, LIVE_TICK)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
        });
        Live {
            shared,
            thread: Some(thread),
        }
    }

    /// Draws the final frame and stops the thread; the rows stay on the screen.
    pub(crate) fn finish(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        let (board, wake) = &*self.shared;
        {
            let mut board = board.lock().unwrap_or_else(PoisonError::into_inner);
            board.done = true;
            board.draw();
        }
        wake.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.stop();
        }
    }
}

impl Watch for Live {
    fn progress(&self, event: &Progress<'_>) {
        let (board, wake) = &*self.shared;
        let mut board = board.lock().unwrap_or_else(PoisonError::into_inner);
        board.update(event);
        board.draw();
        drop(board);
        wake.notify_all();
    }
}

impl Board {
    /// The VPG's row says its new phase (a new VPG gets a row below the others).
    fn update(&mut self, event: &Progress<'_>) {
        let row = Row {
            vpg_id: event.vpg.id.clone(),
            what: describe(event),
            expected: expectation(&event.phase),
            ended: matches!(event.phase, Phase::Confirmed { .. } | Phase::Failed { .. })
                .then_some(event.elapsed),
        };
        match self.rows.iter_mut().find(|r| r.vpg_id == event.vpg.id) {
            Some(existing) => *existing = row,
            None => self.rows.push(row),
        }
    }

    /// Draws the next frame on stderr, in one write.
    fn draw(&mut self) {
        let frame = self.frame(self.started.elapsed());
        if !frame.is_empty() {
            crate::console::write_frame(&frame);
        }
    }

    /// The next frame at `elapsed`: up over the last frame's rows, then every row again, each
    /// cleared first and cut to the width (a wrapped row would shift the next redraw).
    fn frame(&mut self, elapsed: Duration) -> String {
        let mut frame = String::new();
        if self.drawn > 0 {
            let _ = write!(frame, "\x1b[{}A", self.drawn);
        }
        for row in &self.rows {
            let at = human(row.ended.unwrap_or(elapsed), false);
            let text = match (&row.expected, row.ended) {
                (Some(expected), None) => format!("{} ({at}; {expected})", row.what),
                _ => format!("{} ({at})", row.what),
            };
            frame.push_str("\r\x1b[2K");
            frame.extend(crate::console::sanitise(&text).chars().take(self.width));
            frame.push('\n');
        }
        self.drawn = self.rows.len();
        frame
    }
}

/// Each line on stderr.
const STDERR: &(dyn Fn(String) + Sync) = &stderr_line;

fn stderr_line(line: String) {
    crate::console::err(line);
}

/// The watch for an operator command: live rows when stderr is a terminal, plain lines on
/// stderr otherwise, and a flag (Ctrl-C) that stops the guard.
pub(crate) struct Operator {
    display: Display,
    cancel: &'static AtomicBool,
}

enum Display {
    Live(Live),
    Lines(Lines<'static>),
}

impl Operator {
    /// Picks the display for this process's stderr; times count from `started`; the guard
    /// stops waiting once `cancel` is set.
    pub(crate) fn for_stderr(started: Instant, cancel: &'static AtomicBool) -> Operator {
        let display = if std::io::stderr().is_terminal() {
            Display::Live(Live::start(started))
        } else {
            Display::Lines(Lines::new(STDERR))
        };
        Operator { display, cancel }
    }

    /// Ends the display (the live rows stay on screen with their final phases).
    pub(crate) fn finish(self) {
        if let Display::Live(live) = self.display {
            live.finish();
        }
    }
}

impl Watch for Operator {
    fn progress(&self, event: &Progress<'_>) {
        match &self.display {
            Display::Live(live) => live.progress(event),
            Display::Lines(lines) => lines.progress(event),
        }
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
    }

    /// Only the broker's lines: here, the phases say what the guard does.
    fn relayed(&self, text: &str) {
        stderr_line(text.to_owned());
    }
}

/// A wait shown live on a terminal (stderr): a spinner, what is awaited, and the time that
/// moves on while nothing else happens. Where stderr is not a terminal it shows nothing, and
/// the caller's own lines say each change.
pub(crate) struct Wait(Option<indicatif::ProgressBar>);

impl Wait {
    /// Starts showing `what` (a terminal only).
    pub(crate) fn start(what: &str) -> Wait {
        if !std::io::stderr().is_terminal() {
            return Wait(None);
        }
        let bar = indicatif::ProgressBar::new_spinner();
        if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
            bar.set_style(style);
        }
        bar.set_message(what.to_owned());
        bar.enable_steady_tick(Duration::from_millis(100));
        Wait(Some(bar))
    }

    /// Whether the wait is drawn (else the caller says each change in a line).
    pub(crate) fn is_live(&self) -> bool {
        self.0.is_some()
    }

    /// What is awaited now (a new status from the ZVM).
    pub(crate) fn set(&self, what: &str) {
        if let Some(bar) = &self.0 {
            bar.set_message(what.to_owned());
        }
    }
}

impl Drop for Wait {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::Refusal;
    use crate::zvm::VpgRef;

    fn vpg(name: &str) -> VpgRef {
        VpgRef {
            id: format!("{name}-id"),
            name: name.to_owned(),
        }
    }

    fn at(secs: f64) -> Duration {
        Duration::from_secs_f64(secs)
    }

    /// A vSphere VPG confirmed in seconds, an AWS one in minutes, and one that failed, with
    /// a phase reported twice said once: the plain lines a script or a log file sees.
    #[test]
    fn plain_lines_say_each_phase_change_once_with_elapsed_and_expected() {
        let said = Mutex::new(Vec::new());
        let sink = |line: String| said.lock().expect("lock").push(line);
        let lines = Lines::new(&sink);
        let (linux, aws, broken) = (vpg("vpg-linux"), vpg("vpg-aws"), vpg("vpg-broken"));
        let refusal = Refusal::TaskEnded {
            task_id: String::from("t-9"),
            state: crate::zvm::TaskState::Failed,
            reason: String::from("VPG is in error\u{1b}[31m"),
        };
        let events = [
            (&linux, Phase::Inserting, 0.2),
            (&aws, Phase::Inserting, 0.2),
            (&broken, Phase::Inserting, 0.3),
            (&linux, Phase::Task { task_id: "t-1" }, 0.4),
            (&aws, Phase::Task { task_id: "t-2" }, 0.5),
            (&broken, Phase::Task { task_id: "t-9" }, 0.5),
            (&linux, Phase::Task { task_id: "t-1" }, 0.9),
            (
                &linux,
                Phase::Listing {
                    task_id: "t-1",
                    cadence: at(5.0),
                    expected: at(4.4),
                },
                1.4,
            ),
            (&broken, Phase::Failed { refusal: &refusal }, 1.6),
            (
                &linux,
                Phase::Confirmed {
                    checkpoint_id: "1042",
                },
                4.5,
            ),
            (
                &aws,
                Phase::Listing {
                    task_id: "t-2",
                    cadence: at(630.0),
                    expected: at(128.5),
                },
                2.1,
            ),
            (
                &aws,
                Phase::Confirmed {
                    checkpoint_id: "77",
                },
                131.0,
            ),
        ];
        for (vpg, phase, secs) in events {
            lines.progress(&Progress {
                vpg,
                phase,
                elapsed: at(secs),
            });
        }
        // Zerto's text reaches the sink as it is; the writer behind it (stderr, the MCP
        // notification) sanitises, as here.
        let said = said.lock().expect("lock").join("\n");
        insta::assert_snapshot!(crate::console::sanitise(&said), @r"
        VPG vpg-linux: inserting a tagged checkpoint (0 s)
        VPG vpg-aws: inserting a tagged checkpoint (0 s)
        VPG vpg-broken: inserting a tagged checkpoint (0 s)
        VPG vpg-linux: waiting for Zerto task t-1 (0 s)
        VPG vpg-aws: waiting for Zerto task t-2 (0 s)
        VPG vpg-broken: waiting for Zerto task t-9 (0 s)
        VPG vpg-linux: task t-1 completed; waiting until Zerto lists the checkpoint (1 s; expected at about 4 s, from a 5 s journal cadence)
        VPG vpg-broken: failed: checkpoint task t-9 ended Failed: VPG is in error�[31m (1 s)
        VPG vpg-linux: confirmed: checkpoint 1042 is listed (4 s)
        VPG vpg-aws: task t-2 completed; waiting until Zerto lists the checkpoint (2 s; expected at about 2 min 9 s, from a 10 min 30 s journal cadence)
        VPG vpg-aws: confirmed: checkpoint 77 is listed (2 min 11 s)
        ");
    }

    /// On a terminal: one row per VPG, redrawn in place (up over the last frame, each row
    /// cleared), the running row's time moving on, a finished row's time kept, rows cut to
    /// the width.
    #[test]
    fn live_rows_are_redrawn_in_place_with_the_time_moving_on() {
        let (linux, aws) = (vpg("vpg-linux"), vpg("vpg-aws"));
        let mut board = Board {
            started: Instant::now(),
            rows: Vec::new(),
            drawn: 0,
            done: false,
            width: 90,
        };
        let apply = |board: &mut Board, vpg: &VpgRef, phase: Phase<'_>, secs: f64| {
            board.update(&Progress {
                vpg,
                phase,
                elapsed: at(secs),
            });
        };
        apply(&mut board, &linux, Phase::Inserting, 0.1);
        apply(&mut board, &aws, Phase::Inserting, 0.1);
        let first = board.frame(at(0.2));
        apply(
            &mut board,
            &aws,
            Phase::Listing {
                task_id: "t-2",
                cadence: at(630.0),
                expected: at(128.0),
            },
            1.0,
        );
        apply(
            &mut board,
            &linux,
            Phase::Confirmed {
                checkpoint_id: "1042",
            },
            4.2,
        );
        let later = board.frame(at(61.0));
        let shown = format!("{first}{later}")
            .replace('\x1b', "<ESC>")
            .replace('\r', "<CR>");
        insta::assert_snapshot!(shown, @r"
        <CR><ESC>[2KVPG vpg-linux: inserting a tagged checkpoint (0 s)
        <CR><ESC>[2KVPG vpg-aws: inserting a tagged checkpoint (0 s)
        <ESC>[2A<CR><ESC>[2KVPG vpg-linux: confirmed: checkpoint 1042 is listed (4 s)
        <CR><ESC>[2KVPG vpg-aws: task t-2 completed; waiting until Zerto lists the checkpoint (1 min 1 s; expe
        ");
    }

    #[test]
    fn a_cancel_flag_reaches_the_guard() {
        let sink = |_: String| {};
        let flag = AtomicBool::new(false);
        let lines = Lines::new(&sink).cancelled_by(&flag);
        assert!(!lines.cancelled());
        flag.store(true, Ordering::SeqCst);
        assert!(lines.cancelled());
        assert!(!Lines::new(&sink).cancelled());
    }

    #[test]
    fn durations_read_as_a_person_says_them() {
        assert_eq!(human(at(0.4), false), "0 s");
        assert_eq!(human(at(0.6), true), "1 s");
        assert_eq!(human(at(59.9), false), "59 s");
        assert_eq!(human(at(120.0), false), "2 min");
        assert_eq!(human(at(630.0), false), "10 min 30 s");
        assert_eq!(human(at(3900.0), false), "1 h 5 min");
    }
}
