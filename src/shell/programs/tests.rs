//! The hypervisor grammars read from a VM's file or key (`vmrun`, `xe`, virsh's host-level
//! objects), each example in the spellings its tool accepts.

use crate::inventory::Inventory;
use crate::shell::Dialect;
use crate::shell::Verdict;
use crate::shell::tests::{decision_in, verdict_of, verdict_with};

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
        let known = Inventory::of(["web01", "db01", "win01", "10.0.0.5"]);
        let verdict = verdict_with(command, Dialect::Posix, &known);
        assert_eq!(
            outcome(command, Dialect::Posix),
            *want,
            "{command}: {verdict:?}"
        );
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
fn database_options_are_read_by_any_unambiguous_prefix() {
    expect(&[
        ("psql --hos=db01 -c 'DROP TABLE users'", "checkpoint db01"),
        (
            "psql --hos db01 --comm 'DROP TABLE users'",
            "checkpoint db01",
        ),
        ("psql --hos db01 --comm 'SELECT 1'", "none"),
        (
            "pg_restore --hos=db01 -d app --clean dump.pgc",
            "checkpoint db01",
        ),
        (
            "pg_dumpall --hos=db01 --clean | psql --hos=db01",
            "checkpoint db01",
        ),
        ("mysql --hos=db01 -e 'DROP DATABASE app'", "checkpoint db01"),
        ("mysql --ho=db01 -e 'DROP DATABASE app'", "checkpoint db01"),
        // No server read, but a word names a protected machine.
        ("psql --hostx=db01 -c 'DROP TABLE users'", "ask"),
        ("psql -c 'DROP TABLE users'", "none"),
        ("psql -d app -c 'DROP TABLE users'", "none"),
    ]);
}

#[test]
fn the_net_sees_hosts_in_every_word_shape() {
    expect(&[
        (
            "ipmitool -I lanplus -Hweb01 -U admin -P x chassis power cycle",
            "ask",
        ),
        ("ipmitool -Hweb01 -Uadmin -Px power off", "ask"),
        ("racadm -rweb01 -uroot -px serveraction powercycle", "ask"),
        ("clickhouse-client -hdb01 -q 'DROP TABLE events'", "ask"),
        ("net rpc shutdown -r -Swin01 -Uadmin%x", "ask"),
        ("snmpset -v2c -c private udp:web01:161 sysName.0 s x", "ask"),
        ("snmpset -v2c -c private tcp:web01 sysName.0 s x", "ask"),
        ("foo -t 'web01 db01'", "ask"),
        ("foo target.host=web01", "ask"),
        ("foo -e '{\"host\":\"web01\"}'", "ask"),
        (
            "kubectl debug node/web01 -it --image=busybox -- chroot /host reboot",
            "ask",
        ),
        // Inert programs, prose and other words stay quiet.
        ("grep web01 file", "none"),
        ("ping web01", "none"),
        ("grep -Hweb01 file", "none"),
        ("git commit -m 'fix: ssh web01 reboot loop'", "none"),
        ("foo -t 'web02 db02'", "none"),
        ("foo -Hweb02 udp:web02:161 node/web02 logs/web01", "none"),
    ]);
}

#[test]
fn host_words_are_read_as_the_shell_and_the_resolver_do() {
    expect(&[
        (
            "for h in web0{1,2}; do ssh $h sudo reboot; done",
            "checkpoint web01,web02",
        ),
        // ssh runs the second word on the first machine.
        ("ssh web0{1,2} 'sudo reboot'", "checkpoint web01"),
        (
            "for h in {web,db}01; do ssh $h reboot; done",
            "checkpoint db01,web01",
        ),
        (
            "for h in web{00..01}; do ssh $h reboot; done",
            "checkpoint web00,web01",
        ),
        ("ssh web01. reboot", "checkpoint web01"),
        (
            "curl -X POST http://web01.:8080/api/reboot",
            "checkpoint web01",
        ),
        ("find . -name '*.rs' -exec cat {} \\;", "none"),
        ("curl -K req.cfg", "ask"),
        ("curl --conf req.cfg", "ask"),
        ("curl https://example.com/x", "none"),
    ]);
}

/// A network tool whose action only reads the machine it names, or changes only this
/// machine with what it fetched there, stays quiet; the same tool told to change the
/// machine still meets the net.
#[test]
fn tools_that_only_read_the_machine_they_name_stay_quiet() {
    expect(&[
        ("nmap -sV -p 22,80,443 web01", "none"),
        ("nmap --script http-put --script-args x web01", "ask"),
        ("snmpwalk -v2c -c public web01 system", "none"),
        ("snmpget -v2c -c public web01 sysUpTime.0", "none"),
        ("snmpset -v2c -c private web01 sysName.0 s x", "ask"),
        (
            "ldapsearch -H ldap://db01 -x -b dc=corp,dc=example '(uid=bob)'",
            "none",
        ),
        ("ldapmodify -H ldap://db01 -f change.ldif", "ask"),
        (
            "ipmitool -I lanplus -H web01 -U admin -P x sdr list",
            "none",
        ),
        ("ipmitool -H web01 -U admin -P x chassis status", "none"),
        ("ipmitool -H web01 -U admin -P x chassis power off", "ask"),
        ("ipmitool -H web01 -U sdr -P x power off", "ask"),
        ("ipmitool -H web01 sdr fill sensors", "ask"),
        (
            "etcdctl --endpoints=http://db01:2379 get --prefix /config",
            "none",
        ),
        (
            "etcdctl --endpoints=http://db01:2379 del --prefix /config",
            "ask",
        ),
        ("consul members -http-addr=web01:8500", "none"),
        ("consul kv delete -http-addr=web01:8500 -recurse app", "ask"),
        ("pip install git+ssh://git@web01/srv/pkg.git", "none"),
        (
            "pip download --index-url http://web01:8080/simple x",
            "none",
        ),
        ("cargo install --git ssh://web01/srv/tool.git", "none"),
        ("cargo test web01", "none"),
        ("cargo publish --index ssh://web01/index", "ask"),
        (
            "git archive --remote=web01:/srv/app.git HEAD | tar x",
            "none",
        ),
        ("git push web01:/srv/app.git", "ask"),
        ("salt-call --master=web01 state.apply", "none"),
        (
            "ansible-pull -U https://git.example/ops.git -i web01, site.yml",
            "none",
        ),
        ("ansible-inventory -i inventories/prod --host web01", "none"),
    ]);
}

/// A GET whose URL names an action (a path segment, a query's name, or the value of its
/// `action`) is a change of the server; a page that only mentions one reads.
#[test]
fn a_get_that_names_an_action_in_its_url_changes_the_server() {
    expect(&[
        (
            "curl -u admin:x 'http://web01:8080/manager/text/undeploy?path=/app'",
            "checkpoint web01",
        ),
        ("curl http://web01/api/cache/flush", "checkpoint web01"),
        (
            "curl 'http://web01/admin?action=Restart'",
            "checkpoint web01",
        ),
        ("wget -qO- http://web01/service/reboot", "checkpoint web01"),
        ("curl http://web01/api/deployments", "none"),
        ("curl 'http://web01/search?q=delete'", "none"),
        ("curl http://web01/docs/stopwatch", "none"),
        ("curl http://web01/", "none"),
        ("curl http://web01/health", "none"),
    ]);
}

/// A port of this machine forwarded or relayed to another reaches that machine: a later
/// client in the same command naming localhost (ssh, curl, a database client) changes the
/// forward's far end, not this machine and not the ssh host that only carries it.
#[test]
fn a_client_of_a_forwarded_port_reaches_the_forwards_end() {
    expect(&[
        (
            "ssh -fNL 2222:web01:22 build07 && ssh -p 2222 localhost sudo reboot",
            "checkpoint web01",
        ),
        (
            "ssh -f -N -L 127.0.0.1:2222:web01:22 build07; ssh -p 2222 127.0.0.1 reboot",
            "checkpoint web01",
        ),
        (
            "ssh -fNL 2222:web01:22 build07 && ssh -p 2222 localhost uptime",
            "none",
        ),
        (
            "socat TCP-LISTEN:2222,fork TCP:web01:22 & ssh -p 2222 localhost reboot",
            "checkpoint web01",
        ),
        (
            "autossh -M0 -fNL 8443:localhost:443 web01 && curl -k -X DELETE https://localhost:8443/api/cache",
            "checkpoint web01",
        ),
        (
            "ssh -fNL 8443:localhost:443 web01 && curl -k https://localhost:8443/api/cache",
            "none",
        ),
        (
            "ssh -fNL 6543:db01:5432 build07 && psql -h localhost -p 6543 -c 'DROP TABLE t'",
            "checkpoint db01",
        ),
        ("curl -X DELETE http://localhost:8080/x", "none"),
        ("ssh localhost sudo reboot", "checkpoint localhost"),
    ]);
}

/// A git hook the command writes runs at the git command that fires it.
#[test]
fn a_git_hook_the_command_writes_is_judged_where_git_fires_it() {
    expect(&[
        (
            "echo 'ssh web01 reboot' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && git commit -m x",
            "checkpoint web01",
        ),
        (
            "echo 'ssh db01 reboot' > app/.git/hooks/post-checkout; git -C app checkout main",
            "checkpoint db01",
        ),
        (
            "echo 'ssh web01 uptime' > .git/hooks/pre-commit && git commit -m x",
            "none",
        ),
        (
            "echo 'ssh web01 reboot' > .git/hooks/pre-commit && git status",
            "none",
        ),
        (
            "echo 'ssh web01 reboot' > notes.txt && git commit -m x",
            "none",
        ),
        (
            "echo \"ssh $H reboot\" > .git/hooks/pre-push && git push",
            "ask",
        ),
    ]);
}

/// git's ext transport runs its command, and a makefile only known when make runs asks.
#[test]
fn git_ext_transports_and_unread_makefiles_are_read() {
    expect(&[
        (
            "git -c protocol.ext.allow=always clone 'ext::sh -c ssh% web01% reboot' x",
            "checkpoint web01",
        ),
        (
            "git clone 'ext::ssh -p 2222 web01 %S% /srv/repo' x",
            "checkpoint web01",
        ),
        ("make -f \"$MK\" deploy-web01", "ask"),
        ("make -f build.mk test", "none"),
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

/// A context or connection named in the environment picks hosts the command does not write,
/// as `--context` does.
#[test]
fn a_context_named_in_the_environment_asks() {
    expect(&[
        ("DOCKER_CONTEXT=prod docker rm -f app", "ask"),
        ("export DOCKER_CONTEXT=prod; docker rm -f app", "ask"),
        ("CONTAINER_CONNECTION=prod podman rm -f app", "ask"),
        ("DOCKER_CONTEXT=prod docker ps", "none"),
        ("docker rm -f app", "none"),
    ]);
}

/// The inventory `ANSIBLE_INVENTORY` names is the one ansible reads without `-i`.
#[test]
fn the_inventory_the_environment_names_is_read() {
    expect(&[
        (
            "ANSIBLE_INVENTORY=web01, ansible all -m reboot",
            "checkpoint web01",
        ),
        (
            "export ANSIBLE_INVENTORY=web01,db01,; ansible-playbook -l all site.yml",
            "checkpoint db01,web01",
        ),
    ]);
}
