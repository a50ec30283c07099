//! Reading the typed configuration out of a [`Value`] tree, with the path of every value
//! and messages in the configuration's own terms.
//!
//! A serde `Deserializer` over the tree that knows where it is: every error names its
//! field (`topology.k`, `router.crossbar_scheduler.weights[2]`,
//! `router.output_scheduler.high[0]`), says what was expected as a user would write it
//! ("a whole number >= 1", "a list of 2 values", "a table with named keys") and what was
//! found. It also enforces, for every struct, that no key is unknown and that a table is
//! not written as a positional list (`simulation = [3, 0, 200]`), and it presents a
//! mechanism's `kind` before its parameters (see `tagged.rs`).
//!
//! Every error in one pass: serde stops at the first error of a document, so [`from_value`]
//! reads it again without the value that failed, until it reads through; each pass finds
//! the next error. A required field removed that way is not reported again as missing.

use super::value::{describe_float, Value};
use crate::error::{clip, ConfigError, ConfigErrors};
use serde::de::{self, DeserializeOwned, DeserializeSeed, Expected, IntoDeserializer, Unexpected, Visitor};
use std::collections::BTreeSet;
use std::fmt;

/// An error while reading the tree: its path (once known) and message.
#[derive(Debug, Clone)]
pub struct DeError {
    path: Option<String>,
    message: String,
    /// `missing_field`: the field, so a field removed after an error is not reported twice.
    missing: Option<&'static str>,
}

impl DeError {
    fn new(path: &str, message: impl Into<String>) -> Self {
        Self { path: Some(path.to_string()), message: message.into(), missing: None }
    }

    /// The error, placed at `path` if it has no place yet (the innermost place wins).
    fn at(mut self, path: &str) -> Self {
        if self.path.is_none() {
            self.path = Some(path.to_string());
        }
        self
    }
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(p) => write!(f, "{}: {}", display_path(p), self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for DeError {}

/// What serde's primitive expectations mean to a user.
fn expected_in_user_terms(exp: &dyn Expected) -> String {
    let e = exp.to_string();
    match e.as_str() {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a whole number >= 0".into(),
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number".into(),
        "f32" | "f64" => "a number".into(),
        "a boolean" => "true or false".into(),
        "a string" | "a borrowed string" | "path string" => "a string".into(),
        "a sequence" => "a list".into(),
        "a map" => "a table".into(),
        _ if e.starts_with("struct ") => "a table".into(),
        _ if e.starts_with("a tuple of size ") || e.starts_with("an array of length ") => {
            format!("a list of {} values", e.rsplit(' ').next().unwrap_or("?"))
        }
        _ => e,
    }
}

fn unexpected_in_user_terms(u: Unexpected) -> String {
    match u {
        Unexpected::Bool(b) => b.to_string(),
        Unexpected::Unsigned(v) => v.to_string(),
        Unexpected::Signed(v) => v.to_string(),
        Unexpected::Float(v) => describe_float(v),
        Unexpected::Char(c) => format!("the character {c:?}"),
        Unexpected::Str(s) => format!("the string {}", clip(&format!("{s:?}"))),
        Unexpected::Unit | Unexpected::Option => "null".into(),
        Unexpected::Seq => "a list".into(),
        Unexpected::Map => "a table".into(),
        other => other.to_string(),
    }
}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Self { path: None, message: msg.to_string(), missing: None }
    }
    fn invalid_type(unexp: Unexpected, exp: &dyn Expected) -> Self {
        Self::custom(format!(
            "must be {}, got {}",
            expected_in_user_terms(exp),
            unexpected_in_user_terms(unexp)
        ))
    }
    fn invalid_value(unexp: Unexpected, exp: &dyn Expected) -> Self {
        Self::invalid_type(unexp, exp)
    }
    fn invalid_length(len: usize, exp: &dyn Expected) -> Self {
        Self::custom(format!("must be {}, got {len}", expected_in_user_terms(exp)))
    }
    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        Self::custom(format!(
            "unknown variant `{}`, expected {}{}",
            clip(variant),
            one_of(expected),
            did_you_mean(variant, expected)
        ))
    }
    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        if expected.is_empty() {
            Self::custom(format!("unknown field `{}`: this kind takes no parameters", clip(field)))
        } else {
            Self::custom(format!(
                "unknown field `{}`, expected {}{}",
                clip(field),
                one_of(expected),
                did_you_mean(field, expected)
            ))
        }
    }
    fn missing_field(field: &'static str) -> Self {
        Self { path: None, message: format!("missing field `{field}`"), missing: Some(field) }
    }
    fn duplicate_field(field: &'static str) -> Self {
        Self::custom(format!("duplicate key `{field}`"))
    }
}

/// "; did you mean `measure`?" when one of `names` is a likely misspelling of `given`: the
/// nearest by edit distance, within a third of its length (at least 1, at most 3 edits).
pub(crate) fn did_you_mean(given: &str, names: &[&str]) -> String {
    if given.chars().count() > 64 {
        return String::new();
    }
    let best = names
        .iter()
        .map(|n| (edit_distance(&given.to_lowercase(), n), *n))
        .filter(|&(d, n)| d <= (n.chars().count() / 3).clamp(1, 3))
        .min_by_key(|&(d, _)| d);
    best.map_or(String::new(), |(_, n)| format!("; did you mean `{n}`?"))
}

/// Levenshtein distance (insertions, deletions, substitutions; an adjacent swap counts two).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (prev + usize::from(ca != cb)).min(row[j] + 1).min(row[j + 1] + 1);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// "`a`", "`a` or `b`", "one of `a`, `b`, `c`" (serde's wording, which tests and users know).
pub(crate) fn one_of(names: &[&str]) -> String {
    match names {
        [] => "nothing".into(),
        [a] => format!("`{a}`"),
        [a, b] => format!("`{a}` or `{b}`"),
        _ => format!("one of {}", names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")),
    }
}

/// `<root>` for the document itself.
fn display_path(p: &str) -> &str {
    if p.is_empty() {
        "<root>"
    } else {
        p
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The lower bound a whole-number field states in a type error: 1 for the counts, sizes and
/// delays that are never 0 (validation then gives each one's exact range), else 0.
fn least_whole(path: &str) -> i128 {
    let name = path.rsplit('.').next().unwrap_or(path);
    let name = name.split('[').next().unwrap_or(name);
    const COUNTS: &[&str] = &[
        "k",
        "n",
        "ports",
        "dims",
        "vcs",
        "input_buffer",
        "output_buffer",
        "link_latency",
        "credit_latency",
        "speedup",
        "input_speedup",
        "output_speedup",
        "internal_speedup",
        "block_size",
        "flit_bits",
        "message_flits",
        "packet_flits",
        "streams",
        "concurrent_packets",
        "messages",
        "buffer_flits",
        "extra_buffer",
        "iterations",
    ];
    COUNTS.contains(&name) as i128
}

/// A deserializer over one value of the tree, at `path`; `removed` holds the paths a
/// previous pass found bad, which this pass reads as absent.
struct ValueDe<'a> {
    value: &'a Value,
    path: String,
    removed: &'a BTreeSet<String>,
}

impl<'a> ValueDe<'a> {
    fn fail<T>(&self, message: impl Into<String>) -> Result<T, DeError> {
        Err(DeError::new(&self.path, message))
    }

    fn got(&self) -> String {
        self.value.describe()
    }

    /// The value is not what `exp` (a visitor) reads: "must be <its expectation>, got ...".
    fn mismatch<T>(&self, exp: &dyn Expected) -> Result<T, DeError> {
        self.fail(format!("must be {}, got {}", expected_in_user_terms(exp), self.got()))
    }

    /// A whole number in `min..=max` of the type, handed to `visit`.
    fn whole<T>(
        &self,
        min: i128,
        max: i128,
        visit: impl FnOnce(i128) -> Result<T, DeError>,
    ) -> Result<T, DeError> {
        let shown_min = if min == 0 { least_whole(&self.path) } else { min };
        let bounds =
            if min < 0 { "a whole number".to_string() } else { format!("a whole number >= {shown_min}") };
        match *self.value {
            Value::Integer(v) if v >= min && v <= max => visit(v).map_err(|e: DeError| e.at(&self.path)),
            Value::Integer(v) if v > max => self.fail(format!("must be {bounds} and at most {max}, got {v}")),
            _ => self.fail(format!("must be {bounds}, got {}", self.got())),
        }
    }

    fn table(&self, fields: Option<&'static [&'static str]>) -> Result<TableAccess<'a>, DeError> {
        let Value::Table(entries) = self.value else { unreachable!("checked by the caller") };
        let mut entries: Vec<&'a (String, Value)> =
            entries.iter().filter(|(k, _)| !self.removed.contains(&child(&self.path, k))).collect();
        // A mechanism's kind first, so its parameters are read knowing it (`tagged.rs`).
        if let Some(i) = entries.iter().position(|(k, _)| k == "kind") {
            let kind = entries.remove(i);
            entries.insert(0, kind);
        }
        Ok(TableAccess { entries, next: 0, path: self.path.clone(), removed: self.removed, fields })
    }
}

macro_rules! whole_number {
    ($($method:ident $visit:ident $t:ty),*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
            self.whole(<$t>::MIN as i128, <$t>::MAX as i128, |v| visitor.$visit(v as $t))
        }
    )*};
}

impl<'de> de::Deserializer<'de> for ValueDe<'_> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let r = match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Integer(i) => {
                if let Ok(u) = u64::try_from(*i) {
                    visitor.visit_u64(u)
                } else if let Ok(s) = i64::try_from(*i) {
                    visitor.visit_i64(s)
                } else {
                    visitor.visit_i128(*i)
                }
            }
            Value::Float(f) => visitor.visit_f64(*f),
            Value::String(s) => visitor.visit_str(s),
            Value::Array(_) => return self.deserialize_seq(visitor),
            Value::Table(_) => visitor.visit_map(self.table(None)?),
        };
        r.map_err(|e: DeError| e.at(&self.path))
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Value::Bool(b) => visitor.visit_bool(*b).map_err(|e: DeError| e.at(&self.path)),
            _ => self.mismatch(&visitor),
        }
    }

    whole_number!(
        deserialize_u8 visit_u8 u8, deserialize_u16 visit_u16 u16, deserialize_u32 visit_u32 u32,
        deserialize_u64 visit_u64 u64, deserialize_i8 visit_i8 i8, deserialize_i16 visit_i16 i16,
        deserialize_i32 visit_i32 i32, deserialize_i64 visit_i64 i64
    );

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let r = match *self.value {
            Value::Float(f) => visitor.visit_f64(f),
            Value::Integer(i) => visitor.visit_f64(i as f64),
            _ => return self.mismatch(&visitor),
        };
        r.map_err(|e: DeError| e.at(&self.path))
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Value::String(s) => visitor.visit_str(s).map_err(|e: DeError| e.at(&self.path)),
            _ => self.mismatch(&visitor),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let path = self.path.clone();
        match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
        .map_err(|e: DeError| e.at(&path))
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Value::Null => visitor.visit_unit().map_err(|e: DeError| e.at(&self.path)),
            _ => self.mismatch(&visitor),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let path = self.path.clone();
        visitor.visit_newtype_struct(self).map_err(|e: DeError| e.at(&path))
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Value::Array(items) => visitor
                .visit_seq(ArrayAccess { items, next: 0, path: &self.path, removed: self.removed })
                .map_err(|e: DeError| e.at(&self.path)),
            _ => self.mismatch(&visitor),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Value::Array(items) if items.len() == len => self.deserialize_seq(visitor),
            _ => self.fail(format!("must be a list of {len} values, got {}", self.got())),
        }
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.deserialize_tuple(len, visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.value {
            Value::Table(_) => visitor.visit_map(self.table(None)?).map_err(|e: DeError| e.at(&self.path)),
            _ => self.mismatch(&visitor),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self.value {
            Value::Table(_) => {
                visitor.visit_map(self.table(Some(fields))?).map_err(|e: DeError| e.at(&self.path))
            }
            // A derived struct would read a list by position: `simulation = [3, 0, 200]`
            // as seed 3, warmup 0, measure 200.
            Value::Array(_) => self.fail(format!(
                "must be a table with named keys, got {} (values by position are not accepted)",
                self.got()
            )),
            _ => self.fail(format!("must be a table, got {}", self.got())),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self.value {
            Value::String(s) => {
                let access: de::value::StrDeserializer<'_, DeError> = s.as_str().into_deserializer();
                visitor.visit_enum(access).map_err(|e: DeError| e.at(&self.path))
            }
            _ => self.fail(format!("must be {}, got {}", one_of(variants), self.got())),
        }
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }
}

/// The entries of a table, `kind` first, without those a previous pass removed.
struct TableAccess<'a> {
    entries: Vec<&'a (String, Value)>,
    next: usize,
    path: String,
    removed: &'a BTreeSet<String>,
    /// A struct's fields: any other key is an error, whether or not the struct says
    /// `deny_unknown_fields` (the README promises it of every section).
    fields: Option<&'static [&'static str]>,
}

impl<'de> de::MapAccess<'de> for TableAccess<'_> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, DeError> {
        let Some((key, _)) = self.entries.get(self.next) else { return Ok(None) };
        if let Some(fields) = self.fields {
            if !fields.contains(&key.as_str()) {
                return Err(<DeError as de::Error>::unknown_field(key, fields).at(&child(&self.path, key)));
            }
        }
        let key_de: de::value::StrDeserializer<'_, DeError> = key.as_str().into_deserializer();
        // An unknown key's error is the key's own.
        seed.deserialize(key_de).map(Some).map_err(|e| e.at(&child(&self.path, key)))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, DeError> {
        let (key, value) = self.entries[self.next];
        self.next += 1;
        let path = child(&self.path, key);
        seed.deserialize(ValueDe { value, path: path.clone(), removed: self.removed })
            .map_err(|e: DeError| e.at(&path))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len() - self.next)
    }
}

/// The elements of a list, with their indices as written (a removed element is skipped
/// without renumbering the others).
struct ArrayAccess<'a> {
    items: &'a [Value],
    next: usize,
    path: &'a str,
    removed: &'a BTreeSet<String>,
}

impl<'de> de::SeqAccess<'de> for ArrayAccess<'_> {
    type Error = DeError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, DeError> {
        while self.next < self.items.len() {
            let i = self.next;
            self.next += 1;
            let path = format!("{}[{i}]", self.path);
            if self.removed.contains(&path) {
                continue;
            }
            let de = ValueDe { value: &self.items[i], path: path.clone(), removed: self.removed };
            return seed.deserialize(de).map(Some).map_err(|e: DeError| e.at(&path));
        }
        Ok(None)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len() - self.next)
    }
}

/// At most this many passes (errors) per document.
const MAX_ERRORS: usize = 100;

/// Read `T` from `value`, reporting every error the document has (see the module comment).
pub fn from_value<T: DeserializeOwned>(value: &Value) -> Result<T, ConfigErrors> {
    let mut removed = BTreeSet::new();
    let mut errors: Vec<ConfigError> = Vec::new();
    for _ in 0..MAX_ERRORS {
        let de = ValueDe { value, path: String::new(), removed: &removed };
        let e = match T::deserialize(de) {
            Ok(t) if errors.is_empty() => return Ok(t),
            Ok(_) => break,
            Err(e) => e,
        };
        let path = e.path.clone().unwrap_or_default();
        // A field this reading removed for an earlier error: its table goes too, silently.
        let echo = e.missing.is_some_and(|f| removed.contains(&child(&path, f)));
        if !echo {
            let err = ConfigError::new(display_path(&path), e.message);
            if errors.contains(&err) {
                break;
            }
            errors.push(err);
        }
        if path.is_empty() || !removed.insert(path) {
            break;
        }
    }
    Err(ConfigErrors(errors))
}

/// [`from_value`] for a part of a document read by another deserializer (the tagged
/// mechanisms' fallback): the errors as one message.
pub(crate) fn from_value_message<T: DeserializeOwned>(value: &Value) -> Result<T, String> {
    from_value(value).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_misspelt_key_or_kind_is_suggested() {
        assert_eq!(edit_distance("mesure", "measure"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(did_you_mean("mesure", &["seed", "warmup", "measure"]), "; did you mean `measure`?");
        assert_eq!(did_you_mean("Measure", &["measure"]), "; did you mean `measure`?");
        // (too far from every name: nothing suggested)
        assert_eq!(did_you_mean("mine", &["shared", "exclusive"]), "");
        assert_eq!(did_you_mean("vc", &["vcs"]), "; did you mean `vcs`?");
        assert_eq!(did_you_mean("x", &["vcs"]), "");
    }

    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        a: u32,
        #[serde(default)]
        b: Vec<u32>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Outer {
        inner: Inner,
        #[serde(default)]
        pairs: Vec<[u32; 2]>,
        #[serde(default)]
        x: f64,
    }

    fn errors(toml: &str) -> Vec<(String, String)> {
        let v = super::super::value::from_toml(toml).unwrap();
        match from_value::<Outer>(&v) {
            Ok(o) => panic!("accepted: {o:?}"),
            Err(e) => e.0.into_iter().map(|e| (e.path, e.message)).collect(),
        }
    }

    #[test]
    fn paths_and_user_terms() {
        assert_eq!(
            errors("[inner]\na = -4\n"),
            [("inner.a".into(), "must be a whole number >= 0, got -4".into())]
        );
        assert_eq!(
            errors("[inner]\na = 1\nb = [1, -2]\n"),
            [("inner.b[1]".into(), "must be a whole number >= 0, got -2".into())]
        );
        assert_eq!(
            errors("pairs = [[1, 2, 3]]\n[inner]\na = 1\n"),
            [("pairs[0]".into(), "must be a list of 2 values, got a list of 3 values".into())]
        );
        assert_eq!(
            errors("inner = [3]\n"),
            [(
                "inner".into(),
                "must be a table with named keys, got a list of 1 value (values by position are not accepted)"
                    .into()
            )]
        );
        assert_eq!(
            errors("x = \"7\"\n[inner]\na = 5000000000\n"),
            [
                ("x".into(), "must be a number, got the string \"7\"".into()),
                (
                    "inner.a".into(),
                    "must be a whole number >= 0 and at most 4294967295, got 5000000000".into()
                ),
            ]
        );
    }

    #[test]
    fn every_error_in_one_pass_without_echoes() {
        let e = errors("x = true\nextra = 1\n[inner]\nb = [\"no\"]\nc = 2\n");
        let paths: Vec<&str> = e.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["x", "extra", "inner.b[0]", "inner.c", "inner"], "{e:?}");
        // the last one is `a`, truly missing (not `b`, removed after its error)
        assert_eq!(e[4].1, "missing field `a`");
    }
}
