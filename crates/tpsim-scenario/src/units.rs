//! Values with explicit units: `"20ms"`, `"256kbps"`, `"128B"`.
//!
//! A bare number is refused with a "missing unit" error so that nobody wonders whether
//! `delay = 50` meant seconds or milliseconds. Decimal prefixes are powers of 1000 (`kB`,
//! `kbps`); binary ones powers of 1024 (`KiB`).

use schemars::gen::SchemaGenerator;
use schemars::schema::{InstanceType, Schema, SchemaObject, StringValidation};
use schemars::JsonSchema;
use serde::de::{self, Deserializer, Visitor};
use serde::{Serialize, Serializer};
use std::fmt;

/// Splits `"12.5ms"` into (12.5, "ms").
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+')))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let v: f64 = num.parse().ok()?;
    Some((v, unit.trim()))
}

fn parse_scaled(what: &str, s: &str, units: &[(&str, f64)], example: &str) -> Result<f64, String> {
    let names: Vec<&str> = units.iter().map(|(n, _)| *n).collect();
    let Some((v, unit)) = split_number(s) else {
        return Err(format!(
            "expected {what} with a unit, e.g. \"{example}\" (units: {}), found \"{s}\"",
            names.join(", ")
        ));
    };
    if unit.is_empty() {
        return Err(format!(
            "missing unit in \"{s}\": write {what} with a unit, e.g. \"{example}\" (units: {})",
            names.join(", ")
        ));
    }
    let Some((_, scale)) = units.iter().find(|(n, _)| *n == unit) else {
        return Err(format!(
            "unknown unit \"{unit}\" for {what} in \"{s}\" (units: {})",
            names.join(", ")
        ));
    };
    if !v.is_finite() {
        return Err(format!("{what} \"{s}\" is not a finite number"));
    }
    if v < 0.0 {
        return Err(format!("{what} \"{s}\" must not be negative"));
    }
    Ok(v * scale)
}

const TIME_UNITS: &[(&str, f64)] = &[
    ("ns", 1.0),
    ("us", 1e3),
    ("µs", 1e3),
    ("ms", 1e6),
    ("s", 1e9),
    ("min", 60e9),
    ("h", 3600e9),
];
const RATE_UNITS: &[(&str, f64)] = &[
    ("bps", 1.0),
    ("bit/s", 1.0),
    ("kbps", 1e3),
    ("kbit/s", 1e3),
    ("Mbps", 1e6),
    ("Mbit/s", 1e6),
    ("Gbps", 1e9),
    ("Gbit/s", 1e9),
];
const BYTE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("kB", 1e3),
    ("KB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("KiB", 1024.0),
    ("MiB", 1048576.0),
    ("GiB", 1073741824.0),
];

macro_rules! unit_type {
    ($name:ident, $inner:ty, $what:literal, $units:ident, $example:literal, $pattern:literal, $doc:literal, $to_str:expr) => {
        #[doc = $doc]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $name(pub $inner);

        impl $name {
            /// Parses a value with its unit.
            ///
            /// # Errors
            /// A message naming what was expected, for a missing, unknown or negative value.
            pub fn parse(s: &str) -> Result<Self, String> {
                let v = parse_scaled($what, s, $units, $example)?;
                let r = v.round();
                if r > <$inner>::MAX as f64 {
                    return Err(format!(concat!($what, " \"{}\" is too large"), s));
                }
                Ok($name(r as $inner))
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        write!(
                            f,
                            concat!($what, " as a string with a unit, e.g. \"", $example, "\"")
                        )
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        $name::parse(s).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        Err(E::custom(format!(
                            concat!(
                                "missing unit in {}: write ",
                                $what,
                                " as a string with a unit, e.g. \"",
                                $example,
                                "\""
                            ),
                            v
                        )))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        self.visit_i64(v as i64)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(format!(
                            concat!(
                                "missing unit in {}: write ",
                                $what,
                                " as a string with a unit, e.g. \"",
                                $example,
                                "\""
                            ),
                            v
                        )))
                    }
                }
                d.deserialize_any(V)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let f: fn(&$name) -> String = $to_str;
                s.serialize_str(&f(self))
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let g: fn(&$name) -> String = $to_str;
                f.write_str(&g(self))
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> String {
                stringify!($name).to_string()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                let mut o = SchemaObject {
                    instance_type: Some(InstanceType::String.into()),
                    string: Some(Box::new(StringValidation {
                        pattern: Some($pattern.to_string()),
                        ..Default::default()
                    })),
                    ..Default::default()
                };
                o.metadata().description = Some(concat!($doc, " Example: \"", $example, "\".").to_string());
                Schema::Object(o)
            }
        }
    };
}

unit_type!(
    Duration,
    u64,
    "a duration",
    TIME_UNITS,
    "20ms",
    r"^\s*[0-9]*\.?[0-9]+\s*(ns|us|µs|ms|s|min|h)\s*$",
    "A duration; stored as nanoseconds.",
    |d: &Duration| format!("{}ns", d.0)
);
unit_type!(
    Rate,
    u64,
    "a bit rate",
    RATE_UNITS,
    "256kbps",
    r"^\s*[0-9]*\.?[0-9]+\s*(bps|bit/s|kbps|kbit/s|Mbps|Mbit/s|Gbps|Gbit/s)\s*$",
    "A bit rate; stored as bit/s.",
    |r: &Rate| format!("{}bps", r.0)
);
unit_type!(
    Bytes,
    u64,
    "a size",
    BYTE_UNITS,
    "128B",
    r"^\s*[0-9]*\.?[0-9]+\s*(B|kB|KB|MB|GB|KiB|MiB|GiB)\s*$",
    "A size; stored as bytes.",
    |b: &Bytes| format!("{}B", b.0)
);

impl Duration {
    /// The duration as simulation time.
    pub fn sim(self) -> tpsim_core::SimDuration {
        tpsim_core::SimDuration(self.0)
    }
    /// Seconds, for reporting.
    pub fn secs(self) -> f64 {
        self.0 as f64 * 1e-9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units() {
        assert_eq!(Duration::parse("20ms").unwrap().0, 20_000_000);
        assert_eq!(Duration::parse("1.5s").unwrap().0, 1_500_000_000);
        assert_eq!(Duration::parse("0.1s").unwrap().0, 100_000_000);
        assert_eq!(Duration::parse("2min").unwrap().0, 120_000_000_000);
        assert_eq!(Rate::parse("256kbps").unwrap().0, 256_000);
        assert_eq!(Rate::parse("0.01Mbps").unwrap().0, 10_000);
        assert_eq!(Rate::parse("11 Mbit/s").unwrap().0, 11_000_000);
        assert_eq!(Bytes::parse("128B").unwrap().0, 128);
        assert_eq!(Bytes::parse("64KiB").unwrap().0, 65536);
    }

    #[test]
    fn refuses_missing_unknown_and_negative() {
        assert!(Duration::parse("20").unwrap_err().contains("missing unit"));
        assert!(Duration::parse("20 parsecs").unwrap_err().contains("unknown unit"));
        assert!(Rate::parse("-5kbps").unwrap_err().contains("negative"));
        assert!(Bytes::parse("abc").unwrap_err().contains("expected a size"));
    }
}

/// Splits `"3.652e-10W"` into (3.652e-10, "W"): the longest prefix that parses as a number.
fn split_float(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let mut best = None;
    for (i, _) in s.char_indices().chain(std::iter::once((s.len(), ' '))) {
        if i == 0 {
            continue;
        }
        if let Ok(v) = s[..i].parse::<f64>() {
            best = Some((v, s[i..].trim()));
        }
    }
    best
}

macro_rules! float_unit {
    ($name:ident, $what:literal, $example:literal, $pattern:literal, $doc:literal, $units:expr, $canon:literal, $negative_ok:expr) => {
        #[doc = $doc]
        #[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Default)]
        pub struct $name(pub f64);

        impl $name {
            /// Parses a value with its unit.
            ///
            /// # Errors
            /// A message naming what was expected.
            pub fn parse(s: &str) -> Result<Self, String> {
                let units: &[(&str, fn(f64) -> f64)] = $units;
                let names: Vec<&str> = units.iter().map(|(n, _)| *n).collect();
                let Some((v, unit)) = split_float(s) else {
                    return Err(format!(
                        concat!(
                            "expected ",
                            $what,
                            " with a unit, e.g. \"",
                            $example,
                            "\" (units: {}), found \"{}\""
                        ),
                        names.join(", "),
                        s
                    ));
                };
                if unit.is_empty() {
                    return Err(format!(
                        concat!(
                            "missing unit in \"{}\": write ",
                            $what,
                            " with a unit, e.g. \"",
                            $example,
                            "\" (units: {})"
                        ),
                        s,
                        names.join(", ")
                    ));
                }
                let Some((_, conv)) = units.iter().find(|(n, _)| *n == unit) else {
                    return Err(format!(
                        concat!("unknown unit \"{}\" for ", $what, " in \"{}\" (units: {})"),
                        unit,
                        s,
                        names.join(", ")
                    ));
                };
                if !v.is_finite() {
                    return Err(format!(concat!($what, " \"{}\" is not a finite number"), s));
                }
                let neg_ok: fn(&str) -> bool = $negative_ok;
                if v < 0.0 && !neg_ok(unit) {
                    return Err(format!(concat!($what, " \"{}\" must not be negative"), s));
                }
                Ok($name(conv(v)))
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        write!(
                            f,
                            concat!($what, " as a string with a unit, e.g. \"", $example, "\"")
                        )
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        $name::parse(s).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        self.visit_f64(v as f64)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        self.visit_f64(v as f64)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(format!(
                            concat!(
                                "missing unit in {}: write ",
                                $what,
                                " as a string with a unit, e.g. \"",
                                $example,
                                "\""
                            ),
                            v
                        )))
                    }
                }
                d.deserialize_any(V)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&format!(concat!("{:e}", $canon), self.0))
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> String {
                stringify!($name).to_string()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                let mut o = SchemaObject {
                    instance_type: Some(InstanceType::String.into()),
                    string: Some(Box::new(StringValidation {
                        pattern: Some($pattern.to_string()),
                        ..Default::default()
                    })),
                    ..Default::default()
                };
                o.metadata().description = Some(concat!($doc, " Example: \"", $example, "\".").to_string());
                Schema::Object(o)
            }
        }
    };
}

float_unit!(
    Meters,
    "a distance",
    "250m",
    r"^\s*[-+0-9.eE]+\s*(m|km)\s*$",
    "A distance or coordinate; stored as metres (negative values are coordinates left of or below the origin; keys that are lengths check that they are positive).",
    &[("m", |v| v), ("km", |v| v * 1e3)],
    "m",
    |_| true
);
float_unit!(
    Watts,
    "a power",
    "0.28183815W",
    r"^\s*[-+0-9.eE]+\s*(W|mW|uW|nW|pW|dBm)\s*$",
    "A power; stored as watts. dBm values are converted: P[W] = 10^(dBm/10) / 1000.",
    &[
        ("W", |v| v),
        ("mW", |v| v * 1e-3),
        ("uW", |v| v * 1e-6),
        ("nW", |v| v * 1e-9),
        ("pW", |v| v * 1e-12),
        ("dBm", |v| 10f64.powf(v / 10.0) * 1e-3)
    ],
    "W",
    |u| u == "dBm"
);
float_unit!(
    Hertz,
    "a frequency",
    "914MHz",
    r"^\s*[-+0-9.eE]+\s*(Hz|kHz|MHz|GHz)\s*$",
    "A frequency; stored as hertz.",
    &[
        ("Hz", |v| v),
        ("kHz", |v| v * 1e3),
        ("MHz", |v| v * 1e6),
        ("GHz", |v| v * 1e9)
    ],
    "Hz",
    |_| false
);

#[cfg(test)]
mod float_tests {
    use super::*;

    #[test]
    fn parses_float_units() {
        assert_eq!(Watts::parse("3.652e-10W").unwrap().0, 3.652e-10);
        assert!((Watts::parse("-64.37dBm").unwrap().0 - 3.6559e-10).abs() < 1e-13);
        assert!((Watts::parse("24.5dBm").unwrap().0 - 0.2818).abs() < 1e-4);
        assert_eq!(Meters::parse("1.5m").unwrap().0, 1.5);
        assert_eq!(Meters::parse("2km").unwrap().0, 2000.0);
        assert_eq!(Hertz::parse("914MHz").unwrap().0, 914e6);
        assert!(Watts::parse("-1W").unwrap_err().contains("negative"));
        assert_eq!(Meters::parse("-5m").unwrap().0, -5.0);
        assert!(Meters::parse("250").unwrap_err().contains("missing unit"));
        assert!(Hertz::parse("5 parsecs").unwrap_err().contains("unknown unit"));
    }
}
