//! Claude Code's settings delivered by MDM, which `doctor` reads and `install --print-mdm`
//! writes for an administrator.
//!
//! - macOS: the managed preferences of the domain `com.anthropic.claudecode`, which an MDM
//!   profile installs as `/Library/Managed Preferences/<user>/com.anthropic.claudecode.plist`
//!   (per user) and `/Library/Managed Preferences/com.anthropic.claudecode.plist` (the device).
//!   Claude Code converts each with `plutil -convert json` and reads the whole dictionary as
//!   one settings document; the per-user file is read first, and the first that holds
//!   settings is the one used. A date or data value cannot be converted: such a file is not
//!   read at all.
//! - Windows: the string value `Settings` (`REG_SZ` or `REG_EXPAND_SZ`) of
//!   `HKLM\SOFTWARE\Policies\ClaudeCode`, one JSON settings document.
//!
//! Claude Code applies one managed source, the highest that holds settings: server-managed
//! settings, then these, then `managed-settings.json` with its drop-ins. A source that sets
//! `"managedSourcesBehavior": "merge"` merges the lower ones in instead.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The preference domain of Claude Code's managed preferences on macOS.
pub const DOMAIN: &str = "com.anthropic.claudecode";
/// The machine policy key Claude Code reads on Windows, under `HKEY_LOCAL_MACHINE`.
pub const POLICY_KEY: &str = r"SOFTWARE\Policies\ClaudeCode";
/// The string value of [`POLICY_KEY`] that holds the settings.
pub const POLICY_VALUE: &str = "Settings";

/// One MDM-delivered settings document as Claude Code would find it.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivered {
    /// Where it is, for people: a file or the registry value.
    pub source: String,
    /// The settings, or why they cannot be read (Claude Code then reads none of them).
    pub settings: Result<Value, String>,
}

/// The managed preference files of this system under `root`, in the order Claude Code reads
/// them (none but on macOS).
pub fn plist_files(root: &Path, user: Option<&str>) -> Vec<PathBuf> {
    let dir = crate::platform::per_os("", "Library/Managed Preferences", "");
    if dir.is_empty() {
        return Vec::new();
    }
    let dir = root.join(dir);
    let file = format!("{DOMAIN}.plist");
    let mut files = Vec::new();
    if let Some(user) = user.filter(|u| !matches!(*u, "" | "." | "..") && !u.contains('/')) {
        files.push(dir.join(user).join(&file));
    }
    files.push(dir.join(file));
    files
}

/// The MDM-delivered document Claude Code applies on this system, if any: the first managed
/// preference file (macOS) or the machine policy value (Windows) that exists.
pub fn delivered(root: &Path) -> Option<Delivered> {
    let user = crate::platform::current_user_name();
    for file in plist_files(root, user.as_deref()) {
        match std::fs::read(&file) {
            Ok(bytes) => {
                return Some(Delivered {
                    source: file.display().to_string(),
                    settings: parse_plist(&bytes),
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Some(Delivered {
                    source: file.display().to_string(),
                    settings: Err(e.to_string()),
                });
            }
        }
    }
    let text = crate::platform::machine_policy(POLICY_KEY, POLICY_VALUE)?;
    Some(Delivered {
        source: format!(r"HKLM\{POLICY_KEY}\{POLICY_VALUE}"),
        settings: text.and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string())),
    })
}

/// A managed preference file (XML or binary) as the settings document it holds, as
/// `plutil -convert json` gives it to Claude Code.
pub fn parse_plist(bytes: &[u8]) -> Result<Value, String> {
    let value = plist::Value::from_reader(std::io::Cursor::new(bytes))
        .map_err(|e| format!("not a property list: {e}"))?;
    let json = to_json(&value)?;
    if json.is_object() {
        Ok(json)
    } else {
        Err(String::from("its top level is not a dictionary"))
    }
}

fn to_json(value: &plist::Value) -> Result<Value, String> {
    Ok(match value {
        plist::Value::Dictionary(dict) => Value::Object(
            dict.iter()
                .map(|(k, v)| to_json(v).map(|v| (k.clone(), v)))
                .collect::<Result<_, _>>()?,
        ),
        plist::Value::Array(list) => {
            Value::Array(list.iter().map(to_json).collect::<Result<_, _>>()?)
        }
        plist::Value::Boolean(b) => Value::Bool(*b),
        plist::Value::String(s) => Value::String(s.clone()),
        plist::Value::Integer(i) => match (i.as_signed(), i.as_unsigned()) {
            (Some(i), _) => Value::from(i),
            (None, Some(u)) => Value::from(u),
            (None, None) => return Err(String::from("an integer out of range")),
        },
        plist::Value::Real(r) => serde_json::Number::from_f64(*r)
            .map(Value::Number)
            .ok_or("a real number JSON cannot hold")?,
        // plutil refuses to convert these, so Claude Code reads nothing of the file.
        plist::Value::Date(_) => return Err(String::from("it holds a date value")),
        plist::Value::Data(_) => return Err(String::from("it holds a data value")),
        _ => return Err(String::from("it holds a value JSON cannot hold")),
    })
}

/// Whether a delivered document makes Claude Code merge `managed-settings.json` and its
/// drop-ins in beside it rather than ignore them.
pub fn merges_lower_sources(settings: &Value) -> bool {
    settings.get("managedSourcesBehavior") == Some(&Value::String(String::from("merge")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile's payload as an MDM installs it: rewind's entries, locked.
    const XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>allowManagedHooksOnly</key>
  <true/>
  <key>hooks</key>
  <dict>
    <key>PreToolUse</key>
    <array>
      <dict>
        <key>matcher</key>
        <string>Bash|PowerShell|mcp__.*</string>
        <key>hooks</key>
        <array>
          <dict>
            <key>type</key>
            <string>command</string>
            <key>command</key>
            <string>/usr/local/bin/rewind-hook</string>
            <key>args</key>
            <array>
              <string>--config</string>
              <string>/etc/rewind/config.toml</string>
              <string>hook</string>
              <string>--host</string>
              <string>claude-code</string>
              <string>--managed</string>
            </array>
            <key>timeout</key>
            <integer>180</integer>
          </dict>
        </array>
      </dict>
    </array>
  </dict>
</dict>
</plist>
"#;

    #[test]
    fn a_managed_preference_file_reads_as_the_settings_it_holds_in_xml_and_binary() {
        let settings = parse_plist(XML.as_bytes()).expect("xml");
        assert_eq!(settings["allowManagedHooksOnly"], Value::Bool(true));
        let group = &settings["hooks"]["PreToolUse"][0];
        assert_eq!(group["hooks"][0]["timeout"], 180);
        let found = super::super::settings::LAYOUT.inspect(Path::new("p.plist"), &settings);
        assert_eq!(found.len(), 1, "{settings:#}");
        assert!(found[0].args.ends_with(&[String::from("--managed")]));

        let mut binary = Vec::new();
        plist::Value::from_reader_xml(XML.as_bytes())
            .expect("xml")
            .to_writer_binary(&mut binary)
            .expect("binary");
        assert_eq!(parse_plist(&binary), Ok(settings));
    }

    #[test]
    fn what_plutil_cannot_convert_is_not_read() {
        let dated = XML.replace(
            "<key>hooks</key>",
            "<key>when</key><date>2026-01-01T00:00:00Z</date><key>hooks</key>",
        );
        assert!(parse_plist(dated.as_bytes()).unwrap_err().contains("date"));
        let binary_data = XML.replace(
            "<key>hooks</key>",
            "<key>blob</key><data>AAE=</data><key>hooks</key>",
        );
        assert!(
            parse_plist(binary_data.as_bytes())
                .unwrap_err()
                .contains("data")
        );
        assert!(parse_plist(b"{}").is_err());
    }

    #[test]
    fn the_per_user_file_comes_before_the_devices_on_macos_only() {
        let files = plist_files(Path::new("/"), Some("ana"));
        if crate::platform::per_os("", "macos", "") == "macos" {
            assert_eq!(
                files,
                [
                    PathBuf::from(
                        "/Library/Managed Preferences/ana/com.anthropic.claudecode.plist"
                    ),
                    PathBuf::from("/Library/Managed Preferences/com.anthropic.claudecode.plist"),
                ]
            );
            assert_eq!(plist_files(Path::new("/"), Some("..")).len(), 1);
        } else {
            assert!(files.is_empty());
        }
        assert!(merges_lower_sources(
            &serde_json::json!({"managedSourcesBehavior": "merge"})
        ));
        assert!(!merges_lower_sources(&serde_json::json!({})));
    }
}
