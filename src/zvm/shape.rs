//! The shapes of a ZVM's answers, for `rewind selftest --capture`: field names and JSON types,
//! never a value (no names, ids, addresses or tokens), so an operator can attach them to a bug
//! report and the project can add that appliance's shape to its tests.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// The shapes seen, by call (`GET /v1/vpgs/{id}`), merged over every answer to that call.
#[derive(Debug, Default)]
pub(crate) struct Shapes {
    calls: BTreeMap<String, Value>,
    url_forms: Vec<&'static str>,
}

impl Shapes {
    pub(crate) fn add(&mut self, method: &str, path: &str, answer: &Value) {
        let shape = shape(answer);
        let key = format!("{method} {}", route(path));
        let merged = match self.calls.remove(&key) {
            Some(seen) => merge(seen, shape),
            None => shape,
        };
        self.calls.insert(key, merged);
    }

    /// The form of a download URL (never the URL): relative, rooted, or absolute on the
    /// configured origin or another.
    pub(crate) fn note_url_form(&mut self, url: &str, base: &str) {
        let form = if url.contains("://") {
            let origin = |u: &str| {
                u.parse::<ureq::http::Uri>()
                    .ok()
                    .and_then(|u| u.authority().map(|a| a.as_str().to_ascii_lowercase()))
            };
            if origin(url).is_some_and(|o| Some(o) == origin(base)) {
                "absolute URL on the configured address"
            } else {
                "absolute URL on another address"
            }
        } else if url.starts_with('/') {
            "path from the root"
        } else {
            "relative path without a leading slash"
        };
        if !self.url_forms.contains(&form) {
            self.url_forms.push(form);
        }
    }

    pub(crate) fn to_json(&self) -> Value {
        let mut out = Map::new();
        for (call, shape) in &self.calls {
            out.insert(call.clone(), shape.clone());
        }
        if !self.url_forms.is_empty() {
            out.insert(
                String::from("download URL form"),
                Value::from(self.url_forms.clone()),
            );
        }
        Value::Object(out)
    }
}

/// A path with its ids replaced: `/v1/vpgs/{id}/checkpoints`.
fn route(path: &str) -> String {
    const WORDS: [&str; 18] = [
        "v1",
        "types",
        "restore",
        "restorecommit",
        "restorerollback",
        "failovertest",
        "failoverteststop",
        "vms",
        "vpgs",
        "checkpoints",
        "stats",
        "tasks",
        "flrs",
        "browse",
        "download",
        "localsite",
        "session",
        "add",
    ];
    let path = path.split('?').next().unwrap_or(path);
    path.split('/')
        .map(|segment| {
            if segment.is_empty() || WORDS.iter().any(|w| w.eq_ignore_ascii_case(segment)) {
                segment.to_owned()
            } else {
                String::from("{id}")
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The JSON types of a value: objects keep their keys, arrays the merged shape of their
/// items, everything else becomes its type's name.
fn shape(value: &Value) -> Value {
    match value {
        Value::Null => Value::from("null"),
        Value::Bool(_) => Value::from("boolean"),
        Value::Number(n) if n.is_i64() || n.is_u64() => Value::from("integer"),
        Value::Number(_) => Value::from("number"),
        Value::String(_) => Value::from("string"),
        Value::Array(items) => {
            Value::Array(items.iter().map(shape).reduce(merge).into_iter().collect())
        }
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(key, value)| (key.clone(), shape(value)))
                .collect(),
        ),
    }
}

/// Two shapes of one place as one: objects by key, arrays by item, differing types as
/// `"string|null"`, an object or array that is sometimes null as `{"one of": [...]}`.
fn merge(a: Value, b: Value) -> Value {
    match (a, b) {
        (Value::Object(mut a), Value::Object(b)) => {
            for (key, value) in b {
                let merged = match a.remove(&key) {
                    Some(seen) => merge(seen, value),
                    None => value,
                };
                a.insert(key, merged);
            }
            Value::Object(a)
        }
        (Value::Array(a), Value::Array(b)) => {
            Value::Array(a.into_iter().chain(b).reduce(merge).into_iter().collect())
        }
        (Value::String(a), Value::String(b)) => {
            let mut names: Vec<&str> = a.split('|').chain(b.split('|')).collect();
            names.sort_unstable();
            names.dedup();
            Value::from(names.join("|"))
        }
        (a, b) if a == b => a,
        (a, b) => serde_json::json!({ "one of": [a, b] }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn shapes_keep_names_and_types_never_values() {
        let mut shapes = Shapes::default();
        shapes.add(
            "GET",
            "/v1/vms",
            &json!([
                {"VmName": "secret-db", "VmIdentifier": "a.vm-1", "IpAddresses": ["10.9.8.7"], "Status": 1},
                {"VmName": null, "VmIdentifier": "b.vm-2", "IpAddresses": [], "Status": 1.5, "New": {"X": true}}
            ]),
        );
        shapes.add(
            "GET",
            "/v1/vpgs/7cbd-f9e2/checkpoints?startDate=x",
            &json!([]),
        );
        shapes.note_url_form("v1/downloads/x", "https://zvm:443");
        let text = shapes.to_json().to_string();
        for value in ["secret-db", "a.vm-1", "10.9.8.7", "7cbd", "downloads"] {
            assert!(!text.contains(value), "{value} leaked: {text}");
        }
        assert_eq!(
            shapes.to_json(),
            json!({
                "GET /v1/vms": [{
                    "VmName": "null|string",
                    "VmIdentifier": "string",
                    "IpAddresses": ["string"],
                    "Status": "integer|number",
                    "New": {"X": "boolean"},
                }],
                "GET /v1/vpgs/{id}/checkpoints": [],
                "download URL form": ["relative path without a leading slash"],
            })
        );
    }
}
