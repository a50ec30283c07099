//! The configuration's JSON Schema, generated from the configuration types themselves (so
//! it cannot drift from what the engine reads): editors complete and check keys with it
//! (Taplo, VS Code's Even Better TOML), and `qosnet config` renders the reference
//! (`docs/configuration.md`) from it.
//!
//! The types derive `schemars::JsonSchema` beside their serde derives; what serde reads by
//! hand has its schema by hand beside it: quantities with units (`units.rs`: the pattern
//! admits exactly the units the parser knows), mechanisms chosen by `kind` (`tagged.rs`: a
//! bare kind or a table), `vc_classes`. Field descriptions are the doc comments.

use super::Config;

/// The JSON Schema (draft 2020-12) of a configuration file.
pub fn schema() -> serde_json::Value {
    let mut schema =
        schemars::generate::SchemaSettings::draft2020_12().into_generator().into_root_schema_for::<Config>();
    schema.insert("title".into(), "qosnet configuration".into());
    schema.insert(
        "description".into(),
        "A qosnet simulation: `qosnet run FILE.toml` (docs/configuration.md).".into(),
    );
    schema.to_value()
}

#[cfg(test)]
mod tests {
    use super::schema;

    #[test]
    fn every_section_and_its_keys_are_in_the_schema() {
        let s = schema();
        let props = s["properties"].as_object().unwrap();
        for section in [
            "simulation",
            "physical",
            "topology",
            "router",
            "routing",
            "endpoint",
            "traffic",
            "mix",
            "application",
            "trace",
        ] {
            assert!(props.contains_key(section), "{section}");
        }
        assert!(!props.contains_key("base_dir") && !props.contains_key("file_scope"));
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["required"], serde_json::json!(["topology"]));
    }

    /// The defaults written by hand (`#[schemars(extend("default" = ..))]`, where serde
    /// skips a default value and schemars then omits it) are the types' own.
    #[test]
    fn defaults_given_by_hand_are_the_types_defaults() {
        let s = schema();
        let defs = &s["$defs"];
        let default_of = |def: &str, field: &str| defs[def]["properties"][field]["default"].clone();
        assert_eq!(
            default_of("RoutingConfig", "lid_vcs"),
            serde_json::to_value(crate::config::LidVcs::default()).unwrap()
        );
        let split = crate::config::DrbSplit::default();
        assert_eq!(default_of("MultipathConfig", "split"), serde_json::to_value(split).unwrap());
        assert_eq!(default_of("TrafficConfig", "self_traffic"), serde_json::Value::Bool(false));
    }
}
