use super::*;

fn broker(guard: Option<Allowed>, operators: Allowed) -> Broker {
    Broker {
        config: Config::defaults(),
        audit: PathBuf::from("/nonexistent/audit.jsonl"),
        own_uid: 990,
        guard,
        operators,
        changes: Mutex::new(HashMap::new()),
        trail_failure: Mutex::new(None),
        peers: Mutex::new(Peers::default()),
        reading: protocol::ReadBudget::new(READING_MAX),
        cache: PathBuf::from("/nonexistent"),
        net: None,
    }
}

fn peer(uid: u32) -> Peer {
    Peer {
        uid,
        gid: 4242,
        pid: 1,
    }
}

#[test]
fn recover_and_the_trail_are_for_operators_and_guarding_for_the_listed_users() {
    let recover = role(&Op::Recover(super::super::protocol::RecoverRequest {
        vm: String::from("web01"),
        path: String::from("/etc/passwd"),
        change: None,
        checkpoint: None,
        before: None,
        vpg: None,
        volume: None,
    }));
    assert_eq!(recover, Role::Operator);
    assert_eq!(role(&Op::Log), Role::Operator);
    assert_eq!(role(&Op::FlrList), Role::Operator);
    assert_eq!(
        role(&Op::FlrEnd {
            session: String::new()
        }),
        Role::Operator
    );
    assert_eq!(
        role(&Op::Checkpoints {
            vm: String::new(),
            since_secs: None
        }),
        Role::Guard
    );

    let operators = Allowed {
        uids: vec![0, 990, 1001],
        gids: vec![],
    };
    let open = broker(None, operators);
    assert!(
        open.allowed(Role::Guard, &peer(2000)),
        "no list: every user guards"
    );
    assert!(
        !open.allowed(Role::Operator, &peer(2000)),
        "an agent may not recover"
    );
    assert!(open.allowed(Role::Operator, &peer(1001)));
    assert!(open.allowed(Role::Operator, &peer(0)));

    let listed = broker(
        Some(Allowed {
            uids: vec![2000],
            gids: vec![4242],
        }),
        Allowed {
            uids: vec![0, 990],
            gids: vec![],
        },
    );
    assert!(listed.allowed(Role::Guard, &peer(2000)));
    assert!(
        listed.allowed(Role::Guard, &peer(3000)),
        "by the peer's group"
    );
    assert!(
        !listed.allowed(
            Role::Guard,
            &Peer {
                uid: 3000,
                gid: 1,
                pid: 1
            }
        ),
        "neither listed nor in a listed group"
    );
    assert!(
        listed.allowed(Role::Guard, &peer(990)),
        "operators may guard"
    );
    assert_eq!(role(&Op::Status), Role::Anyone);
    assert!(
        listed.allowed(
            Role::Anyone,
            &Peer {
                uid: 3000,
                gid: 1,
                pid: 1
            }
        ),
        "status: any local user, even one that may not guard"
    );
}
