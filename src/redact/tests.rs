//! The redaction, case by case and by rule.
use super::{is_secret_key, redact_text};

/// Secrets written into commands and scripts, as agents write them (text, redacted).
const INLINE: &[(&str, &str)] = &[
    ("mysql -phunter2", "mysql -p[redacted]"),
    (
        "SSHPASS=hunter2 sshpass -e ssh web01",
        "SSHPASS=[redacted] sshpass -e ssh web01",
    ),
    (
        "ipmitool -H bmc -U admin -P hunter2 power reset",
        "ipmitool -H bmc -U admin -P [redacted] power reset",
    ),
    (
        "mysqladmin -u root password hunter2",
        "mysqladmin -u root password [redacted]",
    ),
    (
        "openssl enc -aes256 -k hunter2 -in f",
        "openssl enc -aes256 -k [redacted] -in f",
    ),
    ("vault login hunter2", "vault login [redacted]"),
    (
        "vault login -method=userpass",
        "vault login -method=userpass",
    ),
    ("setx API_TOKEN hunter2", "setx API_TOKEN [redacted]"),
    ("setx PATH C:\\bin", "setx PATH C:\\bin"),
    (
        "ssh admin:hunter2@unknownvm reboot",
        "ssh admin:[redacted]@unknownvm reboot",
    ),
    (
        "deploy --pin 1234 --otp 9876",
        "deploy --pin [redacted] --otp [redacted]",
    ),
    (
        "ssh -o StrictHostKeyChecking=no web01",
        "ssh -o StrictHostKeyChecking=no web01",
    ),
    // A URL ending in a secret-looking path names no key.
    (
        "POST https://zvm/auth/token: io: Connection refused",
        "POST https://zvm/auth/token: io: Connection refused",
    ),
    (
        "mysql -uroot -phunter2 -h db01 app",
        "mysql -uroot -p[redacted] -h db01 app",
    ),
    (
        "sudo /usr/bin/mysqldump -phunter2 app",
        "sudo /usr/bin/mysqldump -p[redacted] app",
    ),
    ("mysql -p app", "mysql -p app"),
    (
        "curl -u admin:hunter2 https://x",
        "curl -u admin:[redacted] https://x",
    ),
    (
        "curl --user admin:hunter2 https://x",
        "curl --user admin:[redacted] https://x",
    ),
    (
        "curl -uadmin:hunter2 https://x",
        "curl -uadmin:[redacted] https://x",
    ),
    ("curl -u admin https://x", "curl -u admin https://x"),
    (
        "sshpass -p hunter2 ssh web01",
        "sshpass -p [redacted] ssh web01",
    ),
    (
        "sshpass -phunter2 ssh web01",
        "sshpass -p[redacted] ssh web01",
    ),
    ("X=1\nDB_PASSWORD=hunter2", "X=1\nDB_PASSWORD=[redacted]"),
    (
        "X=1\r\n\tDB_PASSWORD=hunter2\n",
        "X=1\r\n\tDB_PASSWORD=[redacted]\n",
    ),
    (
        "deploy --password\thunter2 --env prod",
        "deploy --password\t[redacted] --env prod",
    ),
    (
        "deploy --password\u{a0}hunter2",
        "deploy --password\u{a0}[redacted]",
    ),
    (
        "mysql --password=hunter2 -e 'select 1'",
        "mysql --password=[redacted] -e 'select 1'",
    ),
    (
        "deploy --api-token s3cr3t --env prod",
        "deploy --api-token [redacted] --env prod",
    ),
    (
        "PGPASSWORD=hunter2 psql -h db01",
        "PGPASSWORD=[redacted] psql -h db01",
    ),
    ("MYSQL_PWD=hunter2 mysql", "MYSQL_PWD=[redacted] mysql"),
    (
        "export GITHUB_TOKEN=hunter2; make",
        "export GITHUB_TOKEN=[redacted]; make",
    ),
    (
        "AWS_SECRET_ACCESS_KEY=hunter2 aws s3 ls",
        "AWS_SECRET_ACCESS_KEY=[redacted] aws s3 ls",
    ),
    (
        "PASSWORD=\"hunter 2 x\" ./run",
        "PASSWORD=\"[redacted]\" ./run",
    ),
    ("PASSWORD='hunter 2' ./run", "PASSWORD='[redacted]' ./run"),
    (
        "$env:ZVM_PASSWORD = \"hunter2\"",
        "$env:ZVM_PASSWORD = \"[redacted]\"",
    ),
    (
        "curl -H 'Authorization: Bearer hunter2' x",
        "curl -H 'Authorization: Bearer [redacted]' x",
    ),
    (
        "curl -H 'Authorization: Basic aHVudGVyMg==' x",
        "curl -H 'Authorization: Basic [redacted]' x",
    ),
    (
        "curl -H 'X-Auth-Token: hunter2' x",
        "curl -H 'X-Auth-Token: [redacted]' x",
    ),
    (
        "echo '{\"pw\": \"hunter2\"}' > c.json",
        "echo '{\"pw\": \"[redacted]\"}' > c.json",
    ),
    (
        "echo '{\"pw\":\"hunter2\"}' > c.json",
        "echo '{\"pw\":\"[redacted]\"}' > c.json",
    ),
    (
        "cat <<EOF\npassword: hunter2\nEOF",
        "cat <<EOF\npassword: [redacted]\nEOF",
    ),
    (
        "git clone https://bob:hunter2@git.example/r.git",
        "git clone https://bob:[redacted]@git.example/r.git",
    ),
    (
        "psql postgres://app:hunter2@db01:5432/app",
        "psql postgres://app:[redacted]@db01:5432/app",
    ),
    ("redis-cli -a hunter2 ping", "redis-cli -a [redacted] ping"),
    (
        "ldapsearch -D cn=admin -w hunter2",
        "ldapsearch -D cn=admin -w [redacted]",
    ),
    (
        "smbclient //fs01/c -U admin%hunter2",
        "smbclient //fs01/c -U admin%[redacted]",
    ),
    (
        "$p = ConvertTo-SecureString 'hunter2' -AsPlainText",
        "$p = ConvertTo-SecureString '[redacted]' -AsPlainText",
    ),
    // A password piped or here-stringed into a program that reads it from stdin.
    (
        "echo hunter2 | sudo -S systemctl restart app",
        "echo [redacted] | sudo -S systemctl restart app",
    ),
    (
        "echo 'hunter2' | sudo -S -u root reboot",
        "echo '[redacted]' | sudo -S -u root reboot",
    ),
    (
        "ssh -p 2222 web01 'echo hunter2 | sudo -S reboot'",
        "ssh -p 2222 web01 'echo [redacted] | sudo -S reboot'",
    ),
    (
        "echo hunter2|sudo --stdin id",
        "echo [redacted]|sudo --stdin id",
    ),
    (
        "echo -n 'hunter 2' | sudo -kS whoami",
        "echo -n '[redacted]' | sudo -kS whoami",
    ),
    (
        "printf '%s\\n' hunter2 | passwd --stdin root",
        "printf '%s\\n' [redacted] | passwd --stdin root",
    ),
    (
        "echo 'admin:hunter2' | chpasswd",
        "echo 'admin:[redacted]' | chpasswd",
    ),
    (
        "echo \"admin:hunter 2\" | sudo chpasswd",
        "echo \"admin:[redacted]\" | sudo chpasswd",
    ),
    (
        "(echo hunter2; echo hunter2) | smbpasswd -s -a bob",
        "(echo [redacted]; echo [redacted]) | smbpasswd -s -a bob",
    ),
    (
        "sudo -S apt-get install -y nginx <<< 'hunter 2'",
        "sudo -S apt-get install -y nginx <<< '[redacted]'",
    ),
    (
        "chpasswd <<< admin:hunter2",
        "chpasswd <<< admin:[redacted]",
    ),
    (
        "echo hunter2 | docker login -u bob --password-stdin r.example",
        "echo [redacted] | docker login -u bob --password-stdin r.example",
    ),
    // Passwords by their place on the command line.
    (
        "net user admin hunter2 /add",
        "net user admin [redacted] /add",
    ),
    (
        "net use Z: \\\\fs01\\c$ hunter2 /user:corp\\admin",
        "net use Z: \\\\fs01\\c$ [redacted] /user:corp\\admin",
    ),
    (
        "docker login -u bob -p hunter2 registry.example",
        "docker login -u bob -p [redacted] registry.example",
    ),
    (
        "docker login --password hunter2 registry.example",
        "docker login --password [redacted] registry.example",
    ),
    (
        "podman login -phunter2 r.example",
        "podman login -p[redacted] r.example",
    ),
    (
        "az login -u bob -p hunter2",
        "az login -u bob -p [redacted]",
    ),
    (
        "htpasswd -b /etc/nginx/.htpasswd bob hunter2",
        "htpasswd -b /etc/nginx/.htpasswd bob [redacted]",
    ),
    (
        "htpasswd -cbB -C 10 .htpasswd bob hunter2",
        "htpasswd -cbB -C 10 .htpasswd bob [redacted]",
    ),
    ("htpasswd -nb bob hunter2", "htpasswd -nb bob [redacted]"),
    ("openssl passwd -6 hunter2", "openssl passwd -6 [redacted]"),
    (
        "mysql -uroot -p'hunter 2' app",
        "mysql -uroot -p'[redacted]' app",
    ),
    (
        "sqlcmd -S db01 -U sa -P hunter2 -Q 'select 1'",
        "sqlcmd -S db01 -U sa -P [redacted] -Q 'select 1'",
    ),
    (
        "psexec \\\\web01 -u admin -p hunter2 cmd",
        "psexec \\\\web01 -u admin -p [redacted] cmd",
    ),
    (
        "winrs -r:web01 -u:admin -p:hunter2 ipconfig",
        "winrs -r:web01 -u:admin -p:[redacted] ipconfig",
    ),
    (
        "xfreerdp /v:web01 /u:admin /p:hunter2",
        "xfreerdp /v:web01 /u:admin /p:[redacted]",
    ),
    (
        "mount -t cifs -o username=bob,password=hunter2,vers=3 //fs01/c /mnt",
        "mount -t cifs -o username=bob,password=[redacted],vers=3 //fs01/c /mnt",
    ),
    (
        "kubectl create secret generic db --from-literal=password=hunter2",
        "kubectl create secret generic db --from-literal=password=[redacted]",
    ),
    (
        "openssl rsa -in k.pem -passin pass:hunter2",
        "openssl rsa -in k.pem -passin pass:[redacted]",
    ),
    (
        "aws configure set aws_secret_access_key hunter2",
        "aws configure set aws_secret_access_key [redacted]",
    ),
    (
        "mysql -e \"CREATE USER 'app'@'%' IDENTIFIED BY 'hunter2'\"",
        "mysql -e \"CREATE USER 'app'@'%' IDENTIFIED BY '[redacted]'\"",
    ),
    (
        "psql -c \"ALTER ROLE app WITH PASSWORD 'hunter2'\"",
        "psql -c \"ALTER ROLE app WITH PASSWORD '[redacted]'\"",
    ),
    (
        "$c = New-Object PSCredential('admin', (ConvertTo-SecureString 'hunter2' -AsPlainText -Force))",
        "$c = New-Object PSCredential('admin', (ConvertTo-SecureString '[redacted]' -AsPlainText -Force))",
    ),
    (
        "ConvertTo-SecureString -String 'hunter2' -AsPlainText",
        "ConvertTo-SecureString -String '[redacted]' -AsPlainText",
    ),
    // Headers, keys and tokens.
    (
        "curl -H 'Authorization: token hunter2' https://web01/api",
        "curl -H 'Authorization: token [redacted]' https://web01/api",
    ),
    (
        "curl -H 'Authorization: hunter2' https://web01/api",
        "curl -H 'Authorization: [redacted]' https://web01/api",
    ),
    (
        "curl -b 'session=hunter2' https://web01/",
        "curl -b '[redacted]' https://web01/",
    ),
    (
        "git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/o/r.git",
        "git clone https://[redacted]@github.com/o/r.git",
    ),
    (
        "ssh_key=b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
        "ssh_key=[redacted]",
    ),
    (
        "deploy --ssh-key AAAAB3NzaC1yc2EAAAADAQABAAABAQ web01",
        "deploy --ssh-key [redacted] web01",
    ),
    (
        "private_key: MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
        "private_key: [redacted]",
    ),
    (
        "cat key | b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
        "cat key | [redacted]",
    ),
    (
        "ansible web01 -m user -a 'name=bob password=hunter2'",
        "ansible web01 -m user -a 'name=bob password=[redacted]'",
    ),
    // Ordinary arguments stay: hosts, paths and limits that only look like secrets.
    ("echo hello | grep h", "echo hello | grep h"),
    (
        "echo 'mode = fast' | sudo tee /etc/app.conf",
        "echo 'mode = fast' | sudo tee /etc/app.conf",
    ),
    ("net user admin /add", "net user admin /add"),
    ("net user admin * /add", "net user admin * /add"),
    ("docker run -p 8080:80 nginx", "docker run -p 8080:80 nginx"),
    ("htpasswd -c .htpasswd bob", "htpasswd -c .htpasswd bob"),
    (
        "aws configure set region eu-west-1",
        "aws configure set region eu-west-1",
    ),
    (
        "mount -o ro,noatime /dev/sdb1 /mnt",
        "mount -o ro,noatime /dev/sdb1 /mnt",
    ),
    (
        "ssh passage01 'cat /etc/passwd'",
        "ssh passage01 'cat /etc/passwd'",
    ),
    (
        "ssh -p 2222 passage01 uptime",
        "ssh -p 2222 passage01 uptime",
    ),
    (
        "scp -P 22 app.conf passage01:/etc/",
        "scp -P 22 app.conf passage01:/etc/",
    ),
    (
        "ansible-playbook -l passage01 site.yml -e max_tokens=5",
        "ansible-playbook -l passage01 site.yml -e max_tokens=5",
    ),
    (
        "grep -r author= src/ && echo pass",
        "grep -r author= src/ && echo pass",
    ),
    ("tar -cpf x.tar /srv", "tar -cpf x.tar /srv"),
    (
        "https://web01.example/path?x=1",
        "https://web01.example/path?x=1",
    ),
    ("", ""),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNz\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
        "[redacted]\n",
    ),
    (
        "cat > /root/.ssh/id_rsa <<EOF\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\nEOF",
        "cat > /root/.ssh/id_rsa <<EOF\n[redacted]\nEOF",
    ),
    (
        "key: -----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHz cut before the end",
        "key: [redacted]",
    ),
    (
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
    ),
];

/// Each secret redacted, the rest kept byte for byte.
#[test]
fn inline_secrets_are_redacted_and_everything_else_kept() {
    let wrong: Vec<String> = INLINE
        .iter()
        .filter(|(text, expected)| redact_text(text) != *expected)
        .map(|(text, expected)| {
            format!(
                "{text:?}\n  gave {:?}\n  want {expected:?}",
                redact_text(text)
            )
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn secret_keys_by_word() {
    for key in [
        "pw",
        "pwd",
        "passwd",
        "pass",
        "password",
        "Password",
        "db_password",
        "DB_PASSWORD",
        "secret",
        "client_secret",
        "clientSecret",
        "token",
        "access_token",
        "apikey",
        "api_key",
        "apiKey",
        "API-KEY",
        "auth",
        "Authorization",
        "x-auth-token",
        "credential",
        "credentials",
        "credentialsFile",
        "private_key",
        "privateKey",
        "passphrase",
        "ssh_passphrase",
        "key",
        "SSHPASS",
        "db_pass",
        "pin",
        "otp",
        "identity_file_content",
        "ssh_key",
    ] {
        assert!(is_secret_key(key), "{key}");
    }
    for key in [
        "host",
        "passage01",
        "command",
        "max_tokens",
        "keyboard",
        "StrictHostKeyChecking",
        "key_name",
        "path",
        "compass",
        "bypass",
        "author",
        "target",
    ] {
        assert!(!is_secret_key(key), "{key}");
    }
}

#[test]
fn a_vm_reference_keeps_its_host_and_loses_its_credentials() {
    use super::strip_credentials;
    for (reference, kept) in [
        ("ssh://admin:S3CR3T@web01:22/", "ssh://web01:22/"),
        ("https://admin:S3CR3T@web01/", "https://web01/"),
        ("admin:S3CR3T@unknownvm", "unknownvm"),
        ("admin@web01", "admin@web01"),
        ("web01", "web01"),
        ("10.0.0.5:22", "10.0.0.5:22"),
    ] {
        assert_eq!(strip_credentials(reference), kept, "{reference}");
    }
}

/// Pieces of commands and keys as agents write them, secret or not, for the fast paths'
/// comparisons with the full rules.
const PIECES: &[&str] = &[
    "--password=hunter2",
    "--password",
    "-p",
    "-phunter2",
    "mysql",
    "sshpass",
    "TOKEN=x1",
    "API_KEY=\"abc def\"",
    "MYSQL_PWD=x",
    "https://admin:hunter2@web01/x",
    "admin:hunter2@web01",
    "Authorization: Bearer abc",
    "-H",
    "'Authorization:",
    "Basic",
    "dXNlcjpwYXNz==",
    "ghp_0123456789abcdefghijABCD",
    "xoxb-0123456789-abcdefghijkl",
    "eyJhbGciOi.eyJzdWIi.c2lnbmF0dXJl",
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmU",
    "-Password",
    "(ConvertTo-SecureString",
    "\"hunter2\"",
    "-AsPlainText",
    "-Force)",
    "$env:TOKEN",
    "=",
    "echo",
    "hunter2",
    "|",
    "sudo",
    "-S",
    "<<<",
    "&&",
    ";",
    "net",
    "user",
    "bob",
    "curl",
    "-u",
    "bob:hunter2",
    "IDENTIFIED",
    "BY",
    "'hunter2'",
    "cargo",
    "test",
    "--locked",
    "git",
    "status",
    "--short",
    "2>&1",
    "tail",
    "-n",
    "40",
    "passage01",
    "max_tokens",
    "apiKey",
    "pIn",
    "identity_data",
    "x-auth-token",
    "cookie",
    "StrictHostKeyChecking=no",
    "mot_de_passe=é",
    "clé=ü",
    "\u{212A}EY=x",
    "пароль=x",
    "日本",
    "sk-ant-0123456789abcdefghij",
    "npm_0123456789abcdefghijkl",
    "ñghp_0123456789abcdefghijABCD",
    "docker",
    "login",
    "/usr/bin/MySQL",
    "'C:\\Windows\\System32\\schtasks.exe'",
    "(mariadb-admin",
    "PsExec64.exe",
    "mongorestore",
    "./a-very-long-program-name-indeed",
    "ＭＹＳＱＬ",
    "''",
    "`mysql`",
    "\"(curl\"",
    "é/sshpass'",
    "vault\\é",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
];

/// Words the rule of [`is_secret_key`] looks for, and words near them that are not secret.
const KEY_WORDS: &[&str] = &[
    "pin",
    "pw",
    "pwd",
    "pass",
    "passcode",
    "otp",
    "totp",
    "secret",
    "token",
    "key",
    "auth",
    "cred",
    "credentials",
    "cookie",
    "bearer",
    "identity",
    "file",
    "content",
    "data",
    "api",
    "client",
    "private",
    "ssh",
    "monkey",
    "bypass",
    "compass",
    "db",
    "max",
    "host",
    "Checking",
    "x",
    "K",
    "value",
    "pem",
    "keyboard",
    "pinned",
    "spin",
    "author",
];

fn pieces_text() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let piece = prop_oneof![
        4 => proptest::sample::select(PIECES).prop_map(str::to_owned),
        1 => "[a-zA-Z_:=@/.\\-]{1,12}",
        1 => "\\PC{1,6}",
    ];
    let gap = proptest::sample::select(
        &[
            " ", " ", " ", "  ", "\n", "\t", "", "\u{a0}", "\u{3000}", "\u{85}", "\r\n",
        ][..],
    );
    proptest::collection::vec((piece, gap), 0..14).prop_map(|parts| {
        parts
            .into_iter()
            .map(|(piece, gap)| piece + gap)
            .collect::<String>()
    })
}

/// The words of a text as found character by character, for comparison.
fn words_by_character(text: &str) -> Vec<(usize, &str)> {
    let mut words = Vec::new();
    let mut start = None;
    for (at, c) in text.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(from)) => {
                words.push((from, &text[from..at]));
                start = None;
            }
            (false, None) => start = Some(at),
            _ => {}
        }
    }
    if let Some(from) = start {
        words.push((from, &text[from..]));
    }
    words
}

/// [`super::prefixed::redact_tokens`] as it looked at every character, for comparison.
fn tokens_at_every_character(text: &str) -> String {
    use super::prefixed::PREFIXES;
    let token_char =
        |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+' | '/' | '=');
    let mut out = String::new();
    let mut last = 0;
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        let starts_word = text[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_ascii_alphanumeric());
        let prefix = PREFIXES.iter().find(|p| rest.starts_with(**p));
        if let (true, Some(prefix)) = (starts_word, prefix) {
            let len = rest.find(|c: char| !token_char(c)).unwrap_or(rest.len());
            let jwt = *prefix != "eyJ" || rest[..len].matches('.').count() == 2;
            if len >= prefix.len() + 16 && jwt {
                out.push_str(&text[last..at]);
                out.push_str(super::REDACTED);
                at += len;
                last = at;
                continue;
            }
        }
        at += rest.chars().next().map_or(1, char::len_utf8);
    }
    out.push_str(&text[last..]);
    out
}

#[test]
fn every_token_prefix_starts_with_a_byte_the_scan_stops_at() {
    use super::prefixed::{PREFIXES, TOKEN_STARTS};
    for prefix in PREFIXES {
        assert!(TOKEN_STARTS.contains(&prefix.as_bytes()[0]), "{prefix}");
    }
}

#[test]
fn the_fast_paths_agree_with_the_full_rules_on_the_pieces() {
    use super::names::names_secret;
    use super::words::{is_known_name, is_known_program, program_name};
    for piece in PIECES {
        assert_eq!(is_secret_key(piece), names_secret(piece), "{piece}");
        assert_eq!(
            is_known_program(piece),
            is_known_name(&program_name(piece)),
            "{piece}"
        );
        assert_eq!(
            super::prefixed::redact_tokens(piece),
            tokens_at_every_character(piece),
            "{piece}"
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

    /// The pre-check of a key's pieces never turns away a key the rule on its words says
    /// secret.
    #[test]
    fn the_key_pre_check_agrees_with_the_rule_on_words(
        key in "[a-zA-Z0-9_.:\\-]{0,16}|\\PC{0,8}",
        words in proptest::collection::vec(
            (proptest::sample::select(KEY_WORDS), "[_.:-]?", proptest::bool::ANY),
            1..4,
        ),
        piece in proptest::sample::select(PIECES),
    ) {
        // Words of the rule, run together or split, in either case (`dbPass`, `SIM_PIN`).
        let mut built = String::new();
        for (word, sep, upper) in &words {
            if *upper {
                built.push_str(&word.to_ascii_uppercase());
            } else {
                built.push_str(word);
            }
            built.push_str(sep);
        }
        for key in [key.clone(), built.clone(), format!("{key}{piece}"), format!("{piece}_{built}")] {
            proptest::prop_assert_eq!(
                is_secret_key(&key),
                super::names::names_secret(&key),
                "{}",
                key
            );
        }
    }

    /// The token scan that skips bytes no prefix starts with finds what the scan at every
    /// character found, `://` is found where a substring search finds it, and a text redacted
    /// again (from the recent texts) is redacted alike.
    #[test]
    fn the_fast_paths_redact_a_text_as_the_full_passes_do(text in pieces_text()) {
        use super::words::{
            is_known_name, is_known_program, program_name, scheme_mark, words_with_offsets,
        };
        proptest::prop_assert_eq!(
            words_with_offsets(&text).collect::<Vec<_>>(),
            words_by_character(&text)
        );
        for word in text.split_whitespace() {
            proptest::prop_assert_eq!(
                is_known_program(word),
                is_known_name(&program_name(word)),
                "{}",
                word
            );
            proptest::prop_assert_eq!(scheme_mark(word), word.find("://"), "{}", word);
        }
        proptest::prop_assert_eq!(
            super::prefixed::redact_tokens(&text).into_owned(),
            tokens_at_every_character(&text)
        );
        let full = super::redact_passes(&text);
        proptest::prop_assert_eq!(&redact_text(&text), &full, "{:?}", text);
        proptest::prop_assert_eq!(&redact_text(&text), &full, "{:?}", text);
    }
}
