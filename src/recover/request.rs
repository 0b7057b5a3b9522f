//! What a restore is asked to do, checked once. The command line's arguments and the MCP
//! server's `recover_plan` arguments each become a [`RecoverRequest`] here; the plan and the
//! restore see only the request, never clap's or the tool's types.

use std::path::PathBuf;
use std::time::SystemTime;

use anyhow::{Context as _, bail};

use crate::cli::RecoverArgs;

/// Which checkpoint to restore from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Point {
    /// The checkpoint tagged for this change id (the host's `tool_use_id`).
    Change(String),
    /// The checkpoint with this id.
    Checkpoint(String),
    /// The newest checkpoint taken before this time.
    Before(SystemTime),
}

/// Why the optional spellings of a [`Point`] do not name exactly one.
#[derive(Debug)]
pub(crate) enum PointError {
    /// None of change, checkpoint and before was given.
    Missing,
    /// More than one was given.
    Several,
    /// `before` is not a time.
    Time(anyhow::Error),
}

impl Point {
    /// The one point that exactly one of `change`, `checkpoint` and `before` (ISO-8601 UTC,
    /// or a duration ago such as `2h`) names. Blank values count as not given.
    pub(crate) fn choose(
        change: Option<String>,
        checkpoint: Option<String>,
        before: Option<String>,
    ) -> Result<Point, PointError> {
        let given = |v: Option<String>| v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty());
        match (given(change), given(checkpoint), given(before)) {
            (Some(change), None, None) => Ok(Point::Change(change)),
            (None, Some(id), None) => Ok(Point::Checkpoint(id)),
            (None, None, Some(time)) => crate::time::parse_utc_or_ago(&time, SystemTime::now())
                .map(Point::Before)
                .map_err(PointError::Time),
            (None, None, None) => Err(PointError::Missing),
            _ => Err(PointError::Several),
        }
    }

    /// The change id, for [`Point::Change`].
    pub(crate) fn change(&self) -> Option<&str> {
        match self {
            Point::Change(change) => Some(change),
            _ => None,
        }
    }
}

/// A restore, as asked for: which VM, file and checkpoint, and where the file goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RecoverRequest {
    /// The VM reference (name, vmIdentifier, IP, `user@host`, …).
    pub vm: String,
    /// The guest path (`/etc/app.conf`, `C:\Users\x\y.txt`).
    pub guest_path: String,
    /// The file name the guest path ends in: the name the restored file is written under.
    pub file_name: String,
    pub point: Point,
    /// The VPG to restore from, by name or id, when the VM is in several.
    pub vpg: Option<String>,
    /// The FLR volume label to read the file from.
    pub volume: Option<String>,
    /// The directory the file is written into.
    pub out: PathBuf,
    /// Whether an existing file there may be replaced.
    pub force: bool,
}

impl RecoverRequest {
    /// A request for `guest_path`, refused when the path names no file.
    pub(crate) fn new(
        vm: String,
        guest_path: String,
        point: Point,
    ) -> anyhow::Result<RecoverRequest> {
        if vm.trim().is_empty() {
            bail!("no VM named: give the VM the file is on");
        }
        let file_name = super::guest_file_name(&guest_path)
            .with_context(|| format!("guest path {guest_path:?} names no file"))?
            .to_owned();
        Ok(RecoverRequest {
            vm,
            guest_path,
            file_name,
            point,
            vpg: None,
            volume: None,
            out: PathBuf::from("."),
            force: false,
        })
    }

    /// Where the restored file is written.
    pub(crate) fn destination(&self) -> PathBuf {
        self.out.join(&self.file_name)
    }
}

impl TryFrom<&RecoverArgs> for RecoverRequest {
    type Error = anyhow::Error;

    fn try_from(args: &RecoverArgs) -> anyhow::Result<RecoverRequest> {
        let point = Point::choose(
            args.change.clone(),
            args.checkpoint.clone(),
            args.before.clone(),
        )
        .map_err(|e| match e {
            PointError::Missing => anyhow::anyhow!(
                "say which checkpoint to restore from: --change <ID>, --checkpoint <ID> or --before <TIME>"
            ),
            PointError::Several => anyhow::anyhow!(
                "give one of --change, --checkpoint and --before, not several"
            ),
            PointError::Time(e) => e.context("--before"),
        })?;
        Ok(RecoverRequest {
            vpg: args.vpg.clone(),
            volume: args.volume.clone(),
            out: args.out.clone(),
            force: args.force,
            ..RecoverRequest::new(args.vm.clone(), args.path.clone(), point)?
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(change: Option<&str>, checkpoint: Option<&str>, before: Option<&str>) -> String {
        let own = |v: Option<&str>| v.map(str::to_owned);
        match Point::choose(own(change), own(checkpoint), own(before)) {
            Ok(point) => format!("{point:?}"),
            Err(PointError::Missing) => String::from("missing"),
            Err(PointError::Several) => String::from("several"),
            Err(PointError::Time(e)) => format!("time: {e}"),
        }
    }

    #[test]
    fn exactly_one_point_is_taken_from_the_three_spellings() {
        assert_eq!(
            point(Some(" toolu_01 "), None, None),
            "Change(\"toolu_01\")"
        );
        assert_eq!(point(None, Some("786"), Some("")), "Checkpoint(\"786\")");
        assert_eq!(
            Point::choose(None, None, Some("2026-03-02T09:00:00Z".into())).ok(),
            crate::time::parse_utc("2026-03-02T09:00:00Z")
                .ok()
                .map(Point::Before)
        );
        assert_eq!(point(None, None, None), "missing");
        assert_eq!(point(Some(" "), None, None), "missing");
        assert_eq!(point(Some("a"), Some("1"), None), "several");
        assert!(point(None, None, Some("yesterday")).contains("\"yesterday\""));
    }

    #[test]
    fn the_command_line_becomes_one_request() {
        let args = RecoverArgs {
            vm: "jp-ubuntu".into(),
            path: "/etc/app.conf".into(),
            change: None,
            checkpoint: None,
            before: Some("2026-03-02T09:00:00Z".into()),
            vpg: Some("Gold".into()),
            volume: None,
            out: PathBuf::from("/tmp/out"),
            yes: true,
            force: true,
        };
        let request = RecoverRequest::try_from(&args).expect("valid");
        assert_eq!(request.file_name, "app.conf");
        assert_eq!(request.destination(), PathBuf::from("/tmp/out/app.conf"));
        assert!(matches!(request.point, Point::Before(_)));
        assert_eq!(request.vpg.as_deref(), Some("Gold"));
        assert!(request.force);

        let bad_time = RecoverArgs {
            before: Some("noon".into()),
            ..args
        };
        let err = format!("{:#}", RecoverRequest::try_from(&bad_time).unwrap_err());
        assert!(err.starts_with("--before: \"noon\""), "{err}");
        // A duration ago, as `log --since` takes it.
        let Ok(Point::Before(at)) = Point::choose(None, None, Some("2h".into())) else {
            panic!("--before 2h is a time");
        };
        let two_hours = std::time::Duration::from_secs(2 * 3600);
        let age = SystemTime::now().duration_since(at).expect("in the past");
        assert!(
            age >= two_hours && age < two_hours + std::time::Duration::from_secs(60),
            "{age:?}"
        );
        let no_file = RecoverArgs {
            path: "/etc/".into(),
            before: Some("2026-03-02T09:00:00Z".into()),
            ..bad_time
        };
        let err = RecoverRequest::try_from(&no_file).unwrap_err().to_string();
        assert_eq!(err, "guest path \"/etc/\" names no file");
    }
}
