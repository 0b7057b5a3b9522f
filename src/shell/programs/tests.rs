//! The hypervisor grammars read from a VM's file or key (`vmrun`, `xe`, virsh's host-level
//! objects), each example in the spellings its tool accepts.

use crate::inventory::Inventory;
use crate::shell::Dialect;
use crate::shell::Verdict;
use crate::shell::tests::{decision_in, verdict_of};

/// What the hook would do with the test inventory protected: `none`, `ask`, or `checkpoint
/// a,b` (sorted, lower case).
fn outcome(command: &str, dialect: Dialect) -> String {
    decision_in(
        command,
        dialect,
        &Inventory::of(["web01", "db01", "win01", "10.0.0.5"]),
    )
}

#[track_caller]
fn expect(cases: &[(&str, &str)]) {
    for (command, want) in cases {
        assert_eq!(outcome(command, Dialect::Posix), *want, "{command}");
    }
}

#[test]
fn vmrun_names_the_vm_by_its_vmx_file() {
    let vmx_spellings = [
        "/vmfs/volumes/ds1/web01/web01.vmx",
        "'[ds1] web01/web01.vmx'",
        "\"/Users/me/Virtual Machines.localized/web01.vmwarevm/web01.vmx\"",
        "/vmfs/volumes/ds1/web01/Web01.VMX",
        // Only the directory is a protected name: the file keeps a display name.
        "'/vms/web01/Ubuntu 64-bit.vmx'",
    ];
    for vmx in vmx_spellings {
        for auth in [
            "",
            "-T esx -h esx01 -u root -p pw ",
            "-T ws ",
            "-gu admin -gp x -T fusion ",
        ] {
            for (command, want) in [
                ("stop", "checkpoint web01"),
                ("revertToSnapshot", "checkpoint web01"),
                ("REVERTTOSNAPSHOT", "checkpoint web01"),
                ("listSnapshots", "none"),
                ("getGuestIPAddress", "none"),
                ("checkToolsState", "none"),
            ] {
                let line = format!("vmrun {auth}{command} {vmx}");
                assert_eq!(outcome(&line, Dialect::Posix), want, "{line}");
            }
            let copy =
                format!("vmrun {auth}CopyFileFromHostToGuest {vmx} ./app.conf /etc/app.conf");
            assert_eq!(outcome(&copy, Dialect::Posix), "checkpoint web01", "{copy}");
            let back =
                format!("vmrun {auth}CopyFileFromGuestToHost {vmx} /etc/app.conf ./app.conf");
            assert_eq!(outcome(&back, Dialect::Posix), "none", "{back}");
        }
    }
    expect(&[
        ("vmrun list", "none"),
        ("vmrun -T esx -h esx01 -u root -p pw list", "none"),
        (
            "vmrun -T ws runProgramInGuest /vms/web01/web01.vmx /bin/ls /tmp",
            "none",
        ),
        (
            "vmrun -T ws runProgramInGuest /vms/web01/web01.vmx -noWait /usr/bin/systemctl restart app",
            "checkpoint web01",
        ),
        ("vmrun start $VMX", "ask"),
        ("vmrun stop", "ask"),
        // A VM the net does not know is named by its stem, which the ZVM then looks up.
        ("vmrun stop /vms/build/build.vmx", "checkpoint build"),
    ]);
}

#[test]
fn xe_reads_the_vm_from_its_keys() {
    expect(&[
        ("xe vm-list", "none"),
        ("xe vm-list power-state=running params=name-label", "none"),
        ("xe -s xen01 -u root -pw secret vm-list", "none"),
        (
            "xe vm-param-get uuid=1234 param-name=memory-static-max",
            "none",
        ),
        ("xe snapshot-list", "none"),
        ("xe vm-start vm=web01", "checkpoint web01"),
        ("xe vm-shutdown vm=web01 --force", "checkpoint web01"),
        (
            "xe -s xen01 -u root -pw secret vm-reboot vm=web01",
            "checkpoint web01",
        ),
        ("xe vm-start name-label=web01", "checkpoint web01"),
        (
            "xe vm-snapshot vm=web01 new-name-label=before-upgrade",
            "checkpoint web01",
        ),
        // A name set by param-set is the new value, not the VM.
        ("xe vm-param-set uuid=1234 name-label=web01", "ask"),
        ("xe vm-param-set uuid=1234 memory-static-max=8GiB", "ask"),
        ("xe snapshot-revert snapshot-uuid=1234", "ask"),
        ("xe snapshot-destroy uuid=1234", "ask"),
        ("xe vdi-destroy uuid=1234", "ask"),
        ("xe vm-shutdown power-state=running --multiple", "ask"),
        ("xe vm-shutdown vm=web01 --multiple", "ask"),
        ("xe host-reboot host=xen01", "ask"),
        ("xe vm-start vm=$VM", "ask"),
    ]);
}

#[test]
fn virsh_host_objects_ask_unless_a_connection_names_the_host() {
    expect(&[
        ("virsh net-list --all", "none"),
        (
            "virsh net-update default add ip-dhcp-host '<host/>' --live",
            "ask",
        ),
        ("virsh pool-destroy default", "ask"),
        ("virsh -c qemu:///system net-destroy default", "ask"),
        (
            "virsh -c qemu+ssh://root@web01/system net-destroy default",
            "checkpoint web01",
        ),
        (
            "virsh --connect=qemu+ssh://web01/system pool-destroy default",
            "checkpoint web01",
        ),
        ("virsh pool-refresh default", "none"),
        ("virsh net-dhcp-leases default", "none"),
        ("virsh -c $URI net-destroy default", "ask"),
        ("virsh reboot web01", "checkpoint web01"),
    ]);
}

/// What the pure analysis leaves for resolution: a deploy tool's configuration file.
fn deploy_target(command: &str) -> Option<String> {
    match verdict_of(command, Dialect::Posix) {
        Verdict::Mutating(targets) => Some(
            targets
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    }
}

#[test]
fn kamal_reads_its_servers_from_its_configuration_or_its_host_filter() {
    for (command, want) in [
        ("kamal deploy", "deploy:config/deploy.yml"),
        ("kamal setup", "deploy:config/deploy.yml"),
        ("kamal rollback abc123", "deploy:config/deploy.yml"),
        ("kamal proxy reboot", "deploy:config/deploy.yml"),
        ("kamal accessory reboot db", "deploy:config/deploy.yml"),
        (
            "kamal app exec -i 'bin/rails console'",
            "deploy:config/deploy.yml",
        ),
        (
            "kamal app exec 'bin/rails db:migrate'",
            "deploy:config/deploy.yml",
        ),
        (
            "kamal deploy -d staging",
            "deploy:config/deploy.staging.yml",
        ),
        (
            "kamal deploy --destination=staging",
            "deploy:config/deploy.staging.yml",
        ),
        ("kamal -c deploy/prod.yml deploy", "deploy:deploy/prod.yml"),
        ("kamal deploy --roles=web", "deploy:config/deploy.yml"),
        ("kamal deploy --hosts=web01,web02", "host:web01 host:web02"),
        ("kamal app boot -h 10.0.0.5", "host:10.0.0.5"),
        (
            "cap production deploy",
            "deploy:config/deploy/production.rb",
        ),
        (
            "bundle exec cap staging deploy:rollback",
            "deploy:config/deploy/staging.rb",
        ),
        ("HOSTS=web01 cap production deploy", "host:web01"),
        (
            "cap production deploy --hosts=web01,db01",
            "host:web01 host:db01",
        ),
    ] {
        assert_eq!(deploy_target(command).as_deref(), Some(want), "{command}");
    }
    expect(&[
        ("kamal version", "none"),
        ("kamal config", "none"),
        ("kamal config -d staging", "none"),
        ("kamal app details", "none"),
        ("kamal app logs -f", "none"),
        ("kamal app logs --roles=web --since 5m", "none"),
        ("kamal proxy logs", "none"),
        ("kamal lock status", "none"),
        ("kamal accessory details db", "none"),
        ("kamal app exec 'ls /rails/log'", "none"),
        ("kamal help deploy", "none"),
        ("kamal deploy --help", "none"),
        ("kamal deploy -d $STAGE", "ask"),
        ("kamal deploy --hosts=$HOSTS", "ask"),
        (
            "printf 'servers: [web02]' > config/deploy.yml && kamal deploy",
            "ask",
        ),
        (
            "echo x > ./config/deploy/production.rb; cap production deploy",
            "ask",
        ),
        ("cap -T", "none"),
        ("cap production -T", "none"),
        ("cap production deploy --dry-run", "none"),
        ("cap production doctor", "none"),
        ("cap $STAGE deploy", "ask"),
        ("dep list", "none"),
        ("dep deploy production", "ask"),
        ("mina -T", "none"),
        ("mina deploy", "ask"),
    ]);
}

#[test]
fn pstools_read_unless_they_change_a_service_a_log_or_a_session() {
    let cases = [
        ("pslist \\\\win01", "none"),
        ("pslist \\\\win01 -m w3wp", "none"),
        ("psinfo \\\\win01,win01 -s -d", "none"),
        ("PsInfo64.exe \\\\win01 -h", "none"),
        ("psservice \\\\win01 query W3SVC", "none"),
        (
            "psservice \\\\win01 -u corp\\admin -p pw config spooler",
            "none",
        ),
        ("psservice \\\\win01 stop W3SVC", "checkpoint win01"),
        (
            "psservice \\\\win01 setconfig W3SVC disabled",
            "checkpoint win01",
        ),
        ("psloglist \\\\win01 -n 20 system", "none"),
        ("psloglist \\\\win01 -c system", "checkpoint win01"),
        ("psfile \\\\win01", "none"),
        ("psfile \\\\win01 C:\\app\\data.db -c", "checkpoint win01"),
        ("psloggedon \\\\win01", "none"),
        ("pskill \\\\win01 w3wp", "checkpoint win01"),
        ("psshutdown \\\\win01 -r -t 0", "checkpoint win01"),
        ("psshutdown @hosts.txt -r -t 0", "ask"),
        ("pspasswd \\\\win01 admin", "checkpoint win01"),
    ];
    for (command, want) in cases {
        assert_eq!(outcome(command, Dialect::PowerShell), want, "{command}");
    }
}

#[test]
fn a_projects_deploy_entry_point_asks_and_its_other_tasks_do_not() {
    expect(&[
        ("./scripts/deploy.sh production", "ask"),
        ("scripts/deploy-web.sh --dry-run", "ask"),
        ("bin/deploy staging", "ask"),
        ("make deploy", "ask"),
        ("make -j4 deploy-prod", "ask"),
        ("just deploy web", "ask"),
        ("npm run deploy", "ask"),
        ("pnpm run-script deploy:staging", "ask"),
        ("yarn deploy:prod", "ask"),
        ("make -C infra deploy", "ask"),
        ("npm --prefix app run deploy", "ask"),
        ("./gradlew clean deploy", "ask"),
        ("make -C infra build", "none"),
        ("make build", "none"),
        ("make test DEPLOY_ENV=ci", "none"),
        ("npm run build", "none"),
        ("yarn install", "none"),
        ("cat scripts/deploy.sh", "none"),
        ("shellcheck scripts/deploy.sh", "none"),
        ("git add scripts/deploy.sh", "none"),
    ]);
    assert_eq!(
        outcome(".\\deploy.ps1 -Environment Production", Dialect::PowerShell),
        "ask"
    );
}

#[test]
fn local_tools_that_mention_a_remote_program_or_a_protected_vm_stay_local() {
    expect(&[
        ("git grep -n 'db01' -- config/", "none"),
        ("git log --oneline --grep=web01", "none"),
        ("git -C /srv/app grep web01", "none"),
        ("git -c color.ui=always log --grep=db01", "none"),
        ("gem install bolt", "none"),
        ("pipx install ansible-core", "none"),
        ("go -C govc install", "none"),
        ("virsh --version", "none"),
        ("kamal build dev", "none"),
        ("bundle exec cap install STAGES=staging,production", "none"),
        // Still read: a protected VM handed to a git command that may reach it.
        ("git push web01 main", "ask"),
    ]);
}

#[test]
fn cmd_built_ins_and_moves_change_the_admin_share_they_name() {
    for (command, want) in [
        ("rmdir /s /q \\\\win01\\c$\\old", "checkpoint win01"),
        ("rd /S /Q \\\\win01\\c$\\old", "checkpoint win01"),
        ("del /f /q \\\\win01\\c$\\tmp\\x.log", "checkpoint win01"),
        ("md \\\\win01\\c$\\app", "checkpoint win01"),
        ("mkdir \\\\win01\\c$\\app\\logs", "checkpoint win01"),
        (
            "Move-Item \\\\win01\\c$\\app\\old.log .\\archive\\",
            "checkpoint win01",
        ),
        ("move .\\app.conf \\\\win01\\c$\\app\\", "checkpoint win01"),
        ("Copy-Item \\\\win01\\c$\\app\\old.log .\\archive\\", "none"),
        ("mkdir C:\\app", "none"),
        ("Remove-Item \\\\$h\\c$\\x", "ask"),
    ] {
        assert_eq!(outcome(command, Dialect::PowerShell), want, "{command}");
    }
}

#[test]
fn bash_network_redirections_change_the_machine_they_send_to() {
    expect(&[
        ("echo FLUSHALL > /dev/tcp/web01/6379", "checkpoint web01"),
        ("echo FLUSHALL >> '/dev/tcp/web01/6379'", "checkpoint web01"),
        (
            "exec 3<>/dev/tcp/10.0.0.5/6379; echo FLUSHALL >&3",
            "checkpoint 10.0.0.5",
        ),
        ("printf x >/tmp/a 3>/dev/udp/db01/514", "checkpoint db01"),
        ("{ echo SHUTDOWN; } > /dev/tcp/db01/6379", "checkpoint db01"),
        ("echo x > /dev/tcp/$H/80", "ask"),
        ("cat < /dev/tcp/web01/80", "none"),
        ("echo hi > /tmp/x", "none"),
    ]);
}

#[test]
fn diagnostics_agents_run_on_a_machine_only_read() {
    expect(&[
        ("ssh web01 pm2 list", "none"),
        ("ssh web01 pm2 logs api --lines 100 --nostream", "none"),
        ("ssh web01 pm2 restart api", "checkpoint web01"),
        ("ssh web02 'sudo nginx -t'", "none"),
        ("ssh web01 'nginx -s reload'", "checkpoint web01"),
        ("ssh web01 'apt list --upgradable 2>/dev/null'", "none"),
        ("ssh web01 apt install -y nginx", "checkpoint web01"),
        ("ssh web01 docker compose logs --tail 100", "none"),
        (
            "ssh web01 'docker compose -f /srv/app/compose.yaml ps'",
            "none",
        ),
        ("ssh web01 docker compose up -d", "checkpoint web01"),
        ("virsh domtime db01", "none"),
        ("virsh domtime db01 --sync", "checkpoint db01"),
        ("virsh domtime db01 --time 0", "checkpoint db01"),
        ("virsh snapshot-current db01", "none"),
        (
            "virsh snapshot-current db01 before-upgrade",
            "checkpoint db01",
        ),
        ("virsh dommemstat db01", "none"),
        (
            "virsh dommemstat db01 --period 5 --config",
            "checkpoint db01",
        ),
        ("govc vm.question -vm db01", "none"),
        ("govc vm.question -vm db01 -answer 0", "checkpoint db01"),
        ("qm guest cmd 101 get-osinfo", "none"),
        ("qm cloudinit update 101", "ask"),
        ("pvesh get /nodes", "none"),
        ("pvesh set cluster/options -console html5", "ask"),
        (
            "bolt file download /var/log/app.log ./logs --targets web01",
            "none",
        ),
        ("bolt plan show", "none"),
        (
            "bolt apply manifests/site.pp --noop -t web01",
            "checkpoint web01",
        ),
        (
            "mysql --defaults-group-suffix=prod -e 'TRUNCATE app.audit'",
            "ask",
        ),
        // git reads a remote repository; told to run a program there, it changes it.
        ("git clone deploy@web01:/srv/git/app.git /tmp/app", "none"),
        ("git fetch deploy@web01:/srv/git/app.git main", "none"),
        ("git clone -u 'reboot' deploy@web01:/x", "ask"),
        ("git push web01 main", "ask"),
    ]);
}

/// Words cut short or holding characters of several bytes are read, never a panic.
#[test]
fn truncated_options_and_wide_characters_are_read_without_a_panic() {
    for command in [
        "virsh -c",
        "virsh --connect",
        "virsh -d",
        "ansible -€",
        "ansible-playbook -€ site.yml",
        "ansible web01 -m€ shell",
        "vmrun -T",
        "xe -s",
        "kamal --hosts",
        "cap -z",
    ] {
        let _ = outcome(command, Dialect::Posix);
    }
    expect(&[("virsh -c", "ask"), ("ansible-playbook -€ site.yml", "ask")]);
}

#[test]
fn the_worlds_remaining_reads_and_changes() {
    expect(&[
        ("mysqladmin -h db01 -u root -p status", "none"),
        ("mysqladmin --host=db01 ping", "none"),
        ("mysqladmin -h db01 shutdown", "checkpoint db01"),
        ("mysqlcheck -h db01 --check app", "none"),
        ("mysqlcheck -h db01 --repair app", "checkpoint db01"),
        ("pg_isready -h db01 -p 5432", "none"),
        ("mongodump --host=db01 --db=app --out=./dump", "none"),
        ("dep run 'df -h' --hosts web01", "none"),
        (
            "dep run 'systemctl restart php' --hosts web01",
            "checkpoint web01",
        ),
        ("dep run 'systemctl restart php'", "ask"),
        ("qm guest cmd 101 get-osinfo", "none"),
        ("qm guest cmd 101 shutdown", "ask"),
        ("qm cloudinit dump 101 user", "none"),
        ("gcloud compute instance-groups managed list", "none"),
        (
            "gcloud compute instance-groups managed rolling-action restart web-mig",
            "ask",
        ),
        ("gcloud compute start-iap-tunnel web01 22", "none"),
        ("az ssh vm -g rg -n web01", "ask"),
        // A port of this machine forwarded to db01 reaches db01.
        (
            "ssh -fN -L 6543:localhost:5432 db01 && psql -h localhost -p 6543 -c 'DROP TABLE t'",
            "checkpoint db01",
        ),
        (
            "ssh -fN -L 6543:localhost:5432 db01 && psql -h localhost -p 6543 -c 'SELECT 1'",
            "none",
        ),
        ("psql -h localhost -c 'DROP TABLE t'", "none"),
    ]);
    for (command, want) in [
        ("psexec \"\\\\$server\" -s net stop spooler", "ask"),
        ("psexec \\\\win01 ipconfig /release", "checkpoint win01"),
        ("psexec \\\\win01 ipconfig /all", "none"),
        ("psexec @servers.txt -s ipconfig /flushdns", "ask"),
        ("Stop-VMReplication *", "ask"),
        (
            "Resize-VHD -Path D:\\VHDs\\web01.vhdx -SizeBytes 80GB",
            "ask",
        ),
        ("Resize-VHD -Path D:\\x.vhdx -SizeBytes 1GB -WhatIf", "none"),
        ("dir \\\\win01\\c$\\inetpub\\logs", "none"),
    ] {
        assert_eq!(outcome(command, Dialect::PowerShell), want, "{command}");
    }
}

/// Options are read as the programs' own parsers read them: bundled short options, long
/// options abbreviated to any unambiguous prefix, HTTPie's data items, iproute2's
/// abbreviations in the order it tries them, ripgrep's `--pre`.
#[test]
fn options_are_read_as_the_programs_parse_them() {
    expect(&[
        (
            "curl -sfX DELETE http://web01:8080/api/app",
            "checkpoint web01",
        ),
        ("curl -sSXPUT http://web01:8080/x", "checkpoint web01"),
        (
            "curl --req DELETE http://web01:8080/api/app",
            "checkpoint web01",
        ),
        ("curl -sSL -o /tmp/out http://web01:8080/health", "none"),
        ("http web01:8080/api/app name=x", "checkpoint web01"),
        ("http web01:8080/api/app count:=3", "checkpoint web01"),
        ("http -f web01:8080/upload file@/tmp/x", "checkpoint web01"),
        ("http web01:8080/api/app X-Token:abc q==1", "none"),
        ("http 'web01:8080/search?q=x'", "none"),
        (
            "bolt apply manifests/site.pp --noop -t web01",
            "checkpoint web01",
        ),
        ("ssh web01 sort --o=/etc/passwd /tmp/x", "checkpoint web01"),
        ("ssh web01 sed --i s/a/b/ /etc/hosts", "checkpoint web01"),
        ("ssh web01 ip link s eth0 down", "checkpoint web01"),
        ("ssh web01 ip a s", "none"),
        ("ssh web01 ip route s", "none"),
        ("ssh web01 rg --pre /tmp/x.sh foo /etc", "checkpoint web01"),
        ("ssh web01 rg -n foo /etc", "none"),
        ("rg -n 'ssh web01' scripts/", "none"),
    ]);
}

/// cmd.exe's text is cmd.exe's: `#`, a backtick or a single quote hides no command there.
#[test]
fn cmd_text_hides_no_command_behind_powershell_syntax() {
    expect(&[
        ("winrs -r:win01 \"dir #& shutdown /r\"", "checkpoint win01"),
        ("winrs -r:win01 \"dir <#& shutdown /r\"", "checkpoint win01"),
        (
            "winrs -r:win01 \"dir 'x & shutdown /r'\"",
            "checkpoint win01",
        ),
        (
            "psexec \\\\win01 cmd /c \"dir #& shutdown /r\"",
            "checkpoint win01",
        ),
        ("winrs -r:win01 \"ipconfig /all & hostname\"", "none"),
    ]);
}

/// A remote program under another name is still that program, and a project's deploy
/// script run by its interpreter is the project's deploy entry point.
#[test]
fn a_renamed_program_and_an_interpreted_deploy_script_are_read() {
    expect(&[
        (
            "ln -s /usr/bin/ssh /tmp/x && /tmp/x web01 sudo reboot",
            "checkpoint web01",
        ),
        (
            "cp $(which ssh) ./s; ./s web01 sudo reboot",
            "checkpoint web01",
        ),
        (
            "ln -sf \"$(command -v ssh)\" x; ./x web01 sudo reboot",
            "checkpoint web01",
        ),
        ("ln -s /usr/bin/ssh /tmp/x && /tmp/x web01 uptime", "none"),
        ("cp a.txt b.txt && ./b.txt", "none"),
        ("bash scripts/deploy.sh", "ask"),
        ("python3 deploy.py --env prod", "ask"),
        ("python3.12 -u ./deploy_app.py", "ask"),
        ("bash -n scripts/deploy.sh", "none"),
        ("shellcheck deploy.sh", "none"),
        ("python3 manage.py migrate", "none"),
    ]);
}

#[test]
fn every_way_bash_sets_a_variable_sets_a_clients_server() {
    expect(&[
        (
            "declare -x PGHOST=db01; psql -c 'DROP TABLE t'",
            "checkpoint db01",
        ),
        (
            "declare -gx PGHOST=db01; psql -c 'DROP TABLE t'",
            "checkpoint db01",
        ),
        (
            "typeset -x MYSQL_HOST=db01; mysql -e 'DROP DATABASE app'",
            "checkpoint db01",
        ),
        (
            "declare -x MYSQL_HOST=db01 && mysql -e 'DROP DATABASE app'",
            "checkpoint db01",
        ),
        (
            "f() { local -x PGHOST=db01; psql -c 'DROP TABLE t'; }; f",
            "checkpoint db01",
        ),
        (
            "readonly PGHOST=db01; export PGHOST; psql -c 'DROP TABLE t'",
            "checkpoint db01",
        ),
        (
            "printf -v PGHOST db01; export PGHOST; psql -c 'DROP TABLE t'",
            "checkpoint db01",
        ),
        (
            "read PGHOST <<< db01; export PGHOST; psql -c 'DROP TABLE t'",
            "checkpoint db01",
        ),
        (
            "export {PGHOST,PGX}=db01; psql -c 'DROP TABLE t'",
            "checkpoint db01",
        ),
        (
            "eval export PGHOST=db01; psql -c 'DROP TABLE t'",
            "checkpoint db01",
        ),
        (
            "builtin export PGHOST=db01; psql -c 'DROP TABLE t'",
            "checkpoint db01",
        ),
        ("printf -v h %s web01; ssh $h reboot", "checkpoint web01"),
        // A value only known when the command runs: a name reference, arithmetic.
        ("declare -n r=h; h=web01; ssh $r reboot", "ask"),
        ("declare -ix PGHOST=db01; psql -c 'DROP TABLE t'", "ask"),
        ("export PGHOST=db0$((1)); psql -c 'DROP TABLE t'", "ask"),
        (
            "printf -v PGHOST '%s%s' db0 1; export PGHOST; psql -c 'DROP TABLE t'",
            "ask",
        ),
        ("read PGHOST; export PGHOST; psql -c 'DROP TABLE t'", "ask"),
        ("declare -x PGHOST=\"$1\"; psql -c 'DROP TABLE t'", "ask"),
        ("mapfile PGHOST < hosts; psql -c 'DROP TABLE t'", "ask"),
        // The command's own environment is that of what it runs.
        (
            "PGHOST=db01 bash -c \"psql -c 'DROP TABLE t'\"",
            "checkpoint db01",
        ),
        (
            "PGHOST=db01 sh -c \"psql -c 'DROP TABLE t'\"",
            "checkpoint db01",
        ),
        (
            "MYSQL_HOST=db01 bash -c \"mysql -e 'DROP DATABASE app'\"",
            "checkpoint db01",
        ),
        ("PGHOST=$(cat h) bash -c \"psql -c 'DROP TABLE t'\"", "ask"),
        // The server named, and no variable a client reads names none.
        (
            "declare -x PGHOST=db02; psql -c 'DROP TABLE t'",
            "checkpoint db02",
        ),
        (
            "declare -x PGHOST=db01; psql -h localhost -c 'DROP TABLE t'",
            "none",
        ),
        ("declare -x OTHER=$(date); psql -c 'DROP TABLE t'", "none"),
        ("read -r -p 'host? ' REPLY; echo $REPLY", "none"),
    ]);
}
