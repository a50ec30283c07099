//! A configuration document as a tree of values, read once from TOML or JSON text before
//! the typed configuration is taken from it (`de.rs`).
//!
//! Why a tree first: the typed read then knows the path of every value it looks at (so an
//! error names `topology.k`, not `topology`), can present a mechanism's `kind` before its
//! parameters, and can read the document again without a bad value to find the next error
//! (every error in one pass). Tables keep the order they were written in.

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::cell::RefCell;
use std::fmt;

/// One value of a configuration document.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// JSON `null` (TOML has none).
    Null,
    Bool(bool),
    /// Integers of TOML (i64) and JSON (i64 or u64) alike.
    Integer(i128),
    Float(f64),
    String(String),
    Array(Vec<Value>),
    /// Keys in the order written.
    Table(Vec<(String, Value)>),
}

impl Value {
    /// What the value is, in the words of the configuration: `-4`, `the string "x"`,
    /// `a list of 3 values`, `a table`. Long text is cut short.
    pub fn describe(&self) -> String {
        match self {
            Value::Null => "null".into(),
            Value::Bool(b) => b.to_string(),
            Value::Integer(i) => i.to_string(),
            Value::Float(f) => describe_float(*f),
            Value::String(s) => format!("the string {}", crate::error::clip(&format!("{s:?}"))),
            Value::Array(a) => format!("a list of {} value{}", a.len(), if a.len() == 1 { "" } else { "s" }),
            Value::Table(_) => "a table".into(),
        }
    }
}

/// A float as TOML writes it (`nan`, `inf`, `1.5`, `2.0`).
pub(crate) fn describe_float(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.into()
    } else if f.fract() == 0.0 && f.abs() < 1e16 {
        format!("{f:.1}")
    } else {
        f.to_string()
    }
}

/// Where a duplicate key was found while reading the tree (JSON: serde_json keeps the last
/// value of a repeated key silently, so the tree's reader checks for itself).
type Found = RefCell<Option<(String, String)>>;

/// Reads a `Value` from any self-describing deserializer, tracking the path of each table
/// so that a repeated key can be named.
struct ValueSeed<'a> {
    path: String,
    duplicate: &'a Found,
}

/// A key of the special table TOML's deserializer presents a date or time as.
const TOML_DATETIME: &str = "$__toml_private_datetime";

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a configuration value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Integer(v as i128))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Integer(v as i128))
    }
    fn visit_i128<E>(self, v: i128) -> Result<Value, E> {
        Ok(Value::Integer(v))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Value, E> {
        i128::try_from(v).map(Value::Integer).map_err(|_| E::custom(format!("number {v} is too large")))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(ValueSeed {
            path: format!("{}[{}]", self.path, out.len()),
            duplicate: self.duplicate,
        })? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out: Vec<(String, Value)> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = if self.path.is_empty() { key.clone() } else { format!("{}.{key}", self.path) };
            if key == TOML_DATETIME {
                // A TOML date or time: kept as its text (no field of the schema takes one).
                let text: String = map.next_value()?;
                return Ok(Value::String(text));
            }
            let value = map.next_value_seed(ValueSeed { path: path.clone(), duplicate: self.duplicate })?;
            if out.iter().any(|(k, _)| *k == key) {
                *self.duplicate.borrow_mut() = Some((path, "duplicate key: it is given twice".into()));
                return Err(de::Error::custom("duplicate key"));
            }
            out.push((key, value));
        }
        Ok(Value::Table(out))
    }
}

/// A syntax error: (path, message). The path is `<root>` unless the error is a repeated key.
pub type SyntaxError = (String, String);

/// Parse TOML text into a tree.
pub fn from_toml(text: &str) -> Result<Value, SyntaxError> {
    let found = Found::default();
    let de = toml::Deserializer::new(text);
    ValueSeed { path: String::new(), duplicate: &found }.deserialize(de).map_err(|e| {
        // toml names a repeated key and its table: make them the path.
        match duplicate_key_path(e.message()) {
            Some(path) => {
                let at = e.span().map(|s| line_column(text, s.start)).unwrap_or_default();
                (path, format!("duplicate key: it is given twice{at}"))
            }
            None => ("<root>".to_string(), e.to_string().trim_end().to_string()),
        }
    })
}

/// Parse JSON text into a tree.
pub fn from_json(text: &str) -> Result<Value, SyntaxError> {
    let found = Found::default();
    let mut de = serde_json::Deserializer::from_str(text);
    let result = ValueSeed { path: String::new(), duplicate: &found }
        .deserialize(&mut de)
        .and_then(|v| de.end().map(|_| v));
    result.map_err(|e| match found.take() {
        Some(dup) => dup,
        None => ("<root>".to_string(), e.to_string()),
    })
}

/// " (line 9, column 1)" for byte `offset` of `text`.
fn line_column(text: &str, offset: usize) -> String {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    format!(" (line {line}, column {column})")
}

/// `duplicate key `vcs` in table `router`` -> `router.vcs` (toml_edit's wording).
fn duplicate_key_path(message: &str) -> Option<String> {
    let rest = message.strip_prefix("duplicate key `")?;
    let (key, rest) = rest.split_once('`')?;
    if let Some(table) = rest.strip_prefix(" in table `").and_then(|t| t.strip_suffix('`')) {
        return Some(format!("{table}.{key}"));
    }
    Some(key.to_string())
}

impl<'de> Deserialize<'de> for Value {
    /// A tree from any self-describing format (the tagged mechanisms buffer their table
    /// with it when another deserializer does not give `kind` first).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        let found = Found::default();
        let v = ValueSeed { path: String::new(), duplicate: &found }.deserialize(d);
        match (v, found.take()) {
            (Err(_), Some((path, msg))) => Err(de::Error::custom(format!("{path}: {msg}"))),
            (v, _) => v,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_and_types() {
        let v = from_toml("b = 1\na = [1.5, \"x\", true]\n[t]\nz = -3\n").unwrap();
        let Value::Table(t) = v else { panic!() };
        assert_eq!(t[0].0, "b");
        assert_eq!(
            t[1].1,
            Value::Array(vec![Value::Float(1.5), Value::String("x".into()), Value::Bool(true)])
        );
        assert_eq!(t[2].1, Value::Table(vec![("z".into(), Value::Integer(-3))]));
    }

    #[test]
    fn a_repeated_key_is_named() {
        let (path, msg) = from_toml("[router]\nvcs = 4\nvcs = 8\n").unwrap_err();
        assert_eq!(
            (path.as_str(), msg.as_str()),
            ("router.vcs", "duplicate key: it is given twice (line 3, column 1)")
        );
        let (path, msg) = from_json(r#"{"router": {"vcs": 4, "vcs": 8}}"#).unwrap_err();
        assert_eq!((path.as_str(), msg.as_str()), ("router.vcs", "duplicate key: it is given twice"));
    }

    #[test]
    fn datetimes_become_text() {
        let v = from_toml("d = 1979-05-27\n").unwrap();
        assert_eq!(v, Value::Table(vec![("d".into(), Value::String("1979-05-27".into()))]));
    }
}
