//! Mechanisms chosen by `kind`: `pattern = "uniform"` or `pattern = { kind = "hot_spot",
//! fraction = 0.2, nodes = [0] }` (README "Configuration").
//!
//! Why not serde's `#[serde(tag = "kind")]` for reading: it buffers the table before it
//! knows the kind, so an error inside names only the table (`topology`, not `topology.k`),
//! in serde's words ("expected u32"); and its unit variants accept any other key, so
//! `fair_queueing` with `weights` or `poisson` with `period` was silently taken.
//! `tagged_enum!` keeps the one definition of each enum (and serde's tagged form for
//! writing) and reads it as: the kind first (`de.rs` presents it first), then the kind's
//! parameters as a struct of their own that denies unknown keys, read straight from the
//! document so every error keeps its path. A kind without parameters given one is an
//! error naming the key.

/// Defines the enum as written and its `Deserialize`; every variant is a unit or has
/// named fields. Kinds are the variants' names in snake case.
macro_rules! tagged_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident $({
                    $( $(#[$fmeta:meta])* $field:ident : $fty:ty ),* $(,)?
                })?
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $(
                $(#[$vmeta])*
                $variant $({ $( $(#[$fmeta])* $field : $fty ),* })?
            ),*
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                use serde::de::{Error as _, IntoDeserializer as _, MapAccess};

                #[derive(serde::Deserialize)]
                #[serde(rename_all = "snake_case")]
                enum Kind { $($variant),* }

                /// Each kind's parameters, as a struct of their own.
                mod params {
                    #[allow(unused_imports)]
                    use super::*;
                    $(
                        #[derive(serde::Deserialize)]
                        #[serde(deny_unknown_fields)]
                        pub(super) struct $variant { $($( $(#[$fmeta])* pub(super) $field: $fty, )*)? }
                    )*
                }

                /// The variant of `kind` (written `name`), its parameters read from `map`.
                fn build<'de, A: MapAccess<'de>>(kind: Kind, name: &str, mut map: A) -> Result<$name, A::Error> {
                    match kind {
                        $(Kind::$variant => {
                            if fields(&Kind::$variant).is_empty() {
                                map.next_key_seed(crate::config::tagged::NoParams(name))?;
                            }
                            #[allow(unused_variables)]
                            let p = <params::$variant as serde::Deserialize>::deserialize(
                                serde::de::value::MapAccessDeserializer::new(map),
                            )?;
                            Ok($name::$variant $({ $($field: p.$field),* })?)
                        })*
                    }
                }

                /// The parameters of each kind.
                fn fields(kind: &Kind) -> &'static [&'static str] {
                    match kind {
                        $(Kind::$variant => &[$($(stringify!($field)),*)?]),*
                    }
                }

                fn kind<E: serde::de::Error>(name: &str) -> Result<Kind, E> {
                    <Kind as serde::Deserialize>::deserialize(name.into_deserializer())
                }

                /// A `kind` value: its variant and how it was written (read inside the
                /// value, so an unknown kind's error is the `kind` key's).
                struct KindSeed;
                impl<'de> serde::de::DeserializeSeed<'de> for KindSeed {
                    type Value = (Kind, String);
                    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(Kind, String), D::Error> {
                        let name = crate::config::tagged::KindName.deserialize(d)?;
                        Ok((kind(&name)?, name))
                    }
                }

                struct V;
                impl<'de> serde::de::Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str("a kind name, or a table with `kind` and its parameters")
                    }
                    fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<$name, E> {
                        let empty = std::iter::empty::<(&str, &str)>();
                        let k = kind(s)?;
                        let fields = fields(&k);
                        build(k, s, serde::de::value::MapDeserializer::new(empty)).map_err(|e: E| {
                            let params: Vec<String> = fields.iter().map(|f| format!("{f} = ...")).collect();
                            E::custom(format!(
                                "{e}: kind \"{s}\" takes parameters, written as a table {{ kind = \"{s}\", {} }}",
                                params.join(", ")
                            ))
                        })
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<$name, A::Error> {
                        match map.next_key::<String>()? {
                            None => Err(A::Error::missing_field("kind")),
                            Some(k) if k == "kind" => {
                                let (kind, name) = map.next_value_seed(KindSeed)?;
                                build(kind, &name, map)
                            }
                            Some(first) => {
                                // Another deserializer, which gave `kind` later: read the
                                // table, then the tree, which gives it first.
                                let mut entries = vec![(first, map.next_value::<crate::config::value::Value>()?)];
                                while let Some(k) = map.next_key::<String>()? {
                                    entries.push((k, map.next_value()?));
                                }
                                if !entries.iter().any(|(k, _)| k == "kind") {
                                    return Err(A::Error::missing_field("kind"));
                                }
                                let table = crate::config::value::Value::Table(entries);
                                crate::config::de::from_value_message(&table).map_err(A::Error::custom)
                            }
                        }
                    }
                }
                d.deserialize_any(V)
            }
        }

        /// Its JSON Schema as it is read: a bare kind (those whose parameters all have
        /// defaults) or a table with `kind` and the kind's parameters (`config::schema`).
        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
                /// Each kind's parameters, as a struct of their own (as `deserialize` reads them).
                mod schema_params {
                    #[allow(unused_imports)]
                    use super::*;
                    $(
                        $(#[$vmeta])*
                        #[derive(schemars::JsonSchema)]
                        #[serde(deny_unknown_fields)]
                        #[allow(dead_code)]
                        pub(super) struct $variant { $($( $(#[$fmeta])* pub(super) $field: $fty, )*)? }
                    )*
                }
                crate::config::tagged::kinds_schema(vec![
                    $((
                        crate::config::tagged::snake_case(stringify!($variant)),
                        <schema_params::$variant as schemars::JsonSchema>::json_schema(generator),
                    )),*
                ])
            }
        }
    };
}

/// `SchedulerConfig` -> `scheduler_config`: a kind's name as `#[serde(rename_all =
/// "snake_case")]` writes it.
pub(crate) fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The schema of a mechanism chosen by `kind`, from each kind's name and its parameters'
/// schema: one alternative per kind, a table whose `kind` is that name; a kind whose
/// parameters are all optional may also be written bare, as its name.
pub(crate) fn kinds_schema(kinds: Vec<(String, schemars::Schema)>) -> schemars::Schema {
    use serde_json::{json, Map, Value};
    let mut bare = Vec::new();
    let mut tables = Vec::new();
    for (name, params) in kinds {
        let mut table: Map<String, Value> = params.to_value().as_object().cloned().unwrap_or_default();
        let description = table.remove("description");
        table.remove("title");
        table.remove("$schema");
        let mut properties = Map::new();
        properties.insert("kind".into(), json!({ "const": name }));
        if let Some(Value::Object(p)) = table.remove("properties") {
            properties.extend(p);
        }
        let mut required = vec![Value::from("kind")];
        let params_required = match table.remove("required") {
            Some(Value::Array(r)) => r,
            _ => Vec::new(),
        };
        if params_required.is_empty() {
            let mut b = json!({ "const": name });
            if let Some(d) = &description {
                b["description"] = d.clone();
            }
            bare.push(b);
        }
        required.extend(params_required);
        table.insert("type".into(), json!("object"));
        table.insert("properties".into(), Value::Object(properties));
        table.insert("required".into(), Value::Array(required));
        table.insert("additionalProperties".into(), json!(false));
        if let Some(d) = description {
            table.insert("description".into(), d);
        }
        tables.push(Value::Object(table));
    }
    let mut any_of = bare;
    any_of.extend(tables);
    schemars::Schema::try_from(json!({ "anyOf": any_of })).expect("an object is a schema")
}

/// Reads a `kind` value: a string.
pub(crate) struct KindName;

impl<'de> serde::de::DeserializeSeed<'de> for KindName {
    type Value = String;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_any(self)
    }
}

impl serde::de::Visitor<'_> for KindName {
    type Value = String;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a kind name (a string)")
    }
    fn visit_str<E>(self, s: &str) -> Result<String, E> {
        Ok(s.to_string())
    }
}

/// Refuses any key: the kind `0` takes no parameters.
pub(crate) struct NoParams<'a>(pub &'a str);

impl<'de> serde::de::DeserializeSeed<'de> for NoParams<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_identifier(self)
    }
}

impl serde::de::Visitor<'_> for NoParams<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("no parameters")
    }
    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<(), E> {
        Err(E::custom(format!(
            "unknown field `{}`: kind \"{}\" takes no parameters",
            crate::error::clip(key),
            self.0
        )))
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{PatternConfig, Process, SchedulerConfig};

    #[test]
    fn another_deserializer_may_give_the_kind_last() {
        let p: PatternConfig =
            serde_json::from_str(r#"{"nodes": [0], "kind": "hot_spot", "fraction": 0.5}"#).unwrap();
        assert!(matches!(p, PatternConfig::HotSpot { fraction, .. } if fraction == 0.5));
        let e = serde_json::from_str::<PatternConfig>(r#"{"nodes": [0], "fraction": 0.5}"#).unwrap_err();
        assert!(e.to_string().contains("missing field `kind`"), "{e}");
        let e = serde_json::from_str::<SchedulerConfig>(r#"{"weights": [1], "kind": "fcfs"}"#).unwrap_err();
        assert!(
            e.to_string().contains("weights: unknown field `weights`: kind \"fcfs\" takes no parameters"),
            "{e}"
        );
    }

    #[test]
    fn every_kind_reads_back_as_written() {
        let schedulers = [
            SchedulerConfig::Fcfs,
            SchedulerConfig::RoundRobin,
            SchedulerConfig::VirtualClock { counter_bits: 16 },
            SchedulerConfig::FairQueueing,
            SchedulerConfig::Wrr { weights: vec![1, 2] },
            SchedulerConfig::VlArbitration {
                high: vec![[0, 1]],
                low: vec![[1, 2]],
                limit_of_high_priority: 9,
                management_vl: Some(3),
            },
        ];
        for s in schedulers {
            let text = serde_json::to_string(&s).unwrap();
            let tree = crate::config::value::from_json(&text).unwrap();
            assert_eq!(crate::config::de::from_value::<SchedulerConfig>(&tree).unwrap(), s, "{text}");
        }
        for p in [
            Process::Poisson,
            Process::Bernoulli,
            Process::OnOff {
                on: crate::units::Duration::Cycles(5),
                off: crate::units::Duration::Cycles(7),
                exponential: false,
            },
            Process::MarkovOnOff {
                on: crate::units::Duration::Cycles(4),
                off: crate::units::Duration::Seconds(2e-6),
            },
        ] {
            let text = serde_json::to_string(&p).unwrap();
            let tree = crate::config::value::from_json(&text).unwrap();
            assert_eq!(crate::config::de::from_value::<Process>(&tree).unwrap(), p, "{text}");
        }
    }
}
