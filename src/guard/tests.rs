use super::*;

fn times(secs: &[u64]) -> Vec<SystemTime> {
    secs.iter()
        .map(|s| SystemTime::UNIX_EPOCH + Duration::from_secs(*s))
        .collect()
}

fn vpg(status: Option<i64>, text: Option<&str>, sub: Option<i64>) -> Vpg {
    Vpg {
        id: "v".into(),
        name: "g".into(),
        status,
        health: text.map(str::to_owned),
        sub_status: sub,
        sub_status_text: None,
        actual_rpo_secs: None,
        protected_site: None,
        recovery_site: None,
        configured_history: None,
        actual_history: None,
        running_test: None,
    }
}

#[test]
fn health_rules_out_states_with_no_restorable_point_and_notes_a_missed_sla() {
    let unrestorable = |v: &Vpg| match health(v) {
        Health::Unrestorable(status) => status,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        unrestorable(&vpg(Some(0), None, Some(1))),
        "Initializing (InitialSync)"
    );
    assert_eq!(unrestorable(&vpg(Some(5), None, None)), "FailingOver");
    assert_eq!(
        unrestorable(&vpg(Some(1), None, Some(25))),
        "MeetingSLA (ReplicationPausedUserInitiated)"
    );
    assert_eq!(
        unrestorable(&vpg(None, Some("Moving"), None)),
        "Moving",
        "read by its words when the number is missing"
    );
    assert_eq!(
        unrestorable(&vpg(Some(2), None, Some(31))),
        "NotMeetingSLA (JournalStorageError)"
    );
    assert!(
        matches!(health(&vpg(Some(4), None, Some(0))), Health::Degraded(n) if n.starts_with("RpoNotMeetingSLA"))
    );
    assert_eq!(health(&vpg(Some(1), None, Some(4))), Health::Restorable);
    assert_eq!(
        health(&vpg(Some(42), Some("SomethingNew"), None)),
        Health::Restorable,
        "an unknown status still needs its checkpoint confirmed"
    );
    assert_eq!(health(&vpg(None, None, None)), Health::Restorable);
}

#[test]
fn cadence_is_the_median_gap() {
    assert_eq!(
        cadence_of(&times(&[0, 5, 10, 15, 40])),
        Duration::from_secs(5)
    );
    assert_eq!(
        cadence_of(&times(&[0, 630, 1260])),
        Duration::from_secs(630)
    );
    assert_eq!(cadence_of(&times(&[100])), DEFAULT_CADENCE);
}

#[test]
fn polling_follows_the_cadence() {
    // vSphere (5 s journal): stays fast.
    let mut fast = Polling::new(
        Duration::from_millis(250),
        Duration::from_secs(5) / 10,
        Duration::from_secs(10),
    );
    let fast: Vec<_> = (0..6).map(|_| fast.next()).collect();
    assert!(
        fast.iter().all(|d| *d <= Duration::from_millis(500)),
        "{fast:?}"
    );
    // AWS (630 s journal): grows to the ceiling instead of hammering the ZVM.
    let mut slow = Polling::new(
        Duration::from_millis(250),
        Duration::from_secs(630) / 10,
        Duration::from_secs(10),
    );
    let last = (0..20).map(|_| slow.next()).last();
    assert_eq!(last, Some(Duration::from_secs(10)));
}

#[test]
fn the_expected_listing_follows_the_measured_profiles() {
    for (cadence, listed) in [(5, 4.0), (60, 34.0), (630, 128.0)] {
        let got = expected_listing(Duration::from_secs(cadence)).as_secs_f64();
        assert!((got - listed).abs() < 0.01, "{cadence}: {got}");
    }
    let between = expected_listing(Duration::from_secs(20)).as_secs_f64();
    assert!(between > 4.0 && between < 34.0, "{between}");
}

/// On vSphere (5 s cadence, listed ~4 s after the insert, task done after ~1 s): a few
/// sparse polls, then every 100 ms from 3.8 s on, so a tag listed at 4 s is seen within
/// 100 ms, with no more polls than a steady 500 ms would make.
#[test]
fn the_tag_is_watched_densely_only_around_its_expected_listing() {
    let inserted = Instant::now();
    let mut watch = TagWatch::new(inserted, Duration::from_secs(5));
    let mut now = inserted + Duration::from_secs(1);
    let mut polls = vec![now];
    while now < inserted + Duration::from_secs(4) {
        now += watch.pause(now);
        polls.push(now);
    }
    let at = |t: &Instant| t.duration_since(inserted).as_millis();
    let seen = polls.last().map(at).unwrap_or_default();
    assert!(
        (4000..=4100).contains(&seen),
        "{:?}",
        polls.iter().map(at).collect::<Vec<_>>()
    );
    assert!(
        polls.len() <= 7,
        "{:?}",
        polls.iter().map(at).collect::<Vec<_>>()
    );
    // Past the window, pauses grow again up to the cadence's tenth.
    now = inserted + Duration::from_secs(6);
    assert_eq!(watch.pause(now), Duration::from_millis(100));
    let mut last = Duration::ZERO;
    for _ in 0..10 {
        last = watch.pause(now);
    }
    assert_eq!(last, Duration::from_millis(500));
}

#[test]
fn concurrent_insert_reasons_are_recognised() {
    assert!(is_concurrent_insert(
        "Another checkpoint operation is in progress on VPG x"
    ));
    assert!(!is_concurrent_insert("Journal storage error"));
    assert!(!is_concurrent_insert(""));
}

#[test]
fn refusals_point_at_the_zerto_task() {
    let text = Refusal::TagNotListed {
        task_id: "t-1.s".into(),
    }
    .to_string();
    assert!(
        text.contains("t-1.s") && text.contains("check Zerto task"),
        "{text}"
    );
    let text = Refusal::TaskEnded {
        task_id: "t-2.s".into(),
        state: TaskState::Failed,
        reason: "VPG is in error".into(),
    }
    .to_string();
    assert_eq!(text, "checkpoint task t-2.s ended Failed: VPG is in error");
}
